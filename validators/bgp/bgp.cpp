#include "validators/bgp/bgp.hpp"

#include <set>

namespace twin::validators {

using validate::make_result;
using validate::Status;
using validate::TestResult;

namespace {
const char* kFamilies[] = {"ipv4Unicast", "ipv6Unicast"};

// A node whose BGP the family checks (plan::has_bgp_instance).
bool has_bgpd(const plan::Node& n) { return plan::has_bgp_instance(n); }

// How a message names a session: "on swp1" (unnumbered) or "10.0.12.2" (numbered).
std::string where(const plan::ExpectedSession& s) {
  return s.peer_address.empty() ? "on " + s.interface : s.peer_address;
}

constexpr const char* kSummary = "show bgp summary json";

// Why `node`'s summary holds no data ("" when it does): not probed, the probe's error, or an
// answer with nothing in it.
std::string no_data(const std::string& node,
                    const std::map<std::string, Result<nlohmann::json>>& sums) {
  auto it = sums.find(node);
  if (it == sums.end()) return node + ": `" + kSummary + "` not probed";
  if (!it->second) return validate::source_failed(node, kSummary, it->second.error().message);
  const auto& j = *it->second;
  if (j.is_null()) return node + ": bgpd printed nothing for `" + kSummary + "`";
  if (!j.is_object()) return node + ": `" + kSummary + "` did not return an object";
  if (j.empty())
    return node + ": bgpd returned {} for `" + kSummary +
           "` (no `router bgp` instance, or no neighbor)";
  return "";
}
}  // namespace

std::vector<TestResult> evaluate_bgp(const plan::Plan& plan,
                                     const std::map<std::string, Result<nlohmann::json>>& sums) {
  std::vector<TestResult> out;
  bool lab_v4 = false, lab_v6 = false;
  for (const auto& p : plan.prefixes)
    (p.prefix.find(':') == std::string::npos ? lab_v4 : lab_v6) = true;
  std::map<std::string, std::pair<bool, bool>> originates;  // node -> (v4, v6)
  for (const auto& p : plan.prefixes) {
    auto& o = originates[p.owner];
    (p.prefix.find(':') == std::string::npos ? o.first : o.second) = true;
  }

  // Test 0 and 1 per expected session.
  for (const auto& n : plan.nodes) {
    if (!has_bgpd(n)) continue;
    auto it = sums.find(n.name);
    std::set<std::string> expected_keys;
    for (const auto& s : plan.sessions)
      if (s.node == n.name) expected_keys.insert(s.key());
    const std::string why = no_data(n.name, sums);
    // FRR prints {} for `show bgp summary json` when the instance has no neighbor at all:
    // that is data ("no sessions") for a node the topology gives none, and no data otherwise.
    if (!why.empty() && expected_keys.empty() && it != sums.end() && it->second &&
        it->second->is_object())
      continue;
    if (!why.empty()) {
      for (const auto& s : plan.sessions)
        if (s.node == n.name)
          out.push_back(make_result("bgp", 0, "session-established", Status::kError, n.name,
                                    s.key(), "Established", "no data",
                                    "cannot read BGP state: " + why));
      if (expected_keys.empty())
        out.push_back(make_result("bgp", 0, "session-established", Status::kError, n.name, "",
                                  "BGP summary", "no data", "cannot read BGP state: " + why));
      continue;
    }
    const auto& sum = *it->second;
    for (const auto& s : plan.sessions) {
      if (s.node != n.name) continue;
      const nlohmann::json* peer = validate::find_bgp_peer(sum, s.key());
      if (!peer) {
        out.push_back(make_result("bgp", 0, "session-established", Status::kFailed, n.name,
                                  s.key(), "Established with " + s.peer_node, "not configured",
                                  "no BGP neighbor " + where(s) + " toward " + s.peer_node));
        continue;
      }
      std::string state = peer->value("state", "unknown");
      bool up = state == "Established";
      std::string observed = state;
      // FRR 8.4 already folds the reason into some states ("Idle (Admin)").
      std::string why = peer->value("peerState", "");
      if (!up && !why.empty() && state.find(why) == std::string::npos) observed += " (" + why + ")";
      out.push_back(make_result(
          "bgp", 0, "session-established", up ? Status::kPassed : Status::kFailed, n.name,
          s.key(), "Established with " + s.peer_node, observed,
          up ? "session with " + s.peer_node + " is Established"
             : "session " + where(s) + " toward " + s.peer_node + " is " + state));
      // A session RFC 8212 leaves without policy carries nothing by design, and one through a
      // filter twin does not evaluate may (the plan says so of both).
      if (!up || !s.carries_routes || !s.predictable) continue;
      auto orig = originates[s.peer_node];
      // A Clos peer always has something to send (its own loopback or transit routes); a peer
      // that originates nothing may legitimately send nothing, so only count when it does.
      for (int fam : {4, 6}) {
        bool wanted = fam == 4 ? (lab_v4 && orig.first) : (lab_v6 && orig.second);
        if (!wanted) continue;
        const char* af = fam == 4 ? "ipv4Unicast" : "ipv6Unicast";
        std::string subject = s.key() + " " + (fam == 4 ? "ipv4" : "ipv6");
        const nlohmann::json* p = nullptr;
        if (sum.contains(af) && sum[af].contains("peers") && sum[af]["peers"].contains(s.key()))
          p = &sum[af]["peers"][s.key()];
        if (!p) {
          out.push_back(make_result("bgp", 1, "prefixes-received", Status::kFailed, n.name, subject,
                                    ">= 1 prefix", "address family not active",
                                    std::string(fam == 4 ? "IPv4" : "IPv6") +
                                        " unicast is not active with " + s.peer_node));
          continue;
        }
        long rcvd = p->value("pfxRcd", -1L);
        out.push_back(make_result(
            "bgp", 1, "prefixes-received", rcvd >= 1 ? Status::kPassed : Status::kFailed, n.name,
            subject, ">= 1 prefix", std::to_string(rcvd) + " prefixes",
            rcvd >= 1 ? ""
                      : "Established but nothing received from " + s.peer_node + " (filtered?)"));
      }
    }
    // Configured neighbors the topology did not predict must be up too.
    std::set<std::string> extra;
    for (const char* af : kFamilies)
      if (sum.contains(af) && sum[af].contains("peers"))
        for (const auto& [key, v] : sum[af]["peers"].items())
          if (!expected_keys.count(key)) extra.insert(key);
    for (const auto& key : extra) {
      // A neighbor on an interface the change means to be down, or of a drained node, is not
      // expected to be up (intent, changeset/intent.hpp).
      auto intended_down = [&] {
        if (n.drained) return true;
        for (const auto& i : n.interfaces)
          if (i.name == key && i.fabric) return !plan::carries_bgp(plan, n, i);
        return false;
      };
      // An own config's neighbor toward an address no node of the lab holds (an upstream, a
      // collector) cannot come up here: the plan expects nothing of it.
      auto outside_lab = [&] {
        if (n.config_generated) return false;
        for (const auto& b : n.bgp_neighbors)
          if (b.peer == key) return !b.unnumbered;
        return false;
      };
      if (outside_lab()) {
        out.push_back(make_result("bgp", 0, "session-established", Status::kSkipped, n.name, key,
                                  "not expected", "not checked",
                                  "configured neighbor " + key + " is not a node of this lab"));
        continue;
      }
      if (intended_down()) {
        out.push_back(make_result("bgp", 0, "session-established", Status::kSkipped, n.name, key,
                                  "down (intended)", "not checked",
                                  "the change means this session to be down"));
        continue;
      }
      const nlohmann::json* peer = validate::find_bgp_peer(sum, key);
      std::string state = peer ? peer->value("state", "unknown") : "unknown";
      bool up = state == "Established";
      out.push_back(make_result("bgp", 0, "session-established",
                                up ? Status::kPassed : Status::kFailed, n.name, key, "Established",
                                state,
                                up ? "configured neighbor " + key + " is Established"
                                   : "configured neighbor " + key + " is " + state));
    }
  }

  // Test 2: router-ids. A node whose summary holds no data is an error, not left out: its
  // router-id could be anyone's.
  std::map<std::string, std::vector<std::string>> by_rid;
  for (const auto& n : plan.nodes) {
    if (!has_bgpd(n)) continue;
    auto it = sums.find(n.name);
    const std::string expected = n.router_id.empty() ? "a router-id" : n.router_id;
    if (const std::string why = no_data(n.name, sums); !why.empty()) {
      bool sessions = false;
      for (const auto& s : plan.sessions) sessions |= s.node == n.name;
      // {} from a node the topology gives no session: bgpd has no neighbor, so its summary
      // shows no router-id, and no peer meets it to be confused by a duplicate.
      if (!sessions && it != sums.end() && it->second && it->second->is_object())
        out.push_back(make_result("bgp", 2, "router-id-unique", Status::kSkipped, n.name, "",
                                  expected, "no neighbor",
                                  "bgpd on " + n.name +
                                      " has no neighbor: its summary shows no router-id, and no "
                                      "BGP peer meets it"));
      else
        out.push_back(make_result("bgp", 2, "router-id-unique", Status::kError, n.name, "",
                                  expected, "no data", "cannot read the router-id: " + why));
      continue;
    }
    std::string rid;
    for (const char* af : kFamilies)
      if (it->second->is_object() && it->second->contains(af) && (*it->second)[af].is_object() &&
          (*it->second)[af].contains("routerId")) {
        rid = (*it->second)[af].value("routerId", "");
        break;
      }
    if (rid.empty()) {
      out.push_back(make_result("bgp", 2, "router-id-unique", Status::kError, n.name, "", expected,
                                "no data", n.name + ": no routerId in `" + kSummary + "`"));
      continue;
    }
    by_rid[rid].push_back(n.name);
    if (!n.router_id.empty() && rid != n.router_id)
      out.push_back(make_result("bgp", 2, "router-id-unique", Status::kFailed, n.name, "",
                                n.router_id, rid, "router-id differs from the topology's"));
  }
  for (const auto& [rid, nodes] : by_rid) {
    for (const auto& node : nodes) {
      bool dup = nodes.size() > 1;
      std::string others;
      for (const auto& o : nodes)
        if (o != node) others += (others.empty() ? "" : ", ") + o;
      out.push_back(make_result("bgp", 2, "router-id-unique",
                                dup ? Status::kFailed : Status::kPassed, node, "", "unique",
                                rid + (dup ? " (also " + others + ")" : ""),
                                dup ? "router-id " + rid + " is shared with " + others : ""));
    }
  }
  return out;
}

std::vector<TestResult> BgpValidator::run(validate::Context& ctx) {
  std::vector<const plan::Node*> nodes;
  for (const auto& n : ctx.plan.nodes)
    if (has_bgpd(n)) nodes.push_back(&n);
  std::vector<std::optional<Result<nlohmann::json>>> got(nodes.size());
  validate::parallel_for(nodes.size(), ctx.parallel, [&](size_t i) {
    got[i] = ctx.probe.frr_json(*nodes[i], "bgpd", "show bgp summary json");
  });
  std::map<std::string, Result<nlohmann::json>> sums;
  for (size_t i = 0; i < nodes.size(); ++i) sums.emplace(nodes[i]->name, std::move(*got[i]));
  return evaluate_bgp(ctx.plan, sums);
}

}  // namespace twin::validators
