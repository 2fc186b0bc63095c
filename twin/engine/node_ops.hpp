#pragma once
// Per-node building blocks of `up` (lab.cpp), shared with reshape_lab (mutate.hpp). Internal to
// the engine.
#include <mutex>

#include "twin/core/error.hpp"
#include "twin/engine/state.hpp"
#include "twin/proc/runner.hpp"

namespace twin::engine {

// Creates the node's run folder and, for FRR nodes, frr.conf, vtysh.conf and tmp/ owned by frr.
Result<void> prepare_node_files(const plan::Node& n);
// Starts the node's daemons in the lab's cgroup and applies its frr.conf; each PID is added to
// `state` under `state_mu` but not saved: the caller saves once for all nodes (the lab's cgroup,
// recorded before any process exists, is what `down` relies on). Returns the daemons started.
Result<int> start_node_daemons(const plan::Node& n, State& state, std::mutex& state_mu,
                               proc::ProcessRunner& runner);

}  // namespace twin::engine
