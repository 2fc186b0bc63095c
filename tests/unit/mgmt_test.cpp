// Unit tests for the management network (issue 48 items 1-3, docs/management.md): `mgmt:` in
// twin's format and containerlab's block, the loader's refusals, the plan's stable addresses and
// notes, the kernel scripts, sshd's configuration and login, and the inventories.
#include "twin/wiring/mgmt.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "tests/unit/support.hpp"
#include "twin/changeset/steps.hpp"
#include "twin/core/password.hpp"
#include "twin/drivers/ssh.hpp"
#include "twin/graph/inventory.hpp"
#include "twin/plan/plan.hpp"
#include "twin/topology/loader.hpp"
#include "twin/wiring/wiring.hpp"

namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using twin::Diagnostics;
using twin_test::dump;

const std::string kTestData = TWIN_TEST_DATA;

const std::string kFabric = R"(version: 1
name: m
defaults: {kind: frr, image: frr-8.4}
nodes:
  spine1: {asn: 65000, loopback: 10.255.0.1/32}
  leaf1: {asn: 65101, loopback: 10.255.1.1/32}
  leaf2: {asn: 65102, loopback: 10.255.1.2/32, mgmt-address: 172.30.9.2}
  server1: {kind: host}
links:
  - endpoints: [spine1:swp1, leaf1:swp1]
  - endpoints: [spine1:swp2, leaf2:swp1]
  - endpoints: [leaf1:swp2, server1:eth0]
    addresses: {leaf1: 10.1.1.1/24, server1: 10.1.1.10/24}
)";

struct Loaded {
  std::optional<twin::topology::Topology> topo;
  Diagnostics diags;
};

Loaded load(const std::string& text, const std::string& name = "t.yaml") {
  Loaded l;
  l.topo = twin::topology::load_topology_text(text, name, kTestData, l.diags);
  return l;
}

twin::plan::Plan plan_of(const std::string& text) {
  auto l = load(text);
  if (!l.topo) throw std::runtime_error(dump(l.diags));
  return twin::plan::make_plan(*l.topo);
}

std::string errors(const std::string& text) {
  auto l = load(text);
  return l.topo ? "" : l.diags.format();
}

TEST(Mgmt, AddressesAreStableFirstToTheHostThenTheGivenOnesThenNodeOrder) {
  auto p = plan_of(kFabric + "mgmt: {subnet: 172.30.9.0/24}\n");
  ASSERT_TRUE(p.mgmt);
  EXPECT_EQ(p.mgmt->subnet, "172.30.9.0/24");
  EXPECT_EQ(p.mgmt->host_address, "172.30.9.1/24");
  EXPECT_EQ(p.mgmt->netns, "tw-m.mgmt");
  EXPECT_EQ(p.mgmt->interface, "mgmt0");
  EXPECT_EQ(p.mgmt->user, "admin");
  EXPECT_EQ(p.mgmt->key_dir, "/run/twin/m/ssh");
  EXPECT_EQ(p.mgmt->host_veth.size(), 11u);  // twm + 8 hex: within IFNAMSIZ
  // leaf2 asked for .2: spine1 and leaf1 take the next free ones, in node order.
  EXPECT_EQ(p.find("spine1")->mgmt_address, "172.30.9.3/24");
  EXPECT_EQ(p.find("leaf1")->mgmt_address, "172.30.9.4/24");
  EXPECT_EQ(p.find("leaf2")->mgmt_address, "172.30.9.2/24");
  EXPECT_EQ(p.find("server1")->mgmt_address, "");  // hosts are not members
  EXPECT_EQ(p.find("leaf1")->mgmt_port, "n2");
  // The same topology plans the same addresses; the state file keeps them.
  auto again = plan_of(kFabric + "mgmt: {subnet: 172.30.9.0/24}\n");
  EXPECT_EQ(twin::plan::to_json(again), twin::plan::to_json(p));
  auto back = twin::plan::plan_from_json(twin::plan::to_json(p));
  ASSERT_TRUE(back.mgmt);
  EXPECT_EQ(back.mgmt->host_veth, p.mgmt->host_veth);
  EXPECT_EQ(back.find("leaf1")->mgmt_address, "172.30.9.4/24");
}

TEST(Mgmt, DefaultSubnetIsASlash24Of172Dot30NamedByTheLab) {
  std::string plain = kFabric;
  plain.replace(plain.find(", mgmt-address: 172.30.9.2"), 26, "");
  auto p = plan_of(plain + "mgmt: true\n");
  ASSERT_TRUE(p.mgmt);
  EXPECT_THAT(p.mgmt->subnet, ::testing::MatchesRegex(R"(172\.30\.[0-9]+\.0/24)"));
  EXPECT_FALSE(plan_of(plain).mgmt);  // opt-in
  EXPECT_FALSE(plan_of(plain + "mgmt: false\n").mgmt);
  // Without `mgmt:` the plan's JSON has no trace of it (older state files read the same).
  auto j = twin::plan::to_json(plan_of(plain));
  EXPECT_FALSE(j.contains("mgmt"));
  EXPECT_FALSE(j["nodes"][0].contains("mgmt_address"));
}

TEST(Mgmt, TheLoaderRefusesWhatCannotWork) {
  EXPECT_THAT(errors(kFabric + "mgmt: {subnet: 10.88.4.0/24}\n"),
              HasSubstr("overlaps podman's default network 10.88.0.0/16"));
  EXPECT_THAT(errors(kFabric + "mgmt: {subnet: 172.30.9.0/30}\n"),
              HasSubstr("not an IPv4 subnet of /8 to /29"));
  EXPECT_THAT(errors(kFabric + "mgmt: {subnet: 172.30.9.0/29}\n"), Not(HasSubstr("holds")));
  EXPECT_THAT(errors(kFabric + "mgmt: {subnet: \"fd00::/64\"}\n"), HasSubstr("IPv4"));
  // The lab's own addresses and ranges that hold no unicast host.
  EXPECT_THAT(errors(kFabric + "mgmt: {subnet: 10.1.1.0/24}\n"),
              HasSubstr("overlaps 10.1.1.1/24 (leaf1's address on a link)"));
  EXPECT_THAT(errors(kFabric + "mgmt: {subnet: 10.255.0.0/16}\n"),
              HasSubstr("overlaps 10.255.0.1/32 (spine1's loopback)"));
  EXPECT_THAT(errors(kFabric + "mgmt: {subnet: 127.0.0.0/24}\n"),
              HasSubstr("overlaps 127.0.0.0/8, which holds no unicast host"));
  EXPECT_THAT(errors(kFabric + "mgmt: {subnet: 224.1.0.0/24}\n"), HasSubstr("224.0.0.0/4"));
  // Without a subnet, a given address must lie in the lab's default one.
  EXPECT_THAT(errors(kFabric + "mgmt: true\n"),
              HasSubstr("management address 172.30.9.2 of leaf2 is outside 172.30."));
  EXPECT_THAT(errors(kFabric + "mgmt: {subnet: 172.31.0.0/24}\n"),
              HasSubstr("management address 172.30.9.2 of leaf2 is outside 172.31.0.0/24"));
  EXPECT_THAT(errors(kFabric + "mgmt: {subnet: 172.30.9.0/24, interface: swp1}\n"),
              HasSubstr("uses swp1 for a link, which is the management interface"));
  EXPECT_THAT(errors(kFabric + "mgmt: {subnet: 172.30.9.0/24, user: Root!}\n"),
              HasSubstr("invalid login name 'Root!'"));
  EXPECT_THAT(errors(kFabric + "mgmt: {subnet: 172.30.9.0/24, vrf: mgmt}\n"), HasSubstr("vrf"));
  EXPECT_THAT(errors(kFabric + "mgmt: sometimes\n"), HasSubstr("mgmt"));
  // An address without a network, the host's, twice, and on a node that is no member.
  EXPECT_THAT(errors(kFabric), HasSubstr("the lab has no management network"));
  std::string twice = kFabric;
  twice.replace(twice.find("leaf1: {asn: 65101,"), 19, "leaf1: {asn: 65101, mgmt-address: 172.30.9.2,");
  EXPECT_THAT(errors(twice + "mgmt: {subnet: 172.30.9.0/24}\n"),
              HasSubstr("172.30.9.2 of leaf2 is already node leaf1's"));
  std::string host = kFabric;
  host.replace(host.find("mgmt-address: 172.30.9.2"), 24, "mgmt-address: 172.30.9.1");
  EXPECT_THAT(errors(host + "mgmt: {subnet: 172.30.9.0/24}\n"),
              HasSubstr("is already the host (the subnet's first address)"));
  std::string server = kFabric;
  server.replace(server.find("server1: {kind: host}"), 21,
                 "server1: {kind: host, mgmt-address: 172.30.9.9}");
  EXPECT_THAT(
      errors(server + "mgmt: {subnet: 172.30.9.0/24}\n"),
      HasSubstr("server1 does not join the management network (only FRR nodes and VMs with a "
                "management NIC do)"));
}

// Found by a new user: each mistake named at its own line; accounts of the machine's programs,
// a password with an invisible newline, a subnet with host bits refused.
TEST(Mgmt, TheLoaderNamesEachMgmtFieldAtItsLineAndRefusesWhatWouldSurprise) {
  const std::string block = kFabric +
                            "mgmt:\n  subnet: 172.30.9.0/24\n  interface: mgmt0\n"
                            "  user: Admin\n";
  // The 1-based line of `text` that holds `needle`.
  auto line_of = [](const std::string& text, const std::string& needle) {
    const auto end = text.begin() + static_cast<long>(text.find(needle));
    return std::to_string(1 + std::count(text.begin(), end, '\n'));
  };
  EXPECT_THAT(errors(block),
              HasSubstr("t.yaml:" + line_of(block, "user: Admin") + ":9: error: mgmt.user"));
  EXPECT_THAT(errors(kFabric + "mgmt: {subnet: 172.30.9.0/24, user: sshd}\n"),
              HasSubstr("'sshd' is an account of this machine's own programs"));
  EXPECT_THAT(errors(kFabric + "mgmt: {subnet: 172.30.9.0/24, user: root}\n"),
              HasSubstr("'root' is an account"));
  EXPECT_THAT(errors(kFabric + "mgmt:\n  subnet: 172.30.9.0/24\n  password: |\n    secret\n"),
              HasSubstr("the password holds a newline or another control character"));
  EXPECT_THAT(errors(kFabric + "mgmt: {subnet: 172.30.9.5/24}\n"),
              HasSubstr("172.30.9.5/24 has host bits set"));
  EXPECT_THAT(errors(kFabric + "mgmt: {subnet: 172.30.9.0/24, password-hash: '$1$ab$cdefghij'}\n"),
              HasSubstr("a legacy hash (MD5 or DES crypt)"));
  // A bare `password:` is reported at its key, not at the next one.
  const std::string bare = kFabric + "mgmt:\n  subnet: 172.30.9.0/24\n  password:\nchecks: []\n";
  EXPECT_THAT(errors(bare), HasSubstr("t.yaml:" + line_of(bare, "  password:") + ":"));
}

TEST(Mgmt, ContainerlabsBlockAndMgmtIpv4AreReadTheSameWay) {
  const std::string clab = R"(name: c
mgmt:
  network: custom
  ipv4-subnet: 172.100.100.0/24
  ipv6-subnet: 3fff:172:100:100::/80
topology:
  nodes:
    r1:
      kind: frr
      image: quay.io/frrouting/frr:8.4.1
      mgmt-ipv4: 172.100.100.11
    r2:
      kind: frr
      image: quay.io/frrouting/frr:8.4.1
  links:
    - endpoints: [r1:eth1, r2:eth1]
)";
  auto l = load(clab, "c.clab.yml");
  ASSERT_TRUE(l.topo) << dump(l.diags);
  auto p = twin::plan::make_plan(*l.topo);
  ASSERT_TRUE(p.mgmt);
  EXPECT_EQ(p.mgmt->subnet, "172.100.100.0/24");
  EXPECT_EQ(p.find("r1")->mgmt_address, "172.100.100.11/24");
  EXPECT_EQ(p.find("r2")->mgmt_address, "172.100.100.2/24");
  std::string warned;
  for (const auto& w : l.diags.warnings()) warned += w.field + ": " + w.message + "\n";
  EXPECT_THAT(warned, HasSubstr("mgmt.ipv6-subnet: `ipv6-subnet` is ignored by twin"));
  EXPECT_THAT(warned, Not(HasSubstr("mgmt.network")));
  EXPECT_THAT(warned, Not(HasSubstr("mgmt-ipv4")));
}

TEST(Mgmt, AConfigThatWouldAnnounceTheManagementSubnetGetsANote) {
  const std::string conf = "frr defaults datacenter\nrouter bgp 65001\n address-family ipv4 unicast\n"
                           "  redistribute connected\n exit-address-family\nexit\n"
                           "router ospf\n network 0.0.0.0/0 area 0\nexit\n";
  std::string dir = ::testing::TempDir();
  std::ofstream(dir + "/r1-mgmt.conf") << conf;
  Diagnostics d;
  auto l = twin::topology::load_topology_text(
      "version: 1\nname: n\nmgmt: {subnet: 172.30.3.0/24}\nnodes:\n  r1: {kind: frr, image: frr-8.4, "
      "config: r1-mgmt.conf}\n",
      "t.yaml", dir, d);
  ASSERT_TRUE(l) << dump(d);
  auto p = twin::plan::make_plan(*l);
  std::string notes;
  for (const auto& n : p.notes) notes += n.text + "\n";
  EXPECT_THAT(notes, HasSubstr("`redistribute connected` (bgp4) would announce the management "
                               "subnet 172.30.3.0/24 of mgmt0 into the fabric"));
  EXPECT_THAT(notes, HasSubstr("`network 0.0.0.0/0` (area 0.0.0.0) puts mgmt0 (management, "
                               "172.30.3.0/24) into OSPF"));
}

TEST(Mgmt, KernelScriptsMakeTheBridgeThePortsAndTheFilter) {
  auto p = plan_of(kFabric + "mgmt: {subnet: 172.30.9.0/24}\n");
  std::vector<const twin::plan::Node*> members = {p.find("leaf1")};
  const auto& m = *p.mgmt;
  EXPECT_EQ(twin::wiring::mgmt_root_script(p, members, true),
            "netns add tw-m.mgmt\nlink add " + m.host_veth +
                " type veth peer name host netns tw-m.mgmt\naddress add 172.30.9.1/24 dev " +
                m.host_veth + "\nlink set " + m.host_veth +
                " up\nlink add mgmt0 netns tw-m-leaf1 type veth peer name n2 netns tw-m.mgmt\n");
  EXPECT_EQ(twin::wiring::mgmt_root_script(p, members, false),
            "link add mgmt0 netns tw-m-leaf1 type veth peer name n2 netns tw-m.mgmt\n");
  EXPECT_EQ(twin::wiring::mgmt_bridge_script(p, members, false), "link set n2 master br0 up\n");
  EXPECT_THAT(twin::wiring::mgmt_bridge_script(p, members, true),
              HasSubstr("link add br0 type bridge stp_state 0 forward_delay 0 mcast_snooping 0\n"
                        "link set host master br0 up\nlink set br0 up\n"));
  // Its address, and the rules that keep the fabric off the management network: its own
  // address answered on mgmt0 and to itself only, nothing forwarded into the subnet.
  EXPECT_EQ(twin::wiring::mgmt_node_script(p, *p.find("leaf1")),
            "address add 172.30.9.4/24 dev mgmt0\nlink set mgmt0 up\n"
            "rule add pref 1 to 172.30.9.4/32 iif mgmt0 lookup local\n"
            "rule add pref 2 to 172.30.9.4/32 iif lo lookup local\n"
            "rule add pref 3 to 172.30.9.4/32 prohibit\n"
            "rule add pref 4 to 172.30.9.0/24 iif lo lookup main\n"
            "rule add pref 5 to 172.30.9.0/24 prohibit\n"
            "rule add pref 32765 lookup local\nrule del pref 0\n");
  EXPECT_EQ(twin::wiring::mgmt_node_script(p, *p.find("server1")), "");
  const std::string nft = twin::wiring::mgmt_nft_script(m);
  EXPECT_THAT(nft, HasSubstr("add table inet twin_mgmt_m\nflush table inet twin_mgmt_m\n"));
  EXPECT_THAT(nft, HasSubstr("type filter hook forward priority filter; policy accept;"));
  EXPECT_THAT(nft, HasSubstr("iifname \"" + m.host_veth + "\" counter drop"));
  EXPECT_THAT(nft, HasSubstr("oifname \"" + m.host_veth + "\" counter drop"));
}

TEST(Mgmt, SshdListensOnTheManagementAddressOnlyWithTheLabsKeyAndLandsInVtysh) {
  auto p = plan_of(kFabric + "mgmt: {subnet: 172.30.9.0/24, user: netops}\n");
  const auto& leaf1 = *p.find("leaf1");
  const std::string c = twin::drivers::sshd_config(*p.mgmt, leaf1);
  EXPECT_THAT(c, HasSubstr("ListenAddress 172.30.9.4:22\n"));
  EXPECT_THAT(c, HasSubstr("AuthorizedKeysFile /run/twin/m/ssh/authorized_keys\n"));
  EXPECT_THAT(c, HasSubstr("AllowUsers netops\n"));
  EXPECT_THAT(c, HasSubstr("PasswordAuthentication no\n"));
  EXPECT_THAT(c, HasSubstr("AllowTcpForwarding no\n"));
  EXPECT_THAT(c, HasSubstr("ForceCommand /run/twin/m/leaf1/ssh/login\n"));
  const std::string login = twin::drivers::login_script(leaf1);
  const std::string vtysh =
      "/usr/bin/vtysh --vty_socket /run/twin/m/leaf1 --config_dir /run/twin/m/leaf1";
  // A command: vtysh -c, its answer printed and recorded, its exit status kept.
  EXPECT_THAT(login, HasSubstr("  out=$(" + vtysh + " -c \"$SSH_ORIGINAL_COMMAND\" 2>&1)\n  rc=$?\n"));
  EXPECT_THAT(login, HasSubstr(">> /run/twin/m/leaf1/ssh/sessions.log\n  exit $rc\n"));
  // A session: vtysh under script(1), which records the terminal in the same log.
  EXPECT_THAT(login, HasSubstr("exec /usr/bin/script -q -f -e -a -c \"" + vtysh +
                               "\" /run/twin/m/leaf1/ssh/sessions.log\n"));
  EXPECT_THAT(login, Not(HasSubstr("nsenter")));
  auto in_container = leaf1;
  in_container.container.name = "tw-m-leaf1";
  EXPECT_THAT(twin::drivers::login_script(in_container),
              HasSubstr("read pid start < /run/twin/m/leaf1/container.pid || exit 255\n"));
  EXPECT_THAT(twin::drivers::login_script(in_container),
              HasSubstr("-c \"/usr/bin/nsenter --mount=/proc/$pid/ns/mnt -- /usr/bin/vtysh --vty_socket"));
  // The login is uid 0 in sshd's own passwd; a user of that name on the machine is replaced.
  EXPECT_EQ(twin::drivers::lab_passwd("root:x:0:0::/root:/bin/bash\nnetops:x:1000:1000::/home:/bin/sh\n",
                                      *p.mgmt),
            "root:x:0:0::/root:/bin/bash\nnetops:x:0:0:twin lab login:/run/twin/m/ssh:/bin/sh\n");
}

TEST(Mgmt, APasswordIsOnlyEverAHashAndOpensPasswordLoginBesideTheKey) {
  auto p = plan_of(kFabric + "mgmt: {subnet: 172.30.9.0/24, password: \"s3cret pass\"}\n");
  ASSERT_TRUE(p.mgmt);
  const std::string h = p.mgmt->password_hash;
  EXPECT_EQ(h.rfind("$y$", 0), 0u) << h;  // yescrypt
  EXPECT_TRUE(twin::password_matches("s3cret pass", h));
  EXPECT_FALSE(twin::password_matches("s3cret", h));
  // Nothing the plan keeps (the state file) holds the clear text.
  EXPECT_THAT(twin::plan::to_json(p).dump(), Not(HasSubstr("s3cret")));
  EXPECT_EQ(twin::drivers::lab_shadow(*p.mgmt), "admin:" + h + ":19000:0:99999:7:::\n");
  const std::string c = twin::drivers::sshd_config(*p.mgmt, *p.find("leaf1"));
  EXPECT_THAT(c, HasSubstr("PasswordAuthentication yes\n"));
  EXPECT_THAT(c, HasSubstr("PermitRootLogin yes\n"));  // the login is uid 0 in sshd's view
  EXPECT_THAT(c, HasSubstr("PubkeyAuthentication yes\n"));
  // A given hash is kept as given; without either, no password (key only, "*").
  auto given = plan_of(kFabric + "mgmt: {subnet: 172.30.9.0/24, password-hash: '" + h + "'}\n");
  EXPECT_EQ(given.mgmt->password_hash, h);
  auto none = plan_of(kFabric + "mgmt: {subnet: 172.30.9.0/24}\n");
  EXPECT_EQ(twin::drivers::lab_shadow(*none.mgmt), "admin:*:19000:0:99999:7:::\n");
  EXPECT_THAT(twin::drivers::sshd_config(*none.mgmt, *none.find("leaf1")),
              HasSubstr("PermitRootLogin prohibit-password\n"));
  // Refused: an empty password, a hash libcrypt does not take (or MD5), both at once.
  EXPECT_THAT(errors(kFabric + "mgmt: {subnet: 172.30.9.0/24, password: ''}\n"),
              HasSubstr("empty password"));
  EXPECT_THAT(errors(kFabric + "mgmt: {subnet: 172.30.9.0/24, password-hash: secret}\n"),
              HasSubstr("not a crypt(5) hash"));
  // A known method but a digest cut short: no password could match it.
  EXPECT_THAT(errors(kFabric + "mgmt: {subnet: 172.30.9.0/24, password-hash: '$6$abc$def'}\n"),
              HasSubstr("not a crypt(5) hash"));
  EXPECT_THAT(errors(kFabric + "mgmt: {subnet: 172.30.9.0/24, password-hash: '" +
                     h.substr(0, h.size() - 2) + "'}\n"),
              HasSubstr("not a crypt(5) hash"));
  EXPECT_THAT(
      errors(kFabric + "mgmt: {subnet: 172.30.9.0/24, password-hash: '$1$abc$defghijklmnop'}\n"),
      HasSubstr("a legacy hash (MD5 or DES crypt)"));
  EXPECT_THAT(
      errors(kFabric + "mgmt: {subnet: 172.30.9.0/24, password: a, password-hash: '" + h + "'}\n"),
      HasSubstr("both password and password-hash"));
}

// A VM whose image has a management NIC joins the bridge through its tap (no veth, no address
// set by twin) and takes its address by DHCP from twin's dnsmasq, which serves static leases only.
TEST(Mgmt, AVmJoinsTheBridgeThroughItsTapAndTakesItsAddressByDhcp) {
  const std::string lab = kFabric + R"(  - endpoints: [leaf2:swp2, vm1:eth1]
    addresses: {leaf2: 10.1.2.1/24, vm1: 10.1.2.10/24}
mgmt: {subnet: 172.30.9.0/24}
)";
  std::string text = lab;
  const std::string server = "  server1: {kind: host}";
  text.replace(text.find(server), server.size(), server + "\n  vm1: {kind: host, image: test-vm}");
  auto p = plan_of(text);
  ASSERT_TRUE(p.mgmt);
  EXPECT_EQ(p.mgmt->dhcp_address, "172.30.9.254/24");  // the subnet's last usable address
  const auto& vm = *p.find("vm1");
  EXPECT_EQ(vm.mgmt_address, "172.30.9.5/24");  // after the FRR nodes, in node order
  EXPECT_EQ(vm.mgmt_port, "");                  // no veth: its tap is the port
  EXPECT_EQ(vm.vm.mgmt_netns, "tw-m.mgmt");
  EXPECT_THAT(vm.vm.cmdline, HasSubstr(" twin.if=" + vm.vm.mgmt_mac + ",mgmt0,1500,dhcp "));
  // The tap goes to the management namespace and joins the bridge; it is not renamed mgmt0.
  EXPECT_THAT(twin::wiring::tap_move_script(vm),
              HasSubstr("link set dev " + vm.vm.mgmt_tap + " netns tw-m.mgmt\n"));
  EXPECT_THAT(twin::wiring::tap_up_script(vm), Not(HasSubstr("mgmt0")));
  EXPECT_EQ(twin::wiring::mgmt_vm_port_script(vm),
            "link set " + vm.vm.mgmt_tap + " master br0 up\n");
  std::vector<const twin::plan::Node*> all;
  for (const auto& n : p.nodes) all.push_back(&n);
  EXPECT_THAT(twin::wiring::mgmt_root_script(p, all, true), Not(HasSubstr("tw-m-vm1")));
  EXPECT_EQ(twin::wiring::mgmt_node_script(p, vm), "");
  EXPECT_THAT(twin::wiring::mgmt_bridge_script(p, all, true),
              HasSubstr("address add 172.30.9.254/24 dev br0\n"));
  EXPECT_EQ(twin::wiring::mgmt_dhcp_hosts(p), vm.vm.mgmt_mac + ",172.30.9.5\n");
  const auto argv = twin::wiring::mgmt_dhcp_argv(*p.mgmt, "/run/twin/m/mgmt-dhcp-hosts");
  for (const char* want : {"--port=0", "--interface=br0", "--listen-address=172.30.9.254",
                           "--dhcp-range=172.30.9.0,static,infinite", "--dhcp-option=option:router",
                           "--dhcp-hostsfile=/run/twin/m/mgmt-dhcp-hosts", "--leasefile-ro",
                           "--keep-in-foreground", "--conf-file=/dev/null"})
    EXPECT_NE(std::find(argv.begin(), argv.end(), want), argv.end()) << want;
  // The lab's login does not reach a VM: the inventories name it, only the JSON lists it.
  auto ansible = twin::graph::inventory(p, "ansible");
  ASSERT_TRUE(ansible);
  EXPECT_THAT(*ansible, HasSubstr("# VM vm1 at 172.30.9.5: not listed"));
  EXPECT_THAT(*ansible, Not(HasSubstr("vm1: {ansible_host")));
  auto j = nlohmann::json::parse(*twin::graph::inventory(p, "json"));
  EXPECT_EQ(j["nodes"].back()["name"], "vm1");
  EXPECT_EQ(j["nodes"].back()["login"], "image");
  EXPECT_EQ(j["nodes"][0]["login"], "lab");
  // Without VMs no DHCP server and no reserved address.
  EXPECT_EQ(plan_of(kFabric + "mgmt: {subnet: 172.30.9.0/24}\n").mgmt->dhcp_address, "");
  // The server's address is nobody else's.
  std::string taken = text;
  taken.replace(taken.find("mgmt-address: 172.30.9.2"), 24, "mgmt-address: 172.30.9.254");
  EXPECT_THAT(errors(taken), HasSubstr("is already twin's DHCP server for the lab's VMs"));
}

// FRR's answers in a node's session log, as script(1) recorded an Ansible network_cli session
// (prompts, the echoed lines, carriage returns, a bracketed-paste sequence) and a command
// given to ssh: every answer FRR marks with "% " is a refusal, named with the line that drew it.
TEST(Mgmt, RefusalsInASessionLogNameTheLineAndFrrsAnswer) {
  const std::string log =
      "leaf1# terminal length 0\r\n\x1b[?2004hleaf1# configure terminal\r\n"
      "leaf1(config)# route-map TAG permit 10\r\n"
      "leaf1(config-route-map)#  set community 70000:1\r\n"
      "% Malformed communities attribute '70000:1'\r\n"
      "leaf1(config-route-map)# exit\r\nleaf1(config)# end\r\nleaf1# \r\n"
      "leaf1# show bgp nonsense\n% Unknown command: show bgp nonsense\n";
  EXPECT_THAT(twin::replay::refusals_in_session(log),
              ::testing::ElementsAre(
                  "`set community 70000:1`: Malformed communities attribute '70000:1'",
                  "`show bgp nonsense`: Unknown command: show bgp nonsense"));
  EXPECT_TRUE(twin::replay::refusals_in_session("leaf1# show version\nFRRouting 8.4.4\n").empty());
}

TEST(Inventory, AnsibleGroupsByRoleWithTheLabsKeyAndNetworkCli) {
  auto p = plan_of(kFabric + "mgmt: {subnet: 172.30.9.0/24}\n");
  auto a = twin::graph::inventory(p, "ansible");
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_THAT(*a, HasSubstr("    ansible_connection: ansible.netcommon.network_cli\n"
                            "    ansible_network_os: frr.frr.frr\n"
                            "    ansible_ssh_private_key_file: /run/twin/m/ssh/id_ed25519\n"));
  EXPECT_THAT(*a, HasSubstr("    leaves:\n      hosts:\n        leaf1: {ansible_host: 172.30.9.4}\n"
                            "        leaf2: {ansible_host: 172.30.9.2}\n"));
  EXPECT_THAT(*a, HasSubstr("    spines:\n      hosts:\n        spine1: {ansible_host: 172.30.9.3}\n"));
  EXPECT_THAT(*a, Not(HasSubstr("server1")));
  auto s = twin::graph::inventory(p, "ssh-config");
  ASSERT_TRUE(s);
  EXPECT_THAT(*s, HasSubstr("Host leaf2\n  HostName 172.30.9.2\n  User admin\n  IdentityFile "
                            "/run/twin/m/ssh/id_ed25519\n  IdentitiesOnly yes\n  UserKnownHostsFile "
                            "/run/twin/m/ssh/known_hosts\n  StrictHostKeyChecking yes\n"));
  auto n = twin::graph::inventory(p, "nornir");
  ASSERT_TRUE(n);
  EXPECT_THAT(*n, HasSubstr("spine1:\n  hostname: 172.30.9.3\n  username: admin\n  platform: frr\n"
                            "  groups: [spines]\n  data: {role: spine, asn: 65000}\n"));
  auto j = twin::graph::inventory(p, "json");
  ASSERT_TRUE(j);
  auto parsed = nlohmann::json::parse(*j);
  EXPECT_EQ(parsed["subnet"], "172.30.9.0/24");
  ASSERT_EQ(parsed["nodes"].size(), 3u);
  EXPECT_EQ(parsed["nodes"][1]["name"], "leaf1");
  EXPECT_EQ(parsed["nodes"][1]["group"], "leaves");
  auto bad = twin::graph::inventory(p, "csv");
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message, HasSubstr("expected ansible, nornir, ssh-config or json"));
  std::string plain = kFabric;
  plain.replace(plain.find(", mgmt-address: 172.30.9.2"), 26, "");
  auto none = twin::graph::inventory(plan_of(plain), "ansible");
  ASSERT_FALSE(none);
  EXPECT_THAT(none.error().message, HasSubstr("has no management network: add `mgmt: true`"));
}

}  // namespace
