"""Shared widgets and helpers that belong to no feature."""
