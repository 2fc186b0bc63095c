#pragma once
// The rollout gate's seams and options: what the gate, the step handlers, the drill and the
// likely-cause rules share, below all of them. The gate reaches the lab only through these, so
// its logic — baseline, apply, settle, verdict, rollback, bisection, interruption — runs in unit
// tests against fakes (tests/unit/gate_logic_test.cpp) in milliseconds, and against real FRR in
// the integration tests. Nothing here runs anything.
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "twin/core/clock.hpp"
#include "twin/drivers/registry.hpp"
#include "twin/engine/lab.hpp"
#include "twin/engine/reconcile.hpp"
#include "twin/proc/runner.hpp"
#include "twin/validate/result.hpp"
#include "twin/validate/system_probe.hpp"
#include "twin/validate/validator.hpp"
#include "twin/verdict/diff.hpp"
#include "twin/verdict/outage.hpp"

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
  // Node `to.name` of `running` boots image `to` (a container node's image replaced, its
  // daemons restarted) from `config`, and the lab's state file records `to` (engine::boot_image):
  // the image step and its rollback, on the restore ladder's one primitive. Returns the number
  // of daemons started.
  virtual Result<int> boot_image(const plan::Plan& running, const plan::Node& to,
                                 const std::string& config) = 0;
};

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

// The least settling time after a change, and what it waits for (said in the progress).
struct SettleFloor {
  std::chrono::milliseconds ms{0};
  std::string why;
};

}  // namespace twin::replay
