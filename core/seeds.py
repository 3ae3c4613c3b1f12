"""Every random stream's seed, from the one seed a user gives: one rule, so synthesis, the
speech API's batcher, the refine pass and a project's takes all draw the same from the same
seed, whoever runs them (the window, the command line, the API). `text_seed` seeds torch's
global generator before ChatTTS's own passes (refine, a stock-equal decode), as stock ChatTTS
would be seeded; segments, takes and rows get streams of their own.

torch is imported only by the functions that need it: the window reads projects (and their
seeds) before the engine is imported.
"""

import secrets
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

SEED_BITS = 31
MAX_SEED = 2**SEED_BITS - 1  # a seed users see, type and save


def fresh_seed() -> int:
    """A new seed, when the user gave none (saved where it can be made again from)."""
    return secrets.randbits(SEED_BITS)


def text_seed(seed: int) -> int:
    return seed * 1009


def seed_text_passes(seed: int) -> None:
    """Seed torch's global generator for ChatTTS's passes of the request seeded `seed`."""
    import torch

    torch.manual_seed(text_seed(seed))


def segment_seed(seed: int, index: int) -> int:
    """A segment's own stream: its codes then depend on nothing else (not the batch, not a
    retry after out of memory)."""
    return (seed * 1_000_003 + index * 7_919 + 1) % (2**63)


def take_seed(seed: int, segment_id: int, take_id: int) -> int:
    """A take's seed from its project's seed and the take's place, below 2**31 (it is shown)."""
    return segment_seed(seed, segment_id * 10_007 + take_id) % (MAX_SEED + 1)


def row_generator(device: "torch.device", seed: int) -> "torch.Generator":
    """A row's own random stream, on the device its sampling runs on (multinomial refuses a
    generator of another device on CUDA). One function: the fake-CUDA tests, on a machine
    where no CUDA generator can be made, replace it to check the device asked for."""
    import torch

    return torch.Generator(device).manual_seed(seed)
