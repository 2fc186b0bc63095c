// twin validate: run the validator families against a running lab and print a verdict.
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "twin/causes/causes.hpp"
#include "twin/cli/commands.hpp"
#include "twin/core/util.hpp"
#include "twin/drivers/registry.hpp"
#include "twin/plan/images.hpp"
#include "twin/report/apply_report.hpp"
#include "twin/report/report.hpp"
#include "twin/runtime/frr.hpp"
#include "twin/runtime/frr_config.hpp"
#include "twin/state/state.hpp"
#include "twin/validate/runner.hpp"
#include "twin/validate/system_probe.hpp"
#include "validators/registry.hpp"

namespace fs = std::filesystem;

namespace twin::cli {

namespace {

std::vector<std::string> split_csv(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string part;
  while (std::getline(ss, part, ','))
    if (!part.empty()) out.push_back(part);
  return out;
}

// What a failing CI job needs after `down`: every probe, FRR logs and configs, node state.
void write_artifacts(const std::string& dir, const state::State& st,
                     const validate::SystemProbe& probe, const validate::Report& report,
                     proc::ProcessRunner& runner) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    std::cerr << "twin: cannot create artifacts folder " << dir << ": " << ec.message() << "\n";
    return;
  }
  {
    std::ofstream f(fs::path(dir) / "probes.jsonl");
    for (const auto& r : probe.records())
      f << nlohmann::json{{"node", r.node},
                          {"command", r.command},
                          {"duration_ms", r.duration_ms},
                          {"output", r.output}}
               .dump()
        << "\n";
  }
  std::ofstream(fs::path(dir) / "report.json") << report::to_json(report).dump(2) << "\n";
  std::ofstream(fs::path(dir) / "report.xml") << report::render_junit(report);
  if (auto text = read_file(state::state_path(st.lab)))
    std::ofstream(fs::path(dir) / "state.json") << *text;
  for (const auto& n : st.plan.nodes) {
    fs::path nd = fs::path(dir) / n.name;
    fs::create_directories(nd, ec);
    for (const auto& e : fs::directory_iterator(n.run_dir, ec)) {
      auto ext = e.path().extension();
      if (ext == ".log" || ext == ".conf")
        fs::copy_file(e.path(), nd / e.path().filename(), fs::copy_options::overwrite_existing, ec);
    }
    for (const auto& [file, args] : std::vector<std::pair<std::string, std::vector<std::string>>>{
             {"ip-addr.json", {"addr", "show"}},
             {"ip-route.json", {"route", "show"}},
             {"ip6-route.json", {"-6", "route", "show"}},
             {"ip-link.json", {"-s", "link", "show"}}}) {
      // Where the node's driver reads them (a VM's console log is copied above with the logs).
      auto j = drivers::driver_for(n).artifact_ip_json(n, args, runner);
      std::ofstream(nd / file) << (j ? j->dump(2) : "error: " + j.error().message) << "\n";
    }
    if (n.kind == topology::NodeKind::kFrr) {
      // Through the node's own vtysh settings: its config folder and its name, never this
      // machine's vtysh.conf and hostname.
      proc::Command c =
          runtime::vtysh_command(n,
                                 {"-c", "show running-config", "-c", "show bgp summary", "-c",
                                  "show ip route", "-c", "show ipv6 route"},
                                 std::chrono::seconds(10));
      auto r = runner.run(c);
      std::ofstream(nd / "frr-show.txt") << (r ? r->out + r->err : r.error().message);
    }
  }
}

}  // namespace

int run_validate(const ValidateOptions& o) {
  auto st = state::load_lab(o.lab);
  if (!st) return fail_json(o.json, st.error().message, exit_code(st.error()));
  std::vector<std::string> unknown;
  auto validators = validators::make_validators(split_csv(o.only), &unknown);
  if (!unknown.empty()) {
    std::string names;
    for (const auto& n : validators::family_names()) names += (names.empty() ? "" : ", ") + n;
    return fail_json(o.json, "unknown validator '" + unknown[0] + "'; expected one of: " + names,
                     2);
  }
  // Output paths are checked before validating: a CI job must not learn at the end that its
  // report or evidence could not be written.
  if (!o.junit.empty()) {
    std::ofstream f(o.junit, std::ios::app);
    if (!f)
      return fail_json(o.json, "cannot write JUnit report " + o.junit + ": " + std::strerror(errno),
                       3);
  }
  if (!o.artifacts.empty()) {
    std::error_code ec;
    fs::create_directories(o.artifacts, ec);
    if (ec || !fs::is_directory(o.artifacts))
      return fail_json(o.json,
                       "cannot create artifacts folder " + o.artifacts + ": " +
                           (ec ? ec.message() : std::string("not a directory")),
                       3);
  }
  proc::SystemRunner runner;
  validate::SystemProbe probe(runner, {},
                              o.artifacts.empty() ? validate::SystemProbe::Evidence::kDiscard
                                                  : validate::SystemProbe::Evidence::kKeep);
  validate::Context ctx{st->plan, probe, o.parallel, o.max_pairs};
  validate::RunOptions ro;
  ro.converge_timeout = std::chrono::milliseconds(static_cast<long>(o.converge_timeout_s * 1000));
  auto start = Clock::now();
  ro.progress = [&](const std::string& line) {
    std::cerr << "twin: [" << static_cast<int>(ms_since(start)) << " ms] " << line << "\n";
  };
  std::string started = now_rfc3339();
  validate::Report report = validate::run_validation(ctx, validators, ro);
  report.started_at = started;
  report.twin_version = TWIN_VERSION;
  {
    InterruptShield shield;  // a Ctrl-C that ended the run early must not blank the header
    // Every release in the lab: container nodes run their images' (plan::frr_versions).
    report.frr_version = plan::frr_versions(st->plan, runtime::frr_version(runner));
  }
  report.kernel_version = kernel_release();

  // What failed, explained by the gate's likely-cause rules over the lab's state now: the same
  // one-line causes with evidence a rejected change gets.
  std::vector<replay::Cause> causes;
  bool failing = report.count(validate::Status::kFailed) + report.count(validate::Status::kError) > 0;
  if (o.causes && failing && !interrupted()) {
    ro.progress("looking for likely causes");
    auto facts = replay::gather_cause_facts(
        st->plan, probe, [](const plan::Node& n) -> const drivers::NodeDriver& { return drivers::driver_for(n); },
        runner, {}, o.parallel);
    facts.after = &report;
    causes = replay::likely_causes(st->plan, facts);
  }
  // Written one result at a time, never as one tree: 512 nodes give ~1.8 million results.
  nlohmann::json extra = nlohmann::json::object();
  // Ctrl-C cut the convergence window short: tests still retrying show as failed, so the record
  // says the run was interrupted and carries the exit code the command returns; no causes were
  // looked for then.
  const bool stopped = interrupted();
  const bool with_causes = o.causes && failing && !stopped;
  if (with_causes) extra["likely_causes"] = report::causes_json(causes);
  if (stopped) extra["interrupted"] = true;
  nlohmann::json fields{{"exit_code", stopped ? 130 : report.exit_code()},
                        {"passed", report.count(validate::Status::kPassed)},
                        {"failed", report.count(validate::Status::kFailed)},
                        {"errors", report.count(validate::Status::kError)},
                        {"duration_ms", report.duration_ms},
                        {"source", "cli"}};
  if (stopped) fields["interrupted"] = true;
  record_event(st->lab, "validate", fields,
               [&](std::ostream& out) { report::write_json(out, report, -1, extra); });
  if (o.json) {
    report::write_json(std::cout, report, 2, extra);
    std::cout << "\n";
  }
  else {
    std::cout << report::render_text(report, o.verbose);
    if (stopped)
      std::cout << "INTERRUPTED: the run was stopped early; tests that were still retrying show "
                   "as failed (exit 130)\n";
    if (with_causes) {
      std::cout << (causes.empty() ? "likely causes: no rule matched what failed\n" : "likely causes:\n");
      for (const auto& c : causes) {
        std::cout << "  - " << c.text << "\n";
        for (const auto& e : c.evidence) std::cout << "      " << e << "\n";
      }
    }
  }
  if (!o.junit.empty()) {
    std::ofstream f(o.junit);
    f << report::render_junit(report);
    if (!f) return fail("cannot write JUnit report " + o.junit, 3);
  }
  if (!o.artifacts.empty()) write_artifacts(o.artifacts, *st, probe, report, runner);
  if (stopped) return 130;
  return report.exit_code();
}

}  // namespace twin::cli
