#include "twin/verdict/diff.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "twin/core/ip.hpp"
#include "twin/core/rate.hpp"
#include "twin/core/util.hpp"
#include "twin/verdict/observation.hpp"

namespace twin::replay {

namespace {

const char* const kFamilies[] = {"ipv4Unicast", "ipv6Unicast"};

// A FIB of one family (`v6`) into `fib` (routing protocols' routes) and `others`; a
// destination that is not a prefix is a gap of `node`, never a route the diff could ignore.
void fold_routes(const Result<nlohmann::json>& routes, bool v6, const std::string& node,
                 std::map<std::string, int>& fib, std::map<std::string, std::string>& others,
                 std::map<std::string, std::vector<std::string>>& via,
                 std::vector<std::string>& gaps) {
  if (!routes || !routes->is_array()) return;
  for (const auto& r : *routes) {
    // Routes a routing daemon installed (zebra marks them with its protocol in the kernel):
    // what a change can lose. Connected and kernel routes follow the interfaces.
    // Static routes are the change's own business (a step adds or removes them on purpose),
    // but one that takes a routed prefix over is named when that prefix leaves the protocol.
    static const std::set<std::string> kRouting = {"bgp", "ospf", "isis"};
    if (!r.is_object() || !r.contains("dst") || !r["dst"].is_string()) continue;
    // The kernel's own multicast, broadcast, local and anycast entries (a 6.x kernel puts
    // `multicast ff00::/8` in the main table) forward nothing a change can move; iproute2 names
    // any type other than unicast in "type".
    static const std::set<std::string> kNotForwarding = {"multicast", "broadcast", "local",
                                                         "anycast"};
    if (kNotForwarding.count(r.value("type", ""))) continue;
    const auto prefix = route_dst_prefix(r["dst"].get<std::string>(), v6);
    if (!prefix) {
      gaps.push_back(node + ": routes: destination '" + r["dst"].get<std::string>() +
                     "' is not a prefix twin can read");
      continue;
    }
    if (!kRouting.count(r.value("protocol", ""))) {
      // iproute2 leaves out the protocol of a route added without one (RTPROT_BOOT).
      std::string text = r.value("protocol", "boot");
      if (r.contains("gateway")) text += " via " + r.value("gateway", "");
      if (r.contains("dev")) text += " dev " + r.value("dev", "");
      others[*prefix] = text;
      continue;
    }
    int hops = 1;
    std::vector<std::string> devs;
    if (r.contains("nexthops") && r["nexthops"].is_array()) {
      hops = static_cast<int>(r["nexthops"].size());
      for (const auto& h : r["nexthops"])
        if (h.is_object() && h.contains("dev") && h["dev"].is_string()) devs.push_back(h["dev"]);
    } else if (r.contains("dev") && r["dev"].is_string()) {
      devs.push_back(r["dev"]);
    }
    std::sort(devs.begin(), devs.end());
    fib[*prefix] = hops;
    via[*prefix] = std::move(devs);
  }
}

// "leaf2:vx20100" or "leaf2:br20100": a VXLAN device or bridge of a VTEP of `p`.
bool is_vtep_device(const plan::Plan& p, const std::string& key) {
  auto c = key.find(':');
  const plan::Node* n = p.find(key.substr(0, c));
  if (!n || c == std::string::npos) return false;
  const std::string dev = key.substr(c + 1);
  return std::any_of(n->vnis.begin(), n->vnis.end(),
                     [&](const plan::Vni& v) { return v.vxlan == dev || v.bridge == dev; });
}

bool has_session(const plan::Plan& p, const std::string& node, const std::string& iface) {
  return std::any_of(p.sessions.begin(), p.sessions.end(), [&](const plan::ExpectedSession& s) {
    return s.node == node && s.key() == iface;
  });
}

const plan::ExpectedPrefix* owner_of(const plan::Plan& p, const std::string& prefix) {
  for (const auto& e : p.prefixes)
    if (e.prefix == prefix) return &e;
  return nullptr;
}

const plan::Interface* find_iface(const plan::Plan& p, const std::string& node_colon_if) {
  auto c = node_colon_if.find(':');
  if (c == std::string::npos) return nullptr;
  const plan::Node* n = p.find(node_colon_if.substr(0, c));
  if (!n) return nullptr;
  for (const auto& i : n->interfaces)
    if (i.name == node_colon_if.substr(c + 1)) return &i;
  return nullptr;
}

std::string hops_text(int n) { return std::to_string(n) + (n == 1 ? " next hop" : " next hops"); }

// "2 next hops (eth1 to r2, eth2 to r6)": the devices of `node` in `p`, with their neighbor.
std::string hops_text(int n, const std::vector<std::string>& devs, const plan::Plan& p,
                      const std::string& node) {
  if (devs.empty()) return hops_text(n);
  std::string s;
  const plan::Node* pn = p.find(node);
  for (const auto& d : devs) {
    std::string peer;
    if (pn)
      for (const auto& i : pn->interfaces)
        if (i.name == d) peer = i.peer_node;
    s += (s.empty() ? "" : ", ") + d + (peer.empty() ? "" : " to " + peer);
  }
  return hops_text(n) + " (" + s + ")";
}

// Whether next hops through `devs` of `node` are the ones `via` names (neighbor nodes or
// interfaces), each way named used and no other.
bool hops_match(const std::vector<std::string>& devs, const std::vector<std::string>& via,
                const plan::Plan& p, const std::string& node) {
  const plan::Node* pn = p.find(node);
  auto names = [&](const std::string& d) {
    std::set<std::string> out{d};
    if (pn)
      for (const auto& i : pn->interfaces)
        if (i.name == d) out.insert(i.peer_node);
    return out;
  };
  std::set<std::string> used;
  for (const auto& d : devs) {
    bool named = false;
    for (const auto& n : names(d))
      if (std::find(via.begin(), via.end(), n) != via.end()) {
        named = true;
        used.insert(n);
      }
    if (!named) return false;
  }
  for (const auto& v : via)
    if (!used.count(v)) return false;
  return true;
}

std::string split_key(const std::string& key, std::string* rest) {
  auto sp = key.find(' ');
  *rest = sp == std::string::npos ? "" : key.substr(sp + 1);
  return key.substr(0, sp);
}

// Whether `prefix` is the subnet of an address on some interface of `p` (topology or own
// config): a link subnet is infrastructure an IGP carries, not an origination to declare.
bool is_link_subnet(const plan::Plan& p, const IpPrefix& prefix) {
  auto same = [&](const std::string& a) {
    auto ip = IpPrefix::parse(a);
    return ip && !ip->is_host() && ip->network() == prefix;
  };
  for (const auto& n : p.nodes) {
    for (const auto& i : n.interfaces)
      if (std::any_of(i.addresses.begin(), i.addresses.end(), same)) return true;
    for (const auto& [ifname, addrs] : n.config_addresses)
      if (std::any_of(addrs.begin(), addrs.end(), same)) return true;
  }
  return false;
}

// The most specific prefix `node` already routed (its baseline FIB, or a prefix the plan
// expects) that strictly contains `prefix`: what a more-specific takes traffic from.
std::string covering_prefix(const NetState& before, const plan::Plan& base,
                            const std::string& node, const IpPrefix& prefix) {
  std::optional<IpPrefix> best;
  auto consider = [&](const std::string& text) {
    auto c = IpPrefix::parse(text);
    if (!c || c->family != prefix.family || c->length >= prefix.length || !c->contains(prefix))
      return;
    if (!best || c->length > best->length) best = c;
  };
  if (auto f = before.fib.find(node); f != before.fib.end())
    for (const auto& [p, hops] : f->second) consider(p);
  for (const auto& e : base.prefixes) consider(e.prefix);
  return best ? best->str() : "";
}

Change gained_change(const NetState& before, const plan::Plan& intended, const std::string& node,
                     const std::string& prefix, int hops) {
  Change c{"prefix-gained", node, prefix, "missing", hops_text(hops), true, node + " learned " + prefix};
  if (owner_of(intended, prefix)) return c;
  auto ip = IpPrefix::parse(prefix);
  if (!ip) {
    // Never "intended" for want of reading it: a gain nobody can name is a gain.
    c.intended = false;
    c.message += " (not a prefix twin can read)";
    return c;
  }
  if (is_link_subnet(intended, *ip)) return c;
  c.intended = false;
  c.covering = covering_prefix(before, intended, node, *ip);
  if (!c.covering.empty()) {
    const auto* owner = owner_of(intended, c.covering);
    c.message += ", a more-specific of " + c.covering +
                 (owner ? " (" + owner->kind + " of " + owner->owner + ")" : std::string()) +
                 ": it takes that prefix's traffic";
  }
  return c;
}

}  // namespace

int Diff::count(const std::string& category, bool intended) const {
  return static_cast<int>(std::count_if(changes.begin(), changes.end(), [&](const Change& c) {
    return c.category == category && c.intended == intended;
  }));
}

NetState state_from_observations(const std::map<std::string, NodeObservation>& obs) {
  NetState s;
  for (const auto& [node, o] : obs) {
    if (o.bgp_summary && o.bgp_summary->is_object()) {
      for (const char* af : kFamilies) {
        const auto& sum = *o.bgp_summary;
        if (!sum.contains(af) || !sum[af].contains("peers")) continue;
        for (const auto& [key, peer] : sum[af]["peers"].items()) {
          auto& so = s.sessions[node + " " + key];
          std::string state = peer.value("state", "unknown");
          if (so.state.empty() || state == "Established") so.state = state;
          long pfx = peer.value("pfxRcd", -1L);
          (std::string(af) == "ipv4Unicast" ? so.pfx_v4 : so.pfx_v6) = pfx;
          so.admin |= peer.value("peerState", "") == "Admin";
          so.queued += peer.value("inq", 0L) + peer.value("outq", 0L);
        }
      }
      // Every family's table (EVPN's too), by FRR's name for it.
      std::string& tables = s.bgp_tables[node];
      for (const auto& [af, sum] : o.bgp_summary->items())
        if (sum.is_object() && sum.contains("tableVersion") && sum["tableVersion"].is_number())
          tables += af + " " + std::to_string(sum["tableVersion"].get<long long>()) + " ";
    } else if (!o.bgp_summary) {
      s.gaps.push_back(node + ": bgp: " + o.bgp_summary.error().message);
    }
    if (o.links && o.links->is_array()) {
      for (const auto& l : *o.links) {
        std::string ifname = l.value("ifname", "");
        if (ifname.empty() || ifname == "lo") continue;
        s.mtu[node + ":" + ifname] = l.value("mtu", -1);
        bool up = false;
        if (l.contains("flags") && l["flags"].is_array())
          for (const auto& f : l["flags"]) up |= f == "UP";
        s.admin_up[node + ":" + ifname] = up;
      }
    } else if (!o.links) {
      s.gaps.push_back(node + ": links: " + o.links.error().message);
    }
    auto& fib = s.fib[node];
    auto& others = s.other_routes[node];
    auto& via = s.fib_via[node];
    fold_routes(o.routes4, false, node, fib, others, via, s.gaps);
    fold_routes(o.routes6, true, node, fib, others, via, s.gaps);
    if (!o.routes4) s.gaps.push_back(node + ": routes: " + o.routes4.error().message);
    if (!o.routes6) s.gaps.push_back(node + ": routes (IPv6): " + o.routes6.error().message);
  }
  return s;
}

void add_reachability(NetState& state, const validate::Report& report) {
  for (const auto& r : report.results) {
    // Loopback mesh, host mesh and the tenant networks' mesh (tests 0-2): the pairs that
    // answer, which the diff compares and the probe stream picks its flows from.
    if (r.validator != "reachability" || r.test < 0 || r.test > 2) continue;
    std::string pair = r.node + " -> " + r.peer;
    if (r.status == validate::Status::kPassed)
      state.reachable.insert(pair);
    else if (r.status == validate::Status::kFailed)
      state.unreachable.insert(pair);
  }
}

NetState observe(const plan::Plan& plan, validate::LabProbe& probe, int parallel) {
  std::vector<const plan::Node*> nodes;
  for (const auto& n : plan.nodes) nodes.push_back(&n);
  std::vector<NodeObservation> obs(
      nodes.size(), NodeObservation{harness_error("not probed"), harness_error("not probed"),
                                    harness_error("not probed"), harness_error("not probed")});
  parallel_for(nodes.size(), parallel, [&](size_t i) {
    const auto& n = *nodes[i];
    if (plan::has_bgp_instance(n))
      obs[i].bgp_summary = probe.frr_json(n, "bgpd", "show bgp summary json");
    else
      obs[i].bgp_summary = ok(nlohmann::json::object());
    obs[i].links = probe.ip_json(n, {"link", "show"});
    obs[i].routes4 = probe.ip_json(n, {"route", "show"});
    obs[i].routes6 = probe.ip_json(n, {"-6", "route", "show"});
  });
  std::map<std::string, NodeObservation> m;
  for (size_t i = 0; i < nodes.size(); ++i) m.emplace(nodes[i]->name, std::move(obs[i]));
  return state_from_observations(m);
}

std::string origin_from_bgp_route(const nlohmann::json& route, const plan::Plan& plan,
                                  const std::string& asked) {
  if (!route.is_object() || !route.contains("paths") || !route["paths"].is_array() ||
      route["paths"].empty())
    return "";
  const nlohmann::json* best = &route["paths"][0];
  for (const auto& p : route["paths"])
    if (p.contains("bestpath") && p["bestpath"].value("overall", false)) best = &p;
  auto by_router_id = [&](const std::string& rid) -> std::string {
    if (rid.empty()) return "";
    for (const auto& n : plan.nodes)
      if (n.router_id == rid) return n.name;
    return "";
  };
  std::string aspath;
  if (best->contains("aspath") && (*best)["aspath"].is_object())
    aspath = (*best)["aspath"].value("string", "");
  // The origin AS is the path's last AS number ("65000 65103" -> 65103; an AS_SET "{...}" at
  // the end is an aggregate and names no single origin).
  uint32_t origin_as = 0;
  size_t hops = 0;
  {
    std::istringstream in(aspath);
    std::string word, last;
    while (in >> word) {
      last = word;
      ++hops;
    }
    if (!last.empty() && last.size() <= 10 &&
        std::all_of(last.begin(), last.end(), [](unsigned char ch) { return std::isdigit(ch); }))
      origin_as = static_cast<uint32_t>(std::stoul(last));
  }
  std::string peer_rid;
  if (best->contains("peer") && (*best)["peer"].is_object())
    peer_rid = (*best)["peer"].value("routerId", "");
  std::vector<std::string> in_as;
  for (const auto& n : plan.nodes)
    if (origin_as != 0 && n.asn == origin_as) in_as.push_back(n.name);
  if (in_as.size() == 1) return in_as.front();
  if (origin_as == 0) {
    // Within one AS (iBGP): a route reflector's ORIGINATOR_ID (RFC 4456 §8) names the
    // originator; without reflection the peer that sent it is; a sourced path is the node's own.
    if (best->value("sourced", false) || best->value("local", false)) return asked;
    if (auto o = by_router_id(best->value("originatorId", "")); !o.empty()) return o;
    return by_router_id(peer_rid);
  }
  // An AS several nodes share: a one-AS path came straight from its originator (eBGP peers
  // prepend their own AS), so the peer that sent it is the one.
  if (hops == 1)
    if (auto o = by_router_id(peer_rid);
        !o.empty() && std::find(in_as.begin(), in_as.end(), o) != in_as.end())
      return o;
  if (in_as.size() > 1) {
    std::string s = "AS " + std::to_string(origin_as) + " (";
    for (size_t i = 0; i < in_as.size(); ++i) s += (i ? ", " : "") + in_as[i];
    return s + ")";
  }
  return "AS " + std::to_string(origin_as);
}

void attribute_origins(Diff& diff, const NetState& before, const NetState& after,
                       const plan::Plan& plan, validate::LabProbe& probe) {
  constexpr size_t kMaxPrefixes = 16;  // one or two vtysh calls each
  std::map<std::string, std::string> origin;  // prefix -> node
  std::map<std::string, std::vector<std::string>> learned_by;
  for (const auto& c : diff.changes)
    if (c.category == "prefix-gained" && !c.intended) learned_by[c.subject].push_back(c.node);
  size_t asked = 0;
  for (const auto& [prefix, nodes] : learned_by) {
    if (asked++ >= kMaxPrefixes) break;
    bool v6 = prefix.find(':') != std::string::npos;
    int tries = 0;
    for (const auto& name : nodes) {
      const plan::Node* n = plan.find(name);
      if (!n || !plan::has_bgp_instance(*n)) continue;
      if (++tries > 2) break;
      auto j = probe.frr_json(*n, "bgpd",
                              std::string("show bgp ") + (v6 ? "ipv6" : "ipv4") + " unicast " +
                                  prefix + " json");
      if (!j) continue;
      std::string o = origin_from_bgp_route(*j, plan, name);
      if (!o.empty()) {
        origin[prefix] = o;
        break;
      }
    }
    if (origin.count(prefix)) continue;
    // Not a BGP route anywhere asked (OSPF, or no bgpd): the node where it newly became a
    // local route (connected, static, kernel) is where it enters the routing protocols.
    for (const auto& [node, routes] : after.other_routes) {
      if (!routes.count(prefix)) continue;
      auto b = before.other_routes.find(node);
      if (b != before.other_routes.end() && b->second.count(prefix)) continue;
      origin[prefix] += (origin[prefix].empty() ? "" : ", ") + node;
    }
    if (!origin[prefix].empty()) continue;
    // Nor a local route (OSPF's `default-information originate always` installs nothing on
    // the originator): follow the next hops from where it was learned; the node they lead to
    // that does not route the prefix onward itself is where it enters.
    std::set<std::string> ends;
    for (const auto& start : nodes) {
      std::vector<std::string> todo{start};
      std::set<std::string> seen{start};
      while (!todo.empty()) {
        std::string n = todo.back();
        todo.pop_back();
        const plan::Node* pn = plan.find(n);
        auto fv = after.fib_via.find(n);
        if (!pn || fv == after.fib_via.end() || !fv->second.count(prefix)) continue;
        for (const auto& dev : fv->second.at(prefix))
          for (const auto& i : pn->interfaces) {
            if (i.name != dev || i.peer_node.empty() || !seen.insert(i.peer_node).second) continue;
            auto pv = after.fib_via.find(i.peer_node);
            if (pv != after.fib_via.end() && pv->second.count(prefix) &&
                !pv->second.at(prefix).empty())
              todo.push_back(i.peer_node);
            else if (const plan::Node* pe = plan.find(i.peer_node);
                     pe && pe->kind == topology::NodeKind::kFrr)
              ends.insert(i.peer_node);
          }
      }
    }
    for (const auto& e : ends) origin[prefix] += (origin[prefix].empty() ? "" : ", ") + e;
  }
  for (auto& c : diff.changes)
    if (c.category == "prefix-gained" && !c.intended)
      if (auto it = origin.find(c.subject); it != origin.end() && !it->second.empty()) {
        c.origin = it->second;
        c.message += " (originated by " + c.origin + ")";
      }
}

namespace {

// "46.7 Mbit/s (server1 -> server3)" for a run's slowest pair.
std::string slowest_text(const validate::Bandwidth& b) {
  return human_rate(b.slowest_bps) + (b.slowest_pair.empty() ? "" : " (" + b.slowest_pair + ")");
}

// Per pattern both validations ran: the figures side by side, and a bandwidth-lost change
// when the aggregate or the slowest pair fell further than the intended plan allows.
void add_bandwidth(Diff& d, const NetState& before, const NetState& after,
                   const plan::Plan& intended) {
  const double allowed =
      intended.traffic ? intended.traffic->bandwidth_loss : topology::TrafficSpec{}.bandwidth_loss;
  for (const auto& a : after.bandwidth) {
    auto b = std::find_if(before.bandwidth.begin(), before.bandwidth.end(),
                          [&](const validate::Bandwidth& x) { return x.pattern == a.pattern; });
    if (b == before.bandwidth.end()) continue;
    BandwidthDelta delta{a.pattern, *b, a, allowed, false};
    const double keep = 1 - allowed;
    const bool slowest = a.slowest_bps < b->slowest_bps * keep;
    const bool aggregate = a.aggregate_bps < b->aggregate_bps * keep;
    delta.lost = slowest || aggregate;
    d.bandwidth.push_back(delta);
    if (!delta.lost) continue;
    auto below = [](double now, double was) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.1f %%", 100 * (1 - now / was));
      return std::string(buf);
    };
    std::string why = slowest ? "the slowest pair got " + slowest_text(a) + ", " +
                                    below(a.slowest_bps, b->slowest_bps) +
                                    " below the baseline's " + slowest_text(*b)
                              : "the aggregate fell to " + human_rate(a.aggregate_bps) + ", " +
                                    below(a.aggregate_bps, b->aggregate_bps) +
                                    " below the baseline's " + human_rate(b->aggregate_bps);
    if (slowest && aggregate)
      why +=
          "; the aggregate " + human_rate(b->aggregate_bps) + " -> " + human_rate(a.aggregate_bps);
    d.changes.push_back(
        {"bandwidth-lost", "", a.pattern,
         "slowest pair " + human_rate(b->slowest_bps) + ", aggregate " +
             human_rate(b->aggregate_bps),
         "slowest pair " + human_rate(a.slowest_bps) + ", aggregate " + human_rate(a.aggregate_bps),
         false,
         a.pattern + ": " + why + " (bandwidth-loss allows " +
             std::to_string(static_cast<int>(std::lround(100 * allowed))) + " %)"});
  }
}

}  // namespace

Diff diff_states(const NetState& before, const NetState& after, const plan::Plan& base,
                 const plan::Plan& intended) {
  Diff d;
  d.gaps = after.gaps;
  // A node whose probes returned no data after the change cannot be said to have lost
  // anything: the verdict reports the gap as an error instead of inventing losses.
  std::set<std::string> blind;
  for (const auto& g : after.gaps) blind.insert(g.substr(0, g.find(':')));
  auto family_paths = plan::expected_paths_by_family(intended);
  // Sessions.
  for (const auto& [key, b] : before.sessions) {
    std::string iface;
    std::string node = split_key(key, &iface);
    auto it = after.sessions.find(key);
    std::string now = it == after.sessions.end() ? "absent" : it->second.state;
    if (b.state == "Established" && now != "Established" && !blind.count(node)) {
      bool intended_loss = !intended.find(node) ||
                           (has_session(base, node, iface) && !has_session(intended, node, iface));
      d.changes.push_back(
          {"session-lost", node, iface, b.state, now, intended_loss,
           "BGP session " + node + " " + iface + " went from Established to " + now});
    }
  }
  for (const auto& [key, a] : after.sessions) {
    std::string iface;
    std::string node = split_key(key, &iface);
    auto it = before.sessions.find(key);
    std::string was = it == before.sessions.end() ? "absent" : it->second.state;
    if (a.state == "Established" && was != "Established")
      d.changes.push_back({"session-gained", node, iface, was, a.state, true,
                           "BGP session " + node + " " + iface + " is Established"});
  }
  // FIB: prefixes and ECMP width.
  std::set<std::string> nodes_with_unintended_prefix_loss;
  for (const auto& [node, fib] : before.fib) {
    if (blind.count(node)) continue;
    auto ai = after.fib.find(node);
    static const std::map<std::string, int> kEmpty;
    const auto& afib = ai == after.fib.end() ? kEmpty : ai->second;
    for (const auto& [prefix, hops] : fib) {
      const auto* owner_now = owner_of(intended, prefix);
      const auto* owner_was = owner_of(base, prefix);
      const auto& paths = family_paths.of(prefix);
      auto pe = owner_now ? paths.find({node, owner_now->owner}) : paths.end();
      int want = pe == paths.end() ? 0 : pe->second.ecmp;
      auto f = afib.find(prefix);
      if (f == afib.end()) {
        bool ok_loss =
            !intended.find(node) || (owner_was && !owner_now) || (owner_now && want == 0);
        if (!ok_loss) nodes_with_unintended_prefix_loss.insert(node);
        // Still in the FIB, from another origin: a static route took it over.
        std::string now = "missing";
        if (auto oi = after.other_routes.find(node); oi != after.other_routes.end())
          if (auto o = oi->second.find(prefix); o != oi->second.end()) now = "replaced by " + o->second;
        d.changes.push_back(
            {"prefix-lost", node, prefix, hops_text(hops), now, ok_loss,
             node + (now == "missing" ? " lost the route to " + prefix
                                      : "'s route to " + prefix + " was " + now) +
                 (owner_was ? " (" + owner_was->kind + " of " + owner_was->owner + ")" : "")});
      } else {
        static const std::vector<std::string> kNone;
        auto devs_of = [&](const NetState& s) -> const std::vector<std::string>& {
          auto n = s.fib_via.find(node);
          if (n == s.fib_via.end()) return kNone;
          auto v = n->second.find(prefix);
          return v == n->second.end() ? kNone : v->second;
        };
        const auto& was = devs_of(before);
        const auto& now = devs_of(after);
        const std::string old_text = hops_text(hops, was, base, node);
        const std::string new_text = hops_text(f->second, now, intended, node);
        const bool moved = !was.empty() && !now.empty() && was != now;
        if (const plan::PathIntent* pi = intended.path_intent(node, prefix)) {
          // A declared move: judged by what it declares, whether or not the paths moved.
          bool width_ok = pi->ecmp == 0 || f->second == pi->ecmp;
          bool via_ok = pi->via.empty() || hops_match(now, pi->via, intended, node);
          if (f->second != hops || moved || !width_ok || !via_ok) {
            std::string declared =
                (pi->ecmp ? hops_text(pi->ecmp) : std::string("any number of next hops")) +
                (pi->via.empty() ? "" : " through " + join_names(pi->via));
            d.changes.push_back(
                {f->second < hops ? "ecmp-shrunk" : "paths-moved", node, prefix, old_text, new_text,
                 width_ok && via_ok,
                 node + " reaches " + prefix + " over " + new_text + ", was " + old_text +
                     (width_ok && via_ok ? "; declared" : "; the change declares " + declared)});
          }
        } else if (f->second < hops) {
          bool ok_shrink = owner_now && want > 0 && f->second >= want;
          d.changes.push_back(
              {"ecmp-shrunk", node, prefix, old_text, new_text, ok_shrink,
               node + " reaches " + prefix + " over " + new_text + ", was " + old_text});
        } else if (moved && !intended.path_intents.empty()) {
          // A traffic-engineering change is judged strictly: only what it declares may move.
          d.changes.push_back({"paths-moved", node, prefix, old_text, new_text, false,
                               node + " reaches " + prefix + " over " + new_text + ", was " +
                                   old_text + "; the change declares no path for it"});
        }
      }
    }
    for (const auto& [prefix, hops] : afib)
      if (!fib.count(prefix)) d.changes.push_back(gained_change(before, intended, node, prefix, hops));
  }
  for (const auto& [node, afib] : after.fib)
    if (!before.fib.count(node))
      for (const auto& [prefix, hops] : afib)
        d.changes.push_back(gained_change(before, intended, node, prefix, hops));
  // Prefixes received per session (both ends still Established).
  for (const auto& [key, b] : before.sessions) {
    auto it = after.sessions.find(key);
    if (it == after.sessions.end() || b.state != "Established" || it->second.state != "Established")
      continue;
    std::string iface;
    std::string node = split_key(key, &iface);
    for (int fam : {4, 6}) {
      long was = fam == 4 ? b.pfx_v4 : b.pfx_v6;
      long now = fam == 4 ? it->second.pfx_v4 : it->second.pfx_v6;
      if (was > 0 && now < was)
        d.changes.push_back({"session-prefixes-lost", node, iface + (fam == 4 ? " ipv4" : " ipv6"),
                             std::to_string(was), std::to_string(std::max(now, 0L)),
                             !nodes_with_unintended_prefix_loss.count(node),
                             node + " receives " + std::to_string(std::max(now, 0L)) +
                                 (std::max(now, 0L) == 1 ? " prefix on " : " prefixes on ") +
                                 iface + ", was " + std::to_string(was)});
    }
  }
  // Reachability: a pair no longer probed is one the intended plan does not route.
  for (const auto& pair : before.reachable)
    if (!after.reachable.count(pair)) {
      std::string src = pair.substr(0, pair.find(' '));
      d.changes.push_back({"reachability-lost", src, pair, "reply",
                           after.unreachable.count(pair) ? "no reply" : "not expected",
                           !after.unreachable.count(pair), pair + " no longer answers"});
    }
  for (const auto& pair : after.reachable)
    if (before.unreachable.count(pair))
      d.changes.push_back({"reachability-gained", pair.substr(0, pair.find(' ')), pair, "no reply",
                           "reply", true, pair + " answers now"});
  // Interfaces.
  for (const auto& [key, m] : before.mtu) {
    auto it = after.mtu.find(key);
    if (it == after.mtu.end() || it->second == m) continue;
    const auto* want = find_iface(intended, key);
    // Intended only when the change sets this MTU on both ends of the link: one end alone is
    // a mismatch, whatever the change file says.
    const auto* peer =
        want ? find_iface(intended, want->peer_node + ":" + want->peer_interface) : nullptr;
    bool meant = want && want->mtu == it->second && (!peer || peer->mtu == want->mtu);
    // A VTEP's VXLAN device or bridge: what its MTU means for the overlay is the EVPN family's
    // to judge (overlay-mtu: full frames between servers across the fabric), not a link's.
    if (!want) meant = is_vtep_device(intended, key);
    d.changes.push_back({"mtu-changed", key.substr(0, key.find(':')), key, std::to_string(m),
                         std::to_string(it->second), meant,
                         "MTU of " + key + " changed from " + std::to_string(m) + " to " +
                             std::to_string(it->second)});
  }
  for (const auto& [key, up] : before.admin_up) {
    auto it = after.admin_up.find(key);
    if (it == after.admin_up.end() || it->second == up) continue;
    const auto* want = find_iface(intended, key);
    bool ok_change = it->second || (want && !want->up);
    d.changes.push_back({"admin-state-changed", key.substr(0, key.find(':')), key,
                         up ? "up" : "down", it->second ? "up" : "down", ok_change,
                         key + " is administratively " + (it->second ? "up" : "down")});
  }
  add_bandwidth(d, before, after, intended);
  return d;
}

const char* to_string(Decision d) {
  switch (d) {
    case Decision::kApprove:
      return "approve";
    case Decision::kReject:
      return "reject";
    case Decision::kError:
      return "error";
  }
  return "error";
}

namespace {

struct Category {
  const char* name;
  const char* title;
};
// The diff's categories that reject when not intended, with the title of their reason.
const Category kLossCategories[] = {
    {"session-lost", "BGP sessions lost"},
    {"prefix-lost", "prefixes lost"},
    {"reachability-lost", "reachability lost"},
    {"prefix-gained", "prefixes gained that the change does not declare"},
    {"bandwidth-lost", "bandwidth lost"},
    {"ecmp-shrunk", "ECMP width shrank"},
    {"paths-moved", "paths moved that the change does not declare"},
    {"session-prefixes-lost", "fewer prefixes received"},
    {"mtu-changed", "MTU changed against the intent"},
    {"admin-state-changed", "interfaces taken down without declaring it"},
};

}  // namespace

const std::vector<std::string>& reason_categories() {
  // Most severe first: a broken step; tenants joined; lost control plane, routes, data plane;
  // traffic lost while the change ran; a state that does not survive a restart; bandwidth a
  // training job would miss; then what was added or narrowed, and last what the harness could
  // not tell.
  static const std::vector<std::string> kAll = {
      "step-failed",    "daemon-dead",           "isolation-broken", "session-lost",
      "prefix-lost",    "reachability-lost",     "outage",           "restart-divergence",
      "bandwidth-lost", "validator-failed",      "prefix-gained",    "ecmp-shrunk",
      "paths-moved",    "session-prefixes-lost", "mtu-changed",      "admin-state-changed",
      "validator-error"};
  return kAll;
}

int reason_rank(const std::string& category) {
  const auto& all = reason_categories();
  auto it = std::find(all.begin(), all.end(), category);
  return it == all.end() ? static_cast<int>(all.size()) : static_cast<int>(it - all.begin()) + 1;
}

namespace {

std::string list_head(const std::vector<std::string>& v, size_t n = 4) {
  std::string s;
  for (size_t i = 0; i < v.size() && i < n; ++i) s += (i ? ", " : "") + v[i];
  if (v.size() > n) s += ", … (" + std::to_string(v.size() - n) + " more)";
  return s;
}

// One subject per undeclared prefix, not per FIB it reached: "10.1.9.0/24 originated by
// leaf3, in 9 FIBs, a more-specific of 10.1.1.0/24".
std::vector<std::string> gained_subjects(const Diff& diff) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<const Change*>> by_prefix;
  for (const auto& ch : diff.changes) {
    if (ch.category != "prefix-gained" || ch.intended) continue;
    auto& v = by_prefix[ch.subject];
    if (v.empty()) order.push_back(ch.subject);
    v.push_back(&ch);
  }
  std::vector<std::string> out;
  for (const auto& prefix : order) {
    const auto& v = by_prefix[prefix];
    const Change& first = *v.front();
    std::string s = prefix + (first.origin.empty() ? "" : " originated by " + first.origin);
    if (v.size() == 1)
      s += ", in " + first.node + "'s FIB";
    else
      s += ", in " + std::to_string(v.size()) + " FIBs";
    if (!first.covering.empty()) s += ", a more-specific of " + first.covering;
    out.push_back(s);
  }
  return out;
}

std::string result_key(const validate::TestResult& r) {
  return r.validator + "." + std::to_string(r.test) + " " + r.node + " " + r.peer;
}

}  // namespace

Verdict decide(const std::vector<StepOutcome>& steps, const validate::Report& after,
               const Diff& diff, const validate::Report* dirty_baseline) {
  Verdict v;
  for (const auto& s : steps)
    if (s.status == "failed")
      v.reasons.push_back({reason_rank("step-failed"),
                           "step-failed",
                           s.name,
                           "step '" + s.name + "' (" + s.kind + ") failed: " + s.detail,
                           {s.name}});
  for (const auto& c : kLossCategories) {
    std::vector<std::string> subjects, context;
    if (std::string(c.name) == "prefix-gained") {
      subjects = gained_subjects(diff);
    } else {
      for (const auto& ch : diff.changes) {
        if (ch.category != c.name || ch.intended) continue;
        // A pattern's bandwidth: its figures say it better than before -> after.
        subjects.push_back(ch.category == "bandwidth-lost"
                               ? ch.message
                               : (ch.node.empty() || ch.subject.rfind(ch.node + " ", 0) == 0
                                      ? ""
                                      : ch.node + " ") +
                                     ch.subject + " (" + ch.before + " -> " + ch.after + ")");
        context.push_back(ch.message);
      }
    }
    if (subjects.empty()) continue;
    // A pattern's figures read as a sentence; the other categories list their subjects.
    const bool sentence = std::string(c.name) == "bandwidth-lost";
    std::string all;
    for (const auto& x : subjects) all += (all.empty() ? "" : "; ") + x;
    v.reasons.push_back({reason_rank(c.name),
                         c.name,
                         "",
                         sentence ? std::string(c.title) + ": " + all
                                  : std::string(c.title) + ": " + std::to_string(subjects.size()) +
                                        " (" + list_head(subjects) + ")",
                         subjects,
                         {},
                         context});
  }
  for (const auto& g : diff.gaps)
    v.reasons.push_back(
        {reason_rank("validator-error"), "validator-error", "", "no data after the change: " + g, {g}});
  std::set<std::string> already_bad;
  if (dirty_baseline)
    for (const auto& r : dirty_baseline->results)
      if (r.status == validate::Status::kFailed || r.status == validate::Status::kError)
        already_bad.insert(result_key(r));
  // Validator results, grouped per test.
  std::map<std::string, std::vector<const validate::TestResult*>> failed, errored;
  std::vector<std::string> order;
  for (const auto& r : after.results) {
    if (r.status != validate::Status::kFailed && r.status != validate::Status::kError) continue;
    if (already_bad.count(result_key(r))) continue;
    std::string test = r.validator + "." + std::to_string(r.test) + " " + r.test_name;
    auto& bucket = r.status == validate::Status::kFailed ? failed[test] : errored[test];
    if (bucket.empty() && std::find(order.begin(), order.end(), test) == order.end())
      order.push_back(test);
    bucket.push_back(&r);
  }
  for (const auto& [bucket_map, category] :
       {std::pair{&failed, "validator-failed"}, std::pair{&errored, "validator-error"}}) {
    bool failures = bucket_map == &failed;
    for (const auto& test : order) {
      auto it = bucket_map->find(test);
      if (it == bucket_map->end()) continue;
      std::vector<std::string> subjects;
      for (const auto* r : it->second)
        subjects.push_back(r->node + (r->peer.empty() ? "" : " " + r->peer) + ": " +
                           (r->message.empty() ? r->observed : r->message));
      // A packet that crossed between tenants is its own, most severe reason: two customers
      // joined (reachability test 3, tenant-isolation).
      // What twin runs for the lab died (node.0 daemons): the lab is broken, whatever else
      // fails because of it.
      if (failures && std::all_of(it->second.begin(), it->second.end(),
                                  [](const validate::TestResult* r) { return r->unhealthy; })) {
        v.reasons.push_back({reason_rank("daemon-dead"), "daemon-dead", "",
                             std::to_string(subjects.size()) + " daemon" +
                                 (subjects.size() == 1 ? "" : "s") + " not running (" +
                                 list_head(subjects, 2) + ")",
                             subjects});
        continue;
      }
      if (failures && test.rfind("reachability.3 ", 0) == 0) {
        v.reasons.push_back({reason_rank("isolation-broken"), "isolation-broken", "",
                             "isolation broken: " + std::to_string(subjects.size()) +
                                 " server pair" + (subjects.size() == 1 ? "" : "s") +
                                 " of different tenants reach each other (" +
                                 list_head(subjects, 2) + ")",
                             subjects});
        continue;
      }
      v.reasons.push_back({reason_rank(category), category, "",
                           test + " " + (failures ? "failed" : "could not tell") + " on " +
                               std::to_string(subjects.size()) + " subject" +
                               (subjects.size() == 1 ? "" : "s") + ": " + list_head(subjects, 2),
                           subjects});
    }
  }
  std::stable_sort(v.reasons.begin(), v.reasons.end(),
                   [](const Reason& a, const Reason& b) { return a.rank < b.rank; });
  if (after.results.empty())
    v.reasons.push_back({reason_rank("validator-error"), "validator-error", "",
                         "nothing was validated after the change", {}});
  bool reject = std::any_of(v.reasons.begin(), v.reasons.end(),
                            [](const Reason& r) { return r.category != "validator-error"; });
  v.decision = reject              ? Decision::kReject
               : v.reasons.empty() ? Decision::kApprove
                                   : Decision::kError;
  return v;
}

std::vector<Cause> traffic_causes(const validate::Report& after) {
  std::vector<Cause> out;
  const std::string mark = " — likely cause: ";
  for (const auto& r : after.results) {
    if (r.validator != "traffic" || r.status != validate::Status::kFailed) continue;
    const auto at = r.message.find(mark);
    if (at == std::string::npos) continue;
    const std::string text = r.message.substr(at + mark.size());
    if (std::any_of(out.begin(), out.end(), [&](const Cause& c) { return c.text == text; }))
      continue;
    out.push_back({"traffic." + r.test_name,
                   text,
                   {r.message},
                   r.node.empty() ? std::vector<std::string>{} : std::vector<std::string>{r.node}});
  }
  return out;
}

int exit_code(const Verdict& v) {
  switch (v.decision) {
    case Decision::kApprove:
      return 0;
    case Decision::kReject:
      return 1;
    case Decision::kError:
      return 3;
  }
  return 3;
}

}  // namespace twin::replay
