#pragma once
// The change-set loader, shared by its files: changeset_load.cpp (the file's top level, the
// intent, references into the lab), changeset_steps.cpp (a step's name and kind) and each step
// kind's handler, step_<kind>.cpp (its fields). Internal to twin/changeset; includes yaml-cpp
// through the YAML toolkit, so only those .cpp files include it.
#include <algorithm>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "twin/core/yaml_reader.hpp"
#include "twin/changeset/changeset.hpp"

namespace twin::replay {

using Plans = std::vector<const plan::Plan*>;
using topology::kMinIpv6Mtu;
using yaml::child;
using yaml::found;
using yaml::item;
using yaml::mark_of;
using yaml::Value;

inline bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// One end of a link named in the change file, resolved in a plan.
struct End {
  InterfaceRef ref;
  const plan::Plan* plan = nullptr;
  const plan::Interface* iface = nullptr;
};

// Reads one change file against the running lab's plan. Use once: load() then partial_.
class ChangeSetLoader {
 public:
  ChangeSetLoader(std::string text, std::string file, std::string dir, const plan::Plan& plan,
                  Diagnostics& d, InputPolicy policy, const std::vector<std::string>* families);

  // The change set, or nullopt when `d` gained diagnostics.
  std::optional<ChangeSet> load();
  // What was parsed when there were problems (load() returned nullopt after parsing steps).
  std::optional<ChangeSet> partial_;

 private:
  // ---- references into the lab (changeset_load.cpp)

  static std::vector<std::string> node_names(const Plans& scope);

  // The node `name` in the first plan of `scope` that has it. `frr_only`, when set, is why
  // the node must be an FRR node ("frr steps configure FRR nodes only").
  const plan::Node* node_ref(const Value& v, const std::string& name, const Plans& scope,
                             const char* frr_only = nullptr, const char* frr_hint = "");

  // A step's `node:` or `nodes:` (what: "nodes to set", example: "spine1"): each a node of the
  // lab as of this step (node_ref, with `frr_only`), each once; the others reported. In order.
  struct StepNode {
    Value at;
    const plan::Node* node;
  };
  std::vector<StepNode> step_nodes(const Value& v, const std::string& what,
                                   const std::string& example, const char* frr_only = nullptr,
                                   const char* frr_hint = "");

  // "node:interface", an interface of a node of the lab.
  std::optional<End> end_ref(const Value& v, const std::string& text, const Plans& scope,
                             const std::string& example);

  std::optional<End> interface_ref(const Value& v);

  // Why end `e` cannot be a tenant port (it does not face a server, kind host), or "".
  static std::string not_a_server_port(const End& e);

  // "node:if" or "nodeA:ifA--nodeB:ifB"; both ends filled, in the plan's order of the link.
  std::optional<LinkRef> link_ref(const Value& v, const Plans& scope);

  const plan::Interface* plan_interface(const InterfaceRef& r) const;

  // A test family ("bgp") or a single test ("bgp.0"); `single` wants the latter.
  bool test_name(const Value& v, const std::string& s, bool single);

  void parse_intent(const Value& in, Intent& out);

  std::optional<PrefixRef> prefix_ref(const Value& it);
  // intent.paths[i] (node, prefix or prefixes, ecmp, next-hops), checked against the lab.
  std::optional<PathRef> path_ref(const Value& it);

  // ---- values and steps (changeset_steps.cpp)

  std::optional<bool> as_state(const Value& v);

  // An address with prefix length, in canonical form ("10.1.9.1/24").
  std::optional<IpPrefix> as_address(const Value& v);

  // The first line of a block's text: a block scalar (`add: |`) starts on the line after its
  // indicator, which is where yaml-cpp's mark points; blank first lines are part of the text.
  int text_line(const YAML::Node& n) const;

  // A path relative to the change file's folder, naming a regular file the policy lets twin
  // read; canonical.
  std::optional<std::string> existing_file(const Value& v, const std::string& path,
                                           const std::string& what);

  Step parse_step(const Value& sv);

  // One overload per step kind, in its step_<kind>.cpp: its fields into `out`. parse_step
  // picks the overload by the kind's position in kStepKinds (StepBody's order).
  void parse_body(const Value& v, FrrStep& out);
  void parse_body(const Value& v, InterfaceStep& out);
  void parse_body(const Value& v, LinkStep& out);
  void parse_body(const Value& v, WaitStep& out);
  void parse_body(const Value& v, CheckStep& out);
  void parse_body(const Value& v, TopologyStep& out);
  void parse_body(const Value& v, SysctlStep& out);
  void parse_body(const Value& v, VxlanStep& out);
  void parse_body(const Value& v, ImageStep& out);
  void parse_body(const Value& v, RunStep& out);

  // intent.tenant-networks and intent.tenant-ports (changeset_load.cpp).
  void parse_tenant_intent(const Value& in, Intent& out);

  std::string text_, file_, dir_;
  Diagnostics& d_;
  yaml::Reader r_;
  InputPolicy policy_;            // which files the change may name
  const std::vector<std::string>* families_;  // check steps' test families (null: any name)
  const plan::Plan* cur_;         // the lab as of the current step
  std::deque<plan::Plan> owned_;  // plans of topology steps
  Plans all_plans_;               // the running lab's, then owned_
  std::map<std::string, std::pair<std::string, Mark>> step_names_;  // -> field, place
};

}  // namespace twin::replay
