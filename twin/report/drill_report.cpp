#include "twin/report/drill_report.hpp"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

#include "twin/core/util.hpp"
#include "twin/report/apply_report.hpp"
#include "twin/report/report.hpp"
#include "twin/validate/validator.hpp"

namespace twin::report {

namespace {

std::string pad(std::string s, size_t w) {
  if (s.size() < w) s.append(w - s.size(), ' ');
  return s;
}
std::string lpad(const std::string& s, size_t w) {
  return s.size() < w ? std::string(w - s.size(), ' ') + s : s;
}

std::string label(const replay::DrillOutcome& o) {
  return std::string(o.element.kind_name()) + " " + o.element.name();
}

const replay::DrillOutcome* slowest(const replay::DrillResult& r) {
  const replay::DrillOutcome* s = nullptr;
  for (const auto& o : r.elements)
    if (o.converged && (!s || o.convergence_ms > s->convergence_ms)) s = &o;
  return s;
}
const replay::DrillOutcome* worst_outage(const replay::DrillResult& r) {
  const replay::DrillOutcome* s = nullptr;
  for (const auto& o : r.elements)
    if (!o.worst_flow.empty() && (!s || o.worst_outage_ms > s->worst_outage_ms)) s = &o;
  return s;
}

}  // namespace

std::string render_drill_text(const replay::DrillResult& r, bool verbose) {
  std::ostringstream o;
  o << "twin drill: lab " << r.lab << "\n";
  if (r.stage == "baseline-failed" || r.stage == "baseline-unhealthy") {
    o << (r.stage == "baseline-unhealthy"
              ? "baseline: UNHEALTHY — something twin runs for the lab is not running; nothing "
                "was failed (exit 5; `twin restart NODE` brings a node back)\n"
              : "baseline: FAIL — the lab does not pass validation; nothing was failed (fix it "
                "first, see twin validate)\n");
    for (const auto& re : r.baseline_verdict.reasons)
      o << "  " << re.rank << ". " << re.category << ": " << one_line(re.message) << "\n";
    return o.str();
  }
  o << "baseline: PASS (" << r.baseline.report.results.size() << " tests)\n\n";
  size_t w = 7;
  for (const auto& e : r.elements) w = std::max(w, label(e).size());
  o << pad("element", w) << "  " << lpad("converged", 9) << "  " << lpad("worst outage", 12)
    << "  " << pad("on flow", 46) << "  " << lpad("pairs lost", 10) << "  " << lpad("cut off", 7)
    << "  " << lpad("restored", 8) << "  status\n";
  for (const auto& e : r.elements) {
    std::string conv = e.converged ? ms_text(e.convergence_ms) : "no";
    std::string worst = e.outage.stats.flows.empty() ? "-" : ms_text(e.worst_outage_ms);
    std::string flow = e.worst_flow.empty() || e.worst_outage_ms == 0 ? "" : e.worst_flow;
    // A flow out until the stream stopped never came back: its outage is the window, not a
    // measured length.
    for (const auto& f : e.outage.stats.flows)
      if (f.name == e.worst_flow && f.lost > 0 &&
          f.outage_start_ms + f.longest_outage_ms >=
              e.outage.stats.duration_ms - static_cast<double>(e.outage.stats.interval.count()))
        flow += " (not back)";
    o << pad(label(e), w) << "  " << lpad(conv, 9) << "  " << lpad(worst, 12) << "  "
      << pad(flow, 46) << "  " << lpad(std::to_string(e.pairs_lost.size()), 10) << "  "
      << lpad(std::to_string(e.cut_off.size()), 7) << "  "
      << lpad(e.restored ? ms_text(e.restore_ms) : "NO", 8) << "  " << e.status << "\n";
  }
  bool any = false;
  for (const auto& e : r.elements) {
    if (e.findings.empty()) continue;
    if (!any) o << "\nfindings:\n";
    any = true;
    o << "  " << label(e) << " (" << e.status << ")\n";
    for (const auto& f : e.findings) o << "    - " << one_line(f) << "\n";
    for (const auto& c : e.causes) {
      o << "      likely cause: " << one_line(c.text) << "\n";
      for (const auto& ev : c.evidence) o << "        evidence: " << one_line(ev) << "\n";
    }
    if (e.status == "hurt" && e.causes.empty() && (!e.pairs_lost.empty() || !e.failing.empty()))
      o << "      likely cause: none of twin's rules matches the state with it failed\n";
    if (verbose) {
      for (const auto& p : e.pairs_lost) o << "      lost: " << p << "\n";
      for (const auto& f : e.failing) o << "      failing: " << one_line(f) << "\n";
    }
  }
  if (verbose)
    for (const auto& e : r.elements)
      for (const auto& p : e.cut_off) o << "  " << label(e) << ": cut off by design: " << p << "\n";
  o << "\n";
  int errors = 0;
  for (const auto& e : r.elements) errors += e.status == "error";
  o << r.elements.size() << " of " << r.planned << " element(s) drilled in " << seconds_text(r.duration_ms)
    << ": " << r.hurt() << " hurt, " << errors << " error(s)";
  if (const auto* s = slowest(r)) o << "; slowest convergence " << ms_text(s->convergence_ms) << " (" << label(*s) << ")";
  if (const auto* s = worst_outage(r))
    o << "; worst outage " << ms_text(s->worst_outage_ms) << " (" << label(*s) << ": " << s->worst_flow << ")";
  o << "\n";
  double resolution = 0;
  for (const auto& e : r.elements) resolution = std::max(resolution, e.resolution_ms);
  if (!r.elements.empty())
    o << "converged: from the failure until the network held still at the state the design "
         "expects, to within "
      << ms_text(resolution) << " (a 100 ms poll plus one observation of the lab)"
      << (r.max_convergence
              ? "; budget " + ms_text(static_cast<double>(r.max_convergence->count()))
              : std::string())
      << "\n";
  if (r.max_outage)
    o << "worst outage: over the flows the design keeps connected while the element was down; "
         "budget "
      << ms_text(static_cast<double>(r.max_outage->count())) << "\n";
  if (r.stage == "stopped")
    o << "STOPPED: the last element could not be restored to the baseline; the lab is not as it "
         "was (twin validate shows how; twin down and up rebuilds it)\n";
  if (r.hurt() == 0 && errors == 0 && r.stage == "drilled")
    o << "every single failure drilled left the fabric as designed\n";
  return o.str();
}

nlohmann::json drill_to_json(const replay::DrillResult& r) {
  using nlohmann::json;
  json j = {{"schema_version", 1},
            {"lab", r.lab},
            {"started_at", r.started_at},
            {"duration_ms", r.duration_ms},
            {"stage", r.stage},
            {"exit_code", r.exit_code()},
            {"max_convergence_ms",
             r.max_convergence ? json(r.max_convergence->count()) : json(nullptr)},
            {"max_outage_ms", r.max_outage ? json(r.max_outage->count()) : json(nullptr)},
            {"baseline", to_json(r.baseline.report)}};
  if (r.stage == "baseline-failed" || r.stage == "baseline-unhealthy") {
    json reasons = json::array();
    for (const auto& re : r.baseline_verdict.reasons)
      reasons.push_back({{"rank", re.rank},
                         {"category", re.category},
                         {"message", re.message},
                         {"subjects", re.subjects}});
    j["baseline_reasons"] = reasons;
  }
  json elements = json::array();
  int errors = 0;
  for (const auto& e : r.elements) {
    errors += e.status == "error";
    elements.push_back(
        {{"kind", e.element.kind_name()},
         {"name", e.element.name()},
         {"status", e.status},
         {"findings", e.findings},
         {"convergence_ms", e.convergence_ms},
         {"convergence_resolution_ms", e.resolution_ms},
         {"converged", e.converged},
         {"settle_detail", e.settle_detail},
         {"worst_outage_ms", e.worst_outage_ms},
         {"worst_flow", e.worst_flow},
         {"pairs_lost", e.pairs_lost},
         {"cut_off", e.cut_off},
         {"failing", e.failing},
         {"causes", causes_json(e.causes)},
         {"outage", outage_to_json(e.outage)},
         {"degraded", e.degraded ? to_json(e.degraded->report) : json(nullptr)},
         {"restore",
          {{"ok", e.restored},
           {"ms", e.restore_ms},
           {"detail", e.restore_detail},
           {"outage", outage_to_json(e.restore_outage)},
           {"report", e.restore ? to_json(e.restore->report) : json(nullptr)}}},
         {"duration_ms", e.duration_ms}});
  }
  j["elements"] = elements;
  json summary = {{"planned", r.planned},
                  {"drilled", r.elements.size()},
                  {"hurt", r.hurt()},
                  {"errors", errors},
                  {"slowest", nullptr},
                  {"worst_outage", nullptr}};
  if (const auto* s = slowest(r))
    summary["slowest"] = {{"element", label(*s)}, {"convergence_ms", s->convergence_ms}};
  if (const auto* s = worst_outage(r))
    summary["worst_outage"] = {{"element", label(*s)}, {"flow", s->worst_flow}, {"ms", s->worst_outage_ms}};
  j["summary"] = summary;
  return j;
}

std::string render_drill_junit(const replay::DrillResult& r) {
  const bool failed = r.stage == "baseline-failed" || r.stage == "baseline-unhealthy";
  validate::Report rep =
      run_junit(r.lab, r.started_at, r.duration_ms, r.baseline.report, "drill",
                !failed ? ""
                : r.stage == "baseline-unhealthy"
                    ? "a daemon twin runs for the lab is not running: nothing failed"
                    : "the lab failed validation before the drill: nothing failed");
  if (failed) return render_junit(rep);
  using validate::Status;
  for (const auto& e : r.elements) {
    Status st = e.status == "ok" ? Status::kPassed : e.status == "hurt" ? Status::kFailed : Status::kError;
    std::string msg = "converged in " + ms_text(e.convergence_ms) + ", worst outage " +
                      ms_text(e.worst_outage_ms) + ", " + std::to_string(e.pairs_lost.size()) +
                      " pair(s) lost, restored " + (e.restored ? "in " + ms_text(e.restore_ms) : "NOT");
    for (const auto& f : e.findings) msg += "; " + f;
    auto t = validate::make_result("drill", static_cast<int>(&e - r.elements.data()) + 1, label(e),
                                   st, "", "", "", "", one_line(msg));
    t.duration_ms = e.duration_ms;
    rep.results.push_back(t);
  }
  return render_junit(rep);
}

}  // namespace twin::report
