// Container nodes, for real (root, podman, twin's FRR images from tools/build-images.sh):
// topologies/clos-2x4-mixed.yaml runs FRR 10.3 spines, 8.4.4 leaves and a 7.5.1 leaf in one
// fabric. It must come up and validate, each node must run its image's release (and be driven
// through that release's vtysh), a node must come back from `twin restart`, and `down` must
// leave no container — also after `twin up` was killed. A containerlab FRR image that is not
// present runs as the closest release present with a warning naming both, or is refused under
// --strict-images before anything is built.
//
// Without podman or the images every test skips and says which is missing (fails where
// TWIN_REQUIRE lists containers: .ci/run builds the images).
#include <gtest/gtest.h>
#include <signal.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/integration/cli_support.hpp"
#include "tests/integration/scenario_support.hpp"

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const char* const kImages[] = {"localhost/twin-frr:7.5.1", "localhost/twin-frr:8.4.4",
                               "localhost/twin-frr:10.3"};
const std::string kPodman = "env CONTAINERS_CONF=/var/lib/twin/podman/containers.conf podman";

struct Missing {
  std::string capability, reason;
};
Missing missing_for_containers() {
  if (!twin_it::root()) return {"root", "needs root (rootful podman, network namespaces)"};
  if (!fs::exists("/usr/bin/podman"))
    return {"containers", "no podman (sudo tools/install-deps.sh --containers)"};
  // twin writes its podman settings on first use; `twin images` does so and lists the images.
  auto r = twin_it::twin("images --json");
  auto j = json::parse(r.out, nullptr, false);
  if (r.code != 0 || j.is_discarded())
    return {"containers", "twin images failed: " + r.out + r.err};
  for (const char* want : kImages) {
    bool present = false;
    for (const auto& e : j["images"])
      if (e.value("image", "") == want && e.value("present", false)) present = true;
    if (!present)
      return {"containers", std::string("no image ") + want + " (sudo tools/build-images.sh)"};
  }
  return {};
}

std::string container_names(const std::string& lab) {
  return twin_it::sh(kPodman + " ps --all --filter label=org.twin.lab=" + lab +
                     " --format '{{.Names}}' | sort")
      .out;
}

}  // namespace

// topologies/clos-2x4-mixed.yaml, up once per suite (Base: ::testing::Test or TestWithParam).
template <class Base>
class MixedLab : public Base {
 protected:
  static void SetUpTestSuite() {
    skip_ = missing_for_containers();
    if (!skip_.reason.empty()) return;
    lab_ = twin_it::unique_lab("mixed");
    auto r = twin_it::twin("up " + twin_it::kRepo + "/topologies/clos-2x4-mixed.yaml --name " +
                           lab_ + " --json");
    up_ok_ = r.code == 0;
    up_out_ = r.out + r.err;
  }
  static void TearDownTestSuite() {
    if (lab_.empty()) return;
    auto r = twin_it::twin("down --lab " + lab_);
    EXPECT_EQ(r.code, 0) << r.out << r.err;
    EXPECT_EQ(twin_it::leftovers(lab_), std::vector<std::string>{});
  }
  void SetUp() override {
    if (!skip_.reason.empty()) TWIN_SKIP_WITHOUT(skip_.capability, skip_.reason);
    ASSERT_TRUE(up_ok_) << up_out_;
  }
  static inline Missing skip_;
  static inline std::string lab_, up_out_;
  static inline bool up_ok_ = false;
};
class ContainerLab : public MixedLab<::testing::Test> {};

// The upgrade rehearsal (scenarios/upgrade/): each scenario's verdict and reason, the approved
// ones reverted (the old image booted from the config saved before), the lab proven back at its
// baseline after each.
class ContainerUpgrade : public MixedLab<::testing::TestWithParam<std::string>> {};

TEST_P(ContainerUpgrade, GivesItsExpectedVerdictAndRestoresTheBaseline) {
  twin_it::check_scenario(lab_, GetParam());
  // Every node runs the image the baseline ran.
  auto s = json::parse(twin_it::twin("status --lab " + lab_ + " --json").out);
  for (const auto& n : s["nodes"]) {
    const std::string want = n["name"] == "leaf2" ? "8.4.4" : n["name"] == "leaf4" ? "7.5.1" : "";
    if (!want.empty()) {
      EXPECT_EQ(n["container"].value("frr_version", ""), want) << n.dump();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Upgrade, ContainerUpgrade,
                         ::testing::ValuesIn(twin_it::scenario_files("upgrade")),
                         twin_it::scenario_name);

TEST_F(ContainerLab, ThreeReleasesComeUpAndValidate) {
  EXPECT_EQ(container_names(lab_), "tw-" + lab_ + "-leaf1\ntw-" + lab_ + "-leaf2\ntw-" + lab_ +
                                       "-leaf3\ntw-" + lab_ + "-leaf4\ntw-" + lab_ +
                                       "-spine1\ntw-" + lab_ + "-spine2\n");
  auto r = twin_it::validate(lab_, "node,bgp,routes,mtu,reachability", 60);
  EXPECT_EQ(r.value("verdict", ""), "pass") << r.dump(1).substr(0, 4000);
  // The report names every release and where it runs.
  EXPECT_EQ(r.value("frr_version", ""),
            "10.3 (spine1, spine2), 7.5.1 (leaf4), 8.4.4 (leaf1, leaf2, leaf3)");
  // Every node's daemons and its container are checked (the node family), all running.
  int containers = 0;
  for (const auto& t : r.value("results", json::array()))
    if (t.value("validator", "") == "node" &&
        t.value("message", "").rfind("container tw-" + lab_ + "-", 0) == 0 &&
        t.value("status", "") == "passed")
      ++containers;
  EXPECT_EQ(containers, 6) << r.dump(1).substr(0, 3000);
}

TEST_F(ContainerLab, EachNodeRunsItsImagesReleaseAndStatusSaysWhich) {
  for (const auto& [node, banner] :
       std::vector<std::pair<std::string, std::string>>{{"spine1", "FRRouting 10.3 (spine1)"},
                                                        {"leaf1", "FRRouting 8.4.4 (leaf1)"},
                                                        {"leaf4", "FRRouting 7.5.1 (leaf4)"}}) {
    auto v = twin_it::twin("exec --lab " + lab_ + " " + node + " -- vtysh -c 'show version'");
    EXPECT_EQ(v.code, 0) << v.err;
    EXPECT_EQ(v.out.rfind(banner, 0), 0u) << node << ": " << v.out;
  }
  auto s = twin_it::twin("status --lab " + lab_ + " --json");
  ASSERT_EQ(s.code, 0) << s.out << s.err;
  auto j = json::parse(s.out);
  json spine;
  for (const auto& n : j["nodes"])
    if (n["name"] == "spine1") spine = n;
  EXPECT_EQ(spine.value("backend", ""), "container");
  EXPECT_EQ(spine["container"].value("image", ""), "localhost/twin-frr:10.3");
  EXPECT_EQ(spine["container"].value("frr_version", ""), "10.3");
  EXPECT_EQ(spine["container"]["running"], true);
  // FRR 10.3 runs mgmtd first, twin's record has it like any daemon.
  ASSERT_FALSE(spine["daemons"].empty());
  EXPECT_EQ(spine["daemons"][0].value("name", ""), "mgmtd");
}

// Configuration goes through the node's own release: an address on the 10.3 spine's loopback,
// set through its own vtysh (zebra 10.3 installs it), reaches its kernel, and goes again.
TEST_F(ContainerLab, TheNodesOwnVtyshConfiguresIt) {
  auto add = twin_it::twin("exec --lab " + lab_ +
                           " spine1 -- vtysh -c 'conf t' -c 'interface lo' -c 'ip address "
                           "10.99.0.1/32'");
  ASSERT_EQ(add.code, 0) << add.out << add.err;
  auto has = [&] {
    return twin_it::sh("ip -n tw-" + lab_ + "-spine1 -o addr show dev lo")
               .out.find("10.99.0.1/32") != std::string::npos;
  };
  EXPECT_TRUE(twin_it::eventually(has));
  auto del = twin_it::twin("exec --lab " + lab_ +
                           " spine1 -- vtysh -c 'conf t' -c 'interface lo' -c 'no ip address "
                           "10.99.0.1/32'");
  EXPECT_EQ(del.code, 0) << del.err;
  EXPECT_TRUE(twin_it::eventually([&] { return !has(); }));
}

// The restore ladder's node restart on a container node: its daemons stop and start again
// inside the same container, from its saved configuration, and its sessions come back.
TEST_F(ContainerLab, RestartBringsAContainerNodeBack) {
  auto before = json::parse(twin_it::twin("status --lab " + lab_ + " --json").out);
  auto r = twin_it::twin("restart leaf4 --lab " + lab_);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  auto after = json::parse(twin_it::twin("status --lab " + lab_ + " --json").out);
  auto pids = [](const json& st, const std::string& node) {
    std::vector<int> v;
    for (const auto& n : st["nodes"])
      if (n["name"] == node)
        for (const auto& d : n["daemons"]) v.push_back(d.value("pid", 0));
    return v;
  };
  EXPECT_NE(pids(before, "leaf4"), pids(after, "leaf4"));
  for (const auto& n : after["nodes"])
    if (n["name"] == "leaf4") {
      EXPECT_EQ(n["container"]["running"], true);
      for (const auto& d : n["daemons"]) EXPECT_EQ(d["alive"], true) << d.dump();
    }
  auto v = twin_it::validate(lab_, "bgp", 60);
  EXPECT_EQ(v.value("verdict", ""), "pass") << v.dump(1).substr(0, 3000);
}

// A container killed outside twin (its daemons keep running in its mount namespace): status
// says so, one daemon's restart is refused before anything is stopped, and the node's restart
// makes the container again and brings the node back; `twin exec` works there again.
TEST_F(ContainerLab, RestartMakesAKilledContainerAgain) {
  auto killed = twin_it::sh(kPodman + " kill tw-" + lab_ + "-leaf3");
  ASSERT_EQ(killed.code, 0) << killed.err;
  EXPECT_EQ(twin_it::twin("status --lab " + lab_).code, 1);
  auto one = twin_it::twin("restart leaf3 --daemon bgpd --lab " + lab_);
  EXPECT_EQ(one.code, 2) << one.out << one.err;
  EXPECT_NE(one.err.find("its container tw-" + lab_ + "-leaf3 is not running"), std::string::npos)
      << one.err;
  auto r = twin_it::twin("restart leaf3 --lab " + lab_);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  auto st = json::parse(twin_it::twin("status --lab " + lab_ + " --json").out);
  for (const auto& n : st["nodes"])
    if (n["name"] == "leaf3") {
      EXPECT_EQ(n["container"]["running"], true);
      for (const auto& d : n["daemons"]) EXPECT_EQ(d["alive"], true) << d.dump();
    }
  EXPECT_EQ(container_names(lab_).find("tw-" + lab_ + "-leaf3") != std::string::npos, true);
  auto e = twin_it::twin("exec --lab " + lab_ + " leaf3 -- ps -e");
  EXPECT_EQ(e.code, 0) << e.err;
  EXPECT_NE(e.out.find("bgpd"), std::string::npos);  // the machine's PID namespace: its daemons
  auto v = twin_it::validate(lab_, "bgp", 60);
  EXPECT_EQ(v.value("verdict", ""), "pass") << v.dump(1).substr(0, 3000);
}

namespace {

// A containerlab lab of two FRR routers naming FRR images by release, in a folder of its own.
struct ClabDir {
  fs::path dir;
  explicit ClabDir(const std::string& spine_image) {
    dir = fs::temp_directory_path() / ("twin-clab-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    std::ofstream(dir / "r1.conf") << "frr defaults datacenter\nhostname r1\n"
                                      "interface eth1\n ip address 10.1.0.1/31\n"
                                      "router bgp 65001\n no bgp ebgp-requires-policy\n"
                                      " neighbor 10.1.0.0 remote-as 65000\n";
    std::ofstream(dir / "r0.conf") << "frr defaults datacenter\nhostname r0\n"
                                      "interface eth1\n ip address 10.1.0.0/31\n"
                                      "router bgp 65000\n no bgp ebgp-requires-policy\n"
                                      " neighbor 10.1.0.1 remote-as 65001\n";
    std::ofstream(dir / "lab.clab.yml")
        << "name: clabimg\ntopology:\n  nodes:\n"
        << "    r0:\n      kind: linux\n      image: " << spine_image
        << "\n      binds: [r0.conf:/etc/frr/frr.conf]\n"
        << "    r1:\n      kind: linux\n      image: quay.io/frrouting/frr:8.4.1\n"
        << "      binds: [r1.conf:/etc/frr/frr.conf]\n"
        << "  links:\n    - endpoints: [r0:eth1, r1:eth1]\n";
  }
  ~ClabDir() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  std::string file() const { return (dir / "lab.clab.yml").string(); }
};

}  // namespace

TEST(ContainerImages, AContainerlabImageNotPresentRunsTheClosestReleaseAndSaysSo) {
  if (auto m = missing_for_containers(); !m.reason.empty())
    TWIN_SKIP_WITHOUT(m.capability, m.reason);
  ClabDir c("quay.io/frrouting/frr:10.5.1");
  const std::string lab = twin_it::unique_lab("clab");
  // --strict-images: refused before anything is built, naming the image and the closest.
  auto strict = twin_it::twin("up " + c.file() + " --name " + lab + " --strict-images");
  EXPECT_EQ(strict.code, 2) << strict.out << strict.err;
  EXPECT_NE(strict.err.find("node r0: image quay.io/frrouting/frr:10.5.1 (FRR 10.5.1) is not "
                            "present and --strict-images refuses a substitute (the closest "
                            "present: localhost/twin-frr:10.3 (FRR 10.3))"),
            std::string::npos)
      << strict.err;
  EXPECT_EQ(twin_it::leftovers(lab), std::vector<std::string>{});
  // Without it: 10.3 for 10.5.1 and this machine's 8.4.4 for 8.4.1, each said.
  auto up = twin_it::twin("up " + c.file() + " --name " + lab);
  ASSERT_EQ(up.code, 0) << up.out << up.err;
  EXPECT_NE(up.err.find("warning: r0: image quay.io/frrouting/frr:10.5.1 (FRR 10.5.1) is not "
                        "present; it runs localhost/twin-frr:10.3 (FRR 10.3), the closest "
                        "release present"),
            std::string::npos)
      << up.err;
  EXPECT_NE(up.err.find("warning: r1: image quay.io/frrouting/frr:8.4.1 (FRR 8.4.1) is not "
                        "present; it runs this machine's FRR 8.4.4 in a namespace"),
            std::string::npos)
      << up.err;
  auto v = twin_it::twin("exec --lab " + lab + " r0 -- vtysh -c 'show version'");
  EXPECT_EQ(v.out.rfind("FRRouting 10.3 (r0)", 0), 0u) << v.out << v.err;
  auto report = twin_it::validate(lab, "bgp", 30);
  EXPECT_EQ(report.value("verdict", ""), "pass") << report.dump(1).substr(0, 3000);
  auto down = twin_it::twin("down --lab " + lab);
  EXPECT_EQ(down.code, 0) << down.err;
  EXPECT_EQ(twin_it::leftovers(lab), std::vector<std::string>{});
}

TEST(ContainerImages, AReleaseWithNothingCloseIsRefusedBeforeAnythingIsBuilt) {
  if (auto m = missing_for_containers(); !m.reason.empty())
    TWIN_SKIP_WITHOUT(m.capability, m.reason);
  ClabDir c("quay.io/frrouting/frr:9.1.0");
  const std::string lab = twin_it::unique_lab("clab9");
  auto up = twin_it::twin("up " + c.file() + " --name " + lab);
  EXPECT_EQ(up.code, 2) << up.out << up.err;
  EXPECT_NE(up.err.find("node r0: image quay.io/frrouting/frr:9.1.0 (FRR 9.1.0) is not present "
                        "on this machine, nor any release of FRR 9.x"),
            std::string::npos)
      << up.err;
  EXPECT_EQ(twin_it::leftovers(lab), std::vector<std::string>{});
}

// `twin up` killed once its containers exist: `down` still finds and removes them (recorded
// before created), and nothing of another lab is touched.
namespace {

// `twin up` of the mixed lab started in the background (its output in `log`): its PID once
// its first container exists, 0 when none came within eventually()'s time.
int up_until_a_container(const std::string& lab, const std::string& log) {
  auto pid =
      twin_it::sh("setsid " + twin_it::kTwin + " up " + twin_it::kRepo +
                  "/topologies/clos-2x4-mixed.yaml --name " + lab + " >" + log + " 2>&1 & echo $!");
  const int up_pid = std::atoi(pid.out.c_str());
  if (up_pid <= 0) return 0;
  const bool seen = twin_it::eventually(
      [&] { return container_names(lab).find("tw-" + lab + "-") != std::string::npos; });
  return seen ? up_pid : -up_pid;
}

}  // namespace

TEST(ContainerImages, DownRemovesTheContainersOfAKilledUp) {
  if (auto m = missing_for_containers(); !m.reason.empty())
    TWIN_SKIP_WITHOUT(m.capability, m.reason);
  const std::string lab = twin_it::unique_lab("killed");
  const std::string log = "/tmp/twin-killed-" + lab + ".log";
  const int up = up_until_a_container(lab, log);
  const int up_pid = std::abs(up);
  ASSERT_GT(up_pid, 0);
  const bool seen = up > 0;
  ::kill(up_pid, SIGKILL);
  ASSERT_TRUE(seen) << twin_it::sh("cat " + log).out;
  auto down = twin_it::twin("down --lab " + lab);
  EXPECT_EQ(down.code, 0) << down.out << down.err;
  EXPECT_EQ(container_names(lab), "");
  EXPECT_EQ(twin_it::leftovers(lab), std::vector<std::string>{});
  fs::remove(log);
}

// `twin up` interrupted (Ctrl-C) once its containers exist: it tears the lab down itself, the
// containers included — its podman commands run to their end although the interrupt flag is set
// (they did not: the lab was left `down-incomplete` with every container).
TEST(ContainerImages, AnInterruptedUpLeavesNoContainer) {
  if (auto m = missing_for_containers(); !m.reason.empty())
    TWIN_SKIP_WITHOUT(m.capability, m.reason);
  const std::string lab = twin_it::unique_lab("intr");
  const std::string log = "/tmp/twin-intr-" + lab + ".log";
  const int up = up_until_a_container(lab, log);
  const int up_pid = std::abs(up);
  ASSERT_GT(up_pid, 0);
  const bool seen = up > 0;
  ::kill(up_pid, SIGINT);
  ASSERT_TRUE(seen) << twin_it::sh("cat " + log).out;
  ASSERT_TRUE(twin_it::eventually([&] { return ::kill(up_pid, 0) != 0; }));
  const std::string said = twin_it::sh("cat " + log).out;
  EXPECT_NE(said.find("interrupt"), std::string::npos) << said;
  EXPECT_EQ(said.find("teardown left"), std::string::npos) << said;
  EXPECT_EQ(container_names(lab), "");
  EXPECT_FALSE(fs::exists("/run/twin/" + lab)) << said;
  EXPECT_EQ(twin_it::leftovers(lab), std::vector<std::string>{});
  if (fs::exists("/run/twin/" + lab)) (void)twin_it::twin("down --lab " + lab);
  fs::remove(log);
}
