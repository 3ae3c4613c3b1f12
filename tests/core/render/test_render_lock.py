"""One render per folder: a second SegmentStore on a folder in use is refused with one sentence
(an OS lock through filelock, so Windows is covered too), and the folder is free once the
first closes."""

import subprocess
import sys
from pathlib import Path

import pytest

from chattts_studio.core.errors import StudioError
from chattts_studio.core.render.segment_store import SegmentStore


def test_a_second_render_in_the_same_folder_is_refused_until_the_first_closes(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "book"
    first = SegmentStore(folder).open()
    with pytest.raises(StudioError, match="Another render is working in") as refused:
        SegmentStore(folder).open()
    assert "\n" not in str(refused.value)
    # Another process is refused the same way.
    script = "\n".join(
        [
            "import sys",
            "from chattts_studio.core.render.segment_store import SegmentStore",
            "from chattts_studio.core.errors import StudioError",
            "try:",
            "    SegmentStore(sys.argv[1]).open()",
            "except StudioError as e:",
            "    print(e); sys.exit(3)",
            "",
        ]
    )
    other = subprocess.run(
        [sys.executable, "-c", script, str(folder)], capture_output=True, text=True, timeout=120
    )
    assert other.returncode == 3 and "Another render is working" in other.stdout
    first.close()
    SegmentStore(folder).open().close()  # free again
