"""The microphone recorder (core side): a take captured from a virtual ALSA capture device that
plays a file of known samples, exactly, and cloned like that file."""

import subprocess
import sys
from pathlib import Path

import numpy as np
from conftest import REPO, microphone_env

CHILD = """
import sys
import numpy as np
from chattts_studio.core.voices.recorder import Recorder

levels = []
recorder = Recorder(rate=24000, max_seconds=4.0, on_level=levels.append)
recorder.start()
assert recorder.wait(60), "the take never filled"
take = recorder.stop()
np.save(sys.argv[1], take)
print(len(levels), max(levels), recorder.seconds)
"""


def test_a_take_from_a_capture_device_equals_the_file_it_plays(engine, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from chattts_studio.core.voices.clone import check_clip

    rng = np.random.default_rng(11)
    known = (rng.standard_normal(4 * 24000) * 0.2).astype(np.float32)
    out = tmp_path / "take.npy"
    env = microphone_env(tmp_path, known)
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=REPO,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    blocks, peak, seconds = proc.stdout.split()
    take = np.load(out)
    assert np.array_equal(take, known) and float(seconds) == 4.0
    assert int(blocks) > 1 and float(peak) == float(np.abs(known).max())
    recorded = engine.clone_voice(check_clip(take, 24000), "你好。")
    assert recorded.sample == engine.clone_voice(check_clip(known, 24000), "你好。").sample
