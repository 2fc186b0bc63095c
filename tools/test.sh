#!/usr/bin/env bash
# Runs every test: unit tests (no root) and integration tests (real namespaces, FRR and pings;
# they need root and are skipped with a reason without it). Installs and builds first if needed.
# Ends with the time of each integration suite (one CTest entry each, with its own budget).
set -euo pipefail
cd "$(dirname "$0")/.."
# --browser: the web page is tested in headless Chromium (skipped, with the reason, without it).
if [ "$(id -u)" = 0 ]; then bash tools/install-deps.sh --browser; fi
bash tools/build.sh
rc=0
ctest --test-dir build --output-on-failure "$@" | tee build/ctest-output.txt || rc=$?
# "Test #330: integration.gate ......   Passed  412.05 sec"
if grep -q 'integration\.' build/ctest-output.txt; then
  echo
  echo "integration suites (CTest entry, result, time):"
  grep -E 'Test +#[0-9]+: integration\.' build/ctest-output.txt |
    sed -E 's/.*: (integration\.[a-z-]+) [ .*]*(Passed|\*\*\*Failed|\*\*\*Timeout|\*\*\*Skipped|Not Run|Skipped)? *([0-9.]+ sec).*/  \1  \2  \3/'
  # ctest's own closing line last, for whoever reads the end of the log.
  echo
  grep -E 'tests passed, [0-9]+ tests failed out of' build/ctest-output.txt | tail -1
fi
exit "$rc"
