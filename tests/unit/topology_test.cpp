// Unit tests for the topology loader (twin/topology/loader.hpp): the reference topologies load
// with their defaults and derived values; every kind of bad input is reported with its exact
// place (line:column), field, message and hint, all problems at once.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "tests/unit/support.hpp"
#include "twin/core/diagnostics.hpp"
#include "twin/topology/image_profile.hpp"
#include "twin/topology/loader.hpp"
#include "twin/topology/names.hpp"

namespace {

using twin_test::dump;

namespace fs = std::filesystem;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using twin::Diagnostic;
using twin::Diagnostics;
using twin::topology::load_topology;
using twin::topology::load_topology_text;
using twin::topology::Topology;

const std::string kRepo = TWIN_DATA_DIR;
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

// Every diagnostic as "line:col field | message | hint", for readable failure output.
// Loads `text`, expects failure with exactly one diagnostic, returns it.
Diagnostic only_problem(const std::string& text, const std::string& dir = kTestData) {
  auto l = load(text, dir);
  EXPECT_FALSE(l.topo.has_value());
  EXPECT_EQ(l.diags.items().size(), 1u) << dump(l.diags);
  if (l.diags.items().empty()) return {};
  return l.diags.items().front();
}

void expect_at(const Diagnostic& d, int line, int column, const std::string& field) {
  EXPECT_EQ(d.file, "t.yaml");
  EXPECT_EQ(d.line, line) << d.message;
  EXPECT_EQ(d.column, column) << d.message;
  EXPECT_EQ(d.field, field) << d.message;
}

// A folder of its own under the test temp dir, removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = ::testing::TempDir() + "twin-topology-XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    const char* made = ::mkdtemp(buf.data());
    if (!made) throw std::runtime_error("mkdtemp failed");
    path_ = made;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  void write(const std::string& name, const std::string& content) const {
    std::ofstream(fs::path(path_) / name) << content;
  }

 private:
  std::string path_;
};

// ---------------------------------------------------------------------------------------
// Valid topologies

TEST(LoaderValid, Clos2x4) {
  Diagnostics d;
  const std::string path = kRepo + "/topologies/clos-2x4.yaml";
  auto t = load_topology(path, d);
  ASSERT_TRUE(t.has_value()) << d.format();
  EXPECT_TRUE(d.empty());
  EXPECT_EQ(t->file, fs::absolute(path).string());
  EXPECT_EQ(t->dir, fs::absolute(path).parent_path().string());
  EXPECT_EQ(t->version, 1);
  EXPECT_EQ(t->name, "clos-2x4");
  ASSERT_EQ(t->nodes.size(), 8u);
  ASSERT_EQ(t->links.size(), 10u);

  std::vector<std::string> names;
  for (const auto& n : t->nodes) names.push_back(n.name);
  EXPECT_EQ(names, (std::vector<std::string>{"spine1", "spine2", "leaf1", "leaf2", "leaf3", "leaf4",
                                             "server1", "server2"}));

  const auto* spine1 = t->find_node("spine1");
  ASSERT_NE(spine1, nullptr);
  EXPECT_STREQ(to_string(spine1->kind), "frr");  // defaults.kind
  EXPECT_EQ(spine1->image, "frr-8.4");
  EXPECT_EQ(spine1->asn, 65000u);
  ASSERT_EQ(spine1->loopbacks.size(), 2u);
  EXPECT_EQ(spine1->loopbacks[0].str(), "10.255.0.1/32");
  EXPECT_EQ(spine1->loopbacks[1].str(), "fd00:255::1/128");
  ASSERT_TRUE(spine1->router_id.has_value());  // derived from the IPv4 loopback
  EXPECT_EQ(spine1->router_id->str(), "10.255.0.1/32");
  EXPECT_EQ(spine1->config, "");
  EXPECT_EQ(spine1->mark.line, 14);
  EXPECT_EQ(spine1->mark.column, 3);
  // The image profile, resolved from the repository's images/.
  EXPECT_EQ(spine1->profile.name, "frr-8.4");
  EXPECT_STREQ(to_string(spine1->profile.kind), "frr");
  EXPECT_STREQ(to_string(spine1->profile.backend), "netns");
  EXPECT_THAT(spine1->profile.file, EndsWith("/images/frr-8.4.yaml"));
  EXPECT_EQ(spine1->profile.daemons, (std::vector<std::string>{"zebra"}));
  EXPECT_EQ(spine1->profile.frr_profile, "datacenter");
  EXPECT_EQ(spine1->profile.rp_filter, 0);
  EXPECT_EQ(spine1->profile.ra_interval_s, 10);
  EXPECT_EQ(spine1->profile.coalesce_time_ms, 0);

  const auto* leaf4 = t->find_node("leaf4");
  ASSERT_NE(leaf4, nullptr);
  EXPECT_EQ(leaf4->asn, 65104u);
  EXPECT_EQ(leaf4->router_id->address(), "10.255.1.4");

  // Hosts: kind host gets the host image even though defaults.image is frr-8.4, and a default
  // route per family via the leaf's address on the shared subnet.
  const auto* server1 = t->find_node("server1");
  ASSERT_NE(server1, nullptr);
  EXPECT_STREQ(to_string(server1->kind), "host");
  EXPECT_EQ(server1->image, "host");
  EXPECT_STREQ(to_string(server1->profile.kind), "host");
  EXPECT_TRUE(server1->profile.daemons.empty());
  EXPECT_FALSE(server1->asn.has_value());
  EXPECT_FALSE(server1->router_id.has_value());
  ASSERT_EQ(server1->gateways.size(), 2u);
  EXPECT_EQ(server1->gateways[0].str(), "10.0.1.1/32");
  EXPECT_EQ(server1->gateways[1].str(), "2001:db8:1::1/128");
  const auto* server2 = t->find_node("server2");
  ASSERT_EQ(server2->gateways.size(), 2u);
  EXPECT_EQ(server2->gateways[0].str(), "10.0.4.1/32");
  EXPECT_EQ(server2->gateways[1].str(), "2001:db8:4::1/128");

  // Fabric links inherit defaults.mtu 9216; server links say 1500.
  for (size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(t->links[i].mtu, 9216) << i;
    EXPECT_TRUE(t->links[i].addresses.empty()) << i;
  }
  const auto& l0 = t->links[0];
  EXPECT_EQ(l0.a.node, "leaf1");
  EXPECT_EQ(l0.a.interface, "swp1");
  EXPECT_EQ(l0.b.node, "spine1");
  EXPECT_EQ(l0.b.interface, "swp1");
  EXPECT_EQ(l0.mark.line, 24);
  EXPECT_EQ(l0.mark.column, 5);
  EXPECT_EQ(l0.a.mark.line, 24);
  EXPECT_EQ(l0.a.mark.column, 17);
  EXPECT_EQ(l0.b.mark.column, 29);

  const auto& l8 = t->links[8];
  EXPECT_EQ(l8.a.node, "leaf1");
  EXPECT_EQ(l8.a.interface, "swp3");
  EXPECT_EQ(l8.b.node, "server1");
  EXPECT_EQ(l8.b.interface, "eth0");
  EXPECT_EQ(l8.mtu, 1500);
  EXPECT_TRUE(l8.mtu_explicit);
  ASSERT_EQ(l8.addresses.size(), 2u);
  ASSERT_EQ(l8.addresses.at("leaf1").size(), 2u);
  EXPECT_EQ(l8.addresses.at("leaf1")[0].str(), "10.0.1.1/24");
  EXPECT_EQ(l8.addresses.at("leaf1")[1].str(), "2001:db8:1::1/64");
  EXPECT_EQ(l8.addresses.at("server1")[0].str(), "10.0.1.10/24");
  EXPECT_EQ(l8.addresses.at("server1")[1].str(), "2001:db8:1::10/64");
  EXPECT_EQ(t->links[9].mtu, 1500);
}

TEST(LoaderValid, TwoNode) {
  Diagnostics d;
  auto t = load_topology(kRepo + "/topologies/two-node.yaml", d);
  ASSERT_TRUE(t.has_value()) << d.format();
  EXPECT_EQ(t->name, "two-node");
  ASSERT_EQ(t->nodes.size(), 2u);
  ASSERT_EQ(t->links.size(), 1u);
  for (const auto& n : t->nodes) {
    EXPECT_STREQ(to_string(n.kind), "frr");       // no defaults.kind: frr
    EXPECT_EQ(n.image, "frr-8.4");  // no defaults.image: the frr default
  }
  EXPECT_EQ(t->nodes[0].name, "r1");
  EXPECT_EQ(t->nodes[0].asn, 65001u);
  EXPECT_EQ(t->nodes[0].router_id->str(), "10.255.0.1/32");
  EXPECT_EQ(t->nodes[1].router_id->str(), "10.255.0.2/32");
  EXPECT_EQ(t->links[0].mtu, 9216);
  EXPECT_TRUE(t->links[0].mtu_explicit);
  EXPECT_EQ(t->links[0].a.interface, "eth1");
  EXPECT_EQ(t->links[0].b.node, "r2");
}

TEST(LoaderValid, MtuDefaultsTo1500AndLinkOverridesDefaults) {
  auto l = load(R"(version: 1
name: x
nodes:
  r1: {asn: 65001, loopback: 10.0.0.1/32}
  r2: {asn: 65002, loopback: 10.0.0.2/32, router-id: 10.0.0.22}
links:
  - endpoints: [r1:eth1, r2:eth1]
  - endpoints: [r1:eth2, r2:eth2]
    mtu: 9000
)");
  ASSERT_TRUE(l.topo.has_value()) << dump(l.diags);
  EXPECT_EQ(l.topo->links[0].mtu, 1500);
  EXPECT_FALSE(l.topo->links[0].mtu_explicit);
  EXPECT_EQ(l.topo->links[1].mtu, 9000);
  EXPECT_TRUE(l.topo->links[1].mtu_explicit);
  // An explicit router-id wins over the loopback.
  EXPECT_EQ(l.topo->nodes[1].router_id->address(), "10.0.0.22");
}

TEST(LoaderValid, ExplicitGatewayOnTheLinkIsKept) {
  auto l = load(R"(version: 1
name: x
nodes:
  r1: {asn: 65001, loopback: 10.0.0.1/32}
  h1: {kind: host, gateway: 10.0.1.254}
links:
  - endpoints: [r1:eth1, h1:eth0]
    addresses: {r1: 10.0.1.1/24, h1: 10.0.1.2/24}
)");
  ASSERT_TRUE(l.topo.has_value()) << dump(l.diags);
  const auto* h1 = l.topo->find_node("h1");
  ASSERT_EQ(h1->gateways.size(), 1u);
  EXPECT_EQ(h1->gateways[0].str(), "10.0.1.254/32");
}

TEST(LoaderValid, UserConfigNeedsNoAsnOrLoopback) {
  TempDir dir;
  dir.write("r1.conf", "frr defaults datacenter\n");
  auto l = load(R"(version: 1
name: x
nodes:
  r1: {config: r1.conf}
)",
                dir.path());
  ASSERT_TRUE(l.topo.has_value()) << dump(l.diags);
  const auto& r1 = l.topo->nodes[0];
  EXPECT_EQ(r1.config, fs::weakly_canonical(fs::path(dir.path()) / "r1.conf").string());
  EXPECT_FALSE(r1.asn.has_value());
  EXPECT_FALSE(r1.router_id.has_value());
}

TEST(LoaderValid, MtuBelow1280AcceptedOnHostLinkWithoutIpv6) {
  auto l = load(R"(version: 1
name: x
nodes:
  r1: {asn: 65001, loopback: 10.0.0.1/32}
  h1: {kind: host}
links:
  - endpoints: [r1:eth1, h1:eth0]
    mtu: 1000
    addresses: {r1: 10.0.1.1/24, h1: 10.0.1.2/24}
)");
  ASSERT_TRUE(l.topo.has_value()) << dump(l.diags);
  EXPECT_EQ(l.topo->links[0].mtu, 1000);
  EXPECT_EQ(l.topo->nodes[1].gateways.at(0).str(), "10.0.1.1/32");
}

TEST(LoaderValid, ImageSearchPathOrder) {
  ::unsetenv("TWIN_IMAGES");
  EXPECT_EQ(twin::topology::image_search_path("/lab"),
            (std::vector<std::string>{"/lab/images", kRepo + "/images", "/usr/share/twin/images"}));
  ::setenv("TWIN_IMAGES", "/a::/b", 1);
  EXPECT_EQ(twin::topology::image_search_path(""),
            (std::vector<std::string>{"/a", "/b", kRepo + "/images", "/usr/share/twin/images"}));
  ::unsetenv("TWIN_IMAGES");
}

TEST(LoaderValid, ImagesInTheTopologyFolderComeFirst) {
  TempDir dir;
  fs::create_directory(fs::path(dir.path()) / "images");
  dir.write("images/frr-8.4.yaml", "kind: frr\ndaemons: [zebra, bgpd]\ncoalesce-time: 100\n");
  auto l = load(R"(version: 1
name: x
nodes:
  r1: {asn: 65001, loopback: 10.0.0.1/32}
)",
                dir.path());
  ASSERT_TRUE(l.topo.has_value()) << dump(l.diags);
  const auto& p = l.topo->nodes[0].profile;
  EXPECT_EQ(p.file, fs::weakly_canonical(fs::path(dir.path()) / "images/frr-8.4.yaml").string());
  EXPECT_EQ(p.daemons, (std::vector<std::string>{"zebra", "bgpd"}));
  EXPECT_EQ(p.coalesce_time_ms, 100);
}

// ---------------------------------------------------------------------------------------
// Bad input: one problem each, exact place

TEST(LoaderErrors, MalformedYaml) {
  auto d = only_problem(R"(version: 1
name: x
nodes: {r1: {asn: 65001
links: []
)");
  expect_at(d, 4, 6, "");
  EXPECT_EQ(d.message, "malformed YAML: end of map flow not found");
  EXPECT_EQ(d.hint, "check indentation and brackets near this place");
}

TEST(LoaderErrors, NotAMapping) {
  auto d = only_problem("- a\n- b\n");
  expect_at(d, 1, 1, "");
  EXPECT_EQ(d.message, "expected a mapping with version, name, nodes and links");
  auto empty = only_problem("");
  EXPECT_EQ(empty.line, 0);
  EXPECT_EQ(empty.message, "expected a mapping with version, name, nodes and links");
}

TEST(LoaderErrors, MissingVersion) {
  auto d = only_problem(R"(# a comment first
name: x
nodes:
  r1: {asn: 65001, loopback: 10.0.0.1/32}
)");
  expect_at(d, 2, 1, "version");  // the top-level mapping that lacks it
  EXPECT_EQ(d.message, "missing; expected `version: 1`");
  EXPECT_EQ(d.hint, "add `version: 1` at the top");
}

TEST(LoaderErrors, WrongVersion) {
  auto d = only_problem(R"(version: 2
name: x
nodes:
  r1: {asn: 65001, loopback: 10.0.0.1/32}
)");
  expect_at(d, 1, 10, "version");
  EXPECT_EQ(d.message, "unsupported version 2; expected 1");
  auto s = only_problem(R"(version: one
name: x
nodes:
  r1: {asn: 65001, loopback: 10.0.0.1/32}
)");
  expect_at(s, 1, 10, "version");
  EXPECT_EQ(s.message, "expected an integer, got 'one'");
}

TEST(LoaderErrors, MissingName) {
  auto d = only_problem(R"(version: 1
nodes:
  r1: {asn: 65001, loopback: 10.0.0.1/32}
)");
  expect_at(d, 1, 1, "name");
  EXPECT_EQ(d.message, "missing; expected the lab name");
  EXPECT_EQ(d.hint, "add e.g. `name: mylab`, or give --name");
}

TEST(LoaderErrors, UnknownTopLevelFieldSuggestsTheNearest) {
  auto l = load(R"(version: 1
name: x
nodse:
  r1: {asn: 65001, loopback: 10.0.0.1/32}
)");
  ASSERT_FALSE(l.topo.has_value());
  ASSERT_EQ(l.diags.items().size(), 2u) << dump(l.diags);
  const auto& d = l.diags.items()[0];
  expect_at(d, 3, 1, "nodse");
  EXPECT_EQ(d.message, "unknown field 'nodse'");
  EXPECT_EQ(d.hint, "did you mean 'nodes'?");
  // ... and, as a consequence, `nodes` is missing.
  expect_at(l.diags.items()[1], 1, 1, "nodes");
  EXPECT_EQ(l.diags.items()[1].message, "missing; expected a mapping of node names");
}

TEST(LoaderErrors, UnknownFieldWithoutNearNameListsTheFields) {
  auto d = only_problem(R"(version: 1
name: x
colour: blue
nodes:
  r1: {asn: 65001, loopback: 10.0.0.1/32}
)");
  expect_at(d, 3, 1, "colour");
  EXPECT_EQ(
      d.hint,
      "expected one of: version, name, defaults, nodes, links, checks, tenants, anycast, mgmt, "
      "traffic");
}

TEST(LoaderErrors, UnknownNodeFieldSuggestsTheNearest) {
  auto l = load(R"(version: 1
name: x
nodes:
  r1: {asn: 65001, lopback: 10.0.0.1/32}
)");
  ASSERT_FALSE(l.topo.has_value());
  ASSERT_EQ(l.diags.items().size(), 2u) << dump(l.diags);
  const auto& d = l.diags.items()[0];
  expect_at(d, 4, 20, "nodes.r1.lopback");
  EXPECT_EQ(d.message, "unknown field 'lopback'");
  EXPECT_EQ(d.hint, "did you mean 'loopback'?");
  // The generated config then lacks a loopback.
  expect_at(l.diags.items()[1], 4, 3, "nodes.r1.loopback");
}

TEST(LoaderErrors, FieldGivenTwice) {
  auto d = only_problem(R"(version: 1
name: x
nodes:
  r1: {asn: 65001, loopback: 10.0.0.1/32, asn: 65002}
)");
  expect_at(d, 4, 43, "nodes.r1.asn");
  EXPECT_EQ(d.message, "field 'asn' given twice");
}

TEST(LoaderErrors, DuplicateNodeName) {
  auto d = only_problem(R"(version: 1
name: x
nodes:
  r1: {asn: 65001, loopback: 10.0.0.1/32}
  r1: {asn: 65002, loopback: 10.0.0.2/32}
)");
  expect_at(d, 5, 3, "nodes.r1");
  EXPECT_EQ(d.message, "duplicate node name 'r1'");
  EXPECT_EQ(d.hint, "node names must be unique; rename one of them");
}

TEST(LoaderErrors, InvalidNodeName) {
  auto d = only_problem(R"(version: 1
name: x
nodes:
  leaf.1: {asn: 65001, loopback: 10.0.0.1/32}
)");
  expect_at(d, 4, 3, "nodes.leaf.1");
  EXPECT_EQ(d.message,
            "invalid node name 'leaf.1'; expected 1-32 of A-Z a-z 0-9 _ - starting with a letter "
            "or digit");
}

const char* kTwoRouters = R"(version: 1
name: x
nodes:
  r1: {asn: 65001, loopback: 10.0.0.1/32}
  r2: {asn: 65002, loopback: 10.0.0.2/32}
links:
)";  // links start on line 7

TEST(LoaderErrors, LinkToUnknownNodeSuggestsTheNearest) {
  auto d = only_problem(std::string(kTwoRouters) + "  - endpoints: [r1:eth1, r3:eth1]\n");
  expect_at(d, 7, 26, "links[0].endpoints[1]");
  EXPECT_EQ(d.message, "unknown node 'r3'");
  EXPECT_EQ(d.hint, "did you mean 'r1'?");
  auto far = only_problem(std::string(kTwoRouters) + "  - endpoints: [spine9:eth1, r2:eth1]\n");
  expect_at(far, 7, 17, "links[0].endpoints[0]");
  EXPECT_EQ(far.message, "unknown node 'spine9'");
  EXPECT_EQ(far.hint, "declare it under nodes");
}

TEST(LoaderErrors, InterfaceUsedByTwoLinks) {
  auto d = only_problem(std::string(kTwoRouters) +
                        "  - endpoints: [r1:eth1, r2:eth1]\n"
                        "  - endpoints: [r1:eth1, r2:eth2]\n");
  expect_at(d, 8, 17, "links[1].endpoints");
  EXPECT_EQ(d.message, "interface r1:eth1 is already used by the link at line 7");
  EXPECT_EQ(d.hint, "each interface joins one link; pick another interface name");
}

TEST(LoaderErrors, LinkFromAnInterfaceToItself) {
  auto d = only_problem(std::string(kTwoRouters) + "  - endpoints: [r1:eth1, r1:eth1]\n");
  expect_at(d, 7, 26, "links[0].endpoints");
  EXPECT_EQ(d.message, "link from r1:eth1 to itself");
  EXPECT_EQ(d.hint, "a link joins two different interfaces");
}

TEST(LoaderErrors, LinkBetweenTwoPortsOfOneNode) {
  // containerlab accepts it; a twin node is one routing table, so nothing would cross it.
  for (const char* more : {"", "    addresses: {r1: 10.0.9.1/24}\n", "    mtu: 1000\n"}) {
    auto d = only_problem(std::string(kTwoRouters) + "  - endpoints: [r1:eth1, r1:eth2]\n" + more);
    expect_at(d, 7, 5, "links[0].endpoints");
    EXPECT_EQ(d.message, "link joins two ports of the same node, r1:eth1 and r1:eth2");
    EXPECT_THAT(d.hint, HasSubstr("one routing table"));
  }
}

TEST(LoaderErrors, AValueWithTerminalEscapesIsQuotedEscaped) {
  auto l = load(
      "version: 1\nname: x\nnodes:\n"
      "  r1: {asn: 65001, loopback: 10.0.0.1/32}\n"
      "links:\n"
      "  - endpoints: [r1:swp1, \"r9\\e[2J:swp1\"]\n");
  EXPECT_FALSE(l.topo.has_value());
  std::string out = l.diags.format();
  EXPECT_EQ(out.find('\x1b'), std::string::npos) << out;
  EXPECT_THAT(out, HasSubstr("r9\\x1b[2J"));
}

TEST(LoaderErrors, InterfaceNameOf16Bytes) {
  auto d =
      only_problem(std::string(kTwoRouters) + "  - endpoints: [r1:abcdefghijklmnop, r2:eth1]\n");
  expect_at(d, 7, 17, "links[0].endpoints[0]");
  EXPECT_EQ(d.message,
            "interface name 'abcdefghijklmnop' is 16 bytes; Linux allows at most 15 (IFNAMSIZ)");
  EXPECT_EQ(d.hint, "use short Linux names such as swp1 or eth0");
  // 15 bytes is fine.
  auto ok = load(std::string(kTwoRouters) + "  - endpoints: [r1:abcdefghijklmno, r2:eth1]\n");
  EXPECT_TRUE(ok.topo.has_value()) << dump(ok.diags);
}

TEST(LoaderErrors, InterfaceNameWithSlashAndSpace) {
  auto l = load(std::string(kTwoRouters) + "  - endpoints: [r1:eth/1, 'r2:eth 1']\n");
  ASSERT_FALSE(l.topo.has_value());
  ASSERT_EQ(l.diags.items().size(), 2u) << dump(l.diags);
  expect_at(l.diags.items()[0], 7, 17, "links[0].endpoints[0]");
  EXPECT_EQ(l.diags.items()[0].message, "interface name 'eth/1' contains '/', ':' or whitespace");
  expect_at(l.diags.items()[1], 7, 27, "links[0].endpoints[1]");
  EXPECT_EQ(l.diags.items()[1].message, "interface name 'eth 1' contains '/', ':' or whitespace");
}

TEST(LoaderErrors, LoopbackCannotBeLinkedAndEndpointsNeedNodeColonInterface) {
  auto l = load(std::string(kTwoRouters) +
                "  - endpoints: [r1:lo, r2:eth1]\n"
                "  - endpoints: [r1, 'r2:']\n"
                "  - endpoints: [r1:eth3]\n");
  ASSERT_FALSE(l.topo.has_value());
  ASSERT_EQ(l.diags.items().size(), 4u) << dump(l.diags);
  // Parsing problems first (in file order), then the semantic check of link 0.
  expect_at(l.diags.items()[0], 8, 17, "links[1].endpoints[0]");
  EXPECT_EQ(l.diags.items()[0].message, "expected node:interface, got 'r1'");
  EXPECT_EQ(l.diags.items()[0].hint, "e.g. leaf1:swp1");
  expect_at(l.diags.items()[1], 8, 21, "links[1].endpoints[1]");
  EXPECT_EQ(l.diags.items()[1].message, "expected node:interface, got 'r2:'");
  expect_at(l.diags.items()[2], 9, 16, "links[2].endpoints");
  EXPECT_EQ(l.diags.items()[2].message,
            "expected exactly two endpoints like [leaf1:swp1, spine1:swp1]");
  expect_at(l.diags.items()[3], 7, 17, "links[0].endpoints[0]");
  EXPECT_EQ(l.diags.items()[3].message,
            "interface 'lo' is the node's loopback and cannot be linked");
}

TEST(LoaderErrors, UnknownKind) {
  auto l = load(R"(version: 1
name: x
nodes:
  r1: {kind: fr, asn: 65001, loopback: 10.0.0.1/32}
  r2: {kind: switch}
)");
  ASSERT_FALSE(l.topo.has_value());
  ASSERT_EQ(l.diags.items().size(), 2u) << dump(l.diags);
  expect_at(l.diags.items()[0], 4, 14, "nodes.r1.kind");
  EXPECT_EQ(l.diags.items()[0].message, "unknown kind 'fr'");
  EXPECT_EQ(l.diags.items()[0].hint, "did you mean 'frr'?");
  expect_at(l.diags.items()[1], 5, 14, "nodes.r2.kind");
  EXPECT_EQ(l.diags.items()[1].message, "unknown kind 'switch'");
  EXPECT_EQ(l.diags.items()[1].hint, "expected one of: frr, host, bridge");
}

TEST(LoaderErrors, UnknownImageWithHint) {
  ::unsetenv("TWIN_IMAGES");
  auto d = only_problem(R"(version: 1
name: x
nodes:
  r1: {image: frr-9.0, asn: 65001, loopback: 10.0.0.1/32}
)");
  expect_at(d, 4, 15, "nodes.r1.image");
  EXPECT_EQ(d.message, "unknown image 'frr-9.0' (looked in " + kTestData +
                           "/images/frr-9.0.yaml, " + kRepo +
                           "/images/frr-9.0.yaml, /usr/share/twin/images/frr-9.0.yaml)");
  EXPECT_EQ(d.hint, "did you mean 'frr-10'?");  // images/frr-10.yaml (FRR 10.3)

  auto far = only_problem(R"(version: 1
name: x
defaults: {image: cisco-ios}
nodes:
  r1: {asn: 65001, loopback: 10.0.0.1/32}
)");
  expect_at(far, 5, 3, "nodes.r1.image");  // inherited: the node that uses it
  EXPECT_THAT(far.message, StartsWith("unknown image 'cisco-ios' (looked in "));
  EXPECT_EQ(far.hint,
            "available: bridge, cumulus-vx, frr-10, frr-7.5, frr-8.4, frr-8.4-container, host, "
            "sonic-vs, test-vm");
}

TEST(LoaderErrors, ImageOfTheWrongKind) {
  auto d = only_problem(R"(version: 1
name: x
nodes:
  r1: {image: host, asn: 65001, loopback: 10.0.0.1/32}
)");
  expect_at(d, 4, 15, "nodes.r1.image");
  EXPECT_EQ(d.message, "image 'host' is for kind host, but the node is kind frr");
  EXPECT_EQ(d.hint, "pick an image of kind frr");
}

TEST(LoaderErrors, MissingConfigFile) {
  TempDir dir;
  auto d = only_problem(R"(version: 1
name: x
nodes:
  r1: {config: r1.conf}
)",
                        dir.path());
  expect_at(d, 4, 16, "nodes.r1.config");
  EXPECT_EQ(d.message, "config file '" + dir.path() + "/r1.conf' does not exist");
  EXPECT_EQ(d.hint, "paths are relative to the topology file's folder");
}

TEST(LoaderErrors, MtuOutOfRange) {
  auto l = load(std::string(kTwoRouters) +
                "  - endpoints: [r1:eth1, r2:eth1]\n"
                "    mtu: 67\n"
                "  - endpoints: [r1:eth2, r2:eth2]\n"
                "    mtu: 65536\n");
  ASSERT_FALSE(l.topo.has_value());
  ASSERT_EQ(l.diags.items().size(), 2u) << dump(l.diags);
  expect_at(l.diags.items()[0], 8, 10, "links[0].mtu");
  EXPECT_EQ(l.diags.items()[0].message, "MTU 67 is outside 68-65535 bytes");
  EXPECT_EQ(l.diags.items()[0].hint,
            "MTU excludes the Ethernet header; data-center fabrics commonly use 9216");
  expect_at(l.diags.items()[1], 10, 10, "links[1].mtu");
  EXPECT_EQ(l.diags.items()[1].message, "MTU 65536 is outside 68-65535 bytes");

  auto edges = load(std::string(kTwoRouters) +
                    "  - endpoints: [r1:eth1, r2:eth1]\n"
                    "    mtu: 65535\n");
  EXPECT_TRUE(edges.topo.has_value()) << dump(edges.diags);
}

TEST(LoaderErrors, MtuBelow1280OnFrrLink) {
  auto d = only_problem(std::string(kTwoRouters) +
                        "  - endpoints: [r1:eth1, r2:eth1]\n"
                        "    mtu: 1000\n");
  expect_at(d, 8, 10, "links[0].mtu");  // the value
  EXPECT_EQ(d.message,
            "MTU 1000 is below 1280 on a link that needs IPv6 (BGP unnumbered peers over IPv6 "
            "link-local)");
  EXPECT_EQ(d.hint, "Linux removes IPv6 from an interface whose MTU is under 1280 (RFC 8200 §5)");

  // 1280 itself is fine.
  auto ok = load(std::string(kTwoRouters) +
                 "  - endpoints: [r1:eth1, r2:eth1]\n"
                 "    mtu: 1280\n");
  EXPECT_TRUE(ok.topo.has_value()) << dump(ok.diags);
}

TEST(LoaderErrors, MtuBelow1280FromDefaultsPointsAtEachLink) {
  auto l = load(R"(version: 1
name: x
defaults: {mtu: 1000}
nodes:
  r1: {asn: 65001, loopback: 10.0.0.1/32}
  r2: {asn: 65002, loopback: 10.0.0.2/32}
links:
  - endpoints: [r1:eth1, r2:eth1]
  - endpoints: [r1:eth2, r2:eth2]
    mtu: 67
)");
  ASSERT_FALSE(l.topo.has_value());
  // The bad link MTU is reported once; the defaults' 1000 it fell back to is not re-reported.
  ASSERT_EQ(l.diags.items().size(), 2u) << dump(l.diags);
  expect_at(l.diags.items()[0], 10, 10, "links[1].mtu");
  EXPECT_EQ(l.diags.items()[0].message, "MTU 67 is outside 68-65535 bytes");
  expect_at(l.diags.items()[1], 8, 5, "links[0].mtu");
  EXPECT_EQ(l.diags.items()[1].message,
            "MTU 1000 (from defaults.mtu) is below 1280 on a link that needs IPv6 (BGP "
            "unnumbered peers over IPv6 link-local)");
}

TEST(LoaderErrors, MtuBelow1280OnHostLinkWithIpv6) {
  auto d = only_problem(R"(version: 1
name: x
nodes:
  r1: {asn: 65001, loopback: 10.0.0.1/32}
  h1: {kind: host}
links:
  - endpoints: [r1:eth1, h1:eth0]
    mtu: 1000
    addresses: {r1: "2001:db8::1/64", h1: "2001:db8::2/64"}
)");
  expect_at(d, 8, 10, "links[0].mtu");
  EXPECT_EQ(d.message, "MTU 1000 is below 1280 on a link that needs IPv6");
}

TEST(LoaderErrors, FrrNodeWithoutAsnAndLoopback) {
  auto l = load(R"(version: 1
name: x
nodes:
  r1: {}
  r2:
)");
  ASSERT_FALSE(l.topo.has_value());
  ASSERT_EQ(l.diags.items().size(), 4u) << dump(l.diags);
  expect_at(l.diags.items()[0], 4, 3, "nodes.r1.asn");
  EXPECT_EQ(l.diags.items()[0].message, "missing; the generated BGP configuration needs an ASN");
  EXPECT_EQ(l.diags.items()[0].hint, "add `asn: 65101` or give the node its own `config: file`");
  expect_at(l.diags.items()[1], 4, 3, "nodes.r1.loopback");
  EXPECT_EQ(l.diags.items()[1].message,
            "missing; the generated configuration advertises the node's loopback");
  EXPECT_EQ(l.diags.items()[1].hint, "add e.g. `loopback: 10.255.0.1/32`");
  expect_at(l.diags.items()[2], 5, 3, "nodes.r2.asn");
  expect_at(l.diags.items()[3], 5, 3, "nodes.r2.loopback");
}

TEST(LoaderErrors, AsnOutOfRange) {
  auto d = only_problem(R"(version: 1
name: x
nodes:
  r1: {asn: 4294967296, loopback: 10.0.0.1/32}
)");
  expect_at(d, 4, 13, "nodes.r1.asn");
  EXPECT_EQ(d.message, "ASN 4294967296 is outside 1-4294967295");
}

TEST(LoaderErrors, InvalidFieldsAreNotAlsoReportedMissing) {
  auto l = load(R"(version: 1
name: x
nodes:
  r1: {asn: 0, loopback: 10.0.0.0/24}
  r2: {asn: , loopback: "fd00::2/128", router-id: "fd00::2"}
  r3: {asn: [1], loopback: []}
)");
  ASSERT_FALSE(l.topo.has_value());
  ASSERT_EQ(l.diags.items().size(), 6u) << dump(l.diags);
  expect_at(l.diags.items()[0], 4, 13, "nodes.r1.asn");
  EXPECT_EQ(l.diags.items()[0].message, "ASN 0 is outside 1-4294967295");
  expect_at(l.diags.items()[1], 4, 26, "nodes.r1.loopback");
  EXPECT_EQ(l.diags.items()[1].message, "loopback '10.0.0.0/24' is not a host prefix");
  expect_at(l.diags.items()[2], 5, 13, "nodes.r2.asn");
  EXPECT_EQ(l.diags.items()[2].message, "expected an integer, but the value is empty");
  expect_at(l.diags.items()[3], 5, 51, "nodes.r2.router-id");
  EXPECT_EQ(l.diags.items()[3].message, "a BGP router-id is an IPv4 address (RFC 6286)");
  expect_at(l.diags.items()[4], 6, 13, "nodes.r3.asn");
  EXPECT_EQ(l.diags.items()[4].message, "expected an integer, got a list");
  // An empty list is no loopback at all.
  expect_at(l.diags.items()[5], 6, 3, "nodes.r3.loopback");
  EXPECT_THAT(l.diags.items()[5].message, StartsWith("missing;"));
}

TEST(LoaderErrors, Ipv6OnlyLoopbackWithoutRouterId) {
  auto d = only_problem(R"(version: 1
name: x
nodes:
  r1: {asn: 65001, loopback: "fd00::1/128"}
  r2: {asn: 65002, loopback: "fd00::2/128", router-id: 10.0.0.2}
)");
  expect_at(d, 4, 3, "nodes.r1.router-id");
  EXPECT_EQ(d.message, "missing; an IPv6-only node needs an explicit IPv4 router-id (RFC 6286)");
  EXPECT_EQ(d.hint, "add e.g. `router-id: 10.255.0.1`");
}

TEST(LoaderErrors, RouterIdMustBeIpv4Host) {
  auto d = only_problem(R"(version: 1
name: x
nodes:
  r1: {asn: 65001, loopback: 10.0.0.1/32, router-id: "fd00::1"}
)");
  expect_at(d, 4, 54, "nodes.r1.router-id");
  EXPECT_EQ(d.message, "a BGP router-id is an IPv4 address (RFC 6286)");
}

TEST(LoaderErrors, DuplicateRouterId) {
  auto d = only_problem(R"(version: 1
name: x
nodes:
  r1: {asn: 65001, loopback: 10.0.0.1/32, router-id: 10.9.9.9}
  r2: {asn: 65002, loopback: 10.0.0.2/32, router-id: 10.9.9.9}
links:
  - endpoints: [r1:eth1, r2:eth1]
)");
  expect_at(d, 5, 54, "nodes.r2.router-id");  // the value, not the node
  EXPECT_EQ(d.message, "router-id 10.9.9.9 is also used by node r1");
  EXPECT_EQ(d.hint, "BGP drops sessions between speakers with the same identifier (RFC 6286)");
}

TEST(LoaderErrors, DuplicateRouterIdTakenFromALoopback) {
  auto d = only_problem(R"(version: 1
name: x
nodes:
  r1: {asn: 65001, loopback: 10.0.0.1/32, router-id: 10.0.0.2}
  r2: {asn: 65002, loopback: [10.0.0.2/32]}
links:
  - endpoints: [r1:eth1, r2:eth1]
)");
  expect_at(d, 5, 31, "nodes.r2.router-id");  // the loopback it was taken from
  EXPECT_EQ(d.message,
            "router-id 10.0.0.2, taken from loopback 10.0.0.2/32, is also used by node r1");
  EXPECT_EQ(d.hint,
            "BGP drops sessions between speakers with the same identifier (RFC 6286); set a "
            "unique `router-id:`");
}

TEST(LoaderErrors, DuplicateLoopbackIsReportedOnce) {
  // r2's router-id is taken from its duplicate loopback: one mistake, one diagnostic. The two
  // routers share a link: on islands that share none the same loopback cannot collide.
  auto d = only_problem(R"(version: 1
name: x
nodes:
  r1: {asn: 65001, loopback: 10.0.0.1/32}
  r2: {asn: 65002, loopback: 10.0.0.1/32}
links:
  - endpoints: [r1:eth1, r2:eth1]
)");
  expect_at(d, 5, 30, "nodes.r2.loopback");
  EXPECT_EQ(d.message, "loopback 10.0.0.1/32 is also used by node r1");
  EXPECT_EQ(d.hint,
            "loopbacks must be unique in the fabric; if both routers hold it on purpose (an "
            "anycast service address), list it under the top-level `anycast:`");

  auto v6 = only_problem(R"(version: 1
name: x
nodes:
  r1: {asn: 65001, loopback: [10.0.0.1/32, "fd00::1/128"]}
  r2: {asn: 65002, loopback: [10.0.0.2/32, "fd00::1/128"]}
links:
  - endpoints: [r1:eth1, r2:eth1]
)");
  expect_at(v6, 5, 44, "nodes.r2.loopback[1]");
  EXPECT_EQ(v6.message, "loopback fd00::1/128 is also used by node r1");
}

TEST(LoaderErrors, LoopbackMustBeAHostPrefix) {
  auto d = only_problem(R"(version: 1
name: x
nodes:
  r1: {asn: 65001, loopback: [10.0.0.1/32, 10.0.0.0/24]}
)");
  expect_at(d, 4, 44, "nodes.r1.loopback[1]");
  EXPECT_EQ(d.message, "loopback '10.0.0.0/24' is not a host prefix");
  EXPECT_EQ(d.hint, "use /32 for IPv4 and /128 for IPv6");
}

TEST(LoaderErrors, HostWithAddressButNoGateway) {
  auto d = only_problem(R"(version: 1
name: x
nodes:
  r1: {asn: 65001, loopback: 10.0.0.1/32}
  h1: {kind: host}
links:
  - endpoints: [r1:eth1, h1:eth0]
    addresses: {r1: 10.0.2.1/24, h1: 10.0.1.2/24}
)");
  expect_at(d, 5, 3, "nodes.h1.gateway");
  EXPECT_EQ(d.message,
            "host has an IPv4 address but no default route: no peer address on its subnet");
  EXPECT_EQ(d.hint,
            "give the router on that link or segment an address in the host's subnet, or set "
            "`gateway:`");
}

TEST(LoaderErrors, ExplicitGatewayOffLink) {
  auto d = only_problem(R"(version: 1
name: x
nodes:
  r1: {asn: 65001, loopback: 10.0.0.1/32}
  h1: {kind: host, gateway: 10.0.9.1}
links:
  - endpoints: [r1:eth1, h1:eth0]
    addresses: {r1: 10.0.1.1/24, h1: 10.0.1.2/24}
)");
  expect_at(d, 5, 29, "nodes.h1.gateway");
  EXPECT_EQ(d.message, "gateway 10.0.9.1 is not on any subnet of the host's links");
}

TEST(LoaderErrors, HostFieldsThatDoNotApply) {
  auto d = only_problem(R"(version: 1
name: x
nodes:
  h1: {kind: host, asn: 65001}
)");
  expect_at(d, 4, 25, "nodes.h1.asn");
  EXPECT_EQ(d.message, "'asn' does not apply to kind host");
  EXPECT_EQ(d.hint, "a host has addresses on its links, a default route and static routes only");
}

TEST(LoaderErrors, AddressesOfANodeNotOnTheLink) {
  auto l = load(R"(version: 1
name: x
nodes:
  r1: {asn: 65001, loopback: 10.0.0.1/32}
  h1: {kind: host}
links:
  - endpoints: [r1:eth1, h1:eth0]
    addresses: {r1: 10.0.1.1/24, h2: 10.0.1.2/24, h1: 10.0.1.300/24}
)");
  ASSERT_FALSE(l.topo.has_value());
  ASSERT_EQ(l.diags.items().size(), 2u) << dump(l.diags);
  expect_at(l.diags.items()[0], 8, 34, "links[0].addresses.h2");
  EXPECT_EQ(l.diags.items()[0].message, "node 'h2' is not an endpoint of this link");
  EXPECT_EQ(l.diags.items()[0].hint, "endpoints are r1 and h1");
  expect_at(l.diags.items()[1], 8, 55, "links[0].addresses.h1");
  EXPECT_EQ(l.diags.items()[1].message,
            "'10.0.1.300/24' is not an IPv4/IPv6 address with prefix length");
  EXPECT_EQ(l.diags.items()[1].hint, "write e.g. 10.0.1.1/24 or 2001:db8::1/64");
}

TEST(LoaderErrors, InvalidLabName) {
  auto d = only_problem(R"(version: 1
name: "my lab"
nodes:
  r1: {asn: 65001, loopback: 10.0.0.1/32}
)");
  expect_at(d, 2, 7, "name");
  EXPECT_EQ(d.message,
            "invalid lab name 'my lab'; expected 1-24 of A-Z a-z 0-9 _ - starting with a letter or "
            "digit");
  EXPECT_EQ(d.hint, "the lab name prefixes namespace and cgroup names");

  auto too_long = only_problem(R"(version: 1
name: abcdefghijklmnopqrstuvwxy
nodes:
  r1: {asn: 65001, loopback: 10.0.0.1/32}
)");
  EXPECT_THAT(too_long.message, StartsWith("invalid lab name 'abcdefghijklmnopqrstuvwxy'"));
  auto longest = load(R"(version: 1
name: abcdefghijklmnopqrstuvwx
nodes:
  r1: {asn: 65001, loopback: 10.0.0.1/32}
)");
  EXPECT_TRUE(longest.topo.has_value()) << dump(longest.diags);
}

TEST(LoaderErrors, AllProblemsAtOnce) {
  auto l = load(R"(version: 1
name: x
nodes:
  r1: {asn: 65001, loopback: 10.0.0.1/32, colour: red}
  r2: {asn: 65002, loopback: 10.0.0.2/32}
links:
  - endpoints: [r1:eth1, r9:eth1]
    mtu: 10
)");
  ASSERT_FALSE(l.topo.has_value());
  ASSERT_EQ(l.diags.items().size(), 3u) << dump(l.diags);
  expect_at(l.diags.items()[0], 4, 43, "nodes.r1.colour");
  EXPECT_EQ(l.diags.items()[0].message, "unknown field 'colour'");
  EXPECT_EQ(l.diags.items()[0].hint,
            "expected one of: kind, image, asn, router-id, loopback, config, gateway, routes, "
            "daemons-file, container-image, mgmt-address");
  expect_at(l.diags.items()[1], 8, 10, "links[0].mtu");
  EXPECT_EQ(l.diags.items()[1].message, "MTU 10 is outside 68-65535 bytes");
  expect_at(l.diags.items()[2], 7, 26, "links[0].endpoints[1]");
  EXPECT_EQ(l.diags.items()[2].message, "unknown node 'r9'");
}

TEST(LoaderErrors, UnreadableFile) {
  Diagnostics d;
  auto t = load_topology("/nonexistent/twin/t.yaml", d);
  EXPECT_FALSE(t.has_value());
  ASSERT_EQ(d.items().size(), 1u);
  EXPECT_EQ(d.items()[0].file, "/nonexistent/twin/t.yaml");
  EXPECT_EQ(d.items()[0].line, 0);
  EXPECT_EQ(d.items()[0].message, "cannot read topology file: No such file or directory");
  EXPECT_EQ(d.format(),
            "/nonexistent/twin/t.yaml: error: cannot read topology file: No such file or "
            "directory\n");
}

// ---------------------------------------------------------------------------------------
// Diagnostics, nearest_name, valid_interface_name

TEST(Diagnostics, FormatOneItem) {
  Diagnostics d;
  EXPECT_TRUE(d.empty());
  EXPECT_EQ(d.format(), "");
  d.add(
      {"t.yaml", 4, 20, "nodes.r1.lopback", "unknown field 'lopback'", "did you mean 'loopback'?"});
  EXPECT_FALSE(d.empty());
  EXPECT_EQ(d.format(),
            "t.yaml:4:20: error: nodes.r1.lopback: unknown field 'lopback' (hint: did you mean "
            "'loopback'?)\n");
}

TEST(Diagnostics, FormatWithoutPlaceFieldOrHintAndInOrder) {
  Diagnostics d;
  d.add({"t.yaml", 0, 0, "", "no place", ""});
  d.add({"t.yaml", 2, 7, "name", "second", ""});
  EXPECT_EQ(d.format(), "t.yaml: error: no place\nt.yaml:2:7: error: name: second\n");
}

TEST(Diagnostics, WarningsAreKeptApartFromErrors) {
  Diagnostics d;
  d.warn({"lab.clab.yml", 3, 5, "mgmt", "ignored by twin", "twin has no management network"});
  EXPECT_TRUE(d.empty());  // a warning does not fail a load
  EXPECT_TRUE(d.items().empty());
  ASSERT_EQ(d.warnings().size(), 1u);
  EXPECT_EQ(d.format(), "");
  EXPECT_EQ(d.format_warnings(),
            "lab.clab.yml:3:5: warning: mgmt: ignored by twin (hint: twin has no management "
            "network)\n");
}

TEST(Diagnostics, FormatOfALoaderResult) {
  auto l = load(R"(version: 1
name: x
nodse: {}
nodes:
  r1: {asn: 65001, loopback: 10.0.0.1/32}
)");
  EXPECT_EQ(l.diags.format(),
            "t.yaml:3:1: error: nodse: unknown field 'nodse' (hint: did you mean 'nodes'?)\n");
}

TEST(NearestName, Typos) {
  const std::vector<std::string> top = {"version", "name", "defaults", "nodes", "links"};
  EXPECT_EQ(twin::nearest_name("nodse", top), "nodes");
  EXPECT_EQ(twin::nearest_name("lnks", top), "links");
  EXPECT_EQ(twin::nearest_name("verison", top), "version");
  EXPECT_EQ(twin::nearest_name("lopback", {"kind", "image", "asn", "router-id", "loopback"}),
            "loopback");
  EXPECT_EQ(twin::nearest_name("nodes", top), "nodes");  // exact
  EXPECT_EQ(twin::nearest_name("colour", top), "");      // nothing close
  EXPECT_EQ(twin::nearest_name("x", {}), "");
}

TEST(NearestName, ThresholdIsMaxOf2AndAThird) {
  // 9 letters: up to 3 edits.
  EXPECT_EQ(twin::nearest_name("abcdefghi", {"abcdefxyz"}), "abcdefxyz");
  EXPECT_EQ(twin::nearest_name("abcdefghi", {"abcdewxyz"}), "");
  // Short words: up to 2 edits.
  EXPECT_EQ(twin::nearest_name("frr", {"f"}), "f");
  EXPECT_EQ(twin::nearest_name("frr", {"host"}), "");
}

TEST(NearestName, ClosestWinsAndTiesGoToTheFirst) {
  EXPECT_EQ(twin::nearest_name("leaf3", {"leaf12", "leaf3x"}), "leaf3x");
  EXPECT_EQ(twin::nearest_name("leaf3", {"leaf1", "leaf3x"}), "leaf1");
  EXPECT_EQ(twin::nearest_name("r3", {"r1", "r2"}), "r1");
  EXPECT_EQ(twin::nearest_name("r3", {"r2", "r1"}), "r2");
}

TEST(InterfaceName, Valid) {
  std::string why = "untouched";
  EXPECT_TRUE(twin::topology::valid_interface_name("swp1", &why));
  EXPECT_EQ(why, "untouched");
  EXPECT_TRUE(twin::topology::valid_interface_name("abcdefghijklmno", &why));  // 15 bytes
  EXPECT_TRUE(twin::topology::valid_interface_name("eth0.100", nullptr));
  EXPECT_TRUE(twin::topology::valid_interface_name("a-b_c", nullptr));
}

TEST(InterfaceName, Invalid) {
  std::string why;
  EXPECT_FALSE(twin::topology::valid_interface_name("", &why));
  EXPECT_EQ(why, "interface name is empty");
  EXPECT_FALSE(twin::topology::valid_interface_name("abcdefghijklmnop", &why));
  EXPECT_EQ(why,
            "interface name 'abcdefghijklmnop' is 16 bytes; Linux allows at most 15 (IFNAMSIZ)");
  // Bytes, not characters: 14 ASCII letters and one two-byte UTF-8 letter.
  EXPECT_FALSE(twin::topology::valid_interface_name("abcdefghijklmn\xc3\xa9", &why));
  EXPECT_THAT(why, HasSubstr("is 16 bytes"));
  for (const char* bad : {"eth/1", "eth:1", "eth 1", "eth\t1", "eth\n1"}) {
    EXPECT_FALSE(twin::topology::valid_interface_name(bad, &why)) << bad;
    EXPECT_EQ(why, "interface name '" + std::string(bad) + "' contains '/', ':' or whitespace");
  }
  EXPECT_FALSE(twin::topology::valid_interface_name(".", &why));
  EXPECT_EQ(why, "interface name cannot be '.' or '..'");
  EXPECT_FALSE(twin::topology::valid_interface_name("..", nullptr));
}

}  // namespace
