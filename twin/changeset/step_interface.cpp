// The `interface` change step (kernel interface state: MTU, admin state, addresses): how the
// change-set loader reads it, how the gate applies it, what a dry run says of it, and what it means
// for the intended plan (steps.hpp).
#include <algorithm>
#include <sstream>

#include "twin/core/ip.hpp"
#include "twin/changeset/changeset_keys.hpp"
#include "twin/changeset/changeset_loader.hpp"
#include "twin/changeset/steps.hpp"

using namespace std::chrono_literals;

namespace twin::replay {

void ChangeSetLoader::parse_body(const Value& v, InterfaceStep& out) {
  r_.check_keys(v, keys::kInterface);
  std::vector<const plan::Interface*> ifaces;  // nullptr: a VTEP's device
  bool vtep_devices = false;
  for (const auto& it :
       r_.one_or_many(v, "interface", "interfaces", "interfaces to change", "leaf1:swp1")) {
    // A VTEP's VXLAN device or bridge (twin builds them from the tenants): an orchestrator
    // sets their MTU and state like any interface's; the EVPN family judges the overlay.
    if (auto s = it.node.IsScalar() ? std::optional<std::string>(it.node.Scalar()) : std::nullopt) {
      auto colon = s->find(':');
      const plan::Node* n = colon == std::string::npos ? nullptr : cur_->find(s->substr(0, colon));
      const std::string dev = colon == std::string::npos ? "" : s->substr(colon + 1);
      if (n && std::any_of(n->vnis.begin(), n->vnis.end(),
                           [&](const plan::Vni& x) { return x.vxlan == dev || x.bridge == dev; })) {
        out.interfaces.push_back({n->name, dev, it.mark()});
        ifaces.push_back(nullptr);
        vtep_devices = true;
        continue;
      }
    }
    auto e = interface_ref(it);
    if (!e) continue;
    if (std::any_of(out.interfaces.begin(), out.interfaces.end(),
                    [&](const InterfaceRef& r) { return r.str() == e->ref.str(); })) {
      r_.error(it, "interface " + e->ref.str() + " listed twice", "");
      continue;
    }
    out.interfaces.push_back(e->ref);
    ifaces.push_back(e->iface);
  }
  auto mv = child(v, "mtu"), sv = child(v, "state");
  auto av = child(v, "add-addresses"), rv = child(v, "remove-addresses");
  if (mv) out.mtu = r_.mtu(mv);
  if (sv) out.up = as_state(sv);
  std::vector<IpPrefix> added;
  for (const Value* lv : {&av, &rv}) {
    if (!*lv || !r_.list(*lv, "addresses with prefix length", lv->key_name() + ": [10.1.9.1/24]"))
      continue;
    for (size_t i = 0; i < lv->node.size(); ++i)
      if (auto p = as_address(item(*lv, i))) {
        (lv == &av ? out.add_addresses : out.remove_addresses).push_back(p->str());
        if (lv == &av) added.push_back(*p);
      }
  }
  if (vtep_devices && (av || rv))
    r_.error(av ? av : rv,
             "addresses on a VTEP's VXLAN device or bridge: twin builds them without addresses",
             "set the address on a port, or in the tenant's gateway");
  if (!mv && !sv && !av && !rv) {
    r_.error(v.mark(), v.field,
             "nothing to change; expected at least one of mtu, state, add-addresses, "
             "remove-addresses",
             "");
    return;
  }
  if (av && out.interfaces.size() > 1 && !out.add_addresses.empty())
    r_.error(av,
             "the same addresses on " + std::to_string(out.interfaces.size()) +
                 " interfaces; an address belongs to one interface",
             "use one step per interface");

  // IPv6 needs an MTU of 1280 or more: fabric interfaces (BGP unnumbered) and interfaces
  // with an IPv6 address, as they are after this step.
  if (!out.mtu && (mv || added.empty())) return;  // no MTU set, or a bad one (reported)
  std::vector<std::string> bad;
  for (size_t i = 0; i < ifaces.size(); ++i) {
    if (!ifaces[i]) continue;  // a VTEP's device: the overlay-MTU test judges it
    const plan::Interface& pi = *ifaces[i];
    int mtu = out.mtu ? *out.mtu : pi.mtu;
    if (mtu >= kMinIpv6Mtu) continue;
    std::string why = pi.fabric ? "BGP unnumbered over IPv6 link-local" : "";
    for (const auto& a : pi.addresses)
      if (auto p = IpPrefix::parse(a);
          why.empty() && p && p->family == 6 && !has(out.remove_addresses, p->str()))
        why = "IPv6 address " + a;
    for (const auto& p : added)
      if (why.empty() && p.family == 6) why = "IPv6 address " + p.str();
    if (!why.empty())
      bad.push_back(out.interfaces[i].str() + " (" + why +
                    (out.mtu ? "" : "; MTU " + std::to_string(mtu)) + ")");
  }
  if (!bad.empty())
    r_.error(out.mtu ? mv : av,
             (out.mtu ? "MTU " + std::to_string(*out.mtu) : std::string("the MTU")) +
                 " is below 1280 on interfaces that need IPv6: " + join_some(bad),
             "Linux removes IPv6 from an interface whose MTU is under 1280 (RFC 8200 §5)");
}

Result<void> apply_step(const InterfaceStep& b, StepRun& run, std::string* detail) {
  for (const auto& ref : b.interfaces) {
    const plan::Node* n = run.current.find(ref.node);
    if (!n) return input_error("node " + ref.node + " is not in the lab");
    run.touched.interfaces.insert(ref.str());
    std::string script;
    if (b.mtu) script += "link set dev " + ref.interface + " mtu " + std::to_string(*b.mtu) + "\n";
    if (b.up) script += "link set dev " + ref.interface + (*b.up ? " up" : " down") + "\n";
    if (n->kind == topology::NodeKind::kFrr &&
        (!b.add_addresses.empty() || !b.remove_addresses.empty())) {
      // zebra owns an FRR node's addresses: configure them there (rolled back with it).
      run.touched.frr_nodes.insert(n->name);
      run.touched.frr_addressed.insert(ref.str());
      std::string lines = "interface " + ref.interface + "\n";
      for (const auto& a : b.add_addresses)
        lines += std::string(a.find(':') == std::string::npos ? " ip" : " ipv6") + " address " + a +
                 "\n";
      for (const auto& a : b.remove_addresses)
        lines += std::string(a.find(':') == std::string::npos ? " no ip" : " no ipv6") +
                 " address " + a + "\n";
      lines += "exit\n";
      if (auto r = run.env.drivers(*n).apply_config(*n, lines, 0, run.cs.file, run.env.runner); !r)
        return r;
    } else {
      for (const auto& a : b.add_addresses) {
        script += "address add " + a + " dev " + ref.interface + "\n";
        run.touched.host_added.emplace_back(n->name, ref.interface, a);
      }
      for (const auto& a : b.remove_addresses) {
        script += "address del " + a + " dev " + ref.interface + "\n";
        run.touched.host_removed.emplace_back(n->name, ref.interface, a);
      }
    }
    if (!script.empty())
      if (auto r =
              run.env.drivers(*n).change_interfaces(*n, script, "node " + n->name, run.env.runner);
          !r)
        return r;
  }
  *detail = std::to_string(b.interfaces.size()) + " interface(s) changed";
  return {};
}

Result<void> describe_step(const InterfaceStep& b, const state::State&, plan::Plan&,
                           proc::ProcessRunner&, std::ostream& out) {
  for (const auto& r : b.interfaces) {
    out << "   " << r.str() << ":";
    if (b.mtu) out << " mtu " << *b.mtu;
    if (b.up) out << (*b.up ? " up" : " down");
    for (const auto& a : b.add_addresses) out << " +" << a;
    for (const auto& a : b.remove_addresses) out << " -" << a;
    out << "\n";
  }
  return {};
}

// The new MTU of each end is intended, and so are the addresses; admin state is not (a link
// taken down is judged by what it breaks, unless intent.links-down declares it).
void intend_step(const InterfaceStep& b, const std::string&, plan::Plan& p) {
  for (const auto& ref : b.interfaces) {
    if (b.mtu) set_intended_mtu(p, ref, *b.mtu);
    auto* i = plan::find_interface(p, ref.node, ref.interface);
    if (!i) continue;
    for (const auto& a : b.add_addresses)
      if (std::find(i->addresses.begin(), i->addresses.end(), a) == i->addresses.end())
        i->addresses.push_back(a);
    for (const auto& a : b.remove_addresses)
      i->addresses.erase(std::remove(i->addresses.begin(), i->addresses.end(), a),
                         i->addresses.end());
  }
}

std::string plan_routes_script(const plan::Node& node, int family) {
  std::string s;
  for (const auto& rt : node.routes) {
    bool v6 = rt.via.find(':') != std::string::npos;
    if ((family == 4 && v6) || (family == 6 && !v6)) continue;
    // Batch lines take no -4/-6: spell the default route per family.
    std::string dst = rt.destination == "default" ? (v6 ? "::/0" : "0.0.0.0/0") : rt.destination;
    s += "route replace " + dst + " via " + rt.via + "\n";
  }
  return s;
}

}  // namespace twin::replay
