#!/usr/bin/env bash
# Runs every scenario in scenarios/<lab>/ through `twin run`, N times in a row, and prints one
# line per run (scenario, verdict, first reason, whether the gate decided as expected, wall
# time) plus a summary. Exit 0 only when every run decided as its scenario expects.
#   sudo tools/run-scenarios.sh [N=3] [scenario-dir=scenarios/clos-2x4]
set -u
cd "$(dirname "$0")/.."
n=${1:-3}
dir=${2:-scenarios/clos-2x4}
twin=build/twin
[ -x "$twin" ] || { echo "run-scenarios: build first (tools/build.sh)" >&2; exit 3; }
[ "$(id -u)" = 0 ] || { echo "run-scenarios: needs root" >&2; exit 3; }
fail=0
total=0
printf '%-4s %-36s %-8s %-22s %-6s %s\n' run scenario verdict first-reason met seconds
for i in $(seq 1 "$n"); do
  for s in "$dir"/*.yaml; do
    name=$(basename "$s" .yaml)
    start=$EPOCHREALTIME
    out=$("$twin" run "$s" --name "rs$$" --json 2>/tmp/run-scenarios.$$.err)
    code=$?
    secs=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { print b - a }')
    verdict=$(echo "$out" | python3 -c 'import json,sys
try:
  j=json.load(sys.stdin); r=j.get("reasons") or [{}]
  print(j.get("verdict","?"), r[0].get("category","-"), j.get("scenario",{}).get("met"))
except Exception: print("? - ?")')
    set -- $verdict
    printf '%-4s %-36s %-8s %-22s %-6s %.1f\n' "$i" "$name" "$1" "$2" "$3" "$secs"
    total=$((total + 1))
    if [ "$code" != 0 ]; then
      fail=$((fail + 1))
      tail -3 /tmp/run-scenarios.$$.err >&2
    fi
  done
done
rm -f /tmp/run-scenarios.$$.err
echo "$((total - fail))/$total runs decided as expected"
[ "$fail" = 0 ]
