#pragma once
// Topology file → Topology, with every problem reported at once (DESIGN.md §3).
// Never logs, never touches the system beyond reading the topology, its image profiles and the
// files it names — each through an InputPolicy (core/input_policy.hpp): a file outside the
// policy's roots is refused by name at the field that names it, never read.
#include <optional>
#include <string>

#include "twin/core/diagnostics.hpp"
#include "twin/core/input_policy.hpp"
#include "twin/topology/model.hpp"

namespace twin::topology {

// Loads and checks `path`. On any problem, returns nullopt and fills `diags` with every problem
// found (file:line:column, field, expectation, hint); the Topology is returned only when
// `diags` gained nothing. A non-empty `lab_name` (`--name`) is the lab's name: the file's
// `name` is then neither required nor checked (a containerlab name twin cannot use is fine).
// `policy` says which files the topology (and the file itself) may name; null: the checkout root
// of `path` alone (InputPolicy::for_input). Image profiles may also come from the image search
// path's folders.
std::optional<Topology> load_topology(const std::string& path, Diagnostics& diags,
                                      const std::string& lab_name = "",
                                      const InputPolicy* policy = nullptr);

// Same, from text already in memory; `file` names it in diagnostics and relative paths resolve
// against `dir` (null `policy`: the checkout root of `dir`). Used by tests and by `twin gen`.
std::optional<Topology> load_topology_text(const std::string& text, const std::string& file,
                                           const std::string& dir, Diagnostics& diags,
                                           const std::string& lab_name = "",
                                           const InputPolicy* policy = nullptr);

}  // namespace twin::topology
