#!/usr/bin/env bash
# Configures and builds twin into build/ (Ninja, ccache when present). Idempotent and incremental.
# With arguments, builds only those targets (tools/quickstart.sh builds `twin` alone, so a first
# run does not wait for the test binaries); without, everything.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -f build/build.ninja ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
cmake --build build -j "$(nproc)" ${1:+--target "$@"}
