#!/usr/bin/env python3
"""A failure drill over every link of clos-2x4 (and, with --nodes, every router), measured
with the real CLI on one lab: the drill's total time, and per element the convergence (failure
until the network held still at the degraded state the design expects), the worst outage of a
flow the design keeps connected, the restore time (until the baseline was back and still) and
the element's whole cost (failure, settle, validation, restore, proof).

Not a test: nothing fails on a number. Usage: sudo bench/drill.py [--runs N] [--nodes] [--out FILE]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TWIN = os.path.join(ROOT, "build", "twin")
TOPOLOGY = os.path.join(ROOT, "topologies", "clos-2x4.yaml")


def twin(*args):
    return subprocess.run([TWIN, *args], capture_output=True, text=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--nodes", action="store_true", help="drill every router too")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "drill.json"))
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("bench: needs root")
    if not os.access(TWIN, os.X_OK):
        subprocess.run(["bash", os.path.join(ROOT, "tools", "build.sh")], check=True)
    lab = f"bench-drill-{os.getpid()}"
    runs = []
    try:
        r = twin("up", TOPOLOGY, "--name", lab)
        if r.returncode != 0:
            sys.exit(f"bench: up failed: {r.stderr.strip()}")
        args = ["drill", "--lab", lab, "--json", "--links", "all"]
        if a.nodes:
            args += ["--nodes", "all"]
        for i in range(a.runs):
            r = twin(*args)
            if r.returncode not in (0, 1):
                sys.exit(f"bench: drill exited {r.returncode}: {r.stderr.strip()[-400:]}")
            runs.append(json.loads(r.stdout))
    finally:
        twin("down", "--lab", lab)

    names = [e["kind"] + " " + e["name"] for e in runs[0]["elements"]]
    med = lambda xs: statistics.median(xs)
    print(f"drill on clos-2x4, {len(names)} elements, median of {a.runs} run(s):")
    print(f"{'element':<34} {'converged':>10} {'worst outage':>13} {'restored':>9} {'element':>8}  status")
    table = {}
    for k, name in enumerate(names):
        es = [run["elements"][k] for run in runs]
        row = {"convergence_ms": [e["convergence_ms"] for e in es],
               "worst_outage_ms": [e["worst_outage_ms"] for e in es],
               "restore_ms": [e["restore"]["ms"] for e in es],
               "duration_ms": [e["duration_ms"] for e in es],
               "status": [e["status"] for e in es]}
        table[name] = row
        print(f"{name:<34} {med(row['convergence_ms']):>7.0f} ms {med(row['worst_outage_ms']):>10.0f} ms "
              f"{med(row['restore_ms']):>6.0f} ms {med(row['duration_ms']) / 1000:>6.1f} s  "
              f"{'/'.join(sorted(set(row['status'])))}")
    total = [run["duration_ms"] for run in runs]
    conv = [e["convergence_ms"] for run in runs for e in run["elements"]]
    print(f"total: {med(total) / 1000:.1f} s (runs: {', '.join(f'{t / 1000:.1f}' for t in total)}); "
          f"convergence over all elements and runs: median {med(conv):.0f} ms, max {max(conv):.0f} ms")
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    with open(a.out, "w") as f:
        json.dump({"total_ms": total, "elements": table}, f, indent=1)
    print(f"written: {a.out}")


if __name__ == "__main__":
    main()
