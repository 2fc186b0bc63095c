// Unit tests for containerlab files (twin/topology/containerlab.hpp): recognised by shape,
// inheritance node > group > kind > defaults, FRR nodes from binds, hosts from exec lines,
// every refused input at its line:column, the reference lab planning like lab.yaml, and
// `twin convert` output planning like its source.
#include "twin/topology/containerlab.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "tests/unit/support.hpp"
#include "twin/core/diagnostics.hpp"
#include "twin/core/input_policy.hpp"
#include "twin/gate/scenario.hpp"
#include "twin/plan/plan.hpp"
#include "twin/topology/loader.hpp"
#include "validators/reachability/reachability.hpp"

namespace {

namespace fs = std::filesystem;
using twin::Diagnostics;
using twin::topology::load_topology;
using twin_test::dump;

const fs::path kData = fs::path(TWIN_TEST_DATA) / "clab";
const fs::path kRepo = fs::path(TWIN_TEST_DATA).parent_path().parent_path();
const fs::path kTriangle = kRepo / "topologies" / "ospf-triangle";

// The plan as JSON without what legitimately differs between two files of one lab.
// A topology's plan as JSON, for comparing a containerlab file with its twin twin: without the
// images the containerlab file names (the twin file names profiles; which image runs is decided
// at `up`, plan::resolve_images).
nlohmann::json plan_json(const twin::topology::Topology& t, bool drop_daemons = false) {
  auto j = twin::plan::to_json(twin::plan::make_plan(t));
  j["topology_file"] = "";
  for (auto& n : j["nodes"]) n.erase("asked_image");
  if (drop_daemons)
    for (auto& n : j["nodes"]) {
      n.erase("daemons");
      n.erase("daemon_reasons");
    }
  return j;
}

class TempDir {
 public:
  TempDir() {
    std::string tmpl = ::testing::TempDir() + "twin-clab-XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (!::mkdtemp(buf.data())) throw std::runtime_error("mkdtemp failed");
    path_ = fs::canonical(buf.data());
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  fs::path write(const std::string& name, const std::string& content) const {
    std::ofstream(path_ / name) << content;
    return path_ / name;
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

TEST(Containerlab, RecognisedByShapeOrName) {
  using twin::topology::looks_like_containerlab;
  EXPECT_TRUE(looks_like_containerlab("name: x\ntopology:\n  nodes: {}\n", "lab.yaml"));
  EXPECT_TRUE(looks_like_containerlab("name: x\n", "lab.clab.yml"));
  EXPECT_TRUE(looks_like_containerlab("", "dir/lab.clab.yaml"));
  EXPECT_FALSE(looks_like_containerlab("version: 1\nname: x\nnodes: {}\n", "lab.yaml"));
  EXPECT_FALSE(looks_like_containerlab("version: 1\ntopology:\n  nodes: {}\n", "lab.yaml"));
  EXPECT_FALSE(looks_like_containerlab("[unclosed\n", "lab.yaml"));
}

TEST(Containerlab, OspfTriangleClabPlansLikeLabYaml) {
  Diagnostics d1, d2;
  auto clab = load_topology((kTriangle / "ospf-triangle.clab.yml").string(), d1);
  ASSERT_TRUE(clab) << dump(d1);
  auto lab = load_topology((kTriangle / "lab.yaml").string(), d2);
  ASSERT_TRUE(lab) << dump(d2);
  // The alpine images are read and ignored, with a warning each; the stock daemons file's
  // zebra_options (-s 90000000) is not applied, said once for the three routers. The mgmt
  // block is read (its subnet: twin's management network), without a word.
  ASSERT_EQ(d1.warnings().size(), 4u) << d1.format_warnings();
  for (const auto& w : d1.warnings()) EXPECT_NE(w.field.substr(0, 4), "mgmt") << w.message;
  ASSERT_TRUE(clab->mgmt);
  EXPECT_EQ(clab->mgmt->subnet->str(), "172.20.20.0/24");
  EXPECT_EQ(twin::plan::make_plan(*clab).find("r1")->mgmt_address, "172.20.20.2/24");
  // Apart from the management network, the plans agree.
  auto without_mgmt = [](nlohmann::json j) {
    j.erase("mgmt");
    for (auto& n : j["nodes"]) {
      n.erase("mgmt_address");
      n.erase("mgmt_port");
    }
    return j;
  };
  EXPECT_EQ(without_mgmt(plan_json(*clab, true)), plan_json(*lab, true));
  EXPECT_EQ(twin::plan::make_plan(*clab).find("r1")->asked_image, "frrouting/frr:v8.4.1");
  // The daemons: lab.yaml's routers run the image's (zebra) plus ospfd for their config; the
  // clab routers what configs/daemons enables (ospfd), and neither a staticd: no static route.
  auto pc = twin::plan::make_plan(*clab), pl = twin::plan::make_plan(*lab);
  EXPECT_EQ(pc.find("r1")->daemons, (std::vector<std::string>{"zebra", "ospfd"}));
  EXPECT_EQ(pl.find("r1")->daemons, (std::vector<std::string>{"zebra", "ospfd"}));
  const auto& r1 = *clab->find_node("r1");
  EXPECT_EQ(r1.config, (kTriangle / "configs" / "r1.conf").string());
  ASSERT_FALSE(r1.daemon_settings.empty());
  EXPECT_EQ(r1.daemon_settings.front().file, (kTriangle / "configs" / "daemons").string());
}

TEST(Containerlab, InheritanceNodeGroupKindDefaults) {
  Diagnostics d;
  auto t = load_topology((kData / "inherit.clab.yml").string(), d);
  ASSERT_TRUE(t) << dump(d);
  const auto* r1 = t->find_node("r1");
  const auto* r2 = t->find_node("r2");
  const auto* h1 = t->find_node("h1");
  // r1: image from the kind (an FRR image), its own binds replace the kind's: no daemons file.
  EXPECT_EQ(r1->kind, twin::topology::NodeKind::kFrr);
  EXPECT_EQ(r1->config, (kData / "configs" / "r1.conf").string());
  EXPECT_TRUE(r1->daemon_settings.empty());
  EXPECT_EQ(r1->loopbacks.at(0).str(), "10.0.255.1/32");  // from its frr.conf
  EXPECT_FALSE(r1->router_id);  // the config's `bgp router-id` or FRR's choice, not the loopback
  // r2: the kind's binds (the daemons file) and its own startup-config.
  EXPECT_EQ(r2->kind, twin::topology::NodeKind::kFrr);
  EXPECT_EQ(r2->config, (kData / "configs" / "r2.conf").string());
  ASSERT_EQ(r2->daemon_settings.size(), 2u);
  EXPECT_EQ(r2->daemon_settings[1].daemon, "ospfd");
  // h1: group pcs overrides the kind's image (alpine) and binds (none): a host.
  EXPECT_EQ(h1->kind, twin::topology::NodeKind::kHost);
  EXPECT_EQ(h1->image, "host");
  ASSERT_EQ(h1->gateways.size(), 1u);
  EXPECT_EQ(h1->gateways[0].address(), "192.168.1.1");
  ASSERT_EQ(h1->routes.size(), 1u);
  EXPECT_EQ(h1->routes[0].destination.str(), "10.0.0.0/8");
  ASSERT_EQ(t->links.size(), 2u);
  EXPECT_EQ(t->links[0].mtu, 9500);  // containerlab's default
  EXPECT_EQ(t->links[1].mtu, 1500);  // ip link set eth1 mtu 1500
  EXPECT_EQ(t->links[1].b.node, "h1");  // the type: veth form
  EXPECT_EQ(t->links[1].addresses.at("h1").at(0).str(), "192.168.1.10/24");
  // The defaults' env is warned about once, at its place; the group's image likewise.
  ASSERT_EQ(d.warnings().size(), 2u) << d.format_warnings();
  EXPECT_EQ(d.warnings()[0].field, "topology.defaults.env");
  EXPECT_EQ(d.warnings()[0].line, 6);
  EXPECT_EQ(d.warnings()[1].field, "topology.groups.pcs.image");
  EXPECT_EQ(d.warnings()[1].line, 14);
  EXPECT_EQ(d.warnings()[1].column, 14);
}

TEST(Containerlab, EveryRefusedInputAtItsPlace) {
  Diagnostics d;
  const std::string file = (kData / "bad.clab.yml").string();
  EXPECT_FALSE(load_topology(file, d));
  struct Want {
    int line, column;
    std::string field, message_start;
  };
  const std::vector<Want> want = {
      {5, 13, "topology.nodes.ceos1.kind", "node ceos1 is of kind 'ceos', which needs a vendor"},
      {8, 13, "topology.nodes.eth0.kind",
       "node eth0 is of kind 'host', the host itself or a container outside the lab"},
      {13, 11, "topology.nodes.h1.exec[1]",
       "exec command 'sh -c 'echo 1 > /proc/sys/net/ipv4/ip_forward'' is not run: twin does not "
       "run arbitrary commands as root on this machine"},
      {14, 11, "topology.nodes.h1.exec[2]",
       "exec command 'ip route add 10.0.0.0/8 dev eth1' is not one twin models"},
      {20, 19, "topology.links[1].endpoints",
       "interface h1:eth1 is already used by the link at line 19"},
      {21, 19, "topology.links[2].endpoints[0]", "expected node:interface, got 'h1eth3'"},
      {22, 30, "topology.links[3].endpoints[1]", "unknown node 'h9'"},
  };
  ASSERT_EQ(d.items().size(), want.size()) << dump(d);
  auto got = d.items();  // in the file's order, as `format()` prints them
  std::stable_sort(got.begin(), got.end(), [](const auto& a, const auto& b) {
    return std::tie(a.line, a.column) < std::tie(b.line, b.column);
  });
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(i);
    const auto& g = got[i];
    EXPECT_EQ(g.file, file);
    EXPECT_EQ(g.line, want[i].line);
    EXPECT_EQ(g.column, want[i].column);
    EXPECT_EQ(g.field, want[i].field);
    EXPECT_EQ(g.message.rfind(want[i].message_start, 0), 0u) << g.message;
  }
  EXPECT_NE(got[0].hint.find("image profile (images/, backend: libvirt)"), std::string::npos);
}

TEST(Containerlab, ShapeWinsOverTheFileName) {
  // A containerlab lab saved as lab.yaml loads as containerlab.
  TempDir dir;
  auto p = dir.write("lab.yaml", R"(name: shaped
topology:
  nodes:
    h1: {kind: linux, exec: ["ip addr add 10.0.0.1/24 dev eth1"]}
    h2: {kind: linux, exec: ["ip addr add 10.0.0.2/24 dev eth1"]}
  links:
    - endpoints: ["h1:eth1", "h2:eth1"]
)");
  Diagnostics d;
  auto t = load_topology(p.string(), d);
  ASSERT_TRUE(t) << dump(d);
  EXPECT_EQ(t->name, "shaped");
  EXPECT_EQ(t->nodes.size(), 2u);
}

TEST(Containerlab, ConvertedFilePlansLikeTheSource) {
  for (const fs::path& src : {kTriangle / "ospf-triangle.clab.yml", kData / "inherit.clab.yml"}) {
    SCOPED_TRACE(src.string());
    Diagnostics d;
    auto t = load_topology(src.string(), d);
    ASSERT_TRUE(t) << dump(d);
    TempDir dir;
    std::string yaml = twin::topology::to_twin_yaml(*t, src.filename().string(), dir.path());
    EXPECT_EQ(yaml.rfind("# converted from " + src.filename().string() + " by twin convert\n", 0),
              0u);
    auto out = dir.write("lab.yaml", yaml);
    // Its configs stay in the repository: allowed, as `twin up --allow-path` would.
    auto policy = twin::InputPolicy::for_inputs({out.string()}, {kRepo.string()});
    ASSERT_TRUE(policy);
    Diagnostics d2;
    auto back = load_topology(out.string(), d2, "", &*policy);
    ASSERT_TRUE(back) << dump(d2) << yaml;
    // What the converted file cannot avoid saying again: the daemons file's options.
    for (const auto& w : d2.warnings())
      EXPECT_NE(w.message.find("_options ("), std::string::npos) << w.message;
    EXPECT_LE(d2.warnings().size(), 1u);
    EXPECT_EQ(plan_json(*back), plan_json(*t));
    // Paths are relative to the output file's folder.
    EXPECT_NE(yaml.find("config: \"" +
                        fs::relative(t->nodes[0].config, dir.path()).string() + "\""),
              std::string::npos)
        << yaml;
  }
}

TEST(Containerlab, AScenarioMayNameAContainerlabFile) {
  TempDir dir;
  const fs::path change = kRepo / "scenarios" / "clos-2x4" / "changes";
  fs::path some_change;
  for (const auto& e : fs::directory_iterator(change)) {
    some_change = e.path();
    break;
  }
  auto sc_path = dir.write("s.yaml", "version: 1\nname: s\ntopology: " +
                                         (kTriangle / "ospf-triangle.clab.yml").string() +
                                         "\nchange: " + some_change.string() + "\n");
  // The scenario lies outside the repository it names: allowed (`twin run --allow-path`).
  auto policy = twin::InputPolicy::for_inputs({sc_path.string()}, {kRepo.string()});
  ASSERT_TRUE(policy);
  Diagnostics d;
  auto sc = twin::replay::load_scenario(sc_path.string(), d, &*policy);
  ASSERT_TRUE(sc) << dump(d);
  auto t = load_topology(sc->topology, d, "", &*policy);  // what twin run does with it
  ASSERT_TRUE(t) << dump(d);
  EXPECT_EQ(t->name, "ospf-triangle");
}

}  // namespace

TEST(Containerlab, ANodeGivenTwiceIsReportedAtTheSecond) {
  const fs::path file = fs::temp_directory_path() / ("twin-dup-" + std::to_string(getpid()) + ".clab.yml");
  std::ofstream(file) << "name: dup\n"
                         "topology:\n"
                         "  nodes:\n"
                         "    h1: {kind: linux}\n"
                         "    h2: {kind: linux}\n"
                         "    h1: {kind: linux, image: alpine}\n"
                         "  links:\n"
                         "    - endpoints: [\"h1:eth1\", \"h2:eth1\"]\n";
  Diagnostics d;
  EXPECT_FALSE(load_topology(file.string(), d));
  fs::remove(file);
  ASSERT_EQ(d.items().size(), 1u) << dump(d);
  EXPECT_EQ(d.items()[0].line, 6);
  EXPECT_EQ(d.items()[0].field, "topology.nodes.h1");
  EXPECT_EQ(d.items()[0].message, "node h1 is given twice (first at line 4)");
}

TEST(Containerlab, NameGivesALabNameTheFileCannot) {
  const std::string text = "name: srl.frr-lab\ntopology:\n  nodes:\n    h1: {kind: linux}\n";
  Diagnostics bad;
  EXPECT_FALSE(twin::topology::load_topology_text(text, "x.clab.yml", ".", bad));
  ASSERT_EQ(bad.items().size(), 1u) << dump(bad);
  EXPECT_EQ(bad.items()[0].field, "name");
  EXPECT_NE(bad.items()[0].hint.find("give --name NAME"), std::string::npos);
  Diagnostics ok;
  auto t = twin::topology::load_topology_text(text, "x.clab.yml", ".", ok, "srl-frr");
  ASSERT_TRUE(t) << dump(ok);
  EXPECT_EQ(t->name, "srl-frr");
}

TEST(Containerlab, ALinkBetweenTwoPortsOfOneNodeIsRefusedAtItsLine) {
  // containerlab deploys it (a NOS may join two of its VRFs so); a twin node has one routing
  // table, so the cable would carry nothing.
  const std::string text =
      "name: c\ntopology:\n  nodes:\n    h1: {kind: linux}\n    h2: {kind: linux}\n"
      "  links:\n    - endpoints: [\"h1:eth1\", \"h2:eth1\"]\n"
      "    - endpoints: [\"h1:eth2\", \"h1:eth3\"]\n";
  Diagnostics d;
  EXPECT_FALSE(twin::topology::load_topology_text(text, "c.clab.yml", ".", d));
  ASSERT_EQ(d.items().size(), 1u) << dump(d);
  EXPECT_EQ(d.items()[0].line, 8);
  EXPECT_EQ(d.items()[0].message, "link joins two ports of the same node, h1:eth2 and h1:eth3");
}

TEST(Containerlab, ARefusedNodeIsReportedOnceNotAgainAtItsNeighboursExec) {
  const std::string text =
      "name: c\ntopology:\n  nodes:\n    r3: {kind: ceos}\n    h2:\n      kind: linux\n"
      "      exec: [ip addr add 10.0.0.2/24 dev eth1]\n  links:\n"
      "    - endpoints: [\"r3:eth1\", \"h2:eth1\"]\n";
  Diagnostics d;
  EXPECT_FALSE(twin::topology::load_topology_text(text, "c.clab.yml", ".", d));
  ASSERT_EQ(d.items().size(), 1u) << dump(d);  // not also "interface eth1 of h2 is on no link"
  EXPECT_EQ(d.items()[0].field, "topology.nodes.r3.kind");
}

// What containerlab does that twin did not, or changed without a word (issue 44 item 7): its
// magic variables in binds are expanded as containerlab expands them; a daemons file's
// *_options beyond the stock `-A 127.0.0.1`, and a startup-config that loses to a bound
// frr.conf, are warnings naming what was asked and what runs.
TEST(Containerlab, MagicBindVariablesOptionsAndAStartupConfigThatLosesAreSaid) {
  TempDir dir;
  fs::create_directories(dir.path() / "clab-magic" / "r1");
  std::ofstream(dir.path() / "clab-magic" / "r1" / "frr.conf")
      << "frr defaults traditional\nhostname r1\ninterface eth1\n ip address 10.0.12.1/30\n"
         "router ospf\n network 10.0.12.0/30 area 0\n";
  std::ofstream(dir.path() / "clab-magic" / "daemons")
      << "zebra=yes\nospfd=yes\nzebra_options=\"  -A 127.0.0.1 -s 90000000\"\n"
         "ospfd_options=\"   -A 127.0.0.1\"\n";
  dir.write("r2.conf",
            "frr defaults traditional\nhostname r2\ninterface eth1\n"
            " ip address 10.0.12.2/30\nrouter ospf\n network 10.0.12.0/30 area 0\n");
  dir.write("unused.cfg", "hostname r2\n");
  auto file = dir.write("magic.clab.yml", R"(name: magic
topology:
  nodes:
    r1:
      kind: linux
      image: quay.io/frrouting/frr:8.4.1
      binds:
        - __clabNodeDir__/frr.conf:/etc/frr/frr.conf
        - __clabDir__/daemons:/etc/frr/daemons
    r2:
      kind: linux
      image: quay.io/frrouting/frr:8.4.1
      startup-config: unused.cfg
      binds: [r2.conf:/etc/frr/frr.conf]
  links:
    - endpoints: [r1:eth1, r2:eth1]
)");
  Diagnostics d;
  auto t = load_topology(file.string(), d);
  ASSERT_TRUE(t) << dump(d);
  EXPECT_EQ(t->find_node("r1")->config, (dir.path() / "clab-magic/r1/frr.conf").string());
  ASSERT_FALSE(t->find_node("r1")->daemon_settings.empty());
  EXPECT_EQ(t->find_node("r1")->daemon_settings.front().file,
            (dir.path() / "clab-magic/daemons").string());
  std::string warnings = d.format_warnings();
  EXPECT_NE(warnings.find("zebra_options (-s 90000000) is not applied: twin starts zebra with its "
                          "own options"),
            std::string::npos)
      << warnings;
  // The hint says what -s is, not a module it does not load.
  EXPECT_NE(warnings.find("zebra's netlink receive buffer (-s) keeps its default size"),
            std::string::npos)
      << warnings;
  EXPECT_EQ(warnings.find("-M"), std::string::npos) << warnings;
  EXPECT_EQ(warnings.find("ospfd_options"), std::string::npos) << warnings;  // the stock line
  EXPECT_NE(warnings.find("startup-config is not used: FRR reads the frr.conf bound onto "
                          "/etc/frr (" +
                          (dir.path() / "r2.conf").string() + ")"),
            std::string::npos)
      << warnings;
}

namespace {

const fs::path kClab = fs::path(TWIN_TEST_DATA) / "clab";

// The warnings whose message holds `fragment`.
std::vector<twin::Diagnostic> warnings_with(const Diagnostics& d, const std::string& fragment) {
  std::vector<twin::Diagnostic> out;
  for (const auto& w : d.warnings())
    if (w.message.find(fragment) != std::string::npos) out.push_back(w);
  return out;
}

std::vector<std::string> daemons_of(const twin::topology::Node& n) {
  std::vector<std::string> out;
  for (const auto& s : n.daemon_settings)
    if (s.enabled) out.push_back(s.daemon);
  return out;
}

}  // namespace

// containerlab starts an FRR node without frr.conf empty (issue 44 item 7): so does twin, with a
// warning naming the node; the daemons file decides its daemons; nothing of its routing is
// expected, and its hosts, without a router address on their subnets, get no default route and
// are expected to reach their own subnet only.
TEST(Containerlab, AnFrrNodeWithOnlyADaemonsBindStartsEmpty) {
  Diagnostics d;
  const std::string file = (kClab / "daemons-only.clab.yml").string();
  auto t = load_topology(file, d);
  ASSERT_TRUE(t) << dump(d);
  const auto& r1 = *t->find_node("r1");
  EXPECT_EQ(r1.kind, twin::topology::NodeKind::kFrr);
  EXPECT_EQ(r1.config, "");
  ASSERT_TRUE(r1.start_config);
  EXPECT_EQ(*r1.start_config, "");
  EXPECT_EQ(daemons_of(r1), (std::vector<std::string>{"ospfd"}));  // configs/daemons: ospfd=yes
  auto empty = warnings_with(d, "has no frr.conf");
  ASSERT_EQ(empty.size(), 1u) << d.format_warnings();
  EXPECT_EQ(empty[0].line, 7);
  EXPECT_EQ(empty[0].field, "topology.nodes.r1");
  EXPECT_EQ(empty[0].message,
            "FRR node r1 has no frr.conf: it starts with an empty configuration, as containerlab "
            "starts it; twin expects no routing of it (no BGP sessions, OSPF adjacencies or "
            "routes)");
  // The hosts: no router holds an address on their subnets, so no default route, said so.
  EXPECT_TRUE(t->find_node("h1")->gateways.empty());
  auto bare = warnings_with(d, "has no default route");
  ASSERT_EQ(bare.size(), 2u) << d.format_warnings();
  EXPECT_EQ(bare[0].line, 18);
  EXPECT_EQ(bare[0].message,
            "host h1 has no default route in the containerlab file and no router holds an "
            "address on its subnet (192.168.1.0/24) to take one from: it runs without one, as in "
            "containerlab; twin expects it to reach its own subnet only");
  EXPECT_EQ(d.warnings().size(), 3u) << d.format_warnings();

  auto p = twin::plan::make_plan(*t);
  const auto& n1 = *p.find("r1");
  EXPECT_FALSE(n1.config_generated);
  EXPECT_EQ(n1.config_source, "");
  EXPECT_EQ(n1.frr_config, "");
  EXPECT_EQ(n1.frr_profile, "traditional");  // FRR's own default, as the image runs it
  EXPECT_EQ(n1.daemons, (std::vector<std::string>{"zebra", "ospfd"}));
  EXPECT_TRUE(n1.bgp_neighbors.empty());
  EXPECT_TRUE(n1.ospf_interfaces.empty());
  EXPECT_TRUE(n1.advertised.empty());
  EXPECT_TRUE(p.find("h1")->routes.empty());
  // r2's OSPF faces r1 on eth1, where r1 runs none: no adjacency, no session, and nothing
  // of r1 expected anywhere.
  EXPECT_TRUE(p.sessions.empty());
  EXPECT_TRUE(p.adjacencies.empty());
  for (const auto& e : p.prefixes) EXPECT_NE(e.owner, "r1") << e.prefix;
  EXPECT_FALSE(twin::plan::has_bgp_instance(n1));
  // h1 and h2 sit behind r1 on two subnets without a route: not expected to reach each other.
  for (const auto& probe : twin::validators::reachability_probes(p, 0))
    EXPECT_NE(probe.test_name, "host-mesh") << probe.node << " -> " << probe.subject;
  const std::string text = twin::plan::render_plan_text(p);
  EXPECT_NE(text.find("config: none: FRR starts with an empty configuration"), std::string::npos)
      << text;
  EXPECT_TRUE(p.notes.empty());
}

// The frr kind and its alias: startup-config; without one containerlab's minimal
// configuration; extras.frr.daemons of the node or its kind; a linux node's extras.frr ignored
// with a warning, and a node without a list said once.
TEST(Containerlab, TheFrrKindItsAliasAndExtrasFrrDaemons) {
  Diagnostics d;
  const std::string file = (kClab / "frr-kind.clab.yml").string();
  auto t = load_topology(file, d);
  ASSERT_TRUE(t) << dump(d);
  const auto& r1 = *t->find_node("r1");
  EXPECT_EQ(r1.config, (kClab / "configs" / "r1.conf").string());
  EXPECT_FALSE(r1.start_config);
  EXPECT_EQ(daemons_of(r1), (std::vector<std::string>{"ospfd", "bfdd"}));  // zebra runs anyway
  EXPECT_EQ(r1.daemons_field, "topology.kinds.frr.extras.frr.daemons");
  ASSERT_EQ(r1.daemon_settings.size(), 2u);
  EXPECT_EQ(r1.daemon_settings[0].file, file);
  EXPECT_EQ(r1.daemon_settings[0].mark.line, 11);
  EXPECT_EQ(r1.daemon_settings[1].mark.line, 12);
  const auto& r2 = *t->find_node("r2");  // kind frrouting
  EXPECT_EQ(r2.kind, twin::topology::NodeKind::kFrr);
  EXPECT_EQ(r2.container_image, "quay.io/frrouting/frr:10.3");
  ASSERT_TRUE(r2.start_config);
  EXPECT_EQ(*r2.start_config, "frr defaults traditional\nlog stdout\n");
  EXPECT_TRUE(r2.daemon_settings.empty());
  const auto& r3 = *t->find_node("r3");  // its own list wins over its kind's
  EXPECT_EQ(daemons_of(r3), (std::vector<std::string>{"bgpd"}));
  EXPECT_EQ(r3.daemons_field, "topology.nodes.r3.extras.frr.daemons");
  const auto& r4 = *t->find_node("r4");  // kind linux: its daemons file decides
  EXPECT_EQ(daemons_of(r4), (std::vector<std::string>{"ospfd"}));
  EXPECT_EQ(r4.daemons_field, "");

  const std::string w = d.format_warnings();
  auto minimal = warnings_with(d, "has no startup-config");
  ASSERT_EQ(minimal.size(), 1u) << w;
  EXPECT_EQ(minimal[0].line, 18);
  EXPECT_EQ(minimal[0].message,
            "FRR node r2 (kind frrouting) has no startup-config: it starts with containerlab's "
            "minimal configuration (frr defaults traditional, log stdout); twin expects no "
            "routing of it (no BGP sessions, OSPF adjacencies or routes)");
  auto all = warnings_with(d, "no extras.frr.daemons");
  ASSERT_EQ(all.size(), 1u) << w;
  EXPECT_EQ(all[0].message,
            "node r2 (kind frr) names no extras.frr.daemons: containerlab starts every daemon of "
            "its frr kind; twin starts zebra and the daemons its configuration needs (and those "
            "a change set needs, when applied)");
  auto linux_extras = warnings_with(d, "`extras.frr` is ignored");
  ASSERT_EQ(linux_extras.size(), 1u) << w;
  EXPECT_EQ(linux_extras[0].field, "topology.nodes.r4.extras.frr");
  EXPECT_EQ(linux_extras[0].line, 32);
  EXPECT_EQ(warnings_with(d, "has no frr.conf").size(), 1u) << w;  // r4
  EXPECT_TRUE(warnings_with(d, "`extras` is ignored").empty()) << w;
  EXPECT_EQ(d.warnings().size(), 4u) << w;

  auto p = twin::plan::make_plan(*t);
  EXPECT_EQ(p.find("r1")->daemons, (std::vector<std::string>{"zebra", "ospfd", "bfdd"}));
  EXPECT_EQ(p.find("r2")->daemons, (std::vector<std::string>{"zebra"}));
  EXPECT_EQ(p.find("r2")->frr_config, "frr defaults traditional\nlog stdout\n");
  EXPECT_EQ(p.find("r2")->frr_profile, "traditional");
  EXPECT_EQ(p.find("r3")->daemons, (std::vector<std::string>{"zebra", "bgpd"}));
  // r3's config runs OSPF, which its list leaves out: FRR starts no ospfd there, a note says
  // so, and r1's OSPF expects nobody on eth1.
  ASSERT_EQ(p.notes.size(), 1u);
  EXPECT_EQ(p.notes[0].node, "r3");
  EXPECT_EQ(p.notes[0].source, (kClab / "configs" / "r2.conf").string() + ":6");
  EXPECT_EQ(p.notes[0].text,
            "`ip ospf area 0` (and 2 more lines) needs ospfd, but "
            "topology.nodes.r3.extras.frr.daemons (" +
                file + ":26) does not list ospfd: OSPF will not run on r3");
  EXPECT_TRUE(p.adjacencies.empty());
  const std::string text = twin::plan::render_plan_text(p);
  EXPECT_NE(text.find("--- r2 frr.conf ---\nfrr defaults traditional\nlog stdout\n"),
            std::string::npos)
      << text;
  // twin's format has neither a node without frr.conf nor a daemons list: convert says so.
  Diagnostics c;
  twin::topology::check_convertible(*t, c);
  ASSERT_EQ(c.items().size(), 4u) << dump(c);  // r1, r3 (lists), r2, r4 (no frr.conf)
  EXPECT_EQ(c.items()[0].field, "topology.kinds.frr.extras.frr.daemons");
  EXPECT_EQ(c.items()[0].line, 11);
  EXPECT_EQ(c.items()[1].field, "topology.nodes.r2");
  EXPECT_EQ(c.items()[1].message,
            "FRR node r2 names no frr.conf: twin's format has no node that starts without one");
}

// containerlab refuses a daemons entry that is no list and an unknown daemon; twin also one it
// cannot start. Each at its line and column, named by its field path.
TEST(Containerlab, BadExtrasFrrDaemonsAreRefusedAtTheirPlace) {
  Diagnostics d;
  const std::string file = (kClab / "bad-extras.clab.yml").string();
  EXPECT_FALSE(load_topology(file, d));
  struct Want {
    int line, column;
    std::string field, message, hint;
  };
  const std::vector<Want> want = {
      {10, 20, "topology.nodes.r1.extras.frr.daemons", "expected a list of daemon names",
       "e.g. daemons: [ospfd, bfdd]"},
      {15, 28, "topology.nodes.r2.extras.frr.daemons[1]", "unknown FRR daemon 'bgdp'",
       "did you mean 'bgpd'?"},
      {15, 34, "topology.nodes.r2.extras.frr.daemons[2]", "twin cannot start pim6d", ""},
  };
  ASSERT_EQ(d.items().size(), want.size()) << dump(d);
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(i);
    const auto& g = d.items()[i];
    EXPECT_EQ(g.file, file);
    EXPECT_EQ(g.line, want[i].line);
    EXPECT_EQ(g.column, want[i].column);
    EXPECT_EQ(g.field, want[i].field);
    EXPECT_EQ(g.message, want[i].message);
    if (!want[i].hint.empty()) {
      EXPECT_EQ(g.hint, want[i].hint);
    }
  }
}

// containerlab gives a host no default route of its own; twin adds one via the router on its
// subnet so that reachability can be tested, and says so, unless exec lines give it.
TEST(Containerlab, AHostsDefaultRouteTwinAddsIsSaidAndOneGivenIsNot) {
  Diagnostics d;
  auto t = load_topology((kClab / "hosts.clab.yml").string(), d);
  ASSERT_TRUE(t) << dump(d);
  ASSERT_EQ(d.warnings().size(), 1u) << d.format_warnings();
  const auto& w = d.warnings()[0];
  EXPECT_EQ(w.line, 10);
  EXPECT_EQ(w.field, "topology.nodes.h1");
  EXPECT_EQ(w.message,
            "host h1 has no default route in the containerlab file; twin adds default via "
            "10.0.1.1 (edge) so reachability can be tested; containerlab would give it none");
  EXPECT_EQ(w.hint,
            "add `ip route add default via 10.0.1.1` to its exec lines to run the same "
            "route in both");
  for (const char* h : {"h1", "h2", "h3"}) {
    SCOPED_TRACE(h);
    ASSERT_EQ(t->find_node(h)->gateways.size(), 1u);
  }
  EXPECT_EQ(t->find_node("h1")->gateways[0].address(), "10.0.1.1");
  EXPECT_EQ(t->find_node("h2")->gateways[0].address(), "10.0.2.1");  // ip route add default
  EXPECT_EQ(t->find_node("h3")->gateways[0].address(), "10.0.3.1");  // ip route replace default
  // Each host reaches the others through edge, which holds each one's gateway.
  auto p = twin::plan::make_plan(*t);
  int host_mesh = 0;
  for (const auto& probe : twin::validators::reachability_probes(p, 0))
    host_mesh += probe.test_name == "host-mesh";
  EXPECT_EQ(host_mesh, 6);
}
