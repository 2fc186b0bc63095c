#pragma once
// Raw per-node observations, as the probes return them (diff.hpp folds them into a NetState).
// Separate from diff.hpp because its members need the complete nlohmann::json type.
#include <nlohmann/json.hpp>

#include "twin/core/error.hpp"

namespace twin::replay {

struct NodeObservation {
  Result<nlohmann::json> bgp_summary;  // `show bgp summary json` ({} for a node without bgpd)
  Result<nlohmann::json> links;        // `ip -j link show`
  Result<nlohmann::json> routes4;      // `ip -j route show`
  Result<nlohmann::json> routes6;      // `ip -j -6 route show`
};

}  // namespace twin::replay
