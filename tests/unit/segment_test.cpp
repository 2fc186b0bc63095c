// Unit tests for LAN segments (issue 46 item 1; WORKPLAN "one segment resource"): a `kind:
// bridge` node in twin's format and in containerlab files, the loader's refusals, the plan's
// layer-2 neighbors across a bridge (every pair of members), OSPF adjacencies and host subnets on
// a segment, the bridge's own script, and the mtu family's probes member to member — on
// topologies/ospf-lan, four OSPF routers and a server on one segment.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tests/unit/support.hpp"
#include "twin/plan/plan.hpp"
#include "twin/topology/loader.hpp"
#include "twin/validate/validator.hpp"
#include "twin/wiring/wiring.hpp"
#include "validators/mtu/mtu.hpp"
#include "validators/ospf/ospf.hpp"

namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using twin::Diagnostics;
using twin::plan::L2Peer;
using twin_test::dump;

const std::string kRepo = TWIN_DATA_DIR;
const std::string kTestData = TWIN_TEST_DATA;

struct Loaded {
  std::optional<twin::topology::Topology> topo;
  Diagnostics diags;
};

Loaded load_text(const std::string& text) {
  Loaded l;
  l.topo = twin::topology::load_topology_text(text, "t.yaml", kTestData, l.diags);
  return l;
}

const twin::plan::Plan& lan_lab(const std::string& file = "lab.yaml") {
  static std::map<std::string, twin::plan::Plan> plans;
  auto it = plans.find(file);
  if (it != plans.end()) return it->second;
  Diagnostics d;
  auto t = twin::topology::load_topology(kRepo + "/topologies/ospf-lan/" + file, d);
  if (!t) throw std::runtime_error(dump(d));
  return plans.emplace(file, twin::plan::make_plan(*t, "ospf-lan")).first->second;
}

const twin::plan::Interface& iface(const twin::plan::Plan& p, const std::string& node,
                                   const std::string& name) {
  for (const auto& i : p.find(node)->interfaces)
    if (i.name == name) return i;
  throw std::runtime_error("no " + node + ":" + name);
}

TEST(SegmentLoad, ABridgeNodeIsASegmentWhoseLinksAreMemberPorts) {
  const auto& p = lan_lab();
  const auto* lan = p.find("lan1");
  ASSERT_NE(lan, nullptr);
  EXPECT_EQ(lan->kind, twin::topology::NodeKind::kBridge);
  EXPECT_EQ(lan->image, "bridge");
  EXPECT_EQ(lan->netns, "tw-ospf-lan-lan1");
  EXPECT_TRUE(lan->daemons.empty());
  ASSERT_EQ(lan->interfaces.size(), 5u);
  EXPECT_EQ(lan->interfaces[0].name, "p1");
  EXPECT_EQ(lan->interfaces[0].peer_node, "r1");
  EXPECT_TRUE(lan->interfaces[0].addresses.empty());
  EXPECT_FALSE(iface(p, "r1", "eth1").fabric);  // no BGP unnumbered across a LAN
}

TEST(SegmentLoad, BridgesTakeNoRoutingFieldsNoAddressesAndNoOtherBridge) {
  auto l = load_text(R"(version: 1
name: t
nodes:
  r1: {asn: 65001, loopback: 10.0.0.1/32}
  lan1: {kind: bridge, asn: 65002}
  lan2: {kind: bridge}
links:
  - endpoints: [r1:eth1, lan1:p1]
    addresses: {r1: 10.1.0.1/24, lan1: 10.1.0.2/24}
  - endpoints: [lan1:p2, lan2:p1]
  - endpoints: [r1:eth2, lan2:br0]
)");
  EXPECT_FALSE(l.topo);
  const std::string all = dump(l.diags);
  EXPECT_THAT(all, HasSubstr("t.yaml:5"));
  EXPECT_THAT(all, HasSubstr("'asn' does not apply to kind bridge"));
  EXPECT_THAT(all, HasSubstr("links[0].addresses.lan1"));
  EXPECT_THAT(all, HasSubstr("bridge lan1 takes no address: its ports are layer 2"));
  EXPECT_THAT(all, HasSubstr("link joins two bridges, lan1 and lan2"));
  EXPECT_THAT(all, HasSubstr("port 'br0' of bridge lan2 is the name of the bridge itself"));
}

TEST(SegmentLoad, ASegmentOfOneMemberOrOfDifferentMtusPlansWithAWarning) {
  auto l = load_text(R"(version: 1
name: t
nodes:
  r1: {asn: 65001, loopback: 10.0.0.1/32}
  r2: {asn: 65002, loopback: 10.0.0.2/32}
  lan1: {kind: bridge}
  lan2: {kind: bridge}
  lan3: {kind: bridge}
links:
  - endpoints: [r1:eth1, lan1:p1]
    mtu: 9000
  - endpoints: [r2:eth1, lan1:p2]
  - endpoints: [r1:eth2, lan2:p1]
checks:
  - frr: {node: lan1, command: show ip ospf neighbor json, match: {}}
)");
  EXPECT_FALSE(l.topo);  // the check: a bridge runs no FRR
  EXPECT_THAT(dump(l.diags), HasSubstr("node 'lan1' is a bridge (a LAN segment); this check reads "
                                       "FRR's output"));
  const std::string w = l.diags.format_warnings();
  EXPECT_THAT(w, HasSubstr("t.yaml:6:3: warning: nodes.lan1: members of segment lan1 have "
                           "different MTUs (r1:eth1 9000, r2:eth1 1500)"));
  EXPECT_THAT(w, HasSubstr("nodes.lan2: bridge lan2 has one member, r1:eth2: nothing shares it"));
  EXPECT_THAT(w, HasSubstr("nodes.lan3: bridge lan3 has no members: no link joins it"));
}

TEST(SegmentLoad, AHostOnASegmentTakesTheRouterOnItsSubnetAsGateway) {
  auto l = load_text(R"(version: 1
name: t
nodes:
  r1: {asn: 65001, loopback: 10.0.0.1/32}
  r2: {asn: 65002, loopback: 10.0.0.2/32}
  h1: {kind: host}
  lan: {kind: bridge}
links:
  - endpoints: [r1:eth1, lan:p1]
    addresses: {r1: 10.1.0.1/24}
  - endpoints: [r2:eth1, lan:p2]
    addresses: {r2: 10.2.0.1/24}
  - endpoints: [h1:eth1, lan:p3]
    addresses: {h1: 10.2.0.10/24}
)");
  ASSERT_TRUE(l.topo) << dump(l.diags);
  auto p = twin::plan::make_plan(*l.topo);
  ASSERT_EQ(p.find("h1")->routes.size(), 1u);
  EXPECT_EQ(p.find("h1")->routes[0].via, "10.2.0.1");  // r2's, the one on h1's subnet
}

TEST(SegmentLoad, ContainerlabBridgeIsTwinsOwnBridgeWithAWarningNamingBoth) {
  Diagnostics d;
  auto t = twin::topology::load_topology(kRepo + "/topologies/ospf-lan/ospf-lan.clab.yml", d);
  ASSERT_TRUE(t) << dump(d);
  const std::string all = d.format_warnings();
  EXPECT_THAT(all, HasSubstr("node lan1 (kind bridge) runs as twin's own Linux bridge in "
                             "namespace tw-ospf-lan-lan1, not a bridge of this host named lan1"));
  auto p = twin::plan::make_plan(*t, "ospf-lan");
  const auto& own = lan_lab();
  // The same segment and the same expectations as twin's own file.
  EXPECT_EQ(p.find("lan1")->kind, twin::topology::NodeKind::kBridge);
  EXPECT_EQ(p.adjacencies.size(), own.adjacencies.size());
  EXPECT_EQ(p.find("srv1")->routes.size(), 1u);
}

TEST(SegmentLoad, ContainerlabHostAndExtContainerKindsAreStillRefused) {
  Diagnostics d;
  auto t = twin::topology::load_topology_text(R"(name: t
topology:
  nodes:
    r1: {kind: linux, image: alpine}
    h: {kind: host}
  links:
    - endpoints: ["r1:eth1", "h:veth0"]
)",
                                              "t.clab.yml", kTestData, d);
  EXPECT_FALSE(t);
  EXPECT_THAT(dump(d), HasSubstr("node h is of kind 'host', the host itself or a container "
                                 "outside the lab"));
}

TEST(SegmentPlan, EachMemberHasEveryOtherMemberAsLayerTwoPeer) {
  const auto& p = lan_lab();
  const auto& r3 = *p.find("r3");
  EXPECT_EQ(twin::plan::segment_of(p, iface(p, "r3", "eth1"))->name, "lan1");
  EXPECT_THAT(twin::plan::l2_peers(p, r3, iface(p, "r3", "eth1")),
              ElementsAre(L2Peer{"r1", "eth1"}, L2Peer{"r2", "eth1"}, L2Peer{"r4", "eth1"},
                          L2Peer{"srv1", "eth1"}));
  EXPECT_TRUE(twin::plan::faces_host(p, r3, iface(p, "r3", "eth1")));
  // The bridge's own ports have no layer-2 peers: it is the medium, not a member.
  EXPECT_TRUE(twin::plan::l2_peers(p, *p.find("lan1"), p.find("lan1")->interfaces[0]).empty());
}

TEST(SegmentPlan, AMemberPortDownLeavesTheOthersPeers) {
  auto p = lan_lab();
  for (auto& i : p.find("lan1")->interfaces)
    if (i.name == "p4") i.up = false;  // r4's port at the bridge
  EXPECT_THAT(twin::plan::l2_peers(p, *p.find("r1"), iface(p, "r1", "eth1")),
              ElementsAre(L2Peer{"r2", "eth1"}, L2Peer{"r3", "eth1"}, L2Peer{"srv1", "eth1"}));
}

TEST(SegmentPlan, EveryPairOfOspfRoutersIsAnAdjacencyAndPathsCrossTheSegmentDirectly) {
  const auto& p = lan_lab();
  ASSERT_EQ(p.adjacencies.size(), 12u);  // 4 routers, 3 neighbors each
  std::vector<std::string> r3;
  for (const auto& a : p.adjacencies)
    if (a.node == "r3") r3.push_back(a.peer_node + ":" + a.peer_interface);
  EXPECT_THAT(r3, ElementsAre("r1:eth1", "r2:eth1", "r4:eth1"));
  // r3 reaches r4's loopback in one hop (not through the bridge, not through r1).
  auto paths = twin::plan::expected_paths(p, 4);
  EXPECT_EQ(paths.at({"r3", "r4"}).ecmp, 1);
  // The server's subnet is expected once (one island), and only the segment's routers hold it.
  int subnet = 0;
  for (const auto& e : p.prefixes)
    if (e.prefix == "10.0.0.0/24") {
      ++subnet;
      EXPECT_EQ(e.kind, "host-subnet");
    }
  EXPECT_EQ(subnet, 1);
  const std::string text = twin::plan::render_plan_text(p);
  EXPECT_THAT(text, HasSubstr("6 nodes (4 frr, 1 host, 1 bridge)"));
  EXPECT_THAT(text, HasSubstr("lan1  bridge br0 in netns tw-ospf-lan-lan1  members r1:eth1, "
                              "r2:eth1, r3:eth1, r4:eth1, srv1:eth1"));
  EXPECT_THAT(text, HasSubstr("(segment lan1 with r1:eth1, r2:eth1, r4:eth1, srv1:eth1)"));
  EXPECT_THAT(text, HasSubstr("r3:eth1 <-> r4:eth1  area 0.0.0.0  on segment lan1: Full with the "
                              "DR and BDR, 2-Way between others"));
}

TEST(SegmentPlan, IbgpAmongThreeRoutersOnOneSubnetRunsOverTheSegment) {
  auto l = load_text(R"(version: 1
name: t
nodes:
  r1: {config: segment/r1.conf}
  r2: {config: segment/r2.conf}
  r3: {config: segment/r3.conf}
  lan: {kind: bridge}
links:
  - endpoints: [r1:eth1, lan:p1]
  - endpoints: [r2:eth1, lan:p2]
  - endpoints: [r3:eth1, lan:p3]
)");
  ASSERT_TRUE(l.topo) << dump(l.diags);
  auto p = twin::plan::make_plan(*l.topo);
  std::vector<std::string> sessions;
  for (const auto& s : p.sessions)
    sessions.push_back(s.node + " " + s.interface + " " + s.peer_address + " " + s.peer_node +
                       (s.ibgp ? " iBGP" : " eBGP"));
  EXPECT_THAT(sessions, ElementsAre("r1 eth1 10.9.0.2 r2 iBGP", "r1 eth1 10.9.0.3 r3 iBGP",
                                    "r2 eth1 10.9.0.1 r1 iBGP", "r2 eth1 10.9.0.3 r3 iBGP",
                                    "r3 eth1 10.9.0.1 r1 iBGP", "r3 eth1 10.9.0.2 r2 iBGP"));
  // Each router learns the others' loopbacks straight over the segment (iBGP, no IGP needed:
  // the next hops are on the shared subnet).
  auto paths = twin::plan::expected_paths(p, 4);
  EXPECT_EQ(paths.at({"r1", "r3"}).ecmp, 1);
  EXPECT_EQ(paths.at({"r2", "r1"}).ecmp, 1);
}

TEST(SegmentPlan, ThePlanRoundTripsThroughTheStateFilesJson) {
  const auto& p = lan_lab();
  auto back = twin::plan::plan_from_json(twin::plan::to_json(p));
  EXPECT_EQ(back.find("lan1")->kind, twin::topology::NodeKind::kBridge);
  EXPECT_EQ(twin::plan::to_json(back), twin::plan::to_json(p));
}

TEST(SegmentWiring, TheBridgeJoinsItsPortsWithStpAndSnoopingOff) {
  const auto& p = lan_lab();
  const auto& lan = *p.find("lan1");
  EXPECT_EQ(twin::wiring::bridge_script(lan),
            "link add br0 type bridge stp_state 0 forward_delay 0 mcast_snooping 0\n"
            "link set p1 master br0\nlink set p2 master br0\nlink set p3 master br0\n"
            "link set p4 master br0\nlink set p5 master br0\nlink set br0 up\n");
  // A port added to a running lab joins the bridge that is there.
  EXPECT_EQ(twin::wiring::bridge_script(lan, {"p5"}), "link set p5 master br0\n");
  EXPECT_EQ(twin::wiring::bridge_script(*p.find("r1")), "");
}

TEST(SegmentMtu, EachMemberIsProbedTowardEveryOtherMemberNotTowardTheBridge) {
  const auto& p = lan_lab();
  // Each member's port with an IPv6 link-local address, as the kernel shows it.
  std::map<std::string, twin::Result<nlohmann::json>> addrs;
  int k = 1;
  for (const char* n : {"r1", "r2", "r3", "r4", "srv1"})
    addrs.emplace(n, twin::ok(nlohmann::json::array({{{"ifname", "eth1"},
                                                      {"addr_info",
                                                       {{{"family", "inet6"},
                                                         {"local", "fe80::" + std::to_string(k++)},
                                                         {"scope", "link"}}}}}})));
  addrs.emplace("lan1", twin::ok(nlohmann::json::array()));
  auto probes = twin::validators::link_df_probes(p, addrs, nullptr);
  std::vector<std::string> from_r3;
  for (const auto& pr : probes)
    if (pr.node == "r3") from_r3.push_back(pr.subject + " " + pr.request.destination);
  EXPECT_THAT(from_r3, ElementsAre("eth1 -> r1:eth1 fe80::1", "eth1 -> r2:eth1 fe80::2",
                                   "eth1 -> r4:eth1 fe80::4", "eth1 -> srv1:eth1 fe80::5"));
  EXPECT_EQ(probes.size(), 20u);  // 5 members x 4 others; none from or to the bridge
}

// ---- the ospf family on a segment, on FRR 8.4's JSON recorded from topologies/ospf-lan --------
// healthy: r1 DR, r2 BDR, r3 and r4 DROthers (2-Way with each other). split: r4's bridge port
// taken out of the bridge (`ip link set p4 nomaster`, carrier kept): r4 hears nobody and, after
// its wait timer, names itself DR.

nlohmann::json read_json(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw std::runtime_error("cannot read " + path);
  return nlohmann::json::parse(f);
}

std::map<std::string, twin::validators::OspfObservation> ospf_lan(const std::string& r4_case,
                                                                  const std::string& others) {
  std::map<std::string, twin::validators::OspfObservation> m;
  for (const char* n : {"r1", "r2", "r3", "r4"}) {
    const std::string base =
        kTestData + "/frr84/ospf-lan/" + (std::string(n) == "r4" ? r4_case : others) + "/" + n;
    twin::validators::OspfObservation o;
    o.neighbors = twin::ok(read_json(base + "-ospf-neighbor.json"));
    o.interfaces = twin::ok(read_json(base + "-ospf-interface.json"));
    o.instance = twin::ok(read_json(base + "-ospf.json"));
    o.routes = twin::ok(read_json(base + "-ip-route.json"));
    m.emplace(n, std::move(o));
  }
  return m;
}

std::vector<std::string> lines(const std::vector<twin::validate::TestResult>& rs, int test,
                               bool failed_only) {
  std::vector<std::string> out;
  for (const auto& r : rs)
    if (r.test == test && (!failed_only || r.status != twin::validate::Status::kPassed))
      out.push_back(r.node + " " + r.expected + ": " + r.observed + " — " + r.message);
  return out;
}

TEST(SegmentOspf, TheHealthyLanPassesWithDrOthersAt2WayAndOneDr) {
  auto rs = twin::validators::evaluate_ospf(lan_lab(), ospf_lan("healthy", "healthy"));
  EXPECT_THAT(lines(rs, 0, true), ::testing::IsEmpty());
  EXPECT_THAT(lines(rs, 1, true), ::testing::IsEmpty());
  EXPECT_EQ(lines(rs, 0, false).size(), 12u);
  std::vector<std::string> two_way;
  for (const auto& l : lines(rs, 0, false))
    if (l.find("2-Way/") != std::string::npos) two_way.push_back(l);
  EXPECT_THAT(two_way,
              ElementsAre("r3 Full with r4 (2-Way if both DROther): 2-Way/DROther — r4 on segment "
                          "lan1 is 2-Way: both routers are DROthers, which form no adjacency",
                          "r4 Full with r3 (2-Way if both DROther): 2-Way/DROther — r3 on segment "
                          "lan1 is 2-Way: both routers are DROthers, which form no adjacency"));
  EXPECT_THAT(lines(rs, 4, false),
              ElementsAre("lan1 one DR, a member, named by every member: r1=10.0.255.1 "
                          "r2=10.0.255.1 r3=10.0.255.1 r4=10.0.255.1 — every member names "
                          "10.0.255.1 the DR"));
}

TEST(SegmentOspf, AMemberCutOffFromTheSegmentNamesItselfDrAndItsAdjacenciesFail) {
  auto rs = twin::validators::evaluate_ospf(lan_lab(), ospf_lan("split", "split"));
  EXPECT_THAT(lines(rs, 4, true),
              ElementsAre("lan1 one DR, a member, named by every member: r1=10.0.255.1 "
                          "r2=10.0.255.1 r3=10.0.255.1 r4=10.0.255.4 — members name different DRs "
                          "(r1=10.0.255.1 r2=10.0.255.1 r3=10.0.255.1 r4=10.0.255.4): the segment "
                          "does not carry every member's hellos"));
  std::vector<std::string> failed;
  for (const auto& r : rs)
    if (r.test == 0 && r.status == twin::validate::Status::kFailed)
      failed.push_back(r.node + ">" + r.expected.substr(10, 2));
  EXPECT_THAT(failed, ElementsAre("r1>r4", "r2>r4", "r3>r4", "r4>r1", "r4>r2", "r4>r3"));
}

// Before the election every neighbor reads 2-Way/DROther: only a router that is itself a
// DROther may stay there. The healthy recording with r3's interface put back in its wait
// timer (as FRR shows it then) fails r3's 2-Way with r4.
TEST(SegmentOspf, TwoWayPassesOnlyOnceThisRouterIsADrOtherToo) {
  auto obs = ospf_lan("healthy", "healthy");
  (*obs["r3"].interfaces)["interfaces"]["eth1"]["state"] = "Waiting";
  auto rs = twin::validators::evaluate_ospf(lan_lab(), obs);
  EXPECT_THAT(lines(rs, 0, true),
              ElementsAre(HasSubstr("r3 Full with r4 (2-Way if both DROther): 2-Way/DROther — "
                                    "adjacency with r4 on eth1 is not Full")));
  twin::validate::OspfNeighbor n{"10.0.255.4", "2-Way/DROther", "DROther", ""};
  EXPECT_TRUE(twin::validate::ospf_settled(n, true, "DROther"));
  EXPECT_FALSE(twin::validate::ospf_settled(n, true, "Waiting"));
  EXPECT_FALSE(twin::validate::ospf_settled(n, false, "DROther"));  // point to point: Full only
  // OSPFv3 says both roles with the neighbor (FRR 8.4: `ifState`, `interfaceState`).
  EXPECT_TRUE(twin::validate::ospf_settled({"10.9.255.2", "Twoway", "DROther", "DROther"}, true,
                                           "DROther"));
  EXPECT_FALSE(
      twin::validate::ospf_settled({"10.9.255.1", "Twoway", "DR", "DROther"}, true, "DROther"));
}

}  // namespace
