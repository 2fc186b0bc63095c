// The command line: every subcommand and option (app.hpp).
#include "twin/cli/app.hpp"

#include <cstdio>

#include "twin/core/diagnostics.hpp"
#include "twin/core/duration.hpp"
#include "twin/core/util.hpp"
#include "validators/registry.hpp"

namespace twin::cli {
namespace {
// A number option's range, checked on its text before CLI11 converts it (core/duration.hpp,
// number_problem): `--timeout 1e308` is refused with readable bounds instead of overflowing a
// duration.
CLI::Validator range(double lo, double hi, const char* unit = "", bool integer = false) {
  twin::NumberRange r{lo, hi, integer, unit};
  char desc[64];
  std::snprintf(desc, sizeof desc, "%.10g..%.10g", lo, hi);
  return CLI::Validator([r](std::string& s) { return twin::number_problem(s, r); }, desc);
}
CLI::Validator whole(double lo, double hi) { return range(lo, hi, "", true); }

// Which host files a command's inputs may name (docs/commands.md, "Which files inputs may name").
void input_flags(CLI::App* c, twin::cli::InputOptions& in) {
  c->add_option("--allow-path", in.allow_paths,
                "also let the inputs name files under DIR (repeatable); by default only under "
                "the input's checkout root (its nearest folder with .git, else its own folder)")
      ->type_name("DIR")
      ->allow_extra_args(false);
  // twin serve's jobs: the request's folder is the only root.
  c->add_option("--input-root", in.input_root)->group("");
}
}  // namespace

Cli::Cli()
    : app{"twin — digital twin of a data-center network: FRR nodes in network namespaces, "
          "validated end to end"} {
  app.set_version_flag("--version", std::string("twin ") + TWIN_VERSION);
  app.require_subcommand(1);

  auto* p = app.add_subcommand("plan", "Dry run: print what `up` would create");
  p->add_option("file", plan.file, "topology file")->required();
  p->add_option("--name,--lab", plan.name, "lab name (overrides the file's `name`)");
  p->add_flag("--json", plan.json, "print the plan as JSON");
  input_flags(p, plan.inputs);
  p->callback([&] { code = twin::cli::run_plan(plan); });

  auto* u = app.add_subcommand("up",
                               "Create the lab: namespaces, links, FRR daemons; wait for its BGP "
                               "sessions and OSPF adjacencies");
  u->add_option("file", up.file, "topology file")->required();
  u->add_option("--name,--lab", up.name,
                "lab name (overrides the file's `name`; lets CI jobs run "
                "the same topology in parallel)");
  u->add_flag("--keep-on-failure", up.keep_on_failure, "leave a half-built lab for inspection");
  u->add_flag("--no-wait", up.no_wait, "return once daemons run, without waiting for BGP");
  auto* up_timeout =
      u->add_option("--timeout", up.timeout_s,
                    "seconds for the whole bring-up, convergence included (with VMs: at least "
                    "their longest ready-timeout + 120 unless given)")
          ->capture_default_str()
          ->check(range(1, 86400, "seconds"));
  u->add_option("--converge-timeout", up.converge_timeout_s,
                "seconds to wait for every BGP session to be Established")
      ->capture_default_str()
      ->check(range(0, 3600, "seconds"));
  u->add_option("--parallel", up.parallel, "nodes started at once")
      ->capture_default_str()
      ->check(whole(1, 64));
  u->add_option("--libvirt-uri", up.libvirt_uri,
                "libvirt connection for VM nodes (default: $TWIN_LIBVIRT_URI or qemu:///system)");
  u->add_flag("--json", up.json, "print the summary as JSON");
  input_flags(u, up.inputs);
  u->callback([this, up_timeout] {
    up.timeout_explicit = up_timeout->count() > 0;
    code = twin::cli::run_up(up);
  });

  auto* d = app.add_subcommand("down", "Remove everything the lab's state file records");
  d->add_option("lab", down.lab, "lab name (default: the only running lab)");
  d->add_option("--lab", down.lab, "lab name");
  d->add_flag("--all", down.all, "remove every running lab");
  d->add_flag("--json", down.json, "print what was removed as JSON");
  d->callback([&] { code = twin::cli::run_down(down); });

  auto* s = app.add_subcommand("status", "Nodes, daemons and PIDs, links with state and MTU");
  s->add_option("lab", status.lab, "lab name (default: the only running lab)");
  s->add_option("--lab", status.lab, "lab name");
  s->add_flag("--json", status.json, "print JSON");
  s->callback([&] { code = twin::cli::run_status(status); });

  auto* rs = app.add_subcommand(
      "restart", "Bring a node (or one of its daemons) back from its startup config");
  rs->add_option("node", restart.node, "node to restart")->required();
  rs->add_option("--lab", restart.lab, "lab name (default: the only running lab)");
  rs->add_option("--daemon", restart.daemon,
                 "restart only this daemon (e.g. bgpd); the others keep running");
  rs->add_flag("--no-wait", restart.no_wait, "do not wait for the lab's sessions to be back");
  rs->add_option("--converge-timeout", restart.converge_timeout_s,
                 "seconds to wait for sessions Established / adjacencies Full")
      ->check(CLI::Range(0.0, 3600.0));
  rs->add_flag("--json", restart.json, "print JSON");
  rs->callback([&] { code = twin::cli::run_restart(restart); });

  auto* l = app.add_subcommand("list", "Running labs");
  l->add_flag("--json", list_json, "print JSON");
  l->callback([&] { code = twin::cli::run_list(list_json); });

  auto* e = app.add_subcommand("exec",
                               "Run a command inside a node (a plain `vtysh` reaches that "
                               "node's FRR)");
  e->add_option("--lab", exec.lab, "lab name");
  e->add_option("node", exec.node, "node name")->required();
  e->add_option("command", exec.command, "command after --")->required();
  e->callback([&] { code = twin::cli::run_exec(exec); });

  auto* sh = app.add_subcommand("shell", "Interactive shell inside a node");
  sh->add_option("--lab", shell.lab, "lab name");
  sh->add_option("node", shell.node, "node name")->required();
  sh->callback([&] { code = twin::cli::run_exec(shell); });

  auto* con = app.add_subcommand(
      "console",
      "Attach to a VM node's serial console (Ctrl-] leaves); piped input is sent and "
      "the output printed");
  con->add_option("--lab", console.lab, "lab name");
  con->add_option("node", console.node, "VM node name")->required();
  con->add_flag("--log", console.log, "print the console log (everything since boot) and exit");
  con->add_option("--quiet", console.quiet_s,
                  "with piped input: seconds without output after which to stop")
      ->capture_default_str()
      ->check(range(0.1, 3600, "seconds"));
  con->callback([&] { code = twin::cli::run_console(console); });

  auto* gr = app.add_subcommand(
      "graph",
      "Draw a topology file or a running lab (live: link and session state, failing tests)");
  gr->add_option("target", graph.target,
                 "topology file, or lab name (default: the only running lab)");
  gr->add_option("--lab", graph.target, "lab name");
  gr->add_option("--format,-f", graph.format, "dot | svg | mermaid | json")->capture_default_str();
  gr->add_option("--output,-o", graph.output, "write to FILE instead of standard output");
  gr->add_flag("--no-live", graph.no_live, "a running lab's plan only, without reading its state");
  input_flags(gr, graph.inputs);
  gr->callback([&] { code = twin::cli::run_graph(graph); });

  auto* ev = app.add_subcommand(
      "events",
      "Follow a lab: link up/down, session and daemon changes, validation and gate results");
  ev->add_option("lab", events.lab, "lab name (default: the only running lab)");
  ev->add_option("--lab", events.lab, "lab name");
  ev->add_flag("--json", events.json, "one JSON object per line");
  ev->add_flag("--history", events.history, "print the lab's recorded history first");
  ev->add_option("--interval", events.interval_s, "seconds between two looks at the lab")
      ->capture_default_str()
      ->check(range(0.1, 60, "seconds"));
  ev->add_option("--count", events.count, "stop after N events (0: follow until Ctrl-C)")
      ->check(whole(0, 1e6));
  ev->callback([&] { code = twin::cli::run_events(events); });

  auto* se = app.add_subcommand(
      "serve", "REST API, event stream and web page for labs (loopback unless given a token)");
  se->add_option("--listen", serve.listen, "ADDRESS:PORT to listen on")->capture_default_str();
  se->add_option("--token-file", serve.token_file,
                 "file holding the token that requests changing a lab and terminals must carry "
                 "(required for a non-loopback address; default: a new random one)");
  se->add_flag("--no-token", serve.no_token,
               "loopback only: no token, so any local user can change labs and open root "
               "terminals (by default a token is made and printed)")
      ->excludes(se->get_option("--token-file"));
  se->add_option("--web-dir", serve.web_dir,
                 "folder of the web page (default: the repository's web/)");
  se->callback([&] { code = twin::cli::run_serve(serve); });

  auto* hi = app.add_subcommand(
      "history", "What was done to a lab (up, validate, apply, run, drill, down), also after down");
  hi->add_option("lab", history.lab, "lab name (default: the only running lab)");
  hi->add_option("--lab", history.lab, "lab name");
  hi->add_option("--kind", history.kind, "only events of this kind (validate, apply, run, ...)");
  hi->add_option("--limit", history.limit, "the newest N events")->check(whole(0, 1e6));
  hi->add_flag("--json", history.json, "print JSON");
  hi->callback([&] { code = twin::cli::run_history(history); });

  auto* v = app.add_subcommand("validate", "Run validators and print a verdict");
  v->add_option("lab", val.lab, "lab name (default: the only running lab)");
  v->add_option("--lab", val.lab, "lab name");
  v->add_flag("--json", val.json, "print the report as JSON instead of text");
  v->add_flag("--verbose,-v", val.verbose, "list every test and subject");
  v->add_option("--junit", val.junit, "also write a JUnit XML report to FILE");
  v->add_option(
      "--only", val.only,
      "comma-separated validator families: " + twin::join_names(twin::validators::family_names()));
  v->add_option("--artifacts", val.artifacts, "keep probes, FRR logs and node state in DIR");
  v->add_flag("!--no-causes", val.causes,
              "when tests fail, skip the likely-cause rules (they read every node's state once)");
  v->add_option("--converge-timeout", val.converge_timeout_s,
                "seconds a failing test is retried before it counts as failed")
      ->capture_default_str()
      ->check(range(0, 3600, "seconds"));
  v->add_option("--max-pairs", val.max_pairs,
                "probe at most N node pairs per family (evenly sampled); 0 = every pair")
      ->capture_default_str()
      ->check(whole(0, 1e7));
  v->add_option("--parallel", val.parallel, "nodes probed at once")
      ->capture_default_str()
      ->check(whole(1, 256));
  v->callback([&] { code = twin::cli::run_validate(val); });

  // The probe stream's flags, shared by apply, run and drill (`max_outage_help` says what a
  // budget does there).
  auto stream_flags = [](CLI::App* c, auto& a, const std::string& max_outage_help) {
    c->add_option("--max-outage", a.max_outage, max_outage_help);
    c->add_option("--probe-interval", a.probe_interval,
                  "time between two echoes of one flow of the probe stream")
        ->capture_default_str();
    c->add_option("--probe-flows", a.probe_flows,
                  "flows the probe stream measures at most (server pairs first, then sampled "
                  "loopback pairs)")
        ->capture_default_str()
        ->check(whole(1, 4096));
    c->add_flag("--no-probe-stream", a.no_probe_stream, "do not measure traffic");
  };
  auto gate_flags = [&stream_flags](CLI::App* c, twin::cli::ApplyOptions& a) {
    c->add_flag("--json", a.json, "print the gate's report as JSON instead of text");
    c->add_flag("--verbose,-v", a.verbose, "list every difference and failure");
    c->add_option("--junit", a.junit, "also write a JUnit XML report to FILE");
    c->add_option("--evidence", a.evidence,
                  "write the evidence bundle (hashes, configs before/after, every probe, the "
                  "diff, the verdict) into DIR");
    c->add_flag("--no-rollback", a.no_rollback, "leave a rejected change in place for inspection");
    c->add_flag("--revert", a.revert,
                "what-if run: restore the baseline after an approval too (the lab keeps its "
                "state)");
    c->add_flag("--per-step", a.per_step,
                "validate after every step and name the first step that breaks the network");
    c->add_flag("--allow-dirty-baseline", a.allow_dirty_baseline,
                "judge a change on a lab that already fails: only what it makes worse counts");
    stream_flags(c, a,
                 "reject when a flow of the probe stream loses traffic for longer than this "
                 "while the change runs (e.g. 500ms; at least 10 probe intervals)");
    c->add_option("--converge-timeout", a.converge_timeout_s,
                  "seconds a failing test is retried before it counts as failed")
        ->capture_default_str()
        ->check(range(0, 3600, "seconds"));
    input_flags(c, a.inputs);
  };
  auto* a = app.add_subcommand(
      "apply", "Replay a change set on a running lab: validate, diff, approve or roll back");
  a->add_option("change", apply.change, "change set file (YAML)");
  a->add_option("--lab", apply.lab, "lab name (default: the only running lab)");
  a->add_option("--configs", apply.configs,
                "apply rendered per-node configs from DIR (<node>.conf or <node>/frr.conf) as "
                "the difference from each node's running config");
  a->add_flag("--dry-run", apply.dry_run, "print the steps and configuration diffs; apply nothing");
  gate_flags(a, apply);
  a->add_flag("--restart-check", apply.restart_check,
              "after an approval, restart the routing daemons of the nodes the change touched "
              "from their saved config and require the same state back");
  a->callback([&] { code = twin::cli::run_apply(apply); });

  auto* r = app.add_subcommand(
      "run", "One-shot CI gate: up, baseline, apply a scenario's change, verdict, down");
  r->add_option("scenario", run.scenario, "scenario file (YAML)")->required();
  r->add_option("--name,--lab", run.name,
                "lab name (default: the topology's; unique names let CI "
                "jobs share a machine)");
  r->add_flag("--keep", run.keep, "leave the lab up afterwards (twin down to remove it)");
  gate_flags(r, run.apply);
  r->add_flag("--no-restart-check", run.apply.no_restart_check,
              "skip the restart check after an approval (on by default; also restart-check: "
              "false in the scenario)");
  r->callback([&] { code = twin::cli::run_scenario(run); });

  auto* dr = app.add_subcommand(
      "drill",
      "Fail one link or node at a time on a running lab: convergence, outage per flow, pairs "
      "lost that the design keeps redundant; each restored and proven before the next");
  dr->add_option("lab", drill.lab, "lab name (default: the only running lab)");
  dr->add_option("--lab", drill.lab, "lab name");
  dr->add_option("--links", drill.links,
                 "links to fail: all, fabric (router to router), or a comma-separated list of "
                 "ends (leaf1:swp1) (default: all, when --nodes is not given)");
  dr->add_option("--nodes", drill.nodes,
                 "routers whose routing daemons to stop: all, or a comma-separated list");
  dr->add_option("--max-convergence", drill.max_convergence,
                 "an element whose failure takes longer than this to settle hurts (e.g. 3s; "
                 "at least 500ms)");
  stream_flags(dr, drill,
               "an element whose failure takes down a flow the design keeps connected for "
               "longer than this hurts (at least 10 probe intervals)");
  dr->add_flag("--json", drill.json, "print the drill's report as JSON instead of text");
  dr->add_flag("--verbose,-v", drill.verbose,
               "list every lost pair, failing test and cut-off pair");
  dr->add_option("--junit", drill.junit, "also write a JUnit XML report to FILE");
  dr->add_option("--converge-timeout", drill.converge_timeout_s,
                 "seconds to wait for the network to settle after each failure and restore "
                 "(1 to 600)")
      ->capture_default_str()
      ->check(range(1, 600, "seconds"));
  dr->callback([this, dr] {
    // Given but empty is a mistake (an unset shell variable), not "the default".
    drill.links_given = dr->count("--links") > 0;
    drill.nodes_given = dr->count("--nodes") > 0;
    code = twin::cli::run_drill(drill);
  });

  auto* g = app.add_subcommand("gen", "Generate topology files");
  g->require_subcommand(1);
  auto* gc = g->add_subcommand(
      "clos", "A leaf-spine fabric (eBGP unnumbered), optionally 3-tier with super-spines");
  gc->add_option("--spines", gen.spines, "spines (per pod)")
      ->capture_default_str()
      ->check(whole(0, 100000));
  gc->add_option("--leaves", gen.leaves, "leaves (per pod)")
      ->capture_default_str()
      ->check(whole(0, 100000));
  gc->add_option("--servers-per-leaf", gen.servers_per_leaf, "servers behind each leaf")
      ->capture_default_str()
      ->check(whole(0, 100000));
  gc->add_option("--mtu", gen.mtu, "fabric link MTU in bytes (server links use 1500)")
      ->capture_default_str()
      ->check(whole(0, 1000000));
  gc->add_option("--super-spines", gen.super_spines,
                 "super-spines joining the pods' spines (3-tier)")
      ->capture_default_str()
      ->check(whole(0, 100000));
  gc->add_option("--pods", gen.pods, "pods (with --super-spines)")
      ->capture_default_str()
      ->check(whole(0, 100000));
  gc->add_option("--tenants", gen.tenants,
                 "EVPN tenants the servers are dealt to (one VXLAN network each; 0 = routed "
                 "servers)")
      ->capture_default_str()
      ->check(whole(0, 100000));
  gc->add_option("--name", gen.name, "lab name")->capture_default_str();
  gc->add_option("-o,--output", gen.output, "write to FILE instead of stdout");
  gc->callback([&] { code = twin::cli::run_gen_clos(gen); });

  auto* cv = app.add_subcommand("convert",
                                "Write a containerlab file (*.clab.yml) as a twin topology file");
  cv->add_option("file", conv.file, "containerlab topology file")->required();
  cv->add_option("-o,--output", conv.output,
                 "write to FILE instead of stdout (config paths become relative to its folder)");
  cv->add_flag("--force", conv.force, "overwrite FILE if it exists");
  cv->add_option("--name", conv.name, "the lab's name in the output (default: the file's `name`)");
  input_flags(cv, conv.inputs);
  cv->callback([&] { code = twin::cli::run_convert(conv); });

  auto* ex = app.add_subcommand(
      "exercise",
      "Troubleshooting exercises: a fabric with a hidden fault, a ticket, graded fixes");
  ex->require_subcommand(1);
  auto exercise_action = [&](const char* name, const char* help) {
    auto* c = ex->add_subcommand(name, help);
    c->add_flag("--json", exo.json, "print the result as JSON");
    c->callback([&, name] {
      exo.action = name;
      code = twin::cli::run_exercise(exo);
    });
    return c;
  };
  auto* exl = exercise_action("list", "The course: every exercise with its level and time budget");
  exl->add_option("--dir", exo.dir,
                  "course folder (default: the repository's scenarios/exercises)");
  input_flags(exl, exo.inputs);
  auto* exs = exercise_action("start",
                              "Bring the exercise's lab up (or reuse it), inject its fault, print "
                              "the ticket");
  exs->add_option("exercise", exo.exercise, "exercise name (see `twin exercise list`) or file")
      ->required();
  exs->add_option("--name,--lab", exo.lab,
                  "the lab's name (default: the topology's); one per trainee in a classroom");
  exs->add_option("--dir", exo.dir,
                  "course folder (default: the repository's scenarios/exercises)");
  input_flags(exs, exo.inputs);
  for (auto [name, help] : std::vector<std::pair<const char*, const char*>>{
           {"status", "The running exercise: time, hints and checks used"},
           {"check", "Grade the lab: solved (exit 0), or the symptoms that remain (exit 1)"},
           {"hint", "The next hint (after the last one: what twin's likely-cause rules find)"},
           {"reset", "Back to the exercise's start: healthy lab, fault injected again"},
           {"stop", "Take the lab down and close the attempt (its record stays)"}}) {
    auto* c = exercise_action(name, help);
    c->add_option("--lab", exo.lab, "the exercise's lab (default: the only one running)");
  }
  auto* exo_sol =
      exercise_action("solution", "The fault, its fix and why; --apply applies the fix");
  exo_sol->add_option("--lab", exo.lab, "the exercise's lab (default: the only one running)");
  exo_sol->add_flag("--apply", exo.apply,
                    "apply the fix (restoring the healthy lab where the fix alone is not enough)");
  auto* exr = exercise_action("results", "Every attempt recorded: time to solve, hints, checks");
  exr->add_option("--lab", exo.lab, "only this lab's (trainee's) attempts");
  exr->add_option("--exercise", exo.exercise, "only this exercise's attempts");
  exr->add_flag("--csv", exo.csv, "print CSV (for a spreadsheet) instead of a table");
}

}  // namespace twin::cli
