#!/usr/bin/env bash
# Container nodes side by side with namespace nodes, in one run (issue 44's figures):
#   clos-2x4 (8 nodes) and, with --large, 8x48 (56 routers): `up` (to every BGP session
#   Established) and up -> passing `twin validate`, on frr-8.4 (this machine's FRR in
#   namespaces) and on frr-8.4-container (the same release from localhost/twin-frr:8.4.4),
#   the containers made through podman's API (twin's way) and through its CLI (TWIN_PODMAN_API=0);
#   PSS per router (its daemons' smaps_rollup Pss, plus its container's own `sleep` and conmon
#   for a container node);
#   the image step on clos-2x4-mixed: leaf2 8.4.4 -> 10.3 (`twin apply --per-step`), the step's
#   time and the probe stream's longest outage per flow.
# Usage: sudo bench/containers.sh [RUNS] [--large]   (default 3 runs; medians printed)
# Needs tools/build-images.sh's images; prints JSON lines to bench/results/containers.jsonl.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
large=0
[ "${2:-}" = --large ] && large=1
twin=$PWD/build/twin
[ -x "$twin" ] || bash tools/build.sh twin
[ "$(id -u)" = 0 ] || { echo "bench: needs root" >&2; exit 3; }
work=$(mktemp -d /tmp/twin-bench-containers.XXXXXX)
lab="bcont-$$"
trap '"$twin" down --lab "$lab" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT INT TERM
mkdir -p bench/results
out=bench/results/containers.jsonl

# The same fabric on both kinds of node: only the image differs.
sed 's/^  image: frr-8.4$/  image: frr-8.4-container/' topologies/clos-2x4.yaml > "$work/clos-2x4-container.yaml"
fabrics=("clos-2x4:topologies/clos-2x4.yaml:$work/clos-2x4-container.yaml")
if [ "$large" = 1 ]; then
  "$twin" gen clos --spines 8 --leaves 48 --name c8x48 -o "$work/c8x48.yaml" >/dev/null
  sed 's/image: frr-8.4$/image: frr-8.4-container/' "$work/c8x48.yaml" > "$work/c8x48-container.yaml"
  fabrics+=("8x48:$work/c8x48.yaml:$work/c8x48-container.yaml")
fi

now() { date +%s.%N; }
# PSS (KiB) per router of the running lab: its daemons, and a container node's `sleep` and
# conmon (the container's own processes).
pss_per_router() {
  local total=0 routers=0
  for dir in /run/twin/"$lab"/*/; do
    local node pss=0
    node=$(basename "$dir")
    for pidfile in "$dir"*.pid; do
      [ -e "$pidfile" ] && [ "$(basename "$pidfile")" != container.pid ] || continue
      pss=$((pss + $(awk '/^Pss:/{print $2}' /proc/"$(cat "$pidfile")"/smaps_rollup)))
    done
    [ "$pss" -gt 0 ] || continue
    if [ -f "$dir/container.pid" ]; then
      local cpid conmon
      cpid=$(cut -d' ' -f1 "$dir/container.pid")
      conmon=$(awk '{print $4}' /proc/"$cpid"/stat)
      for p in "$cpid" "$conmon"; do
        pss=$((pss + $(awk '/^Pss:/{print $2}' /proc/"$p"/smaps_rollup)))
      done
    fi
    routers=$((routers + 1)); total=$((total + pss))
  done
  awk -v t="$total" -v n="$routers" 'BEGIN{printf "%.2f", t/n/1024}'
}

median() { sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }

for f in "${fabrics[@]}"; do
  IFS=: read -r name netns_topo container_topo <<<"$f"
  # container: podman's API (twin's default); container-cli: `podman run` a container, as
  # before the API (TWIN_PODMAN_API=0), measured in the same run.
  for kind in netns container container-cli; do
    topo=$netns_topo
    [ "$kind" != netns ] && topo=$container_topo
    api=1
    [ "$kind" = container-cli ] && api=0
    export TWIN_PODMAN_API=$api
    ups=(); valids=(); psss=()
    for i in $(seq 1 "$runs"); do
      t0=$(now)
      "$twin" up "$topo" --name "$lab" --json > "$work/up.json" 2>/dev/null
      t1=$(now)
      "$twin" validate --lab "$lab" >/dev/null 2>&1
      t2=$(now)
      pss=$(pss_per_router)
      "$twin" down --lab "$lab" >/dev/null 2>&1
      up_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.2f", b-a}')
      passing_s=$(awk -v a="$t0" -v c="$t2" 'BEGIN{printf "%.2f", c-a}')
      echo "$name $kind run $i: up $up_s s, up->passing validate $passing_s s, PSS per router $pss MiB"
      echo "{\"fabric\":\"$name\",\"nodes\":\"$kind\",\"run\":$i,\"up_s\":$up_s,\"up_to_passing_validate_s\":$passing_s,\"pss_mib_per_router\":$pss}" >> "$out"
      ups+=("$up_s"); valids+=("$passing_s"); psss+=("$pss")
    done
    echo "$name $kind median of $runs: up $(printf '%s\n' "${ups[@]}" | median) s, up->passing validate $(printf '%s\n' "${valids[@]}" | median) s, PSS per router $(printf '%s\n' "${psss[@]}" | median) MiB"
  done
done

unset TWIN_PODMAN_API

# The upgrade step: leaf2 8.4.4 -> 10.3 on the mixed fabric, judged with the probe stream.
"$twin" up topologies/clos-2x4-mixed.yaml --name "$lab" >/dev/null 2>&1
"$twin" validate --lab "$lab" --converge-timeout 60 >/dev/null 2>&1 || true
"$twin" apply --lab "$lab" --json --max-outage 1s --revert \
  scenarios/upgrade/changes/upgrade-leaf2.yaml > "$work/apply.json" 2>/dev/null || true
/usr/bin/python3 - "$work/apply.json" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
step = j["steps"][0]
flows = j.get("outage", {}).get("flows", [])
judged = [f for f in flows if f.get("judged")]
worst = max((f["longest_outage_ms"] for f in judged), default=0)
own = max((f["longest_outage_ms"] for f in flows if not f.get("judged")), default=0)
print(f"upgrade leaf2 8.4.4 -> 10.3: verdict {j['verdict']}, step {step['duration_ms']/1000:.2f} s "
      f"({step['detail']}), longest outage of the other leaves' flows {worst:.0f} ms, "
      f"of leaf2's own flows {own:.0f} ms, {len(flows)} flows")
EOF
