#include "twin/topology/checks.hpp"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <regex>
#include <set>

#include "twin/core/util.hpp"
#include "twin/topology/names.hpp"
#include "twin/topology/tenants.hpp"

namespace twin::topology {

namespace {

const std::regex kGuestIfRe("[A-Za-z0-9_.-]+");

// The places recorded for `node`; none when it has no such values.
const std::vector<Where>& find_or_none(const std::map<std::string, std::vector<Where>>& m,
                                       const std::string& node) {
  static const std::vector<Where> kNone;
  auto it = m.find(node);
  return it == m.end() ? kNone : it->second;
}

class Checker {
 public:
  Checker(Topology& t, const Places& places, Diagnostics& d) : t(t), places(places), d_(d) {}

  void run() {
    vm_ports();
    links();
    segments();
    islands();
    identities();
    gateways();
    host_routes();
    addresses();
    mgmt();
  }

 private:
  void error(Mark m, const std::string& field, const std::string& msg, const std::string& hint) {
    d_.add({t.file, m.line, m.column, field, msg, hint});
  }

  // The management network: a subnet that holds every node and the host, a port name no node
  // uses for a link, addresses inside the subnet and unique (docs/management.md).
  void mgmt() {
    if (!t.mgmt) {
      for (const auto& n : t.nodes)
        if (n.mgmt_address)
          error(n.mgmt_mark, "nodes." + n.name + ".mgmt-address",
                "node " + n.name + " has a management address but the lab has no management network",
                "add `mgmt: {subnet: 172.30.1.0/24}` (or `mgmt: true`) at the top level");
      return;
    }
    const Mgmt& m = *t.mgmt;
    std::string why;
    if (!valid_interface_name(m.interface, &why) || m.interface == "lo")
      error(m.interface_mark, "mgmt.interface",
            "invalid management interface name '" + m.interface + "'" +
                (why.empty() ? "" : ": " + why),
            "e.g. mgmt0 or eth0");
    static const std::regex kUser("[a-z_][a-z0-9_-]{0,31}");
    if (!std::regex_match(m.user, kUser))
      error(m.user_mark, "mgmt.user", "invalid login name '" + m.user + "'",
            "1-32 of a-z 0-9 _ - starting with a letter or _, e.g. admin");
    int members = 0;
    for (const auto& n : t.nodes) {
      if (!joins_mgmt(n)) {
        if (n.mgmt_address)
          error(n.mgmt_mark, "nodes." + n.name + ".mgmt-address",
                "node " + n.name + " does not join the management network (" +
                    (n.profile.boots_vm ? "its image has no management NIC"
                                        : "only FRR nodes and VMs with a management NIC do") +
                    ")",
                "remove mgmt-address");
        continue;
      }
      ++members;
      for (const auto& l : t.links)
        for (const Endpoint* e : {&l.a, &l.b})
          if (e->node == n.name && e->interface == m.interface)
            error(e->mark, "links", "node " + n.name + " uses " + m.interface +
                                        " for a link, which is the management interface",
                  "rename the link's interface, or set mgmt.interface to another name");
    }
    // Twin's DHCP server takes an address when VMs join (the subnet's last usable one).
    const bool dhcp = mgmt_serves_dhcp(t);
    const int reserved = dhcp ? 2 : 1;
    if (!m.subnet && members > 254 - reserved) {
      error(m.mark, "mgmt",
            "the default management subnet (a /24) holds " + std::to_string(254 - reserved) +
                " nodes; the lab has " + std::to_string(members),
            "give mgmt.subnet, e.g. 172.30.0.0/22");
      return;
    }
    // Without a subnet, the lab's default one: a given address is checked against it too.
    const IpPrefix s = m.subnet ? *m.subnet : default_mgmt_subnet(t.name);
    const std::string which = m.subnet ? "" : " (the default for lab " + t.name + ")";
    if (m.subnet && (s.family != 4 || s.length < 8 || s.length > 29)) {
      error(m.subnet_mark, "mgmt.subnet",
            "management subnet " + s.str() + " is not an IPv4 subnet of /8 to /29",
            "e.g. 172.30.1.0/24");
      return;
    }
    const auto podman = *IpPrefix::parse("10.88.0.0/16");
    if (podman.contains(s) || s.contains(podman))
      error(m.subnet_mark, "mgmt.subnet",
            "management subnet " + s.str() + " overlaps podman's default network 10.88.0.0/16",
            "choose another, e.g. 172.30.1.0/24");
    // Addresses that are no unicast host's (RFC 6890): this network, loopback, link-local,
    // multicast, reserved.
    for (const char* special :
         {"0.0.0.0/8", "127.0.0.0/8", "169.254.0.0/16", "224.0.0.0/4", "240.0.0.0/4"}) {
      const auto sp = *IpPrefix::parse(special);
      if (sp.contains(s) || s.contains(sp))
        error(m.subnet_mark, "mgmt.subnet",
              "management subnet " + s.str() + " overlaps " + special +
                  ", which holds no unicast host (RFC 6890)",
              "choose a private subnet, e.g. 172.30.1.0/24");
    }
    // The lab's own addresses: a node would have the same network on two ports.
    auto clash = [&](const IpPrefix& a, const std::string& where) {
      if (a.family != 4) return;
      if (s.contains(a) || a.network().contains(s))
        error(m.subnet_mark, "mgmt.subnet",
              "management subnet " + s.str() + which + " overlaps " + a.str() + " (" + where + ")",
              "give mgmt.subnet a network the lab does not use, e.g. 172.30.1.0/24");
    };
    for (const auto& l : t.links)
      for (const auto& [node, addrs] : l.addresses)
        for (const auto& a : addrs) clash(a, node + "'s address on a link");
    for (const auto& n : t.nodes) {
      for (const auto& a : n.loopbacks) clash(a, n.name + "'s loopback");
      if (n.own)
        for (const auto& [ifname, addrs] : n.own->addresses)
          for (const auto& a : addrs)
            if (auto p = IpPrefix::parse(a)) clash(*p, n.name + "'s " + ifname + " in its config");
    }
    const long long size = 1LL << (32 - s.length);
    if (members + reserved > size - 2)
      error(m.subnet_mark, "mgmt.subnet",
            "management subnet " + s.str() + " holds " + std::to_string(size - 2) +
                " addresses; the lab needs " + std::to_string(members + reserved) +
                (dhcp ? " (its nodes, the host and twin's DHCP server for its VMs)"
                      : " (its nodes and the host)"),
            "give a larger subnet");
    std::map<std::string, std::string> used;  // address -> node, or what else holds it
    std::set<std::string> used_by_node;
    IpPrefix host = s.network();
    host.bytes[3] = static_cast<uint8_t>(host.bytes[3] + 1);
    used[host.address()] = "the host (the subnet's first address)";
    if (dhcp)
      used[mgmt_dhcp_address(s).address()] =
          "twin's DHCP server for the lab's VMs (the subnet's last usable address)";
    for (const auto& n : t.nodes) {
      if (!n.mgmt_address || !joins_mgmt(n)) continue;
      const std::string f = "nodes." + n.name + ".mgmt-address";
      IpPrefix a = *n.mgmt_address;
      if (a.family != 4 || !s.contains(a)) {
        error(n.mgmt_mark, f,
              "management address " + a.address() + " of " + n.name + " is outside " + s.str() +
                  which,
              m.subnet ? "" : "give mgmt.subnet the network your addresses are in");
        continue;
      }
      IpPrefix net = s.network();
      IpPrefix bcast = net;
      for (int bit = s.length; bit < 32; ++bit) bcast.bytes[bit / 8] |= (0x80 >> (bit % 8));
      if (a.address() == net.address() || a.address() == bcast.address()) {
        error(n.mgmt_mark, f,
              a.address() + " is the " + (a.address() == net.address() ? "network" : "broadcast") +
                  " address of " + s.str(),
              "");
        continue;
      }
      if (auto [it, fresh] = used.emplace(a.address(), n.name); fresh)
        used_by_node.insert(a.address());
      else
        error(n.mgmt_mark, f,
              "management address " + a.address() + " of " + n.name + " is already " +
                  (used_by_node.count(it->first) ? "node " + it->second + "'s" : it->second),
              "give each node its own address");
    }
  }

  void vm_ports() {
    // A VM gets one NIC per linked port, in port order, and its guest numbers ports by NIC
    // order: linked ports must run from the image's first port without a gap.
    for (const auto& n : t.nodes) {
      const auto& vm = n.profile.vm;
      if (!n.profile.ports_by_nic) continue;
      std::set<int> nics;
      for (const auto& l : t.links)
        for (const Endpoint* e : {&l.a, &l.b})
          if (e->node == n.name)
            if (int k = vm_data_nic(vm, e->interface); k >= 0) nics.insert(k);
      if (nics.empty() || *nics.rbegin() == static_cast<int>(nics.size()) - 1) continue;
      int gap = 0;
      while (nics.count(gap)) ++gap;
      std::string p = vm.interface_pattern, first = p, missing = p;
      first.replace(first.find("{n}"), 3, std::to_string(vm.interface_first));
      missing.replace(missing.find("{n}"), 3,
                      std::to_string(vm.interface_first + gap * vm.interface_step));
      error(n.mark, "nodes." + n.name,
            "VM " + n.name + " has links on ports after " + missing + " but none on " + missing,
            "twin gives a VM one NIC per linked port and its guest names ports in NIC order: "
            "link its ports from " +
                first + " on without gaps");
    }
  }

  void links() {
    std::vector<std::string> names;
    for (const auto& n : t.nodes) names.push_back(n.name);
    std::map<std::pair<std::string, std::string>, Mark> used;
    for (size_t i = 0; i < t.links.size(); ++i) {
      Link& l = t.links[i];
      std::string f = "links[" + std::to_string(i) + "]";
      if (l.a.node.empty() || l.b.node.empty()) continue;
      bool ok = true;
      for (int k = 0; k < 2; ++k) {
        Endpoint& e = k == 0 ? l.a : l.b;
        std::string ef = f + ".endpoints[" + std::to_string(k) + "]";
        if (!t.find_node(e.node)) {
          std::string near = nearest_name(e.node, names);
          error(e.mark, ef, "unknown node '" + e.node + "'",
                near.empty() ? "declare it under nodes" : "did you mean '" + near + "'?");
          ok = false;
        }
        std::string why;
        if (!valid_interface_name(e.interface, &why)) {
          error(e.mark, ef, why, "use short Linux names such as swp1 or eth0");
          ok = false;
        } else if (e.interface == "lo") {
          error(e.mark, ef, "interface 'lo' is the node's loopback and cannot be linked", "");
          ok = false;
        } else if (const Node* n = t.find_node(e.node);
                   n && n->kind == NodeKind::kBridge && e.interface == "br0") {
          error(e.mark, ef, "port 'br0' of bridge " + e.node + " is the name of the bridge itself",
                "name the bridge's ports e.g. p1, p2 or eth1, eth2");
          ok = false;
        } else if (const Node* n = t.find_node(e.node);
                   n && n->profile.ports_by_nic && vm_data_nic(n->profile.vm, e.interface) < 0) {
          const auto& vm = n->profile.vm;
          auto name_of = [&](int k) {
            std::string s = vm.interface_pattern;
            return s.replace(s.find("{n}"), 3,
                             std::to_string(vm.interface_first + k * vm.interface_step));
          };
          error(e.mark, ef,
                "interface '" + e.interface + "' is not a port name of image " + n->image +
                    " (a VM whose ports are " + name_of(0) + ", " + name_of(1) + ", " + name_of(2) +
                    ", ...)",
                "name the VM's ports as its image does (profile " + n->profile.file + ")");
          ok = false;
        } else if (n && n->profile.ports_named_by_cmdline &&
                   !std::regex_match(e.interface, kGuestIfRe)) {
          // The guest learns these names from its kernel command line (twin.if=MAC,NAME,...).
          error(e.mark, ef,
                "interface '" + e.interface + "' of VM " + e.node +
                    " must be letters, digits, '_', '-' or '.'",
                "the guest takes its interface names from its kernel command line");
          ok = false;
        }
      }
      if (l.a.node == l.b.node && l.a.interface == l.b.interface) {
        error(l.b.mark, f + ".endpoints",
              "link from " + l.a.node + ":" + l.a.interface + " to itself",
              "a link joins two different interfaces");
        continue;
      }
      // containerlab allows a cable between two ports of one node (a NOS can join two of its
      // VRFs with it, or test an L2 loop). A twin node is one namespace with one routing table
      // (VRFs are refused), so both ends would be local addresses of the same table: nothing
      // crosses the cable, BGP cannot peer with itself, and no validator can tell it works.
      if (l.a.node == l.b.node) {
        error(l.mark, f + ".endpoints",
              "link joins two ports of the same node, " + l.a.node + ":" + l.a.interface + " and " +
                  l.a.node + ":" + l.b.interface,
              "a twin node is one network namespace with one routing table, so a cable looped "
              "back into it carries nothing; join two nodes (a host node can stand in for a "
              "test port)");
        continue;
      }
      for (Endpoint* e : {&l.a, &l.b}) {
        auto key = std::make_pair(e->node, e->interface);
        if (auto it = used.find(key); it != used.end()) {
          error(e->mark, f + ".endpoints",
                "interface " + e->node + ":" + e->interface +
                    " is already used by the link at line " + std::to_string(it->second.line),
                "each interface joins one link; pick another interface name");
          ok = false;
        } else {
          used[key] = e->mark;
        }
      }
      if (!ok) continue;
      const Node* na = t.find_node(l.a.node);
      const Node* nb = t.find_node(l.b.node);
      // A bridge end is a member port of a LAN segment: layer 2 only. Two bridges cabled
      // together are one broadcast domain in two pieces: one bridge says it plainly.
      if (na->kind == NodeKind::kBridge && nb->kind == NodeKind::kBridge) {
        error(l.mark, f + ".endpoints", "link joins two bridges, " + l.a.node + " and " + l.b.node,
              "a bridge is one LAN segment: link every member to one bridge node");
        continue;
      }
      for (const Node* br : {na, nb})
        if (br->kind == NodeKind::kBridge && l.addresses.count(br->name))
          error(l.mark, f + ".addresses." + br->name,
                "bridge " + br->name + " takes no address: its ports are layer 2",
                "give the address to the member's end of the link");
      // Two FRR nodes peer with BGP unnumbered (the planner's "fabric" link); not a node
      // looped to itself.
      bool unnumbered = na->kind == NodeKind::kFrr && nb->kind == NodeKind::kFrr && na != nb;
      bool needs_v6 = unnumbered;
      for (const auto& [node, ps] : l.addresses)
        for (const auto& p : ps) needs_v6 = needs_v6 || p.family == 6;
      // The generated configuration peers with `remote-as external`: same-ASN neighbours never
      // reach Established (FRR reports "Bad Peer AS").
      if (unnumbered && na->config.empty() && nb->config.empty() && na->asn && nb->asn &&
          *na->asn == *nb->asn)
        error(l.mark, f + ".endpoints",
              l.a.node + " and " + l.b.node + " share ASN " + std::to_string(*na->asn) +
                  "; the generated eBGP configuration needs different ASNs on a link",
              "give each leaf its own ASN (spines may share one), or use your own `config:`");
      const Where& mtu_at = places.link_mtu[i];
      if (needs_v6 && l.mtu < kMinIpv6Mtu && !places.bad_mtu.count(i))
        error(mtu_at.mark, f + ".mtu",
              "MTU " + std::to_string(l.mtu) +
                  (mtu_at.field.empty() ? " (from defaults.mtu)" : "") +
                  " is below 1280 on a link that needs IPv6" +
                  std::string(unnumbered ? " (BGP unnumbered peers over IPv6 link-local)" : ""),
              "Linux removes IPv6 from an interface whose MTU is under 1280 (RFC 8200 §5)");
    }
  }

  // A segment FRR and the kernel run but that cannot do what a LAN is for: said, not refused
  // (containerlab runs it too). No member or one; members whose MTUs differ — the bridge drops
  // frames above a port's MTU, and OSPF neighbors whose MTUs differ stay in ExStart (RFC 2328
  // §10.6) unless `ip ospf mtu-ignore`.
  void segments() {
    for (const auto& n : t.nodes) {
      if (n.kind != NodeKind::kBridge) continue;
      std::vector<std::string> members, mtus;
      std::set<int> distinct;
      for (const auto& l : t.links) {
        const Endpoint* m = l.a.node == n.name ? &l.b : l.b.node == n.name ? &l.a : nullptr;
        if (!m) continue;
        members.push_back(m->node + ":" + m->interface);
        mtus.push_back(members.back() + " " + std::to_string(l.mtu));
        distinct.insert(l.mtu);
      }
      const std::string field = "nodes." + n.name;
      if (members.size() < 2)
        d_.warn({t.file, n.mark.line, n.mark.column, field,
                 "bridge " + n.name +
                     (members.empty() ? " has no members: no link joins it"
                                      : " has one member, " + members[0] + ": nothing shares it"),
                 "a LAN segment joins several nodes: link each member's port to it"});
      if (distinct.size() > 1) {
        std::string list;
        for (const auto& s : mtus) list += (list.empty() ? "" : ", ") + s;
        d_.warn({t.file, n.mark.line, n.mark.column, field,
                 "members of segment " + n.name + " have different MTUs (" + list +
                     "): the bridge drops frames above a port's MTU, and OSPF neighbors whose "
                     "MTUs differ stay in ExStart (RFC 2328 §10.6)",
                 "give every link to the segment one `mtu`"});
      }
    }
  }

  // Which island of the lab (connected component of the link graph) each node is on: an address
  // repeated on islands that share no link cannot collide (no broadcast domain, no routing
  // domain joins them).
  void islands() {
    std::vector<std::string> names;
    std::vector<std::pair<std::string, std::string>> edges;
    for (const auto& n : t.nodes) names.push_back(n.name);
    for (const auto& l : t.links) edges.emplace_back(l.a.node, l.b.node);
    island_ = components(names, edges);
  }
  const std::string& island(const std::string& node) const {
    static const std::string kNone;
    auto it = island_.find(node);
    return it == island_.end() ? kNone : it->second;
  }

  // A file as messages name it: relative to the topology's folder when inside it.
  std::string short_path(const std::string& file) const {
    auto rel = std::filesystem::path(file).lexically_relative(t.dir);
    return rel.empty() || rel.native().rfind("..", 0) == 0 ? file : rel.string();
  }

  void identities() {
    // Loopbacks are identities: the same host address on `lo` of two routers of one island is
    // either an anycast address (declared in `anycast:`, or given by each router's own config)
    // or a mistake that breaks routing to both. Router-ids must be unique in an island and never
    // anycast: BGP drops sessions between speakers with the same identifier, OSPF's database
    // confuses them.
    struct Held {
      const Node* node;
      Where at;
      std::string file;  // t.file, or the node's own config
      bool from_config;
    };
    std::map<std::string, std::vector<Held>> held;  // host prefix -> its places, node order
    std::vector<std::string> order;                 // first-seen order of the prefixes
    for (const auto& n : t.nodes) {
      if (n.kind != NodeKind::kFrr) continue;
      std::set<std::string> mine;
      auto hold = [&](const IpPrefix& p, Held h) {
        if (!mine.insert(p.str()).second) return;
        auto& v = held[p.str()];
        if (v.empty()) order.push_back(p.str());
        v.push_back(std::move(h));
      };
      // The config's line first: for a containerlab node the loopback is the config's.
      if (n.own)
        if (auto lo = n.own->addresses.find("lo"); lo != n.own->addresses.end()) {
          const auto& lines = n.own->address_lines.at("lo");
          for (size_t k = 0; k < lo->second.size() && k < lines.size(); ++k)
            if (auto p = IpPrefix::parse(lo->second[k]); p && p->is_host())
              hold(*p, {&n, Where{Mark{lines[k], 2}, "node " + n.name}, n.config, true});
        }
      const auto& lo_at = find_or_none(places.loopbacks, n.name);
      for (size_t k = 0; k < n.loopbacks.size(); ++k)
        hold(n.loopbacks[k],
             {&n, k < lo_at.size() ? lo_at[k] : Where{n.mark, "nodes." + n.name + ".loopback"},
              t.file, false});
    }
    std::set<std::pair<std::string, std::string>> dup_lo;  // (node, prefix) already reported
    for (const auto& prefix : order) {
      const auto& v = held[prefix];
      auto declared = std::find_if(t.anycast.begin(), t.anycast.end(),
                                   [&](const Anycast& a) { return a.prefix.str() == prefix; });
      if (declared != t.anycast.end()) {
        for (const auto& h : v) declared->holders.push_back(h.node->name);
        continue;
      }
      if (v.size() < 2) continue;
      // Each router's own config gives it: the lab says it is anycast (a containerlab file
      // cannot declare it), and the planner notes that it reads it so.
      if (std::all_of(v.begin(), v.end(), [](const Held& h) { return h.from_config; })) {
        Anycast a;
        a.prefix = *IpPrefix::parse(prefix);
        for (const auto& h : v) {
          a.holders.push_back(h.node->name);
          a.source += (a.source.empty() ? "" : ", ") + short_path(h.file) + ":" +
                      std::to_string(h.at.mark.line);
        }
        t.anycast.push_back(std::move(a));
        continue;
      }
      // Otherwise a clash where two holders share an island: reported once, at the later one.
      for (size_t k = 1; k < v.size(); ++k) {
        const Held* first = nullptr;
        for (size_t j = 0; j < k && !first; ++j)
          if (island(v[j].node->name) == island(v[k].node->name)) first = &v[j];
        if (!first) continue;
        dup_lo.insert({v[k].node->name, prefix});
        d_.add({v[k].file, v[k].at.mark.line, v[k].at.mark.column, v[k].at.field,
                "loopback " + prefix + " is also used by node " + first->node->name +
                    (first->file == t.file ? ""
                                           : " (" + short_path(first->file) + ":" +
                                                 std::to_string(first->at.mark.line) + ")"),
                "loopbacks must be unique in the fabric; if both routers hold it on purpose (an "
                "anycast service address), list it under the top-level `anycast:`"});
      }
    }
    std::map<std::string, const Anycast*> anycast;  // address -> its entry
    for (const auto& a : t.anycast) anycast[a.prefix.address()] = &a;
    auto holders_text = [](const Anycast& a) {
      std::string s;
      for (const auto& h : a.holders) s += (s.empty() ? "" : ", ") + h;
      return s.empty() ? std::string("no router") : s;
    };
    // (router-id, island) -> its first router: identifiers meet only where routers can peer.
    std::map<std::pair<std::string, std::string>, std::string> rid_owner;
    for (const auto& n : t.nodes) {
      if (n.kind != NodeKind::kFrr) continue;
      // The router-id FRR runs with: an own config's `bgp router-id` wins over the topology's.
      const bool config_rid = n.own && !n.own->bgp_router_id.empty();
      if (config_rid) {
        if (auto a = anycast.find(n.own->bgp_router_id); a != anycast.end())
          d_.add({n.config, n.own->bgp_router_id_line, 2, "node " + n.name,
                  "`bgp router-id " + n.own->bgp_router_id + "` is anycast address " +
                      a->second->prefix.str() + ", held by " + holders_text(*a->second),
                  "a router-id identifies one router (RFC 6286): use an address of this "
                  "router's own"});
      } else if (n.own && !n.router_id && n.own->bgp_asn) {
        // No router-id anywhere: FRR's zebra picks the highest IPv4 address on a loopback.
        std::optional<IpPrefix> pick;
        auto consider = [&](const IpPrefix& p) {
          if (p.family == 4 && p.is_host() && (!pick || pick->bytes < p.bytes)) pick = p;
        };
        if (auto lo = n.own->addresses.find("lo"); lo != n.own->addresses.end())
          for (const auto& s : lo->second)
            if (auto p = IpPrefix::parse(s)) consider(*p);
        for (const auto& l : n.loopbacks) consider(l);
        bool global_rid = false;  // zebra's own `router-id X`, a line twin does not read
        for (const auto& r : n.own->not_read) global_rid |= r.text.rfind("router-id", 0) == 0;
        if (pick && !global_rid)
          if (auto a = anycast.find(pick->address()); a != anycast.end())
            d_.add({n.config, n.own->bgp_line, 1, "node " + n.name,
                    "FRR would take anycast address " + pick->address() + " (held by " +
                        holders_text(*a->second) + ") as " + n.name +
                        "'s BGP router-id: the highest address on its loopback, with no "
                        "`bgp router-id`",
                    "give the router an identifier of its own: `bgp router-id` under `router "
                    "bgp`, or an own loopback above the anycast address"});
      }
      if (!n.router_id || config_rid) continue;
      bool derived = places.router_id_derived.count(n.name) > 0;
      auto at = places.router_id.find(n.name);
      Mark m = at != places.router_id.end() ? at->second.mark : n.mark;
      const std::string field = "nodes." + n.name + ".router-id";
      if (auto a = anycast.find(n.router_id->address()); a != anycast.end()) {
        // One anycast address as the identifier of several routers: refused, once per router.
        d_.add({t.file, m.line, m.column, field,
                "router-id " + n.router_id->address() +
                    (derived ? ", taken from loopback " + n.router_id->str() + "," : "") +
                    " is anycast address " + a->second->prefix.str() + ", held by " +
                    holders_text(*a->second),
                derived ? "a router-id identifies one router (RFC 6286): set `router-id:`, or "
                          "list the router's own loopback before the anycast one"
                        : "a router-id identifies one router (RFC 6286): use an address of this "
                          "router's own"});
        continue;
      }
      auto [it, fresh] =
          rid_owner.emplace(std::pair{n.router_id->address(), island(n.name)}, n.name);
      // A router-id taken from a duplicate loopback is the same mistake: report it once.
      if (!fresh && !(derived && dup_lo.count({n.name, n.router_id->str()})))
        error(m, field,
              "router-id " + n.router_id->address() +
                  (derived ? ", taken from loopback " + n.router_id->str() + "," : "") +
                  " is also used by node " + it->second,
              std::string("BGP drops sessions between speakers with the same identifier "
                          "(RFC 6286)") +
                  (derived ? "; set a unique `router-id:`" : ""));
    }
    // A declared anycast address no router holds is a typo or a leftover.
    for (const auto& a : t.anycast)
      if (a.declared && a.holders.empty())
        error(a.mark, "anycast",
              "anycast address " + a.prefix.str() + " is on the loopback of no router",
              "add it to the `loopback:` of each router that holds it");
  }

  // The nodes a host's port reaches at layer 2 through the link's far end `peer:pif`: that
  // node, or, when it is a bridge (a LAN segment), every other member, each with its port and
  // the link that joins it.
  struct Beyond {
    const Node* node;
    std::string interface;
    const Link* link;
  };
  std::vector<Beyond> routers_beyond(const std::string& peer, const std::string& pif) const {
    std::vector<Beyond> out;
    const Node* pn = t.find_node(peer);
    if (!pn) return out;
    if (pn->kind != NodeKind::kBridge) {
      for (const auto& l : t.links)
        if ((l.a.node == peer && l.a.interface == pif) ||
            (l.b.node == peer && l.b.interface == pif))
          out.push_back({pn, pif, &l});
      return out;
    }
    for (const auto& l : t.links) {
      const Endpoint* member = l.a.node == peer ? &l.b : l.b.node == peer ? &l.a : nullptr;
      const Endpoint* port = l.a.node == peer ? &l.a : &l.b;
      if (!member || port->interface == pif) continue;
      if (const Node* m = t.find_node(member->node); m && m->kind == NodeKind::kFrr)
        out.push_back({m, member->interface, &l});
    }
    return out;
  }

  void gateways() {
    // Hosts: a default route per address family, via the peer's address on a shared subnet.
    for (auto& n : t.nodes) {
      if (n.kind != NodeKind::kHost) continue;
      for (int fam : {4, 6}) {
        bool has_addr = false;
        std::optional<IpPrefix> gw;
        Where gw_at{n.mark, "nodes." + n.name + ".gateway"};
        const auto& given_at = find_or_none(places.gateways, n.name);
        for (size_t k = 0; k < n.gateways.size(); ++k)
          if (n.gateways[k].family == fam) {
            gw = n.gateways[k];
            if (k < given_at.size()) gw_at = given_at[k];
          }
        bool explicit_gw = gw.has_value();
        // A default route under `routes:` is this family's gateway.
        const HostRoute* default_route = nullptr;
        for (const auto& r : n.routes)
          if (r.destination.family == fam && r.destination.length == 0) default_route = &r;
        if (default_route && explicit_gw) {
          error(default_route->mark, "nodes." + n.name + ".routes",
                "a default route is given both here and by `gateway` (line " +
                    std::to_string(gw_at.mark.line) + ")",
                "keep one of them");
          continue;
        }
        if (default_route) continue;  // its next hop is checked with the other routes
        bool gw_on_link = false;
        for (const auto& l : t.links) {
          const std::string* peer = nullptr;
          if (l.a.node == n.name) peer = &l.b.node;
          if (l.b.node == n.name) peer = &l.a.node;
          if (!peer) continue;
          auto mine = l.addresses.find(n.name);
          if (mine == l.addresses.end()) continue;
          // A server on a tenant port is on an L2 segment: no router address there. Its
          // gateway is the network's anycast gateway when the tenant routes (L3 VNI).
          const std::string& leaf_if = l.a.node == n.name ? l.b.interface : l.a.interface;
          if (const TenantNetwork* tnet = tenant_network_of(t, *peer, leaf_if)) {
            for (const auto& a : mine->second) {
              if (a.family != fam) continue;
              if (explicit_gw) gw_on_link = gw_on_link || a.contains(*gw);
              else if (!gw && tnet->gateway && tnet->gateway->family == fam &&
                       a.contains(*tnet->gateway))
                gw = *tnet->gateway;
            }
            continue;
          }
          for (const auto& a : mine->second) {
            if (a.family != fam) continue;
            has_addr = true;
            if (explicit_gw) {
              gw_on_link = gw_on_link || a.contains(*gw);
              continue;
            }
            std::vector<IpPrefix> candidates;
            const std::string& pif = l.a.node == n.name ? l.b.interface : l.a.interface;
            for (const auto& [far, far_if, far_link] : routers_beyond(*peer, pif)) {
              if (auto theirs = far_link->addresses.find(far->name);
                  theirs != far_link->addresses.end())
                candidates.insert(candidates.end(), theirs->second.begin(), theirs->second.end());
              // A router with its own config holds the addresses its frr.conf gives the port.
              if (far->own)
                if (auto it = far->own->addresses.find(far_if); it != far->own->addresses.end())
                  for (const auto& s : it->second)
                    if (auto pf = IpPrefix::parse(s)) candidates.push_back(*pf);
            }
            for (const auto& b : candidates)
              if (!gw && b.family == fam && a.contains(b)) gw = b;
          }
        }
        if (explicit_gw && !gw_on_link)
          error(gw_at.mark, gw_at.field,
                "gateway " + gw->address() + " is not on any subnet of the host's links", "");
        if (has_addr && !gw && !places.tenant_problems && !places.gateway_optional)
          error(n.mark, "nodes." + n.name + ".gateway",
                "host has an IPv" + std::to_string(fam) +
                    " address but no default route: no peer address on its subnet",
                "give the router on that link or segment an address in the host's subnet, or set "
                "`gateway:`");
        if (gw && !explicit_gw) {
          IpPrefix g = *gw;
          g.length = fam == 4 ? 32 : 128;
          n.gateways.push_back(g);
        }
      }
    }
  }

  // An address belongs to one node where it can collide: the same address on two nodes of one
  // island (both ends of a link, or anywhere they route to each other) makes ARP/ND and routing
  // pick either. Islands that share no link may reuse addresses, as containerlab lets them.
  // Host addresses on two routers' `lo` are identities()'s (anycast, or one report there).
  void addresses() {
    struct Owner {
      std::string node, interface;
      Where at;
      size_t link;       // SIZE_MAX for a loopback
      std::string file;  // where `at` is: the topology, or an own config
    };
    std::map<std::pair<std::string, std::string>, Owner> owner;  // (address, island) -> first
    auto place = [&](const Owner& o) {
      return o.file + ":" + std::to_string(o.at.mark.line) + ":" +
             std::to_string(o.at.mark.column);
    };
    auto error_at = [&](const Owner& o, const std::string& msg, const std::string& hint) {
      d_.add({o.file, o.at.mark.line, o.at.mark.column, o.at.field, msg, hint});
    };
    auto see = [&](const IpPrefix& p, Owner o) {
      auto [it, fresh] = owner.emplace(std::pair{p.address(), island(o.node)}, o);
      if (fresh || it->second.node == o.node) return;
      const Owner& first = it->second;
      if (first.link == SIZE_MAX && o.link == SIZE_MAX && p.is_host()) return;
      if (first.link == o.link && o.link != SIZE_MAX)
        error_at(o,
              "address " + p.address() + " is given to both ends of the link: " + first.node +
                  ":" + first.interface + " (" + place(first) + ") and " + o.node + ":" +
                  o.interface,
              "each end needs its own address in the link's subnet");
      else
        error_at(o,
                 "address " + p.address() + " of " + o.node + ":" + o.interface +
                     " is also given to " + first.node + ":" + first.interface + " at " +
                     place(first),
                 "an address belongs to one node where the two can reach each other; pick "
                 "another one");
    };
    for (const auto& n : t.nodes) {
      const auto& lo_at = find_or_none(places.loopbacks, n.name);
      for (size_t k = 0; k < n.loopbacks.size() && k < lo_at.size(); ++k)
        see(n.loopbacks[k], {n.name, "lo", lo_at[k], SIZE_MAX, t.file});
    }
    for (size_t i = 0; i < t.links.size() && i < places.link_addresses.size(); ++i) {
      const Link& l = t.links[i];
      for (const Endpoint* e : {&l.a, &l.b}) {  // in the file's order
        auto ps = l.addresses.find(e->node);
        auto at = places.link_addresses[i].find(e->node);
        if (ps == l.addresses.end() || at == places.link_addresses[i].end()) continue;
        for (size_t k = 0; k < ps->second.size() && k < at->second.size(); ++k)
          see(ps->second[k], {e->node, e->interface, at->second[k], i, t.file});
      }
    }
    // Own configs' addresses, at their lines: an frr.conf that reuses a host's address or gives
    // both routers of a link the same one.
    for (const auto& n : t.nodes) {
      if (!n.own) continue;
      for (const auto& [ifname, list] : n.own->addresses) {
        size_t link = SIZE_MAX;
        for (size_t i = 0; i < t.links.size(); ++i)
          if ((t.links[i].a.node == n.name && t.links[i].a.interface == ifname) ||
              (t.links[i].b.node == n.name && t.links[i].b.interface == ifname))
            link = i;
        if (link == SIZE_MAX && ifname != "lo") continue;  // a port twin does not wire
        const auto& lines = n.own->address_lines.at(ifname);
        for (size_t k = 0; k < list.size() && k < lines.size(); ++k)
          if (auto p = IpPrefix::parse(list[k]))
            see(*p, {n.name, ifname, Where{Mark{lines[k], 2}, "node " + n.name}, link, n.config});
      }
    }
  }

  // Hosts' static routes: each next hop on a subnet of the host's link addresses, as `ip route`
  // needs (it refuses a gateway it cannot reach: "Nexthop has invalid gateway").
  void host_routes() {
    for (const auto& n : t.nodes) {
      if (n.kind != NodeKind::kHost) continue;
      const auto& via_at = find_or_none(places.route_via, n.name);
      for (size_t k = 0; k < n.routes.size(); ++k) {
        const auto& r = n.routes[k];
        bool on_link = false, own = false;
        for (const auto& l : t.links)
          if (auto mine = l.addresses.find(n.name); mine != l.addresses.end())
            for (const auto& a : mine->second) {
              on_link = on_link || a.contains(r.via);
              own = own || a.address() == r.via.address();
            }
        Where at = k < via_at.size() ? via_at[k] : Where{r.mark, "nodes." + n.name + ".routes"};
        if (own) {
          // The kernel takes it, and the host then ARPs for every destination itself.
          error(at.mark, at.field, "next hop " + r.via.address() + " is the host's own address",
                "the next hop is a router's address on the host's subnet");
          continue;
        }
        if (on_link) continue;
        error(at.mark, at.field,
              "next hop " + r.via.address() + " is not on any subnet of the host's links",
              "a next hop is an address in the subnet of one of the host's link addresses");
      }
    }
  }

  Topology& t;
  const Places& places;
  Diagnostics& d_;
  std::map<std::string, std::string> island_;  // node -> a representative node of its island
};

}  // namespace

void check_topology(Topology& t, const Places& places, Diagnostics& diags) {
  Checker(t, places, diags).run();
}

}  // namespace twin::topology
