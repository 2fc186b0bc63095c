#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "twin/core/util.hpp"
#include "twin/drivers/registry.hpp"
#include "twin/engine/lab.hpp"
#include "twin/validate/validator.hpp"

namespace fs = std::filesystem;

namespace twin::engine {

SessionCount count_sessions(const plan::Plan& plan, int parallel,
                            const drivers::DriverLookup& drivers) {
  SessionCount c;
  c.expected = static_cast<int>(plan.sessions.size());
  std::vector<const plan::Node*> nodes;
  for (const auto& n : plan.nodes)
    if (std::find(n.daemons.begin(), n.daemons.end(), "bgpd") != n.daemons.end())
      nodes.push_back(&n);
  std::vector<int> up(nodes.size(), 0);
  std::vector<std::vector<std::string>> down(nodes.size());
  parallel_for(nodes.size(), parallel, [&](size_t i) {
    auto j = drivers(*nodes[i]).frr_json(*nodes[i], "bgpd", "show bgp summary json",
                                                     nullptr);
    for (const auto& s : plan.sessions) {
      if (s.node != nodes[i]->name) continue;
      const nlohmann::json* peer = j ? validate::find_bgp_peer(*j, s.key()) : nullptr;
      std::string state = !j     ? "no answer from bgpd"
                          : peer ? peer->value("state", "unknown")
                                 : "not configured";
      if (state == "Established")
        ++up[i];
      else
        down[i].push_back(s.node + " " + s.key() + " -> " + s.peer_node + ": " + state);
    }
  });
  for (const auto& d : down) c.down.insert(c.down.end(), d.begin(), d.end());
  for (int u : up) c.established += u;
  return c;
}

Result<nlohmann::json> status(const std::string& lab) {
  auto st = state::load_state(lab);
  if (!st) return st.error();
  const auto& plan = st->plan;
  nlohmann::json j;
  j["lab"] = lab;
  j["status"] = st->status;
  j["created_at"] = st->created_at;
  j["topology"] = plan.topology_file;
  j["nodes"] = nlohmann::json::array();
  std::map<std::string, nlohmann::json> links_by_node;
  for (const auto& n : plan.nodes) {
    nlohmann::json nj;
    nj["name"] = n.name;
    const auto& driver = drivers::driver_for(n);
    nj["kind"] = to_string(n.kind);
    nj["netns"] = n.netns;
    nj["backend"] = to_string(n.backend);
    if (auto extra = driver.status(n); !extra.is_null()) nj["vm"] = std::move(extra);
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
  auto find_if = [&](const std::string& node, const std::string& ifname) -> nlohmann::json {
    auto it = links_by_node.find(node);
    if (it == links_by_node.end()) return nullptr;
    for (const auto& l : it->second)
      if (l.value("ifname", "") == ifname) return l;
    return nullptr;
  };
  j["links"] = nlohmann::json::array();
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
    j["links"].push_back(lj);
  }
  return ok(std::move(j));
}

}  // namespace twin::engine
