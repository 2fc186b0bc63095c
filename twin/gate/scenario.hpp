#pragma once
// A scenario: the one-shot CI gate's input for `twin run` (format v1, docs/scenarios.md,
// scenarios/schema/scenario.schema.json). It names a topology and a change set, and optionally
// what the gate is expected to decide, so a library of good changes and seeded faults can run
// as tests.
#include <optional>
#include <string>

#include "twin/core/diagnostics.hpp"
#include "twin/core/input_policy.hpp"
#include "twin/topology/model.hpp"

namespace twin::replay {

struct ScenarioExpect {
  std::string verdict;          // "approve" | "reject" ("" = no expectation)
  std::string reason;           // category of the first (most severe) reason, e.g. "prefix-lost"
  std::string reason_contains;  // substring of the first reason's message
  std::string failing_step;     // with per-step: the step named as the first that broke
  // Each a substring of some reason's message or likely cause ("likely cause: ..."), any of
  // them: the cause a test must report beside the first (most severe) reason, e.g. "area
  // 0.0.0.1 here".
  std::vector<std::string> reasons_include;
};

struct Scenario {
  std::string file, dir;
  std::string name;
  std::string description;
  std::string topology;  // absolute path
  std::string change;    // absolute path; "" when the change is a live run (change_run)
  // `change: {run: COMMAND, timeout: 10m}`: a live orchestrator run instead of a change file
  // (a change set of one `run` step, in the scenario's folder; the lab needs `mgmt:`).
  std::string change_run;
  std::string change_run_timeout = "10m";
  bool per_step = false;
  // Restart the touched nodes' routing daemons after an approval and require the same state
  // back (`restart-check: false` turns it off; `twin run --no-restart-check` too).
  bool restart_check = true;
  // The probe stream's budget (`max-outage: 1s`): a flow out longer rejects (reason outage).
  std::string max_outage;
  // `traffic:` — the gate runs the traffic family before and after and compares bandwidth
  // (bandwidth-lost), as a change's intent.traffic does; the change's own intent.traffic wins.
  // traffic_is_labs: `true` was written, which means the lab's own `traffic:` when it has one.
  std::optional<topology::TrafficSpec> traffic;
  bool traffic_is_labs = false;
  ScenarioExpect expect;
  topology::Mark mark;
};

// Loads and checks a scenario file: version 1, name, topology and change files that exist,
// expect.verdict one of approve|reject, reason one of the categories of diff.hpp's Reason.
// Every problem is reported with file:line:column; nullopt when there is any.
// The scenario and the files it names pass `policy` (core/input_policy.hpp; null: the checkout
// root of `path`); the caller loads its topology and change under the same policy.
std::optional<Scenario> load_scenario(const std::string& path, Diagnostics& diags,
                                      const InputPolicy* policy = nullptr);

// Whether `first_reason_category` / `first_reason_message` / `verdict` / `failing_step` and
// the messages of all reasons meet `e`; `why` gets the first mismatch ("expected verdict
// reject, got approve").
bool meets(const ScenarioExpect& e, const std::string& verdict,
           const std::string& first_reason_category, const std::string& first_reason_message,
           const std::string& failing_step, std::string* why,
           const std::vector<std::string>& all_reason_messages = {});

}  // namespace twin::replay
