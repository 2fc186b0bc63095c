#!/usr/bin/env bash
# The management network's cost and the orchestrator's path, in one run (issue 48's figures):
#   `up` (to every BGP session Established) of clos-2x4 and 8x48 without and with `mgmt: true`
#   (medians of RUNS), and the PSS of one node's sshd (smaps_rollup);
#   Ansible's frr.frr.frr_facts over every router of 8x48 (56) through `twin inventory`;
#   on clos-2x4-mgmt, the same change — a prefix-list and route-map on the four leaves — gated as
#   a change set (`twin apply FILE`) and as a playbook run (`twin apply --run`), one after the
#   other, each approved and then reverted (--revert) so both start from the same lab.
# Usage: sudo bench/mgmt.sh [RUNS]   (default 3); JSON lines to bench/results/mgmt.jsonl.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
twin=$PWD/build/twin
[ -x "$twin" ] || bash tools/build.sh twin
[ "$(id -u)" = 0 ] || { echo "bench: needs root" >&2; exit 3; }
work=$(mktemp -d /tmp/twin-bench-mgmt.XXXXXX)
lab="bmgmt-$$"
trap '"$twin" down --lab "$lab" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT INT TERM
mkdir -p bench/results
out=bench/results/mgmt.jsonl
ansible=(env ANSIBLE_DEPRECATION_WARNINGS=0 /usr/bin/python3 /usr/bin/ansible-playbook)

"$twin" gen clos --spines 8 --leaves 48 --name c8x48 -o "$work/c8x48.yaml" >/dev/null
for f in topologies/clos-2x4.yaml "$work/c8x48.yaml"; do
  b=$(basename "$f" .yaml)
  cp "$f" "$work/$b-plain.yaml"
  sed 's/^name: \(.*\)$/name: \1\nmgmt: true/' "$f" > "$work/$b-mgmt.yaml"
done
now() { date +%s.%N; }
median() { sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
up_time() {  # topology -> seconds to `up` returning (every session Established)
  local t0 t1
  t0=$(now)
  "$twin" up "$1" --name "$lab" >/dev/null 2>&1
  t1=$(now)
  awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.2f\n", b-a}'
}
for fabric in clos-2x4 c8x48; do
  for kind in plain mgmt; do
    times=()
    for _ in $(seq "$runs"); do
      times+=("$(up_time "$work/$fabric-$kind.yaml")")
      if [ "$kind" = mgmt ] && [ -z "${sshd_pss:-}" ]; then
        pid=$(jq -r '[.nodes[] | .daemons[] | select(.name=="sshd") | .pid][0]' \
              <("$twin" status --lab "$lab" --json))
        sshd_pss=$(awk '/^Pss:/{printf "%.2f", $2/1024}' /proc/"$pid"/smaps_rollup)
      fi
      if [ "$fabric" = c8x48 ] && [ "$kind" = mgmt ] && [ -z "${facts_s:-}" ]; then
        "$twin" inventory "$lab" -o "$work/inv.yml" 2>/dev/null
        t0=$(now)
        "${ansible[@]}" -i "$work/inv.yml" tests/data/mgmt/facts.yml > "$work/facts.log" 2>&1
        t1=$(now)
        facts_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}')
        facts_ok=$(grep -c ' running FRR ' "$work/facts.log" || true)
      fi
      "$twin" down --lab "$lab" >/dev/null
    done
    m=$(printf '%s\n' "${times[@]}" | median)
    echo "{\"fabric\":\"$fabric\",\"nodes\":\"$kind\",\"up_s\":$m,\"runs\":$runs}" | tee -a "$out"
  done
done
echo "{\"sshd_pss_mib\":$sshd_pss,\"frr_facts_8x48_s\":$facts_s,\"frr_facts_hosts\":$facts_ok}" | tee -a "$out"

# The same change, as a change set and as a playbook, on one lab.
cat > "$work/policy.yaml" <<'YAML'
version: 1
name: leaf-policy
steps:
  - name: policy on the leaves
    frr:
      nodes: [leaf1, leaf2, leaf3, leaf4]
      add: |
        ip prefix-list FABRIC-LOOPBACKS seq 5 permit 10.255.0.0/16 le 32
        route-map FROM-FABRIC permit 10
         match ip address prefix-list FABRIC-LOOPBACKS
        exit
        route-map FROM-FABRIC permit 20
        exit
YAML
cat > "$work/policy.yml" <<'YAML'
- hosts: leaves
  gather_facts: false
  tasks:
    - ansible.netcommon.cli_config:
        config: |
          ip prefix-list FABRIC-LOOPBACKS seq 5 permit 10.255.0.0/16 le 32
          route-map FROM-FABRIC permit 10
           match ip address prefix-list FABRIC-LOOPBACKS
          exit
          route-map FROM-FABRIC permit 20
          exit
YAML
"$twin" up topologies/clos-2x4-mgmt.yaml --name "$lab" >/dev/null 2>&1
gate_ms() { jq -r '.duration_ms' ; }
cs=$("$twin" apply --lab "$lab" --json --revert "$work/policy.yaml" 2>/dev/null | gate_ms)
pb=$("$twin" apply --lab "$lab" --json --revert \
       --run "${ansible[*]} -i \$TWIN_INVENTORY $work/policy.yml" 2>/dev/null | gate_ms)
echo "{\"gate_change_set_ms\":$cs,\"gate_playbook_ms\":$pb}" | tee -a "$out"
