"""Developer tools for the window (README screenshots, the start-up probe): in the repository,
not in the installed wheel."""
