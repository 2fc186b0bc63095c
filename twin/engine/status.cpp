#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "twin/core/util.hpp"
#include "twin/drivers/registry.hpp"
#include "twin/engine/lab.hpp"
#include "twin/validate/validator.hpp"

namespace fs = std::filesystem;

namespace twin::engine {

std::string SessionCount::text() const {
  std::string t;
  if (expected > 0 || adjacencies == 0)
    t = "BGP " + std::to_string(established) + "/" + std::to_string(expected) +
        " sessions Established";
  if (adjacencies > 0)
    t += (t.empty() ? "" : ", ") + std::string("OSPF ") + std::to_string(full) + "/" +
         std::to_string(adjacencies) + " adjacencies Full" +
         (two_way ? " (" + std::to_string(two_way) + " of them 2-Way between DROthers)" : "");
  return t;
}

std::string UpSummary::convergence_text() const {
  SessionCount c;
  c.expected = sessions_expected;
  c.established = sessions_established;
  c.adjacencies = adjacencies_expected;
  c.full = adjacencies_full;
  c.two_way = adjacencies_two_way;
  return c.text();
}

SessionCount count_sessions(const plan::Plan& plan, int parallel,
                            const drivers::DriverLookup& drivers) {
  SessionCount c;
  c.expected = static_cast<int>(plan.sessions.size());
  c.adjacencies = static_cast<int>(plan.adjacencies.size());
  // Each node's share, indexed once: a poll then asks each node only about its own. The index
  // is const once built, so the threads below can only read it (a map's operator[] there
  // inserted from several threads at once and crashed the gate).
  struct Share {
    std::vector<const plan::ExpectedSession*> sessions;
    std::vector<const plan::ExpectedAdjacency*> adjacencies;
  };
  const auto shares = [&] {
    std::map<std::string, Share> m;
    for (const auto& s : plan.sessions) m[s.node].sessions.push_back(&s);
    for (const auto& a : plan.adjacencies) m[a.node].adjacencies.push_back(&a);
    return m;
  }();
  std::vector<const plan::Node*> nodes;
  for (const auto& n : plan.nodes)
    if (shares.count(n.name)) nodes.push_back(&n);
  struct PerNode {
    int established = 0, full = 0, two_way = 0;
    std::vector<std::string> down, waiting;
    std::vector<SessionState> sessions;
  };
  std::vector<PerNode> per(nodes.size());
  parallel_for(nodes.size(), parallel, [&](size_t i) {
    const auto& n = *nodes[i];
    const auto& driver = drivers(n);
    auto& p = per[i];
    const Share& mine = shares.at(n.name);
    const auto& my_sessions = mine.sessions;
    Result<nlohmann::json> bgp = ok(nlohmann::json());
    if (!my_sessions.empty()) bgp = driver.frr_json(n, "bgpd", "show bgp summary json", nullptr);
    for (const auto* sp : my_sessions) {
      const auto& s = *sp;
      const nlohmann::json* peer = bgp ? validate::find_bgp_peer(*bgp, s.key()) : nullptr;
      std::string state = !bgp   ? "no answer from bgpd"
                          : peer ? peer->value("state", "unknown")
                                 : "not configured";
      p.sessions.push_back({"bgp", s.node, s.interface, s.peer_node, state,
                            state == "Established"});
      if (state == "Established")
        ++p.established;
      else
        p.down.push_back(s.node + " " + s.key() + " -> " + s.peer_node + ": " + state);
    }
    // OSPFv2 from ospfd, OSPFv3 from ospf6d: each asked once, when the node has such an
    // adjacency.
    std::optional<Result<nlohmann::json>> nbrs[2];
    std::optional<Result<nlohmann::json>> ifs;  // v2 interfaces, read when a 2-Way needs them
    std::vector<std::string> not_full;  // OSPFv2 interfaces, for the wait-timer note below
    for (const auto* ap : mine.adjacencies) {
      const auto& a = *ap;
      const bool v3 = a.version == 3;
      auto& got = nbrs[v3 ? 1 : 0];
      if (!got)
        got = v3 ? driver.frr_json(n, "ospf6d", "show ipv6 ospf6 neighbor json", nullptr)
                 : driver.frr_json(n, "ospfd", "show ip ospf neighbor json", nullptr);
      // On a LAN segment each neighbor by its router-id (several share the interface).
      const plan::Interface* ifc = plan::find_interface(n, a.interface);
      const bool lan = ifc && plan::segment_of(plan, *ifc);
      const plan::Node* peer = plan.find(a.peer_node);
      const std::string rid =
          lan && peer ? (v3 ? peer->ospf6_router_id : peer->ospf_router_id) : "";
      std::optional<validate::OspfNeighbor> nb;
      if (*got) nb = validate::find_ospf_neighbor(**got, a.interface, rid);
      const std::string state = nb ? nb->state : "";
      bool settled = nb && validate::ospf_full(state);
      if (nb && lan && !settled && validate::ospf_two_way(state)) {
        // Two DROthers stay 2-Way; before the election everyone is 2-Way/DROther: this
        // router's own role tells them apart (v3 gives it with the neighbor, v2 on the port).
        std::string mine = nb->my_role;
        if (mine.empty() && !v3) {
          if (!ifs) ifs = driver.frr_json(n, "ospfd", "show ip ospf interface json", nullptr);
          if (*ifs && (*ifs)->is_object())
            if (auto all = (*ifs)->find("interfaces"); all != (*ifs)->end() && all->is_object())
              if (auto i = all->find(a.interface); i != all->end() && i->is_object())
                mine = i->value("state", "");
        }
        settled = validate::ospf_settled(*nb, true, mine);
      }
      p.sessions.push_back({v3 ? "ospf6" : "ospf", n.name, a.interface, a.peer_node,
                            state.empty() ? (*got ? "no neighbor" : "no answer") : state, settled});
      if (settled) {
        ++p.full;
        if (!validate::ospf_full(state)) ++p.two_way;
        continue;
      }
      p.down.push_back(n.name + " " + a.interface + " -> " + a.peer_node + ": " +
                       (!*got ? std::string("no answer from ") + (v3 ? "ospf6d" : "ospfd")
                        : state.empty() ? "no neighbor"
                                        : state));
      if (!v3) not_full.push_back(a.interface);
    }
    if (not_full.empty()) return;
    // Say why it takes long where FRR says so: an interface still in its wait timer.
    if (!ifs) ifs = driver.frr_json(n, "ospfd", "show ip ospf interface json", nullptr);
    if (!*ifs || !(*ifs)->is_object() || !(*ifs)->contains("interfaces")) return;
    for (const auto& name : not_full) {
      const auto& all = (**ifs)["interfaces"];
      if (!all.is_object() || !all.contains(name) || !all[name].is_object()) continue;
      const auto& i = all[name];
      if (i.value("state", "") == "Waiting")
        p.waiting.push_back(n.name + ":" + name + " (" +
                            std::to_string(i.value("timerWaitSecs", 0)) + " s)");
    }
  });
  for (const auto& p : per) {
    c.established += p.established;
    c.full += p.full;
    c.two_way += p.two_way;
    c.down.insert(c.down.end(), p.down.begin(), p.down.end());
    c.waiting.insert(c.waiting.end(), p.waiting.begin(), p.waiting.end());
    c.sessions.insert(c.sessions.end(), p.sessions.begin(), p.sessions.end());
  }
  return c;
}

bool degraded(const nlohmann::json& j) {
  bool out = false;
  for (const auto& n : j.value("nodes", nlohmann::json::array())) {
    out |= !n.value("netns_present", false);
    for (const auto& d : n.value("daemons", nlohmann::json::array())) out |= !d.value("alive", false);
    if (n.contains("vm")) out |= n["vm"].value("running", false) != true;
    if (n.contains("container")) out |= n["container"].value("running", false) != true;
  }
  for (const auto& l : j.value("links", nlohmann::json::array()))
    out |= l.value("a_state", "") == "missing" || l.value("b_state", "") == "missing";
  return out;
}

nlohmann::json status_links(const plan::Plan& plan,
                            const std::map<std::string, nlohmann::json>& port_tables) {
  auto find_if = [&](const std::string& node, const std::string& ifname) -> nlohmann::json {
    auto it = port_tables.find(node);
    if (it == port_tables.end() || !it->second.is_array()) return nullptr;
    for (const auto& l : it->second)
      if (l.value("ifname", "") == ifname) return l;
    return nullptr;
  };
  // A port's transmitted and received bytes (`ip -j -s link`'s stats64), null when not read.
  auto bytes = [](const nlohmann::json& port, const char* dir) -> nlohmann::json {
    if (!port.is_object() || !port.contains("stats64") || !port["stats64"].contains(dir))
      return nullptr;
    const auto& d = port["stats64"][dir];
    auto it = d.find("bytes");
    return it != d.end() && it->is_number_unsigned() ? *it : nlohmann::json(nullptr);
  };
  nlohmann::json out = nlohmann::json::array();
  for (const auto& l : plan.links) {
    auto a = find_if(l.a_node, l.a_interface);
    auto b = find_if(l.b_node, l.b_interface);
    nlohmann::json lj{{"a", l.a_node + ":" + l.a_interface},
                      {"b", l.b_node + ":" + l.b_interface},
                      {"mtu_expected", l.mtu}};
    lj["a_state"] = a.is_null() ? "missing" : a.value("operstate", "?");
    lj["b_state"] = b.is_null() ? "missing" : b.value("operstate", "?");
    lj["a_mtu"] = a.is_null() ? nlohmann::json(nullptr) : a["mtu"];
    lj["b_mtu"] = b.is_null() ? nlohmann::json(nullptr) : b["mtu"];
    lj["a_tx_bytes"] = bytes(a, "tx");
    lj["a_rx_bytes"] = bytes(a, "rx");
    lj["b_tx_bytes"] = bytes(b, "tx");
    lj["b_rx_bytes"] = bytes(b, "rx");
    lj["bandwidth_bps"] = plan::link_rate_bps(plan, l);
    out.push_back(std::move(lj));
  }
  return out;
}

Result<nlohmann::json> status(const std::string& lab) {
  auto st = state::load_state(lab);
  if (!st) return st.error();
  const auto& plan = st->plan;
  nlohmann::json j;
  j["lab"] = lab;
  j["status"] = st->status;
  // Only a finished `up` says "up": "creating" is an `up` killed half-way (or still running),
  // "failed" one kept by --keep-on-failure. Either lab is not what its plan says.
  j["incomplete"] = st->status != "up";
  j["created_at"] = st->created_at;
  j["topology"] = plan.topology_file;
  if (plan.mgmt)
    j["mgmt"] = {{"subnet", plan.mgmt->subnet},
                 {"host_address", plan.mgmt->host_address},
                 {"interface", plan.mgmt->interface},
                 {"user", plan.mgmt->user},
                 {"key", plan.mgmt->key_dir + "/id_ed25519"},
                 {"password_login", !plan.mgmt->password_hash.empty()}};
  if (plan.mgmt && !plan.mgmt->dhcp_address.empty()) {
    const auto* r = state::find_process(st->resources, plan::kMgmtDhcpProcess, "");
    j["mgmt"]["dhcp"] = {{"address", plan.mgmt->dhcp_address},
                         {"pid", r ? r->pid : 0},
                         {"running", r && state::process_alive(r->pid, r->start_time)}};
  }
  j["nodes"] = nlohmann::json::array();
  std::map<std::string, nlohmann::json> links_by_node;
  for (const auto& n : plan.nodes) {
    nlohmann::json nj;
    nj["name"] = n.name;
    const auto& driver = drivers::driver_for(n);
    nj["kind"] = to_string(n.kind);
    nj["netns"] = n.netns;
    nj["backend"] = to_string(n.backend);
    if (!n.mgmt_address.empty()) nj["mgmt_address"] = n.mgmt_address;
    if (auto extra = driver.status(n); extra.is_object())
      for (auto& [section, facts] : extra.items()) nj[section] = std::move(facts);
    bool present = fs::exists("/run/netns/" + n.netns);
    nj["netns_present"] = present;
    nj["daemons"] = nlohmann::json::array();
    for (const auto& r : st->resources)
      if (r.kind == "process" && r.node == n.name)
        nj["daemons"].push_back(
            {{"name", r.name}, {"pid", r.pid}, {"alive", state::process_alive(r.pid, r.start_time)}});
    j["nodes"].push_back(nj);
    if (auto l = driver.port_table(n)) links_by_node[n.name] = *l;
  }
  j["links"] = status_links(plan, links_by_node);
  // When the ports' counters were read (after the last node's table): two reads' byte counters
  // over the difference of their read_at_ms are a link's rate (the web page's utilisation).
  j["read_at_ms"] = std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::system_clock::now().time_since_epoch())
                        .count();
  return ok(std::move(j));
}

}  // namespace twin::engine
