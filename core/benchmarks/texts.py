"""Long texts the soak runs speak: mixed Chinese and English sentences, repeated to a length."""

LONG_SENTENCES = (
    "今天天气很好，我们一起去公园散步吧。",
    "The quick brown fox jumps over the lazy dog, again and again.",
    "长时间运行时，内存不应该随着文本长度增长。",
    "Memory must not grow with the length of the text.",
)


def mixed_text(chars: int) -> str:
    """About `chars` characters of mixed Chinese and English sentences."""
    parts: list[str] = []
    length = 0
    index = 0
    while length < chars:
        sentence = LONG_SENTENCES[index % len(LONG_SENTENCES)]
        parts.append(sentence)
        length += len(sentence) + 1
        index += 1
    return " ".join(parts)[:chars]
