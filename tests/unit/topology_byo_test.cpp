// Unit tests for "bring your own network" fields of twin's topology format and the loader
// checks that came with them: hosts' `routes:`, frr nodes' `daemons-file:` (FRR's daemons file
// parser), one address per node across the lab, and one YAML document per file.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "tests/unit/support.hpp"
#include "twin/core/diagnostics.hpp"
#include "twin/plan/plan.hpp"
#include "twin/topology/daemons_file.hpp"
#include "twin/topology/loader.hpp"
#include "twin/wiring/wiring.hpp"

namespace {

namespace fs = std::filesystem;
using twin::Diagnostic;
using twin::Diagnostics;
using twin::topology::load_topology_text;
using twin::topology::Topology;
using twin_test::dump;

const std::string kTestData = TWIN_TEST_DATA;

struct Loaded {
  std::optional<Topology> topo;
  Diagnostics diags;
};

Loaded load(const std::string& text, const std::string& dir = kTestData) {
  Loaded l;
  l.topo = load_topology_text(text, "t.yaml", dir, l.diags);
  return l;
}

Diagnostic only_problem(const std::string& text, const std::string& dir = kTestData) {
  auto l = load(text, dir);
  EXPECT_FALSE(l.topo.has_value());
  EXPECT_EQ(l.diags.items().size(), 1u) << dump(l.diags);
  if (l.diags.items().empty()) return {};
  return l.diags.items().front();
}

void expect_at(const Diagnostic& d, int line, int column, const std::string& field,
               const std::string& file = "t.yaml") {
  EXPECT_EQ(d.file, file) << d.message;
  EXPECT_EQ(d.line, line) << d.message;
  EXPECT_EQ(d.column, column) << d.message;
  EXPECT_EQ(d.field, field) << d.message;
}

// A folder of its own under the test temp dir, removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = ::testing::TempDir() + "twin-byo-XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    const char* made = ::mkdtemp(buf.data());
    if (!made) throw std::runtime_error("mkdtemp failed");
    path_ = fs::canonical(made).string();
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string write(const std::string& name, const std::string& content) const {
    std::ofstream(fs::path(path_) / name) << content;
    return (fs::path(path_) / name).string();
  }

 private:
  std::string path_;
};

// A host behind r1 with `routes` (line 7 on) replaced by `routes`.
std::string host_lab(const std::string& routes, const std::string& extra = "") {
  return "version: 1\n"                                    // 1
         "name: x\n"                                       // 2
         "nodes:\n"                                        // 3
         "  r1: {asn: 65001, loopback: 10.0.0.1/32}\n"     // 4
         "  h1:\n"                                         // 5
         "    kind: host\n" +                              // 6
         extra + routes +                                  // 7...
         "links:\n"
         "  - endpoints: [r1:eth1, h1:eth0]\n"
         "    addresses: {r1: 10.0.1.1/24, h1: 10.0.1.10/24}\n";
}

// ---------------------------------------------------------------------------------------
// routes:

TEST(HostRoutes, AreLoadedAndPlannedAfterTheGateway) {
  auto l = load(host_lab("    routes:\n"
                         "      - {to: 10.9.0.0/16, via: 10.0.1.1}\n"
                         "      - {to: 172.16.0.1, via: 10.0.1.1}\n"));
  ASSERT_TRUE(l.topo) << dump(l.diags);
  const auto* h1 = l.topo->find_node("h1");
  ASSERT_EQ(h1->routes.size(), 2u);
  EXPECT_EQ(h1->routes[0].destination.str(), "10.9.0.0/16");
  EXPECT_EQ(h1->routes[0].via.str(), "10.0.1.1/32");
  EXPECT_EQ(h1->routes[0].mark.line, 8);
  EXPECT_EQ(h1->routes[0].mark.column, 14);
  EXPECT_EQ(h1->routes[1].destination.str(), "172.16.0.1/32");  // a bare address is a host
  ASSERT_EQ(h1->gateways.size(), 1u);  // still derived from the link
  auto p = twin::plan::make_plan(*l.topo);
  const auto* n = p.find("h1");
  ASSERT_EQ(n->routes.size(), 3u);
  EXPECT_EQ(n->routes[0].destination, "default");
  EXPECT_EQ(n->routes[0].via, "10.0.1.1");
  EXPECT_EQ(n->routes[1].destination, "10.9.0.0/16");
  EXPECT_EQ(n->routes[2].destination, "172.16.0.1/32");
  // The host's wiring installs non-default destinations as written.
  EXPECT_EQ(twin::wiring::node_script(*n),
            "address add 10.0.1.10/24 dev eth0\n"
            "route add 0.0.0.0/0 via 10.0.1.1\n"
            "route add 10.9.0.0/16 via 10.0.1.1\n"
            "route add 172.16.0.1/32 via 10.0.1.1\n");
  // Its port made anew (a recreated leaf's link): the address and the routes through it.
  EXPECT_EQ(twin::wiring::node_script(*n, {"eth0"}),
            "address add 10.0.1.10/24 dev eth0\n"
            "route replace 0.0.0.0/0 via 10.0.1.1\n"
            "route replace 10.9.0.0/16 via 10.0.1.1\n"
            "route replace 172.16.0.1/32 via 10.0.1.1\n");
  EXPECT_EQ(twin::wiring::node_script(*n, {"eth9"}), "");  // no such port: nothing through it
}

TEST(HostRoutes, ADefaultRouteTakesThePlaceOfTheGateway) {
  auto l = load(host_lab("    routes: [{to: default, via: 10.0.1.1}]\n"));
  ASSERT_TRUE(l.topo) << dump(l.diags);
  const auto* h1 = l.topo->find_node("h1");
  EXPECT_TRUE(h1->gateways.empty());
  ASSERT_EQ(h1->routes.size(), 1u);
  EXPECT_EQ(h1->routes[0].destination.str(), "0.0.0.0/0");
  auto p = twin::plan::make_plan(*l.topo);
  ASSERT_EQ(p.find("h1")->routes.size(), 1u);
  EXPECT_EQ(p.find("h1")->routes[0].destination, "default");
  EXPECT_EQ(p.find("h1")->routes[0].via, "10.0.1.1");
}

TEST(HostRoutes, ANextHopOffTheHostsSubnetsIsReportedAtIt) {
  auto d = only_problem(host_lab("    routes:\n"
                                 "      - {to: 10.9.0.0/16, via: 10.0.9.1}\n"));
  expect_at(d, 8, 32, "nodes.h1.routes[0].via");
  EXPECT_EQ(d.message, "next hop 10.0.9.1 is not on any subnet of the host's links");
}

TEST(HostRoutes, TheHostsOwnAddressIsNoNextHop) {
  auto d = only_problem(host_lab("    routes:\n"
                                 "      - {to: 10.9.0.0/16, via: 10.0.1.10}\n"));
  expect_at(d, 8, 32, "nodes.h1.routes[0].via");
  EXPECT_EQ(d.message, "next hop 10.0.1.10 is the host's own address");
}

TEST(HostRoutes, BadDestinations) {
  auto l = load(host_lab("    routes:\n"
                         "      - {to: 10.9.0.1/16, via: 10.0.1.1}\n"
                         "      - {to: nowhere, via: 10.0.1.1}\n"
                         "      - {to: 2001:db8::/32, via: 10.0.1.1}\n"
                         "      - {to: 10.8.0.0/16, via: 10.0.1.1}\n"
                         "      - {to: 10.8.0.0/16, via: 10.0.1.1}\n"
                         "      - {via: 10.0.1.1}\n"));
  ASSERT_FALSE(l.topo);
  const auto& d = l.diags.items();
  ASSERT_EQ(d.size(), 5u) << dump(l.diags);
  expect_at(d[0], 8, 14, "nodes.h1.routes[0].to");
  EXPECT_EQ(d[0].message, "'10.9.0.1/16' has host bits set");
  EXPECT_EQ(d[0].hint, "did you mean 10.9.0.0/16?");
  expect_at(d[1], 9, 14, "nodes.h1.routes[1].to");
  EXPECT_EQ(d[1].message, "'nowhere' is not a prefix");
  expect_at(d[2], 10, 34, "nodes.h1.routes[2].via");
  EXPECT_EQ(d[2].message, "next hop 10.0.1.1 is IPv4 but the destination 2001:db8::/32 is IPv6");
  expect_at(d[3], 12, 14, "nodes.h1.routes[4].to");
  EXPECT_EQ(d[3].message, "a route to 10.8.0.0/16 is already given at line 11");
  expect_at(d[4], 13, 9, "nodes.h1.routes[5].to");
  EXPECT_EQ(d[4].message, "missing; a route needs a destination `to`");
}

TEST(HostRoutes, DefaultRouteAndGatewayTogetherAreOneTooMany) {
  auto d = only_problem(host_lab("    routes: [{to: default, via: 10.0.1.1}]\n",
                                 "    gateway: 10.0.1.1\n"));
  expect_at(d, 8, 19, "nodes.h1.routes");
  EXPECT_EQ(d.message, "a default route is given both here and by `gateway` (line 7)");
}

TEST(HostRoutes, DoNotApplyToFrrNodes) {
  auto d = only_problem(R"(version: 1
name: x
nodes:
  r1: {asn: 65001, loopback: 10.0.0.1/32, routes: []}
)");
  expect_at(d, 4, 51, "nodes.r1.routes");
  EXPECT_EQ(d.message, "'routes' applies to kind host only");
}

// ---------------------------------------------------------------------------------------
// FRR daemons files and daemons-file:

TEST(DaemonsFile, ReadsTheDaemonSwitchesAndSkipsTheRest) {
  Diagnostics d;
  auto s = twin::topology::parse_daemons_file(R"(# This file tells the frr package which daemons to start.
bgpd=yes
ospfd=no   # off for now
  ospf6d="yes"
vtysh_enable=yes
zebra_options="  -A 127.0.0.1 -s 90000000"
MAX_FDS=1024
frr_profile="traditional"
)",
                                              "/etc/frr/daemons", d);
  EXPECT_TRUE(d.empty()) << dump(d);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].daemon, "bgpd");
  EXPECT_TRUE(s[0].enabled);
  EXPECT_EQ(s[0].file, "/etc/frr/daemons");
  EXPECT_EQ(s[0].mark.line, 2);
  EXPECT_EQ(s[0].mark.column, 1);
  EXPECT_EQ(s[1].daemon, "ospfd");
  EXPECT_FALSE(s[1].enabled);
  EXPECT_EQ(s[2].daemon, "ospf6d");
  EXPECT_TRUE(s[2].enabled);
  EXPECT_EQ(s[2].mark.line, 4);
  EXPECT_EQ(s[2].mark.column, 3);
}

TEST(DaemonsFile, ReportsEachBadLineAtItsPlace) {
  Diagnostics d;
  auto s = twin::topology::parse_daemons_file("bgdp=yes\nospfd=maybe\npim6d=yes\npim6d=no\n"
                                              "bgpd=yes\nbgpd=no\n",
                                              "/lab/daemons", d);
  ASSERT_EQ(d.items().size(), 4u) << dump(d);
  const auto& i = d.items();
  EXPECT_EQ(i[0].file, "/lab/daemons");
  EXPECT_EQ(i[0].line, 1);
  EXPECT_EQ(i[0].column, 1);
  EXPECT_EQ(i[0].message, "unknown FRR daemon 'bgdp'");
  EXPECT_EQ(i[0].hint, "did you mean 'bgpd'?");
  EXPECT_EQ(i[1].line, 2);
  EXPECT_EQ(i[1].column, 7);
  EXPECT_EQ(i[1].message, "expected yes or no for ospfd, got 'maybe'");
  EXPECT_EQ(i[2].line, 3);
  EXPECT_EQ(i[2].message, "twin cannot start pim6d (FRR 8.4 image)");
  EXPECT_EQ(i[3].line, 6);  // bgpd set twice; pim6d=no is fine
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].daemon, "pim6d");
  EXPECT_EQ(s[1].daemon, "bgpd");
}

TEST(DaemonsFile, ASecondSettingOfADaemonIsReported) {
  Diagnostics d;
  twin::topology::parse_daemons_file("bgpd=yes\nbgpd=no\n", "/lab/daemons", d);
  ASSERT_EQ(d.items().size(), 1u) << dump(d);
  EXPECT_EQ(d.items()[0].line, 2);
  EXPECT_EQ(d.items()[0].message, "bgpd is already set at line 1");
}

TEST(DaemonsFileField, DecidesTheDaemonsOfAnOwnConfigNode) {
  TempDir dir;
  dir.write("r1.conf", "router bgp 65001\n!\nrouter ospf\n!\n");
  std::string daemons = dir.write("daemons", "bgpd=yes\nospfd=yes\nripd=no\n");
  auto l = load(R"(version: 1
name: x
nodes:
  r1: {config: r1.conf, daemons-file: daemons}
)",
                dir.path());
  ASSERT_TRUE(l.topo) << dump(l.diags);
  const auto& ds = l.topo->nodes[0].daemon_settings;
  ASSERT_EQ(ds.size(), 3u);
  EXPECT_EQ(ds[0].file, daemons);
  EXPECT_EQ(ds[2].daemon, "ripd");
  EXPECT_FALSE(ds[2].enabled);
  auto p = twin::plan::make_plan(*l.topo);
  // What the file enables, and no staticd (FRR's init would start one) without a static route.
  EXPECT_EQ(p.nodes[0].daemons, (std::vector<std::string>{"zebra", "bgpd", "ospfd"}));
}

TEST(DaemonsFileField, AConfigNeedingADaemonTheFileSwitchesOffLoadsWithANote) {
  TempDir dir;
  std::string conf = dir.write("r1.conf", "router bgp 65001\n!\nrouter ospf\n!\n");
  std::string daemons = dir.write("daemons", "bgpd=yes\nospfd=no\n");
  auto l = load("version: 1\nname: x\nnodes:\n  r1: {config: r1.conf, daemons-file: daemons}\n",
                dir.path());
  ASSERT_TRUE(l.topo) << dump(l.diags);
  EXPECT_TRUE(l.diags.items().empty()) << dump(l.diags);
  auto p = twin::plan::make_plan(*l.topo);
  EXPECT_EQ(p.nodes[0].daemons, (std::vector<std::string>{"zebra", "bgpd"}));
  ASSERT_EQ(p.notes.size(), 1u);
  EXPECT_EQ(p.notes[0].source, conf + ":3");
  EXPECT_EQ(p.notes[0].text, "`router ospf` needs ospfd, but " + daemons +
                                 ":2 switches ospfd off: OSPF will not run on r1");
}

TEST(DaemonsFileField, ErrorsInTheFileNameTheFile) {
  TempDir dir;
  dir.write("r1.conf", "router bgp 65001\n!\n");
  std::string daemons = dir.write("daemons", "# FRR daemons\nbgpd=yes\nisis=yes\n");
  auto l = load("version: 1\nname: x\nnodes:\n  r1: {config: r1.conf, daemons-file: daemons}\n",
                dir.path());
  ASSERT_FALSE(l.topo);
  ASSERT_EQ(l.diags.items().size(), 1u) << dump(l.diags);
  expect_at(l.diags.items()[0], 3, 1, "", daemons);
  EXPECT_EQ(l.diags.items()[0].message, "unknown FRR daemon 'isis'");
  EXPECT_EQ(l.diags.items()[0].hint, "did you mean 'isisd'?");
}

TEST(DaemonsFileField, MissingFileNeedsConfigAndNotOnHosts) {
  TempDir dir;
  dir.write("daemons", "bgpd=yes\n");
  auto l = load(R"(version: 1
name: x
nodes:
  r1: {asn: 65001, loopback: 10.0.0.1/32, daemons-file: daemons}
  r2: {asn: 65002, loopback: 10.0.0.2/32, daemons-file: nothere}
  h1: {kind: host, daemons-file: daemons}
)",
                dir.path());
  ASSERT_FALSE(l.topo);
  const auto& d = l.diags.items();
  ASSERT_EQ(d.size(), 4u) << dump(l.diags);
  expect_at(d[0], 4, 57, "nodes.r1.daemons-file");
  EXPECT_EQ(d[0].message,
            "a daemons file needs the node's own `config:`: the generated configuration picks "
            "its own daemons");
  expect_at(d[1], 5, 57, "nodes.r2.daemons-file");
  EXPECT_EQ(d[1].message, "daemons file '" + dir.path() + "/nothere' does not exist");
  expect_at(d[2], 5, 57, "nodes.r2.daemons-file");
  expect_at(d[3], 6, 34, "nodes.h1.daemons-file");
  EXPECT_EQ(d[3].message, "'daemons-file' does not apply to kind host");
}

// ---------------------------------------------------------------------------------------
// Loader gaps: one address per node, one document per file

TEST(LoaderAddresses, TheSameAddressOnBothEndsOfALink) {
  auto d = only_problem(R"(version: 1
name: x
nodes:
  r1: {asn: 65001, loopback: 10.0.0.1/32}
  h1: {kind: host}
links:
  - endpoints: [r1:eth1, h1:eth0]
    addresses: {r1: 10.0.1.1/24, h1: 10.0.1.1/24}
)");
  expect_at(d, 8, 38, "links[0].addresses.h1");
  EXPECT_EQ(d.message,
            "address 10.0.1.1 is given to both ends of the link: r1:eth1 (t.yaml:8:21) and "
            "h1:eth0");
}

TEST(LoaderAddresses, TheSameAddressOnTwoNodesOfOneIsland) {
  // The r1-r2 link makes one island of the lab: both clashes can collide (without it the two
  // halves share no link, and repeating addresses there is allowed: anycast_test.cpp).
  auto l = load(R"(version: 1
name: x
nodes:
  r1: {asn: 65001, loopback: 10.0.0.1/32}
  r2: {asn: 65002, loopback: 10.0.0.2/32}
  h1: {kind: host}
  h2: {kind: host}
links:
  - endpoints: [r1:eth1, h1:eth0]
    addresses: {r1: 10.0.1.1/24, h1: 10.0.1.10/24}
  - endpoints: [r2:eth1, h2:eth0]
    addresses: {r2: 10.0.1.1/24, h2: [10.0.2.10/24, 10.0.0.1/24]}
  - endpoints: [r1:eth2, r2:eth2]
)");
  ASSERT_FALSE(l.topo);
  const auto& d = l.diags.items();
  // h2's second address also leaves it without a gateway on 10.0.0.0/24: one more problem.
  ASSERT_GE(d.size(), 2u) << dump(l.diags);
  Diagnostics only;
  for (const auto& i : d)
    if (i.message.rfind("address ", 0) == 0) only.add(i);
  ASSERT_EQ(only.items().size(), 2u) << dump(l.diags);
  expect_at(only.items()[0], 12, 21, "links[1].addresses.r2");
  EXPECT_EQ(only.items()[0].message,
            "address 10.0.1.1 of r2:eth1 is also given to r1:eth1 at t.yaml:10:21");
  expect_at(only.items()[1], 12, 53, "links[1].addresses.h2[1]");
  EXPECT_EQ(only.items()[1].message,
            "address 10.0.0.1 of h2:eth0 is also given to r1:lo at t.yaml:4:30");
}

TEST(LoaderDocuments, ASecondDocumentIsAnError) {
  auto d = only_problem(R"(version: 1
name: x
nodes:
  r1: {asn: 65001, loopback: 10.0.0.1/32}
---
name: y
)");
  expect_at(d, 5, 1, "");
  EXPECT_EQ(d.message, "a second YAML document starts here; twin reads one document per file");
}

TEST(LoaderDocuments, AnOpeningMarkerIsFine) {
  auto l = load("# a lab\n---\nversion: 1\nname: x\nnodes:\n  r1: {asn: 65001, loopback: "
                "10.0.0.1/32}\n");
  EXPECT_TRUE(l.topo) << dump(l.diags);
  auto d = only_problem("---\nversion: 1\nname: x\nnodes: {}\n---\n");
  expect_at(d, 5, 1, "");
}

}  // namespace
