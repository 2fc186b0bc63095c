#pragma once
// Sinks for `twin drill` (drill/drill.hpp): a table for people, JSON for machines, JUnit for
// CI reporters.
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "twin/drill/drill.hpp"

namespace twin::report {

// Text: one row per element (element, convergence, worst outage and its flow, pairs lost, pairs
// cut off by design, restore time, status), the findings of each hurt element, a summary line.
// With `verbose`, every lost pair, failing test and cut-off pair.
std::string render_drill_text(const replay::DrillResult& r, bool verbose);

// {"schema_version": 1, "lab", "started_at", "duration_ms", "stage": "drilled"|"stopped"|
//  "baseline-failed"|"baseline-unhealthy", "exit_code", "max_convergence_ms", "max_outage_ms" (null
//  when unset), "baseline": validation report (report::to_json), "baseline_reasons": [{"rank",
//  "category", "message", "subjects"}] (when it failed), "elements": [{"kind": "link"|"node",
//  "name", "status": "ok"|"hurt"|"error", "findings",
//    "convergence_ms", "convergence_resolution_ms" (poll plus the longest observation),
//    "converged", "settle_detail", "worst_outage_ms", "worst_flow",
//    "pairs_lost", "cut_off", "failing", "causes": likely causes of a hurt element as apply's
//    reasons' "causes" ([{"rule", "cause", "evidence", "nodes"}]), "outage": as apply's "outage",
//    "degraded": validation report or null,
//    "restore": {"ok", "ms", "detail", "outage", "report"}, "duration_ms"}],
//  "summary": {"planned", "drilled", "hurt", "errors", "slowest": {"element", "convergence_ms"},
//              "worst_outage": {"element", "flow", "ms"}}}
nlohmann::json drill_to_json(const replay::DrillResult& r);

// JUnit: suite "drill" with one case per element (failed when hurt, error when it could not
// be judged or restored); "drill.baseline" and the baseline's results when the baseline failed.
std::string render_drill_junit(const replay::DrillResult& r);

}  // namespace twin::report
