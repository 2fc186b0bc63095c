#include "twin/validate/validator.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "twin/core/ip.hpp"

namespace twin::validate {

Result<std::map<std::string, std::vector<ProcessHealth>>> LabProbe::processes(const plan::Plan&) {
  return usage_error("this probe cannot see the lab's processes");
}

Result<std::string> LabProbe::running_config(const plan::Node&) {
  return usage_error("this probe cannot read running configurations");
}

Result<traffic::Report> LabProbe::traffic(const plan::Plan&, const traffic::Options&) {
  return usage_error("this probe cannot send traffic");
}

TestResult make_result(const std::string& validator, int test, const std::string& test_name,
                       Status status, const std::string& node, const std::string& peer,
                       const std::string& expected, const std::string& observed,
                       const std::string& message) {
  TestResult r;
  r.validator = validator;
  r.test = test;
  r.test_name = test_name;
  r.status = status;
  r.node = node;
  r.peer = peer;
  r.expected = expected;
  r.observed = observed;
  r.message = message;
  return r;
}

TestResult ping_result(const std::string& validator, const PingProbe& probe,
                       const PingResult& result) {
  Status st = Status::kFailed;
  if (result.outcome == PingOutcome::kReply) st = Status::kPassed;
  if (result.outcome == PingOutcome::kError) st = Status::kError;
  std::string observed = to_string(result.outcome);
  if (result.outcome == PingOutcome::kReply) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "reply in %.2f ms", result.rtt_ms);
    observed = buf;
  } else if (result.outcome == PingOutcome::kTooBig && result.mtu > 0) {
    observed += " (path MTU " + std::to_string(result.mtu) + ")";
  }
  const auto& q = probe.request;
  std::string what = "ping " + q.destination + (q.interface.empty() ? "" : "%" + q.interface) +
                     (q.source.empty() ? "" : " from " + q.source) +
                     (q.dont_fragment ? " with DF, " : ", ") + std::to_string(q.payload_bytes) +
                     "-byte payload";
  std::string msg = st == Status::kPassed ? "" : what + ": " + observed;
  if (!result.detail.empty() && st != Status::kPassed) msg += " (" + result.detail + ")";
  // "Fragmentation needed" in the destination's own name: no host refuses its own reply that
  // way; a Linux VXLAN VTEP answers for bridged traffic in the inner destination's name. It
  // holds a path MTU toward its remote VTEP learned from an earlier ICMP error (a route
  // exception, kept ~10 min): the underlay may be fine again, the VTEP still refuses full
  // frames until it expires.
  const std::string from_dst = " from " + q.destination;
  if (result.outcome == PingOutcome::kTooBig && result.detail.size() >= from_dst.size() &&
      result.detail.compare(result.detail.size() - from_dst.size(), from_dst.size(), from_dst) == 0)
    msg += " — sent in " + q.destination +
           "'s name by a VXLAN VTEP on the path: it holds path MTU " + std::to_string(result.mtu) +
           " toward its remote VTEP, from an ICMP error of the underlay (a route exception kept "
           "~10 min: `ip route get <remote VTEP>` on the leaves shows it, `ip route flush "
           "cache` clears it)";
  auto r = make_result(validator, probe.test, probe.test_name, st, probe.node, probe.subject,
                       probe.expected, observed, msg);
  return r;
}

std::vector<TestResult> run_ping_probes(Context& ctx, const std::string& validator,
                                        const std::vector<PingProbe>& probes) {
  return run_ping_probes(ctx, probes, [&](const PingProbe& p, const PingResult& r) {
    return ping_result(validator, p, r);
  });
}

std::vector<TestResult> run_ping_probes(Context& ctx, const std::vector<PingProbe>& probes,
                                        const PingJudge& judge) {
  std::vector<std::string> nodes;
  std::map<std::string, std::vector<size_t>> by_node;
  for (size_t i = 0; i < probes.size(); ++i) {
    if (!by_node.count(probes[i].node)) nodes.push_back(probes[i].node);
    by_node[probes[i].node].push_back(i);
  }
  std::vector<TestResult> out(probes.size());
  parallel_for(nodes.size(), ctx.parallel, [&](size_t k) {
    const auto& idx = by_node.at(nodes[k]);
    const plan::Node* node = ctx.plan.find(nodes[k]);
    std::vector<PingRequest> reqs;
    for (size_t i : idx) {
      reqs.push_back(probes[i].request);
      if (ctx.ping_timeout.count() > 0)
        reqs.back().timeout = std::min(reqs.back().timeout, ctx.ping_timeout);
    }
    std::vector<PingResult> res;
    if (node) res = ctx.probe.ping(*node, reqs);
    for (size_t j = 0; j < idx.size(); ++j) {
      PingResult r;
      if (j < res.size()) {
        r = res[j];
      } else {
        r.outcome = PingOutcome::kError;
        r.detail = node ? "no result from the prober" : "unknown node";
      }
      out[idx[j]] = judge(probes[idx[j]], r);
    }
  });
  return out;
}

std::vector<std::pair<const plan::Node*, const plan::Node*>> routed_frr_pairs(
    const plan::Plan& plan) {
  const auto paths = plan::expected_paths_by_family(plan);
  std::vector<std::pair<const plan::Node*, const plan::Node*>> out;
  for (const auto& src : plan.nodes)
    for (const auto& dst : plan.nodes)
      if (src.kind == topology::NodeKind::kFrr && dst.kind == topology::NodeKind::kFrr &&
          src.name != dst.name &&
          (routed_both_ways(paths.ipv4, src.name, dst.name) ||
           routed_both_ways(paths.ipv6, src.name, dst.name)))
        out.emplace_back(&src, &dst);
  return out;
}

bool routed_both_ways(const plan::PathTable& paths, const std::string& a, const std::string& b) {
  auto there = paths.find({a, b});
  auto back = paths.find({b, a});
  return there != paths.end() && there->second.ecmp > 0 && back != paths.end() &&
         back->second.ecmp > 0;
}

std::vector<std::pair<const plan::Node*, const plan::Node*>> routed_frr_pairs(
    const plan::Plan& plan, const plan::PathTable& paths) {
  std::vector<std::pair<const plan::Node*, const plan::Node*>> out;
  for (const auto& src : plan.nodes) {
    if (src.kind != topology::NodeKind::kFrr) continue;
    for (const auto& dst : plan.nodes) {
      if (dst.kind != topology::NodeKind::kFrr || dst.name == src.name) continue;
      // A ping needs its reply: a path both ways (RFC 8212 or a filter can leave one way only).
      if (routed_both_ways(paths, src.name, dst.name)) out.emplace_back(&src, &dst);
    }
  }
  return out;
}

namespace {
// The FRR router a host hangs off: on its first port up with a router as a layer-2 neighbor,
// the one that holds the host's default gateway (a LAN segment can hold several routers), else
// the first. `isolated` when no port of the host reaches anything, else nullptr.
// `*gateway_held`: the router returned holds the host's default-route next hop on that link.
const plan::Node* router_of(const plan::Plan& plan, const plan::Node& host, bool* isolated,
                            bool* gateway_held) {
  *isolated = !host.interfaces.empty();
  *gateway_held = false;
  std::string gateway;
  for (const auto& r : host.routes)
    if (r.destination == "default" && gateway.empty()) gateway = r.via;
  auto holds = [&](const plan::Node& n, const std::string& ifname) {
    std::vector<std::string> held;
    if (const plan::Interface* i = plan::find_interface(n, ifname)) held = i->addresses;
    if (auto it = n.config_addresses.find(ifname); it != n.config_addresses.end())
      held.insert(held.end(), it->second.begin(), it->second.end());
    return std::any_of(held.begin(), held.end(),
                       [&](const std::string& a) { return address_of(a) == gateway; });
  };
  for (const auto& i : host.interfaces) {
    if (!i.up) continue;
    const auto peers = plan::l2_peers(plan, host, i);
    if (peers.empty()) continue;
    *isolated = false;
    const plan::Node* first = nullptr;
    for (const auto& l2 : peers) {
      const plan::Node* p = plan.find(l2.node);
      if (!p || p->kind != topology::NodeKind::kFrr) continue;
      if (!gateway.empty() && holds(*p, l2.interface)) {
        *gateway_held = true;
        return p;
      }
      if (!first) first = p;
    }
    if (first) return first;
  }
  return nullptr;
}

// Whether `router` originates a subnet holding `address` (a host-subnet prefix of the plan).
bool originates(const plan::Plan& plan, const plan::Node& router, const std::string& address) {
  auto a = IpPrefix::parse(address_of(address), true);
  for (const auto& e : plan.prefixes)
    if (e.owner == router.name)
      if (auto p = IpPrefix::parse(e.prefix); p && a && p->contains(*a)) return true;
  return false;
}
}  // namespace

bool hosts_routed(const plan::Plan& plan, const plan::PathTable& paths, const plan::Node& a,
                  const plan::Node& b, const std::string& a_addr, const std::string& b_addr) {
  // Tenant servers: one L2 segment per network, judged by the tenant tests; across networks
  // only a routing tenant's (L3 VNI) reach each other, never another tenant's.
  const plan::TenantPlan *ta = nullptr, *tb = nullptr;
  const auto* na = plan::tenant_network_of_server(plan, a.name, &ta);
  const auto* nb = plan::tenant_network_of_server(plan, b.name, &tb);
  const bool overlay = na || nb;
  if (overlay && (!na || !nb || ta != tb || (na != nb && ta->l3vni == 0))) return false;
  bool a_cut = false, b_cut = false, a_held = false, b_held = false;
  const auto* ra = router_of(plan, a, &a_cut, &a_held);
  const auto* rb = router_of(plan, b, &b_cut, &b_held);
  if (a_cut || b_cut) return false;
  if (overlay) {
    // Over the overlay: both VTEPs in service and routing to each other's loopback (their
    // servers' subnets are no fabric routes).
    if (!ra || !rb || ra->drained || rb->drained) return false;
  } else if (!ra || !rb) {
    return true;
  } else if (!a_held || !b_held) {
    // A host whose default route leads to no router's address there (a containerlab host
    // twin gives none, as containerlab does) reaches its own subnet only.
    auto other = IpPrefix::parse(address_of(b_addr), true);
    for (const auto& i : a.interfaces)
      for (const auto& x : i.addresses)
        if (address_of(x) == address_of(a_addr))
          if (auto net = IpPrefix::parse(x); net && other && net->network().contains(*other))
            return true;
    return false;
  }
  if (ra == rb) return true;
  if (!overlay && (!originates(plan, *ra, a_addr) || !originates(plan, *rb, b_addr))) return false;
  return routed_both_ways(paths, ra->name, rb->name);
}

const nlohmann::json* find_bgp_peer(const nlohmann::json& summary, const std::string& key) {
  const nlohmann::json* found = nullptr;
  if (!summary.is_object()) return nullptr;
  for (const char* af : {"ipv4Unicast", "ipv6Unicast"}) {
    auto it = summary.find(af);
    if (it == summary.end() || !it->is_object() || !it->contains("peers")) continue;
    const auto& peers = (*it)["peers"];
    if (!peers.is_object() || !peers.contains(key)) continue;
    if (peers[key].value("state", "") == "Established") return &peers[key];
    if (!found) found = &peers[key];
  }
  return found;
}

int ospf_state_rank(const std::string& s) {
  static const char* kOrder[] = {"Down",     "Attempt", "Init",    "2-Way",
                                 "ExStart",  "Exchange", "Loading", "Full"};
  for (int i = 7; i >= 0; --i)
    if (s.rfind(kOrder[i], 0) == 0) return i;
  return -1;
}

std::optional<OspfNeighbor> find_ospf_neighbor(const nlohmann::json& neighbors,
                                               const std::string& ifname,
                                               const std::string& router_id) {
  if (!neighbors.is_object() || !neighbors.contains("neighbors")) return std::nullopt;
  const auto& all = neighbors["neighbors"];
  std::optional<OspfNeighbor> best;
  // OSPFv3 (`show ipv6 ospf6 neighbor json`): a list of {"neighborId", "state", "interfaceName"}.
  if (all.is_array()) {
    for (const auto& e : all) {
      if (!e.is_object() || e.value("interfaceName", "") != ifname) continue;
      if (!router_id.empty() && e.value("neighborId", "") != router_id) continue;
      std::string st = e.value("state", "");
      if (!best || ospf_state_rank(st) > ospf_state_rank(best->state))
        best = OspfNeighbor{e.value("neighborId", ""), st, e.value("ifState", ""),
                            e.value("interfaceState", "")};
    }
    return best;
  }
  if (!all.is_object()) return std::nullopt;
  for (const auto& [rid, list] : all.items()) {
    if (!list.is_array() || (!router_id.empty() && rid != router_id)) continue;
    for (const auto& e : list) {
      if (!e.is_object()) continue;
      std::string iface = e.value("ifaceName", "");
      if (iface.substr(0, iface.find(':')) != ifname) continue;
      std::string st = e.value("nbrState", e.value("state", ""));
      if (!best || ospf_state_rank(st) > ospf_state_rank(best->state)) {
        auto slash = st.find('/');
        best = OspfNeighbor{rid, st, slash == std::string::npos ? "" : st.substr(slash + 1), ""};
      }
    }
  }
  return best;
}

bool ospf_two_way(const std::string& state) {
  std::string s = state.substr(0, state.find('/'));
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s == "2-way" || s == "twoway";
}

std::string ospf_role(const std::string& role) { return role == "BDR" ? "Backup" : role; }

std::string ospf_neighbor_state(const nlohmann::json& neighbors, const std::string& ifname) {
  auto n = find_ospf_neighbor(neighbors, ifname);
  return n ? n->state : "";
}

std::string source_failed(const std::string& node, const std::string& command,
                          const std::string& why) {
  return node + ": `" + command + "` failed: " + why;
}

std::string ip_command(const std::vector<std::string>& args) {
  const bool fdb = !args.empty() && args[0] == "fdb";
  std::string out = fdb ? "bridge -j" : "ip -j";
  for (const auto& a : args) out += " " + a;
  return out;
}

bool is_ipv6(const std::string& a) { return a.find(':') != std::string::npos; }

std::string address_of(const std::string& prefix) { return prefix.substr(0, prefix.find('/')); }

std::string first_of_family(const std::vector<std::string>& loopbacks, bool v6) {
  for (const auto& l : loopbacks)
    if (is_ipv6(l) == v6) return address_of(l);
  return {};
}

std::vector<PingProbe> sample_evenly(std::vector<PingProbe> probes, int max) {
  if (max <= 0 || static_cast<int>(probes.size()) <= max) return probes;
  std::vector<PingProbe> out;
  double step = static_cast<double>(probes.size()) / max;
  for (int i = 0; i < max; ++i) out.push_back(std::move(probes[static_cast<size_t>(i * step)]));
  return out;
}

std::vector<std::string> advertised_loopbacks(const plan::Node& node) {
  std::vector<std::string> out;
  for (const auto& l : node.loopbacks) {
    if (std::find(node.withdraws.begin(), node.withdraws.end(), l) != node.withdraws.end())
      continue;
    // An anycast address names no one router: pinged to it, the nearest holder answers; sent
    // from it, the reply goes to the holder nearest the far end (plan::anycast_paths).
    if (std::find(node.anycast.begin(), node.anycast.end(), l) != node.anycast.end()) continue;
    // An own config's loopback it originates into no protocol (plan::Node::advertised).
    if (!node.config_generated &&
        std::find(node.advertised.begin(), node.advertised.end(), l) == node.advertised.end())
      continue;
    out.push_back(l);
  }
  return out;
}

}  // namespace twin::validate
