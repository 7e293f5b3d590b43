"""Edit > Settings, the first-run wizard, and the QSettings keys."""
