"""The adapter to the ChatTTS package: the only code that touches its internals, its speaker
and sample strings, and its chatter kept quiet."""
