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
// veth (its address, up). Then per node of `nodes` that joins through a veth (mgmt_port set;
// a VM joins through its tap) its veth pair, created directly in both namespaces.
std::string mgmt_root_script(const plan::Plan& plan, const std::vector<const plan::Node*>& nodes,
                             bool network);
// Script for the management namespace: with `network` the bridge (STP off, no forward delay, no
// multicast snooping: as a LAN segment's), the host's port and, with VM members, the DHCP
// server's address on the bridge; then each node's port joins it, all up.
std::string mgmt_bridge_script(const plan::Plan& plan, const std::vector<const plan::Node*>& nodes,
                               bool network);
// Script for a member node's namespace: its management address on its port, up, and the
// policy rules that keep the management network apart from the fabric (the node is a router:
// without them a server's packets reached every router's sshd through it). Its own management
// address is delivered only to what arrives on the port or from the node itself; only the node's
// own packets may use the route to the management subnet (nothing is forwarded into it). The
// rule that looks up the local table moves from priority 0 to 32765 (under main's 32766), as a
// VRF setup moves it, so that these come first. One `ip -batch` with the address: measured at
// 56 nodes, an nftables table per node instead cost 1.5 s of `up`. "" for a node that is not a
// member.
std::string mgmt_node_script(const plan::Plan& plan, const plan::Node& node);
// Script for the management namespace: a VM member's tap (moved there by tap_move_script once
// QEMU holds it) joins the bridge, up. "" for a node whose NIC 0 is not on the bridge.
std::string mgmt_vm_port_script(const plan::Node& node);

// Twin's DHCP server for the VM members (plan.hpp Mgmt::dhcp_address): Debian's dnsmasq in the
// management namespace on the bridge, DHCP only (no DNS: port 0), static leases only (an
// address for each VM's NIC 0 MAC, nothing for anyone else), no router option (the guest gains
// only its connected route), leases in memory. `hosts_file` holds mgmt_dhcp_hosts' text;
// dnsmasq rereads it on SIGHUP (a VM added by a change step). Runs in the foreground, logging to
// standard error.
std::vector<std::string> mgmt_dhcp_argv(const plan::Mgmt& mgmt, const std::string& hosts_file);
// dnsmasq's --dhcp-hostsfile text: "MAC,ADDRESS" per VM member of `plan`.
std::string mgmt_dhcp_hosts(const plan::Plan& plan);

// `nft -f -` input that creates the management network's table (inet family): the forward
// hook drops whatever would be routed into or out of the host's veth. Idempotent (the table is
// flushed first when it exists).
std::string mgmt_nft_script(const plan::Mgmt& mgmt);

}  // namespace twin::wiring
