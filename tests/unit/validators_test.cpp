// Unit tests for the validator families' pure evaluation (validators/*) over FRR 8.4.4 and
// iproute2 JSON recorded from a real run of clos-2x4 (lab "rec", tests/data/frr84), the ping
// probes they plan, the ping outcome mapping, and the retry window of run_validation.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/unit/fakes.hpp"
#include "twin/plan/plan.hpp"
#include "twin/topology/loader.hpp"
#include "twin/validate/runner.hpp"
#include "twin/validate/validator.hpp"
#include "validators/bgp/bgp.hpp"
#include "validators/mtu/mtu.hpp"
#include "validators/reachability/reachability.hpp"
#include "validators/routes/routes.hpp"

namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using twin::Result;
using twin::validate::PingOutcome;
using twin::validate::PingProbe;
using twin::validate::PingResult;
using twin::validate::Status;
using twin::validate::TestResult;
using Data = std::map<std::string, Result<json>>;

const std::string kRec = std::string(TWIN_TEST_DATA) + "/frr84/";

json read_json(const std::string& name) {
  std::ifstream f(kRec + name);
  if (!f) throw std::runtime_error("cannot read " + kRec + name);
  return json::parse(f);
}

Result<json> rec(const std::string& name) { return twin::ok(read_json(name)); }

const twin::plan::Plan& plan() {
  static const auto p = twin::plan::plan_from_json(read_json("plan-rec.json"));
  return p;
}

std::string show(const TestResult& r) {
  return r.validator + "/" + std::to_string(r.test) + " " + r.test_name + " [" +
         twin::validate::to_string(r.status) + "] node=" + r.node + " peer=" + r.peer +
         " expected=" + r.expected + " observed=" + r.observed + " msg=" + r.message;
}

std::string show(const std::vector<TestResult>& rs) {
  std::string s;
  for (const auto& r : rs) s += show(r) + "\n";
  return s;
}

std::vector<TestResult> where(const std::vector<TestResult>& rs,
                              const std::function<bool(const TestResult&)>& pred) {
  std::vector<TestResult> out;
  for (const auto& r : rs)
    if (pred(r)) out.push_back(r);
  return out;
}

const TestResult* find(const std::vector<TestResult>& rs, int test, const std::string& node,
                       const std::string& peer) {
  for (const auto& r : rs)
    if (r.test == test && r.node == node && r.peer == peer) return &r;
  return nullptr;
}

// ---------------------------------------------------------------------------------------
// bgp

TEST(Bgp, RecordedNodesPassAndUnprobedNodesAreErrors) {
  Data sums;
  sums.emplace("leaf1", rec("leaf1-bgp-summary.json"));
  sums.emplace("spine1", rec("spine1-bgp-summary.json"));
  sums.emplace("leaf4", rec("leaf4-bgp-summary.json"));
  auto rs = twin::validators::evaluate_bgp(plan(), sums);

  const std::set<std::string> recorded = {"leaf1", "spine1", "leaf4"};
  auto mine = where(rs, [&](const TestResult& r) { return recorded.count(r.node) > 0; });
  auto others = where(rs, [&](const TestResult& r) { return recorded.count(r.node) == 0; });

  // leaf1 2 + spine1 4 + leaf4 2 sessions: test 0 per session, test 1 per session and family,
  // test 2 per node; every one passed.
  EXPECT_EQ(mine.size(), 8u + 16u + 3u) << show(rs);
  for (const auto& r : mine) {
    EXPECT_EQ(r.status, Status::kPassed) << show(r);
    EXPECT_EQ(r.validator, "bgp");
  }
  const auto* s = find(rs, 0, "leaf1", "swp1");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->test_name, "session-established");
  EXPECT_EQ(s->expected, "Established with spine1");
  EXPECT_EQ(s->observed, "Established");
  EXPECT_EQ(s->message, "session with spine1 is Established");
  const auto* pfx = find(rs, 1, "spine1", "swp2 ipv6");
  ASSERT_NE(pfx, nullptr);
  EXPECT_EQ(pfx->test_name, "prefixes-received");
  EXPECT_EQ(pfx->observed, "1 prefixes");
  EXPECT_EQ(pfx->expected, ">= 1 prefix");
  const auto* rid = find(rs, 2, "leaf4", "");
  ASSERT_NE(rid, nullptr);
  EXPECT_EQ(rid->test_name, "router-id-unique");
  EXPECT_EQ(rid->observed, "10.255.1.4");

  // spine2 4 + leaf2 2 + leaf3 2 sessions, and each node's router-id, each an error: no data
  // is never a pass, and no node drops out of router-id-unique.
  EXPECT_EQ(others.size(), 8u + 3u) << show(others);
  for (const auto& r : others) {
    EXPECT_EQ(r.status, Status::kError) << show(r);
    EXPECT_EQ(r.observed, "no data");
    EXPECT_THAT(r.message, HasSubstr(r.node + ": `show bgp summary json` not probed")) << show(r);
  }
  const auto* s4 = find(others, 0, "spine2", "swp4");
  ASSERT_NE(s4, nullptr);
  EXPECT_EQ(s4->message, "cannot read BGP state: spine2: `show bgp summary json` not probed");
  EXPECT_NE(find(others, 0, "leaf3", "swp2"), nullptr);
  for (const char* n : {"spine2", "leaf2", "leaf3"}) {
    const auto* rid = find(others, 2, n, "");
    ASSERT_NE(rid, nullptr) << n;
    EXPECT_EQ(rid->test_name, "router-id-unique");
    EXPECT_EQ(rid->message, std::string("cannot read the router-id: ") + n +
                                ": `show bgp summary json` not probed");
  }
}

TEST(Bgp, ShutdownSessionFails) {
  Data sums;
  sums.emplace("leaf1", rec("leaf1-bgp-summary-swp1-shutdown.json"));
  auto rs = twin::validators::evaluate_bgp(plan(), sums);
  auto leaf1 = where(rs, [](const TestResult& r) { return r.node == "leaf1"; });
  const auto* down = find(leaf1, 0, "leaf1", "swp1");
  ASSERT_NE(down, nullptr) << show(rs);
  EXPECT_EQ(down->status, Status::kFailed);
  EXPECT_EQ(down->validator, "bgp");
  EXPECT_EQ(down->test, 0);
  EXPECT_EQ(down->expected, "Established with spine1");
  EXPECT_THAT(down->observed, StartsWith("Idle (Admin)"));
  EXPECT_EQ(down->message, "session on swp1 toward spine1 is Idle (Admin)");
  // No prefix count for a session that is down; the other session is fine.
  EXPECT_EQ(find(leaf1, 1, "leaf1", "swp1 ipv4"), nullptr);
  EXPECT_EQ(find(leaf1, 0, "leaf1", "swp2")->status, Status::kPassed);
  EXPECT_EQ(find(leaf1, 1, "leaf1", "swp2 ipv4")->observed, "5 prefixes");
  EXPECT_EQ(find(leaf1, 2, "leaf1", "")->status, Status::kPassed);
  auto failed = where(rs, [](const TestResult& r) { return r.status == Status::kFailed; });
  EXPECT_EQ(failed.size(), 1u) << show(failed);
}

TEST(Bgp, EmptyObjectIsAnErrorNeverAPass) {
  Data sums;
  sums.emplace("leaf1", twin::ok(json::object()));
  auto rs = twin::validators::evaluate_bgp(plan(), sums);
  auto leaf1 = where(rs, [](const TestResult& r) { return r.node == "leaf1"; });
  ASSERT_EQ(leaf1.size(), 3u) << show(rs);  // one per expected session, and its router-id
  const std::string why =
      "leaf1: bgpd returned {} for `show bgp summary json` (no `router bgp` instance, or no "
      "neighbor)";
  for (const auto& r : leaf1) {
    EXPECT_EQ(r.status, Status::kError) << show(r);
    EXPECT_EQ(r.message,
              (r.test == 2 ? "cannot read the router-id: " : "cannot read BGP state: ") + why);
  }
  ASSERT_NE(find(leaf1, 2, "leaf1", ""), nullptr);
  for (const auto& r : rs) EXPECT_NE(r.status, Status::kPassed) << show(r);
}

// A node the topology gives no session whose bgpd has no neighbor ({}): nothing to check for
// sessions, and router-id-unique says why it is not judged instead of leaving it out.
TEST(Bgp, EmptyObjectOfANodeWithoutSessionsSkipsItsRouterId) {
  auto p = plan();
  std::erase_if(p.sessions, [](const auto& s) { return s.node == "leaf1"; });
  Data sums;
  sums.emplace("leaf1", twin::ok(json::object()));
  auto rs = twin::validators::evaluate_bgp(p, sums);
  auto leaf1 = where(rs, [](const TestResult& r) { return r.node == "leaf1"; });
  ASSERT_EQ(leaf1.size(), 1u) << show(rs);
  EXPECT_EQ(leaf1[0].test, 2);
  EXPECT_EQ(leaf1[0].status, Status::kSkipped);
  EXPECT_EQ(leaf1[0].message,
            "bgpd on leaf1 has no neighbor: its summary shows no router-id, and no BGP peer "
            "meets it");
  // The same node unreadable is an error, not a skip.
  sums.erase("leaf1");
  sums.emplace("leaf1", twin::harness_error("bgpd.vty: connection refused"));
  const auto unread = twin::validators::evaluate_bgp(p, sums);
  const auto* err = find(unread, 2, "leaf1", "");
  ASSERT_NE(err, nullptr);
  EXPECT_EQ(err->status, Status::kError);
  EXPECT_EQ(err->message,
            "cannot read the router-id: leaf1: `show bgp summary json` failed: bgpd.vty: "
            "connection refused");
}

TEST(Bgp, ProbeErrorIsAnError) {
  Data sums;
  sums.emplace("leaf1", twin::harness_error("vtysh timed out after 10 s"));
  auto rs = twin::validators::evaluate_bgp(plan(), sums);
  const auto* r = find(rs, 0, "leaf1", "swp2");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->status, Status::kError);
  EXPECT_EQ(r->message,
            "cannot read BGP state: leaf1: `show bgp summary json` failed: vtysh timed out after "
            "10 s");
}

TEST(Bgp, MissingNeighborFails) {
  auto sum = read_json("leaf1-bgp-summary.json");
  for (const char* af : {"ipv4Unicast", "ipv6Unicast"}) sum[af]["peers"].erase("swp2");
  Data sums;
  sums.emplace("leaf1", twin::ok(sum));
  auto rs = twin::validators::evaluate_bgp(plan(), sums);
  const auto* r = find(rs, 0, "leaf1", "swp2");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->status, Status::kFailed);
  EXPECT_EQ(r->observed, "not configured");
  EXPECT_EQ(r->message, "no BGP neighbor on swp2 toward spine2");
}

TEST(Bgp, DuplicateRouterIdFailsTest2) {
  auto spine1 = read_json("spine1-bgp-summary.json");
  for (const char* af : {"ipv4Unicast", "ipv6Unicast"}) spine1[af]["routerId"] = "10.255.1.1";
  Data sums;
  sums.emplace("leaf1", rec("leaf1-bgp-summary.json"));
  sums.emplace("spine1", twin::ok(spine1));
  sums.emplace("leaf4", rec("leaf4-bgp-summary.json"));
  auto rs = twin::validators::evaluate_bgp(plan(), sums);
  // The nodes not recorded are errors (BgpRecorded... above); the recorded ones are judged.
  auto t2 = where(rs, [](const TestResult& r) {
    return r.test == 2 && (r.node == "spine1" || r.node == "leaf1" || r.node == "leaf4");
  });
  // spine1: differs from the topology, and shared; leaf1: shared; leaf4: unique.
  ASSERT_EQ(t2.size(), 4u) << show(t2);
  auto failed = where(t2, [](const TestResult& r) { return r.status == Status::kFailed; });
  EXPECT_EQ(failed.size(), 3u) << show(t2);
  const TestResult* differs = nullptr;
  const TestResult* shared_spine = nullptr;
  for (const auto& r : t2)
    if (r.node == "spine1") (r.expected == "unique" ? shared_spine : differs) = &r;
  ASSERT_NE(differs, nullptr);
  EXPECT_EQ(differs->expected, "10.255.0.1");
  EXPECT_EQ(differs->observed, "10.255.1.1");
  EXPECT_EQ(differs->message, "router-id differs from the topology's");
  ASSERT_NE(shared_spine, nullptr);
  EXPECT_EQ(shared_spine->status, Status::kFailed);
  EXPECT_EQ(shared_spine->observed, "10.255.1.1 (also leaf1)");
  const auto* leaf1 = find(t2, 2, "leaf1", "");
  ASSERT_NE(leaf1, nullptr);
  EXPECT_EQ(leaf1->status, Status::kFailed);
  EXPECT_EQ(leaf1->observed, "10.255.1.1 (also spine1)");
  EXPECT_EQ(leaf1->message, "router-id 10.255.1.1 is shared with spine1");
  EXPECT_EQ(find(t2, 2, "leaf4", "")->status, Status::kPassed);
}

// ---------------------------------------------------------------------------------------
// routes

Result<json> fib(const std::string& v4_file, const std::string& v6_file) {
  json all = read_json(v4_file);
  for (const auto& r : read_json(v6_file)) all.push_back(r);
  return twin::ok(all);
}

TEST(Routes, Leaf1FibCompleteWithFullEcmp) {
  Data fibs;
  fibs.emplace("leaf1", fib("leaf1-ip-route.json", "leaf1-ip6-route.json"));
  auto rs = twin::validators::evaluate_routes(plan(), fibs);
  auto leaf1 = where(rs, [](const TestResult& r) { return r.node == "leaf1"; });
  // 12 prefixes of other nodes (spines' and leaves' loopbacks, leaf4's host subnets), each
  // with fib-complete and ecmp-width.
  ASSERT_EQ(leaf1.size(), 24u) << show(rs);
  for (const auto& r : leaf1) EXPECT_EQ(r.status, Status::kPassed) << show(r);
  const auto* width = find(leaf1, 1, "leaf1", "10.255.1.4/32");
  ASSERT_NE(width, nullptr);
  EXPECT_EQ(width->test_name, "ecmp-width");
  EXPECT_EQ(width->observed, "2 next hops");
  EXPECT_EQ(width->expected, "2 next hops");
  EXPECT_EQ(find(leaf1, 1, "leaf1", "10.255.0.1/32")->expected, "1 next hop");
  EXPECT_EQ(find(leaf1, 1, "leaf1", "2001:db8:4::/64")->observed, "2 next hops");
  EXPECT_EQ(find(leaf1, 0, "leaf1", "fd00:255::104/128")->test_name, "fib-complete");
  // Its own prefixes are not expected from the fabric.
  EXPECT_EQ(find(leaf1, 0, "leaf1", "10.0.1.0/24"), nullptr);

  // The nodes not probed: one error each.
  auto others = where(rs, [](const TestResult& r) { return r.node != "leaf1"; });
  ASSERT_EQ(others.size(), 5u) << show(others);
  for (const auto& r : others) {
    EXPECT_EQ(r.status, Status::kError);
    EXPECT_EQ(r.message, "cannot read the FIB: " + r.node + ": routes not probed");
  }
}

TEST(Routes, Spine1FibComplete) {
  Data fibs;
  fibs.emplace("spine1", fib("spine1-ip-route.json", "spine1-ip6-route.json"));
  auto rs = twin::validators::evaluate_routes(plan(), fibs);
  auto spine1 = where(rs, [](const TestResult& r) { return r.node == "spine1"; });
  // 4 leaves x 2 loopbacks + 4 host subnets; nothing from spine2 (same ASN).
  ASSERT_EQ(spine1.size(), 24u) << show(rs);
  for (const auto& r : spine1) EXPECT_EQ(r.status, Status::kPassed) << show(r);
  EXPECT_EQ(find(spine1, 0, "spine1", "10.255.0.2/32"), nullptr);
}

TEST(Routes, LinkShutdownLosesEcmpAndASpineLoopback) {
  Data fibs;
  fibs.emplace("leaf1", fib("leaf1-ip-route-swp1-shutdown.json", "leaf1-ip6-route.json"));
  auto rs = twin::validators::evaluate_routes(plan(), fibs);
  const auto* width = find(rs, 1, "leaf1", "10.255.1.4/32");
  ASSERT_NE(width, nullptr) << show(rs);
  EXPECT_EQ(width->status, Status::kFailed);
  EXPECT_EQ(width->observed, "1 next hop");
  EXPECT_EQ(width->expected, "2 next hops");
  EXPECT_EQ(width->message,
            "lost redundancy: 10.255.1.4/32 of leaf4 over 1 next hop, the topology gives 2 next "
            "hops");
  // spine1's loopback is gone altogether.
  const auto* lost = find(rs, 0, "leaf1", "10.255.0.1/32");
  ASSERT_NE(lost, nullptr);
  EXPECT_EQ(lost->status, Status::kFailed);
  EXPECT_EQ(lost->observed, "missing");
  EXPECT_EQ(lost->message, "loopback 10.255.0.1/32 of spine1 is not in the kernel FIB");
  // IPv6 was recorded before the shutdown: still two next hops.
  EXPECT_EQ(find(rs, 1, "leaf1", "fd00:255::104/128")->status, Status::kPassed);
  // 10.0.4.0/24, 10.255.1.2, .3, .4: one next hop each.
  auto failed = where(rs, [](const TestResult& r) { return r.status == Status::kFailed; });
  EXPECT_EQ(failed.size(), 5u) << show(failed);
}

// Anycast (issue 46) on FIBs recorded from clos-2x4: 10.255.1.3/32 made an anycast address of
// the plan, its recorded routes judged against the nearest holders.
twin::plan::Plan with_anycast(const std::vector<std::string>& holders) {
  twin::plan::Plan p = plan();
  const std::string a = "10.255.1.3/32";
  for (auto& n : p.nodes) {
    std::erase(n.loopbacks, a);
    if (std::find(holders.begin(), holders.end(), n.name) == holders.end()) continue;
    n.loopbacks.push_back(a);
    n.anycast.push_back(a);
  }
  twin::plan::derive_expectations(p);
  return p;
}

TEST(Routes, AnAnycastAddressIsJudgedAgainstItsNearestHoldersTogether) {
  // Held by leaf3 and leaf4: spine1 should spread it over both; its recorded route (before
  // leaf4 announced it) goes to leaf3 only. leaf1 reaches either holder over both spines.
  Data fibs;
  fibs.emplace("spine1", fib("spine1-ip-route.json", "spine1-ip6-route.json"));
  fibs.emplace("leaf1", fib("leaf1-ip-route.json", "leaf1-ip6-route.json"));
  auto rs = twin::validators::evaluate_routes(with_anycast({"leaf3", "leaf4"}), fibs);
  const auto* width = find(rs, 1, "spine1", "10.255.1.3/32");
  ASSERT_NE(width, nullptr) << show(rs);
  EXPECT_EQ(width->status, Status::kFailed);
  EXPECT_EQ(width->expected, "2 next hops");
  EXPECT_EQ(width->observed, "1 next hop");
  EXPECT_EQ(width->message,
            "lost redundancy: anycast 10.255.1.3/32 (held by leaf3, leaf4) over 1 next hop, its "
            "nearest holders give 2 next hops");
  const auto* toward = find(rs, 2, "spine1", "10.255.1.3/32");
  ASSERT_NE(toward, nullptr);
  EXPECT_EQ(toward->status, Status::kPassed);  // leaf3 is a nearest holder
  EXPECT_EQ(toward->expected, "toward leaf3, leaf4");
  EXPECT_EQ(toward->observed, "toward leaf3");
  EXPECT_EQ(find(rs, 1, "leaf1", "10.255.1.3/32")->status, Status::kPassed);
  EXPECT_EQ(find(rs, 2, "leaf1", "10.255.1.3/32")->expected, "toward spine1, spine2");
  EXPECT_EQ(find(rs, 2, "leaf1", "10.255.1.3/32")->status, Status::kPassed);
  // The holders expect nothing of it; one result per test per non-holder, the rest unchanged.
  EXPECT_EQ(find(rs, 0, "leaf3", "10.255.1.3/32"), nullptr);
  auto failed = where(rs, [](const TestResult& r) { return r.status == Status::kFailed; });
  EXPECT_EQ(failed.size(), 1u) << show(failed);
}

TEST(Routes, AnAnycastRouteTowardARouterThatNoLongerHoldsItFailsAnycastNearest) {
  // Held by leaf4 alone now; spine1's recorded route still leads to leaf3.
  Data fibs;
  fibs.emplace("spine1", fib("spine1-ip-route.json", "spine1-ip6-route.json"));
  auto rs = twin::validators::evaluate_routes(with_anycast({"leaf4"}), fibs);
  const auto* toward = find(rs, 2, "spine1", "10.255.1.3/32");
  ASSERT_NE(toward, nullptr) << show(rs);
  EXPECT_EQ(toward->status, Status::kFailed);
  EXPECT_EQ(toward->test_name, "anycast-nearest");
  EXPECT_EQ(toward->expected, "toward leaf4");
  EXPECT_EQ(toward->observed, "toward leaf3");
  EXPECT_EQ(toward->message,
            "anycast 10.255.1.3/32 (held by leaf4) leaves spine1 toward leaf3, not on a shortest "
            "path to its nearest holders (toward leaf4)");
  EXPECT_EQ(find(rs, 1, "spine1", "10.255.1.3/32")->status, Status::kPassed);  // 1 of 1
}

// RoutesValidator::run reads both tables of every node through the probe and judges each node
// as evaluate_routes does; a table it cannot read is one error for the node, IPv4's first.
class RoutesProbe : public twin::validate::LabProbe {
 public:
  Result<json> frr_json(const twin::plan::Node&, const std::string&, const std::string&) override {
    return twin::harness_error("not expected");
  }
  Result<json> ip_json(const twin::plan::Node& node, const std::vector<std::string>& args) override {
    const bool v6 = !args.empty() && args[0] == "-6";
    {
      std::lock_guard<std::mutex> lock(mu);
      ++reads[node.name];
    }
    if (node.name == "leaf1")
      return twin::ok(read_json(v6 ? "leaf1-ip6-route.json" : "leaf1-ip-route.json"));
    if (node.name == "spine1" && !v6) return twin::harness_error("netlink: interrupted");
    if (node.name == "spine1") return twin::harness_error("netlink: second failure");
    if (node.name == "leaf2") return twin::ok(v6 ? json::object() : json::array());
    return twin::harness_error("not recorded");
  }
  std::vector<PingResult> ping(const twin::plan::Node&,
                               const std::vector<twin::validate::PingRequest>&) override {
    return {};
  }
  std::mutex mu;
  std::map<std::string, int> reads;
};

TEST(Routes, RunJudgesEachNodeFromBothTablesAndNamesWhatItCouldNotRead) {
  RoutesProbe probe;
  twin::validate::Context ctx{plan(), probe, 3};
  twin::validators::RoutesValidator v;
  auto rs = v.run(ctx);
  Data fibs;
  fibs.emplace("leaf1", fib("leaf1-ip-route.json", "leaf1-ip6-route.json"));
  auto want = where(twin::validators::evaluate_routes(plan(), fibs),
                    [](const TestResult& r) { return r.node == "leaf1"; });
  auto leaf1 = where(rs, [](const TestResult& r) { return r.node == "leaf1"; });
  ASSERT_EQ(leaf1.size(), 24u) << show(rs);
  for (size_t i = 0; i < leaf1.size(); ++i) {
    EXPECT_EQ(leaf1[i].status, Status::kPassed) << show(leaf1[i]);
    EXPECT_EQ(leaf1[i].peer, want[i].peer);
    EXPECT_EQ(leaf1[i].observed, want[i].observed);
  }
  auto spine1 = where(rs, [](const TestResult& r) { return r.node == "spine1"; });
  ASSERT_EQ(spine1.size(), 1u) << show(rs);
  EXPECT_EQ(spine1[0].status, Status::kError);
  EXPECT_EQ(spine1[0].message,
            "cannot read the FIB: spine1: `ip -j route show` failed: netlink: interrupted");
  auto leaf2 = where(rs, [](const TestResult& r) { return r.node == "leaf2"; });
  ASSERT_EQ(leaf2.size(), 1u) << show(rs);
  EXPECT_EQ(leaf2[0].message,
            "cannot read the FIB: leaf2: `ip -j -6 route show` did not return a list");
  // Results come in plan order, each node's together.
  std::vector<std::string> order;
  for (const auto& r : rs)
    if (order.empty() || order.back() != r.node) order.push_back(r.node);
  std::vector<std::string> frr;
  for (const auto& n : plan().nodes)
    if (n.kind == twin::topology::NodeKind::kFrr) frr.push_back(n.name);
  EXPECT_EQ(order, frr);
  // Both tables of every FRR node were read, whatever the first answered.
  for (const auto& n : frr) EXPECT_EQ(probe.reads[n], 2) << n;
}

// `ip` printing nothing is read as []: both tables empty is no data (a running kernel always
// has IPv6's own routes), while an empty IPv4 table beside a real IPv6 one is a FIB that lost
// its IPv4 routes, judged as such.
TEST(Routes, NoRouteAtAllIsNoDataButOneEmptyFamilyIsJudged) {
  Data fibs;
  fibs.emplace("leaf1", twin::ok(json::array()));
  auto rs = where(twin::validators::evaluate_routes(plan(), fibs),
                  [](const TestResult& r) { return r.node == "leaf1"; });
  ASSERT_EQ(rs.size(), 1u) << show(rs);
  EXPECT_EQ(rs[0].status, Status::kError);
  EXPECT_EQ(rs[0].message, "cannot read the FIB: leaf1: the kernel listed no route at all");

  fibs.erase("leaf1");
  fibs.emplace("leaf1", rec("leaf1-ip6-route.json"));
  auto v6only = where(twin::validators::evaluate_routes(plan(), fibs),
                      [](const TestResult& r) { return r.node == "leaf1"; });
  const auto* v4 = find(v6only, 0, "leaf1", "10.255.1.4/32");
  ASSERT_NE(v4, nullptr) << show(v6only);
  EXPECT_EQ(v4->status, Status::kFailed);
  const auto* v6 = find(v6only, 0, "leaf1", "fd00:255::104/128");
  ASSERT_NE(v6, nullptr);
  EXPECT_EQ(v6->status, Status::kPassed);
}

TEST(Routes, NexthopCount) {
  using twin::validators::nexthop_count;
  auto leaf1 = read_json("leaf1-ip-route.json");
  EXPECT_EQ(nexthop_count(leaf1[0]), 1);  // connected: dev only
  EXPECT_EQ(nexthop_count(leaf1[1]), 2);  // multipath
  EXPECT_EQ(nexthop_count(leaf1[2]), 1);  // via (RFC 5549 IPv6 next hop)
  EXPECT_EQ(nexthop_count(read_json("leaf1-ip6-route.json")[2]), 1);  // gateway
  EXPECT_EQ(nexthop_count(json::parse(R"({"nexthops": []})")), 0);
  EXPECT_EQ(nexthop_count(json::parse(R"({"dst": "10.9.0.0/16", "type": "blackhole"})")), 0);
  EXPECT_EQ(nexthop_count(json::object()), 0);
}

TEST(Routes, NormalizeDst) {
  using twin::validators::normalize_dst;
  EXPECT_EQ(normalize_dst("10.255.1.4"), "10.255.1.4/32");
  EXPECT_EQ(normalize_dst("fd00:255::104"), "fd00:255::104/128");
  EXPECT_EQ(normalize_dst("10.0.1.0/24"), "10.0.1.0/24");
  EXPECT_EQ(normalize_dst("2001:db8:1::/64"), "2001:db8:1::/64");
  EXPECT_EQ(normalize_dst("default"), "0.0.0.0/0");
  EXPECT_EQ(normalize_dst("default", true), "::/0");
}

// ---------------------------------------------------------------------------------------
// mtu

// Every node's `ip -j link show`: recorded for leaf1, spine1 and leaf4; leaf2/leaf3 have the
// same fabric ports as leaf4 and spine2 the same as spine1, so those recordings stand in;
// the servers' eth0 is written here.
Data all_links() {
  Data d;
  d.emplace("leaf1", rec("leaf1-ip-link.json"));
  d.emplace("spine1", rec("spine1-ip-link.json"));
  d.emplace("spine2", rec("spine1-ip-link.json"));
  d.emplace("leaf2", rec("leaf4-ip-link.json"));
  d.emplace("leaf3", rec("leaf4-ip-link.json"));
  d.emplace("leaf4", rec("leaf4-ip-link.json"));
  auto server = twin::ok(json::parse(R"([{"ifname": "lo", "mtu": 65536},
                                         {"ifname": "eth0", "mtu": 1500}])"));
  d.emplace("server1", server);
  d.emplace("server2", server);
  return d;
}

TEST(Mtu, RecordedLinkMtusPass) {
  auto rs = twin::validators::evaluate_link_mtu(plan(), all_links());
  ASSERT_EQ(rs.size(), 10u);
  for (const auto& r : rs) {
    EXPECT_EQ(r.status, Status::kPassed) << show(r);
    EXPECT_EQ(r.test, 0);
    EXPECT_EQ(r.test_name, "link-mtu");
  }
  EXPECT_EQ(rs[0].node, "leaf1");
  EXPECT_EQ(rs[0].peer, "leaf1:swp1 <-> spine1:swp1");
  EXPECT_EQ(rs[0].expected, "9216 on both ends");
  EXPECT_EQ(rs[0].observed, "leaf1:swp1=9216 spine1:swp1=9216");
  EXPECT_EQ(rs[8].observed, "leaf1:swp3=1500 server1:eth0=1500");
}

TEST(Mtu, OnlyRecordedNodes) {
  Data d;
  d.emplace("leaf1", rec("leaf1-ip-link.json"));
  d.emplace("spine1", rec("spine1-ip-link.json"));
  d.emplace("leaf4", rec("leaf4-ip-link.json"));
  auto rs = twin::validators::evaluate_link_mtu(plan(), d);
  ASSERT_EQ(rs.size(), 10u);
  // Links with both ends recorded: leaf1-spine1 (0) and leaf4-spine1 (6).
  for (size_t i = 0; i < rs.size(); ++i) {
    Status want = (i == 0 || i == 6) ? Status::kPassed : Status::kError;
    EXPECT_EQ(rs[i].status, want) << show(rs[i]);
    if (want == Status::kError) {
      EXPECT_EQ(rs[i].observed, "no data");
    }
  }
}

TEST(Mtu, MismatchNamesBothEnds) {
  auto d = all_links();
  auto leaf1 = read_json("leaf1-ip-link.json");
  ASSERT_EQ(leaf1[1]["ifname"], "swp1");
  leaf1[1]["mtu"] = 1500;
  d.erase("leaf1");
  d.emplace("leaf1", twin::ok(leaf1));
  auto rs = twin::validators::evaluate_link_mtu(plan(), d);
  EXPECT_EQ(rs[0].status, Status::kFailed);
  EXPECT_EQ(rs[0].observed, "leaf1:swp1=1500 spine1:swp1=9216");
  EXPECT_EQ(rs[0].message, "MTU mismatch: leaf1:swp1 1500 vs spine1:swp1 9216 (intended: 9216 on both ends)");
  for (size_t i = 1; i < rs.size(); ++i) EXPECT_EQ(rs[i].status, Status::kPassed) << show(rs[i]);
}

TEST(Mtu, BothEndsWrongAndInterfaceMissing) {
  auto d = all_links();
  auto leaf1 = read_json("leaf1-ip-link.json");
  auto spine1 = read_json("spine1-ip-link.json");
  leaf1[1]["mtu"] = 1500;
  spine1[1]["mtu"] = 1500;
  leaf1.erase(2);  // swp2 gone
  d.erase("leaf1");
  d.erase("spine1");
  d.emplace("leaf1", twin::ok(leaf1));
  d.emplace("spine1", twin::ok(spine1));
  auto rs = twin::validators::evaluate_link_mtu(plan(), d);
  EXPECT_EQ(rs[0].status, Status::kFailed);
  EXPECT_EQ(rs[0].message, "both ends have MTU 1500, the topology says 9216");
  EXPECT_EQ(rs[1].status, Status::kFailed);
  EXPECT_EQ(rs[1].observed, "leaf1:swp2=missing spine2:swp1=9216");
  EXPECT_EQ(rs[1].message, "interface missing on leaf1:swp2");
}

// Every namespace has lo: an interface list that came back empty is no data, an error naming
// the node and the command, not "interface missing" (a failure) on each of its links.
TEST(Mtu, AnEmptyInterfaceListIsNoData) {
  auto d = all_links();
  d.erase("spine1");
  d.emplace("spine1", twin::ok(json::array()));
  auto rs = twin::validators::evaluate_link_mtu(plan(), d);
  int spine1 = 0;
  for (const auto& r : rs) {
    if (r.peer.find("spine1:") == std::string::npos) {
      EXPECT_EQ(r.status, Status::kPassed) << show(r);
      continue;
    }
    ++spine1;
    EXPECT_EQ(r.status, Status::kError) << show(r);
    EXPECT_EQ(r.message,
              "cannot read the MTUs of this link: spine1: `ip -j link show` listed no interface, "
              "not even lo");
  }
  EXPECT_EQ(spine1, 4);  // its four leaf links
  d.erase("spine1");
  d.emplace("spine1", twin::harness_error("netns tw-rec-spine1: ip: exit 1"));
  const auto unread = twin::validators::evaluate_link_mtu(plan(), d);
  ASSERT_EQ(unread[0].peer, "leaf1:swp1 <-> spine1:swp1");
  EXPECT_EQ(unread[0].status, Status::kError);
  EXPECT_EQ(unread[0].message,
            "cannot read the MTUs of this link: spine1: `ip -j link show` failed: netns "
            "tw-rec-spine1: ip: exit 1");
}

Data recorded_addrs() {
  Data d;
  d.emplace("leaf1", rec("leaf1-ip-addr.json"));
  d.emplace("spine1", rec("spine1-ip-addr.json"));
  d.emplace("leaf4", rec("leaf4-ip-addr.json"));
  return d;
}

const PingProbe* find_probe(const std::vector<PingProbe>& ps, const std::string& node,
                            const std::string& subject) {
  for (const auto& p : ps)
    if (p.node == node && p.subject == subject) return &p;
  return nullptr;
}

TEST(Mtu, LinkDfProbesPingThePeersLinkLocalAtFullMtu) {
  std::vector<TestResult> unprobed;
  auto ps = twin::validators::link_df_probes(plan(), recorded_addrs(), &unprobed);
  const auto* p = find_probe(ps, "leaf1", "swp1 -> spine1:swp1");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->test, 1);
  EXPECT_EQ(p->test_name, "link-df");
  EXPECT_EQ(p->expected, "reply with DF at 9216 bytes");
  EXPECT_EQ(p->request.destination, "fe80::7f:ff:fe00:149");  // spine1 swp1, recorded
  EXPECT_EQ(p->request.interface, "swp1");
  EXPECT_EQ(p->request.payload_bytes, 9216 - 48);
  EXPECT_TRUE(p->request.dont_fragment);
  EXPECT_EQ(p->request.source, "");
  EXPECT_EQ(p->request.count, 2);

  const auto* back = find_probe(ps, "spine1", "swp1 -> leaf1:swp1");
  ASSERT_NE(back, nullptr);
  EXPECT_EQ(back->request.destination, "fe80::7f:ff:fe02:149");
  EXPECT_EQ(back->request.interface, "swp1");

  // The server pings leaf1's access port (1500).
  const auto* host = find_probe(ps, "server1", "eth0 -> leaf1:swp3");
  ASSERT_NE(host, nullptr);
  EXPECT_EQ(host->request.destination, "fe80::7f:ff:fe02:349");
  EXPECT_EQ(host->request.interface, "eth0");
  EXPECT_EQ(host->request.payload_bytes, 1500 - 48);

  // Pings toward nodes whose addresses were not read cannot be planned: errors, not passes.
  // 20 directions; toward leaf1, spine1, leaf4 ports: 3 + 4 + 3 = 10 probes.
  EXPECT_EQ(ps.size(), 10u);
  EXPECT_EQ(unprobed.size(), 10u);
  for (const auto& r : unprobed) {
    EXPECT_EQ(r.status, Status::kError) << show(r);
    EXPECT_THAT(r.message, StartsWith("cannot read the peer's addresses: "));
    EXPECT_THAT(r.message, HasSubstr(": `ip -j addr show` not probed"));
  }
  const auto* toward_spine2 = find(unprobed, 1, "leaf1", "swp2 -> spine2:swp1");
  ASSERT_NE(toward_spine2, nullptr);
  EXPECT_EQ(toward_spine2->message,
            "cannot read the peer's addresses: spine2: `ip -j addr show` not probed");
}

TEST(Mtu, LinkDfTowardAnEmptyAddressListIsAnError) {
  auto addrs = recorded_addrs();
  addrs.erase("spine1");
  addrs.emplace("spine1", twin::ok(json::array()));
  std::vector<TestResult> unprobed;
  auto ps = twin::validators::link_df_probes(plan(), addrs, &unprobed);
  EXPECT_EQ(find_probe(ps, "leaf1", "swp1 -> spine1:swp1"), nullptr);
  const auto* r = find(unprobed, 1, "leaf1", "swp1 -> spine1:swp1");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->status, Status::kError);
  EXPECT_EQ(r->observed, "no data");
  EXPECT_EQ(r->message,
            "cannot read the peer's addresses: spine1: `ip -j addr show` listed no interface, not "
            "even lo");
}

TEST(Mtu, LinkDfFallsBackToIpv4BelowIpv6MinimumMtu) {
  auto p = plan();
  p.links[8].mtu = 1000;  // leaf1:swp3 <-> server1:eth0
  auto ps = twin::validators::link_df_probes(p, recorded_addrs(), nullptr);
  const auto* host = find_probe(ps, "server1", "eth0 -> leaf1:swp3");
  ASSERT_NE(host, nullptr);
  EXPECT_EQ(host->request.destination, "10.0.1.1");
  EXPECT_EQ(host->request.payload_bytes, 1000 - 28);
  EXPECT_EQ(host->expected, "reply with DF at 1000 bytes");
}

TEST(Mtu, LinkDfPeerWithoutUsableAddressFails) {
  auto addrs = recorded_addrs();
  auto leaf1 = read_json("leaf1-ip-addr.json");
  ASSERT_EQ(leaf1[1]["ifname"], "swp1");
  leaf1[1]["addr_info"][0]["tentative"] = true;  // DAD not done: not usable
  addrs.erase("leaf1");
  addrs.emplace("leaf1", twin::ok(leaf1));
  std::vector<TestResult> unprobed;
  auto ps = twin::validators::link_df_probes(plan(), addrs, &unprobed);
  EXPECT_EQ(find_probe(ps, "spine1", "swp1 -> leaf1:swp1"), nullptr);
  const auto* r = find(unprobed, 1, "spine1", "swp1 -> leaf1:swp1");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->status, Status::kFailed);
  EXPECT_EQ(r->observed, "no address on peer");
  EXPECT_EQ(r->message, "leaf1:swp1 has no IPv6 link-local or IPv4 address to ping");
}

TEST(Mtu, PathMtuOnClos) {
  using twin::validators::path_mtu;
  EXPECT_EQ(path_mtu(plan(), "leaf1", "leaf2"), 9216);
  EXPECT_EQ(path_mtu(plan(), "leaf1", "spine1"), 9216);
  EXPECT_EQ(path_mtu(plan(), "spine1", "leaf4"), 9216);
  // Hosts are not on the fabric.
  EXPECT_EQ(path_mtu(plan(), "leaf1", "server1"), 0);

  auto ps = twin::validators::path_mtu_probes(plan(), 0);
  EXPECT_EQ(ps.size(), 28u);  // every FRR pair the fabric routes; not spine1<->spine2
  for (const auto& p : ps) {
    EXPECT_EQ(p.request.payload_bytes, 9188) << p.node << " " << p.subject;
    EXPECT_TRUE(p.request.dont_fragment);
    EXPECT_FALSE(p.subject.rfind("spine", 0) == 0 && p.node.rfind("spine", 0) == 0);
  }
  const auto* p = find_probe(ps, "leaf1", "leaf2 10.255.1.2");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->test, 2);
  EXPECT_EQ(p->test_name, "path-mtu");
  EXPECT_EQ(p->expected, "reply with DF at path MTU 9216");
  EXPECT_EQ(p->request.destination, "10.255.1.2");
  EXPECT_EQ(p->request.source, "10.255.1.1");
  EXPECT_EQ(p->request.interface, "");
  // Sampling keeps exactly max_pairs, deterministically.
  auto sampled = twin::validators::path_mtu_probes(plan(), 7);
  ASSERT_EQ(sampled.size(), 7u);
  EXPECT_EQ(sampled[0].subject, ps[0].subject);
  EXPECT_EQ(sampled[1].subject, ps[4].subject);  // every 4th of 28
}

TEST(Mtu, OneSmallLinkLowersThePathsThroughIt) {
  std::ifstream f(std::string(TWIN_DATA_DIR) + "/topologies/clos-2x4.yaml");
  std::stringstream ss;
  ss << f.rdbuf();
  std::string text = ss.str();
  const std::string from = "  - endpoints: [leaf1:swp1, spine1:swp1]\n";
  auto at = text.find(from);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, from.size(), "  - {endpoints: [leaf1:swp1, spine1:swp1], mtu: 1500}\n");
  twin::Diagnostics d;
  auto topo = twin::topology::load_topology_text(text, "clos.yaml",
                                                 std::string(TWIN_DATA_DIR) + "/topologies", d);
  ASSERT_TRUE(topo.has_value()) << d.format();
  auto p = twin::plan::make_plan(*topo);

  using twin::validators::path_mtu;
  EXPECT_EQ(path_mtu(p, "leaf1", "spine1"), 1500);
  EXPECT_EQ(path_mtu(p, "spine1", "leaf1"), 1500);
  EXPECT_EQ(path_mtu(p, "leaf1", "leaf2"), 1500);  // one of the two ECMP paths
  EXPECT_EQ(path_mtu(p, "leaf2", "leaf1"), 1500);
  EXPECT_EQ(path_mtu(p, "leaf1", "spine2"), 9216);
  EXPECT_EQ(path_mtu(p, "leaf2", "leaf3"), 9216);
  EXPECT_EQ(path_mtu(p, "spine1", "leaf2"), 9216);

  auto ps = twin::validators::path_mtu_probes(p, 0);
  EXPECT_EQ(find_probe(ps, "leaf1", "leaf2 10.255.1.2")->request.payload_bytes, 1500 - 28);
  EXPECT_EQ(find_probe(ps, "leaf1", "leaf2 10.255.1.2")->expected,
            "reply with DF at path MTU 1500");
  EXPECT_EQ(find_probe(ps, "leaf2", "leaf3 10.255.1.3")->request.payload_bytes, 9188);
}

// ---------------------------------------------------------------------------------------
// reachability

TEST(Reachability, AHostWhoseLinkIsIntendedDownIsNotProbed) {
  twin::plan::Plan p = plan();
  for (auto& n : p.nodes)
    for (auto& i : n.interfaces)
      if ((n.name == "leaf1" && i.name == "swp3") || (n.name == "server1" && i.name == "eth0"))
        i.up = false;
  twin::plan::derive_expectations(p);
  auto ps = twin::validators::reachability_probes(p, 0);
  auto host = std::count_if(ps.begin(), ps.end(), [](const PingProbe& x) { return x.test == 1; });
  EXPECT_EQ(host, 0);  // server1 <-> server2 was the only host pair
  EXPECT_EQ(ps.size(), 28u);  // the loopback mesh is untouched
  EXPECT_EQ(find_probe(ps, "server2", "server1 10.0.1.10"), nullptr);
}

TEST(Reachability, ProbesOnClos) {
  auto ps = twin::validators::reachability_probes(plan(), 0);
  auto loop = std::count_if(ps.begin(), ps.end(), [](const PingProbe& p) { return p.test == 0; });
  auto host = std::count_if(ps.begin(), ps.end(), [](const PingProbe& p) { return p.test == 1; });
  // 14 routed FRR pairs (spine1 and spine2 share an ASN) x (IPv4 + IPv6 loopback), one echo
  // each; server1 <-> server2 x 2 families, each way.
  EXPECT_EQ(loop, 28);
  EXPECT_EQ(host, 4);
  EXPECT_EQ(ps.size(), 32u);
  EXPECT_EQ(find_probe(ps, "spine1", "spine2 10.255.0.2"), nullptr);
  EXPECT_EQ(find_probe(ps, "spine2", "spine1 fd00:255::1"), nullptr);

  ASSERT_TRUE(twin::validators::sends_loopback_echo("spine1", "leaf1"));
  const auto* v4 = find_probe(ps, "spine1", "leaf1 10.255.1.1");
  ASSERT_NE(v4, nullptr);
  EXPECT_EQ(v4->test_name, "loopback-mesh");
  EXPECT_EQ(v4->expected, "echo reply (both ways)");
  EXPECT_EQ(v4->request.destination, "10.255.1.1");
  EXPECT_EQ(v4->request.source, "10.255.0.1");
  EXPECT_FALSE(v4->request.dont_fragment);
  // leaf1 and leaf4: one of them sends, and the reply proves the way back; the other sends no
  // echo of its own.
  ASSERT_TRUE(twin::validators::sends_loopback_echo("leaf1", "leaf4"));
  const auto* v6 = find_probe(ps, "leaf1", "leaf4 fd00:255::104");
  ASSERT_NE(v6, nullptr);
  EXPECT_EQ(v6->request.source, "fd00:255::101");
  EXPECT_EQ(find_probe(ps, "leaf4", "leaf1 fd00:255::101"), nullptr);

  const auto* h4 = find_probe(ps, "server1", "server2 10.0.4.10");
  ASSERT_NE(h4, nullptr);
  EXPECT_EQ(h4->test_name, "host-mesh");
  EXPECT_EQ(h4->request.destination, "10.0.4.10");
  EXPECT_EQ(h4->request.source, "");
  EXPECT_NE(find_probe(ps, "server1", "server2 2001:db8:4::10"), nullptr);
  EXPECT_NE(find_probe(ps, "server2", "server1 10.0.1.10"), nullptr);
  EXPECT_NE(find_probe(ps, "server2", "server1 2001:db8:1::10"), nullptr);

  // Sampling caps each family of probes separately (10 of the mesh, the 4 host probes).
  auto sampled = twin::validators::reachability_probes(plan(), 10);
  EXPECT_EQ(sampled.size(), 14u);
}

TEST(Reachability, TheLoopbackMeshAsksEveryPairOnceFromTheSendingEnd) {
  const auto ps = twin::validators::reachability_probes(plan(), 0);
  std::map<std::set<std::string>, std::set<std::string>> families;  // {node, node} -> v4 / v6
  for (const auto& p : ps) {
    if (p.test != 0) continue;
    const std::string dst = p.subject.substr(0, p.subject.find(' '));
    ASSERT_NE(p.node, dst);
    EXPECT_TRUE(twin::validators::sends_loopback_echo(p.node, dst)) << p.node << " " << dst;
    const bool v6 = p.request.destination.find(':') != std::string::npos;
    const bool first = families[{p.node, dst}].insert(v6 ? "v6" : "v4").second;
    EXPECT_TRUE(first)
        << "a second " << (v6 ? "IPv6" : "IPv4") << " echo between " << p.node << " and " << dst;
    // Loopback to loopback: the source is the sender's own loopback of the family.
    const auto* node = plan().find(p.node);
    ASSERT_NE(node, nullptr);
    bool own = false;
    for (const auto& l : node->loopbacks) own |= l.substr(0, l.find('/')) == p.request.source;
    EXPECT_TRUE(own) << p.node << " sources from " << p.request.source;
  }
  // Every routed pair of the six routers, once per family, spine1 and spine2 (one ASN) not.
  EXPECT_EQ(families.size(), 14u);
  for (const auto& [pair, fam] : families)
    EXPECT_EQ(fam, (std::set<std::string>{"v4", "v6"})) << *pair.begin() << " " << *pair.rbegin();
  EXPECT_EQ(families.count({"spine1", "spine2"}), 0u);
}

TEST(Reachability, WhichEndSendsDependsOnTheTwoNamesOnlyAndIsBalanced) {
  std::vector<std::string> names;
  for (int i = 1; i <= 16; ++i) names.push_back("spine" + std::to_string(i));
  for (int i = 1; i <= 496; ++i) names.push_back("leaf" + std::to_string(i));
  std::map<std::string, int> sends;
  for (const auto& a : names)
    for (const auto& b : names) {
      if (a == b) continue;
      const bool ab = twin::validators::sends_loopback_echo(a, b);
      ASSERT_NE(ab, twin::validators::sends_loopback_echo(b, a)) << a << " " << b;
      sends[a] += ab;
    }
  // 511 pairs each: no node sends for (nearly) all of its pairs or (nearly) none.
  for (const auto& [n, k] : sends) {
    EXPECT_GT(k, 511 * 2 / 5) << n;
    EXPECT_LT(k, 511 * 3 / 5) << n;
  }
}

TEST(Reachability, SeveralLoopbacksAndASingleFamilyNode) {
  twin::plan::Plan p = plan();
  for (auto& n : p.nodes) {
    if (n.name == "leaf1") n.loopbacks.push_back("10.255.9.1/32");
    if (n.name == "leaf2")
      std::erase_if(n.loopbacks, [](const std::string& l) { return l.find(':') != std::string::npos; });
  }
  twin::plan::derive_expectations(p);
  const auto ps = twin::validators::reachability_probes(p, 0);
  std::set<std::string> seen;                                      // node + subject: unique
  std::map<std::set<std::string>, std::set<std::set<std::string>>> addresses;  // pair -> {a, b}
  for (const auto& x : ps) {
    if (x.test != 0) continue;
    EXPECT_TRUE(seen.insert(x.node + " -> " + x.subject).second) << x.node << " -> " << x.subject;
    const std::string dst = x.subject.substr(0, x.subject.find(' '));
    const std::set<std::string> pair{x.node, dst};
    const std::set<std::string> ends{x.request.source, x.request.destination};
    EXPECT_TRUE(addresses[pair].insert(ends).second) << x.node << " -> " << x.subject;
  }
  // leaf1's two IPv4 loopbacks each meet spine1's (two echoes, whichever end sends them), and
  // the IPv6 pair once.
  EXPECT_EQ(addresses[(std::set<std::string>{"leaf1", "spine1"})],
            (std::set<std::set<std::string>>{{"10.255.1.1", "10.255.0.1"},
                                             {"10.255.9.1", "10.255.0.1"},
                                             {"fd00:255::101", "fd00:255::1"}}));
  // leaf2 has no IPv6 loopback: its pairs are asked over IPv4 only.
  EXPECT_EQ(addresses[(std::set<std::string>{"leaf2", "leaf3"})],
            (std::set<std::set<std::string>>{{"10.255.1.2", "10.255.1.3"}}));
}

// ---------------------------------------------------------------------------------------
// ping outcome mapping

PingProbe df_probe() {
  PingProbe p;
  p.test = 2;
  p.test_name = "path-mtu";
  p.node = "leaf1";
  p.subject = "leaf2 10.255.1.2";
  p.expected = "reply with DF at path MTU 9216";
  p.request.destination = "10.255.1.2";
  p.request.source = "10.255.1.1";
  p.request.dont_fragment = true;
  p.request.payload_bytes = 9188;
  return p;
}

PingResult outcome(PingOutcome o, const std::string& detail = "", int mtu = 0) {
  PingResult r;
  r.outcome = o;
  r.detail = detail;
  r.mtu = mtu;
  if (o == PingOutcome::kReply) r.rtt_ms = 0.123;
  return r;
}

TEST(PingResult, ReplyPasses) {
  auto r = twin::validate::ping_result("mtu", df_probe(), outcome(PingOutcome::kReply));
  EXPECT_EQ(r.status, Status::kPassed);
  EXPECT_EQ(r.validator, "mtu");
  EXPECT_EQ(r.test, 2);
  EXPECT_EQ(r.test_name, "path-mtu");
  EXPECT_EQ(r.node, "leaf1");
  EXPECT_EQ(r.peer, "leaf2 10.255.1.2");
  EXPECT_EQ(r.expected, "reply with DF at path MTU 9216");
  EXPECT_EQ(r.observed, "reply in 0.12 ms");
  EXPECT_EQ(r.message, "");
}

TEST(PingResult, NetworkProblemsFail) {
  auto t = twin::validate::ping_result("mtu", df_probe(), outcome(PingOutcome::kTimeout));
  EXPECT_EQ(t.status, Status::kFailed);
  EXPECT_EQ(t.observed, "timeout");
  EXPECT_EQ(t.message, "ping 10.255.1.2 from 10.255.1.1 with DF, 9188-byte payload: timeout");

  auto n =
      twin::validate::ping_result("mtu", df_probe(), outcome(PingOutcome::kNoRoute, "ENETUNREACH"));
  EXPECT_EQ(n.status, Status::kFailed);
  EXPECT_EQ(n.observed, "no-route");
  EXPECT_EQ(n.message,
            "ping 10.255.1.2 from 10.255.1.1 with DF, 9188-byte payload: no-route (ENETUNREACH)");

  auto b = twin::validate::ping_result("mtu", df_probe(),
                                       outcome(PingOutcome::kTooBig, "frag needed", 1500));
  EXPECT_EQ(b.status, Status::kFailed);
  EXPECT_EQ(b.observed, "too-big (path MTU 1500)");
  EXPECT_THAT(b.message, HasSubstr(": too-big (path MTU 1500) (frag needed)"));
  auto b0 = twin::validate::ping_result("mtu", df_probe(), outcome(PingOutcome::kTooBig));
  EXPECT_EQ(b0.observed, "too-big");
}

TEST(PingResult, HarnessProblemIsAnError) {
  auto e = twin::validate::ping_result(
      "mtu", df_probe(), outcome(PingOutcome::kError, "socket: Operation not permitted"));
  EXPECT_EQ(e.status, Status::kError);
  EXPECT_EQ(e.observed, "error");
  EXPECT_EQ(e.message,
            "ping 10.255.1.2 from 10.255.1.1 with DF, 9188-byte payload: error (socket: Operation "
            "not permitted)");
}

TEST(PingResult, LinkLocalWithInterface) {
  PingProbe p;
  p.node = "leaf1";
  p.request.destination = "fe80::7f:ff:fe00:149";
  p.request.interface = "swp1";
  auto r = twin::validate::ping_result("mtu", p, outcome(PingOutcome::kTimeout));
  EXPECT_EQ(r.message, "ping fe80::7f:ff:fe00:149%swp1, 56-byte payload: timeout");
}

// ---------------------------------------------------------------------------------------
// run_ping_probes and run_validation with fakes

// A LabProbe that answers pings from a table and must not be asked for anything else.
class FakeProbe : public twin::validate::LabProbe {
 public:
  Result<json> frr_json(const twin::plan::Node&, const std::string&, const std::string&) override {
    ++unexpected;
    return twin::harness_error("not expected");
  }
  Result<json> ip_json(const twin::plan::Node&, const std::vector<std::string>&) override {
    ++unexpected;
    return twin::harness_error("not expected");
  }
  std::vector<PingResult> ping(const twin::plan::Node& node,
                               const std::vector<twin::validate::PingRequest>& reqs) override {
    std::lock_guard<std::mutex> lock(mu);
    ++pings;
    std::vector<PingResult> out;
    if (node.name == "leaf2") return out;  // a prober that returns nothing
    for (const auto& r : reqs)
      out.push_back(
          outcome(r.destination == "10.255.1.4" ? PingOutcome::kTimeout : PingOutcome::kReply));
    return out;
  }
  std::mutex mu;
  int pings = 0;
  std::atomic<int> unexpected{0};
};

TEST(RunPingProbes, GroupsPerNodeAndKeepsProbeOrder) {
  FakeProbe probe;
  twin::validate::Context ctx{plan(), probe};
  std::vector<PingProbe> ps;
  for (const char* dst : {"10.255.1.2", "10.255.1.4", "10.255.1.3"}) {
    PingProbe p;
    p.node = "leaf1";
    p.subject = dst;
    p.request.destination = dst;
    ps.push_back(p);
  }
  PingProbe ghost;
  ghost.node = "leaf9";
  ghost.request.destination = "10.255.1.1";
  ps.push_back(ghost);
  PingProbe silent;
  silent.node = "leaf2";
  silent.request.destination = "10.255.1.1";
  ps.push_back(silent);

  auto rs = twin::validate::run_ping_probes(ctx, "reachability", ps);
  ASSERT_EQ(rs.size(), 5u);
  EXPECT_EQ(rs[0].status, Status::kPassed);
  EXPECT_EQ(rs[1].status, Status::kFailed);
  EXPECT_EQ(rs[1].peer, "10.255.1.4");
  EXPECT_EQ(rs[2].status, Status::kPassed);
  EXPECT_EQ(rs[3].status, Status::kError);
  EXPECT_THAT(rs[3].message, HasSubstr("(unknown node)"));
  EXPECT_EQ(rs[4].status, Status::kError);
  EXPECT_THAT(rs[4].message, HasSubstr("(no result from the prober)"));
  EXPECT_EQ(probe.pings, 2);  // leaf1 once, leaf2 once; leaf9 is not in the plan
  EXPECT_EQ(probe.unexpected, 0);
}

// A validator whose result for one subject follows a script, one status per attempt (the last
// repeats).
class ScriptedValidator : public twin::validate::Validator {
 public:
  ScriptedValidator(std::string name, std::vector<Status> script)
      : name_(std::move(name)), script_(std::move(script)) {}
  std::string name() const override { return name_; }
  std::vector<TestResult> run(twin::validate::Context&) override {
    Status s = script_[std::min(runs_, script_.size() - 1)];
    ++runs_;
    return {twin::validate::make_result(name_, 0, "scripted", s, "leaf1", "swp1", "x", "y", "")};
  }
  size_t runs() const { return runs_; }

 private:
  std::string name_;
  std::vector<Status> script_;
  size_t runs_ = 0;
};

// A family with nothing to test in this lab (no declared checks, no OSPF).
class EmptyValidator : public twin::validate::Validator {
 public:
  std::string name() const override { return "checks"; }
  std::vector<TestResult> run(twin::validate::Context&) override { return {}; }
};

// A 30 s window retried every 250 ms on a clock that moves only when slept on (no real time
// passes), progress lines collected in `progress`.
twin::validate::RunOptions retrying_options(std::vector<std::string>* progress) {
  static twin_test::FakeTime time;
  twin::validate::RunOptions opts;
  opts.converge_timeout = std::chrono::seconds(30);
  opts.time = &time;
  opts.progress = [progress](const std::string& s) { progress->push_back(s); };
  return opts;
}

TEST(RunValidation, AFamilyThatRanNoTestSaysSoNotPassed) {
  FakeProbe probe;
  twin::validate::Context ctx{plan(), probe};
  std::vector<std::unique_ptr<twin::validate::Validator>> vs;
  vs.push_back(std::make_unique<EmptyValidator>());
  vs.push_back(
      std::make_unique<ScriptedValidator>("skipping", std::vector<Status>{Status::kSkipped}));
  vs.push_back(std::make_unique<ScriptedValidator>("steady", std::vector<Status>{Status::kPassed}));
  std::vector<std::string> progress;
  auto report = twin::validate::run_validation(ctx, vs, retrying_options(&progress));
  EXPECT_EQ(progress, (std::vector<std::string>{"checks: no tests (attempt 1)",
                                                "skipping: no tests (attempt 1)",
                                                "steady: passed (attempt 1)"}));
}

TEST(RunValidation, FailingThenPassingEndsPassed) {
  FakeProbe probe;
  twin::validate::Context ctx{plan(), probe};
  std::vector<std::unique_ptr<twin::validate::Validator>> vs;
  vs.push_back(std::make_unique<ScriptedValidator>("steady", std::vector<Status>{Status::kPassed}));
  vs.push_back(std::make_unique<ScriptedValidator>(
      "flaky", std::vector<Status>{Status::kFailed, Status::kPassed}));
  auto* steady = static_cast<ScriptedValidator*>(vs[0].get());
  auto* flaky = static_cast<ScriptedValidator*>(vs[1].get());
  std::vector<std::string> progress;
  auto opts = retrying_options(&progress);

  auto report = twin::validate::run_validation(ctx, vs, opts);
  EXPECT_EQ(report.lab, "rec");
  ASSERT_EQ(report.results.size(), 2u);
  const auto& s = report.results[0];
  EXPECT_EQ(s.validator, "steady");
  EXPECT_EQ(s.status, Status::kPassed);
  EXPECT_EQ(s.attempts, 1);
  EXPECT_GE(s.time_to_pass_ms, 0);
  const auto& f = report.results[1];
  EXPECT_EQ(f.validator, "flaky");
  EXPECT_EQ(f.status, Status::kPassed);
  EXPECT_EQ(f.attempts, 2);
  EXPECT_GE(f.time_to_pass_ms, 0);
  EXPECT_GE(f.time_to_pass_ms, s.time_to_pass_ms);
  EXPECT_EQ(steady->runs(), 1u);  // settled families are not re-run
  EXPECT_EQ(flaky->runs(), 2u);
  EXPECT_EQ(progress, (std::vector<std::string>{"steady: passed (attempt 1)",
                                                "flaky: 1 not passing yet (attempt 1)",
                                                "flaky: passed (attempt 2)"}));
  EXPECT_EQ(report.exit_code(), 0);
  EXPECT_EQ(probe.unexpected, 0);
  EXPECT_EQ(probe.pings, 0);
}

// A scripted family of one plane: bgp-like (control_plane) or ping-like (rides on it).
class PlaneValidator : public ScriptedValidator {
 public:
  PlaneValidator(std::string name, std::vector<Status> script, bool control)
      : ScriptedValidator(std::move(name), std::move(script)), control_(control) {}
  bool control_plane() const override { return control_; }
  bool rides_on_control_plane() const override { return !control_; }

 private:
  bool control_;
};

TEST(RunValidation, PingFamiliesWaitUntilTheControlPlaneIsDone) {
  FakeProbe probe;
  twin::validate::Context ctx{plan(), probe};
  std::vector<std::unique_ptr<twin::validate::Validator>> vs;
  // The rider first: the runner still runs it after the control plane, in the same round.
  vs.push_back(std::make_unique<PlaneValidator>("reach", std::vector<Status>{Status::kPassed}, false));
  vs.push_back(std::make_unique<PlaneValidator>(
      "routes", std::vector<Status>{Status::kFailed, Status::kFailed, Status::kPassed}, true));
  auto* reach = static_cast<ScriptedValidator*>(vs[0].get());
  auto* routes = static_cast<ScriptedValidator*>(vs[1].get());
  std::vector<std::string> progress;
  auto opts = retrying_options(&progress);
  auto report = twin::validate::run_validation(ctx, vs, opts);
  EXPECT_EQ(routes->runs(), 3u);
  EXPECT_EQ(reach->runs(), 1u);  // not while routes were missing
  ASSERT_EQ(report.results.size(), 2u);
  EXPECT_EQ(report.results[0].validator, "reach");  // the families' order, not the run order
  EXPECT_EQ(report.results[0].attempts, 1);
  EXPECT_EQ(report.results[1].attempts, 3);
  EXPECT_EQ(progress, (std::vector<std::string>{"routes: 1 not passing yet (attempt 1)",
                                                "routes: passed (attempt 3)",
                                                "reach: passed (attempt 1)"}));
  EXPECT_EQ(report.exit_code(), 0);

  // On a network known to be settled (hold_riders off) the riders run alongside, from the
  // first round.
  std::vector<std::unique_ptr<twin::validate::Validator>> settled;
  settled.push_back(std::make_unique<PlaneValidator>("reach", std::vector<Status>{Status::kPassed}, false));
  settled.push_back(std::make_unique<PlaneValidator>(
      "routes", std::vector<Status>{Status::kFailed, Status::kPassed}, true));
  opts.hold_riders = false;
  progress.clear();
  (void)twin::validate::run_validation(ctx, settled, opts);
  EXPECT_EQ(progress, (std::vector<std::string>{"routes: 1 not passing yet (attempt 1)",
                                                "reach: passed (attempt 1)",
                                                "routes: passed (attempt 2)"}));
  opts.hold_riders = true;

  // A control plane that stays broken past its window: the riders still run, once, in the
  // round its results became final.
  std::vector<std::unique_ptr<twin::validate::Validator>> broken;
  broken.push_back(std::make_unique<PlaneValidator>("bgp", std::vector<Status>{Status::kFailed}, true));
  broken.push_back(std::make_unique<PlaneValidator>("reach", std::vector<Status>{Status::kFailed}, false));
  opts.converge_timeout = std::chrono::milliseconds(0);
  progress.clear();
  auto r2 = twin::validate::run_validation(ctx, broken, opts);
  EXPECT_EQ(static_cast<ScriptedValidator*>(broken[0].get())->runs(), 1u);
  EXPECT_EQ(static_cast<ScriptedValidator*>(broken[1].get())->runs(), 1u);
  ASSERT_EQ(r2.results.size(), 2u);
  EXPECT_EQ(r2.results[1].status, Status::kFailed);
  EXPECT_EQ(r2.results[1].attempts, 1);
  EXPECT_EQ(r2.exit_code(), 1);
  // Out of time is not passed.
  EXPECT_EQ(progress, (std::vector<std::string>{"bgp: 1 not passing yet (attempt 1)",
                                                "reach: 1 not passing yet (attempt 1)"}));
}

TEST(RunValidation, AlwaysFailingEndsFailedWhenTheWindowCloses) {
  FakeProbe probe;
  twin::validate::Context ctx{plan(), probe};
  std::vector<std::unique_ptr<twin::validate::Validator>> vs;
  vs.push_back(std::make_unique<ScriptedValidator>("broken", std::vector<Status>{Status::kFailed}));
  vs.push_back(std::make_unique<ScriptedValidator>("blind", std::vector<Status>{Status::kError}));
  twin_test::FakeTime time;
  twin::validate::RunOptions opts;
  opts.converge_timeout = std::chrono::milliseconds(0);
  opts.time = &time;
  auto report = twin::validate::run_validation(ctx, vs, opts);
  EXPECT_EQ(time.slept(), std::chrono::milliseconds(0));  // no window: one attempt, no wait
  ASSERT_EQ(report.results.size(), 2u);
  EXPECT_EQ(report.results[0].status, Status::kFailed);
  EXPECT_EQ(report.results[0].attempts, 1);
  EXPECT_EQ(report.results[0].time_to_pass_ms, -1);
  EXPECT_EQ(report.results[1].status, Status::kError);
  EXPECT_EQ(report.results[1].time_to_pass_ms, -1);
  EXPECT_GE(report.duration_ms, 0);
  EXPECT_EQ(report.exit_code(), 1);  // failed wins over error
  EXPECT_EQ(probe.unexpected, 0);
}

TEST(ValidationReport, ExitCodeRules) {
  auto with = [](std::vector<Status> ss) {
    twin::validate::Report r;
    for (auto s : ss)
      r.results.push_back(twin::validate::make_result("v", 0, "t", s, "", "", "", "", ""));
    return r;
  };
  EXPECT_EQ(with({}).exit_code(), 3);  // nothing checked approves nothing
  EXPECT_EQ(with({Status::kPassed, Status::kSkipped}).exit_code(), 0);
  EXPECT_EQ(with({Status::kPassed, Status::kError}).exit_code(), 3);
  EXPECT_EQ(with({Status::kError, Status::kFailed, Status::kPassed}).exit_code(), 1);
  EXPECT_EQ(with({Status::kFailed}).exit_code(), 1);
  auto r = with({Status::kPassed, Status::kFailed, Status::kFailed, Status::kSkipped});
  EXPECT_EQ(r.count(Status::kFailed), 2);
  EXPECT_EQ(r.count(Status::kPassed), 1);
  EXPECT_EQ(r.count(Status::kError), 0);
  EXPECT_STREQ(twin::validate::to_string(Status::kSkipped), "skipped");
}

}  // namespace
