#pragma once
// Reads the own frr.conf of every node that has one (`config:`, or a containerlab
// `startup-config`/bind) into Node::own, and checks what twin must know before anything runs:
// no line needs what twin cannot model (a VRF), and the topology does not contradict the config.
// A line needing a daemon that a daemons file switches off is not refused: FRR 8.4 runs such a
// config (bgpd takes `neighbor X bfd` without bfdd; `vtysh -b` skips the lines of a daemon that
// is not running and exits 0), so the planner notes what will not run instead. Part of loading
// a topology.
#include <optional>
#include <string>

#include "twin/core/diagnostics.hpp"
#include "twin/topology/model.hpp"

namespace twin::topology {

// Fills Node::own for nodes with a `config` path; reports to `diags` (at the config file's
// line) a config that cannot be read, unsupported lines, and `asn`/`router-id` fields the
// config contradicts. Idempotent.
void read_own_configs(Topology& t, Diagnostics& diags);

// Why `daemon` does not run on `n` although its config may need it: "daemons:7 switches bfdd
// off", "the node's daemons (daemons) do not include bfdd", or for containerlab's list
// "topology.nodes.r1.extras.frr.daemons (lab.clab.yml:9) does not list bfdd"; nullopt when it
// runs as far as the daemons file (or list) decides (none, zebra, or staticd, which FRR's init
// starts whatever the file says). Pure.
std::optional<std::string> daemon_switched_off(const Node& n, const std::string& daemon);

}  // namespace twin::topology
