// twin exec / twin shell: run a command inside a node.
//
// Unix socket paths ignore network namespaces, so entering the netns alone would leave a plain
// `vtysh` talking to the host's FRR. The command therefore gets a private mount namespace in
// which the node's run folder is bind-mounted over /var/run/frr (sockets) and /etc/frr
// (frr.conf, vtysh.conf): vtysh reaches that node's daemons and nothing else. A private UTS
// namespace carries the node's name as hostname, so prompts show where you are.
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <iostream>

#include "twin/cli/commands.hpp"
#include "twin/engine/state.hpp"
#include "twin/plan/plan.hpp"
#include "twin/runtime/agent.hpp"

namespace twin::cli {

namespace {
int sys_fail(const std::string& what) { return fail(what + ": " + std::strerror(errno), 3); }
}  // namespace

int run_exec(const ExecOptions& o) {
  auto st = engine::load_lab(o.lab);
  if (!st) return fail(st.error().message, exit_code(st.error()));
  const std::string& lab = st->lab;
  const plan::Node* node = st->plan.find(o.node);
  if (!node) {
    std::string names;
    for (const auto& n : st->plan.nodes) names += (names.empty() ? "" : ", ") + n.name;
    return fail("lab " + lab + " has no node '" + o.node + "'; nodes: " + names, 2);
  }
  if (plan::is_vm(*node)) {
    if (node->vm.agent == "twin") {
      if (o.command.empty())
        return fail(
            "node " + o.node + " is a VM: `twin console " + o.node + "` attaches to its shell", 2);
      std::string line;
      for (const auto& a : o.command) line += (line.empty() ? "" : " ") + runtime::sh_quote(a);
      auto r = runtime::agent_exec(node->vm.agent_socket, line, std::chrono::seconds(120));
      if (!r) return fail(r.error().message, exit_code(r.error()));
      std::cout << r->output << (r->output.empty() ? "" : "\n");
      return r->exit_code;
    }
    // Without an agent the command runs in the VM's namespace, where mgmt0 (when the image has
    // a management NIC) reaches the guest's management port, e.g. for ssh.
    std::cerr << "twin: node " << o.node << " is a VM without twin's guest agent; running in "
              << "its namespace " << node->netns << " (the host side of its ports)\n";
  }
  std::string ns_path = "/run/netns/" + node->netns;
  int ns_fd = ::open(ns_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (ns_fd < 0) return sys_fail("node " + o.node + ": opening " + ns_path);

  // Join the lab's cgroup first: whatever the command leaves running (iperf, tcpdump, a
  // background job) is then killed by `twin down` with the rest of the lab.
  for (const auto& r : st->resources) {
    if (r.kind != "cgroup") continue;
    std::string procs = r.name + "/cgroup.procs";
    int fd = ::open(procs.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0 || ::write(fd, "0\n", 2) != 2) {
      if (fd >= 0) ::close(fd);
      return sys_fail("joining the lab's cgroup " + r.name);
    }
    ::close(fd);
  }
  if (::unshare(CLONE_NEWNS | CLONE_NEWUTS) != 0) return sys_fail("unshare");
  // Keep our mounts from propagating back to the host.
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr) != 0)
    return sys_fail("making / a slave mount");
  if (node->kind == "frr") {
    for (const char* target : {"/run/frr", "/etc/frr"}) {
      if (!std::filesystem::is_directory(target))
        return fail(std::string(target) + " does not exist (is the frr package installed?)", 3);
      if (::mount(node->run_dir.c_str(), target, nullptr, MS_BIND, nullptr) != 0)
        return sys_fail(std::string("bind-mounting ") + node->run_dir + " on " + target);
    }
  }
  if (::setns(ns_fd, CLONE_NEWNET) != 0) return sys_fail("entering " + ns_path);
  ::close(ns_fd);
  // /sys lists the interfaces of the netns that mounted it (as `ip netns exec` does).
  if (::umount2("/sys", MNT_DETACH) == 0) ::mount(node->name.c_str(), "/sys", "sysfs", 0, nullptr);
  ::sethostname(node->name.c_str(), node->name.size());
  ::setenv("TWIN_LAB", lab.c_str(), 1);
  ::setenv("TWIN_NODE", node->name.c_str(), 1);

  std::vector<std::string> cmd = o.command;
  if (cmd.empty()) {
    const char* sh = std::getenv("SHELL");
    cmd = {sh && *sh ? sh : "/bin/bash"};
    std::cerr << "twin: shell in " << lab << "/" << node->name << " (netns " << node->netns
              << "); `exit` to leave\n";
  }
  std::vector<char*> argv;
  for (auto& a : cmd) argv.push_back(a.data());
  argv.push_back(nullptr);
  ::execvp(argv[0], argv.data());
  return fail("cannot run '" + cmd[0] + "': " + std::strerror(errno), errno == ENOENT ? 127 : 126);
}

}  // namespace twin::cli
