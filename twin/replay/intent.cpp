#include "twin/replay/intent.hpp"

#include <algorithm>

#include "twin/core/ip.hpp"

namespace twin::replay {

namespace {

plan::Interface* find_if(plan::Plan& p, const std::string& node, const std::string& ifname) {
  for (auto& n : p.nodes)
    if (n.name == node)
      for (auto& i : n.interfaces)
        if (i.name == ifname) return &i;
  return nullptr;
}

plan::Node* find_node(plan::Plan& p, const std::string& node) {
  for (auto& n : p.nodes)
    if (n.name == node) return &n;
  return nullptr;
}

void set_mtu(plan::Plan& p, const InterfaceRef& ref, int mtu) {
  if (auto* i = find_if(p, ref.node, ref.interface)) i->mtu = mtu;
}

// A link carries what its smaller end accepts.
void sync_link_mtus(plan::Plan& p) {
  for (auto& l : p.links) {
    auto* a = find_if(p, l.a_node, l.a_interface);
    auto* b = find_if(p, l.b_node, l.b_interface);
    if (a && b) l.mtu = std::min(a->mtu, b->mtu);
  }
}

}  // namespace

plan::Plan intended_plan(const plan::Plan& base, const ChangeSet& cs, size_t steps) {
  plan::Plan p = base;
  size_t n = std::min(steps, cs.steps.size());
  for (size_t k = 0; k < n; ++k) {
    const Step& s = cs.steps[k];
    switch (s.kind()) {
      case StepKind::kTopology:
        if (s.topology().topo) {
          // The new topology replaces nodes and links; intent the lab already carries (an
          // earlier approved change's drain, originated or withdrawn prefixes, links meant to
          // be down) stays with the nodes and interfaces that remain.
          plan::Plan next = plan::make_plan(*s.topology().topo, base.lab);
          for (auto& nn : next.nodes) {
            const plan::Node* old = p.find(nn.name);
            if (!old) continue;
            nn.drained = old->drained;
            nn.originates = old->originates;
            nn.withdraws = old->withdraws;
            for (auto& ni : nn.interfaces)
              for (const auto& oi : old->interfaces)
                if (oi.name == ni.name) ni.up = oi.up;
          }
          p = std::move(next);
        }
        break;
      case StepKind::kInterface:
        for (const auto& ref : s.interface().interfaces) {
          if (s.interface().mtu) set_mtu(p, ref, *s.interface().mtu);
          auto* i = find_if(p, ref.node, ref.interface);
          if (!i) continue;
          for (const auto& a : s.interface().add_addresses)
            if (std::find(i->addresses.begin(), i->addresses.end(), a) == i->addresses.end())
              i->addresses.push_back(a);
          for (const auto& a : s.interface().remove_addresses)
            i->addresses.erase(std::remove(i->addresses.begin(), i->addresses.end(), a),
                               i->addresses.end());
        }
        break;
      case StepKind::kLink:
        if (!s.link().mtu) break;
        if (s.link().all) {
          for (auto& node : p.nodes)
            for (auto& i : node.interfaces) i.mtu = *s.link().mtu;
        } else {
          for (const auto& l : s.link().links) {
            set_mtu(p, l.a, *s.link().mtu);
            set_mtu(p, l.b, *s.link().mtu);
          }
        }
        break;
      case StepKind::kFrr:
      case StepKind::kWait:
      case StepKind::kCheck:
        break;  // FRR lines say nothing the plan can read; the intent block declares it
    }
  }
  sync_link_mtus(p);
  const Intent& in = cs.intent;
  for (const auto& d : in.drain)
    if (auto* node = find_node(p, d)) node->drained = true;
  for (const auto& l : in.links_down) {
    if (auto* i = find_if(p, l.a.node, l.a.interface)) i->up = false;
    if (auto* i = find_if(p, l.b.node, l.b.interface)) i->up = false;
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
