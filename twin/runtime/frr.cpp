#include "twin/runtime/frr.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "twin/core/util.hpp"
#include "twin/runtime/frr_config.hpp"
#include "twin/runtime/ospf6_text.hpp"
#include "twin/runtime/vty.hpp"

namespace twin::runtime {

std::string daemon_path(const std::string& daemon) { return "/usr/lib/frr/" + daemon; }

int frr_major(const plan::Node& node) {
  const std::string& v = node.container.frr_version;
  if (v.empty() || !std::isdigit(static_cast<unsigned char>(v[0]))) return 0;
  return std::atoi(v.c_str());
}

bool frr_has_mgmtd(const plan::Node& node) { return frr_major(node) >= 9; }

bool frr_has_bfdctl(const plan::Node& node) {
  const std::string& v = node.container.frr_version;
  const int major = frr_major(node);
  const auto dot = v.find('.');
  const int minor = dot == std::string::npos ? 0 : std::atoi(v.c_str() + dot + 1);
  return major < 10 || (major == 10 && minor < 2);
}

std::string container_pid_file(const plan::Node& node) { return node.run_dir + "/container.pid"; }

std::string node_temp_parent(const plan::Node& node) {
  return node.container.name.empty() ? "" : node.run_dir + "/tmp";
}

int container_pid(const plan::Node& node) {
  if (node.container.name.empty()) return 0;
  std::ifstream f(container_pid_file(node));
  long pid = 0;
  unsigned long long start = 0;
  f >> pid >> start;
  // The recorded process must still be the container's: same PID and start time.
  return pid > 0 && start != 0 && process_start_time(static_cast<int>(pid)) == start
             ? static_cast<int>(pid)
             : 0;
}

std::string container_mount_ns(const plan::Node& node) {
  if (const int pid = container_pid(node); pid > 0)
    return "/proc/" + std::to_string(pid) + "/ns/mnt";
  return "(container " + node.container.name + " of node " + node.name + " is not running)";
}

void use_node_programs(const plan::Node& node, proc::Command& c) {
  if (node.container.name.empty()) return;
  // The container has the run folder over /run/frr too, where some releases' daemons keep
  // sockets at fixed paths (10.3's mgmtd: /run/frr/mgmtd_fe.sock): writable like the folder.
  if (!c.writable.empty()) c.writable.push_back("/run/frr");
  c.mount_ns = container_mount_ns(node);
}

std::optional<std::map<std::string, std::string>> split_generated_config(
    const std::string& config, const std::vector<std::string>& daemons) {
  std::map<std::string, std::string> out;
  for (const auto& d : daemons) out[d];
  auto has = [&](const std::string& d) { return out.count(d) > 0; };
  std::istringstream in(config);
  std::string line;
  std::string* block = nullptr;  // the daemon text an open interface/router block goes to
  auto starts = [&](const char* p) { return line.rfind(p, 0) == 0; };
  while (std::getline(in, line)) {
    if (block) {
      *block += line + "\n";
      if (line == "exit") block = nullptr;  // a top-level exit closes the block
      continue;
    }
    if (line.empty() || line[0] == '!' || line == "end" || starts("frr defaults ") ||
        line == "service integrated-vtysh-config")
      continue;
    if (starts("hostname ")) {
      for (auto& [d, text] : out) text += line + "\n";
    } else if (line == "ip forwarding" || line == "ipv6 forwarding" || starts("zebra ") ||
               starts("no zebra ") || starts("interface ")) {
      if (!has("zebra")) return std::nullopt;
      out["zebra"] += line + "\n";
      if (starts("interface ")) block = &out["zebra"];
    } else if (starts("router bgp ")) {
      if (!has("bgpd")) return std::nullopt;
      out["bgpd"] += line + "\n";
      block = &out["bgpd"];
    } else if (starts("ip route ") || starts("ipv6 route ")) {
      if (!has("staticd")) return std::nullopt;
      out["staticd"] += line + "\n";
    } else {
      return std::nullopt;
    }
  }
  if (block) return std::nullopt;  // a block without its exit: not ours
  return out;
}

std::string daemon_config_path(const plan::Node& node, const std::string& daemon) {
  return node.run_dir + "/" + daemon + ".conf";
}

int fd_limit(const plan::Node& node) { return 256 + 4 * static_cast<int>(node.interfaces.size()); }

std::vector<std::string> daemon_argv(const plan::Node& node, const std::string& daemon,
                                     bool own_config) {
  const std::string& d = node.run_dir;
  std::vector<std::string> argv = {daemon_path(daemon),
          "-F",
          node.frr_profile,
          "-f",
          own_config ? daemon_config_path(node, daemon) : "/dev/null",
          "-i",
          d + "/" + daemon + ".pid",
          "-z",
          d + "/zserv.api",
          "--vty_socket",
          d,
          "-P",
          "0",
          "--limit-fds",
          std::to_string(fd_limit(node)),
          "--log",
          "file:" + d + "/" + daemon + ".log",
          "--log-level",
          "info"};
  // bfdd's control socket defaults to one path for the whole machine (/var/run/frr/bfdd.sock):
  // a second node's bfdd would fail to bind it. Each node keeps its own (FRR docs, "BFD",
  // --bfdctl). FRR 10.2 removed the socket and the option with it: 10.3's bfdd refuses it.
  if (daemon == "bfdd" && frr_has_bfdctl(node))
    argv.insert(argv.end(), {"--bfdctl", d + "/bfdd.sock"});
  // Releases differ (measured on Debian's 7.5.1 and 10.3): with mgmtd (9.0+), mgmtd and staticd
  // refuse -f (their configuration comes through mgmtd); 7.5 has no --limit-fds.
  if (frr_has_mgmtd(node) && (daemon == "mgmtd" || daemon == "staticd"))
    argv.erase(argv.begin() + 3, argv.begin() + 5);
  if (const int major = frr_major(node); major != 0 && major < 8)
    if (auto it = std::find(argv.begin(), argv.end(), "--limit-fds"); it != argv.end())
      argv.erase(it, it + 2);
  return argv;
}

Result<nlohmann::json> show_json(const plan::Node& node, const std::string& daemon,
                                 const std::string& command, std::chrono::milliseconds timeout) {
  auto what = "node " + node.name + ": " + daemon + " '" + command + "'";
  const std::string socket = node.run_dir + "/" + daemon + ".vty";
  // A release that prints no JSON for the command (FRR 7.5's ospf6d) is asked for its text,
  // read into the JSON later releases print (runtime/ospf6_text.hpp).
  TextReader reader = nullptr;
  const std::string text_command = text_instead_of_json(frr_major(node), daemon, command, &reader);
  const std::string& asked = text_command.empty() ? command : text_command;
  auto r = vty_command(socket, asked, timeout);
  // Some daemons install their `show` commands in ENABLE_NODE only (FRR 8.4's bfdd: `show bfd
  // peers`), which a fresh connection is not in; vtysh sends `enable` first, and so do we then.
  constexpr int kCmdErrNoMatch = 2;  // FRR lib/command.h CMD_ERR_NO_MATCH
  if (r && r->status == kCmdErrNoMatch) r = vty_commands(socket, {"enable", asked}, timeout);
  if (!r) return r.error().with_context("node " + node.name);
  if (r->status != 0) {
    std::string msg = r->output;
    while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
    return harness_error(what + ": FRR answered " + std::to_string(r->status) + ": " + msg);
  }
  if (reader) return ok(reader(r->output));
  // Some commands print nothing at all where their feature is off (`show evpn vni json` in a
  // zebra that EVPN never enabled): that is an answer, null.
  if (r->output.find_first_not_of(" \r\n") == std::string::npos) return ok(nlohmann::json());
  try {
    return ok(nlohmann::json::parse(r->output));
  } catch (const nlohmann::json::exception& e) {
    return harness_error(what + ": output is not JSON: " + r->output.substr(0, 200));
  }
}

Result<nlohmann::json> ip_json(proc::ProcessRunner& runner, const std::string& netns,
                               const std::vector<std::string>& args) {
  // `ip` has no FDB command: iproute2's `bridge` reads it, with the same -n and -j.
  const bool fdb = !args.empty() && args[0] == "fdb";
  std::vector<std::string> argv = {fdb ? "bridge" : "ip", "-n", netns, "-j"};
  argv.insert(argv.end(), args.begin(), args.end());
  proc::Command c{argv, "", std::chrono::seconds(10)};
  auto r = proc::run_checked(runner, c, "netns " + netns);
  if (!r) return r.error();
  try {
    if (r->out.find_first_not_of(" \n") == std::string::npos) return ok(nlohmann::json::array());
    return ok(nlohmann::json::parse(r->out));
  } catch (const nlohmann::json::exception& e) {
    return harness_error("netns " + netns + ": `ip -j` output is not JSON");
  }
}

std::string frr_version(proc::ProcessRunner& runner) {
  proc::Command c{{daemon_path("zebra"), "--version"}, "", std::chrono::seconds(5)};
  auto r = runner.run(c);
  if (!r || r->exit_code != 0) return "unknown";
  // "zebra version 8.4.4" on the first line.
  auto line = r->out.substr(0, r->out.find('\n'));
  auto sp = line.rfind(' ');
  return sp == std::string::npos ? line : line.substr(sp + 1);
}

Result<void> frr_reload(proc::ProcessRunner& runner, const plan::Node& n,
                        const std::string& config_path, bool test, std::string* out) {
  // A container node's frr-reload.py sees its run folder, not this machine's /tmp: the file
  // goes there first.
  TempDir tmp(node_temp_parent(n));
  std::string path = config_path;
  if (!n.container.name.empty()) {
    auto text = read_file(config_path);
    if (!text) return text.error();
    path = tmp.path + "/reload.conf";
    if (auto w = write_file(path, *text); !w) return w.error();
  }
  proc::Command c{
      {"/usr/lib/frr/frr-reload.py", test ? "--test" : "--reload", "--stdout", "--bindir",
       "/usr/bin", "--confdir", n.run_dir, "--rundir", n.run_dir, "--vty_socket", n.run_dir, path},
      "",
      std::chrono::seconds(120)};
  c.hostname = n.name;  // vtysh shows its host's name as `hostname`: make it the node's
  // What the lines it applies write stays in the node's run folder (where frr-reload.py keeps
  // its own temporary files too): topology/host_paths.hpp.
  c.writable = {n.run_dir};
  use_node_programs(n, c);  // a container node's frr-reload.py and vtysh are its image's
  auto r = runner.run(c);
  // frr-reload.py can exit non-zero on a pass whose lines partly needed others applied first
  // ("Create the bgp interface first") and still leave the node as the file says; a second run
  // applies what is left and, with nothing left, succeeds. A line FRR refuses fails both.
  if (!test && r && r->exit_code != 0 && !cancel_requested()) r = runner.run(c);
  if (!r) return r.error().with_context("node " + n.name + ": frr-reload.py");
  if (out) *out = r->out;
  if (r->exit_code != 0) {
    // frr-reload.py colours its log lines for a terminal (ESC [ ... m): not for a report.
    static const std::regex kAnsi("\x1b\\[[0-9;]*[A-Za-z]");
    std::string msg = std::regex_replace(r->err + r->out, kAnsi, "");
    while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
    return input_error("node " + n.name + ": frr-reload.py exit " + std::to_string(r->exit_code) +
                       ": " + msg);
  }
  // Some BGP settings apply only to routes exchanged afterwards (RFC 8212's `bgp
  // ebgp-requires-policy`, seen here: restoring it left the peer's routes withdrawn). A soft
  // clear re-runs inbound and outbound policy without dropping a session, so the node behaves
  // as its new configuration says (FRR's docs, "clear bgp * soft").
  // Sent to bgpd's vty socket, where vtysh would send it (bgpd alone has the command), without
  // a vtysh process (~70 ms of CPU).
  if (!test && std::find(n.daemons.begin(), n.daemons.end(), "bgpd") != n.daemons.end()) {
    auto clear = vty_commands(n.run_dir + "/bgpd.vty", {"enable", "clear bgp * soft"},
                              std::chrono::seconds(30));
    if (!clear) return clear.error().with_context("node " + n.name + ": clear bgp * soft");
    if (clear->status != 0)
      return harness_error("node " + n.name + ": clear bgp * soft: FRR answered " +
                           std::to_string(clear->status) + ": " + trim_end(clear->output));
  }
  return {};
}

}  // namespace twin::runtime
