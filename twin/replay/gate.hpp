#pragma once
// The rollout gate's seams (apply.hpp has what it does). The gate reaches the lab only through
// these, so its logic — baseline, apply, settle, verdict, rollback, bisection, interruption —
// runs in unit tests against fakes (tests/unit/gate_logic_test.cpp) in milliseconds, and
// against real FRR in the integration tests.
#include "twin/core/clock.hpp"
#include "twin/drivers/registry.hpp"
#include "twin/engine/lab.hpp"
#include "twin/engine/reconcile.hpp"
#include "twin/proc/runner.hpp"
#include "twin/replay/apply.hpp"
#include "twin/replay/outage.hpp"
#include "twin/validate/validator.hpp"

namespace twin::replay {

// What the gate does to the lab as a whole.
class LabControl {
 public:
  virtual ~LabControl() = default;
  // The running lab becomes `to` (a topology step, and its rollback). Errors as
  // engine::reconcile's; what was recorded stays recorded.
  virtual Result<void> reshape(const plan::Plan& from, const plan::Plan& to,
                               engine::GrowReport* report) = 0;
  // An approved change: the lab's intended plan (what `twin validate` checks) is `intended`.
  virtual Result<void> save_intent(const plan::Plan& intended) = 0;
  // The routing daemons of `nodes` of `running` (the plan the lab runs now, which a topology
  // step may have grown) stopped, started booting from their saved startup configuration, or
  // both — the restart check, and the failure drill's node failure and its restore — with the
  // processes recorded (engine::control_routing). Returns the number of daemons started.
  virtual Result<int> control_routing(const plan::Plan& running,
                                      const std::vector<std::string>& nodes,
                                      engine::RoutingAction action) = 0;
};

// The lab `lab` as the engine runs it (reshape_lab, control_routing, the state file), for
// apply() and drill(); the caller holds the lab lock.
std::unique_ptr<LabControl> engine_lab(const std::string& lab, proc::ProcessRunner& runner,
                                       int parallel);

// Everything the gate uses besides the change and the lab's state.
struct GateEnv {
  proc::ProcessRunner& runner;    // programs the drivers run (vtysh, ip, frr-reload.py)
  drivers::DriverLookup drivers;  // each node's driver
  TimeSource& time;               // settle and convergence windows
  LabControl& lab;
  validate::ValidatorFactory validators;
  // A new probe stream for the hitless measurement; empty = no measurement.
  std::function<std::unique_ptr<TrafficProbe>()> traffic;
};

// apply() without the lab lock, through `env`. The caller holds the lock (apply() does).
// How long settling must last at least after a change that touched `t`: the longest OSPF dead
// interval of the expected adjacencies a touched node takes part in, at either end (every one
// for a topology change); 0 when there are none. Until a dead interval has passed, a neighbor that stopped hearing hellos still
// shows Full (RFC 2328 §10.3, InactivityTimer), so a quiet network proves nothing before it.
struct Touched;  // steps.hpp
std::chrono::milliseconds ospf_settle_floor(const plan::Plan& plan, const Touched& t);

Result<ApplyResult> run_gate(const state::State& st, const ChangeSet& cs, const ApplyOptions& opts,
                             GateEnv& env);

}  // namespace twin::replay
