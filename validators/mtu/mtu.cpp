#include "validators/mtu/mtu.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <queue>
#include <set>
#include <unordered_map>

namespace twin::validators {

namespace {
// The VNI a link's end is bridged into (a tenant port), 0 for a routed link.
uint32_t bridged_vni(const plan::Plan& plan, const plan::Link& l) {
  for (const auto& [node, ifname] : {std::pair{&l.a_node, &l.a_interface}, {&l.b_node, &l.b_interface}})
    if (const plan::Node* n = plan.find(*node))
      for (const auto& i : n->interfaces)
        if (i.name == *ifname && i.vni) return i.vni;
  return 0;
}
}  // namespace

using validate::make_result;
using validate::PingProbe;
using validate::Status;
using validate::TestResult;

namespace {
using validate::is_ipv6;

const nlohmann::json* find_ifname(const Result<nlohmann::json>& r, const std::string& ifname) {
  if (!r || !r->is_array()) return nullptr;
  for (const auto& l : *r)
    if (l.is_object() && l.value("ifname", "") == ifname) return &l;
  return nullptr;
}
// Why `node`'s answer to `ip -j <args>` (a list of its interfaces) holds no data; "" when it
// does. Every namespace has lo: an empty list is a read that returned nothing.
std::string no_interfaces(const std::map<std::string, Result<nlohmann::json>>& answers,
                          const std::string& node, const std::vector<std::string>& args) {
  const std::string cmd = validate::ip_command(args);
  auto it = answers.find(node);
  if (it == answers.end()) return node + ": `" + cmd + "` not probed";
  if (!it->second) return validate::source_failed(node, cmd, it->second.error().message);
  if (!it->second->is_array()) return node + ": `" + cmd + "` did not return a list";
  if (it->second->empty()) return node + ": `" + cmd + "` listed no interface, not even lo";
  return "";
}
const std::vector<std::string> kLinkShow = {"link", "show"};
const std::vector<std::string> kAddrShow = {"addr", "show"};

int intended_mtu(const plan::Plan& plan, const std::string& node, const std::string& ifname,
                 int fallback) {
  if (const auto* n = plan.find(node))
    for (const auto& i : n->interfaces)
      if (i.name == ifname) return i.mtu;
  return fallback;
}

bool link_intended_up(const plan::Plan& plan, const plan::Link& l) {
  for (const auto& [node, ifname] : {std::pair{l.a_node, l.a_interface}, {l.b_node, l.b_interface}})
    if (const auto* n = plan.find(node))
      for (const auto& i : n->interfaces)
        if (i.name == ifname && !i.up) return false;
  return true;
}
}  // namespace

std::vector<TestResult> evaluate_link_mtu(
    const plan::Plan& plan, const std::map<std::string, Result<nlohmann::json>>& links) {
  std::vector<TestResult> out;
  for (const auto& l : plan.links) {
    std::string subject = l.a_node + ":" + l.a_interface + " <-> " + l.b_node + ":" + l.b_interface;
    std::string why = no_interfaces(links, l.a_node, kLinkShow);
    if (why.empty()) why = no_interfaces(links, l.b_node, kLinkShow);
    if (!why.empty()) {
      out.push_back(make_result("mtu", 0, "link-mtu", Status::kError, l.a_node, subject,
                                std::to_string(l.mtu), "no data",
                                "cannot read the MTUs of this link: " + why));
      continue;
    }
    auto ia = links.find(l.a_node);
    auto ib = links.find(l.b_node);
    const auto* a = find_ifname(ia->second, l.a_interface);
    const auto* b = find_ifname(ib->second, l.b_interface);
    auto mtu_of = [](const nlohmann::json* j) { return j ? j->value("mtu", -1) : -1; };
    int ma = mtu_of(a), mb = mtu_of(b);
    // Intended MTU per end: the topology's, or what a change set on that end.
    int ea = intended_mtu(plan, l.a_node, l.a_interface, l.mtu);
    int eb = intended_mtu(plan, l.b_node, l.b_interface, l.mtu);
    auto show = [](int m) { return m < 0 ? std::string("missing") : std::to_string(m); };
    std::string observed = l.a_node + ":" + l.a_interface + "=" + show(ma) + " " + l.b_node + ":" +
                           l.b_interface + "=" + show(mb);
    bool ok = ma == ea && mb == eb && ea == eb;
    std::string intended = ea == eb
                               ? std::to_string(ea) + " on both ends"
                               : l.a_node + ":" + l.a_interface + "=" + std::to_string(ea) + " " +
                                     l.b_node + ":" + l.b_interface + "=" + std::to_string(eb);
    std::string msg;
    if (!ok) {
      if (ma < 0 || mb < 0)
        msg = "interface missing on " +
              (ma < 0 ? l.a_node + ":" + l.a_interface : l.b_node + ":" + l.b_interface);
      else if (ma != mb)
        msg = "MTU mismatch: " + l.a_node + ":" + l.a_interface + " " + show(ma) + " vs " +
              l.b_node + ":" + l.b_interface + " " + show(mb) + " (intended: " + intended + ")";
      else if (ea != eb)
        msg = "the intended MTUs of the two ends differ (" + intended +
              "): frames above the smaller one are dropped";
      else
        msg = "both ends have MTU " + show(ma) + ", the topology says " + std::to_string(ea);
    }
    out.push_back(make_result("mtu", 0, "link-mtu", ok ? Status::kPassed : Status::kFailed,
                              l.a_node, subject, intended, observed, msg));
  }
  return out;
}

std::vector<PingProbe> link_df_probes(const plan::Plan& plan,
                                      const std::map<std::string, Result<nlohmann::json>>& addrs,
                                      std::vector<TestResult>* skipped) {
  std::vector<PingProbe> out;
  auto local_of = [&](const std::string& node, const std::string& ifname, bool want_v6,
                      bool link_local) -> std::string {
    auto it = addrs.find(node);
    if (it == addrs.end()) return "";
    const auto* l = find_ifname(it->second, ifname);
    if (!l || !l->contains("addr_info")) return "";
    for (const auto& a : (*l)["addr_info"]) {
      bool v6 = a.value("family", "") == "inet6";
      if (v6 != want_v6) continue;
      if (want_v6 && link_local != (a.value("scope", "") == "link")) continue;
      if (a.contains("tentative") || a.contains("dadfailed")) continue;
      return a.value("local", "");
    }
    return "";
  };
  for (const auto& l : plan.links) {
    if (!link_intended_up(plan, l)) {
      if (skipped)
        skipped->push_back(make_result("mtu", 1, "link-df", Status::kSkipped, l.a_node,
                                       l.a_interface + " -> " + l.b_node + ":" + l.b_interface,
                                       "link down", "not probed",
                                       "the change means this link to be down"));
      continue;
    }
    // A tenant port is a bridge member with no address to ping: the evpn family's
    // overlay-mtu test sends full frames over it, end to end.
    if (bridged_vni(plan, l)) {
      if (skipped)
        skipped->push_back(make_result("mtu", 1, "link-df", Status::kSkipped, l.a_node,
                                       l.a_interface + " -> " + l.b_node + ":" + l.b_interface,
                                       "an L3 end", "not probed",
                                       "a tenant port (bridged, no address): evpn "
                                       "overlay-mtu covers it"));
      continue;
    }
    // Each end toward its layer-2 neighbors: the far end of a point-to-point link (both ends
    // are up here), each other member across a LAN segment's bridge (which has no address and
    // sends nothing itself: l2_peers lists none for its ports).
    std::vector<std::array<std::string, 4>> pairs;  // from, from_if, to, to_if
    for (int side = 0; side < 2; ++side) {
      const std::string& from = side == 0 ? l.a_node : l.b_node;
      const std::string& from_if = side == 0 ? l.a_interface : l.b_interface;
      const plan::Node* fn = plan.find(from);
      const plan::Interface* fi = fn ? plan::find_interface(*fn, from_if) : nullptr;
      if (!fi) continue;
      for (const auto& peer : plan::l2_peers(plan, *fn, *fi))
        pairs.push_back({from, from_if, peer.node, peer.interface});
    }
    for (const auto& [from, from_if, to, to_if] : pairs) {
      std::string subject = from_if + " -> " + to + ":" + to_if;
      PingProbe p;
      p.test = 1;
      p.test_name = "link-df";
      p.node = from;
      p.subject = subject;
      p.request.interface = from_if;
      p.request.dont_fragment = true;
      p.request.count = 2;
      p.request.timeout = std::chrono::milliseconds(1500);
      std::string ll = l.mtu >= 1280 ? local_of(to, to_if, true, true) : "";
      std::string v4 = local_of(to, to_if, false, false);
      if (!ll.empty()) {
        p.request.destination = ll;
        p.request.payload_bytes = l.mtu - 48;
      } else if (!v4.empty()) {
        p.request.destination = v4;
        p.request.payload_bytes = l.mtu - 28;
      } else {
        if (skipped) {
          const std::string why = no_interfaces(addrs, to, kAddrShow);
          const bool no_data = !why.empty();
          skipped->push_back(make_result(
              "mtu", 1, "link-df", no_data ? Status::kError : Status::kFailed, from, subject,
              "reply with DF at " + std::to_string(l.mtu) + " bytes",
              no_data ? "no data" : "no address on peer",
              no_data ? "cannot read the peer's addresses: " + why
                      : to + ":" + to_if + " has no IPv6 link-local or IPv4 address to ping"));
        }
        continue;
      }
      p.expected = "reply with DF at " + std::to_string(l.mtu) + " bytes";
      out.push_back(std::move(p));
    }
  }
  return out;
}

namespace {
constexpr int kUnreachable = std::numeric_limits<int>::max();

// The plan's forwarding graph by node position: edge u -> v for each interface of u that
// forwards (plan::forwarding_cost > 0), with the largest frame it carries. Built once per
// validation: path MTU is asked for every pair (262k at 512 nodes), and walking the plan by
// name per pair was most of the mtu validator's time at 256 nodes.
struct ForwardingGraph {
  struct Edge {
    int to;
    int cost;
    int mtu;  // the smaller of both ends' MTU: a veth drops frames above the receiver's too
  };
  std::vector<std::vector<Edge>> out;
  std::vector<std::vector<Edge>> in;  // the same edges reversed: {from, cost, mtu}
};

// A node's position in plan.nodes (the graph's node number), -1 if the plan has no such node.
int position(const plan::Plan& plan, const std::string& name) {
  const plan::Node* n = plan.find(name);
  return n ? static_cast<int>(n - plan.nodes.data()) : -1;
}

ForwardingGraph forwarding_graph(const plan::Plan& plan) {
  ForwardingGraph g;
  g.out.resize(plan.nodes.size());
  g.in.resize(plan.nodes.size());
  for (size_t u = 0; u < plan.nodes.size(); ++u) {
    const auto& un = plan.nodes[u];
    for (const auto& i : un.interfaces) {
      const int w = plan::forwarding_cost(plan, un, i);
      if (w <= 0) continue;
      // Across a LAN segment the next hop is another member, not the bridge: an edge to each,
      // carrying the smallest MTU of the two member ports and the bridge's port.
      const bool lan = plan::segment_of(plan, i) != nullptr;
      std::vector<plan::L2Peer> next =
          lan ? plan::l2_peers(plan, un, i)
              : std::vector<plan::L2Peer>{{i.peer_node, i.peer_interface}};
      const int port_mtu = intended_mtu(plan, i.peer_node, i.peer_interface, i.mtu);
      for (const auto& peer : next) {
        const int v = position(plan, peer.node);
        if (v < 0) continue;
        int mtu = std::min(i.mtu, port_mtu);
        if (lan) mtu = std::min(mtu, intended_mtu(plan, peer.node, peer.interface, i.mtu));
        g.out[u].push_back({v, w, mtu});
        g.in[static_cast<size_t>(v)].push_back({static_cast<int>(u), w, mtu});
      }
    }
  }
  return g;
}

// Cost of every node's cheapest path to `dst` (Dijkstra over plan::forwarding_cost), so path MTU
// follows the paths routing takes: AS hops over BGP, OSPF costs over adjacencies.
std::vector<int> costs_to(const ForwardingGraph& g, int dst) {
  std::vector<int> dist(g.out.size(), kUnreachable);
  using Item = std::pair<int, int>;  // cost, node
  std::priority_queue<Item, std::vector<Item>, std::greater<>> todo;
  dist[dst] = 0;
  todo.push({0, dst});
  while (!todo.empty()) {
    auto [du, u] = todo.top();
    todo.pop();
    if (du != dist[u]) continue;  // a stale entry: u was reached cheaper since
    for (const auto& e : g.in[u])
      if (du + e.cost < dist[e.to]) {
        dist[e.to] = du + e.cost;
        todo.push({dist[e.to], e.to});
      }
  }
  return dist;
}

// For every node, the smallest MTU over every cheapest path from it to `dst` (ECMP may use any
// of them); 0 where there is none. Nodes are taken nearest first, so each one's next hops are
// known: its value is the minimum over those next hops of min(link MTU, next hop's value).
std::vector<int> path_mtus_to(const ForwardingGraph& g, int dst) {
  const auto dist = costs_to(g, dst);
  std::vector<int> order;
  for (size_t u = 0; u < dist.size(); ++u)
    if (dist[u] != kUnreachable) order.push_back(int(u));
  std::sort(order.begin(), order.end(), [&](int a, int b) { return dist[a] < dist[b]; });
  std::vector<int> best(dist.size(), kUnreachable);
  for (int u : order)
    for (const auto& e : g.out[u])
      if (dist[e.to] != kUnreachable && dist[e.to] == dist[u] - e.cost)
        best[u] = std::min({best[u], e.mtu, best[e.to]});
  for (auto& m : best)
    if (m == kUnreachable) m = 0;
  return best;
}
}  // namespace

int path_mtu(const plan::Plan& plan, const std::string& src, const std::string& dst) {
  const int s = position(plan, src), d = position(plan, dst);
  if (s < 0 || d < 0) return 0;
  return path_mtus_to(forwarding_graph(plan), d)[static_cast<size_t>(s)];
}

std::vector<PingProbe> path_mtu_probes(const plan::Plan& plan, int max_pairs) {
  std::vector<PingProbe> all;
  const auto graph = forwarding_graph(plan);
  std::unordered_map<const plan::Node*, std::vector<int>> mtus_to;  // one pass per destination
  const auto paths = plan::expected_paths_by_family(plan);
  for (const auto& [srcp, dstp] : validate::routed_frr_pairs(plan)) {
    const auto& src = *srcp;
    const auto& dst = *dstp;
    {
      auto to = mtus_to.find(dstp);
      if (to == mtus_to.end())
        to = mtus_to.emplace(dstp, path_mtus_to(graph, position(plan, dst.name))).first;
      int pmtu = to->second[static_cast<size_t>(position(plan, src.name))];
      if (pmtu <= 0) continue;
      // One family is enough to measure the path; prefer IPv4.
      std::string d, s;
      const auto dst_loops = validate::advertised_loopbacks(dst);
      const auto src_loops = validate::advertised_loopbacks(src);
      for (bool v6 : {false, true}) {
        if (!validate::routed_both_ways(paths.of(v6 ? 6 : 4), src.name, dst.name)) continue;
        d = validate::first_of_family(dst_loops, v6);
        s = validate::first_of_family(src_loops, v6);
        if (!d.empty() && !s.empty()) break;
        d.clear();
      }
      if (d.empty()) continue;
      PingProbe p;
      p.test = 2;
      p.test_name = "path-mtu";
      p.node = src.name;
      p.subject = dst.name + " " + d;
      p.expected = "reply with DF at path MTU " + std::to_string(pmtu);
      p.request.destination = d;
      p.request.source = s;
      p.request.dont_fragment = true;
      p.request.payload_bytes = pmtu - (is_ipv6(d) ? 48 : 28);
      p.request.count = 2;
      p.request.timeout = std::chrono::milliseconds(1500);
      all.push_back(std::move(p));
    }
  }
  return validate::sample_evenly(std::move(all), max_pairs);
}

std::vector<TestResult> MtuValidator::run(validate::Context& ctx) {
  std::vector<const plan::Node*> nodes;
  for (const auto& n : ctx.plan.nodes) nodes.push_back(&n);
  std::vector<std::optional<Result<nlohmann::json>>> links(nodes.size()), addrs(nodes.size());
  validate::parallel_for(nodes.size(), ctx.parallel, [&](size_t i) {
    links[i] = ctx.probe.ip_json(*nodes[i], kLinkShow);
    addrs[i] = ctx.probe.ip_json(*nodes[i], kAddrShow);
  });
  std::map<std::string, Result<nlohmann::json>> lm, am;
  for (size_t i = 0; i < nodes.size(); ++i) {
    lm.emplace(nodes[i]->name, std::move(*links[i]));
    am.emplace(nodes[i]->name, std::move(*addrs[i]));
  }
  auto out = evaluate_link_mtu(ctx.plan, lm);
  std::vector<TestResult> unprobeable;
  auto probes = link_df_probes(ctx.plan, am, &unprobeable);
  auto paths = path_mtu_probes(ctx.plan, ctx.max_pairs);
  probes.insert(probes.end(), paths.begin(), paths.end());
  auto pinged = validate::run_ping_probes(ctx, "mtu", probes);
  out.insert(out.end(), unprobeable.begin(), unprobeable.end());
  out.insert(out.end(), pinged.begin(), pinged.end());
  return out;
}

}  // namespace twin::validators
