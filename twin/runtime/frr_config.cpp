#include "twin/runtime/frr_config.hpp"

#include <sys/stat.h>
#include <sys/utsname.h>

#include <cstring>
#include <regex>
#include <sstream>

#include "twin/core/util.hpp"
#include "twin/runtime/frr.hpp"
#include "twin/runtime/vty.hpp"
#include "twin/runtime/vtysh_merge.hpp"

namespace twin::runtime {

proc::Command vtysh_command(const plan::Node& n, std::vector<std::string> args,
                            std::chrono::milliseconds timeout) {
  std::vector<std::string> argv = {"/usr/bin/vtysh", "--vty_socket", n.run_dir, "--config_dir",
                                   n.run_dir};
  argv.insert(argv.end(), args.begin(), args.end());
  proc::Command c{argv, "", timeout};
  // vtysh prints its own host's name as `hostname`: give it the node's, as the daemons have.
  c.hostname = n.name;
  // vtysh itself writes what `output file` and `write` name: only the node's run folder may
  // take it (topology/host_paths.hpp).
  c.writable = {n.run_dir};
  // A container node's vtysh is its image's: configuration across releases is unsafe from
  // another release's vtysh (DESIGN.md §4b: 8.4's refuses a 10.x `ip route` line).
  use_node_programs(n, c);
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

Result<std::string> running_config_vtysh(proc::ProcessRunner& runner, const plan::Node& n) {
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

std::optional<std::string> running_config_from_sockets(const plan::Node& n) {
  // What vtysh (run by vtysh_command: the node's name as host name, the run folder's
  // vtysh.conf) adds of its own.
  VtyshOwn own;
  own.hostname = n.name;
  struct utsname u {};
  if (::uname(&u) == 0 && std::string(u.domainname) != "(none)") own.domainname = u.domainname;
  auto conf = read_file(n.run_dir + "/vtysh.conf");
  auto parsed = parse_vtysh_conf(conf ? *conf : std::string(), own);
  if (!parsed) return std::nullopt;
  std::vector<std::string> outputs;
  for (const auto& d : vtysh_daemon_order()) {
    const std::string socket = n.run_dir + "/" + d + ".vty";
    struct stat st {};
    if (::stat(socket.c_str(), &st) != 0 || !S_ISSOCK(st.st_mode)) continue;  // as vtysh
    auto r = vty_commands(socket, {"enable", "write terminal"}, std::chrono::seconds(10));
    if (!r || r->status != 0) return std::nullopt;
    outputs.push_back(std::move(r->output));
  }
  if (outputs.empty()) return std::nullopt;
  return merge_running_configs(outputs, *parsed);
}

Result<std::string> running_config(proc::ProcessRunner& runner, const plan::Node& n) {
  // The merge reproduces FRR 8.4's vtysh: another release's node asks its own vtysh.
  if (!n.container.name.empty() && runtime::frr_major(n) != 8)
    return running_config_vtysh(runner, n);
  if (auto fast = running_config_from_sockets(n)) return *fast;
  return running_config_vtysh(runner, n);
}

Result<void> vtysh_apply(proc::ProcessRunner& runner, const plan::Node& n, const std::string& text,
                         int first_line, const std::string& file) {
  TempDir tmp(node_temp_parent(n));
  if (tmp.path.empty()) return harness_error("cannot create a temporary folder");
  std::string path = tmp.path + "/lines.conf";
  if (auto w = write_file(path, text); !w) return w.error();
  // vtysh writes a daemon's "% ..." explanation to stdout and its own "line N:" note to stderr:
  // one file for both keeps them in the order written, so each explanation stays with its line.
  auto c = vtysh_command(n, {"-f", path});
  c.output_file = tmp.path + "/vtysh.out";
  auto r = runner.run(c);
  if (!r) return r.error();
  if (r->exit_code == 0) return {};
  auto written = read_file(c.output_file);
  r->out = (written ? *written : std::string()) + r->out;
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

}  // namespace twin::runtime
