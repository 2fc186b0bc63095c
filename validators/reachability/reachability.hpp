#pragma once
// reachability validator family. Tests:
//   0 loopback-mesh  every pair of FRR nodes reaches each other's loopbacks (per address
//                    family, loopback to loopback) where the fabric should deliver them: one
//                    echo per pair, sent by one end, whose request proves the way there and
//                    whose reply the way back (forwarding is by destination, so the echo the
//                    other end would send asks the same routes)
//   1 host-mesh      every host reaches every other host's addresses (tenant servers: only
//                    a routing tenant's, across its networks)
//   2 tenant-mesh    every server of a tenant network reaches every other one of it (ICMP,
//                    both families): the L2 segment works across the fabric
//   3 tenant-isolation  no server reaches a server of another tenant: an ARP request for each
//                    of its IPv4 addresses, broadcast on the asking server's port, must go
//                    unanswered (a reply means both sit on one L2 segment, whatever their
//                    subnets); a reply fails naming both servers and the VNI it crossed
//   4 anycast        every FRR router that does not hold an anycast address (plan::
//                    anycast_groups) and is expected to route to it pings it from its own
//                    first loopback of the family: the reply is a holder's (no one else has
//                    the address); which holder the routes family judges (anycast-nearest).
//                    Anycast addresses are no loopback-mesh destinations or sources.
// Pairs the topology cannot route (e.g. spines sharing one ASN: eBGP loop prevention,
// RFC 4271 §9.1.2) are not probed; the plan says so. Pairs beyond Context::max_pairs are
// sampled deterministically (every k-th).
#include "twin/validate/validator.hpp"

namespace twin::validators {

class ReachabilityValidator final : public validate::Validator {
 public:
  std::string name() const override { return "reachability"; }
  bool rides_on_control_plane() const override { return true; }
  std::vector<validate::TestResult> run(validate::Context& ctx) override;
  // Routers with a loopback that no loopback-mesh test reached (nothing expects a route to or
  // from them): a warning naming them, so that a PASS that pinged nothing says so.
  std::vector<Note> coverage(const validate::Context& ctx,
                             const std::vector<validate::TestResult>& results) const override;
};

// The routers (FRR nodes with a loopback, announced or not) that `results` hold no loopback-mesh
// test for, in plan order; with two or more such routers in the lab, a warning saying no
// reachability is expected for them (pure; unit-tested).
std::vector<Note> reachability_coverage(const plan::Plan& plan,
                                        const std::vector<validate::TestResult>& results);

// The pings the family sends (pure; unit-tested): tests 0-2 and 4.
std::vector<validate::PingProbe> reachability_probes(const plan::Plan& plan, int max_pairs);
// Whether `self` sends the loopback-mesh echoes of its pair with `other` (exactly one of the
// two does; by their names only, so adding or removing other nodes never moves it).
bool sends_loopback_echo(const std::string& self, const std::string& other);
// Test 3's ARP requests, and how an answer is judged (pure; unit-tested).
std::vector<validate::PingProbe> isolation_probes(const plan::Plan& plan);
validate::TestResult isolation_result(const plan::Plan& plan, const validate::PingProbe& probe,
                                      const validate::PingResult& result);

}  // namespace twin::validators
