// EVPN-VXLAN tenants on a real evpn-2x4 lab (FRR 8.4 in namespaces, kernel VXLAN devices and
// bridges, real frames): the good lab passes with tenant isolation proven both ways, and each
// seeded fault is caught for the right reason — a server port put in another tenant's
// network (the leak), a VNI mistyped on one leaf, an underlay lowered below the overlay's
// needs. A routing tenant (L3 VNI) needs VRF: where this kernel lacks it, `up` refuses with
// the reason and leaves nothing behind, and the routed part is skipped.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "tests/integration/cli_support.hpp"
#include "tests/integration/config_read.hpp"

using nlohmann::json;
using namespace twin_it;

namespace {

struct Evpn {
  static constexpr const char* kTopology = "evpn-2x4.yaml";
  static constexpr const char* kTag = "evpn";
};

class EvpnLab : public SharedLabSuite<Evpn> {
 protected:
  static CmdResult on(const std::string& node, const std::string& command) {
    return twin("exec --lab " + shared_.lab + " " + node + " -- " + command);
  }
  static bool mentions(const std::vector<json>& fails, const std::string& node,
                       const std::string& text) {
    for (const auto& f : fails)
      if (f["node"] == node && f["message"].get<std::string>().find(text) != std::string::npos)
        return true;
    return false;
  }
  static std::string dump(const std::vector<json>& v) { return json(v).dump(1); }
};

TEST_F(EvpnLab, TheGoodLabPassesWithTenantsIsolatedBothWays) {
  auto r = twin("validate --lab " + shared_.lab + " --json --converge-timeout 20");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  json j = json::parse(r.out);
  auto n = result_counts(j);
  // Every fabric session carries EVPN; 7 VNIs on 4 leaves and no stray VNI on the 2 spines;
  // 10 remote servers' MACs and 10 full-size DF pings across VTEPs; 20 pings inside networks,
  // 24 ARPs across tenants.
  EXPECT_EQ((n[{"evpn", 0}]), 16);
  EXPECT_EQ((n[{"evpn", 1}]), 9);
  EXPECT_EQ((n[{"evpn", 2}]), 7);
  EXPECT_EQ((n[{"evpn", 3}]), 10);
  EXPECT_EQ((n[{"evpn", 4}]), 7);
  EXPECT_EQ((n[{"evpn", 5}]), 10);
  EXPECT_EQ((n[{"reachability", 2}]), 20);
  EXPECT_EQ((n[{"reachability", 3}]), 24);
  EXPECT_EQ((n[{"reachability", 1}]), 0);  // no host mesh across tenants
  // Real frames crossed: servers of one network answer each other through the overlay.
  EXPECT_EQ(on("red1", "ping -c1 -W2 10.10.1.12").code, 0);
  EXPECT_EQ(on("blue3", "ping -c1 -W2 2001:db8:b1::21").code, 0);
}

// EVPN leaves (advertise-all-vni, l2vpn evpn address family): twin's socket read of each
// node's running config is vtysh's text.
TEST_F(EvpnLab, RunningConfigsFromTheSocketsAreVtyshs) {
  expect_running_configs_read_like_vtysh(shared_.lab);
}

TEST_F(EvpnLab, AServerPortInAnotherTenantsNetworkBreaksIsolationBothWays) {
  ASSERT_EQ(on("leaf2", "ip link set swp4 master br10200").code, 0);
  json j = validate(shared_.lab, "reachability,evpn", 2);
  auto iso = failures(j, "reachability", 3);
  // blue2, now on red db's segment, answers red3 and red4; they answer blue2.
  EXPECT_TRUE(mentions(iso, "red3", "isolation broken: blue2 eth0")) << dump(iso);
  EXPECT_TRUE(mentions(iso, "red4", "isolation broken: blue2 eth0")) << dump(iso);
  EXPECT_TRUE(mentions(iso, "blue2", "isolation broken: red3 eth0")) << dump(iso);
  EXPECT_TRUE(mentions(iso, "red3", "-> leaf2:swp4 -> blue2")) << dump(iso);
  EXPECT_EQ(iso.size(), 4u) << dump(iso);
  auto bridge = failures(j, "evpn", 4);
  ASSERT_EQ(bridge.size(), 1u) << dump(bridge);
  EXPECT_EQ(bridge[0]["message"],
            "VNI 20100 (blue app) on leaf2: swp4 is in br10200 (VNI 10200, red db), expected "
            "br20100");
  ASSERT_EQ(on("leaf2", "ip link set swp4 master br20100").code, 0);
  json back = validate(shared_.lab, "reachability,evpn", 20);
  EXPECT_EQ(back["verdict"], "pass") << back.dump().substr(0, 2000);
}

TEST_F(EvpnLab, AVniMistypedOnOneLeafIsNamedThereAndMissedElsewhere) {
  const std::string make =
      "sh -c 'ip link del vx10100 && ip link add vx10100 type vxlan id %ID% local 10.255.1.3 "
      "dstport 4789 nolearning df set && ip link set vx10100 mtu 1500 master br10100 && "
      "ip link set dev vx10100 type bridge_slave learning off && ip link set vx10100 up'";
  auto with = [&](const std::string& id) {
    return std::regex_replace(make, std::regex("%ID%"), id);
  };
  ASSERT_EQ(on("leaf3", with("10101")).code, 0);
  // The other VTEPs learn it through BGP (leaf3 withdraws its type-2 and type-3 routes): wait
  // until leaf1 has dropped leaf3 from VNI 10100 before judging, as a validation would pass
  // on a state that has not changed yet.
  ASSERT_TRUE(eventually([&] {
    auto r = on("leaf1", "vtysh -c 'show evpn vni 10100 json'");
    return r.code == 0 && r.out.find("10.255.1.3") == std::string::npos;
  })) << "leaf1 still floods VNI 10100 to leaf3";
  json j = validate(shared_.lab, "reachability,evpn", 3);
  auto vnis = failures(j, "evpn", 1);
  EXPECT_TRUE(mentions(vnis, "leaf3", "VNI 10101 is on leaf3 (vx10100), but no tenant network"))
      << dump(vnis);
  EXPECT_TRUE(mentions(vnis, "leaf3", "VNI 10100 (red web) is not on leaf3")) << dump(vnis);
  EXPECT_TRUE(mentions(failures(j, "evpn", 2), "leaf1", "remote VTEPs of VNI 10100 on leaf1 are none"));
  auto mesh = failures(j, "reachability", 2);
  EXPECT_TRUE(mentions(mesh, "red1", "ping 10.10.1.12")) << dump(mesh);
  EXPECT_TRUE(mentions(mesh, "red2", "ping 10.10.1.11")) << dump(mesh);
  EXPECT_EQ(failures(j, "reachability", 3).size(), 0u);  // broken, not leaked
  ASSERT_EQ(on("leaf3", with("10100")).code, 0);
  json back = validate(shared_.lab, "reachability,evpn", 20);
  EXPECT_EQ(back["verdict"], "pass") << back.dump().substr(0, 2000);
}

// Last: servers keep the path MTU they learn (the VTEP answers with ICMP "fragmentation
// needed" for the inner packet) for minutes after the underlay is restored.
TEST_F(EvpnLab, ZUnderlayBelowTheOverlaysNeedsFailsOnlyFullFrames) {
  for (const auto& [node, port] : std::vector<std::pair<std::string, std::string>>{
           {"leaf1", "swp1"}, {"leaf1", "swp2"}, {"spine1", "swp1"}, {"spine2", "swp1"}})
    ASSERT_EQ(on(node, "ip link set " + port + " mtu 1500").code, 0);
  json j = validate(shared_.lab, "evpn,reachability", 2);
  auto mtu = failures(j, "evpn", 5);
  // Every pair through leaf1's VTEP: red1<->red2, blue1<->blue2, blue1<->blue3.
  EXPECT_EQ(mtu.size(), 6u) << dump(mtu);
  for (const auto& f : mtu) EXPECT_EQ(f["observed"].get<std::string>().rfind("too-big", 0), 0u);
  // Small packets still cross: only full frames are lost, what pings alone never show.
  EXPECT_EQ(failures(j, "reachability", 2).size(), 0u) << dump(failures(j, "reachability", 2));
  for (const auto& [node, port] : std::vector<std::pair<std::string, std::string>>{
           {"leaf1", "swp1"}, {"leaf1", "swp2"}, {"spine1", "swp1"}, {"spine2", "swp1"}})
    EXPECT_EQ(on(node, "ip link set " + port + " mtu 9216").code, 0);
}

TEST(EvpnL3Vni, ARoutingTenantNeedsVrfAndIsRefusedCleanlyWithoutIt) {
  if (!root()) TWIN_SKIP_WITHOUT("root", "needs root (network namespaces, FRR)");
  std::ifstream in(kRepo + "/topologies/evpn-2x4.yaml");
  std::string text((std::istreambuf_iterator<char>(in)), {});
  const std::string red = "  red:\n    networks:\n      web: {vni: 10100, ports: [leaf1:swp3, leaf3:swp3]}";
  ASSERT_NE(text.find(red), std::string::npos);
  text.replace(text.find(red), red.size(),
               "  red:\n    l3vni: 5001\n    networks:\n      web: {vni: 10100, ports: "
               "[leaf1:swp3, leaf3:swp3], gateway: 10.10.1.1/24}");
  text = std::regex_replace(text, std::regex("schema/topology"), kRepo + "/topologies/schema/topology");
  std::string file = "/tmp/twin-it-evpn-l3.yaml";
  std::ofstream(file) << text;
  std::string lab = unique_lab("l3vni");
  LabGuard guard{lab};
  bool vrf = sh("unshare --net ip link add twv type vrf table 10").code == 0;
  auto r = twin("up " + file + " --name " + lab);
  if (!vrf) {
    EXPECT_EQ(r.code, 3) << r.out << r.err;
    EXPECT_NE(r.err.find("cannot create VRF devices (CONFIG_NET_VRF), which tenant red's L3 VNI "
                         "needs"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(leftovers(lab), std::vector<std::string>{});
    TWIN_SKIP_WITHOUT("vrf",
                      "this kernel has no VRF: routing between a tenant's networks (L3 VNI) is "
                      "planned and unit-tested, not run here");
  }
  ASSERT_EQ(r.code, 0) << r.err;
  json j = validate(lab, "evpn,reachability", 20);
  EXPECT_EQ(j["verdict"], "pass") << j.dump().substr(0, 2000);
  expect_down_clean(lab);
}

}  // namespace
