#pragma once
// checks validator family: the checks the user declared in the topology (`checks:`, or a
// containerlab file's companion `<name>.checks.yaml`; topology/declared_checks.hpp), stored in
// the plan. One result per check; its subject (TestResult::peer) is the check's name. Tests:
//   0 reach  `reach: {from, to, expect}`: every address of `to` (its loopbacks, or a host's
//            addresses, or the address given) answers a ping from `from` (sourced from its
//            loopback when it is an frr node) — or, with `expect: unreachable`, none does
//   1 route  `route: {node, prefix, nexthops, protocol}`: the prefix is installed in the
//            node's FIB per zebra (`show ip[v6] route json`), from that protocol, with that
//            many next hops
//   2 frr    `frr: {node, command, match}`: the `show ... json` command's output contains
//            `match` (objects: every key, recursively; lists: each expected element matches
//            some element; scalars equal); a failure names the first path that differs;
//            an answer of {} (or nothing) is an error, whatever `match` is
// Each check is decided on its own (Validator::decides_each_result): final once it passes, or
// once it fails past its own `wait:` (seconds from the start of the validation), whatever
// other checks are still waited for. A check with `after: X` is evaluated only once X holds,
// in the same attempt, and its wait counts from the moment X passed; until then it fails as
// "not evaluated yet", and if X is final without passing it is skipped, saying so. A lab
// without checks gets no result from this family.
#include <nlohmann/json.hpp>
#include <optional>

#include "twin/validate/validator.hpp"

namespace twin::validators {

class ChecksValidator final : public validate::Validator {
 public:
  std::string name() const override { return "checks"; }
  std::vector<validate::TestResult> run(validate::Context& ctx) override;
  std::optional<std::chrono::milliseconds> retry_window(
      const validate::Context& ctx, const validate::TestResult& result) const override;
  bool decides_each_result() const override { return true; }
};

// The window of check `name` from the start of the validation (nullopt: no such check): its
// wait, plus, up its `after:` chain, the moment its prerequisite passed (from `finals`, the
// family's final results; may be null) or else that prerequisite's own window. Pure.
std::optional<std::chrono::milliseconds> check_window(
    const std::vector<topology::Check>& checks, const std::string& name,
    const std::vector<validate::TestResult>* finals);

// Whether `actual` contains `expected` (see test 2). nullopt when it does; otherwise where and
// how it differs: `neighbors.10.0.255.2[0].nbrState: expected "Full/-", got "ExStart/-"`.
std::optional<std::string> json_subset_mismatch(const nlohmann::json& expected,
                                                const nlohmann::json& actual);

// The pings a reach check sends from its `from` node (pure; empty when there is nothing to
// ping, e.g. `to` has no address of a family `from` has).
std::vector<validate::PingRequest> reach_requests(const plan::Plan& plan,
                                                  const topology::Check& check);

// Pure evaluations, exposed for unit tests with recorded FRR output.
validate::TestResult evaluate_reach(const topology::Check& check,
                                    const std::vector<validate::PingRequest>& requests,
                                    const std::vector<validate::PingResult>& results);
validate::TestResult evaluate_route(const topology::Check& check,
                                    const Result<nlohmann::json>& table);
validate::TestResult evaluate_frr(const topology::Check& check,
                                  const Result<nlohmann::json>& output);

}  // namespace twin::validators
