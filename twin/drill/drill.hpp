#pragma once
// `twin drill`: which single failure would hurt this fabric, and for how long (docs/drills.md).
// On a running lab whose baseline passes, each element in turn — a link taken down at both ends,
// or a node's routing daemons stopped — is failed; the probe stream measures each
// flow's outage; the network must settle at the state the design expects with that element
// gone (the degraded plan: the link intended down, the node drained), and that state is
// validated; then the element is restored and the baseline proven again before the next one.
// A pair the degraded design still connects (it is redundant) that lost reachability, a test
// failing in the degraded state, or a convergence or outage over its budget makes the element
// "hurt". Pairs the design cannot keep (a single-homed server behind the failed link or leaf)
// are cut off by design: reported, not held against the fabric.
#include <chrono>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "twin/core/diagnostics.hpp"
#include "twin/core/error.hpp"
#include "twin/plan/plan.hpp"
#include "twin/gate/apply.hpp"
#include "twin/gate/gate.hpp"
#include "twin/verdict/outage.hpp"
#include "twin/state/state.hpp"

namespace twin::replay {

// One thing the drill fails.
struct DrillElement {
  enum class Kind { kLink, kNode };
  Kind kind = Kind::kLink;
  std::string node;                        // kNode: the node; kLink: the `a` end's node
  std::string a_interface, b_node, b_interface;  // kLink only
  // "leaf1:swp1--spine1:swp1" or "spine1".
  [[nodiscard]] std::string name() const;
  [[nodiscard]] const char* kind_name() const { return kind == Kind::kLink ? "link" : "node"; }
};

// The elements `--links` and `--nodes` name, in the plan's order (links first). `links`: ""
// (none), "all" (every link), "fabric" (links between two FRR nodes) or a comma-separated list of
// ends ("leaf1:swp1", or both: "leaf1:swp1--spine1:swp1"); `nodes`: "", "all" (every FRR node) or
// a comma-separated list of FRR nodes. Both empty means every link. Problems (an unknown node
// or interface with the closest names, a host named as a node, an element listed twice) are
// added to `diags` under the field `--links` / `--nodes`; returns nullopt when there were any.
// Pure.
std::optional<std::vector<DrillElement>> drill_elements(const plan::Plan& plan,
                                                        const std::string& links,
                                                        const std::string& nodes,
                                                        Diagnostics& diags);

// The network the design expects with `e` failed: both ends of the link intended down, or
// the node drained with no routing daemons to ask (sessions, paths, prefixes and reachability
// re-derived). Pure.
plan::Plan degraded_plan(const plan::Plan& base, const DrillElement& e);

// Whether the design of `plan` connects the pair of flow `f` (both ways): two FRR nodes with
// paths to each other and `f`'s addresses still advertised, or two hosts routed to each other
// (validate::hosts_routed), each by the paths of its addresses' family. Pure.
bool flow_expected(const plan::Plan& plan, const plan::FamilyPaths& paths, const FlowChoice& f);

struct DrillOptions {
  std::vector<DrillElement> elements;
  // Longest acceptable convergence per element (ms from the failure until the network held
  // still at the degraded state); unset = measured only.
  std::optional<std::chrono::milliseconds> max_convergence;
  // The probe stream during each failure and each restore; `budget` bounds the outage of a
  // flow the degraded design keeps connected.
  OutageOptions outage;
  std::chrono::milliseconds converge_timeout{std::chrono::seconds(30)};  // per settle/validation
  int parallel = 4;
  std::function<void(const std::string&)> progress;  // one line per event; may be empty
  validate::ValidatorFactory validators;
};

// What one element's failure did.
struct DrillOutcome {
  DrillElement element;
  // "ok": every redundant pair kept, degraded state as designed, within budgets; "hurt": see
  // `findings`; "error": the harness could not fail, judge or restore it.
  std::string status = "ok";
  std::vector<std::string> findings;  // why hurt or error, most severe first; one line each
  // Failure: from the element failed until the network held still at the degraded state
  // (LabWatch::settle: to within one poll, 100 ms, plus one observation).
  double convergence_ms = 0;
  double resolution_ms = 0;  // convergence_ms is this precise (Settled::resolution_ms)
  bool converged = false;    // the network held still before the convergence timeout
  std::string settle_detail;
  std::optional<Phase> degraded;        // validated against degraded_plan()
  std::vector<std::string> pairs_lost;  // "src -> dst address": redundant by design, unreachable
  std::vector<std::string> failing;     // other tests not passing in the degraded state
  // Likely causes (causes.hpp) in the degraded state of an element that hurt.
  std::vector<Cause> causes;
  // Pairs of the baseline the degraded design does not connect (single-homed behind the
  // element): "src -> dst address".
  std::vector<std::string> cut_off;
  OutageReport outage;  // the stream while failing (not_judged: the flows cut off by design)
  double worst_outage_ms = 0;  // over judged flows
  std::string worst_flow;
  // Restore: from the element restored until the baseline's sessions and routes were back and
  // still, then proven by a validation and a diff against the baseline.
  double restore_ms = 0;
  bool restored = false;
  std::string restore_detail;
  OutageReport restore_outage;  // the stream while restoring
  std::optional<Phase> restore;
  double duration_ms = 0;  // failure, judgement, restore and proof
};

struct DrillResult {
  std::string lab;
  std::string started_at;
  double duration_ms = 0;
  // "baseline-failed": nothing was failed (exit 4); "baseline-unhealthy": a daemon or VM twin
  // runs for the lab is not running, nothing was failed (exit 5); "drilled": every element ran;
  // "stopped": an element could not be restored and the drill stopped there (exit 3).
  std::string stage = "drilled";
  Phase baseline;
  Verdict baseline_verdict;  // the baseline's reasons when it failed
  std::optional<std::chrono::milliseconds> max_convergence;
  std::optional<std::chrono::milliseconds> max_outage;
  std::vector<DrillOutcome> elements;  // in the order drilled; only those that ran
  int planned = 0;                     // elements asked for

  [[nodiscard]] int hurt() const;
  // 4 baseline failed; 3 an element could not be failed, judged or restored; 1 some element
  // hurt; 0 every element as designed.
  [[nodiscard]] int exit_code() const;
};

// The drill through `env`, without the lab lock (drill() takes it). Errors: kInterrupted
// after the element being drilled was restored (or not: the message says); harness failures
// before anything was failed.
Result<DrillResult> run_drill(const state::State& st, const DrillOptions& opts, GateEnv& env);

// run_drill on the lab of `st` with the real drivers, probe stream and engine, holding the lab
// lock (waits for another twin command on the lab, as apply does).
Result<DrillResult> drill(const state::State& st, const DrillOptions& opts,
                          proc::ProcessRunner& runner);

}  // namespace twin::replay
