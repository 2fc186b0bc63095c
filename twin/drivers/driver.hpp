#pragma once
// The node-driver seam: everything that differs between ways of running a node lives behind
// NodeDriver, one implementation per way (drivers/registry.hpp lists them):
//   netns-frr   a network namespace running the image's FRR daemons (the embedded default)
//   netns-host  a network namespace with addresses and routes only (a server)
//   libvirt     a QEMU VM through libvirt; its namespace only holds the host ends of its wires
// Code above the drivers (validate, engine, gate, drill, cli) never asks "is this a VM?" or which
// backend a node has: it asks the registry for the node's driver and calls it, or asks the
// driver what it can do (manages_frr, ports_in_namespace, packet_namespace,
// links_change_live). Below the drivers (topology, plan) what a node can do is image-profile
// data (ImageProfile::boots_vm, the plan node's daemons). Drivers are stateless and thread-safe;
// every call gets what it acts on (the node, the runner, the lab's record) as arguments.
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <utility>
#include <vector>

#include "twin/core/error.hpp"
#include "twin/plan/plan.hpp"
#include "twin/proc/runner.hpp"
#include "twin/runtime/netlink.hpp"
#include "twin/runtime/ping.hpp"
#include "twin/state/state.hpp"

namespace twin::drivers {

// One short line per event ("VM leaf1 ready in 6.1 s"); the CLI prints them to stderr.
using Progress = std::function<void(const std::string&)>;

// The lab's record while nodes are built or removed. `add` appends resources to the state and
// saves it before the caller creates them (the rule `down` relies on, also after a crash);
// `note` appends without saving, for processes that already run inside the lab's cgroup (the
// cgroup, saved before any process started, is how `down` finds them until the next save).
// Thread-safe. `save` writes the state where `down` finds it (state::save_state); unit tests
// pass one that keeps it in memory.
class Record {
 public:
  using Saver = std::function<Result<void>(const state::State&)>;
  explicit Record(state::State& st, Saver save = state::save_state)
      : st_(st), save_(std::move(save)) {}
  Result<void> add(std::vector<state::Resource> rs);
  void note(state::Resource r);
  // Drops a resource that is gone (removed by its creator before the lab was up) and saves.
  Result<void> forget(const std::string& kind, const std::string& name);
  // Removes the resources of `kind` that belong to `node` from the record (not saved) and
  // returns them: what a restart stops before it notes the new processes.
  std::vector<state::Resource> take(const std::string& kind, const std::string& node);
  Result<void> save();
  // The lab's cgroup v2 folder ("" before `up` made one).
  [[nodiscard]] std::string cgroup() const;
  state::State& state() { return st_; }

 private:
  state::State& st_;
  Saver save_;
  mutable std::mutex mu_;
};

// Choices of the user that drivers act on (twin up's options).
struct DriverSettings {
  int parallel = 4;                            // nodes acted on at once
  std::string libvirt_uri = "qemu:///system";  // VM nodes: the libvirt connection
  // VM nodes: where the test-vm image lives, booted once to see whether KVM works here.
  std::string trial_image_dir = "/var/lib/twin/images/test-vm";
};

// What a driver may use while it builds or removes its nodes.
struct BuildContext {
  proc::ProcessRunner& runner;
  Record& record;
  Progress progress;
  DriverSettings settings;
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  // Work a driver began in begin_create, by driver name, owned here until that driver's create
  // joins it (reconcile drops what is left before it returns an error: dropping joins).
  std::map<std::string, std::shared_ptr<void>> begun;
};

// What `down` removed and what it could not (appended to, never thrown).
struct Teardown {
  int vms_destroyed = 0;
  std::vector<std::string> problems;
  // Recorded resources still there after their removal failed: `down` keeps them in the lab's
  // state file (nothing else), so the next `down` tries again instead of forgetting them.
  std::vector<state::Resource> left;
};

class NodeDriver {
 public:
  virtual ~NodeDriver() = default;
  // "netns-frr" | "netns-host" | "libvirt"
  [[nodiscard]] virtual const char* name() const = 0;

  // ---- Building and removing nodes. engine/reconcile.cpp calls these in this order, each with
  // the nodes of this driver only (plan order), after the namespaces and veths exist.

  // Before the lab is claimed: what these nodes need from the host (programs, images, a
  // hypervisor); may complete the plan's nodes (a VM's libvirt URI). Creates nothing of the
  // lab. Errors: kEnvironment (missing piece), kInput (missing file).
  virtual Result<void> preflight(std::vector<plan::Node*>& nodes, const DriverSettings& settings,
                                 proc::ProcessRunner& runner) const;
  // Once the lab's record exists, before any namespace: decisions that may need resources of
  // their own, recorded through ctx (a VM's accelerator, after a trial boot).
  virtual Result<void> prepare(std::vector<plan::Node*>& nodes, BuildContext& ctx) const;
  // Sysctls (path under /proc/sys, value) pinned in the node's namespace before links exist.
  [[nodiscard]] virtual std::vector<std::pair<std::string, std::string>> namespace_sysctls(
      const plan::Node& node) const = 0;
  // `ip -batch` lines run in the node's namespace once its links are up ("" = none): the
  // whole node's addresses and routes, or with `only` the addresses on those interfaces (links
  // added to a running lab).
  [[nodiscard]] virtual std::string address_script(const plan::Node& node,
                                                   const std::vector<std::string>& only) const;
  // `ip -batch` lines that turn a running node's tenant devices (VTEP: VXLAN devices, bridges)
  // from those of `from` into those of `to`, the same node in two plans; "" = nothing to do
  // (the default: a VM's NOS builds its own).
  [[nodiscard]] virtual std::string vtep_change_script(const plan::Node& from,
                                                       const plan::Node& to) const;
  // The tenant devices the running node's kernel has (wiring::vnis_in_kernel), for a change
  // that edits them and for its rollback. Errors: the node could not be read, or its driver
  // builds none (the default).
  virtual Result<std::vector<plan::Vni>> running_vnis(const plan::Node& node,
                                                      proc::ProcessRunner& runner) const;
  // The node's run folder and the files its processes read (FRR configs). Idempotent.
  virtual Result<void> write_files(const plan::Node& node) const;
  // Once the nodes' namespaces exist, before their links: begins creating what create()
  // finishes, on a thread of its own while twin wires the links (work that mostly waits on
  // another program: a container engine), recorded first; kept in ctx.begun. Default: nothing.
  virtual Result<void> begin_create(const std::vector<const plan::Node*>& nodes,
                                    BuildContext& ctx) const;
  // Creates what runs beside the namespaces (VM domains and their taps), recorded first.
  virtual Result<void> create(const std::vector<const plan::Node*>& nodes,
                              BuildContext& ctx) const;
  // Starts the node's processes in the lab's cgroup, each noted in the record; returns how many.
  virtual Result<int> start(const plan::Node& node, BuildContext& ctx) const;
  // Waits until every node is ready (a VM's console shows its ready pattern), at most until
  // ctx.deadline. Errors name the node and what it last said.
  virtual Result<void> wait_ready(const std::vector<const plan::Node*>& nodes,
                                  BuildContext& ctx) const;
  // `down`: removes what this driver recorded beside namespaces and processes (domains, taps,
  // containers); what it could not remove goes to out.left with the problem.
  virtual void remove(const state::State& st, proc::ProcessRunner& runner, Teardown& out) const;
  // Whether the node's interfaces are the kernel's of its namespace (twin sets their admin
  // state, MTU and addresses there, and the kernel gives them IPv6 link-local addresses); false
  // where they are a guest's and the namespace holds only the host ends of its wires (a VM).
  [[nodiscard]] virtual bool ports_in_namespace() const { return true; }
  // Whether a running lab can gain, lose or re-MTU this node's links (a VM's NICs are fixed
  // while it runs: no hot-plug here).
  [[nodiscard]] virtual bool links_change_live() const { return true; }
  // How long the node may take to be ready once started (a NOS under TCG: minutes); `up`
  // extends its overall timeout to cover the longest.
  [[nodiscard]] virtual std::chrono::seconds ready_timeout(const plan::Node&) const {
    return std::chrono::seconds(0);
  }

  // ---- A running node.

  // A kernel table of the node as `ip -j` JSON (runtime/netlink.hpp), wherever its interfaces
  // are. `how` (may be null) receives what was asked, for the probe log.
  virtual Result<nlohmann::json> kernel_table(const plan::Node& node, runtime::KernelTable table,
                                              std::string* how) const = 0;
  // `ip -j <args>` on the node: the tables above in-process, anything else through `ip`.
  virtual Result<nlohmann::json> ip_json(const plan::Node& node,
                                         const std::vector<std::string>& args,
                                         proc::ProcessRunner& runner, std::string* how) const = 0;
  // `command` (a `show ... json`) answered by the node's FRR `daemon`. Errors: no FRR there.
  virtual Result<nlohmann::json> frr_json(const plan::Node& node, const std::string& daemon,
                                          const std::string& command, std::string* how) const = 0;
  // The network namespace from which the harness sends packets as this node (the gate's probe
  // stream), or "" where it cannot (default; a VM's namespace holds only its wires' host ends).
  [[nodiscard]] virtual std::string packet_namespace(const plan::Node&) const { return ""; }
  // ICMP echo from the node (runtime/ping.hpp semantics); results in request order.
  virtual std::vector<runtime::PingResult> ping(
      const plan::Node& node, const std::vector<runtime::PingRequest>& requests) const = 0;
  // Applies `ip -batch` lines to the node's interfaces (MTU, admin state, addresses). Errors
  // carry `what` as context.
  virtual Result<void> change_interfaces(const plan::Node& node, const std::string& script,
                                         const std::string& what,
                                         proc::ProcessRunner& runner) const = 0;
  // The node's ports as `ip -j link` JSON for `twin status` (a VM without an agent: the host
  // ends of its wires, which carry the same names).
  virtual Result<nlohmann::json> port_table(const plan::Node& node) const;
  // `ip -j <args>` for --artifacts: where the node's interfaces are when the driver can read
  // them there, else in its namespace (a VM without an agent: the host ends of its wires).
  virtual Result<nlohmann::json> artifact_ip_json(const plan::Node& node,
                                                  const std::vector<std::string>& args,
                                                  proc::ProcessRunner& runner) const;
  // Extra facts for `twin status`, as sections merged into the node's entry: {"vm": {domain,
  // accelerator, console, running}} or {"container": {name, image, frr_version, running}};
  // null when none. A section with "running": false marks the lab degraded.
  [[nodiscard]] virtual nlohmann::json status(const plan::Node& node) const;
  // Everything the running node must have running (its daemons, its VM) and whether it does,
  // from `recorded` (the lab record's resources of this node): what every validation checks
  // first (the `node` family), so a dead daemon is a failed test, never a silent pass.
  // Default: nothing (a host runs no process of twin's).
  [[nodiscard]] virtual std::vector<state::ProcessHealth> process_health(
      const plan::Node& node, const std::vector<state::Resource>& recorded) const;

  // FRR configuration of the node, as the gate snapshots, changes and restores it. Nodes
  // whose FRR twin does not run itself (hosts; a NOS inside a VM) answer kUsage.
  [[nodiscard]] virtual bool manages_frr(const plan::Node& node) const;
  // `show running-config` without vtysh's banner lines.
  virtual Result<std::string> running_config(const plan::Node& node,
                                             proc::ProcessRunner& runner) const;
  // Applies frr.conf-syntax lines as they are (`vtysh -f`); any rejected line fails, named by
  // its line in `file` when first_line > 0 (kInput).
  virtual Result<void> apply_config(const plan::Node& node, const std::string& text,
                                    int first_line, const std::string& file,
                                    proc::ProcessRunner& runner) const;
  // Makes the running configuration equal to the file at `path`, applying only the difference
  // (frr-reload.py); `test` only computes it into `out`.
  virtual Result<void> reload_config(const plan::Node& node, const std::string& path, bool test,
                                     std::string* out, proc::ProcessRunner& runner) const;

  // Lines of `config` (frr.conf syntax) that the node's own FRR release refuses, by its parser
  // (`vtysh -C`), as (line, FRR's words); empty when it parses: what an image step checks
  // before it touches a node. Errors: kUsage where twin does not run the node's FRR (the
  // default); the check not running (kHarness).
  virtual Result<std::vector<std::pair<int, std::string>>> refused_lines(
      const plan::Node& node, const std::string& config, proc::ProcessRunner& runner) const;

  // Kernel settings of the running node's network namespace, by sysctl(8) name
  // ("net.ipv4.ip_forward"): what the `sysctl` change step reads, sets and restores. Errors: a
  // key this kernel does not have (kInput, naming it); a node whose kernel twin does not reach
  // (kUsage: the default, e.g. a VM, whose namespace holds only the host ends of its wires).
  virtual Result<std::string> read_sysctl(const plan::Node& node, const std::string& key) const;
  virtual Result<void> write_sysctl(const plan::Node& node, const std::string& key,
                                    const std::string& value) const;

  // The node's running FRR configuration becomes its startup configuration (what `write
  // memory` does in integrated mode: the node's frr.conf in its run folder), so a restart of
  // its daemons boots from it. Idempotent. Errors: kUsage where twin does not run the node's
  // FRR (hosts, a NOS in a VM), or its vty not answering.
  virtual Result<void> save_config(const plan::Node& node, proc::ProcessRunner& runner) const;
  // `config` (a running configuration, e.g. a baseline's) becomes the node's startup
  // configuration, replaced atomically: what the restore ladder boots a node from. Errors:
  // kUsage where twin does not run the node's FRR (the default).
  // The node's startup configuration: what it saved (`write memory`) and would boot from
  // after a reboot. Errors: kUsage where twin does not run the node's FRR (the default); the
  // file unreadable (kHarness).
  virtual Result<std::string> startup_config(const plan::Node& node) const;
  virtual Result<void> write_startup_config(const plan::Node& node,
                                            const std::string& config) const;
  // Stops the node's routing daemons: the processes recorded for it, by PID and start time
  // only (SIGTERM, then SIGKILL after 3 s), taken out of ctx.record (not saved: the caller
  // saves). What the failure drill does to a node, and the first half of a restart. Errors:
  // kUsage as save_config; a daemon that does not stop (kHarness, still recorded).
  virtual Result<void> stop_routing(const plan::Node& node, BuildContext& ctx) const;
  // Starts the node's routing daemons booting from the saved startup configuration
  // (save_config), as after a reboot; the new PIDs are noted in ctx.record (not saved).
  // Returns the number of daemons started. Errors: kUsage as save_config; a daemon that does
  // not start (kHarness); FRR refusing the saved configuration (kInput).
  virtual Result<int> start_routing(const plan::Node& node, BuildContext& ctx) const;
  // A running node's routing daemons become `to`'s (same node, from.daemons -> to.daemons):
  // what `to` no longer lists stopped, what it adds started with no configuration (the lines
  // that needed it follow). The PIDs go in and out of ctx.record (not saved). Errors: kUsage
  // where the daemons differ and twin does not run them; a daemon that does not stop or start
  // (kHarness).
  virtual Result<void> change_daemons(const plan::Node& from, const plan::Node& to,
                                      BuildContext& ctx) const;
  // stop_routing then start_routing (the restart check).
  virtual Result<int> restart_routing(const plan::Node& node, BuildContext& ctx) const;
  // One of the node's routing daemons restarted from the node's saved startup configuration,
  // the others left running (`twin restart NODE --daemon D`); the new PID noted in ctx.record
  // (not saved). Errors: kUsage where twin does not run the node's daemons (the default) or the
  // node does not run `daemon`; kHarness for a daemon that does not stop or start; kInput when
  // FRR refuses a line of the saved configuration.
  virtual Result<void> restart_daemon(const plan::Node& node, const std::string& daemon,
                                      BuildContext& ctx) const;

  // `twin exec` / `twin shell`: runs `argv` (empty = an interactive shell) inside the node, in
  // the lab's cgroup. A namespace node replaces the calling process (returns only on failure,
  // with the exit code to use); a VM with an agent returns the guest's exit code.
  virtual int exec(const state::State& st, const plan::Node& node,
                   const std::vector<std::string>& argv) const = 0;
  // `twin console`: whether the node has a serial console (VMs), and the libvirt URI and
  // domain to attach to.
  [[nodiscard]] virtual bool has_console() const { return false; }
};

}  // namespace twin::drivers
