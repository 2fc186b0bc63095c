// Unit tests for the planner (twin/plan/plan.hpp): names, MACs, expected sessions, prefixes and
// routes of clos-2x4; the generated frr.conf; --name; determinism; JSON round trip; the dry-run
// text against a golden file; and the eBGP path expectations (ECMP width, AS-path length).
#include "twin/plan/plan.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/unit/support.hpp"
#include "twin/topology/loader.hpp"

namespace {

using twin_test::read;

using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::Not;
using twin::plan::Plan;

const std::string kRepo = TWIN_DATA_DIR;
const std::string kTestData = TWIN_TEST_DATA;

twin::topology::Topology load_file(const std::string& path) {
  twin::Diagnostics d;
  auto t = twin::topology::load_topology(path, d);
  if (!t) throw std::runtime_error("loading " + path + ":\n" + d.format());
  return *t;
}

twin::topology::Topology load_text(const std::string& text) {
  twin::Diagnostics d;
  auto t = twin::topology::load_topology_text(text, "t.yaml", kTestData, d);
  if (!t) throw std::runtime_error("loading text:\n" + d.format());
  return *t;
}

const twin::topology::Topology& clos() {
  static const auto t = load_file(kRepo + "/topologies/clos-2x4.yaml");
  return t;
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

const twin::plan::Interface* find_if(const twin::plan::Node& n, const std::string& name) {
  for (const auto& i : n.interfaces)
    if (i.name == name) return &i;
  return nullptr;
}

TEST(Plan, NamesAndRunDirectories) {
  auto p = twin::plan::make_plan(clos());
  EXPECT_EQ(p.lab, "clos-2x4");
  EXPECT_EQ(p.topology_file, clos().file);
  EXPECT_EQ(p.run_dir, "/run/twin/clos-2x4");
  ASSERT_EQ(p.nodes.size(), 8u);
  ASSERT_EQ(p.links.size(), 10u);
  for (const auto& n : p.nodes) {
    EXPECT_EQ(n.netns, "tw-clos-2x4-" + n.name);
    EXPECT_EQ(n.run_dir, "/run/twin/clos-2x4/" + n.name);
  }
  EXPECT_EQ(twin::plan::netns_name("dc1", "leaf1"), "tw-dc1-leaf1");
  EXPECT_EQ(p.find("leaf1")->netns, "tw-clos-2x4-leaf1");
  EXPECT_EQ(p.find("nope"), nullptr);
}

TEST(Plan, NodeFieldsFromTopologyAndImage) {
  auto p = twin::plan::make_plan(clos());
  const auto* leaf1 = p.find("leaf1");
  ASSERT_NE(leaf1, nullptr);
  EXPECT_STREQ(to_string(leaf1->kind), "frr");
  EXPECT_EQ(leaf1->image, "frr-8.4");
  // The image's zebra plus what the generated config needs: bgpd, and no staticd (no static
  // route in a generated config).
  EXPECT_EQ(leaf1->daemons, (std::vector<std::string>{"zebra", "bgpd"}));
  EXPECT_EQ(leaf1->frr_profile, "datacenter");
  EXPECT_EQ(leaf1->rp_filter, 0);
  EXPECT_EQ(leaf1->asn, 65101u);
  EXPECT_EQ(leaf1->router_id, "10.255.1.1");
  EXPECT_EQ(leaf1->loopbacks, (std::vector<std::string>{"10.255.1.1/32", "fd00:255::101/128"}));
  EXPECT_TRUE(leaf1->config_generated);
  EXPECT_EQ(leaf1->config_source, "");
  ASSERT_EQ(leaf1->interfaces.size(), 3u);
  const auto& swp1 = leaf1->interfaces[0];
  EXPECT_EQ(swp1.name, "swp1");
  EXPECT_EQ(swp1.peer_node, "spine1");
  EXPECT_EQ(swp1.peer_interface, "swp1");
  EXPECT_EQ(swp1.mtu, 9216);
  EXPECT_TRUE(swp1.fabric);
  EXPECT_TRUE(swp1.addresses.empty());
  const auto& swp3 = leaf1->interfaces[2];
  EXPECT_EQ(swp3.name, "swp3");
  EXPECT_EQ(swp3.peer_node, "server1");
  EXPECT_EQ(swp3.mtu, 1500);
  EXPECT_FALSE(swp3.fabric);
  EXPECT_EQ(swp3.addresses, (std::vector<std::string>{"10.0.1.1/24", "2001:db8:1::1/64"}));

  const auto* server1 = p.find("server1");
  EXPECT_STREQ(to_string(server1->kind), "host");
  EXPECT_EQ(server1->asn, 0u);
  EXPECT_EQ(server1->router_id, "");
  EXPECT_TRUE(server1->daemons.empty());
  EXPECT_EQ(server1->frr_config, "");
  ASSERT_EQ(server1->interfaces.size(), 1u);
  EXPECT_EQ(server1->interfaces[0].addresses,
            (std::vector<std::string>{"10.0.1.10/24", "2001:db8:1::10/64"}));
}

TEST(Plan, MacsAreUniqueAndLocallyAdministered) {
  auto p = twin::plan::make_plan(clos());
  std::set<std::string> macs;
  size_t count = 0;
  for (const auto& n : p.nodes)
    for (const auto& i : n.interfaces) {
      ++count;
      EXPECT_THAT(i.mac, MatchesRegex("02(:[0-9a-f][0-9a-f]){5}")) << n.name << ":" << i.name;
      unsigned first = std::stoul(i.mac.substr(0, 2), nullptr, 16);
      EXPECT_EQ(first & 0x02u, 0x02u) << i.mac;  // locally administered
      EXPECT_EQ(first & 0x01u, 0x00u) << i.mac;  // unicast
      macs.insert(i.mac);
    }
  EXPECT_EQ(count, 20u);
  EXPECT_EQ(macs.size(), count);
  // The lab name goes into the MAC: the recorded lab "rec" had exactly these addresses.
  auto rec = twin::plan::make_plan(clos(), "rec");
  EXPECT_EQ(find_if(*rec.find("leaf1"), "swp1")->mac, "02:7f:00:02:01:49");
  EXPECT_EQ(find_if(*rec.find("spine1"), "swp1")->mac, "02:7f:00:00:01:49");
  EXPECT_NE(find_if(*p.find("leaf1"), "swp1")->mac, "02:7f:00:02:01:49");
}

TEST(Plan, SixteenSessionsOnePerFabricInterface) {
  auto p = twin::plan::make_plan(clos());
  ASSERT_EQ(p.sessions.size(), 16u);
  std::set<std::string> got;
  for (const auto& s : p.sessions) got.insert(s.node + ":" + s.interface + ">" + s.peer_node);
  EXPECT_EQ(got.size(), 16u);
  for (const char* want :
       {"spine1:swp1>leaf1", "spine1:swp2>leaf2", "spine1:swp3>leaf3", "spine1:swp4>leaf4",
        "spine2:swp1>leaf1", "spine2:swp4>leaf4", "leaf1:swp1>spine1", "leaf1:swp2>spine2",
        "leaf4:swp1>spine1", "leaf4:swp2>spine2"})
    EXPECT_TRUE(got.count(want)) << want;
  // Host-facing ports carry no session.
  EXPECT_FALSE(got.count("leaf1:swp3>server1"));
  EXPECT_EQ(p.sessions[0].node, "spine1");  // plan order
  EXPECT_EQ(p.sessions[0].interface, "swp1");
  EXPECT_EQ(p.sessions[0].peer_node, "leaf1");
}

TEST(Plan, PrefixesLoopbacksAndHostSubnets) {
  auto p = twin::plan::make_plan(clos());
  std::vector<std::string> got;
  for (const auto& x : p.prefixes) got.push_back(x.prefix + " " + x.owner + " " + x.kind);
  EXPECT_EQ(got, (std::vector<std::string>{
                     "10.255.0.1/32 spine1 loopback",
                     "fd00:255::1/128 spine1 loopback",
                     "10.255.0.2/32 spine2 loopback",
                     "fd00:255::2/128 spine2 loopback",
                     "10.255.1.1/32 leaf1 loopback",
                     "fd00:255::101/128 leaf1 loopback",
                     "10.0.1.0/24 leaf1 host-subnet",
                     "2001:db8:1::/64 leaf1 host-subnet",
                     "10.255.1.2/32 leaf2 loopback",
                     "fd00:255::102/128 leaf2 loopback",
                     "10.255.1.3/32 leaf3 loopback",
                     "fd00:255::103/128 leaf3 loopback",
                     "10.255.1.4/32 leaf4 loopback",
                     "fd00:255::104/128 leaf4 loopback",
                     "10.0.4.0/24 leaf4 host-subnet",
                     "2001:db8:4::/64 leaf4 host-subnet",
                 }));
}

TEST(Plan, HostDefaultRoutes) {
  auto p = twin::plan::make_plan(clos());
  const auto* s1 = p.find("server1");
  ASSERT_EQ(s1->routes.size(), 2u);
  EXPECT_EQ(s1->routes[0].destination, "default");
  EXPECT_EQ(s1->routes[0].via, "10.0.1.1");
  EXPECT_EQ(s1->routes[1].destination, "default");
  EXPECT_EQ(s1->routes[1].via, "2001:db8:1::1");
  const auto* s2 = p.find("server2");
  ASSERT_EQ(s2->routes.size(), 2u);
  EXPECT_EQ(s2->routes[0].via, "10.0.4.1");
  EXPECT_EQ(s2->routes[1].via, "2001:db8:4::1");
  EXPECT_TRUE(p.find("leaf1")->routes.empty());
}

// The lines of `text`, for "contains this exact line" checks.
std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  for (std::string l; std::getline(ss, l);) out.push_back(l);
  return out;
}

TEST(Plan, GeneratedFrrConfOfLeaf1) {
  auto p = twin::plan::make_plan(clos());
  const auto& conf = p.find("leaf1")->frr_config;
  auto ls = lines(conf);
  auto has = [&](const std::string& l) { return std::find(ls.begin(), ls.end(), l) != ls.end(); };
  for (const char* want : {
           "frr defaults datacenter",
           "hostname leaf1",
           "interface lo",
           " ip address 10.255.1.1/32",
           " ipv6 address fd00:255::101/128",
           "interface swp3",
           " ip address 10.0.1.1/24",
           " ipv6 address 2001:db8:1::1/64",
           " ipv6 nd ra-interval 10",
           " no ipv6 nd suppress-ra",
           "router bgp 65101",
           " bgp router-id 10.255.1.1",
           " no bgp ebgp-requires-policy",
           " bgp bestpath as-path multipath-relax",
           " coalesce-time 0",
           " neighbor fabric peer-group",
           " neighbor fabric remote-as external",
           " neighbor swp1 interface peer-group fabric",
           " neighbor swp2 interface peer-group fabric",
           " address-family ipv4 unicast",
           "  network 10.255.1.1/32",
           "  network 10.0.1.0/24",
           " address-family ipv6 unicast",
           "  network fd00:255::101/128",
           "  network 2001:db8:1::/64",
           "  neighbor fabric activate",
           "  maximum-paths 64",
           "end",
       })
    EXPECT_TRUE(has(want)) << "missing line '" << want << "' in:\n" << conf;
  // `frr defaults` must come before anything it sets defaults for (FRR reads it first).
  EXPECT_EQ(ls.at(1), "frr defaults datacenter");
  // The host-facing port gets no RAs and no BGP neighbor.
  EXPECT_FALSE(has(" neighbor swp3 interface peer-group fabric"));
  EXPECT_EQ(std::count(ls.begin(), ls.end(), " ipv6 nd ra-interval 10"), 2);
  // The IPv4 host subnet is announced under ipv4 unicast, the IPv6 one under ipv6 unicast.
  auto pos = [&](const std::string& l) { return std::find(ls.begin(), ls.end(), l) - ls.begin(); };
  EXPECT_LT(pos(" address-family ipv4 unicast"), pos("  network 10.0.1.0/24"));
  EXPECT_LT(pos("  network 10.0.1.0/24"), pos(" address-family ipv6 unicast"));
  EXPECT_LT(pos(" address-family ipv6 unicast"), pos("  network 2001:db8:1::/64"));

  // Spines announce only their loopbacks.
  const auto& spine = p.find("spine1")->frr_config;
  EXPECT_THAT(spine, HasSubstr("router bgp 65000\n bgp router-id 10.255.0.1\n"));
  EXPECT_THAT(spine, HasSubstr(" neighbor swp4 interface peer-group fabric\n"));
  EXPECT_THAT(spine, Not(HasSubstr("network 10.0.")));
}

TEST(Plan, UserConfigIsNotGenerated) {
  auto t = load_file(kRepo + "/topologies/two-node.yaml");
  t.nodes[0].config = "/etc/twin/r1.conf";
  auto p = twin::plan::make_plan(t);
  EXPECT_FALSE(p.nodes[0].config_generated);
  EXPECT_EQ(p.nodes[0].config_source, "/etc/twin/r1.conf");
  EXPECT_EQ(p.nodes[0].frr_config, "");
  EXPECT_TRUE(p.nodes[1].config_generated);
  EXPECT_THAT(twin::plan::render_plan_text(p), HasSubstr("    config: /etc/twin/r1.conf\n"));
}

TEST(Plan, NameOverride) {
  auto p = twin::plan::make_plan(clos(), "lab2");
  EXPECT_EQ(p.lab, "lab2");
  EXPECT_EQ(p.run_dir, "/run/twin/lab2");
  EXPECT_EQ(p.find("leaf1")->netns, "tw-lab2-leaf1");
  EXPECT_EQ(p.find("leaf1")->run_dir, "/run/twin/lab2/leaf1");
  EXPECT_EQ(p.find("server2")->netns, "tw-lab2-server2");
  // An empty override keeps the topology's name.
  EXPECT_EQ(twin::plan::make_plan(clos(), "").lab, "clos-2x4");
}

TEST(Plan, Deterministic) {
  auto a = twin::plan::to_json(twin::plan::make_plan(clos())).dump();
  auto b =
      twin::plan::to_json(twin::plan::make_plan(load_file(kRepo + "/topologies/clos-2x4.yaml")))
          .dump();
  EXPECT_EQ(a, b);
}

TEST(Plan, JsonRoundTrip) {
  auto p = twin::plan::make_plan(clos());
  auto j = twin::plan::to_json(p);
  EXPECT_EQ(j["lab"], "clos-2x4");
  EXPECT_EQ(j["nodes"][2]["interfaces"][0]["mac"], p.nodes[2].interfaces[0].mac);
  Plan back = twin::plan::plan_from_json(j);
  EXPECT_EQ(twin::plan::to_json(back), j);
  EXPECT_EQ(back.lab, p.lab);
  EXPECT_EQ(back.nodes.size(), p.nodes.size());
  EXPECT_EQ(back.find("leaf1")->frr_config, p.find("leaf1")->frr_config);
  EXPECT_EQ(back.find("server1")->routes[1].via, "2001:db8:1::1");
  EXPECT_EQ(back.sessions.size(), 16u);
  EXPECT_EQ(back.prefixes.size(), 16u);
  EXPECT_EQ(back.links[8].mtu, 1500);
  // Through text too (the state file).
  EXPECT_EQ(twin::plan::to_json(twin::plan::plan_from_json(nlohmann::json::parse(j.dump()))), j);
}

TEST(Plan, PlanFromJsonRejectsBadInput) {
  EXPECT_THROW(twin::plan::plan_from_json(nlohmann::json::object()), nlohmann::json::exception);
  auto j = twin::plan::to_json(twin::plan::make_plan(clos()));
  j["nodes"][0]["asn"] = "65000";
  EXPECT_THROW(twin::plan::plan_from_json(j), nlohmann::json::exception);
}

// The plan recorded with the real lab matches what the planner makes today, except the
// generated configs (which evolve with the images) and the checkout location. (Its daemon
// lists lost staticd when twin stopped starting daemons no config needs.)
TEST(Plan, MatchesTheRecordedLabPlan) {
  auto rec = nlohmann::json::parse(read(kTestData + "/frr84/plan-rec.json"));
  auto now = twin::plan::to_json(twin::plan::make_plan(clos(), "rec"));
  for (auto* j : {&rec, &now}) {
    (*j)["topology_file"] = "";
    for (auto& n : (*j)["nodes"]) n["frr_config"] = "";
  }
  EXPECT_EQ(now, rec) << nlohmann::json::diff(rec, now).dump(1);
}

TEST(Plan, RenderMatchesGolden) {
  auto p = twin::plan::make_plan(clos());
  ASSERT_EQ(p.topology_file.front(), '/');
  std::string text = twin::plan::render_plan_text(p);
  text = replace_all(text, p.topology_file, "topologies/clos-2x4.yaml");
  std::string golden = read(kTestData + "/golden/clos-2x4.plan.txt");
  EXPECT_EQ(text, golden);
  EXPECT_THAT(text, HasSubstr("lab clos-2x4 (topologies/clos-2x4.yaml)\n"
                              "  8 nodes (6 frr, 2 host), 10 links, 16 BGP sessions expected, 16 "
                              "prefixes advertised\n"));
}

TEST(Plan, NodeLoopedToItselfHasNoSession) {
  // The loader refuses such a link; a topology built in memory may still hold one, and the
  // planner must not make a router peer with itself.
  auto t = load_text(R"(version: 1
name: x
nodes:
  r1: {asn: 65001, loopback: 10.0.0.1/32}
  r2: {asn: 65002, loopback: 10.0.0.2/32}
links:
  - endpoints: [r1:eth1, r2:eth1]
)");
  twin::topology::Link loop;
  loop.a = {"r1", "eth2", {}};
  loop.b = {"r1", "eth3", {}};
  t.links.push_back(loop);
  auto p = twin::plan::make_plan(t);
  ASSERT_EQ(p.sessions.size(), 2u);
  EXPECT_EQ(p.sessions[0].interface, "eth1");
  EXPECT_EQ(p.sessions[1].interface, "eth1");
  EXPECT_FALSE(find_if(p.nodes[0], "eth2")->fabric);
  EXPECT_FALSE(find_if(p.nodes[0], "eth3")->fabric);
  EXPECT_THAT(p.nodes[0].frr_config, Not(HasSubstr("neighbor eth2")));
  auto paths = twin::plan::expected_paths(p, 4);
  EXPECT_EQ(paths.at({"r1", "r2"}).ecmp, 1);
}

// ---------------------------------------------------------------------------------------
// expected_paths

TEST(ExpectedPaths, Clos2x4SharedSpineAsn) {
  auto paths = twin::plan::expected_paths(twin::plan::make_plan(clos()), 4);
  auto at = [&](const char* a, const char* b) { return paths.at({a, b}); };
  EXPECT_EQ(at("leaf1", "leaf2").ecmp, 2);
  EXPECT_EQ(at("leaf1", "leaf2").as_path_len, 2);
  EXPECT_EQ(at("leaf4", "leaf1").ecmp, 2);
  EXPECT_EQ(at("leaf1", "spine1").ecmp, 1);
  EXPECT_EQ(at("leaf1", "spine1").as_path_len, 1);
  EXPECT_EQ(at("spine1", "leaf1").ecmp, 1);
  EXPECT_EQ(at("spine1", "leaf1").as_path_len, 1);
  // Spines share ASN 65000: a spine rejects paths through the other (loop prevention).
  EXPECT_EQ(paths.count({"spine1", "spine2"}), 0u);
  EXPECT_EQ(paths.count({"spine2", "spine1"}), 0u);
  // Nothing for hosts, nothing toward oneself.
  EXPECT_EQ(paths.count({"leaf1", "leaf1"}), 0u);
  EXPECT_EQ(paths.count({"leaf1", "server1"}), 0u);
  EXPECT_EQ(paths.count({"server1", "leaf1"}), 0u);
  // 6 FRR nodes: 30 ordered pairs, minus the two spine pairs.
  EXPECT_EQ(paths.size(), 28u);
}

const char* kDistinctSpines = R"(version: 1
name: distinct
defaults: {mtu: 9216}
nodes:
  spine1: {asn: 65001, loopback: 10.255.0.1/32}
  spine2: {asn: 65002, loopback: 10.255.0.2/32}
  leaf1: {asn: 65101, loopback: 10.255.1.1/32}
  leaf2: {asn: 65102, loopback: 10.255.1.2/32}
  leaf3: {asn: 65103, loopback: 10.255.1.3/32}
  leaf4: {asn: 65104, loopback: 10.255.1.4/32}
links:
  - endpoints: [leaf1:swp1, spine1:swp1]
  - endpoints: [leaf1:swp2, spine2:swp1]
  - endpoints: [leaf2:swp1, spine1:swp2]
  - endpoints: [leaf2:swp2, spine2:swp2]
  - endpoints: [leaf3:swp1, spine1:swp3]
  - endpoints: [leaf3:swp2, spine2:swp3]
  - endpoints: [leaf4:swp1, spine1:swp4]
  - endpoints: [leaf4:swp2, spine2:swp4]
)";

TEST(ExpectedPaths, DistinctSpineAsnsReachEachOtherOverEveryLeaf) {
  auto paths = twin::plan::expected_paths(twin::plan::make_plan(load_text(kDistinctSpines)), 4);
  EXPECT_EQ(paths.at({"spine1", "spine2"}).ecmp, 4);
  EXPECT_EQ(paths.at({"spine1", "spine2"}).as_path_len, 2);
  EXPECT_EQ(paths.at({"spine2", "spine1"}).ecmp, 4);
  EXPECT_EQ(paths.at({"leaf1", "leaf2"}).ecmp, 2);
  EXPECT_EQ(paths.at({"leaf1", "leaf2"}).as_path_len, 2);
  EXPECT_EQ(paths.at({"leaf1", "spine2"}).ecmp, 1);
  EXPECT_EQ(paths.size(), 30u);
}

TEST(ExpectedPaths, ChainAndNodesWithoutAsn) {
  // r1 - r2 - r3 - r4 in a line; r3 has a user config and no ASN (counts as unique).
  auto t = load_text(R"(version: 1
name: chain
nodes:
  r1: {asn: 65001, loopback: 10.0.0.1/32}
  r2: {asn: 65002, loopback: 10.0.0.2/32}
  r3: {asn: 65003, loopback: 10.0.0.3/32}
  r4: {asn: 65004, loopback: 10.0.0.4/32}
links:
  - endpoints: [r1:eth1, r2:eth1]
  - endpoints: [r2:eth2, r3:eth1]
  - endpoints: [r3:eth2, r4:eth1]
)");
  t.nodes[2].asn.reset();
  auto paths = twin::plan::expected_paths(twin::plan::make_plan(t), 4);
  EXPECT_EQ(paths.at({"r1", "r4"}).ecmp, 1);
  EXPECT_EQ(paths.at({"r1", "r4"}).as_path_len, 3);
  EXPECT_EQ(paths.at({"r4", "r1"}).as_path_len, 3);
  EXPECT_EQ(paths.at({"r1", "r3"}).as_path_len, 2);
  EXPECT_EQ(paths.at({"r2", "r3"}).as_path_len, 1);
  EXPECT_EQ(paths.size(), 12u);
}

TEST(ExpectedPaths, SameAsnBehindOneHopIsRejected) {
  // r1 (65001) - r2 (65002) - r3 (65001): r3 never accepts r1's routes and vice versa.
  auto t = load_text(R"(version: 1
name: loop
nodes:
  r1: {asn: 65001, loopback: 10.0.0.1/32}
  r2: {asn: 65002, loopback: 10.0.0.2/32}
  r3: {asn: 65001, loopback: 10.0.0.3/32}
links:
  - endpoints: [r1:eth1, r2:eth1]
  - endpoints: [r2:eth2, r3:eth1]
)");
  auto paths = twin::plan::expected_paths(twin::plan::make_plan(t), 4);
  EXPECT_EQ(paths.count({"r1", "r3"}), 0u);
  EXPECT_EQ(paths.count({"r3", "r1"}), 0u);
  EXPECT_EQ(paths.at({"r1", "r2"}).ecmp, 1);
  EXPECT_EQ(paths.at({"r2", "r3"}).ecmp, 1);
}

}  // namespace

// Only the daemons a configuration needs run: a generated fabric needs bgpd, a static route
// staticd (started then, by a change), a VM or a server none of twin's.
TEST(Plan, AddNeededDaemonsKeepsFrrsStartOrderAndIsIdempotent) {
  auto p = twin::plan::make_plan(clos());
  auto leaf = *p.find("leaf1");
  EXPECT_THAT(twin::plan::add_needed_daemons(leaf, "ip route 10.9.0.0/16 blackhole\nbfd\n"),
              ::testing::ElementsAre("staticd", "bfdd"));
  EXPECT_THAT(leaf.daemons, ::testing::ElementsAre("zebra", "bgpd", "staticd", "bfdd"));
  EXPECT_TRUE(twin::plan::add_needed_daemons(leaf, "ipv6 route ::/0 blackhole\n").empty());
  EXPECT_THAT(twin::plan::add_needed_daemons(leaf, "router ospf\n ospf router-id 1.1.1.1\n"),
              ::testing::ElementsAre("ospfd"));
  EXPECT_THAT(leaf.daemons, ::testing::ElementsAre("zebra", "bgpd", "ospfd", "staticd", "bfdd"));
  auto server = *p.find("server1");
  EXPECT_TRUE(twin::plan::add_needed_daemons(server, "ip route 10.9.0.0/16 blackhole\n").empty());
  EXPECT_TRUE(server.daemons.empty());
  auto vm = *p.find("leaf2");
  vm.backend = twin::topology::Backend::kLibvirt;
  vm.daemons.clear();
  EXPECT_TRUE(twin::plan::add_needed_daemons(vm, "router bgp 65001\n").empty());
}
