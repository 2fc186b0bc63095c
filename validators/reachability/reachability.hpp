#pragma once
// reachability validator family. Tests:
//   0 loopback-mesh  every FRR node reaches every other FRR node's loopbacks (per address
//                    family, sourced from its own loopback) where the fabric should deliver them
//   1 host-mesh      every host reaches every other host's addresses
// Pairs the topology cannot route (e.g. spines sharing one ASN: eBGP loop prevention,
// RFC 4271 §9.1.2) are not probed; the plan says so. Pairs beyond Context::max_pairs are
// sampled deterministically (every k-th).
#include "twin/validate/validator.hpp"

namespace twin::validators {

class ReachabilityValidator final : public validate::Validator {
 public:
  std::string name() const override { return "reachability"; }
  std::vector<validate::TestResult> run(validate::Context& ctx) override;
};

// The pings the family sends (pure; unit-tested).
std::vector<validate::PingProbe> reachability_probes(const plan::Plan& plan, int max_pairs);

}  // namespace twin::validators
