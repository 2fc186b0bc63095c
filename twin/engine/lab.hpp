#pragma once
// A lab's lifecycle: up, down, status. `up` records every resource in the state file before
// creating it (state.hpp); `down` removes exactly what was recorded, also after a crash.
// All of a lab's processes live in the lab's own cgroup v2, created and recorded before any
// process starts and killed as a whole on `down` (immune to PID reuse).
#include <chrono>
#include <functional>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "twin/core/error.hpp"
#include "twin/drivers/registry.hpp"
#include "twin/proc/runner.hpp"
#include "twin/state/state.hpp"
#include "twin/topology/model.hpp"

namespace twin::engine {

struct UpOptions {
  std::string name;  // overrides the topology's lab name ("" = keep)
  bool keep_on_failure = false;
  std::chrono::milliseconds timeout{std::chrono::seconds(300)};  // whole `up`, incl. waiting
  // Unless the caller set `timeout` itself, a lab with VMs gets at least the longest VM
  // ready-timeout plus 120 s: a NOS under TCG may take 10 minutes to boot.
  bool timeout_explicit = false;
  bool wait_converged = true;  // wait until every expected BGP session is Established
  std::chrono::milliseconds converge_timeout{std::chrono::seconds(60)};  // ... for at most this
  int parallel = 4;                                                      // nodes started at once
  std::string libvirt_uri = "qemu:///system";  // VM nodes: libvirt connection
  // Where the test-vm image lives, booted once under KVM to see whether KVM works here.
  std::string trial_image_dir = "/var/lib/twin/images/test-vm";
  // A node whose image is not present fails `up` instead of running the closest release
  // present (plan::resolve_images).
  bool strict_images = false;
};

// Progress sink: one short line per event ("daemons started 4/8"). The CLI prints to stderr.
using Progress = std::function<void(const std::string&)>;

struct UpSummary {
  std::string lab;
  int nodes = 0, links = 0, daemons = 0;
  int sessions_expected = 0, sessions_established = 0;
  int adjacencies_expected = 0, adjacencies_full = 0;  // OSPF
  int adjacencies_two_way = 0;  // of adjacencies_full, 2-Way between DROthers on a segment
  double wiring_ms = 0, daemons_ms = 0, converge_ms = 0, total_ms = 0;
  double vms_ms = 0;  // from the last daemon started until every VM was ready
  bool converged = false;
  // "leaf1 swp1 -> spine1: Active", "r1 eth1 -> r2: ExStart/-" when !converged
  std::vector<std::string> not_established;
  // Ports ("spine40 swp19") whose fe80::/64 route the kernel had lost and `up` added back, and
  // those left without a working IPv6 link-local (engine::GrowReport).
  std::vector<std::string> link_local_repaired, link_local_missing;
  // The plan's notes (the one warning channel): a release substituted for the image a node
  // named, a config line twin does not read, ... — what `up --json` carries beside the counts.
  std::vector<Note> notes;
  // "BGP 16/16 sessions Established" and/or "OSPF 6/6 adjacencies Full" (as SessionCount).
  [[nodiscard]] std::string convergence_text() const;
};

// Checks what every lab needs before anything is created: root, veth support in this kernel,
// cgroup v2, and for a lab with tenants vxlan and bridge (vrf with an L3 VNI), each probed in
// a throw-away namespace (what its nodes need, their drivers check). Errors are kEnvironment
// naming the missing piece and who needs it (`up` exits 3).
Result<void> preflight(const plan::Plan& plan, proc::ProcessRunner& runner);

// What a lab's link rates and delays need of the kernel, probed in a throw-away namespace only
// when the lab has them: tbf for `bandwidth:` (missing: kEnvironment), netem for `delay:`.
// Without netem the plan's delays are cleared — the lab runs, and plan.notes says per link what
// was asked and that it runs without the delay (the notes go through `progress` too).
Result<void> shaping_preflight(plan::Plan& plan, proc::ProcessRunner& runner,
                               const Progress& progress);

// Brings up the lab. On failure, on interruption and when `timeout` passes, tears down what was
// made unless keep_on_failure, and returns the error with the failed step as context. When BGP
// does not converge within converge_timeout the lab is kept and the summary says which sessions
// are not Established and adjacencies not Full (converged = false).
Result<UpSummary> up(const topology::Topology& topo, const UpOptions& opts,
                     proc::ProcessRunner& runner, const Progress& progress);
// The same from the topology's plan (plan::make_plan), for a caller that made it already to check
// its inputs against it (twin run, twin exercise start): the plan is made once. `opts.name` is
// not read: the plan names its lab.
Result<UpSummary> up(plan::Plan plan, const UpOptions& opts, proc::ProcessRunner& runner,
                     const Progress& progress);

struct DownReport {
  int processes_killed = 0, namespaces_removed = 0, paths_removed = 0, vms_destroyed = 0;
  std::vector<std::string> problems;  // what could not be removed (empty = clean)
};

// Removes everything recorded for `lab`. Idempotent: missing resources are skipped.
Result<DownReport> down(const std::string& lab, proc::ProcessRunner& runner);

// Nodes (netns present, daemons and PIDs alive), links (both ends' operstate, MTU and byte
// counters, the link's rate) as JSON:
// {"lab", "status", "nodes":[{"name","kind","netns","netns_present","daemons":[{"name","pid",
// "alive"}]}], "links":[status_links' entries], "read_at_ms": when the ports were read (Unix
// ms)}. One netlink dump of links per node (its counters come with it).
Result<nlohmann::json> status(const std::string& lab);

// The links of `plan` with each end's port as `port_tables` has it (node -> the node's ports
// as `ip -j -s link show` prints them; a node or port missing from it is "missing"):
// [{"a","b","mtu_expected","a_state","b_state","a_mtu","b_mtu","a_tx_bytes","a_rx_bytes",
// "b_tx_bytes","b_rx_bytes","bandwidth_bps"}]; a counter or MTU not read is null, bandwidth_bps
// 0 for an unshaped link. Pure.
nlohmann::json status_links(const plan::Plan& plan,
                            const std::map<std::string, nlohmann::json>& port_tables);

// Whether a status() document shows a lab that lost something `up` built: a namespace, a link
// end, a daemon, a VM (what `twin status` exits 1 for; a rebuild, not a reconfiguration,
// repairs it). Pure.
bool degraded(const nlohmann::json& status);

// What convergence waits for: the plan's expected BGP sessions Established and OSPF
// adjacencies Full (one bgpd and one ospfd vty query per FRR node that has some).
struct SessionState {
  std::string protocol;  // "bgp" | "ospf" | "ospf6"
  std::string node, interface, peer_node;  // interface "" for a BGP session not bound to one
  std::string state;  // FRR's: "Established", "Active", "Full/DR", ... or why none was read
  bool up = false;    // Established / Full
};
struct SessionCount {
  int expected = 0, established = 0;           // BGP sessions
  int adjacencies = 0, full = 0;               // OSPF adjacencies settled (Full, or 2-Way:
  int two_way = 0;  // of `full`, 2-Way between two DROthers on a LAN segment: where they stay)
  std::vector<std::string> down;  // "leaf1 swp1 -> spine1: Active", "r1 eth1 -> r2: ExStart/-"
  // Interfaces of expected adjacencies in OSPF's Waiting state: FRR's wait timer (the dead
  // interval, RFC 2328 §9.4) runs before a broadcast network elects its DR: "r1:eth1 (40 s)".
  std::vector<std::string> waiting;
  // Every expected session and adjacency with its state, plan order per node (the live graph).
  std::vector<SessionState> sessions;
  [[nodiscard]] bool converged() const { return established >= expected && full >= adjacencies; }
  // "BGP 16/16 sessions Established", "OSPF 6/6 adjacencies Full", or both joined by ", ".
  [[nodiscard]] std::string text() const;
};
// Each node is asked through `drivers` (the registry's unless a test says).
SessionCount count_sessions(const plan::Plan& plan, int parallel,
                            const drivers::DriverLookup& drivers = drivers::driver_for);

// The kernel's neighbor-table caps (shared by every namespace) raised for the plan's interfaces,
// never lowered; says so through `progress`. Errors: kEnvironment.
Result<void> ensure_neighbor_capacity(const plan::Plan& plan, const Progress& progress);

// What control_routing does to each node's routing daemons.
enum class RoutingAction {
  kStop,     // stopped (the failure drill's node failure)
  kStart,    // started, booting from the saved startup configuration
  kRestart,  // both (the restart check)
};

// Stops, starts or restarts the routing daemons of `nodes` of lab `lab`, as they are in
// `running` (the plan the lab runs now: the state file's until a change's intent is saved),
// nodes in parallel; the caller holds the lab lock. Each node's driver acts on the recorded
// daemons and boots new ones from the node's saved startup configuration
// (drivers::NodeDriver::stop_routing / start_routing); the state file then records exactly the
// processes that run. Returns the number of daemons started. Errors: the first node's failure,
// with its name; processes already started stay recorded (`down` removes them).
Result<int> control_routing(const std::string& lab, const plan::Plan& running,
                            const std::vector<std::string>& nodes, RoutingAction action,
                            proc::ProcessRunner& runner, int parallel);

// Node `to.name` of `running` boots image `to` from `config` (an image step and its rollback):
// its routing daemons stop; its container is removed and one of `to`'s image is created
// (recorded first), its run folder handed to that image's user frr; `config` becomes its
// startup configuration and the daemons boot from it; the state file's plan records `to`.
// `to` is complete (the container driver's preflight read its image). Returns the number of
// daemons started. Errors: as control_routing's; a container that does not start (kHarness);
// the new release refusing a line of `config` (kInput).
Result<int> boot_image(const std::string& lab, const plan::Plan& running, const plan::Node& to,
                       const std::string& config, proc::ProcessRunner& runner);

// What `twin restart` did.
struct RestartReport {
  std::string node;
  std::vector<std::string> daemons;  // what runs now, "bgpd (PID 4242)", restarted ones only
  double restart_ms = 0;             // stop, start and the startup configuration applied
};
// Brings node `node` of running lab `lab` back from its startup configuration (its saved
// frr.conf) without `down`/`up`: with `daemon` empty every routing daemon of the node (stopped
// where still running, then booted as the restart check does: control_routing kRestart), else
// that daemon alone (drivers::NodeDriver::restart_daemon; the others keep running). The state
// file then records exactly the processes that run. The caller holds the lab lock. Errors:
// kUsage for a node not in the lab, a daemon it does not run, a node whose daemons twin does
// not run (a host, a VM's NOS); as control_routing's otherwise.
Result<RestartReport> restart_node(const std::string& lab, const std::string& node,
                                   const std::string& daemon, proc::ProcessRunner& runner);

// Path of the cgroup v2 mount ("" if the kernel has none).
std::string cgroup2_mount();

}  // namespace twin::engine
