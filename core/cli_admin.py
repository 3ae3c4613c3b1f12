"""The command line's library and machine commands: devices, doctor, model, speakers."""

import argparse
import time
from pathlib import Path

from .cli_common import err as _err
from .cli_common import load_engine as _engine
from .errors import StudioError


def cmd_devices(_args: argparse.Namespace) -> int:
    from .devices import cuda_status, default_device, list_devices, precision_support

    default = default_device()
    for device in list_devices():
        mark = "*" if device == default else " "
        if device.problem:
            print(f"{mark} {device.label}  unusable: {device.problem}")
            continue
        usable = [p.value for p, why in precision_support(device).items() if why is None]
        print(f"{mark} {device.label}  precisions: {', '.join(usable)}")
    print(cuda_status())
    return 0


def cmd_doctor(_args: argparse.Namespace) -> int:
    import platform

    import torch

    from . import paths
    from .devices import cuda_status, list_devices, precision_support

    print(f"python {platform.python_version()} on {platform.platform()}")
    print(f"torch {torch.__version__} (CUDA build: {torch.version.cuda or 'none, CPU only'})")
    try:
        from importlib.metadata import version

        print(f"chattts {version('chattts')}, torchaudio {version('torchaudio')}")
    except Exception:
        pass
    print(cuda_status())
    for device in list_devices():
        print(f"device {device.label}")
        if device.problem:
            print(f"    unusable: {device.problem}")
            continue
        for precision, why in precision_support(device).items():
            print(f"    {precision.value}: {'ok' if why is None else why}")
    print(f"data folder {paths.data_dir()}")
    from .audio import output_available

    print(f"audio output: {output_available() or 'ok'}")
    return 0


def cmd_model(args: argparse.Namespace) -> int:
    from . import models

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
        return 0
    if args.action == "verify":
        info = models.resolve(args.name)
        models.verify(info.folder, models.hashes_for(info), info.name)
        print(f"{info.label}: every file matches its sha256 hash ({info.folder})")
        return 0
    if args.action == "build-demo":
        info = models.build_demo(args.name, progress=lambda s: _err(f"  {s}"))
        print(f"built {info.label} in {info.folder}")
        return 0
    last = [0.0]

    def progress(done: int, total: int) -> None:
        if time.monotonic() - last[0] > 1 or (total and done >= total):
            last[0] = time.monotonic()
            share = f" of {total / 2**20:.0f} MiB ({100 * done / total:.0f} %)" if total else ""
            _err(f"  {done / 2**20:.0f} MiB{share}")

    from .download import download_official

    info = download_official(progress)
    print(f"downloaded and verified {info.label} into {info.folder}")
    return 0


def cmd_speakers(args: argparse.Namespace) -> int:
    from .speakers import SpeakerLibrary

    library = SpeakerLibrary()
    if library.problem:
        _err(library.problem)
    if args.action == "list":
        for entry in library.entries:
            seed = f"seed {entry.seed}" if entry.seed is not None else "no seed"
            print(f"{entry.name}\t{seed}\t{entry.created}\t{entry.note}")
        return 0
    if args.action == "sample":
        engine = _engine(args.model)
        print(engine.sample_speaker(args.seed))
        return 0
    if args.action == "add":
        if (args.seed is None) == (args.embedding is None):
            raise StudioError("Give either --seed N or --embedding STRING.")
        embedding = args.embedding
        if embedding is None:
            embedding = _engine(args.model).sample_speaker(args.seed)
        library.add(args.name, embedding, args.seed, args.note)
        print(f"added speaker '{args.name}'")
        return 0
    if args.action == "remove":
        library.remove(args.name)
        print(f"removed speaker '{args.name}'")
        return 0
    if args.action == "rename":
        library.rename(args.name, args.new_name)
        print(f"renamed '{args.name}' to '{args.new_name}'")
        return 0
    if args.action == "export":
        count = library.export(Path(args.path), args.names or None)
        print(f"exported {count} speaker(s) to {args.path}")
        return 0
    result = library.import_file(Path(args.path))
    print(f"imported {args.path}: {result.counts()}")
    if result.added:
        print(f"added: {', '.join(result.added)}")
    if result.skipped:
        print(f"skipped, voice already in the library: {', '.join(result.skipped)}")
    for old, new in result.renamed:
        print(f"renamed: '{old}' -> '{new}' (the name was taken)")
    return 0
