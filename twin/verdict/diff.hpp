#pragma once
// What the network looked like before and after a change, the difference, and the verdict
// rules (DESIGN.md §6). The state is observed through validate::LabProbe (FRR JSON and
// `ip -j`); everything else here is pure, so unit tests feed recorded JSON.
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <set>
#include <string>
#include <vector>

#include "twin/core/error.hpp"
#include "twin/plan/plan.hpp"
#include "twin/validate/result.hpp"
#include "twin/validate/validator.hpp"

namespace twin::replay {

struct SessionObs {
  std::string state;  // FRR's state ("Established", "Active", "Idle (Admin)" ...)
  long pfx_v4 = -1;   // prefixes received per family; -1 when the family is not active
  long pfx_v6 = -1;
  // Settling evidence (LabWatch::settle), not kept in a Reference: shut down on this end
  // (`neighbor ... shutdown`, `bgp shutdown`: FRR's peerState "Admin"), and BGP messages still
  // queued to or from the peer (inq + outq).
  bool admin = false;
  long queued = 0;
};

// One observation of the lab. Keys: sessions "node neighbor" (neighbor = interface for BGP
// unnumbered); fib node -> prefix -> next hops (routes zebra installed from BGP, OSPF or
// IS-IS, the kernel's view); interfaces "node:ifname" -> MTU (bytes, L3) and admin state; reachable/unreachable:
// "src -> dst address" pairs the reachability validator probed.
struct NetState {
  std::map<std::string, SessionObs> sessions;
  std::map<std::string, std::map<std::string, int>> fib;
  // node -> prefix -> the devices of its next hops, sorted ("eth1", "eth2"): which way each
  // route leaves, for path intent (intent.paths) and the report's old and new next hops.
  std::map<std::string, std::map<std::string, std::vector<std::string>>> fib_via;
  // node -> prefix -> "static via 10.1.0.10 dev eth2": routes of other origins (static, kernel)
  // in the kernel FIB, so a routed prefix a static route took over is said to be that, not lost.
  std::map<std::string, std::map<std::string, std::string>> other_routes;
  std::map<std::string, int> mtu;
  std::map<std::string, bool> admin_up;
  std::set<std::string> reachable, unreachable;
  std::vector<std::string> gaps;  // nodes or probes that returned no data ("leaf1: bgp: ...")
  // node -> its BGP tables' versions ("ipv4Unicast 12 ipv6Unicast 12 "): FRR bumps a table's
  // version on every change it processes in it, so equal versions mean no BGP work done in
  // between. Settling evidence, not kept in a Reference.
  std::map<std::string, std::string> bgp_tables;
  // The traffic family's figures when the validation ran it (validate::Report::bandwidth),
  // one per pattern. Not kept in a Reference.
  std::vector<validate::Bandwidth> bandwidth;
};

// Raw per-node observations (observation.hpp: it needs the full nlohmann/json.hpp).
struct NodeObservation;

// Pure: folds observations (node name -> observation) into a NetState. Only routes with
// protocol bgp, ospf or isis count in the FIB; multipath routes count their next hops. Others
// are kept as text in other_routes.
NetState state_from_observations(const std::map<std::string, NodeObservation>& obs);
// Adds the reachability validator's mesh results (tests 0-2: loopbacks, hosts, tenant networks)
// of `report`: the pairs that answer (reachable) or not (unreachable).
void add_reachability(NetState& state, const validate::Report& report);
// Probes every node of `plan` (FRR nodes: BGP and routes; all: links), nodes in parallel.
NetState observe(const plan::Plan& plan, validate::LabProbe& probe, int parallel);

// One difference between baseline and after. `intended` when the intended plan explains it.
struct Change {
  std::string category;  // session-lost | session-gained | prefix-lost | prefix-gained |
                         // session-prefixes-lost | reachability-lost | reachability-gained |
                         // ecmp-shrunk | paths-moved | mtu-changed | admin-state-changed |
                         // bandwidth-lost (node "", subject the pattern)
  std::string node;
  std::string subject;  // neighbor, prefix, "src -> dst", interface
  std::string before, after;
  bool intended = false;
  std::string message;
  // prefix-gained only: the prefix the gained one is a more-specific of ("" = none), and the
  // node that originates it (from its BGP path in the after state, attribute_origins; "" =
  // not known).
  std::string covering;
  std::string origin;
};
// One pattern's bandwidth before and after the change, when both validations ran the traffic
// family with it: what the diff shows per pattern, and the rule of bandwidth-lost.
struct BandwidthDelta {
  std::string pattern;
  validate::Bandwidth before, after;
  double allowed_loss = 0.2;  // the intended plan's traffic.bandwidth_loss (a fraction)
  // The aggregate or the slowest pair's goodput (the job-completion figure) fell below
  // before × (1 − allowed_loss). Either may: ECMP width halved shows in the slowest pair
  // while the others keep the aggregate; a lower rate everywhere in the aggregate.
  bool lost = false;
};
struct Diff {
  std::vector<Change> changes;
  std::vector<BandwidthDelta> bandwidth;
  std::vector<std::string> gaps;  // the after-state's gaps: losses at those nodes are unknown
  [[nodiscard]] int count(const std::string& category, bool intended) const;
};

// Pure. `intended` is the plan the change means to build (intent.hpp); a loss is intended when
// that plan no longer expects it (no session on that interface, the prefix not expected at
// that node or no longer originated, the pair not routed, a narrower ECMP width, that MTU).
// A prefix gained in a FIB is intended when the plan expects it (a loopback, host subnet, or
// declared origination: intent.add-prefixes, a topology step) or it is the subnet of an
// interface address (a link subnet an IGP carries); any other is an undeclared origination,
// and `covering` names the routed prefix it is a more-specific of, if any.
// Bandwidth: per pattern both states measured, a BandwidthDelta; a lost one is a
// `bandwidth-lost` change (never intended: `bandwidth-loss: 100%` allows any loss).
Diff diff_states(const NetState& before, const NetState& after, const plan::Plan& base,
                 const plan::Plan& intended);

// The node that originates a BGP route, from `show bgp ipv4|ipv6 unicast <prefix> json` asked
// on node `asked`: the best path's origin AS (the AS_PATH's last AS) when one node of `plan`
// has it; within one AS, the route reflector's ORIGINATOR_ID (RFC 4456) or the sending peer's
// router-id; `asked` itself for a locally sourced path; "AS 65000 (spine1, spine2)" when the AS
// is shared and nothing narrows it; "" when the JSON has no path. Pure.
std::string origin_from_bgp_route(const nlohmann::json& route, const plan::Plan& plan,
                                  const std::string& asked);
// Fills Change::origin of the unintended prefix-gained changes of `diff` (at most 16
// prefixes; per prefix one or two nodes asked through `probe`); a prefix no BGP path explains
// is attributed to the nodes where it newly became a local route (other_routes), and failing
// that to the FRR nodes its next hops (fib_via) lead to that do not route it onward: where
// OSPF's `default-information originate` enters a default without installing one.
void attribute_origins(Diff& diff, const NetState& before, const NetState& after,
                       const plan::Plan& plan, validate::LabProbe& probe);

// The probable cause behind a failure, named by a rule over the observed state (causes.hpp),
// with what it saw.
struct Cause {
  std::string rule;                   // "duplicate-address", "bgp-notification", ...
  std::string text;                   // one line: "address 10.255.1.1 is on leaf1 lo and leaf2 swp1"
  std::vector<std::string> evidence;  // the observations it rests on, one per line
  std::vector<std::string> nodes;     // the nodes it concerns
};

// Why a change is rejected, most severe first (rank 1 = most severe).
struct Reason {
  int rank = 0;
  std::string category;  // one of reason_categories()
  std::string step;      // the step it is attributed to ("" when not known)
  std::string message;   // one line, e.g. "2 BGP sessions lost: leaf1 swp1, leaf1 swp2"
  std::vector<std::string> subjects;  // every subject ("leaf1 swp1")
  // Likely causes (causes.hpp) of this reason; empty when no rule matched (or none was asked).
  std::vector<Cause> causes;
  // The diff's own words behind the subjects ("leaf1 lost the route to 10.255.0.11/32 (loopback
  // of leaf3)"): a cause about leaf3 belongs to this reason though no subject names leaf3.
  // Matched by attach_causes, never shown.
  std::vector<std::string> context;
};

// Every Reason::category, most severe first: the one ranked list (docs/gate.md, "Verdict
// reasons"), which issues adding a reason extend. Scenarios name them.
const std::vector<std::string>& reason_categories();
// A category's rank: its 1-based place in reason_categories() (an unknown one ranks last).
int reason_rank(const std::string& category);

// What happened to one step while applying.
struct StepOutcome {
  std::string name;
  std::string kind;
  std::string status = "applied";  // applied | failed | skipped
  std::string detail;              // commands' complaints, a check's failures
  // Evidence on several lines, kept whole (a run step's per-node unified diffs and the tail of
  // its output); "" for most steps.
  std::string text;
  double duration_ms = 0;
};

enum class Decision { kApprove, kReject, kError };
// "approve" | "reject" | "error"
const char* to_string(Decision d);

struct Verdict {
  Decision decision = Decision::kError;
  std::vector<Reason> reasons;  // ranked; empty when approved
};

// Pure verdict rules. Approve when every step applied, the after-validation has no failed or
// error result, and the diff holds no loss the intent does not explain. Reject when a step
// failed, a validator failed or something was lost unintentionally; "error" (the harness could
// not tell) when only errors remain. With `dirty_baseline`, results that already failed in
// `baseline` (same test and subject) do not count.
Verdict decide(const std::vector<StepOutcome>& steps, const validate::Report& after,
               const Diff& diff, const validate::Report* dirty_baseline);

// The likely causes the traffic family named in its failing tests of `after` (" — likely cause:
// ..." in their messages: a missing ECMP member, L3-only hashing, a slower link), one per
// distinct text: what bandwidth-lost is attached, since the family diagnosed the loss. Pure.
std::vector<Cause> traffic_causes(const validate::Report& after);

// The exit code of a verdict: 0 approve, 1 reject, 3 error.
int exit_code(const Verdict& v);

}  // namespace twin::replay
