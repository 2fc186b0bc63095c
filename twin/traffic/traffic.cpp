#include "twin/traffic/traffic.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "twin/core/diagnostics.hpp"
#include "twin/core/rate.hpp"

namespace twin::traffic {

using nlohmann::json;
using topology::NodeKind;

const char* to_string(Pattern p) {
  for (const auto& [v, name] : kPatternNames)
    if (v == p) return name;
  return "?";
}

std::optional<Pattern> pattern_from(const std::string& name) {
  for (const auto& [v, n] : kPatternNames)
    if (name == n) return v;
  return std::nullopt;
}

namespace {

bool is_ipv4(const std::string& a) { return a.find(':') == std::string::npos; }
std::string bare(const std::string& prefix) { return prefix.substr(0, prefix.find('/')); }

}  // namespace

std::vector<Endpoint> endpoints(const plan::Plan& plan, const std::vector<std::string>& skip) {
  auto skipped = [&](const std::string& n) {
    return std::find(skip.begin(), skip.end(), n) != skip.end();
  };
  std::vector<Endpoint> out;
  for (const auto& n : plan.nodes) {
    if (n.kind != NodeKind::kHost || skipped(n.name)) continue;
    int rail = 0;
    for (const auto& i : n.interfaces)
      for (const auto& a : i.addresses)
        if (is_ipv4(a)) {
          out.push_back({n.name, bare(a), i.name, rail++});
          break;
        }
  }
  if (!out.empty()) return out;
  for (const auto& n : plan.nodes) {
    if (n.kind != NodeKind::kFrr || skipped(n.name)) continue;
    for (const auto& l : n.loopbacks)
      if (is_ipv4(l)) {
        out.push_back({n.name, bare(l), "lo", 0});
        break;
      }
  }
  return out;
}

Result<std::vector<PairSpec>> pattern_pairs(Pattern p, const std::vector<Endpoint>& eps,
                                            int streams, const std::string& incast_to) {
  // Nodes in first-seen order, each with its endpoints by rail.
  std::vector<std::vector<const Endpoint*>> nodes;
  std::map<std::string, size_t> at;
  for (const auto& e : eps) {
    auto [it, fresh] = at.emplace(e.node, nodes.size());
    if (fresh) nodes.emplace_back();
    nodes[it->second].push_back(&e);
  }
  if (nodes.size() < 2)
    return usage_error(
        "traffic needs at least two endpoints' nodes (servers, or routers with an "
        "IPv4 loopback when the lab has no server); this lab has " +
        std::to_string(nodes.size()));
  std::vector<PairSpec> out;
  auto add = [&](size_t a, size_t b) {
    size_t rails = std::min(nodes[a].size(), nodes[b].size());
    for (size_t r = 0; r < rails; ++r) out.push_back({*nodes[a][r], *nodes[b][r], streams});
  };
  const size_t n = nodes.size();
  switch (p) {
    case Pattern::kAllToAll:
      for (size_t a = 0; a < n; ++a)
        for (size_t b = 0; b < n; ++b)
          if (a != b) add(a, b);
      break;
    case Pattern::kRing:
      for (size_t a = 0; a < n; ++a) add(a, (a + 1) % n);
      break;
    case Pattern::kIncast: {
      size_t to = 0;
      if (!incast_to.empty()) {
        to = n;
        for (size_t i = 0; i < n; ++i)
          if (nodes[i].front()->node == incast_to) to = i;
        if (to == n) {
          std::string names;
          for (const auto& x : nodes) names += (names.empty() ? "" : ", ") + x.front()->node;
          return usage_error("--to " + incast_to +
                             " is not an endpoint of this lab; endpoints: " + names);
        }
      }
      for (size_t a = 0; a < n; ++a)
        if (a != to) add(a, to);
      break;
    }
    case Pattern::kPairs:
      for (size_t a = 0; a < n / 2; ++a) {
        add(a, a + n / 2);
        add(a + n / 2, a);
      }
      break;
  }
  return out;
}

// ---- Paths and fair shares ---------------------------------------------------------------------

PairPath pair_path(const plan::Plan& plan, const Endpoint& src, const Endpoint& dst) {
  PairPath out;
  struct Edge {
    std::string port, to;
  };
  std::map<std::string, std::vector<Edge>> adj;
  std::map<std::string, bool> forwards;
  for (const auto& n : plan.nodes) {
    forwards[n.name] = n.kind != NodeKind::kHost;
    for (const auto& i : n.interfaces)
      if (i.up && !i.peer_node.empty()) adj[n.name].push_back({i.name, i.peer_node});
  }
  const plan::Node* sn = plan.find(src.node);
  const plan::Node* tn = plan.find(dst.node);
  if (!sn || !tn) return out;
  // Where the flow enters the fabric and the node it must reach before its last hop.
  std::string start = src.node, target = dst.node, last_node, last_port;
  if (src.interface != "lo") {
    const auto* i = plan::find_interface(*sn, src.interface);
    if (!i || i->peer_node.empty() || !i->up) return out;
    out.share[{src.node, src.interface}] += 1.0;
    start = i->peer_node;
  }
  if (dst.interface != "lo") {
    const auto* i = plan::find_interface(*tn, dst.interface);
    if (!i || i->peer_node.empty() || !i->up) return out;
    target = i->peer_node;
    last_node = i->peer_node;
    last_port = i->peer_interface;
  }
  if (start == dst.node) {  // two hosts on one link
    out.reachable = true;
    return out;
  }
  // Hop counts to the target, backwards; only routers and bridges forward (and the start).
  std::map<std::string, int> dist;
  dist[target] = 0;
  std::deque<std::string> q{target};
  while (!q.empty()) {
    std::string v = q.front();
    q.pop_front();
    for (const auto& [u, edges] : adj) {
      if (dist.count(u) || !(forwards[u] || u == start)) continue;
      for (const auto& e : edges)
        if (e.to == v) {
          dist[u] = dist[v] + 1;
          q.push_back(u);
          break;
        }
    }
  }
  if (!dist.count(start)) return out;
  out.reachable = true;
  // The flow's share at each node, split equally over the next hops one hop nearer.
  std::map<std::string, double> amount{{start, 1.0}};
  std::vector<std::string> order;
  for (const auto& [n, d] : dist)
    if (d <= dist[start]) order.push_back(n);
  std::stable_sort(order.begin(), order.end(),
                   [&](const std::string& a, const std::string& b) { return dist[a] > dist[b]; });
  for (const auto& u : order) {
    double a = amount[u];
    if (a <= 0 || u == target) continue;
    std::vector<const Edge*> next;
    for (const auto& e : adj[u])
      if (dist.count(e.to) && dist[e.to] == dist[u] - 1 && (forwards[e.to] || e.to == target))
        next.push_back(&e);
    if (next.empty()) continue;
    if (next.size() > 1) {
      auto& g = out.splits[u];
      for (const auto* e : next) g.push_back(e->port);
      std::sort(g.begin(), g.end());
    }
    for (const auto* e : next) {
      out.share[{u, e->port}] += a / static_cast<double>(next.size());
      amount[e->to] += a / static_cast<double>(next.size());
    }
  }
  if (!last_node.empty()) out.share[{last_node, last_port}] += 1.0;
  return out;
}

std::vector<double> fair_shares(const plan::Plan& plan, const std::vector<const PairPath*>& flows,
                                std::vector<Port>* saturated) {
  // Each shaped port's goodput capacity.
  std::map<Port, double> cap;
  for (const auto& n : plan.nodes)
    for (const auto& i : n.interfaces)
      if (i.rate_bps > 0) {
        double eff = std::max(0.0, (i.mtu - 52.0) / (i.mtu + 14.0));
        cap[{n.name, i.name}] = static_cast<double>(i.rate_bps) * eff;
      }
  const size_t nf = flows.size();
  std::vector<double> rate(nf, 0);
  std::vector<bool> frozen(nf, false);
  constexpr double kEps = 1e-9;
  for (size_t f = 0; f < nf; ++f) {
    bool bounded = false;
    for (const auto& [port, s] : flows[f]->share)
      if (s > kEps && cap.count(port)) bounded = true;
    if (!bounded) frozen[f] = true;  // unbounded: 0
  }
  for (;;) {
    double level = -1;
    std::vector<Port> full;
    for (const auto& [port, c] : cap) {
      double load = 0, weight = 0;
      for (size_t f = 0; f < nf; ++f) {
        auto it = flows[f]->share.find(port);
        if (it == flows[f]->share.end() || it->second <= kEps) continue;
        if (frozen[f])
          load += rate[f] * it->second;
        else
          weight += it->second;
      }
      if (weight <= kEps) continue;
      double l = std::max(0.0, (c - load) / weight);
      if (level < 0 || l < level - 1e-6 * std::max(1.0, level)) {
        level = l;
        full = {port};
      } else if (std::abs(l - level) <= 1e-6 * std::max(1.0, level)) {
        full.push_back(port);
      }
    }
    if (level < 0) break;
    for (size_t f = 0; f < nf; ++f)
      if (!frozen[f]) rate[f] = level;
    if (saturated) saturated->insert(saturated->end(), full.begin(), full.end());
    for (size_t f = 0; f < nf; ++f) {
      if (frozen[f]) continue;
      for (const auto& port : full)
        if (auto it = flows[f]->share.find(port); it != flows[f]->share.end() && it->second > kEps)
          frozen[f] = true;
    }
  }
  return rate;
}

// ---- Parsing what ran --------------------------------------------------------------------------

std::vector<FlowResult> parse_iperf_client(const json& j, int pair, int streams) {
  std::vector<FlowResult> out;
  if (!j.is_object()) {
    FlowResult f;
    f.pair = pair;
    f.error = "iperf3 printed no JSON";
    return {f};
  }
  if (j.contains("error") && j["error"].is_string()) {
    FlowResult f;
    f.pair = pair;
    f.error = j["error"].get<std::string>();
    return {f};
  }
  std::map<int, int> port_of;  // socket -> local port
  if (auto s = j.find("start"); s != j.end() && s->contains("connected"))
    for (const auto& c : (*s)["connected"])
      port_of[c.value("socket", -1)] = c.value("local_port", 0);
  const json& end = j.contains("end") ? j["end"] : json::object();
  const json& st = end.contains("streams") ? end["streams"] : json::array();
  int k = 0;
  for (const auto& s : st) {
    FlowResult f;
    f.pair = pair;
    f.stream = k++;
    if (s.contains("udp")) {
      const auto& u = s["udp"];
      f.src_port = port_of[u.value("socket", -1)];
      f.sent_bps = u.value("bits_per_second", 0.0);
      f.packets = u.value("packets", 0L);
      f.lost = u.value("lost_packets", 0L);
      f.bps = f.packets > 0 ? f.sent_bps * static_cast<double>(f.packets - f.lost) /
                                  static_cast<double>(f.packets)
                            : 0;
    } else {
      const json& snd = s.contains("sender") ? s["sender"] : json::object();
      const json& rcv = s.contains("receiver") ? s["receiver"] : json::object();
      f.src_port = port_of[snd.value("socket", -1)];
      f.sent_bps = snd.value("bits_per_second", 0.0);
      f.retransmits = snd.value("retransmits", 0L);
      f.bps = rcv.value("bits_per_second", 0.0);
    }
    out.push_back(f);
  }
  if (out.empty()) {
    FlowResult f;
    f.pair = pair;
    f.error = "iperf3 reported no stream (expected " + std::to_string(streams) + ")";
    out.push_back(f);
  }
  return out;
}

bool listening_on(const std::string& table, int port) {
  std::istringstream in(table);
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::istringstream w(line);
    std::string sl, local, remote, st;
    if (!(w >> sl >> local >> remote >> st)) continue;
    auto colon = local.rfind(':');
    if (colon == std::string::npos || st != "0A") continue;
    if (std::stoi(local.substr(colon + 1), nullptr, 16) == port) return true;
  }
  return false;
}

std::map<std::string, PortCounters> parse_counters(const json& links, const json& qdiscs) {
  std::map<std::string, PortCounters> out;
  if (links.is_array())
    for (const auto& l : links) {
      if (!l.contains("ifname") || !l.contains("stats64")) continue;
      auto& c = out[l["ifname"].get<std::string>()];
      const auto& s = l["stats64"];
      if (s.contains("tx")) {
        c.tx_bytes = s["tx"].value("bytes", uint64_t{0});
        c.tx_dropped = s["tx"].value("dropped", uint64_t{0});
      }
      if (s.contains("rx")) c.rx_bytes = s["rx"].value("bytes", uint64_t{0});
    }
  if (qdiscs.is_array())
    for (const auto& q : qdiscs) {
      if (!q.contains("dev")) continue;
      // A delay's netem at the root and its rate's tbf below: both can drop.
      out[q["dev"].get<std::string>()].qdisc_drops += q.value("drops", uint64_t{0});
    }
  return out;
}

// ---- Figures ------------------------------------------------------------------------------------

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  // The smallest value with at least p % of the values at or below it; the 1e-9 keeps 99.9 %
  // of 1000 at rank 999 (0.999 * 1000 is 999.0000000000001 in binary).
  double rank = std::ceil(p / 100.0 * static_cast<double>(v.size()) - 1e-9);
  size_t i = rank < 1 ? 0 : static_cast<size_t>(rank) - 1;
  return v[std::min(i, v.size() - 1)];
}

double coefficient_of_variation(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  double mean = 0;
  for (double x : v) mean += x;
  mean /= static_cast<double>(v.size());
  if (mean <= 0) return 0;
  double var = 0;
  for (double x : v) var += (x - mean) * (x - mean);
  var /= static_cast<double>(v.size());
  return std::sqrt(var) / mean;
}

namespace {

Latency latency_of(const std::vector<double>& rtt, long sent) {
  Latency l;
  l.samples = sent;
  l.lost = std::max<long>(0, sent - static_cast<long>(rtt.size()));
  l.p50_ms = percentile(rtt, 50);
  l.p99_ms = percentile(rtt, 99);
  l.p999_ms = percentile(rtt, 99.9);
  l.max_ms = rtt.empty() ? 0 : *std::max_element(rtt.begin(), rtt.end());
  return l;
}

uint64_t delta(uint64_t after, uint64_t before) { return after >= before ? after - before : 0; }

}  // namespace

Report summarize(const plan::Plan& plan, const std::vector<PairSpec>& pairs, Recorded rec) {
  Report r;
  r.lab = plan.lab;
  r.pairs = pairs;
  r.duration_s = rec.duration_s;
  r.start_spread_s = rec.start_spread_s;
  r.omit_s = rec.omit_s;
  r.counters_s = rec.counters_s > 0 ? rec.counters_s : rec.duration_s;
  r.streams = pairs.empty() ? 1 : pairs.front().streams;
  r.paths.reserve(pairs.size());
  for (const auto& p : pairs) r.paths.push_back(pair_path(plan, p.src, p.dst));

  // Fair shares over the flows that ran.
  std::vector<const PairPath*> fp;
  std::vector<size_t> ran;
  for (size_t k = 0; k < rec.flows.size(); ++k) {
    auto& f = rec.flows[k];
    if (f.pair >= 0 && static_cast<size_t>(f.pair) < pairs.size()) {
      const auto& p = pairs[f.pair];
      f.src = p.src.node + " " + p.src.address;
      f.dst = p.dst.node + " " + p.dst.address;
    }
    if (!f.error.empty()) {
      r.problems.push_back(f.src + " -> " + f.dst + ": " + f.error);
      continue;
    }
    fp.push_back(&r.paths[f.pair]);
    ran.push_back(k);
  }
  std::vector<Port> saturated;
  auto fair = fair_shares(plan, fp, &saturated);
  bool bounded = std::any_of(fair.begin(), fair.end(), [](double x) { return x > 0; });
  double sum = 0;
  for (size_t k : ran) sum += rec.flows[k].bps;
  r.aggregate_bps = sum;
  double mean = ran.empty() ? 0 : sum / static_cast<double>(ran.size());
  r.fair_basis = bounded ? "link rates" : "measured mean (the lab declares no link rates)";
  for (size_t x = 0; x < ran.size(); ++x) {
    auto& f = rec.flows[ran[x]];
    f.fair_bps = bounded ? fair[x] : mean;
  }
  // Per pair: its flows summed.
  std::map<int, PairResult> by_pair;
  for (size_t k : ran) {
    const auto& f = rec.flows[k];
    auto& pr = by_pair[f.pair];
    pr.pair = f.pair;
    pr.src = f.src;
    pr.dst = f.dst;
    ++pr.flows;
    pr.bps += f.bps;
    pr.fair_bps += f.fair_bps;
  }
  if (!bounded && !by_pair.empty())
    for (auto& [k, pr] : by_pair) pr.fair_bps = sum / static_cast<double>(by_pair.size());
  for (auto& [k, pr] : by_pair) r.pair_results.push_back(pr);
  for (size_t k = 0; k < r.pair_results.size(); ++k) {
    const auto& pr = r.pair_results[k];
    if (pr.fair_bps <= 0) continue;
    double ratio = pr.bps / pr.fair_bps;
    if (r.slowest < 0 || ratio < r.slowest_ratio) {
      r.slowest = static_cast<int>(k);
      r.slowest_ratio = ratio;
    }
  }
  r.flows = std::move(rec.flows);

  // What the fair shares put on each port (fair shares unbounded: nothing).
  std::map<Port, double> designed;
  if (bounded)
    for (size_t x = 0; x < fp.size(); ++x)
      for (const auto& [port, share] : fp[x]->share) designed[port] += fair[x] * share;
  // Port loads and drops: every port that sent during the run.
  for (const auto& n : plan.nodes) {
    auto b = rec.before.find(n.name);
    auto a = rec.after.find(n.name);
    if (b == rec.before.end() || a == rec.after.end()) continue;
    for (const auto& i : n.interfaces) {
      auto ib = b->second.find(i.name);
      auto ia = a->second.find(i.name);
      if (ib == b->second.end() || ia == a->second.end()) continue;
      PortLoad pl;
      pl.node = n.name;
      pl.port = i.name;
      pl.peer = i.peer_node + ":" + i.peer_interface;
      pl.tx_bytes = delta(ia->second.tx_bytes, ib->second.tx_bytes);
      pl.rate_bps = i.rate_bps;
      pl.bottleneck =
          std::find(saturated.begin(), saturated.end(), Port{n.name, i.name}) != saturated.end();
      if (auto d = designed.find(Port{n.name, i.name}); d != designed.end() && i.rate_bps > 0)
        pl.designed = d->second / static_cast<double>(i.rate_bps);
      pl.drops = delta(ia->second.qdisc_drops, ib->second.qdisc_drops) +
                 delta(ia->second.tx_dropped, ib->second.tx_dropped);
      // Over the seconds between the counter reads: the measured ones, after TCP's slow start
      // (-O), whose overshoot drops at ports that carry the steady flows well below their rate.
      if (const double window_s = rec.counters_s > 0 ? rec.counters_s : rec.duration_s;
          i.rate_bps > 0 && window_s > 0)
        pl.utilisation =
            static_cast<double>(pl.tx_bytes) * 8 / (static_cast<double>(i.rate_bps) * window_s);
      (i.rate_bps > 0 ? r.drops_shaped : r.drops_unshaped) += pl.drops;
      if (pl.tx_bytes > 0 || pl.drops > 0) r.ports.push_back(pl);
    }
  }
  // ECMP groups the flows that ran split over, with how many did and what each member sent.
  std::map<std::pair<std::string, std::vector<std::string>>, size_t> group_of;
  for (const auto& path : r.paths)
    for (const auto& [node, ports] : path.splits)
      if (group_of.emplace(std::pair{node, ports}, r.groups.size()).second)
        r.groups.push_back({node, ports});
  for (const PairPath* path : fp)
    for (const auto& [node, ports] : path->splits) ++r.groups[group_of.at({node, ports})].flows;
  for (auto& g : r.groups) {
    std::vector<double> v;
    for (const auto& port : g.ports) {
      uint64_t bytes = 0;
      for (const auto& pl : r.ports)
        if (pl.node == g.node && pl.port == port) bytes = pl.tx_bytes;
      g.bytes.push_back(bytes);
      v.push_back(static_cast<double>(bytes));
    }
    double gmean = 0;
    for (double x : v) gmean += x;
    gmean /= static_cast<double>(v.size());
    for (size_t k = 0; k < v.size(); ++k)
      if (v[k] < 0.01 * gmean) g.idle.push_back(g.ports[k]);
    auto [mn, mx] = std::minmax_element(v.begin(), v.end());
    g.max_min = *mn > 0 ? *mx / *mn : 0;
    g.cv = coefficient_of_variation(v);
  }
  r.unloaded = latency_of(rec.rtt_unloaded, rec.unloaded_sent);
  r.loaded = latency_of(rec.rtt_loaded, rec.loaded_sent);
  return r;
}

// ---- Output -------------------------------------------------------------------------------------

namespace {

json latency_json(const Latency& l) {
  return {{"samples", l.samples}, {"lost", l.lost},        {"p50_ms", l.p50_ms},
          {"p99_ms", l.p99_ms},   {"p99_9_ms", l.p999_ms}, {"max_ms", l.max_ms}};
}

}  // namespace

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

json to_json(const Report& r) {
  json flows = json::array();
  for (const auto& f : r.flows) {
    json x = {{"src", f.src},           {"dst", f.dst},           {"pair", f.pair},
              {"stream", f.stream},     {"src_port", f.src_port}, {"bps", f.bps},
              {"sent_bps", f.sent_bps}, {"fair_bps", f.fair_bps}};
    if (r.protocol == "udp") {
      x["lost"] = f.lost;
      x["packets"] = f.packets;
    } else {
      x["retransmits"] = f.retransmits;
    }
    if (!f.error.empty()) x["error"] = f.error;
    flows.push_back(x);
  }
  json ports = json::array();
  for (const auto& p : r.ports)
    ports.push_back({{"node", p.node},
                     {"port", p.port},
                     {"peer", p.peer},
                     {"tx_bytes", p.tx_bytes},
                     {"rate_bps", p.rate_bps},
                     {"utilisation", p.utilisation},
                     {"drops", p.drops},
                     {"bottleneck", p.bottleneck},
                     {"designed", p.designed}});
  json groups = json::array();
  for (const auto& g : r.groups)
    groups.push_back({{"node", g.node},
                      {"ports", g.ports},
                      {"tx_bytes", g.bytes},
                      {"max_min", g.max_min},
                      {"cv", g.cv},
                      {"idle", g.idle}});
  json pairs = json::array();
  for (const auto& p : r.pair_results)
    pairs.push_back({{"src", p.src},
                     {"dst", p.dst},
                     {"pair", p.pair},
                     {"flows", p.flows},
                     {"bps", p.bps},
                     {"fair_bps", p.fair_bps}});
  json j = {
      {"lab", r.lab},
      {"pattern", to_string(r.pattern)},
      {"protocol", r.protocol},
      {"duration_s", r.duration_s},
      {"flows_per_pair", r.streams},
      {"pairs", r.pairs.size()},
      {"hash_policy", r.hash_policy},
      {"aggregate_bps", r.aggregate_bps},
      {"fair_basis", r.fair_basis},
      {"slowest_ratio", r.slowest_ratio},
      {"transfers", pairs},
      {"flows", flows},
      {"ports", ports},
      {"ecmp_groups", groups},
      {"drops", {{"shaped_ports", r.drops_shaped}, {"unshaped_ports", r.drops_unshaped}}},
      {"latency", {{"unloaded", latency_json(r.unloaded)}, {"loaded", latency_json(r.loaded)}}},
      {"start_spread_s", r.start_spread_s},
      {"omit_s", r.omit_s},
      {"counters_s", r.counters_s},
      {"wall_s", r.wall_s},
      {"problems", r.problems}};
  if (r.slowest >= 0) j["slowest"] = pairs[r.slowest];
  return j;
}

std::string to_text(const Report& r, bool all_flows) {
  std::ostringstream o;
  size_t ok = 0;
  for (const auto& f : r.flows) ok += f.error.empty();
  o << "traffic " << to_string(r.pattern) << " on lab " << r.lab << ": " << r.pairs.size()
    << " pairs x " << r.streams << " " << r.protocol << " flow(s), " << fixed(r.duration_s, 0)
    << " s; ECMP hashing " << r.hash_policy << "\n";
  o << "  aggregate      " << human_rate(r.aggregate_bps) << " over " << ok << " flows (clients "
    << "started within " << fixed(r.start_spread_s, 2) << " s; each measured after its first "
    << r.omit_s << " s)\n";
  if (r.start_spread_s > r.omit_s)
    o << "  note: the clients took " << fixed(r.start_spread_s, 1) << " s to start, longer than "
      << "the " << r.omit_s << " s each test ran before measuring: the flows did not all run "
      << "together, and each got more than its fair share\n";
  if (r.slowest >= 0) {
    const auto& s = r.pair_results[r.slowest];
    o << "  slowest pair   " << human_rate(s.bps) << " over " << s.flows << " flow(s)  " << s.src
      << " -> " << s.dst << " (fair share " << human_rate(s.fair_bps) << ")\n";
    o << "  slowest / fair " << fixed(r.slowest_ratio, 2) << "  (fair share from " << r.fair_basis
      << ")\n";
  }
  // Flows, slowest first (all, or the 5 slowest).
  std::vector<size_t> idx;
  for (size_t k = 0; k < r.flows.size(); ++k)
    if (r.flows[k].error.empty()) idx.push_back(k);
  std::sort(idx.begin(), idx.end(),
            [&](size_t a, size_t b) { return r.flows[a].bps < r.flows[b].bps; });
  size_t shown = all_flows ? idx.size() : std::min<size_t>(idx.size(), 5);
  if (shown > 0) o << (all_flows ? "  flows:\n" : "  slowest flows:\n");
  for (size_t k = 0; k < shown; ++k) {
    const auto& f = r.flows[idx[k]];
    o << "    " << f.src << " -> " << f.dst << " port " << f.src_port << ": " << human_rate(f.bps);
    if (f.fair_bps > 0) o << " (" << fixed(f.bps / f.fair_bps, 2) << " of fair)";
    if (r.protocol == "udp")
      o << ", lost " << f.lost << "/" << f.packets;
    else
      o << ", " << f.retransmits << " retransmits";
    o << "\n";
  }
  if (!r.groups.empty()) o << "  ECMP groups (bytes sent per member):\n";
  for (const auto& g : r.groups) {
    o << "    " << g.node << " [";
    for (size_t k = 0; k < g.ports.size(); ++k)
      o << (k ? " " : "") << g.ports[k] << "=" << fixed(static_cast<double>(g.bytes[k]) / 1e6, 1)
        << "MB";
    o << "] max/min " << (g.max_min > 0 ? fixed(g.max_min, 2) : std::string("inf")) << ", cv "
      << fixed(g.cv, 2);
    if (!g.idle.empty()) {
      o << ", idle:";
      for (const auto& p : g.idle) o << " " << p;
    }
    o << "\n";
  }
  o << "  drops          " << r.drops_shaped << " at shaped ports (expected at a bottleneck), "
    << r.drops_unshaped << " at unshaped ports\n";
  auto lat = [&](const char* what, const Latency& l) {
    o << "  latency " << what << " p50 " << fixed(l.p50_ms, 3) << " ms, p99 " << fixed(l.p99_ms, 3)
      << " ms, p99.9 " << fixed(l.p999_ms, 3) << " ms (" << l.samples << " echoes, " << l.lost
      << " lost)\n";
  };
  lat("unloaded", r.unloaded);
  lat("loaded  ", r.loaded);
  for (const auto& p : r.problems) o << "  FAILED " << p << "\n";
  return o.str();
}

}  // namespace twin::traffic
