#pragma once
// Client of twin's guest agent (tools/test-vm/init): a line protocol on a virtio-serial port that
// QEMU exposes on the host as a unix socket (plan Vm::agent_socket).
//   host -> guest: "<id> <command>\n"           one line; the guest runs it under sh
//   guest -> host: <output>"\n\x1eTWIN-END <id> <exit code>\n"
// It is how twin reads a VM's interfaces (as `ip -j` JSON, through the image's twin-json) and
// runs pings and `twin exec` inside the guest. One command at a time per VM: calls on the same
// socket are serialised within the process, and QEMU's socket takes one client at a time.
#include <chrono>
#include <string>
#include <vector>

#include "twin/core/error.hpp"
#include "twin/plan/plan.hpp"
#include "twin/runtime/netlink.hpp"

namespace twin::runtime {

struct AgentReply {
  int exit_code = -1;
  std::string output;  // stdout and stderr, interleaved as the guest wrote them
};

// Runs `command` (one line, no newline) in the guest. Errors: kEnvironment when the socket
// cannot be reached (VM not running, image without the agent), kHarness on a timeout or a
// malformed reply. The guest's exit code is data, not an error.
Result<AgentReply> agent_exec(const std::string& socket, const std::string& command,
                              std::chrono::milliseconds timeout = std::chrono::seconds(10));

// The guest command that prints `table` as `ip -j` JSON (twin-json in the test-vm image).
std::string guest_table_command(KernelTable table);

// kEnvironment: twin cannot look inside the VM node: its image runs no twin agent and no sshd
// twin may use (agent "ssh" needs the lab's management network).
Error no_agent(const plan::Node& node);

// ---- The guest channel: whichever way the node's image lets twin in (topology VmProfile agent).
// "twin": agent_exec on Vm::agent_socket, kernel tables through twin-json. "ssh": the NOS's own
// sshd on the node's management address (only once the VM is on the lab's management network),
// Debian's OpenSSH client from this machine's namespace, the guest's login with its key, or its
// password through SSH_ASKPASS reading Vm::ssh_password_file (never on a command line); host
// keys accepted at first contact into <run_dir>/known_hosts and checked after; kernel tables
// through the guest's iproute2 (`ip -j`), FRR through Vm::vtysh.

// Whether twin can run commands inside the node's guest.
bool guest_readable(const plan::Node& node);
// Runs `command` in the guest by its channel. Errors as agent_exec's; over ssh, kEnvironment
// with ssh's own words when it cannot log in (exit 255). The command's exit code is data; over
// ssh the output is its stdout, with its stderr after only when it failed.
Result<AgentReply> guest_exec(const plan::Node& node, const std::string& command,
                              std::chrono::milliseconds timeout = std::chrono::seconds(10));
// The guest command that prints `table` as `ip -j` JSON for the node's channel, and its tables.
std::string guest_table_command(const plan::Node& node, KernelTable table);
Result<nlohmann::json> guest_table(const plan::Node& node, KernelTable table);
// The command that runs the guest's vtysh ("vtysh" through the agent).
std::string guest_vtysh(const plan::Node& node);
// Pure, for the tests: the ssh client's argv for `command` on the node's guest.
std::vector<std::string> guest_ssh_argv(const plan::Node& node, const std::string& command);
// The askpass program `up` writes beside the password file (0700): prints the password.
std::string guest_askpass_path(const plan::Node& node);
std::string guest_askpass_script(const plan::Node& node);

// Quotes `s` for the guest's sh (single quotes).
std::string sh_quote(const std::string& s);

}  // namespace twin::runtime
