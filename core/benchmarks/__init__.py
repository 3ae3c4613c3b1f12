"""Measuring the engine (the CLI's `bench` and `soak`): stock ChatTTS against Studio, reports,
and memory over many syntheses."""
