#pragma once
// A change set: what an orchestrator wants done to the network, as an ordered list of named
// steps (format v1, documented in docs/change-sets.md and
// scenarios/schema/change.schema.json). Pure data plus its loader; the loader checks every
// reference against the running lab's plan and reports every problem at once with
// file:line:column (DESIGN.md §3). Nothing here touches the system; FRR's own syntax check of
// configuration lines (`vtysh -C`) is a separate step in apply.hpp because it runs a program.
#include <chrono>
#include <optional>
#include <variant>
#include <string>
#include <vector>

#include "twin/core/diagnostics.hpp"
#include "twin/core/input_policy.hpp"
#include "twin/plan/plan.hpp"
#include "twin/topology/model.hpp"

namespace twin::replay {

using topology::Mark;

// "leaf1:swp1": one end of a link.
struct InterfaceRef {
  std::string node, interface;
  Mark mark;
  [[nodiscard]] std::string str() const { return node + ":" + interface; }
};

// A topology link named by one or both of its ends ("leaf1:swp1" or "leaf1:swp1--spine1:swp1";
// one end is enough, a link has exactly one peer). The loader fills both ends from the plan.
struct LinkRef {
  InterfaceRef a, b;
  Mark mark;
  [[nodiscard]] std::string str() const { return a.str() + "--" + b.str(); }
};

// A prefix a node originates ("leaf1: 10.1.9.0/24").
struct PrefixRef {
  std::string node;
  std::string prefix;  // canonical network form, "10.1.9.0/24"
  Mark mark;
};

// intent.paths[i]: at `node`, `prefixes` may move to `ecmp` next hops (0: any) through `via`
// (neighbor nodes or the node's interfaces; empty: any).
struct PathRef {
  std::string node;
  std::vector<std::string> prefixes;  // canonical network form
  int ecmp = 0;
  std::vector<std::string> via;
  Mark mark;
};

// A tenant network named in a change ("red/web"), with its VNI when the change creates it.
struct TenantNetworkRef {
  std::string tenant, network;
  uint32_t vni = 0;
  Mark mark;
};
// A server port and the tenant network the change means it to be in (tenant "" = none).
struct TenantPortRef {
  InterfaceRef port;
  std::string tenant, network;
  Mark mark;
};
// The kinds in StepBody's order; their YAML keys are changeset_keys.hpp's kStepKinds, in the same
// order (the loader dispatches by that position, to_string reads it).
enum class StepKind {
  kFrr,
  kInterface,
  kLink,
  kWait,
  kCheck,
  kTopology,
  kSysctl,
  kVxlan,
  kImage,
  kRun
};
// "frr" | "interface" | "link" | "wait" | "check" | "topology" | "sysctl" | "vxlan" | "image" |
// "run"
const char* to_string(StepKind k);
// Whether a step of this kind changes the network (wait and check only observe it): the gate
// settles and validates after each changing step when it goes step by step.
constexpr bool changes_network(StepKind k) {
  switch (k) {
    case StepKind::kWait:
    case StepKind::kCheck:
      return false;
    case StepKind::kFrr:
    case StepKind::kInterface:
    case StepKind::kLink:
    case StepKind::kTopology:
    case StepKind::kSysctl:
    case StepKind::kVxlan:
    case StepKind::kImage:
    case StepKind::kRun:
      return true;
  }
  return true;
}

// FRR configuration on one or more nodes. Exactly one of replace / add / remove per step.
struct FrrStep {
  std::vector<std::string> nodes;
  // Path (absolute, resolved against the change file's folder) of a rendered integrated
  // frr.conf: the node's whole intended configuration. Applied as the difference from the
  // running config (frr-reload.py), so unchanged lines are not touched.
  std::string replace;
  // Configuration lines in frr.conf syntax (indentation = context), applied as they are.
  std::string add;
  // Configuration lines in frr.conf syntax whose leaves are negated ("no <line>") in their
  // context: a line followed by a more indented line is a context (router bgp ..., interface
  // ...); every other line is a leaf.
  std::string remove;
  int text_line = 0;  // line in the change file of the first line of add/remove (block scalar)
};

// Kernel interface state on one or more interfaces.
struct InterfaceStep {
  std::vector<InterfaceRef> interfaces;
  std::optional<int> mtu;                     // bytes, excluding the L2 header; kMinMtu..kMaxMtu
  std::optional<bool> up;                     // admin state: `state: up|down`
  std::vector<std::string> add_addresses;     // "10.1.9.1/24", canonical form
  std::vector<std::string> remove_addresses;  // idem
};

// Both ends of one or more topology links.
struct LinkStep {
  std::vector<LinkRef> links;  // every link of the lab when `all` is set
  bool all = false;            // `links: all`
  std::optional<int> mtu;
  std::optional<bool> up;
};

// Waits: until every intended BGP session is Established (`until: converged`, bounded by
// `timeout`), or for a fixed `duration` (only when the user asks for one; convergence itself is
// always a probe, never a sleep).
struct WaitStep {
  std::string until = "converged";  // "converged" | "duration"
  std::chrono::milliseconds timeout{std::chrono::seconds(60)};
  std::chrono::milliseconds duration{0};
};

// Runs validators mid-change. `tests` selects families ("bgp") or single tests ("bgp.0").
// expect "pass": every selected test passes (within a convergence window). expect "fail": each
// of `failing` ("bgp.0") fails — a negative test, e.g. "this session must go down".
struct CheckStep {
  std::vector<std::string> tests;
  std::string expect = "pass";       // "pass" | "fail"
  std::vector<std::string> failing;  // with expect "fail": tests that must fail
  std::chrono::milliseconds timeout{std::chrono::seconds(30)};
};

// The lab's topology becomes the one in `file` (a full topology file, loaded with the topology
// loader). Nodes and links it adds are created beside the running fabric; nodes and links it
// drops are removed; generated FRR configs of nodes that stay are updated to match (as the
// difference from the running config). A node that stays keeps its kind and image.
struct TopologyStep {
  std::string file;                        // absolute path
  std::optional<topology::Topology> topo;  // as loaded and checked by the topology loader
};

// Kernel settings of one or more nodes' network namespaces, as sysctl(8) names them
// ("net.ipv4.ip_forward", "net.ipv6.conf.swp1.disable_ipv6"): what orchestrators push beside
// routing config (forwarding, rp_filter, IPv6 per interface). Only `net.` keys: they are per
// network namespace, so a node's setting never reaches the host or another node. The rollback
// writes back the value each key had before the step. Not intent: a setting is judged by what
// it does to the network.
struct SysctlStep {
  std::vector<std::string> nodes;
  std::vector<std::pair<std::string, std::string>> set;  // key -> value, in file order
};

// A VNI on one or more VTEPs (RFC 7348 VXLAN, learned by EVPN, RFC 8365): what an orchestrator
// does to put a tenant network on a leaf or take it off, and to move a server port between
// networks. Without `remove`, the VNI's VXLAN device and bridge are created where missing (as
// twin builds them from `tenants:`, plan.hpp Vni) and `ports` join its bridge, leaving any
// other one. With `remove`, the VNI's devices are deleted; its ports stay, unbridged. The
// rollback puts each node's VNIs back as the baseline had them. Not intent: the kernel only
// knows numbers, so a port put in a wrong VNI is judged by what it breaks (isolation, the
// tenant's reachability, EVPN's tests); intent.tenant-ports declares a meant move.
struct VxlanStep {
  std::vector<std::string> nodes;  // VTEPs: FRR nodes with an IPv4 loopback (the VTEP address)
  uint32_t vni = 0;                // 1..kMaxVni
  std::vector<std::string> ports;  // the nodes' server ports; with one node only
  bool remove = false;
};
// The NOS of container nodes replaced by another image (issue 44's upgrade rehearsal): for each
// node, in order, its running configuration is saved as its startup configuration (what a
// reboot loads), checked by the new release's own parser (`vtysh -C` in the new image: a line
// it refuses fails the step before anything is touched), then the node's daemons stop, its
// container is replaced by one of the new image, and the daemons boot from that configuration.
// The rollback boots the old image from the configuration saved before the step (a newer
// release writes its defaults as lines an older one refuses, DESIGN.md §4b). Intent: the nodes
// run the new image.
struct ImageStep {
  std::vector<std::string> nodes;  // container nodes (backend container)
  std::string to;                  // image profile name (images/<to>.yaml, backend container)
  topology::ImageProfile profile;  // `to` as loaded
};

// A live orchestrator run (issue 48, docs/management.md): `command` runs on this machine through
// /bin/sh in the change file's folder (the current one for `twin apply --run`), with TWIN_LAB,
// TWIN_INVENTORY (the lab's Ansible inventory) and TWIN_SSH_CONFIG set, in a cgroup of its own
// under the lab's (a timeout or `down` stops all it started); it reaches the nodes as it reaches
// production, over the management network and SSH. The gate then reads back what changed on
// every FRR node: running configs (a unified diff per node, against the snapshot) and what each
// node saved; FRR's answer to every line the run sent (the nodes' session logs); a refused line
// or a non-zero exit fails the step. The rollback restores running and saved configs on exactly
// the nodes the run changed; the restart check boots nodes from what they saved (what a reboot
// loads). Needs the lab's management network. Not intent: a run is judged by what it does.
struct RunStep {
  std::string command;
  std::chrono::milliseconds timeout{std::chrono::minutes(10)};
};

// One step is exactly one of the kinds, in StepKind's order. Each kind has one handler
// (changeset/step_<kind>.cpp) that reads it from the change file, applies it in the gate, says
// what it would do (dry run) and what it means for the intended plan; ARCHITECTURE.md has the
// recipe for a new kind.
using StepBody = std::variant<FrrStep, InterfaceStep, LinkStep, WaitStep, CheckStep, TopologyStep,
                              SysctlStep, VxlanStep, ImageStep, RunStep>;
static_assert(std::variant_size_v<StepBody> == 10, "StepKind lists one value per StepBody kind");

struct Step {
  std::string name;  // unique within the change set; the report refers to steps by it
  Mark mark;
  StepBody body = WaitStep{};

  [[nodiscard]] StepKind kind() const { return static_cast<StepKind>(body.index()); }
  // The step's kind-specific part; std::bad_variant_access for another kind (a bug).
  FrrStep& frr() { return std::get<FrrStep>(body); }
  InterfaceStep& interface() { return std::get<InterfaceStep>(body); }
  LinkStep& link() { return std::get<LinkStep>(body); }
  const ImageStep& image() const { return std::get<ImageStep>(body); }
  WaitStep& wait() { return std::get<WaitStep>(body); }
  CheckStep& check() { return std::get<CheckStep>(body); }
  TopologyStep& topology() { return std::get<TopologyStep>(body); }
  SysctlStep& sysctl() { return std::get<SysctlStep>(body); }
  VxlanStep& vxlan() { return std::get<VxlanStep>(body); }
  [[nodiscard]] const FrrStep& frr() const { return std::get<FrrStep>(body); }
  [[nodiscard]] const InterfaceStep& interface() const { return std::get<InterfaceStep>(body); }
  [[nodiscard]] const LinkStep& link() const { return std::get<LinkStep>(body); }
  [[nodiscard]] const WaitStep& wait() const { return std::get<WaitStep>(body); }
  [[nodiscard]] const CheckStep& check() const { return std::get<CheckStep>(body); }
  [[nodiscard]] const TopologyStep& topology() const { return std::get<TopologyStep>(body); }
  [[nodiscard]] const SysctlStep& sysctl() const { return std::get<SysctlStep>(body); }
  [[nodiscard]] const VxlanStep& vxlan() const { return std::get<VxlanStep>(body); }
  [[nodiscard]] const RunStep& run() const { return std::get<RunStep>(body); }
};

// What the change means to do, beyond what its steps already say (a raised MTU or a new
// topology is intent by itself). Losses that follow from the intent are expected; every other
// loss rejects the change.
struct Intent {
  std::vector<std::string> drain;          // nodes taken out of service: no sessions, no transit
  std::vector<LinkRef> links_down;         // links meant to be down: no session, no path over them
  std::vector<PrefixRef> add_prefixes;     // prefixes the change starts originating
  std::vector<PrefixRef> remove_prefixes;  // prefixes it stops originating
  // Paths the change moves on purpose (traffic engineering): only these may change, judged by
  // their declared width and next hops; every other path, prefix and reachability must hold.
  std::vector<PathRef> paths;
  // Tenant networks the change creates ("green/web" with its VNI), and where it means server
  // ports to be: a leaf's port in a network (new or existing, any tenant's), or in none
  // (network "" : unbridged). The intended tenants follow (plan::set_tenants): VTEPs, servers,
  // who must reach whom and who must not.
  std::vector<TenantNetworkRef> tenant_networks;
  std::vector<TenantPortRef> tenant_ports;
  // The traffic family in the gate (`traffic:`; `true` is the lab's own spec, or twin's
  // defaults): the baseline and the after-change validation run this pattern, and the diff
  // compares their bandwidth (bandwidth-lost beyond spec.bandwidth_loss). nullopt: the lab's
  // own `traffic:` decides, as in every validation.
  std::optional<topology::TrafficSpec> traffic;
};

// Steps a change set may have. An orchestrator's change is tens of steps (a node's lines are
// one `frr` step); ten thousand is far beyond that, and bounds the work a file can ask for (each
// step may load a topology or run FRR's parser).
inline constexpr size_t kMaxSteps = 10'000;

struct ChangeSet {
  std::string file;  // absolute path of the change file ("" for a change built in memory)
  std::string dir;   // its folder: relative paths resolve against it
  int version = 1;
  std::string name;
  std::string description;
  Intent intent;
  std::vector<Step> steps;
};

// Loads a change set and checks it against the running lab's plan: unknown step kinds and
// fields, missing or duplicate step names, unknown nodes / interfaces / links (with the nearest
// name as a hint), a missing config file, MTU out of range (kMinMtu..kMaxMtu; IPv6 needs
// kMinIpv6Mtu), malformed addresses or prefixes, a node without FRR given an frr step, a
// topology file that fails to load (its own diagnostics are passed through). Returns nullopt
// and fills `diags` with every problem when there is any; `partial` (may be null) then receives
// what could be parsed, so FRR's own checks can report their problems in the same run.
// The file and every file it names (configs, topologies) pass `policy` (core/input_policy.hpp;
// null: the checkout root of `path`); more than kMaxSteps steps is one diagnostic.
// `families`: the test families a `check` step may name — the validator registry's
// (validators/registry.hpp family_names()), which replay may not include: the CLI and training
// pass it, so it is the one list. Null: any family name of the format's spelling (lower-case
// letters, digits, '-'), for callers that load change sets without running their checks.
std::optional<ChangeSet> load_change_set(const std::string& path, const plan::Plan& plan,
                                         Diagnostics& diags, ChangeSet* partial = nullptr,
                                         const InputPolicy* policy = nullptr,
                                         const std::vector<std::string>* families = nullptr);
// Same, from text already in memory (`file` names it in diagnostics; relative paths resolve
// against `dir`; null `policy`: the checkout root of `dir`).
std::optional<ChangeSet> load_change_set_text(const std::string& text, const std::string& file,
                                              const std::string& dir, const plan::Plan& plan,
                                              Diagnostics& diags, ChangeSet* partial = nullptr,
                                              const InputPolicy* policy = nullptr,
                                              const std::vector<std::string>* families = nullptr);

// Per-node rendered configs for `twin apply --configs DIR`: DIR/<node>.conf or
// DIR/<node>/frr.conf for any FRR node of the plan; one frr replace step per node found, in
// plan order. Unknown files (a .conf whose name is no node) are diagnostics; a node without a
// file is left alone.
// `dir` and the files in it pass `policy` (null: the checkout root of `dir`), with symlinks
// resolved: a <node>.conf that is a link out of the roots is refused by name.
std::optional<ChangeSet> change_set_from_configs(const std::string& dir, const plan::Plan& plan,
                                                 Diagnostics& diags,
                                                 const InputPolicy* policy = nullptr);

// The `no` form of frr.conf-syntax lines (FrrStep::remove): contexts kept, leaves negated
// ("no network 10.1.9.0/24"), a leaf already starting with "no " un-negated. Pure.
std::string negate_config(const std::string& lines);

}  // namespace twin::replay
