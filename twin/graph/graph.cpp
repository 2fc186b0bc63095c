#include "twin/graph/graph.hpp"

#include <algorithm>
#include <cctype>
#include <deque>
#include <set>
#include <sstream>

#include "twin/core/rate.hpp"
#include "twin/core/util.hpp"

namespace twin::graph {
namespace {

std::string role_of(const std::string& name, const std::string& kind) {
  std::string r = name;
  while (!r.empty() && std::isdigit(static_cast<unsigned char>(r.back()))) r.pop_back();
  while (!r.empty() && (r.back() == '-' || r.back() == '_' || r.back() == '.')) r.pop_back();
  std::transform(r.begin(), r.end(), r.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return r.empty() ? kind : r;
}

// Rows: hosts at the bottom, then each role by its hop distance from the edge (the hosts,
// or the most numerous role when there are none: the leaves), farthest on top.
void assign_tiers(Graph& g) {
  std::map<std::string, std::vector<std::string>> adj;
  for (const auto& l : g.links) {
    adj[l.a].push_back(l.b);
    adj[l.b].push_back(l.a);
  }
  std::map<std::string, int> members;
  for (const auto& n : g.nodes) ++members[n.role];
  std::set<std::string> edge;
  for (const auto& n : g.nodes)
    if (n.kind == "host") edge.insert(n.name);
  if (edge.empty()) {
    std::string biggest;
    int most = 0;
    for (const auto& n : g.nodes)  // plan order breaks ties: deterministic
      if (members[n.role] > most) most = members[n.role], biggest = n.role;
    for (const auto& n : g.nodes)
      if (n.role == biggest) edge.insert(n.name);
  }
  std::map<std::string, int> dist;
  std::deque<std::string> q;
  for (const auto& e : edge) dist[e] = 0, q.push_back(e);
  while (!q.empty()) {
    auto cur = q.front();
    q.pop_front();
    for (const auto& nb : adj[cur])
      if (!dist.count(nb)) dist[nb] = dist[cur] + 1, q.push_back(nb);
  }
  // A role's distance is its nearest member's: leaves without servers are still one hop from
  // the leaves with some, while spines are two.
  std::map<std::string, int> by_role;
  std::vector<std::string> role_order;
  for (const auto& n : g.nodes) {
    int d = dist.count(n.name) ? dist[n.name] : 0;
    if (!by_role.count(n.role)) role_order.push_back(n.role), by_role[n.role] = d;
    by_role[n.role] = std::min(by_role[n.role], d);
  }
  std::vector<std::pair<int, std::string>> rank;
  for (const auto& r : role_order) rank.push_back({by_role[r], r});
  std::stable_sort(rank.begin(), rank.end(),
                   [](const auto& x, const auto& y) { return x.first > y.first; });
  // Roles at the same distance share a row.
  std::map<std::string, int> tier;
  int t = -1;
  int last = -1;
  for (const auto& [d, r] : rank) {
    if (t < 0 || d != last) ++t, last = d;
    tier[r] = t;
  }
  for (auto& n : g.nodes) n.tier = tier[n.role];
}

std::string str(const nlohmann::json& j, const char* key) { return json_text(j, key); }

int mtu_of(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number_integer() ? it->get<int>() : 0;
}

std::optional<uint64_t> counter_of(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number_unsigned()) return std::nullopt;
  return it->get<uint64_t>();
}

std::pair<std::string, std::string> split_end(const std::string& s) {
  auto c = s.find(':');
  if (c == std::string::npos) return {s, ""};
  return {s.substr(0, c), s.substr(c + 1)};
}

}  // namespace

Graph from_plan(const plan::Plan& plan) {
  Graph g;
  g.lab = plan.lab;
  for (const auto& n : plan.nodes) {
    Node gn;
    gn.name = n.name;
    gn.kind = topology::to_string(n.kind);
    gn.backend = topology::to_string(n.backend);
    gn.vm = !n.vm.domain.empty();
    gn.role = role_of(n.name, gn.kind);
    gn.asn = n.asn;
    gn.router_id = n.router_id;
    gn.loopbacks = n.loopbacks;
    gn.daemons = n.daemons;
    g.nodes.push_back(std::move(gn));
  }
  for (const auto& l : plan.links) {
    Link gl;
    gl.a = l.a_node, gl.a_interface = l.a_interface, gl.b = l.b_node, gl.b_interface = l.b_interface;
    gl.mtu = l.mtu;
    if (const auto* an = plan.find(l.a_node))
      for (const auto& i : an->interfaces)
        if (i.name == l.a_interface) gl.fabric = i.fabric, gl.intended_up = i.up;
    gl.bandwidth_bps = plan::link_rate_bps(plan, l);
    g.links.push_back(std::move(gl));
  }
  assign_tiers(g);
  return g;
}

void overlay(Graph& g, const LiveInput& in) {
  g.live = true;
  std::map<std::string, Node*> nodes;
  for (auto& n : g.nodes) {
    n.state.clear(), n.notes.clear(), n.failures.clear();
    nodes[n.name] = &n;
  }
  std::map<std::pair<std::string, std::string>, Link*> ends;  // (node, interface) -> link
  std::map<std::pair<std::string, std::string>, Link*> pairs;  // (node, peer node) -> first link
  for (auto& l : g.links) {
    l.state.clear(), l.notes.clear(), l.failures.clear(), l.sessions.clear();
    l.sessions_up = true;
    l.a_oper.clear(), l.b_oper.clear();
    l.a_mtu = l.b_mtu = 0;
    l.a_tx_bytes.reset(), l.a_rx_bytes.reset(), l.b_tx_bytes.reset(), l.b_rx_bytes.reset();
    ends[{l.a, l.a_interface}] = &l;
    ends[{l.b, l.b_interface}] = &l;
    pairs.emplace(std::make_pair(l.a, l.b), &l);
    pairs.emplace(std::make_pair(l.b, l.a), &l);
  }
  g.read_at_ms = 0;
  if (in.status) {
    if (auto t = in.status->find("read_at_ms"); t != in.status->end() && t->is_number_integer())
      g.read_at_ms = t->get<int64_t>();
    for (const auto& nj : in.status->value("nodes", nlohmann::json::array())) {
      auto it = nodes.find(str(nj, "name"));
      if (it == nodes.end()) continue;
      Node& n = *it->second;
      if (!nj.value("netns_present", false)) {
        n.state = "down";
        n.notes.push_back("namespace missing");
        continue;
      }
      n.state = "up";
      for (const auto& d : nj.value("daemons", nlohmann::json::array()))
        if (!d.value("alive", false)) {
          n.state = "degraded";
          n.notes.push_back(str(d, "name") + " exited");
        }
    }
    for (const auto& lj : in.status->value("links", nlohmann::json::array())) {
      auto [an, ai] = split_end(str(lj, "a"));
      auto it = ends.find({an, ai});
      if (it == ends.end()) continue;
      Link& l = *it->second;
      l.a_oper = str(lj, "a_state"), l.b_oper = str(lj, "b_state");
      l.a_mtu = mtu_of(lj, "a_mtu"), l.b_mtu = mtu_of(lj, "b_mtu");
      l.a_tx_bytes = counter_of(lj, "a_tx_bytes"), l.a_rx_bytes = counter_of(lj, "a_rx_bytes");
      l.b_tx_bytes = counter_of(lj, "b_tx_bytes"), l.b_rx_bytes = counter_of(lj, "b_rx_bytes");
      bool up = l.a_oper == "UP" && l.b_oper == "UP";
      l.state = up ? "up" : "down";
      if (!up)
        l.notes.push_back(l.a + ":" + l.a_interface + " " + l.a_oper + ", " + l.b + ":" +
                          l.b_interface + " " + l.b_oper);
      for (auto [node, ifn, m] : {std::tuple{l.a, l.a_interface, l.a_mtu},
                                  std::tuple{l.b, l.b_interface, l.b_mtu}})
        if (m && m != l.mtu) {
          l.notes.push_back("MTU " + std::to_string(m) + " on " + node + ":" + ifn + ", " +
                            std::to_string(l.mtu) + " planned");
          if (l.state == "up") l.state = "degraded";
        }
    }
  }
  if (in.sessions) {
    for (const auto& s : *in.sessions) {
      Link* l = nullptr;
      if (auto it = ends.find({s.node, s.interface}); it != ends.end()) l = it->second;
      else if (auto p = pairs.find({s.node, s.peer_node}); p != pairs.end()) l = p->second;
      if (!l) continue;
      l->sessions.push_back(s.protocol + " " + s.node + "->" + s.peer_node + " " + s.state);
      if (!s.up) {
        l->sessions_up = false;
        if (l->state == "up" || l->state.empty()) l->state = "degraded";
      }
    }
  }
  g.validation = {};
  if (in.validation) {
    g.validation.known = true;
    g.validation.at = in.validation_at;
    for (const auto& c : in.validation->value("likely_causes", nlohmann::json::array())) {
      Cause cause{str(c, "rule"), str(c, "cause"), {}, {}};
      for (const auto& e : c.value("evidence", nlohmann::json::array()))
        if (e.is_string()) cause.evidence.push_back(e);
      for (const auto& n : c.value("nodes", nlohmann::json::array()))
        if (n.is_string()) cause.nodes.push_back(n);
      g.validation.causes.push_back(std::move(cause));
    }
    for (const auto& r : in.validation->value("results", nlohmann::json::array())) {
      std::string st = str(r, "status");
      if (st == "passed") ++g.validation.passed;
      if (st == "failed") ++g.validation.failed;
      if (st == "error") ++g.validation.errors;
      if (st != "failed" && st != "error") continue;
      Failure f{str(r, "validator") + "." + str(r, "test_name"), st, str(r, "message"),
                str(r, "expected"), str(r, "observed")};
      // A test is about a link when its subject starts with one of the node's interfaces
      // ("swp1", "swp1 -> spine1:swp1"), or, for a session family, names the peer node.
      std::string node = str(r, "node"), peer = str(r, "peer");
      std::string first = peer.substr(0, peer.find(' '));
      std::string family = str(r, "validator");
      Link* l = nullptr;
      if (auto it = ends.find({node, first}); it != ends.end()) l = it->second;
      else if (family == "bgp" || family == "ospf" || family == "bfd")
        if (auto p = pairs.find({node, first}); p != pairs.end()) l = p->second;
      if (l) {
        l->failures.push_back(std::move(f));
      } else if (auto n = nodes.find(node); n != nodes.end()) {
        n->second->failures.push_back(std::move(f));
      } else {
        g.validation.lab_wide.push_back(std::move(f));
      }
    }
  }
}

namespace {

// DOT's double-quoted ID: backslash and quote escaped.
std::string q(const std::string& s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    o += c;
  }
  return o + "\"";
}

const char* role_fill(const Node& n) {
  if (n.kind == "host") return "#eeeeee";
  if (n.kind == "bridge") return "#ffffff";
  if (n.role.find("super") != std::string::npos) return "#e2d9f3";
  if (n.role.find("spine") != std::string::npos) return "#cfe2ff";
  if (n.role.find("leaf") != std::string::npos) return "#d1e7dd";
  return "#fff3cd";
}

std::string link_colour(const Link& l) {
  if (l.state == "down") return "#d62728";
  if (l.state == "degraded" || !l.failures.empty()) return "#ff7f0e";
  if (l.state == "up") return "#2ca02c";
  return "#555555";
}

std::string node_label(const Node& n, const std::string& nl) {
  std::string s = n.name;
  if (n.asn) s += nl + "AS " + std::to_string(n.asn);
  if (!n.loopbacks.empty()) s += nl + n.loopbacks.front();
  if (n.vm) s += nl + "(VM)";
  if (n.kind == "bridge") s += nl + "(LAN segment)";
  return s;
}

}  // namespace

std::string to_dot(const Graph& g) {
  std::ostringstream o;
  o << "graph " << q(g.lab) << " {\n"
    << "  graph [rankdir=TB, nodesep=0.3, ranksep=1.1, fontname=\"Helvetica\", label="
    << q("lab " + g.lab + (g.live ? " (live)" : "")) << ", labelloc=t];\n"
    << "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=10];\n"
    << "  edge [fontname=\"Helvetica\", fontsize=8];\n";
  std::map<int, std::vector<const Node*>> rows;
  std::map<std::string, int> tier_of;
  for (const auto& n : g.nodes) rows[n.tier].push_back(&n), tier_of[n.name] = n.tier;
  for (const auto& [tier, ns] : rows) {
    o << "  { rank=same;";
    for (const auto* n : ns) o << " " << q(n->name) << ";";
    o << " }\n";
  }
  for (const auto& n : g.nodes) {
    std::string pen = n.state == "down" ? "#d62728"
                      : (n.state == "degraded" || !n.failures.empty()) ? "#ff7f0e"
                                                                        : "#333333";
    std::string tip = n.name + " (" + n.kind + ", " + n.role + ")";
    for (const auto& x : n.notes) tip += "\n" + x;
    for (const auto& f : n.failures) tip += "\n" + f.test + ": " + f.message;
    o << "  " << q(n.name) << " [id=" << q("node-" + n.name) << ", label=" << q(node_label(n, "\n"))
      << ", fillcolor=" << q(role_fill(n)) << ", color=" << q(pen)
      << (n.kind == "bridge" ? ", shape=hexagon" : "") << (pen != "#333333" ? ", penwidth=2.5" : "")
      << ", tooltip=" << q(tip) << "];\n";
  }
  for (const auto& l : g.links) {
    std::string tip =
        l.a + ":" + l.a_interface + " -- " + l.b + ":" + l.b_interface + " MTU " +
        std::to_string(l.mtu) +
        (l.bandwidth_bps ? ", rate " + human_rate(static_cast<double>(l.bandwidth_bps)) : "");
    for (const auto& x : l.notes) tip += "\n" + x;
    for (const auto& s : l.sessions) tip += "\n" + s;
    for (const auto& f : l.failures) tip += "\n" + f.test + ": " + f.message;
    std::string style = l.intended_up ? (l.state == "down" ? "dashed" : "solid") : "dotted";
    // dot ranks an edge's tail above its head, undirected or not: the upper tier goes first.
    bool flip = tier_of[l.b] < tier_of[l.a];
    const std::string& top = flip ? l.b : l.a;
    const std::string& bottom = flip ? l.a : l.b;
    o << "  " << q(top) << " -- " << q(bottom) << " [id=" << q("link-" + l.a + ":" + l.a_interface)
      << ", taillabel=" << q(flip ? l.b_interface : l.a_interface)
      << ", headlabel=" << q(flip ? l.a_interface : l.b_interface)
      << ", color=" << q(link_colour(l)) << ", style=" << style
      << (l.state == "down" || l.state == "degraded" ? ", penwidth=2.5" : "")
      << ", tooltip=" << q(tip) << "];\n";
  }
  o << "}\n";
  return o.str();
}

std::string to_mermaid(const Graph& g) {
  std::ostringstream o;
  o << "graph TD\n";
  // Mermaid IDs: letters, digits, underscore. Names map to n0, n1, ... (labels carry the names).
  std::map<std::string, std::string> id;
  for (size_t i = 0; i < g.nodes.size(); ++i) id[g.nodes[i].name] = "n" + std::to_string(i);
  auto label = [](std::string s) {
    std::string o;
    for (char c : s) o += c == '"' ? std::string("#quot;") : std::string(1, c);
    return o;
  };
  std::map<int, std::vector<const Node*>> rows;
  for (const auto& n : g.nodes) rows[n.tier].push_back(&n);
  for (const auto& [tier, ns] : rows) {
    o << "  subgraph tier" << tier << " [\" \"]\n    direction LR\n";
    for (const auto* n : ns)
      o << "    " << id[n->name] << "[\"" << label(node_label(*n, "<br/>")) << "\"]\n";
    o << "  end\n";
  }
  std::vector<std::string> styles;
  for (size_t i = 0; i < g.links.size(); ++i) {
    const auto& l = g.links[i];
    o << "  " << id[l.a] << " ---|\"" << label(l.a_interface + " · " + l.b_interface + " · " +
                                               std::to_string(l.mtu))
      << "\"| " << id[l.b] << "\n";
    std::string c = link_colour(l);
    if (c != "#555555" && c != "#2ca02c")
      styles.push_back("  linkStyle " + std::to_string(i) + " stroke:" + c + ",stroke-width:3px");
  }
  for (const auto& s : styles) o << s << "\n";
  for (const auto& n : g.nodes)
    o << "  style " << id[n.name] << " fill:" << role_fill(n)
      << (n.state == "down" ? ",stroke:#d62728,stroke-width:3px" : "") << "\n";
  return o.str();
}

nlohmann::json to_json(const Failure& f) {
  return {{"test", f.test},         {"status", f.status},     {"message", f.message},
          {"expected", f.expected}, {"observed", f.observed}};
}

nlohmann::json to_json(const Graph& g) {
  auto failures = [](const std::vector<Failure>& fs) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& f : fs) a.push_back(to_json(f));
    return a;
  };
  auto counter = [](const std::optional<uint64_t>& c) {
    return c ? nlohmann::json(*c) : nlohmann::json(nullptr);
  };
  nlohmann::json j{{"lab", g.lab}, {"live", g.live}, {"read_at_ms", g.read_at_ms}};
  j["nodes"] = nlohmann::json::array();
  for (const auto& n : g.nodes)
    j["nodes"].push_back({{"name", n.name},
                          {"kind", n.kind},
                          {"backend", n.backend},
                          {"role", n.role},
                          {"tier", n.tier},
                          {"asn", n.asn},
                          {"router_id", n.router_id},
                          {"loopbacks", n.loopbacks},
                          {"daemons", n.daemons},
                          {"state", n.state},
                          {"notes", n.notes},
                          {"failures", failures(n.failures)}});
  j["links"] = nlohmann::json::array();
  for (const auto& l : g.links)
    j["links"].push_back({{"id", l.a + ":" + l.a_interface},
                          {"a", l.a},
                          {"a_interface", l.a_interface},
                          {"b", l.b},
                          {"b_interface", l.b_interface},
                          {"mtu", l.mtu},
                          {"fabric", l.fabric},
                          {"intended_up", l.intended_up},
                          {"bandwidth_bps", l.bandwidth_bps},
                          {"state", l.state},
                          {"a_oper", l.a_oper},
                          {"b_oper", l.b_oper},
                          {"a_mtu", l.a_mtu},
                          {"b_mtu", l.b_mtu},
                          {"a_tx_bytes", counter(l.a_tx_bytes)},
                          {"a_rx_bytes", counter(l.a_rx_bytes)},
                          {"b_tx_bytes", counter(l.b_tx_bytes)},
                          {"b_rx_bytes", counter(l.b_rx_bytes)},
                          {"sessions", l.sessions},
                          {"sessions_up", l.sessions_up},
                          {"notes", l.notes},
                          {"failures", failures(l.failures)}});
  const auto& v = g.validation;
  nlohmann::json causes = nlohmann::json::array();
  for (const auto& c : v.causes)
    causes.push_back({{"rule", c.rule}, {"cause", c.text}, {"evidence", c.evidence}, {"nodes", c.nodes}});
  j["validation"] = v.known ? nlohmann::json{{"at", v.at},
                                             {"passed", v.passed},
                                             {"failed", v.failed},
                                             {"errors", v.errors},
                                             {"lab_wide", failures(v.lab_wide)},
                                             {"likely_causes", causes}}
                            : nlohmann::json(nullptr);
  return j;
}

}  // namespace twin::graph
