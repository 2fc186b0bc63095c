#pragma once
// The lab's management network in the kernel (plan.hpp Mgmt, docs/management.md): a bridge in
// the lab's management namespace, one veth per member node (its `mgmt0` in the node's
// namespace, the other end a bridge port), one veth to the host (its end in the root namespace
// with the subnet's first address: the host reaches every node, and the connected route is the
// only route it gains), and an nftables table that forwards nothing into or out of that veth,
// so only the host and the lab's own namespaces reach the management addresses, whatever the
// host's forwarding. The script builders are pure.
#include <string>
#include <vector>

#include "twin/plan/plan.hpp"

namespace twin::wiring {

// Root-namespace `ip -batch` script. With `network`: the management namespace and the host's
// veth (its address, up). Then per node of `nodes` (members: mgmt_address set) its veth pair,
// created directly in both namespaces.
std::string mgmt_root_script(const plan::Plan& plan, const std::vector<const plan::Node*>& nodes,
                             bool network);
// Script for the management namespace: with `network` the bridge (STP off, no forward delay, no
// multicast snooping: as a LAN segment's) and the host's port; then each node's port joins it,
// all up.
std::string mgmt_bridge_script(const plan::Plan& plan, const std::vector<const plan::Node*>& nodes,
                               bool network);
// Script for a member node's namespace: its management address on its port, up. "" for a node
// that is not a member.
std::string mgmt_node_script(const plan::Plan& plan, const plan::Node& node);
// `nft -f -` input that creates the management network's table (inet family): the forward
// hook drops whatever would be routed into or out of the host's veth. Idempotent (the table is
// flushed first when it exists).
std::string mgmt_nft_script(const plan::Mgmt& mgmt);
// `nft -f -` input run in a member node's namespace: the node forwards nothing into or out of
// its management port (it is a router: without this a server's packets reached every other
// router's management address through it), and its management address answers on that port
// (and lo) only, so the fabric cannot reach its sshd (Linux answers for a local address on any
// port). "" for a node that is not a member.
std::string mgmt_node_nft_script(const plan::Plan& plan, const plan::Node& node);

}  // namespace twin::wiring
