#pragma once
// Likely causes: rules over the observed state that name the probable cause of a failure in one
// line, with their evidence — the step from "prefixes lost: leaf2 10.255.1.1/32" to "address
// 10.255.1.1 is on leaf1 lo and on leaf2 swp1". Each rule is pure and unit-tested on recorded
// FRR and kernel JSON (tests/data/frr84/causes/); gathering the facts is the only I/O. A rule
// that does not match says nothing: where none matches, reports say so instead of guessing.
//
// Rules (FRR's and the kernel's own words quoted in the evidence):
//   daemon-dead         a daemon (or VM) twin runs for a node is not running (the node family's
//                       unhealthy result): its exit status or last log line
//   ospf-auth           the two ends of an expected OSPF adjacency disagree on authentication
//                       (type, or the message-digest key one signs with), from their running
//                       configs (FRR 8.4's JSON does not show it); keys are never quoted
//   duplicate-address   one address on two nodes (not one the plan puts on both)
//   bgp-notification    a session not Established whose last NOTIFICATION names why: hold
//                       timer expired, maximum prefixes, bad BGP identifier, ... (FRR `show bgp
//                       neighbors json` lastNotificationReason, lastErrorCodeSubcode; RFC 4271
//                       §6); with the remote-as mismatch below when there is one, whatever the
//                       NOTIFICATION said
//   remote-as-mismatch  a session not Established where one end's configured remote-as (its
//                       remoteAs) is not the other's AS: named from the configuration, since the
//                       last NOTIFICATION ("Bad Peer AS", or an FSM error from the OPEN collision
//                       that follows) depends on timing; alone when neither end saw one
//   policy-undefined    a neighbor's route-map, prefix-list or filter-list that is not defined
//                       (FRR then lets nothing through that way)
//   policy-denies-all   a route-map applied to a neighbor with deny entries only
//   policy-required     `bgp ebgp-requires-policy` (RFC 8212) on, and an eBGP neighbor without
//                       route-maps in and out: nothing passes once its session (re)starts
//   both-passive        both ends of an expected session configured passive
//   unnumbered-ipv6     IPv6 disabled, or no link-local address, on a BGP-unnumbered port
//   mtu-mismatch        the two ends of a link with different MTUs (both values)
//   forwarding-off      IP forwarding off on a router (it drops transit traffic)
//   lo-down             a router's lo administratively down
//   ospf-mismatch       the OSPF family's own finding (area, hello/dead, MTU, network type)
//   static-override     a route of another origin (static, or added by hand) on a router for a
//                       prefix inside one the fabric routes from another node: the kernel
//                       prefers the longer (or same-length, lower-metric) match, so that traffic
//                       takes its one path whatever the routing protocols do (it hides from
//                       every validation until a failure takes its path away)
//   evpn-not-advertised a VTEP (a leaf with tenant ports) whose running config has no
//                       `advertise-all-vni` (nor a `vni` block) under l2vpn evpn: its VNIs and
//                       servers stay unknown to the other VTEPs (FRR docs, "EVPN")
//   tenant-port-misplaced a tenant port whose bridge is not its network's (`master` in `ip
//                       link`): in another network's bridge (the leak: its server shares that
//                       L2 segment), in a VNI no network has (a mistyped VNI), or in none
//   underlay-mtu        fabric ports below the servers' largest frame plus VXLAN's 50 bytes
//                       (RFC 7348 §5): VTEPs set DF, so full overlay frames are dropped
//   tenant-subnet-mismatch  one L2 network's servers (as the change means them) in two IPv4
//                       subnets, in a tenant without a gateway: a server moved in, not readdressed
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "twin/drivers/registry.hpp"
#include "twin/plan/plan.hpp"
#include "twin/proc/runner.hpp"
#include "twin/verdict/seams.hpp"
#include "twin/verdict/diff.hpp"
#include "twin/validate/validator.hpp"

namespace twin::replay {

// What the rules look at, per node; absent parts are skipped by the rules that need them.
struct NodeFacts {
  std::optional<nlohmann::json> addresses;      // `ip -j addr show`
  std::optional<nlohmann::json> bgp_neighbors;  // `show bgp neighbors json`
  std::map<std::string, std::string> sysctls;   // sysctl name -> value (forwarding, IPv6 per port)
  std::string config;                           // running FRR configuration
};
struct CauseFacts {
  std::map<std::string, NodeFacts> nodes;
  const validate::Report* after = nullptr;  // the validation the failures come from
  const NetState* state = nullptr;          // what it observed (routes of other origins)
  // The plan as the change means it (a change set's intent), when it differs from the one the
  // rules judge by: the tenant rules take their tenants, ports and server addresses from it (a
  // declared move is where the port should be). The other rules keep the running plan: an
  // address a change adds twice is a duplicate, not the plan's anycast. Null: the same plan.
  const plan::Plan* intended = nullptr;
};

// The kernel settings the rules read per FRR node (NodeFacts::sysctls): IPv4 and IPv6
// forwarding, and IPv6 on every fabric port (BGP unnumbered needs it). Pure.
std::vector<std::string> fact_sysctl_keys(const plan::Node& node);

// Every cause the rules find in `facts`, for the lab as `plan` intends it. Pure.
std::vector<Cause> likely_causes(const plan::Plan& plan, const CauseFacts& facts);

// Gives each reason of `v` the causes concerning a node it names (in its subjects or message);
// a cause no reason names goes to the first reason. Pure.
void attach_causes(Verdict& v, const std::vector<Cause>& causes);

// The facts of every FRR node of `plan` (addresses, BGP neighbors, forwarding and IPv6
// sysctls, running config) through `probe` and the drivers: a node's config from `configs`
// (node -> running config, as the gate recorded them) or, when it is not there, read now.
// Nodes in parallel.
CauseFacts gather_cause_facts(const plan::Plan& plan, validate::LabProbe& probe,
                              const drivers::DriverLookup& drivers, proc::ProcessRunner& runner,
                              const std::map<std::string, std::string>& configs, int parallel);

// The likely causes of what `phase` saw on `plan`: the facts gathered now, with the phase's
// results and observed state (the gate's rejections, the drill's hurt elements).
// `intended` (may be null) as in CauseFacts.
std::vector<Cause> explain_phase(const plan::Plan& plan, const Phase& phase,
                                 const drivers::DriverLookup& drivers, proc::ProcessRunner& runner,
                                 const std::map<std::string, std::string>& configs, int parallel,
                                 const plan::Plan* intended = nullptr);

}  // namespace twin::replay
