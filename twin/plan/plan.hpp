#pragma once
// Topology → Plan: every name, path, address and generated config a lab will have, decided
// before anything is created. Pure and deterministic (same topology, same plan), no I/O.
// The plan is stored in the lab's state file, so `validate` and `status` need only the state.
#include <cstdint>
#include <map>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "twin/core/note.hpp"
#include "twin/topology/model.hpp"

namespace twin::plan {

struct Interface {
  std::string name;       // in the node's netns, e.g. swp1
  // The other end of this interface's link (a veth). Where it is a bridge node, this interface
  // is a member port of a LAN segment and its layer-2 neighbors are the other members:
  // l2_peers() lists them, segment_of() names the bridge.
  std::string peer_node;
  std::string peer_interface;
  int mtu = 1500;                      // bytes, L3 MTU (excludes the Ethernet header)
  std::string mac;                     // locally administered unicast, unique per lab
  std::vector<std::string> addresses;  // "10.0.1.1/24"
  bool fabric = false;  // both ends are FRR nodes: a BGP unnumbered session is expected
  // Intended state (a change's intent, changeset/intent.hpp): an interface meant to be down
  // carries no session, no path and no DF probe.
  bool up = true;
  // VM nodes (backend libvirt): the NIC behind this interface. `tap` is the host's tap device
  // (created in the root namespace, moved into the node's netns once QEMU holds it), `nic` its
  // position among the VM's NICs. The guest names the interface as the topology does.
  std::string tap;
  int nic = -1;
  // A tenant port (topology `tenants:`): a member of this L2 VNI's bridge on the leaf, with no
  // address; 0 for a routed port. Set on the leaf's end only.
  uint32_t vni = 0;
  // The link's rate (topology `bandwidth:`), bits per second: this port's egress is shaped to
  // it (wiring::shaping_script); 0 = unshaped. The link's `delay:` at this port's egress, ms.
  uint64_t rate_bps = 0;
  int delay_ms = 0;
};

// A VM node's domain: what libvirt boots (runtime/libvirt.hpp renders it as domain XML).
struct Vm {
  std::string domain;                // libvirt domain name: "tw-<lab>-<node>"
  std::string uri;                   // libvirt connection it runs on (decided by `up`)
  std::string domain_type;           // "kvm" | "qemu" (TCG), decided by `up`
  std::string accel_reason;          // why that one
  std::string kernel, initrd, disk;  // the profile's files (disk: base of the overlay)
  std::string overlay;               // <run_dir>/disk.qcow2 when booting a disk
  std::string cmdline;               // full kernel command line, twin's keys included
  int vcpus = 1;
  int memory_mib = 256;
  std::string nic_model = "virtio";
  std::string accel = "auto";  // requested: auto | kvm | tcg (up decides auto)
  std::string ready_pattern;
  int ready_timeout_s = 120;
  std::string agent = "none";  // "twin": guest agent on agent_socket
  std::string console_log;     // <run_dir>/console.log, written by libvirt's log handler
  std::string agent_socket;    // <run_dir>/agent.sock
  std::string mgmt_tap;        // tap of the management NIC (NIC 0), "" without one
  std::string mgmt_mac;
  // The lab's management namespace when NIC 0 is a port of the lab's management bridge (the
  // guest takes the node's mgmt_address by DHCP); "" when its tap is `mgmt0` in the node's
  // namespace (link-local only).
  std::string mgmt_netns;
  // agent "ssh" (topology VmProfile): the guest's login, its private key file ("" = password),
  // and the command that runs its FRR's vtysh. The password itself is in the plan only while
  // `up` runs, never in the state file: `up` writes it to ssh_password_file (0600, the node's
  // run folder), which later commands read.
  std::string ssh_user, ssh_key, vtysh;
  std::string ssh_password;  // not serialized
  std::string ssh_password_file;
};

// A VNI on a VTEP (RFC 7348, RFC 8365): the kernel devices twin creates in the leaf's namespace
// from the topology's tenants, for generated and own configs alike (FRR's config carries BGP
// EVPN only; zebra learns VNIs from these devices). Names fit IFNAMSIZ for any 24-bit VNI.
// VXLAN's IANA UDP port (RFC 7348 §5), the `dstport` of every VTEP of a lab.
inline constexpr int kVxlanPort = 4789;
struct Vni {
  uint32_t vni = 0;
  std::string tenant, network;  // network "" for the tenant's L3 VNI
  std::string vxlan;            // "vx10100": VXLAN device, `local` = VTEP address, learning off
  std::string bridge;           // "br10100": joins the VXLAN device and the ports
  std::string local;            // VTEP address: the leaf's first IPv4 loopback
  int mtu = 1500;               // bytes (L3): the servers' largest, carried whole by the underlay
  std::vector<std::string> ports;  // the leaf's bridged server ports
  // L3 VNI (symmetric IRB, needs VRF): the tenant's VRF and its table; an L2 VNI of a routing
  // tenant holds the network's anycast gateway on its bridge.
  std::string vrf;
  int vrf_table = 0;
  std::string gateway;  // "10.1.1.1/24", "" when not routed
  [[nodiscard]] bool l3() const { return network.empty(); }
};
// A tenant as the plan expects it: its networks, which leaves are their VTEPs, which servers
// sit in them. Reachability is expected inside a network (and between a routing tenant's
// networks), never between tenants.
struct TenantNetworkPlan {
  std::string name;
  uint32_t vni = 0;
  std::vector<std::string> vteps;    // leaves with a port in it, plan order
  std::vector<std::string> servers;  // hosts on its ports, plan order
  std::string gateway;               // "" when the tenant does not route
};
struct TenantPlan {
  std::string name;
  uint32_t l3vni = 0;  // 0: none
  std::vector<TenantNetworkPlan> networks;
};
struct Route {
  std::string destination;  // "default" or a prefix
  std::string via;          // next-hop address
};

// What a node's own config (config_source) configures, as the loader read it
// (topology/frr_conf.hpp); empty for a generated config. derive_expectations() turns these into
// the sessions and adjacencies the lab expects.
struct BgpNeighbor {
  std::string peer;         // address, or interface name when unnumbered
  bool unnumbered = false;
  bool ibgp = false;        // remote-as internal, or the node's own ASN
  bool shutdown = false;
  bool bfd = false;
  // Whether routes pass in / out on this session. False on an eBGP session without a route-map
  // in that direction where the node requires policy (RFC 8212; FRR's `bgp
  // ebgp-requires-policy`, on in the traditional profile): FRR accepts / sends nothing there.
  bool routes_in = true, routes_out = true;
  // A policy twin does not evaluate filters or changes routes that way: a route-map that is
  // not a bare permit, a prefix-, filter- or distribute-list. Expectations across it are not
  // derived (the user declares them in `checks:`).
  bool opaque_in = false, opaque_out = false;
  // `neighbor X activate` under `address-family l2vpn evpn`.
  bool evpn = false;
  // iBGP: X is this node's route-reflector client (RFC 4456); this node announces itself as
  // the next hop to X, for the routes it originates or learned over eBGP (with `force`, for
  // those it reflects too: FRR's docs, "neighbor PEER next-hop-self [force]").
  bool rr_client = false, next_hop_self = false, next_hop_self_force = false;
};
struct OspfInterface {
  std::string name;
  std::string area;  // dotted quad
  bool passive = false;
  int version = 2;   // 2: ospfd, 3: ospf6d
  int cost = 0;      // `ip ospf cost`; 0 = FRR's default (equal on every veth of a lab)
  int dead_s = 40;   // dead interval, seconds (FRR's default 40; from the config when set)
};
struct BfdPeer {
  std::string peer;       // address
  std::string interface;  // "" when not bound
};

// A node whose FRR runs from an OCI image (backend container, drivers/container.hpp): twin makes
// its namespace and links; the image gives its FRR programs, which twin starts inside the
// container.
struct Container {
  std::string image;  // as its profile names it: localhost/twin-frr:10.3
  std::string name;   // the container's name, "tw-<lab>-<node>" (its netns's)
  // Read from the image by `up` (the container driver's preflight): the image's id, the FRR
  // release its own zebra reports ("10.3"), and user frr's ids in it (the node's run folder is
  // theirs: the daemons drop to that user).
  std::string image_id;
  std::string frr_version;
  int frr_uid = -1;
  int frr_gid = -1;
};

struct Node {
  std::string name;
  topology::NodeKind kind = topology::NodeKind::kFrr;
  std::string image;
  // "netns": the node is its namespace. "libvirt": the node is a VM; its namespace only holds
  // the host ends of its links, joined to the VM's taps (runtime/libvirt.hpp).
  // The node driver that runs it is chosen by (backend, kind): drivers/registry.hpp.
  topology::Backend backend = topology::kDefaultBackend;
  Vm vm;                             // backend libvirt only
  Container container;               // backend container only
  // The container image the lab's file asked for (topology::Node::container_image), kept after
  // plan::resolve_images chose what runs: "" when the file named none.
  std::string asked_image;
  std::string netns;                 // "tw-<lab>-<node>"
  std::string run_dir;               // <lab run dir>/<node>: frr.conf, sockets, pid files, logs
  std::vector<std::string> daemons;  // from the image profile, start order
  std::string frr_profile;
  int rp_filter = 0;
  uint32_t asn = 0;                    // 0 when the topology gives none
  std::string router_id;               // "" when FRR picks one (user config without one)
  std::vector<std::string> loopbacks;  // host prefixes: "10.255.0.1/32"
  // Those of `loopbacks` that are anycast addresses (topology::Anycast): held by several
  // routers, so neither a destination that names this node nor a source its pings come back to.
  std::vector<std::string> anycast;
  std::vector<Interface> interfaces;   // in topology order
  std::vector<Route> routes;           // host kind: default routes
  bool config_generated = true;
  std::string config_source;  // user frr.conf path, or "" when generated
  std::string frr_config;     // the integrated frr.conf the node boots with
  // Intended state beyond the topology (a change's intent, changeset/intent.hpp):
  bool drained = false;                 // out of service: no sessions, no transit, not reachable
  std::vector<std::string> originates;  // prefixes advertised beyond loopbacks and host subnets
  std::vector<std::string> withdraws;   // loopbacks / host subnets it stops advertising
  // Own config only (see BgpNeighbor): what it configures, and the addresses it puts on
  // interfaces beyond the topology's (interface -> "10.0.0.1/30"; `lo` included).
  std::vector<BgpNeighbor> bgp_neighbors;
  std::vector<OspfInterface> ospf_interfaces;
  std::vector<BfdPeer> bfd_peers;
  std::map<std::string, std::vector<std::string>> config_addresses;
  std::string ospf_router_id;   // `ospf router-id` of the own config; "" = FRR picks
  std::string ospf6_router_id;  // `ospf6 router-id` of the own config; "" = FRR picks
  // Own config only: the node's loopbacks and host subnets its config originates into some
  // protocol (an OSPF-enabled interface's subnet, `network`, `redistribute connected`). The
  // others are not expected anywhere else. Unused for generated configs, which originate all.
  std::vector<std::string> advertised;
  // FRR multipaths eBGP routes learned from different neighboring ASes only with
  // `bgp bestpath as-path multipath-relax` (FRR's docs, "Multipath"); generated configs have it.
  bool bgp_multipath_relax = true;
  // Why a daemon beyond the image's runs: daemon -> "frr.conf:12" (the line that needs it).
  std::map<std::string, std::string> daemon_reasons;
  // A VTEP's VNIs (L2 ones in the topology's order, then the L3 VNIs of routing tenants).
  std::vector<Vni> vnis;
  // Its address on the management network ("172.30.7.2/24") and the bridge port facing it in
  // the management namespace ("n2"); "" when the node is not on one (Plan::mgmt).
  std::string mgmt_address;
  std::string mgmt_port;
  // mgmt_address without its length ("172.30.7.2"): what ssh, sshd and inventories name.
  [[nodiscard]] std::string mgmt_ip() const {
    return mgmt_address.substr(0, mgmt_address.find('/'));
  }
};

struct Link {
  std::string a_node, a_interface, b_node, b_interface;
  int mtu = 1500;
};

// A BGP session the lab expects: `node` peers on `interface` with `peer_node` (generated
// configs and unnumbered neighbors), or with `peer_address` (numbered neighbors of an own
// config; `interface` is then the one toward the peer when it is on a shared link, else "").
struct ExpectedSession {
  std::string node, interface, peer_node;
  std::string peer_address;  // "" = unnumbered on `interface`
  bool ibgp = false;
  // Routes from peer_node reach `node` over this session: the peer sends and the node accepts
  // (BgpNeighbor::routes_out / routes_in of both ends). Generated fabrics: always.
  bool carries_routes = true;
  // Routes from peer_node cross no policy twin does not evaluate (BgpNeighbor::opaque_in/out
  // of both ends): only then are paths through this session expected.
  bool predictable = true;
  // Both ends activate l2vpn evpn (generated configs of a lab with tenants, or own configs that
  // say so): the EVPN family expects it negotiated and Established.
  bool evpn = false;
  // This node's settings toward peer_node (its own config, BgpNeighbor): peer_node is its
  // route-reflector client; it announces itself as the next hop to peer_node (with `force`,
  // for reflected routes too).
  bool rr_client = false, next_hop_self = false, next_hop_self_force = false;
  // The neighbor's name in FRR's JSON: the address, or the interface of an unnumbered one.
  [[nodiscard]] const std::string& key() const {
    return peer_address.empty() ? interface : peer_address;
  }
};

// An OSPF adjacency the lab expects: both ends run OSPF (same version) on the link's
// interfaces, neither passive. `area` is this end's; a mismatch is the validator's to report.
struct ExpectedAdjacency {
  std::string node, interface, peer_node, peer_interface;
  std::string area;
  int version = 2;  // 2: OSPFv2 (ospfd), 3: OSPFv3 (ospf6d)
};

// A BFD session the lab expects: configured on `node` toward `peer_address` (a `bfd` peer, or
// a BGP neighbor with `bfd`), where bfdd runs.
struct ExpectedBfdPeer {
  std::string node, peer_address, interface, peer_node;
};

// A path a change means to move (traffic engineering: an OSPF cost, a local-pref): at `node`,
// `prefix` may leave the paths the design implies — for as many next hops as `ecmp` (0: any
// number) through `via` (neighbor nodes or the node's interfaces; empty: any). Every other
// path must hold (changeset/intent.hpp, intent.paths).
struct PathIntent {
  std::string node, prefix;
  int ecmp = 0;
  std::vector<std::string> via;
  bool operator==(const PathIntent&) const = default;
};

// A prefix that FRR nodes must have in their FIB, originated by `owner`. An anycast address is
// one entry per holder (kind "anycast"), each its own origin; which holder a router reaches is
// anycast_paths'. The same prefix on islands that share no link is one entry per island.
struct ExpectedPrefix {
  std::string prefix;  // "10.255.0.1/32" or "10.0.1.0/24"
  std::string owner;   // FRR node that originates it
  std::string kind;    // "loopback" | "host-subnet" | "originated" | "anycast"
};

// The lab's out-of-band management network (topology `mgmt:`, docs/management.md): a bridge in
// a namespace of the lab's, one port per member node (its `interface`, in the node's main table
// with only its connected route: this kernel has no VRF), one for the host. Addresses are
// IPv4, stable for a given topology: the host has the subnet's first address, nodes the one
// their topology gives or the next free one in node order.
// The name the DHCP server of a management network with VMs is recorded under (a process of the
// lab's own, node "").
inline constexpr const char* kMgmtDhcpProcess = "dnsmasq";
struct Mgmt {
  std::string subnet;        // "172.30.7.0/24"
  std::string host_address;  // "172.30.7.1/24", on host_veth in the root namespace
  std::string netns;         // "tw-<lab>.mgmt" (a node name has no dot: no clash)
  std::string host_veth;     // "twm" + 8 hex digits (IFNAMSIZ; host-wide unique per lab)
  std::string interface;     // each member's port, "mgmt0"
  std::string user;          // the SSH login that lands in vtysh, "admin"
  std::string nft_table;     // inet table that keeps the subnet to the host and the lab
  std::string key_dir;       // <run_dir>/ssh: the lab's SSH key pair (0600), known_hosts
  // With VM members: twin's DHCP server (dnsmasq) on the bridge, at the subnet's last usable
  // address ("172.30.7.254/24"), with a static lease per VM; "" without VMs.
  std::string dhcp_address;
  // crypt(5) hash of the login's password when the topology gives one (password login then
  // works besides the key); "" = key only.
  std::string password_hash;
};

struct Plan {
  std::string lab;
  std::string topology_file;
  std::string run_dir;      // /run/twin/<lab>
  std::vector<Node> nodes;  // topology order
  std::vector<Link> links;  // topology order
  std::vector<ExpectedSession> sessions;
  std::vector<ExpectedPrefix> prefixes;
  std::vector<ExpectedAdjacency> adjacencies;
  std::vector<ExpectedBfdPeer> bfd_peers;
  // The checks the user declared (topology `checks:`), asserted by the `checks` family. In the
  // state file only when there are some.
  std::vector<topology::Check> checks;
  // The topology's tenants (EVPN). In the state file only when there are some.
  std::vector<TenantPlan> tenants;
  // What planning did not honour as asked or cannot check (a config line twin does not read, a
  // path redirected into a node's run folder): every validation's report carries them. In the
  // state file only when there are some.
  std::vector<Note> notes;
  // Paths an approved change moved on purpose (intent.paths): what the routes family expects
  // of those prefixes instead of the design's width. In the state file only when there are some.
  std::vector<PathIntent> path_intents;
  // The management network; nullopt without `mgmt:`. In the state file only when there is one.
  std::optional<Mgmt> mgmt;
  // The topology's `traffic:` (the traffic family runs in every validation); nullopt = only
  // when asked (`validate --only traffic`). In the state file only when there is one.
  std::optional<topology::TrafficSpec> traffic;
  // The intent for `prefix` at `node`, or nullptr.
  [[nodiscard]] const PathIntent* path_intent(const std::string& node,
                                              const std::string& prefix) const {
    for (const auto& p : path_intents)
      if (p.node == node && p.prefix == prefix) return &p;
    return nullptr;
  }

  // The node named `name`, or nullptr. O(1) on average: validators call it millions of times
  // at 256 nodes. Thread-safe for concurrent readers.
  [[nodiscard]] const Node* find(const std::string& name) const;
  [[nodiscard]] Node* find(const std::string& name) {
    return const_cast<Node*>(static_cast<const Plan&>(*this).find(name));
  }

 private:
  // Name -> position in `nodes`, rebuilt when it no longer matches (nodes are a public vector
  // that callers edit freely). A cache, not part of the value: copies start empty.
  struct NodeIndex {
    NodeIndex() = default;
    NodeIndex(const NodeIndex&) {}
    NodeIndex& operator=(const NodeIndex&) { return *this; }
    mutable std::mutex mu;
    mutable std::unordered_map<std::string, size_t> pos;
  };
  NodeIndex index_;
};

// The Linux bridge of a bridge node (a LAN segment), alone in the node's namespace.
inline constexpr const char* kBridgeDevice = "br0";

// `n`'s interface named `name`, or nullptr.
const Interface* find_interface(const Node& n, const std::string& name);
// The interface `node:ifname` of `p`, to change it (a change's intent, `up` clearing a delay the
// kernel cannot add), or nullptr.
Interface* find_interface(Plan& p, const std::string& node, const std::string& ifname);
// The rate a link's ends are shaped to (`bandwidth:`, bits/s): its `a` end's, else its `b`
// end's (they are the same for a link of the topology's, per port on a segment); 0 = unshaped.
uint64_t link_rate_bps(const Plan& p, const Link& l);

// A layer-2 neighbor of an interface: a node and its port.
struct L2Peer {
  std::string node, interface;
  bool operator==(const L2Peer&) const = default;
};
// The bridge node (LAN segment) that `iface` is a member port of, or nullptr on a
// point-to-point link (and for the bridge's own ports).
const Node* segment_of(const Plan& plan, const Interface& iface);
// The nodes `iface` of `node` shares a broadcast domain with, in plan order: on a
// point-to-point link its far end, when intended up; on a segment every other member whose
// link to the bridge is intended up at both ends. Empty for a bridge's own ports, or when the far
// end is not in the plan. What a segment's members expect of each other (OSPF adjacencies, numbered
// sessions, a host's gateway) goes through this, never through peer_node alone.
std::vector<L2Peer> l2_peers(const Plan& plan, const Node& node, const Interface& iface);
// Whether `iface` of `node` shares a broadcast domain with a host node (a server's subnet).
bool faces_host(const Plan& plan, const Node& node, const Interface& iface);

// Where labs live: state file, per-node run folders. /run is tmpfs: a reboot, which also
// destroys namespaces and processes, clears it too.
inline constexpr const char* kRunRoot = "/run/twin";

// Builds the plan. `lab_name` overrides the topology's name when not empty (twin up --name).
Plan make_plan(const topology::Topology& topo, const std::string& lab_name = "");

// True if BGP is expected to run over `iface` of `node`: a fabric interface, intended up, and
// neither end drained. Sessions, paths, path MTU and reachability expectations all use this.
bool carries_bgp(const Plan& plan, const Node& node, const Interface& iface);

// Whether `node`'s FRR has a BGP instance to ask: bgpd runs and the config has `router bgp`
// (a generated config always does; an own config of an OSPF-only router on an image that
// starts bgpd anyway does not, and bgpd then answers `{}` with exit 1).
bool has_bgp_instance(const Node& node);

// What forwarding out of `iface` costs `node` on its way to any destination, 0 when the node
// learns no route over it: the interface's OSPF cost where an expected adjacency runs on it
// (FRR's default 10 when unset), else 10 where BGP carries routes over it (a fabric link, or a
// configured eBGP session on it that carries routes: one AS hop each). Path MTU expectations
// follow the cheapest paths by this cost. Intended state (drains, down links) is honoured.
int forwarding_cost(const Plan& plan, const Node& node, const Interface& iface);

// Adds to `node.daemons` the FRR daemons that the commands of `frr_text` need and that do not
// run yet (topology::daemon_for_command: `ip route` -> staticd, `router ospf` -> ospfd, `bfd` ->
// bfdd, ...), keeping FRR's start order (topology::frr_daemon_order). Returns the daemons added,
// empty when none was missing. A node whose daemons twin does not start (a VM: its NOS runs FRR)
// is left alone. Idempotent. The planner uses it for what a node's configuration needs at `up`;
// the gate for what a change's FRR lines need (a static route starts staticd).
std::vector<std::string> add_needed_daemons(Node& node, const std::string& frr_text);

// Recomputes plan.sessions and plan.prefixes from nodes and interfaces (after intent edits):
// a session per interface that carries_bgp; every loopback and host subnet of an FRR node plus
// its `originates`, minus its `withdraws`, in node order, each prefix once. Idempotent.
void derive_expectations(Plan& plan);

// The tenant side of `p` from `tenants` (topology `tenants:`, checked by the topology loader:
// each port a leaf's link to a server, each VTEP with an IPv4 loopback): Interface::vni of the
// bridged ports, each VTEP's Node::vnis (L2 in the tenants' order, then the L3 VNIs of routing
// tenants) and Plan::tenants. What was there before is replaced. Pure and idempotent; a
// change's intent (changeset/intent.hpp) re-derives it after moving ports.
void set_tenants(Plan& p, const std::vector<topology::Tenant>& tenants);
// The inverse: `p`'s tenants as a topology section (ports in plan order, no marks), so that
// set_tenants(p, tenants_of(p)) leaves `p` unchanged.
std::vector<topology::Tenant> tenants_of(const Plan& p);
// A VNI of tenant `tenant` on VTEP `n`: its device names ("vx<vni>", "br<vni>") and the VTEP
// address (`n`'s first IPv4 loopback, "" when it has none); no ports, network, VRF or gateway.
Vni vni_on(const Node& n, uint32_t vni, const std::string& tenant);

// The tenant network (and its tenant) server `host` sits in, or nullptr when it is routed.
const TenantNetworkPlan* tenant_network_of_server(const Plan& plan, const std::string& host,
                                                  const TenantPlan** tenant = nullptr);
// Kernel command line limit of x86 Linux (COMMAND_LINE_SIZE, arch/x86/include/asm/setup.h).
inline constexpr size_t kMaxKernelCmdline = 2047;

// The netns name of a node: "tw-<lab>-<node>".
std::string netns_name(const std::string& lab, const std::string& node);

// What eBGP should converge to, per address family and (node, owner of a prefix): how many
// equal-cost next hops (fabric interfaces) the node installs toward the owner's prefixes, and the
// AS-path length. Computed by a path-vector fixpoint over the fabric: each node advertises its best
// path, a node rejects paths holding its own ASN (RFC 4271 §9.1.2 loop prevention — spines sharing
// one ASN do not reach each other), prefers the shortest AS path and, with `multipath-relax`,
// installs every path of that length. Nodes without an ASN in the topology count as unique.
struct PathExpectation {
  int ecmp = 0;  // 0: the owner's prefixes are not expected at this node
  int as_path_len = 0;
  bool operator==(const PathExpectation&) const = default;
};
using PathTable = std::map<std::pair<std::string, std::string>, PathExpectation>;
// One table per address family (`family` 4 or 6): the IGP part is OSPFv2's adjacencies for
// IPv4 and OSPFv3's for IPv6 — separate protocols with separate databases (RFC 2328, RFC
// 5340), so a router that runs only OSPFv3 learns no IPv4 route over it — and iBGP next hops
// resolve over that family's IGP. The BGP sessions are the same in both tables (twin does not
// read which address families a session activates).
PathTable expected_paths(const Plan& plan, int family);
// Both families' tables, computed together (the BGP fixpoint once when the IGPs agree).
struct FamilyPaths {
  PathTable ipv4, ipv6;
  [[nodiscard]] const PathTable& of(int family) const { return family == 6 ? ipv6 : ipv4; }
  // The table of `prefix_or_address`'s family ("10.0.0.1", "fd00::1/128"); IPv4's when it parses
  // as neither.
  [[nodiscard]] const PathTable& of(const std::string& prefix_or_address) const;
};
FamilyPaths expected_paths_by_family(const Plan& plan);

// Anycast addresses (Node::anycast) and the routers that announce each: FRR nodes in service
// that hold it on lo and advertise it (not withdrawn; an own config originating it), in plan
// order. Addresses in node order of their first holder; one with no such holder is left out.
struct AnycastGroup {
  std::string prefix;                // "10.255.255.1/32"
  std::vector<std::string> holders;  // plan order
};
std::vector<AnycastGroup> anycast_groups(const Plan& plan);

// What each router other than the holders should install toward anycast `group`, in `family`'s
// tables: the nearest holders' paths together — eBGP treats every holder as an origin of the
// prefix (the shortest AS path wins and, with multipath-relax, ties across holders add next
// hops), the IGP the least cost to any holder (equal-cost paths to different holders are ECMP
// too), and administrative distance picks between them as for one owner (expected_paths). Keyed
// by router; a router absent or with ecmp 0 is not expected to reach the address. `via` lists,
// where the route is eBGP's or the IGP's, the neighbor nodes its next hops lead to (each on a
// shortest path to a nearest holder); empty where it is iBGP's (next hops through the IGP).
struct AnycastExpectation {
  PathExpectation path;
  std::vector<std::string> via;  // neighbor nodes, sorted, once each
};
std::map<std::string, AnycastExpectation> anycast_paths(const Plan& plan,
                                                        const AnycastGroup& group);

nlohmann::json to_json(const Plan& plan);
Plan plan_from_json(const nlohmann::json& j);  // throws nlohmann::json::exception on bad input

// Human-readable dry run: namespaces, links, daemons, addresses, and each generated config.
std::string render_plan_text(const Plan& plan);

}  // namespace twin::plan
