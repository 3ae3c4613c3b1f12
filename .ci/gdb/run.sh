#!/usr/bin/env bash
# Runs a command under gdb so that a fatal signal prints the native stacks of every thread,
# then exits as the command would have (128 + signal on a crash). Without gdb: runs it plainly.
if ! command -v gdb >/dev/null; then exec "$@"; fi
exec gdb -q -nx -batch -iex 'set auto-load safe-path /' -x "$(dirname "$0")/crash_stacks.py" \
  --args "$@"
