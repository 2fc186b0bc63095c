// Integration tests of link rates and traffic (root; real namespaces, FRR 8.4, iperf3 flows):
// topologies/ai-rail-2x4.yaml (4 servers x 2 rails, 50 Mbit/s server ports, 100 Mbit/s fabric)
// comes up with a token bucket on every port and a hash seed per router; `twin traffic` runs
// real flows whose goodput stays under the ports' rates and near their fair share, spreads
// them over both spines, and measures latency under load; the `traffic` family (the lab has
// `traffic:`) passes, and fails ecmp-balance naming the missing next hop once a leaf installs
// one path (`maximum-paths 1`, restored after); a link's `delay:` is netem's where the kernel has
// it, a warning naming what runs where it has not. Figures are asserted with margins, never exact.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/integration/cli_support.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::HasSubstr;
using namespace twin_it;

namespace {

struct RailLab {
  static constexpr const char* kTopology = "ai-rail-2x4.yaml";
  static constexpr const char* kTag = "rail";
};
using TrafficRail = SharedLabSuite<RailLab>;

std::string in_node(const std::string& lab, const std::string& node, const std::string& cmd) {
  return sh("ip netns exec tw-" + lab + "-" + node + " " + cmd).out;
}

const json* result(const json& rep, const std::string& test, const std::string& node = "") {
  for (const auto& r : rep["results"])
    if (r["validator"] == "traffic" && r["test_name"] == test &&
        (node.empty() || r["node"] == node))
      return &r;
  return nullptr;
}

}  // namespace

TEST_F(TrafficRail, EveryPortIsShapedAndEveryRouterHashesWithItsOwnSeed) {
  const std::string& lab = shared_.lab;
  auto q = json::parse(in_node(lab, "server1", "tc -j qdisc show dev eth0"));
  ASSERT_FALSE(q.empty());
  EXPECT_EQ(q[0]["kind"], "tbf");
  EXPECT_EQ(q[0]["options"]["rate"], 50'000'000 / 8);  // bytes/s, as tc prints it
  auto f = json::parse(in_node(lab, "rail1-leaf1", "tc -j qdisc show dev swp1"));
  EXPECT_EQ(f[0]["options"]["rate"], 100'000'000 / 8);
  EXPECT_EQ(in_node(lab, "rail1-leaf1", "cat /proc/sys/net/ipv4/fib_multipath_hash_policy"), "3\n");
  EXPECT_EQ(in_node(lab, "rail1-leaf1", "cat /proc/sys/net/ipv4/fib_multipath_hash_fields"),
            "55\n");
  if (fs::exists("/proc/sys/net/ipv4/fib_multipath_hash_seed")) {
    EXPECT_NE(in_node(lab, "rail1-leaf1", "cat /proc/sys/net/ipv4/fib_multipath_hash_seed"),
              in_node(lab, "rail1-leaf2", "cat /proc/sys/net/ipv4/fib_multipath_hash_seed"));
  }
}

TEST_F(TrafficRail, PairsGetTheirFairShareOverBothSpines) {
  auto r = twin("traffic --lab " + shared_.lab +
                " --pattern pairs --duration 3s --flows-per-pair 6 --json");
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  auto j = json::parse(r.out);
  // server1<->server3 and server2<->server4, on each of 2 rails: 8 pairs of 6 flows.
  EXPECT_EQ(j["pairs"], 8);
  ASSERT_EQ(j["flows"].size(), 48u);
  EXPECT_EQ(j["fair_basis"], "link rates");
  EXPECT_THAT(j["hash_policy"].get<std::string>(), HasSubstr("policy 3 (fields 0x37)"));
  // Each server port sends 6 flows at 50 Mbit/s: ~8 Mbit/s of goodput each, never more than
  // the port's rate.
  for (const auto& f : j["flows"]) {
    EXPECT_NEAR(f["fair_bps"].get<double>(), 50e6 * 1448 / 1514 / 6, 1e3) << f.dump();
    EXPECT_LT(f["bps"].get<double>(), 50e6) << f.dump();
  }
  double aggregate = j["aggregate_bps"];
  EXPECT_GT(aggregate, 0.6 * 8 * 50e6 * 1448 / 1514);  // 8 ports' worth, with a margin
  EXPECT_LT(aggregate, 8 * 50e6);
  EXPECT_GT(j["slowest_ratio"].get<double>(), 0.25);
  // Every cross-group flow leaves its rail leaf over one of two spines: both carry some.
  int groups = 0;
  for (const auto& g : j["ecmp_groups"]) {
    ++groups;
    EXPECT_EQ(g["ports"].size(), 2u) << g.dump();
    EXPECT_TRUE(g["idle"].empty()) << g.dump();
  }
  EXPECT_EQ(groups, 4);  // each rail leaf splits toward the spines
  EXPECT_GT(j["latency"]["loaded"]["samples"].get<long>(), 100);
  EXPECT_GT(j["latency"]["unloaded"]["p50_ms"].get<double>(), 0);
  EXPECT_TRUE(j["problems"].empty());
}

TEST_F(TrafficRail, TheFamilyPassesThenNamesAMissingEcmpMember) {
  const std::string& lab = shared_.lab;
  auto v = twin("validate --lab " + lab + " --only traffic --json --no-causes");
  auto rep = json::parse(v.out);
  ASSERT_EQ(v.code, 0) << v.out;
  ASSERT_NE(result(rep, "effective-bandwidth"), nullptr);
  EXPECT_EQ((*result(rep, "effective-bandwidth"))["status"], "passed");
  EXPECT_EQ((*result(rep, "tail-latency"))["status"], "passed")
      << (*result(rep, "tail-latency")).dump();
  // One leaf installs a single path (BGP `maximum-paths 1`): every route keeps its next hop
  // and the servers still reach each other, but one spine's uplink carries nothing. (L3-only
  // hashing is no certain fault here: two server pairs cross the leaf, and with a seed of the
  // lab's name their addresses land on one uplink or on both, by chance.)
  const std::string leaf = "rail1-leaf1";
  auto paths = [&](const char* n) {
    return "exec --lab " + lab + " " + leaf +
           " -- vtysh -c 'configure terminal' -c 'router bgp 4200000001' -c 'address-family "
           "ipv4 unicast' -c '" +
           n + "'";
  };
  auto nexthops = [&] {
    auto r = json::parse(in_node(lab, leaf, "ip -j route show match 10.101.3.10"));
    for (const auto& e : r)
      if (e.value("dst", "") == "10.101.3.0/24")
        return e.contains("nexthops") ? static_cast<int>(e["nexthops"].size()) : 1;
    return 0;
  };
  ASSERT_EQ(twin(paths("maximum-paths 1")).code, 0);
  ASSERT_TRUE(eventually([&] { return nexthops() == 1; }));
  auto bad = twin("validate --lab " + lab + " --only traffic --json --no-causes");
  ASSERT_EQ(twin(paths("no maximum-paths 1")).code, 0);
  EXPECT_TRUE(eventually([&] { return nexthops() == 2; }));
  auto brep = json::parse(bad.out);
  EXPECT_EQ(bad.code, 1) << bad.out;
  const json* g = result(brep, "ecmp-balance", leaf);
  ASSERT_NE(g, nullptr) << bad.out;
  EXPECT_EQ((*g)["status"], "failed") << g->dump();
  EXPECT_THAT((*g)["message"].get<std::string>(),
              HasSubstr("likely cause: a missing ECMP member: rail1-leaf1's route to 10.101.3.10 "
                        "has 1 of 2 next hops"));
}

TEST_F(TrafficRail, UdpAtAStatedRateAndBadInput) {
  auto r = twin("traffic --lab " + shared_.lab +
                " --pattern ring --protocol udp --rate 10M --duration 1s --json");
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = json::parse(r.out);
  EXPECT_EQ(j["protocol"], "udp");
  for (const auto& f : j["flows"]) {
    EXPECT_NEAR(f["sent_bps"].get<double>(), 10e6, 1e6) << f.dump();
    EXPECT_GT(f["packets"].get<long>(), 0);
  }
  auto bad = twin("traffic --lab " + shared_.lab + " --pattern mesh");
  EXPECT_EQ(bad.code, 2);
  EXPECT_THAT(bad.err, HasSubstr("unknown pattern 'mesh'; expected one of: all-to-all, ring, "
                                 "incast, pairs"));
  auto to = twin("traffic --lab " + shared_.lab + " --pattern incast --to spine1");
  EXPECT_EQ(to.code, 2);
  EXPECT_THAT(to.err, HasSubstr("--to spine1 is not an endpoint of this lab"));
}

// The web page's Traffic control in headless Chromium (browser_check.py --traffic), through a
// `twin serve` of this test's: a 2 s pairs run started from the page colours links by their
// utilisation while it runs (the ports' counters read each second) and after (the report's),
// lists its 8 flows, each with its throughput, and the rail leaves' 4 ECMP groups, and its
// History entry shows the same tables. Without Debian's browser stack it skips, saying which
// piece is missing (fails where TWIN_REQUIRE lists browser).
TEST_F(TrafficRail, ThePageRunsTrafficAndColoursLinksByUtilisation) {
  const std::string check = browser_check();
  TWIN_SKIP_WITHOUT_BROWSER();
  Server server;
  ASSERT_EQ(server.start({"--listen", "127.0.0.1:0"}), "");
  std::string shot = fs::current_path().string() + "/traffic-page.png";
  fs::remove(shot);
  auto r = sh(check + " 'http://127.0.0.1:" + std::to_string(server.port) +
              "/?token=" + server.token + "' " + shared_.lab +
              " --nodes 10 --links 16 --traffic pairs --duration 2 --flows 8 --groups 4"
              " --screenshot " +
              shot);
  server.stop();
  if (r.code == 77) TWIN_SKIP_WITHOUT("browser", browser_skip_reason(r));
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  auto j = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out << r.err;
  EXPECT_EQ(j.value("ok", false), true) << r.out;
  EXPECT_EQ(j.value("flow_rows", 0), 8);
  EXPECT_EQ(j["groups"].size(), 4u) << r.out;
  EXPECT_FALSE(j["live_busy_links"].empty()) << r.out;
  EXPECT_TRUE(fs::exists(shot)) << "screenshot artefact " << shot;
}

TEST(TrafficDelay, ADelayIsNetemsOrAWarningNamingWhatRuns) {
  if (!root()) TWIN_SKIP_WITHOUT("root", "needs root (network namespaces, FRR)");
  const std::string lab = unique_lab("delay");
  fs::path dir = fs::temp_directory_path() / ("twin-delay-" + lab);
  fs::create_directories(dir);
  std::ofstream(dir / "t.yaml") << "version: 1\nname: d\n"
                                   "nodes:\n  r1: {asn: 65001, loopback: 10.255.0.1/32}\n"
                                   "  r2: {asn: 65002, loopback: 10.255.0.2/32}\n"
                                   "links:\n  - endpoints: [r1:swp1, r2:swp1]\n"
                                   "    bandwidth: 20M\n    delay: 5ms\n";
  LabGuard guard{lab};
  auto up = twin("up " + (dir / "t.yaml").string() + " --name " + lab + " --json");
  ASSERT_EQ(up.code, 0) << up.err;
  auto q = json::parse(in_node(lab, "r1", "tc -j qdisc show dev swp1"));
  if (sh("unshare --net tc qdisc add dev lo root netem delay 1ms").code == 0) {
    EXPECT_EQ(q[0]["kind"], "netem");  // and the bucket below it
  } else {
    // This kernel has no netem: the rate runs, the delay does not, and up said both.
    EXPECT_EQ(q[0]["kind"], "tbf");
    EXPECT_THAT(up.err, HasSubstr("link r1:swp1 -- r2:swp1 asks a delay of 5 ms; this kernel has "
                                  "no netem qdisc"));
    EXPECT_THAT(up.err, HasSubstr("runs without added delay"));
    EXPECT_THAT(up.out, HasSubstr("asks a delay of 5 ms"));  // the JSON's notes
  }
  expect_down_clean(lab);
  fs::remove_all(dir);
}

namespace {

// `twin run` of a scenario of scenarios/ai-rail (its own lab, brought up and down), as JSON.
json run_rail_scenario(const std::string& name, const std::string& lab, int* code) {
  auto r = twin("run " + kRepo + "/scenarios/ai-rail/" + name + ".yaml --name " + lab + " --json");
  *code = r.code;
  json j = json::parse(r.out, nullptr, false);
  if (j.is_discarded()) ADD_FAILURE() << "not JSON: " << r.out << r.err;
  return j;
}

}  // namespace

// The gate with the traffic family (scenarios/ai-rail): `maximum-paths 1` on one leaf keeps
// every route, session and ping, but its two servers now share one 60 Mbit/s uplink for
// 100 Mbit/s — rejected as bandwidth-lost before anything else, measured before and after, and
// rolled back.
TEST(TrafficGate, OneUplinkFewerIsRejectedAsBandwidthLost) {
  if (!root()) TWIN_SKIP_WITHOUT("root", "needs root (network namespaces, FRR, iperf3)");
  const std::string lab = unique_lab("tgr");
  int code = -1;
  json j = run_rail_scenario("reject-single-path-rail1-leaf1", lab, &code);
  EXPECT_EQ(code, 0) << j.dump().substr(0, 3000);  // decided as expected
  EXPECT_EQ(j["verdict"], "reject");
  EXPECT_EQ(j["scenario"]["met"], true) << j["scenario"].dump();
  ASSERT_FALSE(j["reasons"].empty());
  EXPECT_EQ(j["reasons"][0]["category"], "bandwidth-lost");
  EXPECT_EQ(j["reasons"][0]["rank"], 9);
  bool shrunk = false;
  for (const auto& r : j["reasons"]) shrunk = shrunk || r["category"] == "ecmp-shrunk";
  EXPECT_TRUE(shrunk) << j["reasons"].dump();
  ASSERT_EQ(j["bandwidth"].size(), 1u) << j["bandwidth"].dump();
  const json& b = j["bandwidth"][0];
  EXPECT_EQ(b["pattern"], "pairs");
  EXPECT_EQ(b["lost"], true);
  EXPECT_EQ(b["before"]["flows"], 128);  // 8 pairs x 16 flows
  // Before: every pair near its 47.8 Mbit/s of goodput (50 Mbit/s ports); after: the pairs
  // through rail1-leaf1's one uplink share 60 Mbit/s.
  EXPECT_GT(b["before"]["slowest_bps"].get<double>(), 35e6) << b.dump();
  EXPECT_LT(b["after"]["slowest_bps"].get<double>(), 0.8 * b["before"]["slowest_bps"].get<double>())
      << b.dump();
  // The rollback is proven with the same pattern: bandwidth back within the allowance.
  EXPECT_EQ(j["rollback_ok"], true) << j["rollback_detail"];
  ASSERT_EQ(j["rollback"]["bandwidth"].size(), 1u);
  EXPECT_GT(j["rollback"]["bandwidth"][0]["slowest_bps"].get<double>(),
            0.8 * b["before"]["slowest_bps"].get<double>());
  EXPECT_TRUE(leftovers(lab).empty());
}

// The same measurement on a change that does not touch the data path's capacity: approved,
// its bandwidth shown before and after, within the allowance.
TEST(TrafficGate, AServicePrefixKeepsItsBandwidthAndIsApproved) {
  if (!root()) TWIN_SKIP_WITHOUT("root", "needs root (network namespaces, FRR, iperf3)");
  const std::string lab = unique_lab("tga");
  int code = -1;
  json j = run_rail_scenario("approve-service-prefix", lab, &code);
  EXPECT_EQ(code, 0) << j.dump().substr(0, 3000);
  EXPECT_EQ(j["verdict"], "approve") << j["reasons"].dump();
  ASSERT_EQ(j["bandwidth"].size(), 1u);
  const json& b = j["bandwidth"][0];
  EXPECT_EQ(b["lost"], false);
  EXPECT_GT(b["after"]["slowest_bps"].get<double>(),
            0.8 * b["before"]["slowest_bps"].get<double>());
  EXPECT_GT(b["after"]["aggregate_bps"].get<double>(), 0.6 * 8 * 50e6 * 1448 / 1514);
  // The after-change validation ran the family (the lab's topology has no `traffic:`).
  int family = 0;
  for (const auto& r : j["after"]["results"]) family += r["validator"] == "traffic";
  EXPECT_GE(family, 4);
  EXPECT_TRUE(leftovers(lab).empty());
}
