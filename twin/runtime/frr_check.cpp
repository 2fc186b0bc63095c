#include "twin/runtime/frr_check.hpp"

#include <filesystem>
#include <map>
#include <sstream>

#include "twin/core/input_policy.hpp"
#include "twin/core/util.hpp"
#include "twin/plan/images.hpp"
#include "twin/runtime/frr.hpp"
#include "twin/topology/own_config.hpp"

namespace fs = std::filesystem;

namespace twin::runtime {

Result<std::vector<std::vector<Complaint>>> frr_syntax_check(proc::ProcessRunner& runner,
                                                             const std::vector<std::string>& paths) {
  std::vector<std::vector<Complaint>> out(paths.size());
  if (paths.empty()) return out;
  // vtysh -C still reads vtysh.conf from its config folder: give it an empty one of ours rather
  // than the host's /etc/frr.
  TempDir tmp;
  if (tmp.path.empty()) return harness_error("cannot create a temporary folder");
  if (auto w = write_file(tmp.path + "/vtysh.conf", "service integrated-vtysh-config\n"); !w)
    return w.error();
  std::vector<proc::Command> cmds;
  for (const auto& p : paths)
    cmds.push_back({{"vtysh", "--config_dir", tmp.path, "-C", "-f", p}, "", std::chrono::seconds(30)});
  auto results = proc::run_all(runner, cmds, 4);
  for (size_t i = 0; i < paths.size(); ++i) {
    auto& r = results[i];
    if (!r) return r.error().with_context("FRR syntax check (vtysh -C) of " + paths[i]);
    if (r->exit_code == 0) continue;
    out[i] = vtysh_complaints(r->out + r->err);
    if (out[i].empty())
      out[i].emplace_back(0, "vtysh -C exit " + std::to_string(r->exit_code) + ": " +
                                 trim_end(r->out + r->err));
  }
  return out;
}

Result<void> check_own_configs(const topology::Topology& topo, proc::ProcessRunner& runner,
                               Diagnostics& diags) {
  std::map<std::string, std::vector<std::string>> users;  // config file -> nodes, file order
  std::vector<std::string> paths;
  // A node that runs an image's FRR (a container profile, or a containerlab image) is checked by
  // its own release when it starts (`vtysh -b` there names each refused line): this machine's
  // FRR would judge another release's grammar.
  // A containerlab image of this machine's release line runs here as this machine's FRR
  // (plan::resolve_images), so this machine's parser is the right judge of its file.
  // ("" when unknown: the file is then checked here, as before container nodes.)
  std::string host;
  for (const auto& n : topo.nodes)
    if (!n.container_image.empty()) {
      host = plan::release_of_tag(":" + frr_version(runner));
      break;
    }
  auto line_of = [](const std::string& v) { return v.substr(0, v.find('.', v.find('.') + 1)); };
  auto own_release = [&](const topology::Node& n) {
    if (!n.profile.container.image.empty()) return true;
    if (n.container_image.empty()) return false;
    const std::string want = plan::release_of_tag(n.container_image);
    return !want.empty() && !host.empty() && line_of(want) != line_of(host);
  };
  for (const auto& n : topo.nodes) {
    if (n.config.empty() || own_release(n)) continue;
    auto& u = users[n.config];
    if (u.empty()) paths.push_back(n.config);
    u.push_back(n.name);
  }
  // A daemon the config needs that FRR here does not ship would fail mid-`up`: say it now, at
  // the line that needs it.
  for (const auto& n : topo.nodes) {
    if (!n.own || own_release(n)) continue;
    for (const auto& [daemon, line] : n.own->needs) {
      std::error_code ec;
      if (topology::daemon_switched_off(n, daemon)) continue;  // never started: a plan note
      if (fs::is_regular_file(daemon_path(daemon), ec)) continue;
      diags.add({n.config, line, 1, "node " + n.name,
                 "this line needs " + daemon + ", which FRR on this machine does not have (no " +
                     daemon_path(daemon) + ")",
                 "install FRR's full package (tools/install-deps.sh) or drop the stanza"});
    }
  }
  // Likewise a daemon a daemons file switches on (FRR's file lists sharpd, which Debian's FRR
  // package does not ship): once per setting, naming the nodes that share the file.
  std::map<std::pair<std::string, int>, std::vector<std::string>> off_nodes;
  std::map<std::pair<std::string, int>, const topology::DaemonSetting*> off;
  for (const auto& n : topo.nodes) {
    if (own_release(n)) continue;
    for (const auto& s : n.daemon_settings) {
      std::error_code ec;
      if (!s.enabled || fs::is_regular_file(daemon_path(s.daemon), ec)) continue;
      off[{s.file, s.mark.line}] = &s;
      off_nodes[{s.file, s.mark.line}].push_back(n.name);
    }
  }
  for (const auto& [at, s] : off) {
    const auto& nodes = off_nodes[at];
    diags.add({s->file, s->mark.line, s->mark.column,
               (nodes.size() == 1 ? "node " : "nodes ") + join_some(nodes),
               s->daemon + " is switched on, but FRR on this machine does not have it (no " +
                   daemon_path(s->daemon) + ")",
               "set " + s->daemon + "=no"});
  }
  auto checked = frr_syntax_check(runner, paths);
  if (!checked) return checked.error();
  for (size_t i = 0; i < paths.size(); ++i) {
    if ((*checked)[i].empty()) continue;
    std::vector<std::string> lines;
    if (auto text = read_regular_file(paths[i])) {
      std::istringstream in(*text);
      for (std::string l; std::getline(in, l);) lines.push_back(l);
    }
    const auto& nodes = users[paths[i]];
    std::string who = (nodes.size() == 1 ? "node " : "nodes ") + join_some(nodes);
    for (const auto& [line, what] : (*checked)[i]) {
      int column = 0;
      if (line >= 1 && static_cast<size_t>(line) <= lines.size()) {
        auto first = lines[line - 1].find_first_not_of(" \t");
        column = first == std::string::npos ? 1 : static_cast<int>(first) + 1;
      }
      diags.add({paths[i], line, column, who,
                 "FRR rejects this line: " + what,
                 "check it against FRR's documentation for the version installed here "
                 "(`vtysh -C -f " + paths[i] + "` repeats this check)"});
    }
  }
  return {};
}

}  // namespace twin::runtime
