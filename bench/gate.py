#!/usr/bin/env python3
"""The Day-N gate's own costs on clos-2x4, measured with the real CLI on one lab:

  probe stream  a change that only waits 5 s, applied with --json at several probe intervals:
                the stream thread's CPU (% of one core), the longest gap between two rounds of
                echoes (the resolution achieved), and echoes lost on a quiet fabric (false
                outages); 32 flows by default.
  restart check the same FRR change applied with and without --restart-check, on 1 and on 4
                nodes: the time the check adds per change (the touched nodes restart in parallel).

Not a test: nothing fails on a number. Usage: sudo bench/gate.py [--runs N] [--out FILE]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TWIN = os.path.join(ROOT, "build", "twin")
TOPOLOGY = os.path.join(ROOT, "topologies", "clos-2x4.yaml")


def twin(*args, check=True):
    r = subprocess.run([TWIN, *args], capture_output=True, text=True)
    if check and r.returncode not in (0, 1):
        sys.exit(f"bench: twin {' '.join(args)} exited {r.returncode}: {r.stderr.strip()}")
    return r


def apply_json(lab, change, *flags):
    r = twin("apply", "--lab", lab, "--json", "--revert", change, *flags)
    return json.loads(r.stdout)


def write(dir_, name, text):
    path = os.path.join(dir_, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--intervals", default="1ms,5ms,10ms,20ms")
    ap.add_argument("--flows", type=int, default=32)
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "gate.json"))
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("bench: needs root")
    if not os.access(TWIN, os.X_OK):
        subprocess.run(["bash", os.path.join(ROOT, "tools", "build.sh")], check=True)
    lab = f"bench-gate-{os.getpid()}"
    tmp = tempfile.mkdtemp(prefix="twin-bench-gate-")
    quiet = write(tmp, "quiet.yaml", "version: 1\nname: quiet\nsteps:\n"
                  "  - {name: five seconds, wait: {until: duration, duration: 5s}}\n")
    leaves = ["leaf1", "leaf2", "leaf3", "leaf4"]
    asn = {"leaf1": 65101, "leaf2": 65102, "leaf3": 65103, "leaf4": 65104}

    def frr_change(nodes):
        steps = "".join(
            f"  - name: timers on {n}\n    frr:\n      node: {n}\n      add: |\n"
            f"        router bgp {asn[n]}\n         bgp log-neighbor-changes\n        exit\n"
            for n in nodes)
        return write(tmp, f"frr-{len(nodes)}.yaml", f"version: 1\nname: frr-{len(nodes)}\nsteps:\n{steps}")

    one, four = frr_change(leaves[:1]), frr_change(leaves)
    results = {"stream": {}, "restart": {}}
    try:
        r = twin("up", TOPOLOGY, "--name", lab)
        if r.returncode != 0:
            sys.exit(f"bench: up failed: {r.stderr.strip()}")
        for iv in a.intervals.split(","):
            runs = []
            for _ in range(a.runs):
                j = apply_json(lab, quiet, "--probe-interval", iv, "--probe-flows", str(a.flows))
                o = j["outage"]
                runs.append({"cpu_pct": 100.0 * o["cpu_ms"] / max(o["duration_ms"], 1),
                             "max_gap_ms": o["max_send_gap_ms"],
                             "lost": sum(f["lost"] for f in o["flows"]),
                             "sent": sum(f["sent"] for f in o["flows"]),
                             "flows": len(o["flows"])})
            results["stream"][iv] = runs
        for name, change in (("1 node", one), ("4 nodes", four)):
            without, with_ = [], []
            for _ in range(a.runs):
                without.append(apply_json(lab, change, "--no-probe-stream")["duration_ms"])
                j = apply_json(lab, change, "--no-probe-stream", "--restart-check")
                with_.append(j["duration_ms"])
                if not j["restart_check"]["ok"]:
                    print(f"bench: restart check failed: {j['restart_check']['detail']}", file=sys.stderr)
            results["restart"][name] = {"without_ms": without, "with_ms": with_}
    finally:
        twin("down", "--lab", lab, check=False)

    print(f"probe stream on clos-2x4, {a.flows} flows at most, a 5 s quiet change (median of {a.runs}):")
    print(f"{'interval':>9} {'flows':>6} {'CPU % of a core':>16} {'max gap ms':>11} {'lost/sent':>12}")
    for iv, runs in results["stream"].items():
        med = lambda k: statistics.median(r[k] for r in runs)
        print(f"{iv:>9} {runs[0]['flows']:>6} {med('cpu_pct'):>16.1f} {med('max_gap_ms'):>11.1f} "
              f"{int(med('lost')):>5}/{int(med('sent'))}")
    print("restart check (FRR change with --revert, no stream; median):")
    for name, r in results["restart"].items():
        w, wo = statistics.median(r["with_ms"]), statistics.median(r["without_ms"])
        # The touched nodes restart in parallel: the check's cost is per change, not a multiple
        # of the nodes (no per-node figure by division).
        print(f"  {name}: {wo / 1000:.1f} s without, {w / 1000:.1f} s with: +{(w - wo) / 1000:.1f} s")
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    with open(a.out, "w") as f:
        json.dump(results, f, indent=1)
    print(f"written: {a.out}")


if __name__ == "__main__":
    main()
