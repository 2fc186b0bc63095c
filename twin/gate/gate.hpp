#pragma once
// The rollout gate's run (apply.hpp is its entry, `twin apply`): baseline, steps, settle,
// verdict, restart check, rollback on the restore ladder, bisection; and, on the same machinery,
// training's inject and restore. It reaches the lab only through the seams of
// verdict/seams.hpp (LabControl, GateEnv).
#include <map>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <set>
#include <string>
#include <vector>

#include "twin/changeset/changeset.hpp"
#include "twin/core/clock.hpp"
#include "twin/gate/result.hpp"
#include "twin/proc/runner.hpp"
#include "twin/state/state.hpp"
#include "twin/verdict/seams.hpp"

namespace twin::replay {

// How long settling must last at least after a change that touched `t`: the longest OSPF dead
// interval of the expected adjacencies a touched node takes part in, at either end (every one
// for a topology change); 0 when there are none. Until a dead interval has passed, a neighbor
// that stopped hearing hellos still shows Full (RFC 2328 §10.3, InactivityTimer), so a quiet
// network proves nothing before it. Also the whole floor after a reload (a rollback, a restart):
// its soft clear or fresh start applies policy at once.
struct Touched;  // steps.hpp
SettleFloor ospf_settle_floor(const plan::Plan& plan, const Touched& t);

// The longer of ospf_settle_floor and, when a step edited routing-policy objects, what is left
// at `now` of the longest route-map delay timer of the nodes edited plus 1 s, counted from the
// last such edit: bgpd applies the edit only when that timer fires (Touched::policy_delay_s),
// so until then the network shows no sign of it.
SettleFloor settle_floor(const plan::Plan& plan, const Touched& t, Clock::time_point now);

// apply() without the lab lock, through `env`. The caller holds the lock (apply() does).
Result<ApplyResult> run_gate(const state::State& st, const ChangeSet& cs, const ApplyOptions& opts,
                             GateEnv& env);

// A running lab's state that restore() brings it back to: training's exercises keep the healthy
// lab from before their fault, so any fix — or any damage — can be undone without a rebuild.
struct Reference {
  std::map<std::string, std::string> configs;  // FRR node -> running configuration
  // The healthy observation: interfaces' MTU and admin state are restored to it, and settling
  // after a restore waits until its sessions and routes are back.
  NetState state;
  std::map<std::string, std::map<std::string, std::string>> sysctls;  // node -> key -> value
};
// A Reference as JSON, and back (what training keeps between commands). from_json throws
// nlohmann::json::exception on a document of another shape.
nlohmann::json reference_to_json(const Reference& ref);
Reference reference_from_json(const nlohmann::json& j);

// The kernel settings a Reference keeps per FRR node: those the likely-cause rules read
// (causes.hpp fact_sysctl_keys), and net.ipv6.conf.all.disable_ipv6. Pure.
std::vector<std::string> reference_sysctl_keys(const plan::Node& node);
// The running configuration of every FRR node of `plan` and the reference_sysctl_keys of each
// (plus `extra` keys per node: a fault's own settings); `state` is left to the caller (a
// validation's observation). Errors: a node's configuration could not be read.
Result<Reference> read_reference(const plan::Plan& plan, GateEnv& env, int parallel,
                                 const std::map<std::string, std::set<std::string>>& extra = {});

// What inject() did.
struct Injected {
  std::vector<StepOutcome> steps;  // every step, applied or failed (the rest skipped)
  std::string settled;             // how settling after the steps ended
  [[nodiscard]] bool ok() const;   // every step applied
};
// Applies `cs`'s steps to the lab of `st` in order — no baseline, no judging, no rollback —
// and waits until the network is quiet (sessions gone silent included, as the gate does):
// training's fault injection. A step that fails stops the rest (they are skipped). Topology
// steps are refused (kUsage): the lab must keep its plan. The caller holds the lab lock.
Result<Injected> inject(const state::State& st, const ChangeSet& cs, const ApplyOptions& opts,
                        GateEnv& env);

// What restore() put back.
struct Restored {
  int configs = 0, interfaces = 0, sysctls = 0, vteps = 0, hosts = 0;
  int addresses = 0;  // routers whose planned addresses were put back
  std::string detail;    // the rollback's summary
  std::string settled;   // how settling toward the reference ended
  [[nodiscard]] int total() const {
    return configs + interfaces + sysctls + vteps + hosts + addresses;
  }
};
// Brings the lab of `st` back to `ref` by the gate's rollback, for whatever differs from it now
// (whoever changed it): FRR configurations whose running text differs, interfaces whose MTU or
// admin state differs, kernel settings, VTEPs' VNIs against the plan, servers' and routers'
// addresses against the plan; then settles until ref.state's sessions and routes are back (or
// opts.converge_timeout). Idempotent: a lab already at `ref` changes nothing. Does not judge:
// the caller validates. What it cannot see (a deleted namespace, a dead daemon) it does not
// repair — callers check the lab's status first. The caller holds the lab lock.
Result<Restored> restore(const state::State& st, const Reference& ref, const ApplyOptions& opts,
                         GateEnv& env);

}  // namespace twin::replay
