#include "twin/topology/own_config.hpp"

#include <algorithm>

#include "twin/core/input_policy.hpp"
#include "twin/core/util.hpp"
#include "twin/topology/frr_conf.hpp"

namespace twin::topology {

void read_own_configs(Topology& t, Diagnostics& diags) {
  for (auto& n : t.nodes) {
    if (n.config.empty()) continue;
    std::string field = "nodes." + n.name + ".config";
    auto text = read_regular_file(n.config);  // the loader checked it against the policy
    if (!text) {
      diags.add({t.file, n.mark.line, n.mark.column, field,
                 "cannot read config '" + n.config + "': " + text.error().message, ""});
      continue;
    }
    n.own = parse_frr_conf(*text, n.config);
    const FrrConf& c = *n.own;
    for (const auto& u : c.unsupported)
      diags.add({n.config, u.line, 1, field,
                 "'" + trim(u.text) + "': VRFs are not supported by twin yet",
                 "run the lab without VRFs, or model each VRF as its own node"});
    // What the topology says of the node and its config says otherwise: FRR runs the config,
    // so the topology's value would be a silent lie in every expectation built on it.
    if (n.asn && c.bgp_asn && *n.asn != *c.bgp_asn)
      diags.add({t.file, n.mark.line, n.mark.column, "nodes." + n.name + ".asn",
                 "asn " + std::to_string(*n.asn) + " contradicts the config's `router bgp " +
                     std::to_string(*c.bgp_asn) + "` (" + n.config + ":" +
                     std::to_string(c.bgp_line) + ")",
                 "drop `asn:` (the config decides) or make them equal"});
    if (n.router_id && !c.bgp_router_id.empty() && n.router_id->address() != c.bgp_router_id)
      diags.add({t.file, n.mark.line, n.mark.column, "nodes." + n.name + ".router-id",
                 "router-id " + n.router_id->address() +
                     " contradicts the config's `bgp router-id " + c.bgp_router_id + "` (" +
                     n.config + ":" + std::to_string(c.bgp_router_id_line) + ")",
                 "drop `router-id:` (the config decides) or make them equal"});
  }
}

std::optional<std::string> daemon_switched_off(const Node& n, const std::string& daemon) {
  if (n.daemon_settings.empty() || daemon == "zebra" || daemon == "staticd") return std::nullopt;
  auto s = std::find_if(n.daemon_settings.begin(), n.daemon_settings.end(),
                        [&](const DaemonSetting& d) { return d.daemon == daemon; });
  if (s == n.daemon_settings.end() && !n.daemons_field.empty())
    return n.daemons_field + " (" + n.daemon_settings.front().file + ":" +
           std::to_string(n.daemon_settings.front().mark.line) + ") does not list " + daemon;
  if (s == n.daemon_settings.end())
    return "the node's daemons (" + n.daemon_settings.front().file + ") do not include " + daemon;
  if (s->enabled) return std::nullopt;
  return s->file + ":" + std::to_string(s->mark.line) + " switches " + daemon + " off";
}

}  // namespace twin::topology
