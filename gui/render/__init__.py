"""The render queue: its panel and menu, and each job's work in the worker."""
