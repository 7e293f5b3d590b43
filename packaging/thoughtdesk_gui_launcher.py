"""Entry point of the windowed executable (``thoughtdesk-gui``; no console on Windows).

The desktop app only: a file given (a library opened from Explorer or Finder) is opened in it,
and everything else on the command line is passed on as to ``thoughtdesk``. The console
executable beside it (``thoughtdesk``) keeps the CLI and ``--self-test`` output visible.
"""

import sys

from thoughtdesk.cli.main import main

if __name__ == "__main__":
    args = sys.argv[1:]
    # `thoughtdesk-gui FILE` (what the file manager runs) is `thoughtdesk gui FILE`.
    if len(args) == 1 and not args[0].startswith("-"):
        args = ["gui", args[0]]
    raise SystemExit(main(args))
