import pytest, numpy as np
from core.request import AudioChunk, SynthesisRequest
import test_core_fast as t
def test_probe(engine):
    chunks = []
    request = SynthesisRequest(t.TEXT, segment_size=20, batch_size=2, refine_text=False)
    results = list(engine.synthesize(request, chunks.append))
    again = list(engine.synthesize(request))
    for r, a in zip(results, again):
        n = min(len(a.audio), len(r.audio))
        d = np.abs(a.audio[:n] - r.audio[:n]).max()
        print("seg", r.index, r.steps, len(r.audio), len(a.audio), "pieces", sum(c.index == r.index for c in chunks), "maxdiff", d, "peak", np.abs(a.audio).max())
