"""The speech recognition check: what a recogniser heard in a take, scored against its
segment's text (CER for Chinese, WER for English), naming the missing, extra and changed
words (no Qt)."""

# Written beside the demo recogniser's model (demo_model.py): a folder holding it is the demo
# (models.is_demo). Here, so that both read it without importing each other.
DEMO_MARKER = "random-weights.txt"
