"""Run > Serve: the speech API from the window, its control and its status line."""
