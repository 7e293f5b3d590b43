"""Entry point of the windowed executable (``thoughtdesk-gui``; no console on Windows).

The desktop app only: a file given (a library opened from Explorer or Finder) is opened in it,
and everything else on the command line is passed on as to ``thoughtdesk``
(:func:`thoughtdesk.cli.main.gui_main`, also pip's ``thoughtdesk-gui``). The console executable
beside it (``thoughtdesk``) keeps the CLI and ``--self-test`` output visible.
"""

from thoughtdesk.cli.main import gui_main

if __name__ == "__main__":
    raise SystemExit(gui_main())
