// The command table (table.hpp): every subcommand and option of `twin`, once.
#include "twin/options/table.hpp"

#include <cstdio>
#include <map>
#include <sstream>
#include <stdexcept>

#include "twin/core/ip.hpp"

namespace twin::options {
namespace {

Range seconds(double lo, double hi) { return {lo, hi, "seconds"}; }
Range whole(double lo, double hi) { return {lo, hi, "", true}; }

Option flag(std::string names, std::string help) {
  Option o;
  o.names = std::move(names);
  o.type = Type::kFlag;
  o.help = std::move(help);
  return o;
}
Option value(std::string names, std::string help, Type t = Type::kString) {
  Option o;
  o.names = std::move(names);
  o.type = t;
  o.help = std::move(help);
  return o;
}
Option& shown(Option& o, std::string def) {
  o.default_value = std::move(def);
  o.show_default = true;
  return o;
}
Option with_default(Option o, std::string def) { return shown(o, std::move(def)); }
Option required(Option o) {
  o.required = true;
  return o;
}
Option ranged(Option o, Range r) {
  o.range = r;
  return o;
}
Option api(Option o, std::string field, std::optional<Range> narrower = std::nullopt) {
  o.api_field = std::move(field);
  o.api_range = narrower;
  return o;
}

// --- The options several commands share: each declared here once. ---

// The lab a command acts on, as an option. `also_name`: spelled --name,--lab (commands that
// create a lab, where it overrides the file's `name`).
Option lab(std::string help = "lab name", bool also_name = false) {
  return value(also_name ? "--name,--lab" : "--lab", std::move(help));
}
// The same as a positional (`twin status LAB`).
Option lab_positional() { return value("lab", "lab name (default: the only running lab)"); }
Option json(std::string help) { return flag("--json", std::move(help)); }
Option junit() { return value("--junit", "also write a JUnit XML report to FILE"); }
Option verbose(std::string help) { return flag("--verbose,-v", std::move(help)); }

// --converge-timeout: every command that waits for a lab to converge takes it, each with its
// own default, meaning and bounds.
struct Converge {
  double default_s;
  const char* help;
  Range range;
  bool show_default = true;
};
Option converge_timeout(const Converge& c) {
  Option o = value("--converge-timeout", c.help, Type::kNumber);
  char def[32];
  std::snprintf(def, sizeof def, "%g", c.default_s);
  o.default_value = def;
  o.show_default = c.show_default;
  o.range = c.range;
  // The API's jobs: at most 600 s, whichever command.
  o.api_field = "converge_timeout";
  o.api_range = Range{0, 600};
  return o;
}
const Converge kUpConverge{60, "seconds to wait for every BGP session to be Established",
                           seconds(0, 3600)};
const Converge kRestartConverge{60, "seconds to wait for sessions Established / adjacencies Full",
                                Range{0, 3600, "", false, true}, false};
const Converge kValidateConverge{30, "seconds a failing test is retried before it counts as failed",
                                 seconds(0, 3600)};
const Converge kGateConverge{10, "seconds a failing test is retried before it counts as failed",
                             seconds(0, 3600)};
const Converge kDrillConverge{30,
                              "seconds to wait for the network to settle after each failure and "
                              "restore (1 to 600)",
                              seconds(1, 600)};

// Which host files a command's inputs may name (docs/commands.md, "Which files inputs may name").
void input_flags(std::vector<Option>& out) {
  Option a = value("--allow-path",
                   "also let the inputs name files under DIR (repeatable); by default only under "
                   "the input's checkout root (its nearest folder with .git, else its own folder)",
                   Type::kStrings);
  a.type_name = "DIR";
  a.single = true;
  out.push_back(a);
  // twin serve's jobs: the request's folder is the only root.
  Option r = value("--input-root", "");
  r.hidden = true;
  out.push_back(r);
}

// The probe stream's flags, shared by apply, run and drill (`max_outage_help` says what a
// budget does there).
void stream_flags(std::vector<Option>& out, const std::string& max_outage_help, bool in_api) {
  Option mo = value("--max-outage", max_outage_help);
  Option pi = with_default(
      value("--probe-interval", "time between two echoes of one flow of the probe stream"), "10ms");
  Option ns = flag("--no-probe-stream", "do not measure traffic");
  if (in_api) {
    mo = api(mo, "max_outage");
    pi = api(pi, "probe_interval");
    ns = api(ns, "no_probe_stream");
  }
  out.push_back(mo);
  out.push_back(pi);
  out.push_back(ranged(with_default(value("--probe-flows",
                                          "flows the probe stream measures at most (server pairs "
                                          "first, then sampled loopback pairs)",
                                          Type::kInteger),
                                    "32"),
                       whole(1, 4096)));
  out.push_back(ns);
}

// The gate's flags, shared by apply and run.
void gate_flags(std::vector<Option>& out) {
  out.push_back(json("print the gate's report as JSON instead of text"));
  out.push_back(verbose("list every difference and failure"));
  out.push_back(junit());
  out.push_back(value("--evidence",
                      "write the evidence bundle (hashes, configs before/after, every probe, the "
                      "diff, the verdict) into DIR"));
  out.push_back(
      api(flag("--no-rollback", "leave a rejected change in place for inspection"), "no_rollback"));
  out.push_back(api(flag("--revert",
                         "what-if run: restore the baseline after an approval too (the lab keeps "
                         "its state)"),
                    "revert"));
  out.push_back(
      api(flag("--per-step",
               "validate after every step and name the first step that breaks the network"),
          "per_step"));
  out.push_back(api(flag("--traffic",
                         "measure the lab's traffic pattern (its traffic:, else all-to-all) "
                         "before and after; reject a change that loses bandwidth "
                         "(bandwidth-lost)"),
                    "traffic"));
  out.push_back(api(flag("--allow-dirty-baseline",
                         "judge a change on a lab that already fails: only what it makes worse "
                         "counts"),
                    "allow_dirty_baseline"));
  stream_flags(out,
               "reject when a flow of the probe stream loses traffic for longer than this while "
               "the change runs (e.g. 500ms; at least 10 probe intervals)",
               true);
  out.push_back(converge_timeout(kGateConverge));
  input_flags(out);
}

const char* kCourseDir = "course folder (default: the repository's scenarios/exercises)";
const char* kExerciseLab = "the exercise's lab (default: the only one running)";

std::vector<Command> build() {
  std::vector<Command> t;
  auto add = [&](std::string path, std::string help) -> std::vector<Option>& {
    t.push_back({std::move(path), std::move(help), {}, false});
    return t.back().options;
  };

  {
    auto& o = add("plan", "Dry run: print what `up` would create");
    o.push_back(required(value("file", "topology file")));
    o.push_back(lab("lab name (overrides the file's `name`)", true));
    o.push_back(flag("--strict-images",
                     "refuse a node whose image is not present, as `up --strict-images` does"));
    o.push_back(json("print the plan as JSON"));
    input_flags(o);
  }
  {
    auto& o = add("up",
                  "Create the lab: namespaces, links, FRR daemons; wait for its BGP sessions and "
                  "OSPF adjacencies");
    o.push_back(required(value("file", "topology file")));
    o.push_back(api(lab("lab name (overrides the file's `name`; lets CI jobs run the same "
                        "topology in parallel)",
                        true),
                    "name"));
    o.push_back(flag("--keep-on-failure", "leave a half-built lab for inspection"));
    o.push_back(flag("--no-wait", "return once daemons run, without waiting for BGP"));
    o.push_back(api(ranged(with_default(value("--timeout",
                                              "seconds for the whole bring-up, convergence "
                                              "included (with VMs: at least their longest "
                                              "ready-timeout + 120 unless given)",
                                              Type::kNumber),
                                        "300"),
                           seconds(1, 86400)),
                    "timeout", Range{1, 7200}));
    o.push_back(converge_timeout(kUpConverge));
    o.back().api_field.clear();  // the API's up takes the whole bring-up's timeout only
    o.push_back(
        ranged(with_default(value("--parallel", "nodes started at once", Type::kInteger), "4"),
               whole(1, 64)));
    o.push_back(value("--libvirt-uri",
                      "libvirt connection for VM nodes (default: $TWIN_LIBVIRT_URI or "
                      "qemu:///system)"));
    o.push_back(api(flag("--strict-images",
                         "refuse a node whose image is not present instead of running the "
                         "closest release present (with a warning naming both)"),
                    "strict_images"));
    o.push_back(json("print the summary as JSON"));
    input_flags(o);
  }
  {
    auto& o = add("down", "Remove everything the lab's state file records");
    o.push_back(lab_positional());
    o.push_back(lab());
    o.push_back(flag("--all", "remove every running lab"));
    o.push_back(json("print what was removed as JSON"));
  }
  {
    auto& o = add("status", "Nodes, daemons and PIDs, links with state and MTU");
    o.push_back(lab_positional());
    o.push_back(lab());
    o.push_back(json("print JSON"));
  }
  {
    auto& o = add("images",
                  "The image profiles a lab may name and whether this machine runs each: FRR "
                  "release, container image and size, what is missing");
    o.push_back(json("print JSON"));
  }
  {
    auto& o = add("restart", "Bring a node (or one of its daemons) back from its startup config");
    o.push_back(required(value("node", "node to restart")));
    o.push_back(lab("lab name (default: the only running lab)"));
    o.push_back(
        api(value("--daemon", "restart only this daemon (e.g. bgpd); the others keep running"),
            "daemon"));
    o.push_back(flag("--no-wait", "do not wait for the lab's sessions to be back"));
    o.push_back(converge_timeout(kRestartConverge));
    o.push_back(json("print JSON"));
  }
  add("list", "Running labs").push_back(json("print JSON"));
  {
    auto& o = add("exec", "Run a command inside a node (a plain `vtysh` reaches that node's FRR)");
    o.push_back(lab());
    o.push_back(required(value("node", "node name")));
    o.push_back(required(value("command", "command after --", Type::kStrings)));
  }
  {
    auto& o = add("shell", "Interactive shell inside a node");
    o.push_back(lab());
    o.push_back(required(value("node", "node name")));
  }
  {
    auto& o = add("console",
                  "Attach to a VM node's serial console (Ctrl-] leaves); piped input is sent and "
                  "the output printed");
    o.push_back(lab());
    o.push_back(required(value("node", "VM node name")));
    o.push_back(flag("--log", "print the console log (everything since boot) and exit"));
    o.push_back(ranged(with_default(value("--quiet",
                                          "with piped input: seconds without output after which "
                                          "to stop",
                                          Type::kNumber),
                                    "2"),
                       seconds(0.1, 3600)));
  }
  {
    auto& o = add("graph",
                  "Draw a topology file or a running lab (live: link and session state, failing "
                  "tests)");
    o.push_back(value("target", "topology file, or lab name (default: the only running lab)"));
    o.push_back(lab());
    o.push_back(with_default(value("--format,-f", "dot | svg | mermaid | json"), "svg"));
    o.push_back(value("--output,-o", "write to FILE instead of standard output"));
    o.push_back(flag("--no-live", "a running lab's plan only, without reading its state"));
    input_flags(o);
  }
  {
    auto& o = add("inventory",
                  "Write a running lab's management network as an inventory for Ansible, Nornir "
                  "or ssh (needs `mgmt:` in the topology)");
    o.push_back(lab_positional());
    o.push_back(lab());
    o.push_back(with_default(value("--format,-f", "ansible | nornir | ssh-config | json"),
                             "ansible"));
    o.push_back(value("--output,-o", "write to FILE (mode 0600) instead of standard output"));
  }
  {
    auto& o = add("events",
                  "Follow a lab: link up/down, session and daemon changes, validation and gate "
                  "results");
    o.push_back(lab_positional());
    o.push_back(lab());
    o.push_back(json("one JSON object per line"));
    o.push_back(flag("--history", "print the lab's recorded history first"));
    o.push_back(
        ranged(with_default(
                   value("--interval", "seconds between two looks at the lab", Type::kNumber), "1"),
               seconds(0.1, 60)));
    o.push_back(
        ranged(value("--count", "stop after N events (0: follow until Ctrl-C)", Type::kInteger),
               whole(0, 1e6)));
  }
  {
    auto& o = add("serve",
                  "REST API, event stream and web page for labs (loopback unless given a token)");
    o.push_back(with_default(value("--listen", "ADDRESS:PORT to listen on"), "127.0.0.1:8080"));
    o.push_back(value("--token-file",
                      "file holding the token that requests changing a lab and terminals must "
                      "carry (required for a non-loopback address; default: a new random one)"));
    Option nt = flag("--no-token",
                     "loopback only: no token, so any local user can change labs and open root "
                     "terminals (by default a token is made and printed)");
    nt.excludes = "--token-file";
    o.push_back(nt);
    o.push_back(value("--web-dir", "folder of the web page (default: the repository's web/)"));
  }
  {
    auto& o =
        add("history",
            "What was done to a lab (up, validate, apply, run, drill, down), also after down");
    o.push_back(lab_positional());
    o.push_back(lab());
    o.push_back(value("--kind", "only events of this kind (validate, apply, run, ...)"));
    o.push_back(ranged(value("--limit", "the newest N events", Type::kInteger), whole(0, 1e6)));
    o.push_back(json("print JSON"));
  }
  {
    auto& o = add("validate", "Run validators and print a verdict");
    o.push_back(lab_positional());
    o.push_back(lab());
    o.push_back(json("print the report as JSON instead of text"));
    o.push_back(verbose("list every test and subject"));
    o.push_back(junit());
    // cli/app.cpp appends the registry's family names to this help (validators/registry.hpp).
    o.push_back(api(value("--only", "comma-separated validator families"), "only"));
    o.push_back(value("--artifacts", "keep probes, FRR logs and node state in DIR"));
    Option nc = value("!--no-causes",
                      "when tests fail, skip the likely-cause rules (they read every node's "
                      "state once)",
                      Type::kNoFlag);
    o.push_back(nc);
    o.push_back(converge_timeout(kValidateConverge));
    o.push_back(ranged(with_default(value("--max-pairs",
                                          "probe at most N node pairs per family (evenly "
                                          "sampled); 0 = every pair",
                                          Type::kInteger),
                                    "0"),
                       whole(0, 1e7)));
    o.push_back(
        ranged(with_default(value("--parallel", "nodes probed at once", Type::kInteger), "8"),
               whole(1, 256)));
  }
  {
    auto& o = add("traffic",
                  "Run a traffic pattern (iperf3 flows) on a running lab: goodput per flow against "
                  "its fair share, ECMP balance, drops, latency under load");
    o.push_back(lab_positional());
    o.push_back(lab());
    // twin serve runs it as a job (POST /api/labs/{lab}/traffic) with these fields.
    o.push_back(
        api(with_default(value("--pattern", "all-to-all | ring | incast | pairs"), "all-to-all"),
            "pattern"));
    o.push_back(
        api(with_default(value("--duration", "each flow's test, whole seconds (1s..10m)"), "5s"),
            "duration"));
    o.push_back(api(ranged(with_default(value("--flows-per-pair",
                                              "parallel flows per pair (iperf3 -P; each its own "
                                              "source port, so ECMP may spread them)",
                                              Type::kInteger),
                                        "1"),
                           whole(1, 64)),
                    "flows_per_pair"));
    o.push_back(api(with_default(value("--protocol", "tcp | udp"), "tcp"), "protocol"));
    o.push_back(api(value("--rate",
                          "UDP: each flow's sending rate (100M, 1G; default: its source port's "
                          "rate, else 1G)"),
                    "rate"));
    o.push_back(
        api(value("--to", "incast: the receiving node (default: the first endpoint)"), "to"));
    o.push_back(api(ranged(with_default(value("--max-pairs",
                                              "refuse a pattern with more pairs (two iperf3 "
                                              "processes each)",
                                              Type::kInteger),
                                        "256"),
                           whole(1, 4096)),
                    "max_pairs"));
    o.push_back(json("print the report as JSON instead of text"));
    o.push_back(verbose("list every flow, not the five slowest"));
  }
  {
    auto& o =
        add("apply", "Replay a change set on a running lab: validate, diff, approve or roll back");
    o.push_back(value("change", "change set file (YAML)"));
    o.push_back(lab("lab name (default: the only running lab)"));
    o.push_back(value("--configs",
                      "apply rendered per-node configs from DIR (<node>.conf or <node>/frr.conf) "
                      "as the difference from each node's running config"));
    o.push_back(value("--run",
                      "gate a live orchestrator run instead of a change set: run COMMAND (through "
                      "/bin/sh, with TWIN_INVENTORY and TWIN_SSH_CONFIG set; the lab needs "
                      "`mgmt:`), then judge what it changed on every node (docs/management.md)"));
    o.push_back(with_default(value("--run-timeout",
                                   "with --run: stop the command after DURATION (a failed step, "
                                   "rolled back)"),
                             "10m"));
    o.push_back(value("--record",
                      "with --run: write what the run changed as a twin change set to FILE (one "
                      "frr replace step per node changed, configs in FILE's .configs folder)"));
    o.push_back(api(flag("--dry-run", "print the steps and configuration diffs; apply nothing"),
                    "dry_run"));
    gate_flags(o);
    o.push_back(api(flag("--restart-check",
                         "after an approval, restart the routing daemons of the nodes the change "
                         "touched from their saved config and require the same state back"),
                    "restart_check"));
  }
  {
    auto& o =
        add("run", "One-shot CI gate: up, baseline, apply a scenario's change, verdict, down");
    o.push_back(required(value("scenario", "scenario file (YAML)")));
    o.push_back(api(lab("lab name (default: the topology's; unique names let CI jobs share a "
                        "machine)",
                        true),
                    "name"));
    o.push_back(
        api(flag("--keep", "leave the lab up afterwards (twin down to remove it)"), "keep"));
    gate_flags(o);
    // The API's run takes the gate's what-if and rollback flags only.
    for (auto& x : o)
      if (x.api_field != "name" && x.api_field != "keep" && x.api_field != "revert" &&
          x.api_field != "no_rollback")
        x.api_field.clear();
    o.push_back(flag("--no-restart-check",
                     "skip the restart check after an approval (on by default; also "
                     "restart-check: false in the scenario)"));
  }
  {
    auto& o = add("drill",
                  "Fail one link or node at a time on a running lab: convergence, outage per "
                  "flow, pairs lost that the design keeps redundant; each restored and proven "
                  "before the next");
    o.push_back(lab_positional());
    o.push_back(lab());
    o.push_back(api(value("--links",
                          "links to fail: all, fabric (router to router), or a comma-separated "
                          "list of ends (leaf1:swp1) (default: all, when --nodes is not given)"),
                    "links"));
    o.push_back(api(
        value("--nodes", "routers whose routing daemons to stop: all, or a comma-separated list"),
        "nodes"));
    o.push_back(api(value("--max-convergence",
                          "an element whose failure takes longer than this to settle hurts (e.g. "
                          "3s; at least 500ms)"),
                    "max_convergence"));
    stream_flags(o,
                 "an element whose failure takes down a flow the design keeps connected for "
                 "longer than this hurts (at least 10 probe intervals)",
                 false);
    o.push_back(json("print the drill's report as JSON instead of text"));
    o.push_back(verbose("list every lost pair, failing test and cut-off pair"));
    o.push_back(junit());
    o.push_back(converge_timeout(kDrillConverge));
    o.back().api_field.clear();  // the API's drill runs with the default
  }
  t.push_back({"gen", "Generate topology files", {}, true});
  {
    auto& o = add("gen clos",
                  "A leaf-spine fabric (eBGP unnumbered), optionally 3-tier with super-spines");
    auto count = [](const char* names, const char* help, const char* def, double hi = 100000) {
      return ranged(with_default(value(names, help, Type::kInteger), def), whole(0, hi));
    };
    o.push_back(count("--spines", "spines (per pod)", "2"));
    o.push_back(count("--leaves", "leaves (per pod)", "4"));
    o.push_back(count("--servers-per-leaf", "servers behind each leaf", "0"));
    // The fabric is BGP unnumbered, over IPv6 link-local addresses: Linux removes IPv6 from a
    // port below 1280 bytes (RFC 8200 §5), so the range starts there.
    o.push_back(ranged(
        with_default(
            value("--mtu", "fabric link MTU in bytes (server links use 1500)", Type::kInteger),
            "9216"),
        whole(1280, kMaxMtu)));
    o.push_back(count("--super-spines", "super-spines joining the pods' spines (3-tier)", "0"));
    o.push_back(count("--pods", "pods (with --super-spines)", "1"));
    o.push_back(count("--tenants",
                      "EVPN tenants the servers are dealt to (one VXLAN network each; 0 = routed "
                      "servers)",
                      "0"));
    o.push_back(
        value("--fabric-rate", "fabric links' rate (`bandwidth:`, e.g. 200M; default unshaped)"));
    o.push_back(value("--server-rate", "server links' rate (e.g. 100M; default unshaped)"));
    o.push_back(with_default(value("--name", "lab name"), "clos"));
    o.push_back(value("-o,--output", "write to FILE instead of stdout"));
  }
  {
    auto& o = add("gen rail",
                  "A rail-optimised AI fabric: each server's NIC r on rail r's leaf, every rail "
                  "leaf to every spine");
    auto count = [](const char* names, const char* help, const char* def, double lo, double hi) {
      return ranged(with_default(value(names, help, Type::kInteger), def), whole(lo, hi));
    };
    o.push_back(count("--servers", "servers", "8", 2, 250));
    o.push_back(count("--rails", "NICs per server, one rail each", "4", 1, 16));
    o.push_back(count("--spines", "spines (every rail leaf links to each)", "2", 1, 64));
    o.push_back(count("--servers-per-leaf",
                      "servers per rail leaf (a group; a rail has one leaf per group)", "4", 1,
                      250));
    o.push_back(ranged(
        with_default(
            value("--mtu", "fabric link MTU in bytes (server links use 1500)", Type::kInteger),
            "9216"),
        whole(1280, kMaxMtu)));
    o.push_back(value("--fabric-rate", "fabric links' rate (e.g. 200M; default unshaped)"));
    o.push_back(value("--server-rate", "server links' rate (e.g. 100M; default unshaped)"));
    o.push_back(with_default(value("--name", "lab name"), "rail"));
    o.push_back(value("-o,--output", "write to FILE instead of stdout"));
  }
  {
    auto& o = add("convert", "Write a containerlab file (*.clab.yml) as a twin topology file");
    o.push_back(required(value("file", "containerlab topology file")));
    o.push_back(value("-o,--output",
                      "write to FILE instead of stdout (config paths become relative to its "
                      "folder)"));
    o.push_back(flag("--force", "overwrite FILE if it exists"));
    o.push_back(value("--name", "the lab's name in the output (default: the file's `name`)"));
    input_flags(o);
  }
  t.push_back({"exercise",
               "Troubleshooting exercises: a fabric with a hidden fault, a ticket, graded fixes",
               {},
               true});
  auto exercise = [&](const char* name, const char* help) -> std::vector<Option>& {
    auto& o = add(std::string("exercise ") + name, help);
    o.push_back(json("print the result as JSON"));
    return o;
  };
  {
    auto& o = exercise("list", "The course: every exercise with its level and time budget");
    o.push_back(value("--dir", kCourseDir));
    input_flags(o);
  }
  {
    auto& o = exercise("start",
                       "Bring the exercise's lab up (or reuse it), inject its fault, print the "
                       "ticket");
    o.push_back(required(value("exercise", "exercise name (see `twin exercise list`) or file")));
    o.push_back(
        lab("the lab's name (default: the topology's); one per trainee in a classroom", true));
    o.push_back(value("--dir", kCourseDir));
    input_flags(o);
  }
  for (auto [name, help] : std::vector<std::pair<const char*, const char*>>{
           {"status", "The running exercise: time, hints and checks used"},
           {"check", "Grade the lab: solved (exit 0), or the symptoms that remain (exit 1)"},
           {"hint", "The next hint (after the last one: what twin's likely-cause rules find)"},
           {"reset", "Back to the exercise's start: healthy lab, fault injected again"},
           {"stop", "Take the lab down and close the attempt (its record stays)"}})
    exercise(name, help).push_back(lab(kExerciseLab));
  {
    auto& o = exercise("solution", "The fault, its fix and why; --apply applies the fix");
    o.push_back(lab(kExerciseLab));
    o.push_back(flag(
        "--apply", "apply the fix (restoring the healthy lab where the fix alone is not enough)"));
  }
  {
    auto& o = exercise("results", "Every attempt recorded: time to solve, hints, checks");
    o.push_back(lab("only this lab's (trainee's) attempts"));
    o.push_back(value("--exercise", "only this exercise's attempts"));
    o.push_back(flag("--csv", "print CSV (for a spreadsheet) instead of a table"));
  }
  return t;
}

// Where the API appends a job's arguments in another order than the table's (the order the
// API always used; the job's argv is shown to API clients).
const std::map<std::string, std::vector<std::string>, std::less<>> kApiOrder = {
    {"apply",
     {"--no-probe-stream", "--probe-interval", "--converge-timeout", "--revert", "--no-rollback",
      "--dry-run", "--per-step", "--restart-check", "--allow-dirty-baseline", "--max-outage",
      "--traffic"}},
    {"run", {"--name", "--keep", "--revert", "--no-rollback"}},
};

const char* type_text(const Option& o) {
  switch (o.type) {
    case Type::kFlag:
    case Type::kNoFlag:
      return "flag";
    case Type::kString:
      return "text";
    case Type::kStrings:
      return "text, repeatable";
    case Type::kNumber:
      return "number";
    case Type::kInteger:
      return "integer";
  }
  return "";
}

std::string range_text(const Range& r) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g..%g", r.lo, r.hi);
  std::string s = buf;
  if (*r.unit) s += std::string(" ") + r.unit;
  return s;
}

// A table cell: `|` escaped.
std::string cell(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

std::string Option::long_name() const {
  std::string n = names;
  if (n.starts_with("!")) n.erase(0, 1);
  std::stringstream ss(n);
  std::string part, first;
  while (std::getline(ss, part, ',')) {
    if (first.empty()) first = part;
    if (part.starts_with("--")) return part;
  }
  return first;
}

const std::vector<Command>& commands() {
  static const std::vector<Command> t = build();
  return t;
}

const Command& command(std::string_view path) {
  for (const auto& c : commands())
    if (c.path == path) return c;
  throw std::out_of_range("no command '" + std::string(path) + "' in the command table");
}

const Option* find_option(const Command& c, std::string_view name) {
  for (const auto& o : c.options) {
    std::string n = o.names.starts_with("!") ? o.names.substr(1) : o.names;
    std::stringstream ss(n);
    std::string part;
    while (std::getline(ss, part, ','))
      if (part == name) return &o;
  }
  return nullptr;
}

std::vector<const Option*> api_options(std::string_view cmd) {
  const Command& c = command(cmd);
  std::vector<const Option*> out;
  if (auto it = kApiOrder.find(cmd); it != kApiOrder.end()) {
    for (const auto& n : it->second) {
      const Option* o = find_option(c, n);
      if (!o || o->api_field.empty())
        throw std::logic_error("api order of '" + std::string(cmd) + "' names " + n +
                               ", which the API does not take");
      out.push_back(o);
    }
    return out;
  }
  for (const auto& o : c.options)
    if (!o.api_field.empty()) out.push_back(&o);
  return out;
}

std::string markdown() {
  std::ostringstream m;
  m << "# Commands and options\n\n"
       "<!-- Generated from the command table (twin/options/table.cpp) by "
       "build/twin_cli_docs: do not edit; run `build/twin_cli_docs > docs/cli.md`. -->\n\n"
       "Every `twin` subcommand with its options, as `twin <command> --help` gives them. "
       "How to use them, with examples: [commands.md](commands.md). An option that twin "
       "serve's API takes names its request field (docs/serve.md).\n";
  for (const auto& c : commands()) {
    m << "\n## twin " << c.path << "\n\n" << c.help << ".\n";
    if (c.has_subcommands) continue;
    std::string positionals;
    for (const auto& o : c.options)
      if (o.positional() && !o.hidden)
        positionals += " " + std::string(o.required ? "" : "[") + o.long_name() +
                       (o.type == Type::kStrings ? "..." : "") + (o.required ? "" : "]");
    m << "\n```sh\ntwin " << c.path << " [options]" << positionals << "\n```\n";
    bool any = false;
    for (const auto& o : c.options) {
      if (o.hidden) continue;
      if (!any) m << "\n| option | type | default | help |\n|---|---|---|---|\n";
      any = true;
      std::string names = o.names.starts_with("!") ? o.names.substr(1) : o.names;
      std::string shown;
      std::stringstream ss(names);
      std::string part;
      while (std::getline(ss, part, ','))
        shown += (shown.empty() ? "" : ", ") + std::string("`") + part + "`";
      std::string type = type_text(o);
      if (o.range) type += " (" + range_text(*o.range) + ")";
      std::string def = o.default_value.empty() ? "" : "`" + o.default_value + "`";
      if (o.required) def = "required";
      std::string help = o.help;
      if (!o.api_field.empty()) help += " (API: `" + o.api_field + "`)";
      m << "| " << cell(shown) << " | " << cell(type) << " | " << cell(def) << " | " << cell(help)
        << " |\n";
    }
  }
  return m.str();
}

}  // namespace twin::options
