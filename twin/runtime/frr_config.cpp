#include "twin/runtime/frr_config.hpp"

#include <cstring>
#include <filesystem>
#include <map>
#include <regex>
#include <sstream>

#include "twin/core/util.hpp"
#include "twin/runtime/frr.hpp"

namespace fs = std::filesystem;

namespace twin::runtime {

proc::Command vtysh_command(const plan::Node& n, std::vector<std::string> args,
                            std::chrono::milliseconds timeout) {
  std::vector<std::string> argv = {"vtysh", "--vty_socket", n.run_dir, "--config_dir", n.run_dir};
  argv.insert(argv.end(), args.begin(), args.end());
  proc::Command c{argv, "", timeout};
  // vtysh prints its own host's name as `hostname`: give it the node's, as the daemons have.
  c.hostname = n.name;
  return c;
}

namespace {
// "% Unknown command:  ip ospf x" -> "Unknown command: ip ospf x": FRR's "%" marks its messages
// on a terminal, and it pads the echoed line with a space of its own.
std::string tidy(const std::string& s) {
  std::string out;
  size_t i = s.rfind("% ", 0) == 0 ? 2 : 0;
  for (; i < s.size(); ++i)
    if (!(s[i] == ' ' && !out.empty() && out.back() == ' ')) out += s[i];
  return trim_end(out);
}
}  // namespace

std::vector<std::pair<int, std::string>> vtysh_complaints(const std::string& out) {
  static const std::regex kVtyshLine(R"(line (\d+): (.*))");
  // FRR appends internal return codes ("Unknown command[25]"): not for people.
  static const std::regex kReturnCode(R"(\[\d+\])");
  std::vector<std::pair<int, std::string>> v;
  std::istringstream in(out);
  std::string line;
  std::smatch m;
  std::string pending;  // a daemon's own "% ..." explanation precedes vtysh's "line N:" note
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, kVtyshLine)) {
      std::string what = tidy(std::regex_replace(std::string(m[2]), kReturnCode, ""));
      if (!pending.empty()) what = pending + " (" + what + ")";
      v.emplace_back(std::stoi(m[1]), what);
      pending.clear();
    } else if (line.rfind("%", 0) == 0) {
      pending += (pending.empty() ? "" : " ") + tidy(line);
    }
  }
  return v;
}

Result<std::string> running_config(proc::ProcessRunner& runner, const plan::Node& n) {
  auto r = runner.run(vtysh_command(n, {"-c", "show running-config"}));
  if (!r) return r.error().with_context("node " + n.name + ": show running-config");
  if (r->exit_code != 0)
    return harness_error("node " + n.name + ": show running-config: " + trim_end(r->out + r->err));
  // The banner lines are not configuration (frr-reload.py would reject them).
  std::string out = r->out;
  if (auto p = out.find("Current configuration:\n"); p != std::string::npos)
    out = out.substr(p + std::strlen("Current configuration:\n"));
  return out;
}

Result<void> vtysh_apply(proc::ProcessRunner& runner, const plan::Node& n, const std::string& text,
                         int first_line, const std::string& file) {
  TempDir tmp;
  if (tmp.path.empty()) return harness_error("cannot create a temporary folder");
  std::string path = tmp.path + "/lines.conf";
  if (auto w = write_file(path, text); !w) return w.error();
  auto r = runner.run(vtysh_command(n, {"-f", path}));
  if (!r) return r.error();
  if (r->exit_code == 0) return {};
  std::vector<std::string> lines;
  {
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) lines.push_back(l);
  }
  std::string msg;
  for (const auto& [line, what] : vtysh_complaints(r->out + r->err)) {
    std::string where;
    if (first_line > 0) {
      where = file + ":" + std::to_string(first_line + line - 1);
    } else if (line >= 1 && static_cast<size_t>(line) <= lines.size()) {
      const std::string& l = lines[line - 1];
      auto start = l.find_first_not_of(' ');
      where = "'" + trim_end(l.substr(start == std::string::npos ? 0 : start)) + "'";
    } else {
      where = "line " + std::to_string(line);
    }
    msg += (msg.empty() ? "" : "; ") + where + ": " + what;
  }
  if (msg.empty())
    msg = "vtysh exit " + std::to_string(r->exit_code) + ": " + trim_end(r->out + r->err);
  return input_error(n.name + " rejected: " + msg);
}

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
  for (const auto& n : topo.nodes) {
    if (n.config.empty()) continue;
    auto& u = users[n.config];
    if (u.empty()) paths.push_back(n.config);
    u.push_back(n.name);
  }
  // A daemon the config needs that FRR here does not ship would fail mid-`up`: say it now, at
  // the line that needs it.
  for (const auto& n : topo.nodes) {
    if (!n.own) continue;
    for (const auto& [daemon, line] : n.own->needs) {
      std::error_code ec;
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
  for (const auto& n : topo.nodes)
    for (const auto& s : n.daemon_settings) {
      std::error_code ec;
      if (!s.enabled || fs::is_regular_file(daemon_path(s.daemon), ec)) continue;
      off[{s.file, s.mark.line}] = &s;
      off_nodes[{s.file, s.mark.line}].push_back(n.name);
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
    if (auto text = read_file(paths[i])) {
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
