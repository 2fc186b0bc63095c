#pragma once
// bfd validator family. Tests:
//   0 peer-up  every expected BFD session (plan::ExpectedBfdPeer: a `bfd` peer block or a BGP
//              neighbor with `bfd`, on a node that runs bfdd) is up; otherwise its state and
//              FRR's diagnostic ("neighbor signaled session down", "control detection time
//              expired", ...)
// Source: `show bfd peers json` (FRR 8.4, recorded in tests/data/frr84/bfd/): an array of
// {"peer": "10.9.0.2", "interface"?: "eth1", "status": "up"|"down"|"init"|"shutdown",
// "diagnostic", "remote-diagnostic", "multihop", ...}. A session expected toward an address is
// matched by "peer" (and "interface" when both name one); one expected for an interface
// (unnumbered) BGP neighbor, whose peer is a link-local address only the running peer knows, is
// the single-hop ("multihop": false) session whose "interface" is that interface.
#include <map>
#include <nlohmann/json.hpp>

#include "twin/validate/validator.hpp"

namespace twin::validators {

class BfdValidator final : public validate::Validator {
 public:
  std::string name() const override { return "bfd"; }
  std::vector<validate::TestResult> run(validate::Context& ctx) override;
};

// Pure evaluation over `show bfd peers json` per node with expected peers (an error where the
// probe failed). Exposed for unit tests with recorded FRR output.
std::vector<validate::TestResult> evaluate_bfd(
    const plan::Plan& plan, const std::map<std::string, Result<nlohmann::json>>& peers);

}  // namespace twin::validators
