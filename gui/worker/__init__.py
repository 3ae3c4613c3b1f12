"""The worker thread that owns the engine, its host on the UI thread, and the jobs they pass."""
