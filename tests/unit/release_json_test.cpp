// Each release's JSON, as the ospf, bfd and evpn families read it (issue 44 item 5): output of
// FRR 7.5.1, 8.4.4 and 10.3 recorded from one lab per family whose nodes run the three
// releases side by side (container images; tests/data/frr-releases/RECORDED.md says how), fed
// to each family's evaluation. The BGP summary and route tables of the three releases are
// tested with the container nodes (container_test.cpp, ReleaseJson.TheBgpFamily...).
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/unit/support.hpp"
#include "twin/plan/plan.hpp"
#include "twin/runtime/ospf6_text.hpp"
#include "twin/topology/loader.hpp"
#include "twin/validate/result.hpp"
#include "validators/bfd/bfd.hpp"
#include "validators/evpn/evpn.hpp"
#include "validators/ospf/ospf.hpp"

namespace {

using nlohmann::json;
using twin::validate::Status;
using twin::validate::TestResult;

const std::string kReleases = std::string(TWIN_TEST_DATA) + "/frr-releases/";

json release_json(const std::string& file) {
  return json::parse(twin_test::read(kReleases + file));
}

twin::plan::Plan lab_plan(const std::string& file) {
  twin::Diagnostics d;
  auto t = twin::topology::load_topology(kReleases + "labs/" + file, d);
  if (!t) throw std::runtime_error("cannot load " + file + ": " + twin_test::dump(d));
  return twin::plan::make_plan(*t);
}

// Each node of the labs and the release it ran.
const std::map<std::string, std::string> kRelease = {
    {"r1", "7.5.1"},    {"r2", "8.4.4"},   {"r3", "10.3"},    {"leaf1", "7.5.1"},
    {"leaf2", "8.4.4"}, {"leaf3", "10.3"}, {"spine1", "10.3"}};

// `node`'s recording of `what`: <node>-<release>-<what>.json.
twin::Result<json> recorded(const std::string& node, const std::string& what) {
  return twin::ok(release_json(node + "-" + kRelease.at(node) + "-" + what + ".json"));
}

// (test, status) -> how many results, per node.
using Counts = std::map<std::string, std::map<std::pair<int, Status>, int>>;
Counts counts(const std::vector<TestResult>& rs) {
  Counts c;
  for (const auto& r : rs) ++c[r.node][{r.test, r.status}];
  return c;
}

std::string dump(const std::vector<TestResult>& rs) {
  std::string s;
  for (const auto& r : rs)
    s += r.node + " " + std::to_string(r.test) + " " + r.peer + " " +
         std::string(twin::validate::to_string(r.status)) + ": " + r.observed + " | " + r.message +
         "\n";
  return s;
}

}  // namespace

// ---- evpn ----
// labs/evpn-rel.yaml: spine1 on 10.3; VTEPs leaf1 on 7.5.1, leaf2 on 8.4.4, leaf3 on 10.3; red's
// web network (VNI 10100) on all three leaves, blue's app network (VNI 20100) on leaf1 and leaf3.
// The fields the family reads are the same in all three: `show bgp l2vpn evpn summary json`
// peers.<key>.state (7.5 has no peerState or localAs beside it; 10.3 adds softwareVersion),
// `show evpn vni json` {"<vni>": {"type", "vxlanIf", "remoteVteps"}} and `show evpn mac vni all
// json` {"<vni>": {"macs": {"<mac>": {"type", "remoteVtep"}}}}; 7.5 alone also lists the bridge's
// own MAC as a local MAC of each VNI. ip-link and fdb are the kernel's (iproute2 JSON), read in
// the same run.

namespace {

twin::validators::EvpnFacts vtep(const std::string& node, const std::string& fault = "") {
  const std::string p = fault.empty() ? "" : fault + "-";
  twin::validators::EvpnFacts f;
  f.summary = recorded(node, p + "evpn-summary");
  f.vnis = recorded(node, p + "evpn-vni");
  f.macs = recorded(node, p + "evpn-mac");
  f.links = recorded(node, p + "ip-link");
  f.fdb = recorded(node, p + "fdb");
  return f;
}

std::map<std::string, twin::validators::EvpnFacts> evpn_lab(const std::string& fault = "") {
  std::map<std::string, twin::validators::EvpnFacts> m;
  for (const char* n : {"leaf1", "leaf2", "leaf3"}) m.emplace(n, vtep(n, fault));
  // The spine carries EVPN routes and is no VTEP: its summary, and its devices for stray VNIs.
  twin::validators::EvpnFacts spine;
  spine.summary = recorded("spine1", "evpn-summary");
  spine.links = recorded("spine1", "ip-link");
  m.emplace("spine1", std::move(spine));
  return m;
}

}  // namespace

TEST(ReleaseJson, TheEvpnFamilyReadsEachReleasesVnisAndMacs) {
  auto leaf1 = release_json("leaf1-7.5.1-evpn-summary.json");
  EXPECT_FALSE(leaf1["peers"]["swp1"].contains("peerState"));
  EXPECT_TRUE(release_json("leaf2-8.4.4-evpn-summary.json")["peers"]["swp1"].contains("peerState"));
  EXPECT_EQ(release_json("leaf1-7.5.1-evpn-mac.json")["10100"]["macs"]["02:bc:00:01:02:6e"]["intf"],
            "br10100");

  const auto rs = twin::validators::evaluate_evpn(lab_plan("evpn-rel.yaml"), evpn_lab());
  for (const auto& r : rs) EXPECT_EQ(r.status, Status::kPassed) << dump({r});
  auto c = counts(rs);
  using P = std::pair<int, Status>;
  const auto pass = Status::kPassed;
  // 0 evpn-session: each leaf's one session, the spine's three. 1 vni-present: each VNI of a
  // VTEP, and none on the spine. 2 flood-list: each L2 VNI. 3 mac-learned: each server of a VNI
  // behind another leaf. 4 vni-bridge: each VNI.
  EXPECT_EQ(c["leaf1"],
            (std::map<P, int>{
                {{0, pass}, 1}, {{1, pass}, 2}, {{2, pass}, 2}, {{3, pass}, 3}, {{4, pass}, 2}}));
  EXPECT_EQ(c["leaf2"],
            (std::map<P, int>{
                {{0, pass}, 1}, {{1, pass}, 1}, {{2, pass}, 1}, {{3, pass}, 2}, {{4, pass}, 1}}));
  EXPECT_EQ(c["leaf3"],
            (std::map<P, int>{
                {{0, pass}, 1}, {{1, pass}, 2}, {{2, pass}, 2}, {{3, pass}, 3}, {{4, pass}, 2}}));
  EXPECT_EQ(c["spine1"], (std::map<P, int>{{{0, pass}, 3}, {{1, pass}, 1}}));
}

TEST(ReleaseJson, TheEvpnFamilyCatchesAVniMistypedOnTheOldestRelease) {
  // leaf1 (7.5.1): vx10100 re-created with VNI 10101. Its zebra lists 10101 and no 10100; the
  // other leaves (8.4.4, 10.3) lose leaf1 from VNI 10100's flood list and red1's MAC.
  const auto rs = twin::validators::evaluate_evpn(lab_plan("evpn-rel.yaml"), evpn_lab("vni-typo"));
  auto c = counts(rs);
  using P = std::pair<int, Status>;
  const auto fail = Status::kFailed;
  std::map<std::string, std::map<P, int>> failed;
  for (const auto& [node, m] : c)
    for (const auto& [k, n] : m)
      if (k.second != Status::kPassed) failed[node][k] = n;
  EXPECT_EQ(failed, (std::map<std::string, std::map<P, int>>{
                        {"leaf1", {{{1, fail}, 2}, {{2, fail}, 1}, {{3, fail}, 2}, {{4, fail}, 1}}},
                        {"leaf2", {{{2, fail}, 1}, {{3, fail}, 1}}},
                        {"leaf3", {{{2, fail}, 1}, {{3, fail}, 1}}}}))
      << dump(rs);
  for (const auto& r : rs) {
    if (r.node == "leaf1" && r.test == 1 && r.peer == "VNI 10101") {
      EXPECT_EQ(r.observed, "present on vx10100");
    }
  }
}

// ---- ospf ----
// labs/ospf-rel: a triangle of r1 on 7.5.1, r2 on 8.4.4 and r3 on 10.3, OSPFv2 and OSPFv3
// point-to-point on every link. What differs:
// - `show ip ospf neighbor json`: 7.5 says "state": "Full/DROther" (its role suffix even on a
//   point-to-point link), 8.4 prints "state" and "nbrState": "Full/-", 10.3 only "nbrState"
//   (and "role"). The family reads nbrState, else state.
// - `show ip ospf interface json` and `show ip ospf json`: the keys the family reads (area,
//   networkType, timerMsecs, timerDeadSecs, mtuBytes, ipAddress, routerId) are in all three;
//   10.3 adds others.
// - OSPFv3: 7.5's ospf6d prints no JSON at all ("% Unknown command: show ipv6 ospf6 neighbor
//   json"; `show ipv6 ospf6 interface json` is "No such Interface: json"). twin reads its text
//   instead (runtime/ospf6_text.hpp); before, `up` waited out its timeout for 7.5's OSPFv3
//   adjacencies and the family had no data. 10.3's interface JSON adds timerPassiveIface.

namespace {

twin::validators::OspfObservation ospf_router(const std::string& node,
                                              const std::string& fault = "") {
  const std::string p = fault.empty() ? "" : fault + "-";
  twin::validators::OspfObservation o;
  o.neighbors = recorded(node, p + "ospf-neighbor");
  o.interfaces = recorded(node, p + "ospf-interface");
  o.instance = recorded(node, "ospf");  // the router-id: the fault leaves it
  o.routes = recorded(node, p + "ip-route");
  const std::string base = kReleases + node + "-" + kRelease.at(node) + "-" + p;
  if (kRelease.at(node) == "7.5.1") {
    o.neighbors6 = twin::ok(
        twin::runtime::ospf6_neighbors_from_text(twin_test::read(base + "ospf6-neighbor.txt")));
    o.interfaces6 = twin::ok(
        twin::runtime::ospf6_interfaces_from_text(twin_test::read(base + "ospf6-interface.txt")));
  } else {
    o.neighbors6 = recorded(node, p + "ospf6-neighbor");
    o.interfaces6 = recorded(node, p + "ospf6-interface");
  }
  return o;
}

std::map<std::string, twin::validators::OspfObservation> ospf_lab(const std::string& fault = "") {
  std::map<std::string, twin::validators::OspfObservation> m;
  for (const char* n : {"r1", "r2", "r3"}) m.emplace(n, ospf_router(n, fault));
  return m;
}

const TestResult* find(const std::vector<TestResult>& rs, int test, const std::string& node,
                       const std::string& peer) {
  for (const auto& r : rs)
    if (r.test == test && r.node == node && r.peer == peer) return &r;
  return nullptr;
}

}  // namespace

TEST(ReleaseJson, TheOspfFamilyReadsEachReleasesNeighborsAndInterfaces) {
  const auto n75 = release_json("r1-7.5.1-ospf-neighbor.json")["neighbors"]["10.0.255.2"][0];
  const auto n84 = release_json("r2-8.4.4-ospf-neighbor.json")["neighbors"]["10.0.255.1"][0];
  const auto n103 = release_json("r3-10.3-ospf-neighbor.json")["neighbors"]["10.0.255.2"][0];
  EXPECT_EQ(n75["state"], "Full/DROther");
  EXPECT_FALSE(n75.contains("nbrState"));
  EXPECT_EQ(n84["nbrState"], "Full/-");
  EXPECT_TRUE(n84.contains("state"));
  EXPECT_EQ(n103["nbrState"], "Full/-");
  EXPECT_FALSE(n103.contains("state"));

  const auto rs = twin::validators::evaluate_ospf(lab_plan("ospf-rel/lab.yaml"), ospf_lab());
  for (const auto& r : rs) EXPECT_EQ(r.status, Status::kPassed) << dump({r});
  // Per router: 0 adjacency-full and 1 interfaces-agree for its two links, each in OSPFv2 and
  // OSPFv3; 2 its router-id; 3 the six OSPFv2 networks (three links, three loopbacks) installed.
  using P = std::pair<int, Status>;
  const auto pass = Status::kPassed;
  const std::map<P, int> each{{{0, pass}, 4}, {{1, pass}, 4}, {{2, pass}, 1}, {{3, pass}, 6}};
  auto c = counts(rs);
  for (const char* n : {"r1", "r2", "r3"}) EXPECT_EQ(c[n], each) << n;
  const auto* v3 = find(rs, 1, "r1", "eth1 (OSPFv3)");
  ASSERT_NE(v3, nullptr);
  EXPECT_EQ(v3->observed, "area 0.0.0.0, hello 1000 ms, dead 4 s, POINTOPOINT, MTU 1500");
}

TEST(ReleaseJson, SevenFivesOspf6TextReadsAsTheJsonLaterReleasesPrint) {
  using twin::runtime::text_instead_of_json;
  twin::runtime::TextReader reader = nullptr;
  EXPECT_EQ(text_instead_of_json(7, "ospf6d", "show ipv6 ospf6 neighbor json", &reader),
            "show ipv6 ospf6 neighbor");
  EXPECT_EQ(reader, &twin::runtime::ospf6_neighbors_from_text);
  EXPECT_EQ(text_instead_of_json(7, "ospf6d", "show ipv6 ospf6 interface json", &reader),
            "show ipv6 ospf6 interface");
  EXPECT_EQ(text_instead_of_json(8, "ospf6d", "show ipv6 ospf6 neighbor json", &reader), "");
  EXPECT_EQ(text_instead_of_json(0, "ospf6d", "show ipv6 ospf6 neighbor json", &reader), "");
  EXPECT_EQ(text_instead_of_json(7, "ospfd", "show ip ospf neighbor json", &reader), "");

  const auto nbrs = twin::runtime::ospf6_neighbors_from_text(
      twin_test::read(kReleases + "r1-7.5.1-ospf6-neighbor.txt"));
  EXPECT_EQ(nbrs, json::parse(R"({"neighbors": [
      {"neighborId": "10.0.255.2", "priority": 1, "deadTime": "00:00:03", "state": "Full",
       "ifState": "PointToPoint", "duration": "00:00:03", "interfaceName": "eth1",
       "interfaceState": "PointToPoint"},
      {"neighborId": "10.0.255.3", "priority": 1, "deadTime": "00:00:03", "state": "Full",
       "ifState": "PointToPoint", "duration": "00:00:03", "interfaceName": "eth2",
       "interfaceState": "PointToPoint"}]})"));
  // Every key read from 7.5's text is 8.4's key for the same thing, with a value of its type.
  const auto ifs = twin::runtime::ospf6_interfaces_from_text(
      twin_test::read(kReleases + "r1-7.5.1-ospf6-interface.txt"));
  const auto j84 = release_json("r2-8.4.4-ospf6-interface.json");
  ASSERT_EQ(ifs.size(), 3u);  // eth1, eth2, lo
  for (const auto& [name, i] : ifs.items())
    for (const auto& [k, v] : i.items()) {
      ASSERT_TRUE(j84.at(name).contains(k)) << name << " " << k;
      EXPECT_EQ(v.type(), j84.at(name)[k].type()) << name << " " << k;
    }
  const auto& eth1 = ifs.at("eth1");
  EXPECT_EQ(eth1["areaId"], "0.0.0.0");
  EXPECT_EQ(eth1["operatingAsType"], "POINTOPOINT");
  EXPECT_EQ(eth1["timerIntervalsConfigHello"], 1);
  EXPECT_EQ(eth1["timerIntervalsConfigDead"], 4);
  EXPECT_EQ(eth1["interfaceMtu"], 1500);
  EXPECT_EQ(eth1["ospf6InterfaceState"], "PointToPoint");
  EXPECT_EQ(eth1["attachedToArea"], true);
  EXPECT_EQ(eth1["internetAddress"].size(), 3u);
  EXPECT_EQ(ifs.at("lo")["type"], "LOOPBACK");
  // What is no row or block reads as nothing, not as a neighbor or interface.
  EXPECT_EQ(twin::runtime::ospf6_neighbors_from_text("% Unknown command: show x\n"),
            json::parse(R"({"neighbors": []})"));
  EXPECT_TRUE(twin::runtime::ospf6_interfaces_from_text("").empty());
}

TEST(ReleaseJson, TheOspfFamilyCatchesAnMtuMismatchOnEachRelease) {
  // MTU 1400 on r1:eth1 (7.5, toward r2) and r2:eth2 (8.4, toward r3): OSPFv2 sticks in ExStart
  // on both links at both ends, whatever each release calls it; OSPFv3 stays Full (no release's
  // ospf6d resets an adjacency when the MTU changes) and only its interfaces disagree.
  const auto rs =
      twin::validators::evaluate_ospf(lab_plan("ospf-rel/lab.yaml"), ospf_lab("mtu-1400"));
  struct Stuck {
    std::string node, iface, state, why;
  };
  for (const auto& s : std::vector<Stuck>{
           {"r1", "eth1", "ExStart/DROther", "stuck in ExStart: MTU 1400 here, 1500 on r2:eth1"},
           {"r2", "eth1", "ExStart/-", "stuck in ExStart: MTU 1500 here, 1400 on r1:eth1"},
           {"r2", "eth2", "ExStart/-", "stuck in ExStart: MTU 1400 here, 1500 on r3:eth1"},
           {"r3", "eth1", "ExStart/-", "stuck in ExStart: MTU 1500 here, 1400 on r2:eth2"}}) {
    SCOPED_TRACE(s.node + ":" + s.iface);
    const auto* full = find(rs, 0, s.node, s.iface);
    ASSERT_NE(full, nullptr);
    EXPECT_EQ(full->status, Status::kFailed);
    EXPECT_EQ(full->observed, s.state);
    EXPECT_NE(full->message.find(s.why), std::string::npos) << full->message;
    const auto* v3 = find(rs, 1, s.node, s.iface + " (OSPFv3)");
    ASSERT_NE(v3, nullptr);
    EXPECT_EQ(v3->status, Status::kFailed);
    EXPECT_NE(v3->message.find("MTU 1"), std::string::npos) << v3->message;
    EXPECT_EQ(find(rs, 0, s.node, s.iface + " (OSPFv3)")->status, Status::kPassed);
  }
  using P = std::pair<int, Status>;
  const auto fail = Status::kFailed;
  std::map<std::string, std::map<P, int>> failed;
  for (const auto& [node, m] : counts(rs))
    for (const auto& [k, n] : m)
      if (k.second != Status::kPassed) failed[node][k] = n;
  // 3: r2, cut off from both, lacks the other routers' loopbacks and r1-r3's link; r1 and r3
  // lack r2's loopback.
  EXPECT_EQ(failed, (std::map<std::string, std::map<P, int>>{
                        {"r1", {{{0, fail}, 1}, {{1, fail}, 2}, {{3, fail}, 1}}},
                        {"r2", {{{0, fail}, 2}, {{1, fail}, 4}, {{3, fail}, 3}}},
                        {"r3", {{{0, fail}, 1}, {{1, fail}, 2}, {{3, fail}, 1}}}}))
      << dump(rs);
}

// ---- bfd ----
// The same lab: a bfd peer block toward each neighbor's address, bound to the link. The fields
// the family reads (peer, interface, status, diagnostic, remote-diagnostic, multihop) are in
// all three; 7.5 has "echo-interval" where 8.4 and 10.3 have echo-receive-interval and
// echo-transmit-interval (and rtt-*), and 10.3 adds "local" and "type". A peer's shutdown
// reads differently: 7.5 says the session is down with "administratively down" (the
// diagnostic the peer sent), 8.4 and 10.3 "neighbor signaled session down".

namespace {

std::map<std::string, twin::Result<json>> bfd_lab(const std::string& fault = "") {
  std::map<std::string, twin::Result<json>> m;
  for (const char* n : {"r1", "r2", "r3"})
    m.emplace(n, recorded(n, (fault.empty() ? "" : fault + "-") + "bfd-peers"));
  return m;
}

}  // namespace

TEST(ReleaseJson, TheBfdFamilyReadsEachReleasesPeers) {
  EXPECT_TRUE(release_json("r1-7.5.1-bfd-peers.json")[0].contains("echo-interval"));
  EXPECT_TRUE(release_json("r2-8.4.4-bfd-peers.json")[0].contains("echo-receive-interval"));
  EXPECT_TRUE(release_json("r3-10.3-bfd-peers.json")[0].contains("local"));
  const auto rs = twin::validators::evaluate_bfd(lab_plan("ospf-rel/lab.yaml"), bfd_lab());
  ASSERT_EQ(rs.size(), 6u);
  for (const auto& r : rs) {
    EXPECT_EQ(r.status, Status::kPassed) << dump({r});
    EXPECT_EQ(r.observed, "up");
  }
  auto c = counts(rs);
  for (const char* n : {"r1", "r2", "r3"}) EXPECT_EQ((c[n][{0, Status::kPassed}]), 2) << n;
}

TEST(ReleaseJson, TheBfdFamilyReadsEachReleasesShutdown) {
  // Each router shut one session: r1 toward r3, r2 toward r1, r3 toward r2.
  const auto rs =
      twin::validators::evaluate_bfd(lab_plan("ospf-rel/lab.yaml"), bfd_lab("shutdown"));
  std::map<std::string, std::string> said;
  for (const auto& r : rs) {
    EXPECT_EQ(r.status, Status::kFailed) << dump({r});
    said[r.node + " " + r.peer] = r.message;
  }
  EXPECT_EQ(
      said,
      (std::map<std::string, std::string>{
          {"r1 10.0.12.2", "BFD session toward 10.0.12.2 (r2) is down: administratively down"},
          {"r1 10.0.13.2",
           "BFD session toward 10.0.13.2 (r3) is shutdown (r3: "
           "neighbor signaled session down)"},
          {"r2 10.0.12.1",
           "BFD session toward 10.0.12.1 (r1) is shutdown (r1: "
           "administratively down)"},
          {"r2 10.0.23.2",
           "BFD session toward 10.0.23.2 (r3) is down: neighbor signaled session down"},
          {"r3 10.0.13.1",
           "BFD session toward 10.0.13.1 (r1) is down: neighbor signaled session down"},
          {"r3 10.0.23.1",
           "BFD session toward 10.0.23.1 (r2) is shutdown (r2: "
           "neighbor signaled session down)"}}));
}
