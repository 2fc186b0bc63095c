#pragma once
// FRR in a network namespace (DESIGN.md §4): how a node's daemons are started and queried.
// Every path is explicit and under the node's run folder, so labs never share a socket, pid
// file or config with each other or with the host's own FRR (/etc/frr, /var/run/frr).
#include <chrono>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "twin/core/error.hpp"
#include "twin/plan/plan.hpp"
#include "twin/proc/runner.hpp"

namespace twin::runtime {

// Full path of an FRR daemon binary (Debian: /usr/lib/frr/<daemon>).
std::string daemon_path(const std::string& daemon);

// argv that starts `daemon` for `node`: daemonised (-d: the launching process exits once the
// daemon has finished starting, FRR's lib/libfrr.c frr_daemonize), profile -F, no config of its
// own (-f /dev/null: the integrated frr.conf is applied afterwards by `vtysh -b`, exactly as
// FRR's own frrinit.sh does), pid file -i, zserv socket -z, vty socket folder --vty_socket,
// no TCP vty (-P 0), log to a file in the run folder.
std::vector<std::string> daemon_argv(const plan::Node& node, const std::string& daemon);

// argv that applies the node's integrated frr.conf to its running daemons (`vtysh -b`).
std::vector<std::string> boot_config_argv(const plan::Node& node);

// Runs `vtysh -d <daemon> -c <command>` against the node and parses the JSON it prints.
// Errors: vtysh failed or timed out; output not JSON. An empty object `{}` is returned as is:
// callers treat it as "no data" (an error for validators, never a pass).
Result<nlohmann::json> show_json(proc::ProcessRunner& runner, const plan::Node& node,
                                 const std::string& daemon, const std::string& command,
                                 std::chrono::milliseconds timeout = std::chrono::seconds(10));

// `ip -n <netns> -j <args...>` parsed as JSON.
Result<nlohmann::json> ip_json(proc::ProcessRunner& runner, const std::string& netns,
                               const std::vector<std::string>& args);

// Makes the node's running configuration equal to the file `config_path` by applying only the
// difference, with FRR's own frr-reload.py (package frr-pythontools). `test` only computes the
// difference (frr-reload.py --test) and leaves the node alone; `out` gets the tool's stdout.
// Errors: the tool could not run (kHarness), or it failed (kInput: FRR refused a line).
Result<void> frr_reload(proc::ProcessRunner& runner, const plan::Node& node,
                        const std::string& config_path, bool test, std::string* out = nullptr);

// FRR's version as `zebra --version`'s first line reports it ("8.4.4"), or "unknown".
std::string frr_version(proc::ProcessRunner& runner);

}  // namespace twin::runtime
