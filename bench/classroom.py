#!/usr/bin/env python3
"""A classroom on one machine: how many trainees, each with their own clos-2x4 exercise
(`twin exercise start wrong-asn --name tN`), this machine holds with `twin exercise check`
still answering in under 2 s.

For each class size N (cumulative: the labs of the smaller classes stay up):
  start      time of each new trainee's `exercise start` (lab built, reference kept, fault in)
  memory     per lab: the PSS of its processes (smaps_rollup of the pids in its cgroup), and
             the drop of MemAvailable since before the first lab (which also counts the kernel's
             namespaces, veths and routes; noisy: page cache moves it)
  check      every trainee checks in turn, while the other N-1 labs run (median, max), and
             then all N at once (the worst moment of a class: median, max)
The largest N whose checks in turn stay under 2 s is the figure docs/training.md states.

Needs root. Stops every exercise it started (and their labs) on any exit, Ctrl-C included.
Its records go to a scratch TWIN_TRAINING_DIR, not the machine's.
Usage: sudo bench/classroom.py [--sizes 1,4,8,16,24] [--json]
"""
import argparse
import concurrent.futures
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
ENV = dict(os.environ)
ENV["TWIN_TRAINING_DIR"] = tempfile.mkdtemp(prefix="twin-classroom-")
ENV["TWIN_HISTORY_DIR"] = tempfile.mkdtemp(prefix="twin-classroom-history-")
started = []


def twin(*args, check=True):
    r = subprocess.run([TWIN, *args], env=ENV, capture_output=True, text=True)
    if check and r.returncode not in (0, 1):
        raise RuntimeError(f"twin {' '.join(args)}: exit {r.returncode}: {r.stderr[-500:]}")
    return r


def cleanup():
    for lab in started:
        twin("exercise", "stop", "--lab", lab, check=False)
    started.clear()


def mem_available_mib():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) / 1024
    return 0


def lab_pss_mib(lab):
    """PSS of the processes in the lab's cgroup (cgroup v2, wherever it is mounted)."""
    total = 0
    for root in ("/sys/fs/cgroup/unified", "/sys/fs/cgroup"):
        procs = os.path.join(root, "twin", lab, "cgroup.procs")
        if not os.path.exists(procs):
            continue
        with open(procs) as f:
            pids = f.read().split()
        for pid in pids:
            try:
                with open(f"/proc/{pid}/smaps_rollup") as f:
                    for line in f:
                        if line.startswith("Pss:"):
                            total += int(line.split()[1])
            except OSError:
                pass
        break
    return total / 1024


def timed_check(lab):
    t = time.monotonic()
    r = twin("exercise", "check", "--lab", lab, "--json")
    wall = time.monotonic() - t
    j = json.loads(r.stdout)
    if j.get("solved"):
        raise RuntimeError(f"{lab}: solved while the fault is in")
    return wall


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1,4,8,16,24")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("needs root")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(130))
    sizes = [int(s) for s in a.sizes.split(",")]
    base_mem = mem_available_mib()
    rows = []
    try:
        for n in sizes:
            starts = []
            while len(started) < n:
                lab = f"t{len(started) + 1}"
                t = time.monotonic()
                r = twin("exercise", "start", "wrong-asn", "--name", lab, "--json")
                started.append(lab)
                if r.returncode != 0:
                    raise RuntimeError(f"start {lab}: {r.stderr[-500:]}")
                starts.append(time.monotonic() - t)
            mem = (base_mem - mem_available_mib()) / n
            pss = statistics.mean(lab_pss_mib(lab) for lab in started)
            in_turn = [timed_check(lab) for lab in started]
            with concurrent.futures.ThreadPoolExecutor(max_workers=n) as ex:
                at_once = list(ex.map(timed_check, started))
            row = {
                "trainees": n,
                "start_s_median": round(statistics.median(starts), 2) if starts else None,
                "mem_mib_per_lab": round(mem, 1),
                "pss_mib_per_lab": round(pss, 1),
                "check_in_turn_s_median": round(statistics.median(in_turn), 2),
                "check_in_turn_s_max": round(max(in_turn), 2),
                "check_all_at_once_s_median": round(statistics.median(at_once), 2),
                "check_all_at_once_s_max": round(max(at_once), 2),
            }
            rows.append(row)
            if not a.json:
                print(f"{n:3d} trainees: start {row['start_s_median']} s (median of the new ones), "
                      f"{row['pss_mib_per_lab']} MiB PSS per lab "
                      f"({row['mem_mib_per_lab']} MiB MemAvailable drop); check in turn "
                      f"{row['check_in_turn_s_median']} s median, {row['check_in_turn_s_max']} s max; "
                      f"all at once {row['check_all_at_once_s_median']} s median, "
                      f"{row['check_all_at_once_s_max']} s max", flush=True)
    finally:
        cleanup()
    holds = [r["trainees"] for r in rows if r["check_in_turn_s_max"] < 2.0]
    out = {"rows": rows, "largest_class_with_checks_under_2s": max(holds) if holds else 0,
           "cores": os.cpu_count(), "mem_total_mib": round(os.sysconf("SC_PHYS_PAGES") *
                                                            os.sysconf("SC_PAGE_SIZE") / 2**20)}
    if a.json:
        print(json.dumps(out, indent=2))
    else:
        print(f"largest class with every check (in turn) under 2 s: "
              f"{out['largest_class_with_checks_under_2s']} trainees "
              f"({out['cores']} cores, {out['mem_total_mib']} MiB)")


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        cleanup()
        sys.exit(130)
