#!/usr/bin/env python3
"""Scale benchmark: bring-up, validation and teardown of generated Clos fabrics with the real CLI.

For each fabric it generates a topology (`twin gen clos`), then per run:
  plan      `twin plan --json FILE` (load + plan, no kernel work)
  up        `twin up --json`: namespaces + links (wiring), daemons started, every BGP session
            Established (the phases `up` itself reports)
  validate  `twin validate` right after `up` (bgp, mtu, reachability, routes; retried until
            passing): `up` start -> passing validate is the headline figure; "FIB complete" is
            when the routes family first passed
  validate (settled)  `twin validate --only bgp,mtu,reachability` once more: the cost of a
            validation on a converged lab, full loopback mesh, both address families
  memory    PSS of every FRR daemon (/proc/PID/smaps_rollup), summed per node; the lab cgroup's
            memory.peak; process and open file-descriptor counts of the lab's cgroup
  down      `twin down`
CPU seconds: the lab cgroup's cpu.stat (every FRR daemon, their start-up included) and twin's
own (children rusage), per phase.
Bound: the lab cgroup's CPU-seconds at the end of `up` divided by the CPUs -- no bring-up can
finish sooner on this machine, whatever twin does around the daemons; "x bound" is up -> passing
validate divided by it.
FIB entries: nodes x advertised prefixes, what the daemons must learn and install; FRR's CPU per
entry shows whether the bound itself grows with them (it grows with nodes squared in a fabric
where every node reaches every loopback).
Gap: where the core-seconds of up -> passing validate beyond the bound went (CPU-seconds of all
cores): twin and its children, the daemons during the first validation, the rest of the machine
(kernel threads, softirq work no cgroup is charged for), and idle cores -- idle split by phase
(before the daemons start: load, plan, wiring; while they start; convergence; the validation).
Side by side: --twin-b PATH runs a second twin binary (e.g. the previous commit's build)
alternately with this checkout's on the same fabrics, in the same run; --family 4 strips the
IPv6 loopbacks `gen clos` writes (IPv4-only fabric), --family both measures each.

Prints a table (median of the runs) and writes every run and the medians as JSON.
Needs root (twin does). Cleans up its lab on any exit, Ctrl-C included.
Usage: sudo bench/scale.py [--runs N] [--fabrics 2x4,4x16,8x48,128,256 (512 on request)] [--out FILE]
                           [--family dual|4|both] [--twin-b PATH]
"""
import argparse
import bisect
import datetime
import json
import os
import platform
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TWIN = os.path.join(ROOT, "build", "twin")

# name -> `twin gen clos` arguments. 128 and 256 are 3-tier (super-spines) so that no switch
# needs more ports than a real one: 128 = 8 super-spines + 4 pods x (4 spines + 26 leaves),
# 256 = 8 super-spines + 8 pods x (4 spines + 27 leaves).
FABRICS = {
    "2x4": ["--spines", "2", "--leaves", "4"],
    "4x16": ["--spines", "4", "--leaves", "16"],
    "8x48": ["--spines", "8", "--leaves", "48"],
    "128": ["--super-spines", "8", "--pods", "4", "--spines", "4", "--leaves", "26"],
    "256": ["--super-spines", "8", "--pods", "8", "--spines", "4", "--leaves", "27"],
    # 16 super-spines + 16 pods x (4 spines + 27 leaves): 512 nodes, 2,752 links.
    "512": ["--super-spines", "16", "--pods", "16", "--spines", "4", "--leaves", "27"],
}

current_lab = None
current_proc = None  # the twin command running now


def die(msg, code=3):
    print(f"bench: {msg}", file=sys.stderr)
    sys.exit(code)


def cleanup():
    global current_lab
    if current_lab:
        subprocess.run([TWIN, "down", "--lab", current_lab], capture_output=True)
        current_lab = None


def on_signal(signum, _frame):
    print(f"bench: interrupted (signal {signum}); removing lab {current_lab}", file=sys.stderr)
    # Stop the running twin command first: `up` tears its lab down on SIGINT, and `down` would
    # otherwise wait for the lab lock `up` holds.
    if current_proc and current_proc.poll() is None:
        current_proc.send_signal(signal.SIGINT)
        try:
            current_proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            current_proc.kill()
    cleanup()
    sys.exit(130)


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run(argv, check=True):
    """Runs a twin command; returns (seconds, twin CPU seconds, stdout)."""
    global current_proc
    c0, t0 = children_cpu(), time.monotonic()
    current_proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = current_proc.communicate()
    code, current_proc = current_proc.returncode, None
    t, c = time.monotonic() - t0, children_cpu() - c0
    if check and code != 0:
        die(f"`{' '.join(argv)}` exited {code}:\n{err[-3000:]}{out[-2000:]}")
    return t, c, out


def cgroup_root():
    with open("/proc/self/mountinfo") as f:
        for line in f:
            pre, _, post = line.partition(" - ")
            if post.split()[0] == "cgroup2":
                return pre.split()[4]
    die("no cgroup v2 mount")


def lab_cgroup(lab):
    return os.path.join(cgroup_root(), "twin", lab)


def cgroup_cpu(lab):
    return cgroup_usage(lab_cgroup(lab))


def cgroup_usage(path):
    """CPU-seconds every process of the cgroup at `path` has spent (cpu.stat's usage_usec)."""
    try:
        with open(os.path.join(path, "cpu.stat")) as f:
            for line in f:
                k, v = line.split()
                if k == "usage_usec":
                    return int(v) / 1e6
    except OSError:
        pass
    return 0.0


def read_int(path):
    try:
        with open(path) as f:
            return int(f.read().split()[0])
    except (OSError, ValueError):
        return 0


def memory_and_fds(lab):
    """PSS per FRR node (MiB), process and fd counts of the lab's cgroup."""
    run_dir = f"/run/twin/{lab}"
    per_node = {}
    for node in sorted(os.listdir(run_dir)):
        d = os.path.join(run_dir, node)
        if not os.path.isdir(d):
            continue
        kb = 0
        for f in os.listdir(d):
            if not f.endswith(".pid"):
                continue
            pid = open(os.path.join(d, f)).read().strip()
            try:
                with open(f"/proc/{pid}/smaps_rollup") as s:
                    for line in s:
                        if line.startswith("Pss:"):
                            kb += int(line.split()[1])
            except OSError:
                pass
        if kb:
            per_node[node] = kb / 1024
    procs = fds = 0
    with open(os.path.join(lab_cgroup(lab), "cgroup.procs")) as f:
        for pid in f.read().split():
            procs += 1
            try:
                fds += len(os.listdir(f"/proc/{pid}/fd"))
            except OSError:
                pass
    return per_node, procs, fds


def ipv4_only(src, dst):
    """The generated topology without its IPv6 loopbacks: an IPv4-only fabric (unnumbered
    sessions still run over IPv6 link-local addresses, as RFC 5549 has them)."""
    import re
    text = open(src).read()
    text = re.sub(r'loopback: \[([0-9./]+), "[0-9a-f:/]+"\]', r"loopback: \1", text)
    with open(dst, "w") as f:
        f.write(text)


class MachineCpu:
    """Samples the machine's idle CPU time (/proc/stat's first line: idle + iowait) every 50 ms
    from a thread, so that the idle core-seconds of any interval of a run can be read afterwards,
    interpolated linearly between the samples around each end."""

    def __init__(self):
        self.samples = []  # (monotonic s, idle core-s)
        self.hz = os.sysconf("SC_CLK_TCK")
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def read(self):
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        return time.monotonic(), (v[3] + v[4]) / self.hz

    def _run(self):
        while not self.stop.is_set():
            self.samples.append(self.read())
            self.stop.wait(0.05)

    def start(self):
        self.samples.append(self.read())
        self.thread.start()
        return self

    def finish(self):
        self.stop.set()
        self.thread.join()
        self.samples.append(self.read())

    def idle_at(self, t):
        """Idle core-seconds since the first sample, at monotonic time t (clamped to the run)."""
        s = self.samples
        if t <= s[0][0]:
            return s[0][1]
        i = bisect.bisect_left(s, t, key=lambda x: x[0])
        if i >= len(s):
            return s[-1][1]
        (ta, ia), (tb, ib) = s[i - 1], s[i]
        return ia + (ib - ia) * (t - ta) / (tb - ta) if tb > ta else ib

    def idle(self, t_from, t_to):
        return self.idle_at(t_to) - self.idle_at(t_from)


def one_run(fabric, topo, i, twin=None):
    global current_lab
    TWIN = twin or globals()["TWIN"]
    lab = f"bench{os.getpid()}-{i}"
    r = {"run": i + 1}
    t, c, out = run([TWIN, "plan", "--json", "--name", lab, topo])
    r["plan_s"] = t
    # Every node holds every advertised prefix (its own as connected): the FIB entries the
    # fabric's daemons must learn, select and install, nodes x prefixes.
    plan = json.loads(out)
    r["fib_entries"] = len(plan["nodes"]) * len(plan["prefixes"])
    current_lab = lab
    cpu = MachineCpu().start()
    t0 = time.monotonic()
    c0 = children_cpu()
    # Large fabrics take longer than up's default 300 s (512 nodes: ~15 min on 2 cores).
    t, c, out = run([TWIN, "up", "--json", "--name", lab, "--timeout", "3600", topo])
    t_up_end = time.monotonic()
    c_up = c
    up = json.loads(out)
    if not up.get("converged"):
        die(f"{fabric}: BGP did not converge: {up.get('not_established', [])[:5]}")
    r.update(nodes=up["nodes"], links=up["links"], daemons=up["daemons"], cpus=os.cpu_count(),
             sessions=up["sessions_expected"], up_s=t, wiring_s=up["wiring_ms"] / 1000,
             daemons_s=up["daemons_ms"] / 1000, established_s=up["total_ms"] / 1000,
             up_cpu_twin_s=c, up_cpu_lab_s=cgroup_cpu(lab))
    cpu_lab_up = r["up_cpu_lab_s"]
    r["bound_s"] = cpu_lab_up / os.cpu_count()
    r["frr_ms_per_fib_entry"] = 1000 * cpu_lab_up / r["fib_entries"]
    t, c, out = run([TWIN, "validate", "--json", "--lab", lab, "--converge-timeout", "60"])
    v = json.loads(out)
    if v["verdict"] != "pass":
        die(f"{fabric}: validation after up did not pass: {v['summary']}")
    t_end = time.monotonic()
    cpu.finish()
    r["up_to_passing_validate_s"] = t_end - t0
    r["x_bound"] = r["up_to_passing_validate_s"] / r["bound_s"] if r["bound_s"] else 0
    # The gap to the bound, in core-seconds: every core-second of up -> passing validate went to
    # the lab's daemons until the end of up (the bound), to them during the validation, to twin
    # (its children included), to the rest of the machine (kernel threads, softirq work not
    # charged to a cgroup, steal, this script), or was idle. x bound = 1 + (all but the first) /
    # (bound x CPUs). Idle is split by phase, up's own phase durations counted back from its
    # exit: what up does between two phases (saving state, checking new ports' link-local
    # routes) is counted in the earlier one.
    conv_start = t_up_end - up["converge_ms"] / 1000
    daemons_start = conv_start - up["daemons_ms"] / 1000 - up.get("vms_ms", 0) / 1000
    total_cs = r["up_to_passing_validate_s"] * os.cpu_count()
    r["gap_lab_validate_cs"] = cgroup_cpu(lab) - cpu_lab_up
    r["gap_twin_cs"] = c_up + c
    r["idle_cs"] = cpu.idle(t0, t_end)
    r["gap_other_cs"] = (total_cs - cpu_lab_up - r["gap_lab_validate_cs"] - r["gap_twin_cs"]
                         - r["idle_cs"])
    r["idle_before_daemons_cs"] = cpu.idle(t0, daemons_start)
    r["idle_daemons_cs"] = cpu.idle(daemons_start, conv_start)
    r["idle_convergence_cs"] = cpu.idle(conv_start, t_up_end)
    r["idle_validate_cs"] = cpu.idle(t_up_end, t_end)
    routes_pass = max((x.get("time_to_pass_ms", 0) for x in v["results"]
                       if x["validator"] == "routes"), default=0)
    r["fib_complete_s"] = r["up_s"] + routes_pass / 1000
    r["first_validate_s"] = t
    t, c, out = run([TWIN, "validate", "--json", "--lab", lab, "--only", "bgp,mtu,reachability"])
    v = json.loads(out)
    if v["verdict"] != "pass":
        die(f"{fabric}: settled validation did not pass: {v['summary']}")
    by = {}
    for x in v["results"]:
        by[x["validator"]] = by.get(x["validator"], 0) + 1
    r.update(validate_s=t, validate_cpu_twin_s=c, validate_tests=v["summary"]["total"],
             reachability_probes=by.get("reachability", 0),
             validate_cpu_lab_s=cgroup_cpu(lab) - cpu_lab_up)
    pss, procs, fds = memory_and_fds(lab)
    leaves = [v for k, v in pss.items() if k.startswith("leaf") or "-leaf" in k]
    r.update(pss_total_mib=sum(pss.values()), pss_max_node_mib=max(pss.values()),
             pss_mean_node_mib=statistics.mean(pss.values()),
             pss_mean_leaf_mib=statistics.mean(leaves) if leaves else 0,
             cgroup_memory_peak_mib=read_int(os.path.join(lab_cgroup(lab), "memory.peak")) / 2**20,
             processes=procs, fds=fds, cpu_total_lab_s=cgroup_cpu(lab),
             cpu_total_twin_s=children_cpu() - c0)
    t, c, _ = run([TWIN, "down", "--lab", lab])
    current_lab = None
    r["down_s"] = t
    if os.path.exists(f"/run/twin/{lab}"):
        die(f"{fabric}: /run/twin/{lab} still exists after down")
    return r


COLUMNS = [
    ("nodes", "nodes", "{:.0f}"), ("links", "links", "{:.0f}"),
    ("plan_s", "plan s", "{:.2f}"), ("wiring_s", "wiring s", "{:.2f}"),
    ("daemons_s", "daemons s", "{:.2f}"), ("established_s", "BGP up s", "{:.2f}"),
    ("fib_complete_s", "FIB s", "{:.2f}"), ("up_to_passing_validate_s", "up->valid s", "{:.2f}"),
    ("validate_s", "validate s", "{:.2f}"), ("reachability_probes", "pings", "{:.0f}"),
    ("down_s", "down s", "{:.2f}"), ("up_cpu_lab_s", "CPU FRR s", "{:.1f}"),
    ("bound_s", "bound s", "{:.2f}"), ("x_bound", "x bound", "{:.2f}"),
    ("fib_entries", "FIB entries", "{:.0f}"),
    ("frr_ms_per_fib_entry", "FRR ms/entry", "{:.2f}"),
    ("cpu_total_twin_s", "CPU twin s", "{:.1f}"),
    # beyond the bound, core-seconds: where they went, and idle cores by phase
    ("gap_twin_cs", "+twin cs", "{:.2f}"), ("gap_lab_validate_cs", "+FRR in valid. cs", "{:.2f}"),
    ("gap_other_cs", "+other cs", "{:.2f}"), ("idle_cs", "+idle cs", "{:.2f}"),
    ("idle_before_daemons_cs", "idle: wiring", "{:.2f}"),
    ("idle_daemons_cs", "idle: daemons", "{:.2f}"),
    ("idle_convergence_cs", "idle: conv.", "{:.2f}"),
    ("idle_validate_cs", "idle: valid.", "{:.2f}"), ("pss_mean_leaf_mib", "PSS/leaf MiB", "{:.1f}"),
    ("pss_max_node_mib", "PSS max MiB", "{:.1f}"), ("pss_total_mib", "PSS total MiB", "{:.0f}"),
    ("processes", "procs", "{:.0f}"), ("fds", "fds", "{:.0f}"),
]


def save(path, results):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as fo:
        json.dump(results, fo, indent=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    # 512 only when asked: ~15 minutes of bring-up on 2 cores.
    ap.add_argument("--fabrics", default=",".join(f for f in FABRICS if f != "512"))
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "scale.json"))
    ap.add_argument("--family", choices=["dual", "4", "both"], default="dual",
                    help="dual: gen clos as it is (IPv4 + IPv6 loopbacks); 4: IPv4 loopbacks only")
    ap.add_argument("--twin-b", help="a second twin binary run alternately on the same fabrics")
    a = ap.parse_args()
    if a.twin_b and not os.access(a.twin_b, os.X_OK):
        die(f"--twin-b {a.twin_b}: not an executable", 2)
    binaries = [("", TWIN)] + ([("@B", os.path.abspath(a.twin_b))] if a.twin_b else [])
    families = ["dual", "4"] if a.family == "both" else [a.family]
    fabrics = a.fabrics.split(",")
    for f in fabrics:
        if f not in FABRICS:
            die(f"unknown fabric '{f}'; choose from {', '.join(FABRICS)}", 2)
    if os.geteuid() != 0:
        die("needs root (twin creates network namespaces): sudo bench/scale.py")
    if not os.access(TWIN, os.X_OK):
        subprocess.run(["bash", os.path.join(ROOT, "tools", "build.sh")], check=True)
    mem = {k: int(v.split()[0]) for k, v in (l.split(":", 1) for l in open("/proc/meminfo"))}
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    machine = {
        "cpus": os.cpu_count(), "memory_gib": round(mem["MemTotal"] / 2**20, 1),
        "kernel": platform.release(), "cpu_model": next(
            (l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?"),
        "frr": subprocess.run(["/usr/lib/frr/zebra", "--version"], capture_output=True,
                              text=True).stdout.split("\n")[0],
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }
    results = {"machine": machine, "runs_per_fabric": a.runs, "fabrics": {},
               "binaries": {("A" + k if k else "A"): b for k, b in binaries}}
    tmp = tempfile.mkdtemp(prefix="twin-bench-")
    try:
        keys = []
        for f, fam in ((f, fam) for f in fabrics for fam in families):
            topo = os.path.join(tmp, f"clos-{f}.yaml")
            run([TWIN, "gen", "clos", *FABRICS[f], "--name", "bench", "-o", topo])
            if fam == "4":
                ipv4_only(topo, topo)
            nodes = len(json.loads(run([TWIN, "plan", "--json", topo])[2])["nodes"])
            # ~22 MiB PSS per node (up to ~50 for a wide spine), plus twin and the kernel's share.
            need_mib = nodes * 32 + 1024
            avail_mib = int(open("/proc/meminfo").read().split("MemAvailable:")[1].split()[0]) // 1024
            if avail_mib < need_mib:
                die(f"{f}: {nodes} nodes need about {need_mib} MiB free; {avail_mib} MiB available")
            base = f + ("-v4" if fam == "4" else "")
            runs = {k: [] for k, _ in binaries}
            for i in range(a.runs):
                for k, binary in binaries:  # alternately: both see the same machine state
                    print(f"bench: {base}{k} run {i + 1}/{a.runs} ...", file=sys.stderr, flush=True)
                    runs[k].append(one_run(base, topo, i, binary))
                    r = runs[k][-1]
                    print(f"bench:   up->passing validate {r['up_to_passing_validate_s']:.2f} s "
                          f"({r['x_bound']:.2f}x the bound {r['bound_s']:.2f} s), "
                          f"validate {r['validate_s']:.2f} s, down {r['down_s']:.2f} s",
                          file=sys.stderr, flush=True)
                    print(f"bench:   beyond the bound (core-s): twin {r['gap_twin_cs']:.2f}, FRR "
                          f"during validation {r['gap_lab_validate_cs']:.2f}, other "
                          f"{r['gap_other_cs']:.2f}, idle {r['idle_cs']:.2f} (before daemons "
                          f"{r['idle_before_daemons_cs']:.2f}, daemons {r['idle_daemons_cs']:.2f}, "
                          f"convergence {r['idle_convergence_cs']:.2f}, validation "
                          f"{r['idle_validate_cs']:.2f})", file=sys.stderr, flush=True)
            for k, _ in binaries:
                med = {x: statistics.median(r[x] for r in runs[k]) for x in runs[k][0] if x != "run"}
                results["fabrics"][base + k] = {"runs": runs[k], "median": med}
                keys.append(base + k)
            save(a.out, results)  # after each fabric: an interrupted run keeps what it measured
    finally:
        cleanup()
        for x in os.listdir(tmp):
            os.unlink(os.path.join(tmp, x))
        os.rmdir(tmp)
    fabrics = [f for f in keys if f in results["fabrics"]]
    if a.twin_b:
        print(f"@B: {a.twin_b}")
    print(f"twin scale benchmark: median of {a.runs} runs; {machine['cpus']} CPUs "
          f"({machine['cpu_model']}), {machine['memory_gib']} GiB, kernel {machine['kernel']}, "
          f"{machine['frr']}")
    head = ["fabric"] + [c[1] for c in COLUMNS]
    rows = [[f] + [c[2].format(results["fabrics"][f]["median"][c[0]]) for c in COLUMNS]
            for f in fabrics]
    widths = [max(len(x) for x in col) for col in zip(head, *rows)]
    for row in [head] + rows:
        print("  ".join(x.rjust(w) for x, w in zip(row, widths)))
    print(f"(JSON: {a.out})")


if __name__ == "__main__":
    try:
        main()
    finally:
        cleanup()
