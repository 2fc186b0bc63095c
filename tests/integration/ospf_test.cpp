// Integration tests: a lab of the users' own OSPF configs (topologies/ospf-triangle), real
// namespaces, FRR 8.4 and pings (root). `up` waits for the OSPF adjacencies the configs set up
// and nothing else; validation checks OSPF, routes and reachability; each seeded fault is
// caught by the right test with its reason, restored, and proven restored. One lab with FRR's
// default timers (hello 10 s, dead 40 s, broadcast: the wait timer) shows `up` saying so.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "tests/integration/cli_support.hpp"
#include "tests/integration/config_read.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::HasSubstr;
using namespace twin_it;

namespace {

const json* result_for(const json& rep, const std::string& validator, int test,
                       const std::string& node, const std::string& peer) {
  for (const auto& r : rep["results"])
    if (r["validator"] == validator && r["test"] == test && r["node"] == node &&
        r["peer"] == peer)
      return &r;
  return nullptr;
}

}  // namespace

class OspfTriangle : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!root()) return;
    lab_ = unique_lab("ospf");
    auto r = twin("up " + kRepo + "/topologies/ospf-triangle/lab.yaml --name " + lab_);
    up_ok_ = r.code == 0;
    up_out_ = r.out + r.err;
  }
  static void TearDownTestSuite() {
    if (!root() || lab_.empty()) return;
    auto r = twin("down --lab " + lab_);
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(leftovers(lab_), std::vector<std::string>{});
  }
  void SetUp() override {
    if (!root()) TWIN_SKIP_WITHOUT("root", "needs root (network namespaces)");
    ASSERT_TRUE(up_ok_) << up_out_;
  }
  static CmdResult vtysh(const std::string& node, const std::string& commands) {
    return twin("exec --lab " + lab_ + " " + node + " -- vtysh -c 'configure terminal' " +
                commands);
  }
  static void expect_all_pass(int converge_s = 30) {
    auto rep = validate(lab_, "bgp,ospf,routes,mtu,reachability", converge_s);
    EXPECT_EQ(rep.value("verdict", ""), "pass") << rep.dump(1).substr(0, 4000);
  }
  static inline std::string lab_;
  static inline bool up_ok_ = false;
  static inline std::string up_out_;
};

TEST_F(OspfTriangle, UpWaitsForTheConfiguredAdjacenciesOnly) {
  EXPECT_THAT(up_out_, HasSubstr("OSPF 6/6 adjacencies Full"));
  EXPECT_THAT(up_out_, ::testing::Not(HasSubstr("BGP")));
}

TEST_F(OspfTriangle, EveryValidatorPassesWithRealCounts) {
  auto rep = validate(lab_, "bgp,ospf,routes,mtu,reachability", 30);
  ASSERT_EQ(rep["verdict"], "pass") << rep.dump(1).substr(0, 4000);
  auto n = result_counts(rep);
  EXPECT_EQ((n[{"bgp", 0}]), 0);   // nobody configured BGP: nothing expected of it
  EXPECT_EQ((n[{"ospf", 0}]), 6);  // 3 router links, an adjacency at each end
  EXPECT_EQ((n[{"ospf", 1}]), 6);
  EXPECT_EQ((n[{"ospf", 2}]), 3);
  EXPECT_EQ((n[{"ospf", 3}]), 27);          // 9 OSPF networks x 3 FIBs
  EXPECT_EQ((n[{"routes", 0}]), 12);        // 2 other loopbacks + 2 other PC subnets, x 3
  EXPECT_EQ((n[{"reachability", 0}]), 3);   // loopback mesh of 3 routers: 3 pairs
  EXPECT_EQ((n[{"reachability", 1}]), 6);   // PC mesh
}

// zebra + ospfd from the users' own configs: the socket read of each running config is
// vtysh's text.
TEST_F(OspfTriangle, RunningConfigsFromTheSocketsAreVtyshs) {
  expect_running_configs_read_like_vtysh(lab_);
}

TEST_F(OspfTriangle, AreaMismatchOnOneEndIsReportedWithBothAreas) {
  ASSERT_EQ(vtysh("r2", "-c 'interface eth1' -c 'no ip ospf area' -c 'ip ospf area 0.0.0.1'")
                .code,
            0);
  auto rep = validate(lab_, "ospf", 10);
  const auto* r = result_for(rep, "ospf", 1, "r2", "eth1");
  ASSERT_NE(r, nullptr) << rep.dump(1).substr(0, 3000);
  EXPECT_EQ((*r)["status"], "failed");
  EXPECT_EQ((*r)["observed"], "area 0.0.0.1 here, 0.0.0.0 on r1:eth1");
  ASSERT_EQ(vtysh("r2", "-c 'interface eth1' -c 'no ip ospf area' -c 'ip ospf area 0'").code, 0);
  expect_all_pass();
}

TEST_F(OspfTriangle, MtuMismatchLeavesTheAdjacencyInExStartWithBothMtus) {
  ASSERT_EQ(twin("exec --lab " + lab_ + " r2 -- ip link set eth1 mtu 1400").code, 0);
  // The MTU is compared when database descriptions are exchanged: bounce the port so the
  // adjacency forms again (RFC 2328 §10.6).
  ASSERT_EQ(twin("exec --lab " + lab_ + " r2 -- ip link set eth1 down").code, 0);
  ASSERT_EQ(twin("exec --lab " + lab_ + " r2 -- ip link set eth1 up").code, 0);
  auto rep = validate(lab_, "ospf", 15);
  const auto* r = result_for(rep, "ospf", 0, "r2", "eth1");
  ASSERT_NE(r, nullptr) << rep.dump(1).substr(0, 3000);
  EXPECT_EQ((*r)["status"], "failed");
  EXPECT_THAT((*r)["message"].get<std::string>(), HasSubstr("MTU 1400 here, 1500 on r1:eth1"));
  EXPECT_THAT((*r)["message"].get<std::string>(), HasSubstr("stuck in Ex"));
  ASSERT_EQ(twin("exec --lab " + lab_ + " r2 -- ip link set eth1 mtu 1500").code, 0);
  expect_all_pass();
}

TEST_F(OspfTriangle, PassiveTransitInterfaceIsNamed) {
  ASSERT_EQ(vtysh("r2", "-c 'interface eth1' -c 'ip ospf passive'").code, 0);
  auto rep = validate(lab_, "ospf", 10);
  const auto* r = result_for(rep, "ospf", 1, "r1", "eth1");
  ASSERT_NE(r, nullptr) << rep.dump(1).substr(0, 3000);
  EXPECT_EQ((*r)["status"], "failed");
  EXPECT_THAT((*r)["observed"].get<std::string>(), HasSubstr("r2:eth1 is passive"));
  ASSERT_EQ(vtysh("r2", "-c 'interface eth1' -c 'no ip ospf passive'").code, 0);
  expect_all_pass();
}

// The same lab from its containerlab file, as published labs write it: up unchanged, the same
// expectations and the same passing verdict, nothing left behind.
TEST(OspfClab, TheContainerlabFileRunsUnchanged) {
  if (!root()) TWIN_SKIP_WITHOUT("root", "needs root (network namespaces)");
  const std::string lab = unique_lab("ospfclab");
  LabGuard guard{lab};
  auto up = twin("up " + kRepo + "/topologies/ospf-triangle/ospf-triangle.clab.yml --name " + lab);
  ASSERT_EQ(up.code, 0) << up.out << up.err;
  EXPECT_THAT(up.out, HasSubstr("OSPF 6/6 adjacencies Full"));
  // Its mgmt block is read: twin's management network on its subnet, every router's sshd up.
  EXPECT_THAT(up.err, HasSubstr("sshd on 3 nodes (management network 172.20.20.0/24)"));
  auto rep = validate(lab, "bgp,ospf,routes,mtu,reachability", 30);
  EXPECT_EQ(rep.value("verdict", ""), "pass") << rep.dump(1).substr(0, 3000);
  auto n = result_counts(rep);
  EXPECT_EQ((n[{"ospf", 0}]), 6);
  EXPECT_EQ((n[{"reachability", 1}]), 6);  // the PCs' exec lines became their addresses
  expect_down_clean(lab);
}

// A typo in a user's frr.conf is FRR's own parser's finding, at the file's line, before any
// namespace exists: exit 2, nothing created (real vtysh -C).
TEST(OspfClab, ALineFrrRejectsStopsUpAtItsPlace) {
  if (!root()) TWIN_SKIP_WITHOUT("root", "needs root (network namespaces)");
  const std::string lab = unique_lab("ospftypo");
  const fs::path dir = fs::temp_directory_path() / lab;
  fs::remove_all(dir);
  fs::copy(kRepo + "/topologies/ospf-triangle", dir, fs::copy_options::recursive);
  auto sed = sh("sed -i '10s/hello-interval/helo-interval/' " + (dir / "configs/r2.conf").string());
  ASSERT_EQ(sed.code, 0);
  auto up = twin("up " + (dir / "ospf-triangle.clab.yml").string() + " --name " + lab);
  EXPECT_EQ(up.code, 2) << up.out << up.err;
  EXPECT_THAT(up.err, HasSubstr((dir / "configs/r2.conf").string() +
                                ":10:2: error: node r2: FRR rejects this line: Unknown command: "
                                "ip ospf helo-interval 1"));
  EXPECT_THAT(up.err, HasSubstr("nothing was created"));
  EXPECT_EQ(leftovers(lab), std::vector<std::string>{});
  fs::remove_all(dir);
}

// OSPFv3 only (the two-router lab JSON was recorded from): up waits for the ospf6d
// adjacencies, and the ospf family checks them.
TEST(Ospf6Lab, UpWaitsForOspfv3AndTheFamilyChecksIt) {
  if (!root()) TWIN_SKIP_WITHOUT("root", "needs root (network namespaces)");
  const std::string lab = unique_lab("ospf6");
  LabGuard guard{lab};
  auto up = twin("up " + kRepo + "/tests/data/frr84/ospf6/lab.yaml --name " + lab);
  ASSERT_EQ(up.code, 0) << up.out << up.err;
  EXPECT_THAT(up.out, HasSubstr("OSPF 2/2 adjacencies Full"));
  auto rep = validate(lab, "ospf,routes,reachability", 20);
  EXPECT_EQ(rep.value("verdict", ""), "pass") << rep.dump(1).substr(0, 3000);
  auto n = result_counts(rep);
  EXPECT_EQ((n[{"ospf", 0}]), 2);
  EXPECT_EQ((n[{"routes", 0}]), 2);  // each router's IPv6 loopback at the other
  EXPECT_EQ((n[{"reachability", 0}]), 1);  // one pair, one family
  expect_down_clean(lab);
}

// FRR's defaults: broadcast network, hello 10 s, dead 40 s. Both routers start together, so
// each waits out its wait timer (the dead interval) before electing a DR: `up` must say it is
// waiting for that timer, and wait for it rather than fail.
TEST(OspfDefaults, UpSaysItWaitsForTheWaitTimerAndConverges) {
  if (!root()) TWIN_SKIP_WITHOUT("root", "needs root (network namespaces)");
  fs::path dir = fs::temp_directory_path() / ("twin-ospf-defaults-" + std::to_string(getpid()));
  fs::create_directories(dir);
  for (int i : {1, 2}) {
    std::ofstream(dir / ("r" + std::to_string(i) + ".conf"))
        << "interface eth1\n ip address 10.1.0." << i << "/24\n ip ospf area 0\nexit\n"
        << "interface lo\n ip address 10.1.255." << i << "/32\n ip ospf area 0\nexit\n"
        << "router ospf\n ospf router-id 10.1.255." << i << "\nexit\n";
  }
  std::ofstream(dir / "lab.yaml") << "version: 1\nname: defaults\nnodes:\n"
                                  << "  r1: {loopback: 10.1.255.1/32, config: r1.conf}\n"
                                  << "  r2: {loopback: 10.1.255.2/32, config: r2.conf}\n"
                                  << "links:\n  - endpoints: [r1:eth1, r2:eth1]\n";
  const std::string lab = unique_lab("ospfdef");
  LabGuard guard{lab};
  auto up = twin("up " + (dir / "lab.yaml").string() + " --name " + lab);
  EXPECT_EQ(up.code, 0) << up.out << up.err;
  EXPECT_THAT(up.err, HasSubstr("waiting for FRR's wait timer"));
  EXPECT_THAT(up.out, HasSubstr("OSPF 2/2 adjacencies Full"));
  // SPF hold-down can install the routes seconds after the adjacency is Full: the validator's
  // own default window, not a short one.
  auto rep = validate(lab, "ospf,reachability", 30);
  EXPECT_EQ(rep.value("verdict", ""), "pass") << rep.dump(1).substr(0, 3000);
  const auto* agree = result_for(rep, "ospf", 1, "r1", "eth1");
  ASSERT_NE(agree, nullptr);
  EXPECT_EQ((*agree)["observed"], "area 0.0.0.0, hello 10000 ms, dead 40 s, BROADCAST, MTU 1500");
  expect_down_clean(lab);
  fs::remove_all(dir);
}

// BFD from the users' configs on real bfdd (each node its own control socket): the configured
// peers are up, and a peer shut down on one side is reported with FRR's diagnostic.
TEST(BfdLab, ConfiguredPeersAreUpAndAShutdownIsCaught) {
  if (!root()) TWIN_SKIP_WITHOUT("root", "needs root (network namespaces)");
  const std::string lab = unique_lab("bfd");
  LabGuard guard{lab};
  auto up = twin("up " + kRepo + "/tests/data/frr84/bfd/lab/lab.yaml --name " + lab);
  ASSERT_EQ(up.code, 0) << up.out << up.err;
  auto rep = validate(lab, "bgp,bfd", 10);
  EXPECT_EQ(rep.value("verdict", ""), "pass") << rep.dump(1).substr(0, 3000);
  expect_running_configs_read_like_vtysh(lab);  // bfdd's `bfd` block beside bgpd's
  ASSERT_NE(result_for(rep, "bfd", 0, "r1", "10.9.0.2"), nullptr);
  auto shut = twin("exec --lab " + lab + " r2 -- vtysh -c 'configure terminal' -c bfd -c " +
                   "'peer 10.9.0.1 interface eth1' -c shutdown");
  EXPECT_EQ(shut.code, 0) << shut.err;
  rep = validate(lab, "bfd", 5);
  const auto* r = result_for(rep, "bfd", 0, "r1", "10.9.0.2");
  ASSERT_NE(r, nullptr) << rep.dump(1).substr(0, 3000);
  EXPECT_EQ((*r)["status"], "failed");
  EXPECT_THAT((*r)["message"].get<std::string>(), HasSubstr("neighbor signaled session down"));
  expect_down_clean(lab);
}

// BFD on an unnumbered BGP session (`neighbor eth1 interface` + `bfd`): bgpd asks bfdd for a
// single-hop session on eth1 toward the peer's link-local address, which the bfd family finds
// by its interface (it used to look for an empty peer address and report "no session").
TEST(BfdLab, UnnumberedSessionIsFoundOnItsInterface) {
  if (!root()) TWIN_SKIP_WITHOUT("root", "needs root (network namespaces)");
  const std::string lab = unique_lab("bfdun");
  LabGuard guard{lab};
  auto up = twin("up " + kRepo + "/tests/data/frr84/bfd/unnumbered/lab.yaml --name " + lab);
  ASSERT_EQ(up.code, 0) << up.out << up.err;
  auto rep = validate(lab, "bgp,bfd", 10);
  EXPECT_EQ(rep.value("verdict", ""), "pass") << rep.dump(1).substr(0, 3000);
  for (const char* node : {"r1", "r2"}) {
    const auto* r = result_for(rep, "bfd", 0, node, "eth1");
    ASSERT_NE(r, nullptr) << node << rep.dump(1).substr(0, 3000);
    EXPECT_EQ((*r)["status"], "passed") << (*r).dump();
  }
  expect_down_clean(lab);
}

// `neighbor X bfd` with bfdd switched off in the daemons file: FRR runs the config (bgpd takes
// the line; BFD does not run), so twin does too, with a note saying what will not run, and
// expects no BFD session.
TEST(BfdLab, BfdWithBfddSwitchedOffRunsWithANote) {
  if (!root()) TWIN_SKIP_WITHOUT("root", "needs root (network namespaces)");
  const std::string lab = unique_lab("bfdoff");
  LabGuard guard{lab};
  fs::path dir = fs::temp_directory_path() / lab;
  fs::create_directories(dir);
  const std::string src = kRepo + "/tests/data/frr84/bfd/unnumbered/";
  fs::copy_file(src + "r1.conf", dir / "r1.conf");
  fs::copy_file(src + "r2.conf", dir / "r2.conf");
  std::ofstream(dir / "daemons") << "bgpd=yes\nbfdd=no\n";
  std::ofstream(dir / "lab.yaml")
      << "version: 1\nname: bfdoff\nnodes:\n"
      << "  r1: {loopback: 10.9.255.1/32, config: r1.conf, daemons-file: daemons}\n"
      << "  r2: {loopback: 10.9.255.2/32, config: r2.conf, daemons-file: daemons}\n"
      << "links:\n  - endpoints: [r1:eth1, r2:eth1]\n";
  auto plan = twin("plan " + (dir / "lab.yaml").string());
  ASSERT_EQ(plan.code, 0) << plan.out << plan.err;
  EXPECT_THAT(plan.out,
              HasSubstr("`neighbor eth1 bfd` needs bfdd, but " + (dir / "daemons").string() +
                        ":2 switches bfdd off: BFD will not run on r1"));
  auto up = twin("up " + (dir / "lab.yaml").string() + " --name " + lab);
  ASSERT_EQ(up.code, 0) << up.out << up.err;
  auto rep = validate(lab, "node,bgp,bfd", 10);
  EXPECT_EQ(rep.value("verdict", ""), "pass") << rep.dump(1).substr(0, 3000);
  EXPECT_EQ(result_for(rep, "bfd", 0, "r1", "eth1"), nullptr);  // nothing expected
  EXPECT_EQ(result_for(rep, "bfd", 0, "r2", "eth1"), nullptr);
  bool noted = false;
  for (const auto& n : rep.value("notes", nlohmann::json::array()))
    noted = noted || n.value("text", "").find("BFD will not run on r1") != std::string::npos;
  EXPECT_TRUE(noted) << rep.dump(1).substr(0, 3000);
  expect_down_clean(lab);
  fs::remove_all(dir);
}

// A lab written with FRR's abbreviations (issue 46 item 4): twin reads it as FRR does, so `up`
// waits for its two eBGP sessions and its OSPF adjacency, and validation expects them.
TEST(AbbreviatedConfigs, UpAndValidateExpectWhatTheFullSpellingWould) {
  if (!root()) TWIN_SKIP_WITHOUT("root", "needs root (network namespaces)");
  const std::string lab = unique_lab("abbrev");
  const fs::path dir = fs::temp_directory_path() / lab;
  fs::create_directories(dir);
  for (int i : {1, 2}) {
    const std::string me = std::to_string(i), peer = std::to_string(3 - i);
    std::ofstream(dir / ("r" + me + ".conf"))
        << "int eth1\n ip addr 10.0.12." << me << "/30\n ip os a 0\n ip os net point-to-point\n"
        << " ip os hello 1\n ip os dead 4\nex\n"
        << "int lo\n ip add 10.0.255." << me << "/32\n ip os ar 0\nex\n"
        << "router bg 6500" << me << "\n no bgp ebgp-req\n nei 10.0.12." << peer << " rem 6500"
        << peer << "\n nei 10.0.12." << peer << " tim 1 3\n address ipv4 uni\n  net 10.0.255." << me
        << "/32\n exit-address\nex\n"
        << "ro ospf\n os router 10.0.255." << me << "\nex\n";
  }
  std::ofstream(dir / "lab.yaml") << "version: 1\nname: abbrev\nnodes:\n"
                                  << "  r1: {config: r1.conf}\n  r2: {config: r2.conf}\n"
                                  << "links:\n  - endpoints: [r1:eth1, r2:eth1]\n";
  LabGuard guard{lab};
  auto plan = twin("plan " + (dir / "lab.yaml").string());
  EXPECT_THAT(plan.out, HasSubstr("2 BGP sessions, 2 OSPF adjacencies expected"));
  EXPECT_THAT(plan.out, ::testing::Not(HasSubstr("notes:")));
  auto up = twin("up " + (dir / "lab.yaml").string() + " --name " + lab);
  ASSERT_EQ(up.code, 0) << up.out << up.err;
  EXPECT_THAT(up.out, HasSubstr("BGP 2/2 sessions Established"));
  auto rep = validate(lab, "bgp,ospf,routes,reachability", 20);
  EXPECT_EQ(rep.value("verdict", ""), "pass") << rep.dump(1).substr(0, 3000);
  auto n = result_counts(rep);
  EXPECT_EQ((n[{"bgp", 0}]), 2);
  EXPECT_EQ((n[{"ospf", 0}]), 2);
  EXPECT_EQ((n[{"reachability", 0}]), 1);
  expect_down_clean(lab);
  fs::remove_all(dir);
}

// A dual-stack lab with an IPv6-only router (issue 46 item 5): r1 and r2 run OSPFv2 and OSPFv3,
// r3 only OSPFv3 on an IPv6-only link. No IPv4 route reaches r3, and twin expects none there.
TEST(Ipv6OnlyRouter, TheIpv4ExpectationsLeaveItOut) {
  if (!root()) TWIN_SKIP_WITHOUT("root", "needs root (network namespaces)");
  const std::string lab = unique_lab("v6only");
  const fs::path dir = fs::temp_directory_path() / lab;
  fs::create_directories(dir);
  const std::string v2 = " ip ospf area 0\n ip ospf network point-to-point\n"
                         " ip ospf hello-interval 1\n ip ospf dead-interval 4\n";
  const std::string v3 = " ipv6 ospf6 area 0\n ipv6 ospf6 network point-to-point\n"
                         " ipv6 ospf6 hello-interval 1\n ipv6 ospf6 dead-interval 4\n";
  std::ofstream(dir / "r1.conf") << "interface eth1\n ip address 10.0.12.1/30\n" << v2 << v3
                                 << "exit\ninterface lo\n ip address 10.0.255.1/32\n"
                                 << " ipv6 address fd00::1/128\n ip ospf area 0\n"
                                 << " ipv6 ospf6 area 0\nexit\nrouter ospf\nexit\n"
                                 << "router ospf6\n ospf6 router-id 10.0.255.1\nexit\n";
  std::ofstream(dir / "r2.conf") << "interface eth1\n ip address 10.0.12.2/30\n" << v2 << v3
                                 << "exit\ninterface eth2\n" << v3
                                 << "exit\ninterface lo\n ip address 10.0.255.2/32\n"
                                 << " ipv6 address fd00::2/128\n ip ospf area 0\n"
                                 << " ipv6 ospf6 area 0\nexit\nrouter ospf\nexit\n"
                                 << "router ospf6\n ospf6 router-id 10.0.255.2\nexit\n";
  std::ofstream(dir / "r3.conf") << "interface eth1\n" << v3
                                 << "exit\ninterface lo\n ipv6 address fd00::3/128\n"
                                 << " ipv6 ospf6 area 0\nexit\n"
                                 << "router ospf6\n ospf6 router-id 10.0.255.3\nexit\n";
  std::ofstream(dir / "lab.yaml") << "version: 1\nname: v6only\nnodes:\n"
                                  << "  r1: {config: r1.conf}\n  r2: {config: r2.conf}\n"
                                  << "  r3: {config: r3.conf}\nlinks:\n"
                                  << "  - endpoints: [r1:eth1, r2:eth1]\n"
                                  << "  - endpoints: [r2:eth2, r3:eth1]\n";
  LabGuard guard{lab};
  auto plan = twin("plan " + (dir / "lab.yaml").string());
  EXPECT_THAT(plan.out, HasSubstr("Reachability expected: 3 of 3 router pairs routed both ways "
                                  "(their loopbacks pinged): IPv4 1, IPv6 3"));
  auto up = twin("up " + (dir / "lab.yaml").string() + " --name " + lab);
  ASSERT_EQ(up.code, 0) << up.out << up.err;
  auto rep = validate(lab, "ospf,routes,reachability", 20);
  EXPECT_EQ(rep.value("verdict", ""), "pass") << rep.dump(1).substr(0, 4000);
  auto n = result_counts(rep);
  // r1, r2: the other's IPv4 loopback and both others' IPv6 ones; r3: two IPv6 loopbacks.
  EXPECT_EQ((n[{"routes", 0}]), 2 * 3 + 2);
  EXPECT_EQ((n[{"reachability", 0}]), 4);  // r1-r2 in both families, r3 with each in IPv6
  expect_down_clean(lab);
  fs::remove_all(dir);
}

// A LAN segment (topologies/ospf-lan): four OSPF routers and a server on one bridge node. The
// bridge is real (br0 in its own namespace, the members' veths its ports), the DR election is
// FRR's: r1 (priority 100) DR, r2 (50) BDR, r3 and r4 DROthers that stay 2-Way with each other.
struct OspfLanLab {
  static constexpr const char* kTopology = "ospf-lan/lab.yaml";
  static constexpr const char* kTag = "ospflan";
};
class OspfLan : public SharedLabSuite<OspfLanLab> {
 protected:
  static const std::string& lab() { return shared_.lab; }
};

TEST_F(OspfLan, UpBuildsTheBridgeAndWaitsForEveryPairOnTheSegment) {
  EXPECT_THAT(shared_.up_out,
              HasSubstr("OSPF 12/12 adjacencies Full (2 of them 2-Way between DROthers)"));
  // br0 alone in the bridge's namespace, each member's veth a port of it.
  auto links = sh("ip -n tw-" + lab() + "-lan1 -j link show master br0");
  ASSERT_EQ(links.code, 0) << links.err;
  std::vector<std::string> ports;
  for (const auto& l : json::parse(links.out)) ports.push_back(l.value("ifname", ""));
  std::sort(ports.begin(), ports.end());
  EXPECT_EQ(ports, (std::vector<std::string>{"p1", "p2", "p3", "p4", "p5"}));
}

TEST_F(OspfLan, EveryValidatorPassesWithTheDrAgreedAndDrOthersAt2Way) {
  auto rep = validate(lab(), "bgp,ospf,routes,mtu,reachability", 30);
  ASSERT_EQ(rep["verdict"], "pass") << rep.dump(1).substr(0, 4000);
  auto n = result_counts(rep);
  EXPECT_EQ((n[{"ospf", 0}]), 12);         // 4 routers, each with the 3 others
  EXPECT_EQ((n[{"ospf", 4}]), 1);          // one segment
  EXPECT_EQ((n[{"reachability", 0}]), 6);  // loopback mesh of 4 routers
  std::string dr, two_way;
  for (const auto& r : rep["results"]) {
    if (r["validator"] == "ospf" && r["test"] == 4) dr = r["message"];
    if (r["validator"] == "ospf" && r["test"] == 0 && r["node"] == "r3" &&
        r["observed"].get<std::string>().rfind("2-Way", 0) == 0)
      two_way = r["message"];
  }
  EXPECT_EQ(dr, "every member names 10.0.255.1 the DR");
  EXPECT_EQ(two_way,
            "r4 on segment lan1 is 2-Way: both routers are DROthers, which form no "
            "adjacency");
}

// One member's port at the bridge goes down: every router's adjacency with it fails, the
// others hold; back up, the segment is whole again.
TEST_F(OspfLan, AMemberPortDownAtTheBridgeFailsItsAdjacenciesOnly) {
  ASSERT_EQ(sh("ip -n tw-" + lab() + "-lan1 link set p4 down").code, 0);
  auto rep = validate(lab(), "ospf", 8);
  std::set<std::string> failed;
  for (const auto& r : rep["results"])
    if (r["validator"] == "ospf" && r["test"] == 0 && r["status"] == "failed")
      failed.insert(r["node"].get<std::string>() + "-" + r["expected"].get<std::string>());
  ASSERT_EQ(sh("ip -n tw-" + lab() + "-lan1 link set p4 up").code, 0);
  EXPECT_EQ(
      failed,
      (std::set<std::string>{
          "r1-Full with r4 (2-Way if both DROther)", "r2-Full with r4 (2-Way if both DROther)",
          "r3-Full with r4 (2-Way if both DROther)", "r4-Full with r1 (2-Way if both DROther)",
          "r4-Full with r2 (2-Way if both DROther)", "r4-Full with r3 (2-Way if both DROther)"}))
      << rep.dump(1).substr(0, 3000);
  auto again = validate(lab(), "ospf,routes,reachability", 30);
  EXPECT_EQ(again.value("verdict", ""), "pass") << again.dump(1).substr(0, 3000);
}

// The same lab from its containerlab file: the `kind: bridge` node becomes twin's own bridge
// (and says so), and the lab runs and passes unchanged.
TEST(OspfLanClab, TheContainerlabBridgeRunsAsTwinsOwn) {
  if (!root()) TWIN_SKIP_WITHOUT("root", "needs root (network namespaces)");
  const std::string lab = unique_lab("lanclab");
  LabGuard guard{lab};
  auto up = twin("up " + kRepo + "/topologies/ospf-lan/ospf-lan.clab.yml --name " + lab);
  ASSERT_EQ(up.code, 0) << up.out << up.err;
  EXPECT_THAT(up.err, HasSubstr("node lan1 (kind bridge) runs as twin's own Linux bridge"));
  auto rep = validate(lab, "ospf,routes,mtu,reachability", 30);
  EXPECT_EQ(rep.value("verdict", ""), "pass") << rep.dump(1).substr(0, 3000);
  expect_down_clean(lab);
}
