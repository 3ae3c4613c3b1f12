"""The model weights: the models the app knows, the official download, the demo weights it
builds itself, and the cache of verified hashes."""
