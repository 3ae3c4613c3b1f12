"""chattts-studio-cli align: word timings of an audio file (command.py)."""
