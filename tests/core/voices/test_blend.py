"""Voice blends (core/voices/blend.py): parsing, normalised weights, merged parts, the mixed
numbers exactly, and one sentence for each mistake; against a stand-in model whose speakers
are small fp16 vectors."""

import numpy as np
import pytest
import torch
from conftest import REPO

from chattts_studio.core.errors import SpeakerError
from chattts_studio.core.voices.blend import (
    BlendPart,
    blend_note,
    blend_seed,
    blend_speakers,
    check_library_parts,
    format_blend,
    library_blend,
    library_resolver,
    looks_like_blend,
    parse_blend,
    seed_of,
)
from chattts_studio.core.voices.speaker_codec import decode_speaker, encode_speaker
from chattts_studio.core.voices.voice import OPENAI_VOICES, Voice

VALUES = 128  # an embedding string of more than 100 characters, as a model's
BLEND_SOURCE = (REPO / "core" / "voices" / "blend.py").read_text(encoding="utf-8")


def speaker(seed: int) -> str:
    values = np.random.default_rng(seed).normal(size=VALUES).astype(np.float16)
    return encode_speaker(torch.from_numpy(values))


class FakeModel:
    """Engine's two speaker methods, without a model."""

    def __init__(self) -> None:
        self.seeds: list[int] = []

    def sample_speaker(self, seed: int) -> str:
        self.seeds.append(seed)
        return speaker(seed)

    def speaker_dim(self) -> int:
        return VALUES

    def check_speaker(self, embedding: str) -> str:
        try:
            decode_speaker(embedding.strip(), VALUES)
        except ValueError:
            raise SpeakerError("not an embedding") from None  # as the model says it
        return embedding.strip()


LIBRARY = {
    "Alice": Voice(embedding=speaker(1)),
    "Bob": Voice(embedding=speaker(2)),
    "Alice+Bob": Voice(embedding=speaker(3)),  # a name may hold '+'
    "Clone": Voice(sample="豆" * 20, transcript="hello"),
}


def blend(spec: str, model: FakeModel | None = None) -> str:
    mixed = blend_speakers(spec, library_resolver(LIBRARY, model or FakeModel()), VALUES)
    assert library_blend(spec, LIBRARY, FakeModel()) == mixed
    return mixed


def fp16(text: str) -> np.ndarray:
    return decode_speaker(text, VALUES)


def test_parsing_both_notations_normalises_and_merges() -> None:
    assert parse_blend("alloy*0.7+seed:42*0.3") == [
        BlendPart("alloy", 0.7),
        BlendPart("seed:42", 0.3),
    ]
    assert parse_blend("a(2)+b(1)") == [BlendPart("a", 2 / 3), BlendPart("b", 1 / 3)]
    assert parse_blend(" a * 3 + b ") == [BlendPart("a", 0.75), BlendPart("b", 0.25)]
    assert parse_blend("a*0.2+b*0.5+a*0.3") == [BlendPart("a", 0.5), BlendPart("b", 0.5)]
    assert parse_blend("Alice (2)*1+Bob(3)") == [
        BlendPart("Alice (2)", 0.25),
        BlendPart("Bob", 0.75),
    ]
    assert sum(p.weight for p in parse_blend("a*1+b*2+c*4")) == pytest.approx(1.0)


def test_what_looks_like_a_blend() -> None:
    assert looks_like_blend("a+b") and looks_like_blend("a*0.5") and looks_like_blend("a(2)")
    assert not looks_like_blend("Alice") and not looks_like_blend("42")
    assert not looks_like_blend("Alice (2)")  # a library's second Alice, not a weight


def test_format_reads_back() -> None:
    spec = format_blend([("Alice", 0.7), ("seed:42", 0.30000001)])
    assert spec == "Alice*0.7+seed:42*0.3"
    assert parse_blend(spec) == [BlendPart("Alice", 0.7), BlendPart("seed:42", 0.3)]


@pytest.mark.parametrize(
    ("spec", "said"),
    [
        ("a+", "A voice blend has an empty part: write it as voice*weight+voice*weight."),
        ("a*0+b", "The weight of 'a' in the voice blend must be above 0."),
        ("a*x+b", "The weight of 'a*x' in the voice blend is not a number: write it as voice*0.5."),
        (
            "a*1e400+b",
            "The weight of 'a*1e400' in the voice blend is not a number: write it as voice*0.5.",
        ),
        ("+".join("abcdefghi"), "A voice blend has at most 8 parts."),
        (
            "Clone*0.5+Alice*0.5",
            "'Clone' is a cloned voice: it speaks through its recording, "
            "which a voice blend cannot mix; blend speakers with an embedding (seeds, kept seeds).",
        ),
        (
            "Nobody+Alice",
            "'Nobody' in the voice blend is not a library speaker, a voice seed "
            "(seed:42) or a speaker embedding.",
        ),
        ("seed:99999999999+Alice", "A voice seed must be at most 2147483647."),
    ],
)
def test_mistakes_are_one_sentence(spec: str, said: str) -> None:
    with pytest.raises(SpeakerError) as caught:
        blend(spec)
    assert str(caught.value) == said
    # Translatable in the window: its template (or the fixed sentence) is marked in blend.py.
    marked = (caught.value.template or said).replace("\n", " ")
    assert f'"{marked[:30]}' in " ".join(BLEND_SOURCE.split()).replace('" "', "")


def test_cloned_and_unknown_parts_are_refused_without_a_model() -> None:
    with pytest.raises(SpeakerError, match="'Clone' is a cloned voice"):
        check_library_parts("Alice+Clone", LIBRARY)
    with pytest.raises(SpeakerError, match="'Carol' in the voice blend"):
        check_library_parts("Alice+Carol", LIBRARY)
    parts = check_library_parts("Alice*1+seed:7*1+" + speaker(9), LIBRARY)
    assert [p.weight for p in parts] == [pytest.approx(1 / 3)] * 3


def test_seeds_in_both_spellings() -> None:
    assert seed_of("42") == seed_of("seed:42") == seed_of("SEED: 42") == 42
    assert seed_of("Alice") is None
    model = FakeModel()
    assert blend("seed:42*0.5+42*0.5", model) == speaker(42)  # one voice, named twice
    assert model.seeds == [42, 42]


def test_openai_names_are_their_fixed_seeds_and_a_blend_brings_its_first_parts_seed() -> None:
    assert seed_of("alloy") == seed_of("Alloy") == OPENAI_VOICES["alloy"]
    assert blend_seed("nova*0.3+seed:42*0.7", {}) == OPENAI_VOICES["nova"]
    assert blend_seed("Alice*0.5+nova*0.5", {"Alice": 9}) == 9
    assert blend_seed("Alice*0.5+nova*0.5", {"Alice": None}) is None


def test_a_long_run_of_spaces_parses_without_a_backtracking_pattern() -> None:
    spaced = "a" + " " * 5000 + "b"
    assert not looks_like_blend(spaced)
    assert parse_blend("Alice" + " " * 5000 + "*  0.5+Bob") == [
        BlendPart("Alice", pytest.approx(1 / 3)),
        BlendPart("Bob", pytest.approx(2 / 3)),
    ]


def test_a_voice_blended_with_itself_is_that_voice_bit_for_bit() -> None:
    assert blend("Alice*0.3+Alice*0.7") == LIBRARY["Alice"].embedding
    assert blend("Alice(5)") == LIBRARY["Alice"].embedding
    assert blend(f"Alice*0.5+{LIBRARY['Alice'].embedding}*0.5") == LIBRARY["Alice"].embedding


def test_the_mix_is_the_weighted_mean_in_fp32_stored_as_fp16() -> None:
    mixed = blend("Alice*0.7+seed:42*0.3")
    alice, seed = fp16(speaker(1)), fp16(speaker(42))
    expected = np.zeros(VALUES, np.float32)
    expected += alice.astype(np.float32) * np.float32(0.7)
    expected += seed.astype(np.float32) * np.float32(0.3)
    assert np.array_equal(fp16(mixed), expected.astype(np.float16))
    assert not np.array_equal(fp16(mixed), alice) and not np.array_equal(fp16(mixed), seed)
    # Weights are shares: 7:3 is 0.7:0.3; Kokoro's notation is the same blend.
    assert blend("Alice*7+seed:42*3") == blend("Alice(7)+seed:42(3)")
    assert np.allclose(fp16(blend("Alice*7+seed:42*3")), fp16(mixed), atol=1e-3)


def test_parts_naming_one_voice_differently_are_merged_before_mixing() -> None:
    # Alice twice (by name and by her embedding): the same numbers as Alice*0.5+Bob*0.5.
    merged = blend(f"Alice*0.25+Bob*0.5+{LIBRARY['Alice'].embedding}*0.25")
    assert merged == blend("Alice*0.5+Bob*0.5")


def test_a_part_the_resolver_does_not_check_is_one_sentence() -> None:
    with pytest.raises(SpeakerError, match="not a speaker embedding"):
        blend_speakers("a+b", lambda source: source * 80, VALUES)


def test_the_note_names_the_parts() -> None:
    assert blend_note("Alice*0.7+seed:42*0.3") == "Blend of Alice 70%, seed:42 30%"
