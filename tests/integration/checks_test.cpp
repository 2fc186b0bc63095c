// Integration tests of declared checks (root; real namespaces, FRR 8.4, pings): the OSPF
// triangle as a containerlab file with its companion tests/data/checks/triangle.checks.yaml.
// `validate` finds the checks in the lab's state; a link shut on r2 fails the r1-r2 adjacency
// check with the path that differs while the others still pass; restored, they pass again; a
// check naming an unknown node stops `up` with exit 2 and nothing created; `down` leaves nothing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/integration/cli_support.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::HasSubstr;
using namespace twin_it;

namespace {

const std::string kClab = kRepo + "/tests/data/checks/triangle.clab.yml";

std::string chk_lab(const std::string& what) {
  return "chk" + std::to_string(getpid() % 100000) + what;
}

const json* check_result(const json& rep, const std::string& name) {
  for (const auto& r : rep["results"])
    if (r["validator"] == "checks" && r["peer"] == name) return &r;
  return nullptr;
}

}  // namespace

TEST(Checks, DeclaredChecksPassFailWithTheirReasonAndPassAgain) {
  if (!root()) TWIN_SKIP_WITHOUT("root", "needs root (network namespaces)");
  const std::string lab = chk_lab("tri");
  auto up = twin("up " + kClab + " --name " + lab);
  ASSERT_EQ(up.code, 0) << up.out << up.err;

  // validate reads the checks from the lab's state; every family, the checks among them.
  auto rep = validate(lab, "ospf,routes,reachability,checks", 30);
  EXPECT_EQ(rep.value("verdict", ""), "pass") << rep.dump(1).substr(0, 4000);
  int checks = 0;
  for (const auto& r : rep["results"]) checks += r["validator"] == "checks";
  EXPECT_EQ(checks, 4);
  for (const char* name : {"reach pc1->pc3", "pc1 isolated from 10.9.0.1",
                           "route r1 192.168.2.0/24", "r1-r2 adjacency"}) {
    const json* r = check_result(rep, name);
    ASSERT_NE(r, nullptr) << name;
    EXPECT_EQ((*r)["status"], "passed") << r->dump();
  }
  EXPECT_EQ((*check_result(rep, "r1-r2 adjacency"))["test"], 2);
  EXPECT_EQ((*check_result(rep, "reach pc1->pc3"))["test"], 0);
  EXPECT_EQ((*check_result(rep, "route r1 192.168.2.0/24"))["test"], 1);

  // Break the r1-r2 link at r2: r1 loses that neighbor; pc1 still reaches pc3 over r3, and
  // r1 reaches 192.168.2.0/24 over r3 (one next hop, OSPF).
  auto down_link = twin("exec --lab " + lab + " r2 -- ip link set eth1 down");
  ASSERT_EQ(down_link.code, 0) << down_link.err;
  // Each check is decided on its own: one that holds at the first attempt is final then, so
  // the fault must have reached r1's ospfd first (no other check's retries wait for it now).
  EXPECT_TRUE(eventually([&] {
    auto nb = twin("exec --lab " + lab + " r1 -- vtysh -c 'show ip ospf neighbor json'");
    return nb.code == 0 && nb.out.find("10.0.255.2") == std::string::npos;
  }));
  auto broken = validate(lab, "checks", 30);
  EXPECT_EQ(broken.value("verdict", ""), "fail") << broken.dump(1).substr(0, 4000);
  const json* adj = check_result(broken, "r1-r2 adjacency");
  ASSERT_NE(adj, nullptr);
  EXPECT_EQ((*adj)["status"], "failed");
  EXPECT_EQ((*adj)["node"], "r1");
  EXPECT_THAT((*adj)["message"].get<std::string>(), HasSubstr("neighbors.10.0.255.2: missing"));
  EXPECT_GT((*adj)["attempts"].get<int>(), 1);  // retried within its wait
  for (const char* name : {"reach pc1->pc3", "pc1 isolated from 10.9.0.1", "route r1 192.168.2.0/24"}) {
    const json* r = check_result(broken, name);
    ASSERT_NE(r, nullptr) << name;
    EXPECT_EQ((*r)["status"], "passed") << r->dump();
  }
  // The text report names the check and its reason.
  auto text = twin("validate --lab " + lab + " --only checks --converge-timeout 1");
  EXPECT_EQ(text.code, 1);
  EXPECT_THAT(text.out, HasSubstr("r1-r2 adjacency"));

  // Restore: the adjacency comes back within the check's wait.
  auto up_link = twin("exec --lab " + lab + " r2 -- ip link set eth1 up");
  ASSERT_EQ(up_link.code, 0) << up_link.err;
  auto again = validate(lab, "checks", 30);
  EXPECT_EQ(again.value("verdict", ""), "pass") << again.dump(1).substr(0, 4000);

  expect_down_clean(lab);
}

TEST(Checks, ABadCheckStopsUpWithItsPlaceAndCreatesNothing) {
  if (!root()) TWIN_SKIP_WITHOUT("root", "needs root (network namespaces)");
  fs::path dir = fs::temp_directory_path() / ("twin-chk-" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "lab.yaml") << R"(version: 1
name: bad
nodes:
  r1: {asn: 65001, loopback: 10.255.0.1/32}
  r2: {asn: 65002, loopback: 10.255.0.2/32}
links:
  - endpoints: [r1:swp1, r2:swp1]
checks:
  - reach: {from: r1, to: r3}
  - frr: {node: r1, command: show running-config, match: {}}
)";
  const std::string lab = chk_lab("bad");
  auto up = twin("up " + (dir / "lab.yaml").string() + " --name " + lab);
  EXPECT_EQ(up.code, 2) << up.out << up.err;
  EXPECT_THAT(up.err, HasSubstr("lab.yaml:9:27"));
  EXPECT_THAT(up.err, HasSubstr("lab.yaml:10:30"));
  EXPECT_THAT(up.err, HasSubstr("only `show ... json` commands are allowed"));
  EXPECT_EQ(leftovers(lab), std::vector<std::string>{});
  fs::remove_all(dir);
}
