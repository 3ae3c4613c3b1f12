"""OpenAI's `instructions` read for ChatTTS's own controls (a pure function): speed words,
laughing, pauses; the rest ignored, and the header saying which."""

import pytest

from chattts_studio.core.serve.instructions import read_instructions
from chattts_studio.core.serve.request import speed_token


@pytest.mark.parametrize(
    ("words", "speed"),
    [
        ("Speak slowly.", speed_token(0.7)),
        ("a very slow, calm read", speed_token(0.5)),
        ("Talk fast!", speed_token(1.4)),
        ("extremely quickly", speed_token(2.0)),
        ("at a normal pace", 5),
        ("请慢一点说", speed_token(0.7)),
    ],
)
def test_speed_words_are_the_speed_fields_token(words: str, speed: int) -> None:
    reading = read_instructions(words, refine_text=False, speed_set=False)
    assert reading.speed == speed and reading.applied == [f"speed={speed}"]
    # The speed field, when the body sets it, wins.
    kept = read_instructions(words, refine_text=False, speed_set=True)
    assert kept.speed is None and "the speed field is set" in kept.header()


def test_laughing_is_a_token_or_refines_level() -> None:
    plain = read_instructions("Laughing, please.", refine_text=False, speed_set=False)
    assert plain.laugh_token and plain.laugh is None
    assert plain.header() == "applied laugh=[laugh]"
    refined = read_instructions("laughing", refine_text=True, speed_set=False)
    assert refined.laugh == 1 and not refined.laugh_token
    assert read_instructions("laugh a lot", True, False).laugh == 2
    own = read_instructions("laugh", True, False, frozenset({"laugh"}))
    assert own.laugh is None and own.header() == "ignored: laughing (the laugh field is set)"


@pytest.mark.parametrize("words", ["Don't laugh.", "no laughing", "never laugh", "不要笑"])
def test_laughing_said_in_the_negative_is_no_laugh(words: str) -> None:
    for refine in (False, True):
        reading = read_instructions(words, refine_text=refine, speed_set=False)
        assert reading.laugh is None and not reading.laugh_token, (words, refine)
        assert "laughing said in the negative" in reading.header()


def test_speed_said_in_the_negative_changes_no_speed() -> None:
    reading = read_instructions("not too fast, please", refine_text=False, speed_set=False)
    assert reading.speed is None and "speed words said in the negative" in reading.header()
    # "much" elsewhere in the text is not "laugh a lot".
    assert read_instructions("much calmer; laugh once", True, False).laugh == 1


def test_pauses_are_refines_break_level() -> None:
    assert read_instructions("with long pauses", True, False).break_level == 7
    assert read_instructions("no pauses", True, False).break_level == 0
    assert read_instructions("don't take breaks", True, False).break_level == 0
    off = read_instructions("with pauses", False, False)
    assert off.break_level is None
    assert off.header() == "ignored: pauses (they need refine_text: true)"


def test_the_rest_is_ignored_and_never_echoed() -> None:
    reading = read_instructions("Whisper like a pirate\r\nX-Evil: 1 ünïcode", False, False)
    assert (reading.speed, reading.laugh, reading.laugh_token, reading.break_level) == (
        None, None, False, None,
    )  # fmt: skip
    header = reading.header()
    assert header == "ignored: the rest (ChatTTS has no control for tone, emotion or accent)"
    assert header.isascii() and "pirate" not in header
    both = read_instructions("Speak slowly and sound sad.", True, False)
    assert both.header() == (
        "applied speed=4; ignored: the rest (ChatTTS has no control for tone, emotion or accent)"
    )
    assert read_instructions("Speak slowly.", False, False).header() == "applied speed=4"
    assert read_instructions("", False, False).header().startswith("ignored: nothing")
