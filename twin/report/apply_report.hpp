#pragma once
// Sinks for `twin apply` / `twin run` (gate/apply.hpp): text for people, JSON for machines,
// JUnit for CI reporters, and the evidence bundle an approver audits.
#include <nlohmann/json_fwd.hpp>
#include <ostream>
#include <string>

#include "twin/core/error.hpp"
#include "twin/gate/apply.hpp"
#include "twin/state/state.hpp"

namespace twin::report {

// "approve" | "reject" | "error" | "baseline-failed" | "baseline-unhealthy"
std::string apply_verdict(const replay::ApplyResult& r);

// Text: baseline, steps with their outcome, the difference from the baseline (unintended
// first), the after-validation's failures, the verdict with its reasons ranked, the rollback.
std::string render_apply_text(const replay::ApplyResult& r, bool verbose);

// {"schema_version": 1, "lab", "change": {"name", "file", "sha256"}, "stage",
//  "verdict": "approve"|"reject"|"error"|"baseline-failed"|"baseline-unhealthy", "exit_code",
//  "reasons": [{"rank", "category", "step", "message", "subjects": [...], "cause": the first
//              likely cause or null (no rule matched), "evidence": [...] of that cause,
//              "causes": [{"rule", "cause", "evidence", "nodes"}]}],
//  "steps": [{"name", "kind", "status", "detail", "duration_ms"}], "first_failing_step",
//  "diff": [{"category", "node", "subject", "before", "after", "intended", "message",
//            prefix-gained: "more_specific_of", "origin" when known}],
//  "bandwidth": [{"pattern", "before", "after" (report::bandwidth_json), "allowed_loss" (a
//                 fraction), "lost"}] per pattern both validations ran the traffic family with,
//  "baseline", "after", "rollback": validation reports as report::to_json (null when not run),
//  "per_step": [{"name", "report"}],
//  "restart_check": null | {"nodes", "daemons", "ok", "detail", "duration_ms", "report", "diff"},
//  "configs_saved": [nodes whose startup config holds the approved change],
//  "outage": null | {"interval_ms", "duration_ms", "cpu_ms", "max_send_gap_ms", "budget_ms",
//             "detail",
//             "flows": [{"name", "sent", "lost", "longest_outage_ms", "outage_start_ms",
//                        "judged", "error"}] worst first},
//  "rollback_ran", "rollback_ok", "rollback_detail",
//  "intent_saved", "started_at", "duration_ms"}
nlohmann::json apply_to_json(const replay::ApplyResult& r);
// The same document, with the keys of `extra` (an object) added at the top level, written to
// `out` as .dump(indent) would write it (invalid UTF-8 replaced) — byte for byte — without
// building the validation reports' trees: each is streamed one result at a time
// (report::write_json). Why: at 8x48 a change's three validations are ~75,000 results, ~32 MB
// of JSON, and their trees cost more than the writing. indent < 0 is compact.
void write_apply_json(std::ostream& out, const replay::ApplyResult& r,
                      const nlohmann::json& extra, int indent);

// The probe stream's figures, as "outage" above, and likely causes as a reason's "causes"
// (shared with `twin drill`).
nlohmann::json outage_to_json(const replay::OutageReport& out);
nlohmann::json causes_json(const std::vector<replay::Cause>& causes);

// The JUnit report of a run on a lab (apply, run, drill), headed like its `baseline`; with a
// failing baseline (`baseline_failed` not empty) it holds one error case "<suite>.baseline" saying
// `baseline_failed` and the baseline's results, and nothing else is to be added.
validate::Report run_junit(const std::string& lab, const std::string& started_at,
                           double duration_ms, const validate::Report& baseline,
                           const std::string& suite, const std::string& baseline_failed);

// What a `twin run` scenario expected and whether the gate met it.
struct ScenarioOutcome {
  std::string name;
  std::string expected_verdict, expected_reason;
  bool met = false;
  std::string mismatch;  // why not, when !met
};

// JUnit: suite "apply.steps" (one case per step), "apply.verdict" (one failing case per reason,
// or one passing "approve"), "apply.restart" (when the restart check ran), "apply.bandwidth" (one
// case per traffic pattern both validations ran: failed when bandwidth-lost), "apply.outage" (one
// case per flow of the probe stream: failed over the budget), "apply.rollback" (when a rollback
// ran), then the after-change validation's families. With `scenario` (twin run with an expect
// block): "apply.steps", "scenario.<name>" with one case that passes when the gate decided as
// expected, and "apply.rollback" — an expected reject is a passing test, not a list of failures.
std::string render_apply_junit(const replay::ApplyResult& r,
                               const ScenarioOutcome* scenario = nullptr);

// Writes the evidence bundle into `dir` (created): hashes.json (topology, change, and every
// config before/after with SHA-256), change and topology copies, nodes/<node>/{before,after}.conf,
// <phase>-probes.jsonl (every probe's command, duration and raw output), <phase>.json (each
// validation's results and timing), diff.json, verdict.json (apply_to_json) and report.xml.
Result<void> write_evidence(const std::string& dir, const state::State& st,
                            const replay::ChangeSet& cs, const replay::ApplyResult& r);

}  // namespace twin::report
