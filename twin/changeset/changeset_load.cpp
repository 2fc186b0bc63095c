#include <filesystem>
#include <regex>
#include <set>
#include <tuple>

#include "twin/changeset/changeset_keys.hpp"
#include "twin/changeset/changeset_loader.hpp"
#include "twin/topology/tenants.hpp"
#include "twin/topology/traffic_spec.hpp"

namespace fs = std::filesystem;

namespace twin::replay {

using yaml::child;
using yaml::found;
using yaml::item;
using yaml::mark_of;

const char* to_string(StepKind k) { return keys::kStepKinds.at(static_cast<size_t>(k)).c_str(); }

ChangeSetLoader::ChangeSetLoader(std::string text, std::string file, std::string dir,
                                 const plan::Plan& plan, Diagnostics& d, InputPolicy policy,
                                 const std::vector<std::string>* families)
    : text_(std::move(text)),
      file_(std::move(file)),
      dir_(std::move(dir)),
      d_(d),
      r_(file_, d),
      policy_(std::move(policy)),
      families_(families),
      cur_(&plan) {
  all_plans_.push_back(&plan);
}

std::optional<ChangeSet> ChangeSetLoader::load() {
  auto doc = r_.document(text_, "expected a mapping with version, name and steps",
                         "see scenarios/schema/change.schema.json for the format");
  if (!doc) return std::nullopt;
  const Value root = *doc;
  size_t before = d_.items().size();
  ChangeSet cs;
  cs.file = file_;
  cs.dir = dir_;
  r_.check_keys(root, keys::kTop);

  if (auto v = child(root, "version"); !v) {
    r_.error(root.mark(), "version", "missing; expected `version: 1`",
             "add `version: 1` at the top");
  } else if (auto n = r_.integer(v); n && *n != 1) {
    r_.error(v, "unsupported version " + std::to_string(*n) + "; expected 1", "");
  }
  if (auto v = child(root, "name"); !v) {
    r_.error(root.mark(), "name", "missing; expected the change's name",
             "add e.g. `name: raise-fabric-mtu`");
  } else if (auto s = r_.string(v)) {
    static const std::regex re(keys::kNamePattern);
    if (!std::regex_match(*s, re))
      r_.error(v,
               "invalid change name '" + *s +
                   "'; expected A-Z a-z 0-9 _ . - starting with a letter or digit",
               "e.g. raise-fabric-mtu");
    cs.name = *s;
  }
  if (auto v = child(root, "description"))
    if (auto s = r_.string(v)) cs.description = *s;

  // Steps before intent: intent may name nodes and links that a topology step adds.
  if (auto v = child(root, "steps"); !v) {
    r_.error(root.mark(), "steps", "missing; expected a list of steps",
             "add e.g. `steps: [{name: settle, wait: {until: converged}}]`");
  } else if (!v.node.IsSequence()) {
    r_.error(v, "expected a list of steps, " + found(v.node), "");
  } else if (v.node.size() == 0) {
    r_.error(v, "no steps; expected at least one", "");
  } else if (v.node.size() > kMaxSteps) {
    // Not parsed: each step may load a topology or run FRR's parser over a file.
    r_.error(v,
             std::to_string(v.node.size()) + " steps; a change set has at most " +
                 std::to_string(kMaxSteps),
             "split the change into several change sets, or give a node's lines as one "
             "`frr: {add: |}` block");
  } else {
    for (size_t i = 0; i < v.node.size(); ++i) cs.steps.push_back(parse_step(item(v, i)));
  }
  if (auto v = child(root, "intent")) parse_intent(v, cs.intent);

  if (d_.items().size() != before) {
    partial_ = std::move(cs);
    return std::nullopt;
  }
  return cs;
}

std::vector<std::string> ChangeSetLoader::node_names(const Plans& scope) {
  std::vector<std::string> names;
  for (const auto* p : scope)
    for (const auto& n : p->nodes)
      if (!has(names, n.name)) names.push_back(n.name);
  return names;
}

// The node `name` in the first plan of `scope` that has it. `frr_only`, when set, is why
// the node must be an FRR node ("frr steps configure FRR nodes only").
std::vector<ChangeSetLoader::StepNode> ChangeSetLoader::step_nodes(const Value& v,
                                                                   const std::string& what,
                                                                   const std::string& example,
                                                                   const char* frr_only,
                                                                   const char* frr_hint) {
  std::vector<StepNode> out;
  for (const auto& it : r_.one_or_many(v, "node", "nodes", what, example)) {
    auto s = r_.string(it);
    if (!s) continue;
    const plan::Node* n = node_ref(it, *s, {cur_}, frr_only, frr_hint);
    if (!n) continue;
    if (std::any_of(out.begin(), out.end(), [&](const StepNode& x) { return x.node == n; })) {
      r_.error(it, "node '" + *s + "' listed twice", "");
      continue;
    }
    out.push_back({it, n});
  }
  return out;
}

const plan::Node* ChangeSetLoader::node_ref(const Value& v, const std::string& name,
                                            const Plans& scope, const char* frr_only,
                                            const char* frr_hint) {
  for (const auto* p : scope)
    if (const plan::Node* n = p->find(name)) {
      if (frr_only && n->kind != topology::NodeKind::kFrr) {
        r_.error(v, "node '" + name + "' is kind " + to_string(n->kind) + "; " + frr_only, frr_hint);
        return nullptr;
      }
      return n;
    }
  auto names = node_names(scope);
  r_.error(v, "unknown node '" + name + "'",
           did_you_mean(name, names, "nodes in the lab: " + join_names(names)));
  return nullptr;
}

// "node:interface", an interface of a node of the lab.
std::optional<End> ChangeSetLoader::end_ref(const Value& v, const std::string& text,
                                            const Plans& scope, const std::string& example) {
  auto colon = text.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size() ||
      text.find(':', colon + 1) != std::string::npos) {
    r_.error(v, "expected node:interface, got '" + text + "'", "e.g. " + example);
    return std::nullopt;
  }
  End e;
  e.ref = {text.substr(0, colon), text.substr(colon + 1), v.mark()};
  const plan::Node* n = nullptr;
  for (const auto* p : scope)
    if ((n = p->find(e.ref.node))) {
      e.plan = p;
      break;
    }
  if (!n) {
    node_ref(v, e.ref.node, scope);  // reports it, with the nearest name
    return std::nullopt;
  }
  std::vector<std::string> names;
  for (const auto& i : n->interfaces) {
    names.push_back(i.name);
    if (i.name == e.ref.interface) e.iface = &i;
  }
  if (!e.iface) {
    r_.error(
        v, "node '" + e.ref.node + "' has no interface '" + e.ref.interface + "'",
        did_you_mean(e.ref.interface, names,
                     names.empty() ? "it has no links" : "its interfaces: " + join_names(names)));
    return std::nullopt;
  }
  return e;
}

std::string ChangeSetLoader::not_a_server_port(const End& e) {
  const plan::Node* peer = e.plan->find(e.iface->peer_node);
  if (peer && peer->kind == topology::NodeKind::kHost) return "";
  return "port " + e.ref.str() + " faces " +
         (peer ? std::string(to_string(peer->kind)) + " node " + peer->name : "nothing") +
         "; a tenant port faces a server (kind host)";
}

std::optional<End> ChangeSetLoader::interface_ref(const Value& v) {
  auto s = r_.string(v);
  if (!s) return std::nullopt;
  return end_ref(v, *s, {cur_}, "leaf1:swp1");
}

// "node:if" or "nodeA:ifA--nodeB:ifB"; both ends filled, in the plan's order of the link.
std::optional<LinkRef> ChangeSetLoader::link_ref(const Value& v, const Plans& scope) {
  auto s = r_.string(v);
  if (!s) return std::nullopt;
  const std::string example = "leaf1:swp1 or leaf1:swp1--spine1:swp1";
  Mark m = v.mark();
  std::optional<End> a;
  if (auto dash = s->find("--"); dash == std::string::npos) {
    a = end_ref(v, *s, scope, example);
    if (!a) return std::nullopt;
  } else {
    a = end_ref(v, s->substr(0, dash), scope, example);
    auto b = end_ref(v, s->substr(dash + 2), scope, example);
    if (!a || !b) return std::nullopt;
    if (a->iface->peer_node != b->ref.node || a->iface->peer_interface != b->ref.interface) {
      r_.error(v, a->ref.str() + " and " + b->ref.str() + " are not the two ends of one link",
               a->iface->peer_node.empty() ? a->ref.str() + " is not linked"
                                           : a->ref.str() + " is linked to " + a->iface->peer_node +
                                                 ":" + a->iface->peer_interface);
      return std::nullopt;
    }
  }
  for (const auto& l : a->plan->links) {
    bool fwd = l.a_node == a->ref.node && l.a_interface == a->ref.interface;
    bool rev = l.b_node == a->ref.node && l.b_interface == a->ref.interface;
    if (fwd || rev) return LinkRef{{l.a_node, l.a_interface, m}, {l.b_node, l.b_interface, m}, m};
  }
  if (a->iface->peer_node.empty()) {
    r_.error(v, a->ref.str() + " is not linked", "");
    return std::nullopt;
  }
  return LinkRef{a->ref, {a->iface->peer_node, a->iface->peer_interface, m}, m};
}

const plan::Interface* ChangeSetLoader::plan_interface(const InterfaceRef& r) const {
  if (const plan::Node* n = cur_->find(r.node))
    for (const auto& i : n->interfaces)
      if (i.name == r.interface) return &i;
  return nullptr;
}

// A test family ("bgp") or a single test ("bgp.0"); `single` wants the latter.
bool ChangeSetLoader::test_name(const Value& v, const std::string& s, bool single) {
  static const std::regex number(keys::kTestNumberPattern);
  auto dot = s.find('.');
  std::string fam = s.substr(0, dot);
  static const std::regex spelling(keys::kFamilyPattern);
  if (!families_ && !std::regex_match(fam, spelling)) {
    r_.error(v, "'" + fam + "' is not a test family's name",
             "families are lower-case words such as bgp or mtu");
    return false;
  }
  const std::vector<std::string> families = families_ ? *families_ : std::vector<std::string>{fam};
  if (!has(families, fam)) {
    r_.error(v, "unknown test family '" + fam + "'",
             did_you_mean(fam, families, "expected one of: " + join_names(families)));
    return false;
  }
  if (dot == std::string::npos) {
    if (single) {
      r_.error(v, "expected a single test like " + fam + ".0, got the family '" + fam + "'",
               "failing names single tests: family.N");
      return false;
    }
    return true;
  }
  std::string n = s.substr(dot + 1);
  if (!std::regex_match(n, number)) {
    r_.error(v, "expected a test number after '" + fam + ".', got '" + n + "'",
             "tests are named family.N with N >= 0, e.g. " + fam + ".0");
    return false;
  }
  return true;
}

void ChangeSetLoader::parse_intent(const Value& in, Intent& out) {
  if (!in.node.IsMap()) {
    r_.error(in, "expected a mapping of " + join_names(keys::kIntent) + ", " + found(in.node), "");
    return;
  }
  r_.check_keys(in, keys::kIntent);
  if (auto v = child(in, "drain"); v && r_.list(v, "node names", "drain: [spine1]"))
    for (size_t i = 0; i < v.node.size(); ++i) {
      const Value it = item(v, i);
      if (auto s = r_.string(it); s && node_ref(it, *s, all_plans_)) out.drain.push_back(*s);
    }
  if (auto v = child(in, "links-down"); v && r_.list(v, "links", "links-down: [leaf1:swp1]"))
    for (size_t i = 0; i < v.node.size(); ++i)
      if (auto r = link_ref(item(v, i), all_plans_)) out.links_down.push_back(*r);
  for (const char* k : {"add-prefixes", "remove-prefixes"}) {
    auto v = child(in, k);
    if (!v || !r_.list(v, "{node, prefix} mappings",
                       std::string(k) + ": [{node: leaf1, prefix: 10.1.9.0/24}]"))
      continue;
    auto& dst = std::string(k) == "add-prefixes" ? out.add_prefixes : out.remove_prefixes;
    for (size_t i = 0; i < v.node.size(); ++i)
      if (auto p = prefix_ref(item(v, i))) dst.push_back(*p);
  }
  if (auto v = child(in, "paths");
      v && r_.list(v, "{node, prefix(es), ecmp, next-hops} mappings",
                   "paths: [{node: r1, prefix: 10.6.255.4/32, next-hops: [r6]}]"))
    for (size_t i = 0; i < v.node.size(); ++i)
      if (auto p = path_ref(item(v, i))) out.paths.push_back(*p);
  parse_tenant_intent(in, out);
  if (auto v = child(in, "traffic")) {
    out.traffic = topology::read_traffic_spec(r_, v);
    // `true`: the pattern the lab itself runs, when its topology has one.
    if (out.traffic && v.node.IsScalar() && all_plans_.front()->traffic)
      out.traffic = all_plans_.front()->traffic;
  }
}

std::optional<PathRef> ChangeSetLoader::path_ref(const Value& it) {
  if (!it.node.IsMap()) {
    r_.error(it, "expected a mapping with node, prefix and ecmp or next-hops, " + found(it.node),
             "e.g. {node: r1, prefix: 10.6.255.4/32, next-hops: [r6]}");
    return std::nullopt;
  }
  r_.check_keys(it, keys::kPath);
  PathRef r;
  r.mark = it.mark();
  bool ok = true;
  const plan::Node* node = nullptr;
  if (auto n = child(it, "node"); !n) {
    r_.error(it.mark(), n.field, "missing; expected the FRR node whose paths move", "");
    ok = false;
  } else if (auto s = r_.string(n);
             s && (node = node_ref(n, *s, all_plans_, "only FRR nodes route", ""))) {
    r.node = *s;
  } else {
    ok = false;
  }
  auto one = child(it, "prefix"), many = child(it, "prefixes");
  if (one && many) {
    r_.error(many, "give prefix or prefixes, not both", "");
    ok = false;
  } else if (!one && !many) {
    r_.error(it.mark(), it.field + ".prefix",
             "missing; expected the prefix (or prefixes) whose paths move", "");
    ok = false;
  }
  std::vector<Value> given;
  if (one) given.push_back(one);
  if (many && r_.list(many, "prefixes", "prefixes: [10.6.255.4/32, 10.6.4.0/24]"))
    for (size_t i = 0; i < many.node.size(); ++i) given.push_back(item(many, i));
  for (const auto& p : given) {
    auto s = r_.string(p);
    if (!s) {
      ok = false;
      continue;
    }
    auto ip = IpPrefix::parse(*s == "default" ? "0.0.0.0/0" : *s, false);
    if (!ip) {
      r_.error(p, "'" + *s + "' is not an IPv4/IPv6 prefix with length",
               "write e.g. 10.6.255.4/32 or 0.0.0.0/0");
      ok = false;
    } else if (ip->network() != *ip) {
      r_.error(p, "prefix '" + *s + "' has host bits set",
               "did you mean '" + ip->network().str() + "'?");
      ok = false;
    } else {
      r.prefixes.push_back(ip->str());
    }
  }
  if (auto e = child(it, "ecmp")) {
    auto w = r_.integer(e, 1, 256, "next hops");
    if (w)
      r.ecmp = static_cast<int>(*w);
    else
      ok = false;
  }
  if (auto h = child(it, "next-hops");
      h && r_.list(h, "neighbor nodes or interfaces", "next-hops: [r6]")) {
    std::vector<std::string> names;
    if (node)
      for (const auto& i : node->interfaces) {
        names.push_back(i.name);
        names.push_back(i.peer_node);
      }
    for (size_t i = 0; i < h.node.size(); ++i) {
      const Value hv = item(h, i);
      auto s = r_.string(hv);
      if (!s) {
        ok = false;
        continue;
      }
      if (node && std::find(names.begin(), names.end(), *s) == names.end()) {
        r_.error(hv, "'" + *s + "' is neither a neighbor nor an interface of " + node->name,
                 did_you_mean(*s, names, "its neighbors and interfaces: " + join_some(names, 8)));
        ok = false;
        continue;
      }
      r.via.push_back(*s);
    }
  }
  if (!ok) return std::nullopt;
  return r;
}

void ChangeSetLoader::parse_tenant_intent(const Value& in, Intent& out) {
  static const std::regex net_re(keys::kTenantNetworkPattern);
  // The networks the lab has (as of the last step), and whose a VNI is.
  std::map<std::string, uint32_t> networks;
  std::map<uint32_t, std::string> owner;
  for (const auto& t : cur_->tenants) {
    if (t.l3vni) owner[t.l3vni] = t.name + " (its L3 VNI)";
    for (const auto& n : t.networks) {
      networks[t.name + "/" + n.name] = n.vni;
      owner[n.vni] = t.name + "/" + n.name;
    }
  }
  auto entries = [&](const char* key, const char* example) {
    std::vector<Value> es;
    Value v = child(in, key);
    if (!v) return es;
    if (!v.node.IsMap()) {
      r_.error(v, "expected a mapping, " + found(v.node), std::string("e.g. ") + example);
      return es;
    }
    for (const auto& kv : v.node)
      es.push_back(Value{true, kv.first, kv.second, v.field + "." + kv.first.Scalar()});
    return es;
  };
  auto split = [](const std::string& s) {
    auto slash = s.find('/');
    return std::pair{s.substr(0, slash), s.substr(slash + 1)};
  };
  std::set<std::string> given, refused;  // names seen in tenant-networks; those refused
  for (const auto& e : entries("tenant-networks", "tenant-networks: {green/web: 30100}")) {
    std::string name = e.key.Scalar();
    if (!given.insert(name).second) {
      r_.error(e.key_mark(), e.field, "network " + name + " given twice", "");
      continue;
    }
    refused.insert(name);  // until it passes every check below
    if (!std::regex_match(name, net_re)) {
      r_.error(e.key_mark(), e.field, "'" + name + "' is not tenant/network",
               "e.g. green/web: a tenant's name (1-15 characters, a letter first) and its "
               "network's");
      continue;
    }
    if (auto it = networks.find(name); it != networks.end()) {
      r_.error(e.key_mark(), e.field,
               "network " + name + " exists already (VNI " + std::to_string(it->second) + ")",
               "list only networks the change creates; move ports with tenant-ports");
      continue;
    }
    auto vni = r_.integer(e, 1, topology::kMaxVni, "");
    if (!vni) continue;
    if (auto it = owner.find(static_cast<uint32_t>(*vni)); it != owner.end()) {
      r_.error(e, "VNI " + std::to_string(*vni) + " is " + it->second + "'s",
               "a VNI is one network's: two networks on one VNI are one L2 segment");
      continue;
    }
    auto [tenant, network] = split(name);
    out.tenant_networks.push_back({tenant, network, static_cast<uint32_t>(*vni), e.key_mark()});
    refused.erase(name);
    networks[name] = static_cast<uint32_t>(*vni);
    owner[static_cast<uint32_t>(*vni)] = name;
  }
  std::set<std::string> ports, used;  // ports seen; networks a port goes to
  for (const auto& e :
       entries("tenant-ports", "tenant-ports: {leaf1:swp3: red/db, leaf2:swp4: none}")) {
    if (!ports.insert(e.key.Scalar()).second) {
      r_.error(e.key_mark(), e.field, "port " + e.key.Scalar() + " given twice",
               "a port is meant to be in one network");
      continue;
    }
    Value at_key{true, {}, e.key, e.field};
    auto end = end_ref(at_key, e.key.Scalar(), all_plans_, "leaf1:swp3");
    if (!end) continue;
    if (auto why = not_a_server_port(*end); !why.empty()) {
      r_.error(e.key_mark(), e.field, why, "");
      continue;
    }
    auto target = r_.string(e);
    if (!target) continue;
    TenantPortRef ref{end->ref, "", "", e.key_mark()};
    if (*target != "none") {
      if (refused.count(*target)) continue;  // its tenant-networks entry was reported
      used.insert(*target);
      if (!networks.count(*target)) {
        std::vector<std::string> names;
        for (const auto& [n, vni] : networks) names.push_back(n);
        r_.error(e, "no tenant network '" + *target + "'",
                 did_you_mean(*target, names,
                              "expected tenant/network of the lab or of tenant-networks, or "
                              "none (the port leaves its network)"));
        continue;
      }
      std::tie(ref.tenant, ref.network) = split(*target);
    }
    out.tenant_ports.push_back(std::move(ref));
  }
  // A network lives on the VTEPs of its ports: one without any exists nowhere.
  for (const auto& n : out.tenant_networks)
    if (!used.count(n.tenant + "/" + n.network))
      r_.error(n.mark, "intent.tenant-networks." + n.tenant + "/" + n.network,
               "network " + n.tenant + "/" + n.network + " has no port",
               "put its servers' ports in it under tenant-ports, e.g. {leaf3:swp4: " + n.tenant +
                   "/" + n.network + "}");
}

std::optional<PrefixRef> ChangeSetLoader::prefix_ref(const Value& it) {
  if (!it.node.IsMap()) {
    r_.error(it, "expected a mapping with node and prefix, " + found(it.node),
             "e.g. {node: leaf1, prefix: 10.1.9.0/24}");
    return std::nullopt;
  }
  r_.check_keys(it, keys::kPrefix);
  PrefixRef r;
  r.mark = it.mark();
  bool ok = true;
  if (auto n = child(it, "node"); !n) {
    r_.error(it.mark(), n.field, "missing; expected the FRR node that originates the prefix", "");
    ok = false;
  } else if (auto s = r_.string(n);
             s && node_ref(n, *s, all_plans_, "only FRR nodes originate prefixes", "")) {
    r.node = *s;
  } else {
    ok = false;
  }
  if (auto p = child(it, "prefix"); !p) {
    r_.error(it.mark(), p.field, "missing; expected a prefix such as 10.1.9.0/24", "");
    ok = false;
  } else if (auto s = r_.string(p)) {
    auto ip = IpPrefix::parse(*s, false);
    if (!ip) {
      r_.error(p, "'" + *s + "' is not an IPv4/IPv6 prefix with length",
               "write e.g. 10.1.9.0/24 or 2001:db8:9::/64");
      ok = false;
    } else if (ip->network() != *ip) {
      r_.error(p, "prefix '" + *s + "' has host bits set",
               "did you mean '" + ip->network().str() + "'?");
      ok = false;
    } else {
      r.prefix = ip->str();
    }
  } else {
    ok = false;
  }
  if (!ok) return std::nullopt;
  return r;
}

std::optional<ChangeSet> load_change_set_text(const std::string& text, const std::string& file,
                                              const std::string& dir, const plan::Plan& plan,
                                              Diagnostics& diags, ChangeSet* partial,
                                              const InputPolicy* policy,
                                              const std::vector<std::string>* families) {
  std::string abs_dir = dir.empty() ? fs::current_path().string() : fs::absolute(dir).string();
  ChangeSetLoader l(text, file, abs_dir, plan, diags,
                    policy ? *policy : InputPolicy::for_input(abs_dir), families);
  auto cs = l.load();
  if (!cs && partial && l.partial_) *partial = std::move(*l.partial_);
  return cs;
}

std::optional<ChangeSet> load_change_set(const std::string& path, const plan::Plan& plan,
                                         Diagnostics& diags, ChangeSet* partial,
                                         const InputPolicy* policy,
                                         const std::vector<std::string>* families) {
  InputPolicy own = policy ? *policy : InputPolicy::for_input(path);
  auto text = read_input_file(own, path, "change file", "give the change set's YAML file", diags);
  if (!text) return std::nullopt;
  // Diagnostics name the file as the user wrote it; the change set keeps the absolute path.
  fs::path abs = fs::absolute(path);
  auto cs = load_change_set_text(*text, path, abs.parent_path().string(), plan, diags, partial,
                                 &own, families);
  if (cs) cs->file = abs.string();
  return cs;
}

}  // namespace twin::replay
