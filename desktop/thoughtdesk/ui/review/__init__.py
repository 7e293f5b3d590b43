"""The Review tab (Ctrl+2) and the Review menu."""
