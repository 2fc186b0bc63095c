#include <algorithm>
#include <filesystem>

#include "twin/changeset/changeset.hpp"

namespace fs = std::filesystem;

namespace twin::replay {

std::optional<ChangeSet> change_set_from_configs(const std::string& dir, const plan::Plan& plan,
                                                 Diagnostics& diags, const InputPolicy* policy) {
  std::error_code ec;
  const InputPolicy own = policy ? *policy : InputPolicy::for_input(dir);
  if (!fs::is_directory(dir, ec)) {
    diags.add({dir, 0, 0, "", fs::exists(dir, ec) ? "is not a folder" : "no such folder",
               "give the folder holding <node>.conf or <node>/frr.conf files"});
    return std::nullopt;
  }
  if (!own.inside(dir)) {
    diags.add({dir, 0, 0, "",
               "resolves to " + fs::weakly_canonical(dir, ec).string() +
                   ", outside the folders inputs may name files under: " + own.where(),
               "allow it with --allow-path"});
    return std::nullopt;
  }
  fs::path root = fs::absolute(dir).lexically_normal();
  if (root.filename().empty()) root = root.parent_path();
  std::vector<std::string> frr_nodes, all_nodes;
  for (const auto& n : plan.nodes) {
    all_nodes.push_back(n.name);
    if (n.kind == topology::NodeKind::kFrr) frr_nodes.push_back(n.name);
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
    // Anything by the name (a FIFO too: refused below rather than passed over).
    auto there = [&](const fs::path& p) {
      return fs::symlink_status(p, ec).type() != fs::file_type::not_found &&
             !fs::is_directory(p, ec);
    };
    bool has_flat = there(flat), has_nested = there(nested);
    if (has_flat && has_nested) {
      diags.add({nested.string(), 0, 0, "",
                 "both " + node + ".conf and " + node + "/frr.conf exist for node " + node,
                 "keep one of them"});
      continue;
    }
    if (!has_flat && !has_nested) continue;
    // A config that is a link out of the roots, a FIFO or too large: refused by name, unread.
    if (auto bad = own.check((has_flat ? flat : nested).string(), "config of node " + node)) {
      diags.add({(has_flat ? flat : nested).string(), 0, 0, "", bad->message, bad->hint});
      continue;
    }
    Step s;
    s.name = "replace config of " + node;
    s.body = FrrStep{};
    s.frr().nodes = {node};
    s.frr().replace = canonical(has_flat ? flat : nested);
    cs.steps.push_back(std::move(s));
  }

  // Files that name no FRR node: a typo, or a host.
  auto unknown = [&](const fs::path& file, const std::string& name) {
    if (std::count(frr_nodes.begin(), frr_nodes.end(), name)) return;
    std::string hint = std::count(all_nodes.begin(), all_nodes.end(), name)
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

}  // namespace twin::replay
