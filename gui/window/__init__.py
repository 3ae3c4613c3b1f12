"""The main window: its layout, turning clicks into worker requests, showing each outcome, the
script mode and the model dialog."""
