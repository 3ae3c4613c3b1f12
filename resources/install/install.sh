#!/bin/sh
# ChatTTS Studio on macOS (Apple Silicon, 14 or later) and Linux: uv at its pinned version when
# it is missing (uv's installer from astral.sh, else uv from PyPI), a Python (a supported one
# already installed, else uv's own), the locked packages with the PyTorch build that suits this
# machine, and a launcher. The decisions live in core/install (Python, tested by the suite);
# this only finds uv and a Python. POSIX sh.
set -eu

# uv's version wherever the installers fetch it: the lock's (constraints.txt), also in
# install.ps1; tests/core/install/test_install_sh.py holds the three together.
UV_VERSION=0.13.9
UV_INSTALLER="https://astral.sh/uv/$UV_VERSION/install.sh"
# The Pythons the app supports (pyproject's requires-python), newest first.
SUPPORTED="3.14 3.13 3.12 3.11"

root=$(CDPATH='' cd -- "$(dirname -- "$0")/../.." && pwd)
private_uv="$root/build/uv"  # uv from PyPI, when it comes from there

say() {
    printf '%s\n' "$*" >&2
}

# The first supported Python on PATH, by its full path.
supported_python() {
    for candidate in python3.14 python3.13 python3.12 python3.11 python3; do
        path=$(command -v "$candidate" 2>/dev/null) || continue
        if "$path" -c "import sys; sys.exit('%d.%d' % sys.version_info[:2] not in '$SUPPORTED'.split())" >/dev/null 2>&1; then
            printf '%s\n' "$path"
            return 0
        fi
    done
    return 1
}

# uv at UV_VERSION: on PATH, or where an earlier run put it. Another version is left alone
# (the user's own), and the pinned one is fetched beside this checkout instead.
installed_uv() {
    for candidate in "$(command -v uv 2>/dev/null || true)" "$private_uv/bin/uv" \
        "$private_uv.venv/bin/uv"; do
        [ -n "$candidate" ] && [ -x "$candidate" ] || continue
        case "$("$candidate" --version 2>/dev/null)" in
            "uv $UV_VERSION" | "uv $UV_VERSION "*)
                printf '%s\n' "$candidate"
                return 0
                ;;
        esac
    done
    return 1
}

# uv's own installer, pinned to UV_VERSION, downloaded to a file first: a failed download then
# says so instead of handing sh nothing. It installs into this checkout's build/uv and leaves
# the shell's profile and any other uv as they are.
uv_from_astral() {
    bin="$private_uv/bin"
    script=$(mktemp) || return 1
    status=0
    if command -v curl >/dev/null 2>&1; then
        tool=curl
        curl --proto '=https' --tlsv1.2 --connect-timeout 20 -LsSf "$UV_INSTALLER" -o "$script" ||
            status=$?
    elif command -v wget >/dev/null 2>&1; then
        tool=wget
        wget -q --timeout=20 -O "$script" "$UV_INSTALLER" || status=$?
    else
        tool="curl or wget"
        status=127
    fi
    if [ "$status" -ne 0 ]; then
        say "Could not download uv's installer from $UV_INSTALLER ($tool: exit status $status)."
        rm -f "$script"
        return 1
    fi
    echo "Installing uv $UV_VERSION (https://docs.astral.sh/uv/) for this user..." >&2
    if ! UV_INSTALL_DIR="$bin" UV_NO_MODIFY_PATH=1 INSTALLER_NO_MODIFY_PATH=1 sh "$script" >&2; then
        say "uv's installer from $UV_INSTALLER failed; what it printed above says why."
        rm -f "$script"
        return 1
    fi
    rm -f "$script"
    [ -x "$bin/uv" ] && printf '%s\n' "$bin/uv"
}

# uv from PyPI at UV_VERSION, into a folder of this checkout: with the Python's pip (--target
# also works beside a system Python that refuses other installs), or where it has none, with
# the pip of a venv made for it.
uv_from_pypi() {
    say "Installing uv $UV_VERSION from PyPI with $1 instead..."
    rm -rf "$private_uv" "$private_uv.venv"
    if "$1" -m pip --version >/dev/null 2>&1; then
        "$1" -m pip install --quiet --disable-pip-version-check --target "$private_uv" \
            "uv==$UV_VERSION" >&2 && [ -x "$private_uv/bin/uv" ] &&
            printf '%s\n' "$private_uv/bin/uv"
        return
    fi
    "$1" -m venv "$private_uv.venv" >&2 &&
        "$private_uv.venv/bin/python" -m pip install --quiet --disable-pip-version-check \
            "uv==$UV_VERSION" >&2 && [ -x "$private_uv.venv/bin/uv" ] &&
        printf '%s\n' "$private_uv.venv/bin/uv"
}

python=""
if found=$(supported_python); then
    python=$found
fi
if [ -n "${CHATTTS_STUDIO_PYTHON:-}" ]; then
    run_python=$CHATTTS_STUDIO_PYTHON
elif [ -n "$python" ]; then
    # A supported Python is installed: uv uses it and downloads none.
    run_python=$python
    UV_PYTHON_DOWNLOADS=never
    export UV_PYTHON_DOWNLOADS
else
    run_python=3.13
fi

if ! uv=$(installed_uv) && ! uv=$(uv_from_astral); then
    if [ -z "$python" ]; then
        say "uv $UV_VERSION could not be downloaded and no supported Python ($SUPPORTED) is installed to fetch it from PyPI; install uv $UV_VERSION (https://docs.astral.sh/uv/getting-started/installation/) or a supported Python, then run this again."
        exit 2
    fi
    if ! uv=$(uv_from_pypi "$python"); then
        say "uv $UV_VERSION could not be downloaded from astral.sh nor installed from PyPI with $python (what pip printed above says why); install uv $UV_VERSION (https://docs.astral.sh/uv/getting-started/installation/), then run this again."
        exit 2
    fi
fi
UV=$uv
export UV
exec "$uv" run --no-project --python "$run_python" "$root/core/install/bootstrap.py" "$@"
