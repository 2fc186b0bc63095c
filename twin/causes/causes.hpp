#pragma once
// Likely causes: rules over the observed state that name the probable cause of a failure in one
// line, with their evidence — the step from "prefixes lost: leaf2 10.255.1.1/32" to "address
// 10.255.1.1 is on leaf1 lo and on leaf2 swp1". Each rule is pure and unit-tested on recorded
// FRR and kernel JSON (tests/data/frr84/causes/); gathering the facts is the only I/O. A rule
// that does not match says nothing: where none matches, reports say so instead of guessing.
//
// The rules are one list, cause_rules() (causes.cpp: each rule's name, one line, and the
// function that finds it). docs/likely-causes.md describes each in the list's order (a unit test
// holds the two equal); reports and the API carry the name as `rule`. FRR's and the kernel's
// own words are quoted in the evidence; FRR 8.4's JSON and RFC 4271 §6 (NOTIFICATION codes),
// RFC 8212 (ebgp-requires-policy), RFC 7348 §5 (VXLAN's 50 bytes) are the outside facts relied on.
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

// A likely-cause rule: its name (a cause's `rule`) and what it names, in one line.
struct CauseRule {
  const char* name;
  const char* summary;
};

// Every rule, in the order reports list what they find (a dead daemon first). Never empty.
const std::vector<CauseRule>& cause_rules();

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
