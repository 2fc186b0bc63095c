#pragma once
// A running node's FRR configuration through vtysh (FRR's docs, "VTY shell"): read it, apply
// lines to it (FRR's syntax check of whole files: frr_check.hpp). vtysh talks to the node's
// daemons over the vty sockets in the node's run folder, so labs never reach each other's FRR
// or the host's.
#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "twin/core/error.hpp"
#include "twin/plan/plan.hpp"
#include "twin/proc/runner.hpp"

namespace twin::runtime {

// `vtysh` for `node`: its vty sockets and config folder, its name as hostname.
proc::Command vtysh_command(const plan::Node& node, std::vector<std::string> args,
                            std::chrono::milliseconds timeout = std::chrono::seconds(30));

// vtysh's complaints about lines it rejected ("line 4: % Unknown command[25]:  bogus") as
// (line, message), with FRR's internal return codes dropped and a daemon's own "% ..."
// explanation put in front of the line it explains.
std::vector<std::pair<int, std::string>> vtysh_complaints(const std::string& output);

// `show running-config` without the "Building configuration..." banner, as vtysh prints it.
// Read from each daemon's vty socket and merged as vtysh merges (running_config_from_sockets);
// through a `vtysh` process when that is not possible. Errors: kHarness.
Result<std::string> running_config(proc::ProcessRunner& runner, const plan::Node& node);
// The same through a `vtysh -c "show running-config"` process (~70–100 ms of CPU).
Result<std::string> running_config_vtysh(proc::ProcessRunner& runner, const plan::Node& node);
// The same from the daemons' vty sockets in-process (`write terminal` to each, merged by
// vtysh_merge.hpp; ~1 ms per daemon). nullopt where vtysh's answer could differ or the read
// failed: no daemon socket, a daemon that does not answer, a vtysh.conf line the merge does
// not know.
std::optional<std::string> running_config_from_sockets(const plan::Node& node);

// Applies config lines with `vtysh -f` (contexts as in frr.conf). vtysh applies every line it
// can and reports the others; any complaint fails (kInput) naming each line: at `file`:line
// when first_line > 0 (the text's first line is that line of `file`), else by its text.
Result<void> vtysh_apply(proc::ProcessRunner& runner, const plan::Node& node,
                         const std::string& text, int first_line, const std::string& file);

}  // namespace twin::runtime
