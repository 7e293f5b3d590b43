"""The library file: one SQLite database, its schema and migrations, typed records in and out."""
