// The `vxlan` change step (a VNI put on or taken off VTEPs, server ports moved into it): how the
// change-set loader reads it, how the gate applies it, what a dry run says of it, and what it
// means for the intended plan (steps.hpp).
#include <algorithm>

#include "twin/changeset/changeset_keys.hpp"
#include "twin/changeset/changeset_loader.hpp"
#include "twin/changeset/steps.hpp"
#include "twin/topology/tenants.hpp"

namespace twin::replay {

namespace {

std::string devices(uint32_t vni) {
  return "vx" + std::to_string(vni) + ", br" + std::to_string(vni);
}

}  // namespace

void ChangeSetLoader::parse_body(const Value& v, VxlanStep& out) {
  r_.check_keys(v, keys::kVxlan);
  std::vector<const plan::Node*> nodes;
  for (const auto& [it, n] :
       step_nodes(v, "VTEPs to change", "leaf1", "a VTEP is an FRR node (EVPN runs in its bgpd)",
                  "tenant networks live on leaves")) {
    if (plan::vni_on(*n, 0, "").local.empty()) {  // (the VTEP address vni_on picks)
      r_.error(it, "node '" + n->name + "' has no IPv4 loopback to be its VTEP address",
               "give it one under `loopback:` in the topology");
      continue;
    }
    out.nodes.push_back(n->name);
    nodes.push_back(n);
  }
  Value vv = child(v, "vni");
  if (!vv) {
    r_.error(v.mark(), v.field + ".vni", "missing; expected the VNI (1.." +
                                             std::to_string(topology::kMaxVni) + ")",
             "vni: 10100");
  } else if (auto n = r_.integer(vv, 1, topology::kMaxVni, "")) {
    out.vni = static_cast<uint32_t>(*n);
  }
  Value rv = child(v, "remove");
  if (rv)
    if (auto b = r_.boolean(rv)) out.remove = *b;
  Value pv = child(v, "ports");
  if (!pv) return;
  if (out.remove) {
    r_.error(pv, "a removed VNI takes no ports; its ports stay, unbridged",
             "to move them, give them to another VNI in their own step");
    return;
  }
  if (nodes.size() > 1) {
    r_.error(pv, "ports with " + std::to_string(nodes.size()) +
                     " nodes; a port is an interface of one node",
             "use one step per node");
    return;
  }
  if (!r_.list(pv, "the node's server ports", "ports: [swp3]") || nodes.empty()) return;
  const plan::Node* n = nodes.front();
  for (size_t i = 0; i < pv.node.size(); ++i) {
    const Value it = item(pv, i);
    auto s = r_.string(it);
    if (!s) continue;
    if (s->find(':') != std::string::npos) {
      r_.error(it, "'" + *s + "' names a node; ports are interfaces of " + n->name,
               "write " + s->substr(s->rfind(':') + 1) + " (the step's node is " + n->name + ")");
      continue;
    }
    auto e = end_ref(it, n->name + ":" + *s, {cur_}, "swp3");
    if (!e) continue;
    if (auto why = not_a_server_port(*e); !why.empty()) {
      r_.error(it, why, "a fabric port in a bridge would carry its tenant's frames into the underlay");
      continue;
    }
    if (has(out.ports, *s)) {
      r_.error(it, "port " + *s + " listed twice", "");
      continue;
    }
    out.ports.push_back(*s);
  }
}

Result<void> vxlan_change(const plan::Plan& plan, const plan::Node& node, const VxlanStep& b,
                          std::vector<plan::Vni>& vnis) {
  auto it = std::find_if(vnis.begin(), vnis.end(),
                         [&](const plan::Vni& v) { return v.vni == b.vni; });
  if (b.remove) {
    if (it == vnis.end())
      return input_error("node " + node.name + " has no VNI " + std::to_string(b.vni) +
                         " to remove");
    vnis.erase(it);
    return {};
  }
  if (it == vnis.end()) {
    plan::Vni v = plan::vni_on(node, b.vni, "");
    const plan::Vni* like = nullptr;
    for (const auto& n : plan.nodes)
      for (const auto& o : n.vnis)
        if (!like && o.vni == b.vni && !o.l3()) like = &o;
    if (like) {  // as another VTEP has it, from this node's address, without its ports
      std::string local = v.local;
      v = *like;
      v.local = local;
      v.ports.clear();
    } else {
      v.mtu = 0;
      for (const auto& i : node.interfaces)
        if (has(b.ports, i.name)) v.mtu = std::max(v.mtu, i.mtu);
      if (v.mtu == 0) v.mtu = plan::Vni{}.mtu;  // Ethernet's, as a port's default
    }
    // L2 VNIs before the L3 ones, as the planner orders them.
    it = vnis.insert(std::find_if(vnis.begin(), vnis.end(), [](const plan::Vni& o) { return o.l3(); }),
                     std::move(v));
  }
  // The ports leave every other bridge of the node and join this one.
  const uint32_t target = it->vni;
  for (auto& o : vnis) {
    if (o.vni != target) {
      o.ports.erase(std::remove_if(o.ports.begin(), o.ports.end(),
                                   [&](const std::string& p) { return has(b.ports, p); }),
                    o.ports.end());
      continue;
    }
    for (const auto& p : b.ports)
      if (!has(o.ports, p)) o.ports.push_back(p);
  }
  return {};
}

Result<void> apply_step(const VxlanStep& b, StepRun& run, std::string* detail) {
  for (const auto& name : b.nodes) {
    const plan::Node* n = run.current.find(name);
    if (!n) return input_error("node " + name + " is not in the lab");
    const auto& driver = run.env.drivers(*n);
    // Recorded before anything changes: the VNIs the node's kernel runs now.
    if (!run.touched.vteps.count(name)) {
      auto now = driver.running_vnis(*n, run.env.runner);
      if (!now && now.error().kind == ErrorKind::kInput) return now.error();  // builds none
      run.touched.vteps[name] = now ? *now : n->vnis;
      run.touched.vteps_left[name] = run.touched.vteps[name];
    }
    plan::Node before = *n, after = *n;
    before.vnis = run.touched.vteps_left[name];
    after.vnis = before.vnis;
    if (auto r = vxlan_change(run.current, *n, b, after.vnis); !r) return r;
    if (auto r = driver.change_interfaces(*n, driver.vtep_change_script(before, after),
                                          "node " + name, run.env.runner);
        !r)
      return r;
    run.touched.vteps_left[name] = std::move(after.vnis);
  }
  *detail = "VNI " + std::to_string(b.vni) + (b.remove ? " removed from " : " on ") +
            std::to_string(b.nodes.size()) + " node(s)" +
            (b.ports.empty() ? "" : " with " + std::to_string(b.ports.size()) + " port(s)");
  return {};
}

Result<void> describe_step(const VxlanStep& b, const state::State&, plan::Plan&,
                           proc::ProcessRunner&, std::ostream& out) {
  for (const auto& n : b.nodes) {
    out << "   " << n << ": VNI " << b.vni << " (" << devices(b.vni) << ")";
    if (b.remove) {
      out << " removed; its ports left unbridged\n";
      continue;
    }
    if (!b.ports.empty()) {
      out << ", ports";
      for (const auto& p : b.ports) out << " " << p;
      out << " into its bridge";
    }
    out << "\n";
  }
  return {};
}

// Not intent: the kernel knows numbers, and a wrong one is what the gate must catch. A meant
// move or new network is declared in intent.tenant-ports / tenant-networks.
void intend_step(const VxlanStep&, const std::string&, plan::Plan&) {}

}  // namespace twin::replay
