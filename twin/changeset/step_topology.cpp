// The `topology` change step (the lab becomes another topology file, without a restart): how the
// change-set loader reads it, how the gate applies it, what a dry run says of it, and what it means
// for the intended plan (steps.hpp).
#include <filesystem>

#include "twin/changeset/changeset_keys.hpp"
#include "twin/changeset/changeset_loader.hpp"
#include "twin/changeset/steps.hpp"
#include "twin/engine/reconcile.hpp"
#include "twin/plan/images.hpp"
#include "twin/topology/loader.hpp"

using namespace std::chrono_literals;

namespace twin::replay {

void ChangeSetLoader::parse_body(const Value& v, TopologyStep& out) {
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
  out.topo = topology::load_topology(*abs, d_, "", &policy_);  // diagnostics name its file
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
  // A container node's image is read (and its release checked) before anything of a lab is
  // built: it joins a lab at `twin up`, never a running one (the driver refuses it half-way).
  plan::Plan next = plan::make_plan(*out.topo, cur_->lab);
  // The management network is the lab's as `up` built it: a step neither adds, removes nor
  // changes it, nor moves a staying node's address on it (docs/management.md).
  auto mgmt_text = [](const plan::Plan& p) {
    return p.mgmt ? p.mgmt->subnet + " on " + p.mgmt->interface + ", login " + p.mgmt->user
                  : std::string("none");
  };
  if (mgmt_text(next) != mgmt_text(*cur_)) {
    r_.error(fv,
             "topology file '" + *s + "' has management network " + mgmt_text(next) +
                 "; the running lab has " + mgmt_text(*cur_),
             "a change cannot add, remove or change `mgmt:` (twin down; twin up)");
    return;
  }
  for (const auto& n : next.nodes)
    if (const plan::Node* old = cur_->find(n.name);
        old && old->mgmt_address != n.mgmt_address && !old->mgmt_address.empty()) {
      const auto* tn = out.topo->find_node(n.name);
      d_.add({*abs, tn->mark.line, tn->mark.column, "nodes." + n.name + ".mgmt-address",
              "node '" + n.name + "' would move on the management network from " +
                  old->mgmt_address + " to " + n.mgmt_address,
              "give it `mgmt-address: " + old->mgmt_ip() + "`, or add new nodes after the others"});
      return;
    }
  for (const auto& n : next.nodes) {
    if (cur_->find(n.name) || n.container.image.empty()) continue;
    const auto* tn = out.topo->find_node(n.name);
    d_.add({*abs, tn ? tn->mark.line : v.mark().line, tn ? tn->mark.column : v.mark().column,
            "nodes." + n.name + ".image",
            "node '" + n.name + "' runs in a container (image " + n.image + ", " +
                n.container.image +
                "): a container node joins a lab at `twin up`, not a running "
                "lab",
            "give the new node a namespace image (e.g. frr-8.4), or add it to the lab's "
            "topology and bring the lab up again"});
    ok = false;
  }
  if (!ok) return;
  // Later steps (and the intent) may refer to what this topology adds.
  owned_.push_back(std::move(next));
  plan::keep_running_images(owned_.back(), *cur_);
  cur_ = &owned_.back();
  all_plans_.push_back(cur_);
}

Result<void> apply_step(const TopologyStep& b, StepRun& run, std::string* detail) {
  if (!b.topo) return input_error("topology file was not loaded");
  plan::Plan next = plan::make_plan(*b.topo, run.current.lab);
  plan::keep_running_images(next, run.current);
  run.touched.topology = true;
  // Recorded before reshaping, so an interrupted or failed reshape is undone too: nodes
  // whose generated config changes go back by config, and the rollback reshapes from the
  // new plan (whatever part of it exists) back to the baseline.
  for (const auto& n : next.nodes)
    if (const auto* old = run.current.find(n.name);
        old && n.kind == topology::NodeKind::kFrr && n.frr_config != old->frr_config)
      run.touched.frr_nodes.insert(n.name);
  plan::Plan from = run.current;
  run.current = next;
  engine::GrowReport g;
  auto r = run.env.lab.reshape(from, next, &g);
  if (!r) return r;
  *detail = g.summary();
  return {};
}

Result<void> describe_step(const TopologyStep& b, const state::State& st, plan::Plan& current,
                           proc::ProcessRunner&, std::ostream& out) {
  if (!b.topo) return {};
  plan::Plan next = plan::make_plan(*b.topo, st.lab);
  plan::keep_running_images(next, current);
  out << "   " << engine::describe_reshape(current, next);
  current = next;
  return {};
}

// The new topology replaces nodes and links; intent the lab already carries (an earlier
// approved change's drain, originated or withdrawn prefixes, links meant to be down) stays with
// the nodes and interfaces that remain.
void intend_step(const TopologyStep& b, const std::string& lab, plan::Plan& p) {
  if (!b.topo) return;
  plan::Plan next = plan::make_plan(*b.topo, lab);
  plan::keep_running_images(next, p);
  for (auto& nn : next.nodes) {
    const plan::Node* old = p.find(nn.name);
    if (!old) continue;
    nn.drained = old->drained;
    nn.originates = old->originates;
    nn.withdraws = old->withdraws;
    for (auto& ni : nn.interfaces)
      for (const auto& oi : old->interfaces)
        if (oi.name == ni.name) ni.up = oi.up;
  }
  p = std::move(next);
}

}  // namespace twin::replay
