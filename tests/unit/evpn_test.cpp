// Unit tests for EVPN tenants beyond the loader: the plan (VTEP devices, generated EVPN
// config, kernel script, state round trip), the evpn validator family on FRR 8.4 and iproute2
// JSON recorded from evpn-2x4 (tests/data/frr84/evpn/), and tenant reachability/isolation.
#include "validators/evpn/evpn.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/unit/support.hpp"
#include "twin/causes/causes.hpp"
#include "twin/changeset/intent.hpp"
#include "twin/changeset/steps.hpp"
#include "twin/plan/plan.hpp"
#include "twin/topology/loader.hpp"
#include "twin/verdict/diff.hpp"
#include "twin/wiring/wiring.hpp"
#include "validators/reachability/reachability.hpp"

namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using twin::validate::Status;
using twin::validate::TestResult;
using twin::validators::EvpnFacts;

const std::string kRepo = TWIN_DATA_DIR;
const std::string kEvpn = std::string(TWIN_TEST_DATA) + "/frr84/evpn/";

const twin::plan::Plan& evpn_plan() {
  static const twin::plan::Plan p = [] {
    twin::Diagnostics d;
    auto t = twin::topology::load_topology(kRepo + "/topologies/evpn-2x4.yaml", d);
    if (!t) throw std::runtime_error(twin_test::dump(d));
    return twin::plan::make_plan(*t);
  }();
  return p;
}

twin::Result<json> rec(const std::string& f) {
  return twin::ok(json::parse(twin_test::read(kEvpn + f)));
}

// A VTEP's recorded facts; the typo run recorded no summary (its sessions were unchanged).
EvpnFacts vtep(const std::string& prefix) {
  EvpnFacts f;
  if (std::filesystem::exists(kEvpn + prefix + ".evpn-summary.json"))
    f.summary = rec(prefix + ".evpn-summary.json");
  f.vnis = rec(prefix + ".vni.json");
  f.macs = rec(prefix + ".mac.json");
  f.links = rec(prefix + ".link.json");
  f.fdb = rec(prefix + ".fdb.json");
  return f;
}

std::vector<TestResult> of(const std::vector<TestResult>& rs, const std::string& node,
                           int test = -1) {
  std::vector<TestResult> out;
  for (const auto& r : rs)
    if (r.node == node && (test < 0 || r.test == test)) out.push_back(r);
  return out;
}

std::string dump(const std::vector<TestResult>& rs) {
  std::string s;
  for (const auto& r : rs)
    s += r.node + " " + std::to_string(r.test) + " " + r.peer + ": " + r.message + "\n";
  return s;
}

TEST(EvpnPlan, LeavesAreVtepsOfTheirNetworksAndSpinesCarryEvpn) {
  const auto& p = evpn_plan();
  const auto* leaf1 = p.find("leaf1");
  ASSERT_EQ(leaf1->vnis.size(), 2u);
  EXPECT_EQ(leaf1->vnis[0].vni, 10100u);
  EXPECT_EQ(leaf1->vnis[0].vxlan, "vx10100");
  EXPECT_EQ(leaf1->vnis[0].bridge, "br10100");
  EXPECT_EQ(leaf1->vnis[0].local, "10.255.1.1");
  EXPECT_EQ(leaf1->vnis[0].mtu, 1500);
  EXPECT_THAT(leaf1->vnis[0].ports, ::testing::ElementsAre("swp3"));
  EXPECT_TRUE(p.find("spine1")->vnis.empty());
  ASSERT_EQ(p.tenants.size(), 2u);
  EXPECT_THAT(p.tenants[1].networks[0].vteps, ::testing::ElementsAre("leaf1", "leaf2", "leaf4"));
  EXPECT_THAT(p.tenants[1].networks[0].servers, ::testing::ElementsAre("blue1", "blue2", "blue3"));
  // Bridged ports have no address and originate nothing: only loopbacks are advertised.
  for (const auto& e : p.prefixes) EXPECT_EQ(e.kind, "loopback") << e.prefix;
  // Generated configs: EVPN on every fabric session, VNIs advertised by VTEPs only.
  EXPECT_THAT(leaf1->frr_config,
              HasSubstr(" address-family l2vpn evpn\n  neighbor fabric activate\n"
                        "  advertise-all-vni\n exit-address-family\n"));
  EXPECT_THAT(p.find("spine1")->frr_config,
              HasSubstr(" address-family l2vpn evpn\n  neighbor fabric activate\n exit-address-family\n"));
  EXPECT_EQ(twin::wiring::vtep_script(*p.find("spine1")), "");
  EXPECT_EQ(twin::wiring::vtep_script(*p.find("leaf3")),
            "link add vx10100 type vxlan id 10100 local 10.255.1.3 dstport 4789 nolearning df set\n"
            "link set vx10100 mtu 1500\n"
            "link add br10100 type bridge\n"
            "link set vx10100 master br10100\n"
            "link set dev vx10100 type bridge_slave learning off\n"
            "link set swp3 master br10100\n"
            "link set br10100 up\n"
            "link set vx10100 up\n");
  // The state file keeps it all.
  auto back = twin::plan::plan_from_json(twin::plan::to_json(p));
  EXPECT_EQ(twin::plan::to_json(back), twin::plan::to_json(p));
  EXPECT_EQ(back.find("leaf2")->vnis[1].vni, 20100u);
  EXPECT_EQ(back.tenants[0].networks[1].name, "db");
}

TEST(EvpnPlan, ARoutingTenantGetsAVrfAnL3VniAndAGateway) {
  twin::Diagnostics d;
  std::string text = twin_test::read(kRepo + "/topologies/evpn-2x4.yaml");
  text.replace(text.find("  red:\n    networks:\n      web: {vni: 10100, ports: [leaf1:swp3, leaf3:swp3]}"),
               std::string("  red:\n    networks:\n      web: {vni: 10100, ports: [leaf1:swp3, leaf3:swp3]}").size(),
               "  red:\n    l3vni: 5001\n    networks:\n      web: {vni: 10100, ports: [leaf1:swp3, "
               "leaf3:swp3], gateway: 10.10.1.1/24}");
  auto t = twin::topology::load_topology_text(text, "e.yaml", kRepo + "/topologies", d);
  ASSERT_TRUE(t) << twin_test::dump(d);
  auto p = twin::plan::make_plan(*t);
  const auto* leaf1 = p.find("leaf1");
  ASSERT_EQ(leaf1->vnis.size(), 3u);  // 10100, 20100, then red's L3 VNI
  EXPECT_TRUE(leaf1->vnis[2].l3());
  EXPECT_EQ(leaf1->vnis[2].vni, 5001u);
  EXPECT_EQ(leaf1->vnis[0].gateway, "10.10.1.1/24");
  EXPECT_EQ(leaf1->vnis[0].vrf, "red");
  EXPECT_TRUE(leaf1->vnis[1].vrf.empty());  // blue does not route
  EXPECT_THAT(leaf1->frr_config, HasSubstr("vrf red\n vni 5001\nexit-vrf\n"));
  EXPECT_THAT(leaf1->frr_config,
              HasSubstr("router bgp 65101 vrf red\n bgp router-id 10.255.1.1\n"));
  EXPECT_THAT(leaf1->frr_config, HasSubstr("  advertise ipv4 unicast\n"));
  std::string k = twin::wiring::vtep_script(*leaf1);
  EXPECT_EQ(k.rfind("link add red type vrf table 1001\nlink set red up\n", 0), 0u) << k;
  EXPECT_THAT(k, HasSubstr("link set br10100 master red\n"));
  EXPECT_THAT(k, HasSubstr("address add 10.10.1.1/24 dev br10100\n"));
  EXPECT_THAT(k, HasSubstr("link add vx5001 type vxlan id 5001 local 10.255.1.1"));
  // red's servers route through the gateway; the web network's servers take it.
  EXPECT_EQ(p.find("red1")->routes.at(0).via, "10.10.1.1");
}

// A spine's recorded links (clos-2x4's spine1: lo and four ports, no VXLAN device) and its EVPN
// summary; spine2 and leaf4 stand in with spine1's and leaf1's summaries (the same neighbor
// names: swp1..4 on a spine, swp1 and swp2 on a leaf).
EvpnFacts spine() {
  EvpnFacts f;
  f.summary = rec("good.spine1.evpn-summary.json");
  f.links = twin::ok(
      json::parse(twin_test::read(std::string(TWIN_TEST_DATA) + "/frr84/spine1-ip-link.json")));
  return f;
}

TEST(EvpnValidator, RecordedVtepsPassAndUnprobedOnesAreErrors) {
  std::map<std::string, EvpnFacts> f;
  f["leaf1"] = vtep("good.leaf1");
  f["leaf2"] = vtep("good.leaf2");
  f["spine1"] = spine();
  f["spine2"] = spine();
  f["leaf4"].summary = rec("good.leaf1.evpn-summary.json");
  auto rs = twin::validators::evaluate_evpn(evpn_plan(), f);
  for (const char* n : {"leaf1", "leaf2"}) {
    auto mine = of(rs, n);
    ASSERT_FALSE(mine.empty()) << n;
    for (const auto& r : mine) EXPECT_EQ(r.status, Status::kPassed) << dump({r});
  }
  // leaf1: 2 sessions, 2 VNIs, 2 flood lists, MACs of red2 (10100) and blue2, blue3 (20100).
  EXPECT_EQ(of(rs, "leaf1", 0).size(), 2u);
  EXPECT_EQ(of(rs, "leaf1", 1).size(), 2u);
  EXPECT_EQ(of(rs, "leaf1", 2).size(), 2u);
  EXPECT_EQ(of(rs, "leaf1", 3).size(), 3u);
  EXPECT_EQ(of(rs, "leaf1", 4).size(), 2u);
  // spine1: its sessions toward leaf1, leaf2 and leaf4 are Established at both ends; toward
  // leaf3, whose summary was not read, Established at spine1 alone proves nothing.
  auto sessions = of(rs, "spine1", 0);
  ASSERT_EQ(sessions.size(), 4u) << dump(sessions);
  for (const auto& r : sessions)
    EXPECT_EQ(r.status, r.peer == "swp3" ? Status::kError : Status::kPassed) << dump({r});
  // No VXLAN device on a spine: one pass, for the router.
  auto stray = of(rs, "spine1", 1);
  ASSERT_EQ(stray.size(), 1u) << dump(stray);
  EXPECT_EQ(stray[0].status, Status::kPassed);
  EXPECT_EQ(stray[0].expected, "no VNI on spine1 (no tenant port)");
  for (const auto& r : of(rs, "leaf3")) EXPECT_EQ(r.status, Status::kError) << dump({r});
  EXPECT_FALSE(of(rs, "leaf3").empty());
  // Without tenants the family has nothing to say.
  twin::plan::Plan none = evpn_plan();
  none.tenants.clear();
  EXPECT_TRUE(twin::validators::evaluate_evpn(none, f).empty());
}

TEST(EvpnValidator, AMistypedVniFailsWhereItIsAndWhereItIsMissed) {
  std::map<std::string, EvpnFacts> f;
  f["leaf1"] = vtep("vni-typo.leaf1");
  f["leaf1"].summary = rec("good.leaf1.evpn-summary.json");
  f["leaf3"] = vtep("vni-typo.leaf3");
  f["leaf3"].summary = rec("good.leaf1.evpn-summary.json");
  auto rs = twin::validators::evaluate_evpn(evpn_plan(), f);
  auto present = of(rs, "leaf3", 1);
  ASSERT_EQ(present.size(), 2u) << dump(present);
  EXPECT_EQ(present[0].status, Status::kFailed);
  EXPECT_EQ(present[0].message,
            "VNI 10100 (red web) is not on leaf3: its servers there are cut off from the rest of "
            "the network");
  EXPECT_EQ(present[1].message,
            "VNI 10101 is on leaf3 (vx10100), but no tenant network puts it there: a mistyped "
            "or stray VNI");
  auto bridge = of(rs, "leaf3", 4);
  ASSERT_EQ(bridge.size(), 1u);
  EXPECT_EQ(bridge[0].observed, "vx10100 carries VNI 10101");
  // leaf1 misses leaf3 as a remote VTEP of 10100, and red2's MAC behind it.
  auto flood = of(rs, "leaf1", 2);
  ASSERT_EQ(flood.size(), 2u);
  EXPECT_EQ(flood[0].status, Status::kFailed);
  EXPECT_EQ(flood[0].peer, "VNI 10100");
  EXPECT_EQ(flood[0].observed, "none");
  EXPECT_EQ(flood[0].expected, "10.255.1.3");
  EXPECT_EQ(flood[1].status, Status::kPassed);  // 20100 is untouched
  const auto macs = of(rs, "leaf1", 3);
  auto red2 = std::find_if(macs.begin(), macs.end(),
                           [](const TestResult& r) { return r.peer == "VNI 10100 red2"; });
  ASSERT_NE(red2, macs.end()) << dump(macs);
  EXPECT_EQ(red2->status, Status::kFailed);
  EXPECT_THAT(red2->message, HasSubstr("is missing in VNI 10100 on leaf1, expected remote via "
                                       "10.255.1.3 (EVPN type 2)"));
}

TEST(EvpnValidator, APortInAnotherTenantsBridgeIsNamed) {
  std::map<std::string, EvpnFacts> f;
  f["leaf2"] = vtep("good.leaf2");
  f["leaf2"].links = rec("leak.leaf2.link.json");
  auto rs = of(twin::validators::evaluate_evpn(evpn_plan(), f), "leaf2", 4);
  ASSERT_EQ(rs.size(), 2u);
  EXPECT_EQ(rs[0].status, Status::kPassed);  // 10200: its own port stays
  EXPECT_EQ(rs[1].status, Status::kFailed);
  EXPECT_EQ(rs[1].message,
            "VNI 20100 (blue app) on leaf2: swp4 is in br10200 (VNI 10200, red db), expected "
            "br20100");
}

// Recorded: with `no advertise-all-vni`, FRR 8.4's zebra prints nothing for `show evpn vni
// json` (runtime::show_json gives null).
TEST(EvpnValidator, EvpnOffInZebraFailsEveryVniOfTheVtep) {
  std::map<std::string, EvpnFacts> f;
  f["leaf3"].vnis = twin::ok(json());
  f["leaf3"].macs = twin::ok(json());
  f["leaf3"].links = rec("good.leaf1.link.json");
  auto rs = of(twin::validators::evaluate_evpn(evpn_plan(), f), "leaf3", 1);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0].status, Status::kFailed);
  EXPECT_EQ(rs[0].observed, "EVPN off");
  EXPECT_THAT(rs[0].message, HasSubstr("EVPN is off in leaf3's zebra: it knows no VNI, so VNI "
                                       "10100 (red web) is not advertised"));
}

TEST(EvpnCauses, AVtepWithoutAdvertiseAllVniIsNamed) {
  const auto& p = evpn_plan();
  std::string cfg = p.find("leaf3")->frr_config;
  twin::replay::CauseFacts facts;
  facts.nodes["leaf3"].config = cfg;
  facts.nodes["spine1"].config = p.find("spine1")->frr_config;  // no VNI: nothing to advertise
  EXPECT_TRUE(twin::replay::likely_causes(p, facts).empty());
  cfg.replace(cfg.find("  advertise-all-vni\n"), std::string("  advertise-all-vni\n").size(), "");
  facts.nodes["leaf3"].config = cfg;
  auto c = twin::replay::likely_causes(p, facts);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].rule, "evpn-not-advertised");
  EXPECT_EQ(c[0].text,
            "leaf3 is a VTEP of VNI 10100 but its BGP does not advertise them: no "
            "`advertise-all-vni` under `address-family l2vpn evpn`, so no other VTEP learns its "
            "servers (EVPN types 2 and 3)");
  EXPECT_EQ(c[0].nodes, (std::vector<std::string>{"leaf3", "red1", "red2"}));
}

// spine1 without `neighbor fabric activate` under l2vpn evpn: leaf1's summary still lists
// swp1 as Established (it activates the family itself); spine1's lists nothing.
TEST(EvpnValidator, ASessionOnlyOneEndActivatesFailsAtBothEnds) {
  std::map<std::string, EvpnFacts> f;
  f["leaf1"].summary = rec("good.leaf1.evpn-summary.json");
  json spine = *rec("good.spine1.evpn-summary.json");
  spine["peers"] = json::object();
  f["spine1"].summary = twin::ok(spine);
  auto leaf = of(twin::validators::evaluate_evpn(evpn_plan(), f), "leaf1", 0);
  ASSERT_EQ(leaf.size(), 2u);
  EXPECT_EQ(leaf[0].status, Status::kFailed);
  EXPECT_EQ(leaf[0].message,
            "spine1 does not activate l2vpn evpn toward leaf1 (no swp1 in its EVPN summary): the "
            "session carries no EVPN route either way");
  // Toward spine2, whose summary was not read: Established at leaf1 is not a pass.
  EXPECT_EQ(leaf[1].status, Status::kError);
  EXPECT_EQ(leaf[1].observed, "Established here, spine2 unknown");
  EXPECT_EQ(leaf[1].message,
            "Established on leaf1, but whether spine2 activates l2vpn evpn toward it is unknown: "
            "spine2: `show bgp l2vpn evpn summary json` not probed");
}

// The audit's case: spine2's bgpd could not be asked. leaf1's session toward it is an error
// naming spine2 and the command, never a pass on leaf1's word.
TEST(EvpnValidator, AnUnreadablePeerSummaryIsAnErrorNotAPass) {
  std::map<std::string, EvpnFacts> f;
  f["leaf1"].summary = rec("good.leaf1.evpn-summary.json");
  f["spine1"] = spine();
  f["spine2"].summary = twin::harness_error("bgpd.vty: connection refused");
  auto leaf = of(twin::validators::evaluate_evpn(evpn_plan(), f), "leaf1", 0);
  ASSERT_EQ(leaf.size(), 2u);
  EXPECT_EQ(leaf[0].peer, "swp1");
  EXPECT_EQ(leaf[0].status, Status::kPassed);
  EXPECT_EQ(leaf[1].peer, "swp2");
  EXPECT_EQ(leaf[1].status, Status::kError);
  EXPECT_EQ(leaf[1].message,
            "Established on leaf1, but whether spine2 activates l2vpn evpn toward it is unknown: "
            "spine2: `show bgp l2vpn evpn summary json` failed: bgpd.vty: connection refused");
  // Not Established at leaf1 is a failure whatever the peer says.
  json down = *rec("good.leaf1.evpn-summary.json");
  down["peers"]["swp2"]["state"] = "Active";
  f["leaf1"].summary = twin::ok(down);
  auto failed = of(twin::validators::evaluate_evpn(evpn_plan(), f), "leaf1", 0);
  ASSERT_EQ(failed.size(), 2u);
  EXPECT_EQ(failed[1].status, Status::kFailed);
  EXPECT_EQ(failed[1].message, "l2vpn evpn toward spine2 is Active");
}

// The audit's case: leaf1's zebra has the flood list and the MACs right, but the kernel FDB
// could not be read (or came back empty, which a running kernel never is: each port has its
// own entries). Each flood-list and mac-learned result is an error naming the command.
TEST(EvpnValidator, AnUnreadableFdbMakesZebrasWordAnErrorNotAPass) {
  for (bool empty : {false, true}) {
    SCOPED_TRACE(empty ? "[]" : "unreadable");
    std::map<std::string, EvpnFacts> f;
    f["leaf1"] = vtep("good.leaf1");
    f["leaf1"].fdb = empty ? twin::ok(json::array())
                           : twin::Result<json>(twin::harness_error("netns tw-evpn-leaf1: bridge: "
                                                                    "exit 255"));
    auto rs = twin::validators::evaluate_evpn(evpn_plan(), f);
    const std::string why = empty ? "leaf1: `bridge -j fdb show` returned an empty list"
                                  : "leaf1: `bridge -j fdb show` failed: netns tw-evpn-leaf1: "
                                    "bridge: exit 255";
    auto flood = of(rs, "leaf1", 2);
    ASSERT_EQ(flood.size(), 2u) << dump(flood);
    for (const auto& r : flood) {
      EXPECT_EQ(r.status, Status::kError) << dump({r});
      EXPECT_THAT(r.message, HasSubstr("but whether the kernel floods to them is unknown: " + why));
    }
    EXPECT_EQ(flood[0].observed, "10.255.1.3");  // zebra's own answer is kept
    auto macs = of(rs, "leaf1", 3);
    ASSERT_EQ(macs.size(), 3u) << dump(macs);
    for (const auto& r : macs) {
      EXPECT_EQ(r.status, Status::kError) << dump({r});
      EXPECT_THAT(r.observed, HasSubstr("FDB unknown"));
      EXPECT_THAT(r.message, HasSubstr("but whether the kernel installed it is unknown: " + why));
    }
    // Zebra's own view still stands where it is wrong: vni-typo's leaf1 misses leaf3 in VNI
    // 10100, a failure whatever the kernel says.
    f["leaf1"] = vtep("vni-typo.leaf1");
    f["leaf1"].fdb = twin::ok(json::array());
    auto typo = of(twin::validators::evaluate_evpn(evpn_plan(), f), "leaf1", 2);
    ASSERT_EQ(typo.size(), 2u);
    EXPECT_EQ(typo[0].status, Status::kFailed);
    EXPECT_EQ(typo[1].status, Status::kError);
  }
}

// Zebra's VNIs unread: each L2 VNI's flood list is an error of its own, not left out.
TEST(EvpnValidator, UnreadableVnisLeaveNoFloodListOut) {
  std::map<std::string, EvpnFacts> f;
  f["leaf1"] = vtep("good.leaf1");
  f["leaf1"].vnis = twin::harness_error("zebra.vty: timed out");
  auto rs = twin::validators::evaluate_evpn(evpn_plan(), f);
  auto flood = of(rs, "leaf1", 2);
  ASSERT_EQ(flood.size(), 2u) << dump(flood);
  EXPECT_EQ(flood[0].peer, "VNI 10100");
  EXPECT_EQ(flood[1].peer, "VNI 20100");
  for (const auto& r : flood) {
    EXPECT_EQ(r.status, Status::kError);
    EXPECT_EQ(r.message,
              "cannot read zebra's remote VTEPs: leaf1: `show evpn vni json` failed: zebra.vty: "
              "timed out");
  }
  auto present = of(rs, "leaf1", 1);
  ASSERT_EQ(present.size(), 1u);
  EXPECT_EQ(present[0].status, Status::kError);
  // The kernel's devices are another source: still judged.
  for (const auto& r : of(rs, "leaf1", 4)) EXPECT_EQ(r.status, Status::kPassed) << dump({r});
}

// `ip -d link` that came back empty (a namespace always has lo) is no data for the devices,
// on a VTEP and on a spine alike.
TEST(EvpnValidator, AnEmptyLinkListIsNoData) {
  std::map<std::string, EvpnFacts> f;
  f["leaf1"] = vtep("good.leaf1");
  f["leaf1"].links = twin::ok(json::array());
  f["spine1"] = spine();
  f["spine1"].links = twin::ok(json::array());
  auto rs = twin::validators::evaluate_evpn(evpn_plan(), f);
  auto bridge = of(rs, "leaf1", 4);
  ASSERT_EQ(bridge.size(), 1u);
  EXPECT_EQ(bridge[0].status, Status::kError);
  EXPECT_EQ(bridge[0].message,
            "cannot read the devices: leaf1: `ip -j -d link show` returned an empty list");
  auto stray = of(rs, "spine1", 1);
  ASSERT_EQ(stray.size(), 1u);
  EXPECT_EQ(stray[0].status, Status::kError);
  EXPECT_EQ(stray[0].message,
            "cannot look for stray VNIs: spine1: `ip -j -d link show` returned an empty list");
}

TEST(EvpnValidator, AFullFrameRefusedByAVtepSaysWhereThePathMtuIsHeld) {
  auto ps = twin::validators::overlay_mtu_probes(evpn_plan());
  twin::validate::PingResult r;
  r.outcome = twin::validate::PingOutcome::kTooBig;
  r.mtu = 1470;
  r.detail = "ICMP fragmentation needed, mtu 1470 (type 3 code 4) from 10.10.1.12";
  auto t = twin::validate::ping_result("evpn", ps[0], r);
  EXPECT_EQ(t.status, Status::kFailed);
  EXPECT_THAT(t.message, HasSubstr("sent in 10.10.1.12's name by a VXLAN VTEP on the path: it "
                                   "holds path MTU 1470 toward its remote VTEP"));
  r.detail = "ICMP fragmentation needed, mtu 1470 (type 3 code 4) from 10.255.0.1";
  EXPECT_THAT(twin::validate::ping_result("evpn", ps[0], r).message,
              ::testing::Not(HasSubstr("VTEP")));
}

TEST(EvpnValidator, OverlayMtuPingsFullFramesBetweenVteps) {
  auto ps = twin::validators::overlay_mtu_probes(evpn_plan());
  // web: red1<->red2; db: red3<->red4; app: 3 servers on 3 leaves = 6: 10 in all, IPv4.
  ASSERT_EQ(ps.size(), 10u);
  EXPECT_EQ(ps[0].node, "red1");
  EXPECT_EQ(ps[0].subject, "red2 10.10.1.12 (VNI 10100)");
  EXPECT_TRUE(ps[0].request.dont_fragment);
  EXPECT_EQ(ps[0].request.payload_bytes, 1472);
}

TEST(TenantReachability, MeshInsideNetworksAndNoGenericHostMeshAcrossThem) {
  auto ps = twin::validators::reachability_probes(evpn_plan(), 0);
  int mesh = 0;
  for (const auto& p : ps) {
    EXPECT_NE(p.test, 1) << "host-mesh across tenants: " << p.node << " " << p.subject;
    if (p.test == 2) ++mesh;
  }
  // Ordered pairs: web 2, db 2, app 6 = 10, both families.
  EXPECT_EQ(mesh, 20);
}

TEST(TenantReachability, IsolationAsksOnTheServersPortAndAReplyFailsWithBothEnds) {
  const auto& p = evpn_plan();
  auto ps = twin::validators::isolation_probes(p);
  // red's 4 servers x blue's 3 + blue's 3 x red's 4, IPv4 only.
  ASSERT_EQ(ps.size(), 24u);
  EXPECT_EQ(ps[0].node, "red1");
  EXPECT_TRUE(ps[0].request.arp);
  EXPECT_EQ(ps[0].request.interface, "eth0");
  EXPECT_EQ(ps[0].subject, "blue1 10.20.1.21");
  twin::validate::PingResult quiet;
  quiet.outcome = twin::validate::PingOutcome::kTimeout;
  EXPECT_EQ(twin::validators::isolation_result(p, ps[0], quiet).status, Status::kPassed);
  // blue2 answering red3: the MAC names the server.
  twin::validate::PingProbe leak;
  for (const auto& x : ps)
    if (x.node == "red3" && x.subject == "blue2 10.20.1.22") leak = x;
  ASSERT_EQ(leak.node, "red3");
  twin::validate::PingResult answer;
  answer.outcome = twin::validate::PingOutcome::kReply;
  answer.detail = "is-at " + p.find("blue2")->interfaces[0].mac;
  auto r = twin::validators::isolation_result(p, leak, answer);
  EXPECT_EQ(r.status, Status::kFailed);
  EXPECT_EQ(r.message,
            "isolation broken: blue2 eth0 (" + p.find("blue2")->interfaces[0].mac +
                ") answered red3's ARP for 10.20.1.22 (tenant blue app) from red3 (tenant red "
                "db): they share one L2 segment, path red3 eth0 -> leaf2:swp3 -> leaf2:swp4 -> "
                "blue2");
  twin::validate::PingResult broken;
  broken.outcome = twin::validate::PingOutcome::kError;
  broken.detail = "packet socket: Operation not permitted";
  EXPECT_EQ(twin::validators::isolation_result(p, leak, broken).status, Status::kError);
}

TEST(EvpnGate, APacketAcrossTenantsIsTheReasonIsolationBroken) {
  twin::validate::Report after;
  after.results.push_back(twin::validate::make_result(
      "reachability", 3, "tenant-isolation", Status::kFailed, "red3", "blue2 10.20.1.22",
      "no answer", "answered by blue2 eth0", "isolation broken: blue2 eth0 answered red3's ARP"));
  after.results.push_back(twin::validate::make_result("evpn", 4, "vni-bridge", Status::kFailed,
                                                      "leaf2", "VNI 20100", "", "", "swp4 moved"));
  auto v = twin::replay::decide({}, after, twin::replay::Diff{}, nullptr);
  EXPECT_EQ(v.decision, twin::replay::Decision::kReject);
  ASSERT_EQ(v.reasons.size(), 2u);
  EXPECT_EQ(v.reasons[0].category, "isolation-broken");
  EXPECT_EQ(v.reasons[0].rank, 3);
  EXPECT_EQ(v.reasons[0].message,
            "isolation broken: 1 server pair of different tenants reach each other (red3 blue2 "
            "10.20.1.22: isolation broken: blue2 eth0 answered red3's ARP)");
  EXPECT_EQ(v.reasons[1].category, "validator-failed");
}

}  // namespace

// ---- tenant changes: the vxlan step, the tenant intent, and the VTEP difference they run.

TEST(EvpnChange, TenantsOfAPlanGiveThePlanBack) {
  twin::plan::Plan p = evpn_plan();
  twin::plan::set_tenants(p, twin::plan::tenants_of(evpn_plan()));
  EXPECT_EQ(twin::plan::to_json(p), twin::plan::to_json(evpn_plan()));
}

TEST(EvpnChange, TheVtepDifferenceTouchesOnlyWhatChanged) {
  const auto& leaf1 = *evpn_plan().find("leaf1");  // 10100 (swp3), 20100 (swp4)
  EXPECT_EQ(twin::wiring::vtep_change_script(leaf1.vnis, leaf1.vnis), "");
  // swp3 from web (10100) to db (10200), web gone from leaf1.
  auto to = leaf1.vnis;
  twin::plan::Vni db = evpn_plan().find("leaf2")->vnis[0];
  ASSERT_EQ(db.vni, 10200u);
  db.local = "10.255.1.1";
  db.ports = {"swp3"};
  to[0] = db;
  EXPECT_EQ(twin::wiring::vtep_change_script(leaf1.vnis, to),
            "link del vx10100\nlink del br10100\n"
            "link add vx10200 type vxlan id 10200 local 10.255.1.1 dstport 4789 nolearning df set\n"
            "link set vx10200 mtu 1500\nlink add br10200 type bridge\n"
            "link set vx10200 master br10200\n"
            "link set dev vx10200 type bridge_slave learning off\n"
            "link set swp3 master br10200\nlink set br10200 up\nlink set vx10200 up\n");
  // Between bridges that stay: one join; out of every bridge: nomaster; an MTU set in place.
  auto moved = leaf1.vnis;
  moved[0].ports.clear();
  moved[1].ports.push_back("swp3");
  EXPECT_EQ(twin::wiring::vtep_change_script(leaf1.vnis, moved), "link set swp3 master br20100\n");
  auto out = leaf1.vnis;
  out[0].ports.clear();
  out[1].mtu = 9000;
  EXPECT_EQ(twin::wiring::vtep_change_script(leaf1.vnis, out),
            "link set swp3 nomaster\nlink set vx20100 mtu 9000\n");
  // And back, as a rollback runs it.
  EXPECT_EQ(twin::wiring::vtep_change_script(out, leaf1.vnis),
            "link set vx20100 mtu 1500\nlink set swp3 master br10100\n");
}

TEST(EvpnChange, AVxlanStepCopiesAKnownVniAndMovesItsPorts) {
  const auto& p = evpn_plan();
  const auto& leaf1 = *p.find("leaf1");
  auto vnis = leaf1.vnis;
  twin::replay::VxlanStep s{{"leaf1"}, 10200, {"swp3"}, false};
  ASSERT_TRUE(twin::replay::vxlan_change(p, leaf1, s, vnis));
  ASSERT_EQ(vnis.size(), 3u);
  EXPECT_TRUE(vnis[0].ports.empty());  // 10100 keeps no port
  EXPECT_EQ(vnis[2].vni, 10200u);
  EXPECT_EQ(vnis[2].tenant, "red");
  EXPECT_EQ(vnis[2].network, "db");
  EXPECT_EQ(vnis[2].local, "10.255.1.1");
  EXPECT_THAT(vnis[2].ports, ::testing::ElementsAre("swp3"));
  // An unknown VNI is an L2 VNI of no tenant at its ports' MTU.
  twin::replay::VxlanStep typo{{"leaf1"}, 10020, {"swp3"}, false};
  ASSERT_TRUE(twin::replay::vxlan_change(p, leaf1, typo, vnis));
  EXPECT_EQ(vnis.back().vni, 10020u);
  EXPECT_EQ(vnis.back().tenant, "");
  EXPECT_EQ(vnis.back().mtu, 1500);
  EXPECT_TRUE(vnis[2].ports.empty());
  twin::replay::VxlanStep rm{{"leaf1"}, 10100, {}, true};
  ASSERT_TRUE(twin::replay::vxlan_change(p, leaf1, rm, vnis));
  EXPECT_EQ(vnis.size(), 3u);
  auto again = twin::replay::vxlan_change(p, leaf1, rm, vnis);
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().message, "node leaf1 has no VNI 10100 to remove");
}

TEST(EvpnChange, IntentMovesPortsAndCreatesNetworks) {
  twin::Diagnostics d;
  auto cs = twin::replay::load_change_set_text(
      "version: 1\nname: t\n"
      "intent:\n"
      "  tenant-networks: {green/web: 30100}\n"
      "  tenant-ports: {leaf1:swp3: red/db, leaf4:swp4: green/web, leaf2:swp4: none}\n"
      "steps: [{name: a, vxlan: {node: leaf1, vni: 10200, ports: [swp3]}}]\n",
      "c.yaml", ".", evpn_plan(), d);
  ASSERT_TRUE(cs) << twin_test::dump(d);
  // The step alone is not intent.
  twin::replay::ChangeSet steps_only = *cs;
  steps_only.intent = {};
  EXPECT_EQ(twin::plan::to_json(twin::replay::intended_plan(evpn_plan(), steps_only)),
            twin::plan::to_json(evpn_plan()));
  auto p = twin::replay::intended_plan(evpn_plan(), *cs);
  ASSERT_EQ(p.tenants.size(), 3u);
  const auto& web = p.tenants[0].networks[0];
  const auto& db = p.tenants[0].networks[1];
  EXPECT_THAT(web.vteps, ::testing::ElementsAre("leaf3"));
  EXPECT_THAT(web.servers, ::testing::ElementsAre("red2"));
  EXPECT_THAT(db.vteps, ::testing::ElementsAre("leaf1", "leaf2", "leaf4"));
  EXPECT_THAT(db.servers, ::testing::ElementsAre("red1", "red3", "red4"));
  EXPECT_THAT(p.tenants[1].networks[0].servers, ::testing::ElementsAre("blue1"));
  EXPECT_EQ(p.tenants[2].name, "green");
  EXPECT_EQ(p.tenants[2].networks[0].vni, 30100u);
  EXPECT_THAT(p.tenants[2].networks[0].servers, ::testing::ElementsAre("blue3"));
  const auto* leaf1 = p.find("leaf1");
  ASSERT_EQ(leaf1->vnis.size(), 2u);
  EXPECT_EQ(leaf1->vnis[0].vni, 10200u);
  EXPECT_EQ(leaf1->vnis[1].vni, 20100u);
  EXPECT_EQ(twin::plan::tenant_network_of_server(p, "blue2"), nullptr);  // unbridged now
}

// The kernel's VNIs, read back from recorded `ip -d -j addr show`: the leak put swp3 (red4)
// into blue's bridge beside swp4; VNI 10200 keeps its device and bridge, with no port.
TEST(EvpnChange, TheKernelsVnisAreReadFromIpJson) {
  auto vs = twin::wiring::vnis_in_kernel(json::parse(twin_test::read(kEvpn + "leak.leaf4.addr-d.json")));
  ASSERT_EQ(vs.size(), 2u);
  EXPECT_EQ(vs[0].vni, 10200u);
  EXPECT_EQ(vs[0].vxlan, "vx10200");
  EXPECT_EQ(vs[0].bridge, "br10200");
  EXPECT_EQ(vs[0].local, "10.255.1.4");
  EXPECT_EQ(vs[0].mtu, 1500);
  EXPECT_TRUE(vs[0].ports.empty());
  EXPECT_EQ(vs[1].vni, 20100u);
  EXPECT_THAT(vs[1].ports, ::testing::ElementsAre("swp3", "swp4"));
  EXPECT_TRUE(vs[1].vrf.empty());
  EXPECT_TRUE(vs[1].gateway.empty());
  // What a rollback runs from there to the plan: swp3 back into VNI 10200's bridge.
  EXPECT_EQ(twin::wiring::vtep_change_script(vs, evpn_plan().find("leaf4")->vnis),
            "link set swp3 master br10200\n");
  EXPECT_TRUE(twin::wiring::vnis_in_kernel(json::object()).empty());
}

// Likely causes from the kernel's links (recorded `ip -j addr show`, tests/data/frr84/causes/):
// red4's port in blue's bridge (the leak), and the fabric at 1500 under 1500-byte servers.
TEST(EvpnCauses, AMisplacedTenantPortAndAnUnderlayTooSmall) {
  const std::string causes = std::string(TWIN_TEST_DATA) + "/frr84/causes/";
  twin::replay::CauseFacts leak;
  leak.nodes["leaf4"].addresses = json::parse(twin_test::read(causes + "leak.leaf4.addr.json"));
  auto c = twin::replay::likely_causes(evpn_plan(), leak);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].rule, "tenant-port-misplaced");
  EXPECT_EQ(c[0].text,
            "leaf4:swp3 (red4, tenant red network db, VNI 10200) is in br20100, the bridge of VNI "
            "20100 (tenant blue network app): red4 shares that network's L2 segment");
  EXPECT_THAT(c[0].evidence, ::testing::ElementsAre("leaf4: `ip link` shows swp3 master br20100"));
  EXPECT_THAT(c[0].nodes, ::testing::ElementsAre("leaf4", "red4", "blue1", "blue2", "blue3"));
  // The same port in a VNI no network has (a mistyped one), and in no bridge at all.
  for (auto& l : leak.nodes["leaf4"].addresses.value())
    if (l["ifname"] == "swp3") l["master"] = "br10020";
  c = twin::replay::likely_causes(evpn_plan(), leak);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].text,
            "leaf4:swp3 (red4, tenant red network db, VNI 10200) is in br10020, not br10200 (VNI "
            "10020 is no tenant network's): red4 is cut off from its network");
  for (auto& l : leak.nodes["leaf4"].addresses.value())
    if (l["ifname"] == "swp3") l.erase("master");
  c = twin::replay::likely_causes(evpn_plan(), leak);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_THAT(c[0].text, HasSubstr("is in no bridge: red4 is cut off from its network"));

  twin::replay::CauseFacts mtu;
  mtu.nodes["leaf1"].addresses = json::parse(twin_test::read(causes + "underlay-mtu.leaf1.addr.json"));
  c = twin::replay::likely_causes(evpn_plan(), mtu);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].rule, "underlay-mtu");
  EXPECT_EQ(c[0].text,
            "the underlay is too small for the overlay: fabric ports below 1550 bytes (the "
            "servers' 1500-byte frames plus VXLAN's 50), and VTEPs do not fragment");
  EXPECT_THAT(c[0].evidence, ::testing::ElementsAre("`ip link` MTUs: leaf1:swp1 1500, leaf1:swp2 1500"));
  // A healthy VTEP says nothing of either (`ip -j -d link show` has the fields these rules
  // read, not the addresses the unnumbered-ipv6 rule reads).
  twin::replay::CauseFacts good;
  good.nodes["leaf1"].addresses = json::parse(twin_test::read(kEvpn + "good.leaf1.link.json"));
  for (const auto& x : twin::replay::likely_causes(evpn_plan(), good))
    EXPECT_EQ(x.rule, "unnumbered-ipv6") << x.text;
}

// Generated configs activate l2vpn evpn on every fabric session of a lab with tenants.
TEST(EvpnPlan, GeneratedFabricSessionsCarryEvpnWhereThereAreTenants) {
  ASSERT_EQ(evpn_plan().sessions.size(), 16u);
  for (const auto& s : evpn_plan().sessions) EXPECT_TRUE(s.evpn) << s.node << " " << s.interface;
  auto j = twin::plan::to_json(evpn_plan());
  EXPECT_EQ(j["sessions"][0]["evpn"], true);
}

// A router no tenant makes a VTEP (spine1) must have no VXLAN device: leaf1's recorded links
// there are stray VNIs, each named; with nothing recorded for it, that is an error, not silence.
TEST(EvpnValidator, AVniOnASpineIsStray) {
  std::map<std::string, EvpnFacts> f;
  f["spine1"].links = rec("good.leaf1.link.json");
  auto rs = of(twin::validators::evaluate_evpn(evpn_plan(), f), "spine1", 1);
  ASSERT_EQ(rs.size(), 2u);
  for (const auto& r : rs) EXPECT_EQ(r.status, Status::kFailed);
  EXPECT_THAT(rs[0].message, HasSubstr("VNI 10100 is on spine1 (vx10100), which no tenant network "
                                       "makes a VTEP: a stray VNI"));
  f.erase("spine1");
  auto unread = of(twin::validators::evaluate_evpn(evpn_plan(), f), "spine1", 1);
  ASSERT_EQ(unread.size(), 1u);
  EXPECT_EQ(unread[0].status, Status::kError);
  EXPECT_EQ(unread[0].message,
            "cannot look for stray VNIs: spine1: `ip -j -d link show` not probed");
}

// A declared move whose server keeps its old address: one network, two subnets.
TEST(EvpnCauses, AServerMovedInWithoutItsAddress) {
  twin::Diagnostics d;
  auto cs = twin::replay::load_change_set_text(
      "version: 1\nname: t\nintent: {tenant-ports: {leaf1:swp3: red/db}}\n"
      "steps: [{name: a, vxlan: {node: leaf1, vni: 10200, ports: [swp3]}}]\n",
      "c.yaml", ".", evpn_plan(), d);
  ASSERT_TRUE(cs) << twin_test::dump(d);
  auto p = twin::replay::intended_plan(evpn_plan(), *cs);
  auto c = twin::replay::likely_causes(p, {});
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].rule, "tenant-subnet-mismatch");
  EXPECT_EQ(c[0].text,
            "tenant red network db's servers are in 2 subnets: 10.10.1.0/24 (red1), 10.10.2.0/24 "
            "(red3, red4); they share the L2 segment, but nothing routes between the subnets (a "
            "server moved in without its address?)");
  EXPECT_TRUE(twin::replay::likely_causes(evpn_plan(), {}).empty());
  // The gate judges by the running plan and hands the tenant rules the intended one.
  twin::replay::CauseFacts facts;
  facts.intended = &p;
  c = twin::replay::likely_causes(evpn_plan(), facts);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].rule, "tenant-subnet-mismatch");
}
