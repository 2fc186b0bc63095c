#pragma once
// YAML helpers shared by the loaders (topology, image profile, change set, scenario): parsing
// with a diagnostic, and where a node was written as the 1-based line and column diagnostics
// print. Includes yaml-cpp, so only their .cpp files include it.
#include <yaml-cpp/yaml.h>

#include <optional>
#include <string>
#include <vector>

#include "twin/core/diagnostics.hpp"
#include "twin/topology/model.hpp"

namespace twin::topology {

// Parses `text` (read from `file`); on a syntax error adds one diagnostic at the place yaml-cpp
// names and returns nullopt.
inline std::optional<YAML::Node> parse_yaml(const std::string& text, const std::string& file,
                                            Diagnostics& d) {
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    d.add({file, e.mark.line + 1, e.mark.column + 1, "", "malformed YAML: " + e.msg,
           "check indentation and brackets near this place"});
    return std::nullopt;
  }
}

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
