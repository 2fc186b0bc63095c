#pragma once
// VM nodes (backend libvirt): a QEMU domain per node whose NICs are taps joined to the lab's
// veths inside the node's namespace (runtime/libvirt.hpp). With twin's guest agent
// (runtime/agent.hpp) the driver reads tables, pings and runs commands inside the guest;
// without it, only the console and the host side of its wires are reachable.
#include <string>
#include <vector>

#include "twin/drivers/driver.hpp"

namespace twin::drivers {

const NodeDriver& libvirt_driver();

// Pings inside a guest: iputils ping runs in parallel, one shell command for all requests.
// Exposed for unit tests.
std::string guest_ping_script(const std::vector<runtime::PingRequest>& reqs);
std::vector<runtime::PingResult> parse_guest_pings(const std::string& output, size_t requests);
// Outcome of one iputils ping run from its exit code and its messages (ping has no
// machine-readable output): 0 = a reply; 1 = no reply; 2 = an error.
runtime::PingResult guest_ping_result(int exit_code, const std::string& output);

}  // namespace twin::drivers
