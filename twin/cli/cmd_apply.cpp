// twin apply / twin run: the rollout gate on a running lab, and the one-shot CI gate; twin
// drill, which watches a lab through the same machinery while it fails one element at a time.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <tuple>

#include "twin/changeset/changeset.hpp"
#include "twin/changeset/dry_run.hpp"
#include "twin/changeset/frr_checks.hpp"
#include "twin/cli/commands.hpp"
#include "twin/core/duration.hpp"
#include "twin/core/util.hpp"
#include "twin/drill/drill.hpp"
#include "twin/drivers/registry.hpp"
#include "twin/engine/images.hpp"
#include "twin/engine/lab.hpp"
#include "twin/gate/apply.hpp"
#include "twin/gate/scenario.hpp"
#include "twin/report/apply_report.hpp"
#include "twin/report/drill_report.hpp"
#include "twin/report/report.hpp"
#include "twin/runtime/frr_check.hpp"
#include "twin/state/state.hpp"
#include "twin/topology/loader.hpp"
#include "twin/topology/names.hpp"
#include "twin/validate/validator.hpp"
#include "validators/registry.hpp"

namespace fs = std::filesystem;

namespace twin::cli {

namespace {

std::function<void(const std::string&)> progress_printer() {
  auto start = Clock::now();
  return [start](const std::string& line) {
    // Lines name steps and nodes from the change file: escaped, like every quoted input.
    std::cerr << "twin: [" << static_cast<int>(ms_since(start)) << " ms] " << printable(line)
              << "\n";
  };
}

// Output paths are checked before anything runs: a CI job must not learn at the end that its
// report or evidence could not be written.
int check_outputs(const std::string& junit, const std::string& evidence) {
  if (!junit.empty()) {
    std::ofstream f(junit, std::ios::app);
    if (!f) return fail("cannot write JUnit report " + junit + ": " + std::strerror(errno), 3);
  }
  if (!evidence.empty()) {
    std::error_code ec;
    // A bundle mixing two runs would mislead an auditor: only a new or empty folder.
    if (fs::is_directory(evidence) && !fs::is_empty(evidence, ec))
      return fail("evidence folder " + evidence +
                      " is not empty; give a new folder so one bundle holds one decision",
                  3);
    fs::create_directories(evidence, ec);
    if (ec || !fs::is_directory(evidence))
      return fail("cannot create evidence folder " + evidence + ": " +
                      (ec ? ec.message() : std::string("not a directory")),
                  3);
  }
  return 0;
}

// Loads the change (file or --configs folder) and runs FRR's syntax check on it. Returns the
// exit code (2) after printing every problem, or 0.
// A CI job reads its report even when the change never ran: --json prints the problems as a
// document and --junit gets one error case per problem.
void emit_input_error(const Diagnostics& diags, const ApplyOptions& o, const std::string& lab) {
  if (o.json) {
    nlohmann::json j = {{"schema_version", 1},
                        {"verdict", "input-error"},
                        {"exit_code", 2},
                        {"diagnostics", diags.to_json()}};
    std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  }
  if (!o.junit.empty()) {
    validate::Report rep;
    rep.lab = lab;
    for (const auto& d : diags.items())
      rep.results.push_back(validate::make_result(
          "apply.input", 0, d.file + ":" + std::to_string(d.line) + ":" + std::to_string(d.column),
          validate::Status::kError, d.field, "", "", "",
          d.message + (d.hint.empty() ? "" : " (hint: " + d.hint + ")")));
    std::ofstream(o.junit) << report::render_junit(rep);
  }
}

// --traffic: the gate measures the lab's own pattern (its `traffic:`, else the defaults), as
// `intent: {traffic: true}` does, where the change (or scenario) asks for none of its own.
void ask_for_traffic(const ApplyOptions& o, const plan::Plan& plan, replay::ChangeSet& cs) {
  if (o.traffic && !cs.intent.traffic)
    cs.intent.traffic = plan.traffic.value_or(topology::TrafficSpec{});
}

int load_change(const std::string& file, const std::string& configs, const plan::Plan& plan,
                proc::ProcessRunner& runner, std::optional<replay::ChangeSet>* out,
                const ApplyOptions& o, const InputPolicy& policy) {
  Diagnostics diags;
  replay::ChangeSet partial;
  const std::vector<std::string> families = validators::family_names();  // check steps name them
  if (!configs.empty())
    *out = replay::change_set_from_configs(configs, plan, diags, &policy);
  else
    *out = replay::load_change_set(file, plan, diags, &partial, &policy, &families);
  // FRR's checks run on what could be parsed even when the file has other problems: every
  // problem is reported in one run.
  const replay::ChangeSet& checked = *out ? **out : partial;
  replay::check_against_lab(checked, plan, diags);
  if (auto r = replay::check_frr_syntax(checked, plan, drivers::driver_for, runner, diags); !r)
    return fail(r.error().message, exit_code(r.error()));
  if (std::any_of(checked.steps.begin(), checked.steps.end(),
                  [](const replay::Step& s) { return s.kind() == replay::StepKind::kImage; })) {
    auto present = engine::present_images(runner);
    if (!present) return fail(present.error().message, exit_code(present.error()));
    replay::check_images_present(checked, *present, diags);
  }
  std::cerr << diags.format_warnings();
  if (!diags.empty()) {
    std::cerr << diags.format();
    std::cerr << "twin: " << diags.items().size() << " problem"
              << (diags.items().size() == 1 ? "" : "s") << " in the change; nothing was applied\n";
    emit_input_error(diags, o, plan.lab);
    return 2;
  }
  return 0;
}

// A live orchestrator run as a change set of one `run` step, checked like any change (the lab
// needs a management network); `dir` is where the command runs. Returns 2 after printing the
// problems, or 0.
int load_run(const std::string& command, const std::string& timeout, const std::string& dir,
             const plan::Plan& plan, std::optional<replay::ChangeSet>* out, const ApplyOptions& o,
             const InputPolicy& policy) {
  const std::string text = "version: 1\nname: run\nsteps:\n  - name: run\n    run: {command: " +
                           nlohmann::json(command).dump() + ", timeout: " +
                           nlohmann::json(timeout).dump() + "}\n";
  Diagnostics diags;
  const std::vector<std::string> families = validators::family_names();
  *out = replay::load_change_set_text(text, "--run", dir, plan, diags, nullptr, &policy, &families);
  if (!*out) {
    std::cerr << diags.format();
    emit_input_error(diags, o, plan.lab);
    return 2;
  }
  (*out)->file.clear();  // no file: the command runs in `dir`
  return 0;
}

int emit(const replay::ApplyResult& r, const state::State& st, const replay::ChangeSet& cs,
         const ApplyOptions& o, nlohmann::json* extra,
         const report::ScenarioOutcome* scenario = nullptr) {
  const nlohmann::json more = extra ? *extra : nlohmann::json::object();
  // Streamed, never built as one tree (report::write_apply_json); stored as the CLI prints it
  // (the journal replaces invalid UTF-8 from a node's output).
  // A scenario's exit code is whether the gate decided as expected (run_scenario's `extra`).
  const int code = more.contains("exit_code") ? more["exit_code"].get<int>() : r.exit_code();
  record_event(st.lab, scenario || extra ? "run" : "apply",
               {{"verdict", report::apply_verdict(r)},
                {"exit_code", code},
                {"change", cs.name},
                {"scenario", scenario ? scenario->name : std::string()},
                {"source", "cli"}},
               [&](std::ostream& f) { report::write_apply_json(f, r, more, -1); });
  if (o.json) {
    report::write_apply_json(std::cout, r, more, 2);
    std::cout << "\n";
  } else {
    // The report quotes the change (step names, FRR lines, messages): escaped for a terminal.
    std::cout << printable(report::render_apply_text(r, o.verbose), true);
    if (scenario)
      std::cout << printable("SCENARIO " + scenario->name + ": " +
                             (scenario->met ? "the gate decided as expected (" +
                                                  scenario->expected_verdict + ")"
                                            : "UNEXPECTED — " + scenario->mismatch))
                << "\n";
  }
  if (!o.junit.empty()) {
    std::ofstream f(o.junit);
    f << report::render_apply_junit(r, scenario);
    if (!f) return fail("cannot write JUnit report " + o.junit, 3);
  }
  if (!o.evidence.empty())
    if (auto e = report::write_evidence(o.evidence, st, cs, r); !e)
      return fail(e.error().message, 3);
  return 0;
}

// The probe stream's options from the command line, and a scenario's budget when the command
// line gives none. Errors (exit 2): a malformed duration, a budget below kMinIntervalsPerBudget
// intervals, a budget without the stream.
template <class Flags>  // ApplyOptions, DrillOptions
std::optional<replay::OutageOptions> outage_options(const Flags& o,
                                                    const std::string& scenario_budget,
                                                    std::string* problem) {
  replay::OutageOptions out;
  out.enabled = !o.no_probe_stream;
  out.max_flows = o.probe_flows;
  DurationProblem dp;
  auto iv = parse_duration(o.probe_interval, &dp);
  if (!iv || iv->count() < 1 || iv->count() > 1000) {
    *problem = "--probe-interval '" + o.probe_interval + "': " +
               (iv ? std::string("expected 1ms to 1s (a coarser stream would send a handful of "
                                 "echoes over a change and measure nothing)")
                   : dp.message);
    return std::nullopt;
  }
  out.interval = *iv;
  const std::string& b = o.max_outage.empty() ? scenario_budget : o.max_outage;
  const char* what = o.max_outage.empty() ? "max-outage (scenario)" : "--max-outage";
  if (!b.empty()) {
    auto budget = parse_duration(b, &dp);
    if (!budget) {
      *problem = std::string(what) + " '" + b + "': " + dp.message;
      return std::nullopt;
    }
    if (budget->count() < replay::kMinIntervalsPerBudget * out.interval.count()) {
      *problem = std::string(what) + " " + b + " is below " +
                 std::to_string(replay::kMinIntervalsPerBudget) + " probe intervals (" +
                 std::to_string(replay::kMinIntervalsPerBudget * out.interval.count()) +
                 " ms): an outage that short cannot be told from a busy machine";
      return std::nullopt;
    }
    if (!out.enabled) {
      *problem = std::string(what) + " needs the probe stream; drop --no-probe-stream";
      return std::nullopt;
    }
    out.budget = *budget;
  }
  return out;
}

replay::ApplyOptions gate_options(const ApplyOptions& o) {
  replay::ApplyOptions ao;
  ao.no_rollback = o.no_rollback;
  ao.revert = o.revert;
  ao.per_step = o.per_step;
  ao.allow_dirty_baseline = o.allow_dirty_baseline;
  ao.restart_check = o.restart_check;
  ao.converge_timeout = std::chrono::milliseconds(static_cast<long>(o.converge_timeout_s * 1000));
  ao.progress = progress_printer();
  ao.validators = validators::make_validators;
  return ao;
}

// --record: what a live run changed, as a change set twin replays (`twin apply FILE`) and a
// reviewer reads: one frr replace step per node whose running config changed, its whole config
// after the run in FILE's .configs folder, the difference as a comment.
Result<void> record_run(const replay::ApplyResult& r, const std::string& file) {
  fs::path out(file);
  const fs::path parent = out.parent_path().empty() ? fs::path(".") : out.parent_path();
  if (!fs::is_directory(parent))
    return usage_error("--record " + file + ": folder " + parent.string() + " does not exist");
  const std::string configs = out.stem().string() + ".configs";
  const replay::RecordedChange rec = replay::record_change(r, configs);
  std::error_code ec;
  fs::create_directory(parent / configs, ec);
  if (ec) return harness_error("creating " + (parent / configs).string() + ": " + ec.message());
  // Configs may hold secrets (passwords, keys): readable by their owner only.
  const auto owner = fs::perms::owner_read | fs::perms::owner_write;
  for (const auto& [node, text] : rec.configs) {
    const fs::path p = parent / configs / (node + ".conf");
    if (auto w = write_file(p.string(), text); !w) return w;
    fs::permissions(p, owner, ec);
  }
  if (auto w = write_file(file, rec.yaml); !w) return w;
  fs::permissions(file, owner, ec);
  std::cerr << "twin: recorded the run as " << file << " (" << rec.configs.size() << " node"
            << (rec.configs.size() == 1 ? "" : "s") << " changed)\n";
  return {};
}

}  // namespace

int run_apply(const ApplyOptions& o) {
  if (o.no_rollback && o.revert)
    return fail_json(o.json, "--no-rollback and --revert contradict each other; choose one", 2);
  if (o.dry_run && (o.json || !o.junit.empty() || !o.evidence.empty() || o.per_step ||
                    o.no_rollback || o.revert || o.restart_check))
    return fail_json(
        o.json,
        "--dry-run prints the plan of the change as text and applies nothing; "
        "--json, --junit, --evidence, --per-step, --no-rollback, --revert and --restart-check "
        "are for a real run",
        2);
  const int given = !o.change.empty() + !o.configs.empty() + !o.run_command.empty();
  if (given != 1)
    return fail_json(o.json,
                     given == 0 ? "no change given: twin apply CHANGE.yaml, --configs DIR, or "
                                  "--run COMMAND"
                                : "give one of a change set file, --configs DIR and --run COMMAND",
                     2);
  if (o.run_command.empty() && !o.record.empty())
    return fail_json(o.json, "--record writes what a --run did; give --run COMMAND", 2);
  if (o.run_command.empty() && o.run_timeout != "10m")
    return fail_json(o.json,
                     "--run-timeout bounds a --run; a change set's run step takes `timeout:`", 2);
  std::string problem;
  auto outage = outage_options(o, "", &problem);
  if (!outage) return fail_json(o.json, problem, 2);
  auto policy = input_policy(o.inputs, {o.run_command.empty()
                                            ? (o.change.empty() ? o.configs : o.change)
                                            : fs::current_path().string()});
  if (!policy) return fail_json(o.json, policy.error().message, 2);
  auto st = state::load_lab(o.lab);
  if (!st) return fail_json(o.json, st.error().message, exit_code(st.error()));
  proc::SystemRunner runner;
  std::optional<replay::ChangeSet> cs;
  if (!o.run_command.empty()) {
    // A live run is a change set of one `run` step, checked like any other.
    DurationProblem why;
    if (!parse_duration(o.run_timeout, &why))
      return fail_json(o.json, "--run-timeout '" + o.run_timeout + "': " + why.message, 2);
    if (int c = load_run(o.run_command, o.run_timeout, fs::current_path().string(), st->plan, &cs,
                         o, *policy);
        c)
      return c;
  } else if (int c = load_change(o.change, o.configs, st->plan, runner, &cs, o, *policy); c) {
    return c;
  }
  ask_for_traffic(o, st->plan, *cs);
  if (o.dry_run) {
    auto text = replay::dry_run(*st, *cs, runner);
    if (!text) return fail_json(o.json, text.error().message, exit_code(text.error()));
    std::cout << printable(*text, true);  // quotes the change: escaped for a terminal
    return 0;
  }
  if (int c = check_outputs(o.junit, o.evidence); c) return c;
  auto ao = gate_options(o);
  ao.outage = *outage;
  auto r = replay::apply(*st, *cs, ao, runner);
  if (!r) return fail_json(o.json, r.error().message, exit_code(r.error()));
  if (!o.record.empty())
    if (auto w = record_run(*r, o.record); !w) return fail_json(o.json, w.error().message, 3);
  if (int c = emit(*r, *st, *cs, o, nullptr); c) return c;
  if (interrupted()) return 130;
  return r->exit_code();
}

int run_scenario(const RunOptions& ro) {
  const ApplyOptions& o = ro.apply;
  if (o.no_rollback && o.revert)
    return fail_json(o.json, "--no-rollback and --revert contradict each other; choose one", 2);
  if (o.dry_run)
    return fail_json(o.json, "twin run has no --dry-run; use twin apply --dry-run on a lab", 2);
  if (!ro.name.empty() && !topology::valid_lab_name(ro.name))
    return fail_json(o.json,
                     "invalid lab name '" + ro.name + "' (--name); expected 1-" +
                         std::to_string(topology::kMaxLabName) +
                         " of A-Z a-z 0-9 _ - starting with a letter or digit",
                     2);
  // One policy for the scenario and everything it leads to: its checkout root, --allow-path.
  auto policy = input_policy(o.inputs, {ro.scenario});
  if (!policy) return fail_json(o.json, policy.error().message, 2);
  Diagnostics diags;
  auto sc = replay::load_scenario(ro.scenario, diags, &*policy);
  std::optional<topology::Topology> topo;
  if (sc) topo = topology::load_topology(sc->topology, diags, ro.name, &*policy);
  proc::SystemRunner runner;
  if (topo)
    if (auto c = runtime::check_own_configs(*topo, runner, diags); !c)
      return fail_json(o.json, c.error().message, 3);
  std::cerr << diags.format_warnings();
  if (!diags.empty()) {
    std::cerr << diags.format();
    emit_input_error(diags, o, ro.name);
    return 2;
  }
  std::string problem;
  auto outage = outage_options(o, sc->max_outage, &problem);
  if (!outage) return fail_json(o.json, problem, 2);
  // Check the change against the plan before anything is created.
  plan::Plan plan = plan::make_plan(*topo, ro.name);
  std::optional<replay::ChangeSet> cs;
  if (!sc->change_run.empty()) {
    if (int c = load_run(sc->change_run, sc->change_run_timeout, sc->dir, plan, &cs, o, *policy); c)
      return c;
  } else if (int c = load_change(sc->change, "", plan, runner, &cs, o, *policy); c) {
    return c;
  }
  if (int c = check_outputs(o.junit, o.evidence); c) return c;
  if (sc->traffic && !cs->intent.traffic)
    cs->intent.traffic = sc->traffic_is_labs && plan.traffic ? plan.traffic : sc->traffic;
  ask_for_traffic(o, plan, *cs);

  auto progress = progress_printer();
  progress("scenario " + sc->name + ": bringing up lab " + plan.lab);
  engine::UpOptions uo;
  uo.name = ro.name;
  auto up = engine::up(plan, uo, runner, progress);  // the plan the change was checked against
  if (!up) return fail_json(o.json, up.error().message, exit_code(up.error()));
  int code = 0;
  auto finish = [&](int c) {
    if (ro.keep) {
      progress("lab " + plan.lab + " kept (--keep): twin down --lab " + plan.lab);
      return c;
    }
    progress("tearing down lab " + plan.lab);
    auto d = engine::down(plan.lab, runner);
    if (!d) return fail("teardown: " + d.error().message, 3);
    if (!d->problems.empty()) return fail("teardown left: " + d->problems.front(), 3);
    return c;
  };
  if (!up->converged) {
    std::cerr << "twin: lab did not converge; not judging the change\n";
    return finish(4);
  }
  auto st = state::load_state(plan.lab);
  if (!st) return finish(fail_json(o.json, st.error().message, 3));
  replay::ApplyOptions ao = gate_options(o);
  ao.per_step = ao.per_step || sc->per_step;
  // The CI gate: a latent fault missed here costs more than the seconds the check takes.
  ao.restart_check = sc->restart_check && !o.no_restart_check;
  ao.outage = *outage;
  ao.lab_outlives = ro.keep;
  auto r = replay::apply(*st, *cs, ao, runner);
  if (!r) return finish(fail_json(o.json, r.error().message, exit_code(r.error())));
  std::string verdict = report::apply_verdict(*r);
  const auto* first = r->verdict.reasons.empty() ? nullptr : &r->verdict.reasons.front();
  std::string why;
  bool has_expect = !sc->expect.verdict.empty();
  std::vector<std::string> messages;
  for (const auto& reason : r->verdict.reasons) {
    messages.push_back(reason.message);
    for (const auto& c : reason.causes) messages.push_back("likely cause: " + c.text);
  }
  bool met = has_expect &&
             replay::meets(sc->expect, verdict, first ? first->category : "",
                           first ? first->message : "", r->first_failing_step, &why, messages);
  code = r->exit_code();
  // The scenario states what the gate must decide: its exit code is whether it did.
  if (has_expect && code != 4 && code != 3) code = met ? 0 : 1;
  nlohmann::json extra = {{"scenario",
                           {{"name", sc->name},
                            {"file", sc->file},
                            {"expected_verdict", sc->expect.verdict},
                            {"expected_reason", sc->expect.reason},
                            {"met", has_expect ? nlohmann::json(met) : nlohmann::json(nullptr)},
                            {"mismatch", why}}},
                          {"exit_code", code}};
  report::ScenarioOutcome outcome{sc->name, sc->expect.verdict, sc->expect.reason, met, why};
  if (int c = emit(*r, *st, *cs, o, &extra, has_expect ? &outcome : nullptr); c) return finish(c);
  if (interrupted()) return finish(130);
  return finish(code);
}

int run_drill(const DrillOptions& o) {
  if (!std::isfinite(o.converge_timeout_s) || o.converge_timeout_s < 1 ||
      o.converge_timeout_s > 600)
    return fail(
        "--converge-timeout: expected 1 to 600 seconds (a failure and a restore each "
        "settle within it)",
        2);
  for (const auto& [given, value, flag] :
       {std::tuple{o.links_given, o.links, "--links"}, {o.nodes_given, o.nodes, "--nodes"}})
    if (given && trim(value).empty())
      return fail(std::string(flag) + " is empty; expected " +
                      (std::string(flag) == "--links" ? "all, fabric or a list of link ends"
                                                      : "all or a list of routers"),
                  2);
  std::string problem;
  auto outage = outage_options(o, "", &problem);
  if (!outage) return fail(problem, 2);
  replay::DrillOptions d;
  if (!o.max_convergence.empty()) {
    DurationProblem dp;
    auto mc = parse_duration(o.max_convergence, &dp);
    if (!mc) return fail("--max-convergence '" + o.max_convergence + "': " + dp.message, 2);
    // Convergence is measured by polling every 100 ms plus one observation of the lab.
    if (mc->count() < 500)
      return fail("--max-convergence " + o.max_convergence +
                      " is below 500 ms: convergence is measured to within a 100 ms poll plus "
                      "one observation of the lab, so a tighter budget would flap",
                  2);
    d.max_convergence = *mc;
  }
  auto st = state::load_lab(o.lab);
  if (!st) return fail(st.error().message, exit_code(st.error()));
  Diagnostics diags;
  auto elements = replay::drill_elements(st->plan, o.links, o.nodes, diags);
  if (!elements) {
    for (const auto& d : diags.items())
      std::cerr << "twin: "
                << printable(d.field + ": " + d.message +
                             (d.hint.empty() ? "" : " (hint: " + d.hint + ")"))
                << "\n";
    return 2;
  }
  if (elements->empty()) return fail("nothing to drill: the lab has no link or node selected", 2);
  if (int c = check_outputs(o.junit, ""); c) return c;
  d.elements = *elements;
  d.outage = *outage;
  d.converge_timeout = std::chrono::milliseconds(static_cast<long>(o.converge_timeout_s * 1000));
  d.progress = progress_printer();
  d.validators = validators::make_validators;
  proc::SystemRunner runner;
  auto r = replay::drill(*st, d, runner);
  if (!r) return fail(r.error().message, exit_code(r.error()));
  auto dj = report::drill_to_json(*r);
  record_event(st->lab, "drill", {{"exit_code", r->exit_code()}, {"source", "cli"}}, &dj);
  if (o.json)
    std::cout << dj.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  else
    std::cout << report::render_drill_text(*r, o.verbose);
  if (!o.junit.empty()) {
    std::ofstream f(o.junit);
    f << report::render_drill_junit(*r);
    if (!f) return fail("cannot write JUnit report " + o.junit, 3);
  }
  if (interrupted()) return 130;
  return r->exit_code();
}

}  // namespace twin::cli
