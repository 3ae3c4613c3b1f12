#!/usr/bin/env bash
# Lays the source tree out as it installs: DIR/chattts_studio/{core,gui,resources} as links to
# the top-level folders, for tools that find modules on a path but run no import hooks (mypy;
# the GPU run's python3 with PYTHONPATH=DIR). An editable install needs none of this.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="${1:?usage: link_tree.sh DIR}"
mkdir -p "$dir/chattts_studio"
for name in core gui resources; do
  ln -sfn "$root/$name" "$dir/chattts_studio/$name"
done
