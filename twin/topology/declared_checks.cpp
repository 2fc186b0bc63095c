#include "twin/topology/declared_checks.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "twin/core/yaml_reader.hpp"

namespace fs = std::filesystem;

namespace twin::topology {

namespace {

using yaml::child;
using yaml::item;
using yaml::Value;

const std::vector<std::string> kKinds = {"reach", "route", "frr"};
const std::vector<std::string> kExpect = {"reachable", "unreachable"};
// FRR's names of route protocols (`show ip route json` "protocol").
const std::vector<std::string> kProtocols = {"connected", "static", "kernel", "ospf",  "ospf6",
                                             "bgp",       "isis",   "rip",    "ripng", "babel",
                                             "eigrp",     "nhrp",   "table",  "openfabric"};
// Command prefixes and the daemon whose vty answers them (twin talks to one daemon's vty, not
// through vtysh, so it must know which).
const std::vector<std::pair<std::string, std::string>> kCommandDaemons = {
    {"show ip ospf", "ospfd"},     {"show ospf", "ospfd"},       {"show ipv6 ospf6", "ospf6d"},
    {"show ospf6", "ospf6d"},      {"show bgp", "bgpd"},         {"show ip bgp", "bgpd"},
    {"show ipv6 bgp", "bgpd"},     {"show bfd", "bfdd"},         {"show isis", "isisd"},
    {"show ip route", "zebra"},    {"show ipv6 route", "zebra"}, {"show interface", "zebra"},
    {"show ip nht", "zebra"},      {"show ipv6 nht", "zebra"},   {"show nexthop-group", "zebra"},
    {"show zebra", "zebra"},       {"show ip static", "staticd"}};

// A plain YAML scalar as JSON would type it: null, true/false, an integer, a number, else a
// string. A quoted scalar is always a string.
nlohmann::json scalar_json(const YAML::Node& n) {
  const std::string& s = n.Scalar();
  if (n.Tag() == "!") return s;
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  long long i = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), i);
  if (ec == std::errc() && p == s.data() + s.size()) return i;
  char* end = nullptr;
  double d = std::strtod(s.c_str(), &end);
  if (end == s.c_str() + s.size() && s.find_first_of("0123456789") != std::string::npos &&
      s.find_first_not_of("0123456789.eE+-") == std::string::npos)
    return d;
  return s;
}

nlohmann::json to_json_value(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Map: {
      nlohmann::json o = nlohmann::json::object();
      for (const auto& kv : n) o[kv.first.Scalar()] = to_json_value(kv.second);
      return o;
    }
    case YAML::NodeType::Sequence: {
      nlohmann::json a = nlohmann::json::array();
      for (const auto& e : n) a.push_back(to_json_value(e));
      return a;
    }
    case YAML::NodeType::Scalar:
      return scalar_json(n);
    default:
      return nullptr;
  }
}

class ChecksReader {
 public:
  ChecksReader(yaml::Reader& r, const Topology& t) : r_(r), t_(t) {
    for (const auto& n : t.nodes) names_.push_back(n.name);
  }

  std::vector<Check> read(const Value& list) {
    std::vector<Check> out;
    if (list.node.IsNull() || (list.node.IsSequence() && list.node.size() == 0)) return out;
    if (!list.node.IsSequence()) {
      r_.error(list, "expected a list of checks",
               "e.g. checks: [{reach: {from: pc1, to: pc3}}]");
      return out;
    }
    std::map<std::string, Mark> names;
    std::vector<Value> afters;  // each kept check's `after:` value (an empty Value when none)
    for (size_t i = 0; i < list.node.size(); ++i) {
      Value v = item(list, i);
      size_t before = r_.problems();
      auto c = read_one(v);
      if (!c || r_.problems() != before) continue;
      if (auto it = names.find(c->name); it != names.end()) {
        Value nv = child(v, "name");
        r_.error(nv ? nv.mark() : v.mark(), v.field + ".name",
                 "a check named '" + c->name + "' is already given at line " +
                     std::to_string(it->second.line),
                 "check names are the subjects of the results; give this one its own `name:`");
        continue;
      }
      names[c->name] = c->mark;
      afters.push_back(child(v, "after"));
      out.push_back(std::move(*c));
    }
    check_order(out, afters);
    return out;
  }

  // Every `after:` names another check of the list, and no check waits for itself through
  // others (a cycle would never be evaluated): each problem at its `after:` value.
  void check_order(const std::vector<Check>& checks, const std::vector<Value>& afters) {
    std::map<std::string, size_t> index;
    std::vector<std::string> all;
    for (size_t i = 0; i < checks.size(); ++i) {
      index[checks[i].name] = i;
      all.push_back(checks[i].name);
    }
    std::vector<bool> known(checks.size(), true);
    for (size_t i = 0; i < checks.size(); ++i) {
      const std::string& a = checks[i].after;
      if (a.empty()) continue;
      if (a == checks[i].name) {
        r_.error(afters[i], "check '" + a + "' cannot wait for itself",
                 "name another check, or remove `after:`");
        known[i] = false;
      } else if (!index.count(a)) {
        std::vector<std::string> others;
        for (const auto& n : all)
          if (n != checks[i].name) others.push_back(n);
        r_.error(afters[i], "no check is named '" + a + "'",
                 did_you_mean(a, others,
                              others.empty() ? "there is no other check"
                                             : "checks are: " + join_some(others, 8)));
        known[i] = false;
      }
    }
    // Follow each chain; a chain that comes back to where it started is a cycle, reported once
    // at the `after:` of the cycle's first check in file order.
    std::vector<bool> reported(checks.size(), false);
    for (size_t i = 0; i < checks.size(); ++i) {
      if (reported[i] || !known[i] || checks[i].after.empty()) continue;
      std::vector<size_t> chain = {i};
      size_t at = i;
      while (known[at] && !checks[at].after.empty()) {
        at = index.at(checks[at].after);
        if (at == i) break;
        if (std::find(chain.begin(), chain.end(), at) != chain.end() ||
            chain.size() > checks.size()) {
          at = checks.size();  // a cycle not through i: reported from its own first check
          break;
        }
        chain.push_back(at);
      }
      if (at != i) continue;
      std::string path;
      for (size_t k : chain) {
        path += "'" + checks[k].name + "' -> ";
        reported[k] = true;
      }
      path += "'" + checks[i].name + "'";
      r_.error(afters[i], "checks wait for each other in a cycle: " + path,
               "remove one `after:` of the cycle");
    }
  }

 private:
  std::optional<Check> read_one(const Value& v) {
    if (!v.node.IsMap()) {
      r_.error(v, "expected a mapping with one of reach, route, frr",
               "e.g. - {reach: {from: pc1, to: pc3}}");
      return std::nullopt;
    }
    r_.check_keys(v, kCheckKeys);
    Check c;
    c.mark = v.mark();
    std::vector<Value> kinds;
    for (const auto& k : kKinds)
      if (Value kv = child(v, k)) kinds.push_back(kv);
    if (kinds.empty()) {
      r_.error(v.mark(), v.field, "missing the check: expected one of reach, route, frr",
               "e.g. - {route: {node: r1, prefix: 192.168.3.0/24}}");
      return std::nullopt;
    }
    if (kinds.size() > 1) {
      r_.error(kinds[1].key_mark(), kinds[1].field,
               "a check has one kind; '" + kinds[0].key_name() + "' is given already",
               "write each as a check of its own");
      return std::nullopt;
    }
    const Value& body = kinds[0];
    if (!body.node.IsMap()) {
      r_.error(body, "expected a mapping of the check's fields", example(body.key_name()));
      return std::nullopt;
    }
    if (body.key_name() == "reach") {
      c.kind = CheckKind::kReach;
      read_reach(body, c);
    } else if (body.key_name() == "route") {
      c.kind = CheckKind::kRoute;
      read_route(body, c);
    } else {
      c.kind = CheckKind::kFrr;
      read_frr(body, c);
    }
    if (Value w = child(v, "wait"))
      if (auto s = r_.integer(w, 0, kMaxCheckWaitS, "seconds")) c.wait_s = static_cast<int>(*s);
    if (Value a = child(v, "after")) {
      if (auto s = r_.string(a)) {
        if (s->empty())
          r_.error(a, "empty check name", "name the check this one waits for, or omit `after:`");
        else
          c.after = *s;
      }
    }
    if (Value n = child(v, "name")) {
      if (auto s = r_.string(n)) {
        if (s->empty())
          r_.error(n, "empty check name", "omit `name:` for a generated one");
        else
          c.name = *s;
      }
    }
    if (c.name.empty()) c.name = default_check_name(c);
    return c;
  }

  static std::string example(const std::string& kind) {
    if (kind == "reach") return "e.g. reach: {from: pc1, to: pc3}";
    if (kind == "route") return "e.g. route: {node: r1, prefix: 192.168.3.0/24, nexthops: 2}";
    return "e.g. frr: {node: r1, command: show ip ospf neighbor json, match: {...}}";
  }

  // A required field; reported missing at the mapping's place.
  std::optional<Value> required(const Value& body, const std::string& key,
                                const std::string& what) {
    Value f = child(body, key);
    if (!f) {
      r_.error(body.mark(), f.field, "missing; expected " + what, example(body.key_name()));
      return std::nullopt;
    }
    return f;
  }

  // A node of the lab; `frr_only` refuses hosts.
  std::optional<std::string> node(const Value& f, bool frr_only) {
    auto s = r_.string(f);
    if (!s) return std::nullopt;
    const Node* n = t_.find_node(*s);
    if (!n) {
      r_.error(f, "unknown node '" + *s + "'",
               did_you_mean(*s, names_, "nodes are: " + join_some(names_, 8)));
      return std::nullopt;
    }
    if (frr_only && n->kind != NodeKind::kFrr) {
      const bool bridge = n->kind == NodeKind::kBridge;
      r_.error(f,
               "node '" + *s + "' is a " + (bridge ? "bridge (a LAN segment)" : "host") +
                   "; this check reads FRR's output",
               bridge ? "name an frr node on the segment"
                      : "name an frr node, or check a host with `reach:`");
      return std::nullopt;
    }
    if (n->kind == NodeKind::kBridge) {
      r_.error(f, "node '" + *s + "' is a bridge (a LAN segment): it has no address to check from",
               "name a member of the segment");
      return std::nullopt;
    }
    return *s;
  }

  void read_reach(const Value& body, Check& c) {
    r_.check_keys(body, kReachKeys);
    if (auto f = required(body, "from", "the node to ping from"))
      if (auto n = node(*f, false)) c.node = *n;
    if (auto f = required(body, "to", "a node name or an address")) {
      if (auto s = r_.string(*f)) {
        if (const Node* to = t_.find_node(*s); to && to->kind == NodeKind::kBridge) {
          r_.error(*f, "node '" + *s + "' is a bridge (a LAN segment): it has no address to reach",
                   "name a member of the segment, or one of its addresses");
        } else if (to) {
          c.to = *s;
        } else if (auto p = IpPrefix::parse(*s, true); p && s->find('/') == std::string::npos) {
          c.to = p->address();
        } else if (p) {
          r_.error(*f, "'" + *s + "' has a prefix length; expected an address or a node name",
                   "write e.g. " + p->address());
        } else {
          r_.error(*f, "'" + *s + "' is neither a node of the lab nor an address",
                   did_you_mean(*s, names_, "write a node name or e.g. 10.0.255.1"));
        }
      }
    }
    if (Value e = child(body, "expect"))
      if (auto s = r_.choice(e, kExpect)) c.reachable = *s == "reachable";
  }

  void read_route(const Value& body, Check& c) {
    r_.check_keys(body, kRouteCheckKeys);
    if (auto f = required(body, "node", "the frr node whose routing table to read"))
      if (auto n = node(*f, true)) c.node = *n;
    if (auto f = required(body, "prefix", "a prefix, e.g. 192.168.3.0/24")) {
      if (auto s = r_.string(*f)) {
        auto p = IpPrefix::parse(*s, false);
        if (!p)
          r_.error(*f, "'" + *s + "' is not a prefix", "write e.g. 192.168.3.0/24 or fd00::/64");
        else if (p->network() != *p)
          r_.error(*f, "'" + *s + "' has host bits set",
                   "did you mean " + p->network().str() + "?");
        else
          c.prefix = p->str();
      }
    }
    if (Value n = child(body, "nexthops"))
      if (auto v = r_.integer(n, 1, 256, "next hops")) c.nexthops = static_cast<int>(*v);
    if (Value p = child(body, "protocol"))
      if (auto s = r_.choice(p, kProtocols)) c.protocol = *s;
  }

  void read_frr(const Value& body, Check& c) {
    r_.check_keys(body, kFrrCheckKeys);
    if (auto f = required(body, "node", "the frr node to ask"))
      if (auto n = node(*f, true)) c.node = *n;
    if (auto f = required(body, "command", "a `show ... json` command")) {
      if (auto s = r_.string(*f)) {
        std::string cmd = trim(*s);
        auto last = cmd.find_last_of(" \t");
        bool json = last != std::string::npos && cmd.substr(last + 1) == "json";
        if (cmd.rfind("show ", 0) != 0 || !json) {
          r_.error(*f, "only `show ... json` commands are allowed, got '" + *s + "'",
                   "a check reads FRR's JSON output; it never changes the node");
        } else if (cmd.find_first_of("|;\n") != std::string::npos) {
          r_.error(*f, "one command only, got '" + *s + "'", "");
        } else {
          c.command = cmd;
          c.daemon = daemon_for_show(cmd);
          if (c.daemon.empty()) {
            std::vector<std::string> known;
            for (const auto& [prefix, d] : kCommandDaemons) known.push_back(prefix + " ...");
            r_.error(*f, "cannot tell which FRR daemon answers '" + *s + "'",
                     "supported: " + join_names(known));
          }
        }
      }
    }
    if (auto f = required(body, "match", "the JSON the output must contain")) {
      if (!f->node.IsMap() && !f->node.IsSequence())
        r_.error(*f, "expected a mapping (or list) the command's JSON must contain",
                 "e.g. match: {neighbors: {10.0.255.2: [{nbrState: Full/-}]}}");
      else
        c.match = to_json_value(f->node).dump();
    }
  }

  static std::string trim(const std::string& s) {
    auto a = s.find_first_not_of(" \t");
    auto b = s.find_last_not_of(" \t");
    return a == std::string::npos ? "" : s.substr(a, b - a + 1);
  }

  yaml::Reader& r_;
  const Topology& t_;
  std::vector<std::string> names_;
};

}  // namespace

std::vector<Check> read_checks(yaml::Reader& r, const yaml::Value& list, const Topology& t) {
  ChecksReader cr(r, t);
  return cr.read(list);
}

std::string daemon_for_show(const std::string& command) {
  // Collapse runs of blanks so "show  ip ospf" matches too.
  std::string cmd;
  for (char ch : command) {
    bool blank = ch == ' ' || ch == '\t';
    if (blank && (cmd.empty() || cmd.back() == ' ')) continue;
    cmd += blank ? ' ' : ch;
  }
  for (const auto& [prefix, daemon] : kCommandDaemons)
    if (cmd.rfind(prefix, 0) == 0 && (cmd.size() == prefix.size() || cmd[prefix.size()] == ' '))
      return daemon;
  return "";
}

std::string default_check_name(const Check& c) {
  switch (c.kind) {
    case CheckKind::kReach:
      return std::string(c.reachable ? "reach " : "unreachable ") + c.node + "->" + c.to;
    case CheckKind::kRoute:
      return "route " + c.node + " " + c.prefix;
    case CheckKind::kFrr:
      return "frr " + c.node + " " + c.command;
  }
  return "check";
}

std::string companion_checks_path(const std::string& clab_path) {
  fs::path p(clab_path);
  std::string name = p.filename().string();
  for (const char* suffix : {".clab.yml", ".clab.yaml", ".yml", ".yaml"}) {
    std::string s = suffix;
    if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0) {
      name.resize(name.size() - s.size());
      break;
    }
  }
  return (p.parent_path() / (name + ".checks.yaml")).string();
}

bool load_checks_file(const std::string& path, Topology& t, Diagnostics& diags,
                      const InputPolicy& policy) {
  auto text =
      read_input_file(policy, path, "checks file", "give the YAML file holding `checks:`", diags);
  if (!text) return false;
  size_t before = diags.items().size();
  yaml::Reader r(path, diags, {.say_what_was_found = false});
  auto doc = r.document(*text, "expected a mapping holding `checks:`",
                        "e.g. checks: [{reach: {from: pc1, to: pc3}}]");
  if (!doc) return false;
  r.check_keys(*doc, {"checks"});
  Value list = child(*doc, "checks");
  if (!list) {
    r.error(doc->mark(), "checks", "missing; expected the list of checks",
            "e.g. checks: [{reach: {from: pc1, to: pc3}}]");
    return false;
  }
  auto checks = read_checks(r, list, t);
  if (diags.items().size() != before) return false;
  t.checks.insert(t.checks.end(), checks.begin(), checks.end());
  return true;
}

}  // namespace twin::topology
