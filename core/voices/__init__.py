"""Voices: what conditions the model, the speaker library and its file, keeping a voice,
reference recordings for cloning and the microphone recorder."""
