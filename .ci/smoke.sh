#!/usr/bin/env bash
# Install-plus-smoke test of the wheel on every other supported Python: build the wheel with the
# main environment, install it with its dependencies into a fresh environment per interpreter,
# then synthesize with the CLI (demo weights, CPU) and open and close the window offscreen.
# Usage: .ci/smoke.sh MAIN_PYTHON [PYTHON...]  (interpreters equal to MAIN_PYTHON's version skip)
set -euo pipefail
cd "$(dirname "$0")/.."
main="$1"; shift
main_version=$("$main" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
work=$(mktemp -d /tmp/chattts-smoke.XXXXXX)
trap 'rm -rf "$work"' EXIT
"$main" -m pip wheel -q --no-deps --no-build-isolation -w "$work/dist" . 2>/dev/null ||
  "$main" -m pip wheel -q --no-deps -w "$work/dist" .
wheel=$(ls "$work"/dist/chattts_studio-*.whl)
echo "built $(basename "$wheel")"
NETWORK_ERRORS="incomplete-download|connection (interrupted|reset|refused|aborted)|read timed out|\
temporary failure in name resolution|NewConnectionError|Max retries exceeded|ProtocolError"
status=0
for python in "$@"; do
  version=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
  [ "$version" = "$main_version" ] && continue
  echo "== Python $version ($python): install the wheel and its dependencies"
  env="$work/py$version"
  "$python" -m venv "$env"
  "$env/bin/python" -m pip install -q --upgrade pip || true
  if ! bash .ci/retry.sh 2 "$env/bin/python" -m pip install -q -c "${LOCK:-constraints.txt}" "$wheel" 2> "$work/pip$version.log"; then
    # A registry that cannot be reached says nothing about the wheel: say so and go on. Any other
    # install failure (a dependency with no release for this Python, a broken wheel) fails.
    if grep -qiE "$NETWORK_ERRORS" "$work/pip$version.log"; then
      echo "NOT TESTED: Python $version: the package registry could not be reached:"
      grep -iE "$NETWORK_ERRORS" "$work/pip$version.log" | tail -3; continue
    fi
    cat "$work/pip$version.log"
    echo "FAILED: the wheel does not install on Python $version"; status=1; continue
  fi
  home="$work/home$version"
  export CHATTTS_STUDIO_HOME="$home" HF_HUB_OFFLINE=1 QT_QPA_PLATFORM=offscreen
  if "$env/bin/chattts-studio-cli" synth "你好，世界。Hello." -o "$work/out$version.wav" \
       --model demo --device cpu --no-refine &&
     test -s "$work/out$version.wav" &&
     (cd "$work" && "$env/bin/python" - <<'PY'
from PySide6.QtCore import QTimer
from chattts_studio.gui.app import application, build_window

app = application()
window = build_window(None)
window.show()
QTimer.singleShot(1500, window.close)
app.exec()
assert window.host.worker_thread.isFinished(), "the worker thread outlived the window"
print("window opened and closed offscreen")
PY
     ); then
    echo "ok: Python $version"
  else
    echo "FAILED: Python $version"; status=1
  fi
done
exit $status
