#include "twin/runtime/frr.hpp"

#include <nlohmann/json.hpp>

namespace twin::runtime {

std::string daemon_path(const std::string& daemon) { return "/usr/lib/frr/" + daemon; }

std::vector<std::string> daemon_argv(const plan::Node& node, const std::string& daemon) {
  const std::string& d = node.run_dir;
  return {daemon_path(daemon),
          "-d",
          "-F",
          node.frr_profile,
          "-f",
          "/dev/null",
          "-i",
          d + "/" + daemon + ".pid",
          "-z",
          d + "/zserv.api",
          "--vty_socket",
          d,
          "-P",
          "0",
          "--log",
          "file:" + d + "/" + daemon + ".log",
          "--log-level",
          "info"};
}

std::vector<std::string> boot_config_argv(const plan::Node& node) {
  return {"vtysh", "-b", "--config_dir", node.run_dir, "--vty_socket", node.run_dir};
}

Result<nlohmann::json> show_json(proc::ProcessRunner& runner, const plan::Node& node,
                                 const std::string& daemon, const std::string& command,
                                 std::chrono::milliseconds timeout) {
  proc::Command c{
      {"vtysh", "--vty_socket", node.run_dir, "-d", daemon, "-c", command}, "", timeout};
  auto what = "node " + node.name + ": " + daemon + " '" + command + "'";
  auto r = proc::run_checked(runner, c, what);
  if (!r) return r.error();
  try {
    return ok(nlohmann::json::parse(r->out));
  } catch (const nlohmann::json::exception& e) {
    return harness_error(what + ": output is not JSON: " + r->out.substr(0, 200));
  }
}

Result<nlohmann::json> ip_json(proc::ProcessRunner& runner, const std::string& netns,
                               const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"ip", "-n", netns, "-j"};
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
  proc::Command c{{"/usr/lib/frr/frr-reload.py", test ? "--test" : "--reload", "--stdout",
                   "--bindir", "/usr/bin", "--confdir", n.run_dir, "--rundir", n.run_dir,
                   "--vty_socket", n.run_dir, config_path},
                  "",
                  std::chrono::seconds(120)};
  c.hostname = n.name;  // vtysh shows its host's name as `hostname`: make it the node's
  auto r = runner.run(c);
  if (!r) return r.error().with_context("node " + n.name + ": frr-reload.py");
  if (out) *out = r->out;
  if (r->exit_code != 0) {
    std::string msg = r->err + r->out;
    while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
    return input_error("node " + n.name + ": frr-reload.py exit " + std::to_string(r->exit_code) +
                       ": " + msg);
  }
  return {};
}

}  // namespace twin::runtime
