#!/usr/bin/env bash
# Usage: .ci/retry.sh N COMMAND...  Runs COMMAND up to N times, waiting a little longer after each
# failure: for installs over a registry connection that sometimes drops.
set -uo pipefail
tries="$1"; shift
for ((i = 1; i <= tries; i++)); do
  "$@" && exit 0
  status=$?
  [ "$i" -lt "$tries" ] && { echo "retrying ($i of $tries failed): $*" >&2; sleep $((i * 10)); }
done
exit "$status"
