"""Entry point of the frozen application (PyInstaller runs this file as ``__main__``)."""

from thoughtdesk.cli.main import main

if __name__ == "__main__":
    raise SystemExit(main())
