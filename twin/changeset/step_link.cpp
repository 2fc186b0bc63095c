// The `link` change step (both ends of topology links: MTU, admin state): how the change-set loader
// reads it, how the gate applies it, what a dry run says of it, and what it means for the intended
// plan (steps.hpp).
#include <algorithm>
#include <map>
#include <sstream>

#include "twin/core/ip.hpp"
#include "twin/changeset/changeset_keys.hpp"
#include "twin/changeset/changeset_loader.hpp"
#include "twin/changeset/steps.hpp"

using namespace std::chrono_literals;

namespace twin::replay {

namespace {

// Why an interface needs IPv6 (and so an MTU of at least 1280), or "".
std::string ipv6_reason(const plan::Interface& i) {
  if (i.fabric) return "BGP unnumbered over IPv6 link-local";
  for (const auto& a : i.addresses)
    if (auto p = IpPrefix::parse(a); p && p->family == 6) return "IPv6 address " + a;
  return "";
}

}  // namespace

void ChangeSetLoader::parse_body(const Value& v, LinkStep& out) {
  r_.check_keys(v, keys::kLink);
  auto o = child(v, "link"), m = child(v, "links");
  const std::string example = "leaf1:swp1";
  if (o && m) {
    r_.error(o.key_mark(), o.field, "give link or links, not both", "");
  } else if (!o && !m) {
    r_.error(v.mark(), m.field,
             "missing; expected the links to change (`links: [leaf1:swp1]`, `links: all` or "
             "`link: leaf1:swp1`)",
             "");
  } else if (o) {
    if (auto r = link_ref(o, {cur_})) out.links.push_back(*r);
  } else if (m.node.IsScalar()) {
    const std::string& s = m.node.Scalar();
    if (s == keys::kAllLinks) {
      out.all = true;
      Mark mk = m.mark();
      for (const auto& l : cur_->links)
        out.links.push_back(
            LinkRef{{l.a_node, l.a_interface, mk}, {l.b_node, l.b_interface, mk}, mk});
    } else {
      std::string lower = s;
      std::transform(lower.begin(), lower.end(), lower.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      r_.error(
          m, "expected `all` or a list of links, got '" + s + "'",
          s.find(':') != std::string::npos
              ? "for one link write `link: " + s + "` or `links: [" + s + "]`"
              : did_you_mean(lower, {keys::kAllLinks}, "e.g. links: [leaf1:swp1] or links: all"));
    }
  } else if (r_.list(m, "links", "links: [leaf1:swp1] or links: all")) {
    for (size_t i = 0; i < m.node.size(); ++i) {
      const Value it = item(m, i);
      auto r = link_ref(it, {cur_});
      if (!r) continue;
      if (std::any_of(out.links.begin(), out.links.end(),
                      [&](const LinkRef& x) { return x.str() == r->str(); })) {
        r_.error(it, "link " + r->str() + " listed twice", "");
        continue;
      }
      out.links.push_back(*r);
    }
  }
  auto mv = child(v, "mtu"), sv = child(v, "state");
  if (mv) out.mtu = r_.mtu(mv);
  if (sv) out.up = as_state(sv);
  if (!mv && !sv) {
    r_.error(v.mark(), v.field, "nothing to change; expected at least one of mtu, state", "");
    return;
  }
  if (!out.mtu || *out.mtu >= kMinIpv6Mtu) return;
  std::vector<std::string> bad;
  for (const auto& l : out.links) {
    std::string why;
    for (const InterfaceRef* e : {&l.a, &l.b})
      if (const plan::Interface* pi = plan_interface(*e); pi && why.empty()) why = ipv6_reason(*pi);
    if (!why.empty()) bad.push_back(l.str() + " (" + why + ")");
  }
  if (!bad.empty())
    r_.error(mv,
             "MTU " + std::to_string(*out.mtu) +
                 " is below 1280 on links that need IPv6: " + join_some(bad),
             "Linux removes IPv6 from an interface whose MTU is under 1280 (RFC 8200 §5)");
}

Result<void> apply_step(const LinkStep& b, StepRun& run, std::string* detail) {
  std::vector<InterfaceRef> ends;
  if (b.all) {
    for (const auto& l : run.current.links) {
      ends.push_back({l.a_node, l.a_interface, {}});
      ends.push_back({l.b_node, l.b_interface, {}});
    }
  } else {
    for (const auto& l : b.links) {
      ends.push_back(l.a);
      ends.push_back(l.b);
    }
  }
  std::map<std::string, std::string> scripts;  // node -> ip batch
  for (const auto& e : ends) {
    run.touched.interfaces.insert(e.str());
    auto& sc = scripts[e.node];
    if (b.mtu) sc += "link set dev " + e.interface + " mtu " + std::to_string(*b.mtu) + "\n";
    if (b.up) sc += "link set dev " + e.interface + (*b.up ? " up" : " down") + "\n";
  }
  for (const auto& [node, script] : scripts) {
    const plan::Node* n = run.current.find(node);
    if (!n) return input_error("node " + node + " is not in the lab");
    if (auto r = run.env.drivers(*n).change_interfaces(*n, script, "node " + node, run.env.runner);
        !r)
      return r;
  }
  *detail = std::to_string(ends.size() / 2) + " link(s) changed";
  return {};
}

Result<void> describe_step(const LinkStep& b, const state::State&, plan::Plan& current,
                           proc::ProcessRunner&, std::ostream& out) {
  std::vector<std::string> names;
  if (b.all)
    for (const auto& l : current.links)
      names.push_back(l.a_node + ":" + l.a_interface + "--" + l.b_node + ":" + l.b_interface);
  else
    for (const auto& l : b.links) names.push_back(l.str());
  for (const auto& n : names) {
    out << "   " << n << ":";
    if (b.mtu) out << " mtu " << *b.mtu;
    if (b.up) out << (*b.up ? " up" : " down");
    out << "\n";
  }
  return {};
}

// The new MTU of both ends is intended; admin state is not (see the interface step).
void intend_step(const LinkStep& b, const std::string&, plan::Plan& p) {
  if (!b.mtu) return;
  if (b.all) {
    for (auto& node : p.nodes)
      for (auto& i : node.interfaces) i.mtu = *b.mtu;
    return;
  }
  for (const auto& l : b.links) {
    set_intended_mtu(p, l.a, *b.mtu);
    set_intended_mtu(p, l.b, *b.mtu);
  }
}

}  // namespace twin::replay
