#pragma once
// What `twin apply` returns: the verdict with every phase, step, diff and rollback that led to
// it (the evidence bundle and the reports are written from it). Pure data.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "twin/core/diagnostics.hpp"
#include "twin/verdict/diff.hpp"
#include "twin/verdict/outage.hpp"
#include "twin/verdict/seams.hpp"

namespace twin::replay {

// The restart check of an approved change (ApplyOptions::restart_check).
struct RestartCheck {
  std::vector<std::string> nodes;  // FRR nodes the change touched, restarted (sorted)
  int daemons = 0;                 // daemons started again
  bool ok = false;                 // the same state came back
  std::string detail;              // how it went, or what came back differently
  double duration_ms = 0;          // save, restart, re-convergence and validation
  std::optional<Phase> phase;      // the validation after the restart
  Diff diff;                       // the approved state vs after the restart
};

struct ApplyResult {
  std::string lab;
  std::string change_name;
  std::string change_file;
  std::string started_at;
  double duration_ms = 0;
  // "baseline-failed": the baseline did not pass, nothing was applied (exit 4);
  // "baseline-unhealthy": something twin runs for the lab (a daemon, a VM) is not running, so
  // the lab could not be judged at all: nothing was applied, even with allow_dirty_baseline
  // (exit 5; `twin restart NODE` repairs it);
  // "judged": the change was applied and judged (exit from the verdict).
  std::string stage = "judged";
  Phase baseline;
  std::vector<StepOutcome> steps;
  std::vector<Phase> per_step;     // with --per-step: one phase per applied step
  std::string first_failing_step;  // with --per-step: the step after which the verdict broke
  std::optional<Phase> after;
  // The gate did not wait out the settle floor (an OSPF dead interval): an early look found a
  // failure that cannot converge, said here ("" when it waited).
  std::string early_reject;
  // From the start of the run to the verdict (ms): what a pipeline waits for a decision; the
  // rollback and its proof come after it (duration_ms).
  double verdict_ms = 0;
  Diff diff;
  Verdict verdict;
  bool rolled_back = false;  // a rollback ran
  bool rollback_ok = false;  // ... and validation proved the baseline back
  // The rung of the restore ladder that proved it: "reload" (the snapshot applied as a
  // difference), "restart" (the touched nodes' daemons booted from the baseline's config),
  // "recreate" (those nodes built anew, then booted so); "" when none did.
  std::string rollback_rung;
  std::string rollback_detail;
  std::optional<Phase> rollback;
  Diff rollback_diff;         // baseline vs after the rollback: empty of losses when it succeeded
  bool intent_saved = false;  // approved: the lab's intended plan now includes the change
  std::optional<RestartCheck> restart_check;  // set when the check ran
  std::optional<OutageReport> outage;         // set when the stream was asked for
  // FRR nodes whose startup configuration (frr.conf) now holds the approved change, so a
  // restart of their daemons boots into it.
  std::vector<std::string> configs_saved;
  // Per FRR node: running config before and after the change (after = before when untouched).
  std::map<std::string, std::string> config_before, config_after;
  // What the gate did not apply as written (a host path redirected into a node's run folder),
  // beside the verdict; the validations' own notes are in their reports.
  std::vector<Note> notes;

  // 4 baseline failed; 5 baseline unhealthy; 3 a rollback or revert that did not prove the baseline
  // back; else 0/1/3 from the verdict.
  [[nodiscard]] int exit_code() const;
};

// What a live run changed, as a change set twin replays (`twin apply --record FILE`): one `frr`
// replace step per node whose running config the run changed (config_before vs config_after),
// named after the node, its config file `<configs_dir>/<node>.conf` relative to the change
// file; a wait step when nothing changed. Pure: the caller writes `yaml` and `configs`.
struct RecordedChange {
  std::string yaml;
  std::map<std::string, std::string> configs;  // node -> its running config after the run
};
RecordedChange record_change(const ApplyResult& r, const std::string& configs_dir);

}  // namespace twin::replay
