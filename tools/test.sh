#!/usr/bin/env bash
# Runs every test: unit tests (no root) and integration tests (real namespaces, FRR and pings;
# they need root and are skipped with a reason without it). Installs and builds first if needed.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" = 0 ]; then bash tools/install-deps.sh; fi
bash tools/build.sh
ctest --test-dir build --output-on-failure "$@"
