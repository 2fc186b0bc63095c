#!/usr/bin/env bash
# VM figures of the mixed lab (topologies/mixed-vm.yaml: a test-vm server VM beside FRR
# namespaces), with the real CLI, as root:
#   sudo bench/vm.sh [RUNS]        (default 3)
# Per run: `up` total and "VMs ready" (domain start -> TWIN-READY on the console, as `up` waited
# for it), the guest's own uptime at ready (kernel boot -> init done), the accelerator, QEMU's
# PSS and RSS once ready, validate time, down time. Needs VM support (docs/vm-nodes.md).
# Each run brings the lab up twice, side by side: as shipped (`mgmt: true`: sshd on the leaves,
# the VM's management NIC on the lab's bridge with its address by DHCP from dnsmasq, whose PSS
# is shown) and without its management network (a copy without the `mgmt:` line).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
twin=build/twin
lab=benchvm
[ "$(id -u)" = 0 ] || { echo "bench/vm.sh: run as root" >&2; exit 3; }
[ -x "$twin" ] || { echo "bench/vm.sh: build first (tools/build.sh)" >&2; exit 3; }
plain=build/bench-mixed-vm-no-mgmt.yaml
grep -v '^mgmt:' topologies/mixed-vm.yaml > "$plain"
printf '%-4s %-5s %-6s %9s %11s %13s %9s %9s %12s %11s %9s\n' run mgmt accel "up s" "VMs ready s" "guest boot s" "PSS MiB" "RSS MiB" "dnsmasq KiB" "validate s" "down s"
for i in $(seq 1 "$runs"); do
for variant in yes no; do
  topo=topologies/mixed-vm.yaml
  [ "$variant" = no ] && topo=$plain
  out=$($twin up "$topo" --name "$lab" --json 2>/dev/null)
  total=$(python3 -c 'import json,sys; j=json.loads(sys.argv[1]); print("%.2f" % (j["total_ms"]/1000))' "$out")
  ready=$(python3 -c 'import json,sys; j=json.loads(sys.argv[1]); print("%.2f" % (j["vms_ms"]/1000))' "$out")
  log=/run/twin/$lab/vm1/console.log
  guest=$(grep -a -o 'up in [0-9.]* s' "$log" | awk '{print $3}' | tail -n1)
  status=$($twin status --lab "$lab" --json)
  accel=$(python3 -c 'import json,sys; j=json.loads(sys.argv[1]); print([n for n in j["nodes"] if n["name"]=="vm1"][0]["vm"]["accel"])' "$status")
  pid=$(cat "/run/libvirt/qemu/tw-$lab-vm1.pid")
  pss=$(awk '/^Pss:/{print $2}' "/proc/$pid/smaps_rollup")
  rss=$(awk '/^Rss:/{print $2}' "/proc/$pid/smaps_rollup")
  dhcp=$(python3 -c 'import json,sys; j=json.loads(sys.argv[1]); print(j.get("mgmt",{}).get("dhcp",{}).get("pid",0))' "$status")
  dpss=-
  [ "$dhcp" != 0 ] && dpss=$(awk '/^Pss:/{print $2}' "/proc/$dhcp/smaps_rollup")
  t0=$(date +%s.%N)
  $twin validate --lab "$lab" >/dev/null 2>&1 || echo "bench/vm.sh: validate did not pass in run $i" >&2
  t1=$(date +%s.%N)
  $twin down --lab "$lab" >/dev/null
  t2=$(date +%s.%N)
  awk -v i="$i" -v m="$variant" -v a="$accel" -v t="$total" -v r="$ready" -v g="$guest" \
      -v p="$pss" -v s="$rss" -v d="$dpss" -v t0="$t0" -v t1="$t1" -v t2="$t2" 'BEGIN {
    printf "%-4s %-5s %-6s %9s %11s %13s %9.1f %9.1f %12s %11.2f %9.2f\n", i, m, a, t, r, g,
           p / 1024, s / 1024, d, t1 - t0, t2 - t1 }'
done
done
rm -f "$plain"
