"""A stand-in for the vocoder's second CUDA stream (decode/vocoding.py's SideStream), for the
tests that run its form where no CUDA stream can be made: SideStream's own `launch`, with its
stream block recorded instead of entered on a stream."""

import contextlib
from collections.abc import Iterator

from chattts_studio.core.engine.decode import vocoding


class RecordedSide(vocoding.SideStream):
    """`blocks`: one entry a block run 'on the side stream', True while inside it."""

    def __init__(self) -> None:  # no CUDA stream can be made here
        self.blocks: list[bool] = []

    @contextlib.contextmanager
    def after_current(self) -> Iterator[None]:
        self.blocks.append(True)
        try:
            yield
        finally:
            self.blocks[-1] = False

    @property
    def inside(self) -> bool:
        return bool(self.blocks) and self.blocks[-1]
