#!/usr/bin/env python3
"""twin serve, measured on a running lab (clos-2x4 and 8x48, `twin gen clos --spines 8 --leaves 48`).

  state      GET /api/labs/{lab} (the lab's status) beside `twin status --json` run as a
             command (what an orchestrator does without the API), and GET .../graph (the live
             graph the page draws): median and p90 of --requests calls
  validate   POST /api/labs/{lab}/validate, polled to its end (a job), beside `twin validate --json`
  events     kernel -> browser: links set down with `ip -n NETNS link set` (the kernel change),
             received by a WebSocket the page's way in headless Chromium; the delay from the
             change to the link's event, and the events of a burst delivered per second
  memory     twin serve's RSS and PSS (smaps_rollup) idle, and after everything above

The events part needs Debian's chromium, chromium-driver and python3-selenium (install-deps.sh
--browser); without them it is skipped with the reason. Needs root. Removes its labs and stops
its server on any exit, Ctrl-C included.
Usage: sudo bench/serve.py [--fabrics 2x4,8x48] [--requests 30] [--validates 3] [--flaps 5]
"""
import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TWIN = os.path.join(ROOT, "build", "twin")
labs = set()
server = {"proc": None}


def cleanup():
    p = server["proc"]
    if p and p.poll() is None:
        p.terminate()  # exactly the server this script started
        p.wait(timeout=20)
    for lab in list(labs):
        subprocess.run([TWIN, "down", "--lab", lab], capture_output=True)
        labs.discard(lab)


def on_signal(_s, _f):
    cleanup()
    sys.exit(130)


def ms(seconds):
    return round(seconds * 1000, 1)


def stats(xs):
    xs = sorted(xs)
    return {"median_ms": ms(statistics.median(xs)), "p90_ms": ms(xs[int(0.9 * (len(xs) - 1))]),
            "n": len(xs)}


class Api:
    def __init__(self, base, token):
        self.base, self.token = base, token

    def call(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method)
        if body is not None:
            req.add_header("Content-Type", "application/json")
        req.add_header("Authorization", "Bearer " + self.token)
        with urllib.request.urlopen(req, timeout=600) as r:
            return r.status, json.loads(r.read())


def timed(f):
    t = time.monotonic()
    v = f()
    return time.monotonic() - t, v


def start_server():
    log = tempfile.NamedTemporaryFile(prefix="twin-serve-bench-", suffix=".log", delete=False)
    p = subprocess.Popen([TWIN, "serve", "--listen", "127.0.0.1:0"], stderr=log,
                         stdout=subprocess.DEVNULL)
    server["proc"] = p
    for _ in range(200):
        text = open(log.name).read()
        m = re.search(r"serving http://(127\.0\.0\.1:\d+)/\?token=([0-9a-f]+)", text)
        if m:
            return p, "http://" + m.group(1), m.group(2)
        if p.poll() is not None:
            sys.exit("twin serve did not start: " + text)
        time.sleep(0.05)
    sys.exit("twin serve printed no address")


def memory(pid):
    rss = pss = 0
    for line in open("/proc/%d/status" % pid):
        if line.startswith("VmRSS:"):
            rss = int(line.split()[1])
    for line in open("/proc/%d/smaps_rollup" % pid):
        if line.startswith("Pss:"):
            pss = int(line.split()[1])
    threads = len(os.listdir("/proc/%d/task" % pid))
    return {"rss_mib": round(rss / 1024, 1), "pss_mib": round(pss / 1024, 1), "threads": threads}


def bring_up(fabric, lab):
    spines, leaves = fabric.split("x")
    topo = os.path.join(tempfile.gettempdir(), "twin-serve-bench-%s.yaml" % fabric)
    subprocess.run([TWIN, "gen", "clos", "--spines", spines, "--leaves", leaves, "--name", lab,
                    "-o", topo], check=True, capture_output=True)
    labs.add(lab)
    t, r = timed(lambda: subprocess.run([TWIN, "up", topo, "--name", lab], capture_output=True,
                                        text=True))
    if r.returncode != 0:
        sys.exit("twin up %s failed: %s" % (fabric, r.stderr[-2000:]))
    return t


def bench_state(api, lab, n):
    out = {}
    out["api_status"] = stats([timed(lambda: api.call("GET", "/api/labs/" + lab))[0] for _ in range(n)])
    out["api_graph"] = stats([timed(lambda: api.call("GET", "/api/labs/%s/graph" % lab))[0] for _ in range(n)])
    out["cli_status"] = stats([timed(lambda: subprocess.run(
        [TWIN, "status", "--lab", lab, "--json"], capture_output=True, check=True))[0] for _ in range(n)])
    return out


def bench_validate(api, lab, n):
    api_t, cli_t, counts = [], [], []
    for _ in range(n):
        def via_api():
            _, job = api.call("POST", "/api/labs/%s/validate" % lab, {})
            while True:
                _, j = api.call("GET", "/api/jobs/" + job["id"])
                if j["state"] != "running":
                    return j
                time.sleep(0.05)
        t, j = timed(via_api)
        if j["state"] != "done":
            sys.exit("validate job %s: %s" % (j["state"], j["progress"][-3:]))
        api_t.append(t)
        counts.append(j["result"]["summary"]["passed"])
        t, r = timed(lambda: subprocess.run([TWIN, "validate", "--lab", lab, "--json"],
                                            capture_output=True, text=True))
        if r.returncode != 0:
            sys.exit("twin validate failed: " + r.stdout[-1000:])
        cli_t.append(t)
    return {"api": stats(api_t), "cli": stats(cli_t), "tests_passed": counts[0]}


# Listens the page's way: a WebSocket on the event stream, each arrival stamped with Date.now()
# (the same clock as this script's time.time(): one machine).
LISTEN_JS = """
window.twinEvents = [];
var ws = new WebSocket('ws://' + location.host + '/api/labs/' + arguments[0] + '/events');
ws.onmessage = function (m) { window.twinEvents.push([Date.now(), JSON.parse(m.data)]); };
"""


def bench_events(base, token, lab, links, flaps):
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.options import Options
        from selenium.webdriver.chrome.service import Service
    except ImportError as e:
        return {"skipped": "python3-selenium is not installed (%s)" % e}
    o = Options()
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        o.add_argument(a)
    o.binary_location = "/usr/bin/chromium"
    try:
        d = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=o)
    except Exception as e:
        return {"skipped": "cannot start Chromium: %s" % str(e)[:200]}
    try:
        d.get(base + "/?token=" + token + "#" + lab)
        d.execute_script(LISTEN_JS, lab)
        time.sleep(1.5)  # the follower's first look is its baseline

        def arrivals():
            return d.execute_script("return window.twinEvents")

        def set_links(state, which):
            for node, ifname in which:
                subprocess.run(["ip", "-n", "tw-%s-%s" % (lab, node), "link", "set", ifname, state],
                               check=True)

        # Delay: one link at a time, from the kernel change to its event in the browser.
        delays = []
        node, ifname, subject = links[0]
        for i in range(flaps):
            for state, want in (("down", "DOWN/DOWN"), ("up", "UP/UP")):
                seen = len(arrivals())
                t0 = time.time()
                set_links(state, [(node, ifname)])
                got = None
                while time.time() - t0 < 20 and got is None:
                    for t, e in arrivals()[seen:]:
                        if e.get("kind") == "link" and e.get("subject") == subject and e.get("to") == want:
                            got = t / 1000.0
                    time.sleep(0.01)
                if got is None:
                    return {"error": "no %s event for %s within 20 s" % (want, subject)}
                delays.append(got - t0)
                time.sleep(1.2)  # let sessions settle between flaps
        # Throughput: every given link down at once, then up; each change is a link event and
        # one or more session events; counted until the stream is quiet for 3 s.
        burst = {}
        for state in ("down", "up"):
            seen = len(arrivals())
            t0 = time.time()
            set_links(state, [(n, i) for n, i, _ in links])
            last_count, quiet_since = seen, time.time()
            while time.time() - quiet_since < 3 and time.time() - t0 < 120:
                c = len(arrivals())
                if c != last_count:
                    last_count, quiet_since = c, time.time()
                time.sleep(0.05)
            got = arrivals()[seen:]
            span = got[-1][0] / 1000.0 - t0 if got else 0
            kinds = {}
            for _, e in got:
                kinds[e.get("kind")] = kinds.get(e.get("kind"), 0) + 1
            burst[state] = {"links": len(links), "events": len(got), "by_kind": kinds,
                            "last_event_s": round(span, 2),
                            "events_per_s": round(len(got) / span, 1) if span else None}
        return {"link_event_delay": stats(delays), "burst": burst}
    finally:
        d.quit()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fabrics", default="2x4,8x48")
    ap.add_argument("--requests", type=int, default=30)
    ap.add_argument("--validates", type=int, default=3)
    ap.add_argument("--flaps", type=int, default=5)
    ap.add_argument("--json", action="store_true", help="print only the JSON result")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("bench/serve.py needs root (it brings labs up)")
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    result = {"fabrics": {}}
    try:
        proc, base, token = start_server()
        api = Api(base, token)
        time.sleep(0.5)
        result["memory_idle"] = memory(proc.pid)
        for fabric in a.fabrics.split(","):
            lab = "bs" + fabric.replace("x", "x")
            r = {"up_s": round(bring_up(fabric, lab), 2)}
            r["state"] = bench_state(api, lab, a.requests)
            r["validate"] = bench_validate(api, lab, a.validates)
            spines, leaves = (int(x) for x in fabric.split("x"))
            # Every leaf's first uplink (to spine1): leafN:swp1 -- spine1:swpN.
            links = [("leaf%d" % n, "swp1", "leaf%d:swp1 -- spine1:swp%d" % (n, n))
                     for n in range(1, leaves + 1)]
            r["events"] = bench_events(base, token, lab, links, a.flaps)
            r["memory_after"] = memory(proc.pid)
            result["fabrics"][fabric] = r
            subprocess.run([TWIN, "down", "--lab", lab], capture_output=True)
            labs.discard(lab)
            if not a.json:
                print(json.dumps({fabric: r}, indent=1), flush=True)
        result["memory_end"] = memory(proc.pid)
    finally:
        cleanup()
    print(json.dumps(result, indent=None if a.json else 1))


if __name__ == "__main__":
    main()
