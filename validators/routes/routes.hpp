#pragma once
// routes validator family. Tests:
//   0 fib-complete  every FRR node has every other node's loopback and every host subnet that
//                   the fabric should deliver to it installed in its kernel FIB
//   1 ecmp-width    each such route has as many next hops as the topology implies (a leaf
//                   reaches another leaf over every spine); fewer is lost redundancy, a failure
//   2 anycast-nearest  an anycast address (plan::anycast_groups) at a router that does not
//                   hold it: tests 0 and 1 against its nearest holders together (ECMP across
//                   equal ones), and every next hop leaves toward a neighbor on a shortest path
//                   to one of them (plan::anycast_paths' `via`; not judged for iBGP routes)
// Expectations come from plan::expected_paths (eBGP path-vector fixpoint, the IGP per address
// family: an IPv4 prefix by OSPFv2's paths, an IPv6 one by OSPFv3's). Source: the kernel,
// `ip -j route show` and `ip -j -6 route show` (iproute2 JSON: "dst", and "nexthops": [...]
// for multipath routes, else "gateway"/"via" + "dev"). A table that could not be read, or both
// empty (a running kernel always has IPv6's own routes), is one error for the node.
#include <map>
#include <nlohmann/json.hpp>

#include "twin/validate/validator.hpp"

namespace twin::validators {

class RoutesValidator final : public validate::Validator {
 public:
  std::string name() const override { return "routes"; }
  bool control_plane() const override { return true; }
  std::vector<validate::TestResult> run(validate::Context& ctx) override;
};

// Kernel routes of one node: IPv4 and IPv6 `ip -j route show` arrays concatenated.
std::vector<validate::TestResult> evaluate_routes(
    const plan::Plan& plan, const std::map<std::string, Result<nlohmann::json>>& fibs);

// Number of next hops of one iproute2 JSON route object.
int nexthop_count(const nlohmann::json& route);

// A route's `dst` as the plan writes prefixes: "10.0.0.1" -> "10.0.0.1/32", "fd00::1" ->
// "fd00::1/128", "default" -> "0.0.0.0/0" (or "::/0" with `v6`: its table's family); what is
// no prefix comes back as it is (and matches no expectation).
std::string normalize_dst(const std::string& dst, bool v6 = false);
// Whether an iproute2 JSON route is IPv6's, from its own addresses (dst, gateway, prefsrc, next
// hops): for routes of both families in one list.
bool route_is_v6(const nlohmann::json& route);

}  // namespace twin::validators
