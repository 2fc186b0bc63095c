// The `frr` change step (FRR configuration lines or a whole rendered config on FRR nodes): how the
// change-set loader reads it, how the gate applies it, what a dry run says of it, and what it means
// for the intended plan (steps.hpp).
#include <filesystem>
#include <sstream>

#include "twin/core/diagnostics.hpp"
#include "twin/core/util.hpp"
#include "twin/drivers/registry.hpp"
#include "twin/replay/changeset_keys.hpp"
#include "twin/replay/changeset_loader.hpp"
#include "twin/replay/steps.hpp"

using namespace std::chrono_literals;

namespace twin::replay {

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

namespace {

// The FRR lines the step gives `node` (for `replace`, the whole file; "" when unreadable: the
// driver's reload then says why).
std::string step_text(const FrrStep& b) {
  if (!b.replace.empty()) {
    auto t = read_file(b.replace);
    return t ? *t : "";
  }
  return b.add;  // a removal needs no daemon that does not run already
}

}  // namespace

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
  for (const auto& name : b.nodes) {
    const plan::Node* n = run.current.find(name);
    if (!n) return input_error("node " + name + " is not in the lab");
    run.touched.frr_nodes.insert(name);
    Result<void> r;
    const auto& driver = run.env.drivers(*n);
    if (!b.replace.empty())
      r = driver.reload_config(*n, b.replace, false, nullptr, run.env.runner);
    else if (!b.add.empty())
      r = driver.apply_config(*n, b.add, b.text_line, run.cs.file, run.env.runner);
    else
      r = driver.apply_config(*n, negate_config(b.remove), 0, run.cs.file, run.env.runner);
    if (!r) return r;
  }
  *detail = "configured " + std::to_string(b.nodes.size()) + " node(s)";
  if (!started.empty()) *detail += "; started " + join_names(started);
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
