"""The size each downloaded file is held to: the one its HEAD gave, else the Hub's listing of
the files; a file with neither is refused before any byte (core/weights/download.py)."""

from functools import partial
from typing import Any

from chattts_studio.core.errors import Cancelled, DownloadError
from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence
from chattts_studio.core.weights.transfer import Progress, Remote, attempts


def bound(
    todo: list[Remote],
    model: Any,  # download.HubModel: its repo and what it is called
    endpoint: str | None,
    revision: str,
    timeout: float,
    retries: int,
    bar: Progress,
) -> None:
    """Give every file a size, which bounds its download (transfer.get_range stops past it):
    the one its HEAD gave, else the one the Hub's listing of the files gives (paths-info).
    A server that says neither is refused in one sentence: without a size, a server sending
    without end fills the disk before any hash is checked."""
    unsized = [r for r in todo if r.size is None]
    if not unsized:
        return
    listed: dict[str, int] = {}
    try:
        listed = attempts(
            retries,
            bar,
            partial(
                _listed_sizes,
                model.repo,
                [r.relative for r in unsized],
                endpoint,
                revision,
                timeout,
            ),
        )
    except (Cancelled, DownloadError):
        raise
    except Exception:  # no listing (a mirror without the Hub's API): said below
        pass
    for remote in unsized:
        remote.size = listed.get(remote.relative)
        if remote.size is None:
            raise DownloadError(
                Sentence(
                    QT_TRANSLATE_NOOP(
                        "core",
                        "Could not download {model}: the server gives no size for {file}, so "
                        "its download could not be bounded; nothing was downloaded.",
                    ),
                    model=model.what,
                    file=remote.relative,
                )
            )


def _listed_sizes(
    repo: str, names: list[str], endpoint: str | None, revision: str, timeout: float
) -> dict[str, int]:
    """The sizes the Hub's listing gives for `names` (HfApi.get_paths_info's request, with
    a timeout, which that call lacks)."""
    from urllib.parse import quote

    from huggingface_hub import constants
    from huggingface_hub.utils import build_hf_headers, get_session, hf_raise_for_status

    root = (endpoint or constants.ENDPOINT).rstrip("/")
    url = f"{root}/api/models/{repo}/paths-info/{quote(revision, safe='')}"
    response = get_session().post(
        url, data={"paths": names}, headers=build_hf_headers(), timeout=timeout
    )
    hf_raise_for_status(response)
    sizes: dict[str, int] = {}
    for entry in response.json():
        if isinstance(entry, dict) and entry.get("type") == "file":
            size = entry.get("size")
            if isinstance(size, int) and not isinstance(size, bool) and size >= 0:
                sizes[str(entry.get("path"))] = size
    return sizes


def mebibytes(size: int) -> str:
    """A size in MiB as a sentence says it: whole above 10 MiB, else to a tenth (a small
    file's 0.3 MiB is not "0")."""
    return f"{size / 2**20:.0f}" if size >= 10 * 2**20 else f"{size / 2**20:.1f}"
