"""The speech recognition check: what a recogniser heard in a take, scored against its
segment's text (CER for Chinese, WER for English), naming the missing, extra and changed
words (no Qt)."""
