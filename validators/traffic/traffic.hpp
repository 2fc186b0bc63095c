#pragma once
// traffic validator family: the fabric carries a training job's traffic as designed. Opt-in: it
// runs when the topology has `traffic:` (every validation then sends its flows, a few seconds)
// or when asked by name (`twin validate --only traffic`); otherwise it produces nothing. Tests:
//   0 effective-bandwidth  the slowest flow gets at least `effective-bandwidth` (default 0.5) of
//                          its fair share: max-min fair under the links' rates with per-hop
//                          ECMP (traffic::fair_shares), or of the mean flow when the lab
//                          declares no rates. A training step waits for its slowest transfer.
//   1 ecmp-balance         per ECMP group the pattern crosses: no member idle, and each member's
//                          share of the bytes within what hashing that many flows allows
//                          (3.3 standard deviations of a fair coin per flow, plus 5 % for flows
//                          of unequal rates). Skipped, saying so, when fewer than 6 flows per
//                          member cross the group: too few to tell.
//   2 no-drops             per port that carried traffic: no drop, except at a port that ran
//                          at or near its rate (the fair shares fill it or load it to
//                          kNearRateByDesign of it, or it ran at kAtRate of it on average): a
//                          shaped bottleneck drops by design; its drops are reported.
//   3 tail-latency         p99 round trip under load within `tail-latency` of the p99 the same
//                          pairs had without load (the machine's own floor); the default budget
//                          is what the lab's shaped queues can hold on a round trip (every
//                          hop's deepest queue there and back, full, drained at its rate) + 1 ms:
//                          more is the machine's CPU or a queue twin did not configure.
// A failure names its likely cause: an ECMP member the kernel's route lacks, polarization (one
// seed on every node) or L3-only hashing (policy 0), a link at a lower rate than its group's
// others, a port whose MTU is below the source's (fragmentation).
// Source: LabProbe::traffic (iperf3 flows, port counters, the probe stream), and
// LabProbe::ip_json (`ip -j route show match`) for the routes of a group with an idle member.
#include <map>

#include "twin/validate/validator.hpp"

namespace twin::validators {

// no-drops: a shaped port whose measured utilisation reaches this fraction of its rate counts as
// running at its rate (its drops are a bottleneck's, by design).
inline constexpr double kAtRate = 0.8;
// ... and so does a port the fair shares load to this fraction of its rate (PortLoad::designed).
inline constexpr double kNearRateByDesign = 0.75;

class TrafficValidator final : public validate::Validator {
 public:
  // `asked`: the family was named (--only traffic): it runs on a lab without `traffic:`, with
  // the defaults of topology::TrafficSpec.
  explicit TrafficValidator(bool asked = false) : asked_(asked) {}
  std::string name() const override { return "traffic"; }
  std::vector<validate::TestResult> run(validate::Context& ctx) override;
  // Flows need routes: run once the control plane is done; a run takes seconds, so a failing
  // result is final at once (no retries within the convergence window).
  bool rides_on_control_plane() const override { return true; }
  std::optional<std::chrono::milliseconds> retry_window(
      const validate::Context&, const validate::TestResult&) const override {
    return std::chrono::milliseconds(0);
  }
  // The figures of the last run (one pattern), for the gate's before and after.
  std::vector<validate::Bandwidth> bandwidth() const override { return last_; }

 private:
  bool asked_;
  std::vector<validate::Bandwidth> last_;
};

// The most queueing delay the lab's shaped ports can add to a probe's round trip (ms): per pair
// path of `r`, every hop's deepest shaped queue full (tbf_limit_bytes drained at the port's
// rate), the longest path counted there and back. 0 with no shaped port on any path. Pure.
double round_trip_queues_ms(const plan::Plan& plan, const traffic::Report& r);

// A run's figures in brief: pattern, pairs and flows that ran, aggregate, slowest pair. Pure.
validate::Bandwidth bandwidth_of(const traffic::Report& r);

// The next hops a node's kernel has for a destination: node -> destination address -> the
// devices of its route (`ip -j route show match`, the most specific route), for the groups
// with an idle member. Absent = not read.
using RouteDevices = std::map<std::string, std::map<std::string, std::vector<std::string>>>;

// Pure evaluation of a run (`spec`: the topology's `traffic:` or the defaults).
std::vector<validate::TestResult> evaluate_traffic(const plan::Plan& plan,
                                                   const topology::TrafficSpec& spec,
                                                   const traffic::Report& report,
                                                   const RouteDevices& routes = {});

// The destination address of the first pair whose traffic splits over group `g` (the route the
// family reads at its node for an idle member); "" when none. Pure.
std::string split_destination(const traffic::Report& r, const traffic::EcmpGroup& g);

// The devices of the most specific route in `ip -j route show match <addr>` output (a
// multipath route's nexthops, else its dev); empty when none. Pure.
std::vector<std::string> route_devices(const nlohmann::json& routes);

}  // namespace twin::validators
