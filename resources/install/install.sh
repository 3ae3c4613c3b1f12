#!/bin/sh
# ChatTTS Studio on macOS (Apple Silicon, 14 or later) and Linux: uv when it is missing, a Python
# of uv's own, the locked packages with the PyTorch build that suits this machine, and a
# launcher. The decisions live in core/install (Python, tested by the suite); this only finds uv.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
if ! command -v uv >/dev/null 2>&1; then
    echo "Installing uv (https://docs.astral.sh/uv/) for this user..."
    curl -LsSf https://astral.sh/uv/install.sh | sh
    PATH="$HOME/.local/bin:$PATH"
fi
exec uv run --no-project --python "${CHATTTS_STUDIO_PYTHON:-3.13}" "$root/core/install/bootstrap.py" "$@"
