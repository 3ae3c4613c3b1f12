"""A project: a text as segments, each with its takes, the chosen one and a lock, kept in a
folder on disk (the segment editor's core; no Qt)."""
