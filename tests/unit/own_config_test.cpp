// Unit tests for labs of the users' own FRR configs: the frr.conf reader (topology/frr_conf),
// the loader's checks of what a config needs (own_config), and what the planner expects of
// such nodes — daemons, profile, numbered/iBGP/peer-group sessions, OSPF adjacencies, BFD
// peers — instead of a session per link.
#include "twin/topology/own_config.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>

#include "twin/plan/plan.hpp"
#include "twin/topology/frr_conf.hpp"
#include "twin/topology/frr_grammar.hpp"
#include "twin/topology/loader.hpp"
#include "twin/validate/validator.hpp"
#include "validators/reachability/reachability.hpp"
#include "validators/routes/routes.hpp"

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using twin::topology::parse_frr_conf;

namespace {

const char* kLeaf = R"(frr defaults datacenter
hostname leaf1
!
interface eth1
 ip address 10.0.12.1/30
 ip ospf area 0
 ip ospf cost 50
exit
!
interface eth3
 ip address 192.168.1.1/24
 ip ospf area 0.0.0.1
 ip ospf passive
exit
!
interface lo
 ip address 10.0.255.1/32
exit
!
router bgp 65001
 bgp router-id 10.0.255.1
 neighbor SPINES peer-group
 neighbor SPINES remote-as external
 neighbor SPINES bfd
 neighbor 10.0.12.2 peer-group SPINES
 neighbor swp9 interface peer-group SPINES
 neighbor 10.0.255.9 remote-as internal
 neighbor 10.99.0.1 remote-as 65099
 neighbor 10.99.0.1 shutdown
 !
 address-family ipv4 unicast
  network 10.0.255.1/32
 exit-address-family
exit
!
router ospf
 ospf router-id 10.0.255.1
 network 10.0.255.1/32 area 0
 passive-interface default
 no passive-interface eth1
exit
!
ip route 10.50.0.0/16 10.0.12.2
ip route 0.0.0.0/0 blackhole
!
bfd
 peer 10.0.12.2 interface eth1
 exit
exit
)";

TEST(FrrConf, ReadsWhatTheConfigSetsUpWithLines) {
  auto c = parse_frr_conf(kLeaf, "/x/leaf1.conf");
  EXPECT_EQ(c.file, "/x/leaf1.conf");
  EXPECT_EQ(c.defaults, "datacenter");
  EXPECT_EQ(c.hostname, "leaf1");
  EXPECT_EQ(c.addresses["eth1"], std::vector<std::string>{"10.0.12.1/30"});
  EXPECT_EQ(c.addresses["lo"], std::vector<std::string>{"10.0.255.1/32"});
  // Each daemon at the first line that needs it.
  EXPECT_EQ(c.needs.at("ospfd"), 6);
  EXPECT_EQ(c.needs.at("bgpd"), 20);
  EXPECT_EQ(c.needs.at("bfdd"), 24);
  EXPECT_EQ(c.needs.at("staticd"), 43);
  EXPECT_EQ(c.needs.count("zebra"), 0u);
  ASSERT_TRUE(c.bgp_asn);
  EXPECT_EQ(*c.bgp_asn, 65001u);
  EXPECT_EQ(c.bgp_router_id, "10.0.255.1");
  ASSERT_EQ(c.bgp_neighbors.size(), 4u);  // the peer group itself is not a neighbor
  EXPECT_EQ(c.bgp_neighbors[0].peer, "10.0.12.2");
  EXPECT_EQ(c.bgp_neighbors[0].remote_as, "external");  // from its group
  EXPECT_TRUE(c.bgp_neighbors[0].bfd);                  // from its group
  EXPECT_EQ(c.bgp_neighbors[0].line, 25);
  EXPECT_EQ(c.bgp_neighbors[1].peer, "swp9");
  EXPECT_TRUE(c.bgp_neighbors[1].unnumbered);
  EXPECT_EQ(c.bgp_neighbors[2].remote_as, "internal");
  EXPECT_EQ(c.bgp_neighbors[3].remote_as, "65099");
  EXPECT_TRUE(c.bgp_neighbors[3].shutdown);
  ASSERT_EQ(c.ospf_interfaces.size(), 2u);
  EXPECT_EQ(c.ospf_interfaces[0].interface, "eth1");
  EXPECT_EQ(c.ospf_interfaces[0].area, "0.0.0.0");  // FRR accepts "0", prints dotted
  EXPECT_EQ(c.ospf_interfaces[1].area, "0.0.0.1");
  EXPECT_EQ(c.ospf_costs.at("eth1"), 50);
  EXPECT_THAT(c.ospf_passive, ElementsAre("eth3"));
  EXPECT_TRUE(c.ospf_passive_default);
  EXPECT_THAT(c.ospf_active, ElementsAre("eth1"));
  ASSERT_EQ(c.ospf_networks.size(), 1u);
  EXPECT_EQ(c.ospf_networks[0].prefix, "10.0.255.1/32");
  EXPECT_EQ(c.ospf_router_id, "10.0.255.1");
  ASSERT_EQ(c.static_routes.size(), 2u);
  EXPECT_EQ(c.static_routes[0].via, "10.0.12.2");
  EXPECT_EQ(c.static_routes[1].interface, "blackhole");
  ASSERT_EQ(c.bfd_peers.size(), 1u);
  EXPECT_EQ(c.bfd_peers[0].peer, "10.0.12.2");
  EXPECT_EQ(c.bfd_peers[0].interface, "eth1");
  EXPECT_TRUE(c.unsupported.empty());
}

TEST(FrrConf, DaemonForEachTopLevelCommand) {
  using twin::topology::daemon_for_command;
  EXPECT_EQ(daemon_for_command("router bgp 65000"), "bgpd");
  EXPECT_EQ(daemon_for_command("router ospf"), "ospfd");
  EXPECT_EQ(daemon_for_command("router ospf6"), "ospf6d");
  EXPECT_EQ(daemon_for_command("router isis CORE"), "isisd");
  EXPECT_EQ(daemon_for_command("ip route 10.0.0.0/8 10.0.0.1"), "staticd");
  EXPECT_EQ(daemon_for_command("ipv6 route ::/0 fe80::1 eth1"), "staticd");
  EXPECT_EQ(daemon_for_command("bfd"), "bfdd");
  EXPECT_EQ(daemon_for_command("hostname r1"), "");
}

TEST(FrrConf, AreasAreDottedQuads) {
  using twin::topology::normalize_area;
  EXPECT_EQ(normalize_area("0"), "0.0.0.0");
  EXPECT_EQ(normalize_area("1"), "0.0.0.1");
  EXPECT_EQ(normalize_area("4294967295"), "255.255.255.255");
  EXPECT_EQ(normalize_area("4294967296"), "");
  EXPECT_EQ(normalize_area("0.0.0.10"), "0.0.0.10");
  EXPECT_EQ(normalize_area("10.0.0.0/8"), "");
  EXPECT_EQ(normalize_area("backbone"), "");
}

TEST(FrrConf, VrfLinesAreReportedAsUnsupported) {
  auto c = parse_frr_conf("router bgp 65001 vrf RED\n neighbor 1.1.1.1 remote-as 1\nexit\n"
                          "interface eth1 vrf RED\nexit\n",
                          "r.conf");
  ASSERT_EQ(c.unsupported.size(), 2u);
  EXPECT_EQ(c.unsupported[0].line, 1);
  EXPECT_EQ(c.unsupported[1].line, 4);
  EXPECT_TRUE(c.bgp_neighbors.empty());  // the VRF's neighbors are not the default instance's
}

// A folder with a lab whose nodes boot the given configs.
class OwnConfigLab : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("twin-own-" + std::to_string(getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  void write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
  }
  std::optional<twin::topology::Topology> load(const std::string& yaml, twin::Diagnostics& d) {
    return twin::topology::load_topology_text(yaml, (dir_ / "lab.yaml").string(), dir_.string(),
                                              d);
  }
  twin::plan::Plan plan(const std::string& yaml) {
    twin::Diagnostics d;
    auto t = load(yaml, d);
    if (!t) {
      ADD_FAILURE() << "lab did not load";
      for (const auto& i : d.items()) ADD_FAILURE() << i.message;
      return {};
    }
    return twin::plan::make_plan(*t);
  }
  fs::path dir_;
};

const char* kTwoRoutersNoLoopback = R"(version: 1
name: two
nodes:
  r1: {config: r1.conf}
  r2: {config: r2.conf}
links:
  - endpoints: [r1:eth1, r2:eth1]
)";

const char* kTwoRouters = R"(version: 1
name: ibgp
nodes:
  r1: {loopback: 10.0.255.1/32, config: r1.conf}
  r2: {loopback: 10.0.255.2/32, config: r2.conf}
links:
  - endpoints: [r1:eth1, r2:eth1]
)";

TEST_F(OwnConfigLab, NumberedAndLoopbackIbgpSessionsComeFromTheConfigNotTheLink) {
  write("r1.conf",
        "interface eth1\n ip address 10.0.12.1/30\n ip ospf area 0\nexit\n"
        "interface lo\n ip ospf area 0\nexit\n"
        "router bgp 65000\n neighbor 10.0.255.2 remote-as internal\n"
        " neighbor 10.0.255.2 update-source lo\n neighbor 10.99.0.1 remote-as 65099\nexit\n"
        "router ospf\nexit\n");
  write("r2.conf",
        "frr defaults datacenter\n"
        "interface eth1\n ip address 10.0.12.2/30\n ip ospf area 0\nexit\n"
        "interface lo\n ip ospf area 0\nexit\n"
        "router bgp 65000\n neighbor 10.0.255.1 remote-as 65000\nexit\n");
  auto p = plan(kTwoRouters);
  ASSERT_EQ(p.sessions.size(), 2u);  // the neighbor outside the lab is expected of nobody
  EXPECT_EQ(p.sessions[0].node, "r1");
  EXPECT_EQ(p.sessions[0].peer_node, "r2");
  EXPECT_EQ(p.sessions[0].peer_address, "10.0.255.2");
  EXPECT_EQ(p.sessions[0].interface, "");  // a loopback session: no shared link
  EXPECT_TRUE(p.sessions[0].ibgp);
  EXPECT_EQ(p.sessions[1].peer_address, "10.0.255.1");
  EXPECT_TRUE(p.sessions[1].ibgp);  // remote-as equal to its own ASN
  // No unnumbered fabric on a link no config runs BGP on.
  EXPECT_FALSE(p.find("r1")->interfaces[0].fabric);
  // Daemons: the image's (zebra) plus what the config needs, in FRR's start order; no staticd
  // without a static route.
  EXPECT_THAT(p.find("r1")->daemons, ElementsAre("zebra", "bgpd", "ospfd"));
  EXPECT_EQ(p.find("r1")->daemon_reasons.at("ospfd"), (dir_ / "r1.conf").string() + ":3");
  // FRR's default profile unless the config names one.
  EXPECT_EQ(p.find("r1")->frr_profile, "traditional");
  EXPECT_EQ(p.find("r2")->frr_profile, "datacenter");
  ASSERT_EQ(p.adjacencies.size(), 2u);
  EXPECT_EQ(p.adjacencies[0].interface, "eth1");
  EXPECT_EQ(p.adjacencies[0].peer_interface, "eth1");
}

TEST_F(OwnConfigLab, NoAdjacencyWithAPassiveEndOrAnotherOspfVersion) {
  write("r1.conf", "interface eth1\n ip address 10.0.12.1/30\n ip ospf area 0\n ip ospf passive\n"
                   "exit\nrouter ospf\nexit\n");
  write("r2.conf", "interface eth1\n ip address 10.0.12.2/30\n ipv6 ospf6 area 0\nexit\n"
                   "router ospf6\nexit\n");
  auto p = plan(kTwoRouters);
  EXPECT_TRUE(p.adjacencies.empty());
  EXPECT_TRUE(p.sessions.empty());
  EXPECT_THAT(p.find("r2")->daemons, ElementsAre("zebra", "ospf6d"));  // no router bgp: no bgpd
}

TEST_F(OwnConfigLab, BfdPeersWhereBfddRuns) {
  write("r1.conf", "interface eth1\n ip address 10.0.12.1/30\nexit\n"
                   "router bgp 65001\n neighbor 10.0.12.2 remote-as 65002\n"
                   " neighbor 10.0.12.2 bfd\nexit\n");
  write("r2.conf", "interface eth1\n ip address 10.0.12.2/30\nexit\n"
                   "router bgp 65002\n neighbor 10.0.12.1 remote-as 65001\nexit\n");
  auto p = plan(kTwoRouters);
  ASSERT_EQ(p.bfd_peers.size(), 1u);
  EXPECT_EQ(p.bfd_peers[0].node, "r1");
  EXPECT_EQ(p.bfd_peers[0].peer_node, "r2");
  EXPECT_EQ(p.bfd_peers[0].interface, "eth1");
  EXPECT_THAT(p.find("r1")->daemons, ElementsAre("zebra", "bgpd", "bfdd"));
}

TEST_F(OwnConfigLab, AVrfIsRefusedAtItsLine) {
  write("r1.conf", "hostname r1\nrouter bgp 65001 vrf RED\nexit\n");
  write("r2.conf", "hostname r2\n");
  twin::Diagnostics d;
  EXPECT_FALSE(load(kTwoRouters, d));
  ASSERT_EQ(d.items().size(), 1u);
  EXPECT_EQ(d.items()[0].file, (dir_ / "r1.conf").string());
  EXPECT_EQ(d.items()[0].line, 2);
  EXPECT_THAT(d.items()[0].message, HasSubstr("VRFs are not supported"));
}

// FRR 8.4's bgpd takes `neighbor X bfd` without bfdd (`vtysh -b` exits 0): BFD just does not
// run. Not a refusal, a note naming the line, the daemons file's line and what will not run.
TEST_F(OwnConfigLab, BfdWithBfddSwitchedOffIsANoteAndNoBfdIsExpected) {
  write("r1.conf",
        "interface eth1\n ip address 10.0.12.1/30\nexit\n"
        "router bgp 65001\n neighbor 10.0.12.2 remote-as 65002\n"
        " neighbor 10.0.12.2 bfd\nexit\nbfd\n peer 10.0.12.2\n exit\nexit\n");
  write("r2.conf",
        "interface eth1\n ip address 10.0.12.2/30\nexit\n"
        "router bgp 65002\n neighbor 10.0.12.1 remote-as 65001\nexit\n");
  twin::Diagnostics d;
  auto t = load(kTwoRouters, d);
  ASSERT_TRUE(t);
  twin::Diagnostics d2;
  t->nodes[0].daemon_settings = {{"bgpd", true, "/etc/daemons", {2, 1}},
                                 {"bfdd", false, "/etc/daemons", {7, 1}}};
  twin::topology::read_own_configs(*t, d2);
  EXPECT_TRUE(d2.items().empty()) << d2.items()[0].message;
  auto p = twin::plan::make_plan(*t);
  EXPECT_THAT(p.find("r1")->daemons, ElementsAre("zebra", "bgpd"));
  EXPECT_TRUE(p.bfd_peers.empty());
  EXPECT_TRUE(p.find("r1")->bfd_peers.empty());
  EXPECT_EQ(p.sessions.size(), 2u);  // BGP itself runs: the session, seen from each end
  ASSERT_EQ(p.notes.size(), 1u);
  EXPECT_EQ(p.notes[0].severity, "warning");
  EXPECT_EQ(p.notes[0].node, "r1");
  EXPECT_EQ(p.notes[0].source, (dir_ / "r1.conf").string() + ":6");
  EXPECT_EQ(p.notes[0].text,
            "`neighbor 10.0.12.2 bfd` (and 1 more line) needs bfdd, but /etc/daemons:7 switches "
            "bfdd off: BFD will not run on r1");
}

// A daemon's own lines with that daemon off: `vtysh -b` skips them (and exits 0), so nothing of
// them is expected; staticd runs whatever the file says (FRR's init starts it).
TEST_F(OwnConfigLab, ADaemonTheFileDoesNotNameRunsNothingOfItsLines) {
  write("r1.conf",
        "hostname r1\n!\ninterface eth1\n ip address 10.0.12.1/30\n ip ospf area 0\n"
        "exit\nrouter ospf\nexit\nip route 10.0.0.0/8 blackhole\n");
  write("r2.conf",
        "interface eth1\n ip address 10.0.12.2/30\n ip ospf area 0\nexit\n"
        "router ospf\nexit\n");
  twin::Diagnostics d;
  auto t = load(kTwoRouters, d);
  ASSERT_TRUE(t);
  t->nodes[0].daemon_settings = {{"zebra", true, "/etc/daemons", {1, 1}}};
  auto p = twin::plan::make_plan(*t);
  EXPECT_THAT(p.find("r1")->daemons, ElementsAre("zebra", "staticd"));
  EXPECT_TRUE(p.find("r1")->ospf_interfaces.empty());
  EXPECT_TRUE(p.adjacencies.empty());  // r2's OSPF has nobody to meet on eth1
  ASSERT_EQ(p.notes.size(), 1u);
  EXPECT_EQ(p.notes[0].source, (dir_ / "r1.conf").string() + ":5");
  EXPECT_EQ(p.notes[0].text,
            "`ip ospf area 0` (and 1 more line) needs ospfd, but the node's daemons "
            "(/etc/daemons) do not include ospfd: OSPF will not run on r1");
}

}  // namespace

TEST(FrrConf, WhatTheConfigOriginatesAndItsEbgpPolicy) {
  auto c = parse_frr_conf(
      "router bgp 65001\n"
      " no bgp ebgp-requires-policy\n"
      " bgp bestpath as-path multipath-relax\n"
      " neighbor UP peer-group\n"
      " neighbor UP remote-as external\n"
      " neighbor 10.0.12.2 peer-group UP\n"
      " neighbor 10.0.13.2 remote-as 65003\n"
      " redistribute static\n"  // no address family: IPv4 unicast
      " !\n"
      " address-family ipv4 unicast\n"
      "  network 10.1.0.7/24\n"
      "  neighbor UP route-map IN in\n"
      "  neighbor 10.0.13.2 route-map OUT out\n"
      " exit-address-family\n"
      " !\n"
      " address-family ipv6 unicast\n"
      "  redistribute connected\n"
      " exit-address-family\n"
      " address-family l2vpn evpn\n"
      "  redistribute connected\n"  // not unicast: no IP prefixes
      " exit-address-family\n"
      "exit\n"
      "router ospf\n redistribute connected\nexit\n",
      "r.conf");
  EXPECT_EQ(c.ebgp_requires_policy, std::optional<bool>(false));
  EXPECT_TRUE(c.bgp_multipath_relax);
  EXPECT_THAT(c.bgp_networks, ElementsAre("10.1.0.0/24"));  // as FRR stores it: host bits cleared
  EXPECT_THAT(c.redistribute["bgp4"], ElementsAre("static"));
  EXPECT_THAT(c.redistribute["bgp6"], ElementsAre("connected"));
  EXPECT_THAT(c.redistribute["ospf"], ElementsAre("connected"));
  EXPECT_EQ(c.redistribute.size(), 3u);
  ASSERT_EQ(c.bgp_neighbors.size(), 2u);
  EXPECT_TRUE(c.bgp_neighbors[0].route_map_in);  // from its group
  EXPECT_FALSE(c.bgp_neighbors[0].route_map_out);
  EXPECT_FALSE(c.bgp_neighbors[1].route_map_in);
  EXPECT_TRUE(c.bgp_neighbors[1].route_map_out);
  EXPECT_FALSE(parse_frr_conf("router bgp 1\nexit\n", "r.conf").ebgp_requires_policy.has_value());
}

// topologies/ebgp-diamond: numbered eBGP only, no IGP. Routes follow the configured sessions
// (AS hops), loopbacks come from the configs, and ECMP follows multipath-relax.
class EbgpDiamond : public ::testing::Test {
 protected:
  static twin::plan::Plan load(const std::string& file = std::string(TWIN_DATA_DIR) + "/topologies/ebgp-diamond/lab.yaml") {
    twin::Diagnostics d;
    auto t = twin::topology::load_topology(file, d);
    if (!t) throw std::runtime_error(d.format());
    return twin::plan::make_plan(*t);
  }
  static int ecmp(const twin::plan::PathTable& t, const std::string& n, const std::string& o) {
    auto it = t.find({n, o});
    return it == t.end() ? 0 : it->second.ecmp;
  }
};

TEST_F(EbgpDiamond, RoutesFollowTheConfiguredSessionsAndMultipathRelax) {
  auto p = load();
  ASSERT_EQ(p.sessions.size(), 8u);
  for (const auto& s : p.sessions) EXPECT_TRUE(s.carries_routes) << s.node << " " << s.key();
  EXPECT_THAT(p.find("r1")->loopbacks, ElementsAre("10.0.255.1/32"));  // the config's lo
  EXPECT_THAT(p.find("r1")->advertised, ElementsAre("10.0.255.1/32", "10.1.0.0/24"));
  // r2 redistributes connected: its loopback and both /30s.
  EXPECT_THAT(p.find("r2")->advertised,
              ElementsAre("10.0.12.0/30", "10.0.24.0/30", "10.0.255.2/32"));
  EXPECT_EQ(p.prefixes.size(), 6u);  // four loopbacks, two server subnets
  auto paths = twin::plan::expected_paths(p, 4);
  EXPECT_EQ(ecmp(paths, "r1", "r4"), 2);  // via 65002 and 65003: relax lets both in
  EXPECT_EQ(ecmp(paths, "r4", "r1"), 1);  // no relax on r4: one neighboring AS
  EXPECT_EQ(ecmp(paths, "r2", "r3"), 1);
  EXPECT_EQ(paths.at({"r2", "r3"}).as_path_len, 2);
  EXPECT_EQ(ecmp(paths, "r1", "r2"), 1);
  // Path MTU follows the same sessions: one AS hop per link.
  const auto& r1 = *p.find("r1");
  EXPECT_EQ(twin::plan::forwarding_cost(p, r1, r1.interfaces[0]), 10);  // eth1 to r2
  EXPECT_EQ(twin::plan::forwarding_cost(p, r1, r1.interfaces[2]), 0);   // eth3 to h1
}

TEST_F(EbgpDiamond, WithoutPolicyTheTraditionalProfileCarriesNoEbgpRoutes) {
  // The same configs without `no bgp ebgp-requires-policy`: FRR's traditional profile then
  // sends and accepts nothing on eBGP sessions without route-maps (RFC 8212).
  const fs::path dir = fs::temp_directory_path() / ("twin-diamond-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::copy(std::string(TWIN_DATA_DIR) + "/topologies/ebgp-diamond", dir, fs::copy_options::recursive);
  for (const char* r : {"r1", "r2", "r3", "r4"}) {
    const fs::path f = dir / "configs" / (std::string(r) + ".conf");
    std::ifstream in(f);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto at = text.find(" no bgp ebgp-requires-policy\n");
    ASSERT_NE(at, std::string::npos) << r;
    text.erase(at, std::string(" no bgp ebgp-requires-policy\n").size());
    std::ofstream(f) << text;
  }
  auto p = load((dir / "lab.yaml").string());
  fs::remove_all(dir);
  ASSERT_EQ(p.sessions.size(), 8u);  // still expected Established
  for (const auto& s : p.sessions) EXPECT_FALSE(s.carries_routes) << s.node << " " << s.key();
  auto paths = twin::plan::expected_paths(p, 4);
  EXPECT_EQ(ecmp(paths, "r1", "r4"), 0);
  EXPECT_EQ(ecmp(paths, "r2", "r1"), 0);
  EXPECT_THAT(twin::plan::render_plan_text(p), HasSubstr("no routes from r2: an eBGP end without a route-map that way"));
}

// `d` holds exactly one problem, at `file`:`line`, whose message contains `text`.
void expect_one_problem(const twin::Diagnostics& d, const fs::path& file, int line,
                        const std::string& text) {
  ASSERT_EQ(d.items().size(), 1u) << d.format();
  EXPECT_EQ(d.items()[0].file, file.string());
  EXPECT_EQ(d.items()[0].line, line);
  EXPECT_THAT(d.items()[0].message, HasSubstr(text));
}

const char* kRouterAndHost = R"(version: 1
name: gw
nodes:
  r1: {config: r1.conf}
  h1: {kind: host}
links:
  - endpoints: [r1:eth1, h1:eth0]
    addresses: {h1: 10.1.0.10/24}
)";

TEST_F(OwnConfigLab, AHostsGatewayIsItsRoutersConfigAddress) {
  write("r1.conf", "interface eth1\n ip address 10.1.0.1/24\nexit\n");
  auto p = plan(kRouterAndHost);
  const auto* h1 = p.find("h1");
  ASSERT_NE(h1, nullptr);
  ASSERT_EQ(h1->routes.size(), 1u);
  EXPECT_EQ(h1->routes[0].destination, "default");
  EXPECT_EQ(h1->routes[0].via, "10.1.0.1");
}

TEST_F(OwnConfigLab, AConfigAddressAnotherNodeHoldsIsReportedAtItsLine) {
  // r1's frr.conf gives its port the host's own address.
  write("r1.conf", "interface eth1\n ip address 10.1.0.1/24\n ip address 10.1.0.10/24\nexit\n");
  twin::Diagnostics d;
  EXPECT_FALSE(load(kRouterAndHost, d));
  bool found = false;
  for (const auto& i : d.items())
    if (i.message.find("address 10.1.0.10 is given to both ends of the link: h1:eth0") !=
        std::string::npos) {
      found = true;
      EXPECT_EQ(i.file, (dir_ / "r1.conf").string());
      EXPECT_EQ(i.line, 3);
      EXPECT_EQ(i.field, "node r1");
    }
  EXPECT_TRUE(found) << d.format();
}

TEST_F(OwnConfigLab, TwoConfigsGivingTheSameAddressAreReported) {
  write("r1.conf", "interface eth1\n ip address 10.0.12.1/30\nexit\n");
  write("r2.conf", "interface eth1\n ip address 10.0.12.1/30\nexit\n");
  twin::Diagnostics d;
  EXPECT_FALSE(load(kTwoRouters, d));
  expect_one_problem(d, dir_ / "r2.conf", 2,
                     "is given to both ends of the link: r1:eth1 (" + (dir_ / "r1.conf").string() +
                         ":2:2)");
}

TEST_F(OwnConfigLab, TopologyAsnOrRouterIdContradictingTheConfigIsAnError) {
  write("r1.conf", "router bgp 65001\n bgp router-id 10.0.255.1\nexit\n");
  write("r2.conf", "router bgp 65002\nexit\n");
  twin::Diagnostics d;
  EXPECT_FALSE(load(R"(version: 1
name: x
nodes:
  r1: {asn: 65009, router-id: 10.9.9.9, config: r1.conf}
  r2: {asn: 65002, config: r2.conf}
links:
  - endpoints: [r1:eth1, r2:eth1]
)",
                    d));
  ASSERT_EQ(d.items().size(), 2u) << d.format();
  EXPECT_EQ(d.items()[0].field, "nodes.r1.asn");
  EXPECT_THAT(d.items()[0].message,
              HasSubstr("asn 65009 contradicts the config's `router bgp 65001` (" +
                        (dir_ / "r1.conf").string() + ":1)"));
  EXPECT_EQ(d.items()[1].field, "nodes.r1.router-id");
  EXPECT_THAT(d.items()[1].message, HasSubstr("`bgp router-id 10.0.255.1`"));
}

TEST_F(OwnConfigLab, TwoConfigsGivingTheSameLoopbackMakeItAnycast) {
  // Each router's own config gives it on lo: the lab says it is anycast (issue 46; it was an
  // error before, reported here and again by the topology's loopback check).
  write("r1.conf", "interface lo\n ip address 10.0.255.1/32\nexit\n");
  write("r2.conf", "interface lo\n ip address 10.0.255.7/32\n ip address 10.0.255.1/32\nexit\n");
  twin::Diagnostics d;
  auto t = load(R"(version: 1
name: x
nodes:
  r1: {config: r1.conf}
  r2: {config: r2.conf}
links:
  - endpoints: [r1:eth1, r2:eth1]
)",
                d);
  ASSERT_TRUE(t) << d.format();
  ASSERT_EQ(t->anycast.size(), 1u);
  EXPECT_EQ(t->anycast[0].prefix.str(), "10.0.255.1/32");
  EXPECT_FALSE(t->anycast[0].declared);
  EXPECT_THAT(t->anycast[0].holders, ElementsAre("r1", "r2"));
}

TEST_F(OwnConfigLab, OspfV2AndV3OnOneLinkAreOneNextHop) {
  for (int i : {1, 2, 3}) {
    std::string r = std::to_string(i);
    std::string text;
    for (int e : {1, 2})
      text += "interface eth" + std::to_string(e) + "\n ip ospf area 0\n ipv6 ospf6 area 0\nexit\n";
    text += "interface lo\n ip address 10.0.255." + r + "/32\n ipv6 address fd00::" + r +
            "/128\n ip ospf area 0\n ipv6 ospf6 area 0\nexit\nrouter ospf\nexit\nrouter ospf6\nexit\n";
    write("r" + r + ".conf", text);
  }
  auto p = plan(R"(version: 1
name: line
nodes:
  r1: {config: r1.conf}
  r2: {config: r2.conf}
  r3: {config: r3.conf}
links:
  - endpoints: [r1:eth1, r2:eth1]
  - endpoints: [r2:eth2, r3:eth1]
)");
  EXPECT_EQ(p.adjacencies.size(), 8u);  // v2 and v3, both ends of both links
  auto paths = twin::plan::expected_paths(p, 4);
  ASSERT_TRUE(paths.count({"r1", "r3"}));
  EXPECT_EQ(paths.at({"r1", "r3"}).ecmp, 1);
}

// FRR's abbreviations (frr_grammar.hpp): each line read as FRR's CLI reads it.
std::string resolved(twin::topology::ConfNode node, const std::string& line) {
  std::vector<std::string> w;
  std::istringstream in(line);
  for (std::string x; in >> x;) w.push_back(x);
  auto r = twin::topology::resolve_keywords(node, w);
  std::string out;
  for (const auto& x : r.words) out += (out.empty() ? "" : " ") + x;
  return r.resolved ? out : "! " + r.problem;
}

TEST(FrrGrammar, AUniquePrefixIsItsKeyword) {
  using twin::topology::ConfNode;
  EXPECT_EQ(resolved(ConfNode::kConfig, "int r1-eth0"), "interface r1-eth0");
  EXPECT_EQ(resolved(ConfNode::kConfig, "router bg 65001"), "router bgp 65001");
  EXPECT_EQ(resolved(ConfNode::kInterface, "ip addr 10.0.1.1/24"), "ip address 10.0.1.1/24");
  EXPECT_EQ(resolved(ConfNode::kBgp, "nei 10.0.0.2 remote-as 65002"),
            "neighbor 10.0.0.2 remote-as 65002");
  EXPECT_EQ(resolved(ConfNode::kBgp, "nei swp1 int rem ext"),
            "neighbor swp1 interface remote-as external");
  EXPECT_EQ(resolved(ConfNode::kBgp, "no bgp ebgp-req"), "no bgp ebgp-requires-policy");
  EXPECT_EQ(resolved(ConfNode::kOspf, "net 10.0.0.0/24 a 0"), "network 10.0.0.0/24 area 0");
  // Values stay as written, full keywords stay themselves.
  EXPECT_EQ(resolved(ConfNode::kConfig, "ip route 10.9.0.0/24 10.0.0.1"),
            "ip route 10.9.0.0/24 10.0.0.1");
  EXPECT_EQ(resolved(ConfNode::kBgp, "neighbor PG peer-group"), "neighbor PG peer-group");
}

TEST(FrrGrammar, TheRestOfTheLinePicksAmongKeywordsAsFrrDoes) {
  using twin::topology::ConfNode;
  // `r` begins remote-as, route-map, route-reflector-client and route-server-client: only
  // remote-as takes one value and ends there (FRR 8.4 accepts `neighbor PG r 2`).
  EXPECT_EQ(resolved(ConfNode::kBgp, "nei PG r 2"), "neighbor PG remote-as 2");
  // `a` begins area and authentication; `0` is an area ID, not an address.
  EXPECT_EQ(resolved(ConfNode::kInterface, "ip ospf a 0"), "ip ospf area 0");
  // A keyword spelled in full wins over a longer one it begins: ospf, not ospf6.
  EXPECT_EQ(resolved(ConfNode::kConfig, "router ospf"), "router ospf");
  // A name where FRR takes a name is the name, even if it begins a keyword.
  EXPECT_EQ(resolved(ConfNode::kOspf, "passive-interface def"), "passive-interface def");
}

TEST(FrrGrammar, AnAmbiguousAbbreviationOrAnUnknownCommandIsNamed) {
  using twin::topology::ConfNode;
  EXPECT_EQ(resolved(ConfNode::kConfig, "router o"),
            "! 'o' is ambiguous here (openfabric, ospf, ospf6): FRR refuses the line");
  EXPECT_EQ(resolved(ConfNode::kConfig, "frobnicate eth1"),
            "! FRR 8.4 has no command 'frobnicate ...' here");
}

// The same two-router lab (eBGP over a numbered link, OSPF, BFD) in full and abbreviated,
// line for line.
const char* kFullR1 = R"(frr defaults datacenter
hostname r1
interface eth1
 ip address 10.0.12.1/30
 ipv6 address fd00:12::1/64
 ip ospf area 0
exit
interface lo
 ip address 10.0.255.1/32
 ip ospf area 0
exit
router bgp 65001
 bgp router-id 10.0.255.1
 neighbor 10.0.12.2 remote-as 65002
 neighbor 10.0.12.2 bfd
 address-family ipv4 unicast
  network 10.0.255.1/32
  redistribute connected
 exit-address-family
exit
router ospf
 ospf router-id 10.0.255.1
 passive-interface lo
exit
)";
const char* kShortR1 = R"(frr def datacenter
host r1
int eth1
 ip addr 10.0.12.1/30
 ipv6 add fd00:12::1/64
 ip os a 0
ex
int lo
 ip add 10.0.255.1/32
 ip ospf ar 0
ex
router bg 65001
 bgp router 10.0.255.1
 nei 10.0.12.2 rem 65002
 nei 10.0.12.2 bf
 address ipv4 uni
  net 10.0.255.1/32
  redis conn
 exit-address
ex
router ospf
 os router 10.0.255.1
 passive lo
ex
)";
const char* kFullR2 = R"(interface eth1
 ip address 10.0.12.2/30
 ip ospf area 0
exit
interface lo
 ip address 10.0.255.2/32
 ip ospf area 0
exit
router bgp 65002
 no bgp ebgp-requires-policy
 neighbor 10.0.12.1 remote-as external
exit
router ospf
exit
)";
const char* kShortR2 = R"(in eth1
 ip a 10.0.12.2/30
 ip o area 0
exi
in lo
 ip a 10.0.255.2/32
 ip o area 0
exi
ro bg 65002
 no bg ebgp-r
 ne 10.0.12.1 remote ext
exi
ro ospf
exi
)";

TEST(FrrConf, AnAbbreviatedConfigReadsAsItsFullSpelling) {
  for (auto [full, abbreviated] : {std::pair{kFullR1, kShortR1}, std::pair{kFullR2, kShortR2}}) {
    auto a = parse_frr_conf(full, "r.conf");
    auto b = parse_frr_conf(abbreviated, "r.conf");
    EXPECT_TRUE(b.not_read.empty()) << b.not_read.front().line << ": " << b.not_read.front().why;
    EXPECT_EQ(b.addresses, a.addresses);
    EXPECT_EQ(b.address_lines, a.address_lines);
    EXPECT_EQ(b.bgp_asn, a.bgp_asn);
    EXPECT_EQ(b.bgp_router_id, a.bgp_router_id);
    EXPECT_EQ(b.ospf_router_id, a.ospf_router_id);
    EXPECT_EQ(b.needs, a.needs);
    EXPECT_EQ(b.bgp_networks, a.bgp_networks);
    EXPECT_EQ(b.redistribute, a.redistribute);
    EXPECT_EQ(b.ospf_passive, a.ospf_passive);
    EXPECT_EQ(b.ebgp_requires_policy, a.ebgp_requires_policy);
    EXPECT_EQ(b.defaults, a.defaults);
    EXPECT_EQ(b.hostname, a.hostname);
    ASSERT_EQ(b.bgp_neighbors.size(), a.bgp_neighbors.size());
    for (size_t i = 0; i < a.bgp_neighbors.size(); ++i) {
      EXPECT_EQ(b.bgp_neighbors[i].peer, a.bgp_neighbors[i].peer);
      EXPECT_EQ(b.bgp_neighbors[i].remote_as, a.bgp_neighbors[i].remote_as);
      EXPECT_EQ(b.bgp_neighbors[i].bfd, a.bgp_neighbors[i].bfd);
    }
    ASSERT_EQ(b.ospf_interfaces.size(), a.ospf_interfaces.size());
    for (size_t i = 0; i < a.ospf_interfaces.size(); ++i) {
      EXPECT_EQ(b.ospf_interfaces[i].interface, a.ospf_interfaces[i].interface);
      EXPECT_EQ(b.ospf_interfaces[i].area, a.ospf_interfaces[i].area);
    }
  }
  // And what they read is the config's.
  auto c = parse_frr_conf(kShortR1, "r1.conf");
  EXPECT_THAT(c.addresses["eth1"], ElementsAre("10.0.12.1/30", "fd00:12::1/64"));
  EXPECT_EQ(c.bgp_asn, 65001u);
  ASSERT_EQ(c.bgp_neighbors.size(), 1u);
  EXPECT_EQ(c.bgp_neighbors[0].remote_as, "65002");
  EXPECT_TRUE(c.bgp_neighbors[0].bfd);
  EXPECT_EQ(c.needs.at("bfdd"), 15);
}

TEST_F(OwnConfigLab, TheSameLabAbbreviatedPlansTheSame) {
  write("r1.conf", kFullR1);
  write("r2.conf", kFullR2);
  auto full = plan(kTwoRoutersNoLoopback);
  write("r1.conf", kShortR1);
  write("r2.conf", kShortR2);
  auto abbreviated = plan(kTwoRoutersNoLoopback);
  ASSERT_EQ(full.sessions.size(), 2u);
  EXPECT_EQ(full.sessions[0].peer_address, "10.0.12.2");
  EXPECT_EQ(full.adjacencies.size(), 2u);
  EXPECT_EQ(full.bfd_peers.size(), 1u);
  EXPECT_THAT(full.find("r1")->daemons, ElementsAre("zebra", "bgpd", "ospfd", "bfdd"));
  // Everything but the configs' text is the same: sessions, adjacencies, BFD peers,
  // addresses, prefixes, daemons and the lines that need them.
  auto a = twin::plan::to_json(full);
  auto b = twin::plan::to_json(abbreviated);
  for (auto* j : {&a, &b})
    for (auto& n : (*j)["nodes"]) n.erase("frr_config");
  EXPECT_EQ(a, b);
  EXPECT_TRUE(abbreviated.notes.empty());
}

TEST_F(OwnConfigLab, AnAmbiguousAbbreviationIsAWarningWithItsLine) {
  write("r1.conf", std::string(kFullR1) + "router o\nexit\n");
  write("r2.conf", std::string(kFullR2) + "interface eth1\n frobnicate\nexit\n");
  auto p = plan(kTwoRoutersNoLoopback);
  ASSERT_EQ(p.notes.size(), 2u);
  EXPECT_EQ(p.notes[0].severity, "warning");
  EXPECT_EQ(p.notes[0].node, "r1");
  EXPECT_EQ(p.notes[0].source, (dir_ / "r1.conf").string() + ":25");
  EXPECT_EQ(p.notes[0].text,
            "'router o': 'o' is ambiguous here (openfabric, ospf, ospf6): FRR refuses the line; "
            "twin expects nothing of this line");
  EXPECT_EQ(p.notes[1].node, "r2");
  EXPECT_EQ(p.notes[1].source, (dir_ / "r2.conf").string() + ":16");
  EXPECT_THAT(p.notes[1].text, HasSubstr("'frobnicate': FRR 8.4 has no command"));
  // The rest of the configs still counts.
  EXPECT_EQ(p.sessions.size(), 2u);
  EXPECT_THAT(twin::plan::render_plan_text(p), HasSubstr("r1.conf:25"));
}

// A dual-stack lab with one IPv6-only link and router: r1 and r2 run OSPFv2 and OSPFv3 on their
// link, r2 and r3 only OSPFv3 on theirs, and r3 runs ospf6d alone. OSPFv2 and OSPFv3 are
// separate graphs: r3 is in IPv6's paths and in none of IPv4's.
const char* kIpv6OnlyRouter = R"(version: 1
name: sixonly
nodes:
  r1: {config: r1.conf}
  r2: {config: r2.conf}
  r3: {config: r3.conf}
links:
  - endpoints: [r1:eth1, r2:eth1]
  - endpoints: [r2:eth2, r3:eth1]
)";

class Ipv6OnlyRouter : public OwnConfigLab {
 protected:
  void SetUp() override {
    OwnConfigLab::SetUp();
    const std::string both = " ip ospf area 0\n ipv6 ospf6 area 0\n";
    write("r1.conf", "interface eth1\n ip address 10.0.12.1/30\n" + both +
                         "exit\ninterface lo\n ip address 10.0.255.1/32\n"
                         " ipv6 address fd00::1/128\n" +
                         both + "exit\nrouter ospf\nexit\nrouter ospf6\nexit\n");
    write("r2.conf", "interface eth1\n ip address 10.0.12.2/30\n" + both +
                         "exit\ninterface eth2\n ipv6 ospf6 area 0\nexit\n"
                         "interface lo\n ip address 10.0.255.2/32\n ipv6 address fd00::2/128\n" +
                         both + "exit\nrouter ospf\nexit\nrouter ospf6\nexit\n");
    write("r3.conf",
          "interface eth1\n ipv6 ospf6 area 0\nexit\n"
          "interface lo\n ipv6 address fd00::3/128\n ipv6 ospf6 area 0\nexit\n"
          "router ospf6\nexit\n");
  }
  static int ecmp(const twin::plan::PathTable& t, const std::string& n, const std::string& o) {
    auto it = t.find({n, o});
    return it == t.end() ? 0 : it->second.ecmp;
  }
};

TEST_F(Ipv6OnlyRouter, EachFamilyHasItsOwnIgpPaths) {
  auto p = plan(kIpv6OnlyRouter);
  EXPECT_THAT(p.find("r3")->daemons, ElementsAre("zebra", "ospf6d"));
  const auto v4 = twin::plan::expected_paths(p, 4);
  const auto v6 = twin::plan::expected_paths(p, 6);
  EXPECT_EQ(ecmp(v4, "r1", "r2"), 1);
  EXPECT_EQ(ecmp(v4, "r2", "r1"), 1);
  for (const char* other : {"r1", "r2"}) {
    EXPECT_EQ(ecmp(v4, "r3", other), 0) << other;  // no OSPFv2 reaches r3
    EXPECT_EQ(ecmp(v4, other, "r3"), 0) << other;
    EXPECT_EQ(ecmp(v6, "r3", other), 1) << other;
    EXPECT_EQ(ecmp(v6, other, "r3"), 1) << other;
  }
  const auto both = twin::plan::expected_paths_by_family(p);
  EXPECT_EQ(both.ipv4, v4);
  EXPECT_EQ(both.ipv6, v6);
  EXPECT_EQ(&both.of("10.0.255.1/32"), &both.ipv4);
  EXPECT_EQ(&both.of("fd00::3"), &both.ipv6);
}

TEST_F(Ipv6OnlyRouter, TheRoutesFamilyExpectsNoIpv4RouteAtTheIpv6OnlyRouter) {
  auto p = plan(kIpv6OnlyRouter);
  // r3's kernel as FRR leaves it: the others' IPv6 loopbacks over OSPFv3, nothing of IPv4.
  auto fib = nlohmann::json::parse(R"([
    {"dst": "fd00::1", "gateway": "fe80::2", "dev": "eth1", "protocol": "ospf"},
    {"dst": "fd00::2", "gateway": "fe80::2", "dev": "eth1", "protocol": "ospf"},
    {"dst": "fe80::/64", "dev": "eth1", "protocol": "kernel"}])");
  std::map<std::string, twin::Result<nlohmann::json>> fibs;
  fibs.emplace("r3", twin::ok(fib));
  std::vector<std::string> seen;
  for (const auto& r : twin::validators::evaluate_routes(p, fibs)) {
    if (r.node != "r3") continue;
    seen.push_back(r.test_name + " " + r.peer);
    EXPECT_EQ(r.status, twin::validate::Status::kPassed) << r.peer << ": " << r.message;
  }
  EXPECT_THAT(seen, ElementsAre("fib-complete fd00::1/128", "ecmp-width fd00::1/128",
                                "fib-complete fd00::2/128", "ecmp-width fd00::2/128"));
}

TEST_F(Ipv6OnlyRouter, ReachabilityPingsEachFamilyOverItsOwnPaths) {
  auto p = plan(kIpv6OnlyRouter);
  // One echo per pair and family (either end may send it): r3 in IPv6's mesh only.
  std::multiset<std::string> mesh;
  for (const auto& probe : twin::validators::reachability_probes(p, 1000)) {
    std::string a = probe.node, b = probe.subject.substr(0, probe.subject.find(' '));
    if (b < a) std::swap(a, b);
    const bool v6 = probe.request.destination.find(':') != std::string::npos;
    mesh.insert(a + "-" + b + (v6 ? " IPv6" : " IPv4"));
    EXPECT_EQ(probe.request.source.find(':') != std::string::npos, v6) << probe.subject;
  }
  EXPECT_THAT(mesh, ElementsAre("r1-r2 IPv4", "r1-r2 IPv6", "r1-r3 IPv6", "r2-r3 IPv6"));
  // r1 and r2 are routed in both families, r3 in IPv6 only: three pairs, one of them IPv4.
  EXPECT_THAT(twin::plan::render_plan_text(p),
              HasSubstr("Reachability expected: 3 of 3 router pairs routed both ways (their "
                        "loopbacks pinged): IPv4 1, IPv6 3\n"));
}

TEST_F(OwnConfigLab, ALoopbackNoProtocolCarriesIsNotPinged) {
  // r2's IPv6 loopback is on lo but in no protocol: not a destination, not a source.
  write("r1.conf", "interface eth1\n ip ospf area 0\nexit\ninterface lo\n ip address 10.0.255.1/32\n"
                   " ip ospf area 0\nexit\nrouter ospf\nexit\n");
  write("r2.conf", "interface eth1\n ip ospf area 0\nexit\ninterface lo\n ip address 10.0.255.2/32\n"
                   " ipv6 address fd00::2/128\n ip ospf area 0\nexit\nrouter ospf\nexit\n");
  auto p = plan(kTwoRoutersNoLoopback);
  EXPECT_THAT(p.find("r2")->loopbacks, ElementsAre("10.0.255.2/32", "fd00::2/128"));
  EXPECT_THAT(twin::validate::advertised_loopbacks(*p.find("r2")), ElementsAre("10.0.255.2/32"));
}

TEST_F(OwnConfigLab, NoPingIsExpectedWithoutAPathBack) {
  // r2 requires eBGP policy and has an outbound route-map only: it sends r1 its routes but
  // accepts none, so r1's pings to r2 could not be answered.
  write("r1.conf", "interface eth1\n ip address 10.0.12.1/30\nexit\ninterface lo\n"
                   " ip address 10.0.255.1/32\nexit\nrouter bgp 65001\n no bgp ebgp-requires-policy\n"
                   " neighbor 10.0.12.2 remote-as 65002\n address-family ipv4 unicast\n"
                   "  network 10.0.255.1/32\n exit-address-family\nexit\n");
  write("r2.conf", "interface eth1\n ip address 10.0.12.2/30\nexit\ninterface lo\n"
                   " ip address 10.0.255.2/32\nexit\nroute-map ALL permit 10\nexit\n"
                   "router bgp 65002\n neighbor 10.0.12.1 remote-as 65001\n"
                   " address-family ipv4 unicast\n  network 10.0.255.2/32\n"
                   "  neighbor 10.0.12.1 route-map ALL out\n exit-address-family\nexit\n");
  auto p = plan(kTwoRoutersNoLoopback);
  auto paths = twin::plan::expected_paths(p, 4);
  EXPECT_EQ(paths.count({"r1", "r2"}) ? paths.at({"r1", "r2"}).ecmp : 0, 1);  // r2 sends
  EXPECT_EQ(paths.count({"r2", "r1"}) ? paths.at({"r2", "r1"}).ecmp : 0, 0);  // r2 accepts none
  EXPECT_TRUE(twin::validate::routed_frr_pairs(p).empty());
}

TEST(FrrConf, OnlyABarePermitRouteMapIsTransparent) {
  auto c = parse_frr_conf("route-map ALL permit 10\n description lets all through\nexit\n"
                          "route-map ONLY permit 10\n match ip address prefix-list P\nexit\n"
                          "route-map PREPEND permit 10\n set as-path prepend 65001\nexit\n"
                          "route-map NONE deny 10\nexit\n"
                          "router bgp 65001\n neighbor 10.0.0.2 remote-as 65002\n"
                          " address-family ipv4 unicast\n  neighbor 10.0.0.2 route-map ALL in\n"
                          "  neighbor 10.0.0.2 prefix-list P out\n exit-address-family\nexit\n",
                          "r.conf");
  EXPECT_TRUE(c.route_map_transparent.at("ALL"));
  EXPECT_FALSE(c.route_map_transparent.at("ONLY"));
  EXPECT_FALSE(c.route_map_transparent.at("PREPEND"));  // changes path length
  EXPECT_FALSE(c.route_map_transparent.at("NONE"));
  ASSERT_EQ(c.bgp_neighbors.size(), 1u);
  EXPECT_EQ(c.bgp_neighbors[0].route_map_in_name, "ALL");
  EXPECT_FALSE(c.bgp_neighbors[0].list_in);
  EXPECT_TRUE(c.bgp_neighbors[0].list_out);
}

TEST_F(OwnConfigLab, NoPathIsExpectedThroughAFilterTwinDoesNotEvaluate) {
  // r2 takes r1's routes through a prefix-list: what passes is the list's business. r1 takes
  // r2's through a bare-permit route-map: transparent, so expected.
  write("r1.conf", "interface eth1\n ip address 10.0.12.1/30\nexit\ninterface lo\n"
                   " ip address 10.0.255.1/32\nexit\nroute-map ALL permit 10\nexit\n"
                   "router bgp 65001\n neighbor 10.0.12.2 remote-as 65002\n"
                   " address-family ipv4 unicast\n  network 10.0.255.1/32\n"
                   "  neighbor 10.0.12.2 route-map ALL in\n  neighbor 10.0.12.2 route-map ALL out\n"
                   " exit-address-family\nexit\n");
  write("r2.conf", "interface eth1\n ip address 10.0.12.2/30\nexit\ninterface lo\n"
                   " ip address 10.0.255.2/32\nexit\nroute-map ALL permit 10\nexit\n"
                   "router bgp 65002\n neighbor 10.0.12.1 remote-as 65001\n"
                   " address-family ipv4 unicast\n  network 10.0.255.2/32\n"
                   "  neighbor 10.0.12.1 prefix-list ONLY-LOOPBACKS in\n"
                   "  neighbor 10.0.12.1 route-map ALL in\n  neighbor 10.0.12.1 route-map ALL out\n"
                   " exit-address-family\nexit\n");
  auto p = plan(kTwoRoutersNoLoopback);
  ASSERT_EQ(p.sessions.size(), 2u);
  for (const auto& s : p.sessions) {
    EXPECT_TRUE(s.carries_routes) << s.node;
    EXPECT_EQ(s.predictable, s.node == "r1") << s.node;  // r2's end filters with a list
  }
  auto paths = twin::plan::expected_paths(p, 4);
  EXPECT_EQ(paths.count({"r1", "r2"}), 1u);
  EXPECT_EQ(paths.count({"r2", "r1"}), 0u);
  EXPECT_THAT(twin::plan::render_plan_text(p), HasSubstr("routes from r1 cross a route-map or list"));
}

// EVPN on own configs: a session is expected to carry l2vpn evpn where both ends activate it
// (here through a peer group); where one end does not, nothing EVPN is expected of it.
TEST_F(OwnConfigLab, EvpnSessionsComeFromWhatBothEndsActivate) {
  auto conf = [](int asn, bool evpn) {
    return "router bgp " + std::to_string(asn) +
           "\n neighbor fab peer-group\n neighbor fab remote-as external\n"
           " neighbor eth1 interface peer-group fab\n neighbor 192.0.2.9 remote-as 65009\n" +
           (evpn ? " address-family l2vpn evpn\n  neighbor fab activate\n  advertise-all-vni\n"
                   " exit-address-family\n"
                 : "") +
           "exit\n";
  };
  auto c = parse_frr_conf(conf(65001, true), "r1.conf");
  ASSERT_EQ(c.bgp_neighbors.size(), 2u);
  EXPECT_TRUE(c.bgp_neighbors[0].evpn);   // eth1, through its group
  EXPECT_FALSE(c.bgp_neighbors[1].evpn);  // 192.0.2.9: not activated
  const std::string lab = R"(version: 1
name: evpn-own
nodes:
  r1: {loopback: 10.0.255.1/32, config: r1.conf}
  r2: {loopback: 10.0.255.2/32, config: r2.conf}
  s1: {kind: host}
  s2: {kind: host}
links:
  - endpoints: [r1:eth1, r2:eth1]
    mtu: 9000
  - endpoints: [r1:eth2, s1:eth0]
    addresses: {s1: [10.9.0.1/24]}
  - endpoints: [r2:eth2, s2:eth0]
    addresses: {s2: [10.9.0.2/24]}
tenants:
  t:
    networks:
      n: {vni: 100, ports: [r1:eth2, r2:eth2]}
)";
  write("r1.conf", conf(65001, true));
  write("r2.conf", conf(65002, true));
  auto both = plan(lab);
  ASSERT_EQ(both.sessions.size(), 2u);
  for (const auto& s : both.sessions) EXPECT_TRUE(s.evpn) << s.node;
  write("r2.conf", conf(65002, false));
  auto one = plan(lab);
  ASSERT_EQ(one.sessions.size(), 2u);
  for (const auto& s : one.sessions) EXPECT_FALSE(s.evpn) << s.node;
}
