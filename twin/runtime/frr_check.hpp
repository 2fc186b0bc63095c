#pragma once
// FRR's own syntax check of whole configuration files, without any daemon (`vtysh -C`), and of
// the users' own configs of a topology before a lab is built: a line FRR rejects, or one that
// needs a daemon this FRR does not ship, is the user's to fix at its file:line, before anything
// exists.
#include <string>
#include <utility>
#include <vector>

#include "twin/core/diagnostics.hpp"
#include "twin/core/error.hpp"
#include "twin/proc/runner.hpp"
#include "twin/runtime/frr_config.hpp"
#include "twin/topology/model.hpp"

namespace twin::runtime {

// A line FRR's parser rejected: 1-based line of the file (0 when vtysh named none) and FRR's
// message as vtysh_complaints gives it.
using Complaint = std::pair<int, std::string>;

// FRR's own parser on whole configuration files, without any daemon (`vtysh -C -f FILE`, FRR's
// docs "VTY shell": -C checks the syntax only). One list per path, in order; empty when FRR
// accepts the file. The files are checked concurrently (~75 ms of vtysh each). Errors: vtysh
// cannot run (kHarness); an unreadable file is FRR's complaint, not an error.
Result<std::vector<std::vector<Complaint>>> frr_syntax_check(proc::ProcessRunner& runner,
                                                             const std::vector<std::string>& paths);

// Every own configuration of `topo` (a node's `config:` or containerlab `startup-config`) through
// frr_syntax_check before anything is created: each rejected line becomes a diagnostic at the
// config's file:line:column (first non-blank character), naming the nodes that use the file, so
// `plan`/`up`/`run`/`convert` stop with exit 2 rather than fail mid-`up` with a half-built lab.
// A file shared by several nodes is checked once. A line needing a daemon FRR here does not ship
// (no /usr/lib/frr/<daemon>) is a diagnostic too. Nodes that run an image's FRR (container
// profiles, containerlab images) are left to their own release, which checks the file as the
// node starts — but for a containerlab image of this machine's release line (8.4.x here),
// which runs as this machine's FRR. Errors: as frr_syntax_check.
Result<void> check_own_configs(const topology::Topology& topo, proc::ProcessRunner& runner,
                               Diagnostics& diags);

}  // namespace twin::runtime
