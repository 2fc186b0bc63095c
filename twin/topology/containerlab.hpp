#pragma once
// containerlab topology files (*.clab.yml) → Topology, so a lab published for containerlab runs
// in twin unchanged. What twin honours, ignores (with a warning) and refuses (with an error) is
// tabled in docs/own-labs.md, "containerlab files". containerlab semantics followed: its topology
// definition (`name`, `topology.{defaults,kinds,groups,nodes,links}`; a node's field comes from
// the node, else its group, else its kind's entry in `kinds`, else `defaults`), links in the
// brief form (`endpoints: ["r1:eth1", "r2:eth1"]`) and the `type: veth` form, and paths
// relative to the file's folder. Never runs anything: `exec:` lines are read, not executed.
#include <optional>
#include <string>

#include "twin/core/diagnostics.hpp"
#include "twin/core/input_policy.hpp"
#include "twin/topology/model.hpp"

namespace twin::topology {

// True when `text` is shaped like a containerlab file: a top-level `topology:` mapping with
// `nodes`, and no twin `version:`; or when `file` ends in .clab.yml / .clab.yaml.
bool looks_like_containerlab(const std::string& text, const std::string& file);

// Loads a containerlab file: like load_topology, nullopt with every problem in `diags` (file:
// line:column), and warnings for fields twin ignores. The result has passed the same checks as
// a twin topology (check_topology, read_own_configs). The files it names (startup-config, the
// binds twin reads, image profiles) pass `policy` (null: the checkout root of `path`, or of
// `dir`), as load_topology's do.
std::optional<Topology> load_containerlab(const std::string& path, Diagnostics& diags,
                                          const std::string& lab_name = "",
                                          const InputPolicy* policy = nullptr);
std::optional<Topology> load_containerlab_text(const std::string& text, const std::string& file,
                                               const std::string& dir, Diagnostics& diags,
                                               const std::string& lab_name = "",
                                               const InputPolicy* policy = nullptr);

// What of `t` twin's format has no field for, each an error at its node: an FRR node that
// names no frr.conf (it boots Node::start_config) and daemons listed in containerlab's
// `extras.frr.daemons`. twin convert refuses such a file rather than write one that would plan
// otherwise.
void check_convertible(const Topology& t, Diagnostics& diags);

// `t` written in twin's topology format: a header naming `source`, every value explicit
// (kinds, images, MTUs, gateways), file paths relative to `out_dir` (the output file's folder).
// Loading it gives the same plan as `t`.
std::string to_twin_yaml(const Topology& t, const std::string& source, const std::string& out_dir);

}  // namespace twin::topology
