// What a lab of the user's own iBGP configs is expected to route: routes learned over iBGP
// (RFC 4271 §9.2: not passed to other iBGP peers; RFC 4456: unless reflected), their next hop
// resolved on the session's link or by the IGP, and administrative distance between eBGP, the
// IGP and iBGP; and the note a validation gives when routers are expected to reach nothing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "twin/plan/plan.hpp"
#include "twin/topology/frr_conf.hpp"
#include "twin/topology/loader.hpp"
#include "twin/validate/validator.hpp"
#include "validators/reachability/reachability.hpp"

namespace fs = std::filesystem;
using ::testing::HasSubstr;

namespace {

class IbgpLab : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("twin-ibgp-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  void write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
  }
  twin::plan::Plan plan(const std::string& yaml) {
    twin::Diagnostics d;
    auto t =
        twin::topology::load_topology_text(yaml, (dir_ / "lab.yaml").string(), dir_.string(), d);
    if (!t) {
      ADD_FAILURE() << d.format();
      return {};
    }
    return twin::plan::make_plan(*t);
  }
  static int ecmp(const twin::plan::PathTable& t, const std::string& n, const std::string& o) {
    auto it = t.find({n, o});
    return it == t.end() ? 0 : it->second.ecmp;
  }
  fs::path dir_;
};

// Two routers of one AS on one link, numbered iBGP, each announcing its loopback: the
// published "two routers exchange loopbacks" lab.
const char* kPair = R"(version: 1
name: pair
nodes:
  r1: {loopback: 10.0.255.1/32, config: r1.conf}
  r2: {loopback: 10.0.255.2/32, config: r2.conf}
links:
  - endpoints: [r1:eth1, r2:eth1]
)";

std::string pair_conf(int me, bool announce) {
  const std::string other = me == 1 ? "2" : "1";
  return "interface eth1\n ip address 10.0.12." + std::to_string(me) +
         "/24\nexit\ninterface lo\n ip address 10.0.255." + std::to_string(me) +
         "/32\nexit\nrouter bgp 65000\n neighbor 10.0.12." + other + " remote-as 65000\n" +
         (announce ? " address-family ipv4 unicast\n  network 10.0.255." + std::to_string(me) +
                         "/32\n exit-address-family\n"
                   : std::string()) +
         "exit\n";
}

TEST_F(IbgpLab, TwoRoutersExchangingLoopbacksAreExpectedToReachEachOther) {
  write("r1.conf", pair_conf(1, true));
  write("r2.conf", pair_conf(2, true));
  auto p = plan(kPair);
  ASSERT_EQ(p.sessions.size(), 2u);
  EXPECT_TRUE(p.sessions[0].ibgp);
  auto paths = twin::plan::expected_paths(p, 4);
  // The peer's own routes, next hop on the session's link: one path each way.
  EXPECT_EQ(ecmp(paths, "r1", "r2"), 1);
  EXPECT_EQ(ecmp(paths, "r2", "r1"), 1);
  // So the loopback mesh pings them, and nothing is said of what was not checked.
  auto probes = twin::validators::reachability_probes(p, 0);
  int mesh = 0;
  for (const auto& pr : probes) mesh += pr.test == 0;
  EXPECT_EQ(mesh, 1);  // one echo for the pair
  std::vector<twin::validate::TestResult> results{twin::validate::make_result(
      "reachability", 0, "loopback-mesh", twin::validate::Status::kPassed, "r1", "r2 10.0.255.2",
      "", "", "")};
  EXPECT_TRUE(twin::validators::reachability_coverage(p, results).empty());
}

TEST_F(IbgpLab, RoutersThatAnnounceNothingAreExpectedNothingAndTheReportSaysSo) {
  write("r1.conf", pair_conf(1, false));
  write("r2.conf", pair_conf(2, false));
  auto p = plan(kPair);
  // Routes could flow (the session is there), but no loopback is announced: nothing to ping.
  EXPECT_TRUE(p.prefixes.empty());
  int mesh = 0;
  for (const auto& pr : twin::validators::reachability_probes(p, 0)) mesh += pr.test == 0;
  EXPECT_EQ(mesh, 0);
  EXPECT_THAT(twin::plan::render_plan_text(p),
              HasSubstr("Reachability expected: 0 of 1 router pairs routed both ways (their "
                        "loopbacks pinged); expected to reach no other router: r1, r2"));
  auto notes = twin::validators::reachability_coverage(p, {});
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0].severity, "warning");
  EXPECT_THAT(notes[0].text, HasSubstr("no reachability expectation: none of the 2 routers"));
}

// rr1 between three routers on numbered links, no IGP. Who learns what follows reflection and
// whether the next hop resolves.
const char* kStar = R"(version: 1
name: star
nodes:
  rr1: {loopback: 10.0.255.1/32, config: rr1.conf}
  c1: {loopback: 10.0.255.11/32, config: c1.conf}
  c2: {loopback: 10.0.255.12/32, config: c2.conf}
links:
  - endpoints: [rr1:eth1, c1:eth1]
  - endpoints: [rr1:eth2, c2:eth1]
)";

std::string client_conf(int k) {
  const std::string me = std::to_string(k);
  return "interface eth1\n ip address 10.0." + me +
         ".2/30\nexit\ninterface lo\n ip address 10.0.255.1" + me +
         "/32\nexit\nrouter bgp 65000\n neighbor 10.0." + me +
         ".1 remote-as internal\n address-family ipv4 unicast\n  network 10.0.255.1" + me +
         "/32\n exit-address-family\nexit\n";
}

std::string rr_conf(const std::string& per_client) {
  std::string s =
      "interface eth1\n ip address 10.0.1.1/30\nexit\ninterface eth2\n ip address 10.0.2.1/30\n"
      "exit\ninterface lo\n ip address 10.0.255.1/32\nexit\nrouter bgp 65000\n"
      " neighbor 10.0.1.2 remote-as internal\n neighbor 10.0.2.2 remote-as internal\n"
      " address-family ipv4 unicast\n  network 10.0.255.1/32\n";
  for (const char* c : {"10.0.1.2", "10.0.2.2"})
    if (!per_client.empty()) s += "  neighbor " + std::string(c) + " " + per_client + "\n";
  return s + " exit-address-family\nexit\n";
}

TEST_F(IbgpLab, WithoutReflectionClientsDoNotLearnEachOther) {
  write("rr1.conf", rr_conf(""));
  write("c1.conf", client_conf(1));
  write("c2.conf", client_conf(2));
  auto paths = twin::plan::expected_paths(plan(kStar), 4);
  EXPECT_EQ(ecmp(paths, "rr1", "c1"), 1);
  EXPECT_EQ(ecmp(paths, "c1", "rr1"), 1);
  EXPECT_EQ(ecmp(paths, "c1", "c2"), 0);  // RFC 4271 §9.2: not passed between iBGP peers
}

TEST_F(IbgpLab, AReflectedRouteNeedsANextHopTheClientResolves) {
  // Reflected with the originator's next hop (10.0.2.2): c1 has no route to that /30.
  {
    write("rr1.conf", rr_conf("route-reflector-client"));
    write("c1.conf", client_conf(1));
    write("c2.conf", client_conf(2));
    auto p = plan(kStar);
    EXPECT_TRUE(p.sessions[0].rr_client);
    auto paths = twin::plan::expected_paths(p, 4);
    EXPECT_EQ(ecmp(paths, "c1", "c2"), 0);
    EXPECT_EQ(ecmp(paths, "c1", "rr1"), 1);
  }
  // `next-hop-self` alone leaves reflected routes' next hop as it was (FRR's docs).
  {
    write("rr1.conf",
          rr_conf("route-reflector-client\n  neighbor 10.0.1.2 next-hop-self\n  neighbor "
                  "10.0.2.2 next-hop-self"));
    auto paths = twin::plan::expected_paths(plan(kStar), 4);
    EXPECT_EQ(ecmp(paths, "c1", "c2"), 0);
  }
  // With `force` the reflector is the next hop, on c1's own link.
  {
    write("rr1.conf",
          rr_conf("route-reflector-client\n  neighbor 10.0.1.2 next-hop-self force\n  neighbor "
                  "10.0.2.2 next-hop-self force"));
    auto p = plan(kStar);
    EXPECT_TRUE(p.sessions[0].next_hop_self_force);
    auto paths = twin::plan::expected_paths(p, 4);
    EXPECT_EQ(ecmp(paths, "c1", "c2"), 1);
    EXPECT_EQ(ecmp(paths, "c2", "c1"), 1);
  }
}

TEST_F(IbgpLab, TheIgpsRouteWinsOverIbgpAndItResolvesLoopbackSessions) {
  // topologies/ibgp-rr: loopback sessions over OSPF, rr1 reflecting the leaves' server
  // subnets. OSPF carries the loopbacks (distance 110 beats iBGP's 200): pairs keep the IGP's
  // width, and the reflected routes resolve through it.
  twin::Diagnostics d;
  auto t =
      twin::topology::load_topology(std::string(TWIN_DATA_DIR) + "/topologies/ibgp-rr/lab.yaml", d);
  ASSERT_TRUE(t) << d.format();
  auto p = twin::plan::make_plan(*t);
  auto paths = twin::plan::expected_paths(p, 4);
  EXPECT_EQ(ecmp(paths, "leaf1", "leaf2"), 1);
  EXPECT_EQ(ecmp(paths, "leaf2", "rr1"), 1);
  EXPECT_EQ(ecmp(paths, "rr1", "leaf3"), 1);
  EXPECT_EQ(paths.size(), 12u);  // every ordered pair of the four routers
}

TEST(FrrConfReflection, ReflectorClientsAndNextHopSelfFromPeerGroups) {
  auto c = twin::topology::parse_frr_conf(
      "router bgp 65000\n neighbor C peer-group\n neighbor C remote-as internal\n"
      " neighbor 10.0.0.2 peer-group C\n neighbor 10.0.0.3 remote-as internal\n"
      " address-family ipv4 unicast\n  neighbor C route-reflector-client\n"
      "  neighbor C next-hop-self force\n  neighbor 10.0.0.3 next-hop-self\n"
      " exit-address-family\n address-family l2vpn evpn\n  neighbor 10.0.0.3 "
      "route-reflector-client\n exit-address-family\nexit\n",
      "r.conf");
  ASSERT_EQ(c.bgp_neighbors.size(), 2u);
  EXPECT_TRUE(c.bgp_neighbors[0].rr_client);
  EXPECT_TRUE(c.bgp_neighbors[0].next_hop_self);
  EXPECT_TRUE(c.bgp_neighbors[0].next_hop_self_force);
  EXPECT_FALSE(c.bgp_neighbors[1].rr_client);  // only in l2vpn evpn: not for unicast routes
  EXPECT_TRUE(c.bgp_neighbors[1].next_hop_self);
  EXPECT_FALSE(c.bgp_neighbors[1].next_hop_self_force);
}

}  // namespace
