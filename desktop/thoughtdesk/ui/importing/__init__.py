"""File > Import and Export: the import dialogs, the mapping dialog, running them in the background."""
