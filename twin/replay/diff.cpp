#include "twin/replay/diff.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "twin/core/util.hpp"
#include "twin/replay/observation.hpp"

namespace twin::replay {

namespace {

const char* const kFamilies[] = {"ipv4Unicast", "ipv6Unicast"};

// `ip -j route` prints host routes without their length ("10.255.0.1").
std::string normalize_prefix(const std::string& dst) {
  if (dst.find('/') != std::string::npos) return dst;
  return dst + (dst.find(':') == std::string::npos ? "/32" : "/128");
}

void fold_routes(const Result<nlohmann::json>& routes, std::map<std::string, int>& fib,
                 std::map<std::string, std::string>& others) {
  if (!routes || !routes->is_array()) return;
  for (const auto& r : *routes) {
    // Routes a routing daemon installed (zebra marks them with its protocol in the kernel):
    // what a change can lose. Connected and kernel routes follow the interfaces.
    // Static routes are the change's own business (a step adds or removes them on purpose),
    // but one that takes a routed prefix over is named when that prefix leaves the protocol.
    static const std::set<std::string> kRouting = {"bgp", "ospf", "isis"};
    if (!r.is_object() || !r.contains("dst") || !r["dst"].is_string()) continue;
    if (!kRouting.count(r.value("protocol", ""))) {
      std::string text = r.value("protocol", "kernel");
      if (r.contains("gateway")) text += " via " + r.value("gateway", "");
      if (r.contains("dev")) text += " dev " + r.value("dev", "");
      others[normalize_prefix(r["dst"].get<std::string>())] = text;
      continue;
    }
    int hops = 1;
    if (r.contains("nexthops") && r["nexthops"].is_array())
      hops = static_cast<int>(r["nexthops"].size());
    fib[normalize_prefix(r["dst"].get<std::string>())] = hops;
  }
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

std::string split_key(const std::string& key, std::string* rest) {
  auto sp = key.find(' ');
  *rest = sp == std::string::npos ? "" : key.substr(sp + 1);
  return key.substr(0, sp);
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
        }
      }
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
    fold_routes(o.routes4, fib, others);
    fold_routes(o.routes6, fib, others);
    if (!o.routes4) s.gaps.push_back(node + ": routes: " + o.routes4.error().message);
    if (!o.routes6) s.gaps.push_back(node + ": routes (IPv6): " + o.routes6.error().message);
  }
  return s;
}

void add_reachability(NetState& state, const validate::Report& report) {
  for (const auto& r : report.results) {
    if (r.validator != "reachability" || (r.test != 0 && r.test != 1)) continue;
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
    // bgpd without a `router bgp` (an own config of an OSPF-only router, on an image that starts
    // bgpd anyway) answers `{}` with an error: nothing to observe there.
    bool bgp = std::find(n.daemons.begin(), n.daemons.end(), "bgpd") != n.daemons.end() &&
               (n.asn != 0 || n.config_generated);
    if (bgp)
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

Diff diff_states(const NetState& before, const NetState& after, const plan::Plan& base,
                 const plan::Plan& intended) {
  Diff d;
  d.gaps = after.gaps;
  // A node whose probes returned no data after the change cannot be said to have lost
  // anything: the verdict reports the gap as an error instead of inventing losses.
  std::set<std::string> blind;
  for (const auto& g : after.gaps) blind.insert(g.substr(0, g.find(':')));
  auto paths = plan::expected_paths(intended);
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
      } else if (f->second < hops) {
        bool ok_shrink = owner_now && want > 0 && f->second >= want;
        d.changes.push_back({"ecmp-shrunk", node, prefix, hops_text(hops), hops_text(f->second),
                             ok_shrink,
                             node + " reaches " + prefix + " over " + std::to_string(f->second) +
                                 " next hop(s), was " + std::to_string(hops)});
      }
    }
    for (const auto& [prefix, hops] : afib)
      if (!fib.count(prefix))
        d.changes.push_back({"prefix-gained", node, prefix, "missing", hops_text(hops), true,
                             node + " learned " + prefix});
  }
  for (const auto& [node, afib] : after.fib)
    if (!before.fib.count(node))
      for (const auto& [prefix, hops] : afib)
        d.changes.push_back({"prefix-gained", node, prefix, "missing", hops_text(hops), true,
                             node + " learned " + prefix});
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
  int rank;
  const char* title;
};
// Most severe first: a broken step, then lost control plane, lost routes, lost data plane.
const Category kLossCategories[] = {
    {"session-lost", 2, "BGP sessions lost"},
    {"prefix-lost", 3, "prefixes lost"},
    {"reachability-lost", 4, "reachability lost"},
    {"ecmp-shrunk", 6, "ECMP width shrank"},
    {"session-prefixes-lost", 7, "fewer prefixes received"},
    {"mtu-changed", 8, "MTU changed against the intent"},
    {"admin-state-changed", 9, "interfaces taken down without declaring it"},
};

}  // namespace

const std::vector<std::string>& reason_categories() {
  static const std::vector<std::string> kAll = {
      "step-failed",         "session-lost",   "prefix-lost",           "reachability-lost",
      "validator-failed",    "ecmp-shrunk",    "session-prefixes-lost", "mtu-changed",
      "admin-state-changed", "validator-error"};
  return kAll;
}

namespace {

std::string list_head(const std::vector<std::string>& v, size_t n = 4) {
  std::string s;
  for (size_t i = 0; i < v.size() && i < n; ++i) s += (i ? ", " : "") + v[i];
  if (v.size() > n) s += ", … (" + std::to_string(v.size() - n) + " more)";
  return s;
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
      v.reasons.push_back({1,
                           "step-failed",
                           s.name,
                           "step '" + s.name + "' (" + s.kind + ") failed: " + s.detail,
                           {s.name}});
  for (const auto& c : kLossCategories) {
    std::vector<std::string> subjects;
    std::string first;
    for (const auto& ch : diff.changes)
      if (ch.category == c.name && !ch.intended) {
        subjects.push_back((ch.subject.rfind(ch.node + " ", 0) == 0 ? "" : ch.node + " ") +
                           ch.subject + " (" + ch.before + " -> " + ch.after + ")");
        if (first.empty()) first = ch.message;
      }
    if (subjects.empty()) continue;
    v.reasons.push_back({c.rank, c.name, "",
                         std::string(c.title) + ": " + std::to_string(subjects.size()) + " (" +
                             list_head(subjects) + ")",
                         subjects});
  }
  for (const auto& g : diff.gaps)
    v.reasons.push_back({10, "validator-error", "", "no data after the change: " + g, {g}});
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
  for (const auto& [bucket_map, rank, category] :
       {std::tuple{&failed, 5, "validator-failed"}, std::tuple{&errored, 10, "validator-error"}}) {
    for (const auto& test : order) {
      auto it = bucket_map->find(test);
      if (it == bucket_map->end()) continue;
      std::vector<std::string> subjects;
      for (const auto* r : it->second)
        subjects.push_back(r->node + (r->peer.empty() ? "" : " " + r->peer) + ": " +
                           (r->message.empty() ? r->observed : r->message));
      v.reasons.push_back({rank, category, "",
                           test + " " + (rank == 5 ? "failed" : "could not tell") + " on " +
                               std::to_string(subjects.size()) + " subject" +
                               (subjects.size() == 1 ? "" : "s") + ": " + list_head(subjects, 2),
                           subjects});
    }
  }
  std::stable_sort(v.reasons.begin(), v.reasons.end(),
                   [](const Reason& a, const Reason& b) { return a.rank < b.rank; });
  if (after.results.empty())
    v.reasons.push_back({10, "validator-error", "", "nothing was validated after the change", {}});
  bool reject = std::any_of(v.reasons.begin(), v.reasons.end(),
                            [](const Reason& r) { return r.category != "validator-error"; });
  v.decision = reject              ? Decision::kReject
               : v.reasons.empty() ? Decision::kApprove
                                   : Decision::kError;
  return v;
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
