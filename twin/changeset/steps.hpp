#pragma once
// Change-step handlers, internal to twin/changeset. Each kind of step has one file,
// step_<kind>.cpp, holding everything twin knows about that kind: how the change-set loader
// reads its fields (ChangeSetLoader::parse_<kind>), how the gate applies it (apply_step), what a
// dry run says of it (describe_step) and what it means for the intended plan (intend_step).
// Callers dispatch over Step::body with std::visit, so a kind missing one of these does not
// compile. What a step changed is recorded in Touched; the gate's rollback restores exactly that
// (FRR configs from their snapshot, interfaces to their baseline state).
#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "twin/changeset/changeset.hpp"
#include "twin/verdict/seams.hpp"

namespace twin::replay {

// What a change touched, so the rollback restores exactly it.
struct Touched {
  std::set<std::string> frr_nodes;   // FRR configs changed: restored from their snapshot
  std::set<std::string> interfaces;  // "node:if": MTU and admin state restored
  // Host-node addresses a step added / removed (node, interface, address): undone exactly.
  std::vector<std::tuple<std::string, std::string, std::string>> host_added, host_removed;
  bool topology = false;  // the lab was reshaped: reshaped back to the baseline plan
  // Routing daemons an frr step's lines needed were started (a reshape of daemons only): the
  // same reshape back stops them.
  bool daemons = false;
  // "node:if" of FRR nodes whose addresses a step changed (through zebra). Removing an
  // interface's last IPv4 address makes the kernel drop the routes through it, which zebra
  // does not reinstall on its own: the rollback bounces the interface after restoring it.
  std::set<std::string> frr_addressed;
  // Kernel settings a sysctl step wrote: (node, key, value before the change's first write),
  // in the order written; the rollback writes the old values back in reverse order.
  std::vector<std::tuple<std::string, std::string, std::string>> sysctls;
  // VTEPs a vxlan step changed: each node's VNIs before the change's first vxlan step on it
  // (as its kernel ran them; as planned when the kernel could not be read), and as the steps
  // left them. The rollback brings the kernel's (read again) back to the first.
  std::map<std::string, std::vector<plan::Vni>> vteps, vteps_left;
  // Nodes whose planned addresses the kernel lost (found by restore(), whoever removed them):
  // put back in both families, and their ports bounced so zebra reinstalls routes through them.
  std::set<std::string> readdress;
  // Container nodes an image step replaced: each node as the baseline ran it and the
  // configuration it saved before its first image step (the rollback boots that image from
  // that configuration: a newer release's saved defaults may not parse on an older one), in
  // the order replaced.
  std::vector<std::pair<plan::Node, std::string>> images;
  // FRR nodes whose routing-policy objects (route-map entries, prefix-lists, community, as-path
  // and access lists) a step's lines edited, with the node's route-map delay timer in seconds:
  // bgpd applies such an edit to routes only when that timer fires (FRR's docs, `bgp route-map
  // delay-timer`: default 5 s), so the network changes seconds after the step. (Rollbacks and
  // whole configs are reloaded with a soft clear after them, which applies policy at once.)
  std::map<std::string, int> policy_delay_s;
  Clock::time_point policy_edited_at{};  // when the last such edit was applied
  // A run step ran (RunStep): its nodes restart from what they saved themselves — the restart
  // check saves no running config first, and an approval saves none (WORKPLAN: only a live run
  // and image steps restart from what the node saved).
  bool from_saved = false;
  // Nodes whose saved (startup) config a run step changed, with what they had saved before it:
  // the rollback writes that back.
  std::map<std::string, std::string> saved_before;
  // Nodes whose running config a run step left different from what they saved (no `write
  // memory`): named as the cause when the restart check diverges.
  std::set<std::string> unsaved;

  // The nodes whose kernel state a step changed: ports, host and FRR-set addresses, kernel
  // settings.
  [[nodiscard]] std::set<std::string> kernel_nodes() const;
  // Every node the change worked on: those, the nodes whose FRR configuration changed, and
  // those an image step replaced.
  [[nodiscard]] std::set<std::string> nodes() const;
};

// An `ip -batch` script putting `node`'s planned routes (a host's default routes) back: the
// kernel deletes them with the address or the port they leave through. `family` 4 or 6 for one
// family only, 0 for both. Idempotent (`route replace`).
std::string plan_routes_script(const plan::Node& node, int family = 0);

// A routing-policy object's line in FRR configuration text: a top-level route-map entry,
// prefix-list, community / extcommunity / large-community list, as-path or access list line with
// the lines indented under it (`text`), and the object it belongs to (`key`: "route-map RM",
// "ip prefix-list PL", "bgp community-list C", ...).
struct PolicyLine {
  std::string key;
  std::string text;
  bool operator==(const PolicyLine&) const = default;
};
std::vector<PolicyLine> policy_objects(const std::string& frr_text);
// Whether FRR lines to add or remove (`edit`) change policy objects a node's running config
// already has or names. bgpd applies such lines to routes only when its route-map delay timer
// fires; a new object takes effect when it is attached (`neighbor ... route-map`), at once. (A
// whole config reloaded is followed by a soft clear, runtime::frr_reload: at once too.)
bool edits_existing_policy(const std::string& running_config, const std::string& edit);
// A running config's `bgp route-map delay-timer`, in seconds; FRR's default (5 s, FRR's docs,
// "bgp route-map delay-timer") when the line is absent.
int route_map_delay_s(const std::string& running_config);
// The `bgp route-map delay-timer` that FRR lines set (the last one), if they set one.
std::optional<int> declared_route_map_delay_s(const std::string& frr_text);

// What a handler may use while the gate applies its step.
struct StepRun {
  GateEnv& env;
  const ApplyOptions& opts;
  const state::State& st;  // the lab before the change
  const ChangeSet& cs;
  size_t index;         // the step's position in cs.steps
  plan::Plan& current;  // the plan the lab runs now (a topology step replaces it)
  Touched& touched;     // record here before changing anything
  // Waits until every session of `plan` is Established, at most `timeout`; says how it went.
  std::function<std::string(const plan::Plan&, std::chrono::milliseconds)> wait_converged;
  // Where a step says what it did not apply as written (a host path redirected); may be null.
  std::vector<Note>* notes = nullptr;
  // Where a step keeps evidence on several lines (StepOutcome::text); may be null.
  std::string* text = nullptr;
};

// Applies the step; `detail` says what was done. An error fails the step (kInput: the network
// or FRR refused it); kInterrupted stops the gate.
Result<void> apply_step(const FrrStep& step, StepRun& run, std::string* detail);
Result<void> apply_step(const InterfaceStep& step, StepRun& run, std::string* detail);
Result<void> apply_step(const LinkStep& step, StepRun& run, std::string* detail);
Result<void> apply_step(const WaitStep& step, StepRun& run, std::string* detail);
Result<void> apply_step(const CheckStep& step, StepRun& run, std::string* detail);
Result<void> apply_step(const TopologyStep& step, StepRun& run, std::string* detail);
Result<void> apply_step(const SysctlStep& step, StepRun& run, std::string* detail);
Result<void> apply_step(const VxlanStep& step, StepRun& run, std::string* detail);
Result<void> apply_step(const ImageStep& step, StepRun& run, std::string* detail);
Result<void> apply_step(const RunStep& step, StepRun& run, std::string* detail);

// What the step would do, without doing it: lines indented by three spaces on `out`. `current`
// is the plan the lab would run at that step (a topology step replaces it). Errors: a program
// the description needs (frr-reload.py --test) could not run.
Result<void> describe_step(const FrrStep& step, const state::State& st, plan::Plan& current,
                           proc::ProcessRunner& runner, std::ostream& out);
Result<void> describe_step(const InterfaceStep& step, const state::State& st, plan::Plan& current,
                           proc::ProcessRunner& runner, std::ostream& out);
Result<void> describe_step(const LinkStep& step, const state::State& st, plan::Plan& current,
                           proc::ProcessRunner& runner, std::ostream& out);
Result<void> describe_step(const WaitStep& step, const state::State& st, plan::Plan& current,
                           proc::ProcessRunner& runner, std::ostream& out);
Result<void> describe_step(const CheckStep& step, const state::State& st, plan::Plan& current,
                           proc::ProcessRunner& runner, std::ostream& out);
Result<void> describe_step(const TopologyStep& step, const state::State& st, plan::Plan& current,
                           proc::ProcessRunner& runner, std::ostream& out);
Result<void> describe_step(const SysctlStep& step, const state::State& st, plan::Plan& current,
                           proc::ProcessRunner& runner, std::ostream& out);
Result<void> describe_step(const VxlanStep& step, const state::State& st, plan::Plan& current,
                           proc::ProcessRunner& runner, std::ostream& out);
Result<void> describe_step(const ImageStep& step, const state::State& st, plan::Plan& current,
                           proc::ProcessRunner& runner, std::ostream& out);
Result<void> describe_step(const RunStep& step, const state::State& st, plan::Plan& current,
                           proc::ProcessRunner& runner, std::ostream& out);

// FRR's refusals in a node's session log text (drivers/ssh.hpp session_log_path): each answer
// FRR marks as an error ("% Unknown command", "% Malformed ...", "% Invalid ..."), with the line
// that drew it, as "`<line>`: <answer>". Prompts and terminal control sequences are stripped.
// Pure.
std::vector<std::string> refusals_in_session(const std::string& text);

// What the step means for the intended plan `p` of lab `lab` (intent.hpp), applied in order.
void intend_step(const FrrStep& step, const std::string& lab, plan::Plan& p);
void intend_step(const InterfaceStep& step, const std::string& lab, plan::Plan& p);
void intend_step(const LinkStep& step, const std::string& lab, plan::Plan& p);
void intend_step(const WaitStep& step, const std::string& lab, plan::Plan& p);
void intend_step(const CheckStep& step, const std::string& lab, plan::Plan& p);
void intend_step(const TopologyStep& step, const std::string& lab, plan::Plan& p);
void intend_step(const SysctlStep& step, const std::string& lab, plan::Plan& p);
void intend_step(const VxlanStep& step, const std::string& lab, plan::Plan& p);
void intend_step(const ImageStep& step, const std::string& lab, plan::Plan& p);
void intend_step(const RunStep& step, const std::string& lab, plan::Plan& p);

// What a vxlan step does to one VTEP's VNIs `vnis` (node `node` of `plan`, the lab as it runs):
// the VNI created where missing (names, VRF and gateway as another VTEP of the plan has it,
// else an L2 VNI of no tenant; MTU the VNI's elsewhere, else its ports' largest), `ports`
// moved into it; or, with remove, the VNI dropped. Errors (kInput): removing a VNI the node
// does not have. Pure.
Result<void> vxlan_change(const plan::Plan& plan, const plan::Node& node, const VxlanStep& step,
                          std::vector<plan::Vni>& vnis);

// Helper of intend_step (intent.cpp): setting an interface's intended MTU
// (plan::find_interface finds one to change).
void set_intended_mtu(plan::Plan& p, const InterfaceRef& ref, int mtu);

}  // namespace twin::replay
