// The `frr` change step (FRR configuration lines or a whole rendered config on FRR nodes): how the
// change-set loader reads it, how the gate applies it, what a dry run says of it, and what it means
// for the intended plan (steps.hpp).
#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <optional>
#include <set>
#include <sstream>

#include "twin/core/diagnostics.hpp"
#include "twin/core/input_policy.hpp"
#include "twin/core/util.hpp"
#include "twin/drivers/registry.hpp"
#include "twin/changeset/changeset_keys.hpp"
#include "twin/changeset/changeset_loader.hpp"
#include "twin/changeset/steps.hpp"
#include "twin/topology/host_paths.hpp"

using namespace std::chrono_literals;

namespace twin::replay {

void ChangeSetLoader::parse_body(const Value& v, FrrStep& out) {
  r_.check_keys(v, keys::kFrr);
  const char* why = "frr steps configure FRR nodes only";
  const char* hint = "change a host with an interface step";
  for (const auto& [at, n] : step_nodes(v, "FRR nodes to configure", "leaf1", why, hint))
    out.nodes.push_back(n->name);

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
      if (out.nodes.size() > 1)
        r_.error(op,
                 "replace sets one node's whole configuration, but this step names " +
                     std::to_string(out.nodes.size()) + " nodes",
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

namespace {

// The FRR lines the step gives `node` (for `replace`, the whole file; "" when unreadable: the
// driver's reload then says why).
std::string step_text(const FrrStep& b) {
  if (!b.replace.empty()) {
    auto t = read_regular_file(b.replace);  // checked against the policy when loaded
    return t ? *t : "";
  }
  return b.add;  // a removal needs no daemon that does not run already
}

// The route-map delay timer (seconds) of `node` when applying `b` edits policy objects it
// already has or names (edits_existing_policy); -1 when it does not. A `replace` is reloaded
// with a soft clear after it (runtime::frr_reload), which applies the policy at once.
int policy_edit_delay_s(const FrrStep& b, const plan::Node& node, StepRun& run) {
  const std::string& lines = b.add.empty() ? b.remove : b.add;
  // (Most steps hold no policy object: their node's config is not read.)
  if (!b.replace.empty() || policy_objects(lines).empty()) return -1;
  std::string running;
  if (auto r = run.env.drivers(node).running_config(node, run.env.runner)) running = *r;
  if (!edits_existing_policy(running, lines)) return -1;
  // A timer the same lines set may hold the edit longer than the one running (a timer already
  // started keeps its time): the longer of the two.
  return std::max(route_map_delay_s(running), declared_route_map_delay_s(b.add).value_or(0));
}

}  // namespace

std::vector<PolicyLine> policy_objects(const std::string& frr_text) {
  // The words before the object's name, per kind ("bgp community-list" may name its type first).
  static const std::vector<std::vector<std::string>> kStarts = {
      {"route-map"},          {"ip", "prefix-list"},        {"ipv6", "prefix-list"},
      {"access-list"},        {"ip", "access-list"},        {"ipv6", "access-list"},
      {"bgp", "as-path", "access-list"}, {"bgp", "community-list"},
      {"bgp", "extcommunity-list"},      {"bgp", "large-community-list"}};
  std::vector<PolicyLine> out;
  bool in_object = false;
  std::istringstream in(frr_text);
  std::string line;
  while (std::getline(in, line)) {
    std::string t = trim(line);
    if (t.empty() || t[0] == '!' || t[0] == '#') continue;
    if (std::isspace(static_cast<unsigned char>(line[0]))) {
      if (in_object) out.back().text += "\n" + t;
      continue;
    }
    auto w = words(t);
    in_object = false;
    for (const auto& s : kStarts) {
      if (w.size() <= s.size() || !std::equal(s.begin(), s.end(), w.begin())) continue;
      size_t name = s.size();
      if (s[0] == "bgp" && (w[name] == "standard" || w[name] == "expanded") && w.size() > name + 1)
        ++name;
      std::string key;
      for (size_t i = 0; i < s.size(); ++i) key += s[i] + " ";
      out.push_back({key + w[name], t});
      in_object = true;
      break;
    }
  }
  return out;
}

bool edits_existing_policy(const std::string& running_config, const std::string& edit) {
  std::set<std::string> existing;
  for (const auto& p : policy_objects(running_config)) existing.insert(p.key);
  // An object is in use when the node has it, or when its configuration already names it (a
  // route-map matching a prefix-list not yet defined picks the list up when the timer fires).
  const auto running_words = words(running_config);
  const std::set<std::string> named(running_words.begin(), running_words.end());
  auto lines = policy_objects(edit);
  return std::any_of(lines.begin(), lines.end(), [&](const PolicyLine& p) {
    return existing.count(p.key) > 0 || named.count(p.key.substr(p.key.rfind(' ') + 1)) > 0;
  });
}

std::optional<int> declared_route_map_delay_s(const std::string& frr_text) {
  std::istringstream in(frr_text);
  std::string line;
  std::optional<int> out;
  while (std::getline(in, line)) {
    auto w = words(line);
    if (w.size() == 4 && w[0] == "bgp" && w[1] == "route-map" && w[2] == "delay-timer")
      if (int v = 0; std::from_chars(w[3].data(), w[3].data() + w[3].size(), v).ec == std::errc())
        out = v;  // the last one holds
  }
  return out;
}

int route_map_delay_s(const std::string& running_config) {
  return declared_route_map_delay_s(running_config).value_or(5);  // FRR's default
}

Result<void> apply_step(const FrrStep& b, StepRun& run, std::string* detail) {
  // Daemons the lines need that the nodes do not run (a first static route needs staticd):
  // started before the lines are applied, as a reshape the rollback undoes.
  plan::Plan next = run.current;
  std::vector<std::string> started;
  for (const auto& name : b.nodes)
    if (auto* n = next.find(name))
      for (const auto& d : plan::add_needed_daemons(*n, step_text(b)))
        started.push_back(name + " " + d);
  if (!started.empty()) {
    run.touched.daemons = true;
    plan::Plan from = run.current;
    run.current = next;
    engine::GrowReport g;
    if (auto r = run.env.lab.reshape(from, next, &g); !r) return r;
  }
  std::vector<std::string> untimed;  // nodes whose route-map delay timer is off
  for (const auto& name : b.nodes) {
    const plan::Node* n = run.current.find(name);
    if (!n) return input_error("node " + name + " is not in the lab");
    run.touched.frr_nodes.insert(name);
    int delay = policy_edit_delay_s(b, *n, run);
    Result<void> r;
    const auto& driver = run.env.drivers(*n);
    // A file the lines name on this machine is one inside the node's run folder instead
    // (topology/host_paths.hpp), said in a note at its line.
    const std::string folder = topology::host_files_dir(n->run_dir);
    std::vector<topology::HostPath> moved;
    if (!b.replace.empty()) {
      auto text = read_file(b.replace);
      if (!text) return text.error();
      std::string confined = topology::redirect_host_paths(*text, folder, &moved);
      TempDir tmp;
      std::string path = b.replace;
      if (!moved.empty()) {
        if (tmp.path.empty()) return harness_error("cannot create a temporary folder");
        path = tmp.path + "/frr.conf";
        if (auto w = write_file(path, confined); !w) return w;
      }
      r = driver.reload_config(*n, path, false, nullptr, run.env.runner);
    } else if (!b.add.empty()) {
      r = driver.apply_config(*n, topology::redirect_host_paths(b.add, folder, &moved), b.text_line,
                              run.cs.file, run.env.runner);
    } else {
      r = driver.apply_config(
          *n, topology::redirect_host_paths(negate_config(b.remove), folder, &moved), 0,
          run.cs.file, run.env.runner);
    }
    if (run.notes)
      for (const auto& h : moved) {
        const std::string where = !b.replace.empty() ? b.replace + ":" + std::to_string(h.line)
                                  : b.text_line > 0
                                      ? run.cs.file + ":" + std::to_string(b.text_line + h.line - 1)
                                      : run.cs.file;
        add_note(*run.notes, {"warning", name, where, topology::redirect_text(h, folder)});
      }
    if (!r) return r;
    if (delay >= 0) {
      auto [it, added] = run.touched.policy_delay_s.try_emplace(name, delay);
      if (!added) it->second = std::max(it->second, delay);
      run.touched.policy_edited_at = run.env.time.now();
    }
    if (delay == 0) untimed.push_back(name);
  }
  *detail = "configured " + std::to_string(b.nodes.size()) + " node(s)";
  if (!started.empty()) *detail += "; started " + join_names(started);
  // Measured on FRR 8.4: with the timer off, an edit of a prefix-list in use never reached the
  // routes until the sessions were cleared or the daemons restarted.
  if (!untimed.empty())
    *detail += "; NOTE " + join_names(untimed) +
               " run `bgp route-map delay-timer 0`: FRR applies an edit of a policy in use only "
               "once the sessions are cleared or the daemons restart, so the network after this "
               "change may not show it (--restart-check judges it restarted)";
  return {};
}

Result<void> describe_step(const FrrStep& b, const state::State&, plan::Plan& current,
                           proc::ProcessRunner& runner, std::ostream& out) {
  for (const auto& name : b.nodes) {
    const plan::Node* n = current.find(name);
    if (!n) continue;
    if (!b.replace.empty()) {
      std::string diff;
      auto r = drivers::driver_for(*n).reload_config(*n, b.replace, true, &diff, runner);
      if (!r) return r.error();
      out << "   " << name << ": configuration difference (frr-reload.py --test):\n";
      std::istringstream in(diff);
      std::string line;
      bool any = false;
      while (std::getline(in, line))
        if (!line.empty()) {
          out << "     " << line << "\n";
          any = true;
        }
      if (!any) out << "     (no difference: node left untouched)\n";
    } else {
      std::string text = b.add.empty() ? negate_config(b.remove) : b.add;
      out << "   " << name << ": vtysh -f <<EOF\n";
      std::istringstream in(text);
      std::string line;
      while (std::getline(in, line)) out << "     " << line << "\n";
      out << "   EOF\n";
    }
  }
  return {};
}

// FRR lines say nothing else the plan can read (the change's intent block declares what they
// mean), but the daemons they need run on from then on.
void intend_step(const FrrStep& b, const std::string&, plan::Plan& p) {
  for (const auto& name : b.nodes)
    if (auto* n = p.find(name)) plan::add_needed_daemons(*n, step_text(b));
}

}  // namespace twin::replay
