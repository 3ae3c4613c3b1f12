"""The continuous batch across requests: the batcher, its tickets, its chunks' audio and its
cross-request refine."""
