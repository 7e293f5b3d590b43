"""The Results tab (Ctrl+3): accuracy table, plots, comparison of two conditions."""
