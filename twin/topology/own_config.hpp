#pragma once
// Reads the own frr.conf of every node that has one (`config:`, or a containerlab
// `startup-config`/bind) into Node::own, and checks what twin must know before anything runs:
// each daemon the config needs may run on the node (a daemons file may switch it off), and no
// line needs what twin cannot model (a VRF). Part of loading a topology.
#include "twin/core/diagnostics.hpp"
#include "twin/topology/model.hpp"

namespace twin::topology {

// Fills Node::own for nodes with a `config` path; reports to `diags` (at the config file's
// line) a config that cannot be read, a needed daemon a daemons file switches off (naming both
// lines), and unsupported lines. Idempotent.
void read_own_configs(Topology& t, Diagnostics& diags);

}  // namespace twin::topology
