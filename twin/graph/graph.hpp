#pragma once
// A lab as a graph: nodes by role and tier, links with their interface names and MTU, and for
// a running lab the live state over it (links' oper state and MTU, sessions' state, the last
// validation's failing tests). `twin graph`, `twin serve` and its web page draw from this one
// model. Pure: the caller reads the kernel and FRR (engine::status, engine::count_sessions)
// and the journal; nothing here does I/O.
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "twin/plan/plan.hpp"

namespace twin::graph {

// A test that does not pass, as the graph shows it on the node or link it is about.
struct Failure {
  std::string test;     // "bgp.session-established"
  std::string status;   // "failed" | "error"
  std::string message;  // the validator's line
  std::string expected, observed;  // its evidence, as the validator put it
};

// A likely cause the validation found (twin validate's "likely_causes": the gate's rules).
struct Cause {
  std::string rule, text;
  std::vector<std::string> evidence, nodes;
};

struct Node {
  std::string name, kind, backend;  // kind: topology::to_string (frr, host, ...)
  bool vm = false;                  // boots a VM (its label says so)
  // The name without its number ("leaf", "spine", "super-spine", "server"): nodes of one role
  // share a colour and a row.
  std::string role;
  int tier = 0;  // row from the top: 0 = the tier farthest from the servers
  uint32_t asn = 0;
  std::string router_id;
  std::vector<std::string> loopbacks, daemons;
  // Live only. "up": namespace present and every recorded daemon alive; "down": namespace gone;
  // "degraded": a daemon exited; "" = not known (not running, or not asked).
  std::string state;
  std::vector<std::string> notes;  // "bgpd exited", ...
  std::vector<Failure> failures;   // the last validation's, about this node but no link of it
};

struct Link {
  std::string a, a_interface, b, b_interface;
  int mtu = 0;          // bytes, L3 (the plan's)
  bool fabric = false;  // FRR to FRR: carries a routing session
  bool intended_up = true;  // false: a change's intent keeps it down (drawn dashed)
  uint64_t bandwidth_bps = 0;  // the rate its ends are shaped to (`bandwidth:`); 0 = unshaped
  // Live only. "up": both ends' oper state UP, MTU as planned and every session over it up;
  // "down": an end not UP (or missing); "degraded": up but an MTU differs or a session is not
  // up; "" = not known.
  std::string state;
  std::string a_oper, b_oper;  // the kernel's operstate ("UP", "DOWN", "LOWERLAYERDOWN", "missing")
  int a_mtu = 0, b_mtu = 0;    // 0 = not read
  // Each end's byte counters since its port was made (`ip -j -s link`'s stats64): two reads'
  // difference over Graph::read_at_ms's is the link's rate. Empty = not read.
  std::optional<uint64_t> a_tx_bytes, a_rx_bytes, b_tx_bytes, b_rx_bytes;
  // The sessions over this link (BGP per end, OSPF adjacencies): "bgp leaf1->spine1 Established".
  std::vector<std::string> sessions;
  bool sessions_up = true;
  std::vector<std::string> notes;  // "MTU 1500 on leaf1:swp1, 9216 planned"
  std::vector<Failure> failures;   // the last validation's tests about this link's ends
};

struct Summary {  // the last validation (live only)
  bool known = false;
  int passed = 0, failed = 0, errors = 0;
  std::string at;  // its journal time
  std::vector<Failure> lab_wide;  // failing tests tied to no node
  std::vector<Cause> causes;      // likely causes, each naming the nodes it concerns
};

struct Graph {
  std::string lab;
  bool live = false;
  int64_t read_at_ms = 0;   // live: when the ports' counters were read (Unix ms); 0 = not read
  std::vector<Node> nodes;  // plan order
  std::vector<Link> links;  // plan order
  Summary validation;
};

// The graph of a plan (a topology file's, or a running lab's as its state records it).
Graph from_plan(const plan::Plan& plan);

// What a running lab shows, as the caller read it. Any pointer may be null (not read).
struct SessionView {
  std::string protocol, node, interface, peer_node, state;
  bool up = false;
};
struct LiveInput {
  // engine::status(): {"nodes":[{"name","netns_present","daemons":[{"name","alive"}]}],
  //                    "links":[{"a":"n:if","b":"n:if","a_state","b_state","a_mtu","b_mtu",
  //                              "a_tx_bytes","a_rx_bytes","b_tx_bytes","b_rx_bytes"}],
  //                    "read_at_ms"}
  const nlohmann::json* status = nullptr;
  const std::vector<SessionView>* sessions = nullptr;
  // The last validation: report::to_json's {"results":[{"validator","test_name","status",
  // "node","peer","message"}]}, and the time of its journal event.
  const nlohmann::json* validation = nullptr;
  std::string validation_at;
};
// Puts the live state over `g` (made from the same plan) and sets g.live. Idempotent for the
// same input.
void overlay(Graph& g, const LiveInput& in);

// Renderings. DOT for Graphviz (`dot -Tsvg` draws it; rows by tier, colours by role, live state
// as edge colour: red down, orange degraded), Mermaid `graph TD` for Markdown, and JSON with
// every field above ({"lab","live","nodes":[...],"links":[...],"validation":{...}}).
std::string to_dot(const Graph& g);
std::string to_mermaid(const Graph& g);
nlohmann::json to_json(const Graph& g);
// One failing test as to_json writes it (also used by twin serve's node detail).
nlohmann::json to_json(const Failure& f);

}  // namespace twin::graph
