#include "twin/changeset/intent.hpp"

#include <algorithm>

#include "twin/core/ip.hpp"
#include "twin/changeset/steps.hpp"

namespace twin::replay {

using plan::find_interface;

void set_intended_mtu(plan::Plan& p, const InterfaceRef& ref, int mtu) {
  if (auto* i = find_interface(p, ref.node, ref.interface)) i->mtu = mtu;
}

namespace {

plan::Node* find_node(plan::Plan& p, const std::string& node) {
  for (auto& n : p.nodes)
    if (n.name == node) return &n;
  return nullptr;
}

// A link carries what its smaller end accepts.
void sync_link_mtus(plan::Plan& p) {
  for (auto& l : p.links) {
    auto* a = find_interface(p, l.a_node, l.a_interface);
    auto* b = find_interface(p, l.b_node, l.b_interface);
    if (a && b) l.mtu = std::min(a->mtu, b->mtu);
  }
}

// intent.tenant-networks and tenant-ports: the tenants re-derived with the new networks and the
// ports where the change means them. A network left without ports is no longer expected
// anywhere (it keeps no VTEP), nor is a tenant left without networks.
void intend_tenants(plan::Plan& p, const Intent& in) {
  if (in.tenant_networks.empty() && in.tenant_ports.empty()) return;
  std::vector<topology::Tenant> ts = plan::tenants_of(p);
  auto tenant = [&](const std::string& name) -> topology::Tenant& {
    for (auto& t : ts)
      if (t.name == name) return t;
    ts.push_back({});
    ts.back().name = name;
    return ts.back();
  };
  for (const auto& n : in.tenant_networks) {
    topology::TenantNetwork tn;
    tn.name = n.network;
    tn.vni = n.vni;
    tenant(n.tenant).networks.push_back(std::move(tn));
  }
  for (const auto& port : in.tenant_ports) {
    for (auto& t : ts)
      for (auto& tn : t.networks)
        tn.ports.erase(std::remove_if(tn.ports.begin(), tn.ports.end(),
                                      [&](const topology::Endpoint& e) {
                                        return e.node == port.port.node &&
                                               e.interface == port.port.interface;
                                      }),
                       tn.ports.end());
    if (port.tenant.empty()) continue;
    for (auto& tn : tenant(port.tenant).networks)
      if (tn.name == port.network) tn.ports.push_back({port.port.node, port.port.interface, {}});
  }
  for (auto& t : ts)
    t.networks.erase(std::remove_if(t.networks.begin(), t.networks.end(),
                                    [](const topology::TenantNetwork& tn) { return tn.ports.empty(); }),
                     t.networks.end());
  ts.erase(std::remove_if(ts.begin(), ts.end(),
                          [](const topology::Tenant& t) { return t.networks.empty(); }),
           ts.end());
  plan::set_tenants(p, ts);
}

}  // namespace

plan::Plan intended_plan(const plan::Plan& base, const ChangeSet& cs, size_t steps) {
  plan::Plan p = base;
  size_t n = std::min(steps, cs.steps.size());
  for (size_t k = 0; k < n; ++k) {
    const Step& s = cs.steps[k];
    std::visit([&](const auto& body) { intend_step(body, base.lab, p); }, s.body);
  }
  sync_link_mtus(p);
  const Intent& in = cs.intent;
  for (const auto& d : in.drain)
    if (auto* node = find_node(p, d)) node->drained = true;
  for (const auto& l : in.links_down) {
    if (auto* i = find_interface(p, l.a.node, l.a.interface)) i->up = false;
    if (auto* i = find_interface(p, l.b.node, l.b.interface)) i->up = false;
  }
  for (const auto& a : in.add_prefixes)
    if (auto* node = find_node(p, a.node))
      if (std::find(node->originates.begin(), node->originates.end(), a.prefix) ==
          node->originates.end())
        node->originates.push_back(a.prefix);
  for (const auto& r : in.remove_prefixes)
    if (auto* node = find_node(p, r.node)) {
      node->originates.erase(
          std::remove(node->originates.begin(), node->originates.end(), r.prefix),
          node->originates.end());
      if (std::find(node->withdraws.begin(), node->withdraws.end(), r.prefix) ==
          node->withdraws.end())
        node->withdraws.push_back(r.prefix);
    }
  for (const auto& pr : in.paths)
    for (const auto& prefix : pr.prefixes) {
      plan::PathIntent pi{pr.node, prefix, pr.ecmp, pr.via};
      std::erase_if(p.path_intents, [&](const plan::PathIntent& x) {
        return x.node == pi.node && x.prefix == pi.prefix;
      });
      p.path_intents.push_back(pi);
    }
  intend_tenants(p, in);
  if (in.traffic) p.traffic = in.traffic;
  plan::derive_expectations(p);
  return p;
}

}  // namespace twin::replay
