#!/usr/bin/env python3
"""Drives twin serve's page in headless Chromium (Debian's chromium, chromium-driver and
python3-selenium) for the serve integration suite: the graph shows every node and link, the
link named by --down is drawn down, a click on a node opens its panel, a command run from
that panel answers, and the node's terminal (twin shell in a pty, xterm.js) runs what is typed
into it inside that node. With --traffic PATTERN (the traffic suite's lab, which has servers
and link rates) it checks the Traffic control instead of the node's panel: a run started from
the page colours links by utilisation while it runs and after, its flow table has --flows rows
of non-zero throughput, its ECMP table at least --groups groups, the run's History entry shows
the same tables, and a click on the background puts the colours away. Saves a screenshot.
Prints one JSON object; exits 0 when every check held,
1 when one failed or the browser did not work (Chromium crashing, a WebDriver error: {"error"}),
77 only when a piece of the browser stack is not installed ({"skip": which}; the test then skips,
or fails where TWIN_REQUIRE lists browser). Run it with Debian's /usr/bin/python3, which has
python3-selenium.

Usage: browser_check.py URL LAB --nodes N --links N [--down LINK_ID] [--node NAME] [--screenshot F]
       browser_check.py URL LAB --nodes N --links N --traffic PATTERN --duration S --flows N
                        --groups N [--screenshot F]
       browser_check.py --prerequisites   (only: is the browser stack installed?)
"""
import argparse
import json
import os
import sys
import time

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"

try:
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select
    SELENIUM_MISSING = ""
except ImportError as e:
    SELENIUM_MISSING = "python3-selenium is not installed (tools/install-deps.sh --browser): %s" % e


def missing():
    """Which piece of the browser stack is not installed, or "" when none."""
    if SELENIUM_MISSING:
        return SELENIUM_MISSING
    for path, package in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not os.access(path, os.X_OK):
            return "no %s (%s: tools/install-deps.sh --browser)" % (path, package)
    return ""


def brief(e):
    """An exception's text without chromedriver's stack of unnamed addresses."""
    return str(e).split("\nStacktrace:")[0].strip()[:2000]


def texts(d, css):
    """The text of every element `css` selects, read in one script (no element can go stale)."""
    return d.execute_script(
        "return Array.from(document.querySelectorAll(arguments[0]))"
        ".map(function (e) { return e.innerText; });", css)


def wait(pred, timeout=20.0):
    end = time.time() + timeout
    while time.time() < end:
        try:
            v = pred()
            if v:
                return v
        except Exception:  # an element between two renders
            pass
        time.sleep(0.1)
    return None


def node_checks(d, a, out, check):
    """A click on a node opens its panel with its interfaces; a command runs in it; the node's
    terminal runs what is typed into it."""
    d.find_element(By.CSS_SELECTOR, 'g.node[data-node="%s"] rect' % a.node).click()
    check("node panel", wait(lambda: a.node in d.find_element(By.CSS_SELECTOR, "#detail h2").text))
    check("interfaces listed", wait(lambda: "swp1" in d.find_element(By.ID, "detail").text))
    cmd = d.find_element(By.ID, "cmd")
    cmd.clear()
    cmd.send_keys("ip -br link show swp1")
    d.find_element(By.CSS_SELECTOR, "#exec button").click()
    answer = wait(lambda: "swp1" in d.find_element(By.ID, "out").text and d.find_element(By.ID, "out").text)
    out["command_output"] = answer
    check("command ran in the node", answer and "swp1" in answer)
    # The terminal: type into xterm.js, read its screen (the DOM renderer keeps the text).
    d.find_element(By.ID, "open-term").click()
    check("terminal opened", wait(lambda: d.find_element(By.CSS_SELECTOR, "#term .xterm-rows")))
    prompt = wait(lambda: "$" in d.find_element(By.CSS_SELECTOR, "#term .xterm-rows").text
                  or "#" in d.find_element(By.CSS_SELECTOR, "#term .xterm-rows").text)
    check("shell prompt", prompt)
    area = d.find_element(By.CSS_SELECTOR, "#term .xterm-helper-textarea")
    # The answer is computed in the node, so it cannot be the echo of what was typed.
    area.send_keys("echo TERM-$((6*7))-$(hostname)-$(ip -br link show swp1 | wc -l)\n")
    want = "TERM-42-%s-1" % a.node
    screen = wait(lambda: want in d.find_element(By.CSS_SELECTOR, "#term .xterm-rows").text
                  and d.find_element(By.CSS_SELECTOR, "#term .xterm-rows").text)
    out["terminal_screen"] = (screen or d.find_element(By.CSS_SELECTOR, "#term .xterm-rows").text)[-400:]
    check("terminal ran a command in the node", screen)


LINKS_JS = """return Array.from(document.querySelectorAll('line.link')).map(l => ({
    id: l.getAttribute('data-link'), cls: l.getAttribute('class'),
    util: l.getAttribute('data-util'), bps: l.getAttribute('data-bps'),
    stroke: getComputedStyle(l).stroke}));"""


def busy(links):
    """The links drawn with a utilisation class above idle and a non-zero rate."""
    return [l for l in links if l["cls"] and " util " in l["cls"] + " " and " u0" not in l["cls"]
            and l["bps"] and int(l["bps"]) > 0]


def traffic_checks(d, a, out, check):
    """A traffic run from the page: live colours, the report's tables and colours, its History
    entry, and the colours put away by a click on the background."""
    Select(d.find_element(By.ID, "traffic-pattern")).select_by_value(a.traffic)
    dur = d.find_element(By.ID, "traffic-duration")
    dur.clear()
    dur.send_keys(str(a.duration))
    d.find_element(By.ID, "traffic").click()
    # While the job runs (the button disabled), links take colours from the live counters.
    live_busy, statuses, legend = [], set(), ""
    end = time.time() + a.duration + 90
    while time.time() < end:
        running = not d.find_element(By.ID, "traffic").is_enabled()
        statuses.add(d.find_element(By.ID, "status").text[:120])
        if not running and d.find_elements(By.CSS_SELECTOR, "table.traffic-flows"):
            break
        if running:
            b = busy(d.execute_script(LINKS_JS))
            if len(b) > len(live_busy):
                live_busy = b
                legend = d.find_element(By.ID, "legend").text
        time.sleep(0.25)
    out["live_busy_links"] = [(l["id"], l["util"], l["bps"]) for l in live_busy]
    out["live_legend"] = legend
    out["status_lines"] = sorted(statuses)[:20]
    check("links coloured by utilisation while running", live_busy)
    check("a legend while running", "utilisation" in legend)
    check("progress lines in the status", any("twin: [" in x or "iperf3" in x for x in statuses))
    # The report: one row per flow, each with its throughput.
    # Read in one script each: the panel may be drawn again between a find and a read (the run's
    # event refreshes the graph and the history), which left a stale element in a fresh clone's run.
    wait(lambda: d.find_elements(By.CSS_SELECTOR, "table.traffic-flows tbody tr"), timeout=30)
    bps = [int(x or 0) for x in d.execute_script(
        "return Array.from(document.querySelectorAll('table.traffic-flows tbody tr'))"
        ".map(function (r) { return r.getAttribute('data-bps'); });")]
    out["flow_rows"], out["flow_bps"] = len(bps), bps
    check("a row per flow", len(bps) == a.flows)
    check("every flow carried traffic", bps and all(x > 0 for x in bps))
    check("the slowest flow flagged", len(texts(d, "table.traffic-flows tr.slowest .tag")) >= 1)
    summary = " ".join(texts(d, "table.traffic-summary"))
    out["summary"] = summary
    check("aggregate, slowest pair and ratio", "aggregate" in summary and "slowest pair" in summary
          and "fair share" in summary)
    groups = [g.replace("\n", " ") for g in texts(d, "table.traffic-groups tbody tr")]
    out["groups"] = groups
    check("ECMP groups listed", len(groups) >= a.groups and all("%" in g for g in groups))
    after = d.execute_script(LINKS_JS)
    after_busy = busy(after)
    out["after_busy_links"] = [(l["id"], l["util"], l["bps"]) for l in after_busy]
    check("links keep the run's colours", after_busy and all(float(l["util"]) > 0 for l in after_busy
                                                             if l["util"] != "unshaped"))
    check("a coloured link is not the idle grey", any(l["stroke"] != "rgb(204, 204, 204)" for l in after_busy))
    if a.screenshot:
        d.save_screenshot(a.screenshot)
        out["screenshot"] = a.screenshot
    # The run is in the History: its entry shows the same tables, from the journal's report.
    # (The list is drawn again on every event: find, read and click in one go, retried.)
    def open_entry():
        for li in d.find_elements(By.CSS_SELECTOR, "#history li"):
            text = li.text
            if " traffic " in text and a.traffic in text:
                d.execute_script("document.getElementById('detail').innerHTML = ''")
                li.click()
                return text
        return None
    entry = wait(open_entry, timeout=15)
    check("a History entry", entry)
    if entry:
        out["history_entry"] = entry
        again = wait(lambda: d.find_elements(By.CSS_SELECTOR, "table.traffic-flows tbody tr"))
        check("History shows the flow table", again and len(again) == a.flows)
        check("History shows the ECMP table",
              len(d.find_elements(By.CSS_SELECTOR, "table.traffic-groups tbody tr")) >= a.groups)
    # A click on the background, away from nodes and links, puts the colours away.
    svg = d.find_element(By.ID, "graph")
    size = svg.size
    ActionChains(d).move_to_element_with_offset(svg, -size["width"] // 2 + 6, -size["height"] // 2 + 6).click().perform()
    cleared = wait(lambda: not any(" util " in (l["cls"] or "") + " " for l in d.execute_script(LINKS_JS)), timeout=5)
    check("a click away clears the colours", cleared)
    check("and the legend", not d.find_element(By.ID, "legend").is_displayed())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--prerequisites", action="store_true")
    ap.add_argument("url", nargs="?")
    ap.add_argument("lab", nargs="?")
    ap.add_argument("--nodes", type=int)
    ap.add_argument("--links", type=int)
    ap.add_argument("--down", default="")
    ap.add_argument("--node", default="leaf1")
    ap.add_argument("--screenshot", default="")
    ap.add_argument("--traffic", default="")
    ap.add_argument("--duration", type=int, default=2)
    ap.add_argument("--flows", type=int, default=0)
    ap.add_argument("--groups", type=int, default=0)
    a = ap.parse_args()
    why = missing()
    if why:
        print(json.dumps({"skip": why}))
        sys.exit(77)
    if a.prerequisites:
        print(json.dumps({"ok": True}))
        sys.exit(0)
    if not a.url or not a.lab or a.nodes is None or a.links is None:
        ap.error("URL, LAB, --nodes and --links are required")
    o = Options()
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1400,900",
                "--disable-dev-shm-usage"):
        o.add_argument(arg)
    o.binary_location = CHROMIUM
    # Everything is installed, so a browser that does not start is broken, not absent: a failure.
    try:
        d = webdriver.Chrome(service=Service(CHROMEDRIVER), options=o)
    except Exception as e:
        print(json.dumps({"error": "Chromium did not start under chromedriver: %s" % brief(e)}))
        sys.exit(1)
    out = {"checks": {}}
    ok = True

    def check(name, value):
        nonlocal ok
        out["checks"][name] = bool(value)
        ok = ok and bool(value)

    try:
        d.get(a.url + "#" + a.lab)
        check("graph drawn", wait(lambda: d.find_element(By.ID, "graph").get_attribute("data-ready") == "true"))
        nodes = d.find_elements(By.CSS_SELECTOR, "g.node")
        links = d.find_elements(By.CSS_SELECTOR, "line.link")
        out["nodes"], out["links"] = len(nodes), len(links)
        check("every node", len(nodes) == a.nodes)
        check("every link", len(links) == a.links)
        if a.down:
            sel = 'line.link[data-link="%s"]' % a.down
            state = wait(lambda: d.find_element(By.CSS_SELECTOR, sel).get_attribute("data-state") == "down" and "down")
            cls = d.find_element(By.CSS_SELECTOR, sel).get_attribute("class")
            out["down_link_class"] = cls
            colour = d.execute_script(
                "return getComputedStyle(document.querySelector(arguments[0])).stroke", sel)
            out["down_link_stroke"] = colour
            check("fault link drawn down", state == "down" and "down" in cls)
            check("fault link red", colour == "rgb(214, 39, 40)")
            others = d.execute_script(
                "return Array.from(document.querySelectorAll('line.link')).filter("
                "l => l.getAttribute('data-link') !== arguments[0] && l.getAttribute('data-state') === 'down').length",
                a.down)
            check("only that link down", others == 0)
        if a.traffic:
            traffic_checks(d, a, out, check)
        else:
            node_checks(d, a, out, check)
        if a.screenshot and not a.traffic:  # the traffic checks keep theirs before the click away
            d.save_screenshot(a.screenshot)
            out["screenshot"] = a.screenshot
        out["console_errors"] = [e["message"] for e in d.get_log("browser") if e["level"] == "SEVERE"]
        check("no script errors", not out["console_errors"])
    except Exception as e:  # a WebDriver error, the browser gone: the checks so far, and why
        out["error"] = "%s: %s" % (type(e).__name__, brief(e))
        ok = False
    finally:
        try:
            d.quit()
        except Exception:  # a crashed browser cannot be quit; the error above says why
            pass
    out["ok"] = ok
    print(json.dumps(out))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
