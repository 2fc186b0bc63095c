// A mixed lab, for real (root, libvirt, QEMU): two FRR leaves in namespaces, the test-vm image
// as a server VM behind leaf1 and a namespace server behind leaf2 (topologies/mixed-vm.yaml).
// Validation must pass across the VM, `twin console` and `twin exec` must reach into it, an MTU
// mismatch on its link must be caught, and `down` must leave no domain, tap, namespace or
// process.
//
// The suite starts libvirtd and virtlogd without systemd when none answers
// (tools/libvirt-daemons.sh) and stops what it started. Without libvirt, QEMU or the test-vm
// image every test skips and says which is missing (fails where TWIN_REQUIRE lists vm).
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "tests/integration/cli_support.hpp"
#include "twin/runtime/libvirt.hpp"
#include "twin/state/state.hpp"

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::string kImageDir = "/var/lib/twin/images/test-vm";

// What VM tests miss here: the capability (cli_support.hpp) and why, or an empty reason.
struct Missing {
  std::string capability, reason;
};
Missing missing_for_vms() {
  if (!twin_it::root()) return {"root", "needs root (network namespaces, taps, qemu:///system)"};
  for (const char* b : {"/usr/sbin/libvirtd", "/usr/sbin/virtlogd", "/usr/bin/qemu-system-x86_64"})
    if (!fs::exists(b))
      return {"vm", std::string("no ") + b + " (VM support: sudo tools/install-deps.sh --vm)"};
  if (!fs::exists(kImageDir + "/vmlinuz") || !fs::exists(kImageDir + "/initrd.img"))
    return {"vm", "no test-vm image in " + kImageDir + " (sudo tools/build-test-vm-image)"};
  return {};
}

}  // namespace

class MixedVmLab : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    skip_ = missing_for_vms();
    if (!skip_.reason.empty()) return;
    if (!twin::runtime::Hypervisor::open("qemu:///system")) {
      auto r = twin_it::sh(twin_it::kRepo + "/tools/libvirt-daemons.sh start");
      started_daemons_ = r.code == 0;
      if (!started_daemons_) {
        skip_ = {"vm", "libvirtd does not start: " + r.out + r.err};
        return;
      }
    }
    lab_ = twin_it::unique_lab("vm");
    auto r = twin_it::twin("up " + twin_it::kRepo + "/topologies/mixed-vm.yaml --name " + lab_);
    up_ok_ = r.code == 0;
    up_out_ = r.out + r.err;
    if (!up_ok_) return;
    auto st = twin::state::load_state(lab_);
    if (st) {
      for (const auto& res : st->resources) {
        if (res.kind == "tap") taps_.push_back(res.name);
        if (res.kind == "domain") domains_.push_back(res.name);
      }
    }
  }
  static void TearDownTestSuite() {
    if (!lab_.empty()) {
      auto r = twin_it::twin("down --lab " + lab_);
      EXPECT_EQ(r.code, 0) << r.out << r.err;
      EXPECT_EQ(twin_it::leftovers(lab_), std::vector<std::string>{});
      // Nothing of the VM either: no domain, no tap in any namespace, no QEMU.
      auto hv = twin::runtime::Hypervisor::open("qemu:///system");
      EXPECT_TRUE(hv);
      if (hv)
        for (const auto& d : domains_) {
          auto running = (*hv)->running(d);
          EXPECT_TRUE(running && !*running) << "domain " << d << " survived down";
        }
      EXPECT_EQ(domains_.size(), 1u);
      EXPECT_EQ(taps_.size(), 2u);  // its link's and its management NIC's
      for (const auto& t : taps_) {
        EXPECT_FALSE(fs::exists("/sys/class/net/" + t)) << "tap " << t << " survived down";
        auto any = twin_it::sh("ip -all netns exec ip -o link show " + t + " 2>/dev/null");
        EXPECT_EQ(any.out.find(t + ":"), std::string::npos) << any.out;
      }
      // Anchored: pgrep's own command line (and its shell's) holds the pattern too.
      auto qemu =
          twin_it::sh("pgrep -f '^/usr/bin/qemu-system-x86_64 .*guest=tw-" + lab_ + "-' || true");
      EXPECT_EQ(qemu.out, "") << "QEMU of the lab still runs";
    }
    if (started_daemons_) twin_it::sh(twin_it::kRepo + "/tools/libvirt-daemons.sh stop");
  }
  void SetUp() override {
    if (!skip_.reason.empty()) TWIN_SKIP_WITHOUT(skip_.capability, skip_.reason);
    ASSERT_TRUE(up_ok_) << up_out_;
  }
  static inline Missing skip_;
  static inline std::string lab_, up_out_;
  static inline bool up_ok_ = false, started_daemons_ = false;
  static inline std::vector<std::string> taps_, domains_;
};

TEST_F(MixedVmLab, ValidationPassesAcrossTheVm) {
  auto r = twin_it::validate(lab_, "bgp,routes,mtu,reachability", 30);
  EXPECT_EQ(r.value("verdict", ""), "pass") << r.dump(1).substr(0, 4000);
  // The VM is probed from inside: its link MTU read in the guest, its pings sent by the guest.
  std::set<std::string> vm_tests;
  for (const auto& t : r.value("results", json::array()))
    if (t.value("node", "") == "vm1" && t.value("status", "") == "passed")
      vm_tests.insert(t.value("validator", "") + "/" + t.value("test_name", ""));
  EXPECT_EQ(vm_tests, (std::set<std::string>{"mtu/link-df", "reachability/host-mesh"}));
  std::set<std::string> to_vm;
  for (const auto& t : r.value("results", json::array()))
    if (t.value("node", "") == "server2" && t.value("test_name", "") == "host-mesh" &&
        t.value("status", "") == "passed")
      to_vm.insert(t.value("peer", ""));
  EXPECT_EQ(to_vm, (std::set<std::string>{"vm1 10.0.1.10", "vm1 2001:db8:1::10"}));
}

TEST_F(MixedVmLab, ConsoleReachesTheVmShell) {
  auto r = twin_it::sh("printf 'echo twin-console-$((6*7))\\n' | " + twin_it::kTwin +
                       " console --lab " + lab_ + " vm1 --quiet 1");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("twin-console-42"), std::string::npos) << r.out;
  auto log = twin_it::twin("console --lab " + lab_ + " vm1 --log");
  EXPECT_NE(log.out.find("TWIN-READY"), std::string::npos);
  auto ns = twin_it::twin("console --lab " + lab_ + " leaf1");
  EXPECT_EQ(ns.code, 2);
  EXPECT_NE(ns.err.find("is a network namespace, not a VM"), std::string::npos) << ns.err;
}

TEST_F(MixedVmLab, ExecRunsInsideTheGuest) {
  auto r = twin_it::twin("exec --lab " + lab_ + " vm1 -- cat /proc/sys/kernel/hostname");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "vm1\n");
  auto fails = twin_it::twin("exec --lab " + lab_ + " vm1 -- sh -c 'exit 7'");
  EXPECT_EQ(fails.code, 7);
}

TEST_F(MixedVmLab, MtuMismatchOnTheVmLinkIsCaught) {
  ASSERT_EQ(twin_it::twin("exec --lab " + lab_ + " vm1 -- ip link set eth1 mtu 1400").code, 0);
  auto r = twin_it::validate(lab_, "mtu", 0);
  twin_it::twin("exec --lab " + lab_ + " vm1 -- ip link set eth1 mtu 1500");
  EXPECT_EQ(r.value("verdict", ""), "fail");
  auto f = twin_it::failures(r, "mtu", 0);
  ASSERT_EQ(f.size(), 1u) << r.dump(1).substr(0, 3000);
  EXPECT_EQ(f[0].value("observed", ""), "leaf1:swp3=1500 vm1:eth1=1400");
  // The guest's own DF probe meets its smaller MTU.
  auto df = twin_it::failures(r, "mtu", 1);
  ASSERT_EQ(df.size(), 1u);
  EXPECT_EQ(df[0].value("node", ""), "vm1");
  EXPECT_NE(df[0].value("observed", "").find("too-big"), std::string::npos) << df[0].dump();
  auto again = twin_it::validate(lab_, "mtu", 10);
  EXPECT_EQ(again.value("verdict", ""), "pass") << again.dump(1).substr(0, 2000);
}

// The gate treats a VM's port like any other: the change runs inside the guest, the mismatch
// rejects it, and the rollback puts the guest's MTU back.
TEST_F(MixedVmLab, ChangeOnTheVmPortIsRejectedAndRolledBackInTheGuest) {
  auto r = twin_it::twin("apply --lab " + lab_ + " --json " + twin_it::kRepo +
                         "/scenarios/mixed-vm/changes/vm-jumbo-one-end.yaml");
  json j = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out << r.err;
  EXPECT_EQ(j.value("verdict", ""), "reject") << r.err;
  EXPECT_EQ(j.value("rollback_ok", false), true) << r.err;
  auto mtu = twin_it::twin("exec --lab " + lab_ + " vm1 -- cat /sys/class/net/eth1/mtu");
  EXPECT_EQ(mtu.out, "1500\n");
}

TEST_F(MixedVmLab, StatusShowsTheDomainAndTheHostKeepsNoLabAddress) {
  auto r = twin_it::twin("status --lab " + lab_ + " --json");
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = json::parse(r.out);
  json vm;
  for (const auto& n : j["nodes"])
    if (n["name"] == "vm1") vm = n;
  EXPECT_EQ(vm.value("backend", ""), "libvirt");
  EXPECT_EQ(vm["vm"].value("domain", ""), "tw-" + lab_ + "-vm1");
  EXPECT_EQ(vm["vm"]["running"], true);
  // The taps sit in the VM's namespace (its management NIC's in the management namespace),
  // silent: no IPv6 address, nothing in the root namespace.
  for (const auto& t : taps_) {
    EXPECT_FALSE(fs::exists("/sys/class/net/" + t)) << "tap " << t << " left in the root netns";
    auto a = twin_it::sh("ip -n tw-" + lab_ + "-vm1 -j addr show dev " + t + " || ip -n tw-" +
                         lab_ + ".mgmt -j addr show dev " + t);
    EXPECT_EQ(a.code, 0) << a.err;
    EXPECT_EQ(json::parse(a.out).at(0).value("addr_info", json::array()).size(), 0u) << a.out;
  }
}

// The VM's management NIC is a port of the lab's management bridge; the guest asked twin's
// DHCP server for its address before it said it was ready. This machine reaches it there; the
// guest gained no route but the subnet's; the inventory names it but the lab's login does not
// reach it.
TEST_F(MixedVmLab, TheVmTakesItsManagementAddressByDhcp) {
  auto r = twin_it::twin("status --lab " + lab_ + " --json");
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = json::parse(r.out);
  std::string addr, subnet = j["mgmt"].value("subnet", "");
  for (const auto& n : j["nodes"])
    if (n["name"] == "vm1") addr = n.value("mgmt_address", "");
  ASSERT_FALSE(addr.empty()) << r.out;
  const std::string ip = addr.substr(0, addr.find('/'));
  auto in_guest = twin_it::twin("exec --lab " + lab_ + " vm1 -- ip -4 -o addr show dev mgmt0");
  EXPECT_NE(in_guest.out.find("inet " + addr), std::string::npos) << in_guest.out << in_guest.err;
  auto routes = twin_it::twin("exec --lab " + lab_ + " vm1 -- ip -4 route show dev mgmt0");
  // One route through mgmt0, the subnet's (busybox ip's format: "PREFIX scope link src IP").
  EXPECT_EQ(routes.out.rfind(subnet + " ", 0), 0u) << routes.out;
  EXPECT_EQ(std::count(routes.out.begin(), routes.out.end(), '\n'), 1) << routes.out;
  auto ping = twin_it::sh("ping -c 2 -i 0.2 -W 2 " + ip);
  EXPECT_EQ(ping.code, 0) << ping.out << ping.err;
  // The server's address stays off the management network: nothing answers it from here.
  auto fabric = twin_it::sh("ping -c 1 -W 1 10.0.1.10");
  EXPECT_NE(fabric.code, 0) << fabric.out;
  auto inv = twin_it::twin("inventory " + lab_ + " -f json");
  ASSERT_EQ(inv.code, 0) << inv.err;
  json vm1, nodes = json::parse(inv.out)["nodes"];
  for (const auto& n : nodes)
    if (n["name"] == "vm1") vm1 = n;
  EXPECT_EQ(vm1.value("address", ""), ip);
  EXPECT_EQ(vm1.value("login", ""), "image");
  auto lease = twin_it::sh("cat /run/twin/" + lab_ + "/mgmt-dhcp.log");
  EXPECT_NE(lease.out.find("DHCPACK(br0) " + ip), std::string::npos) << lease.out;
}

// The DHCP server is the VM's dependency: the node family reports it dead, the lease stays
// (infinite), and `twin restart VM` starts it again.
TEST_F(MixedVmLab, ADeadDhcpServerIsReportedAndRestartBringsItBack) {
  auto st = json::parse(twin_it::twin("status --lab " + lab_ + " --json").out, nullptr, false);
  ASSERT_FALSE(st.is_discarded());
  const int pid = st["mgmt"]["dhcp"].value("pid", 0);
  ASSERT_GT(pid, 0) << st["mgmt"].dump();
  EXPECT_EQ(st["mgmt"]["dhcp"].value("running", false), true);
  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  for (int i = 0; i < 100 && ::kill(pid, 0) == 0; ++i) ::usleep(20000);
  auto v = twin_it::twin("validate --lab " + lab_ + " --only node --json --converge-timeout 1");
  EXPECT_NE(v.code, 0);
  EXPECT_NE(v.out.find("dnsmasq"), std::string::npos) << v.out.substr(0, 2000);
  auto text = twin_it::twin("status --lab " + lab_);
  EXPECT_NE(text.out.find("NOT RUNNING"), std::string::npos) << text.out;
  auto r = twin_it::twin("restart --lab " + lab_ + " vm1");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("dnsmasq"), std::string::npos) << r.out;
  EXPECT_EQ(twin_it::twin("validate --lab " + lab_ + " --only node").code, 0);
}

// Bad input loses nothing: a VM image that is missing fails before anything is created.
TEST(VmInput, MissingImageFileIsNamedAndNothingIsCreated) {
  if (!twin_it::root()) TWIN_SKIP_WITHOUT("root", "needs root (twin up)");
  auto dir = fs::temp_directory_path() / ("twin-vm-missing-" + std::to_string(::getpid()));
  fs::create_directories(dir / "images");
  // (Under the lab's folder: a profile the lab brings may name VM files only where the lab's
  // files may lie.)
  std::ofstream(dir / "images" / "lost-vm.yaml")
      << "kind: host\nbackend: libvirt\nvm: {kernel: lost/vmlinuz, initrd: lost/initrd.img}\n";
  std::ofstream(dir / "t.yaml") << "version: 1\nname: x\nnodes:\n"
                                   "  r1: {asn: 65001, loopback: 10.255.0.1/32}\n"
                                   "  h1: {kind: host, image: lost-vm}\n"
                                   "links:\n  - endpoints: [r1:swp1, h1:eth1]\n";
  std::string lab = twin_it::unique_lab("vmbad");
  auto r = twin_it::twin("up " + (dir / "t.yaml").string() + " --name " + lab);
  EXPECT_NE(r.code, 0);
  EXPECT_NE(
      r.err.find("node h1: image lost-vm needs its kernel at " +
                 fs::weakly_canonical(dir).string() + "/images/lost/vmlinuz, which does not exist"),
      std::string::npos)
      << r.err;
  EXPECT_EQ(twin_it::leftovers(lab), std::vector<std::string>{});
  fs::remove_all(dir);
}
