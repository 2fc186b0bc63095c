#pragma once
// Link wiring: namespaces and veth pairs as `ip -batch` scripts (iproute2), one process each
// for the whole lab; work inside each namespace (sysctls, links up) in-process from a thread
// that entered it. Measured on a 56-node fabric: 2.7 s with one `ip` per operation, 0.44 s
// batched, ~0.3 s batched plus in-process — the kernel's own cost of registering 768 veth
// devices (sysfs and per-device sysctl trees) is ~0.25 s of it.
// The script builders are pure; the others act on the kernel.
#include <string>
#include <vector>

#include "twin/core/error.hpp"
#include "twin/plan/plan.hpp"
#include "twin/proc/runner.hpp"

namespace twin::wiring {

// Root-namespace script: "netns add <ns>" per node, in plan order.
std::string netns_add_script(const plan::Plan& plan);
// Root-namespace script: one "netns del" per namespace in `names`.
std::string netns_del_script(const std::vector<std::string>& names);
// Root-namespace script: each link's veth pair created directly in both namespaces with its
// final names, MTU and MACs (no temporary names in the root namespace, so no clash with the
// host's interfaces).
std::string veth_script(const plan::Plan& plan);
// Per-node script, run with `ip -n <netns> -batch -` after links_up: for host nodes, link
// addresses and routes; "" for FRR nodes (zebra sets their addresses from frr.conf).
std::string node_script(const plan::Node& node);

// The interfaces of `node` that links_up must bring up once every veth exists: lo and the `b`
// end of each of its links (veth_script creates `a` ends up already).
std::vector<std::string> interfaces_to_bring_up(const plan::Plan& plan, const plan::Node& node);

// Brings `ifnames` up inside `netns` over netlink from a thread that entered it (no process).
Result<void> links_up(const std::string& netns, const std::vector<std::string>& ifnames);

// Sysctls pinned in every namespace before any link exists (values in DESIGN.md §4):
// forwarding on, IPv6 on, DAD off (else link-local addresses stay tentative ~1 s and BGP
// unnumbered waits), rp_filter from the image.
std::vector<std::pair<std::string, std::string>> namespace_sysctls(const plan::Node& node);

// Writes `sysctls` (path relative to /proc/sys, value) inside netns `netns` from a thread that
// entered it: no process per namespace.
Result<void> apply_sysctls(const std::string& netns,
                           const std::vector<std::pair<std::string, std::string>>& sysctls);

// Runs `script` with `ip [-n netns] -batch -`. Teardown passes cancellable=false so that an
// interrupt cannot stop it half-way.
Result<void> run_batch(proc::ProcessRunner& runner, const std::string& script,
                       const std::string& netns, const std::string& what, bool cancellable = true);

}  // namespace twin::wiring
