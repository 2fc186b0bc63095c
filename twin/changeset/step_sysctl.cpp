// The `sysctl` change step (kernel settings of nodes' network namespaces): how the change-set
// loader reads it, how the gate applies it, what a dry run says of it, and what it means for the
// intended plan (steps.hpp).
#include <algorithm>
#include <regex>

#include "twin/drivers/registry.hpp"
#include "twin/changeset/changeset_keys.hpp"
#include "twin/changeset/changeset_loader.hpp"
#include "twin/changeset/steps.hpp"

namespace twin::replay {

namespace {

// The interface a per-interface key names ("net.ipv6.conf.swp1.disable_ipv6" -> "swp1"), or ""
// for a key of the whole namespace. "all" and "default" are the kernel's own entries.
std::string interface_of(const std::string& key) {
  static const std::regex per_if(R"(^net\.ipv[46]\.(conf|neigh)\.([^.]+)\..+$)");
  std::smatch m;
  if (!std::regex_match(key, m, per_if)) return "";
  std::string i = m[2];
  return i == "all" || i == "default" ? "" : i;
}

}  // namespace

void ChangeSetLoader::parse_body(const Value& v, SysctlStep& out) {
  r_.check_keys(v, keys::kSysctl);
  std::vector<const plan::Node*> nodes;
  for (const auto& [at, n] : step_nodes(v, "nodes to set", "spine1")) {
    out.nodes.push_back(n->name);
    nodes.push_back(n);
  }
  Value set = child(v, "set");
  if (!set) {
    r_.error(v.mark(), v.field + ".set", "missing set: the kernel settings to write",
             "set: {net.ipv4.ip_forward: 0}");
    return;
  }
  if (!set.node.IsMap() || set.node.size() == 0) {
    r_.error(set,
             set.node.IsMap() ? std::string("empty: expected at least one sysctl name and value")
                              : "expected a mapping of sysctl names to values, " + found(set.node),
             "set: {net.ipv4.ip_forward: 0}");
    return;
  }
  static const std::regex key_re(keys::kSysctlKeyPattern);
  static const std::regex value_re(keys::kSysctlValuePattern);
  for (const auto& kv : set.node) {
    Value e{true, kv.first, kv.second, set.field + "." + kv.first.Scalar()};
    std::string key = kv.first.Scalar();
    if (!std::regex_match(key, key_re)) {
      std::string dotted = key;
      std::replace(dotted.begin(), dotted.end(), '/', '.');
      bool slashes = dotted != key && std::regex_match(dotted, key_re);
      r_.error(e.key_mark(), e.field,
               slashes ? "'" + key + "' is written with slashes; expected the dotted name"
                       : "'" + key + "' is not a network setting; expected a sysctl name under net.",
               slashes ? "write " + dotted
                       : "only net.* settings belong to a node's network namespace; the others "
                         "are the host's own (sysctl -a lists the names)");
      continue;
    }
    if (std::any_of(out.set.begin(), out.set.end(), [&](const auto& p) { return p.first == key; })) {
      r_.error(e.key_mark(), e.field, "'" + key + "' set twice in one step", "");
      continue;
    }
    auto value = r_.string(e);
    if (!value) continue;
    if (!std::regex_match(*value, value_re)) {
      r_.error(e, "'" + *value + "' is not a sysctl value; expected one line of numbers or words",
               "e.g. 0, 1, or \"4096 87380 6291456\"");
      continue;
    }
    if (std::string ifname = interface_of(key); !ifname.empty() && ifname != "lo")
      for (const plan::Node* n : nodes) {
        std::vector<std::string> names;
        for (const auto& i : n->interfaces) names.push_back(i.name);
        if (has(names, ifname)) continue;
        r_.error(e.key_mark(), e.field,
                 "node " + n->name + " has no interface " + ifname + " (in " + key + ")",
                 did_you_mean(ifname, names, "its interfaces: " + join_names(names)));
      }
    out.set.emplace_back(key, *value);
  }
}

Result<void> apply_step(const SysctlStep& b, StepRun& run, std::string* detail) {
  int written = 0;
  for (const auto& name : b.nodes) {
    const plan::Node* n = run.current.find(name);
    if (!n) return input_error("node " + name + " is not in the lab");
    const auto& driver = run.env.drivers(*n);
    for (const auto& [key, value] : b.set) {
      auto old = driver.read_sysctl(*n, key);
      if (!old) return old.error().with_context("node " + name);
      // The value before the change's first write is the one the rollback restores.
      bool seen = std::any_of(run.touched.sysctls.begin(), run.touched.sysctls.end(),
                              [&](const auto& t) {
                                return std::get<0>(t) == name && std::get<1>(t) == key;
                              });
      if (!seen) run.touched.sysctls.emplace_back(name, key, *old);
      if (auto w = driver.write_sysctl(*n, key, value); !w)
        return w.error().with_context("node " + name);
      ++written;
    }
  }
  *detail = std::to_string(written) + " setting(s) written on " + std::to_string(b.nodes.size()) +
            " node(s)";
  return {};
}

Result<void> describe_step(const SysctlStep& b, const state::State&, plan::Plan&,
                           proc::ProcessRunner&, std::ostream& out) {
  for (const auto& n : b.nodes)
    for (const auto& [key, value] : b.set) out << "   " << n << ": sysctl " << key << " = " << value << "\n";
  return {};
}

// Not intent: forwarding off, IPv6 off on a port, a stricter rp_filter are judged by what they
// do to the network.
void intend_step(const SysctlStep&, const std::string&, plan::Plan&) {}

}  // namespace twin::replay
