#pragma once
// The `checks:` section: assertions a user declares about a lab without writing C++
// (docs/validators.md, "Declared checks"). In twin's format it is a top-level list; beside a
// containerlab file it is the companion file `<name>.checks.yaml` (a mapping holding
// `checks:`), read by load_topology(). Each check is validated here against the topology's
// nodes (file:line:col); the `checks` validator family (validators/checks/) asserts them.
#include <optional>
#include <string>
#include <vector>

#include "twin/core/diagnostics.hpp"
#include "twin/core/input_policy.hpp"
#include "twin/topology/model.hpp"

namespace twin::yaml {
class Reader;
struct Value;
}  // namespace twin::yaml

namespace twin::topology {

// The fields of a check and of each kind, as the loader accepts them (the schema test holds
// these equal to topologies/schema/topology.schema.json).
inline const std::vector<std::string> kCheckKeys = {"name",  "wait",  "after",
                                                    "reach", "route", "frr"};
inline const std::vector<std::string> kReachKeys = {"from", "to", "expect"};
inline const std::vector<std::string> kRouteCheckKeys = {"node", "prefix", "nexthops", "protocol"};
inline const std::vector<std::string> kFrrCheckKeys = {"node", "command", "match"};
inline constexpr int kMaxCheckWaitS = 600;

// Reads the list `list` (field path "checks") into checks, every problem into `r`'s
// diagnostics. `t`'s nodes must be read already (checks name them).
std::vector<Check> read_checks(yaml::Reader& r, const yaml::Value& list, const Topology& t);

// The companion checks file of a containerlab file: "lab.clab.yml" -> "lab.checks.yaml" (in the
// same folder; ".clab.yaml", ".yml" and ".yaml" are stripped the same way).
std::string companion_checks_path(const std::string& clab_path);

// Reads the checks file `path` (a mapping with one key, `checks`) into t.checks, if `policy`
// lets it be read (a containerlab file's companion lies beside it). False after diagnostics.
bool load_checks_file(const std::string& path, Topology& t, Diagnostics& diags,
                      const InputPolicy& policy);

// The FRR daemon that answers `command` ("show ip ospf neighbor json" -> "ospfd"); "" when
// twin cannot tell.
std::string daemon_for_show(const std::string& command);

// A generated check name: "reach pc1->pc3", "unreachable pc1->10.9.0.1",
// "route r1 192.168.3.0/24", "frr r1 show ip ospf neighbor json".
std::string default_check_name(const Check& c);

}  // namespace twin::topology
