#include <algorithm>
#include <cctype>
#include <filesystem>
#include <regex>
#include <stdexcept>

#include "twin/core/ip.hpp"
#include "twin/core/util.hpp"
#include "twin/changeset/changeset_keys.hpp"
#include "twin/changeset/changeset_loader.hpp"
#include "twin/changeset/steps.hpp"
#include "twin/topology/loader.hpp"

namespace fs = std::filesystem;

namespace twin::replay {

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
  return r_.named_file(v, p.string(), policy_, what,
                       {what + " '" + path + "' does not exist",
                        "looked for " + p.lexically_normal().string() +
                            "; paths are relative to the change file's folder"},
                       {what + " '" + path + "' is not a regular file", ""});
}

namespace {
// A default step of the kind at `index` of StepBody. Only keys of kStepKinds reach here: an
// index past StepBody's kinds is a programming error (a key listed without its kind).
template <size_t... I>
StepBody body_at(size_t index, std::index_sequence<I...>) {
  if (index >= sizeof...(I))
    throw std::logic_error("step kind #" + std::to_string(index) +
                           " is listed in kStepKinds but StepBody has no such kind");
  StepBody out;
  ((index == I ? (out = std::variant_alternative_t<I, StepBody>{}, 0) : 0), ...);
  return out;
}
}  // namespace

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
  // A `run` step may be its command line alone (`run: "ansible-playbook site.yml"`).
  if (!kv.node.IsMap() && !(kind == "run" && kv.node.IsScalar())) {
    r_.error(kv, "expected a mapping of " + kind + " fields, " + found(kv.node), "");
  } else {
    // The kind at the key's position in kStepKinds (StepBody's order), read by its overload.
    const auto at = std::find(keys::kStepKinds.begin(), keys::kStepKinds.end(), kind);
    s.body = body_at(static_cast<size_t>(at - keys::kStepKinds.begin()),
                     std::make_index_sequence<std::variant_size_v<StepBody>>{});
    std::visit([&](auto& body) { parse_body(kv, body); }, s.body);
  }
  return s;
}

std::set<std::string> Touched::kernel_nodes() const {
  auto node_of = [](const std::string& key) { return key.substr(0, key.find(':')); };
  std::set<std::string> out;
  for (const auto& key : interfaces) out.insert(node_of(key));
  for (const auto& key : frr_addressed) out.insert(node_of(key));
  for (const auto& [node, ifname, addr] : host_added) out.insert(node);
  for (const auto& [node, ifname, addr] : host_removed) out.insert(node);
  for (const auto& [node, key, value] : sysctls) out.insert(node);
  for (const auto& [node, vnis] : vteps) out.insert(node);
  return out;
}

std::set<std::string> Touched::nodes() const {
  std::set<std::string> out = kernel_nodes();
  out.insert(frr_nodes.begin(), frr_nodes.end());
  for (const auto& [node, config] : images) out.insert(node.name);
  return out;
}

}  // namespace twin::replay
