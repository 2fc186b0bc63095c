#pragma once
// Nodes that are a network namespace of their own (DESIGN.md §4): netns-frr runs the image's
// FRR daemons in it, netns-host only has addresses and routes (a server).
#include "twin/drivers/driver.hpp"

namespace twin::drivers {

const NodeDriver& netns_frr_driver();
const NodeDriver& netns_host_driver();
// netns-bridge: a LAN segment (kind bridge), a Linux bridge whose ports are its links.
const NodeDriver& netns_bridge_driver();

// Replaces the calling process with `argv` (empty: $SHELL) inside network namespace `netns`,
// in the lab's cgroup, with a private mount namespace in which each (source, target) of
// `binds` is mounted, /sys showing that namespace, and `hostname`. With `mount_ns` (a file such
// as /proc/<pid>/ns/mnt: a container node's) that mount namespace is joined first, so the
// command and the binds are the container's. Returns only on failure, with the exit code to
// use after printing why (3: a system call failed; 126/127: exec).
int exec_in_netns(const state::State& st, const std::string& netns, const std::string& hostname,
                  const std::vector<std::pair<std::string, std::string>>& binds,
                  const std::vector<std::string>& argv, const std::string& mount_ns = "");
// container-frr: an FRR node whose programs come from an OCI image (drivers/container.hpp).
const NodeDriver& container_frr_driver();

}  // namespace twin::drivers
