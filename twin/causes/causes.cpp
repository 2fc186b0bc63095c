#include "twin/causes/causes.hpp"

#include <algorithm>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>

#include "twin/core/diagnostics.hpp"
#include "twin/core/ip.hpp"
#include "twin/core/util.hpp"
#include "twin/topology/frr_conf.hpp"
#include "twin/topology/tenants.hpp"
#include "twin/validate/system_probe.hpp"

namespace twin::replay {

namespace {

bool has_flag(const nlohmann::json& link, const char* flag) {
  if (!link.contains("flags") || !link["flags"].is_array()) return false;
  for (const auto& f : link["flags"])
    if (f.is_string() && f.get<std::string>() == flag) return true;
  return false;
}

// ---- duplicate-address

void duplicate_addresses(const plan::Plan& plan, const CauseFacts& facts, std::vector<Cause>& out) {
  // address -> "node ifname" where it is configured (global scope only: 127.0.0.1 and
  // link-local addresses repeat on every node by design).
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> where;
  for (const auto& [node, f] : facts.nodes) {
    if (!f.addresses || !f.addresses->is_array()) continue;
    for (const auto& l : *f.addresses)
      for (const auto& a : l.value("addr_info", nlohmann::json::array())) {
        if (a.value("scope", "") != "global") continue;
        std::string ip = a.value("local", "");
        if (!ip.empty())
          where[ip].emplace_back(node, l.value("ifname", "?") + " " + ip + "/" +
                                           std::to_string(a.value("prefixlen", 0)));
      }
  }
  // The plan's own: an address it gives two nodes (anycast by design) is not a fault.
  std::map<std::string, std::set<std::string>> planned;
  for (const auto& n : plan.nodes) {
    auto note = [&](const std::string& a) {
      if (auto p = IpPrefix::parse(a, true)) planned[p->address()].insert(n.name);
    };
    for (const auto& i : n.interfaces)
      for (const auto& a : i.addresses) note(a);
    for (const auto& a : n.loopbacks) note(a);
    for (const auto& [ifname, addrs] : n.config_addresses)
      for (const auto& a : addrs) note(a);
  }
  for (const auto& [ip, places] : where) {
    std::set<std::string> nodes;
    for (const auto& [n, what] : places) nodes.insert(n);
    if (nodes.size() < 2) continue;
    if (planned.count(ip) && planned[ip].size() >= 2) continue;
    Cause c{"duplicate-address", "address " + ip + " is configured on " +
                                     std::to_string(nodes.size()) + " nodes: ",
            {}, {nodes.begin(), nodes.end()}};
    for (size_t i = 0; i < places.size(); ++i) {
      c.text += (i ? " and " : "") + places[i].first + " " +
                places[i].second.substr(0, places[i].second.find(' '));
      c.evidence.push_back(places[i].first + ": `ip addr` shows " + places[i].second);
    }
    c.text += "; traffic for it goes to whichever is nearer";
    out.push_back(std::move(c));
  }
}

// ---- bgp-notification

// The expected session of `node` whose FRR neighbor name is `key`.
const plan::ExpectedSession* session_of(const plan::Plan& plan, const std::string& node,
                                        const std::string& key) {
  for (const auto& s : plan.sessions)
    if (s.node == node && s.key() == key) return &s;
  return nullptr;
}

// The remote-as `node` configures on its neighbor `key`, from its `show bgp neighbors json`
// (0 when unknown).
long configured_remote_as(const CauseFacts& facts, const std::string& node, const std::string& key) {
  auto f = facts.nodes.find(node);
  if (f == facts.nodes.end() || !f->second.bgp_neighbors || !f->second.bgp_neighbors->is_object())
    return 0;
  const auto& j = *f->second.bgp_neighbors;
  if (!j.contains(key) || !j[key].is_object()) return 0;
  return j[key].value("remoteAs", 0L);
}

// The interface of `peer` toward `node` on the link `node`:`ifname` ("" when not a link).
std::string peer_interface(const plan::Plan& plan, const std::string& node, const std::string& ifname) {
  if (const plan::Node* n = plan.find(node))
    for (const auto& i : n->interfaces)
      if (i.name == ifname) return i.peer_interface;
  return "";
}

void bgp_notifications(const plan::Plan& plan, const CauseFacts& facts, std::vector<Cause>& out) {
  std::set<std::string> said;
  for (const auto& [node, f] : facts.nodes) {
    if (!f.bgp_neighbors || !f.bgp_neighbors->is_object()) continue;
    for (const auto& [key, nb] : f.bgp_neighbors->items()) {
      if (!nb.is_object() || nb.value("bgpState", "") == "Established") continue;
      std::string reason = nb.value("lastNotificationReason", "");
      const auto* s = session_of(plan, node, key);
      std::string peer = s ? s->peer_node : "";
      const plan::Node* pn = peer.empty() ? nullptr : plan.find(peer);
      const plan::Node* me = plan.find(node);
      // A remote-as that is not the peer's AS is read from the configuration, not from the last
      // NOTIFICATION: which message a session saw last depends on timing (the OPEN collision
      // that follows "Bad Peer AS" often overwrites it with an FSM error). Either end may hold
      // the wrong number; both ends then say the same, once.
      std::string wrong;
      if (pn && me) {
        std::string pif = s && s->peer_address.empty() ? peer_interface(plan, node, key) : "";
        long mine = configured_remote_as(facts, node, key);
        long theirs = pif.empty() ? 0 : configured_remote_as(facts, peer, pif);
        if (mine != 0 && pn->asn != 0 && static_cast<uint32_t>(mine) != pn->asn)
          wrong = node + " expects remote-as " + std::to_string(mine) + " on " + key + ", but " +
                  peer + " is AS " + std::to_string(pn->asn);
        else if (theirs != 0 && me->asn != 0 && static_cast<uint32_t>(theirs) != me->asn)
          wrong = peer + " expects remote-as " + std::to_string(theirs) + " on " + pif + ", but " +
                  node + " is AS " + std::to_string(me->asn);
      }
      if (!wrong.empty() && !said.insert(wrong).second) continue;
      if (reason.empty()) {
        if (wrong.empty()) continue;
        Cause c{"remote-as-mismatch",
                "BGP session " + node + " " + key + " (to " + peer + ") is " +
                    nb.value("bgpState", "?") + " — " + wrong,
                {node + ": `show bgp neighbors json` " + key + ": bgpState " +
                 nb.value("bgpState", "?") + ", remoteAs " +
                 std::to_string(nb.value("remoteAs", 0L))},
                {node, peer}};
        out.push_back(std::move(c));
        continue;
      }
      std::string due = nb.value("lastResetDueTo", "");
      bool sent = due.find("send") != std::string::npos;
      Cause c{"bgp-notification",
              "BGP session " + node + " " + key + (peer.empty() ? "" : " (to " + peer + ")") +
                  " is " + nb.value("bgpState", "?") + ": " + (sent ? "it sent" : "it received") +
                  " NOTIFICATION " + reason,
              {node + ": `show bgp neighbors json` " + key + ": bgpState " +
               nb.value("bgpState", "?") + ", lastNotificationReason \"" + reason +
               "\", lastErrorCodeSubcode " + nb.value("lastErrorCodeSubcode", "?") +
               ", lastResetDueTo \"" + due + "\""},
              {node}};
      if (!peer.empty()) c.nodes.push_back(peer);
      if (!wrong.empty())
        c.text += " — " + wrong;
      else if (reason.find("Hold Timer Expired") != std::string::npos)
        c.text += " — no keepalive or update arrived within the hold time (" +
                  std::to_string(nb.value("bgpTimerHoldTimeMsecs", 0L) / 1000) +
                  " s): the path to the peer drops packets";
      else if (reason.find("Maximum Number of Prefixes") != std::string::npos)
        c.text += " — the peer sent more prefixes than its maximum-prefix limit";
      else if (reason.find("Bad BGP Identifier") != std::string::npos)
        c.text += " — the two ends' router-ids clash (" + nb.value("remoteRouterId", "?") + ")";
      out.push_back(std::move(c));
    }
  }
}

// ---- policy-undefined, policy-denies-all, both-passive (from the running config)

struct Policy {
  // What is defined, by kind: name -> whether any of its entries permits.
  std::map<std::string, bool> route_maps, prefix_lists, prefix_lists6, as_path_lists;
  // (neighbor, what, name, direction, line)
  struct Use {
    std::string neighbor, what, name, direction;
    bool ipv6 = false;  // used in an IPv6 address family: a prefix-list must be an ipv6 one
  };
  std::vector<Use> uses;
  // The definitions a use can name. A prefix-list is per family: `ip prefix-list` filters IPv4
  // routes, `ipv6 prefix-list` IPv6 ones (FRR's docs, "IP Prefix List"), whatever the names.
  const std::map<std::string, bool>& defined_for(const Use& u, bool other_family = false) const {
    if (u.what == "route-map") return route_maps;
    if (u.what == "prefix-list") return u.ipv6 != other_family ? prefix_lists6 : prefix_lists;
    return as_path_lists;
  }
  std::set<std::string> passive;                       // neighbors or peer-groups
  bool requires_policy = false;                         // `bgp ebgp-requires-policy` (RFC 8212)
  std::map<std::string, std::string> peer_group_of;    // neighbor -> peer-group
};

Policy parse_policy(const std::string& config) {
  static const std::regex rm_def(R"(^route-map (\S+) (permit|deny) \d+)");
  static const std::regex pl_def(R"(^ip(v6)? prefix-list (\S+) (.*))");
  static const std::regex permit(R"(^(?:seq \d+ )?permit )");  // an entry's rest, after the name
  static const std::regex af(R"(^\s*address-family (\S+))");
  static const std::regex asp_def(R"(^bgp as-path access-list (\S+) (.*))");
  static const std::regex use(
      R"(^\s*neighbor (\S+) (route-map|prefix-list|filter-list) (\S+) (in|out)\s*$)");
  static const std::regex passive(R"(^\s*neighbor (\S+) passive\s*$)");
  static const std::regex group(R"(^\s*neighbor (\S+) (?:interface )?peer-group (\S+)\s*$)");
  static const std::regex rfc8212(R"(^\s*bgp ebgp-requires-policy\s*$)");
  Policy p;
  std::istringstream in(config);
  std::smatch m;
  bool ipv6 = false;  // in `address-family ipv6 ...` (outside one, BGP's default is IPv4)
  for (std::string line; std::getline(in, line);) {
    if (std::regex_search(line, m, af)) {
      ipv6 = m[1] == "ipv6";
    } else if (line.find("exit-address-family") != std::string::npos || line.rfind("exit", 0) == 0) {
      ipv6 = false;
    } else if (std::regex_search(line, m, rm_def)) {
      p.route_maps[m[1]] |= m[2] == "permit";
    } else if (std::regex_search(line, m, pl_def)) {
      (m[1].matched ? p.prefix_lists6 : p.prefix_lists)[m[2]] |=
          std::regex_search(m[3].str(), permit);
    } else if (std::regex_search(line, m, asp_def)) {
      p.as_path_lists[m[1]] |= std::regex_search(m[2].str(), permit);
    } else if (std::regex_match(line, m, use)) {
      p.uses.push_back({m[1], m[2], m[3], m[4], ipv6});
    } else if (std::regex_match(line, m, passive)) {
      p.passive.insert(m[1]);
    } else if (std::regex_match(line, m, group)) {
      p.peer_group_of[m[1]] = m[2];
    } else if (std::regex_match(line, rfc8212)) {
      p.requires_policy = true;
    }
  }
  return p;
}

std::vector<std::string> names(const std::set<std::string>& s) { return {s.begin(), s.end()}; }
std::vector<std::string> names(const std::map<std::string, bool>& defined) {
  std::vector<std::string> out;
  for (const auto& [name, permits] : defined) out.push_back(name);
  return out;
}

void policies(const plan::Plan& plan, const CauseFacts& facts, std::vector<Cause>& out) {
  std::map<std::string, Policy> by_node;
  for (const auto& [node, f] : facts.nodes)
    if (!f.config.empty()) by_node[node] = parse_policy(f.config);
  for (const auto& [node, p] : by_node) {
    std::set<std::string> seen;
    for (const auto& u : p.uses) {
      const bool v6_list = u.what == "prefix-list" && u.ipv6;
      const auto& defined = p.defined_for(u);
      std::string line = "neighbor " + u.neighbor + " " + u.what + " " + u.name + " " + u.direction;
      if (!seen.insert(line + (u.ipv6 ? " 6" : " 4")).second) continue;
      auto def = defined.find(u.name);
      if (def == defined.end()) {
        // The same name in the other family is the likelier mistake than a typo.
        const bool other_family =
            u.what == "prefix-list" && p.defined_for(u, true).count(u.name);
        std::string hint =
            other_family ? " (`" + std::string(u.ipv6 ? "ip" : "ipv6") + " prefix-list " + u.name +
                               "` exists, but it filters " + (u.ipv6 ? "IPv4" : "IPv6") + " routes)"
            : defined.empty() ? ""
                              : " (" + did_you_mean(u.name, names(defined), "") + ")";
        out.push_back({"policy-undefined",
                       node + ": `" + line + "` names " + (v6_list ? "an ipv6 " : "a ") + u.what +
                           " that is not defined, so nothing passes " +
                           (u.direction == "in" ? "into " : "out of ") + node + " that way" + hint,
                       {node + ": running config has `" + line + "`; defined " +
                        (v6_list ? "ipv6 " : "") + u.what + "s: " +
                        (defined.empty() ? std::string("none") : join_names(names(defined)))},
                       {node}});
      } else if (u.what != "filter-list" && !def->second) {
        const std::string kind = v6_list ? "ipv6 prefix-list" : u.what;
        out.push_back({"policy-denies-all",
                       node + ": " + kind + " " + u.name + " (`" + line +
                           "`) has deny entries only: it denies every route",
                       {node + ": running config defines " + kind + " " + u.name +
                        " without a permit entry"},
                       {node}});
      }
    }
  }
  // RFC 8212 without policy: an eBGP session then neither accepts nor sends a route (FRR's
  // `bgp ebgp-requires-policy`). FRR applies it to sessions as they (re)start, so it can hide
  // under sessions established before it was switched on.
  for (const auto& [node, p] : by_node) {
    if (!p.requires_policy) continue;
    auto has_map = [&](const std::string& key, const std::string& dir) {
      auto g = p.peer_group_of.find(key);
      for (const auto& u : p.uses)
        if (u.what == "route-map" && u.direction == dir &&
            (u.neighbor == key || (g != p.peer_group_of.end() && u.neighbor == g->second)))
          return true;
      return false;
    };
    std::set<std::string> bare;
    for (const auto& s : plan.sessions) {
      if (s.node != node || s.ibgp) continue;
      std::string key = s.key();
      if (!has_map(key, "in") || !has_map(key, "out")) {
        auto g = p.peer_group_of.find(key);
        bare.insert(g == p.peer_group_of.end() ? key : g->second);
      }
    }
    if (bare.empty()) continue;
    std::string list = join_names(names(bare));
    out.push_back({"policy-required",
                   node + ": `bgp ebgp-requires-policy` (RFC 8212) is on, and neighbor " + list +
                       " has no route-map in and out: from its next session start it accepts "
                       "and sends no route",
                   {node + ": running config has `bgp ebgp-requires-policy`; no `neighbor " +
                    list + " route-map ... in|out`"},
                   {node}});
  }
  // Both ends passive: neither opens the TCP connection (RFC 4271 §8: a passive peer only
  // listens), so the session never comes up.
  auto is_passive = [&](const std::string& node, const std::string& key) {
    auto it = by_node.find(node);
    if (it == by_node.end()) return false;
    const Policy& p = it->second;
    if (p.passive.count(key)) return true;
    auto g = p.peer_group_of.find(key);
    return g != p.peer_group_of.end() && p.passive.count(g->second) > 0;
  };
  std::set<std::string> done;
  for (const auto& s : plan.sessions) {
    if (s.peer_node.empty() || !s.peer_address.empty()) continue;  // unnumbered: interface keys
    const plan::Node* n = plan.find(s.node);
    if (!n) continue;
    std::string peer_if;
    for (const auto& i : n->interfaces)
      if (i.name == s.interface) peer_if = i.peer_interface;
    std::string pair = std::min(s.node, s.peer_node) + "|" + std::max(s.node, s.peer_node) + "|" +
                       s.interface;
    if (peer_if.empty() || !is_passive(s.node, s.interface) || !is_passive(s.peer_node, peer_if))
      continue;
    if (!done.insert(std::min(s.node + ":" + s.interface, s.peer_node + ":" + peer_if)).second)
      continue;
    out.push_back({"both-passive",
                   "BGP session " + s.node + ":" + s.interface + " -- " + s.peer_node + ":" +
                       peer_if + " is passive at both ends: neither opens the connection",
                   {s.node + ": neighbor " + s.interface + " passive (or its peer-group)",
                    s.peer_node + ": neighbor " + peer_if + " passive (or its peer-group)"},
                   {s.node, s.peer_node}});
  }
}

// ---- unnumbered-ipv6, mtu-mismatch, forwarding-off, lo-down (kernel state)

const nlohmann::json* link_of(const NodeFacts& f, const std::string& ifname) {
  if (!f.addresses || !f.addresses->is_array()) return nullptr;
  for (const auto& l : *f.addresses)
    if (l.value("ifname", "") == ifname) return &l;
  return nullptr;
}

void kernel_state(const plan::Plan& plan, const CauseFacts& facts, std::vector<Cause>& out) {
  std::set<std::string> links_done;
  for (const auto& n : plan.nodes) {
    auto fi = facts.nodes.find(n.name);
    if (fi == facts.nodes.end()) continue;
    const NodeFacts& f = fi->second;
    for (const auto& i : n.interfaces) {
      const nlohmann::json* l = link_of(f, i.name);
      // BGP unnumbered rides on the port's IPv6 link-local address (RFC 5549 next hops).
      if (i.fabric && i.up && l && has_flag(*l, "UP")) {
        auto sc = f.sysctls.find("net.ipv6.conf." + i.name + ".disable_ipv6");
        bool disabled = sc != f.sysctls.end() && sc->second == "1";
        bool link_local = false;
        for (const auto& a : l->value("addr_info", nlohmann::json::array()))
          link_local |= a.value("family", "") == "inet6" && a.value("scope", "") == "link" &&
                        !a.value("tentative", false);
        if (disabled || !link_local)
          out.push_back({"unnumbered-ipv6",
                         std::string(disabled ? "IPv6 is disabled on " : "no IPv6 link-local address on ") +
                             n.name + ":" + i.name +
                             ": its BGP unnumbered session needs the port's link-local address",
                         {disabled ? n.name + ": net.ipv6.conf." + i.name + ".disable_ipv6 = 1"
                                   : n.name + ": `ip addr` shows no inet6 scope link address on " +
                                         i.name},
                         {n.name, i.peer_node}});
      }
      // MTU mismatch: a veth drops frames above the receiver's MTU.
      auto pf = facts.nodes.find(i.peer_node);
      if (!l || pf == facts.nodes.end()) continue;
      const nlohmann::json* pl = link_of(pf->second, i.peer_interface);
      if (!pl) continue;
      std::string key = std::min(n.name + ":" + i.name, i.peer_node + ":" + i.peer_interface);
      if (!links_done.insert(key).second) continue;
      int a = l->value("mtu", 0), b = pl->value("mtu", 0);
      if (a > 0 && b > 0 && a != b)
        out.push_back({"mtu-mismatch",
                       "MTU mismatch on the link " + n.name + ":" + i.name + " (" + std::to_string(a) +
                           ") -- " + i.peer_node + ":" + i.peer_interface + " (" +
                           std::to_string(b) + "): packets above " + std::to_string(std::min(a, b)) +
                           " bytes are dropped one way",
                       {n.name + ": " + i.name + " mtu " + std::to_string(a),
                        i.peer_node + ": " + i.peer_interface + " mtu " + std::to_string(b)},
                       {n.name, i.peer_node}});
    }
    if (n.kind != topology::NodeKind::kFrr) continue;
    for (const char* key : {"net.ipv4.conf.all.forwarding", "net.ipv6.conf.all.forwarding"}) {
      auto sc = f.sysctls.find(key);
      if (sc != f.sysctls.end() && sc->second == "0")
        out.push_back({"forwarding-off",
                       std::string("IP") + (std::string(key).find("ipv6") != std::string::npos ? "v6" : "v4") +
                           " forwarding is off on " + n.name +
                           ": it keeps its sessions and routes but drops the traffic it should carry",
                       {n.name + ": " + key + " = 0"},
                       {n.name}});
    }
    if (const nlohmann::json* lo = link_of(f, "lo"); lo && !has_flag(*lo, "UP"))
      out.push_back({"lo-down",
                     "lo is down on " + n.name + ": its loopback addresses answer nothing",
                     {n.name + ": `ip link` shows lo without UP"},
                     {n.name}});
  }
}

// ---- ospf-mismatch (the OSPF family's own finding)

void ospf_findings(const CauseFacts& facts, std::vector<Cause>& out) {
  if (!facts.after) return;
  std::set<std::string> seen;
  for (const auto& r : facts.after->results) {
    if (r.validator != "ospf" || r.status != validate::Status::kFailed) continue;
    const std::string& m = r.message.empty() ? r.observed : r.message;
    if (m.find("mismatch") == std::string::npos || !seen.insert(m).second) continue;
    Cause c{"ospf-mismatch", "OSPF: " + m, {r.node + ": ospf." + std::to_string(r.test) + " " + m},
            {r.node}};
    if (!r.peer.empty()) c.nodes.push_back(r.peer.substr(0, r.peer.find(' ')));
    out.push_back(std::move(c));
  }
}

// ---- ospf-auth (the two ends of an OSPF link cannot authenticate each other)

void ospf_auth(const plan::Plan& plan, const CauseFacts& facts, std::vector<Cause>& out) {
  std::map<std::string, topology::FrrConf> confs;
  for (const auto& [node, f] : facts.nodes)
    if (!f.config.empty()) confs.emplace(node, topology::parse_frr_conf(f.config, node));
  std::set<std::string> seen;  // a link once, from either end
  for (const auto& a : plan.adjacencies) {
    if (a.version != 2) continue;
    auto h = confs.find(a.node), t = confs.find(a.peer_node);
    if (h == confs.end() || t == confs.end()) continue;
    const std::string here = a.node + ":" + a.interface,
                      there = a.peer_node + ":" + a.peer_interface;
    if (!seen.insert(std::min(here, there) + " " + std::max(here, there)).second) continue;
    std::string why = topology::ospf_auth_mismatch(h->second, a.interface, t->second,
                                                   a.peer_interface, a.area, there);
    if (why.empty()) continue;
    auto said = [&](const topology::FrrConf& c, const std::string& node, const std::string& ifn) {
      std::string s =
          node + ":" + ifn + ": authentication " + topology::ospf_auth_type(c, ifn, a.area);
      if (auto it = c.ospf_auth.find(ifn);
          it != c.ospf_auth.end() && !it->second.md5_keys.empty()) {
        std::string ids;
        for (const auto& [id, key] : it->second.md5_keys)
          ids += (ids.empty() ? "" : ", ") + std::to_string(id);
        s += " (message-digest key ids " + ids + ")";
      }
      return s + " (running config)";
    };
    out.push_back(
        {"ospf-auth",
         "OSPF authentication of " + here + " and " + there + " does not match (" + why +
             "): each end drops the other's packets, "
             "so the adjacency cannot form (RFC 2328 appendix D)",
         {said(h->second, a.node, a.interface), said(t->second, a.peer_node, a.peer_interface)},
         {a.node, a.peer_node}});
  }
}

// ---- daemon-dead (what twin runs for the lab is not running)

void dead_daemons(const CauseFacts& facts, std::vector<Cause>& out) {
  if (!facts.after) return;
  for (const auto& r : facts.after->results) {
    if (!r.unhealthy || r.status != validate::Status::kFailed) continue;
    out.push_back({"daemon-dead",
                   r.peer + " on " + r.node +
                       " is not running: every test through it fails "
                       "until it is back (twin restart " +
                       r.node + ")",
                   {r.node + ": " + r.validator + "." + std::to_string(r.test) + " " + r.message},
                   {r.node}});
  }
}

// ---- static-override (a route of another origin inside a routed prefix)

void static_overrides(const plan::Plan& plan, const CauseFacts& facts, std::vector<Cause>& out) {
  if (!facts.state) return;
  for (const auto& [node, routes] : facts.state->other_routes) {
    const plan::Node* n = plan.find(node);
    if (!n || n->kind != topology::NodeKind::kFrr) continue;
    for (const auto& [prefix, how] : routes) {
      // Connected and local routes follow the interfaces ("kernel" is their protocol).
      if (how.rfind("kernel", 0) == 0) continue;
      auto p = IpPrefix::parse(prefix);
      if (!p) continue;
      for (const auto& e : plan.prefixes) {
        if (e.owner == node) continue;
        auto ep = IpPrefix::parse(e.prefix);
        if (!ep || ep->family != p->family || ep->length > p->length || !ep->contains(*p)) continue;
        out.push_back({"static-override",
                       node + " has a route " + prefix + " (" + how + ") inside " + e.prefix +
                           " (" + e.kind + " of " + e.owner +
                           "): that traffic takes its one path whatever the fabric's routing does",
                       {node + ": `ip route` shows " + prefix + " " + how},
                       {node, e.owner}});
        break;
      }
    }
  }
}

// Whether `text` names `node` as a word ("leaf1" in "leaf1 swp1", not in "leaf10").
bool names_node(const std::string& text, const std::string& node) {
  for (size_t at = text.find(node); at != std::string::npos; at = text.find(node, at + 1)) {
    auto word = [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_'; };
    bool before = at == 0 || !word(text[at - 1]);
    bool after = at + node.size() >= text.size() || !word(text[at + node.size()]);
    if (before && after) return true;
  }
  return false;
}

}  // namespace

// ---- evpn-not-advertised (from the running config)

// A VTEP whose BGP does not advertise its VNIs: no `advertise-all-vni` (nor a per-VNI `vni N`
// block) under `address-family l2vpn evpn` of its default instance (FRR docs, "EVPN").
void evpn_not_advertised(const plan::Plan& plan, const CauseFacts& facts, std::vector<Cause>& out) {
  for (const auto& n : plan.nodes) {
    std::vector<uint32_t> l2;
    for (const auto& v : n.vnis)
      if (!v.l3()) l2.push_back(v.vni);
    auto f = facts.nodes.find(n.name);
    if (l2.empty() || f == facts.nodes.end() || f->second.config.empty()) continue;
    const std::string& c = f->second.config;
    bool in_evpn = false, in_default_bgp = false, advertised = false;
    std::istringstream lines(c);
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("router bgp ", 0) == 0) in_default_bgp = line.find(" vrf ") == std::string::npos;
      if (line.find("address-family l2vpn evpn") != std::string::npos) in_evpn = in_default_bgp;
      if (line.find("exit-address-family") != std::string::npos) in_evpn = false;
      if (in_evpn && (line.find("advertise-all-vni") != std::string::npos ||
                      line.find(" vni ") != std::string::npos))
        advertised = true;
    }
    if (advertised) continue;
    std::string vnis;
    for (uint32_t v : l2) vnis += (vnis.empty() ? "" : ", ") + std::to_string(v);
    // It concerns every server of those networks: they are the ones cut off from each other.
    std::vector<std::string> concerned = {n.name};
    for (const auto& t : plan.tenants)
      for (const auto& net : t.networks)
        if (std::find(l2.begin(), l2.end(), net.vni) != l2.end())
          concerned.insert(concerned.end(), net.servers.begin(), net.servers.end());
    out.push_back({"evpn-not-advertised",
                   n.name + " is a VTEP of VNI " + vnis +
                       " but its BGP does not advertise them: no `advertise-all-vni` under "
                       "`address-family l2vpn evpn`, so no other VTEP learns its servers (EVPN "
                       "types 2 and 3)",
                   {n.name + ": running config has no advertise-all-vni (nor a `vni` block) in "
                             "router bgp's l2vpn evpn"},
                   concerned});
  }
}

// ---- tenant-port-misplaced, underlay-mtu (from the kernel's links)

namespace {

// The tenant network on `vni` (and its tenant), or nullptr.
const plan::TenantNetworkPlan* network_of_vni(const plan::Plan& plan, uint32_t vni,
                                              const plan::TenantPlan** tenant = nullptr) {
  for (const auto& t : plan.tenants)
    for (const auto& n : t.networks)
      if (n.vni == vni) {
        if (tenant) *tenant = &t;
        return &n;
      }
  return nullptr;
}

// "tenant red network web" for a VNI of the plan, "no tenant network" for another.
std::string network_words(const plan::Plan& plan, uint32_t vni) {
  const plan::TenantPlan* t = nullptr;
  const auto* n = network_of_vni(plan, vni, &t);
  return n ? "tenant " + t->name + " network " + n->name : "no tenant network";
}

// The VNI of one of twin's bridges ("br10100"), 0 for another name.
uint32_t vni_of_bridge(const std::string& name) {
  if (name.size() < 3 || name.rfind("br", 0) != 0 ||
      name.find_first_not_of("0123456789", 2) != std::string::npos)
    return 0;
  return static_cast<uint32_t>(std::stoul(name.substr(2)));
}

// A tenant port whose bridge is not its network's: its server sits in another L2 segment (the
// leak, or a mistyped VNI), or in none.
void tenant_ports_misplaced(const plan::Plan& plan, const CauseFacts& facts,
                            std::vector<Cause>& out) {
  for (const auto& n : plan.nodes) {
    auto fi = facts.nodes.find(n.name);
    if (fi == facts.nodes.end()) continue;
    for (const auto& i : n.interfaces) {
      if (i.vni == 0) continue;
      const nlohmann::json* l = link_of(fi->second, i.name);
      if (!l) continue;
      const std::string want = "br" + std::to_string(i.vni);
      const std::string master = l->value("master", "");
      if (master == want) continue;
      const uint32_t in = vni_of_bridge(master);
      std::string port = n.name + ":" + i.name + " (" + i.peer_node + ", " +
                         network_words(plan, i.vni) + ", VNI " + std::to_string(i.vni) + ")";
      std::vector<std::string> concerned = {n.name, i.peer_node};
      std::string what;
      const auto* other = in ? network_of_vni(plan, in) : nullptr;
      if (master.empty()) {
        what = port + " is in no bridge: " + i.peer_node + " is cut off from its network";
      } else if (!other) {
        what = port + " is in " + master + ", not " + want +
               (in ? " (VNI " + std::to_string(in) + " is no tenant network's)" : "") + ": " +
               i.peer_node + " is cut off from its network";
      } else {
        what = port + " is in " + master + ", the bridge of VNI " + std::to_string(in) + " (" +
               network_words(plan, in) + "): " + i.peer_node +
               " shares that network's L2 segment";
        concerned.insert(concerned.end(), other->servers.begin(), other->servers.end());
      }
      out.push_back({"tenant-port-misplaced", what,
                     {n.name + ": `ip link` shows " + i.name +
                      (master.empty() ? " without master" : " master " + master)},
                     concerned});
    }
  }
}

// Fabric ports too small for the overlay: VXLAN adds 50 bytes to each server frame (RFC 7348
// §5) and twin's VTEPs set DF, so a full frame is dropped, not fragmented.
void underlay_mtu(const plan::Plan& plan, const CauseFacts& facts, std::vector<Cause>& out) {
  int frame = 0;
  for (const auto& n : plan.nodes)
    for (const auto& v : n.vnis) frame = std::max(frame, v.mtu);
  if (frame == 0) return;
  const int need = frame + topology::kVxlanOverhead;
  std::vector<std::string> small, concerned;
  for (const auto& n : plan.nodes) {
    auto fi = facts.nodes.find(n.name);
    if (fi == facts.nodes.end()) continue;
    bool any = false;
    for (const auto& i : n.interfaces) {
      if (!i.fabric || !i.up) continue;
      const nlohmann::json* l = link_of(fi->second, i.name);
      int mtu = l ? l->value("mtu", 0) : 0;
      if (mtu <= 0 || mtu >= need) continue;
      small.push_back(n.name + ":" + i.name + " " + std::to_string(mtu));
      any = true;
    }
    if (any) concerned.push_back(n.name);
  }
  if (small.empty()) return;
  for (const auto& t : plan.tenants)
    for (const auto& net : t.networks)
      concerned.insert(concerned.end(), net.servers.begin(), net.servers.end());
  out.push_back({"underlay-mtu",
                 "the underlay is too small for the overlay: fabric ports below " +
                     std::to_string(need) + " bytes (the servers' " + std::to_string(frame) +
                     "-byte frames plus VXLAN's " + std::to_string(topology::kVxlanOverhead) +
                     "), and VTEPs do not fragment",
                 {"`ip link` MTUs: " + join_some(small)},
                 concerned});
}

// A tenant network whose servers are not in one subnet (a server moved into it, and not
// readdressed): they share the L2 segment but nothing routes between their subnets.
void tenant_subnets(const plan::Plan& plan, std::vector<Cause>& out) {
  for (const auto& t : plan.tenants) {
    if (t.l3vni) continue;  // a routing tenant's gateway routes between subnets
    for (const auto& net : t.networks) {
      std::map<std::string, std::vector<std::string>> by_subnet;  // IPv4 subnet -> servers
      for (const auto& name : net.servers)
        if (const plan::Node* h = plan.find(name))
          for (const auto& i : h->interfaces)
            for (const auto& a : i.addresses)
              if (auto p = IpPrefix::parse(a); p && p->family == 4)
                by_subnet[p->network().str()].push_back(name);
      if (by_subnet.size() < 2) continue;
      std::vector<std::string> parts, evidence, nodes;
      for (const auto& [subnet, servers] : by_subnet) {
        parts.push_back(subnet + " (" + join_some(servers) + ")");
        for (const auto& sv : servers) {
          evidence.push_back(sv + " is in " + subnet);
          nodes.push_back(sv);
        }
      }
      out.push_back({"tenant-subnet-mismatch",
                     "tenant " + t.name + " network " + net.name + "'s servers are in " +
                         std::to_string(by_subnet.size()) + " subnets: " + join_some(parts) +
                         "; they share the L2 segment, but nothing routes between the subnets "
                         "(a server moved in without its address?)",
                     evidence, nodes});
    }
  }
}

}  // namespace

namespace {

// One producer per group of rules that read the same facts in one pass (the kernel's links,
// a node's policy): `meant` is the plan as the change means it (CauseFacts::intended).
using Producer = void (*)(const plan::Plan& plan, const plan::Plan& meant, const CauseFacts&,
                          std::vector<Cause>&);

struct RuleRow {
  CauseRule rule;
  Producer producer;
};

// Every rule, in report order; rows sharing a producer are consecutive, and the producer runs
// once. A dead daemon comes first: it explains whatever else fails at its node.
const std::vector<RuleRow>& rule_rows() {
  static const Producer daemons = [](const plan::Plan&, const plan::Plan&, const CauseFacts& f,
                                     std::vector<Cause>& o) { dead_daemons(f, o); };
  static const Producer duplicates = [](const plan::Plan& p, const plan::Plan&,
                                        const CauseFacts& f, std::vector<Cause>& o) {
    duplicate_addresses(p, f, o);
  };
  static const Producer bgp = [](const plan::Plan& p, const plan::Plan&, const CauseFacts& f,
                                 std::vector<Cause>& o) { bgp_notifications(p, f, o); };
  static const Producer policy = [](const plan::Plan& p, const plan::Plan&, const CauseFacts& f,
                                    std::vector<Cause>& o) { policies(p, f, o); };
  static const Producer kernel = [](const plan::Plan& p, const plan::Plan&, const CauseFacts& f,
                                    std::vector<Cause>& o) { kernel_state(p, f, o); };
  static const Producer ospf = [](const plan::Plan&, const plan::Plan&, const CauseFacts& f,
                                  std::vector<Cause>& o) { ospf_findings(f, o); };
  static const Producer auth = [](const plan::Plan& p, const plan::Plan&, const CauseFacts& f,
                                  std::vector<Cause>& o) { ospf_auth(p, f, o); };
  static const Producer statics = [](const plan::Plan& p, const plan::Plan&, const CauseFacts& f,
                                     std::vector<Cause>& o) { static_overrides(p, f, o); };
  static const Producer evpn = [](const plan::Plan& p, const plan::Plan&, const CauseFacts& f,
                                  std::vector<Cause>& o) { evpn_not_advertised(p, f, o); };
  // The tenant rules judge by the plan as the change means it (a declared move).
  static const Producer ports = [](const plan::Plan&, const plan::Plan& m, const CauseFacts& f,
                                   std::vector<Cause>& o) { tenant_ports_misplaced(m, f, o); };
  static const Producer overlay = [](const plan::Plan&, const plan::Plan& m, const CauseFacts& f,
                                     std::vector<Cause>& o) { underlay_mtu(m, f, o); };
  static const Producer subnets = [](const plan::Plan&, const plan::Plan& m, const CauseFacts&,
                                     std::vector<Cause>& o) { tenant_subnets(m, o); };
  static const std::vector<RuleRow> rows = {
      {{"daemon-dead", "a daemon (or VM) twin runs for a node is not running"}, daemons},
      {{"duplicate-address", "one address on two nodes (not one the plan puts on both)"},
       duplicates},
      {{"bgp-notification", "a session down whose last NOTIFICATION says why (RFC 4271 §6)"}, bgp},
      {{"remote-as-mismatch", "a session down where one end's remote-as is not the other's AS"},
       bgp},
      {{"policy-undefined", "a neighbor's route-map, prefix-list or filter-list not defined"},
       policy},
      {{"policy-denies-all", "a route-map or prefix-list on a neighbor with deny entries only"},
       policy},
      {{"policy-required", "RFC 8212 on, and an eBGP neighbor without route-maps in and out"},
       policy},
      {{"both-passive", "both ends of an expected session passive"}, policy},
      {{"unnumbered-ipv6", "IPv6 off, or no link-local address, on a BGP-unnumbered port"},
       kernel},
      {{"mtu-mismatch", "the two ends of a link at different MTUs"}, kernel},
      {{"forwarding-off", "IP forwarding off on a router"}, kernel},
      {{"lo-down", "a router's lo administratively down"}, kernel},
      {{"ospf-mismatch", "the OSPF family's own finding (area, timers, MTU, network type)"}, ospf},
      {{"ospf-auth", "the ends of an OSPF adjacency disagree on authentication"}, auth},
      {{"static-override", "a route of another origin inside a prefix the fabric routes"},
       statics},
      {{"evpn-not-advertised", "a VTEP without advertise-all-vni (nor a vni block)"}, evpn},
      {{"tenant-port-misplaced", "a tenant port whose bridge is not its network's"}, ports},
      {{"underlay-mtu", "fabric ports below the servers' largest frame plus VXLAN's 50 bytes"},
       overlay},
      {{"tenant-subnet-mismatch", "one tenant network's servers in two IPv4 subnets"}, subnets},
  };
  return rows;
}

}  // namespace

const std::vector<CauseRule>& cause_rules() {
  static const std::vector<CauseRule> rules = [] {
    std::vector<CauseRule> v;
    for (const auto& r : rule_rows()) v.push_back(r.rule);
    return v;
  }();
  return rules;
}

std::vector<Cause> likely_causes(const plan::Plan& plan, const CauseFacts& facts) {
  std::vector<Cause> out;
  const plan::Plan& meant = facts.intended ? *facts.intended : plan;
  const auto& rows = rule_rows();
  for (size_t i = 0; i < rows.size();) {
    size_t end = i;
    while (end < rows.size() && rows[end].producer == rows[i].producer) ++end;
    const size_t before = out.size();
    rows[i].producer(plan, meant, facts, out);
    // A cause carries the name of a row of its producer: a rule missing from the list is a
    // programming error, caught by any unit test that makes it fire.
    for (size_t k = before; k < out.size(); ++k) {
      bool listed = false;
      for (size_t r = i; r < end; ++r) listed |= out[k].rule == rows[r].rule.name;
      if (!listed)
        throw std::logic_error("likely cause '" + out[k].rule + "' is not in cause_rules()");
    }
    i = end;
  }
  return out;
}

void attach_causes(Verdict& v, const std::vector<Cause>& causes) {
  if (v.reasons.empty()) return;
  for (const auto& c : causes) {
    bool placed = false;
    for (auto& r : v.reasons) {
      bool named = false;
      for (const auto& n : c.nodes) {
        named |= names_node(r.message, n);
        for (const auto& s : r.subjects) named |= names_node(s, n);
        for (const auto& s : r.context) named |= names_node(s, n);
      }
      if (named) {
        r.causes.push_back(c);
        placed = true;
      }
    }
    if (!placed) v.reasons.front().causes.push_back(c);
  }
}

std::vector<std::string> fact_sysctl_keys(const plan::Node& node) {
  std::vector<std::string> keys = {"net.ipv4.conf.all.forwarding", "net.ipv6.conf.all.forwarding"};
  for (const auto& i : node.interfaces)
    if (i.fabric) keys.push_back("net.ipv6.conf." + i.name + ".disable_ipv6");
  return keys;
}

CauseFacts gather_cause_facts(const plan::Plan& plan, validate::LabProbe& probe,
                              const drivers::DriverLookup& drivers, proc::ProcessRunner& runner,
                              const std::map<std::string, std::string>& configs, int parallel) {
  std::vector<const plan::Node*> nodes;
  for (const auto& n : plan.nodes) nodes.push_back(&n);
  std::vector<NodeFacts> got(nodes.size());
  parallel_for(nodes.size(), parallel, [&](size_t i) {
    const plan::Node& n = *nodes[i];
    NodeFacts& f = got[i];
    if (auto a = probe.ip_json(n, {"addr", "show"})) f.addresses = *a;
    const auto& d = drivers(n);
    if (!d.manages_frr(n)) return;
    if (plan::has_bgp_instance(n))
      if (auto j = probe.frr_json(n, "bgpd", "show bgp neighbors json")) f.bgp_neighbors = *j;
    for (const auto& k : fact_sysctl_keys(n))
      if (auto v = d.read_sysctl(n, k)) f.sysctls[k] = *v;
    if (auto c = configs.find(n.name); c != configs.end())
      f.config = c->second;
    else if (auto rc = d.running_config(n, runner))
      f.config = *rc;
  });
  CauseFacts facts;
  for (size_t i = 0; i < nodes.size(); ++i) facts.nodes[nodes[i]->name] = std::move(got[i]);
  return facts;
}

std::vector<Cause> explain_phase(const plan::Plan& plan, const Phase& phase,
                                 const drivers::DriverLookup& drivers, proc::ProcessRunner& runner,
                                 const std::map<std::string, std::string>& configs, int parallel,
                                 const plan::Plan* intended) {
  validate::SystemProbe probe(runner, drivers);
  CauseFacts facts = gather_cause_facts(plan, probe, drivers, runner, configs, parallel);
  facts.after = &phase.report;
  facts.state = &phase.state;
  facts.intended = intended;
  return likely_causes(plan, facts);
}

}  // namespace twin::replay
