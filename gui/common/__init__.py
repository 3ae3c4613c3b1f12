"""Pieces every part of the window uses: dialogs, notices, the theme, plot axes, file watching,
short tasks off the UI thread and garbage collection on the UI thread."""
