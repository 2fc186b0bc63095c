#pragma once
// FRR in a network namespace (DESIGN.md §4): how a node's daemons are started and queried.
// Every path is explicit and under the node's run folder, so labs never share a socket, pid
// file or config with each other or with the host's own FRR (/etc/frr, /var/run/frr).
#include <chrono>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "twin/core/error.hpp"
#include "twin/plan/plan.hpp"
#include "twin/proc/runner.hpp"

namespace twin::runtime {

// Full path of an FRR daemon binary (Debian: /usr/lib/frr/<daemon>; in a container node, the
// same path inside its image).
std::string daemon_path(const std::string& daemon);

// The major number of the FRR release that runs `node`: its container image's, as `up` read it
// (plan::Container::frr_version); 0 for this machine's own FRR (Debian 12: 8.4).
int frr_major(const plan::Node& node);
// Whether `node`'s FRR has a management daemon that must start first and owns staticd's
// configuration (FRR 9.0 and later: mgmtd; measured with 10.3: staticd and mgmtd refuse -f).
bool frr_has_mgmtd(const plan::Node& node);
// Whether `node`'s bfdd takes --bfdctl: FRR before 10.2, which removed bfdd's control socket
// (FRRouting/frr#16463; measured: 7.5.1's and 8.4.4's bfdd list it, 10.3's exits on it).
bool frr_has_bfdctl(const plan::Node& node);

// Makes `c` run the node's own FRR programs: a container node's come from its image, so `c`
// joins the container's mount namespace (proc::Command::mount_ns), found through
// container_pid_file, and a confined `c` (Command::writable) may write /run/frr too (the run
// folder again, where some releases keep sockets at fixed paths); a namespace node's are this
// machine's and `c` is left as it is. When the
// container is not running, the namespace path names that, and running `c` fails saying so.
void use_node_programs(const plan::Node& node, proc::Command& c);
// A folder for files the node's FRR programs read (a change's lines, a config to reload): the
// node's run folder for a container node (which its container sees at the same path), else
// "" (TempDir's default, /tmp).
std::string node_temp_parent(const plan::Node& node);

// The container node's running container process (its PID, checked against the recorded start
// time), or 0: not a container node, or its container is gone.
int container_pid(const plan::Node& node);
// The container node's mount namespace (/proc/<pid>/ns/mnt of its running container), or, when
// the container is not running, a path that names that (opening it fails saying so).
std::string container_mount_ns(const plan::Node& node);
// Where the container driver keeps the container's init process as "<pid> <start time>" (start
// time: /proc/<pid>/stat field 22, which tells a reused PID apart): <run_dir>/container.pid.
std::string container_pid_file(const plan::Node& node);

// Each daemon's own share of a configuration twin generated (Node::config_generated), so that
// every daemon reads it itself at start (-f) and no `vtysh -b` is needed (~70 ms of CPU per
// node: vtysh builds FRR's whole command graph first). Knows only the top-level statements
// twin's generator writes (plan/planner.cpp) and where FRR 8.4 handles them:
//   hostname -> every daemon; ip/ipv6 forwarding, `zebra ...`, interface blocks -> zebra;
//   router bgp block -> bgpd; ip/ipv6 route -> staticd; frr defaults (given by -F), service
//   integrated-vtysh-config (vtysh's own), `!`, `end` -> none.
// Returns nullopt for anything else, or when the daemon a statement needs is not in `daemons`:
// the caller then applies the whole file with `vtysh -b`, which knows every command.
std::optional<std::map<std::string, std::string>> split_generated_config(
    const std::string& config, const std::vector<std::string>& daemons);

// Where `daemon` of `node` reads its share of a split configuration (split_generated_config).
std::string daemon_config_path(const plan::Node& node, const std::string& daemon);

// The file-descriptor ceiling given to each daemon of `node` (--limit-fds): FRR sizes its event
// loop's per-fd tables by it (lib/thread.c, from RLIMIT_NOFILE by default, 20000 here and up to
// 1048576 on other hosts) and aborts on an fd at or above it. 256 covers a daemon's own sockets
// and files; 4 per interface covers a BGP session's socket plus a colliding second connection.
// Measured here: 8.2 -> 5.2 MiB PSS for an idle zebra at 20000 -> 256.
int fd_limit(const plan::Node& node);

// argv that starts `daemon` for `node`, in the foreground: no -d, whose fork of the fully
// initialised process costs ~20 ms of CPU per daemon in copy-on-write faults (bench/README);
// the caller runs it detached (proc::Command::detach) and waits for its vty socket. Profile
// -F, config -f (its share of a split generated config, or /dev/null when the integrated
// frr.conf is applied afterwards by `vtysh -b`, as FRR's own frrinit.sh does), pid file -i,
// zserv socket -z, vty socket folder --vty_socket, no TCP vty (-P 0), --limit-fds, log file.
std::vector<std::string> daemon_argv(const plan::Node& node, const std::string& daemon,
                                     bool own_config);

// Runs `command` on the node's `daemon` over its vty socket (runtime/vty.hpp; what
// `vtysh -d <daemon> -c <command>` does, without a vtysh process) and parses the JSON it prints.
// Errors: the daemon does not answer in time; FRR refused the command (its `%` message); output
// not JSON. An empty object `{}` is returned as is: callers treat it as "no data" (an error for
// validators, never a pass). Nothing at all (FRR prints nothing for some commands where their
// feature is off: `show evpn vni json` without EVPN) is JSON null. A release that prints no
// JSON for the command (FRR 7.5's ospf6d: neighbors, interfaces) answers in text, read into
// the JSON later releases print (runtime/ospf6_text.hpp).
Result<nlohmann::json> show_json(const plan::Node& node, const std::string& daemon,
                                 const std::string& command,
                                 std::chrono::milliseconds timeout = std::chrono::seconds(10));

// `ip -n <netns> -j <args...>` parsed as JSON; args starting with `fdb` (the bridge forwarding
// database, which `ip` cannot show) run iproute2's `bridge` instead.
Result<nlohmann::json> ip_json(proc::ProcessRunner& runner, const std::string& netns,
                               const std::vector<std::string>& args);

// Makes the node's running configuration equal to the file `config_path` by applying only the
// difference, with FRR's own frr-reload.py (package frr-pythontools). `test` only computes the
// difference (frr-reload.py --test) and leaves the node alone; `out` gets the tool's stdout.
// After a reload, a node running bgpd gets `clear bgp * soft` so policy settings apply to routes
// already exchanged.
// Errors: the tool could not run (kHarness), or it failed (kInput: FRR refused a line).
Result<void> frr_reload(proc::ProcessRunner& runner, const plan::Node& node,
                        const std::string& config_path, bool test, std::string* out = nullptr);

// FRR's version as `zebra --version`'s first line reports it ("8.4.4"), or "unknown".
std::string frr_version(proc::ProcessRunner& runner);

}  // namespace twin::runtime
