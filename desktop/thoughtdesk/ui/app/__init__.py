"""Start-up and the window's chrome: the main window, background tasks, crash handling, self-test."""
