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

namespace twin::validators {

namespace {
using Factory = std::function<std::unique_ptr<validate::Validator>()>;
const std::vector<std::pair<std::string, Factory>>& registry() {
  static const std::vector<std::pair<std::string, Factory>> r = {
      // First: every other family reads the lab through the processes it checks.
      {"node", [] { return std::make_unique<NodeValidator>(); }},
      {"bgp", [] { return std::make_unique<BgpValidator>(); }},
      {"ospf", [] { return std::make_unique<OspfValidator>(); }},
      {"bfd", [] { return std::make_unique<BfdValidator>(); }},
      {"evpn", [] { return std::make_unique<EvpnValidator>(); }},
      {"routes", [] { return std::make_unique<RoutesValidator>(); }},
      {"mtu", [] { return std::make_unique<MtuValidator>(); }},
      {"reachability", [] { return std::make_unique<ReachabilityValidator>(); }},
      {"checks", [] { return std::make_unique<ChecksValidator>(); }},
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
      out.push_back(factory());
  return out;
}

}  // namespace twin::validators
