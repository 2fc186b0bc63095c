// Unit tests for anycast and repeated addresses (issue 46 item 2): the topology's `anycast:`
// declaration and the loader's checks (a duplicate loopback is an error only where it can
// collide, reported once; router-ids never anycast; link addresses repeated on islands that share
// no link), anycast read from routers' own configs, the planner's anycast expectations (nearest
// holders, ECMP across equal ones, over eBGP and over the IGP), and the routes and reachability
// families judging them — on `ip -j route` output recorded from topologies/anycast.yaml.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "tests/unit/support.hpp"
#include "twin/plan/plan.hpp"
#include "twin/topology/loader.hpp"
#include "twin/validate/validator.hpp"
#include "validators/reachability/reachability.hpp"
#include "validators/routes/routes.hpp"

namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using twin::Diagnostics;
using twin_test::dump;

const std::string kRepo = TWIN_DATA_DIR;
const std::string kTestData = TWIN_TEST_DATA;

struct Loaded {
  std::optional<twin::topology::Topology> topo;
  Diagnostics diags;
};

Loaded load(const std::string& text, const std::string& dir = kTestData) {
  Loaded l;
  l.topo = twin::topology::load_topology_text(text, "t.yaml", dir, l.diags);
  return l;
}

twin::plan::Plan plan_of(const std::string& text) {
  auto l = load(text);
  if (!l.topo) throw std::runtime_error("did not load:\n" + dump(l.diags));
  return twin::plan::make_plan(*l.topo);
}

const twin::plan::Plan& anycast_lab() {
  static const twin::plan::Plan p = [] {
    Diagnostics d;
    auto t = twin::topology::load_topology(kRepo + "/topologies/anycast.yaml", d);
    if (!t) throw std::runtime_error(dump(d));
    return twin::plan::make_plan(*t);
  }();
  return p;
}

// ---- loading ------------------------------------------------------------------------------

TEST(AnycastLoad, ADeclaredAddressOnTwoLeavesIsAcceptedWithItsHolders) {
  Diagnostics d;
  auto t = twin::topology::load_topology(kRepo + "/topologies/anycast.yaml", d);
  ASSERT_TRUE(t) << dump(d);
  ASSERT_EQ(t->anycast.size(), 2u);
  EXPECT_EQ(t->anycast[0].prefix.str(), "10.255.255.1/32");
  EXPECT_TRUE(t->anycast[0].declared);
  EXPECT_THAT(t->anycast[0].holders, ElementsAre("leaf1", "leaf2"));
  EXPECT_EQ(t->anycast[1].prefix.str(), "fd00:255::ff/128");
  EXPECT_THAT(t->anycast[1].holders, ElementsAre("leaf1", "leaf2"));
  // Each holder's router-id is its own loopback, listed first.
  EXPECT_EQ(t->find_node("leaf1")->router_id->address(), "10.255.1.1");
  EXPECT_EQ(t->find_node("leaf2")->router_id->address(), "10.255.1.2");
}

TEST(AnycastLoad, AnUndeclaredDuplicateLoopbackIsOneErrorThatSuggestsTheDeclaration) {
  auto l = load(R"(version: 1
name: x
nodes:
  r1: {asn: 65001, loopback: [10.0.0.1/32, 10.9.9.9/32]}
  r2: {asn: 65002, loopback: [10.0.0.2/32, 10.9.9.9/32]}
links:
  - endpoints: [r1:eth1, r2:eth1]
)");
  ASSERT_FALSE(l.topo);
  ASSERT_EQ(l.diags.items().size(), 1u) << dump(l.diags);
  const auto& e = l.diags.items()[0];
  EXPECT_EQ(e.line, 5);
  EXPECT_EQ(e.field, "nodes.r2.loopback[1]");
  EXPECT_EQ(e.message, "loopback 10.9.9.9/32 is also used by node r1");
  EXPECT_THAT(e.hint, HasSubstr("list it under the top-level `anycast:`"));
}

TEST(AnycastLoad, ARouterIdTakenFromAnAnycastLoopbackIsRefusedOncePerRouter) {
  auto l = load(R"(version: 1
name: x
anycast: [10.9.9.9/32]
nodes:
  r1: {asn: 65001, loopback: [10.9.9.9/32, 10.0.0.1/32]}
  r2: {asn: 65002, loopback: [10.0.0.2/32, 10.9.9.9/32]}
  r3: {asn: 65003, loopback: 10.0.0.3/32, router-id: 10.9.9.9}
links:
  - endpoints: [r1:eth1, r2:eth1]
  - endpoints: [r3:eth1, r2:eth2]
)");
  ASSERT_FALSE(l.topo);
  ASSERT_EQ(l.diags.items().size(), 2u) << dump(l.diags);
  const auto& derived = l.diags.items()[0];
  EXPECT_EQ(derived.line, 5);
  EXPECT_EQ(derived.field, "nodes.r1.router-id");
  EXPECT_EQ(derived.message,
            "router-id 10.9.9.9, taken from loopback 10.9.9.9/32, is anycast address "
            "10.9.9.9/32, held by r1, r2");
  EXPECT_THAT(derived.hint, HasSubstr("list the router's own loopback before the anycast one"));
  const auto& given = l.diags.items()[1];
  EXPECT_EQ(given.line, 7);
  EXPECT_EQ(given.field, "nodes.r3.router-id");
  EXPECT_EQ(given.message, "router-id 10.9.9.9 is anycast address 10.9.9.9/32, held by r1, r2");
}

TEST(AnycastLoad, BadDeclarationsAreReportedAtTheirLines) {
  auto l = load(R"(version: 1
name: x
anycast: [10.9.9.0/24, 10.9.9.9/32, 10.9.9.9, 10.8.8.8/32]
nodes:
  r1: {asn: 65001, loopback: [10.0.0.1/32, 10.9.9.9/32]}
)");
  ASSERT_FALSE(l.topo);
  ASSERT_EQ(l.diags.items().size(), 3u) << dump(l.diags);
  EXPECT_EQ(l.diags.items()[0].field, "anycast[0]");
  EXPECT_EQ(l.diags.items()[0].message, "anycast address '10.9.9.0/24' is not a host prefix");
  EXPECT_EQ(l.diags.items()[1].field, "anycast[2]");
  EXPECT_EQ(l.diags.items()[1].message, "anycast address 10.9.9.9/32 is already listed at line 3");
  EXPECT_EQ(l.diags.items()[2].line, 3);
  EXPECT_EQ(l.diags.items()[2].message,
            "anycast address 10.8.8.8/32 is on the loopback of no router");
  EXPECT_EQ(l.diags.items()[2].hint, "add it to the `loopback:` of each router that holds it");
}

TEST(AnycastLoad, AddressesRepeatedOnIslandsThatShareNoLinkAreFine) {
  // Two islands, each a router and a host on 10.0.1.0/24 with the same addresses, and the same
  // loopback (so the same router-id, taken from it): nothing joins them, so nothing can collide.
  // Each island's prefixes are its own.
  const std::string text = R"(version: 1
name: x
nodes:
  r1: {asn: 65001, loopback: 10.0.0.1/32}
  r2: {asn: 65002, loopback: 10.0.0.1/32}
  h1: {kind: host}
  h2: {kind: host}
links:
  - endpoints: [r1:eth1, h1:eth0]
    addresses: {r1: 10.0.1.1/24, h1: 10.0.1.10/24}
  - endpoints: [r2:eth1, h2:eth0]
    addresses: {r2: 10.0.1.1/24, h2: 10.0.1.10/24}
)";
  auto l = load(text);
  ASSERT_TRUE(l.topo) << dump(l.diags);
  EXPECT_TRUE(l.topo->anycast.empty());
  auto p = twin::plan::make_plan(*l.topo);
  std::vector<std::string> got;
  for (const auto& e : p.prefixes) got.push_back(e.prefix + " " + e.owner + " " + e.kind);
  EXPECT_THAT(got, ElementsAre("10.0.0.1/32 r1 loopback", "10.0.1.0/24 r1 host-subnet",
                               "10.0.0.1/32 r2 loopback", "10.0.1.0/24 r2 host-subnet"));
}

TEST(AnycastLoad, AnAddressRepeatedInOneIslandIsOneErrorEvenAcrossLinks) {
  auto l = load(R"(version: 1
name: x
nodes:
  r1: {asn: 65001, loopback: 10.0.0.1/32}
  r2: {asn: 65002, loopback: 10.0.0.2/32}
  h1: {kind: host}
  h2: {kind: host}
  h3: {kind: host}
links:
  - endpoints: [r1:eth1, h1:eth0]
    addresses: {r1: 10.0.1.1/24, h1: 10.0.1.10/24}
  - endpoints: [r2:eth1, h2:eth0]
    addresses: {r2: 10.0.1.1/24, h2: 10.0.1.10/24}
  - endpoints: [r1:eth2, r2:eth2]
  - endpoints: [r1:eth3, h3:eth0]
    addresses: {r1: 10.0.3.1/24, h3: 10.0.3.1/24}
)");
  ASSERT_FALSE(l.topo);
  ASSERT_EQ(l.diags.items().size(), 3u) << dump(l.diags);
  EXPECT_EQ(l.diags.items()[0].message,
            "address 10.0.1.1 of r2:eth1 is also given to r1:eth1 at t.yaml:11:21");
  EXPECT_EQ(l.diags.items()[1].message,
            "address 10.0.1.10 of h2:eth0 is also given to h1:eth0 at t.yaml:11:38");
  EXPECT_THAT(l.diags.items()[2].message,
              HasSubstr("address 10.0.3.1 is given to both ends of the link: r1:eth3"));
}

// ---- read from own configs -------------------------------------------------------------

class AnycastOwnConfigs : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("twin-anycast-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  void write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
  }
  Loaded load_here(const std::string& text) { return load(text, dir_.string()); }
  static std::string leaf(int n, bool router_id) {
    std::string i = std::to_string(n);
    // The anycast address is above the router's own: FRR's pick without `bgp router-id`.
    return "frr defaults datacenter\ninterface lo\n ip address 10.0.255." + i +
           "/32\n ip address 10.0.255.100/32\nexit\n" + "router bgp 6500" + i + "\n" +
           (router_id ? " bgp router-id 10.0.255." + i + "\n" : "") +
           " neighbor eth1 interface remote-as external\n address-family ipv4 unicast\n"
           "  redistribute connected\n exit-address-family\nexit\n";
  }
  fs::path dir_;
};

const char* kThreeRouters = R"(version: 1
name: x
nodes:
  r1: {config: r1.conf}
  r2: {config: r2.conf}
  s1: {config: s1.conf}
links:
  - endpoints: [r1:eth1, s1:eth1]
  - endpoints: [r2:eth1, s1:eth2]
)";

TEST_F(AnycastOwnConfigs, TheSameLoopbackInEachRoutersConfigIsReadAsAnycastWithANote) {
  write("r1.conf", leaf(1, true));
  write("r2.conf", leaf(2, true));
  write("s1.conf",
        "frr defaults datacenter\ninterface lo\n ip address 10.0.255.9/32\nexit\nrouter bgp "
        "65009\n bgp router-id 10.0.255.9\n bgp bestpath as-path multipath-relax\n neighbor eth1 "
        "interface remote-as external\n neighbor eth2 interface "
        "remote-as external\n address-family ipv4 unicast\n  redistribute connected\n "
        "exit-address-family\nexit\n");
  auto l = load_here(kThreeRouters);
  ASSERT_TRUE(l.topo) << dump(l.diags);
  ASSERT_EQ(l.topo->anycast.size(), 1u);
  const auto& a = l.topo->anycast[0];
  EXPECT_FALSE(a.declared);
  EXPECT_EQ(a.prefix.str(), "10.0.255.100/32");
  EXPECT_THAT(a.holders, ElementsAre("r1", "r2"));
  EXPECT_EQ(a.source, "r1.conf:4, r2.conf:4");
  auto p = twin::plan::make_plan(*l.topo);
  bool noted = false;
  for (const auto& n : p.notes)
    noted |= n.severity == "info" && n.source == "r1.conf:4, r2.conf:4" &&
             n.text.find("10.0.255.100/32 is on lo of r1, r2, each by its own config") == 0;
  EXPECT_TRUE(noted) << p.notes.size();
  // s1 reaches it over both routers, one AS hop each (their ASes differ: ECMP needs s1's
  // multipath-relax, as FRR's does).
  auto groups = twin::plan::anycast_groups(p);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_THAT(groups[0].holders, ElementsAre("r1", "r2"));
  auto paths = twin::plan::anycast_paths(p, groups[0]);
  ASSERT_EQ(paths.size(), 1u);
  EXPECT_EQ(paths.at("s1").path.ecmp, 2);
  EXPECT_THAT(paths.at("s1").via, ElementsAre("r1", "r2"));
}

TEST_F(AnycastOwnConfigs, AHolderWhoseRouterIdFrrWouldTakeFromTheAnycastAddressIsRefused) {
  // r2 has no `bgp router-id`: zebra takes its highest loopback address, the anycast one.
  write("r1.conf", leaf(1, true));
  write("r2.conf", leaf(2, false));
  write("s1.conf", "router bgp 65009\n bgp router-id 10.0.255.9\nexit\n");
  auto l = load_here(kThreeRouters);
  ASSERT_FALSE(l.topo);
  ASSERT_EQ(l.diags.items().size(), 1u) << dump(l.diags);
  const auto& e = l.diags.items()[0];
  EXPECT_EQ(e.file, (dir_ / "r2.conf").string());
  EXPECT_EQ(e.line, 6);  // `router bgp 65002`
  EXPECT_EQ(e.message,
            "FRR would take anycast address 10.0.255.100 (held by r1, r2) as r2's BGP router-id: "
            "the highest address on its loopback, with no `bgp router-id`");
}

TEST_F(AnycastOwnConfigs, ATopologyLoopbackThatAnotherRoutersConfigRepeatsIsOneError) {
  // Not every holder's config gives it: not read as anycast, and reported once (it was twice,
  // in two wordings, before).
  write("r1.conf", "interface lo\n ip address 10.0.255.1/32\nexit\n");
  write("r2.conf", "interface lo\n ip address 10.0.255.2/32\n ip address 10.0.0.100/32\nexit\n");
  write("s1.conf", "interface lo\n ip address 10.0.255.9/32\nexit\n");
  auto l = load_here(R"(version: 1
name: x
nodes:
  r1: {loopback: 10.0.0.100/32, config: r1.conf}
  r2: {config: r2.conf}
  s1: {config: s1.conf}
links:
  - endpoints: [r1:eth1, s1:eth1]
  - endpoints: [r2:eth1, s1:eth2]
)");
  ASSERT_FALSE(l.topo);
  ASSERT_EQ(l.diags.items().size(), 1u) << dump(l.diags);
  const auto& e = l.diags.items()[0];
  EXPECT_EQ(e.file, (dir_ / "r2.conf").string());
  EXPECT_EQ(e.line, 3);
  EXPECT_EQ(e.message, "loopback 10.0.0.100/32 is also used by node r1");
}

// ---- expectations ------------------------------------------------------------------------

TEST(AnycastPlan, EveryOtherRouterExpectsTheNearestHoldersAndHoldersNothing) {
  const auto& p = anycast_lab();
  EXPECT_THAT(p.find("leaf1")->anycast, ElementsAre("10.255.255.1/32", "fd00:255::ff/128"));
  EXPECT_TRUE(p.find("leaf3")->anycast.empty());
  auto groups = twin::plan::anycast_groups(p);
  ASSERT_EQ(groups.size(), 2u);
  for (const auto& g : groups) {
    SCOPED_TRACE(g.prefix);
    EXPECT_THAT(g.holders, ElementsAre("leaf1", "leaf2"));
    auto paths = twin::plan::anycast_paths(p, g);
    ASSERT_EQ(paths.size(), 3u);  // spine1, spine2, leaf3; no holder
    for (const char* spine : {"spine1", "spine2"}) {
      EXPECT_EQ(paths.at(spine).path.ecmp, 2) << spine;  // both leaves, one AS hop each
      EXPECT_EQ(paths.at(spine).path.as_path_len, 1) << spine;
      EXPECT_THAT(paths.at(spine).via, ElementsAre("leaf1", "leaf2"));
    }
    EXPECT_EQ(paths.at("leaf3").path.ecmp, 2);
    EXPECT_EQ(paths.at("leaf3").path.as_path_len, 2);
    EXPECT_THAT(paths.at("leaf3").via, ElementsAre("spine1", "spine2"));
  }
  // One prefix per holder, of kind anycast; no loopback entry for it.
  int anycast = 0;
  for (const auto& e : p.prefixes)
    if (e.prefix == "10.255.255.1/32") {
      EXPECT_EQ(e.kind, "anycast");
      ++anycast;
    }
  EXPECT_EQ(anycast, 2);
  // `plan` shows them.
  auto text = twin::plan::render_plan_text(p);
  EXPECT_THAT(text, HasSubstr("    lo: 10.255.1.1/32 fd00:255::101/128 10.255.255.1/32 (anycast) "
                              "fd00:255::ff/128 (anycast)\n"));
  EXPECT_THAT(text, HasSubstr("anycast addresses (each router expected to reach the nearest "
                              "holders):\n  10.255.255.1/32  held by leaf1, leaf2\n"
                              "    leaf3: 2 next hops via spine1, spine2\n"
                              "    spine1: 2 next hops via leaf1, leaf2\n"));
  // The state file keeps them.
  auto back = twin::plan::plan_from_json(twin::plan::to_json(p));
  EXPECT_EQ(back.find("leaf2")->anycast, p.find("leaf2")->anycast);
}

TEST(AnycastPlan, TheNearestHolderWinsAndEqualOnesAddUp) {
  // h1 - a - b - h2 in a line, c linked to a and b: a is one AS hop from h1 and two from h2,
  // c two from each.
  auto p = plan_of(R"(version: 1
name: x
anycast: [10.9.9.9/32]
nodes:
  h1: {asn: 65001, loopback: [10.0.0.1/32, 10.9.9.9/32]}
  a: {asn: 65002, loopback: 10.0.0.2/32}
  b: {asn: 65003, loopback: 10.0.0.3/32}
  h2: {asn: 65004, loopback: [10.0.0.4/32, 10.9.9.9/32]}
  c: {asn: 65005, loopback: 10.0.0.5/32}
links:
  - endpoints: [h1:eth1, a:eth1]
  - endpoints: [a:eth2, b:eth2]
  - endpoints: [b:eth1, h2:eth1]
  - endpoints: [c:eth1, a:eth3]
  - endpoints: [c:eth2, b:eth3]
)");
  auto g = twin::plan::anycast_groups(p);
  ASSERT_EQ(g.size(), 1u);
  auto paths = twin::plan::anycast_paths(p, g[0]);
  EXPECT_EQ(paths.at("a").path.ecmp, 1);
  EXPECT_THAT(paths.at("a").via, ElementsAre("h1"));
  EXPECT_THAT(paths.at("b").via, ElementsAre("h2"));
  EXPECT_EQ(paths.at("c").path.ecmp, 2);
  EXPECT_THAT(paths.at("c").via, ElementsAre("a", "b"));
  EXPECT_FALSE(paths.count("h1"));
  // A holder taken out of service leaves every router to the other.
  p.find("h1")->drained = true;
  g = twin::plan::anycast_groups(p);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_THAT(g[0].holders, ElementsAre("h2"));
  paths = twin::plan::anycast_paths(p, g[0]);
  EXPECT_THAT(paths.at("a").via, ElementsAre("b"));
  EXPECT_THAT(paths.at("c").via, ElementsAre("b"));
}

TEST(AnycastPlan, OverTheIgpTheLeastCostToAnyHolderWins) {
  // OSPF only (no BGP): r1 - r2 - r3 - r4 - r5 in a line, holders r1 and r5, r2-r3 costing 30.
  twin::plan::Plan p;
  for (const char* n : {"r1", "r2", "r3", "r4", "r5"}) {
    twin::plan::Node node;
    node.name = n;
    node.config_generated = false;
    node.loopbacks = {std::string("10.0.0.") + n[1] + "/32", "10.9.9.9/32"};
    node.advertised = node.loopbacks;
    p.nodes.push_back(node);
  }
  p.nodes[1].loopbacks.pop_back();
  p.nodes[2].loopbacks.pop_back();
  p.nodes[3].loopbacks.pop_back();
  p.nodes[0].anycast = {"10.9.9.9/32"};
  p.nodes[4].anycast = {"10.9.9.9/32"};
  auto adj = [&](const std::string& a, const std::string& b, int cost) {
    p.adjacencies.push_back({a, "to-" + b, b, "to-" + a, "0.0.0.0", 2});
    p.find(a)->ospf_interfaces.push_back({"to-" + b, "0.0.0.0", false, 2, cost, 40});
  };
  struct Hop {
    const char *from, *to;
    int cost;
  };
  const Hop hops[] = {{"r1", "r2", 10}, {"r2", "r1", 10}, {"r2", "r3", 30}, {"r3", "r2", 30},
                      {"r3", "r4", 10}, {"r4", "r3", 10}, {"r4", "r5", 10}, {"r5", "r4", 10}};
  for (const auto& h : hops) adj(h.from, h.to, h.cost);
  auto g = twin::plan::anycast_groups(p);
  ASSERT_EQ(g.size(), 1u);
  auto paths = twin::plan::anycast_paths(p, g[0]);
  EXPECT_THAT(paths.at("r2").via, ElementsAre("r1"));
  EXPECT_THAT(paths.at("r3").via, ElementsAre("r4"));  // 20 to r5 beats 40 to r1
  EXPECT_THAT(paths.at("r4").via, ElementsAre("r5"));
  EXPECT_EQ(paths.at("r3").path.ecmp, 1);
  // Equal costs both ways: ECMP across the two holders.
  p.find("r2")->ospf_interfaces[1].cost = 10;
  p.find("r3")->ospf_interfaces[0].cost = 10;
  paths = twin::plan::anycast_paths(p, g[0]);
  EXPECT_EQ(paths.at("r3").path.ecmp, 2);
  EXPECT_THAT(paths.at("r3").via, ElementsAre("r2", "r4"));
}

// ---- validators ---------------------------------------------------------------------------

TEST(AnycastReachability, NonHoldersPingTheAddressFromTheirOwnLoopbackAndTheMeshSkipsIt) {
  const auto& p = anycast_lab();
  auto probes = twin::validators::reachability_probes(p, 0);
  std::vector<std::string> anycast;
  for (const auto& pr : probes) {
    if (pr.test == 4) {
      anycast.push_back(pr.node + " " + pr.request.source + " -> " + pr.request.destination);
      EXPECT_EQ(pr.expected, "echo reply from a holder (leaf1, leaf2)");
    } else {
      EXPECT_NE(pr.request.destination, "10.255.255.1") << pr.node;
      EXPECT_NE(pr.request.source, "10.255.255.1") << pr.node;
      EXPECT_NE(pr.request.destination, "fd00:255::ff") << pr.node;
    }
  }
  std::sort(anycast.begin(), anycast.end());
  EXPECT_THAT(
      anycast,
      ElementsAre("leaf3 10.255.1.3 -> 10.255.255.1", "leaf3 fd00:255::103 -> fd00:255::ff",
                  "spine1 10.255.0.1 -> 10.255.255.1", "spine1 fd00:255::1 -> fd00:255::ff",
                  "spine2 10.255.0.2 -> 10.255.255.1", "spine2 fd00:255::2 -> fd00:255::ff"));
}

TEST(AnycastRoutes, TheRecordedLabPassesWithBothHoldersInEachSpinesRoute) {
  // `ip -j route show` and `ip -j -6 route show` of spine1 and leaf3, recorded from
  // topologies/anycast.yaml up on FRR 8.4 (tests/data/frr84/anycast).
  auto fib = [](const std::string& node) -> twin::Result<nlohmann::json> {
    const std::string dir = kTestData + "/frr84/anycast/";
    auto all = nlohmann::json::parse(twin_test::read(dir + node + "-ip-route.json"));
    for (const auto& r : nlohmann::json::parse(twin_test::read(dir + node + "-ip6-route.json")))
      all.push_back(r);
    return twin::ok(all);
  };
  std::map<std::string, twin::Result<nlohmann::json>> fibs;
  fibs.emplace("spine1", fib("spine1"));
  fibs.emplace("leaf3", fib("leaf3"));
  auto rs = twin::validators::evaluate_routes(anycast_lab(), fibs);
  std::vector<std::string> anycast;
  for (const auto& r : rs) {
    if (r.node != "spine1" && r.node != "leaf3") continue;
    EXPECT_EQ(r.status, twin::validate::Status::kPassed)
        << r.node << " " << r.peer << " " << r.message;
    if (r.peer == "10.255.255.1/32" || r.peer == "fd00:255::ff/128")
      anycast.push_back(r.node + " " + r.peer + " " + std::to_string(r.test) + " " + r.observed);
  }
  std::sort(anycast.begin(), anycast.end());
  EXPECT_THAT(
      anycast,
      ElementsAre("leaf3 10.255.255.1/32 0 installed", "leaf3 10.255.255.1/32 1 2 next hops",
                  "leaf3 10.255.255.1/32 2 toward spine1, spine2",
                  "leaf3 fd00:255::ff/128 0 installed", "leaf3 fd00:255::ff/128 1 2 next hops",
                  "leaf3 fd00:255::ff/128 2 toward spine1, spine2",
                  "spine1 10.255.255.1/32 0 installed", "spine1 10.255.255.1/32 1 2 next hops",
                  "spine1 10.255.255.1/32 2 toward leaf1, leaf2",
                  "spine1 fd00:255::ff/128 0 installed", "spine1 fd00:255::ff/128 1 2 next hops",
                  "spine1 fd00:255::ff/128 2 toward leaf1, leaf2"));
}

}  // namespace
