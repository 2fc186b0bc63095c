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

// agent_exec + parse of a guest_table_command's output.
Result<nlohmann::json> guest_table(const std::string& socket, KernelTable table);

// kEnvironment: the VM node's image runs no twin agent, so twin cannot look inside it.
Error no_agent(const plan::Node& node);

// Quotes `s` for the guest's sh (single quotes).
std::string sh_quote(const std::string& s);

}  // namespace twin::runtime
