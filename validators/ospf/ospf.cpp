#include "validators/ospf/ospf.hpp"

#include <algorithm>
#include <set>

#include "twin/core/diagnostics.hpp"
#include "twin/core/ip.hpp"
#include "twin/topology/frr_conf.hpp"

namespace twin::validators {

using validate::make_result;
using validate::Status;
using validate::TestResult;

namespace {

const char* kFamily = "ospf";

// The sources, and the key FRR 8.4 always prints in each when it has the state to show: an
// answer without it (`{}` from an ospfd with no `router ospf`, null when it printed nothing)
// holds no data. "" for a source keyed by interface (ospf6d) or prefix (zebra), which is then
// no data when it is empty: every router has interfaces, and connected routes for their
// addresses.
struct Source {
  const char* command;
  const char* key;
};
constexpr Source kNeighbors{"show ip ospf neighbor json", "neighbors"};
constexpr Source kInterfaces{"show ip ospf interface json", "interfaces"};
constexpr Source kInstance{"show ip ospf json", "routerId"};
constexpr Source kRoutes{"show ip route json", ""};
constexpr Source kNeighbors6{"show ipv6 ospf6 neighbor json", "neighbors"};
constexpr Source kInterfaces6{"show ipv6 ospf6 interface json", ""};

bool has_data(const Result<nlohmann::json>& r, const Source& src) {
  return r && r->is_object() && (*src.key ? r->contains(src.key) : !r->empty());
}

// Why `r`, `node`'s answer to `src`, holds no data; "" when it does.
std::string no_data(const std::string& node, const Result<nlohmann::json>& r, const Source& src) {
  if (has_data(r, src)) return "";
  if (!r) return validate::source_failed(node, src.command, r.error().message);
  if (r->is_null()) return node + ": nothing printed for `" + src.command + "`";
  std::string got = r->dump();
  if (got.size() > 40) got = got.substr(0, 37) + "...";
  return node + ": `" + src.command + "` returned " + got +
         (*src.key ? " (no \"" + std::string(src.key) + "\")" : "");
}

// The JSON object a probe returned, or nullptr when it holds no data.
const nlohmann::json* object_of(const Result<nlohmann::json>& r, const Source& src) {
  return has_data(r, src) ? &*r : nullptr;
}

const nlohmann::json* interface_json(const OspfObservation* o, const std::string& ifname,
                                    int version) {
  if (!o) return nullptr;
  const auto* j = version == 3 ? object_of(o->interfaces6, kInterfaces6)
                               : object_of(o->interfaces, kInterfaces);
  if (j && version == 3) {  // keyed by interface at the top
    auto it = j->find(ifname);
    return it == j->end() || !it->is_object() || !it->value("attachedToArea", false) ? nullptr
                                                                                   : &*it;
  }
  if (!j || !j->contains("interfaces") || !(*j)["interfaces"].is_object()) return nullptr;
  const auto& all = (*j)["interfaces"];
  auto it = all.find(ifname);
  return it == all.end() || !it->is_object() ? nullptr : &*it;
}

std::string router_id_of(const OspfObservation* o) {
  const auto* j = o ? object_of(o->instance, kInstance) : nullptr;
  return j ? j->value("routerId", "") : "";
}

// The neighbor FRR has on `ifname`, the most advanced state when it lists several (a duplicate
// router-id shows twice under one key).
using Neighbor = validate::OspfNeighbor;
// On a LAN segment, the one of router-id `rid` ("" = any).
std::optional<Neighbor> neighbor_on(const OspfObservation* o, const std::string& ifname,
                                    int version, const std::string& rid = "") {
  const auto* j = !o             ? nullptr
                  : version == 3 ? object_of(o->neighbors6, kNeighbors6)
                                 : object_of(o->neighbors, kNeighbors);
  return j ? validate::find_ospf_neighbor(*j, ifname, rid) : std::nullopt;
}

// This router's role on a broadcast network (RFC 2328 §9.1), "DR", "Backup", "DROther" or ""
// when FRR did not say: its interface's `state` (v2) or `ospf6InterfaceState` (v3).
std::string own_role(const nlohmann::json* iface) {
  return iface ? validate::ospf_role(iface->value("state", iface->value("ospf6InterfaceState", "")))
               : "";
}

// The router-ids of the neighbors FRR lists on `ifname` (v2: keyed by id; v3: `neighborId`),
// without 0.0.0.0 (a neighbor not yet identified).
void collect_neighbor_ids(const nlohmann::json& j, const std::string& ifname,
                          std::set<std::string>& out) {
  const auto all = j.find("neighbors");
  if (all == j.end()) return;
  if (all->is_array()) {
    for (const auto& e : *all)
      if (e.is_object() && e.value("interfaceName", "") == ifname &&
          e.value("neighborId", "0.0.0.0") != "0.0.0.0")
        out.insert(e.value("neighborId", ""));
    return;
  }
  if (!all->is_object()) return;
  for (const auto& [rid, list] : all->items())
    if (list.is_array())
      for (const auto& e : list) {
        const std::string iface = e.is_object() ? e.value("ifaceName", "") : "";
        if (iface.substr(0, iface.find(':')) == ifname) out.insert(rid);
      }
}

// The designated router this router's interface names (RFC 2328 §9.4), "" before one is
// elected. FRR 8.4: v2 `drId`, v3 `dr`; "0.0.0.0" means none.
std::string designated_router(const nlohmann::json& iface) {
  for (const char* k : {"drId", "dr"})
    if (auto it = iface.find(k); it != iface.end() && it->is_string()) {
      std::string v = it->get<std::string>();
      return v == "0.0.0.0" ? "" : v;
    }
  return "";
}
// The router-id `node` runs OSPF `version` with: its config's, else (v2) what it reports.
std::string ospf_rid(const plan::Plan& plan, const std::string& node, const OspfObservation* o,
                     int version) {
  const plan::Node* n = plan.find(node);
  if (version == 3) return n ? n->ospf6_router_id : "";
  if (n && !n->ospf_router_id.empty()) return n->ospf_router_id;
  return router_id_of(o);
}

// The segment (bridge node) adjacency `a` runs on, or nullptr on a point-to-point link.
const plan::Node* segment_of_adjacency(const plan::Plan& plan, const plan::ExpectedAdjacency& a) {
  const plan::Node* n = plan.find(a.node);
  const plan::Interface* i = n ? plan::find_interface(*n, a.interface) : nullptr;
  return i ? plan::segment_of(plan, *i) : nullptr;
}

// What both ends must agree on, as "name value" pairs in a fixed order.
struct Params {
  std::string area, network_type;
  long hello_ms = -1, dead_s = -1, mtu = -1;
  bool passive = false;
};
Params params_of(const nlohmann::json& i, int version) {
  Params p;
  if (version == 3) {
    p.area = i.value("areaId", "");
    // FRR 8.4 prints `operatingAsType` for a configured network type, else `type`
    // ("BROADCAST" on a LAN segment).
    p.network_type = i.value("operatingAsType", i.value("type", ""));
    p.hello_ms = i.value("timerIntervalsConfigHello", -1L) * 1000;
    p.dead_s = i.value("timerIntervalsConfigDead", -1L);
    p.mtu = i.value("interfaceMtu", -1L);
    return p;
  }
  p.area = i.value("area", "");
  p.network_type = i.value("networkType", "");
  p.hello_ms = i.value("timerMsecs", -1L);
  p.dead_s = i.value("timerDeadSecs", -1L);
  p.mtu = i.value("mtuBytes", -1L);
  p.passive = i.value("timerPassiveIface", false);
  return p;
}

// "r1:eth1 has no area, hello" for the fields `p` lacks (FRR 8.4 prints each of them for every
// OSPF interface); "" when it has them all.
std::string missing_fields(const Params& p, const std::string& at) {
  std::vector<std::string> none;
  if (p.area.empty()) none.push_back("area");
  if (p.hello_ms < 0) none.push_back("hello");
  if (p.dead_s < 0) none.push_back("dead interval");
  if (p.network_type.empty()) none.push_back("network type");
  if (p.mtu < 0) none.push_back("MTU");
  std::string out;
  for (const auto& f : none) out += (out.empty() ? "" : ", ") + f;
  return out.empty() ? "" : at + " has no " + out;
}

// Mismatches between this end (`here`, on node:ifname) and its peer's end, worded for a
// network engineer: "area 0.0.0.0 here, 0.0.0.1 on r2:eth1".
std::vector<std::string> mismatches(const Params& here, const Params& there,
                                    const std::string& peer_at) {
  std::vector<std::string> out;
  auto differ = [&](const std::string& what, const std::string& a, const std::string& b) {
    if (a != b) out.push_back(what + " " + a + " here, " + b + " on " + peer_at);
  };
  differ("area", here.area, there.area);
  differ("hello", std::to_string(here.hello_ms) + " ms", std::to_string(there.hello_ms) + " ms");
  differ("dead", std::to_string(here.dead_s) + " s", std::to_string(there.dead_s) + " s");
  differ("network type", here.network_type, there.network_type);
  differ("MTU", std::to_string(here.mtu), std::to_string(there.mtu));
  return out;
}

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

// Why an adjacency is not Full, from what both ends printed.
// `there_why`: why the peer's interfaces hold no data ("" when they do).
std::string diagnose(const plan::ExpectedAdjacency& a, const nlohmann::json* here_if,
                     const nlohmann::json* there_if, const std::string& there_why,
                     const std::optional<Neighbor>& nbr, const OspfObservation* here,
                     const OspfObservation* there, const std::string& auth_why) {
  const std::string peer_at = a.peer_node + ":" + a.peer_interface;
  if (!here_if) return "OSPF does not run on " + a.interface;
  std::vector<std::string> why;
  Params p = params_of(*here_if, a.version);
  if (p.passive) why.push_back(a.interface + " is passive");
  if (!there_why.empty()) {
    why.push_back("the peer's end is unknown (" + there_why + ")");
  } else if (!there_if) {
    why.push_back("OSPF does not run on " + peer_at);
  } else {
    Params q = params_of(*there_if, a.version);
    if (q.passive) why.push_back(peer_at + " is passive");
    auto m = mismatches(p, q, peer_at);
    // The MTU matters only once database description packets flow (RFC 2328 §10.6): in
    // ExStart/Exchange it is the cause, otherwise it is reported among the others.
    if (nbr && (nbr->state.rfind("ExStart", 0) == 0 || nbr->state.rfind("Exchange", 0) == 0) &&
        p.mtu != q.mtu)
      return "stuck in " + nbr->state.substr(0, nbr->state.find('/')) + ": MTU " +
             std::to_string(p.mtu) + " here, " + std::to_string(q.mtu) + " on " + peer_at;
    why.insert(why.end(), m.begin(), m.end());
  }
  if (!auth_why.empty()) why.push_back(auth_why);
  std::string rid = router_id_of(here), peer_rid = router_id_of(there);
  if (a.version == 2 && !rid.empty() && rid == peer_rid)
    why.push_back("duplicate router-id " + rid);
  if (!why.empty()) return join(why, "; ");
  if (!nbr) return "no OSPF neighbor on " + a.interface;
  return "neighbor " + nbr->router_id + " is " + nbr->state;
}

// Why `node`'s interfaces of `version` hold no data ("" when they do).
std::string interfaces_missing(const OspfObservation* o, const std::string& node, int version) {
  if (!o) return node + ": OSPF not probed";
  return version == 3 ? no_data(node, o->interfaces6, kInterfaces6)
                      : no_data(node, o->interfaces, kInterfaces);
}

bool installed(const nlohmann::json* routes, const std::string& prefix) {
  if (!routes || !routes->contains(prefix) || !(*routes)[prefix].is_array()) return false;
  for (const auto& r : (*routes)[prefix])
    if (r.value("installed", false)) return true;
  return false;
}

const OspfObservation* find(const std::map<std::string, OspfObservation>& m,
                            const std::string& node) {
  auto it = m.find(node);
  return it == m.end() ? nullptr : &it->second;
}

}  // namespace

bool runs_ospf(const plan::Node& n, int version) {
  const char* daemon = version == 3 ? "ospf6d" : "ospfd";
  return n.kind == topology::NodeKind::kFrr &&
         std::find(n.daemons.begin(), n.daemons.end(), daemon) != n.daemons.end() &&
         std::any_of(n.ospf_interfaces.begin(), n.ospf_interfaces.end(),
                     [&](const plan::OspfInterface& i) { return i.version == version; });
}

namespace {

// Each OSPF router's running configuration as FRR reads it (nodes whose config was not read
// are absent).
std::map<std::string, topology::FrrConf> configs_of(
    const std::map<std::string, OspfObservation>& observed) {
  std::map<std::string, topology::FrrConf> out;
  for (const auto& [node, o] : observed)
    if (o.config) out.emplace(node, topology::parse_frr_conf(*o.config, node + " running-config"));
  return out;
}

// The router-id a node runs now and the one its configuration names ("" when unset or unread).
struct RouterIds {
  std::string running, configured;
  // What it will run after ospfd's next start: the configured one, else the running one.
  [[nodiscard]] const std::string& effective() const {
    return configured.empty() ? running : configured;
  }
  [[nodiscard]] bool latent() const { return !configured.empty() && configured != running; }
};

}  // namespace

std::vector<Note> ospf_notes(const plan::Plan& plan,
                             const std::map<std::string, OspfObservation>& observed) {
  const auto confs = configs_of(observed);
  std::vector<Note> out;
  for (const auto& n : plan.nodes) {
    if (!runs_ospf(n)) continue;
    auto c = confs.find(n.name);
    const std::string running = router_id_of(find(observed, n.name));
    if (c == confs.end() || running.empty() || c->second.ospf_router_id.empty() ||
        c->second.ospf_router_id == running)
      continue;
    add_note(out, {"warning", n.name, "",
                   "runs OSPF router-id " + running + " but its config says " +
                       c->second.ospf_router_id +
                       ": FRR takes the new id only when ospfd restarts (`clear ip ospf "
                       "process`), so this validation judges the old one; --restart-check "
                       "judges the network with the new"});
  }
  return out;
}

std::vector<TestResult> evaluate_ospf(const plan::Plan& plan,
                                      const std::map<std::string, OspfObservation>& observed) {
  std::vector<TestResult> out;
  const auto confs = configs_of(observed);
  // Why the two ends of `a` cannot authenticate each other ("" when they can, or when either
  // end's configuration is unread).
  auto auth_why = [&](const plan::ExpectedAdjacency& a) -> std::string {
    if (a.version != 2) return "";
    auto h = confs.find(a.node), t = confs.find(a.peer_node);
    if (h == confs.end() || t == confs.end()) return "";
    return topology::ospf_auth_mismatch(h->second, a.interface, t->second, a.peer_interface, a.area,
                                        a.peer_node + ":" + a.peer_interface);
  };

  // Tests 0 and 1, per expected adjacency end.
  for (const auto& a : plan.adjacencies) {
    const bool v3 = a.version == 3;
    const auto* here = find(observed, a.node);
    const auto* there = find(observed, a.peer_node);
    const std::string subject = v3 ? a.interface + " (OSPFv3)" : a.interface;
    const std::string peer_at = a.peer_node + ":" + a.peer_interface;
    std::string why = !here ? a.node + ": OSPF not probed"
                      : v3  ? no_data(a.node, here->neighbors6, kNeighbors6)
                            : no_data(a.node, here->neighbors, kNeighbors);
    if (why.empty()) why = interfaces_missing(here, a.node, a.version);
    if (!why.empty()) {
      for (int t : {0, 1})
        out.push_back(make_result(kFamily, t, t == 0 ? "adjacency-full" : "interfaces-agree",
                                  Status::kError, a.node, subject,
                                  t == 0 ? "Full with " + a.peer_node : "agree with " + peer_at,
                                  "no data", "cannot read OSPF state: " + why));
      continue;
    }
    const auto* here_if = interface_json(here, a.interface, a.version);
    const auto* there_if = interface_json(there, a.peer_interface, a.version);
    const std::string there_why = interfaces_missing(there, a.peer_node, a.version);
    const plan::Node* seg = segment_of_adjacency(plan, a);
    const std::string peer_rid = seg ? ospf_rid(plan, a.peer_node, there, a.version) : "";
    auto nbr = neighbor_on(here, a.interface, a.version, peer_rid);
    bool is_full = nbr && validate::ospf_full(nbr->state);
    // On a segment two DROthers stay 2-Way (RFC 2328 §10.4: only the DR and BDR become
    // adjacent with every router): that is the healthy state between them.
    // This router's role: v3 says it with the neighbor, v2 on the interface.
    const std::string my_role = nbr && !nbr->my_role.empty() ? nbr->my_role : own_role(here_if);
    const bool two_way_ok = seg && nbr && !is_full && validate::ospf_settled(*nbr, true, my_role);
    const std::string auth = auth_why(a);
    const std::string want =
        seg ? "Full with " + a.peer_node + " (2-Way if both DROther)" : "Full with " + a.peer_node;
    out.push_back(make_result(
        kFamily, 0, "adjacency-full", is_full || two_way_ok ? Status::kPassed : Status::kFailed,
        a.node, subject, want, nbr ? nbr->state : "no neighbor",
        is_full      ? "adjacency with " + a.peer_node + " on " + a.interface + " is Full"
        : two_way_ok ? a.peer_node + " on segment " + seg->name +
                           " is 2-Way: both routers are DROthers, which form no adjacency"
                     : "adjacency with " + a.peer_node + " on " + a.interface + " is not Full: " +
                           diagnose(a, here_if, there_if, there_why, nbr, here, there, auth)));
    const size_t full_at = out.size() - 1;

    if (!there_why.empty()) {
      out.push_back(make_result(
          kFamily, 1, "interfaces-agree", Status::kError, a.node, subject, "agree with " + peer_at,
          "no data", "cannot read the OSPF interfaces of " + a.peer_node + ": " + there_why));
      continue;
    }
    if (!here_if || !there_if) {
      std::string missing = !here_if ? a.node + ":" + a.interface : peer_at;
      out.push_back(make_result(kFamily, 1, "interfaces-agree", Status::kFailed, a.node, subject,
                                "OSPF on both ends", "not on " + missing,
                                "OSPF does not run on " + missing));
      // Configured so: no adjacency can form until a configuration changes.
      out.back().cannot_converge = "OSPF does not run on " + missing;
      if (out[full_at].status == Status::kFailed)
        out[full_at].cannot_converge = out.back().cannot_converge;
      continue;
    }
    Params p = params_of(*here_if, a.version), q = params_of(*there_if, a.version);
    // A field neither end printed would compare equal: missing, it is no data, not agreement.
    std::string lacking = missing_fields(p, a.node + ":" + a.interface);
    if (lacking.empty()) lacking = missing_fields(q, peer_at);
    if (!lacking.empty()) {
      out.push_back(make_result(kFamily, 1, "interfaces-agree", Status::kError, a.node, subject,
                                "agree with " + peer_at, "no data",
                                "cannot compare the ends: " + lacking + " in `" +
                                    (v3 ? kInterfaces6 : kInterfaces).command + "`"));
      continue;
    }
    auto m = mismatches(p, q, peer_at);
    if (p.passive) m.insert(m.begin(), a.interface + " is passive");
    if (q.passive) m.insert(m.begin(), peer_at + " is passive");
    if (!auth.empty()) m.push_back(auth);
    std::string summary = "area " + p.area + ", hello " + std::to_string(p.hello_ms) +
                          " ms, dead " + std::to_string(p.dead_s) + " s, " + p.network_type +
                          ", MTU " + std::to_string(p.mtu);
    if (a.version == 2 && (!confs.count(a.node) || !confs.count(a.peer_node)))
      summary += " (authentication not compared: a running config was not read)";
    out.push_back(make_result(kFamily, 1, "interfaces-agree",
                              m.empty() ? Status::kPassed : Status::kFailed, a.node, subject,
                              "agree with " + peer_at, m.empty() ? summary : join(m, "; "),
                              m.empty() ? "both ends: " + summary
                                        : "ends disagree: " + join(m, "; ")));
    if (!m.empty()) {
      // What both ends are configured with: no amount of waiting makes them agree (RFC 2328
      // §10.5), so the gate need not hold a dead interval to know it.
      out.back().cannot_converge = "OSPF ends disagree: " + join(m, "; ");
      if (out[full_at].status == Status::kFailed)
        out[full_at].cannot_converge = out.back().cannot_converge;
    }
  }

  // Test 4: one designated router per segment and OSPF version, named alike by every member
  // that runs OSPF there, and one of them (RFC 2328 §9.4): two DRs mean the segment is split
  // (members that cannot hear each other), none means no election finished.
  std::map<std::pair<const plan::Node*, int>, std::vector<const plan::ExpectedAdjacency*>> lans;
  for (const auto& a : plan.adjacencies)
    if (const plan::Node* seg = segment_of_adjacency(plan, a)) lans[{seg, a.version}].push_back(&a);
  for (const auto& [key, adjs] : lans) {
    const auto& [seg, version] = key;
    std::vector<std::pair<std::string, std::string>> members;  // node, interface; plan order
    std::set<std::string> seen;
    for (const auto* a : adjs)
      if (seen.insert(a->node).second) members.push_back({a->node, a->interface});
    const std::string subject = std::string(version == 3 ? "OSPFv3 " : "") + "DR on " + seg->name;
    std::string seen_text, why;
    std::set<std::string> drs, rids;
    for (const auto& [node, ifname] : members) {
      const auto* o = find(observed, node);
      std::string w = interfaces_missing(o, node, version);
      const auto* iface = w.empty() ? interface_json(o, ifname, version) : nullptr;
      if (w.empty() && !iface) w = "OSPF does not run on " + node + ":" + ifname;
      if (!w.empty()) {
        why += (why.empty() ? "" : "; ") + w;
        continue;
      }
      std::string dr = designated_router(*iface);
      rids.insert(ospf_rid(plan, node, o, version));
      // The members' router-ids as they see each other (v3's interface JSON names none, and
      // a config need not set one).
      if (const auto* nj = version == 3 ? object_of(o->neighbors6, kNeighbors6)
                                        : object_of(o->neighbors, kNeighbors))
        collect_neighbor_ids(*nj, ifname, rids);
      drs.insert(dr);
      seen_text += (seen_text.empty() ? "" : " ") + node + "=" + (dr.empty() ? "none" : dr);
    }
    const std::string want = "one DR, a member, named by every member";
    if (!why.empty()) {
      out.push_back(make_result(kFamily, 4, "dr-agreed", Status::kError, seg->name, subject, want,
                                "no data", "cannot read a member's OSPF interface: " + why));
      continue;
    }
    const std::string dr = drs.size() == 1 ? *drs.begin() : "";
    const bool ok = !dr.empty() && rids.count(dr);
    std::string msg = ok               ? "every member names " + dr + " the DR"
                      : drs.size() > 1 ? "members name different DRs (" + seen_text +
                                             "): the segment does not carry every member's hellos"
                      : dr.empty() ? "no DR elected yet (" + seen_text + ")"
                                   : "DR " + dr + " is no member's router-id";
    out.push_back(make_result(kFamily, 4, "dr-agreed", ok ? Status::kPassed : Status::kFailed,
                              seg->name, subject, want, seen_text, msg));
  }

  // Test 2: router-ids, as each router will run after its next start: the configured one where
  // its running config names another (a latent duplicate is one).
  std::map<std::string, std::vector<std::string>> by_rid;
  std::map<std::string, RouterIds> ids;
  for (const auto& n : plan.nodes) {
    if (!runs_ospf(n)) continue;
    const auto* o = find(observed, n.name);
    std::string rid = router_id_of(o);
    if (auto c = confs.find(n.name); c != confs.end() && !rid.empty())
      ids[n.name] = {rid, c->second.ospf_router_id};
    if (rid.empty()) {
      std::string why = o ? no_data(n.name, o->instance, kInstance) : n.name + ": OSPF not probed";
      if (why.empty()) why = n.name + ": no routerId in `" + kInstance.command + "`";
      out.push_back(make_result(kFamily, 2, "router-id-unique", Status::kError, n.name, "",
                                "a router-id", "no data", "cannot read the router-id: " + why));
      continue;
    }
    const RouterIds& id = ids[n.name];
    by_rid[id.effective().empty() ? rid : id.effective()].push_back(n.name);
    // Against the configuration it was planned with, where its running one is not read (a
    // latent id is a note, ospf_notes).
    if (!confs.count(n.name) && !n.ospf_router_id.empty() && rid != n.ospf_router_id)
      out.push_back(make_result(kFamily, 2, "router-id-unique", Status::kFailed, n.name, "",
                                n.ospf_router_id, rid,
                                "router-id " + rid + " differs from the configured " +
                                    n.ospf_router_id));
  }
  for (const auto& [rid, nodes] : by_rid)
    for (const auto& node : nodes) {
      std::vector<std::string> others;
      for (const auto& o : nodes)
        if (o != node) others.push_back(o);
      bool dup = !others.empty();
      // Who takes the shared id only at a restart: say so (the network runs fine until then).
      std::vector<std::string> waiting;
      for (const auto& o : nodes)
        if (ids[o].latent()) waiting.push_back(o + " (runs " + ids[o].running + ")");
      std::string msg =
          dup ? "OSPF router-id " + rid + " is shared with " + join_names(others) +
                    (waiting.empty() ? std::string()
                                     : " once ospfd restarts on " + join_names(waiting) +
                                           ": its config names it, FRR takes it "
                                           "at the next start")
              : "";
      out.push_back(make_result(kFamily, 2, "router-id-unique",
                                dup ? Status::kFailed : Status::kPassed, node, "", "unique",
                                rid + (dup ? " (also " + join_names(others) + ")" : ""), msg));
      if (dup) out.back().cannot_converge = msg;
    }

  // Test 3: every OSPF network in the FIB of every OSPF router sharing an area with it. The
  // networks are what the routers report running OSPF on, so a network the config forgot is
  // not expected; what the topology declares stays with the reachability family.
  struct Net {
    std::string prefix, owner;
    std::set<std::string> areas;
  };
  std::map<std::string, Net> nets;  // prefix -> owner (first router in plan order)
  std::map<std::string, std::set<std::string>> areas_of;
  for (const auto& n : plan.nodes) {
    if (!runs_ospf(n)) continue;
    const auto* o = find(observed, n.name);
    const auto* j = o ? object_of(o->interfaces, kInterfaces) : nullptr;
    if (!j || !(*j)["interfaces"].is_object()) {
      // Neither the networks it runs OSPF on (which every router of its areas must install)
      // nor its areas (whose networks it must install) are known: one error says so, rather
      // than its networks and its own FIB dropping out of the test.
      std::string why = interfaces_missing(o, n.name, 2);
      if (why.empty()) why = n.name + ": `" + kInterfaces.command + "` has no interface list";
      out.push_back(make_result(
          kFamily, 3, "networks-installed", Status::kError, n.name, "",
          "its OSPF networks installed, and its areas' networks in its FIB", "no data",
          "cannot tell which networks " + n.name + " runs OSPF on, or in which areas: " + why));
      continue;
    }
    for (const auto& [ifname, i] : (*j)["interfaces"].items()) {
      if (!i.is_object() || !i.value("ospfEnabled", true)) continue;
      auto pfx = IpPrefix::parse(i.value("ipAddress", "") + "/" +
                                 std::to_string(i.value("ipAddressPrefixlen", 0)));
      std::string area = i.value("area", "");
      if (!pfx || area.empty()) continue;
      areas_of[n.name].insert(area);
      auto& net = nets[pfx->network().str()];
      if (net.owner.empty()) {
        net.prefix = pfx->network().str();
        net.owner = n.name;
      }
      net.areas.insert(area);
    }
  }
  for (const auto& n : plan.nodes) {
    if (!runs_ospf(n)) continue;
    const auto* o = find(observed, n.name);
    const auto* routes = o ? object_of(o->routes, kRoutes) : nullptr;
    const std::string routes_why = routes ? ""
                                   : o    ? no_data(n.name, o->routes, kRoutes)
                                          : n.name + ": OSPF not probed";
    for (const auto& [prefix, net] : nets) {
      bool shares = std::any_of(net.areas.begin(), net.areas.end(),
                                [&](const std::string& a) { return areas_of[n.name].count(a); });
      if (!shares) continue;
      if (!routes) {
        out.push_back(make_result(kFamily, 3, "networks-installed", Status::kError, n.name, prefix,
                                  "installed", "no data",
                                  "cannot read the routing table: " + routes_why));
        continue;
      }
      bool ok = installed(routes, prefix);
      out.push_back(make_result(kFamily, 3, "networks-installed",
                                ok ? Status::kPassed : Status::kFailed, n.name, prefix,
                                "installed (OSPF network of " + net.owner + ")",
                                ok ? "installed" : "missing",
                                ok ? "" : prefix + " of " + net.owner + " is not in the FIB"));
    }
  }
  return out;
}

std::vector<TestResult> OspfValidator::run(validate::Context& ctx) {
  std::vector<const plan::Node*> nodes;
  for (const auto& n : ctx.plan.nodes)
    if (runs_ospf(n, 2) || runs_ospf(n, 3)) nodes.push_back(&n);
  std::vector<OspfObservation> got(nodes.size());
  validate::parallel_for(nodes.size(), ctx.parallel, [&](size_t i) {
    auto& o = got[i];
    if (runs_ospf(*nodes[i], 2)) {
      o.neighbors = ctx.probe.frr_json(*nodes[i], "ospfd", "show ip ospf neighbor json");
      o.interfaces = ctx.probe.frr_json(*nodes[i], "ospfd", "show ip ospf interface json");
      o.instance = ctx.probe.frr_json(*nodes[i], "ospfd", "show ip ospf json");
      o.routes = ctx.probe.frr_json(*nodes[i], "zebra", "show ip route json");
      o.config = ctx.probe.running_config(*nodes[i]);
    }
    if (runs_ospf(*nodes[i], 3)) {
      o.neighbors6 = ctx.probe.frr_json(*nodes[i], "ospf6d", "show ipv6 ospf6 neighbor json");
      o.interfaces6 = ctx.probe.frr_json(*nodes[i], "ospf6d", "show ipv6 ospf6 interface json");
    }
  });
  std::map<std::string, OspfObservation> observed;
  for (size_t i = 0; i < nodes.size(); ++i) observed.emplace(nodes[i]->name, std::move(got[i]));
  notes_ = ospf_notes(ctx.plan, observed);
  return evaluate_ospf(ctx.plan, observed);
}

}  // namespace twin::validators
