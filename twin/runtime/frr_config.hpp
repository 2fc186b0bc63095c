#pragma once
// A running node's FRR configuration through vtysh (FRR's docs, "VTY shell"): read it, apply
// lines to it, check lines without a daemon. vtysh talks to the node's daemons over the vty
// sockets in the node's run folder, so labs never reach each other's FRR or the host's.
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "twin/core/diagnostics.hpp"
#include "twin/core/error.hpp"
#include "twin/plan/plan.hpp"
#include "twin/proc/runner.hpp"
#include "twin/topology/model.hpp"

namespace twin::runtime {

// `vtysh` for `node`: its vty sockets and config folder, its name as hostname.
proc::Command vtysh_command(const plan::Node& node, std::vector<std::string> args,
                            std::chrono::milliseconds timeout = std::chrono::seconds(30));

// vtysh's complaints about lines it rejected ("line 4: % Unknown command[25]:  bogus") as
// (line, message), with FRR's internal return codes dropped and a daemon's own "% ..."
// explanation put in front of the line it explains.
std::vector<std::pair<int, std::string>> vtysh_complaints(const std::string& output);

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
// (no /usr/lib/frr/<daemon>) is a diagnostic too. Errors: as frr_syntax_check.
Result<void> check_own_configs(const topology::Topology& topo, proc::ProcessRunner& runner,
                               Diagnostics& diags);

// `show running-config` without the "Building configuration..." banner. Errors: kHarness.
Result<std::string> running_config(proc::ProcessRunner& runner, const plan::Node& node);

// Applies config lines with `vtysh -f` (contexts as in frr.conf). vtysh applies every line it
// can and reports the others; any complaint fails (kInput) naming each line: at `file`:line
// when first_line > 0 (the text's first line is that line of `file`), else by its text.
Result<void> vtysh_apply(proc::ProcessRunner& runner, const plan::Node& node,
                         const std::string& text, int first_line, const std::string& file);

}  // namespace twin::runtime
