#pragma once
// `twin apply --dry-run`: what a change set would do, without doing it.
#include <string>

#include "twin/changeset/changeset.hpp"
#include "twin/core/error.hpp"
#include "twin/proc/runner.hpp"
#include "twin/state/state.hpp"

namespace twin::replay {

// What --dry-run prints: per step, the commands it would run, and per node the configuration
// difference (frr-reload.py --test against the running config for replace steps).
Result<std::string> dry_run(const state::State& st, const ChangeSet& cs,
                            proc::ProcessRunner& runner);

}  // namespace twin::replay
