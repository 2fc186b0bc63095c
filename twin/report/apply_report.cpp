#include "twin/report/apply_report.hpp"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "twin/core/rate.hpp"
#include "twin/core/util.hpp"
#include "twin/report/report.hpp"
#include "twin/validate/validator.hpp"

namespace fs = std::filesystem;

namespace twin::report {

namespace {

std::string summary_of(const validate::Report& rep) {
  std::string v = verdict(rep);
  for (auto& c : v) c = static_cast<char>(std::toupper(c));
  return v + " (" + std::to_string(rep.results.size()) +
         " tests: " + std::to_string(rep.count(validate::Status::kPassed)) + " passed, " +
         std::to_string(rep.count(validate::Status::kFailed)) + " failed, " +
         std::to_string(rep.count(validate::Status::kError)) + " errors, " +
         std::to_string(rep.count(validate::Status::kSkipped)) + " skipped; " +
         seconds_text(rep.duration_ms) + ")";
}

void bad_results(std::ostringstream& o, const validate::Report& rep, size_t max) {
  size_t shown = 0, bad = 0;
  for (const auto& r : rep.results) {
    if (r.status != validate::Status::kFailed && r.status != validate::Status::kError) continue;
    ++bad;
    if (shown++ >= max) continue;
    o << "    [" << (r.status == validate::Status::kFailed ? "FAIL" : "ERROR") << "] "
      << r.validator << " " << r.test << " " << r.test_name << " " << r.node
      << (r.peer.empty() ? "" : " " + r.peer) << ": "
      << one_line(r.message.empty() ? "observed " + r.observed : r.message) << "\n";
  }
  if (bad > max) o << "    … " << bad - max << " more (--verbose, --json)\n";
}

validate::TestResult gate_case(const std::string& suite, int test, const std::string& name,
                               validate::Status st, const std::string& message, double ms) {
  auto t = validate::make_result(suite, test, name, st, "", "", "", "", message);
  t.duration_ms = ms;
  return t;
}

// The probe stream's flows: judged ones first, worst outage first; errors last.
std::vector<const runtime::FlowStats*> flows_by_outage(const replay::OutageReport& o) {
  std::vector<const runtime::FlowStats*> v;
  for (const auto& f : o.stats.flows) v.push_back(&f);
  std::stable_sort(v.begin(), v.end(), [&](const auto* a, const auto* b) {
    if (a->error.empty() != b->error.empty()) return a->error.empty();
    bool ja = !o.not_judged.count(a->name), jb = !o.not_judged.count(b->name);
    if (ja != jb) return ja;
    return a->longest_outage_ms > b->longest_outage_ms;
  });
  return v;
}

std::string flow_figures(const runtime::FlowStats& f) {
  if (!f.error.empty()) return "not measured: " + f.error;
  return std::to_string(static_cast<long>(std::lround(f.longest_outage_ms))) + " ms (lost " +
         std::to_string(f.lost) + " of " + std::to_string(f.sent) + " echoes)";
}

// "likely cause:" lines under a reason, with their evidence; says so when no rule matched.
// A cause already printed under an earlier reason is referred to, not repeated.
void render_causes(std::ostream& o, const replay::Reason& re, bool verbose,
                   std::set<std::string>& printed, const char* state = "the state after the change") {
  if (re.category == "validator-error") return;  // the harness could not tell: nothing to explain
  if (re.causes.empty()) {
    o << "     likely cause: none of twin's rules matches " << state << "\n";
    return;
  }
  size_t shown = 0;
  bool same = false;
  for (const auto& c : re.causes) {
    if (printed.count(c.text)) {
      same = true;
      continue;
    }
    if (!verbose && shown++ >= 3) {
      o << "     … more likely causes (--verbose, --json)\n";
      break;
    }
    printed.insert(c.text);
    o << "     likely cause: " << one_line(c.text) << "\n";
    for (const auto& e : c.evidence) o << "       evidence: " << one_line(e) << "\n";
  }
  if (same && shown == 0) o << "     likely cause: as above\n";
}


// The probe stream as JUnit suite apply.outage: one case per flow, failed over the budget,
// skipped where an endpoint is a node the change works on (measured, not judged).
void outage_cases(const replay::OutageReport& o, validate::Report& rep) {
  using validate::Status;
  for (const auto* f : flows_by_outage(o)) {
    bool judged = !o.not_judged.count(f->name);
    bool over = o.budget && judged && f->longest_outage_ms > static_cast<double>(o.budget->count());
    rep.results.push_back(gate_case(
        "apply.outage", 0, f->name,
        !f->error.empty() ? Status::kError
        : !judged         ? Status::kSkipped
        : over            ? Status::kFailed
                          : Status::kPassed,
        flow_figures(*f) + (judged ? "" : "; an endpoint the change works on: not judged"),
        f->longest_outage_ms));
  }
}

// A pattern's figures before and after ("slowest pair 45.9 Mbit/s -> 27.5 Mbit/s, aggregate
// ... -> ...") and its allowance in percent: the text and JUnit say them alike.
std::string bandwidth_figures(const replay::BandwidthDelta& b) {
  return "slowest pair " + human_rate(b.before.slowest_bps) + " -> " +
         human_rate(b.after.slowest_bps) + ", aggregate " + human_rate(b.before.aggregate_bps) +
         " -> " + human_rate(b.after.aggregate_bps);
}
std::string allowed_percent(const replay::BandwidthDelta& b) {
  return std::to_string(std::lround(100 * b.allowed_loss)) + " %";
}

// Bandwidth before and after as JUnit suite apply.bandwidth: one case per pattern, failed when
// lost (bandwidth-lost).
void bandwidth_cases(const replay::Diff& d, validate::Report& rep) {
  for (const auto& b : d.bandwidth)
    rep.results.push_back(
        gate_case("apply.bandwidth", 0, b.pattern,
                  b.lost ? validate::Status::kFailed : validate::Status::kPassed,
                  bandwidth_figures(b) + "; at most " + allowed_percent(b) + " lower allowed", 0));
}

// The restart check as one JUnit case of suite apply.restart.
validate::TestResult restart_case(const replay::RestartCheck& rc) {
  return gate_case("apply.restart", 0, "restart-check",
                   rc.ok ? validate::Status::kPassed : validate::Status::kFailed, rc.ok ? "" : rc.detail,
                   rc.duration_ms);
}

// One difference from the baseline; `judged` adds whether it was intended and its message.
nlohmann::json change_json(const replay::Change& c, bool judged) {
  nlohmann::json j = {{"category", c.category},
                      {"node", c.node},
                      {"subject", c.subject},
                      {"before", c.before},
                      {"after", c.after}};
  if (judged) {
    j["intended"] = c.intended;
    j["message"] = c.message;
  }
  if (!c.covering.empty()) j["more_specific_of"] = c.covering;
  if (!c.origin.empty()) j["origin"] = c.origin;
  return j;
}

}  // namespace

nlohmann::json causes_json(const std::vector<replay::Cause>& causes) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& c : causes)
    a.push_back({{"rule", c.rule}, {"cause", c.text}, {"evidence", c.evidence}, {"nodes", c.nodes}});
  return a;
}

nlohmann::json outage_to_json(const replay::OutageReport& out) {
  nlohmann::json flows = nlohmann::json::array();
  for (const auto* f : flows_by_outage(out))
    flows.push_back({{"name", f->name},
                     {"sent", f->sent},
                     {"lost", f->lost},
                     {"longest_outage_ms", f->longest_outage_ms},
                     {"outage_start_ms", f->outage_start_ms},
                     {"judged", !out.not_judged.count(f->name)},
                     {"error", f->error}});
  return {{"interval_ms", out.stats.interval.count()},
          {"duration_ms", out.stats.duration_ms},
          {"cpu_ms", out.stats.cpu_ms},
          {"max_send_gap_ms", out.stats.max_send_gap_ms},
          {"budget_ms", out.budget ? nlohmann::json(out.budget->count()) : nlohmann::json(nullptr)},
          {"detail", out.detail},
          {"flows", flows}};
}

std::string apply_verdict(const replay::ApplyResult& r) {
  if (r.stage == "baseline-failed" || r.stage == "baseline-unhealthy") return r.stage;
  return replay::to_string(r.verdict.decision);
}

std::string render_apply_text(const replay::ApplyResult& r, bool verbose) {
  std::ostringstream o;
  o << "twin apply — change " << r.change_name << " on lab " << r.lab << " (" << seconds_text(r.duration_ms)
    << ")\n";
  o << "baseline: " << summary_of(r.baseline.report) << "\n";
  if (r.stage == "baseline-failed" || r.stage == "baseline-unhealthy") {
    bad_results(o, r.baseline.report, verbose ? SIZE_MAX : 10);
    if (r.stage == "baseline-unhealthy")
      o << "VERDICT: BASELINE UNHEALTHY — something twin runs for the lab is not running, so "
           "the lab cannot be judged and the change was not applied (exit 5); bring the node "
           "back with `twin restart NODE --lab "
        << r.lab << "` (or `twin down` and `up`)\n";
    else
      o << "VERDICT: BASELINE FAILED — the lab did not pass before the change, so the change "
           "was not applied or judged (exit 4; --allow-dirty-baseline judges only what it "
           "makes worse)\n";
    // What was already wrong, and its likely causes, as a rejection lists its reasons.
    std::set<std::string> printed;
    for (size_t i = 0; i < r.verdict.reasons.size(); ++i) {
      const auto& re = r.verdict.reasons[i];
      o << "  " << i + 1 << ". [" << re.category << "] " << one_line(re.message) << "\n";
      render_causes(o, re, verbose, printed, "the lab's state");
    }
    return o.str();
  }
  o << "steps:\n";
  for (size_t i = 0; i < r.steps.size(); ++i) {
    const auto& s = r.steps[i];
    o << "  " << i + 1 << ". [" << s.status << "] " << one_line(s.name) << " (" << s.kind << ", "
      << static_cast<int>(s.duration_ms) << " ms)";
    if (!s.detail.empty()) o << " — " << one_line(s.detail);
    o << "\n";
    if (!s.text.empty()) {  // a run's per-node diffs and output: as they are, indented
      std::istringstream lines(s.text);
      for (std::string l; std::getline(lines, l);) o << "     | " << printable(l, true) << "\n";
    }
  }
  for (const auto& ph : r.per_step)
    o << "  validated " << ph.name << ": " << summary_of(ph.report) << "\n";
  if (!r.first_failing_step.empty())
    o << "first step that broke the network: " << r.first_failing_step << "\n";
  int unintended = 0, intended = 0;
  for (const auto& c : r.diff.changes) (c.intended ? intended : unintended)++;
  o << "difference from the baseline: " << unintended << " unintended, " << intended
    << " intended\n";
  size_t shown = 0;
  for (bool want_intended : {false, true})
    for (const auto& c : r.diff.changes) {
      if (c.intended != want_intended) continue;
      if (!verbose && shown >= 12) continue;
      ++shown;
      o << "  " << (c.intended ? "  " : "! ") << c.category << " " << c.node << " "
        << one_line(c.subject) << ": " << one_line(c.before) << " -> " << one_line(c.after)
        << (c.intended ? " (intended)" : "") << "\n";
    }
  if (!verbose && r.diff.changes.size() > shown)
    o << "  … " << r.diff.changes.size() - shown << " more (--verbose, --json)\n";
  for (const auto& b : r.diff.bandwidth)
    o << "bandwidth, " << b.pattern << ": " << bandwidth_figures(b)
      << (b.lost ? " (LOST: more than " + allowed_percent(b) + " below the baseline)"
                 : " (within the " + allowed_percent(b) + " allowed)")
      << "\n";
  if (r.after) {
    o << "after the change: " << summary_of(r.after->report) << "\n";
    bad_results(o, r.after->report, verbose ? SIZE_MAX : 8);
  }
  if (r.outage) {
    const auto& out = *r.outage;
    o << "traffic while the change ran: ";
    if (out.stats.flows.empty()) {
      o << "not measured (" << out.detail << ")\n";
    } else {
      int lossy = 0;
      for (const auto& f : out.stats.flows) lossy += f.error.empty() && f.lost > 0;
      o << out.stats.flows.size() << " flows, an echo every " << out.stats.interval.count()
        << " ms for " << seconds_text(out.stats.duration_ms) << "; "
        << (lossy == 0 ? std::string("no echo lost") : std::to_string(lossy) + " flows lost echoes")
        << (out.budget ? " (budget " + std::to_string(out.budget->count()) + " ms)" : "") << "\n";
      size_t shown = 0;
      for (const auto* f : flows_by_outage(out)) {
        if (f->error.empty() && f->lost == 0) continue;
        if (!verbose && shown++ >= 5) break;
        bool judged = !out.not_judged.count(f->name);
        o << "  "
          << (judged && out.budget &&
                      f->longest_outage_ms > static_cast<double>(out.budget->count())
                  ? "! "
                  : "  ")
          << f->name << ": " << flow_figures(*f)
          << (judged ? "" : " — an endpoint the change works on: not judged") << "\n";
      }
      if (!out.detail.empty()) o << "  (" << out.detail << ")\n";
    }
  }
  if (r.restart_check) {
    const auto& rc = *r.restart_check;
    o << "restart check: " << (rc.ok ? "passed" : "FAILED") << " (" << seconds_text(rc.duration_ms)
      << ") — " << one_line(rc.detail) << "\n";
    if (rc.phase) o << "  after the restart: " << summary_of(rc.phase->report) << "\n";
  }
  std::string v = replay::to_string(r.verdict.decision);
  for (auto& c : v) c = static_cast<char>(std::toupper(c));
  o << "VERDICT: " << v << " (after " << seconds_text(r.verdict_ms) << ")";
  if (r.verdict.decision == replay::Decision::kApprove)
    o << " — every validator passed and nothing was lost that the change did not intend"
      << (r.intent_saved ? "; the lab's intended state now includes this change" : "");
  o << "\n";
  if (!r.early_reject.empty())
    o << "  decided without waiting for the network to settle: " << one_line(r.early_reject)
      << " (a failure waiting cannot mend)\n";
  if (!r.configs_saved.empty()) {
    o << "  saved as startup config (a restart boots into the change):";
    for (const auto& n : r.configs_saved) o << " " << n;
    o << "\n";
  }
  std::set<std::string> printed;
  for (size_t i = 0; i < r.verdict.reasons.size(); ++i) {
    const auto& re = r.verdict.reasons[i];
    o << "  " << i + 1 << ". [" << re.category << "] " << one_line(re.message)
      << (re.step.empty() || re.category == "step-failed" ? "" : " (step '" + re.step + "')")
      << "\n";
    render_causes(o, re, verbose, printed);
  }
  if (r.rolled_back && r.verdict.decision == replay::Decision::kApprove) {
    o << "REVERTED (--revert): "
      << (r.rollback_ok ? "the lab is back at its baseline"
                        : "FAILED — the lab is NOT back at its baseline")
      << " (" << one_line(r.rollback_detail) << ")\n";
  } else if (r.rolled_back) {
    o << "ROLLBACK: "
      << (r.rollback_ok ? "done and proven — the lab is back at its baseline"
                        : "FAILED — the lab is NOT back at its baseline")
      << " (" << one_line(r.rollback_detail) << ")\n";
    if (r.rollback) o << "  re-validation: " << summary_of(r.rollback->report) << "\n";
  } else if (r.verdict.decision != replay::Decision::kApprove) {
    o << "ROLLBACK: not done (--no-rollback): the lab keeps the change for inspection\n";
  }
  if (!r.notes.empty()) {
    o << "notes (" << r.notes.size() << "):\n";
    for (const auto& n : r.notes) o << "  " << one_line(to_text(n)) << "\n";
  }
  return o.str();
}

namespace {

// Where apply_json puts the validation reports: their trees inline (slots null), or a marker
// string per report that write_apply_json replaces with the report streamed.
constexpr const char* kReportMarker = "\x01twin-report:";

nlohmann::json report_slot(const validate::Report& rep,
                           std::vector<const validate::Report*>* slots) {
  if (!slots) return to_json(rep);
  slots->push_back(&rep);
  return std::string(kReportMarker) + std::to_string(slots->size() - 1);
}

// Writes through to `sink`, `pad` after every newline: a report streamed where its marker stood
// gets the marker line's indentation on every line after its first.
class IndentBuf : public std::streambuf {
 public:
  IndentBuf(std::ostream& sink, std::string pad) : sink_(sink), pad_(std::move(pad)) {}

 protected:
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    std::streamsize from = 0;
    for (std::streamsize i = 0; i < n; ++i)
      if (s[i] == '\n') {
        sink_.write(s + from, i + 1 - from);
        sink_ << pad_;
        from = i + 1;
      }
    sink_.write(s + from, n - from);
    return n;
  }
  int_type overflow(int_type c) override {
    if (c == traits_type::eof()) return traits_type::not_eof(c);
    char ch = traits_type::to_char_type(c);
    xsputn(&ch, 1);
    return c;
  }

 private:
  std::ostream& sink_;
  std::string pad_;
};

nlohmann::json apply_json(const replay::ApplyResult& r,
                          std::vector<const validate::Report*>* slots) {
  nlohmann::json j;
  j["schema_version"] = 1;
  j["lab"] = r.lab;
  j["change"] = {{"name", r.change_name},
                 {"file", r.change_file},
                 {"sha256", r.change_file.empty() ? "" : replay::sha256_file(r.change_file)}};
  j["stage"] = r.stage;
  j["notes"] = r.notes;
  j["verdict"] = apply_verdict(r);
  j["exit_code"] = r.exit_code();
  j["started_at"] = r.started_at;
  j["duration_ms"] = r.duration_ms;
  j["reasons"] = nlohmann::json::array();
  for (const auto& re : r.verdict.reasons)
    j["reasons"].push_back(
        {{"rank", re.rank},
         {"category", re.category},
         {"step", re.step},
         {"message", re.message},
         {"subjects", re.subjects},
         {"cause", re.causes.empty() ? nlohmann::json(nullptr) : nlohmann::json(re.causes[0].text)},
         {"evidence", re.causes.empty() ? nlohmann::json::array() : nlohmann::json(re.causes[0].evidence)},
         {"causes", causes_json(re.causes)}});
  j["steps"] = nlohmann::json::array();
  for (const auto& s : r.steps)
    j["steps"].push_back({{"name", s.name},
                          {"kind", s.kind},
                          {"status", s.status},
                          {"detail", s.detail},
                          {"text", s.text},
                          {"duration_ms", s.duration_ms}});
  j["first_failing_step"] = r.first_failing_step;
  j["early_reject"] = r.early_reject;
  j["verdict_ms"] = r.verdict_ms;
  j["diff"] = nlohmann::json::array();
  for (const auto& c : r.diff.changes) j["diff"].push_back(change_json(c, true));
  j["bandwidth"] = nlohmann::json::array();
  for (const auto& b : r.diff.bandwidth)
    j["bandwidth"].push_back({{"pattern", b.pattern},
                              {"before", bandwidth_json(b.before)},
                              {"after", bandwidth_json(b.after)},
                              {"allowed_loss", b.allowed_loss},
                              {"lost", b.lost}});
  j["baseline"] = report_slot(r.baseline.report, slots);
  j["after"] = r.after ? report_slot(r.after->report, slots) : nlohmann::json(nullptr);
  j["rollback"] = r.rollback ? report_slot(r.rollback->report, slots) : nlohmann::json(nullptr);
  j["per_step"] = nlohmann::json::array();
  for (const auto& ph : r.per_step)
    j["per_step"].push_back({{"name", ph.name}, {"report", report_slot(ph.report, slots)}});
  j["rollback_diff"] = nlohmann::json::array();
  for (const auto& c : r.rollback_diff.changes) j["rollback_diff"].push_back(change_json(c, false));
  if (r.restart_check) {
    const auto& rc = *r.restart_check;
    nlohmann::json diff = nlohmann::json::array();
    for (const auto& c : rc.diff.changes) diff.push_back(change_json(c, true));
    j["restart_check"] = {{"nodes", rc.nodes},
                          {"daemons", rc.daemons},
                          {"ok", rc.ok},
                          {"detail", rc.detail},
                          {"duration_ms", rc.duration_ms},
                          {"report", rc.phase ? report_slot(rc.phase->report, slots)
                                               : nlohmann::json(nullptr)},
                          {"diff", diff}};
  } else {
    j["restart_check"] = nullptr;
  }
  j["configs_saved"] = r.configs_saved;
  j["outage"] = r.outage ? outage_to_json(*r.outage) : nlohmann::json(nullptr);
  j["rollback_ran"] = r.rolled_back;
  j["rollback_ok"] = r.rollback_ok;
  j["rollback_rung"] = r.rollback_rung;
  j["rollback_detail"] = r.rollback_detail;
  j["intent_saved"] = r.intent_saved;
  return j;
}

}  // namespace

nlohmann::json apply_to_json(const replay::ApplyResult& r) { return apply_json(r, nullptr); }

void write_apply_json(std::ostream& out, const replay::ApplyResult& r,
                      const nlohmann::json& extra, int indent) {
  std::vector<const validate::Report*> slots;
  nlohmann::json head = apply_json(r, &slots);
  if (extra.is_object()) head.update(extra);
  const std::string text = head.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
  // A marker is dumped as a string: "\u0001twin-report:N" (the control character escaped).
  const std::string open = "\"\\u0001twin-report:";
  size_t from = 0;
  for (size_t at; (at = text.find(open, from)) != std::string::npos;) {
    size_t close = text.find('"', at + open.size());
    size_t n = std::stoul(text.substr(at + open.size(), close - at - open.size()));
    out.write(text.data() + from, static_cast<std::streamsize>(at - from));
    size_t line = text.rfind('\n', at);
    line = line == std::string::npos ? 0 : line + 1;
    size_t depth = text.find_first_not_of(' ', line) - line;
    if (indent < 0 || depth == 0) {
      write_json(out, *slots.at(n), indent, nlohmann::json::object());
    } else {
      IndentBuf buf(out, std::string(depth, ' '));
      std::ostream indented(&buf);
      write_json(indented, *slots.at(n), indent, nlohmann::json::object());
    }
    from = close + 1;
  }
  out.write(text.data() + from, static_cast<std::streamsize>(text.size() - from));
}

validate::Report run_junit(const std::string& lab, const std::string& started_at,
                           double duration_ms, const validate::Report& baseline,
                           const std::string& suite, const std::string& baseline_failed) {
  validate::Report rep;
  rep.lab = lab;
  rep.twin_version = baseline.twin_version;
  rep.started_at = started_at;
  rep.duration_ms = duration_ms;
  if (baseline_failed.empty()) return rep;
  rep.results.push_back(gate_case(suite + ".baseline", 0, "baseline", validate::Status::kError,
                                  baseline_failed, baseline.duration_ms));
  for (const auto& t : baseline.results) rep.results.push_back(t);
  return rep;
}

std::string render_apply_junit(const replay::ApplyResult& r, const ScenarioOutcome* scenario) {
  const bool failed = r.stage == "baseline-failed" || r.stage == "baseline-unhealthy";
  validate::Report rep = run_junit(r.lab, r.started_at, r.duration_ms, r.baseline.report, "apply",
                                   !failed ? ""
                                   : r.stage == "baseline-unhealthy"
                                       ? "a daemon twin runs for the lab is not running: not judged"
                                       : "the lab failed validation before the change: not judged");
  if (failed) return render_junit(rep);
  using validate::Status;
  for (size_t i = 0; i < r.steps.size(); ++i) {
    const auto& s = r.steps[i];
    Status st = s.status == "applied"                         ? Status::kPassed
                : s.status == "failed" || s.status == "broke" ? Status::kFailed
                                                              : Status::kSkipped;
    if (scenario && scenario->met && s.status == "broke") st = Status::kPassed;  // as expected
    rep.results.push_back(
        gate_case("apply.steps", static_cast<int>(i + 1), s.name, st, s.detail, s.duration_ms));
  }
  if (scenario) {
    // A scenario states what the gate must decide: a seeded fault that is rejected as expected
    // is a passing test, so the verdict suite holds the expectation, not the reasons.
    std::string name = "expect " + scenario->expected_verdict +
                       (scenario->expected_reason.empty() ? "" : " " + scenario->expected_reason);
    std::string got = apply_verdict(r);
    if (!r.verdict.reasons.empty()) got += " (" + r.verdict.reasons.front().message + ")";
    rep.results.push_back(gate_case(
        "scenario." + scenario->name, 0, name, scenario->met ? Status::kPassed : Status::kFailed,
        scenario->met ? "" : scenario->mismatch + "; got " + got, r.duration_ms));
    if (r.restart_check) rep.results.push_back(restart_case(*r.restart_check));
    if (r.outage) outage_cases(*r.outage, rep);
    bandwidth_cases(r.diff, rep);
    if (r.rolled_back)
      rep.results.push_back(gate_case(
          "apply.rollback", 0, "rollback", r.rollback_ok ? Status::kPassed : Status::kFailed,
          r.rollback_detail, r.rollback ? r.rollback->report.duration_ms : 0));
    return render_junit(rep);
  }
  if (r.verdict.reasons.empty())
    rep.results.push_back(gate_case("apply.verdict", 0, "approve", Status::kPassed, "", 0));
  for (const auto& re : r.verdict.reasons)
    rep.results.push_back(gate_case(
        "apply.verdict", re.rank, re.category,
        re.category == "validator-error" ? Status::kError : Status::kFailed,
        re.message +
            (re.step.empty() || re.category == "step-failed" ? "" : " (step '" + re.step + "')"),
        0));
  if (r.restart_check) rep.results.push_back(restart_case(*r.restart_check));
  if (r.outage) outage_cases(*r.outage, rep);
  bandwidth_cases(r.diff, rep);
  if (r.rolled_back)
    rep.results.push_back(gate_case(
        "apply.rollback", 0, "rollback", r.rollback_ok ? Status::kPassed : Status::kFailed,
        r.rollback_detail, r.rollback ? r.rollback->report.duration_ms : 0));
  if (r.after)
    for (const auto& t : r.after->report.results) rep.results.push_back(t);
  return render_junit(rep);
}

Result<void> write_evidence(const std::string& dir, const state::State& st,
                            const replay::ChangeSet& cs, const replay::ApplyResult& r) {
  std::error_code ec;
  fs::create_directories(fs::path(dir) / "nodes", ec);
  if (ec) return harness_error("cannot create evidence folder " + dir + ": " + ec.message());
  nlohmann::json hashes;
  auto copy = [&](const std::string& src, const std::string& name) {
    if (src.empty() || !fs::exists(src)) return;
    fs::copy_file(src, fs::path(dir) / name, fs::copy_options::overwrite_existing, ec);
    hashes["files"][name] = {{"path", src}, {"sha256", replay::sha256_file(src)}};
  };
  copy(st.plan.topology_file, "topology.yaml");
  copy(cs.file, "change.yaml");
  for (size_t i = 0; i < cs.steps.size(); ++i) {
    const auto& s = cs.steps[i];
    if (s.kind() == replay::StepKind::kFrr && !s.frr().replace.empty())
      copy(s.frr().replace,
           "step" + std::to_string(i + 1) + "-" + fs::path(s.frr().replace).filename().string());
    if (s.kind() == replay::StepKind::kTopology)
      copy(s.topology().file, "step" + std::to_string(i + 1) + "-topology.yaml");
  }
  for (const auto& [node, before] : r.config_before) {
    fs::path nd = fs::path(dir) / "nodes" / node;
    fs::create_directories(nd, ec);
    auto it = r.config_after.find(node);
    const std::string& after = it == r.config_after.end() ? before : it->second;
    (void)write_file((nd / "before.conf").string(), before);
    (void)write_file((nd / "after.conf").string(), after);
    hashes["configs"][node] = {{"before_sha256", replay::sha256_hex(before)},
                               {"after_sha256", replay::sha256_hex(after)},
                               {"changed", before != after}};
  }
  hashes["twin_version"] = TWIN_VERSION;
  auto write_phase = [&](const replay::Phase& ph, const std::string& name) {
    std::ofstream f(fs::path(dir) / (name + "-probes.jsonl"));
    for (const auto& p : ph.probes)
      f << nlohmann::json{{"node", p.node},
                          {"command", p.command},
                          {"duration_ms", p.duration_ms},
                          {"output", p.output}}
               .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
        << "\n";
    std::ofstream(fs::path(dir) / (name + ".json")) << to_json(ph.report).dump(2) << "\n";
  };
  write_phase(r.baseline, "baseline");
  if (r.after) write_phase(*r.after, "after");
  if (r.restart_check && r.restart_check->phase)
    write_phase(*r.restart_check->phase, "after-restart");
  if (r.rollback) write_phase(*r.rollback, "rollback");
  for (size_t i = 0; i < r.per_step.size(); ++i)
    write_phase(r.per_step[i], "step" + std::to_string(i + 1));
  nlohmann::json diff = nlohmann::json::array();
  for (const auto& c : r.diff.changes) diff.push_back(change_json(c, true));
  std::ofstream(fs::path(dir) / "diff.json") << diff.dump(2) << "\n";
  {
    std::ofstream verdict(fs::path(dir) / "verdict.json");
    write_apply_json(verdict, r, nlohmann::json::object(), 2);
    verdict << "\n";
  }
  std::ofstream(fs::path(dir) / "report.xml") << render_apply_junit(r);
  std::ofstream(fs::path(dir) / "report.txt") << render_apply_text(r, true);
  std::ofstream f(fs::path(dir) / "hashes.json");
  f << hashes.dump(2) << "\n";
  if (!f) return harness_error("cannot write evidence into " + dir);
  return {};
}

}  // namespace twin::report
