#include "validators/registry.hpp"

#include <algorithm>
#include <functional>

#include "validators/bfd/bfd.hpp"
#include "validators/bgp/bgp.hpp"
#include "validators/checks/checks.hpp"
#include "validators/evpn/evpn.hpp"
#include "validators/mtu/mtu.hpp"
#include "validators/node/node.hpp"
#include "validators/ospf/ospf.hpp"
#include "validators/reachability/reachability.hpp"
#include "validators/routes/routes.hpp"
#include "validators/traffic/traffic.hpp"

namespace twin::validators {

namespace {
// `named`: the caller listed the family by name (`--only`), which an opt-in family (traffic)
// takes as the request to run.
using Factory = std::function<std::unique_ptr<validate::Validator>(bool named)>;
const std::vector<std::pair<std::string, Factory>>& registry() {
  static const std::vector<std::pair<std::string, Factory>> r = {
      // First: every other family reads the lab through the processes it checks.
      {"node", [](bool) { return std::make_unique<NodeValidator>(); }},
      {"bgp", [](bool) { return std::make_unique<BgpValidator>(); }},
      {"ospf", [](bool) { return std::make_unique<OspfValidator>(); }},
      {"bfd", [](bool) { return std::make_unique<BfdValidator>(); }},
      {"evpn", [](bool) { return std::make_unique<EvpnValidator>(); }},
      {"routes", [](bool) { return std::make_unique<RoutesValidator>(); }},
      {"mtu", [](bool) { return std::make_unique<MtuValidator>(); }},
      {"reachability", [](bool) { return std::make_unique<ReachabilityValidator>(); }},
      {"checks", [](bool) { return std::make_unique<ChecksValidator>(); }},
      // Last, and opt-in (`traffic:` in the topology, or named): its flows take seconds.
      {"traffic", [](bool named) { return std::make_unique<TrafficValidator>(named); }},
  };
  return r;
}
}  // namespace

std::vector<std::string> family_names() {
  std::vector<std::string> names;
  for (const auto& [n, f] : registry()) names.push_back(n);
  return names;
}

std::vector<std::unique_ptr<validate::Validator>> make_validators(
    const std::vector<std::string>& only, std::vector<std::string>* unknown) {
  std::vector<std::unique_ptr<validate::Validator>> out;
  for (const auto& o : only) {
    bool known = std::any_of(registry().begin(), registry().end(),
                             [&](const auto& e) { return e.first == o; });
    if (!known && unknown) unknown->push_back(o);
  }
  for (const auto& [name, factory] : registry())
    if (only.empty() || std::find(only.begin(), only.end(), name) != only.end())
      out.push_back(factory(!only.empty()));
  return out;
}

}  // namespace twin::validators
