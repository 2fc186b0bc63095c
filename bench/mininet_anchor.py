#!/usr/bin/python3
"""The anchor: the same FRR fabric brought up by Mininet, against twin, in one run.

Mininet (Debian's `mininet` package, installed for this benchmark only: `apt-get install
mininet`) builds the fabric `twin gen clos` writes -- the same nodes, links, MTUs and the very
frr.conf twin generates for each node (split into zebra's and bgpd's share, as twin does) --
as Mininet hosts wired with veth links, then starts zebra and bgpd in each with K launch
workers. Its bring-up ends when every node's FIB holds every other node's loopbacks (both
families when the fabric has IPv6 loopbacks) and the first leaf answers a ping to every IPv4
loopback. Mininet validates nothing beyond that. twin's figure is `twin up` to a passing
`twin validate` (sessions, routes with ECMP width, MTU, every loopback pair in both families),
so the comparison is generous to Mininet. Runs alternate between the two.

Beside the times it prints the CPU-seconds the FRR daemons spent to get there on each side (twin:
the lab cgroup's cpu.stat at the end of `up`; Mininet: utime + stime of every zebra and bgpd from
a cgroup of the benchmark's own, read the same way), so a difference in time can be told apart from a
difference in the work FRR was asked to do.

Needs root. Usage: sudo bench/mininet_anchor.py [--fabric 8x48] [--runs N] [--workers K] [--out F]
"""
import argparse
import concurrent.futures
import json
import os
import pwd
import shutil
import signal
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from scale import cgroup_cpu, cgroup_root, cgroup_usage  # noqa: E402  (read as scale.py reads a lab's)

TWIN = os.path.join(ROOT, "build", "twin")
WORK = "/tmp/twin-mininet-anchor"
# Mininet's daemons run in a cgroup of their own so that their CPU is counted as twin's lab
# cgroup counts it, the start-up before each daemon forks into the background included.
CGROUP = "twin-mininet-anchor"


def split_config(text):
    """zebra's and bgpd's shares of a generated frr.conf: the `router bgp` block to bgpd, the
    rest to zebra; both keep the profile and hostname lines."""
    zebra, bgpd, in_bgp = [], [], False
    for line in text.splitlines():
        if line.startswith("frr defaults") or line.startswith("hostname"):
            zebra.append(line)
            bgpd.append(line)
        elif line.startswith("router bgp"):
            in_bgp = True
            bgpd.append(line)
        elif in_bgp:
            bgpd.append(line)
            if line == "exit":
                in_bgp = False
        else:
            zebra.append(line)
    return "\n".join(zebra) + "\n", "\n".join(bgpd) + "\n"


def stop_daemons():
    """Stops the daemons this benchmark started: the members of its cgroup, which every daemon
    joined before it executed; nothing else."""
    try:
        with open(os.path.join(cgroup_root(), CGROUP, "cgroup.procs")) as f:
            pids = [int(p) for p in f.read().split()]
    except OSError:
        return
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    until = time.monotonic() + 5
    while time.monotonic() < until and any(os.path.exists(f"/proc/{p}") for p in pids):
        time.sleep(0.05)
    try:
        os.rmdir(os.path.join(cgroup_root(), CGROUP))
    except OSError:
        pass


def sh(argv):
    return subprocess.run(argv, capture_output=True, text=True)


def mininet_run(plan, workers):
    from mininet.net import Mininet
    from mininet.log import setLogLevel
    setLogLevel("error")
    frr = pwd.getpwnam("frr")
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    cgroup = os.path.join(cgroup_root(), CGROUP)
    os.makedirs(cgroup, exist_ok=True)
    routers = [n for n in plan["nodes"] if n["kind"] == "frr"]
    t0 = time.monotonic()
    net = Mininet(controller=None, build=False, autoSetMacs=False, autoStaticArp=False)
    hosts = {n["name"]: net.addHost(n["name"], ip=None) for n in routers}
    for l in plan["links"]:
        net.addLink(hosts[l["a_node"]], hosts[l["b_node"]], intfName1=l["a_interface"],
                    intfName2=l["b_interface"])
    net.build()
    try:
        for n in routers:
            h = hosts[n["name"]]
            script = "".join(f"link set dev {i['name']} mtu {i['mtu']} up\n" for i in n["interfaces"])
            h.cmd("sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0 "
                  "net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0; "
                  f"ip link set lo up; printf '{script}' | ip -batch -")
        wired = time.monotonic() - t0

        def start(n):
            d = os.path.join(WORK, n["name"])
            os.makedirs(d)
            z, b = split_config(n["frr_config"])
            for name, text in (("zebra.conf", z), ("bgpd.conf", b)):
                with open(os.path.join(d, name), "w") as f:
                    f.write(text)
            for p in [d] + [os.path.join(d, x) for x in os.listdir(d)]:
                os.chown(p, frr.pw_uid, frr.pw_gid)
            ns = f"--net=/proc/{hosts[n['name']].pid}/ns/net"
            for daemon in ("zebra", "bgpd"):
                r = sh(["sh", "-c", 'echo $$ > "$0"/cgroup.procs && exec "$@"', cgroup,
                        "nsenter", ns, "--", f"/usr/lib/frr/{daemon}", "-d", "-F", "datacenter",
                        "-f", os.path.join(d, daemon + ".conf"), "-i", os.path.join(d, daemon + ".pid"),
                        "-z", os.path.join(d, "zserv.api"), "--vty_socket", d, "-P", "0",
                        "--log", f"file:{d}/{daemon}.log"])
                if r.returncode:
                    raise RuntimeError(f"{n['name']} {daemon}: {r.stderr}")

        with concurrent.futures.ThreadPoolExecutor(workers) as ex:
            list(ex.map(start, routers))
        started = time.monotonic() - t0
        # Every node's FIB holds the loopbacks of every node in another AS; a node once complete
        # is not asked again (each check is a process in its namespace: CPU the fabric would
        # use). Nodes sharing an AS (the spines of `gen clos`) never learn each other's loopback:
        # eBGP drops a path carrying the receiver's own AS (RFC 4271, 9.1.2), and twin's
        # validation expects no such route either.
        want = {n["name"]: {lo.split("/")[0] for m in routers
                            if m["asn"] != n["asn"] for lo in m["loopbacks"]}
                for n in routers}
        pending = set(want)
        deadline = time.monotonic() + 300
        while pending:
            if time.monotonic() > deadline:
                raise RuntimeError(f"not converged after 300 s: {sorted(pending)[:5]}")
            for name in sorted(pending):
                ns = f"--net=/proc/{hosts[name].pid}/ns/net"
                have = set()
                for fam in ("-4", "-6"):
                    out = sh(["nsenter", ns, "--", "ip", "-j", fam, "route", "show"]).stdout
                    have |= {r["dst"].split("/")[0] for r in json.loads(out or "[]")}
                if want[name] <= have:
                    pending.discard(name)
            if pending:
                time.sleep(0.2)
        first_leaf = next(n for n in routers if n["name"].startswith("leaf"))
        ns = f"--net=/proc/{hosts[first_leaf['name']].pid}/ns/net"
        v4 = sorted({lo.split("/")[0] for m in routers for lo in m["loopbacks"] if ":" not in lo})
        procs = [subprocess.Popen(["nsenter", ns, "--", "ping", "-c1", "-W2", "-q", a],
                                  stdout=subprocess.DEVNULL) for a in v4]
        lost = [a for a, p in zip(v4, procs) if p.wait()]
        if lost:
            raise RuntimeError(f"{first_leaf['name']} cannot ping {lost[:5]}")
        up = time.monotonic() - t0
        cpu = cgroup_usage(cgroup)
    finally:
        t1 = time.monotonic()
        stop_daemons()
        net.stop()
        down = time.monotonic() - t1
        shutil.rmtree(WORK, ignore_errors=True)
    return {"wired_s": wired, "daemons_s": started, "all_loopbacks_s": up, "down_s": down,
            "cpu_frr_s": cpu}


def twin_run(topo, lab):
    t0 = time.monotonic()
    try:
        r = sh([TWIN, "up", "--json", "--name", lab, topo])
        if r.returncode:
            sys.exit(f"twin up: {r.stderr[-1500:]}")
        up = time.monotonic() - t0
        cpu = cgroup_cpu(lab)
        r = sh([TWIN, "validate", "--json", "--lab", lab, "--converge-timeout", "60"])
        valid = time.monotonic() - t0
        ok = r.returncode == 0
    finally:
        t1 = time.monotonic()
        sh([TWIN, "down", "--lab", lab])
    return {"up_s": up, "up_to_passing_validate_s": valid, "passed": ok,
            "down_s": time.monotonic() - t1, "cpu_frr_s": cpu}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fabric", default="8x48", help="SxL: spines x leaves (gen clos)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--workers", type=int, default=4, help="Mininet's daemon launch workers")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "mininet.json"))
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("bench: needs root")
    # Ctrl-C or a kill still stops the daemons and Mininet's hosts (the `finally` blocks).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(130))
    try:
        import mininet.net  # noqa: F401
    except ImportError:
        sys.exit("bench: Mininet is not installed; apt-get install mininet (for this benchmark only)")
    spines, _, leaves = a.fabric.partition("x")
    if not (spines.isdigit() and leaves.isdigit() and int(spines) > 0 and int(leaves) > 0):
        sys.exit(f"bench: --fabric {a.fabric!r}: expected SPINESxLEAVES, e.g. 8x48")
    if a.runs < 1 or a.workers < 1:
        sys.exit("bench: --runs and --workers must be at least 1")
    if not os.access(TWIN, os.X_OK):
        sys.exit(f"bench: {TWIN} is missing: build it first (tools/build.sh)")
    topo = f"/tmp/twin-anchor-{a.fabric}.yaml"
    subprocess.run([TWIN, "gen", "clos", "--spines", spines, "--leaves", leaves, "-o", topo],
                   check=True, capture_output=True)
    plan = json.loads(sh([TWIN, "plan", "--json", topo]).stdout)
    res = {"twin": [], "mininet": []}
    for i in range(a.runs):
        res["twin"].append(twin_run(topo, f"anchor{os.getpid()}"))
        print(f"bench: twin run {i + 1}: {json.dumps(res['twin'][-1])}", file=sys.stderr, flush=True)
        res["mininet"].append(mininet_run(plan, a.workers))
        print(f"bench: mininet run {i + 1}: {json.dumps(res['mininet'][-1])}", file=sys.stderr,
              flush=True)
    med = lambda k, m: statistics.median(r[m] for r in res[k])  # noqa: E731
    print(f"{a.fabric}: {len(plan['nodes'])} nodes, {len(plan['links'])} links; median of {a.runs}")
    failed = sum(not r["passed"] for r in res["twin"])
    print(f"  twin    up {med('twin', 'up_s'):.2f} s, up -> passing validate "
          f"{med('twin', 'up_to_passing_validate_s'):.2f} s"
          f"{f' ({failed} runs did NOT pass)' if failed else ''}, down {med('twin', 'down_s'):.2f} s;"
          f" FRR {med('twin', 'cpu_frr_s'):.1f} CPU-s by the end of up")
    print(f"  mininet wired {med('mininet', 'wired_s'):.2f} s, daemons started "
          f"{med('mininet', 'daemons_s'):.2f} s, all loopbacks in every FIB and pingable "
          f"{med('mininet', 'all_loopbacks_s'):.2f} s, down {med('mininet', 'down_s'):.2f} s;"
          f" FRR {med('mininet', 'cpu_frr_s'):.1f} CPU-s by then")
    ratio = med("mininet", "all_loopbacks_s") / med("twin", "up_to_passing_validate_s")
    print(f"  Mininet's bring-up / twin's up -> passing validate: {ratio:.2f}x")
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    with open(a.out, "w") as f:
        json.dump({"fabric": a.fabric, "nodes": len(plan["nodes"]), "links": len(plan["links"]),
                   "workers": a.workers, "runs": res, "ratio": ratio}, f, indent=2)
    print(f"  runs written to {a.out}")
    os.unlink(topo)


if __name__ == "__main__":
    main()
