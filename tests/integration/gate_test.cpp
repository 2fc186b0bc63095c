// Integration tests of the rollout gate (`twin apply`, `twin run`) on real FRR: every scenario in
// scenarios/clos-2x4/ gives its expected verdict and first reason, and the lab is proven back at
// its baseline afterwards (rejected changes roll back; approved ones are reverted with --revert,
// which tests the rollback of good changes too — topology steps included). All of it on one
// shared lab, so each test also checks the previous one left the lab as it found it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/integration/cli_support.hpp"
#include "tests/integration/scenario_support.hpp"
#include "twin/core/diagnostics.hpp"
#include "twin/gate/scenario.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace twin_it;

namespace {

const std::string kScenarios = kRepo + "/scenarios/clos-2x4";

std::string running_config(const std::string& lab, const std::string& node) {
  return twin_it::twin("exec --lab " + lab + " " + node + " -- vtysh -c 'show running-config'").out;
}

std::string write_temp(const std::string& name, const std::string& text) {
  std::string dir = "/tmp/twin-gate-" + std::to_string(getpid());
  fs::create_directories(dir);
  std::string path = dir + "/" + name;
  std::ofstream(path) << text;
  return path;
}

}  // namespace

class Gate : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    shared_.up("clos-2x4.yaml", "gate");
    lab_ = shared_.lab;
  }
  static void TearDownTestSuite() {
    shared_.down();
    std::error_code ec;
    fs::remove_all("/tmp/twin-gate-" + std::to_string(getpid()), ec);
  }
  void SetUp() override { shared_.require(); }
  // `twin apply` with JSON output; short windows keep CI fast (the network is settled first).
  static CmdResult apply(const std::string& args) {
    return twin_it::twin("apply --lab " + lab_ + " --json --converge-timeout 6 " + args);
  }
  static inline SharedLab shared_;
  static inline std::string lab_;
};

class GateScenario : public Gate, public ::testing::WithParamInterface<std::string> {};

TEST_P(GateScenario, GivesItsExpectedVerdictAndRestoresTheBaseline) {
  check_scenario(lab_, GetParam());
}

INSTANTIATE_TEST_SUITE_P(Clos2x4, GateScenario, ::testing::ValuesIn(scenario_files()),
                         scenario_name);

// The same gate on a lab of the users' own configs: iBGP with a route reflector over OSPF.
// Each seeded fault (an OSPF area, hello/dead or MTU mismatch on one end, a passive transit
// port, route-reflector clients left out, a static route to a wrong next hop) is rejected, the
// good changes are approved, and the lab is proven back at its baseline after each.
struct IbgpRr {
  static constexpr const char* kTopology = "ibgp-rr/lab.yaml";
  static constexpr const char* kTag = "rr";
};
class IbgpRrScenario : public SharedLabSuite<IbgpRr, ::testing::TestWithParam<std::string>> {};

TEST_P(IbgpRrScenario, GivesItsExpectedVerdictAndRestoresTheBaseline) {
  check_scenario(shared_.lab, GetParam());
}

INSTANTIATE_TEST_SUITE_P(IbgpRr, IbgpRrScenario, ::testing::ValuesIn(scenario_files("ibgp-rr")),
                         scenario_name);

// OSPF as users run it (topologies/ospf-6: FRR's default timers, point-to-point and broadcast
// links): traffic engineering declared and not, a default route declared and not, one-sided
// mismatches rejected without waiting out the 40 s dead interval, a latent duplicate router-id;
// the lab proven back at its baseline after each.
struct Ospf6 {
  static constexpr const char* kTopology = "ospf-6/lab.yaml";
  static constexpr const char* kTag = "o6";
};
class Ospf6Scenario : public SharedLabSuite<Ospf6, ::testing::TestWithParam<std::string>> {};

TEST_P(Ospf6Scenario, GivesItsExpectedVerdictAndRestoresTheBaseline) {
  check_scenario(shared_.lab, GetParam());
}

INSTANTIATE_TEST_SUITE_P(Ospf6, Ospf6Scenario, ::testing::ValuesIn(scenario_files("ospf-6")),
                         scenario_name);

// Numbered eBGP from the users' own configs, no IGP (topologies/ebgp-diamond): routes are
// expected along the configured sessions, ECMP where multipath-relax allows it, loopbacks from
// the configs' `interface lo`; path MTU and the loopback mesh follow the same paths.
struct EbgpDiamond {
  static constexpr const char* kTopology = "ebgp-diamond/lab.yaml";
  static constexpr const char* kTag = "ebgp";
};
class EbgpDiamondLab : public SharedLabSuite<EbgpDiamond> {};

TEST_F(EbgpDiamondLab, RoutesEcmpAndPathsFollowTheConfiguredSessions) {
  auto rep = twin_it::validate(shared_.lab, "bgp,routes,mtu,reachability", 20);
  EXPECT_EQ(rep.value("verdict", ""), "pass") << rep.dump(1).substr(0, 3000);
  std::map<std::pair<std::string, int>, int> n;
  std::map<std::string, std::string> ecmp;  // "node prefix" -> observed, routes test 1
  for (const auto& r : rep["results"]) {
    n[{r["validator"], r["test"]}]++;
    if (r["validator"] == "routes" && r["test"] == 1)
      ecmp[r["node"].get<std::string>() + " " + r["peer"].get<std::string>()] = r["observed"];
  }
  EXPECT_EQ((n[{"bgp", 0}]), 8);
  EXPECT_EQ((n[{"bgp", 1}]), 8);
  EXPECT_EQ((n[{"routes", 0}]), 18);  // 6 prefixes at each of the 3 other routers
  EXPECT_EQ((n[{"mtu", 2}]), 12);
  EXPECT_EQ((n[{"reachability", 0}]), 6);  // 6 pairs of the 4 routers, one echo each
  EXPECT_EQ(ecmp["r1 10.0.255.4/32"], "2 next hops");  // multipath-relax on r1
  EXPECT_EQ(ecmp["r4 10.0.255.1/32"], "1 next hop");
}

// Its seeded faults (an RFC 8212 policy requirement without route-maps, multipath-relax
// removed) are rejected and the good change approved, the lab proven back after each.
class EbgpDiamondScenario
    : public SharedLabSuite<EbgpDiamond, ::testing::TestWithParam<std::string>> {};

TEST_P(EbgpDiamondScenario, GivesItsExpectedVerdictAndRestoresTheBaseline) {
  check_scenario(shared_.lab, GetParam());
}

INSTANTIATE_TEST_SUITE_P(EbgpDiamond, EbgpDiamondScenario,
                         ::testing::ValuesIn(scenario_files("ebgp-diamond")), scenario_name);

// The gate on an EVPN lab (topologies/evpn-2x4.yaml): a spine drained, declared, keeps every
// tenant network whole and is approved (restart check included); `advertise-all-vni` removed
// from one leaf leaves the underlay healthy and splits a tenant network: rejected, rolled back.
struct Evpn2x4 {
  static constexpr const char* kTopology = "evpn-2x4.yaml";
  static constexpr const char* kTag = "evg";
};
class EvpnScenario : public SharedLabSuite<Evpn2x4, ::testing::TestWithParam<std::string>> {};

TEST_P(EvpnScenario, GivesItsExpectedVerdictAndRestoresTheBaseline) {
  check_scenario(shared_.lab, GetParam());
}

INSTANTIATE_TEST_SUITE_P(Evpn2x4, EvpnScenario, ::testing::ValuesIn(scenario_files("evpn-2x4")),
                         scenario_name);

TEST_F(Gate, BadChangeIsRefusedWithPlacesAndNothingApplied) {
  std::string before = running_config(lab_, "leaf1");
  std::string path = write_temp("bad.yaml",
                                "version: 1\n"
                                "name: bad\n"
                                "steps:\n"
                                "  - name: typo in a node\n"
                                "    frr:\n"
                                "      node: lef1\n"
                                "      add: |\n"
                                "        router bgp 65101\n"
                                "  - name: a line FRR does not know\n"
                                "    frr:\n"
                                "      node: leaf1\n"
                                "      add: |\n"
                                "        router bgp 65101\n"
                                "         neighbor fabric bogus-option\n"
                                "  - name: too small\n"
                                "    interface:\n"
                                "      interface: leaf1:swp1\n"
                                "      mtu: 40\n");
  auto r = apply(path);
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find(path + ":6:13"), std::string::npos) << r.err;  // unknown node lef1
  EXPECT_NE(r.err.find("leaf1"), std::string::npos) << "nearest-name hint: " << r.err;
  EXPECT_NE(r.err.find(path + ":18:12"), std::string::npos) << r.err;  // MTU out of range
  // FRR's own check runs in the same pass: every problem at once.
  EXPECT_NE(r.err.find(path + ":14:1: error: steps[1].frr.add: FRR rejects this line"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(running_config(lab_, "leaf1"), before) << "nothing may be applied";
}

TEST_F(Gate, FrrSyntaxErrorIsReportedAtItsLine) {
  std::string path = write_temp("syntax.yaml",
                                "version: 1\n"
                                "name: syntax\n"
                                "steps:\n"
                                "  - name: a line FRR does not know\n"
                                "    frr:\n"
                                "      node: leaf1\n"
                                "      add: |\n"
                                "        router bgp 65101\n"
                                "         neighbor fabric bogus-option\n"
                                "  - name: another BGP instance\n"
                                "    frr:\n"
                                "      node: leaf1\n"
                                "      add: |\n"
                                "        router bgp 65999\n");
  auto r = apply(path);
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find(path + ":9:1: error: steps[0].frr.add: FRR rejects this line"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("Unknown command"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(path + ":14:1: error: steps[1].frr.add: node leaf1 runs router bgp 65101, "
                              "not 65999"),
            std::string::npos)
      << r.err;
  // --json: the problems as a document a CI job can read.
  json j = parse_or_fail(r);
  EXPECT_EQ(j.value("verdict", ""), "input-error");
  EXPECT_EQ(j["diagnostics"].size(), 2u);
}

TEST_F(Gate, LineTheDaemonRejectsWhileApplyingRejectsAndRollsBack) {
  // vtysh -C accepts it (syntax), bgpd refuses it (the neighbor does not exist).
  std::string path = write_temp("semantic.yaml",
                                "version: 1\n"
                                "name: semantic\n"
                                "steps:\n"
                                "  - name: policy for an unknown neighbor\n"
                                "    frr:\n"
                                "      node: leaf1\n"
                                "      add: |\n"
                                "        router bgp 65101\n"
                                "         neighbor 192.0.2.1 route-map X in\n");
  auto r = apply(path);
  json j = parse_or_fail(r);
  EXPECT_EQ(r.code, 1) << r.err;
  ASSERT_FALSE(j["reasons"].empty());
  EXPECT_EQ(j["reasons"][0]["category"], "step-failed");
  EXPECT_NE(j["reasons"][0]["message"].get<std::string>().find("Specify remote-as"),
            std::string::npos)
      << j["reasons"][0]["message"];
  EXPECT_NE(j["reasons"][0]["message"].get<std::string>().find(path + ":9"), std::string::npos)
      << j["reasons"][0]["message"];
  expect_back_at_baseline(j);
}

TEST_F(Gate, ConfigsFolderAppliesOnlyTheDifferenceAndDryRunTouchesNothing) {
  std::string leaf1 = running_config(lab_, "leaf1");
  auto pos = leaf1.find("Current configuration:\n");
  ASSERT_NE(pos, std::string::npos);
  leaf1 = leaf1.substr(pos + 23);
  std::string changed = leaf1;
  auto af = changed.find(" address-family ipv4 unicast\n");
  ASSERT_NE(af, std::string::npos);
  changed.insert(af + 29, "  network 10.77.0.0/24\n");
  auto lo = changed.find("interface lo\n");
  ASSERT_NE(lo, std::string::npos);
  changed.insert(lo + 13, " ip address 10.77.0.1/24\n");  // import-check: the route must exist
  std::string dir = "/tmp/twin-gate-" + std::to_string(getpid()) + "/configs";
  fs::create_directories(dir);
  std::ofstream(dir + "/leaf1.conf") << changed;
  auto dry = twin_it::twin("apply --lab " + lab_ + " --configs " + dir + " --dry-run");
  EXPECT_EQ(dry.code, 0) << dry.err;
  EXPECT_NE(dry.out.find("network 10.77.0.0/24"), std::string::npos) << dry.out;
  EXPECT_EQ(running_config(lab_, "leaf1").substr(pos + 23), leaf1) << "dry run applied";
  auto r = apply("--configs " + dir + " --revert");
  json j = parse_or_fail(r);
  ASSERT_EQ(j["steps"].size(), 1u);
  EXPECT_EQ(j["steps"][0]["name"], "replace config of leaf1");
  EXPECT_EQ(j["steps"][0]["status"], "applied");
  // The new prefix reached the other nodes, and nothing declared it (a configs folder has no
  // intent block): rejected as an undeclared origination, attributed to leaf1 by its BGP path.
  EXPECT_EQ(r.code, 1) << r.err << j.value("reasons", json()).dump(1);
  ASSERT_FALSE(j["reasons"].empty());
  EXPECT_EQ(j["reasons"][0]["category"], "prefix-gained");
  int gained = 0;
  for (const auto& c : j["diff"])
    if (c["category"] == "prefix-gained" && c["subject"] == "10.77.0.0/24") {
      ++gained;
      EXPECT_EQ(c["origin"], "leaf1") << c.dump();
      EXPECT_FALSE(c["intended"].get<bool>());
    }
  EXPECT_EQ(gained, 5) << j["diff"].dump(1);  // the 3 other leaves and 2 spines
  expect_back_at_baseline(j);
}

TEST_F(Gate, FailingBaselineExitsFourUnlessDirtyBaselineIsAllowed) {
  ASSERT_EQ(twin_it::twin("exec --lab " + lab_ + " leaf3 -- ip link set dev swp2 mtu 1500").code,
            0);
  std::string change = kScenarios + "/changes/service-prefix.yaml";
  auto r = apply(change);
  json j = parse_or_fail(r);
  EXPECT_EQ(r.code, 4) << r.err;
  EXPECT_EQ(j["verdict"], "baseline-failed");
  EXPECT_TRUE(j["steps"].empty()) << "nothing may be applied on a failing baseline";
  auto dirty = apply(change + " --allow-dirty-baseline --revert");
  json d = parse_or_fail(dirty);
  EXPECT_EQ(dirty.code, 0) << dirty.err << d.value("reasons", json()).dump(1);
  EXPECT_EQ(d["verdict"], "approve");
  ASSERT_EQ(twin_it::twin("exec --lab " + lab_ + " leaf3 -- ip link set dev swp2 mtu 9216").code,
            0);
  EXPECT_EQ(twin_it::twin("validate --lab " + lab_ + " --converge-timeout 10").code, 0);
}

TEST_F(Gate, EvidenceBundleHoldsWhatAnApproverAudits) {
  std::string dir = "/tmp/twin-gate-" + std::to_string(getpid()) + "/evidence";
  auto r = apply(kScenarios + "/changes/service-prefix.yaml --revert --evidence " + dir);
  EXPECT_EQ(r.code, 0) << r.err;
  for (const char* f :
       {"hashes.json", "change.yaml", "topology.yaml", "baseline.json", "after.json",
        "rollback.json", "diff.json", "verdict.json", "report.xml", "baseline-probes.jsonl",
        "after-probes.jsonl", "nodes/leaf3/before.conf", "nodes/leaf3/after.conf"})
    EXPECT_TRUE(fs::exists(dir + "/" + f)) << f;
  json h = json::parse(std::ifstream(dir + "/hashes.json"));
  EXPECT_EQ(h["configs"]["leaf3"]["changed"], true);
  EXPECT_EQ(h["configs"]["leaf1"]["changed"], false);
  EXPECT_EQ(h["files"]["change.yaml"]["sha256"].get<std::string>().size(), 64u);
  std::ifstream probes(dir + "/after-probes.jsonl");
  std::string line;
  ASSERT_TRUE(std::getline(probes, line));
  json p = json::parse(line);
  EXPECT_FALSE(p["command"].get<std::string>().empty());
  std::ifstream af(dir + "/nodes/leaf3/after.conf");
  std::string after((std::istreambuf_iterator<char>(af)), {});
  EXPECT_NE(after.find("network 10.200.3.0/24"), std::string::npos);
}

TEST_F(Gate, NoRollbackLeavesTheBrokenStateForInspection) {
  auto r = apply(kScenarios + "/changes/withdraw-loopback.yaml --no-rollback");
  json j = parse_or_fail(r);
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_FALSE(j.value("rollback_ran", true));
  EXPECT_EQ(twin_it::twin("validate --lab " + lab_ + " --only routes --converge-timeout 2").code,
            1);
  // Repair by a change of its own, judged on the dirty baseline.
  std::string fix = write_temp("fix.yaml",
                               "version: 1\n"
                               "name: restore-loopback\n"
                               "steps:\n"
                               "  - name: advertise leaf1's loopback again\n"
                               "    frr:\n"
                               "      node: leaf1\n"
                               "      add: |\n"
                               "        router bgp 65101\n"
                               "         address-family ipv4 unicast\n"
                               "          network 10.255.1.1/32\n");
  auto f = apply(fix + " --allow-dirty-baseline");
  EXPECT_EQ(f.code, 0) << f.err << f.out;
  EXPECT_EQ(twin_it::twin("validate --lab " + lab_ + " --converge-timeout 10").code, 0);
}

TEST(GateRun, OneShotScenarioUpApplyVerdictDown) {
  if (!root()) TWIN_SKIP_WITHOUT("root", "needs root (network namespaces, FRR)");
  std::string lab = unique_lab("run");
  std::string junit = "/tmp/twin-gate-run-" + std::to_string(getpid()) + ".xml";
  auto r = twin_it::twin("run " + kScenarios + "/approve-service-prefix.yaml --name " + lab +
                         " --junit " + junit + " --json");
  EXPECT_EQ(r.code, 0) << r.err;
  json j = parse_or_fail(r);
  EXPECT_EQ(j["verdict"], "approve");
  EXPECT_EQ(j["scenario"]["met"], true);
  std::ifstream f(junit);
  std::string xml((std::istreambuf_iterator<char>(f)), {});
  // With an expect block the JUnit report holds the expectation, passing when it was met.
  EXPECT_NE(xml.find("<testsuite name=\"scenario.approve-service-prefix\" tests=\"1\" "
                     "failures=\"0\""),
            std::string::npos)
      << xml.substr(0, 600);
  EXPECT_NE(xml.find("<testsuite name=\"apply.steps\""), std::string::npos);
  EXPECT_TRUE(leftovers(lab).empty());
  fs::remove(junit);
}

namespace {

// The PID `twin status` records for `daemon` of `node` (0 when none).
int recorded_pid(const std::string& lab, const std::string& node, const std::string& daemon) {
  auto s = twin_it::twin("status --lab " + lab + " --json");
  json j = json::parse(s.out, nullptr, false);
  for (const auto& n : j.value("nodes", json::array()))
    if (n["name"] == node)
      for (const auto& d : n["daemons"])
        if (d["name"] == daemon) return d["pid"].get<int>();
  return 0;
}

}  // namespace

// A dead daemon is a failed test of its own (not a PASS, not the full window of waiting), the
// gate takes no baseline from such a lab (exit 5), and `twin restart` brings the node back.
TEST_F(Gate, DeadDaemonFailsValidationBlocksTheGateAndRestartRepairsIt) {
  int pid = recorded_pid(lab_, "leaf2", "bgpd");
  ASSERT_GT(pid, 0);
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  auto t0 = std::chrono::steady_clock::now();
  auto v = twin_it::twin("validate --lab " + lab_ + " --json");
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(v.code, 1) << v.err;
  json rep = json::parse(v.out, nullptr, false);
  auto dead = failures(rep, "node", 0);
  ASSERT_EQ(dead.size(), 1u) << v.out.substr(0, 3000);
  EXPECT_EQ(dead[0]["node"], "leaf2");
  EXPECT_EQ(dead[0]["peer"], "bgpd");
  EXPECT_EQ(dead[0]["unhealthy"], true);
  EXPECT_NE(dead[0]["message"].get<std::string>().find("is not running"), std::string::npos);
  // The other failures are not waited for: well inside the 30 s window.
  EXPECT_LT(took, 20.0) << "validate waited " << took << " s";
  bool cause = false;
  for (const auto& c : rep.value("likely_causes", json::array()))
    cause |= c.value("rule", "") == "daemon-dead";
  EXPECT_TRUE(cause) << rep.value("likely_causes", json()).dump(1);
  // The gate refuses the baseline and blames no change.
  auto a = apply(kScenarios + "/changes/service-prefix.yaml --allow-dirty-baseline");
  json j = parse_or_fail(a);
  EXPECT_EQ(a.code, 5) << a.err;
  EXPECT_EQ(j["verdict"], "baseline-unhealthy");
  EXPECT_TRUE(j["steps"].empty());
  EXPECT_EQ(twin_it::twin("status --lab " + lab_).code, 1);
  // One daemon back from the startup config, the others untouched.
  int zebra = recorded_pid(lab_, "leaf2", "zebra");
  auto r = twin_it::twin("restart leaf2 --daemon bgpd --lab " + lab_ + " --json");
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  json rj = json::parse(r.out, nullptr, false);
  EXPECT_EQ(rj["converged"], true);
  EXPECT_EQ(recorded_pid(lab_, "leaf2", "zebra"), zebra);
  EXPECT_NE(recorded_pid(lab_, "leaf2", "bgpd"), pid);
  EXPECT_EQ(twin_it::twin("validate --lab " + lab_ + " --converge-timeout 20").code, 0);
  // A whole node: zebra killed, every daemon restarted.
  ASSERT_EQ(::kill(recorded_pid(lab_, "leaf3", "zebra"), SIGKILL), 0);
  auto whole = twin_it::twin("restart leaf3 --lab " + lab_);
  EXPECT_EQ(whole.code, 0) << whole.err << whole.out;
  EXPECT_NE(whole.out.find("sessions Established"), std::string::npos) << whole.out;
  EXPECT_EQ(twin_it::twin("validate --lab " + lab_ + " --converge-timeout 20").code, 0);
  // Bad input: an unknown node or daemon is exit 2 and touches nothing.
  EXPECT_EQ(twin_it::twin("restart leaf9 --lab " + lab_).code, 2);
  EXPECT_EQ(twin_it::twin("restart leaf1 --daemon ospfd --lab " + lab_).code, 2);
}

// A change set's line that would write a file of this machine writes inside the node's run
// folder instead, says so, and is approved for what it is.
TEST_F(Gate, ChangeWritingAHostFileIsRedirectedIntoTheNode) {
  const std::string host_file = "/tmp/twin-hostpath-" + std::to_string(getpid()) + ".log";
  const std::string dir = "/tmp/twin-gate-" + std::to_string(getpid());
  fs::create_directories(dir);
  const std::string change = dir + "/log-file.yaml";
  std::ofstream(change) << "version: 1\nname: log-file\nsteps:\n  - name: log to a file\n"
                           "    frr:\n      nodes: [leaf1]\n      add: |\n        log file "
                        << host_file << " informational\n";
  auto r = apply(change + " --revert");
  json j = parse_or_fail(r);
  EXPECT_EQ(r.code, 0) << r.err << j.value("reasons", json()).dump(1);
  EXPECT_FALSE(fs::exists(host_file)) << "a lab's FRR wrote a file of this machine";
  ASSERT_EQ(j["notes"].size(), 1u) << j["notes"].dump(1);
  const std::string text = j["notes"][0]["text"];
  EXPECT_NE(text.find(host_file), std::string::npos) << text;
  EXPECT_EQ(j["notes"][0]["node"], "leaf1");
  EXPECT_EQ(j["notes"][0]["source"], change + ":8");
  const std::string inside =
      "/run/twin/" + lab_ + "/leaf1/files/tmp_twin-hostpath-" + std::to_string(getpid()) + ".log";
  EXPECT_TRUE(fs::exists(inside)) << inside;
}
