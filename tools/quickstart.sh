#!/usr/bin/env bash
# The main job on a fresh Debian 12 machine: install what twin needs, build it, bring up the
# 2-spine / 4-leaf FRR fabric of topologies/clos-2x4.yaml, validate it, print the verdict and
# tear it down. Exit code: the verdict's (0 pass, 1 fail, 3 harness error).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install-deps.sh
# Only the CLI: the unit and integration test binaries are tools/test.sh's to build.
echo "quickstart: building build/twin (ninja shows [done/total]; a cold build takes minutes)"
bash tools/build.sh twin
lab=${TWIN_LAB:-clos-2x4}
twin=build/twin
# Tear down only a lab this script brought up: never one that was running before.
"$twin" up topologies/clos-2x4.yaml --name "$lab" || {
  rc=$?
  [ "$rc" = 1 ] && "$twin" down --lab "$lab"  # up but not converged: the lab was kept
  exit "$rc"
}
cleanup() { "$twin" down --lab "$lab" || true; }
trap cleanup EXIT
set +e
"$twin" validate --lab "$lab" --junit build/clos-2x4-junit.xml
verdict=$?
set -e
echo "JUnit report: build/clos-2x4-junit.xml"
exit $verdict
