#include "twin/topology/tenants.hpp"

#include <map>
#include <regex>
#include <set>

#include "twin/core/yaml_reader.hpp"

namespace twin::topology {

namespace {

using yaml::child;
using yaml::item;
using yaml::Value;

// Tenant names name a VRF on the VTEPs: a Linux interface name (IFNAMSIZ 15) with room for
// nothing else.
const std::regex kTenantNameRe("[A-Za-z][A-Za-z0-9_-]{0,14}");
const std::regex kNetworkNameRe("[A-Za-z0-9][A-Za-z0-9_-]{0,31}");

// The link holding `node`:`interface`, or nullptr; `index` gets its position.
const Link* link_of(const Topology& t, const std::string& node, const std::string& interface,
                    size_t* index) {
  for (size_t i = 0; i < t.links.size(); ++i) {
    const Link& l = t.links[i];
    if ((l.a.node == node && l.a.interface == interface) ||
        (l.b.node == node && l.b.interface == interface)) {
      if (index) *index = i;
      return &l;
    }
  }
  return nullptr;
}

bool has_ipv4_loopback(const Node& n) {
  for (const auto& l : n.loopbacks)
    if (l.family == 4) return true;
  if (n.own)
    if (auto lo = n.own->addresses.find("lo"); lo != n.own->addresses.end())
      for (const auto& a : lo->second)
        if (auto pf = IpPrefix::parse(a); pf && pf->family == 4 && pf->length == 32) return true;
  return false;
}

class TenantsReader {
 public:
  TenantsReader(yaml::Reader& r, const Topology& t) : r_(r), t_(t) {}

  std::vector<Tenant> read(const Value& map) {
    std::vector<Tenant> out;
    if (!map.node.IsMap()) {
      r_.error(map, "expected a mapping of tenant names to tenants",
               "e.g. `tenants: {red: {networks: {web: {vni: 10100, ports: [leaf1:swp3]}}}}`");
      return out;
    }
    if (map.node.size() == 0) {
      r_.error(map, "empty: expected at least one tenant",
               "e.g. `tenants: {red: {networks: {web: {vni: 10100, ports: [leaf1:swp3]}}}}`, or "
               "remove the section");
      return out;
    }
    std::set<std::string> seen;
    for (const auto& kv : map.node) {
      Value tv{true, kv.first, kv.second, "tenants." + kv.first.Scalar()};
      std::string name = kv.first.Scalar();
      if (!seen.insert(name).second) {
        r_.error(yaml::mark_of(kv.first), tv.field, "duplicate tenant name '" + name + "'",
                 "tenant names must be unique; merge the two or rename one");
        continue;
      }
      if (!std::regex_match(name, kTenantNameRe)) {
        r_.error(yaml::mark_of(kv.first), tv.field,
                 "invalid tenant name '" + name +
                     "'; expected 1-15 of A-Z a-z 0-9 _ - starting with a letter",
                 "a tenant's name is the name of its VRF on the leaves (a Linux interface name)");
        continue;
      }
      out.push_back(read_tenant(name, tv));
    }
    check_mtu(out);
    return out;
  }

 private:
  Tenant read_tenant(const std::string& name, const Value& tv) {
    Tenant tn;
    tn.name = name;
    tn.mark = tv.key_mark();
    if (!tv.node.IsMap()) {
      r_.error(tv, "expected a mapping with networks and optionally l3vni", "");
      return tn;
    }
    r_.check_keys(tv, kTenantKeys);
    if (Value l3 = child(tv, "l3vni"))
      if (auto v = r_.integer(l3, 1, kMaxVni, "")) {
        tn.l3vni = static_cast<uint32_t>(*v);
        claim_vni(*tn.l3vni, "tenant " + name + "'s L3 VNI", l3.mark(), l3.field);
      }
    Value nets = child(tv, "networks");
    if (!nets) {
      r_.error(tv.key_mark(), tv.field + ".networks",
               "missing; a tenant needs at least one network", "e.g. `networks: {web: {vni: 10100, "
               "ports: [leaf1:swp3, leaf2:swp3]}}`");
    } else if (!nets.node.IsMap() || nets.node.size() == 0) {
      r_.error(nets, "expected a mapping of network names to networks",
               "e.g. `web: {vni: 10100, ports: [leaf1:swp3, leaf2:swp3]}`");
    } else {
      std::set<std::string> seen;
      for (const auto& kv : nets.node) {
        Value nv{true, kv.first, kv.second, nets.field + "." + kv.first.Scalar()};
        std::string net = kv.first.Scalar();
        if (!seen.insert(net).second) {
          r_.error(yaml::mark_of(kv.first), nv.field,
                   "duplicate network name '" + net + "' in tenant " + name,
                   "network names must be unique within a tenant");
          continue;
        }
        if (!std::regex_match(net, kNetworkNameRe)) {
          r_.error(yaml::mark_of(kv.first), nv.field,
                   "invalid network name '" + net +
                       "'; expected 1-32 of A-Z a-z 0-9 _ - starting with a letter or digit",
                   "");
          continue;
        }
        tn.networks.push_back(read_network(tn, net, nv));
      }
    }
    // A routing tenant's name is its VRF's on every VTEP: no port of those may carry it.
    if (tn.l3vni)
      for (const auto& net : tn.networks)
        for (const auto& port : net.ports)
          for (const auto& l : t_.links)
            for (const Endpoint* e : {&l.a, &l.b})
              if (e->node == port.node && (e->interface == name || name == "lo") &&
                  clashes_.insert(port.node).second)
                r_.error(tn.mark, tv.field,
                         "tenant " + name + " routes (l3vni), so '" + name +
                             "' is the name of its VRF on its leaves, but " + port.node +
                             " has an interface " + (name == "lo" ? "lo" : name),
                         "rename the tenant");
    return tn;
  }

  TenantNetwork read_network(const Tenant& tn, const std::string& name, const Value& nv) {
    TenantNetwork n;
    n.name = name;
    n.mark = nv.key_mark();
    const std::string what = "tenant " + tn.name + " network " + name;
    if (!nv.node.IsMap()) {
      r_.error(nv, "expected a mapping with vni and ports", "e.g. `{vni: 10100, ports: [leaf1:swp3]}`");
      return n;
    }
    r_.check_keys(nv, kTenantNetworkKeys);
    if (Value v = child(nv, "vni"); !v) {
      r_.error(nv.key_mark(), nv.field + ".vni", "missing; expected the network's VNI (1-" +
                                                     std::to_string(kMaxVni) + ")",
               "");
    } else if (auto x = r_.integer(v, 1, kMaxVni, "")) {
      n.vni = static_cast<uint32_t>(*x);
      claim_vni(n.vni, what, v.mark(), v.field);
    }
    Value ports = child(nv, "ports");
    if (!ports) {
      r_.error(nv.key_mark(), nv.field + ".ports",
               "missing; the network has no VTEP: list the leaf ports of its servers",
               "e.g. `ports: [leaf1:swp3, leaf2:swp3]`");
    } else if (r_.list(ports, "leaf ports", "[leaf1:swp3, leaf2:swp3]")) {
      for (size_t i = 0; i < ports.node.size(); ++i) read_port(n, what, item(ports, i));
    }
    if (Value g = child(nv, "gateway")) {
      auto s = r_.string(g);
      auto pf = s ? IpPrefix::parse(*s) : std::nullopt;
      if (s && (!pf || pf->family != 4 || pf->length >= 31)) {
        r_.error(g, "expected the anycast gateway as an IPv4 address with its prefix length",
                 "e.g. `gateway: 10.1.1.1/24`");
      } else if (pf && !tn.l3vni) {
        r_.error(g, "a gateway routes between the tenant's networks, which needs its L3 VNI",
                 "give tenant " + tn.name + " an `l3vni:`, or remove the gateway");
      } else if (pf) {
        n.gateway = *pf;
        for (const auto& [host, addr] : addresses_[{tn.name, name}])
          if (addr.address() == pf->address())
            r_.error(g, "gateway " + pf->address() + " is server " + host + "'s address",
                     "the anycast gateway is an address of its own in the servers' subnet");
        for (const auto& [host, subnet] : subnets_[{tn.name, name}])
          if (subnet.family == 4 && !subnet.contains(*pf))
            r_.error(g, "gateway " + pf->address() + " is not in the servers' subnet " +
                            subnet.network().str() + " (" + host + ")",
                     "");
      }
    }
    return n;
  }

  void read_port(TenantNetwork& n, const std::string& what, const Value& pv) {
    auto s = r_.string(pv);
    if (!s) return;
    auto colon = s->find(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == s->size()) {
      r_.error(pv, "expected a leaf port as node:interface, got '" + *s + "'", "e.g. leaf1:swp3");
      return;
    }
    Endpoint e{s->substr(0, colon), s->substr(colon + 1), pv.mark()};
    const Node* leaf = t_.find_node(e.node);
    if (!leaf) {
      r_.error(pv, "unknown node '" + e.node + "'", "");
      return;
    }
    if (leaf->kind != NodeKind::kFrr || leaf->profile.boots_vm) {
      r_.error(pv,
               "node '" + e.node + "' is not a VTEP: twin builds VXLAN devices on FRR nodes " +
                   "whose kernel is twin's (not a VM's)",
               "a VM's VTEP is its guest's to configure");
      return;
    }
    if (!has_ipv4_loopback(*leaf)) {
      r_.error(pv, "node '" + e.node + "' has no IPv4 loopback to be its VTEP address",
               "give it one, e.g. `loopback: [10.255.1.1/32]`");
      return;
    }
    size_t li = 0;
    const Link* l = link_of(t_, e.node, e.interface, &li);
    if (!l) {
      r_.error(pv, "'" + e.node + ":" + e.interface + "' is on no link", "");
      return;
    }
    const Endpoint& far = l->a.node == e.node && l->a.interface == e.interface ? l->b : l->a;
    const Node* server = t_.find_node(far.node);
    if (!server || server->kind != NodeKind::kHost) {
      r_.error(pv, "'" + *s + "' faces " + far.node + ", a router: a tenant port is a leaf's link "
                       "to a server",
               "");
      return;
    }
    auto [it, fresh] = port_owner_.emplace(*s, std::pair{what, pv.mark()});
    if (!fresh) {
      r_.error(pv, "port " + *s + " is already in " + it->second.first + " (line " +
                       std::to_string(it->second.second.line) + ")",
               "a port belongs to one network");
      return;
    }
    if (auto a = l->addresses.find(e.node); a != l->addresses.end() && !a->second.empty())
      r_.error(pv, "port " + *s + " has address " + a->second[0].str() +
                       " on its link, but a tenant port is a bridge member (L2 only)",
               "remove the leaf's address from that link; the servers share the network's subnet");
    // One L2 segment, one subnet per family: every server of the network in it.
    // One L2 segment carries one MTU: a server sending larger frames than another accepts
    // loses them silently.
    auto [first, fresh_mtu] = network_mtu_.emplace(what, std::pair{l->mtu, *s});
    if (!fresh_mtu && first->second.first != l->mtu)
      r_.error(pv, "port " + *s + "'s link has MTU " + std::to_string(l->mtu) + ", but " +
                       first->second.second + " of the same network has " +
                       std::to_string(first->second.first),
               "one L2 segment carries one MTU: give its server links the same mtu");
    if (auto a = l->addresses.find(far.node); a != l->addresses.end())
      for (const auto& addr : a->second) {
        addresses_[{what_tenant(what), n.name}].emplace_back(far.node, addr);
        auto& subnets = subnets_[{what_tenant(what), n.name}];
        bool placed = false;
        for (const auto& [host, subnet] : subnets)
          if (subnet.family == addr.family) {
            placed = true;
            if (subnet.network().str() != addr.network().str())
              r_.error(pv, "server " + far.node + " is in " + addr.network().str() + ", but " +
                               host + " of the same network is in " + subnet.network().str(),
                       "a tenant network is one L2 segment: give its servers one subnet");
          }
        if (!placed) subnets.emplace_back(far.node, addr);
      }
    n.ports.push_back(e);
    access_mtu_.emplace_back(l->mtu, what + " (links[" + std::to_string(li) + "], " + *s + ")");
  }

  // "tenant red network web" -> "red".
  static std::string what_tenant(const std::string& what) {
    auto a = what.find(' ') + 1;
    return what.substr(a, what.find(' ', a) - a);
  }

  void claim_vni(uint32_t vni, const std::string& what, Mark m, const std::string& field) {
    auto [it, fresh] = vni_owner_.emplace(vni, std::pair{what, m});
    if (!fresh)
      r_.error(m, field,
               "VNI " + std::to_string(vni) + " is already " + it->second.first + "'s (line " +
                   std::to_string(it->second.second.line) + ")",
               "each network and each L3 VNI needs its own VNI");
  }

  // The fabric carries the largest server packet plus the VXLAN header between any two VTEPs,
  // over whichever links ECMP picks: every router-to-router link must.
  void check_mtu(const std::vector<Tenant>&) {
    if (access_mtu_.empty()) return;
    auto widest = access_mtu_.front();
    for (const auto& a : access_mtu_)
      if (a.first > widest.first) widest = a;
    const int need = widest.first + kVxlanOverhead;
    for (size_t i = 0; i < t_.links.size(); ++i) {
      const Link& l = t_.links[i];
      const Node* a = t_.find_node(l.a.node);
      const Node* b = t_.find_node(l.b.node);
      if (!a || !b || a->kind != NodeKind::kFrr || b->kind != NodeKind::kFrr) continue;
      if (l.mtu >= need) continue;
      r_.error(l.mark, "links[" + std::to_string(i) + "].mtu",
               "underlay link " + l.a.node + ":" + l.a.interface + " -- " + l.b.node + ":" +
                   l.b.interface + " has MTU " + std::to_string(l.mtu) +
                   ", too small for the overlay: " + widest.second + " carries " +
                   std::to_string(widest.first) + "-byte packets and VXLAN adds " +
                   std::to_string(kVxlanOverhead) + " bytes, so the underlay needs MTU " +
                   std::to_string(need) + " or more",
               "raise the fabric links' mtu to " + std::to_string(need) +
                   " or more (9216 is usual), or lower the servers' links to " +
                   std::to_string(l.mtu - kVxlanOverhead));
    }
  }

  yaml::Reader& r_;
  const Topology& t_;
  std::map<uint32_t, std::pair<std::string, Mark>> vni_owner_;
  std::map<std::string, std::pair<std::string, Mark>> port_owner_;
  // (tenant, network) -> (server, its address) per family seen first
  std::map<std::pair<std::string, std::string>, std::vector<std::pair<std::string, IpPrefix>>>
      subnets_;
  std::vector<std::pair<int, std::string>> access_mtu_;  // (MTU, whose)
  std::map<std::pair<std::string, std::string>, std::vector<std::pair<std::string, IpPrefix>>>
      addresses_;                                                   // every server address
  std::map<std::string, std::pair<int, std::string>> network_mtu_;  // network -> (MTU, port)
  std::set<std::string> clashes_;                                   // leaves already reported
};

}  // namespace

std::vector<Tenant> read_tenants(yaml::Reader& r, const yaml::Value& map, const Topology& t) {
  return TenantsReader(r, t).read(map);
}

const TenantNetwork* tenant_network_of(const Topology& t, const std::string& node,
                                       const std::string& interface, const Tenant** tenant) {
  for (const auto& tn : t.tenants)
    for (const auto& n : tn.networks)
      for (const auto& p : n.ports)
        if (p.node == node && p.interface == interface) {
          if (tenant) *tenant = &tn;
          return &n;
        }
  return nullptr;
}

}  // namespace twin::topology
