"""The Generate menu and the Runs tab (Ctrl+4)."""
