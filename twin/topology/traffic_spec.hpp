#pragma once
// `traffic:` as a topology file and a change set's intent write it: true (twin's defaults,
// topology::TrafficSpec), false (none), or a mapping of pattern, duration, flows-per-pair,
// protocol, effective-bandwidth, tail-latency and bandwidth-loss (docs/traffic.md,
// docs/change-sets.md). One reader, so both files accept the same spellings.
#include <optional>
#include <string>
#include <vector>

#include "twin/core/yaml_reader.hpp"
#include "twin/topology/model.hpp"

namespace twin::topology {

// The mapping's keys, in the schemas' order (the schema tests compare them).
extern const std::vector<std::string> kTrafficKeys;

// Reads `v` (present). nullopt for `false`, and for a value with problems (each reported
// through `r`, with file:line:column).
std::optional<TrafficSpec> read_traffic_spec(yaml::Reader& r, const yaml::Value& v);

}  // namespace twin::topology
