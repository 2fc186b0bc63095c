#include <algorithm>
#include <cctype>
#include <filesystem>
#include <regex>

#include "twin/core/ip.hpp"
#include "twin/core/util.hpp"
#include "twin/replay/changeset_keys.hpp"
#include "twin/replay/changeset_loader.hpp"
#include "twin/topology/loader.hpp"

namespace fs = std::filesystem;

namespace twin::replay {

using topology::kMinIpv6Mtu;
using yaml::child;
using yaml::found;
using yaml::item;
using yaml::mark_of;

namespace {

std::string ipv6_reason(const plan::Interface& i) {
  if (i.fabric) return "BGP unnumbered over IPv6 link-local";
  for (const auto& a : i.addresses)
    if (auto p = IpPrefix::parse(a); p && p->family == 6) return "IPv6 address " + a;
  return "";
}

}  // namespace

std::optional<bool> ChangeSetLoader::as_state(const Value& v) {
  auto s = r_.choice(v, keys::kState);
  if (!s) return std::nullopt;
  return *s == "up";
}

// An address with prefix length, in canonical form ("10.1.9.1/24").
std::optional<IpPrefix> ChangeSetLoader::as_address(const Value& v) {
  auto s = r_.string(v);
  if (!s) return std::nullopt;
  auto p = IpPrefix::parse(*s, false);
  if (!p)
    r_.error(v, "'" + *s + "' is not an IPv4/IPv6 address with prefix length",
             "write e.g. 10.1.9.1/24 or 2001:db8::1/64");
  return p;
}

// The first line of a block's text: a block scalar (`add: |`) starts on the line after its
// indicator, which is where yaml-cpp's mark points; blank first lines are part of the text.
int ChangeSetLoader::text_line(const YAML::Node& n) const {
  auto m = n.Mark();
  if (m.is_null()) return 0;
  int line = m.line + 1;
  if (m.pos >= 0 && static_cast<size_t>(m.pos) < text_.size() &&
      (text_[m.pos] == '|' || text_[m.pos] == '>')) {
    const std::string& s = n.Scalar();
    int blank = 0;
    while (static_cast<size_t>(blank) < s.size() && s[blank] == '\n') ++blank;
    return line + 1 + blank;
  }
  return line;
}

// A path relative to the change file's folder, naming an existing regular file; absolute.
std::optional<std::string> ChangeSetLoader::existing_file(const Value& v, const std::string& path,
                                                          const std::string& what) {
  if (path.empty()) {
    r_.error(v, "empty path; expected the " + what, "");
    return std::nullopt;
  }
  fs::path p = fs::path(path).is_absolute() ? fs::path(path) : fs::path(dir_) / path;
  std::error_code ec;
  auto st = fs::status(p, ec);
  if (!fs::exists(st)) {
    r_.error(v, what + " '" + path + "' does not exist",
             "looked for " + p.lexically_normal().string() +
                 "; paths are relative to the change file's folder");
    return std::nullopt;
  }
  if (!fs::is_regular_file(st)) {
    r_.error(v, what + " '" + path + "' is not a regular file", "");
    return std::nullopt;
  }
  auto abs = fs::weakly_canonical(p, ec);
  return ec ? fs::absolute(p).lexically_normal().string() : abs.string();
}

Step ChangeSetLoader::parse_step(const Value& sv) {
  Step s;
  s.mark = sv.mark();
  if (!sv.node.IsMap()) {
    r_.error(
        sv,
        "expected a mapping with a name and one step kind (" + join_names(keys::kStepKinds) + ")",
        "e.g. {name: settle, wait: {until: converged}}");
    return s;
  }
  std::vector<Value> kinds;
  bool unknown_kind = false;  // an unknown field that is probably a misspelled kind
  std::set<std::string> seen;
  for (const auto& kv : sv.node) {
    std::string key = kv.first.Scalar();
    std::string field = sv.field + "." + key;
    if (has(keys::kStep, key)) {
      if (!seen.insert(key).second)
        r_.error(mark_of(kv.first), field, "field '" + key + "' given twice", "keep one of them");
      else if (key != "name")
        kinds.push_back(Value{true, kv.first, kv.second, field});
      continue;
    }
    std::string near = nearest_name(key, keys::kStep);
    if (near != "name") unknown_kind = true;
    if (!near.empty() && near != "name")
      r_.error(mark_of(kv.first), field, "unknown step kind '" + key + "'",
               "did you mean '" + near + "'?");
    else
      r_.error(
          mark_of(kv.first), field, "unknown field '" + key + "'",
          near.empty() ? "expected one of: " + join_names(keys::kStep) : "did you mean 'name'?");
  }

  if (auto nv = child(sv, "name"); !nv) {
    r_.error(sv.mark(), nv.field, "missing; expected the step's name",
             "add e.g. `name: raise mtu`; the report refers to steps by name");
  } else if (auto n = r_.string(nv)) {
    if (trim(*n).empty()) {
      r_.error(nv, "empty step name", "the report refers to steps by name");
    } else {
      s.name = *n;
      auto [it, fresh] = step_names_.emplace(*n, std::make_pair(sv.field, nv.mark()));
      if (!fresh)
        r_.error(nv,
                 "duplicate step name '" + *n + "'; " + it->second.first + " at line " +
                     std::to_string(it->second.second.line) + " has it too",
                 "step names must be unique: the report refers to steps by name");
    }
  }

  if (kinds.empty()) {
    if (!unknown_kind)
      r_.error(sv.mark(), sv.field,
               "missing step kind; expected one of: " + join_names(keys::kStepKinds),
               "e.g. `wait: {until: converged}`");
    return s;
  }
  for (size_t k = 1; k < kinds.size(); ++k)
    r_.error(kinds[k].key_mark(), kinds[k].field,
             "a step has exactly one kind, but this one has both '" + kinds[0].key_name() +
                 "' and '" + kinds[k].key_name() + "'",
             "split it into two steps");
  const Value& kv = kinds[0];
  const std::string kind = kv.key_name();
  if (!kv.node.IsMap()) {
    r_.error(kv, "expected a mapping of " + kind + " fields, " + found(kv.node), "");
  } else if (kind == "frr") {
    s.body = FrrStep{};
    parse_frr(kv, s.frr());
  } else if (kind == "interface") {
    s.body = InterfaceStep{};
    parse_interface(kv, s.interface());
  } else if (kind == "link") {
    s.body = LinkStep{};
    parse_link(kv, s.link());
  } else if (kind == "wait") {
    s.body = WaitStep{};
    parse_wait(kv, s.wait());
  } else if (kind == "check") {
    s.body = CheckStep{};
    parse_check(kv, s.check());
  } else {
    s.body = TopologyStep{};
    parse_topology(kv, s.topology());
  }
  return s;
}

void ChangeSetLoader::parse_frr(const Value& v, FrrStep& out) {
  r_.check_keys(v, keys::kFrr);
  const char* why = "frr steps configure FRR nodes only";
  const char* hint = "change a host with an interface step";
  auto nodes = r_.one_or_many(v, "node", "nodes", "FRR nodes to configure", "leaf1");
  for (const auto& it : nodes) {
    auto s = r_.string(it);
    if (!s || !node_ref(it, *s, {cur_}, why, hint)) continue;
    if (has(out.nodes, *s)) {
      r_.error(it, "node '" + *s + "' listed twice", "");
      continue;
    }
    out.nodes.push_back(*s);
  }

  std::vector<Value> ops;
  for (const auto& kv : v.node) {
    std::string k = kv.first.Scalar();
    if ((k == "add" || k == "remove" || k == "replace") &&
        std::none_of(ops.begin(), ops.end(), [&](const Value& o) { return o.key_name() == k; }))
      ops.push_back(Value{true, kv.first, kv.second, v.field + "." + k});
  }
  if (ops.empty()) {
    r_.error(v.mark(), v.field, "missing what to do; expected one of add, remove, replace",
             "add: | (lines to add), remove: | (lines to negate) or replace: <file> (the whole "
             "frr.conf)");
    return;
  }
  for (size_t k = 1; k < ops.size(); ++k)
    r_.error(ops[k].key_mark(), ops[k].field,
             "only one of add, remove, replace per step, but this one also has '" +
                 ops[0].key_name() + "'",
             "split it into two steps");
  const Value& op = ops[0];
  const std::string k = op.key_name();
  if (k == "replace") {
    auto p = r_.string(op);
    if (!p) return;
    if (auto abs = existing_file(op, *p, "config file")) {
      out.replace = *abs;
      if (nodes.size() > 1)
        r_.error(op,
                 "replace sets one node's whole configuration, but this step names " +
                     std::to_string(nodes.size()) + " nodes",
                 "use one step per node, each with its own file");
    }
    return;
  }
  std::optional<std::string> text;
  if (op.node.IsNull())
    text = "";
  else
    text = r_.string(op);
  if (!text) return;
  if (trim(*text).empty()) {
    r_.error(op, "empty configuration text; expected frr.conf lines",
             "write them as a block: `" + k + ": |` followed by indented lines");
    return;
  }
  if (k == "remove" && negate_config(*text).empty()) {
    r_.error(op, "nothing to remove: the text has only comments and blank lines", "");
    return;
  }
  (k == "add" ? out.add : out.remove) = *text;
  out.text_line = text_line(op.node);
}

void ChangeSetLoader::parse_interface(const Value& v, InterfaceStep& out) {
  r_.check_keys(v, keys::kInterface);
  std::vector<const plan::Interface*> ifaces;
  for (const auto& it :
       r_.one_or_many(v, "interface", "interfaces", "interfaces to change", "leaf1:swp1")) {
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

void ChangeSetLoader::parse_link(const Value& v, LinkStep& out) {
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

void ChangeSetLoader::parse_wait(const Value& v, WaitStep& out) {
  r_.check_keys(v, keys::kWait);
  bool until_ok = true;
  if (auto u = child(v, "until")) {
    auto s = r_.choice(u, keys::kUntil);
    if (s)
      out.until = *s;
    else
      until_ok = false;
  }
  if (auto t = child(v, "timeout"))
    if (auto d = r_.duration(t)) out.timeout = *d;
  auto dv = child(v, "duration");
  if (dv)
    if (auto d = r_.duration(dv)) out.duration = *d;
  if (!until_ok) return;
  if (out.until == "duration" && !dv)
    r_.error(v.mark(), dv.field, "missing; `until: duration` needs a duration",
             "e.g. duration: 2s");
  if (out.until == "converged" && dv)
    r_.error(dv.key_mark(), dv.field, "duration applies only to `until: duration`",
             "remove it, or set `until: duration`");
}

void ChangeSetLoader::parse_check(const Value& v, CheckStep& out) {
  r_.check_keys(v, keys::kCheck);
  if (auto tv = child(v, "tests"); !tv) {
    r_.error(v.mark(), tv.field,
             "missing; expected the tests to run: families (bgp) or single tests (bgp.0)",
             "e.g. tests: [bgp, routes]");
  } else if (r_.list(tv, "test families or tests", "tests: [bgp, mtu.0]")) {
    for (size_t i = 0; i < tv.node.size(); ++i) {
      const Value it = item(tv, i);
      if (auto s = r_.string(it); s && test_name(it, *s, false)) out.tests.push_back(*s);
    }
  }
  bool expect_ok = true;
  if (auto ev = child(v, "expect")) {
    if (auto s = r_.choice(ev, keys::kExpect))
      out.expect = *s;
    else
      expect_ok = false;
  }
  auto fv = child(v, "failing");
  if (expect_ok && out.expect == "fail") {
    if (!fv) {
      r_.error(v.mark(), fv.field, "missing; `expect: fail` needs the tests that must fail",
               "e.g. failing: [bgp.0]");
    } else if (r_.list(fv, "tests", "failing: [bgp.0]")) {
      for (size_t i = 0; i < fv.node.size(); ++i) {
        const Value it = item(fv, i);
        auto s = r_.string(it);
        if (!s || !test_name(it, *s, true)) continue;
        std::string fam = s->substr(0, s->find('.'));
        if (!has(out.tests, *s) && !has(out.tests, fam))
          r_.error(it, "test " + *s + " is not among the selected tests",
                   "add " + fam + " (or " + *s + ") to tests");
        out.failing.push_back(*s);
      }
    }
  } else if (expect_ok && fv) {
    r_.error(fv.key_mark(), fv.field, "failing applies only to `expect: fail`",
             "set `expect: fail`, or remove failing");
  }
  if (auto t = child(v, "timeout"))
    if (auto d = r_.duration(t)) out.timeout = *d;
}

void ChangeSetLoader::parse_topology(const Value& v, TopologyStep& out) {
  r_.check_keys(v, keys::kTopology);
  auto fv = child(v, "file");
  if (!fv) {
    r_.error(v.mark(), fv.field, "missing; expected the topology file the lab changes to",
             "e.g. file: clos-2x4-leaf5.yaml");
    return;
  }
  auto s = r_.string(fv);
  if (!s) return;
  auto abs = existing_file(fv, *s, "topology file");
  if (!abs) return;
  out.file = *abs;
  size_t before = d_.items().size();
  out.topo = topology::load_topology(*abs, d_);  // its diagnostics name its own file
  if (!out.topo) {
    size_t n = d_.items().size() - before;
    r_.error(fv,
             "topology file '" + *s + "' has " + std::to_string(n) + " problem" +
                 (n == 1 ? "" : "s") + ", reported with its own file name",
             "");
    return;
  }
  // A node that stays keeps its kind and image.
  bool ok = true;
  for (const auto& n : out.topo->nodes) {
    const plan::Node* old = cur_->find(n.name);
    if (!old) continue;
    const char* what = old->kind != n.kind ? "kind" : old->image != n.image ? "image" : nullptr;
    if (!what) continue;
    const bool kind = std::string(what) == "kind";
    const std::string now = kind ? to_string(n.kind) : n.image;
    const std::string was = kind ? to_string(old->kind) : old->image;
    d_.add({*abs, n.mark.line, n.mark.column, "nodes." + n.name + "." + what,
            "node '" + n.name + "' has " + what + " " + now + " here but " + was +
                " in the running lab",
            "a node that stays keeps its kind and image; give a new node a new name"});
    ok = false;
  }
  if (!ok) return;
  // Later steps (and the intent) may refer to what this topology adds.
  owned_.push_back(plan::make_plan(*out.topo, cur_->lab));
  cur_ = &owned_.back();
  all_plans_.push_back(cur_);
}

}  // namespace twin::replay
