#!/usr/bin/env python3
"""The rollout gate as CI runs it: wall time from nothing to verdict and back to nothing.

  scenario  `twin run scenarios/clos-2x4/approve-drain-spine2.yaml` (up, baseline, change,
            settle, validation, restart check, verdict, down): the CI gate on clos-2x4
  8x48      on one running 8x48 lab (`twin gen clos --spines 8 --leaves 48`), the same drain
            of spine2 approved and reverted (`twin apply --revert`), and a policy that filters
            everything leaf3 advertises, rejected and rolled back with the rollback proven

With --twin-b PATH (e.g. the previous commit's build) each measurement alternates between this
checkout's twin and that one, so both see the same machine (for 8x48, both builds' labs are up
at once and each run alternates between them, which the 8x48 figures then include: two labs'
background load, not comparable with runs without --twin-b). The first build of a pair swaps
each run: an even --runs balances it. Prints every run and the medians.
Needs root. Removes its labs on any exit, Ctrl-C included.
Usage: sudo bench/gate_ci.py [--runs N] [--twin-b PATH] [--no-8x48]
"""
import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TWIN = os.path.join(ROOT, "build", "twin")
SCENARIO = os.path.join(ROOT, "scenarios", "clos-2x4", "approve-drain-spine2.yaml")
DRAIN = os.path.join(ROOT, "scenarios", "clos-2x4", "changes", "drain-spine2.yaml")
# gen clos numbers leaves' ASNs 4200000000 + n.
FILTER = """version: 1
name: filter-leaf3
steps:
  - name: outbound policy on leaf3
    frr:
      node: leaf3
      add: |
        ip prefix-list NOTHING seq 5 deny any
        ipv6 prefix-list NOTHING6 seq 5 deny any
        router bgp 4200000003
         address-family ipv4 unicast
          neighbor fabric prefix-list NOTHING out
         exit-address-family
         address-family ipv6 unicast
          neighbor fabric prefix-list NOTHING6 out
         exit-address-family
        exit
"""

labs = {}  # lab -> the twin binary that brought it up (and takes it down)


def cleanup():
    for lab, twin in list(labs.items()):
        subprocess.run([twin, "down", "--lab", lab], capture_output=True)
        labs.pop(lab, None)


def on_signal(signum, _frame):
    cleanup()
    sys.exit(130)


def timed(argv, expect_codes=(0,)):
    t0 = time.monotonic()
    p = subprocess.run(argv, capture_output=True, text=True)
    t = time.monotonic() - t0
    if p.returncode not in expect_codes:
        sys.exit(f"bench: {' '.join(argv)} exited {p.returncode}:\n{p.stderr[-2000:]}")
    return t, p.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--twin-b", help="a second twin binary measured alternately")
    ap.add_argument("--no-8x48", action="store_true", help="only the clos-2x4 scenario")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("bench: needs root (twin creates network namespaces)")
    if not os.access(TWIN, os.X_OK):
        subprocess.run(["bash", os.path.join(ROOT, "tools", "build.sh")], check=True)
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    bins = [("A", TWIN)] + ([("B", os.path.abspath(a.twin_b))] if a.twin_b else [])
    res = {k: {"scenario_s": [], "approve_revert_s": [], "reject_rollback_s": []} for k, _ in bins}
    tmp = tempfile.mkdtemp(prefix="twin-gate-ci-")
    try:
        for i in range(a.runs):
            for k, b in bins:
                t, out = timed([b, "run", "--json", "--name", f"gci{os.getpid()}{k}", SCENARIO])
                v = json.loads(out)
                assert v["verdict"] == "approve", v["verdict"]
                res[k]["scenario_s"].append(t)
                print(f"bench: {k} clos-2x4 scenario run {i + 1}: {t:.2f} s", file=sys.stderr,
                      flush=True)
        if not a.no_8x48:
            topo = os.path.join(tmp, "clos-8x48.yaml")
            filt = os.path.join(tmp, "filter-leaf3.yaml")
            subprocess.run([TWIN, "gen", "clos", "--spines", "8", "--leaves", "48", "-o", topo],
                           check=True, capture_output=True)
            with open(filt, "w") as f:
                f.write(FILTER)
            # One lab per build, both up at once, and the runs alternate between them (the
            # first build of a pair swaps each run): each build sees the same machine, the same
            # background load of two labs, and neither always goes first.
            for k, b in bins:
                lab = f"gci{os.getpid()}-{k}"
                labs[lab] = b
                timed([b, "up", "--name", lab, topo])
            for k, b in bins:
                timed([b, "validate", "--lab", f"gci{os.getpid()}-{k}"])  # converged first
            for i in range(a.runs):
                for k, b in (bins if i % 2 == 0 else bins[::-1]):
                    lab = f"gci{os.getpid()}-{k}"
                    t, out = timed([b, "apply", "--json", "--lab", lab, "--revert", DRAIN])
                    assert json.loads(out)["verdict"] == "approve"
                    res[k]["approve_revert_s"].append(t)
                    t, out = timed([b, "apply", "--json", "--lab", lab, filt], (1,))
                    j = json.loads(out)
                    assert j["verdict"] == "reject" and j["rollback_ok"], j["verdict"]
                    res[k]["reject_rollback_s"].append(t)
                    print(f"bench: {k} 8x48 run {i + 1}: approve+revert "
                          f"{res[k]['approve_revert_s'][-1]:.2f} s, reject+rollback {t:.2f} s",
                          file=sys.stderr, flush=True)
            for k, b in bins:
                lab = f"gci{os.getpid()}-{k}"
                subprocess.run([b, "down", "--lab", lab], capture_output=True)
                labs.pop(lab, None)
    finally:
        cleanup()
        for x in os.listdir(tmp):
            os.unlink(os.path.join(tmp, x))
        os.rmdir(tmp)
    for k, b in bins:
        print(f"{k} = {b}")
        for m, v in res[k].items():
            if v:
                print(f"  {m:20s} median {statistics.median(v):6.2f} s   runs: "
                      + ", ".join(f"{x:.2f}" for x in v))


if __name__ == "__main__":
    main()
