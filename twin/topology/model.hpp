#pragma once
// The topology file as data (format v1, documented in docs/topology.md and
// topologies/schema/topology.schema.json). Pure data: loading and checking live in loader.hpp.
#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "twin/core/diagnostics.hpp"
#include "twin/core/ip.hpp"
#include "twin/topology/frr_conf.hpp"

namespace twin::topology {

// Where something was written (1-based line and column in `Topology::file`). Defined in core
// so that the YAML toolkit, which sits below topology, produces it.
using Mark = twin::Mark;

// What a node is, and how it runs. Code above the node drivers (twin/drivers/) compares these
// enums or asks the driver registry, never their spelling in files.
// kBridge: a multi-access segment (a LAN), the one segment resource (WORKPLAN 2): a Linux
// bridge in a namespace of its own, each link to it one member port. containerlab's `kind:
// bridge` reads as one. It has no addresses and runs nothing; its members are each other's
// layer-2 neighbors (plan::l2_peers).
enum class NodeKind { kFrr, kHost, kBridge };  // `kind:` frr | host | bridge
// image profile `backend:` netns | libvirt | container
enum class Backend { kNetns, kLibvirt, kContainer };

// The one spelling table per enum: to_string, *_from, the loaders' "expected one of" lists and
// the state file's JSON all read it, so a new value is spelled in one place.
inline constexpr std::pair<NodeKind, const char*> kNodeKindNames[] = {
    {NodeKind::kFrr, "frr"}, {NodeKind::kHost, "host"}, {NodeKind::kBridge, "bridge"}};
// The backend of a profile that names none (the embedded default, DESIGN.md §4).
inline constexpr Backend kDefaultBackend = Backend::kNetns;
inline constexpr std::pair<Backend, const char*> kBackendNames[] = {
    {Backend::kNetns, "netns"}, {Backend::kLibvirt, "libvirt"}, {Backend::kContainer, "container"}};

template <class E, size_t N>
const char* spelling_of(E e, const std::pair<E, const char*> (&table)[N]) {
  for (const auto& [v, s] : table)
    if (v == e) return s;
  return "?";
}
template <class E, size_t N>
std::optional<E> value_of(const std::string& s, const std::pair<E, const char*> (&table)[N]) {
  for (const auto& [v, name] : table)
    if (s == name) return v;
  return std::nullopt;
}
template <class E, size_t N>
std::vector<std::string> spellings(const std::pair<E, const char*> (&table)[N]) {
  std::vector<std::string> v;
  for (const auto& e : table) v.emplace_back(e.second);
  return v;
}

inline const char* to_string(NodeKind k) { return spelling_of(k, kNodeKindNames); }
inline const char* to_string(Backend b) { return spelling_of(b, kBackendNames); }
// The enum a file spells `s` as; nullopt for an unknown spelling (the loader lists the known).
inline std::optional<NodeKind> node_kind_from(const std::string& s) {
  return value_of(s, kNodeKindNames);
}
inline std::optional<Backend> backend_from(const std::string& s) {
  return value_of(s, kBackendNames);
}

// How a `backend: libvirt` image boots (the profile's `vm:` section). File paths are absolute
// once loaded (relative ones resolve against the profile's folder); whether they exist is checked
// by `up` (twin plan works without the image).
struct VmProfile {
  std::string kernel, initrd;  // direct kernel boot (both or neither)
  std::string disk;            // qcow2 image; the lab boots a copy-on-write overlay of it
  std::string cmdline;         // kernel command line (with `kernel`); twin appends its own keys
  int vcpus = 1;
  int memory_mib = 256;
  std::string nic_model = "virtio";  // libvirt <model type>: virtio, e1000, ...
  // Guest names of data NICs: "" = the topology's names, set by the guest from twin.if= on the
  // kernel command line (test-vm); else a pattern with {n}, e.g. "swp{n}" (Cumulus VX) or
  // "Ethernet{n}" (SONiC-VS), whose n-th NIC is first + (NIC index) * step.
  std::string interface_pattern;
  int interface_first = 1;
  int interface_step = 1;
  bool management_nic = false;  // NIC 0 is a management port (eth0), ahead of the data NICs
  std::string ready_pattern;    // console text that means "booted"; "" = ready once started
  int ready_timeout_s = 120;
  std::string accel = "auto";  // auto (KVM after a trial boot, else TCG) | kvm | tcg
  // How twin reads inside the guest: "twin", its guest agent on virtio-serial (test-vm, which
  // has no sshd); "ssh", the NOS's own sshd on its management address (the lab needs `mgmt:`),
  // logged into as ssh_user with ssh_password or the private key ssh_key, FRR through `vtysh`
  // (e.g. "sudo vtysh") and the kernel through iproute2's `ip -j`; "none", not at all.
  std::string agent = "none";
  std::string ssh_user, ssh_password, ssh_key;
  std::string vtysh = "sudo vtysh";
};

// How a `backend: container` image runs (the profile's `container:` section): an OCI image the
// node's FRR runs from, in the node's own network namespace (drivers/container.hpp).
struct ContainerProfile {
  std::string image;  // image reference as podman names it, e.g. localhost/twin-frr:10.3
  // The FRR release the profile says the image holds ("10.3"); `up` reads the image's own
  // answer (zebra --version) and says so when the two differ. "" = not declared.
  std::string frr_version;
};

// What a node boots: an image profile file images/<name>.yaml.
struct ImageProfile {
  std::string name;
  std::string file;                        // absolute path of the profile
  NodeKind kind = NodeKind::kFrr;          // node kind it is for
  Backend backend = Backend::kNetns;       // the node driver is chosen by (backend, kind)
  std::vector<std::string> daemons;        // FRR daemons started in this order, e.g. zebra, bgpd
  std::string frr_profile = "datacenter";  // FRR `-F` profile (FRR docs: "frr defaults")
  int rp_filter = 0;                       // net.ipv4.conf.{all,default}.rp_filter in the namespace
  int ra_interval_s = 10;                  // `ipv6 nd ra-interval` on fabric ports (BGP unnumbered)
  int coalesce_time_ms = 0;                // bgp `coalesce-time`: 0 sends updates without waiting
  // zebra installs routes through kernel nexthop objects (`zebra nexthop kernel enable`).
  bool kernel_nexthop_groups = true;
  VmProfile vm;  // backend libvirt only
  ContainerProfile container;  // backend container only
  // Capabilities the topology checks rely on, set from the profile's sections when it is read
  // (never from the backend's name):
  // ports are NICs in order, named by `vm.interface_pattern`: linked ports must match the
  // pattern and run from the image's first port without a gap;
  bool ports_by_nic = false;
  // the node boots from `vm` (the profile has a vm: section): the plan carries its domain.
  bool boots_vm = false;
  // port names travel to the guest on a kernel command line: letters, digits, '_', '-', '.'.
  bool ports_named_by_cmdline = false;
};

// A static route of a host node (`routes:`), e.g. 10.0.0.0/8 via 192.168.1.1.
struct HostRoute {
  IpPrefix destination;  // a network prefix; 0.0.0.0/0 or ::/0 is the default route
  IpPrefix via;          // next-hop address (host prefix length)
  Mark mark;
};

// A daemon switched on or off by the node's FRR `daemons` file (containerlab binds one onto
// /etc/frr/daemons); `bgpd=yes` is {bgpd, true}. Daemons a file does not name are off, as in
// FRR's own init (FRR docs, "Daemons Configuration File").
struct DaemonSetting {
  std::string daemon;
  bool enabled = false;
  std::string file;  // the daemons file, absolute path
  Mark mark;         // line of the setting in `file`
};

struct Node {
  std::string name;
  NodeKind kind = NodeKind::kFrr;
  std::string image;  // profile name
  ImageProfile profile;
  // The container image the lab's file names for this node (containerlab's `image:` of an FRR
  // node, e.g. quay.io/frrouting/frr:10.5.1); "" when none. plan::resolve_images gives the node
  // that image, or the closest release present, with a note naming both.
  std::string container_image;
  std::optional<uint32_t> asn;
  std::optional<IpPrefix> router_id;  // IPv4 (BGP identifier, RFC 6286); /32
  std::vector<IpPrefix> loopbacks;    // host prefixes on lo: /32 and/or /128
  std::string config;                 // absolute path of a user frr.conf; "" = generated
  std::optional<FrrConf> own;         // `config` as read by the loader (frr_conf.hpp)
  // A containerlab FRR node that names no frr.conf boots this text, as containerlab starts it:
  // the frr kind's minimal configuration, or nothing for an FRR image (which ships no
  // frr.conf). `own` is read from it, so the lab expects nothing of the node's routing until a
  // change configures it. nullopt for every other node; set only with `config` "".
  std::optional<std::string> start_config;
  std::vector<IpPrefix> gateways;     // host kind: default-route next hops (one per family)
  std::vector<HostRoute> routes;      // host kind: static routes beyond the gateways
  // Empty: the image's daemons plus what `config` needs. Else the node has a daemons file and
  // only the daemons enabled in it may run (a config needing another one is an error).
  std::vector<DaemonSetting> daemon_settings;
  // Where daemon_settings were written when they come from no daemons file: containerlab's
  // `extras.frr.daemons` ("topology.nodes.r1.extras.frr.daemons", each setting's `file` the
  // containerlab file and `mark` its entry). "" for a daemons file.
  std::string daemons_field;
  // Its address on the lab's management network (`mgmt-address`, containerlab's `mgmt-ipv4`),
  // without prefix length or with the subnet's; nullopt = the planner picks one.
  std::optional<IpPrefix> mgmt_address;
  Mark mgmt_mark;
  Mark mark;
};

// The lab's out-of-band management network (`mgmt:`; containerlab's `mgmt:` block): every FRR
// node gets `interface` with an address of `subnet`, all on one bridge in a namespace of the
// lab's, reached from the host through one veth of the lab's (docs/management.md). IPv4 only:
// what orchestrators' inventories name.
struct Mgmt {
  std::optional<IpPrefix> subnet;  // nullopt = a /24 of 172.30.0.0/16 chosen from the lab name
  std::string interface = "mgmt0";
  std::string user = "admin";  // the SSH login that lands in vtysh
  // A password for `user` besides the lab's key, only when the topology asks (`password:`,
  // hashed by the planner; or `password-hash:`, a crypt(5) string such as `mkpasswd` prints).
  // Only a hash reaches the plan, the state file and the login's shadow entry.
  std::string password;
  std::string password_hash;
  Mark mark;                                    // the `mgmt:` value
  Mark subnet_mark, interface_mark, user_mark;  // each field's, when given (else `mark`)
};

struct Endpoint {
  std::string node;
  std::string interface;
  Mark mark;
};

struct Link {
  Endpoint a, b;
  int mtu = 1500;  // bytes, excluding the L2 header (what `ip link set mtu` takes)
  bool mtu_explicit = false;
  // `bandwidth:` (or `defaults.bandwidth`): the link's rate in bits per second, each end's
  // egress shaped to it (a token bucket, wiring::shaping_script); 0 = unshaped (the veth's own
  // speed, several Gbit/s here). A link to a bridge node is one member port of its segment: the
  // rate is that port's.
  uint64_t bandwidth_bps = 0;
  // `delay:` added one way at each end's egress (netem), ms; 0 = none. This kernel may lack
  // netem: `up` then says so and runs the link without it.
  int delay_ms = 0;
  Mark bandwidth_mark, delay_mark;
  // Addresses per node name on this link ("10.0.1.1/24"); a node absent here has none
  // (BGP unnumbered uses IPv6 link-local addresses only).
  std::map<std::string, std::vector<IpPrefix>> addresses;
  Mark mark;
};

// A check the user declares in the topology's `checks:` section (or, beside a containerlab
// file, in its companion `<name>.checks.yaml`): asserted by the `checks` validator family
// (validators/checks/) like any other test. Loaded by declared_checks.hpp.
enum class CheckKind { kReach, kRoute, kFrr };  // `reach:` | `route:` | `frr:`
inline constexpr std::pair<CheckKind, const char*> kCheckKindNames[] = {
    {CheckKind::kReach, "reach"}, {CheckKind::kRoute, "route"}, {CheckKind::kFrr, "frr"}};
inline constexpr int kDefaultCheckWaitS = 10;

struct Check {
  CheckKind kind = CheckKind::kReach;
  std::string name;               // as given, or generated: "reach pc1->pc3"
  int wait_s = kDefaultCheckWaitS;  // a failing check is retried for this long (its own deadline)
  // `after:` another check's name ("" = none): this one is evaluated only once that one holds,
  // and its wait counts from then. The loader refuses unknown names and cycles.
  std::string after;
  std::string node;               // reach: `from`; route, frr: `node`
  // reach
  std::string to;          // a node name or an address
  bool reachable = true;   // `expect: reachable` (default) | `unreachable`
  // route
  std::string prefix;      // "192.168.3.0/24", host bits clear
  int nexthops = 0;        // 0 = any number
  std::string protocol;    // "" = any (FRR's name: ospf, bgp, connected, static, ...)
  // frr
  std::string command;     // "show ip ospf neighbor json"
  std::string daemon;      // the daemon that answers it (from the command)
  std::string match;       // the JSON the output must contain, as JSON text
  Mark mark;               // where the check was written
};

// Tenants (`tenants:`): EVPN-VXLAN overlays over the fabric (RFC 7432, RFC 8365). A tenant
// network is one L2 segment: a VNI, stretched over the leaves (VTEPs) that have one of its
// ports, each port a leaf's link to a server. Read and checked by tenants.hpp.
struct TenantNetwork {
  std::string name;
  uint32_t vni = 0;              // 1..kMaxVni
  std::vector<Endpoint> ports;   // leaf ports (leaf, interface), each on a link to a host
  // The anycast gateway the VTEPs hold on this network's bridge (symmetric IRB through the
  // tenant's L3 VNI): the servers' default route. Only with an L3 VNI.
  std::optional<IpPrefix> gateway;
  Mark mark;
};
struct Tenant {
  std::string name;               // also the name of its VRF on the VTEPs (IFNAMSIZ: <= 15)
  std::optional<uint32_t> l3vni;  // routing between its networks (EVPN type 5), needs VRF
  std::vector<TenantNetwork> networks;
  Mark mark;
};
// An anycast address: one host prefix (/32, /128) on `lo` of several routers on purpose (a
// service address), so that each router reaches the nearest holder. Declared in twin's format
// (top-level `anycast:`), or read from the lab: the same host address on `lo` of routers whose
// own frr.conf each gives it (a containerlab file has no place to declare it).
struct Anycast {
  IpPrefix prefix;
  bool declared = false;             // in `anycast:`; else read from the routers' own configs
  std::vector<std::string> holders;  // FRR nodes with it on lo, in node order (set by the checks)
  std::string source;                // "t.yaml:7" (declared) or "r1.conf:3, r2.conf:3" (read)
  Mark mark;                         // where it was declared (declared only)
};

// `traffic:` (true, or a mapping): the `traffic` validator family runs in every validation of
// this lab — opt-in, since its flows take seconds (docs/traffic.md). The pattern twin traffic
// runs, and the thresholds of the family's tests.
struct TrafficSpec {
  std::string pattern = "all-to-all";  // traffic::kPatternNames
  int duration_s = 3;                  // each flow's test
  int flows_per_pair = 4;              // several flows per pair let ECMP show its balance
  std::string protocol = "tcp";
  // effective-bandwidth: the slowest flow gets at least this fraction of its fair share.
  double effective_bandwidth = 0.5;
  // tail-latency: p99 under load within this many ms of the unloaded p99; 0 = what the lab's
  // shaped queues can hold on a path (twin's default, docs/traffic.md).
  int tail_latency_ms = 0;
  // The gate (bandwidth-lost): how far below the baseline a change may leave the pattern's
  // aggregate or its slowest pair, as a fraction. Measured run to run on a shaped lab: within
  // 1 % (pairs) and 6 % (all-to-all's slowest pair) (docs/traffic.md).
  double bandwidth_loss = 0.2;
  Mark mark;
};

struct Topology {
  std::string file;  // absolute path of the topology file
  std::string dir;   // its folder: relative paths resolve against it
  int version = 1;
  std::string name;  // lab name
  std::vector<Node> nodes;
  std::vector<Link> links;
  std::vector<Check> checks;  // `checks:`, in file order
  std::vector<Tenant> tenants;  // `tenants:`, in file order
  std::vector<Anycast> anycast;  // declared (file order), then read from configs
  std::optional<Mgmt> mgmt;      // `mgmt:`; nullopt = no management network
  std::optional<TrafficSpec> traffic;  // `traffic:`; nullopt = the family runs only when asked

  [[nodiscard]] const Node* find_node(const std::string& name) const {
    for (const auto& node : nodes)
      if (node.name == name) return &node;
    return nullptr;
  }
};

// Whether `n` joins the lab's management network (when it has one): FRR nodes that twin runs
// itself, through a veth; a VM whose image has a management NIC (NIC 0), which joins the
// bridge and takes its address by DHCP from twin's server on it. Other hosts and bridges have
// none.
inline bool joins_mgmt(const Node& n) {
  if (n.profile.boots_vm) return n.profile.vm.management_nic;
  return n.kind == NodeKind::kFrr;
}
// Whether the lab's management network needs twin's DHCP server: a VM joins it.
inline bool mgmt_serves_dhcp(const Topology& t) {
  return t.mgmt && std::any_of(t.nodes.begin(), t.nodes.end(),
                               [](const Node& n) { return n.profile.boots_vm && joins_mgmt(n); });
}

// The data NIC (0-based, management NIC not counted) that guest interface `name` is, for a
// profile with an interface-pattern: "swp3" with swp{n}, first 1, step 1 is NIC 2. -1 when the
// name does not match the pattern or falls between NICs (Ethernet2 with step 4).
inline int vm_data_nic(const VmProfile& vm, const std::string& name) {
  const auto& pat = vm.interface_pattern;
  auto at = pat.find("{n}");
  if (at == std::string::npos) return -1;
  std::string pre = pat.substr(0, at), post = pat.substr(at + 3);
  if (name.size() <= pre.size() + post.size() || name.compare(0, pre.size(), pre) != 0 ||
      name.compare(name.size() - post.size(), post.size(), post) != 0)
    return -1;
  std::string digits = name.substr(pre.size(), name.size() - pre.size() - post.size());
  // One spelling per port: swp01 is not swp1.
  if (digits.empty() || digits.size() > 6 ||
      digits.find_first_not_of("0123456789") != std::string::npos ||
      (digits.size() > 1 && digits[0] == '0'))
    return -1;
  int n = std::stoi(digits);
  if (n < vm.interface_first || (n - vm.interface_first) % vm.interface_step != 0) return -1;
  return (n - vm.interface_first) / vm.interface_step;
}

// Accepted values, shared by the loader, the schema test and `twin plan`.
using twin::kMaxMtu;  // core/ip.hpp: the YAML toolkit checks MTUs too
using twin::kMinMtu;
inline constexpr int kMinIpv6Mtu = 1280;         // RFC 8200 §5; Linux removes IPv6 below it
inline constexpr size_t kMaxInterfaceName = 15;  // IFNAMSIZ - 1 (linux/if.h)
inline constexpr size_t kMaxLabName = 24;        // keeps "tw-<lab>-<node>" paths readable

}  // namespace twin::topology
