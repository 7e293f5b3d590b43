"""Bringing data into a library and out of it: imports in one transaction, skip logs, saved mappings."""
