#pragma once
// Inventories of a lab's management network for the tools orchestrators drive (twin inventory,
// docs/management.md): an Ansible inventory (groups by role — spines, leaves, ... — from the
// graph's roles; `ansible_network_os: frr.frr.frr` over `ansible.netcommon.network_cli`, the
// lab's key), a Nornir hosts file, an ssh_config (`ssh -F FILE leaf1`) and JSON. Members only:
// the nodes with a management address, whose sshd lands in vtysh (drivers/ssh.hpp). Pure.
#include <string>

#include "twin/core/error.hpp"
#include "twin/plan/plan.hpp"

namespace twin::graph {

// "ansible" | "nornir" | "ssh-config" | "json".
inline constexpr const char* kInventoryFormats[] = {"ansible", "nornir", "ssh-config", "json"};

// The inventory of `plan` in `format`. Errors: kUsage for a lab without a management network
// (naming the topology key that adds one) or an unknown format.
Result<std::string> inventory(const plan::Plan& plan, const std::string& format);

}  // namespace twin::graph
