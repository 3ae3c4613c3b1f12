"""Word timings for audio made a segment at a time (synth --word-timing): each segment aligned when
finished, its words moved to its place in the file. A segment the aligner refuses gets estimated
times, not an error.
"""

from dataclasses import dataclass, field

import numpy as np

from chattts_studio.core.align.aligner import AlignmentError, align
from chattts_studio.core.align.estimate import interpolated, speech_span
from chattts_studio.core.align.recognised import TimedRecognizer
from chattts_studio.core.align.sphinx import EnglishAligner
from chattts_studio.core.align.words import Alignment, Word, language_of, tails, text_words
from chattts_studio.core.errors import BadTextError

REFUSED = "refused by the aligner: estimated"


@dataclass
class WordTimeline:
    """The words of every segment added so far, in file time."""

    rate: int
    recognizer: TimedRecognizer | None = None
    english: EnglishAligner = field(default_factory=EnglishAligner)
    words: list[Word] = field(default_factory=list)
    methods: list[str] = field(default_factory=list)
    languages: list[str] = field(default_factory=list)
    frames: int = 0

    def add(self, audio: np.ndarray, text: str, first: int) -> None:
        """A segment's `audio` that says `text`, starting at sample `first` of the file."""
        self.frames = max(self.frames, first + len(audio))
        try:
            found = text_words(text)
        except BadTextError:
            return  # nothing spoken: no words to time
        offset = first / self.rate
        try:
            got = align(audio, self.rate, text, "auto", self.recognizer, self.english)
            words, method, language = got.words, got.method, got.language
        except AlignmentError:
            span = speech_span(audio, self.rate) or (0.0, len(audio) / self.rate)
            spread = interpolated(found, [None] * len(found), span)
            words = [
                Word(w.text, w.start, w.end, True, tail)
                for w, tail in zip(spread, tails(text), strict=True)
            ]
            method, language = REFUSED, language_of(found)
        self.words += [
            Word(w.text, w.start + offset, w.end + offset, w.estimated, w.tail) for w in words
        ]
        self.methods.append(method)
        self.languages.append(language)

    def alignment(self) -> Alignment:
        language = max(set(self.languages), key=self.languages.count, default="en")
        methods = "; ".join(dict.fromkeys(self.methods))
        return Alignment(self.words, language, methods, self.frames / self.rate)
