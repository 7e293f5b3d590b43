"""Settings non-Qt code needs, API keys, offline mode and the application log."""
