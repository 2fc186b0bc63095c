#pragma once
// bgp validator family. Tests:
//   0 session-established  every expected session (a fabric link between two FRR nodes) and
//                          every configured neighbor is Established
//   1 prefixes-received    every Established expected session received >= 1 prefix in each
//                          address family the lab routes, when the peer originates prefixes
//   2 router-id-unique     router-ids differ across nodes and match the topology's; a node
//                          whose summary holds no data is an error (skipped when bgpd has no
//                          neighbor and the topology gives it none: no router-id to read)
// Source: `show bgp summary json` (FRR 8.4: {"ipv4Unicast": {"routerId", "peers": {"swp1":
// {"state", "pfxRcd", "hostname", ...}}}, "ipv6Unicast": {...}}; `{}` = no BGP instance).
#include <map>
#include <nlohmann/json.hpp>

#include "twin/validate/validator.hpp"

namespace twin::validators {

class BgpValidator final : public validate::Validator {
 public:
  std::string name() const override { return "bgp"; }
  bool control_plane() const override { return true; }
  std::vector<validate::TestResult> run(validate::Context& ctx) override;
};

// Pure evaluation over collected `show bgp summary json` per FRR node (an error string when the
// probe failed). Exposed for unit tests with recorded FRR output.
std::vector<validate::TestResult> evaluate_bgp(
    const plan::Plan& plan, const std::map<std::string, Result<nlohmann::json>>& summaries);

}  // namespace twin::validators
