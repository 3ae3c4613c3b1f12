"""The main window: its layout, what it keeps between runs, and the controls that turn its
clicks into jobs (synthesis, auditions)."""
