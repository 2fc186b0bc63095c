#pragma once
// The validator API (DESIGN.md §5). A validator family (validators/registry.hpp lists them) reads
// the lab through a LabProbe and returns one TestResult per (test, subject). Validators include
// only this header and result.hpp; they are listed once in validators/registry.cpp.
//
// Data/logic split: each family collects raw observations (FRR JSON, `ip -j` JSON, ping
// results) through the probe, then evaluates them with a pure function, so unit tests feed
// FRR 8.4 JSON recorded from a real run.
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "twin/core/error.hpp"
#include "twin/core/util.hpp"
#include "twin/plan/plan.hpp"
#include "twin/runtime/ping.hpp"
#include "twin/state/state.hpp"
#include "twin/traffic/run.hpp"
#include "twin/validate/result.hpp"

namespace twin::validate {

// Pings are sent by the node drivers (runtime/ping.hpp is the in-process prober).
using runtime::PingOutcome;
using runtime::PingRequest;
using runtime::PingResult;
using runtime::to_string;
using state::ProcessHealth;

// How validators observe a running lab. Implementations record every probe (command and raw
// output) for --artifacts. Thread-safe: validators may probe nodes in parallel.
class LabProbe {
 public:
  virtual ~LabProbe() = default;
  // `vtysh -d <daemon> -c <command>` on the node; command must request JSON.
  virtual Result<nlohmann::json> frr_json(const plan::Node& node, const std::string& daemon,
                                          const std::string& command) = 0;
  // `ip -n <netns> -j <args>` on the node.
  virtual Result<nlohmann::json> ip_json(const plan::Node& node,
                                         const std::vector<std::string>& args) = 0;
  // ICMP echo from inside the node's namespace.
  virtual std::vector<PingResult> ping(const plan::Node& node,
                                       const std::vector<PingRequest>& requests) = 0;
  // What each node of `plan` must have running (its daemons, its VM) and whether it does, from
  // the lab's record and the system: node -> its processes (nodes that must run none are
  // absent). Errors: the lab's record could not be read. The default is kUsage: a probe that
  // cannot see processes (the `node` family then skips, saying so).
  virtual Result<std::map<std::string, std::vector<ProcessHealth>>> processes(
      const plan::Plan& plan);
  // The node's running FRR configuration (`show running-config` without vtysh's banner), for
  // what FRR 8.4 prints in no JSON (OSPF authentication, a router-id waiting for a restart).
  // The default is kUsage: a probe that cannot read it (the families then compare less, and
  // say so).
  virtual Result<std::string> running_config(const plan::Node& node);
  // A traffic pattern run on the lab as `plan` describes it (traffic/run.hpp: iperf3 flows,
  // port counters, latency under load). The default is kUsage: a probe that cannot send
  // traffic (the `traffic` family then reports an error, saying so).
  virtual Result<traffic::Report> traffic(const plan::Plan& plan, const traffic::Options& o);
};

struct Context {
  const plan::Plan& plan;
  LabProbe& probe;
  int parallel = 4;   // nodes probed at once
  int max_pairs = 0;  // reachability/path-MTU probes per family before sampling; 0 = every pair
  // When > 0, caps every ping's (and ARP probe's) timeout: a trainee's check on a quiet fabric
  // of veths, where a reply takes milliseconds, must not wait the families' 1.5 s per loss.
  std::chrono::milliseconds ping_timeout{0};
  // For a family that decides each result on its own (Validator::decides_each_result), set by
  // the runner during its run and retry_window: its results already final in this validation
  // (a passed one with time_to_pass_ms), which later attempts cannot change. nullptr otherwise.
  const std::vector<TestResult>* final_results = nullptr;
};

class Validator {
 public:
  virtual ~Validator() = default;
  [[nodiscard]] virtual std::string name() const = 0;  // "bgp"
  // One result per (test, subject). Missing data is Status::kError, never kPassed.
  virtual std::vector<TestResult> run(Context& ctx) = 0;
  // How long, from the start of the validation, a result of this family that does not pass is
  // retried; nullopt = the run's convergence window (RunOptions::converge_timeout). Declared
  // checks carry their own `wait:`.
  [[nodiscard]] virtual std::optional<std::chrono::milliseconds> retry_window(
      const Context& /*ctx*/, const TestResult& /*result*/) const {
    return std::nullopt;
  }
  // Families whose results are independent assertions (declared checks) say so: each result
  // (test, node, subject) is then final on its own — once it passes, or once its own window
  // (retry_window) has run out while it fails — and no later attempt, made for a result still
  // waiting, changes it. The family sees the final ones in Context::final_results (it need not
  // probe them again). Default: every result is the family's last attempt's.
  [[nodiscard]] virtual bool decides_each_result() const { return false; }
  // Families whose state the data plane follows (sessions, adjacencies, RIB/FIB) say so, and
  // families that send packets across the fabric (pings, path-MTU probes) say they ride on
  // them. run_validation runs the riders only once every control-plane family is done (passed,
  // or past its window): while a route is still missing, their probes toward it are lost, each
  // after its timeout (1.5 s), and that attempt would tell nothing the control plane does not.
  [[nodiscard]] virtual bool control_plane() const { return false; }
  [[nodiscard]] virtual bool rides_on_control_plane() const { return false; }
  // What the family did not check on this lab although the lab could have had such tests (two
  // routers with nothing expected to be reachable between them), as notes for the report, so
  // that a PASS that checked little says so. Called once with the family's final results.
  // Default: nothing to say.
  [[nodiscard]] virtual std::vector<Note> coverage(
      const Context& /*ctx*/, const std::vector<TestResult>& /*results*/) const {
    return {};
  }
  // Figures a family measured in its last run beside its results (the traffic family's
  // bandwidth per pattern), for Report::bandwidth. Default: none.
  [[nodiscard]] virtual std::vector<Bandwidth> bandwidth() const { return {}; }
};

// Creates validator families by name, all of them when `only` is empty; names it does not know
// go to `unknown` (may be null) and are not created. The CLI passes the one list of families
// (validators/registry.hpp); code below it (the gate) receives it and never names a family.
using ValidatorFactory = std::function<std::vector<std::unique_ptr<Validator>>(
    const std::vector<std::string>& only, std::vector<std::string>* unknown)>;

// Helpers for families.
TestResult make_result(const std::string& validator, int test, const std::string& test_name,
                       Status status, const std::string& node, const std::string& peer,
                       const std::string& expected, const std::string& observed,
                       const std::string& message);

// A probe to send from `node` and what it is about, for families built on pings.
struct PingProbe {
  int test = 0;
  std::string test_name;
  std::string node;      // where the ping is sent from
  std::string subject;   // TestResult::peer: destination node / link / address
  std::string expected;  // e.g. "reply with DF at 9216 bytes"
  PingRequest request;
};

// Sends every probe (grouped per node, nodes in parallel) and maps outcomes: reply -> passed;
// timeout, no-route, too-big -> failed (the network is wrong); error -> error.
std::vector<TestResult> run_ping_probes(Context& ctx, const std::string& validator,
                                        const std::vector<PingProbe>& probes);
// The same, each outcome judged by `judge` (a negative test: a reply is the failure).
using PingJudge = std::function<TestResult(const PingProbe&, const PingResult&)>;
std::vector<TestResult> run_ping_probes(Context& ctx, const std::vector<PingProbe>& probes,
                                        const PingJudge& judge);
// Pure mapping used by run_ping_probes (exposed for unit tests).
TestResult ping_result(const std::string& validator, const PingProbe& probe,
                       const PingResult& result);

// Ordered pairs of distinct FRR nodes the fabric should route between, both ways
// (plan::expected_paths gives ECMP > 0 there and back: a ping needs its reply), in plan order.
// The first form: in either address family; the second: in the family of `paths`, a table the
// caller already computed (they cost a fixpoint per owner).
std::vector<std::pair<const plan::Node*, const plan::Node*>> routed_frr_pairs(
    const plan::Plan& plan);
std::vector<std::pair<const plan::Node*, const plan::Node*>> routed_frr_pairs(
    const plan::Plan& plan, const plan::PathTable& paths);
// Whether `paths` (one family's) has a path from `a` to `b` and one back.
bool routed_both_ways(const plan::PathTable& paths, const std::string& a, const std::string& b);

// Whether a ping from host `a` (from `a_addr`) to `b_addr` of host `b` can be answered: both
// behind one FRR router, or each host's subnet originated by its router (a prefix of the plan)
// and routed both ways between the routers (`paths`: the table of the addresses' family). A host's
// router is the FRR node on its first link intended up at both ends; a host whose every link is
// down reaches nothing; one whose default route is via no address of that router there (none:
// a containerlab host given no route) reaches its own subnet only. Hosts not behind an FRR router
// (a VM guest's own routing) are expected to reach each other. Tenant servers (plan.tenants) reach
// only their own network's (and, with an L3 VNI, their tenant's other networks'), over the overlay:
// both VTEPs in service and routed to each other.
bool hosts_routed(const plan::Plan& plan, const plan::PathTable& paths, const plan::Node& a,
                  const plan::Node& b, const std::string& a_addr, const std::string& b_addr);

// The node's loopbacks it still advertises (not in Node::withdraws; for an own config, among
// Node::advertised) and that are its own (not in Node::anycast): one it does not is neither a
// destination nor a usable source (replies to it have no route back, or go to another holder).
std::vector<std::string> advertised_loopbacks(const plan::Node& node);
// The address ("10.0.0.1", no length) of the first of `loopbacks` (prefixes, e.g. from
// advertised_loopbacks) in the family: the one a node pings from; "" when none is.
std::string first_of_family(const std::vector<std::string>& loopbacks, bool v6);

// How a result's message names a source that gave no data: "leaf1: `bridge -j fdb show`
// failed: <why>". A family reports it as Status::kError (missing data is never a pass).
std::string source_failed(const std::string& node, const std::string& command,
                          const std::string& why);
// The command LabProbe::ip_json runs for `args`, as a message names it: {"-d", "link", "show"}
// -> "ip -j -d link show"; {"fdb", "show"} -> "bridge -j fdb show" (iproute2 reads the FDB with
// `bridge`).
std::string ip_command(const std::vector<std::string>& args);

// "fd00::1/128" or "fd00::1" -> true; IPv4 -> false.
bool is_ipv6(const std::string& address_or_prefix);
// "10.0.0.1/32" -> "10.0.0.1".
std::string address_of(const std::string& prefix);

// At most `max` probes, evenly spaced and deterministic; all of them when max <= 0.
std::vector<PingProbe> sample_evenly(std::vector<PingProbe> probes, int max);

// The entry for neighbor `key` (e.g. "swp1") in FRR's `show bgp summary json`, looked up in the
// IPv4 and IPv6 unicast families, preferring one that is Established; nullptr if the neighbor is
// in neither. Tolerates any JSON shape.
const nlohmann::json* find_bgp_peer(const nlohmann::json& summary, const std::string& key);

// The state of the OSPF neighbor FRR has on interface `ifname` in `show ip ospf neighbor json`
// (FRR 8.4: {"neighbors": {"<router-id>": [{"nbrState": "Full/-", "ifaceName": "eth1:10.0.12.1"}]}}),
// the most advanced when it lists several; "" when there is none. Tolerates any JSON shape.
std::string ospf_neighbor_state(const nlohmann::json& neighbors, const std::string& ifname);
// The same neighbor with its router-id (the key it is listed under); nullopt when none. Also
// reads OSPFv3's `show ipv6 ospf6 neighbor json` (FRR 8.4: {"neighbors": [{"neighborId",
// "state": "Full", "interfaceName": "eth1"}]}).
struct OspfNeighbor {
  std::string router_id;
  std::string state;  // "Full/-", "ExStart/-", "2-Way/DROther", ...
  // Roles on a broadcast network (RFC 2328 §9.1), "DR", "Backup" or "DROther"; "" unknown. The
  // neighbor's: v2 the state's suffix, v3 `ifState`. This router's: v3 `interfaceState` (v2's
  // is in `show ip ospf interface json`, its interface's `state`).
  std::string role, my_role;
};
// With `router_id`, only a neighbor of that router-id counts (a LAN segment lists several
// neighbors on one interface).
std::optional<OspfNeighbor> find_ospf_neighbor(const nlohmann::json& neighbors,
                                               const std::string& ifname,
                                               const std::string& router_id = "");
// True for "Full/…": the adjacency is up (RFC 2328 §10.1).
inline bool ospf_full(const std::string& state) { return state.rfind("Full", 0) == 0; }
// "2-Way/…" (v2) or "Twoway" (v3).
bool ospf_two_way(const std::string& state);
// A role as FRR prints it, normalised: "BDR" and "Backup" are "Backup".
std::string ospf_role(const std::string& role);
// Whether a neighbor has reached the state it stays in: Full; on a LAN segment also 2-Way when
// both it and this router (`my_role`) are DROthers, the state two DROthers keep (RFC 2328
// §10.4). Before the election every neighbor is 2-Way/DROther too: this router's own role is
// what tells the two apart.
inline bool ospf_settled(const OspfNeighbor& n, bool on_segment, const std::string& my_role) {
  return ospf_full(n.state) || (on_segment && ospf_two_way(n.state) &&
                                ospf_role(n.role) == "DROther" && ospf_role(my_role) == "DROther");
}
// OSPF neighbor states in the order an adjacency passes them (RFC 2328 §10.1); -1 unknown.
int ospf_state_rank(const std::string& state);

// Validators probe nodes in parallel with twin::parallel_for (core/util.hpp).
using twin::parallel_for;

}  // namespace twin::validate
