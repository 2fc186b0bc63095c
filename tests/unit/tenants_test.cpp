// Unit tests for the `tenants:` section (twin/topology/tenants.hpp): the reference EVPN lab
// loads, and each kind of bad tenant input is reported at its line:column with the numbers
// that make it wrong.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "tests/unit/support.hpp"
#include "twin/topology/loader.hpp"
#include "twin/topology/tenants.hpp"

namespace {

using ::testing::HasSubstr;
using twin::Diagnostics;
using twin_test::dump;

const std::string kRepo = TWIN_DATA_DIR;

// A small fabric: two leaves, one spine, three servers; `tenants` is appended.
std::string lab(const std::string& tenants, const std::string& fabric_mtu = "9216",
                const std::string& leaf_address = "") {
  return "version: 1\n"                                   // 1
         "name: t\n"                                      // 2
         "defaults: {image: frr-8.4, mtu: " + fabric_mtu + "}\n"  // 3
         "nodes:\n"                                       // 4
         "  spine1: {asn: 65000, loopback: [10.255.0.1/32]}\n"  // 5
         "  leaf1: {asn: 65101, loopback: [10.255.1.1/32]}\n"   // 6
         "  leaf2: {asn: 65102, loopback: [10.255.1.2/32]}\n"   // 7
         "  s1: {kind: host}\n"                           // 8
         "  s2: {kind: host}\n"                           // 9
         "  s3: {kind: host}\n"                           // 10
         "links:\n"                                       // 11
         "  - endpoints: [leaf1:swp1, spine1:swp1]\n"     // 12
         "  - endpoints: [leaf2:swp1, spine1:swp2]\n"     // 13
         "  - endpoints: [leaf1:swp3, s1:eth0]\n"         // 14
         "    mtu: 1500\n"                                // 15
         "    addresses: {s1: [10.1.1.11/24]" + leaf_address + "}\n"  // 16
         "  - endpoints: [leaf2:swp3, s2:eth0]\n"         // 17
         "    mtu: 1500\n"                                // 18
         "    addresses: {s2: [10.1.1.12/24]}\n"          // 19
         "  - endpoints: [leaf2:swp4, s3:eth0]\n"         // 20
         "    mtu: 1500\n"                                // 21
         "    addresses: {s3: [10.2.1.13/24]}\n"          // 22
         "tenants:\n" +                                   // 23
         tenants;
}

struct Loaded {
  std::optional<twin::topology::Topology> topo;
  Diagnostics diags;
};

Loaded load(const std::string& text) {
  Loaded l;
  l.topo = twin::topology::load_topology_text(text, "t.yaml", kRepo + "/topologies", l.diags);
  return l;
}

// The one problem of `text` beyond servers left without a default route: a case that puts a
// server on no network (or on a refused one) leaves it neither a router address nor a gateway,
// and the loader says so too.
twin::Diagnostic only_problem(const std::string& text) {
  auto l = load(text);
  EXPECT_FALSE(l.topo.has_value());
  std::vector<twin::Diagnostic> rest;
  for (const auto& d : l.diags.items())
    if (d.message.find("no default route") == std::string::npos) rest.push_back(d);
  EXPECT_EQ(rest.size(), 1u) << dump(l.diags);
  return rest.empty() ? twin::Diagnostic{} : rest.front();
}

const std::string kGood =
    "  red:\n"                                                  // 24
    "    networks:\n"                                           // 25
    "      web: {vni: 10100, ports: [leaf1:swp3, leaf2:swp3]}\n"  // 26
    "  blue:\n"                                                 // 27
    "    l3vni: 5002\n"                                         // 28
    "    networks:\n"                                           // 29
    "      app: {vni: 20100, ports: [leaf2:swp4], gateway: 10.2.1.1/24}\n";  // 30

TEST(Tenants, TheReferenceLabAndAGoodSectionLoad) {
  Diagnostics d;
  auto t = twin::topology::load_topology(kRepo + "/topologies/evpn-2x4.yaml", d);
  ASSERT_TRUE(t) << dump(d);
  ASSERT_EQ(t->tenants.size(), 2u);
  EXPECT_EQ(t->tenants[0].name, "red");
  ASSERT_EQ(t->tenants[0].networks.size(), 2u);
  EXPECT_EQ(t->tenants[0].networks[1].vni, 10200u);
  EXPECT_EQ(t->tenants[1].networks[0].ports.size(), 3u);

  auto l = load(lab(kGood));
  ASSERT_TRUE(l.topo) << dump(l.diags);
  const auto& blue = l.topo->tenants[1];
  EXPECT_EQ(blue.l3vni, 5002u);
  EXPECT_EQ(blue.networks[0].gateway->str(), "10.2.1.1/24");
  const twin::topology::Tenant* owner = nullptr;
  auto* net = twin::topology::tenant_network_of(*l.topo, "leaf2", "swp4", &owner);
  ASSERT_NE(net, nullptr);
  EXPECT_EQ(net->name, "app");
  EXPECT_EQ(owner->name, "blue");
  EXPECT_EQ(twin::topology::tenant_network_of(*l.topo, "leaf2", "swp1"), nullptr);
  // Servers on tenant ports need no router address; a routed network's gateway is theirs.
  const auto* s3 = l.topo->find_node("s3");
  ASSERT_EQ(s3->gateways.size(), 1u);
  EXPECT_EQ(s3->gateways[0].address(), "10.2.1.1");
  EXPECT_TRUE(l.topo->find_node("s1")->gateways.empty());
}

TEST(Tenants, AVniUsedTwiceNamesTheFirstOwner) {
  auto d = only_problem(lab("  red:\n"
                            "    networks:\n"
                            "      web: {vni: 10100, ports: [leaf1:swp3, leaf2:swp3]}\n"
                            "  blue:\n"
                            "    networks:\n"
                            "      app: {vni: 10100, ports: [leaf2:swp4]}\n"));
  EXPECT_EQ(d.line, 29);
  EXPECT_EQ(d.column, 18);
  EXPECT_EQ(d.field, "tenants.blue.networks.app.vni");
  EXPECT_EQ(d.message, "VNI 10100 is already tenant red network web's (line 26)");
}

TEST(Tenants, APortInTwoNetworks) {
  auto d = only_problem(lab("  red:\n"
                            "    networks:\n"
                            "      web: {vni: 10100, ports: [leaf1:swp3, leaf2:swp3]}\n"
                            "      db: {vni: 10200, ports: [leaf2:swp3]}\n"));
  EXPECT_EQ(d.line, 27);
  EXPECT_EQ(d.message, "port leaf2:swp3 is already in tenant red network web (line 26)");
}

TEST(Tenants, APortFacingARouterOrNoLinkOrAnUnknownNode) {
  auto d = only_problem(lab("  red:\n    networks:\n      web: {vni: 1, ports: [leaf1:swp1]}\n"));
  EXPECT_EQ(d.line, 26);
  EXPECT_THAT(d.message, HasSubstr("faces spine1, a router"));
  d = only_problem(lab("  red:\n    networks:\n      web: {vni: 1, ports: [leaf1:swp9]}\n"));
  EXPECT_EQ(d.message, "'leaf1:swp9' is on no link");
  d = only_problem(lab("  red:\n    networks:\n      web: {vni: 1, ports: [leaf9:swp3]}\n"));
  EXPECT_EQ(d.message, "unknown node 'leaf9'");
  d = only_problem(lab("  red:\n    networks:\n      web: {vni: 1, ports: [leaf1]}\n"));
  EXPECT_THAT(d.message, HasSubstr("expected a leaf port as node:interface"));
}

TEST(Tenants, ANetworkWithoutPortsHasNoVtep) {
  auto d = only_problem(lab("  red:\n    networks:\n      web: {vni: 10100}\n"));
  EXPECT_EQ(d.line, 26);
  EXPECT_EQ(d.field, "tenants.red.networks.web.ports");
  EXPECT_THAT(d.message, HasSubstr("the network has no VTEP"));
}

TEST(Tenants, AnAddressOnABridgedPort) {
  auto d = only_problem(lab("  red:\n    networks:\n      web: {vni: 1, ports: [leaf1:swp3]}\n",
                            "9216", ", leaf1: [10.1.1.1/24]"));
  EXPECT_EQ(d.message,
            "port leaf1:swp3 has address 10.1.1.1/24 on its link, but a tenant port is a bridge "
            "member (L2 only)");
}

TEST(Tenants, ServersOfOneNetworkInTwoSubnets) {
  auto d = only_problem(
      lab("  red:\n    networks:\n      web: {vni: 1, ports: [leaf1:swp3, leaf2:swp4]}\n"));
  EXPECT_EQ(d.message,
            "server s3 is in 10.2.1.0/24, but s1 of the same network is in 10.1.1.0/24");
}

TEST(Tenants, AnUnderlayTooSmallForTheOverlayGivesTheNumbers) {
  auto l = load(lab(kGood, "1520"));
  ASSERT_FALSE(l.topo);
  ASSERT_EQ(l.diags.items().size(), 2u) << dump(l.diags);  // both fabric links
  const auto& d = l.diags.items()[0];
  EXPECT_EQ(d.line, 12);
  EXPECT_EQ(d.field, "links[0].mtu");
  EXPECT_EQ(d.message,
            "underlay link leaf1:swp1 -- spine1:swp1 has MTU 1520, too small for the overlay: "
            "tenant red network web (links[2], leaf1:swp3) carries 1500-byte packets and VXLAN "
            "adds 50 bytes, so the underlay needs MTU 1550 or more");
  EXPECT_THAT(d.hint, HasSubstr("lower the servers' links to 1470"));
  EXPECT_TRUE(load(lab(kGood, "1550")).topo);
}

TEST(Tenants, BadNamesValuesAndAGatewayWithoutL3Vni) {
  auto d = only_problem(lab("  red:\n    networks:\n      web: {vni: 16777216, ports: [leaf1:swp3]}\n"));
  EXPECT_EQ(d.field, "tenants.red.networks.web.vni");
  EXPECT_THAT(d.message, HasSubstr("1-16777215"));
  d = only_problem(lab("  a-very-long-tenant-name:\n    networks:\n      web: {vni: 1, ports: [leaf1:swp3]}\n"));
  EXPECT_EQ(d.line, 24);
  EXPECT_THAT(d.message, HasSubstr("invalid tenant name"));
  d = only_problem(lab("  red:\n    networks:\n      web: {vni: 1, ports: [leaf1:swp3], gateway: 10.1.1.1/24}\n"));
  EXPECT_THAT(d.message, HasSubstr("needs its L3 VNI"));
  d = only_problem(lab("  red:\n    l3vni: 9\n    networks:\n      web: {vni: 1, ports: [leaf1:swp3], gateway: 10.9.1.1/24}\n"));
  EXPECT_EQ(d.message, "gateway 10.9.1.1 is not in the servers' subnet 10.1.1.0/24 (s1)");
  d = only_problem(lab("  red:\n    networks:\n      web: {vni: 1, ports: [leaf1:swp3], bogus: 1}\n"));
  EXPECT_THAT(d.message, HasSubstr("unknown field 'bogus'"));
  d = only_problem(lab("  red: {}\n"));
  EXPECT_THAT(d.message, HasSubstr("a tenant needs at least one network"));
}

TEST(Tenants, DuplicatesClashesAndOneSegmentOneMtu) {
  auto d = only_problem(lab("  red:\n    networks:\n      web: {vni: 1, ports: [leaf1:swp3]}\n"
                            "  red:\n    networks:\n      db: {vni: 2, ports: [leaf2:swp3]}\n"));
  EXPECT_EQ(d.line, 27);
  EXPECT_EQ(d.message, "duplicate tenant name 'red'");
  d = only_problem(lab("  red:\n    networks:\n      web: {vni: 1, ports: [leaf1:swp3]}\n"
                       "      web: {vni: 2, ports: [leaf2:swp3]}\n"));
  EXPECT_EQ(d.message, "duplicate network name 'web' in tenant red");
  d = only_problem(lab("  red:\n    l3vni: 9\n    networks:\n      web: {vni: 1, ports: [leaf1:swp3], "
                       "gateway: 10.1.1.11/24}\n"));
  EXPECT_EQ(d.message, "gateway 10.1.1.11 is server s1's address");
  d = only_problem(lab("  swp1:\n    l3vni: 9\n    networks:\n      web: {vni: 1, ports: [leaf1:swp3]}\n"));
  EXPECT_EQ(d.message,
            "tenant swp1 routes (l3vni), so 'swp1' is the name of its VRF on its leaves, but leaf1 "
            "has an interface swp1");
  EXPECT_TRUE(load(lab("  swp1:\n    networks:\n      web: {vni: 1, ports: [leaf1:swp3, "
                       "leaf2:swp3]}\n      db: {vni: 2, ports: [leaf2:swp4]}\n"))
                  .topo);  // an L2-only tenant has no VRF
  std::string text = lab("  red:\n    networks:\n      web: {vni: 1, ports: [leaf1:swp3, leaf2:swp3]}\n");
  text.replace(text.find("    mtu: 1500\n    addresses: {s2"), 14, "    mtu: 1400\n");
  d = only_problem(text);
  EXPECT_EQ(d.message, "port leaf2:swp3's link has MTU 1400, but leaf1:swp3 of the same network has 1500");
}

TEST(Tenants, AnEmptySectionSaysSoAndNotMuchElse) {
  std::string text = lab("");
  text.replace(text.rfind("tenants:\n"), 9, "tenants: {}\n");
  auto l = load(text);
  ASSERT_FALSE(l.topo);
  ASSERT_EQ(l.diags.items().size(), 1u) << dump(l.diags);
  EXPECT_EQ(l.diags.items()[0].message, "empty: expected at least one tenant");
}

}  // namespace
