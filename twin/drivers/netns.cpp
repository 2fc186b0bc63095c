#include "twin/drivers/netns.hpp"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "twin/core/util.hpp"
#include "twin/drivers/container.hpp"
#include "twin/drivers/frr_node.hpp"
#include "twin/runtime/frr.hpp"
#include "twin/runtime/frr_check.hpp"
#include "twin/runtime/frr_config.hpp"
#include "twin/wiring/wiring.hpp"

namespace fs = std::filesystem;

namespace twin::drivers {

int exec_in_netns(const state::State& st, const std::string& netns, const std::string& hostname,
                  const std::vector<std::pair<std::string, std::string>>& binds,
                  const std::vector<std::string>& argv, const std::string& mount_ns) {
  auto sys_fail = [](const std::string& what) {
    std::cerr << "twin: " << what << ": " << std::strerror(errno) << "\n";
    return 3;
  };
  std::string ns_path = "/run/netns/" + netns;
  int ns_fd = ::open(ns_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (ns_fd < 0) return sys_fail("node " + hostname + ": opening " + ns_path);

  // Join the lab's cgroup first: whatever the command leaves running (iperf, tcpdump, a
  // background job) is then killed by `twin down` with the rest of the lab.
  for (const auto& r : st.resources) {
    if (r.kind != "cgroup") continue;
    std::string procs = r.name + "/cgroup.procs";
    int fd = ::open(procs.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0 || ::write(fd, "0\n", 2) != 2) {
      if (fd >= 0) ::close(fd);
      return sys_fail("joining the lab's cgroup " + r.name);
    }
    ::close(fd);
  }
  if (!mount_ns.empty()) {
    int mnt_fd = ::open(mount_ns.c_str(), O_RDONLY | O_CLOEXEC);
    if (mnt_fd < 0) return sys_fail("node " + hostname + ": opening " + mount_ns);
    if (::setns(mnt_fd, CLONE_NEWNS) != 0)
      return sys_fail("node " + hostname + ": entering its container's mount namespace");
    ::close(mnt_fd);
  }
  if (::unshare(CLONE_NEWNS | CLONE_NEWUTS) != 0) return sys_fail("unshare");
  // Keep our mounts from propagating back to the host.
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr) != 0)
    return sys_fail("making / a slave mount");
  for (const auto& [source, target] : binds) {
    if (!fs::is_directory(target)) {
      std::cerr << "twin: " << target << " does not exist (is the frr package installed?)\n";
      return 3;
    }
    if (::mount(source.c_str(), target.c_str(), nullptr, MS_BIND, nullptr) != 0)
      return sys_fail("bind-mounting " + source + " on " + target);
  }
  if (::setns(ns_fd, CLONE_NEWNET) != 0) return sys_fail("entering " + ns_path);
  ::close(ns_fd);
  // /sys lists the interfaces of the netns that mounted it (as `ip netns exec` does).
  if (::umount2("/sys", MNT_DETACH) == 0) ::mount(hostname.c_str(), "/sys", "sysfs", 0, nullptr);
  ::sethostname(hostname.c_str(), hostname.size());
  ::setenv("TWIN_LAB", st.lab.c_str(), 1);
  ::setenv("TWIN_NODE", hostname.c_str(), 1);

  std::vector<std::string> cmd = argv;
  if (cmd.empty()) {
    const char* sh = std::getenv("SHELL");
    cmd = {sh && *sh ? sh : "/bin/bash"};
    std::cerr << "twin: shell in " << st.lab << "/" << hostname << " (netns " << netns
              << "); `exit` to leave\n";
  }
  std::vector<char*> args;
  for (auto& a : cmd) args.push_back(a.data());
  args.push_back(nullptr);
  ::execvp(args[0], args.data());
  std::cerr << "twin: cannot run '" << cmd[0] << "': " << std::strerror(errno) << "\n";
  return errno == ENOENT ? 127 : 126;
}

namespace {

// What every namespace node shares: its interfaces are the namespace's.
class NetnsDriver : public NodeDriver {
 public:
  Result<nlohmann::json> kernel_table(const plan::Node& node, runtime::KernelTable table,
                                      std::string* how) const override {
    if (how) *how = "netlink (as ip -j " + runtime::ip_args_of(table) + ")";
    return runtime::kernel_json(node.netns, table);
  }

  Result<nlohmann::json> ip_json(const plan::Node& node, const std::vector<std::string>& args,
                                 proc::ProcessRunner& runner, std::string* how) const override {
    // The tables validators read come over netlink in-process, in `ip -j`'s shape; anything
    // else runs `ip` itself.
    runtime::KernelTable table;
    if (runtime::kernel_table_of(args, &table)) {
      if (how) *how = "netlink (as ip -j " + proc::render(args) + ")";
      return runtime::kernel_json(node.netns, table);
    }
    if (how) *how = "ip -n " + node.netns + " -j " + proc::render(args);
    return runtime::ip_json(runner, node.netns, args);
  }

  Result<nlohmann::json> frr_json(const plan::Node& node, const std::string& daemon,
                                  const std::string& command, std::string* how) const override {
    if (how) *how = daemon + ".vty: " + command;
    return runtime::show_json(node, daemon, command);
  }

  std::vector<runtime::PingResult> ping(
      const plan::Node& node, const std::vector<runtime::PingRequest>& requests) const override {
    return runtime::ping_many(node.netns, requests);
  }

  Result<void> change_interfaces(const plan::Node& node, const std::string& script,
                                 const std::string& what,
                                 proc::ProcessRunner& runner) const override {
    return wiring::run_batch(runner, script, node.netns, what);
  }

  std::string packet_namespace(const plan::Node& node) const override { return node.netns; }
  Result<std::string> read_sysctl(const plan::Node& node, const std::string& key) const override {
    return wiring::read_sysctl(node.netns, key);
  }
  Result<void> write_sysctl(const plan::Node& node, const std::string& key,
                            const std::string& value) const override {
    return wiring::write_sysctl(node.netns, key, value);
  }

  Result<nlohmann::json> port_table(const plan::Node& node) const override {
    if (!fs::exists("/run/netns/" + node.netns))
      return harness_error("namespace " + node.netns + " is missing");
    return kernel_table(node, runtime::KernelTable::kLinks, nullptr);
  }
};

class FrrDriver : public NetnsDriver {
 public:
  const char* name() const override { return "netns-frr"; }

  std::vector<std::pair<std::string, std::string>> namespace_sysctls(
      const plan::Node& node) const override {
    return wiring::namespace_sysctls(node);
  }
  Result<void> preflight(std::vector<plan::Node*>& nodes, const DriverSettings&,
                         proc::ProcessRunner&) const override {
    return frr_preflight(nodes);
  }
  Result<void> write_files(const plan::Node& node) const override {
    return write_frr_files(node);
  }
  Result<int> start(const plan::Node& node, BuildContext& ctx) const override {
    return start_frr_daemons(node, ctx);
  }
  // A VTEP's VXLAN devices and bridges (zebra learns the VNIs from them); zebra sets the
  // addresses from frr.conf. Links added to a running lab bring no VNI.
  std::string address_script(const plan::Node& node,
                             const std::vector<std::string>& only) const override {
    return only.empty() ? wiring::vtep_script(node) : "";
  }
  std::string vtep_change_script(const plan::Node& from, const plan::Node& to) const override {
    return wiring::vtep_change_script(from.vnis, to.vnis);
  }
  Result<std::vector<plan::Vni>> running_vnis(const plan::Node& node,
                                              proc::ProcessRunner& runner) const override {
    auto j = runtime::ip_json(runner, node.netns, {"-d", "addr", "show"});
    if (!j) return j.error();
    return wiring::vnis_in_kernel(*j);
  }
  bool manages_frr(const plan::Node& node) const override { return !node.daemons.empty(); }
  Result<std::vector<std::pair<int, std::string>>> refused_lines(
      const plan::Node&, const std::string& config, proc::ProcessRunner& runner) const override {
    TempDir tmp;
    if (tmp.path.empty()) return harness_error("cannot create a temporary folder");
    if (auto w = write_file(tmp.path + "/frr.conf", config); !w) return w.error();
    auto r = runtime::frr_syntax_check(runner, {tmp.path + "/frr.conf"});
    if (!r) return r.error();
    return r->at(0);
  }
  Result<std::string> startup_config(const plan::Node& node) const override {
    // Integrated mode (the node's vtysh.conf): `write memory` writes the node's frr.conf.
    return read_file(node.run_dir + "/frr.conf");
  }
  Result<void> write_startup_config(const plan::Node& node,
                                    const std::string& config) const override {
    return save_frr_config(node, config);
  }
  Result<void> restart_daemon(const plan::Node& node, const std::string& daemon,
                              BuildContext& ctx) const override {
    return restart_frr_daemon(node, daemon, ctx);
  }
  std::vector<state::ProcessHealth> process_health(
      const plan::Node& node, const std::vector<state::Resource>& recorded) const override {
    return frr_process_health(node, recorded);
  }
  Result<void> save_config(const plan::Node& node, proc::ProcessRunner& runner) const override {
    auto cfg = runtime::running_config(runner, node);
    if (!cfg) return cfg.error();
    return save_frr_config(node, *cfg);
  }
  Result<void> stop_routing(const plan::Node& node, BuildContext& ctx) const override {
    return stop_frr_daemons(node, ctx);
  }
  Result<int> start_routing(const plan::Node& node, BuildContext& ctx) const override {
    return boot_frr_daemons(node, ctx);
  }
  Result<void> change_daemons(const plan::Node& from, const plan::Node& to,
                              BuildContext& ctx) const override {
    return change_frr_daemons(from, to, ctx);
  }
  Result<std::string> running_config(const plan::Node& node,
                                     proc::ProcessRunner& runner) const override {
    return runtime::running_config(runner, node);
  }
  Result<void> apply_config(const plan::Node& node, const std::string& text, int first_line,
                            const std::string& file, proc::ProcessRunner& runner) const override {
    auto r = runtime::vtysh_apply(runner, node, text, first_line, file);
    solicit_neighbours(node);  // the lines (even some of them) may have switched advertising on
    return r;
  }
  Result<void> reload_config(const plan::Node& node, const std::string& path, bool test,
                             std::string* out, proc::ProcessRunner& runner) const override {
    auto r = runtime::frr_reload(runner, node, path, test, out);
    if (!test) solicit_neighbours(node);
    return r;
  }
  int exec(const state::State& st, const plan::Node& node,
           const std::vector<std::string>& argv) const override {
    // Unix socket paths ignore network namespaces: the node's run folder over /run/frr
    // (sockets) and /etc/frr (frr.conf, vtysh.conf) makes a plain vtysh reach this node only.
    return exec_in_netns(st, node.netns, node.name,
                         {{node.run_dir, "/run/frr"}, {node.run_dir, "/etc/frr"}}, argv);
  }
};

// FRR from an OCI image (drivers/container.hpp): the namespace, wiring and everything FRR
// does are the netns-frr driver's; the daemons, vtysh and frr-reload.py run inside the
// container (runtime::use_node_programs), which this driver creates, checks and removes.
class ContainerFrrDriver final : public FrrDriver {
 public:
  const char* name() const override { return "container-frr"; }

  Result<void> preflight(std::vector<plan::Node*>& nodes, const DriverSettings&,
                         proc::ProcessRunner& runner) const override {
    return container_preflight(nodes, runner);
  }
  // podman's API service starts here, before the namespaces: it is ready by the time the
  // containers are created (create). TWIN_PODMAN_API=0 keeps to podman's CLI (a podman whose
  // service misbehaves; bench/containers.sh measures both).
  Result<void> prepare(std::vector<plan::Node*>& nodes, BuildContext& ctx) const override {
    const char* api = std::getenv("TWIN_PODMAN_API");
    if (nodes.empty() || (api && std::string(api) == "0")) return {};
    return start_podman_service(ctx);
  }
  Result<void> begin_create(const std::vector<const plan::Node*>& nodes,
                            BuildContext& ctx) const override {
    return begin_containers(nodes, ctx);
  }
  Result<void> create(const std::vector<const plan::Node*>& nodes,
                      BuildContext& ctx) const override {
    for (const auto* n : nodes)
      if (n->container.frr_uid < 0)  // preflight reads the image: `up` runs it, a live add not
        return usage_error("node " + n->name +
                           " runs in a container: it joins a lab at `twin up`, not while the "
                           "lab runs (its image is read before anything is built)");
    if (auto r = create_containers(nodes, ctx); !r) return r;
    // The run folder is the image's user frr's (its ids differ between images; an image step
    // hands a folder written for another over).
    for (const auto* n : nodes)
      if (auto r = adopt_run_dir(*n); !r) return r;
    return {};
  }
  // A container gone since it was made (killed outside twin) is made again before the daemons
  // start: `twin restart` and the restore ladder bring such a node back instead of failing
  // with its daemons already stopped.
  Result<int> start(const plan::Node& node, BuildContext& ctx) const override {
    if (auto r = container_back(node, ctx); !r) return r.error();
    return FrrDriver::start(node, ctx);
  }
  Result<int> start_routing(const plan::Node& node, BuildContext& ctx) const override {
    if (auto r = container_back(node, ctx); !r) return r.error();
    return FrrDriver::start_routing(node, ctx);
  }
  // One daemon of a node whose container is gone would start into a file system no longer
  // there: the whole node restarts, container first.
  Result<void> restart_daemon(const plan::Node& node, const std::string& daemon,
                              BuildContext& ctx) const override {
    if (runtime::container_pid(node) == 0)
      return usage_error("node " + node.name + ": its container " + node.container.name +
                         " is not running; `twin restart " + node.name +
                         "` (the whole node) makes it again");
    return FrrDriver::restart_daemon(node, daemon, ctx);
  }
  void remove(const state::State& st, proc::ProcessRunner& runner, Teardown& out) const override {
    remove_containers(st, runner, out);
  }

 private:
  static Result<void> container_back(const plan::Node& node, BuildContext& ctx) {
    if (runtime::container_pid(node) > 0 || node.container.frr_uid < 0) return {};
    ctx.progress("node " + node.name + ": its container " + node.container.name +
                 " is not running: making it again");
    if (auto r = recreate_container(node, ctx); !r)
      return r.error().with_context("node " + node.name);
    return {};
  }

 public:
  Result<std::vector<std::pair<int, std::string>>> refused_lines(
      const plan::Node& node, const std::string& config,
      proc::ProcessRunner& runner) const override {
    return check_config_in_image(runner, node, config);
  }
  std::vector<state::ProcessHealth> process_health(
      const plan::Node& node, const std::vector<state::Resource>& recorded) const override {
    auto h = FrrDriver::process_health(node, recorded);
    h.insert(h.begin(), container_health(node, recorded));
    return h;
  }
  nlohmann::json status(const plan::Node& node) const override {
    return {{"container",
             {{"name", node.container.name},
              {"image", node.container.image},
              {"image_id", node.container.image_id.substr(0, 12)},
              {"frr_version", node.container.frr_version},
              {"running", runtime::container_pid(node) > 0}}}};
  }
  int exec(const state::State& st, const plan::Node& node,
           const std::vector<std::string>& argv) const override {
    // The container already has the run folder over /etc/frr and /var/run/frr.
    return exec_in_netns(st, node.netns, node.name, {}, argv, runtime::container_mount_ns(node));
  }
};

class HostDriver final : public NetnsDriver {
 public:
  const char* name() const override { return "netns-host"; }

  std::vector<std::pair<std::string, std::string>> namespace_sysctls(
      const plan::Node& node) const override {
    return wiring::namespace_sysctls(node);
  }
  std::string address_script(const plan::Node& node,
                             const std::vector<std::string>& only) const override {
    return wiring::node_script(node, only);
  }
  Result<nlohmann::json> frr_json(const plan::Node& node, const std::string&, const std::string&,
                                  std::string* how) const override {
    if (how) *how = "(no FRR)";
    return usage_error("node " + node.name + " is a host: it runs no FRR");
  }
  int exec(const state::State& st, const plan::Node& node,
           const std::vector<std::string>& argv) const override {
    return exec_in_netns(st, node.netns, node.name, {}, argv);
  }
};

// A LAN segment: a bridge in the node's namespace, its ports the lab's links to the members.
// The namespace's own stack stays silent (no IPv6, no forwarding): it only switches frames.
class BridgeDriver final : public NetnsDriver {
 public:
  const char* name() const override { return "netns-bridge"; }

  std::vector<std::pair<std::string, std::string>> namespace_sysctls(
      const plan::Node&) const override {
    return wiring::wire_sysctls();
  }
  std::string address_script(const plan::Node& node,
                             const std::vector<std::string>& only) const override {
    return wiring::bridge_script(node, only);
  }
  Result<nlohmann::json> frr_json(const plan::Node& node, const std::string&, const std::string&,
                                  std::string* how) const override {
    if (how) *how = "(no FRR)";
    return usage_error("node " + node.name + " is a bridge (a LAN segment): it runs no FRR");
  }
  int exec(const state::State& st, const plan::Node& node,
           const std::vector<std::string>& argv) const override {
    return exec_in_netns(st, node.netns, node.name, {}, argv);
  }
};

}  // namespace

const NodeDriver& netns_bridge_driver() {
  static const BridgeDriver d;
  return d;
}

const NodeDriver& netns_frr_driver() {
  static const FrrDriver d;
  return d;
}

const NodeDriver& container_frr_driver() {
  static const ContainerFrrDriver d;
  return d;
}

const NodeDriver& netns_host_driver() {
  static const HostDriver d;
  return d;
}

}  // namespace twin::drivers
