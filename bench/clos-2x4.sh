#!/usr/bin/env bash
# Times the main job on topologies/clos-2x4.yaml with the real CLI and measures memory:
#   up (start to all BGP sessions Established), validate (all four families), up→passing
#   validate, down, and PSS per FRR node (sum of its daemons' /proc/PID/smaps_rollup Pss).
# Usage: sudo bench/clos-2x4.sh [RUNS]   (default 3; prints each run and the median)
# The full benchmark suite (larger fabrics, CPU, fds) comes with the scale work; this script
# is the figure the end-to-end issue asks for.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
twin=build/twin
[ -x "$twin" ] || bash tools/build.sh
[ "$(id -u)" = 0 ] || { echo "bench: needs root" >&2; exit 3; }
lab="bench-$$"
trap '"$twin" down --lab "$lab" >/dev/null 2>&1 || true' EXIT INT TERM

now() { date +%s.%N; }
results=()
for i in $(seq 1 "$runs"); do
  t0=$(now)
  "$twin" up topologies/clos-2x4.yaml --name "$lab" >/dev/null 2>&1
  t1=$(now)
  "$twin" validate --lab "$lab" >/dev/null 2>&1
  t2=$(now)
  pss_total=0; nodes=0; max=0
  for dir in /run/twin/"$lab"/*/; do
    node_pss=0
    for pidfile in "$dir"*.pid; do
      [ -e "$pidfile" ] || continue
      kb=$(awk '/^Pss:/{print $2}' /proc/"$(cat "$pidfile")"/smaps_rollup)
      node_pss=$((node_pss + kb))
    done
    [ "$node_pss" -gt 0 ] || continue
    nodes=$((nodes + 1)); pss_total=$((pss_total + node_pss))
    [ "$node_pss" -gt "$max" ] && max=$node_pss
  done
  t3=$(now)
  "$twin" down --lab "$lab" >/dev/null 2>&1
  t4=$(now)
  line=$(awk -v a="$t0" -v b="$t1" -v c="$t2" -v d="$t3" -v e="$t4" -v p="$pss_total" -v n="$nodes" -v m="$max" \
    'BEGIN{printf "%.2f %.2f %.2f %.2f %.1f %.1f", b-a, c-b, c-a, e-d, p/n/1024, m/1024}')
  echo "run $i: up $(cut -d' ' -f1 <<<"$line") s, validate $(cut -d' ' -f2 <<<"$line") s, up->passing validate $(cut -d' ' -f3 <<<"$line") s, down $(cut -d' ' -f4 <<<"$line") s, PSS per FRR node $(cut -d' ' -f5 <<<"$line") MiB (max $(cut -d' ' -f6 <<<"$line"))"
  results+=("$line")
done
names=(up validate up_to_passing_validate down pss_mib_per_node pss_mib_max)
out="median of $runs:"
for col in 1 2 3 4 5 6; do
  med=$(printf '%s\n' "${results[@]}" | cut -d' ' -f"$col" | sort -g | sed -n "$(( (runs + 1) / 2 ))p")
  out+=" ${names[$((col - 1))]}=$med"
done
echo "$out"
