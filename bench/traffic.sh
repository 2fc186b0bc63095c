#!/usr/bin/env bash
# Traffic figures (issue 45), in one run, side by side:
#   1. the machine's veth capacity: iperf3 between two bare namespaces, one TCP flow and 8;
#   2. the harness's cost: on clos-2x4 (unshaped), `twin traffic --pattern pairs` against the same
#      two iperf3 flows started by hand in the servers' namespaces (alternating, RUNS times each);
#   3. all-to-all on ai-rail-4x8 and clos-2x4: aggregate, slowest / fair share, ECMP balance;
#      the same with `maximum-paths 1` on one leaf, and with L3-only hashing (policy 0) on the
#      spines, then on the leaves — the policy each figure ran with is printed with it;
#   4. the traffic family's cost per validation (`validate --only traffic`: wall and CPU seconds).
# Usage: sudo bench/traffic.sh [RUNS]   (default 3); JSON lines to bench/results/traffic.jsonl.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
twin=$PWD/build/twin
[ -x "$twin" ] || bash tools/build.sh twin
[ "$(id -u)" = 0 ] || { echo "bench: needs root" >&2; exit 3; }
work=$(mktemp -d /tmp/twin-bench-traffic.XXXXXX)
lab="btraf-$$"
nsa="twbench-a-$$" nsb="twbench-b-$$"
cleanup() {
  "$twin" down --lab "$lab" >/dev/null 2>&1 || true
  ip netns del "$nsa" 2>/dev/null || true
  ip netns del "$nsb" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT INT TERM
mkdir -p bench/results
out=bench/results/traffic.jsonl
py=/usr/bin/python3
gbps() { $py -c "import json,sys; j=json.load(open('$1')); print(round(j['end']['sum_received']['bits_per_second']/1e9, 2))"; }

# 1. veth capacity.
ip netns add "$nsa"; ip netns add "$nsb"
ip link add twbv0 netns "$nsa" type veth peer name twbv1 netns "$nsb"
ip -n "$nsa" addr add 10.99.0.1/24 dev twbv0; ip -n "$nsb" addr add 10.99.0.2/24 dev twbv1
ip -n "$nsa" link set twbv0 up; ip -n "$nsb" link set twbv1 up
for p in 1 8; do
  ip netns exec "$nsb" iperf3 -s -1 -p 5999 >/dev/null 2>&1 &
  sleep 0.3
  ip netns exec "$nsa" iperf3 -c 10.99.0.2 -p 5999 -t 5 -P "$p" --json >"$work/veth.json"
  wait
  g=$(gbps "$work/veth.json")
  echo "veth capacity, $p TCP flow(s): $g Gbit/s"
  echo "{\"figure\":\"veth_capacity\",\"flows\":$p,\"gbps\":$g}" >>"$out"
done
ip netns del "$nsa"; ip netns del "$nsb"

# 2. twin traffic against iperf3 by hand, clos-2x4 unshaped.
"$twin" up topologies/clos-2x4.yaml --name "$lab" >/dev/null 2>&1
"$twin" validate --lab "$lab" --converge-timeout 60 >/dev/null 2>&1 || true
ns() { echo "tw-$lab-$1"; }
by_hand() {
  ip netns exec "$(ns server2)" iperf3 -s -1 -p 5301 -B 10.0.4.10 >/dev/null 2>&1 &
  ip netns exec "$(ns server1)" iperf3 -s -1 -p 5302 -B 10.0.1.10 >/dev/null 2>&1 &
  sleep 0.3
  ip netns exec "$(ns server1)" iperf3 -c 10.0.4.10 -p 5301 -B 10.0.1.10 -t 5 --json >"$work/h1.json" &
  ip netns exec "$(ns server2)" iperf3 -c 10.0.1.10 -p 5302 -B 10.0.4.10 -t 5 --json >"$work/h2.json" &
  wait
  $py -c "import json; print(round(sum(json.load(open(f))['end']['sum_received']['bits_per_second'] for f in ['$work/h1.json','$work/h2.json'])/1e9, 2))"
}
by_twin() {
  "$twin" traffic --lab "$lab" --pattern pairs --duration 5s --json 2>/dev/null >"$work/t.json"
  $py -c "import json; print(round(json.load(open('$work/t.json'))['aggregate_bps']/1e9, 2))"
}
for i in $(seq "$runs"); do
  h=$(by_hand); t=$(by_twin)
  echo "clos-2x4 pairs (2 flows, unshaped), run $i: iperf3 by hand $h Gbit/s, twin traffic $t Gbit/s"
  echo "{\"figure\":\"harness\",\"run\":$i,\"by_hand_gbps\":$h,\"twin_gbps\":$t}" >>"$out"
done
"$twin" down --lab "$lab" >/dev/null 2>&1

# 3. all-to-all, and the same with one leaf's ECMP cut and with L3-only hashing.
summary() {  # label, lab file -> one line and one JSON line
  $py - "$1" "$work/t.json" "$out" <<'EOF'
import json, sys
label, f, out = sys.argv[1], sys.argv[2], sys.argv[3]
j = json.load(open(f))
groups = j["ecmp_groups"]
worst = max((g["max_min"] if g["max_min"] > 0 else float("inf") for g in groups), default=0)
idle = sum(len(g["idle"]) for g in groups)
print(f"{label}: aggregate {j['aggregate_bps']/1e6:.0f} Mbit/s over {len(j['flows'])} flows, "
      f"slowest/fair {j['slowest_ratio']:.2f}, ECMP groups {len(groups)} (worst max/min "
      f"{worst:.2f}, idle members {idle}), drops shaped {j['drops']['shaped_ports']} unshaped "
      f"{j['drops']['unshaped_ports']}, p99 {j['latency']['unloaded']['p99_ms']:.2f} -> "
      f"{j['latency']['loaded']['p99_ms']:.2f} ms, wall {j['wall_s']:.1f} s; hashing: {j['hash_policy']}")
with open(out, "a") as o:
    o.write(json.dumps({"figure": "all_to_all", "case": label, "aggregate_bps": j["aggregate_bps"],
                        "flows": len(j["flows"]), "slowest_ratio": j["slowest_ratio"],
                        "worst_max_min": None if worst == float("inf") else worst, "idle": idle,
                        "hash_policy": j["hash_policy"], "wall_s": j["wall_s"]}) + "\n")
EOF
}
sysctl_all() {  # node prefix, value
  for n in $("$twin" status --lab "$lab" --json | $py -c "import json,sys; print(' '.join(n['name'] for n in json.load(sys.stdin)['nodes']))"); do
    case "$n" in "$1"*) ip netns exec "$(ns "$n")" sysctl -qw net.ipv4.fib_multipath_hash_policy="$2" ;; esac
  done
}
for topo in ai-rail-4x8 clos-2x4; do
  "$twin" up "topologies/$topo.yaml" --name "$lab" >/dev/null 2>&1
  "$twin" validate --lab "$lab" --converge-timeout 60 >/dev/null 2>&1 || true
  # 4x8: 224 pairs (448 iperf3 processes) of one flow; clos-2x4: 2 pairs of four.
  flows=$([ "$topo" = clos-2x4 ] && echo 4 || echo 1)
  "$twin" traffic --lab "$lab" --pattern all-to-all --duration 5s --flows-per-pair $flows --json 2>/dev/null >"$work/t.json"
  summary "$topo all-to-all"
  # maximum-paths 1 on one leaf.
  leaf=$([ "$topo" = clos-2x4 ] && echo leaf1 || echo rail1-leaf1)
  asn=$("$twin" plan "topologies/$topo.yaml" --json 2>/dev/null | $py -c "import json,sys; print([n['asn'] for n in json.load(sys.stdin)['nodes'] if n['name']=='$leaf'][0])")
  "$twin" exec --lab "$lab" "$leaf" -- vtysh -c 'configure terminal' -c "router bgp $asn" -c 'address-family ipv4 unicast' -c 'maximum-paths 1' >/dev/null
  sleep 3
  "$twin" traffic --lab "$lab" --pattern all-to-all --duration 5s --flows-per-pair $flows --json 2>/dev/null >"$work/t.json"
  summary "$topo all-to-all, maximum-paths 1 on $leaf"
  "$twin" exec --lab "$lab" "$leaf" -- vtysh -c 'configure terminal' -c "router bgp $asn" -c 'address-family ipv4 unicast' -c 'no maximum-paths 1' >/dev/null
  sleep 3
  sysctl_all spine 0
  "$twin" traffic --lab "$lab" --pattern all-to-all --duration 5s --flows-per-pair $flows --json 2>/dev/null >"$work/t.json"
  summary "$topo all-to-all, L3-only hashing on the spines"
  sysctl_all spine 3
  sysctl_all "$([ "$topo" = clos-2x4 ] && echo leaf || echo rail)" 0
  "$twin" traffic --lab "$lab" --pattern all-to-all --duration 5s --flows-per-pair $flows --json 2>/dev/null >"$work/t.json"
  summary "$topo all-to-all, L3-only hashing on the leaves"
  sysctl_all "$([ "$topo" = clos-2x4 ] && echo leaf || echo rail)" 3
  # 4. The family's cost per validation (its defaults: all-to-all, 3 s, 4 flows per pair; a
  # failing test exits 1, which does not change the cost).
  /usr/bin/time -f "%e %U %S" -o "$work/time" "$twin" validate --lab "$lab" --only traffic >/dev/null 2>&1 || true
  read -r wall user sys < <(tail -1 "$work/time")  # after "Command exited with ..." if any
  echo "$topo validate --only traffic: wall $wall s, CPU $user s user + $sys s system (twin and its iperf3s)"
  echo "{\"figure\":\"family_cost\",\"lab\":\"$topo\",\"wall_s\":$wall,\"user_s\":$user,\"sys_s\":$sys}" >>"$out"
  "$twin" down --lab "$lab" >/dev/null 2>&1
done
