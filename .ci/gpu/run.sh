#!/usr/bin/env bash
# The GPU run, on the project's GPU test machine (see ../shared/docs/gpu.md), from the repo
# root, with .whl/ carried (made here by .ci/gpu/wheels.sh):
#   device run: carry [".whl"], command "bash .ci/gpu/run.sh", timeout_s 590
# Installs the wheels that machine lacks (never its torch), builds the demo-full weights, then
# runs python -m chattts_studio.core.devtools.gpucheck: report.md and report.json land in $OUT. A second run
# needs no manual step. Set BUDGET (seconds, default 450) to fit the device time left, PARTS
# (default env,pytest,checks,bench) to run fewer.
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT="${OUT:-$PWD/gpucheck-out}" PYTHONUNBUFFERED=1
mkdir -p "$OUT"
site=$(mktemp -d)
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --target "$site" .whl/*.whl \
    || { echo "wheel install failed"; exit 2; }
fi
bash .ci/link_tree.sh build/tree
export PYTHONPATH="$site:$PWD/build/tree"
export CHATTTS_STUDIO_HOME="${CHATTTS_STUDIO_HOME:-/tmp/chattts-studio-gpu}" HF_HUB_OFFLINE=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
started=$SECONDS
python3 -c "from chattts_studio.core.weights import models; models.ensure('demo-full')" || { echo "demo-full build failed"; exit 2; }
echo "demo-full ready in $((SECONDS - started)) s"
python3 -m chattts_studio.core.devtools.gpucheck --out "$OUT" --budget "${BUDGET:-450}" --parts "${PARTS:-env,pytest,checks,bench}" 2>&1 | tee "$OUT/log.txt"
exit "${PIPESTATUS[0]}"
