#pragma once
// `twin apply`: the rollout gate (DESIGN.md §1, §6). On a running lab: validate the baseline,
// snapshot every FRR node's running config and every interface, apply the change set's steps in
// order, wait for convergence, validate against the intended plan (intent.hpp), diff against the
// baseline (diff.hpp), decide, and on reject roll back to the snapshot and validate again to
// prove it. The lab is locked (state::lock_lab) for the whole run, so `up`/`down`/another
// `apply` wait instead of racing.
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "twin/core/diagnostics.hpp"
#include "twin/core/error.hpp"
#include "twin/state/state.hpp"
#include "twin/proc/runner.hpp"
#include "twin/replay/changeset.hpp"
#include "twin/replay/diff.hpp"
#include "twin/replay/outage.hpp"
#include "twin/validate/result.hpp"
#include "twin/validate/system_probe.hpp"
#include "twin/validate/validator.hpp"

namespace twin::replay {

struct ApplyOptions {
  bool no_rollback = false;           // leave a rejected change in place for inspection
  bool revert = false;                // a what-if run: restore the baseline after an approval too
  bool per_step = false;              // validate after every step; name the first that breaks
  bool allow_dirty_baseline = false;  // judge only what the change makes worse
  // After an approval, restart the routing daemons of every FRR node the change touched from
  // their saved configuration and require the same state back (reason restart-divergence).
  bool restart_check = false;
  // The probe stream from the first step until the network has settled, and its budget.
  OutageOptions outage;
  std::chrono::milliseconds converge_timeout{std::chrono::seconds(30)};  // per validation
  int parallel = 4;
  // The lab outlives the command (false for `twin run`, which removes it next): an interrupted
  // gate's message then says how to check it.
  bool lab_outlives = true;
  std::function<void(const std::string&)> progress;  // one line per event; may be empty
  // The validator families the gate judges with (the CLI passes validators::make_validators).
  validate::ValidatorFactory validators;
};

// One validation inside apply, with every probe it made (for the evidence bundle).
struct Phase {
  std::string name;  // "baseline" | "after" | "after step <name>" | "rollback"
  validate::Report report;
  std::vector<validate::ProbeRecord> probes;
  NetState state;
};

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

// FRR's own syntax check of every configuration text in `cs` (`vtysh -C -f`, no daemon
// involved): a rejected line becomes a diagnostic at its line in the change file (add/remove
// blocks) or in the config file (replace). Errors: vtysh could not run (kEnvironment).
Result<void> check_frr_syntax(const ChangeSet& cs, proc::ProcessRunner& runner, Diagnostics& diags);

// Checks of configuration text against the lab that FRR's parser cannot make: a `router bgp
// N` line whose ASN is not the node's (FRR runs one default BGP instance per node; a second ASN
// is refused only while applying, with an unhelpful message). Adds diagnostics at their line.
void check_against_lab(const ChangeSet& cs, const plan::Plan& plan, Diagnostics& diags);

// What --dry-run prints: per step, the commands it would run, and per node the configuration
// difference (frr-reload.py --test against the running config for replace steps).
Result<std::string> dry_run(const state::State& st, const ChangeSet& cs,
                            proc::ProcessRunner& runner);

// Runs the gate on the lab of `st` (see above). Errors (exit 3/130): the lab is not there, a
// probe or command could not run at all; a rejected change is NOT an error but a verdict.
// On approval the lab's state file is updated to the intended plan, so later `twin validate`
// checks the network the change built.
Result<ApplyResult> apply(const state::State& st, const ChangeSet& cs, const ApplyOptions& opts,
                          proc::ProcessRunner& runner);

// SHA-256 of a file as lowercase hex ("" when it cannot be read).
std::string sha256_file(const std::string& path);
std::string sha256_hex(const std::string& data);

}  // namespace twin::replay
