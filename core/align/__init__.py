"""Word timings: where each word of a text is spoken in its audio, for word-level subtitles: English
by forced alignment, Chinese from the recogniser's token times, the rest estimated. No Qt.
"""
