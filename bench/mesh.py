#!/usr/bin/env python3
"""The loopback mesh on one running lab: `twin validate --only reachability`, timed.

Brings a fabric up (by default the 512-node 3-tier one: `twin gen clos --super-spines 16
--pods 16 --spines 4 --leaves 27`, which takes 9-14 min here) or uses a running lab (--lab),
then validates the loopback mesh --runs times. With --twin-b PATH (e.g. the previous commit's
build) the runs alternate between this checkout's twin and that one on the same lab, so both
see the same machine and the same fabric load. Per run it prints the echoes sent (the tests of
`loopback-mesh`: one probe each, whose second echo leaves only if the first is unanswered after
750 ms, which on a passing mesh is none), the probing time (the family's "time to pass"), the command's wall time,
twin's own CPU (user + system, most of it the kernel forwarding each echo in the sending
thread's softirq) and echoes per second of probing; then the medians.
Needs root. Takes the lab it brought up down on any exit, Ctrl-C included.
Usage: sudo bench/mesh.py [--runs N] [--twin-b PATH] [--lab NAME | --fabric ARGS]
"""
import argparse
import os
import re
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TWIN = os.path.join(ROOT, "build", "twin")
FABRIC_512 = "--super-spines 16 --pods 16 --spines 4 --leaves 27"
MESH = re.compile(r"reachability 0 loopback-mesh\s+(\d+)/(\d+) \(time to pass ([\d.]+) s\)")

owned = []


def cleanup():
    for lab in list(owned):
        subprocess.run([TWIN, "down", "--lab", lab], capture_output=True)
        owned.remove(lab)


def on_signal(signum, _frame):
    cleanup()
    sys.exit(130)


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def one_run(twin, lab):
    cpu0, t0 = children_cpu(), time.monotonic()
    p = subprocess.run([twin, "validate", "--lab", lab, "--only", "reachability"],
                       capture_output=True, text=True)
    wall, cpu = time.monotonic() - t0, children_cpu() - cpu0
    m = MESH.search(p.stdout)
    if p.returncode != 0 or not m:
        sys.exit(f"bench: {twin} validate exited {p.returncode}:\n{p.stdout[-1500:]}"
                 f"\n{p.stderr[-1500:]}")
    passed, echoes, probing = int(m.group(1)), int(m.group(2)), float(m.group(3))
    if passed != echoes:
        sys.exit(f"bench: the mesh did not pass: {passed}/{echoes}")
    return {"echoes": echoes, "probing_s": probing, "command_s": wall, "cpu_s": cpu,
            "echoes_per_s": echoes / max(probing, 0.05)}  # "time to pass" has 0.1 s steps


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=4)
    ap.add_argument("--twin-b", help="a second twin binary measured alternately")
    ap.add_argument("--lab", help="a running lab to validate instead of bringing one up")
    ap.add_argument("--fabric", default=FABRIC_512, help="`twin gen clos` arguments")
    a = ap.parse_args()
    if a.runs < 1:
        sys.exit("bench: --runs must be at least 1")
    if os.geteuid() != 0:
        sys.exit("bench: needs root (twin creates network namespaces)")
    if not os.access(TWIN, os.X_OK):
        subprocess.run(["bash", os.path.join(ROOT, "tools", "build.sh")], check=True)
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    bins = [("A", TWIN)] + ([("B", os.path.abspath(a.twin_b))] if a.twin_b else [])
    lab = a.lab
    res = {k: [] for k, _ in bins}
    try:
        if not lab:
            lab = f"mesh{os.getpid()}"
            with tempfile.TemporaryDirectory(prefix="twin-mesh-") as tmp:
                topo = os.path.join(tmp, "fabric.yaml")
                subprocess.run([TWIN, "gen", "clos", *a.fabric.split(), "-o", topo], check=True,
                               capture_output=True)
                owned.append(lab)
                t0 = time.monotonic()
                print(f"bench: bringing up {lab} ({a.fabric})", file=sys.stderr, flush=True)
                p = subprocess.run([TWIN, "up", "--name", lab, "--timeout", "1800", topo],
                                   capture_output=True, text=True)
                if p.returncode != 0:
                    sys.exit(f"bench: up exited {p.returncode}:\n{p.stderr[-2000:]}")
                print(f"bench: up in {time.monotonic() - t0:.1f} s", file=sys.stderr, flush=True)
        # The first validation after `up` may still wait for the last routes: not counted.
        subprocess.run([TWIN, "validate", "--lab", lab, "--only", "reachability"],
                       capture_output=True)
        for i in range(a.runs):
            for k, b in (bins if i % 2 == 0 else bins[::-1]):
                r = one_run(b, lab)
                res[k].append(r)
                print(f"bench: {k} run {i + 1}: {r['echoes']} echoes, probing {r['probing_s']:.1f}"
                      f" s, command {r['command_s']:.1f} s, twin CPU {r['cpu_s']:.1f} s, "
                      f"{r['echoes_per_s']:.0f} echoes/s", file=sys.stderr, flush=True)
    finally:
        cleanup()
        # The runs that finished, also when a later one failed or was interrupted.
        for k, b in bins:
            if not res[k]:
                continue
            print(f"{k} = {b}")
            for m in ("echoes", "probing_s", "command_s", "cpu_s", "echoes_per_s"):
                v = [r[m] for r in res[k]]
                print(f"  {m:14s} median {statistics.median(v):10.1f}   runs: "
                      + ", ".join(f"{x:.1f}" for x in v))


if __name__ == "__main__":
    main()
