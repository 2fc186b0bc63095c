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
// addresses and routes; "" for FRR nodes (zebra sets their addresses from frr.conf). A VM's
// guest sets its own: its driver does not ask for this.
// With `only`, the addresses on those interfaces and the routes through them (`route replace`,
// idempotent): links added to a running lab, or made anew when the rollback's recreate rung
// rebuilds a leaf (the kernel removed a server's routes with its old port).
std::string node_script(const plan::Node& node, const std::vector<std::string>& only = {});

// Per-node script of a bridge node, run with `ip -n <netns> -batch -` after links_up: the
// bridge (STP off, no forward delay, no multicast snooping) with every port a member, then up;
// "" for other kinds. With `only`, just those ports join (links added to a running lab).
std::string bridge_script(const plan::Node& node, const std::vector<std::string>& only = {});

// Per-node script, run with `ip -n <netns> -batch -` after links_up: a VTEP's devices for each
// of node.vnis (plan.hpp Vni), "" for a node without. Per VNI a VXLAN device (`local` = the
// VTEP address, UDP 4789, `nolearning`: EVPN fills the FDB, RFC 8365 §10; `df set`: like a
// hardware VTEP it never fragments, so an underlay too small for the overlay drops frames
// instead of hiding the fault) with MAC learning off on its bridge port, a bridge joining it and
// the server ports, all up. With an L3 VNI: the tenant's VRF (its own table), every bridge of
// the tenant in it, the network's anycast gateway on its bridge. Needs the kernel's vxlan and
// bridge (and vrf for an L3 VNI: engine preflight checks).
std::string vtep_script(const plan::Node& node);
// The same for a VTEP already running: the script that turns the devices of `from` into those
// of `to` (both a node's Vni lists) without touching a VNI that stays the same. A VNI that goes
// is deleted with its bridge (its ports leave it, unbridged); a new one is created as
// vtep_script does; one that stays with other ports has them leave (`nomaster`) or join, with
// another MTU has it set; one whose VTEP address, VRF or gateway changed is recreated. A VRF no
// VNI uses any more is deleted. "" when nothing differs. Used by a topology step's reconcile,
// the `vxlan` change step and its rollback.
std::string vtep_change_script(const std::vector<plan::Vni>& from, const std::vector<plan::Vni>& to);
// The VNIs a node's kernel runs, from `ip -d -j addr show` (iproute2's JSON: linkinfo.info_kind
// "vxlan" with info_data.id and .local; `master` for bridge and VRF membership; addr_info),
// in the shape vtep_change_script takes: per VXLAN device its VNI, names, VTEP address, MTU,
// the other members of its bridge (ports, in the kernel's order), the bridge's VRF and table,
// and the bridge's first IPv4 address as the gateway. Tenant and network names are left empty
// (the kernel knows numbers). Pure; a link without those fields is skipped.
std::vector<plan::Vni> vnis_in_kernel(const nlohmann::json& links);
// The interfaces of `node` that links_up must bring up once every veth exists: lo and the `b`
// end of each of its links (veth_script creates `a` ends up already).
std::vector<std::string> interfaces_to_bring_up(const plan::Plan& plan, const plan::Node& node);

// Brings `ifnames` up inside `netns` over netlink from a thread that entered it (no process).
Result<void> links_up(const std::string& netns, const std::vector<std::string>& ifnames);

// A port whose IPv6 link-local plumbing is incomplete (link_local_gaps).
struct LinkLocalGap {
  std::string ifname;
  int ifindex = 0;
  bool has_address = false;  // false: no fe80:: address; true: the address, not its route
  bool repaired = false;     // repair_link_local: the route was added back and is there now
};
// The ports among `ports` that are up with carrier but lack what BGP unnumbered (RFC 5549 next
// hops, FRR's `neighbor PORT interface`) needs from the kernel: an IPv6 link-local address, or
// the main table's `fe80::/64 dev PORT` route, without which nothing sent to the port's
// link-local address is answered (a neighbour's BGP SYN, its ping). Seen once in three
// 512-node bring-ups, after the kernel logged `percpu: allocation failed` while wiring: one veth
// end without its route, its session stuck in Connect. Ports that are down or without carrier
// are skipped (the kernel makes the address when carrier comes), as are ports with an MTU below
// 1280 (no IPv6 there) and names not in `addresses`. `addresses` is kernel_json(kAddresses),
// `routes6` IPv6 routes in kernel_json's shape (the kernel's own suffice). Pure.
std::vector<LinkLocalGap> link_local_gaps(const nlohmann::json& addresses,
                                          const nlohmann::json& routes6,
                                          const std::vector<std::string>& ports);
// Finds link_local_gaps of `ports` in `netns` and adds back each missing route
// (runtime::append_link_local_route), then reads the table again to mark what is there now.
// A missing address is only reported (the kernel makes it; nothing twin adds would be the
// kernel's own). Returns every gap found, repaired or not. Errors: netlink, or the kernel's
// refusal to add a route (the port named).
Result<std::vector<LinkLocalGap>> repair_link_local(const std::string& netns,
                                                     const std::vector<std::string>& ports);

// Sysctls pinned in every namespace before any link exists (values in DESIGN.md §4):
// forwarding on, IPv6 on, DAD off (else link-local addresses stay tentative ~1 s and BGP
// unnumbered waits), rp_filter from the image; forwarding only on routers.
// Routers also hash ECMP on L3+L4 fields with a seed of their own (ecmp_seed; the seed only
// where the kernel has the sysctl, >= 6.11).
std::vector<std::pair<std::string, std::string>> namespace_sysctls(const plan::Node& node);
// The node's fib_multipath_hash_seed: a hash of its namespace name, never 0 (0 = random).
uint32_t ecmp_seed(const plan::Node& node);
// Sysctls of a namespace that only holds the host ends of a VM's wires: IPv6 off, forwarding
// off, no ARP replies.
std::vector<std::pair<std::string, std::string>> wire_sysctls();

// Writes `sysctls` (path relative to /proc/sys, value) inside netns `netns` from a thread that
// entered it: no process per namespace.
Result<void> apply_sysctls(const std::string& netns,
                           const std::vector<std::pair<std::string, std::string>>& sysctls);

// One sysctl of namespace `netns` by sysctl(8) name ("net.ipv4.conf.swp1.forwarding"): its
// value (trailing newline removed), or written. Errors: kInput when the kernel has no such
// key (or refuses the value: EINVAL), kEnvironment otherwise.
Result<std::string> read_sysctl(const std::string& netns, const std::string& key);
Result<void> write_sysctl(const std::string& netns, const std::string& key,
                          const std::string& value);

// VM nodes (runtime/libvirt.hpp). Root-namespace script creating each tap of `node` (down,
// with its link's MTU); IPv6 is disabled on them before they come up (vm_tap_sysctls).
std::string tap_create_script(const plan::Node& node);
// Sysctls (paths under /proc/sys, root namespace) that keep the taps silent.
std::vector<std::pair<std::string, std::string>> vm_tap_sysctls(const plan::Node& node);
// Root-namespace script moving the taps (once QEMU holds them) into the node's namespace; the
// management tap into the lab's management namespace when it joins that bridge (vm.mgmt_netns;
// wiring/mgmt.hpp's mgmt_vm_port_script then joins it).
std::string tap_move_script(const plan::Node& node);
// Script for `ip -n <netns> -batch -`: taps up; the management tap, when it stays in the
// node's namespace, renamed mgmt0.
std::string tap_up_script(const plan::Node& node);
// Script for `tc -n <netns> -batch -`: every frame entering a link's host end leaves through
// the VM's tap and back (ingress qdisc + u32 match-all + mirred egress redirect; matchall is
// not in every kernel, u32 is).
std::string tap_redirect_script(const plan::Node& node);
// Script for `tc -n <netns> -batch -`: each port of `node` with a rate or a delay (plan
// Interface rate_bps, delay_ms) gets it on its egress — the other end of the link shapes the
// other direction. A rate is a token bucket (tbf: the only shaper this kernel kind has besides
// htb, DESIGN.md §4a) with core/rate.hpp's burst and queue (tbf_burst_bytes, tbf_limit_bytes).
// A delay is netem's, at the root, with the token bucket as its child (the layout netem's
// manual gives for delay plus rate). `with_delay` false leaves delays out (the kernel has no
// netem: `up` said so). With `only`, just those ports. "" when nothing is shaped. `replace`,
// so running it twice is the same as once. Pure.
std::string shaping_script(const plan::Node& node, bool with_delay,
                           const std::vector<std::string>& only = {});
// Script for `ip -n <netns> -batch -`: each port of `node` with a rate sends no GSO segments
// (`gso_max_segs 1`: TCP sizes its bursts to full-size frames), so its token bucket's queue
// holds frames, not 64 KB segments (core/rate.hpp has the measurements). With `only`, just
// those ports. "" when no port has a rate. Pure.
std::string shaping_link_script(const plan::Node& node, const std::vector<std::string>& only = {});
// The one `tc -batch` runner, as run_batch is for ip: `tc -n <netns> -batch -` ("" = nothing).
Result<void> run_tc_batch(proc::ProcessRunner& runner, const std::string& script,
                          const std::string& netns, const std::string& what);

// Name of the management port inside a VM node's namespace.
inline constexpr const char* kMgmtPort = "mgmt0";

// The one `ip -batch` runner: runs `script` with `ip [-n netns] -batch -` ("" = nothing to do).
// Errors: the program could not run, or a non-zero exit (kHarness, with `what` and ip's
// stderr). Teardown passes cancellable=false so that an interrupt cannot stop it half-way.
Result<void> run_batch(proc::ProcessRunner& runner, const std::string& script,
                       const std::string& netns, const std::string& what, bool cancellable = true);

}  // namespace twin::wiring
