"""The ``thoughtdesk`` command: the GUI without arguments, headless sub-commands otherwise."""
