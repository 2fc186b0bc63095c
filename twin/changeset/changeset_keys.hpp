#pragma once
// The fields and values the change-set loader (changeset.cpp) accepts, per section. Shared with
// the schema test, which checks that scenarios/schema/change.schema.json declares exactly these.
// The test families a `check` step names are not listed here: they are the validator
// registry's (validators/registry.hpp family_names()), which replay may not include, so the
// caller passes them to the loader (changeset.hpp load_change_set), as it passes the gate its
// validators.
#include <string>
#include <vector>

#include "twin/core/duration.hpp"

namespace twin::replay::keys {

inline const std::vector<std::string> kTop = {"version", "name", "description", "intent", "steps"};
inline const std::vector<std::string> kIntent = {
    "drain",           "links-down",   "add-prefixes", "remove-prefixes",
    "tenant-networks", "tenant-ports", "paths",        "traffic"};
inline const std::vector<std::string> kPrefix = {"node", "prefix"};  // intent.*-prefixes[i]
inline const std::vector<std::string> kPath = {"node", "prefix", "prefixes", "ecmp",
                                               "next-hops"};  // intent.paths[i]
// A step: its name and exactly one kind key. The kinds in the order of StepKind and StepBody
// (changeset.hpp): the loader makes the kind at a key's position, to_string(StepKind) reads it.
inline const std::vector<std::string> kStepKinds = {
    "frr", "interface", "link", "wait", "check", "topology", "sysctl", "vxlan", "image", "run"};
inline const std::vector<std::string> kStep = [] {
  std::vector<std::string> v{"name"};
  v.insert(v.end(), kStepKinds.begin(), kStepKinds.end());
  return v;
}();
inline const std::vector<std::string> kFrr = {"nodes", "node", "add", "remove", "replace"};
inline const std::vector<std::string> kInterface = {
    "interfaces", "interface", "mtu", "state", "add-addresses", "remove-addresses"};
inline const std::vector<std::string> kLink = {"links", "link", "mtu", "state"};
inline const std::vector<std::string> kWait = {"until", "timeout", "duration"};
inline const std::vector<std::string> kCheck = {"tests", "expect", "failing", "timeout"};
inline const std::vector<std::string> kTopology = {"file"};
inline const std::vector<std::string> kSysctl = {"nodes", "node", "set"};
inline const std::vector<std::string> kVxlan = {"nodes", "node", "vni", "ports", "remove"};
inline const std::vector<std::string> kImage = {"nodes", "node", "to"};
inline const std::vector<std::string> kRun = {"command", "timeout"};

// Values.
inline const std::vector<std::string> kUntil = {"converged", "duration"};
inline const std::vector<std::string> kExpect = {"pass", "fail"};
inline const std::vector<std::string> kState = {"up", "down"};
inline constexpr const char* kAllLinks = "all";  // `links: all`

// Patterns (ECMAScript, whole string), the same in the schema.
inline constexpr const char* kNamePattern = "[A-Za-z0-9][A-Za-z0-9_.-]*";
// A number and a unit (rules in twin/core/duration.hpp, shared with every loader).
inline constexpr const char* kDurationPattern = twin::kDurationPattern;
inline constexpr long long kMaxDurationMs = twin::kMaxDurationMs;
// A sysctl key: `net.` and dotted words (per network namespace; sysctl(8)'s spelling).
inline constexpr const char* kSysctlKeyPattern = "net(\\.[A-Za-z0-9_-]+)+";
// Its value: what /proc/sys takes, one line (numbers, words, space-separated lists).
inline constexpr const char* kSysctlValuePattern = "[A-Za-z0-9_.:/ -]+";
// A tenant network in a change: "tenant/network", each part a topology tenant name.
inline constexpr const char* kTenantNetworkPattern =
    "[A-Za-z][A-Za-z0-9_-]{0,14}/[A-Za-z0-9][A-Za-z0-9_-]{0,31}";
// A test family's spelling, when the loader is given no list of families.
inline constexpr const char* kFamilyPattern = "[a-z][a-z0-9-]*";
// family.N: N without leading zeros, at most 6 digits.
inline constexpr const char* kTestNumberPattern = "0|[1-9][0-9]{0,5}";

}  // namespace twin::replay::keys
