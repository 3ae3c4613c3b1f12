"""The result: its panel, playback, saving and the history of results."""
