// Integration tests: the real `twin` CLI against real namespaces, FRR 8.4 and pings (root).
// Each lab gets a unique name so test binaries can run in parallel; after each lab's teardown
// we assert that nothing of it is left: namespace, veth, process, cgroup, file.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "tests/integration/cli_support.hpp"
#include "tests/integration/link_local.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace twin_it;

// ---- clos-2x4: one lab shared by the fault tests; each test restores what it broke and proves
// it by validating again, so a test that fails to restore shows up in the next one.
class Clos : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!root()) return;
    lab_ = unique_lab("clos");
    auto r = twin("up " + kRepo + "/topologies/clos-2x4.yaml --name " + lab_);
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
  static CmdResult exec(const std::string& node, const std::string& cmd) {
    return twin("exec --lab " + lab_ + " " + node + " -- " + cmd);
  }
  static void expect_all_pass(int converge_s = 30) {
    auto rep = validate(lab_, "bgp,routes,mtu,reachability", converge_s);
    EXPECT_EQ(rep.value("verdict", ""), "pass") << rep.dump(1).substr(0, 4000);
  }
  static inline std::string lab_;
  static inline bool up_ok_ = false;
  static inline std::string up_out_;
};

TEST_F(Clos, EveryValidatorPassesWithRealCounts) {
  auto rep = validate(lab_, "bgp,routes,mtu,reachability", 30);
  ASSERT_EQ(rep["verdict"], "pass") << rep.dump(1).substr(0, 4000);
  auto n = result_counts(rep);
  EXPECT_EQ((n[{"bgp", 0}]), 16);  // 8 fabric links, a session at each end
  EXPECT_EQ((n[{"mtu", 0}]), 10);  // every link
  EXPECT_EQ((n[{"mtu", 1}]), 20);  // a DF ping from each end of each link
  // 15 pairs of the 6 FRR nodes, minus spine1<->spine2 (same ASN: not routed), x 2 families:
  // one echo per pair, its reply proving the way back.
  EXPECT_EQ((n[{"reachability", 0}]), 28);
  EXPECT_EQ((n[{"reachability", 1}]), 4);  // 2 hosts x (IPv4 + IPv6)
  EXPECT_EQ(rep["schema_version"], 1);
  EXPECT_EQ(rep["frr_version"], "8.4.4");
}

TEST_F(Clos, LoweredMtuOnOneLinkEndIsCaughtByMtu) {
  ASSERT_EQ(exec("leaf2", "ip link set swp1 mtu 1500").code, 0);
  auto rep = validate(lab_, "mtu,bgp", 2);
  auto f = failures(rep, "mtu", 0);
  ASSERT_EQ(f.size(), 1u) << rep.dump(1).substr(0, 3000);
  EXPECT_EQ(f[0]["peer"], "leaf2:swp1 <-> spine1:swp2");
  EXPECT_NE(f[0]["observed"].get<std::string>().find("leaf2:swp1=1500"), std::string::npos);
  EXPECT_NE(f[0]["observed"].get<std::string>().find("spine1:swp2=9216"), std::string::npos);
  EXPECT_FALSE(failures(rep, "mtu", 1).empty());  // the DF ping at 9216 no longer crosses
  EXPECT_TRUE(failures(rep, "bgp", 0).empty());   // BGP does not notice an MTU mismatch
  // validate names the likely cause, as a rejected change would get it.
  ASSERT_TRUE(rep.contains("likely_causes")) << rep.dump(1).substr(0, 2000);
  bool named = false;
  for (const auto& c : rep["likely_causes"])
    named = named || (c["rule"] == "mtu-mismatch" &&
                      c["cause"].get<std::string>().find("leaf2:swp1 (1500)") != std::string::npos);
  EXPECT_TRUE(named) << rep["likely_causes"].dump(1);
  ASSERT_EQ(exec("leaf2", "ip link set swp1 mtu 9216").code, 0);
  expect_all_pass();
}

TEST_F(Clos, ShutBgpNeighborIsCaughtByBgp) {
  ASSERT_EQ(
      exec("leaf3", "vtysh -c 'conf t' -c 'router bgp 65103' -c 'neighbor swp2 shutdown'").code, 0);
  auto rep = validate(lab_, "bgp", 2);
  auto f = failures(rep, "bgp", 0);
  ASSERT_GE(f.size(), 1u);
  bool leaf3 = false;
  for (const auto& r : f)
    if (r["node"] == "leaf3" && r["peer"] == "swp2") {
      leaf3 = true;
      EXPECT_EQ(r["status"], "failed");
      EXPECT_NE(r["observed"], "Established");
    }
  EXPECT_TRUE(leaf3) << rep.dump(1).substr(0, 3000);
  ASSERT_EQ(
      exec("leaf3", "vtysh -c 'conf t' -c 'router bgp 65103' -c 'no neighbor swp2 shutdown'").code,
      0);
  expect_all_pass();
}

TEST_F(Clos, RemovedLoopbackIsCaughtByRoutesAndReachability) {
  ASSERT_EQ(
      exec("leaf2", "vtysh -c 'conf t' -c 'interface lo' -c 'no ip address 10.255.1.2/32'").code,
      0);
  ASSERT_TRUE(
      eventually([] { return exec("leaf1", "ip -j route show 10.255.1.2").out == "[]\n"; }));
  auto rep = validate(lab_, "routes,reachability", 3);
  bool route_missing = false, unreachable = false;
  for (const auto& r : failures(rep, "routes", 0))
    route_missing |= r["peer"] == "10.255.1.2/32" && r["observed"] == "missing";
  for (const auto& r : failures(rep, "reachability", 0))
    unreachable |= r["peer"] == "leaf2 10.255.1.2";
  EXPECT_TRUE(route_missing) << rep.dump(1).substr(0, 3000);
  EXPECT_TRUE(unreachable);
  ASSERT_EQ(exec("leaf2", "vtysh -c 'conf t' -c 'interface lo' -c 'ip address 10.255.1.2/32'").code,
            0);
  expect_all_pass();
}

TEST_F(Clos, HostInWrongSubnetIsCaughtByReachability) {
  ASSERT_EQ(exec("server2", "ip addr del 10.0.4.10/24 dev eth0").code, 0);
  ASSERT_EQ(exec("server2", "ip addr add 10.0.9.10/24 dev eth0").code, 0);
  auto rep = validate(lab_, "reachability", 3);
  auto f = failures(rep, "reachability", 1);
  bool s1_to_s2 = false;
  for (const auto& r : f) s1_to_s2 |= r["node"] == "server1" && r["peer"] == "server2 10.0.4.10";
  EXPECT_TRUE(s1_to_s2) << rep.dump(1).substr(0, 3000);
  ASSERT_EQ(exec("server2", "ip addr del 10.0.9.10/24 dev eth0").code, 0);
  ASSERT_EQ(exec("server2", "ip addr add 10.0.4.10/24 dev eth0").code, 0);
  ASSERT_EQ(exec("server2", "ip route replace default via 10.0.4.1").code, 0);
  expect_all_pass();
}

TEST_F(Clos, ShutSpineUplinkShrinksEcmpWidth) {
  // spine2's port toward leaf4 goes down: every leaf still reaches leaf4, over one spine.
  ASSERT_EQ(exec("spine2", "ip link set swp4 down").code, 0);
  ASSERT_TRUE(eventually([] {
    auto j = json::parse(exec("leaf1", "ip -j route show 10.255.1.4").out);
    return j.size() == 1 && !j[0].contains("nexthops");
  }));
  auto rep = validate(lab_, "routes", 3);
  auto f = failures(rep, "routes", 1);
  bool leaf1_to_leaf4 = false;
  for (const auto& r : f)
    if (r["node"] == "leaf1" && r["peer"] == "10.255.1.4/32") {
      leaf1_to_leaf4 = true;
      EXPECT_EQ(r["expected"], "2 next hops");
      EXPECT_EQ(r["observed"], "1 next hop");
    }
  EXPECT_TRUE(leaf1_to_leaf4) << rep.dump(1).substr(0, 3000);
  // spine2 and leaf4 lose each other: any detour through another leaf and spine1 carries
  // spine2's own ASN 65000 (loop prevention). Nothing else may be missing.
  for (const auto& r : failures(rep, "routes", 0)) {
    std::string node = r["node"], p = r["peer"];
    if (node == "spine2")
      EXPECT_TRUE(p == "10.255.1.4/32" || p == "fd00:255::104/128" || p == "10.0.4.0/24" ||
                  p == "2001:db8:4::/64")
          << p;
    else
      EXPECT_TRUE(node == "leaf4" && (p == "10.255.0.2/32" || p == "fd00:255::2/128"))
          << node << " " << p;
  }
  ASSERT_EQ(exec("spine2", "ip link set swp4 up").code, 0);
  expect_all_pass();
}

TEST_F(Clos, LostLinkLocalRouteIsAddedBackOnItsPortOnly) {
  // What a 512-node bring-up left once (bench/README.md): spine1's swp1 keeps its link-local
  // address but not its `fe80::/64` route, so nothing sent to that address is answered.
  const std::string ns = "tw-" + lab_ + "-spine1";
  auto addr = json::parse(exec("spine1", "ip -6 -j addr show dev swp1 scope link").out);
  ASSERT_EQ(addr.size(), 1u);
  const std::string spine_ll = addr[0]["addr_info"][0].value("local", "");
  auto fe80_routes = [&] {
    std::multiset<std::string> devs;
    for (const auto& r : json::parse(exec("spine1", "ip -6 -j route show").out))
      if (r.value("dst", "") == "fe80::/64") devs.insert(r.value("dev", ""));
    return devs;
  };
  const std::multiset<std::string> all = {"swp1", "swp2", "swp3", "swp4"};
  ASSERT_EQ(fe80_routes(), all);
  ASSERT_EQ(exec("spine1", "ip -6 route del fe80::/64 dev swp1").code, 0);
  EXPECT_NE(exec("leaf1", "ping -6 -c1 -W1 " + spine_ll + "%swp1").code, 0);
  // The kernel's own answer to putting it back the obvious way: another port holds the same
  // prefix and metric.
  auto add = exec("spine1", "ip -6 route add fe80::/64 dev swp1 proto kernel metric 256");
  EXPECT_NE(add.code, 0);
  EXPECT_NE(add.err.find("File exists"), std::string::npos) << add.err;

  const std::vector<std::string> ports = {"swp1", "swp2", "swp3", "swp4"};
  EXPECT_EQ(repair_link_local(ns, ports), std::vector<std::string>{"swp1 address repaired"});
  EXPECT_EQ(fe80_routes(), all);  // one per port: no other port's route taken over
  auto ping = exec("leaf1", "ping -6 -c1 -W2 " + spine_ll + "%swp1");
  EXPECT_EQ(ping.code, 0) << ping.out << ping.err;
  // Nothing missing: nothing added.
  EXPECT_EQ(repair_link_local(ns, ports), std::vector<std::string>{});
  EXPECT_EQ(fe80_routes(), all);
  expect_all_pass();
}

TEST_F(Clos, ExecVtyshReachesOnlyThatNode) {
  auto r = exec("leaf4", "vtysh -c 'show bgp summary json'");
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = json::parse(r.out);
  EXPECT_EQ(j["ipv4Unicast"]["routerId"], "10.255.1.4");
  EXPECT_EQ(j["ipv4Unicast"]["as"], 65104);
  EXPECT_EQ(exec("leaf4", "hostname").out, "leaf4\n");
  auto ping = exec("server1", "ping -c1 -W2 10.0.4.10");
  EXPECT_EQ(ping.code, 0) << ping.out << ping.err;
}

TEST_F(Clos, StatusAndArtifacts) {
  auto st = twin("status --lab " + lab_ + " --json");
  ASSERT_EQ(st.code, 0) << st.err;
  auto j = json::parse(st.out);
  ASSERT_EQ(j["nodes"].size(), 8u);
  for (const auto& n : j["nodes"]) {
    EXPECT_TRUE(n["netns_present"].get<bool>());
    if (n["kind"] == "frr") {
      EXPECT_EQ(n["daemons"].size(), 2u);  // zebra and bgpd: no static route, no staticd
      for (const auto& d : n["daemons"]) EXPECT_TRUE(d["alive"].get<bool>()) << d;
    }
  }
  for (const auto& l : j["links"]) {
    EXPECT_EQ(l["a_state"], "UP");
    EXPECT_EQ(l["a_mtu"], l["mtu_expected"]);
    EXPECT_EQ(l["b_mtu"], l["mtu_expected"]);
  }
  std::string dir = "/tmp/twin-it-artifacts-" + lab_;
  std::string junit = dir + ".xml";
  auto v = twin("validate --lab " + lab_ + " --only bgp --junit " + junit + " --artifacts " + dir);
  EXPECT_EQ(v.code, 0) << v.out << v.err;
  EXPECT_TRUE(fs::exists(dir + "/probes.jsonl"));
  EXPECT_TRUE(fs::exists(dir + "/leaf1/bgpd.log"));
  EXPECT_TRUE(fs::exists(dir + "/leaf1/frr.conf"));
  std::ifstream x(junit);
  std::string xml((std::istreambuf_iterator<char>(x)), {});
  EXPECT_NE(xml.find("<testsuite name=\"bgp\""), std::string::npos);
  fs::remove_all(dir);
  fs::remove(junit);
}

TEST_F(Clos, SameLabNameTwiceIsRefused) {
  auto r = twin("up " + kRepo + "/topologies/clos-2x4.yaml --name " + lab_);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("already running"), std::string::npos) << r.err;
}

// ---- separate labs

TEST(Lab, TwoNodeUpValidateDownLeavesNothing) {
  if (!root()) TWIN_SKIP_WITHOUT("root", "needs root (network namespaces)");
  std::string lab = unique_lab("two");
  auto up = twin("up " + kRepo + "/topologies/two-node.yaml --name " + lab);
  ASSERT_EQ(up.code, 0) << up.err;
  auto rep = validate(lab, "bgp,routes,mtu,reachability", 30);
  EXPECT_EQ(rep["verdict"], "pass") << rep.dump(1).substr(0, 3000);
  // A process a user leaves running with `exec` goes with the lab.
  std::string marker = "86" + std::to_string(getpid());
  EXPECT_EQ(twin("exec --lab " + lab + " r1 -- sh -c 'setsid sleep " + marker +
                 " >/dev/null 2>&1 </dev/null &'")
                .code,
            0);
  auto sleeping = [&] {
    return sh("for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline 2>/dev/null | grep -q "
              "'^sleep " +
              marker + "' && grep -qv '^State:.*Z' $p/status && echo $p; done")
        .out;
  };
  EXPECT_NE(sleeping(), "");
  expect_down_clean(lab);
  EXPECT_EQ(sleeping(), "");
  // Removing it again is nothing to remove, not an error.
  EXPECT_EQ(twin("down --lab " + lab).code, 0);
}

TEST(Lab, MissingLinkMakesTheLabDegraded) {
  if (!root()) TWIN_SKIP_WITHOUT("root", "needs root (network namespaces)");
  std::string lab = unique_lab("gone");
  auto up = twin("up " + kRepo + "/topologies/two-node.yaml --name " + lab);
  ASSERT_EQ(up.code, 0) << up.err;
  EXPECT_EQ(twin("status --lab " + lab).code, 0);
  // A fabric link deleted under the lab: both ends are gone (a veth pair dies whole).
  ASSERT_EQ(sh("ip -n tw-" + lab + "-r1 link del eth1").code, 0);
  auto st = twin("status --lab " + lab + " --json");
  EXPECT_EQ(st.code, 1) << st.out;
  auto j = nlohmann::json::parse(st.out);
  ASSERT_EQ(j["links"].size(), 1u);
  EXPECT_EQ(j["links"][0]["a_state"], "missing");
  EXPECT_EQ(j["links"][0]["b_state"], "missing");
  auto text = twin("status --lab " + lab);
  EXPECT_EQ(text.code, 1);
  EXPECT_NE(text.out.find("lab is degraded"), std::string::npos) << text.out;
  EXPECT_EQ(twin("down --lab " + lab).code, 0);
  EXPECT_EQ(leftovers(lab), std::vector<std::string>{});
}

TEST(Lab, UnconvergedBgpKeepsTheLabAndExitsOne) {
  if (!root()) TWIN_SKIP_WITHOUT("root", "needs root (network namespaces)");
  std::string lab = unique_lab("nc");
  std::string dir = "/tmp/" + lab;
  fs::create_directories(dir);
  // r1's own config expects the wrong peer AS: the session can never be Established.
  std::ofstream(dir + "/r1.conf") << "frr defaults datacenter\ninterface lo\n ip address "
                                     "10.9.0.1/32\nexit\nrouter bgp 65001\n neighbor e1 "
                                     "interface remote-as 65099\nexit\n";
  std::ofstream(dir + "/lab.yaml")
      << "version: 1\nname: x\nnodes:\n  r1: {asn: 65001, loopback: 10.9.0.1/32, config: "
         "r1.conf}\n  r2: {asn: 65002, loopback: 10.9.0.2/32}\nlinks:\n  - endpoints: [r1:e1, "
         "r2:e1]\n";
  auto up = twin("up " + dir + "/lab.yaml --name " + lab + " --converge-timeout 3");
  EXPECT_EQ(up.code, 1) << up.out << up.err;
  // The session is listed with its FRR state, which cycles (Idle, Connect, Active) while the
  // peer keeps refusing the OPEN: any of them, never Established.
  auto at = up.err.find("  r1 e1 -> r2: ");
  ASSERT_NE(at, std::string::npos) << up.err;
  std::string state = up.err.substr(at + 15, up.err.find('\n', at) - at - 15);
  EXPECT_TRUE(state == "Idle" || state == "Connect" || state == "Active" || state == "OpenSent")
      << state;
  EXPECT_TRUE(fs::exists("/run/twin/" + lab + "/state.json"));  // kept for inspection
  auto rep = validate(lab, "bgp", 1);
  EXPECT_EQ(rep["verdict"], "fail");
  EXPECT_EQ(twin("down --lab " + lab).code, 0);
  EXPECT_EQ(leftovers(lab), std::vector<std::string>{});
  fs::remove_all(dir);
}

TEST(Lab, InvalidLabNamesAreRefusedBeforeAnything) {
  for (const std::string bad : {"../evil", "a/b", "-x", "abcdefghijklmnopqrstuvwxy"}) {
    auto r = twin("down --lab '" + bad + "'");
    EXPECT_EQ(r.code, 2) << bad;
    EXPECT_NE(r.err.find("invalid lab name"), std::string::npos) << r.err;
    auto u = twin("up " + kRepo + "/topologies/two-node.yaml --name '" + bad + "'");
    EXPECT_EQ(u.code, 2) << bad << u.err;
  }
}

// A pipeline that reads `validate --json` gets a document even when there is no lab to
// validate (it used to get an empty stdout), and a misspelt command is named.
TEST(Lab, ValidateJsonWithoutALabPrintsAnErrorDocument) {
  auto r = twin("validate --lab nosuchlab-json --json");
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["verdict"], "error");
  EXPECT_EQ(j["exit_code"], 2);
  EXPECT_EQ(j["error"].get<std::string>().rfind("lab 'nosuchlab-json' is not running", 0), 0u)
      << j.dump();
  auto typo = twin("valdate --lab x");
  EXPECT_EQ(typo.code, 2);
  EXPECT_NE(typo.err.find("twin: unknown command 'valdate'; did you mean 'validate'?"),
            std::string::npos)
      << typo.err;
}

TEST(Lab, OwnConfigLabPasses) {
  if (!root()) TWIN_SKIP_WITHOUT("root", "needs root (network namespaces)");
  std::string lab = unique_lab("own");
  auto up = twin("up " + kRepo + "/topologies/own-config/lab.yaml --name " + lab);
  ASSERT_EQ(up.code, 0) << up.err;
  auto rep = validate(lab, "bgp,routes,mtu,reachability", 30);
  EXPECT_EQ(rep["verdict"], "pass") << rep.dump(1).substr(0, 3000);
  EXPECT_EQ(twin("down --lab " + lab).code, 0);
  EXPECT_EQ(leftovers(lab), std::vector<std::string>{});
}

// zebra learns an unnumbered peer's link-local address only from the peer's router
// advertisements. With them 1,800 s apart (the image's ra-interval), a node whose FRR restarts
// would wait for its neighbour's next one, long after its four fast start-up ones are over;
// twin asks for them (a Router Solicitation out of each port once the node's daemons run), so
// the gate's restart check of r1 finds the session back within its 6 s window.
TEST(Lab, RestartedNodeAsksItsNeighboursForAdvertisements) {
  if (!root()) TWIN_SKIP_WITHOUT("root", "needs root (network namespaces)");
  std::string lab = unique_lab("rs");
  std::string dir = "/tmp/" + lab;
  fs::create_directories(dir + "/images");
  std::ifstream in(kRepo + "/images/frr-8.4.yaml");
  std::string image((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string key = "\nra-interval: ";
  auto at = image.find(key);
  ASSERT_NE(at, std::string::npos) << "images/frr-8.4.yaml sets no ra-interval";
  at += key.size();
  image.replace(at, image.find('\n', at) - at, "1800");
  std::ofstream(dir + "/images/frr-8.4.yaml") << image;  // the lab's folder is searched first
  fs::copy_file(kRepo + "/topologies/two-node.yaml", dir + "/lab.yaml");
  std::ofstream(dir + "/change.yaml")
      << "version: 1\nname: prefix-list\nsteps:\n  - name: a prefix list on r1\n    frr:\n"
         "      node: r1\n      add: |\n        ip prefix-list twin-rs seq 5 permit "
         "10.255.0.0/16 le 32\n";
  auto up = twin("up " + dir + "/lab.yaml --name " + lab);
  ASSERT_EQ(up.code, 0) << up.out << up.err;
  // The lab's own image, not the repository's, is the one that ran.
  auto conf = twin("exec --lab " + lab + " r2 -- vtysh -c 'show running-config'");
  EXPECT_NE(conf.out.find(" ipv6 nd ra-interval 1800\n"), std::string::npos) << conf.out;
  // r2's fast start-up advertisements (four, a second apart: zebra/rtadv.c) are over.
  std::this_thread::sleep_for(std::chrono::seconds(6));
  auto r = twin("apply --lab " + lab + " --json --restart-check --converge-timeout 6 " + dir +
                 "/change.yaml");
  EXPECT_EQ(r.code, 0) << r.out.substr(0, 4000) << r.err;
  auto j = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out.substr(0, 2000);
  EXPECT_EQ(j.value("verdict", ""), "approve") << r.err;
  ASSERT_TRUE(j["restart_check"].is_object()) << r.err;
  EXPECT_EQ(j["restart_check"].value("nodes", json::array()), json::array({"r1"}));
  EXPECT_EQ(j["restart_check"].value("ok", false), true)
      << j["restart_check"].value("detail", "") << r.err;
  EXPECT_EQ(twin("down --lab " + lab).code, 0);
  EXPECT_EQ(leftovers(lab), std::vector<std::string>{});
  fs::remove_all(dir);
}

TEST(Lab, BadTopologyCreatesNothing) {
  if (!root()) TWIN_SKIP_WITHOUT("root", "needs root (network namespaces)");
  std::string lab = unique_lab("bad");
  std::string file = "/tmp/" + lab + ".yaml";
  std::ofstream(file) << "version: 1\nname: " << lab
                      << "\nnodes:\n  a: {asn: 1, loopback: 10.0.0.1/32}\nlinks:\n"
                         "  - endpoints: [a:eth1, b:eth1]\n";
  auto r = twin("up " + file);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find(file + ":6:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("unknown node 'b'"), std::string::npos) << r.err;
  EXPECT_EQ(leftovers(lab), std::vector<std::string>{});
  fs::remove(file);
}

// `up` killed half-way leaves a lab whose state file says "creating": `status` says it is
// incomplete and exits 1 (not 0 because the namespaces made so far look healthy), and `down`
// removes it from the state file alone.
TEST(Lab, UpKilledHalfWayIsIncompleteAndDownLeavesNothing) {
  if (!root()) TWIN_SKIP_WITHOUT("root", "needs root (network namespaces)");
  std::string lab = unique_lab("kill");
  // Kill `twin up` with SIGKILL once its daemons are starting: no cleanup of its own runs.
  pid_t pid = fork();
  if (pid == 0) {
    execl(kTwin.c_str(), "twin", "up", (kRepo + "/topologies/clos-2x4.yaml").c_str(), "--name",
          lab.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < until &&
         !fs::exists("/run/twin/" + lab + "/leaf1/zebra.pid"))
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  kill(pid, SIGKILL);
  int st = 0;
  waitpid(pid, &st, 0);
  ASSERT_TRUE(fs::exists("/run/twin/" + lab + "/state.json"));
  LabGuard guard{lab};
  auto status = twin("status --lab " + lab);
  EXPECT_EQ(status.code, 1) << status.out << status.err;
  EXPECT_NE(status.out.find("lab is incomplete: its `twin up` has not finished"), std::string::npos)
      << status.out;
  auto js = twin("status --lab " + lab + " --json");
  EXPECT_EQ(js.code, 1);
  auto j = json::parse(js.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << js.out;
  EXPECT_EQ(j.value("status", ""), "creating");
  EXPECT_EQ(j.value("incomplete", false), true);
  expect_down_clean(lab);
}

// ---- Which host files inputs may name (docs/commands.md, "Which files inputs may name"): a pull
// request's scenario must not make `twin run` read a host file and print it in the job's log.
namespace {

// A checkout (it holds .git) with a scenario, its topology and change, and a folder outside it
// holding a "secret": r1's config, whose second line FRR's parser would reject and quote.
struct Checkout {
  std::string dir = "/tmp/twin-it-inputs-" + std::to_string(getpid());
  std::string secret_dir = dir + "-outside";
  static constexpr const char* kSecret = "hunter2-the-secret-line";
  Checkout() {
    fs::remove_all(dir);
    fs::remove_all(secret_dir);
    fs::create_directories(dir + "/.git");
    fs::create_directories(secret_dir);
    std::ofstream(secret_dir + "/r1.conf") << "frr defaults datacenter\n" << kSecret << "\n";
    std::ofstream(secret_dir + "/ok.conf")
        << "frr defaults datacenter\ninterface lo\n ip address 10.9.0.1/32\nexit\n";
  }
  ~Checkout() {
    fs::remove_all(dir);
    fs::remove_all(secret_dir);
  }
  // The lab, with r1's config at `config` (as the topology names it); the scenario runs it.
  std::string lab(const std::string& config) const {
    std::ofstream(dir + "/lab.yaml")
        << "version: 1\nname: x\nnodes:\n  r1: {asn: 65001, loopback: 10.9.0.1/32, config: "
        << config << "}\n  r2: {asn: 65002, loopback: 10.9.0.2/32}\nlinks:\n"
        << "  - endpoints: [r1:e1, r2:e1]\n";
    std::ofstream(dir + "/change.yaml")
        << "version: 1\nname: c\nsteps:\n  - {name: settle, wait: {until: converged}}\n";
    std::ofstream(dir + "/scenario.yaml")
        << "version: 1\nname: s\ntopology: lab.yaml\nchange: change.yaml\n";
    return dir + "/lab.yaml";
  }
};

}  // namespace

TEST(Lab, RunAndPlanRefuseAFileOutsideTheCheckoutWithoutPrintingIt) {
  Checkout c;
  std::string lab = c.lab(c.secret_dir + "/r1.conf");
  std::string name = unique_lab("out");
  for (const std::string& cmd : {"plan " + lab, "run " + c.dir + "/scenario.yaml --name " + name,
                                 "run " + c.dir + "/scenario.yaml --json --name " + name}) {
    auto r = twin(cmd);
    EXPECT_EQ(r.code, 2) << cmd << "\n" << r.out << r.err;
    EXPECT_EQ((r.out + r.err).find(Checkout::kSecret), std::string::npos) << cmd << r.out << r.err;
    // By name: the place of the field, the file, where files may lie, the flag.
    EXPECT_NE(r.err.find(lab + ":4:"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("config file '" + c.secret_dir + "/r1.conf' lies outside"),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find(c.dir + " (the checkout root of "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("--allow-path " + c.secret_dir), std::string::npos) << r.err;
  }
  EXPECT_EQ(leftovers(name), std::vector<std::string>{});
  // A symlink in the checkout that leads out is outside too.
  fs::create_symlink(c.secret_dir + "/r1.conf", c.dir + "/r1.conf");
  auto linked = twin("plan " + c.lab("r1.conf"));
  EXPECT_EQ(linked.code, 2) << linked.err;
  EXPECT_NE(linked.err.find("resolves to " + c.secret_dir + "/r1.conf"), std::string::npos)
      << linked.err;
  EXPECT_EQ((linked.out + linked.err).find(Checkout::kSecret), std::string::npos);
}

TEST(Lab, AllowPathLetsInputsNameAFolder) {
  if (!root()) TWIN_SKIP_WITHOUT("root", "needs root (FRR's parser checks own configs)");
  Checkout c;
  std::string lab = c.lab(c.secret_dir + "/ok.conf");
  EXPECT_EQ(twin("plan " + lab).code, 2);
  auto allowed = twin("plan " + lab + " --allow-path " + c.secret_dir);
  EXPECT_EQ(allowed.code, 0) << allowed.err;
  EXPECT_NE(allowed.out.find("config: " + c.secret_dir + "/ok.conf"), std::string::npos)
      << allowed.out;
  // Allowed, the file is read — and FRR's rejection quotes its line: what the policy keeps out
  // of a log unless the job means it.
  auto quoted = twin("plan " + c.lab(c.secret_dir + "/r1.conf") + " --allow-path " + c.secret_dir +
                     " --allow-path " + c.dir);
  EXPECT_EQ(quoted.code, 2);
  EXPECT_NE(quoted.err.find(Checkout::kSecret), std::string::npos) << quoted.err;
  auto missing = twin("plan " + lab + " --allow-path " + c.dir + "/nope");
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.err.find("--allow-path " + c.dir + "/nope: no such folder"), std::string::npos)
      << missing.err;
}

TEST(Lab, AFifoIsNotARegularFileAndNothingHangs) {
  Checkout c;
  ASSERT_EQ(::mkfifo((c.dir + "/r1.conf").c_str(), 0600), 0);
  // A FIFO named by the topology, and given as the topology itself; `timeout` fails the test
  // instead of hanging it if twin opened one.
  auto named = sh("timeout 30 " + kTwin + " plan " + c.lab("r1.conf"));
  EXPECT_EQ(named.code, 2) << named.err;
  EXPECT_NE(named.err.find("config file '" + c.dir + "/r1.conf' is not a regular file (a FIFO)"),
            std::string::npos)
      << named.err;
  EXPECT_EQ(named.err.find("does not exist"), std::string::npos) << named.err;
  auto input = sh("timeout 30 " + kTwin + " plan " + c.dir + "/r1.conf");
  EXPECT_EQ(input.code, 2) << input.err;
  EXPECT_NE(input.err.find("is not a regular file (a FIFO)"), std::string::npos) << input.err;
  // And a device given on the command line: refused, not read until memory runs out.
  auto zero = sh("timeout 30 " + kTwin + " plan /dev/zero");
  EXPECT_EQ(zero.code, 2) << zero.err;
  EXPECT_NE(zero.err.find("is not a regular file (a character device)"), std::string::npos)
      << zero.err;
}

TEST(Lab, SigtermDuringUpCleansUp) {
  if (!root()) TWIN_SKIP_WITHOUT("root", "needs root (network namespaces)");
  std::string lab = unique_lab("term");
  pid_t pid = fork();
  if (pid == 0) {
    int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 1);
    dup2(devnull, 2);
    execl(kTwin.c_str(), "twin", "up", (kRepo + "/topologies/clos-2x4.yaml").c_str(), "--name",
          lab.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < until &&
         !fs::exists("/run/twin/" + lab + "/spine1/zebra.pid"))
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  kill(pid, SIGTERM);
  int st = 0;
  waitpid(pid, &st, 0);
  ASSERT_TRUE(WIFEXITED(st));
  EXPECT_EQ(WEXITSTATUS(st), 130);
  EXPECT_EQ(leftovers(lab), std::vector<std::string>{});
}

// Two iBGP routers that announce their loopbacks (tests/data/labs/ibgp-pair): twin expects and
// pings them, where it once passed on 9 tests having checked no route; and r1's `log file` to a
// path of this machine is written in r1's run folder, said in a note.
TEST(Lab, AnIbgpPairIsCheckedForItsRoutesAndItsLogFileStaysInTheLab) {
  if (!root()) TWIN_SKIP_WITHOUT("root", "needs root (network namespaces, FRR)");
  const std::string host_file = "/tmp/twin-ibgp-pair-r1.log";
  std::error_code ec;
  fs::remove(host_file, ec);
  const std::string topo = kRepo + "/tests/data/labs/ibgp-pair/lab.yaml";
  auto plan = twin("plan " + topo);
  ASSERT_EQ(plan.code, 0) << plan.err;
  EXPECT_NE(plan.out.find("Reachability expected: 1 of 1 router pairs routed both ways"),
            std::string::npos)
      << plan.out;
  EXPECT_NE(plan.out.find("`log file /tmp/twin-ibgp-pair-r1.log` writes"), std::string::npos)
      << plan.out;
  std::string lab = unique_lab("ibgp");
  LabGuard guard{lab};
  auto up = twin("up " + topo + " --name " + lab);
  ASSERT_EQ(up.code, 0) << up.err;
  auto v = twin("validate --lab " + lab + " --json");
  EXPECT_EQ(v.code, 0) << v.out.substr(0, 3000);
  json rep = json::parse(v.out, nullptr, false);
  auto n = result_counts(rep);
  EXPECT_EQ((n[{"routes", 0}]), 2);        // each loopback in the other's FIB
  EXPECT_EQ((n[{"reachability", 0}]), 1);  // one echo for the pair
  EXPECT_EQ((n[{"node", 0}]), 4);          // zebra and bgpd on each router
  bool noted = false;
  for (const auto& note : rep["notes"])
    noted |= note["node"] == "r1" &&
             note["text"].get<std::string>().find(host_file) != std::string::npos;
  EXPECT_TRUE(noted) << rep["notes"].dump(1);
  EXPECT_FALSE(fs::exists(host_file)) << "the lab's FRR wrote a file of this machine";
  EXPECT_TRUE(fs::exists("/run/twin/" + lab + "/r1/files/tmp_twin-ibgp-pair-r1.log"));
  expect_down_clean(lab);
}

// Issue 46: an anycast loopback on two leaves (topologies/anycast.yaml) is planned, built and
// validated as anycast: every other router routes to the nearest holders (the spines over both
// leaves, leaf3 over both spines) and reaches the address; when one holder stops announcing it,
// exactly the routers that lose a holder's path (the spines) fail for width, and everyone still
// reaches the other holder.
TEST(Lab, AnAnycastLoopbackOnTwoLeavesIsReachedAtItsNearestHolders) {
  if (!root()) TWIN_SKIP_WITHOUT("root", "needs root (network namespaces, FRR)");
  const std::string topo = kRepo + "/topologies/anycast.yaml";
  auto plan = twin("plan " + topo);
  ASSERT_EQ(plan.code, 0) << plan.err;
  EXPECT_NE(plan.out.find("  10.255.255.1/32  held by leaf1, leaf2\n"
                          "    leaf3: 2 next hops via spine1, spine2\n"
                          "    spine1: 2 next hops via leaf1, leaf2\n"),
            std::string::npos)
      << plan.out;
  std::string lab = unique_lab("anycast");
  LabGuard guard{lab};
  auto up = twin("up " + topo + " --name " + lab);
  ASSERT_EQ(up.code, 0) << up.err;
  auto rep = validate(lab, "routes,reachability", 30);
  EXPECT_EQ(rep.value("verdict", ""), "pass") << rep.dump(1).substr(0, 4000);
  auto n = result_counts(rep);
  EXPECT_EQ((n[{"routes", 2}]), 6);        // spine1, spine2, leaf3; IPv4 and IPv6
  EXPECT_EQ((n[{"reachability", 4}]), 6);  // the same routers ping it, both families
  // The mesh pings own loopbacks only: 9 routed pairs of 5 routers (the spines share an ASN and
  // do not reach each other), one echo per pair and family; no pair's echo goes to or comes from
  // the shared address.
  EXPECT_EQ((n[{"reachability", 0}]), 18);

  auto exec = [&](const std::string& node, const std::string& cmd) {
    return twin("exec --lab " + lab + " " + node + " -- " + cmd);
  };
  ASSERT_EQ(exec("leaf2",
                 "vtysh -c 'conf t' -c 'interface lo' -c 'no ip address "
                 "10.255.255.1/32'")
                .code,
            0);
  ASSERT_TRUE(eventually([&] {
    auto r = exec("spine1", "ip -j route show 10.255.255.1");
    return r.out.find("nexthops") == std::string::npos && r.out.find("swp1") != std::string::npos;
  }));
  rep = validate(lab, "routes,reachability", 3);
  std::vector<std::string> narrow;
  for (const auto& r : failures(rep, "routes", 1))
    narrow.push_back(r["node"].get<std::string>() + " " + r["peer"].get<std::string>() + " " +
                     r["observed"].get<std::string>());
  std::sort(narrow.begin(), narrow.end());
  EXPECT_EQ(narrow, (std::vector<std::string>{"spine1 10.255.255.1/32 1 next hop",
                                              "spine2 10.255.255.1/32 1 next hop"}))
      << rep.dump(1).substr(0, 4000);
  EXPECT_TRUE(failures(rep, "routes", 0).empty());
  EXPECT_TRUE(failures(rep, "routes", 2).empty());  // the remaining path is a nearest holder's
  EXPECT_TRUE(failures(rep, "reachability", 4).empty());
  expect_down_clean(lab);
}
