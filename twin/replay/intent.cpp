#include "twin/replay/intent.hpp"

#include <algorithm>

#include "twin/core/ip.hpp"
#include "twin/replay/steps.hpp"

namespace twin::replay {

plan::Interface* find_interface(plan::Plan& p, const std::string& node, const std::string& ifname) {
  for (auto& n : p.nodes)
    if (n.name == node)
      for (auto& i : n.interfaces)
        if (i.name == ifname) return &i;
  return nullptr;
}

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
  plan::derive_expectations(p);
  return p;
}

}  // namespace twin::replay
