#pragma once
// Where a YAML node was written, as the 1-based line and column diagnostics print. Shared by the
// YAML loaders (topology, change set, scenario); includes yaml-cpp, so only their .cpp files
// include it.
#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "twin/topology/model.hpp"

namespace twin::topology {

inline Mark mark_of(const YAML::Node& n) {
  auto m = n.Mark();
  if (m.is_null()) return {};
  return {m.line + 1, m.column + 1};
}

// "a, b, c": the accepted names a diagnostic lists.
inline std::string join_names(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

}  // namespace twin::topology
