"""Audio out: files in any format (written atomically), playback, streaming loudness, M4B
audiobooks, audio written while it is made, and subtitles."""
