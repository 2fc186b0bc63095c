#include "twin/training/grade.hpp"

#include <algorithm>
#include <map>

namespace twin::training {

namespace {

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_'; }

std::string plural(int n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// What a user (or their monitoring) says when a test fails, given how many subjects fail.
std::string symptom_of(const std::string& family, const std::string& test, int n) {
  static const std::map<std::string, std::pair<std::string, std::string>> kSay = {
      {"bgp session-established",
       {"BGP session is not Established", "BGP sessions are not Established"}},
      {"bgp prefixes-received",
       {"BGP session is up but receives no routes", "BGP sessions are up but receive no routes"}},
      {"bgp router-id-unique",
       {"router has a router-id it should not", "routers have router-ids they should not"}},
      {"ospf adjacency-full", {"OSPF adjacency is not Full", "OSPF adjacencies are not Full"}},
      {"ospf interfaces-agree",
       {"OSPF interface does not agree with its neighbor",
        "OSPF interfaces do not agree with their neighbors"}},
      {"ospf router-id-unique",
       {"OSPF router-id is wrong or shared", "OSPF router-ids are wrong or shared"}},
      {"ospf networks-installed",
       {"OSPF network is missing from a router's table",
        "OSPF networks are missing from routers' tables"}},
      {"bfd peer-up", {"BFD session is down", "BFD sessions are down"}},
      {"evpn evpn-session", {"EVPN session is down", "EVPN sessions are down"}},
      {"evpn vni-present",
       {"switch does not carry the tenant networks its ports need",
        "switches do not carry the tenant networks their ports need"}},
      {"evpn flood-list",
       {"tenant network floods to the wrong switches",
        "tenant networks flood to the wrong switches"}},
      {"evpn mac-learned",
       {"server is unknown across the overlay", "servers are unknown across the overlay"}},
      {"evpn vni-bridge",
       {"tenant port or VXLAN device sits in the wrong bridge",
        "tenant ports or VXLAN devices sit in the wrong bridge"}},
      {"evpn overlay-mtu",
       {"pair of tenant servers cannot exchange full-size frames",
        "pairs of tenant servers cannot exchange full-size frames"}},
      {"routes fib-complete",
       {"route is missing from a router's table", "routes are missing from routers' tables"}},
      {"routes ecmp-width",
       {"route has fewer equal-cost paths than the design (redundancy lost)",
        "routes have fewer equal-cost paths than the design (redundancy lost)"}},
      {"routes anycast-nearest",
       {"anycast route leads away from its nearest holders",
        "anycast routes lead away from their nearest holders"}},
      {"mtu link-mtu", {"link fails the MTU audit", "links fail the MTU audit"}},
      {"mtu link-df", {"link drops full-size packets", "links drop full-size packets"}},
      {"mtu path-mtu",
       {"pair of routers cannot exchange full-size packets",
        "pairs of routers cannot exchange full-size packets"}},
      {"reachability loopback-mesh",
       {"pair of routers cannot reach each other", "pairs of routers cannot reach each other"}},
      {"reachability host-mesh",
       {"pair of servers cannot reach each other", "pairs of servers cannot reach each other"}},
      {"reachability tenant-mesh",
       {"pair of servers in one tenant network cannot reach each other",
        "pairs of servers in one tenant network cannot reach each other"}},
      {"reachability tenant-isolation",
       {"pair of servers of different tenants can reach each other",
        "pairs of servers of different tenants can reach each other"}},
      {"reachability anycast",
       {"router cannot reach an anycast address", "routers cannot reach an anycast address"}},
  };
  auto it = kSay.find(family + " " + test);
  if (it != kSay.end()) return plural(n, it->second.first, it->second.second);
  return family + " " + test + ": " + plural(n, "check fails", "checks fail");
}

// The diff's changes nobody intended, as a user would notice them: what worked at the start
// of the exercise and no longer does, or what appeared that the healthy lab did not have.
std::string change_symptom(const std::string& category, int n) {
  static const std::map<std::string, std::pair<std::string, std::string>> kSay = {
      {"session-lost", {"BGP session that was up at the start is down", "BGP sessions that were up at the start are down"}},
      {"prefix-lost", {"route the healthy fabric had is gone", "routes the healthy fabric had are gone"}},
      {"reachability-lost", {"pair that answered at the start does not", "pairs that answered at the start do not"}},
      {"prefix-gained", {"route appeared that the healthy fabric does not have (a new static route or announcement hides a fault, it does not fix it)", "routes appeared that the healthy fabric does not have (a new static route or announcement hides a fault, it does not fix it)"}},
      {"ecmp-shrunk", {"route lost equal-cost paths it had at the start", "routes lost equal-cost paths they had at the start"}},
      {"session-prefixes-lost", {"BGP session receives fewer routes than at the start", "BGP sessions receive fewer routes than at the start"}},
      {"mtu-changed", {"interface's MTU is not what it was at the start", "interfaces' MTUs are not what they were at the start"}},
      {"admin-state-changed", {"interface is down that was up at the start", "interfaces are down that were up at the start"}},
  };
  auto it = kSay.find(category);
  return it == kSay.end() ? plural(n, category + " change", category + " changes")
                          : plural(n, it->second.first, it->second.second);
}

}  // namespace

std::set<std::string> names_in(const std::string& text, const plan::Plan& plan) {
  std::set<std::string> out;
  for (const auto& n : plan.nodes)
    for (size_t at = text.find(n.name); at != std::string::npos;
         at = text.find(n.name, at + 1)) {
      bool left = at == 0 || !word_char(text[at - 1]);
      size_t end = at + n.name.size();
      bool right = end == text.size() || !word_char(text[end]) ||
                   (text[end] == '\'' );  // "leaf1's"
      if (left && right) {
        out.insert(n.name);
        break;
      }
    }
  return out;
}

Grade grade(const validate::Report& report, const replay::Diff& diff,
            const std::vector<std::string>& criteria, const std::set<std::string>& named) {
  Grade g;
  // Per test, in report order: how many subjects fail, and the pairs between named nodes.
  std::vector<std::string> order;
  std::map<std::string, int> failing;
  std::map<std::string, std::vector<std::string>> named_pairs;
  int errors = 0;
  for (const auto& r : report.results) {
    if (r.status == validate::Status::kError) {
      ++errors;
      ++g.failing;
      continue;
    }
    if (r.status != validate::Status::kFailed) continue;
    ++g.failing;
    if (criteria.empty() ||
        std::find(criteria.begin(), criteria.end(), r.validator) != criteria.end())
      ++g.criteria_failing;
    std::string key = r.validator + " " + r.test_name;
    if (!failing.count(key)) order.push_back(key);
    ++failing[key];
    // A pair the ticket already names is said by name: "server1 cannot reach server2".
    if (r.validator == "reachability" && named.count(r.node)) {
      for (const auto& n : named)
        if (n != r.node && r.peer.find(n) != std::string::npos) {
          // One loopback-mesh echo proves (or fails) both ways: it names no direction.
          std::string s = r.test_name == "loopback-mesh"
                              ? std::min(r.node, n) + " and " + std::max(r.node, n) +
                                    " cannot reach each other"
                              : r.node + " cannot reach " + n;
          auto& v = named_pairs[key];
          if (std::find(v.begin(), v.end(), s) == v.end()) v.push_back(s);
        }
    }
  }
  for (const auto& key : order) {
    auto sp = key.find(' ');
    std::string line = symptom_of(key.substr(0, sp), key.substr(sp + 1), failing[key]);
    if (auto it = named_pairs.find(key); it != named_pairs.end()) {
      line += ", among them: ";
      for (size_t i = 0; i < it->second.size(); ++i) line += (i ? "; " : "") + it->second[i];
    }
    g.symptoms.push_back(line);
  }
  if (errors > 0)
    g.symptoms.push_back(plural(errors, "check", "checks") +
                         " got no answer from the node they ask");
  // What the fault does is already said above; while tests fail, the diff adds only what they do
  // not show (routes gained, MTUs and ports changed), and once they pass, all of it.
  std::map<std::string, int> changes;
  std::vector<std::string> change_order;
  for (const auto& c : diff.changes) {
    if (c.intended || c.category == "session-gained" || c.category == "reachability-gained")
      continue;
    if (g.failing > 0 && c.category != "prefix-gained" && c.category != "mtu-changed" &&
        c.category != "admin-state-changed")
      continue;
    if (!changes.count(c.category)) change_order.push_back(c.category);
    ++changes[c.category];
  }
  for (const auto& c : change_order) g.symptoms.push_back(change_symptom(c, changes[c]));
  g.solved = replay::decide({}, report, diff, nullptr).decision == replay::Decision::kApprove;
  return g;
}

}  // namespace twin::training
