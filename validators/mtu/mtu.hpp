#pragma once
// mtu validator family. BGP does not notice an MTU mismatch — sessions stay up while large
// frames are dropped — so the harness checks it (DESIGN.md §4). Tests:
//   0 link-mtu    both ends of every link have the topology's MTU in the kernel
//   1 link-df     a ping with the DF bit at the link's full MTU crosses the link, from each
//                 end (IPv6 link-local, which needs no configured address; IPv4 link addresses
//                 when IPv6 is unavailable)
//   2 path-mtu    between FRR loopbacks, a DF ping at the smallest link MTU on the shortest
//                 paths crosses the fabric (sampled beyond Context::max_pairs)
// Sizes: MTU excludes the Ethernet header; ICMP payload = MTU - 28 (IPv4) or - 48 (IPv6).
// An interface list that could not be read, or is empty (every namespace has lo), is an error
// naming the node and command, for each link (test 0) or probe (test 1) it leaves unjudged.
#include <map>
#include <nlohmann/json.hpp>

#include "twin/validate/validator.hpp"

namespace twin::validators {

class MtuValidator final : public validate::Validator {
 public:
  std::string name() const override { return "mtu"; }
  bool rides_on_control_plane() const override { return true; }
  std::vector<validate::TestResult> run(validate::Context& ctx) override;
};

// Test 0 from `ip -j link show` per node.
std::vector<validate::TestResult> evaluate_link_mtu(
    const plan::Plan& plan, const std::map<std::string, Result<nlohmann::json>>& links);

// Test 1 probes, from `ip -j addr show` per node (link-local addresses of peers).
std::vector<validate::PingProbe> link_df_probes(
    const plan::Plan& plan, const std::map<std::string, Result<nlohmann::json>>& addrs,
    std::vector<validate::TestResult>* skipped);

// Test 2 probes.
std::vector<validate::PingProbe> path_mtu_probes(const plan::Plan& plan, int max_pairs);

// Smallest link MTU over every shortest fabric path from `src` to `dst` (0 if unreachable).
int path_mtu(const plan::Plan& plan, const std::string& src, const std::string& dst);

}  // namespace twin::validators
