// The `image` change step (a container node's NOS upgraded or downgraded to another image: the
// upgrade rehearsal of issue 44): how the change-set loader reads it, how the gate applies it,
// what a dry run says of it, and what it means for the intended plan (steps.hpp).
#include <algorithm>

#include "twin/changeset/changeset_keys.hpp"
#include "twin/changeset/changeset_loader.hpp"
#include "twin/changeset/steps.hpp"
#include "twin/drivers/registry.hpp"
#include "twin/plan/images.hpp"
#include "twin/runtime/frr.hpp"
#include "twin/topology/image_profile.hpp"

namespace twin::replay {

namespace {

std::string release_of(const plan::Node& n) {
  return n.container.frr_version.empty() ? n.container.image : "FRR " + n.container.frr_version;
}

// `n` as it runs on the profile's image; the image's facts (id, release, user frr) are read by
// the container driver's preflight.
plan::Node on_image(const plan::Node& n, const std::string& profile_name,
                    const topology::ImageProfile& p) {
  plan::Node to = n;
  to.image = profile_name;
  to.backend = p.backend;
  to.container.image = p.container.image;
  to.container.name = n.netns;
  to.container.frr_version = p.container.frr_version;
  to.container.image_id.clear();
  to.container.frr_uid = to.container.frr_gid = -1;
  std::erase(to.daemons, "mgmtd");  // the new release's preflight adds it back where it runs
  return to;
}

// `e` with the node named once (the drivers' messages often name it already).
Error in_node(const Error& e, const std::string& node) {
  return e.message.rfind("node " + node + ": ", 0) == 0 ? e : e.with_context("node " + node);
}

}  // namespace

void ChangeSetLoader::parse_body(const Value& v, ImageStep& out) {
  r_.check_keys(v, keys::kImage);
  for (const auto& [it, n] : step_nodes(v, "nodes to upgrade", "leaf2")) {
    if (n->container.image.empty()) {
      r_.error(it,
               "node " + n->name + " runs " +
                   (n->kind == topology::NodeKind::kFrr ? "this machine's FRR in a namespace"
                                                        : "no FRR of an image") +
                   ": an image step replaces a container node's image",
               "give the node a container image profile in the lab (docs/containers.md)");
      continue;
    }
    out.nodes.push_back(n->name);
  }
  Value to = child(v, "to");
  if (!to) {
    r_.error(v.mark(), v.field + ".to", "missing to: the image profile the nodes move to",
             "to: frr-10");
    return;
  }
  auto name = r_.string(to);
  if (!name) return;
  std::vector<std::string> looked;
  std::optional<InputProblem> refused;
  const std::string file = topology::find_image_profile(*name, dir_, policy_, &looked, &refused);
  if (file.empty()) {
    if (refused)
      r_.error(to, refused->message, refused->hint);
    else
      r_.error(
          to, "no image profile '" + *name + "'",
          did_you_mean(*name, topology::known_images(dir_), "looked in " + join_names(looked)));
    return;
  }
  auto p = topology::load_image_profile(*name, file, d_);
  if (!p) {
    r_.error(to, "image profile '" + *name + "' has problems, reported with its own file", "");
    return;
  }
  if (p->kind != topology::NodeKind::kFrr || p->container.image.empty()) {
    r_.error(to,
             "image profile '" + *name + "' is no FRR container image (backend " +
                 to_string(p->backend) + ", kind " + to_string(p->kind) + ")",
             "an image step moves container nodes to another FRR container image, e.g. frr-10");
    return;
  }
  out.to = *name;
  out.profile = *p;
  // The same image under another profile's name is no upgrade either.
  for (const auto& n : out.nodes)
    if (const plan::Node* node = cur_->find(n); node && node->image == out.to)
      r_.error(to, "node " + n + " runs image " + out.to + " already", "");
    else if (node && !node->container.image.empty() &&
             plan::canonical_image_ref(node->container.image) ==
                 plan::canonical_image_ref(p->container.image))
      r_.error(to,
               "node " + n + " runs " + node->container.image + " already (profile " + node->image +
                   "); profile " + out.to + " names the same image",
               "an image step moves a node to another image");
}

Result<void> apply_step(const ImageStep& b, StepRun& run, std::string* detail) {
  std::string done;
  for (const auto& name : b.nodes) {
    const plan::Node* n = run.current.find(name);
    if (!n) return input_error("node " + name + " is not in the lab");
    const auto& driver = run.env.drivers(*n);
    // What a reboot loads: the node's running configuration (saved as its startup one by
    // boot_image below).
    auto config = driver.running_config(*n, run.env.runner);
    if (!config) return config.error().with_context("node " + name);
    plan::Node to = on_image(*n, b.to, b.profile);
    std::vector<plan::Node*> one = {&to};
    if (auto r = run.env.drivers(to).preflight(one, drivers::DriverSettings{}, run.env.runner); !r)
      return in_node(r.error(), name);
    // The new release's own parser first: a line it refuses fails the step before the node
    // (or any traffic) is touched.
    auto refused = run.env.drivers(to).refused_lines(to, *config, run.env.runner);
    if (!refused) return refused.error().with_context("node " + name);
    if (!refused->empty()) {
      std::string lines;
      for (const auto& [line, what] : *refused)
        lines +=
            (lines.empty() ? "" : "; ") + std::string("line ") + std::to_string(line) + ": " + what;
      return input_error("node " + name + ": " + release_of(to) + " (" + to.container.image +
                         ") refuses its running configuration, carried over from " +
                         release_of(*n) + ": " + lines +
                         " (checked before the upgrade: the node was not touched)");
    }
    // Recorded before the node changes: its image and configuration as the change found them.
    const bool seen = std::any_of(run.touched.images.begin(), run.touched.images.end(),
                                  [&](const auto& t) { return t.first.name == name; });
    if (!seen) run.touched.images.emplace_back(*n, *config);
    // boot_image makes `config` the startup configuration the new release boots from.
    auto started = run.env.lab.boot_image(run.current, to, *config);
    if (!started) return in_node(started.error(), name);
    done += (done.empty() ? "" : "; ") + name + ": " + release_of(*n) + " -> " + release_of(to) +
            " (" + to.container.image + "), " + std::to_string(*started) +
            " daemons booted from its saved configuration";
    for (auto& x : run.current.nodes)
      if (x.name == name) x = to;
  }
  *detail = done;
  return {};
}

Result<void> describe_step(const ImageStep& b, const state::State&, plan::Plan& current,
                           proc::ProcessRunner&, std::ostream& out) {
  for (const auto& name : b.nodes) {
    const plan::Node* n = current.find(name);
    out << "   " << name << ": " << (n ? n->container.image : std::string("?")) << " -> "
        << b.profile.container.image << " (image " << b.to
        << "): running config saved, checked by the new release, daemons rebooted on it\n";
  }
  return {};
}

// Intent: the nodes run the new image (the lab keeps what up read of it: apply.cpp's
// save_intent, plan::keep_running_images).
// The new release's daemons are intended too (mgmtd on 9.0+, as the driver's preflight starts
// it): the gate's validation then finds a dead mgmtd after an upgrade, as `twin validate` does.
void intend_step(const ImageStep& b, const std::string&, plan::Plan& p) {
  for (auto& n : p.nodes)
    if (std::find(b.nodes.begin(), b.nodes.end(), n.name) != b.nodes.end()) {
      n = on_image(n, b.to, b.profile);
      if (runtime::frr_has_mgmtd(n) && !n.daemons.empty())
        n.daemons.insert(n.daemons.begin(), "mgmtd");
    }
}

}  // namespace twin::replay
