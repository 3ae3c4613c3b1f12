#!/usr/bin/env bash
# Downloads the wheels the GPU test machine lacks into .whl/ (ignored by git, carried by the
# device tool). That machine has Python 3.12 and its own torch, transformers, numpy, scipy,
# einops, requests, pyyaml, sympy, numba and psutil (see ../shared/docs/gpu.md); it has no
# network. Versions match the ones this project's .venv resolves. Run from the repo root.
set -euo pipefail
cd "$(dirname "$0")/../.."
dest=.whl
rm -rf "$dest" && mkdir -p "$dest"
pip=(python3 -m pip)
platform=(--only-binary=:all: --python-version 3.12 --implementation cp
          --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64
          --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64
          --platform manylinux1_x86_64 --platform any)
binary=(
  vocos==0.1.0 vector-quantize-pytorch==1.32.0 einx==0.4.3 frozendict==2.5.1 loguru==0.7.3
  torch-einops-utils==0.2.0 pybase16384==0.3.9 cffi==2.1.1 pycparser==3.12
  soundfile==0.14.0 platformdirs==4.14.8 cn2an==0.5.24 proces==0.1.7 num2words==0.5.14
  docopt==0.6.2
  # The speech API, for the bench's real-time streams through the real server on 127.0.0.1.
  fastapi==0.165.0 starlette==1.10.0 pydantic==2.14.4 pydantic_core==2.50.5
  annotated-types==0.8.0 annotated-doc==0.0.7 typing-inspection==0.4.5
  typing_extensions==4.16.0 anyio==4.16.0 sniffio==1.3.1 idna==3.20 uvicorn==0.54.0
  h11==0.16.0 click==8.5.1 opentelemetry-api==1.45.2
)
for spec in "${binary[@]}"; do
  "${pip[@]}" download -q --no-deps "${platform[@]}" -d "$dest" "$spec" 2>/dev/null ||
    "${pip[@]}" wheel -q --no-deps -w "$dest" "$spec"   # an sdist only: build it here
done
# Published as source only, pure Python: built here into wheels.
"${pip[@]}" wheel -q --no-deps -w "$dest" chattts==0.2.5 encodec==0.1.1
ls -1 "$dest"
du -sh "$dest"
