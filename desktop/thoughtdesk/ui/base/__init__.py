"""The pieces every GUI feature builds on: background tasks, data-change notices, deferred tabs,
throttled redraws, the write-wait banner and the main window's protocol (``WindowApi``).
Start-up and the main window itself live in :mod:`thoughtdesk.ui.app`, above the features."""
