#pragma once
// `twin apply`: the rollout gate (DESIGN.md §1, §6). On a running lab: validate the baseline,
// snapshot every FRR node's running config and every interface, apply the change set's steps in
// order, wait for convergence, validate against the intended plan (intent.hpp), diff against the
// baseline (diff.hpp), decide, and on reject roll back to the snapshot and validate again to
// prove it. The lab is locked (state::lock_lab) for the whole run, so `up`/`down`/another
// `apply` wait instead of racing.
#include <memory>
#include <string>

#include "twin/changeset/changeset.hpp"
#include "twin/core/error.hpp"
#include "twin/gate/result.hpp"
#include "twin/proc/runner.hpp"
#include "twin/state/state.hpp"
#include "twin/verdict/seams.hpp"

namespace twin::replay {

// The lab `lab` as the engine runs it (reshape_lab, control_routing, the state file), for
// apply() and drill(); the caller holds the lab lock.
std::unique_ptr<LabControl> engine_lab(const std::string& lab, proc::ProcessRunner& runner,
                                       int parallel);

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
