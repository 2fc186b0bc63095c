#!/usr/bin/env python3
"""The gate's time to a verdict on an OSPF lab on FRR's default timers (hello 10 s, dead 40 s):
topologies/ospf-6, six routers of their own configs, point-to-point and broadcast links.

For each change of scenarios/ospf-6/changes it runs `twin apply --json` on one lab and reports
the time from the command's start to its verdict (the apply report's duration less the
rollback and its proof, which the verdict does not wait for), the whole command's time, and the
verdict. With --twin-b a second build is measured on the same lab in the same run, the two
alternated change by change, so that both meet the same machine load.

  reject    a change an agreement test explains (hello mismatch): target <= 15 s
  approve   a harmless change (bench/changes/ospf-6-stub-cost.yaml: a cost on a stub port, so
            nothing moves; no intent block, so the previous state reads it too): target
            <= dead interval + 15 s; with --restart-check <= twice that

Not a test: nothing fails on a number. Usage:
  sudo bench/ospf_gate.py [--runs N] [--twin-b OTHER/build/twin] [--out FILE]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TWIN = os.path.join(ROOT, "build", "twin")
TOPOLOGY = os.path.join(ROOT, "topologies", "ospf-6", "lab.yaml")
CHANGES = os.path.join(ROOT, "scenarios", "ospf-6", "changes")
STUB_COST = os.path.join(ROOT, "bench", "changes", "ospf-6-stub-cost.yaml")

# What the benchmark applies, and with which options.
CASES = [
    ("reject: hello mismatch", os.path.join(CHANGES, "hello-mismatch.yaml"), []),
    ("reject: authentication on one end", os.path.join(CHANGES, "auth-one-side.yaml"), []),
    ("approve: a cost nothing routes around", STUB_COST, ["--revert"]),
    ("approve + restart check", STUB_COST, ["--revert", "--restart-check"]),
]


def run(twin, *args):
    t = time.monotonic()
    r = subprocess.run([twin, *args], capture_output=True, text=True)
    return r, time.monotonic() - t


def verdict_time(j):
    """Seconds from the start to the verdict: the report's verdict_ms, or for a build without it
    the whole report less what follows the verdict (the rollback's restore and its proof)."""
    if "verdict_ms" in j:
        return j["verdict_ms"] / 1000.0
    total = j.get("duration_ms", 0) / 1000.0
    rb = j.get("rollback") or {}
    return total - (rb.get("duration_ms", 0) / 1000.0) if j.get("rollback_ran") else total


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--twin-b", help="a second build to measure side by side (e.g. the previous state)")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "ospf_gate.json"))
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("bench: needs root")
    if not os.access(TWIN, os.X_OK):
        subprocess.run(["bash", os.path.join(ROOT, "tools", "build.sh")], check=True)
    builds = [("A", TWIN)] + ([("B", a.twin_b)] if a.twin_b else [])
    lab = f"bench-ospf-{os.getpid()}"
    results = {name: {c[0]: [] for c in CASES} for name, _ in builds}
    try:
        r, took = run(TWIN, "up", TOPOLOGY, "--name", lab)
        if r.returncode != 0:
            sys.exit(f"bench: up failed: {r.stderr.strip()}")
        print(f"lab {lab} up in {took:.1f} s", file=sys.stderr)
        for k in range(a.runs):
            for label, change, flags in CASES:
                order = builds if k % 2 == 0 else list(reversed(builds))
                for name, twin in order:
                    r, wall = run(twin, "apply", "--lab", lab, "--json", *flags,
                                  change)
                    try:
                        j = json.loads(r.stdout)
                    except json.JSONDecodeError:
                        sys.exit(f"bench: {name} {change}: no JSON (exit {r.returncode}): {r.stderr[-400:]}")
                    results[name][label].append({"verdict": j.get("verdict"), "exit": r.returncode,
                                                 "to_verdict_s": round(verdict_time(j), 2),
                                                 "wall_s": round(wall, 2),
                                                 "rollback_ok": j.get("rollback_ok")})
                    print(f"{name} {label}: {j.get('verdict')} in {verdict_time(j):.1f} s "
                          f"(command {wall:.1f} s)", file=sys.stderr)
    finally:
        subprocess.run([TWIN, "down", "--lab", lab], capture_output=True)
    print(f"\n{'case':40} " + " ".join(f"{n + ' verdict':>12} {n + ' to verdict':>14} {n + ' command':>12}"
                                        for n, _ in builds))
    for label, _, _ in CASES:
        row = f"{label:40} "
        for name, _ in builds:
            rs = results[name][label]
            row += (f"{rs[-1]['verdict']:>12} {statistics.median(x['to_verdict_s'] for x in rs):>13.1f}s "
                    f"{statistics.median(x['wall_s'] for x in rs):>11.1f}s ")
        print(row)
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    with open(a.out, "w") as f:
        json.dump({"builds": {n: p for n, p in builds}, "results": results}, f, indent=1)
    print(f"\nwritten {a.out}")


if __name__ == "__main__":
    main()
