"""A job's audio kept on disk: the result store, the window's history of results, and playing a
store without holding it in memory."""
