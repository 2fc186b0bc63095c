#include "twin/replay/changeset.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <utility>

#include "twin/core/ip.hpp"
#include "twin/replay/changeset_keys.hpp"
#include "twin/topology/loader.hpp"
#include "twin/topology/yaml_mark.hpp"
#include "validators/registry.hpp"

namespace fs = std::filesystem;

namespace twin::replay {

using topology::kMaxMtu;
using topology::kMinIpv6Mtu;
using topology::kMinMtu;

const char* to_string(StepKind k) {
  switch (k) {
    case StepKind::kFrr:
      return "frr";
    case StepKind::kInterface:
      return "interface";
    case StepKind::kLink:
      return "link";
    case StepKind::kWait:
      return "wait";
    case StepKind::kCheck:
      return "check";
    case StepKind::kTopology:
      return "topology";
  }
  return "?";
}

namespace {

using Plans = std::vector<const plan::Plan*>;
using topology::join_names;
using topology::mark_of;

// At most `max` items, then "and N more".
std::string join_some(const std::vector<std::string>& v, size_t max = 4) {
  if (v.size() <= max) return join_names(v);
  std::vector<std::string> head(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(max));
  return join_names(head) + " and " + std::to_string(v.size() - max) + " more";
}

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// "did you mean 'x'?" for a near candidate, `otherwise` when none is close.
std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates,
                         const std::string& otherwise) {
  std::string near = nearest_name(word, candidates);
  return near.empty() ? otherwise : "did you mean '" + near + "'?";
}

std::string trim(const std::string& s) {
  auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

// What a value is, for "expected X, <got>".
std::string got(const YAML::Node& n) {
  if (n.IsScalar()) return "got '" + n.Scalar() + "'";
  if (n.IsNull()) return "but the value is empty";
  if (n.IsSequence()) return "got a list";
  return "got a mapping";
}

std::string ipv6_reason(const plan::Interface& i) {
  if (i.fabric) return "BGP unnumbered over IPv6 link-local";
  for (const auto& a : i.addresses)
    if (auto p = IpPrefix::parse(a); p && p->family == 6) return "IPv6 address " + a;
  return "";
}

// A value in the change file: its node, the key it is under (an empty value's own place is the
// next token, so problems with it point at the key), and its field path
// ("steps[2].interface.mtu"). Built once and never assigned: assigning a YAML::Node that refers
// into a document rewrites the document.
struct Val {
  bool present = false;
  YAML::Node key;  // null for list items and the root
  YAML::Node node;
  std::string field;

  explicit operator bool() const { return present; }
  [[nodiscard]] Mark mark() const {
    if (node.IsNull() && !key.IsNull()) return mark_of(key);
    return mark_of(node);
  }
  [[nodiscard]] Mark key_mark() const { return key.IsNull() ? mark() : mark_of(key); }
  [[nodiscard]] std::string key_name() const { return key.IsNull() ? "" : key.Scalar(); }
};

// `map`'s field `k` (first occurrence; a repeated key is reported by check_keys).
Val child(const Val& map, const std::string& k) {
  std::string field = map.field.empty() ? k : map.field + "." + k;
  if (map.node.IsMap())
    for (const auto& kv : map.node)
      if (kv.first.IsScalar() && kv.first.Scalar() == k)
        return Val{true, kv.first, kv.second, field};
  return Val{false, YAML::Node(), YAML::Node(), field};
}

Val item(const Val& seq, size_t i) {
  return Val{true, YAML::Node(), seq.node[i], seq.field + "[" + std::to_string(i) + "]"};
}

// One end of a link named in the change file, resolved in a plan.
struct End {
  InterfaceRef ref;
  const plan::Plan* plan = nullptr;
  const plan::Interface* iface = nullptr;
};

class Loader {
 public:
  Loader(std::string text, std::string file, std::string dir, const plan::Plan& plan,
         Diagnostics& d)
      : text_(std::move(text)), file_(std::move(file)), dir_(std::move(dir)), d_(d), cur_(&plan) {
    all_plans_.push_back(&plan);
  }

  std::optional<ChangeSet> load() {
    auto parsed = topology::parse_yaml(text_, file_, d_);
    if (!parsed) return std::nullopt;
    YAML::Node doc = *parsed;
    const Val root{true, YAML::Node(), doc, ""};
    if (!doc.IsMap()) {
      error(root, "expected a mapping with version, name and steps",
            "see scenarios/schema/change.schema.json for the format");
      return std::nullopt;
    }
    size_t before = d_.items().size();
    ChangeSet cs;
    cs.file = file_;
    cs.dir = dir_;
    check_keys(root, keys::kTop);

    if (auto v = child(root, "version"); !v) {
      error(root.mark(), "version", "missing; expected `version: 1`",
            "add `version: 1` at the top");
    } else if (auto n = as_int(v); n && *n != 1) {
      error(v, "unsupported version " + std::to_string(*n) + "; expected 1", "");
    }
    if (auto v = child(root, "name"); !v) {
      error(root.mark(), "name", "missing; expected the change's name",
            "add e.g. `name: raise-fabric-mtu`");
    } else if (auto s = as_string(v)) {
      static const std::regex re(keys::kNamePattern);
      if (!std::regex_match(*s, re))
        error(v,
              "invalid change name '" + *s +
                  "'; expected A-Z a-z 0-9 _ . - starting with a letter or digit",
              "e.g. raise-fabric-mtu");
      cs.name = *s;
    }
    if (auto v = child(root, "description"))
      if (auto s = as_string(v)) cs.description = *s;

    // Steps before intent: intent may name nodes and links that a topology step adds.
    if (auto v = child(root, "steps"); !v) {
      error(root.mark(), "steps", "missing; expected a list of steps",
            "add e.g. `steps: [{name: settle, wait: {until: converged}}]`");
    } else if (!v.node.IsSequence()) {
      error(v, "expected a list of steps, " + got(v.node), "");
    } else if (v.node.size() == 0) {
      error(v, "no steps; expected at least one", "");
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
  // What was parsed when there were problems (load() returned nullopt after parsing steps).
  std::optional<ChangeSet> partial_;

 private:
  // ---- diagnostics and plain values

  void error(Mark m, const std::string& field, const std::string& msg, const std::string& hint) {
    d_.add({file_, m.line, m.column, field, msg, hint});
  }
  void error(const Val& v, const std::string& msg, const std::string& hint) {
    error(v.mark(), v.field, msg, hint);
  }

  void check_keys(const Val& map, const std::vector<std::string>& allowed) {
    std::set<std::string> seen;
    for (const auto& kv : map.node) {
      std::string key = kv.first.Scalar();
      std::string field = map.field.empty() ? key : map.field + "." + key;
      if (!has(allowed, key)) {
        error(mark_of(kv.first), field, "unknown field '" + key + "'",
              did_you_mean(key, allowed, "expected one of: " + join_names(allowed)));
      } else if (!seen.insert(key).second) {
        error(mark_of(kv.first), field, "field '" + key + "' given twice", "keep one of them");
      }
    }
  }

  std::optional<std::string> as_string(const Val& v) {
    if (!v.node.IsScalar()) {
      error(v, "expected a string, " + got(v.node), "");
      return std::nullopt;
    }
    return v.node.Scalar();
  }

  std::optional<long long> as_int(const Val& v) {
    if (v.node.IsScalar()) {
      const std::string& s = v.node.Scalar();
      char* end = nullptr;
      errno = 0;
      long long n = std::strtoll(s.c_str(), &end, 10);
      if (!s.empty() && end && *end == '\0' && errno == 0) return n;
    }
    error(v, "expected an integer, " + got(v.node), "");
    return std::nullopt;
  }

  std::optional<int> as_mtu(const Val& v) {
    auto n = as_int(v);
    if (!n) return std::nullopt;
    if (*n < kMinMtu || *n > kMaxMtu) {
      error(v,
            "MTU " + std::to_string(*n) + " is outside " + std::to_string(kMinMtu) + "-" +
                std::to_string(kMaxMtu) + " bytes",
            "MTU excludes the Ethernet header; data-center fabrics commonly use 9216");
      return std::nullopt;
    }
    return static_cast<int>(*n);
  }

  // A string among `choices`.
  std::optional<std::string> as_choice(const Val& v, const std::vector<std::string>& choices) {
    auto s = as_string(v);
    if (!s) return std::nullopt;
    if (!has(choices, *s)) {
      error(v, "unknown value '" + *s + "'",
            did_you_mean(*s, choices, "expected one of: " + join_names(choices)));
      return std::nullopt;
    }
    return s;
  }

  std::optional<bool> as_state(const Val& v) {
    auto s = as_choice(v, keys::kState);
    if (!s) return std::nullopt;
    return *s == "up";
  }

  std::optional<std::chrono::milliseconds> as_duration(const Val& v) {
    auto s = as_string(v);
    if (!s) return std::nullopt;
    static const std::regex re(keys::kDurationPattern);
    static const std::regex bare("[0-9]+(\\.[0-9]+)?");
    if (!std::regex_match(*s, re)) {
      error(v, "expected a duration like 500ms, 2s, 1.5s or 1m, got '" + *s + "'",
            std::regex_match(*s, bare) ? "add a unit: " + *s + "s (units: ms, s, m)"
                                       : "a number followed by ms, s or m");
      return std::nullopt;
    }
    // Digits only (checked above): whole[.frac]unit.
    size_t unit_at = s->find_first_not_of("0123456789.");
    std::string number = s->substr(0, unit_at), unit = s->substr(unit_at);
    long long factor = unit == "ms" ? 1 : unit == "s" ? 1000 : 60000;
    auto dot = number.find('.');
    long long whole = std::stoll(number.substr(0, dot));
    long long frac = 0, scale = 1;
    if (dot != std::string::npos) {
      frac = std::stoll(number.substr(dot + 1));
      for (size_t i = dot + 1; i < number.size(); ++i) scale *= 10;
    }
    if (frac * factor % scale != 0) {
      error(v, "duration '" + *s + "' is not a whole number of milliseconds", "");
      return std::nullopt;
    }
    long long ms = whole * factor + frac * factor / scale;
    if (ms <= 0) {
      error(v, "duration '" + *s + "' is zero; expected a positive duration", "");
      return std::nullopt;
    }
    if (ms > keys::kMaxDurationMs) {
      error(v, "duration '" + *s + "' is longer than 24h", "");
      return std::nullopt;
    }
    return std::chrono::milliseconds(ms);
  }

  // True for a non-empty list; reports anything else.
  bool as_list(const Val& v, const std::string& what, const std::string& example) {
    if (!v.node.IsSequence()) {
      error(v, "expected a list of " + what + ", " + got(v.node), "e.g. " + example);
      return false;
    }
    if (v.node.size() == 0) {
      error(v, "empty list; expected at least one of " + what, "e.g. " + example);
      return false;
    }
    return true;
  }

  // An address with prefix length, in canonical form ("10.1.9.1/24").
  std::optional<IpPrefix> as_address(const Val& v) {
    auto s = as_string(v);
    if (!s) return std::nullopt;
    auto p = IpPrefix::parse(*s, false);
    if (!p)
      error(v, "'" + *s + "' is not an IPv4/IPv6 address with prefix length",
            "write e.g. 10.1.9.1/24 or 2001:db8::1/64");
    return p;
  }

  // The first line of a block's text: a block scalar (`add: |`) starts on the line after its
  // indicator, which is where yaml-cpp's mark points; blank first lines are part of the text.
  int text_line(const YAML::Node& n) const {
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
  std::optional<std::string> existing_file(const Val& v, const std::string& path,
                                           const std::string& what) {
    if (path.empty()) {
      error(v, "empty path; expected the " + what, "");
      return std::nullopt;
    }
    fs::path p = fs::path(path).is_absolute() ? fs::path(path) : fs::path(dir_) / path;
    std::error_code ec;
    auto st = fs::status(p, ec);
    if (!fs::exists(st)) {
      error(v, what + " '" + path + "' does not exist",
            "looked for " + p.lexically_normal().string() +
                "; paths are relative to the change file's folder");
      return std::nullopt;
    }
    if (!fs::is_regular_file(st)) {
      error(v, what + " '" + path + "' is not a regular file", "");
      return std::nullopt;
    }
    auto abs = fs::weakly_canonical(p, ec);
    return ec ? fs::absolute(p).lexically_normal().string() : abs.string();
  }

  // ---- references into the lab

  static std::vector<std::string> node_names(const Plans& scope) {
    std::vector<std::string> names;
    for (const auto* p : scope)
      for (const auto& n : p->nodes)
        if (!has(names, n.name)) names.push_back(n.name);
    return names;
  }

  // The node `name` in the first plan of `scope` that has it. `frr_only`, when set, is why
  // the node must be an FRR node ("frr steps configure FRR nodes only").
  const plan::Node* node_ref(const Val& v, const std::string& name, const Plans& scope,
                             const char* frr_only = nullptr, const char* frr_hint = "") {
    for (const auto* p : scope)
      if (const plan::Node* n = p->find(name)) {
        if (frr_only && n->kind != "frr") {
          error(v, "node '" + name + "' is kind " + n->kind + "; " + frr_only, frr_hint);
          return nullptr;
        }
        return n;
      }
    auto names = node_names(scope);
    error(v, "unknown node '" + name + "'",
          did_you_mean(name, names, "nodes in the lab: " + join_names(names)));
    return nullptr;
  }

  // "node:interface", an interface of a node of the lab.
  std::optional<End> end_ref(const Val& v, const std::string& text, const Plans& scope,
                             const std::string& example) {
    auto colon = text.find(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == text.size() ||
        text.find(':', colon + 1) != std::string::npos) {
      error(v, "expected node:interface, got '" + text + "'", "e.g. " + example);
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
      error(
          v, "node '" + e.ref.node + "' has no interface '" + e.ref.interface + "'",
          did_you_mean(e.ref.interface, names,
                       names.empty() ? "it has no links" : "its interfaces: " + join_names(names)));
      return std::nullopt;
    }
    return e;
  }

  std::optional<End> interface_ref(const Val& v) {
    auto s = as_string(v);
    if (!s) return std::nullopt;
    return end_ref(v, *s, {cur_}, "leaf1:swp1");
  }

  // "node:if" or "nodeA:ifA--nodeB:ifB"; both ends filled, in the plan's order of the link.
  std::optional<LinkRef> link_ref(const Val& v, const Plans& scope) {
    auto s = as_string(v);
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
        error(v, a->ref.str() + " and " + b->ref.str() + " are not the two ends of one link",
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
      error(v, a->ref.str() + " is not linked", "");
      return std::nullopt;
    }
    return LinkRef{a->ref, {a->iface->peer_node, a->iface->peer_interface, m}, m};
  }

  const plan::Interface* plan_interface(const InterfaceRef& r) const {
    if (const plan::Node* n = cur_->find(r.node))
      for (const auto& i : n->interfaces)
        if (i.name == r.interface) return &i;
    return nullptr;
  }

  // A test family ("bgp") or a single test ("bgp.0"); `single` wants the latter.
  bool test_name(const Val& v, const std::string& s, bool single) {
    static const std::regex number(keys::kTestNumberPattern);
    auto dot = s.find('.');
    std::string fam = s.substr(0, dot);
    auto families = validators::family_names();
    if (!has(families, fam)) {
      error(v, "unknown test family '" + fam + "'",
            did_you_mean(fam, families, "expected one of: " + join_names(families)));
      return false;
    }
    if (dot == std::string::npos) {
      if (single) {
        error(v, "expected a single test like " + fam + ".0, got the family '" + fam + "'",
              "failing names single tests: family.N");
        return false;
      }
      return true;
    }
    std::string n = s.substr(dot + 1);
    if (!std::regex_match(n, number)) {
      error(v, "expected a test number after '" + fam + ".', got '" + n + "'",
            "tests are named family.N with N >= 0, e.g. " + fam + ".0");
      return false;
    }
    return true;
  }

  // ---- sections

  void parse_intent(const Val& in, Intent& out) {
    if (!in.node.IsMap()) {
      error(in, "expected a mapping of " + join_names(keys::kIntent) + ", " + got(in.node), "");
      return;
    }
    check_keys(in, keys::kIntent);
    if (auto v = child(in, "drain"); v && as_list(v, "node names", "drain: [spine1]"))
      for (size_t i = 0; i < v.node.size(); ++i) {
        const Val it = item(v, i);
        if (auto s = as_string(it); s && node_ref(it, *s, all_plans_)) out.drain.push_back(*s);
      }
    if (auto v = child(in, "links-down"); v && as_list(v, "links", "links-down: [leaf1:swp1]"))
      for (size_t i = 0; i < v.node.size(); ++i)
        if (auto r = link_ref(item(v, i), all_plans_)) out.links_down.push_back(*r);
    for (const char* k : {"add-prefixes", "remove-prefixes"}) {
      auto v = child(in, k);
      if (!v || !as_list(v, "{node, prefix} mappings",
                         std::string(k) + ": [{node: leaf1, prefix: 10.1.9.0/24}]"))
        continue;
      auto& dst = std::string(k) == "add-prefixes" ? out.add_prefixes : out.remove_prefixes;
      for (size_t i = 0; i < v.node.size(); ++i)
        if (auto p = prefix_ref(item(v, i))) dst.push_back(*p);
    }
  }

  std::optional<PrefixRef> prefix_ref(const Val& it) {
    if (!it.node.IsMap()) {
      error(it, "expected a mapping with node and prefix, " + got(it.node),
            "e.g. {node: leaf1, prefix: 10.1.9.0/24}");
      return std::nullopt;
    }
    check_keys(it, keys::kPrefix);
    PrefixRef r;
    r.mark = it.mark();
    bool ok = true;
    if (auto n = child(it, "node"); !n) {
      error(it.mark(), n.field, "missing; expected the FRR node that originates the prefix", "");
      ok = false;
    } else if (auto s = as_string(n);
               s && node_ref(n, *s, all_plans_, "only FRR nodes originate prefixes", "")) {
      r.node = *s;
    } else {
      ok = false;
    }
    if (auto p = child(it, "prefix"); !p) {
      error(it.mark(), p.field, "missing; expected a prefix such as 10.1.9.0/24", "");
      ok = false;
    } else if (auto s = as_string(p)) {
      auto ip = IpPrefix::parse(*s, false);
      if (!ip) {
        error(p, "'" + *s + "' is not an IPv4/IPv6 prefix with length",
              "write e.g. 10.1.9.0/24 or 2001:db8:9::/64");
        ok = false;
      } else if (ip->network() != *ip) {
        error(p, "prefix '" + *s + "' has host bits set",
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

  Step parse_step(const Val& sv) {
    Step s;
    s.mark = sv.mark();
    if (!sv.node.IsMap()) {
      error(
          sv,
          "expected a mapping with a name and one step kind (" + join_names(keys::kStepKinds) + ")",
          "e.g. {name: settle, wait: {until: converged}}");
      return s;
    }
    std::vector<Val> kinds;
    bool unknown_kind = false;  // an unknown field that is probably a misspelled kind
    std::set<std::string> seen;
    for (const auto& kv : sv.node) {
      std::string key = kv.first.Scalar();
      std::string field = sv.field + "." + key;
      if (has(keys::kStep, key)) {
        if (!seen.insert(key).second)
          error(mark_of(kv.first), field, "field '" + key + "' given twice", "keep one of them");
        else if (key != "name")
          kinds.push_back(Val{true, kv.first, kv.second, field});
        continue;
      }
      std::string near = nearest_name(key, keys::kStep);
      if (near != "name") unknown_kind = true;
      if (!near.empty() && near != "name")
        error(mark_of(kv.first), field, "unknown step kind '" + key + "'",
              "did you mean '" + near + "'?");
      else
        error(
            mark_of(kv.first), field, "unknown field '" + key + "'",
            near.empty() ? "expected one of: " + join_names(keys::kStep) : "did you mean 'name'?");
    }

    if (auto nv = child(sv, "name"); !nv) {
      error(sv.mark(), nv.field, "missing; expected the step's name",
            "add e.g. `name: raise mtu`; the report refers to steps by name");
    } else if (auto n = as_string(nv)) {
      if (trim(*n).empty()) {
        error(nv, "empty step name", "the report refers to steps by name");
      } else {
        s.name = *n;
        auto [it, fresh] = step_names_.emplace(*n, std::make_pair(sv.field, nv.mark()));
        if (!fresh)
          error(nv,
                "duplicate step name '" + *n + "'; " + it->second.first + " at line " +
                    std::to_string(it->second.second.line) + " has it too",
                "step names must be unique: the report refers to steps by name");
      }
    }

    if (kinds.empty()) {
      if (!unknown_kind)
        error(sv.mark(), sv.field,
              "missing step kind; expected one of: " + join_names(keys::kStepKinds),
              "e.g. `wait: {until: converged}`");
      return s;
    }
    for (size_t k = 1; k < kinds.size(); ++k)
      error(kinds[k].key_mark(), kinds[k].field,
            "a step has exactly one kind, but this one has both '" + kinds[0].key_name() +
                "' and '" + kinds[k].key_name() + "'",
            "split it into two steps");
    const Val& kv = kinds[0];
    const std::string kind = kv.key_name();
    if (!kv.node.IsMap()) {
      error(kv, "expected a mapping of " + kind + " fields, " + got(kv.node), "");
    } else if (kind == "frr") {
      s.kind = StepKind::kFrr;
      parse_frr(kv, s.frr);
    } else if (kind == "interface") {
      s.kind = StepKind::kInterface;
      parse_interface(kv, s.interface);
    } else if (kind == "link") {
      s.kind = StepKind::kLink;
      parse_link(kv, s.link);
    } else if (kind == "wait") {
      s.kind = StepKind::kWait;
      parse_wait(kv, s.wait);
    } else if (kind == "check") {
      s.kind = StepKind::kCheck;
      parse_check(kv, s.check);
    } else {
      s.kind = StepKind::kTopology;
      parse_topology(kv, s.topology);
    }
    return s;
  }

  // `one` (a scalar) or `many` (a list), exactly one of them; null when neither is usable.
  // Returns the values to check, one per item.
  std::vector<Val> one_or_many(const Val& v, const std::string& one, const std::string& many,
                               const std::string& what, const std::string& example) {
    std::vector<Val> out;
    auto o = child(v, one), m = child(v, many);
    if (o && m) {
      error(o.key_mark(), o.field, "give " + one + " or " + many + ", not both", "");
    } else if (!o && !m) {
      error(v.mark(), m.field,
            "missing; expected the " + what + " (`" + many + ": [" + example + "]` or `" + one +
                ": " + example + "`)",
            "");
    } else if (o) {
      out.push_back(o);
    } else if (as_list(m, what, many + ": [" + example + "]")) {
      for (size_t i = 0; i < m.node.size(); ++i) out.push_back(item(m, i));
    }
    return out;
  }

  void parse_frr(const Val& v, FrrStep& out) {
    check_keys(v, keys::kFrr);
    const char* why = "frr steps configure FRR nodes only";
    const char* hint = "change a host with an interface step";
    auto nodes = one_or_many(v, "node", "nodes", "FRR nodes to configure", "leaf1");
    for (const auto& it : nodes) {
      auto s = as_string(it);
      if (!s || !node_ref(it, *s, {cur_}, why, hint)) continue;
      if (has(out.nodes, *s)) {
        error(it, "node '" + *s + "' listed twice", "");
        continue;
      }
      out.nodes.push_back(*s);
    }

    std::vector<Val> ops;
    for (const auto& kv : v.node) {
      std::string k = kv.first.Scalar();
      if ((k == "add" || k == "remove" || k == "replace") &&
          std::none_of(ops.begin(), ops.end(), [&](const Val& o) { return o.key_name() == k; }))
        ops.push_back(Val{true, kv.first, kv.second, v.field + "." + k});
    }
    if (ops.empty()) {
      error(v.mark(), v.field, "missing what to do; expected one of add, remove, replace",
            "add: | (lines to add), remove: | (lines to negate) or replace: <file> (the whole "
            "frr.conf)");
      return;
    }
    for (size_t k = 1; k < ops.size(); ++k)
      error(ops[k].key_mark(), ops[k].field,
            "only one of add, remove, replace per step, but this one also has '" +
                ops[0].key_name() + "'",
            "split it into two steps");
    const Val& op = ops[0];
    const std::string k = op.key_name();
    if (k == "replace") {
      auto p = as_string(op);
      if (!p) return;
      if (auto abs = existing_file(op, *p, "config file")) {
        out.replace = *abs;
        if (nodes.size() > 1)
          error(op,
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
      text = as_string(op);
    if (!text) return;
    if (trim(*text).empty()) {
      error(op, "empty configuration text; expected frr.conf lines",
            "write them as a block: `" + k + ": |` followed by indented lines");
      return;
    }
    if (k == "remove" && negate_config(*text).empty()) {
      error(op, "nothing to remove: the text has only comments and blank lines", "");
      return;
    }
    (k == "add" ? out.add : out.remove) = *text;
    out.text_line = text_line(op.node);
  }

  void parse_interface(const Val& v, InterfaceStep& out) {
    check_keys(v, keys::kInterface);
    std::vector<const plan::Interface*> ifaces;
    for (const auto& it :
         one_or_many(v, "interface", "interfaces", "interfaces to change", "leaf1:swp1")) {
      auto e = interface_ref(it);
      if (!e) continue;
      if (std::any_of(out.interfaces.begin(), out.interfaces.end(),
                      [&](const InterfaceRef& r) { return r.str() == e->ref.str(); })) {
        error(it, "interface " + e->ref.str() + " listed twice", "");
        continue;
      }
      out.interfaces.push_back(e->ref);
      ifaces.push_back(e->iface);
    }
    auto mv = child(v, "mtu"), sv = child(v, "state");
    auto av = child(v, "add-addresses"), rv = child(v, "remove-addresses");
    if (mv) out.mtu = as_mtu(mv);
    if (sv) out.up = as_state(sv);
    std::vector<IpPrefix> added;
    for (const Val* lv : {&av, &rv}) {
      if (!*lv || !as_list(*lv, "addresses with prefix length", lv->key_name() + ": [10.1.9.1/24]"))
        continue;
      for (size_t i = 0; i < lv->node.size(); ++i)
        if (auto p = as_address(item(*lv, i))) {
          (lv == &av ? out.add_addresses : out.remove_addresses).push_back(p->str());
          if (lv == &av) added.push_back(*p);
        }
    }
    if (!mv && !sv && !av && !rv) {
      error(v.mark(), v.field,
            "nothing to change; expected at least one of mtu, state, add-addresses, "
            "remove-addresses",
            "");
      return;
    }
    if (av && out.interfaces.size() > 1 && !out.add_addresses.empty())
      error(av,
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
      error(out.mtu ? mv : av,
            (out.mtu ? "MTU " + std::to_string(*out.mtu) : std::string("the MTU")) +
                " is below 1280 on interfaces that need IPv6: " + join_some(bad),
            "Linux removes IPv6 from an interface whose MTU is under 1280 (RFC 8200 §5)");
  }

  void parse_link(const Val& v, LinkStep& out) {
    check_keys(v, keys::kLink);
    auto o = child(v, "link"), m = child(v, "links");
    const std::string example = "leaf1:swp1";
    if (o && m) {
      error(o.key_mark(), o.field, "give link or links, not both", "");
    } else if (!o && !m) {
      error(v.mark(), m.field,
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
        error(
            m, "expected `all` or a list of links, got '" + s + "'",
            s.find(':') != std::string::npos
                ? "for one link write `link: " + s + "` or `links: [" + s + "]`"
                : did_you_mean(lower, {keys::kAllLinks}, "e.g. links: [leaf1:swp1] or links: all"));
      }
    } else if (as_list(m, "links", "links: [leaf1:swp1] or links: all")) {
      for (size_t i = 0; i < m.node.size(); ++i) {
        const Val it = item(m, i);
        auto r = link_ref(it, {cur_});
        if (!r) continue;
        if (std::any_of(out.links.begin(), out.links.end(),
                        [&](const LinkRef& x) { return x.str() == r->str(); })) {
          error(it, "link " + r->str() + " listed twice", "");
          continue;
        }
        out.links.push_back(*r);
      }
    }
    auto mv = child(v, "mtu"), sv = child(v, "state");
    if (mv) out.mtu = as_mtu(mv);
    if (sv) out.up = as_state(sv);
    if (!mv && !sv) {
      error(v.mark(), v.field, "nothing to change; expected at least one of mtu, state", "");
      return;
    }
    if (!out.mtu || *out.mtu >= kMinIpv6Mtu) return;
    std::vector<std::string> bad;
    for (const auto& l : out.links) {
      std::string why;
      for (const InterfaceRef* e : {&l.a, &l.b})
        if (const plan::Interface* pi = plan_interface(*e); pi && why.empty())
          why = ipv6_reason(*pi);
      if (!why.empty()) bad.push_back(l.str() + " (" + why + ")");
    }
    if (!bad.empty())
      error(mv,
            "MTU " + std::to_string(*out.mtu) +
                " is below 1280 on links that need IPv6: " + join_some(bad),
            "Linux removes IPv6 from an interface whose MTU is under 1280 (RFC 8200 §5)");
  }

  void parse_wait(const Val& v, WaitStep& out) {
    check_keys(v, keys::kWait);
    bool until_ok = true;
    if (auto u = child(v, "until")) {
      auto s = as_choice(u, keys::kUntil);
      if (s)
        out.until = *s;
      else
        until_ok = false;
    }
    if (auto t = child(v, "timeout"))
      if (auto d = as_duration(t)) out.timeout = *d;
    auto dv = child(v, "duration");
    if (dv)
      if (auto d = as_duration(dv)) out.duration = *d;
    if (!until_ok) return;
    if (out.until == "duration" && !dv)
      error(v.mark(), dv.field, "missing; `until: duration` needs a duration", "e.g. duration: 2s");
    if (out.until == "converged" && dv)
      error(dv.key_mark(), dv.field, "duration applies only to `until: duration`",
            "remove it, or set `until: duration`");
  }

  void parse_check(const Val& v, CheckStep& out) {
    check_keys(v, keys::kCheck);
    if (auto tv = child(v, "tests"); !tv) {
      error(v.mark(), tv.field,
            "missing; expected the tests to run: families (bgp) or single tests (bgp.0)",
            "e.g. tests: [bgp, routes]");
    } else if (as_list(tv, "test families or tests", "tests: [bgp, mtu.0]")) {
      for (size_t i = 0; i < tv.node.size(); ++i) {
        const Val it = item(tv, i);
        if (auto s = as_string(it); s && test_name(it, *s, false)) out.tests.push_back(*s);
      }
    }
    bool expect_ok = true;
    if (auto ev = child(v, "expect")) {
      if (auto s = as_choice(ev, keys::kExpect))
        out.expect = *s;
      else
        expect_ok = false;
    }
    auto fv = child(v, "failing");
    if (expect_ok && out.expect == "fail") {
      if (!fv) {
        error(v.mark(), fv.field, "missing; `expect: fail` needs the tests that must fail",
              "e.g. failing: [bgp.0]");
      } else if (as_list(fv, "tests", "failing: [bgp.0]")) {
        for (size_t i = 0; i < fv.node.size(); ++i) {
          const Val it = item(fv, i);
          auto s = as_string(it);
          if (!s || !test_name(it, *s, true)) continue;
          std::string fam = s->substr(0, s->find('.'));
          if (!has(out.tests, *s) && !has(out.tests, fam))
            error(it, "test " + *s + " is not among the selected tests",
                  "add " + fam + " (or " + *s + ") to tests");
          out.failing.push_back(*s);
        }
      }
    } else if (expect_ok && fv) {
      error(fv.key_mark(), fv.field, "failing applies only to `expect: fail`",
            "set `expect: fail`, or remove failing");
    }
    if (auto t = child(v, "timeout"))
      if (auto d = as_duration(t)) out.timeout = *d;
  }

  void parse_topology(const Val& v, TopologyStep& out) {
    check_keys(v, keys::kTopology);
    auto fv = child(v, "file");
    if (!fv) {
      error(v.mark(), fv.field, "missing; expected the topology file the lab changes to",
            "e.g. file: clos-2x4-leaf5.yaml");
      return;
    }
    auto s = as_string(fv);
    if (!s) return;
    auto abs = existing_file(fv, *s, "topology file");
    if (!abs) return;
    out.file = *abs;
    size_t before = d_.items().size();
    out.topo = topology::load_topology(*abs, d_);  // its diagnostics name its own file
    if (!out.topo) {
      size_t n = d_.items().size() - before;
      error(fv,
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
      const std::string& now = std::string(what) == "kind" ? n.kind : n.image;
      const std::string& was = std::string(what) == "kind" ? old->kind : old->image;
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

  std::string text_, file_, dir_;
  Diagnostics& d_;
  const plan::Plan* cur_;         // the lab as of the current step
  std::deque<plan::Plan> owned_;  // plans of topology steps
  Plans all_plans_;               // the running lab's, then owned_
  std::map<std::string, std::pair<std::string, Mark>> step_names_;  // -> field, place
};

}  // namespace

std::optional<ChangeSet> load_change_set_text(const std::string& text, const std::string& file,
                                              const std::string& dir, const plan::Plan& plan,
                                              Diagnostics& diags, ChangeSet* partial) {
  std::string abs_dir = dir.empty() ? fs::current_path().string() : fs::absolute(dir).string();
  Loader l(text, file, abs_dir, plan, diags);
  auto cs = l.load();
  if (!cs && partial && l.partial_) *partial = std::move(*l.partial_);
  return cs;
}

std::optional<ChangeSet> load_change_set(const std::string& path, const plan::Plan& plan,
                                         Diagnostics& diags, ChangeSet* partial) {
  auto text = read_input_file(path, "change file", "give the change set's YAML file", diags);
  if (!text) return std::nullopt;
  // Diagnostics name the file as the user wrote it; the change set keeps the absolute path.
  fs::path abs = fs::absolute(path);
  auto cs = load_change_set_text(*text, path, abs.parent_path().string(), plan, diags, partial);
  if (cs) cs->file = abs.string();
  return cs;
}

std::optional<ChangeSet> change_set_from_configs(const std::string& dir, const plan::Plan& plan,
                                                 Diagnostics& diags) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    diags.add({dir, 0, 0, "", fs::exists(dir, ec) ? "is not a folder" : "no such folder",
               "give the folder holding <node>.conf or <node>/frr.conf files"});
    return std::nullopt;
  }
  fs::path root = fs::absolute(dir).lexically_normal();
  if (root.filename().empty()) root = root.parent_path();
  std::vector<std::string> frr_nodes, all_nodes;
  for (const auto& n : plan.nodes) {
    all_nodes.push_back(n.name);
    if (n.kind == "frr") frr_nodes.push_back(n.name);
  }
  size_t before = diags.items().size();
  auto canonical = [](const fs::path& p) {
    std::error_code e;
    auto c = fs::weakly_canonical(p, e);
    return e ? p.string() : c.string();
  };

  ChangeSet cs;
  cs.dir = root.string();
  cs.name = "configs from " + root.filename().string();
  for (const auto& node : frr_nodes) {
    fs::path flat = root / (node + ".conf"), nested = root / node / "frr.conf";
    bool has_flat = fs::is_regular_file(flat, ec), has_nested = fs::is_regular_file(nested, ec);
    if (has_flat && has_nested) {
      diags.add({nested.string(), 0, 0, "",
                 "both " + node + ".conf and " + node + "/frr.conf exist for node " + node,
                 "keep one of them"});
      continue;
    }
    if (!has_flat && !has_nested) continue;
    Step s;
    s.name = "replace config of " + node;
    s.kind = StepKind::kFrr;
    s.frr.nodes = {node};
    s.frr.replace = canonical(has_flat ? flat : nested);
    cs.steps.push_back(std::move(s));
  }

  // Files that name no FRR node: a typo, or a host.
  auto unknown = [&](const fs::path& file, const std::string& name) {
    if (has(frr_nodes, name)) return;
    std::string hint = has(all_nodes, name)
                           ? "node " + name + " is not an FRR node; only FRR nodes take a config"
                           : did_you_mean(name, frr_nodes, "FRR nodes: " + join_names(frr_nodes));
    diags.add({file.string(), 0, 0, "", "'" + name + "' is no FRR node of lab " + plan.lab, hint});
  };
  std::vector<fs::directory_entry> entries;
  for (const auto& e : fs::directory_iterator(root, ec)) entries.push_back(e);
  std::sort(entries.begin(), entries.end());
  for (const auto& e : entries) {
    const fs::path& p = e.path();
    if (e.is_regular_file(ec) && p.extension() == ".conf")
      unknown(p, p.stem().string());
    else if (e.is_directory(ec) && fs::is_regular_file(p / "frr.conf", ec))
      unknown(p / "frr.conf", p.filename().string());
  }

  if (cs.steps.empty() && diags.items().size() == before)
    diags.add({root.string(), 0, 0, "",
               "no <node>.conf found (nor <node>/frr.conf) for any FRR node of lab " + plan.lab,
               "FRR nodes: " + join_names(frr_nodes)});
  if (diags.items().size() != before) return std::nullopt;
  return cs;
}

std::string negate_config(const std::string& lines) {
  struct Line {
    size_t indent;
    std::string text;  // without the indentation and trailing blanks
  };
  std::vector<Line> ls;
  std::stringstream in(lines);
  std::string line;
  while (std::getline(in, line)) {
    size_t indent = line.find_first_not_of(' ');
    if (indent == std::string::npos) continue;
    std::string t = trim(line.substr(indent));
    if (t.empty() || t[0] == '!') continue;
    ls.push_back({indent, t});
  }
  static const std::set<std::string> kEnds = {"exit", "exit-address-family", "exit-vrf", "exit-vni",
                                              "end"};
  std::string out;
  for (size_t i = 0; i < ls.size(); ++i) {
    const std::string pad(ls[i].indent, ' ');
    const std::string& t = ls[i].text;
    bool context = i + 1 < ls.size() && ls[i + 1].indent > ls[i].indent;
    if (context || kEnds.count(t))
      out += pad + t;
    else if (t.rfind("no ", 0) == 0)
      out += pad + trim(t.substr(3));
    else
      out += pad + "no " + t;
    out += '\n';
  }
  return out;
}

}  // namespace twin::replay
