// Unit tests for `twin gen clos` (twin/topology/generate.hpp): what it writes loads with the
// topology loader and plans to the fabric it describes; bad sizes are refused.
#include "twin/topology/generate.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "twin/core/diagnostics.hpp"
#include "twin/plan/plan.hpp"
#include "twin/topology/loader.hpp"

namespace {

using twin::topology::ClosSpec;

twin::plan::Plan plan_of(const ClosSpec& s) {
  twin::Diagnostics d;
  auto topo = twin::topology::load_topology_text(twin::topology::generate_clos(s), "gen.yaml",
                                                 TWIN_DATA_DIR, d);
  EXPECT_TRUE(topo) << d.format();
  if (!topo) return {};
  return twin::plan::make_plan(*topo);
}

TEST(GenClos, TwoTierWithServersPlansTheExpectedFabric) {
  ClosSpec s;
  s.name = "g24";
  s.servers_per_leaf = 2;
  auto p = plan_of(s);
  EXPECT_EQ(p.lab, "g24");
  EXPECT_EQ(p.nodes.size(), 2u + 4u + 8u);
  EXPECT_EQ(p.links.size(), 8u + 8u);
  EXPECT_EQ(p.sessions.size(), 16u);  // both ends of 8 fabric links
  // 6 FRR nodes x 2 loopbacks + 8 server subnets.
  EXPECT_EQ(p.prefixes.size(), 12u + 8u);
  const auto* leaf4 = p.find("leaf4");
  ASSERT_NE(leaf4, nullptr);
  EXPECT_EQ(leaf4->asn, 4200000004u);
  EXPECT_EQ(leaf4->interfaces.size(), 4u);
  EXPECT_EQ(leaf4->interfaces[0].name, "swp1");
  EXPECT_EQ(leaf4->interfaces[0].peer_node, "spine1");
  EXPECT_EQ(leaf4->interfaces[0].mtu, 9216);
  EXPECT_EQ(leaf4->interfaces[3].peer_node, "server8");
  EXPECT_EQ(leaf4->interfaces[3].mtu, 1500);
  EXPECT_EQ(leaf4->interfaces[3].addresses.at(0), "172.16.7.1/24");
  EXPECT_EQ(p.find("spine2")->asn, 65000u);
  EXPECT_EQ(p.find("server8")->routes.at(0).via, "172.16.7.1");
  // Every leaf reaches every other leaf's loopback over both spines.
  auto paths = twin::plan::expected_paths(p, 4);
  EXPECT_EQ((paths[{"leaf1", "leaf4"}].ecmp), 2);
  EXPECT_EQ((paths[{"spine1", "spine2"}].ecmp), 0);  // shared ASN: not expected
}

TEST(GenClos, ThreeTierJoinsPodsThroughSuperSpines) {
  ClosSpec s;
  s.spines = 2;
  s.leaves = 3;
  s.super_spines = 2;
  s.pods = 2;
  auto p = plan_of(s);
  EXPECT_EQ(p.nodes.size(), 2u + 4u + 6u);
  EXPECT_EQ(p.links.size(), 12u + 8u);       // leaf uplinks + spine uplinks
  EXPECT_EQ(p.find("spine3")->asn, 65002u);  // pod 2
  EXPECT_EQ(p.find("super1")->asn, 65000u);
  auto paths = twin::plan::expected_paths(p, 4);
  // leaf1 (pod 1) to leaf6 (pod 2): leaf -> 2 spines -> supers -> spines -> leaf.
  EXPECT_EQ((paths[{"leaf1", "leaf6"}].ecmp), 2);
  EXPECT_EQ((paths[{"leaf1", "leaf6"}].as_path_len), 4);
  std::set<std::string> names;
  for (const auto& n : p.nodes) names.insert(n.name);
  EXPECT_EQ(names.size(), p.nodes.size());
}

TEST(GenClos, LargeFabricLoads) {
  ClosSpec s;
  s.spines = 8;
  s.leaves = 48;
  auto p = plan_of(s);
  EXPECT_EQ(p.nodes.size(), 56u);
  EXPECT_EQ(p.links.size(), 384u);
  EXPECT_EQ(p.sessions.size(), 768u);
}

TEST(GenClos, TenantsDealServersRoundRobinOverLeaves) {
  ClosSpec s;
  s.name = "t3";
  s.servers_per_leaf = 2;
  s.tenants = 3;
  auto p = plan_of(s);
  ASSERT_EQ(p.tenants.size(), 3u);
  EXPECT_EQ(p.tenants[0].name, "tenant1");
  EXPECT_EQ(p.tenants[2].networks[0].vni, 10300u);
  // Servers 1, 4, 7 (leaf1, leaf2, leaf4) are tenant1's; 3 and 6 (leaf2, leaf3) tenant3's.
  EXPECT_EQ(p.tenants[0].networks[0].servers,
            (std::vector<std::string>{"server1", "server4", "server7"}));
  EXPECT_EQ(p.tenants[0].networks[0].vteps, (std::vector<std::string>{"leaf1", "leaf2", "leaf4"}));
  EXPECT_EQ(p.tenants[2].networks[0].vteps, (std::vector<std::string>{"leaf2", "leaf3"}));
  EXPECT_EQ(p.find("server4")->interfaces[0].addresses.at(0), "10.101.0.11/16");
  EXPECT_TRUE(p.find("server4")->routes.empty());  // one L2 segment: no gateway
  EXPECT_TRUE(p.find("leaf2")->interfaces[3].addresses.empty());  // swp4: server4
  EXPECT_EQ(p.find("leaf2")->interfaces[3].vni, 10100u);
  EXPECT_EQ(p.find("leaf2")->interfaces[2].vni, 10300u);  // swp3: server3
  EXPECT_EQ(p.prefixes.size(), 12u);  // loopbacks only
  ClosSpec none;
  none.tenants = 2;
  auto r = twin::topology::check(none);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            "--tenants 2 needs a server each, and there are 0 (--servers-per-leaf x leaves): give "
            "more servers per leaf");
  none.servers_per_leaf = 1;
  none.mtu = 1500;
  EXPECT_NE(twin::topology::check(none).error().message.find("need 1550"), std::string::npos);
}

TEST(GenClos, BadSizesAreRefused) {
  auto err = [](ClosSpec s) {
    auto r = twin::topology::check(s);
    return r ? std::string() : r.error().message;
  };
  ClosSpec s;
  EXPECT_EQ(err(s), "");
  s.spines = 0;
  EXPECT_EQ(err(s), "--spines must be at least 1");
  s = ClosSpec{};
  s.mtu = 1000;
  EXPECT_NE(err(s).find("--mtu 1000: expected 1280..65535"), std::string::npos) << err(s);
  s = ClosSpec{};
  s.pods = 2;
  EXPECT_NE(err(s).find("--pods needs --super-spines"), std::string::npos);
  s = ClosSpec{};
  s.servers_per_leaf = 2000;
  EXPECT_NE(err(s).find("8000 servers: at most 4096"), std::string::npos) << err(s);
  s = ClosSpec{};
  s.name = "bad name";
  EXPECT_NE(err(s).find("--name 'bad name'"), std::string::npos);
}

}  // namespace
