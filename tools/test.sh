#!/usr/bin/env bash
# Runs every test: unit tests (no root) and integration tests (real namespaces, FRR and pings;
# they need root and are skipped with a reason without it). Installs and builds first if needed.
# Ends with the time of each integration suite (one CTest entry each, with its own budget), each
# skipped test with its reason, each failed one, and the totals over every gtest of every entry.
# TWIN_REQUIRE=browser,vm (.ci/run) makes a test that would skip for want of one of those fail.
set -euo pipefail
cd "$(dirname "$0")/.."
# --browser: the web page is tested in headless Chromium (skipped, with the reason, without it).
# --containers: podman, and FRR's images by release built from Debian's archives (cached: a
# second run keeps them); without them the container suite skips, saying what is missing.
if [ "$(id -u)" = 0 ]; then
  bash tools/install-deps.sh --browser --containers
  bash tools/build-images.sh || echo "test.sh: the FRR images did not build; the container suite will say so"
fi
bash tools/build.sh
# Each test process writes its tests' outcomes here (tests/test_main.cpp); only this run's count.
export TWIN_TEST_RESULTS="$PWD/build/test-results"
rm -rf "$TWIN_TEST_RESULTS"
mkdir -p "$TWIN_TEST_RESULTS"
rc=0
ctest --test-dir build --output-on-failure "$@" | tee build/ctest-output.txt || rc=$?
# "Test #330: integration.gate ......   Passed  412.05 sec"
if grep -q 'integration\.' build/ctest-output.txt; then
  echo
  echo "integration suites (CTest entry, result, time):"
  grep -E 'Test +#[0-9]+: integration\.' build/ctest-output.txt |
    sed -E 's/.*: (integration\.[a-z-]+) [ .*]*(Passed|\*\*\*Failed|\*\*\*Timeout|\*\*\*Skipped|Not Run|Skipped)? *([0-9.]+ sec).*/  \1  \2  \3/'
fi
# ctest's own closing line, counting CTest entries (one per unit test, one per suite).
echo
grep -E 'tests passed, [0-9]+ tests failed out of|No tests were found' build/ctest-output.txt |
  tail -1 || true

# Totals over every test (a unit test, or one gtest inside a suite), from the records: a test
# that started and never ended (crashed, or killed at its entry's TIMEOUT) counts as failed.
shopt -s nullglob
records=("$TWIN_TEST_RESULTS"/*.jsonl)
if [ ${#records[@]} -eq 0 ]; then
  echo "tests: none recorded in $TWIN_TEST_RESULTS"
  exit "$rc"
fi
echo
summary=$(jq -nr --arg required "${TWIN_REQUIRE:-}" '
  def kind: .binary | sub("^twin_"; "") | sub("_tests$"; "");
  def col: (kind + "           ")[0:11];
  def why: .reason // "" | gsub("\\s+"; " ") | .[0:400];
  def counts: "\(length) run, \(map(select(.status == "passed")) | length) passed, " +
    "\(map(select(.status == "failed")) | length) failed, " +
    "\(map(select(.status == "skipped")) | length) skipped";
  [inputs | . + {file: input_filename}] as $all
  | ($all | group_by(.file)
     | map(map(select(.event == "start" or .event == "end")) | last
           | select(. != null and .event == "start")
           | . + {status: "failed",
                  reason: "did not finish: crashed, or killed at its CTest entry'"'"'s TIMEOUT"})
    ) as $unfinished
  | (($all | map(select(.event == "end"))) + $unfinished) as $tests
  | ($all | map(select(.event == "outside"))) as $outside
  | ($tests | map(select(.status == "skipped"))) as $skipped
  | ($tests | map(select(.status == "failed"))) as $failed
  | (if ($skipped | length) > 0 then
       "skipped tests (\($skipped | length)), with their reasons:",
       ($skipped | sort_by(kind, .test)[] | "  \(col)  \(.test): \(why)")
     else empty end),
    (if ($failed | length) > 0 then
       "failed tests (\($failed | length)):",
       ($failed | sort_by(kind, .test)[] | "  \(col)  \(.test): \(why)")
     else empty end),
    (if ($outside | length) > 0 then
       "failed outside any test (\($outside | length)):",
       ($outside[] | "  \(col)  \(.where): \(why)")
     else empty end),
    (if $required != "" then
       "required (TWIN_REQUIRE=\($required)): a test that misses one of them fails, not skips"
     else empty end),
    "tests: \($tests | counts) (" +
      ([$tests | group_by(kind)[] | "\(.[0] | kind): \(counts)"] | join("; ")) + ")",
    "FAILED=\(($failed | length) + ($outside | length))"
' "${records[@]}")
echo "$summary" | grep -v '^FAILED='
# A recorded failure fails the run even if CTest missed it.
if [ "$rc" = 0 ] && ! echo "$summary" | grep -qx 'FAILED=0'; then rc=1; fi
exit "$rc"
