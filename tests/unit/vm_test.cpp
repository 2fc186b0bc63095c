// VM nodes (backend libvirt): image profiles, the plan of a VM, its domain XML (golden files in
// tests/data/vm/), the libvirt lifecycle against libvirt's test:///default driver (no daemon),
// the tap wiring scripts, the guest agent protocol against a fake guest, and how guest pings
// are read.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>

#include "tests/unit/support.hpp"
#include "twin/drivers/libvirt.hpp"
#include "twin/drivers/libvirt_vm.hpp"
#include "twin/drivers/registry.hpp"
#include "twin/plan/plan.hpp"
#include "twin/runtime/agent.hpp"
#include "twin/runtime/libvirt.hpp"
#include "twin/topology/loader.hpp"
#include "twin/validate/system_probe.hpp"
#include "twin/wiring/wiring.hpp"

namespace fs = std::filesystem;
using twin::Diagnostics;
using twin_test::dump;
using twin_test::read;

namespace {

const std::string kRepo = TWIN_DATA_DIR;
const std::string kGolden = std::string(TWIN_TEST_DATA) + "/vm";

// The repo's own profiles (images/test-vm.yaml, cumulus-vx.yaml, sonic-vs.yaml) in a lab.
const std::string kMixed = R"(version: 1
name: vmlab
defaults: {kind: frr, image: frr-8.4}
nodes:
  leaf1: {asn: 65101, loopback: 10.255.1.1/32}
  vx1: {image: cumulus-vx, asn: 65102, loopback: 10.255.1.2/32}
  sonic1: {image: sonic-vs, asn: 65103, loopback: 10.255.1.3/32}
  vm1: {kind: host, image: test-vm}
links:
  - endpoints: [leaf1:swp1, vx1:swp2]
    mtu: 9000
  - endpoints: [leaf1:swp2, sonic1:Ethernet4]
  - endpoints: [vx1:swp1, sonic1:Ethernet0]
  - endpoints: [leaf1:swp3, vm1:eth1]
    addresses:
      leaf1: [10.0.1.1/24, "2001:db8:1::1/64"]
      vm1: [10.0.1.10/24, "2001:db8:1::10/64"]
)";

class VmLab : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "twin-vm-XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    ASSERT_NE(::mkdtemp(buf.data()), nullptr);
    dir_ = buf.data();
    fs::create_directories(dir_ / "images");
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  void write(const std::string& name, const std::string& text) const {
    std::ofstream(dir_ / name) << text;
  }
  std::optional<twin::topology::Topology> load(const std::string& text, Diagnostics& d) const {
    return twin::topology::load_topology_text(text, "t.yaml", dir_.string(), d);
  }
  // A one-node lab booting image `img` (a profile written under images/).
  std::string host_lab(const std::string& img) const {
    return "version: 1\nname: t\nnodes:\n  h1: {kind: host, image: " + img +
           "}\n  r1: {asn: 65001, loopback: 10.255.0.1/32}\nlinks:\n"
           "  - endpoints: [r1:swp1, h1:eth1]\n";
  }
  // The message of the first diagnostic whose field is `field`, or "".
  static std::string message_for(const Diagnostics& d, const std::string& field) {
    for (const auto& i : d.items())
      if (i.field == field) return i.message;
    return "";
  }
  // kMixed with `from` replaced by `to` must fail to load: the message for `field`.
  std::string rejection(const std::string& from, const std::string& to,
                        const std::string& field) const {
    std::string text = kMixed;
    text.replace(text.find(from), from.size(), to);
    Diagnostics d;
    EXPECT_FALSE(load(text, d) && d.empty()) << text;
    std::string m = message_for(d, field);
    if (m.empty()) ADD_FAILURE() << "no diagnostic for " << field << ":\n" << dump(d);
    return m;
  }
  twin::plan::Plan mixed_plan() const {
    Diagnostics d;
    auto t = load(kMixed, d);
    EXPECT_TRUE(t && d.empty()) << dump(d);
    return twin::plan::make_plan(*t);
  }
  fs::path dir_;
};

// ---- profiles ------------------------------------------------------------------------------

TEST_F(VmLab, RepoProfilesLoadWithTheirVmSections) {
  Diagnostics d;
  auto t = load(kMixed, d);
  ASSERT_TRUE(t && d.empty()) << dump(d);
  const auto* vx = t->find_node("vx1");
  ASSERT_NE(vx, nullptr);
  EXPECT_STREQ(to_string(vx->profile.backend), "libvirt");
  EXPECT_EQ(vx->profile.vm.disk,
            "/var/lib/twin/images/cumulus-vx/cumulus-linux-vx-amd64-qemu.qcow2");
  EXPECT_TRUE(vx->profile.vm.management_nic);
  EXPECT_EQ(vx->profile.vm.memory_mib, 2048);
  const auto* vm = t->find_node("vm1");
  EXPECT_EQ(vm->profile.vm.kernel, "/var/lib/twin/images/test-vm/vmlinuz");
  EXPECT_EQ(vm->profile.vm.agent, "twin");
  EXPECT_EQ(vm->profile.vm.ready_pattern, "TWIN-READY");
}

TEST_F(VmLab, ProfileMistakesAreNamed) {
  struct Case {
    std::string profile, field, message;
  };
  const std::vector<Case> cases = {
      {"kind: host\nbackend: libvirt\n", "vm", "missing; backend libvirt needs a vm section"},
      {"kind: host\nvm: {disk: a.qcow2}\n", "vm", "'vm' applies to backend libvirt only"},
      {"kind: host\nbackend: libvirt\nvm: {kernel: k}\n", "vm", "kernel and initrd go together"},
      {"kind: host\nbackend: libvirt\nvm: {vcpus: 2}\n", "vm", "nothing to boot"},
      {"kind: host\nbackend: libvirt\nvm: {disk: d, cmdline: quiet}\n", "vm.cmdline",
       "a kernel command line needs a kernel"},
      {"kind: host\nbackend: libvirt\nvm: {disk: d, accel: fast}\n", "vm.accel",
       "unknown value 'fast'"},
      {"kind: host\nbackend: libvirt\nvm: {disk: d, memory: 8}\n", "vm.memory",
       "expected 32-1048576 MiB"},
      {"kind: host\nbackend: libvirt\nvm: {disk: d, interface-pattern: swp}\n",
       "vm.interface-pattern", "expected a pattern with {n}, e.g. swp{n}"},
      {"kind: host\nbackend: docker\n", "backend", "unknown backend 'docker'"},
      // agent ssh: the management NIC, a login, a password or key, a plain vtysh command.
      {"kind: frr\nbackend: libvirt\nvm: {disk: d, agent: ssh, ssh-user: c, ssh-password: p}\n",
       "vm.agent", "agent ssh reads the guest on its management NIC"},
      {"kind: frr\nbackend: libvirt\nvm: {disk: d, management-nic: true, agent: ssh, "
       "ssh-password: p}\n",
       "vm.agent", "agent ssh needs ssh-user"},
      {"kind: frr\nbackend: libvirt\nvm: {disk: d, management-nic: true, agent: ssh, "
       "ssh-user: c}\n",
       "vm.agent", "agent ssh needs ssh-password or ssh-key"},
      {"kind: frr\nbackend: libvirt\nvm: {disk: d, management-nic: true, agent: ssh, "
       "ssh-user: c, ssh-password: p, vtysh: \"vtysh; rm -rf /\"}\n",
       "vm.vtysh", "vtysh must be a plain command: words of letters, digits, _ . / -"},
      {"kind: frr\nbackend: libvirt\nvm: {disk: d, management-nic: true, agent: ssh, "
       "ssh-user: c, ssh-password: p, vtysh: \"vtysh #\"}\n",
       "vm.vtysh", "vtysh must be a plain command: words of letters, digits, _ . / -"},
      {"kind: frr\nbackend: libvirt\nvm: {disk: d, management-nic: false, agent: ssh, "
       "ssh-user: c, ssh-password: p}\n",
       "vm.management-nic", "agent ssh reads the guest on its management NIC"},
      {"kind: frr\nbackend: libvirt\nvm: {disk: d, management-nic: true, agent: ssh, "
       "ssh-user: c, ssh-password: \"\"}\n",
       "vm.ssh-password", "empty ssh-password"},
      {"kind: frr\nbackend: libvirt\nvm: {disk: d, management-nic: true, agent: ssh, "
       "ssh-user: c, ssh-password: p, ssh-key: k}\n",
       "vm.ssh-key", "both ssh-password and ssh-key given"},
      // An unknown agent is the one error: no "is for agent: ssh" after it.
      {"kind: frr\nbackend: libvirt\nvm: {disk: d, agent: telnet, ssh-user: c}\n", "vm.ssh-user",
       ""},
      {"kind: frr\nbackend: libvirt\nvm: {disk: d, ssh-user: c}\n", "vm.ssh-user",
       "ssh-user is for agent: ssh"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(cases[i].profile);
    std::string img = "bad" + std::to_string(i);
    write("images/" + img + ".yaml", cases[i].profile);
    Diagnostics d;
    EXPECT_FALSE(load(host_lab(img), d) && d.empty());
    EXPECT_EQ(message_for(d, cases[i].field), cases[i].message) << dump(d);
  }
}

TEST_F(VmLab, PortsOutsideTheImagesNamingAreRejected) {
  EXPECT_EQ(rejection("sonic1:Ethernet4", "sonic1:Ethernet6", "links[1].endpoints[1]"),
            "interface 'Ethernet6' is not a port name of image sonic-vs (a VM whose ports are "
            "Ethernet0, Ethernet4, Ethernet8, ...)");
  // One spelling per port.
  EXPECT_EQ(rejection("vx1:swp2", "vx1:swp02", "links[0].endpoints[1]"),
            "interface 'swp02' is not a port name of image cumulus-vx (a VM whose ports are "
            "swp1, swp2, swp3, ...)");
}

TEST_F(VmLab, PortsOfAVmRunWithoutGaps) {
  // The guest numbers ports by NIC order and twin gives one NIC per linked port.
  EXPECT_EQ(rejection("sonic1:Ethernet4", "sonic1:Ethernet8", "nodes.sonic1"),
            "VM sonic1 has links on ports after Ethernet4 but none on Ethernet4");
}

TEST_F(VmLab, KernelBootVmPortNamesFitTheCommandLine) {
  EXPECT_EQ(rejection("vm1:eth1", "vm1:e+x", "links[3].endpoints[1]"),
            "interface 'e+x' of VM vm1 must be letters, digits, '_', '-' or '.'");
}

TEST(VmDataNic, FollowsPatternFirstAndStep) {
  twin::topology::VmProfile vx;
  vx.interface_pattern = "swp{n}";
  vx.interface_first = 1;
  EXPECT_EQ(twin::topology::vm_data_nic(vx, "swp1"), 0);
  EXPECT_EQ(twin::topology::vm_data_nic(vx, "swp12"), 11);
  EXPECT_EQ(twin::topology::vm_data_nic(vx, "swp0"), -1);
  EXPECT_EQ(twin::topology::vm_data_nic(vx, "eth1"), -1);
  EXPECT_EQ(twin::topology::vm_data_nic(vx, "swp"), -1);
  EXPECT_EQ(twin::topology::vm_data_nic(vx, "swp1s0"), -1);
  twin::topology::VmProfile sonic;
  sonic.interface_pattern = "Ethernet{n}";
  sonic.interface_first = 0;
  sonic.interface_step = 4;
  EXPECT_EQ(twin::topology::vm_data_nic(sonic, "Ethernet0"), 0);
  EXPECT_EQ(twin::topology::vm_data_nic(sonic, "Ethernet8"), 2);
  EXPECT_EQ(twin::topology::vm_data_nic(sonic, "Ethernet6"), -1);
}

// ---- plan ------------------------------------------------------------------------------------

// Every (backend, kind) the model can spell has a driver: a value added to an enum without one
// fails here, not at the first `up`. Backend container runs kind frr only (the image loader
// refuses a container host or bridge: ContainerProfile.ASectionInTheWrongPlaceOrMissing...).
TEST(DriverRegistry, EveryBackendAndKindHasADriver) {
  for (const auto& [backend, b] : twin::topology::kBackendNames)
    for (const auto& [kind, k] : twin::topology::kNodeKindNames) {
      if (backend == twin::topology::Backend::kContainer && kind != twin::topology::NodeKind::kFrr)
        continue;
      EXPECT_NE(twin::drivers::find_driver(backend, kind), nullptr) << b << "/" << k;
    }
}

TEST_F(VmLab, PlanGivesEachVmItsDomainTapsAndNics) {
  auto p = mixed_plan();
  const auto* vx = p.find("vx1");
  ASSERT_NE(vx, nullptr);
  EXPECT_STREQ(twin::drivers::driver_for(*vx).name(), "libvirt");
  EXPECT_STREQ(twin::drivers::driver_for(*p.find("leaf1")).name(), "netns-frr");
  EXPECT_EQ(vx->vm.domain, "tw-vmlab-vx1");
  EXPECT_EQ(vx->vm.overlay, "/run/twin/vmlab/vx1/disk.qcow2");
  EXPECT_EQ(vx->vm.console_log, "/run/twin/vmlab/vx1/console.log");
  EXPECT_TRUE(vx->daemons.empty()) << "FRR runs inside the NOS, not from twin";
  // Management NIC first, then swpN at NIC N.
  EXPECT_FALSE(vx->vm.mgmt_tap.empty());
  std::map<std::string, int> nic;
  for (const auto& i : vx->interfaces) nic[i.name] = i.nic;
  EXPECT_EQ(nic, (std::map<std::string, int>{{"swp1", 1}, {"swp2", 2}}));
  const auto* sonic = p.find("sonic1");
  nic.clear();
  for (const auto& i : sonic->interfaces) nic[i.name] = i.nic;
  EXPECT_EQ(nic, (std::map<std::string, int>{{"Ethernet0", 1}, {"Ethernet4", 2}}));
  // Taps: unique across the lab, within IFNAMSIZ, never a netns node's.
  std::set<std::string> taps;
  for (const auto& n : p.nodes) {
    if (!n.vm.mgmt_tap.empty()) taps.insert(n.vm.mgmt_tap);
    for (const auto& i : n.interfaces) {
      if (twin::drivers::driver_for(n).links_change_live()) {
        EXPECT_TRUE(i.tap.empty());
        continue;
      }
      EXPECT_LE(i.tap.size(), 15u);
      EXPECT_EQ(i.tap.rfind("twt", 0), 0u) << i.tap;
      taps.insert(i.tap);
    }
  }
  EXPECT_EQ(taps.size(), 3u + 2u + 2u + 1u);  // management NICs, then vx1's, sonic1's, vm1's
}

TEST_F(VmLab, KernelBootGuestLearnsInterfacesFromTheCommandLine) {
  auto p = mixed_plan();
  const auto* vm = p.find("vm1");
  ASSERT_NE(vm, nullptr);
  const auto& i = vm->interfaces.at(0);
  // Its management NIC first (mgmt0, link-local only: the lab has no management network).
  EXPECT_EQ(vm->vm.cmdline, "console=ttyS0 panic=-1 quiet twin.hostname=vm1 twin.if=" +
                                vm->vm.mgmt_mac + ",mgmt0,1500 twin.if=" + i.mac +
                                ",eth1,1500,10.0.1.10/24,2001:db8:1::10/64"
                                " twin.route=default,10.0.1.1 twin.route=default,2001:db8:1::1");
  EXPECT_TRUE(vm->vm.overlay.empty());
  // The plan survives the state file.
  auto back = twin::plan::plan_from_json(twin::plan::to_json(p));
  EXPECT_EQ(twin::plan::to_json(back), twin::plan::to_json(p));
  EXPECT_EQ(back.find("vm1")->vm.cmdline, vm->vm.cmdline);
  EXPECT_EQ(back.find("vx1")->interfaces.at(0).tap, p.find("vx1")->interfaces.at(0).tap);
}

// ---- domain XML (golden files) ---------------------------------------------------------------

// Compares with tests/data/vm/<name>; TWIN_UPDATE_GOLDEN=1 rewrites the file instead.
void expect_golden(const std::string& name, const std::string& actual) {
  std::string path = kGolden + "/" + name;
  if (const char* u = std::getenv("TWIN_UPDATE_GOLDEN"); u && std::string(u) == "1") {
    fs::create_directories(kGolden);
    std::ofstream(path) << actual;
  }
  EXPECT_EQ(actual, read(path)) << "domain XML changed; if intended, rerun with "
                                   "TWIN_UPDATE_GOLDEN=1 and review the diff of "
                                << path;
}

TEST_F(VmLab, DomainXmlMatchesGoldenFiles) {
  auto p = mixed_plan();
  auto* vm1 = p.find("vm1");
  auto* vx1 = p.find("vx1");
  expect_golden("test-vm.qemu.xml", twin::runtime::domain_xml(*vm1, "qemu"));
  expect_golden("cumulus-vx.kvm.xml", twin::runtime::domain_xml(*vx1, "kvm"));
}

TEST_F(VmLab, DomainXmlEscapesAndOrdersNics) {
  auto p = mixed_plan();
  auto n = *p.find("sonic1");
  n.vm.cmdline = "a<b & 'c'";
  n.vm.kernel = "/k";
  n.vm.initrd = "/i";
  auto x = twin::runtime::domain_xml(n, "qemu");
  EXPECT_NE(x.find("<cmdline>a&lt;b &amp; &apos;c&apos;</cmdline>"), std::string::npos) << x;
  // NIC order follows the guest's: management, Ethernet0, Ethernet4 (topology order differs).
  auto at = [&](const std::string& s) { return x.find(s); };
  auto mgmt = at(n.vm.mgmt_tap), e0 = at(n.interfaces[1].tap), e8 = at(n.interfaces[0].tap);
  EXPECT_EQ(n.interfaces[0].name, "Ethernet4");
  EXPECT_LT(mgmt, e0);
  EXPECT_LT(e0, e8);
  EXPECT_EQ(x.find("<cpu mode='host-passthrough'/>"), std::string::npos) << "only for kvm";
}

// ---- libvirt lifecycle on test:///default ------------------------------------------------------

TEST_F(VmLab, LifecycleOnLibvirtsTestDriver) {
  auto hv = twin::runtime::Hypervisor::open("test:///default");
  ASSERT_TRUE(hv) << hv.error().message;
  auto p = mixed_plan();
  auto n = *p.find("vm1");
  n.vm.domain = "twin-unit-" + std::to_string(::getpid());
  EXPECT_FALSE(*(*hv)->running(n.vm.domain));
  auto started = (*hv)->start(twin::runtime::domain_xml(n, "test"));
  ASSERT_TRUE(started) << started.error().message;
  EXPECT_TRUE(*(*hv)->running(n.vm.domain));
  auto x = (*hv)->live_xml(n.vm.domain);
  ASSERT_TRUE(x) << x.error().message;
  EXPECT_NE(x->find("<name>" + n.vm.domain + "</name>"), std::string::npos);
  EXPECT_NE(x->find(n.interfaces[0].tap), std::string::npos);
  // The same name twice is refused while it runs.
  EXPECT_FALSE((*hv)->start(twin::runtime::domain_xml(n, "test")));
  auto d = (*hv)->destroy(n.vm.domain);
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_TRUE(*d);
  // Transient: destroyed means gone; a second destroy is a no-op.
  EXPECT_FALSE(*(*hv)->running(n.vm.domain));
  auto again = (*hv)->destroy(n.vm.domain);
  ASSERT_TRUE(again);
  EXPECT_FALSE(*again);
  EXPECT_FALSE((*hv)->live_xml(n.vm.domain));
}

TEST(Libvirt, UnreachableDaemonIsAnEnvironmentErrorWithAHint) {
  auto hv = twin::runtime::Hypervisor::open("qemu+unix:///system?socket=/nonexistent/sock");
  ASSERT_FALSE(hv);
  EXPECT_EQ(hv.error().kind, twin::ErrorKind::kEnvironment);
  EXPECT_NE(hv.error().message.find("cannot connect to libvirt"), std::string::npos)
      << hv.error().message;
}

TEST(Libvirt, ConsolePtyComesFromTheLiveXml) {
  std::string x =
      "<domain><devices><serial type='pty'>\n<source path='/dev/pts/7'/>\n<log file='/x'/>"
      "</serial><console type='pty' tty='/dev/pts/7'/></devices></domain>";
  auto p = twin::runtime::console_pty(x);
  ASSERT_TRUE(p);
  EXPECT_EQ(*p, "/dev/pts/7");
  EXPECT_FALSE(twin::runtime::console_pty("<domain><devices/></domain>"));
  EXPECT_FALSE(twin::runtime::console_pty("<serial type='pty'></serial><disk path='/x'/>"));
}

TEST_F(VmLab, ConsoleShowsFindsPatternsAcrossPartialWrites) {
  std::string log = (dir_ / "console.log").string();
  size_t off = 0;
  EXPECT_FALSE(twin::runtime::console_shows(log, "TWIN-READY", off)) << "no file yet";
  std::ofstream f(log, std::ios::binary);
  f << "boot line 1\nTWIN-RE" << std::flush;
  EXPECT_FALSE(twin::runtime::console_shows(log, "TWIN-READY", off));
  EXPECT_EQ(off, 12u) << "the partial line is read again";
  f << "ADY\n" << std::flush;
  EXPECT_TRUE(twin::runtime::console_shows(log, "TWIN-READY", off));
}

TEST(Eui64, LinkLocalFromMac) {
  EXPECT_EQ(twin::drivers::eui64_link_local("52:54:00:00:00:01"), "fe80::5054:ff:fe00:1");
  EXPECT_EQ(twin::drivers::eui64_link_local("02:2f:00:01:00:1b"), "fe80::2f:ff:fe01:1b");
  EXPECT_EQ(twin::drivers::eui64_link_local("not a mac"), "");
}

// ---- wiring ------------------------------------------------------------------------------------

TEST_F(VmLab, TapScriptsCreateSilenceMoveAndJoin) {
  auto p = mixed_plan();
  const auto& vm = *p.find("vm1");
  const auto& tap = vm.interfaces[0].tap;
  const auto& mtap = vm.vm.mgmt_tap;
  EXPECT_EQ(twin::wiring::tap_create_script(vm),
            "tuntap add dev " + mtap + " mode tap\ntuntap add dev " + tap +
                " mode tap\nlink set dev " + tap + " mtu 1500\n");
  EXPECT_EQ(twin::wiring::vm_tap_sysctls(vm),
            (std::vector<std::pair<std::string, std::string>>{
                {"net/ipv6/conf/" + mtap + "/disable_ipv6", "1"},
                {"net/ipv6/conf/" + tap + "/disable_ipv6", "1"}}));
  EXPECT_EQ(twin::wiring::tap_move_script(vm), "link set dev " + mtap +
                                                   " netns tw-vmlab-vm1\nlink set dev " + tap +
                                                   " netns tw-vmlab-vm1\n");
  EXPECT_EQ(twin::wiring::tap_redirect_script(vm),
            "qdisc add dev eth1 ingress\n"
            "filter add dev eth1 parent ffff: protocol all u32 match u32 0 0 action mirred egress "
            "redirect dev " +
                tap +
                "\n"
                "qdisc add dev " +
                tap +
                " ingress\n"
                "filter add dev " +
                tap +
                " parent ffff: protocol all u32 match u32 0 0 action mirred "
                "egress redirect dev eth1\n");
  // The guest sets its own addresses; its namespace speaks no IPv6 and forwards nothing.
  EXPECT_EQ(twin::drivers::driver_for(vm).address_script(vm, {}), "");
  auto sysctls = twin::drivers::driver_for(vm).namespace_sysctls(vm);
  std::map<std::string, std::string> m(sysctls.begin(), sysctls.end());
  EXPECT_EQ(m["net/ipv6/conf/all/disable_ipv6"], "1");
  EXPECT_EQ(m["net/ipv6/conf/default/disable_ipv6"], "1");
  EXPECT_EQ(m["net/ipv4/ip_forward"], "0");
  // The management tap becomes mgmt0.
  const auto& vx = *p.find("vx1");
  EXPECT_EQ(twin::wiring::tap_up_script(vx).rfind(
                "link set dev " + vx.vm.mgmt_tap + " name mgmt0\nlink set dev mgmt0 up\n", 0),
            0u);
}

// A NOS VM read over SSH (agent ssh): on the lab's management network, the guest's own login;
// the password never in the state file, read by ssh through an askpass program.
TEST_F(VmLab, AGuestReadOverSshUsesItsLoginOnTheManagementNetwork) {
  write(
      "images/nos.yaml",
      "kind: frr\nbackend: libvirt\nvm: {disk: nos.qcow2, management-nic: true, "
      "interface-pattern: \"swp{n}\", agent: ssh, ssh-user: cumulus, ssh-password: \"Nos pw\"}\n");
  const std::string lab =
      "version: 1\nname: s\nmgmt: {subnet: 172.30.8.0/24}\nnodes:\n  r1: {kind: frr, image: "
      "frr-8.4, asn: 65001, loopback: 10.255.0.1/32}\n  nos1: {image: nos, asn: 65002, loopback: "
      "10.255.0.2/32}\nlinks:\n  - endpoints: [r1:swp1, nos1:swp1]\n";
  Diagnostics d;
  auto t = load(lab, d);
  ASSERT_TRUE(t && d.empty()) << dump(d);
  auto p = twin::plan::make_plan(*t);
  const auto& n = *p.find("nos1");
  EXPECT_EQ(n.mgmt_address, "172.30.8.3/24");
  EXPECT_EQ(n.vm.vtysh, "sudo vtysh");
  EXPECT_EQ(n.vm.ssh_password_file, "/run/twin/s/nos1/ssh-password");
  EXPECT_TRUE(twin::runtime::guest_readable(n));
  EXPECT_THAT(twin::plan::to_json(p).dump(), ::testing::Not(::testing::HasSubstr("Nos pw")));
  EXPECT_EQ(twin::plan::plan_from_json(twin::plan::to_json(p)).find("nos1")->vm.ssh_password, "");
  const auto argv = twin::runtime::guest_ssh_argv(n, "ip -j link show");
  ASSERT_GE(argv.size(), 4u);
  EXPECT_EQ(argv[0], "env");
  EXPECT_EQ(argv[1], "SSH_ASKPASS=/run/twin/s/nos1/ssh-askpass");
  EXPECT_EQ(argv[2], "SSH_ASKPASS_REQUIRE=force");
  EXPECT_EQ(argv[3], "/usr/bin/ssh");
  EXPECT_EQ(std::vector<std::string>(argv.end() - 3, argv.end()),
            (std::vector<std::string>{"cumulus@172.30.8.3", "--", "ip -j link show"}));
  auto joined = [](const std::vector<std::string>& v) {
    std::string o;
    for (const auto& x : v) o += (o.empty() ? "" : " ") + x;
    return o;
  };
  const std::string all = joined(argv);
  EXPECT_NE(all.find("UserKnownHostsFile=/run/twin/s/nos1/known_hosts"), std::string::npos);
  EXPECT_NE(all.find("StrictHostKeyChecking=accept-new"), std::string::npos);
  EXPECT_EQ(all.find("Nos pw"), std::string::npos);  // never on a command line
  EXPECT_EQ(twin::runtime::guest_askpass_script(n),
            "#!/bin/sh\nexec cat '/run/twin/s/nos1/ssh-password'\n");
  EXPECT_EQ(twin::runtime::guest_table_command(n, twin::runtime::KernelTable::kRoutes6),
            "ip -j -6 route show");
  EXPECT_EQ(twin::runtime::guest_vtysh(n), "sudo vtysh");
  // A key instead: publickey only, batch mode, no askpass.
  auto keyed = n;
  keyed.vm.ssh_key = "/root/.ssh/nos";
  const std::string k = joined(twin::runtime::guest_ssh_argv(keyed, "true"));
  EXPECT_EQ(k.rfind("/usr/bin/ssh ", 0), 0u);
  EXPECT_NE(k.find("-i /root/.ssh/nos -o IdentitiesOnly=yes"), std::string::npos);
  EXPECT_NE(k.find("BatchMode=yes"), std::string::npos);
  // Without the lab's management network twin cannot reach it, and says so at plan time.
  std::string plain = lab;
  plain.replace(plain.find("mgmt: {subnet: 172.30.8.0/24}\n"), 30, "");
  Diagnostics d2;
  auto t2 = load(plain, d2);
  ASSERT_TRUE(t2 && d2.empty()) << dump(d2);
  auto p2 = twin::plan::make_plan(*t2);
  EXPECT_FALSE(twin::runtime::guest_readable(*p2.find("nos1")));
  EXPECT_THAT(twin::runtime::no_agent(*p2.find("nos1")).message,
              ::testing::HasSubstr("add `mgmt: true`"));
  bool noted = false;
  for (const auto& note : p2.notes)
    noted |= note.node == "nos1" && note.text.find("over SSH") != std::string::npos;
  EXPECT_TRUE(noted);
}

// ---- guest agent -------------------------------------------------------------------------------

// A fake guest on a unix socket: answers each request with `reply(command)` after `delay`.
class FakeGuest {
 public:
  FakeGuest(const std::string& path, std::function<std::string(const std::string&)> reply)
      : path_(path) {
    fd_ = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un sa{};
    sa.sun_family = AF_UNIX;
    std::strncpy(sa.sun_path, path.c_str(), sizeof sa.sun_path - 1);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&sa), sizeof sa);
    ::listen(fd_, 4);
    thread_ = std::thread([this, reply] {
      for (;;) {
        int c = ::accept(fd_, nullptr, nullptr);
        if (c < 0) return;
        std::string line;
        char ch;
        while (::read(c, &ch, 1) == 1 && ch != '\n') line += ch;
        auto sp = line.find(' ');
        std::string id = line.substr(0, sp), cmd = line.substr(sp + 1);
        std::string out = reply(cmd);
        std::string end = out + "\n\x1eTWIN-END " + id + " 3\n";
        if (cmd.find("'never'") != std::string::npos) {
          // Holds the line, silent, until the client gives up and closes it: no sleeping.
          while (::read(c, &ch, 1) > 0) {
          }
        } else {
          (void)!::write(c, end.data(), end.size());
        }
        ::close(c);
      }
    });
  }
  ~FakeGuest() {
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
    ::unlink(path_.c_str());
  }

 private:
  std::string path_;
  int fd_;
  std::thread thread_;
};

TEST_F(VmLab, AgentRunsOneLineAndReturnsOutputAndExitCode) {
  std::string sock = (dir_ / "agent.sock").string();
  FakeGuest g(sock, [](const std::string& cmd) {
    // A stale reply from an abandoned request comes first: the client must skip it.
    return "old\n\x1eTWIN-END 999 0\nran: " + cmd;
  });
  auto r = twin::runtime::agent_exec(sock, "ip link set eth1 mtu 1400");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->exit_code, 3);
  // The guest kills a command once the caller stops waiting (10 s by default).
  EXPECT_EQ(r->output, "ran: timeout -s KILL 10 sh -c 'ip link set eth1 mtu 1400'");
  EXPECT_FALSE(twin::runtime::agent_exec(sock, "two\nlines"));
  // A guest that never answers: the client's own timeout (1 ms, so the test waits for nothing).
  auto slow = twin::runtime::agent_exec(sock, "never", std::chrono::milliseconds(1));
  ASSERT_FALSE(slow);
  EXPECT_NE(slow.error().message.find("did not answer 'never' within 1 ms"), std::string::npos);
}

TEST_F(VmLab, AgentTablesParseAndMissingAgentIsNamed) {
  std::string sock = (dir_ / "agent.sock").string();
  twin::plan::Node vm;
  vm.name = "vm1";
  vm.vm.agent = "twin";
  vm.vm.agent_socket = sock;
  auto none = twin::runtime::guest_table(vm, twin::runtime::KernelTable::kLinks);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().kind, twin::ErrorKind::kEnvironment);
  FakeGuest g(sock, [](const std::string& cmd) {
    if (cmd.find("twin-json links") != std::string::npos)
      return std::string(R"([{"ifname":"eth1","mtu":1400}])");
    return std::string("not json");
  });
  // The fake exits 3 for everything: a table command that fails is an error naming it.
  auto t = twin::runtime::guest_table(vm, twin::runtime::KernelTable::kLinks);
  ASSERT_FALSE(t);
  EXPECT_NE(t.error().message.find("'twin-json links' in the guest exited 3"), std::string::npos);
  EXPECT_EQ(twin::runtime::sh_quote("it's"), "'it'\\''s'");
}

// ---- guest pings -------------------------------------------------------------------------------

TEST(GuestPing, OutcomesFromExitCodeAndMessages) {
  using twin::validate::PingOutcome;
  auto ok = twin::drivers::guest_ping_result(
      0,
      "PING 10.0.1.1 (10.0.1.1) 56(84) bytes of data.\n64 bytes from 10.0.1.1: icmp_seq=1 "
      "ttl=64 time=1.85 ms\n");
  EXPECT_EQ(ok.outcome, PingOutcome::kReply);
  EXPECT_DOUBLE_EQ(ok.rtt_ms, 1.85);
  auto big = twin::drivers::guest_ping_result(
      1,
      "/usr/bin/ping: Warning: source address might be selected on device other than: eth1\n"
      "/usr/bin/ping: local error: message too long, mtu: 1400\n");
  EXPECT_EQ(big.outcome, PingOutcome::kTooBig);
  EXPECT_EQ(big.mtu, 1400);
  EXPECT_EQ(big.detail, "in the guest: /usr/bin/ping: local error: message too long, mtu: 1400");
  auto v4big = twin::drivers::guest_ping_result(
      1, "From 10.0.1.1 icmp_seq=1 Frag needed and DF set (mtu = 1400)\n");
  EXPECT_EQ(v4big.outcome, PingOutcome::kTooBig);
  EXPECT_EQ(v4big.mtu, 1400);
  EXPECT_EQ(twin::drivers::guest_ping_result(2, "ping: connect: Network is unreachable\n").outcome,
            PingOutcome::kNoRoute);
  EXPECT_EQ(twin::drivers::guest_ping_result(1, "1 packets transmitted, 0 received\n").outcome,
            PingOutcome::kTimeout);
  EXPECT_EQ(twin::drivers::guest_ping_result(2, "ping: bad address 'x'\n").outcome,
            PingOutcome::kError);
}

TEST(GuestPing, ScriptRunsEveryRequestAndResultsComeBackInOrder) {
  twin::validate::PingRequest a, b;
  a.destination = "fe80::1";
  a.interface = "eth1";
  a.dont_fragment = true;
  a.payload_bytes = 1452;
  a.count = 2;
  a.timeout = std::chrono::milliseconds(1500);
  b.destination = "10.255.1.2";
  b.source = "10.0.1.10";
  auto s = twin::drivers::guest_ping_script({a, b});
  EXPECT_NE(s.find("/usr/bin/ping -n -c 2 -i 0.2 -W 2 -w 3 -s 1452 -M do -I 'eth1' 'fe80::1' "
                   ">/tmp/twin-ping.0"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("-s 56 -I '10.0.1.10' '10.255.1.2' >/tmp/twin-ping.1"), std::string::npos) << s;
  EXPECT_EQ(s.find('\n'), std::string::npos) << "the agent reads one line";
  auto res = twin::drivers::parse_guest_pings(
      "@@ 0\nlocal error: message too long, mtu: 1400\n@rc 1\n@@ 1\n64 bytes from 10.255.1.2: "
      "icmp_seq=1 ttl=63 time=2.5 ms\n@rc 0\n",
      3);
  ASSERT_EQ(res.size(), 3u);
  EXPECT_EQ(res[0].outcome, twin::validate::PingOutcome::kTooBig);
  EXPECT_EQ(res[1].outcome, twin::validate::PingOutcome::kReply);
  EXPECT_DOUBLE_EQ(res[1].rtt_ms, 2.5);
  EXPECT_EQ(res[2].outcome, twin::validate::PingOutcome::kError);
  EXPECT_EQ(res[2].detail, "no result from the guest");
}

}  // namespace
