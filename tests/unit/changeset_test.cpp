// Unit tests for change sets (twin/changeset/changeset.hpp), checked against the recorded clos-2x4
// plan (tests/data/frr84/plan-rec.json): a change set using every step kind loads with exact
// values; every kind of bad input is reported with its exact place (line:column), field,
// message and hint, all problems at once; `--configs DIR` layouts; negate_config; and the JSON
// Schema (scenarios/schema/change.schema.json) declares exactly what the loader accepts.
#include "twin/changeset/changeset.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <yaml-cpp/yaml.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/unit/fakes.hpp"
#include "tests/unit/support.hpp"
#include "twin/changeset/changeset_keys.hpp"
#include "twin/changeset/frr_checks.hpp"
#include "twin/changeset/intent.hpp"
#include "twin/core/diagnostics.hpp"
#include "twin/plan/plan.hpp"
#include "twin/topology/model.hpp"
#include "validators/registry.hpp"

namespace {

using twin_test::dump;
using twin_test::pattern_of;
using twin_test::property_names;
using twin_test::read;
using twin_test::string_enum;

namespace fs = std::filesystem;
namespace keys = twin::replay::keys;
using nlohmann::json;
using std::chrono::milliseconds;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using twin::Diagnostic;
using twin::Diagnostics;
using twin::replay::ChangeSet;
using twin::replay::LinkRef;
using twin::replay::StepKind;
using twin_test::StringSet;

const std::string kRepo = TWIN_DATA_DIR;
const std::string kTestData = TWIN_TEST_DATA;
const std::string kChanges = kTestData + "/changes";
const std::string kSchema = kRepo + "/scenarios/schema/change.schema.json";

// The recorded clos-2x4 plan: spine1, spine2, leaf1..leaf4 (FRR), server1, server2 (hosts).
// clos-2x4 as recorded, with leaf4 a container node (FRR 8.4.4 from localhost/twin-frr:8.4.4):
// what an image step moves (a container node joins a lab at `up`, so no topology step adds one).
const twin::plan::Plan& plan() {
  static const auto p = [] {
    auto q = twin::plan::plan_from_json(json::parse(read(kTestData + "/frr84/plan-rec.json")));
    for (auto& n : q.nodes)
      if (n.name == "leaf4") {
        n.image = "frr-8.4-container";
        n.backend = twin::topology::Backend::kContainer;
        n.container.image = "localhost/twin-frr:8.4.4";
        n.container.name = n.netns;
        n.container.frr_version = "8.4.4";
      }
    // A management network, so that a `run` step (which needs one) loads.
    q.mgmt = twin::plan::Mgmt{"172.30.9.0/24", "172.30.9.1/24", "tw-clos-2x4.mgmt", "twm00000000",
                              "mgmt0",          "admin",         "twin_mgmt_clos-2x4",
                              "/run/twin/clos-2x4/ssh"};
    return q;
  }();
  return p;
}

std::string canonical(const std::string& p) { return fs::weakly_canonical(p).string(); }

struct Loaded {
  std::optional<ChangeSet> cs;
  Diagnostics diags;
};

Loaded load(const std::string& text, const std::string& dir = kChanges) {
  Loaded l;
  // As the CLI loads them: check steps name the validator registry's families.
  static const std::vector<std::string> families = twin::validators::family_names();
  l.cs = twin::replay::load_change_set_text(text, "c.yaml", dir, plan(), l.diags, nullptr, nullptr,
                                            &families);
  return l;
}

// Loads `text`, expects failure with exactly one diagnostic, returns it.
Diagnostic only_problem(const std::string& text, const std::string& dir = kChanges) {
  auto l = load(text, dir);
  EXPECT_FALSE(l.cs.has_value());
  EXPECT_EQ(l.diags.items().size(), 1u) << dump(l.diags);
  if (l.diags.items().empty()) return {};
  return l.diags.items().front();
}

void expect_at(const Diagnostic& d, int line, int column, const std::string& field) {
  EXPECT_EQ(d.file, "c.yaml") << d.message;
  EXPECT_EQ(d.line, line) << d.message;
  EXPECT_EQ(d.column, column) << d.message;
  EXPECT_EQ(d.field, field) << d.message;
}

// Change sets below start with this; their steps start on line 4.
const std::string kHead = "version: 1\nname: t\nsteps:\n";

// A folder of its own under the test temp dir, removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = ::testing::TempDir() + "twin-changeset-XXXXXX";
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
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  void write(const std::string& name, const std::string& content) const {
    fs::path p = fs::path(path_) / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << content;
  }

 private:
  std::string path_;
};

// ---------------------------------------------------------------------------------------
// Valid change sets

void expect_link(const LinkRef& l, const std::string& str) {
  EXPECT_EQ(l.str(), str);
  EXPECT_EQ(l.a.mark.line, l.mark.line);
  EXPECT_EQ(l.b.mark.line, l.mark.line);
}

TEST(ChangeSetValid, EveryStepKind) {
  Diagnostics d;
  const std::string path = kChanges + "/good.yaml";
  auto cs = twin::replay::load_change_set(path, plan(), d);
  ASSERT_TRUE(cs.has_value()) << dump(d);
  EXPECT_TRUE(d.empty());
  EXPECT_EQ(cs->file, fs::absolute(path).string());
  EXPECT_EQ(cs->dir, fs::absolute(path).parent_path().string());
  EXPECT_EQ(cs->version, 1);
  EXPECT_EQ(cs->name, "raise-fabric-mtu");
  EXPECT_EQ(cs->description, "every step kind, against tests/data/frr84/plan-rec.json");

  // Intent; links in the plan's order of their ends, whichever end the file names.
  const auto& in = cs->intent;
  EXPECT_EQ(in.drain, (std::vector<std::string>{"spine1"}));
  ASSERT_EQ(in.links_down.size(), 2u);
  expect_link(in.links_down[0], "leaf1:swp1--spine1:swp1");
  EXPECT_EQ(in.links_down[0].mark.line, 9);
  EXPECT_EQ(in.links_down[0].mark.column, 16);
  expect_link(in.links_down[1], "leaf1:swp2--spine2:swp1");
  ASSERT_EQ(in.add_prefixes.size(), 1u);
  EXPECT_EQ(in.add_prefixes[0].node, "leaf1");
  EXPECT_EQ(in.add_prefixes[0].prefix, "10.1.9.0/24");
  EXPECT_EQ(in.add_prefixes[0].mark.line, 11);
  // leaf5 exists only in the topology a step switches to.
  ASSERT_EQ(in.remove_prefixes.size(), 1u);
  EXPECT_EQ(in.remove_prefixes[0].node, "leaf5");
  EXPECT_EQ(in.remove_prefixes[0].prefix, "fd00:255::105/128");
  // Tenant intent: a new network and a port meant to be in it.
  ASSERT_EQ(in.tenant_networks.size(), 1u);
  EXPECT_EQ(in.tenant_networks[0].tenant, "green");
  EXPECT_EQ(in.tenant_networks[0].network, "web");
  EXPECT_EQ(in.tenant_networks[0].vni, 30100u);
  ASSERT_EQ(in.tenant_ports.size(), 1u);
  EXPECT_EQ(in.tenant_ports[0].port.str(), "leaf1:swp3");
  EXPECT_EQ(in.tenant_ports[0].tenant, "green");
  EXPECT_EQ(in.tenant_ports[0].network, "web");

  const auto& st = cs->steps;
  ASSERT_EQ(st.size(), 21u);
  std::vector<std::string> names;
  std::vector<std::string> kinds;
  for (const auto& s : st) {
    names.push_back(s.name);
    kinds.push_back(twin::replay::to_string(s.kind()));
  }
  EXPECT_EQ(names, (std::vector<std::string>{"add subnet on leaf1",
                                             "drop leaf4 loopback",
                                             "replace leaf2",
                                             "raise mtu",
                                             "server subnet",
                                             "raise link mtu",
                                             "one link down",
                                             "two links up",
                                             "settle",
                                             "pause",
                                             "check sessions",
                                             "add leaf5",
                                             "configure leaf5",
                                             "forwarding off on spine1",
                                             "strict rp_filter on two leaves",
                                             "green on leaf1",
                                             "no VNI 30100 on leaf2",
                                             "upgrade leaf4",
                                             "leaf4 back a release",
                                             "the orchestrator's playbook",
                                             "final check"}));
  EXPECT_EQ(kinds, (std::vector<std::string>{"frr",   "frr",      "frr",   "interface", "interface",
                                             "link",  "link",     "link",  "wait",      "wait",
                                             "check", "topology", "frr",   "sysctl",    "sysctl",
                                             "vxlan", "vxlan",    "image", "image",     "run",
                                             "check"}));
  // run: the command as written, with its timeout.
  EXPECT_EQ(st[19].run().command, "ansible-playbook -i $TWIN_INVENTORY site.yml");
  EXPECT_EQ(st[19].run().timeout, std::chrono::minutes(5));
  // image: the container node leaf4 moves to frr-10, then frr-7.5.
  EXPECT_EQ(st[17].image().nodes, (std::vector<std::string>{"leaf4"}));
  EXPECT_EQ(st[17].image().to, "frr-10");
  EXPECT_EQ(st[17].image().profile.container.image, "localhost/twin-frr:10.3");
  EXPECT_EQ(st[18].image().to, "frr-7.5");
  EXPECT_EQ(st[0].mark.line, 21);
  EXPECT_EQ(st[0].mark.column, 5);

  // frr: add (block scalar: text starts on the line after `add: |`), remove, replace.
  EXPECT_EQ(st[0].frr().nodes, (std::vector<std::string>{"leaf1"}));
  EXPECT_EQ(st[0].frr().add,
            "router bgp 65101\n address-family ipv4 unicast\n  network 10.1.9.0/24\n");
  EXPECT_EQ(st[0].frr().text_line, 25);
  EXPECT_TRUE(st[0].frr().remove.empty());
  EXPECT_TRUE(st[0].frr().replace.empty());
  EXPECT_EQ(st[1].frr().nodes, (std::vector<std::string>{"leaf4"}));
  EXPECT_EQ(st[1].frr().remove,
            "router bgp 65104\n address-family ipv4 unicast\n  network 10.255.1.4/32\n");
  EXPECT_EQ(st[1].frr().text_line, 32);
  EXPECT_TRUE(st[1].frr().add.empty());
  EXPECT_EQ(st[2].frr().replace, canonical(kChanges + "/configs/leaf2.conf"));
  EXPECT_TRUE(fs::path(st[2].frr().replace).is_absolute());
  EXPECT_EQ(st[2].frr().text_line, 0);

  // interface
  const auto& i3 = st[3].interface();
  ASSERT_EQ(i3.interfaces.size(), 2u);
  EXPECT_EQ(i3.interfaces[0].str(), "leaf1:swp1");
  EXPECT_EQ(i3.interfaces[1].str(), "spine1:swp1");
  EXPECT_EQ(i3.interfaces[1].mark.line, 41);
  EXPECT_EQ(i3.interfaces[1].mark.column, 34);
  EXPECT_EQ(i3.mtu, 9000);
  EXPECT_EQ(i3.up, false);
  EXPECT_TRUE(i3.add_addresses.empty());
  const auto& i4 = st[4].interface();
  ASSERT_EQ(i4.interfaces.size(), 1u);
  EXPECT_EQ(i4.interfaces[0].str(), "leaf1:swp3");
  EXPECT_FALSE(i4.mtu.has_value());
  EXPECT_FALSE(i4.up.has_value());
  EXPECT_EQ(i4.add_addresses, (std::vector<std::string>{"10.1.9.1/24", "2001:db8:9::1/64"}));
  EXPECT_EQ(i4.remove_addresses, (std::vector<std::string>{"10.0.1.1/24"}));

  // link: all, one end, both ends in either order.
  const auto& l5 = st[5].link();
  EXPECT_TRUE(l5.all);
  ASSERT_EQ(l5.links.size(), plan().links.size());
  for (size_t i = 0; i < l5.links.size(); ++i) {
    const auto& p = plan().links[i];
    EXPECT_EQ(l5.links[i].str(),
              p.a_node + ":" + p.a_interface + "--" + p.b_node + ":" + p.b_interface);
  }
  EXPECT_EQ(l5.mtu, 9216);
  EXPECT_FALSE(l5.up.has_value());
  const auto& l6 = st[6].link();
  EXPECT_FALSE(l6.all);
  ASSERT_EQ(l6.links.size(), 1u);
  EXPECT_EQ(l6.links[0].a.node, "leaf1");
  EXPECT_EQ(l6.links[0].a.interface, "swp1");
  EXPECT_EQ(l6.links[0].b.node, "spine1");
  EXPECT_EQ(l6.links[0].b.interface, "swp1");
  EXPECT_EQ(l6.up, false);
  EXPECT_FALSE(l6.mtu.has_value());
  const auto& l7 = st[7].link();
  ASSERT_EQ(l7.links.size(), 2u);
  expect_link(l7.links[0], "leaf1:swp2--spine2:swp1");
  expect_link(l7.links[1], "leaf2:swp1--spine1:swp2");
  EXPECT_EQ(l7.up, true);

  // wait: durations in milliseconds; defaults.
  EXPECT_EQ(st[8].wait().until, "converged");
  EXPECT_EQ(st[8].wait().timeout, milliseconds(1500));
  EXPECT_EQ(st[8].wait().duration, milliseconds(0));
  EXPECT_EQ(st[9].wait().until, "duration");
  EXPECT_EQ(st[9].wait().duration, milliseconds(500));
  EXPECT_EQ(st[9].wait().timeout, milliseconds(60000));

  // check
  EXPECT_EQ(st[10].check().tests, (std::vector<std::string>{"bgp", "mtu.0"}));
  EXPECT_EQ(st[10].check().expect, "fail");
  EXPECT_EQ(st[10].check().failing, (std::vector<std::string>{"bgp.0"}));
  EXPECT_EQ(st[10].check().timeout, milliseconds(60000));
  EXPECT_EQ(st[20].check().tests, (std::vector<std::string>{"routes", "reachability"}));
  EXPECT_EQ(st[20].check().expect, "pass");
  EXPECT_TRUE(st[20].check().failing.empty());
  EXPECT_EQ(st[20].check().timeout, milliseconds(30000));

  // sysctl: settings in file order, values as text.
  EXPECT_EQ(st[13].sysctl().nodes, (std::vector<std::string>{"spine1"}));
  using Set = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(st[13].sysctl().set,
            (Set{{"net.ipv4.ip_forward", "0"}, {"net.ipv6.conf.swp1.disable_ipv6", "1"}}));
  EXPECT_EQ(st[14].sysctl().nodes, (std::vector<std::string>{"leaf1", "leaf2"}));
  EXPECT_EQ(st[14].sysctl().set, (Set{{"net.ipv4.conf.all.rp_filter", "1"}}));

  // vxlan: a VNI with a port on one node; removed from a list of nodes.
  EXPECT_EQ(st[15].vxlan().nodes, (std::vector<std::string>{"leaf1"}));
  EXPECT_EQ(st[15].vxlan().vni, 30100u);
  EXPECT_EQ(st[15].vxlan().ports, (std::vector<std::string>{"swp3"}));
  EXPECT_FALSE(st[15].vxlan().remove);
  EXPECT_EQ(st[16].vxlan().nodes, (std::vector<std::string>{"leaf2"}));
  EXPECT_TRUE(st[16].vxlan().remove);
  EXPECT_TRUE(st[16].vxlan().ports.empty());

  // topology: loaded; later steps may name its new node.
  EXPECT_EQ(st[11].topology().file, canonical(kChanges + "/clos-2x4-leaf5.yaml"));
  ASSERT_TRUE(st[11].topology().topo.has_value());
  EXPECT_EQ(st[11].topology().topo->nodes.size(), 9u);
  EXPECT_NE(st[11].topology().topo->find_node("leaf5"), nullptr);
  EXPECT_EQ(st[12].frr().nodes, (std::vector<std::string>{"leaf5"}));
  EXPECT_EQ(st[12].frr().add, "router bgp 65105");
  EXPECT_EQ(st[12].frr().text_line, 79);  // a one-line scalar: its own line
}

TEST(ChangeSetValid, ToStringNamesTheYamlKeys) {
  using twin::replay::to_string;
  EXPECT_STREQ(to_string(StepKind::kFrr), "frr");
  EXPECT_STREQ(to_string(StepKind::kInterface), "interface");
  EXPECT_STREQ(to_string(StepKind::kLink), "link");
  EXPECT_STREQ(to_string(StepKind::kWait), "wait");
  EXPECT_STREQ(to_string(StepKind::kCheck), "check");
  EXPECT_STREQ(to_string(StepKind::kTopology), "topology");
  EXPECT_STREQ(to_string(StepKind::kSysctl), "sysctl");
  EXPECT_STREQ(to_string(StepKind::kVxlan), "vxlan");
  EXPECT_STREQ(to_string(StepKind::kImage), "image");
  EXPECT_STREQ(to_string(StepKind::kRun), "run");
  std::vector<std::string> all;
  for (auto k :
       {StepKind::kFrr, StepKind::kInterface, StepKind::kLink, StepKind::kWait, StepKind::kCheck,
        StepKind::kTopology, StepKind::kSysctl, StepKind::kVxlan, StepKind::kImage, StepKind::kRun})
    all.push_back(to_string(k));
  EXPECT_EQ(all, keys::kStepKinds);
}

// Only steps that change the network make the gate settle and validate after them when it goes
// step by step; wait and check observe.
TEST(ChangeSetValid, WaitAndCheckAloneDoNotChangeTheNetwork) {
  using twin::replay::changes_network;
  EXPECT_TRUE(changes_network(StepKind::kFrr));
  EXPECT_TRUE(changes_network(StepKind::kInterface));
  EXPECT_TRUE(changes_network(StepKind::kLink));
  EXPECT_TRUE(changes_network(StepKind::kTopology));
  EXPECT_TRUE(changes_network(StepKind::kSysctl));
  EXPECT_FALSE(changes_network(StepKind::kWait));
  EXPECT_FALSE(changes_network(StepKind::kCheck));
}

// text_line is the first content line of the text, however it is written.
TEST(ChangeSetValid, TextLineOfEachScalarStyle) {
  auto l = load(kHead + R"(  - name: literal with a blank first line
    frr:
      node: leaf1
      add: |

        router bgp 65101
  - name: folded
    frr:
      node: leaf1
      remove: >
        router bgp 65101
  - name: quoted
    frr:
      node: leaf1
      add: "router bgp 65101"
  - name: keep
    frr:
      node: leaf1
      add: |+ # a comment
        router bgp 65101
)");
  ASSERT_TRUE(l.cs.has_value()) << dump(l.diags);
  const auto& st = l.cs->steps;
  EXPECT_EQ(st[0].frr().add, "\nrouter bgp 65101\n");
  EXPECT_EQ(st[0].frr().text_line, 9);
  EXPECT_EQ(st[1].frr().text_line, 14);
  EXPECT_EQ(st[2].frr().text_line, 18);
  EXPECT_EQ(st[3].frr().text_line, 23);
}

TEST(ChangeSetValid, MtuBelow1280WhereNoIpv6IsLeft) {
  // leaf1:swp3 has 2001:db8:1::1/64; a step that removes it may go below 1280.
  auto l = load(kHead + R"(  - name: a
    interface:
      interface: leaf1:swp3
      mtu: 1200
      remove-addresses: ["2001:db8:1::1/64"]
)");
  ASSERT_TRUE(l.cs.has_value()) << dump(l.diags);
  EXPECT_EQ(l.cs->steps[0].interface().mtu, 1200);
}

TEST(ChangeSetValid, DurationUnits) {
  const std::vector<std::pair<std::string, long long>> cases = {
      {"1ms", 1},          {"500ms", 500},       {"2s", 2000},        {"1.5s", 1500},
      {"0.001s", 1},       {"1m", 60000},        {"1.5m", 90000},     {"0.25m", 15000},
      {"1440m", 86400000}, {"86400s", 86400000}, {"000000002s", 2000}};
  for (const auto& [text, ms] : cases) {
    SCOPED_TRACE(text);
    auto l = load(kHead + "  - name: a\n    wait: {timeout: " + text + "}\n");
    ASSERT_TRUE(l.cs.has_value()) << dump(l.diags);
    EXPECT_EQ(l.cs->steps[0].wait().timeout, milliseconds(ms));
  }
}

// ---------------------------------------------------------------------------------------
// Bad input: exact place, field, message and hint

TEST(ChangeSetErrors, UnknownNodeSuggestsTheNearest) {
  auto d = only_problem(kHead + R"(  - name: a
    frr:
      node: lef1
      add: router bgp 65101
)");
  expect_at(d, 6, 13, "steps[0].frr.node");
  EXPECT_EQ(d.message, "unknown node 'lef1'");
  EXPECT_EQ(d.hint, "did you mean 'leaf1'?");

  auto drain = only_problem(R"(version: 1
name: t
intent:
  drain: [spine1, spien2]
steps:
  - {name: a, wait: {}}
)");
  expect_at(drain, 4, 19, "intent.drain[1]");
  EXPECT_EQ(drain.message, "unknown node 'spien2'");
  EXPECT_EQ(drain.hint, "did you mean 'spine2'?");

  auto far = only_problem(kHead + "  - name: a\n    frr: {nodes: [zzzzzz], add: x}\n");
  expect_at(far, 5, 19, "steps[0].frr.nodes[0]");
  EXPECT_THAT(far.hint, StartsWith("nodes in the lab: spine1, spine2, leaf1"));
}

TEST(ChangeSetErrors, UnknownInterface) {
  auto d = only_problem(kHead + R"(  - name: a
    interface:
      interface: "leaf1:swp9"
      mtu: 9000
)");
  expect_at(d, 6, 18, "steps[0].interface.interface");
  EXPECT_EQ(d.message, "node 'leaf1' has no interface 'swp9'");
  EXPECT_EQ(d.hint, "did you mean 'swp1'?");

  auto far =
      only_problem(kHead + "  - name: a\n    interface: {interface: 'leaf2:eth77', mtu: 9000}\n");
  EXPECT_EQ(far.message, "node 'leaf2' has no interface 'eth77'");
  EXPECT_EQ(far.hint, "its interfaces: swp1, swp2");

  auto shape = only_problem(kHead + "  - name: a\n    interface: {interface: leaf1, mtu: 9000}\n");
  expect_at(shape, 5, 28, "steps[0].interface.interface");
  EXPECT_EQ(shape.message, "expected node:interface, got 'leaf1'");
}

TEST(ChangeSetErrors, UnknownStepKindSuggestsTheNearest) {
  auto d = only_problem(kHead + R"(  - name: a
    frrr:
      node: leaf1
      add: router bgp 65101
)");
  expect_at(d, 5, 5, "steps[0].frrr");
  EXPECT_EQ(d.message, "unknown step kind 'frrr'");
  EXPECT_EQ(d.hint, "did you mean 'frr'?");

  auto far = only_problem(kHead + "  - name: a\n    colour: blue\n    wait: {}\n");
  expect_at(far, 5, 5, "steps[0].colour");
  EXPECT_EQ(far.message, "unknown field 'colour'");
  EXPECT_EQ(
      far.hint,
      "expected one of: name, frr, interface, link, wait, check, topology, sysctl, vxlan, image, run");

  auto none = only_problem(kHead + "  - name: a\n");
  expect_at(none, 4, 5, "steps[0]");
  EXPECT_EQ(none.message,
            "missing step kind; expected one of: frr, interface, link, wait, check, topology, "
            "sysctl, vxlan, image, run");
}

TEST(ChangeSetErrors, TwoKindsInOneStep) {
  auto d = only_problem(kHead + R"(  - name: a
    wait: {}
    check: {tests: [bgp]}
)");
  expect_at(d, 6, 5, "steps[0].check");
  EXPECT_EQ(d.message, "a step has exactly one kind, but this one has both 'wait' and 'check'");
  EXPECT_EQ(d.hint, "split it into two steps");
}

TEST(ChangeSetErrors, MissingStepName) {
  auto d = only_problem(kHead + "  - wait: {}\n");
  expect_at(d, 4, 5, "steps[0].name");
  EXPECT_EQ(d.message, "missing; expected the step's name");
  EXPECT_THAT(d.hint, HasSubstr("the report refers to steps by name"));

  auto empty = only_problem(kHead + "  - name: ''\n    wait: {}\n");
  expect_at(empty, 4, 11, "steps[0].name");
  EXPECT_EQ(empty.message, "empty step name");
}

TEST(ChangeSetErrors, DuplicateStepName) {
  auto d = only_problem(kHead + R"(  - name: settle
    wait: {}
  - name: settle
    wait: {}
)");
  expect_at(d, 6, 11, "steps[1].name");
  EXPECT_EQ(d.message, "duplicate step name 'settle'; steps[0] at line 4 has it too");
  EXPECT_EQ(d.hint, "step names must be unique: the report refers to steps by name");
}

TEST(ChangeSetErrors, ConfigFileMissing) {
  auto d = only_problem(kHead + R"(  - name: a
    frr:
      node: leaf2
      replace: configs/nope.conf
)");
  expect_at(d, 7, 16, "steps[0].frr.replace");
  EXPECT_EQ(d.message, "config file 'configs/nope.conf' does not exist");
  EXPECT_EQ(d.hint, "looked for " + kChanges +
                        "/configs/nope.conf; paths are relative to the change file's folder");

  auto dir = only_problem(kHead + "  - name: a\n    frr: {node: leaf2, replace: configs}\n");
  expect_at(dir, 5, 33, "steps[0].frr.replace");
  EXPECT_EQ(dir.message, "config file 'configs' is not a regular file");
}

TEST(ChangeSetErrors, MtuOutOfRangeOnBothSides) {
  auto l = load(kHead + R"(  - name: a
    interface:
      interface: leaf1:swp1
      mtu: 67
  - name: b
    link:
      link: leaf1:swp1
      mtu: 65536
)");
  ASSERT_FALSE(l.cs.has_value());
  ASSERT_EQ(l.diags.items().size(), 2u) << dump(l.diags);
  const auto& lo = l.diags.items()[0];
  expect_at(lo, 7, 12, "steps[0].interface.mtu");
  EXPECT_EQ(lo.message, "MTU 67 is outside 68-65535 bytes");
  EXPECT_THAT(lo.hint, HasSubstr("9216"));
  const auto& hi = l.diags.items()[1];
  expect_at(hi, 11, 12, "steps[1].link.mtu");
  EXPECT_EQ(hi.message, "MTU 65536 is outside 68-65535 bytes");
}

TEST(ChangeSetErrors, MtuBelow1280WhereIpv6IsNeeded) {
  auto d = only_problem(kHead + R"(  - name: a
    link:
      link: leaf1:swp1
      mtu: 1000
)");
  expect_at(d, 7, 12, "steps[0].link.mtu");
  EXPECT_EQ(d.message,
            "MTU 1000 is below 1280 on links that need IPv6: leaf1:swp1--spine1:swp1 (BGP "
            "unnumbered over IPv6 link-local)");
  EXPECT_EQ(d.hint, "Linux removes IPv6 from an interface whose MTU is under 1280 (RFC 8200 §5)");

  // An interface with an IPv6 address.
  auto i = only_problem(kHead + "  - name: a\n    interface: {interface: leaf1:swp3, mtu: 1279}\n");
  expect_at(i, 5, 45, "steps[0].interface.mtu");
  EXPECT_EQ(i.message,
            "MTU 1279 is below 1280 on interfaces that need IPv6: leaf1:swp3 (IPv6 address "
            "2001:db8:1::1/64)");

  // Every link: the list is cut short.
  auto all = only_problem(kHead + "  - name: a\n    link: {links: all, mtu: 1000}\n");
  EXPECT_THAT(all.message, StartsWith("MTU 1000 is below 1280 on links that need IPv6: "
                                      "leaf1:swp1--spine1:swp1 (BGP unnumbered"));
  EXPECT_THAT(all.message, EndsWith(" and 6 more"));  // 8 fabric + 2 server links with IPv6
}

TEST(ChangeSetErrors, MalformedAddress) {
  auto d = only_problem(kHead + R"(  - name: a
    interface:
      interface: leaf1:swp3
      add-addresses: [10.1.9.1, 10.1.9.1/24]
)");
  expect_at(d, 7, 23, "steps[0].interface.add-addresses[0]");
  EXPECT_EQ(d.message, "'10.1.9.1' is not an IPv4/IPv6 address with prefix length");
  EXPECT_EQ(d.hint, "write e.g. 10.1.9.1/24 or 2001:db8::1/64");

  auto v6 = only_problem(kHead +
                         "  - name: a\n    interface: {interface: leaf1:swp3, "
                         "remove-addresses: ['2001:db8::g/64']}\n");
  EXPECT_EQ(v6.field, "steps[0].interface.remove-addresses[0]");
  EXPECT_EQ(v6.message, "'2001:db8::g/64' is not an IPv4/IPv6 address with prefix length");
}

TEST(ChangeSetErrors, LinkEndsThatAreNotOneLink) {
  auto d = only_problem(kHead + R"(  - name: a
    link:
      link: "leaf1:swp1--spine2:swp1"
      state: down
)");
  expect_at(d, 6, 13, "steps[0].link.link");
  EXPECT_EQ(d.message, "leaf1:swp1 and spine2:swp1 are not the two ends of one link");
  EXPECT_EQ(d.hint, "leaf1:swp1 is linked to spine1:swp1");

  // Each end is checked on its own first.
  auto end = only_problem(kHead +
                          "  - name: a\n    link: {link: 'leaf1:swp1--spine1:swp7', "
                          "state: down}\n");
  EXPECT_EQ(end.message, "node 'spine1' has no interface 'swp7'");
  auto shape = only_problem(kHead + "  - name: a\n    link: {link: 'leaf1:swp1--', state: down}\n");
  EXPECT_EQ(shape.message, "expected node:interface, got ''");
  EXPECT_EQ(shape.hint, "e.g. leaf1:swp1 or leaf1:swp1--spine1:swp1");
}

TEST(ChangeSetErrors, LinksAllMisspelled) {
  auto d = only_problem(kHead + R"(  - name: a
    link:
      links: al
      mtu: 9216
)");
  expect_at(d, 6, 14, "steps[0].link.links");
  EXPECT_EQ(d.message, "expected `all` or a list of links, got 'al'");
  EXPECT_EQ(d.hint, "did you mean 'all'?");

  auto upper = only_problem(kHead + "  - name: a\n    link: {links: ALL, mtu: 9216}\n");
  EXPECT_EQ(upper.hint, "did you mean 'all'?");
  auto one = only_problem(kHead + "  - name: a\n    link: {links: 'leaf1:swp1', mtu: 9216}\n");
  EXPECT_EQ(one.hint, "for one link write `link: leaf1:swp1` or `links: [leaf1:swp1]`");
}

TEST(ChangeSetErrors, BadDuration) {
  struct Case {
    std::string text, message, hint;
  };
  const std::vector<Case> cases = {
      {"30", "expected a duration like 500ms, 2s, 1.5s or 1m, got '30'",
       "add a unit: 30s (units: ms, s, m)"},
      {"2h", "expected a duration like 500ms, 2s, 1.5s or 1m, got '2h'",
       "a number followed by ms, s or m"},
      {"-1s", "expected a duration like 500ms, 2s, 1.5s or 1m, got '-1s'",
       "a number followed by ms, s or m"},
      {".5s", "expected a duration like 500ms, 2s, 1.5s or 1m, got '.5s'",
       "a number followed by ms, s or m"},
      {"0.5ms", "duration '0.5ms' is not a whole number of milliseconds", ""},
      {"0s", "duration '0s' is zero; expected a positive duration", ""},
      {"1441m", "duration '1441m' is longer than 24h", ""},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    auto d = only_problem(kHead + "  - name: a\n    wait: {timeout: " + c.text + "}\n");
    expect_at(d, 5, 21, "steps[0].wait.timeout");
    EXPECT_EQ(d.message, c.message);
    EXPECT_EQ(d.hint, c.hint);
  }
}

TEST(ChangeSetErrors, WaitDurationOnlyWithUntilDuration) {
  auto missing = only_problem(kHead + "  - name: a\n    wait: {until: duration}\n");
  expect_at(missing, 5, 11, "steps[0].wait.duration");
  EXPECT_EQ(missing.message, "missing; `until: duration` needs a duration");
  auto extra = only_problem(kHead + "  - name: a\n    wait: {duration: 2s}\n");
  expect_at(extra, 5, 12, "steps[0].wait.duration");
  EXPECT_EQ(extra.message, "duration applies only to `until: duration`");
  auto until = only_problem(kHead + "  - name: a\n    wait: {until: converge}\n");
  expect_at(until, 5, 19, "steps[0].wait.until");
  EXPECT_EQ(until.message, "unknown value 'converge'");
  EXPECT_EQ(until.hint, "did you mean 'converged'?");
}

// The families a check step may name are the caller's list (the CLI and training pass the
// validator registry's: there is no second list to keep equal); without one, any name spelled
// as a family is taken.
TEST(ChangeSetFormat, TestFamiliesAreTheCallersList) {
  auto with = [](const std::vector<std::string>* families, const std::string& test) {
    Diagnostics d;
    auto cs = twin::replay::load_change_set_text(
        kHead + "  - {name: a, check: {tests: ['" + test + "']}}\n", "c.yaml", kChanges, plan(), d,
        nullptr, nullptr, families);
    return cs ? std::string() : d.items().at(0).message;
  };
  const std::vector<std::string> isis{"isis"};
  EXPECT_EQ(with(&isis, "isis.0"), "");
  EXPECT_EQ(with(&isis, "bgp"), "unknown test family 'bgp'");
  EXPECT_EQ(with(nullptr, "isis.3"), "");
  EXPECT_EQ(with(nullptr, "BGP"), "'BGP' is not a test family's name");
  // The CLI's loader passes the registry (load() above does as cmd_apply.cpp does).
  for (const auto& f : twin::validators::family_names())
    EXPECT_TRUE(load(kHead + "  - {name: a, check: {tests: [" + f + "]}}\n").cs) << f;
}

TEST(ChangeSetErrors, CheckWithUnknownFamily) {
  auto d = only_problem(kHead + "  - name: a\n    check: {tests: [bgpp]}\n");
  expect_at(d, 5, 21, "steps[0].check.tests[0]");
  EXPECT_EQ(d.message, "unknown test family 'bgpp'");
  EXPECT_EQ(d.hint, "did you mean 'bgp'?");

  auto far = only_problem(kHead + "  - name: a\n    check: {tests: [bgp, latency.1]}\n");
  expect_at(far, 5, 26, "steps[0].check.tests[1]");
  EXPECT_EQ(far.message, "unknown test family 'latency'");
  std::string families;
  for (const auto& f : twin::validators::family_names())
    families += (families.empty() ? "" : ", ") + f;
  EXPECT_EQ(far.hint, "expected one of: " + families);

  for (const std::string n : {"x", "", "-1", "01", "1000000"}) {
    SCOPED_TRACE(n);
    auto num = only_problem(kHead + "  - name: a\n    check: {tests: ['mtu." + n + "']}\n");
    EXPECT_EQ(num.message, "expected a test number after 'mtu.', got '" + n + "'");
  }
}

TEST(ChangeSetErrors, ExpectFailNeedsFailingSingleTestsAmongTests) {
  auto d = only_problem(kHead + R"(  - name: a
    check:
      tests: [bgp]
      expect: fail
)");
  expect_at(d, 6, 7, "steps[0].check.failing");
  EXPECT_EQ(d.message, "missing; `expect: fail` needs the tests that must fail");
  EXPECT_EQ(d.hint, "e.g. failing: [bgp.0]");

  auto family = only_problem(kHead +
                             "  - name: a\n    check: {tests: [bgp], expect: fail, failing: "
                             "[bgp]}\n");
  expect_at(family, 5, 51, "steps[0].check.failing[0]");
  EXPECT_EQ(family.message, "expected a single test like bgp.0, got the family 'bgp'");

  auto outside = only_problem(kHead +
                              "  - name: a\n    check: {tests: [bgp], expect: fail, failing: "
                              "[mtu.0]}\n");
  EXPECT_EQ(outside.message, "test mtu.0 is not among the selected tests");
  EXPECT_EQ(outside.hint, "add mtu (or mtu.0) to tests");

  auto pass = only_problem(kHead + "  - name: a\n    check: {tests: [bgp], failing: [bgp.0]}\n");
  expect_at(pass, 5, 27, "steps[0].check.failing");
  EXPECT_EQ(pass.message, "failing applies only to `expect: fail`");

  auto empty = only_problem(kHead + "  - name: a\n    check: {tests: []}\n");
  expect_at(empty, 5, 20, "steps[0].check.tests");
  EXPECT_THAT(empty.message, StartsWith("empty list"));
}

TEST(ChangeSetErrors, FrrStepOnAHost) {
  auto d = only_problem(kHead + R"(  - name: a
    frr:
      nodes: [leaf1, server1]
      add: ip forwarding
)");
  expect_at(d, 6, 22, "steps[0].frr.nodes[1]");
  EXPECT_EQ(d.message, "node 'server1' is kind host; frr steps configure FRR nodes only");
  EXPECT_EQ(d.hint, "change a host with an interface step");
}

TEST(ChangeSetErrors, FrrStepWithAddAndReplace) {
  auto d = only_problem(kHead + R"(  - name: a
    frr:
      node: leaf2
      add: router bgp 65102
      replace: configs/leaf2.conf
)");
  expect_at(d, 8, 7, "steps[0].frr.replace");
  EXPECT_EQ(d.message, "only one of add, remove, replace per step, but this one also has 'add'");
  EXPECT_EQ(d.hint, "split it into two steps");
}

TEST(ChangeSetErrors, FrrStepShape) {
  auto none = only_problem(kHead + "  - name: a\n    frr: {node: leaf1}\n");
  expect_at(none, 5, 10, "steps[0].frr");
  EXPECT_EQ(none.message, "missing what to do; expected one of add, remove, replace");

  auto both = only_problem(kHead + "  - name: a\n    frr: {nodes: [leaf1], node: leaf2, add: x}\n");
  expect_at(both, 5, 27, "steps[0].frr.node");
  EXPECT_EQ(both.message, "give node or nodes, not both");

  auto empty = only_problem(kHead + "  - name: a\n    frr:\n      node: leaf1\n      add:\n");
  expect_at(empty, 7, 7, "steps[0].frr.add");
  EXPECT_EQ(empty.message, "empty configuration text; expected frr.conf lines");

  auto comments = only_problem(kHead +
                               "  - name: a\n    frr:\n      node: leaf1\n      remove: |\n"
                               "        ! nothing\n");
  EXPECT_EQ(comments.message, "nothing to remove: the text has only comments and blank lines");

  auto two = only_problem(kHead +
                          "  - name: a\n    frr: {nodes: [leaf1, leaf2], replace: "
                          "configs/leaf2.conf}\n");
  expect_at(two, 5, 43, "steps[0].frr.replace");
  EXPECT_EQ(two.message,
            "replace sets one node's whole configuration, but this step names 2 nodes");
}

// A vxlan step names VTEPs (FRR nodes with an IPv4 loopback), a VNI in 24 bits, and server
// ports of one node; a removed VNI takes no ports.
TEST(ChangeSetErrors, VxlanStep) {
  auto fabric = only_problem(kHead + "  - name: a\n    vxlan: {node: spine1, vni: 100, ports: [swp1]}\n");
  expect_at(fabric, 5, 45, "steps[0].vxlan.ports[0]");
  EXPECT_EQ(fabric.message,
            "port spine1:swp1 faces frr node leaf1; a tenant port faces a server (kind host)");

  auto host = only_problem(kHead + "  - name: a\n    vxlan: {node: server1, vni: 100}\n");
  expect_at(host, 5, 19, "steps[0].vxlan.node");
  EXPECT_EQ(host.message, "node 'server1' is kind host; a VTEP is an FRR node (EVPN runs in its bgpd)");

  auto range = only_problem(kHead + "  - name: a\n    vxlan: {node: leaf1, vni: 16777216}\n");
  expect_at(range, 5, 31, "steps[0].vxlan.vni");
  EXPECT_THAT(range.message, HasSubstr("16777215"));

  auto no_vni = only_problem(kHead + "  - name: a\n    vxlan: {node: leaf1, ports: [swp3]}\n");
  EXPECT_EQ(no_vni.field, "steps[0].vxlan.vni");
  EXPECT_THAT(no_vni.message, HasSubstr("missing; expected the VNI"));

  auto remove = only_problem(kHead + "  - name: a\n    vxlan: {node: leaf1, vni: 100, remove: true, ports: [swp3]}\n");
  EXPECT_EQ(remove.message, "a removed VNI takes no ports; its ports stay, unbridged");

  auto two = only_problem(kHead + "  - name: a\n    vxlan: {nodes: [leaf1, leaf2], vni: 100, ports: [swp3]}\n");
  EXPECT_EQ(two.message, "ports with 2 nodes; a port is an interface of one node");

  auto typo = only_problem(kHead + "  - name: a\n    vxlan: {node: leaf1, vni: 100, ports: [swp4]}\n");
  EXPECT_EQ(typo.message, "node 'leaf1' has no interface 'swp4'");

  auto qualified = only_problem(kHead + "  - name: a\n    vxlan: {node: leaf1, vni: 100, ports: [leaf4:swp3]}\n");
  EXPECT_EQ(qualified.message, "'leaf4:swp3' names a node; ports are interfaces of leaf1");
  EXPECT_EQ(qualified.hint, "write swp3 (the step's node is leaf1)");
}

// intent.tenant-networks creates networks on unused VNIs; intent.tenant-ports puts server ports
// in a network of the lab or of tenant-networks, or in none.
TEST(ChangeSetErrors, TenantIntent) {
  const std::string steps = "steps: [{name: a, wait: {}}]\n";
  auto head = [&](const std::string& intent) {
    return "version: 1\nname: t\nintent:\n" + intent + steps;
  };
  auto twice = only_problem(head("  tenant-networks: {green/web: 300, green/db: 300}\n"
                                 "  tenant-ports: {leaf1:swp3: green/web}\n"));
  expect_at(twice, 4, 47, "intent.tenant-networks.green/db");
  EXPECT_EQ(twice.message, "VNI 300 is green/web's");
  // A port meant for a network refused above is not reported again.
  auto follow = only_problem(head("  tenant-networks: {green/web: 0}\n"
                                  "  tenant-ports: {leaf1:swp3: green/web}\n"));
  EXPECT_EQ(follow.field, "intent.tenant-networks.green/web");

  auto no_port = only_problem(head("  tenant-networks: {green/web: 300}\n"));
  expect_at(no_port, 4, 21, "intent.tenant-networks.green/web");
  EXPECT_EQ(no_port.message, "network green/web has no port");

  auto same_net = only_problem(head("  tenant-networks: {green/web: 300, green/web: 301}\n"
                                    "  tenant-ports: {leaf1:swp3: green/web}\n"));
  EXPECT_EQ(same_net.message, "network green/web given twice");
  auto same_port = only_problem(head("  tenant-networks: {green/web: 300}\n"
                                     "  tenant-ports: {leaf1:swp3: green/web, leaf1:swp3: none}\n"));
  EXPECT_EQ(same_port.message, "port leaf1:swp3 given twice");

  auto name = only_problem(head("  tenant-networks: {green: 300}\n"));
  EXPECT_EQ(name.message, "'green' is not tenant/network");

  auto unknown = only_problem(head("  tenant-networks: {green/web: 300}\n"
                                   "  tenant-ports: {leaf1:swp3: green/wbe, leaf4:swp3: green/web}\n"));
  expect_at(unknown, 5, 30, "intent.tenant-ports.leaf1:swp3");
  EXPECT_EQ(unknown.message, "no tenant network 'green/wbe'");
  EXPECT_EQ(unknown.hint, "did you mean 'green/web'?");

  auto fabric = only_problem(head("  tenant-ports: {leaf1:swp1: none}\n"));
  expect_at(fabric, 4, 18, "intent.tenant-ports.leaf1:swp1");
  EXPECT_EQ(fabric.message,
            "port leaf1:swp1 faces frr node spine1; a tenant port faces a server (kind host)");

  Diagnostics d;
  auto ok = twin::replay::load_change_set_text(
      head("  tenant-networks: {green/web: 300}\n  tenant-ports: {leaf1:swp3: green/web, "
           "leaf4:swp3: none}\n"),
      "c.yaml", kChanges, plan(), d);
  ASSERT_TRUE(ok) << dump(d);
  ASSERT_EQ(ok->intent.tenant_ports.size(), 2u);
  EXPECT_EQ(ok->intent.tenant_ports[1].port.str(), "leaf4:swp3");
  EXPECT_EQ(ok->intent.tenant_ports[1].tenant, "");
}

TEST(ChangeSetErrors, SysctlStep) {
  auto host_key = only_problem(kHead + "  - name: a\n    sysctl: {node: leaf1, set: {kernel.panic: 1}}\n");
  expect_at(host_key, 5, 33, "steps[0].sysctl.set.kernel.panic");
  EXPECT_EQ(host_key.message,
            "'kernel.panic' is not a network setting; expected a sysctl name under net.");
  EXPECT_THAT(host_key.hint, HasSubstr("the others are the host's own"));

  auto no_if = only_problem(kHead +
                            "  - name: a\n    sysctl:\n      nodes: [spine1, leaf2]\n      set:\n"
                            "        net.ipv6.conf.swp3.disable_ipv6: 1\n");
  // spine1 has swp3 (its link to leaf3); leaf2 has two uplinks only.
  expect_at(no_if, 8, 9, "steps[0].sysctl.set.net.ipv6.conf.swp3.disable_ipv6");
  EXPECT_EQ(no_if.message, "node leaf2 has no interface swp3 (in net.ipv6.conf.swp3.disable_ipv6)");
  EXPECT_EQ(no_if.hint, "did you mean 'swp1'?");

  auto value = only_problem(kHead + "  - name: a\n    sysctl: {node: leaf1, set: {net.ipv4.ip_forward: \"1; reboot\"}}\n");
  EXPECT_EQ(value.message, "'1; reboot' is not a sysctl value; expected one line of numbers or words");

  auto empty = only_problem(kHead + "  - name: a\n    sysctl: {node: leaf1, set: {}}\n");
  EXPECT_EQ(empty.message, "empty: expected at least one sysctl name and value");

  auto missing = only_problem(kHead + "  - name: a\n    sysctl: {node: leaf1}\n");
  EXPECT_EQ(missing.message, "missing set: the kernel settings to write");

  auto twice = only_problem(kHead + "  - name: a\n    sysctl: {nodes: [leaf1, leaf1], set: {net.ipv4.ip_forward: 0}}\n");
  EXPECT_EQ(twice.message, "node 'leaf1' listed twice");

  // all, default and lo are the kernel's own entries, on every node; hosts take sysctls too.
  auto l = load(kHead + "  - name: a\n    sysctl:\n      nodes: [server1, spine1]\n      set:\n"
                        "        net.ipv4.conf.all.rp_filter: 2\n        net.ipv6.conf.lo.disable_ipv6: 0\n"
                        "        net.ipv4.conf.default.forwarding: 1\n");
  EXPECT_TRUE(l.cs.has_value()) << dump(l.diags);
}

TEST(ChangeSetErrors, TopologyFileWithABadNode) {
  auto l = load(kHead + "  - name: a\n    topology: {file: bad-topology.yaml}\n");
  ASSERT_FALSE(l.cs.has_value());
  ASSERT_EQ(l.diags.items().size(), 2u) << dump(l.diags);
  // The topology loader's own diagnostic, as it is.
  const auto& t = l.diags.items()[0];
  EXPECT_EQ(t.file, canonical(kChanges + "/bad-topology.yaml"));
  EXPECT_EQ(t.line, 9);
  EXPECT_EQ(t.column, 17);
  EXPECT_EQ(t.field, "links[1].endpoints[0]");
  EXPECT_EQ(t.message, "unknown node 'leaf9'");
  EXPECT_EQ(t.hint, "did you mean 'leaf1'?");
  // ... and where the change file names it.
  const auto& c = l.diags.items()[1];
  expect_at(c, 5, 22, "steps[0].topology.file");
  EXPECT_EQ(c.message,
            "topology file 'bad-topology.yaml' has 1 problem, reported with its own file name");

  auto missing = only_problem(kHead + "  - name: a\n    topology: {file: nope.yaml}\n");
  expect_at(missing, 5, 22, "steps[0].topology.file");
  EXPECT_EQ(missing.message, "topology file 'nope.yaml' does not exist");
}

TEST(ChangeSetErrors, TopologyKeepsKindsOfNodesThatStay) {
  TempDir dir;
  dir.write("t.yaml", R"(version: 1
name: clos-2x4
nodes:
  spine1: {asn: 65000, loopback: 10.255.0.1/32}
  leaf1: {asn: 65101, loopback: 10.255.1.1/32}
  server1: {asn: 65201, loopback: 10.255.2.1/32}
links:
  - endpoints: [leaf1:swp1, spine1:swp1]
  - endpoints: [leaf1:swp3, server1:eth0]
)");
  auto l = load(kHead + "  - name: a\n    topology: {file: t.yaml}\n", dir.path());
  ASSERT_FALSE(l.cs.has_value());
  ASSERT_EQ(l.diags.items().size(), 1u) << dump(l.diags);
  const auto& d = l.diags.items()[0];
  EXPECT_EQ(d.file, canonical(dir.path() + "/t.yaml"));
  EXPECT_EQ(d.line, 6);
  EXPECT_EQ(d.column, 3);
  EXPECT_EQ(d.field, "nodes.server1.kind");
  EXPECT_EQ(d.message, "node 'server1' has kind frr here but host in the running lab");
}

TEST(ChangeSetErrors, NodesOfATopologyStepOnlyAfterIt) {
  auto d = only_problem(kHead + R"(  - name: early
    frr: {node: leaf5, add: router bgp 65105}
  - name: add leaf5
    topology: {file: clos-2x4-leaf5.yaml}
  - name: late
    frr: {node: leaf5, add: router bgp 65105}
)");
  expect_at(d, 5, 17, "steps[0].frr.node");
  EXPECT_EQ(d.message, "unknown node 'leaf5'");
}

TEST(ChangeSetErrors, IntentPrefixes) {
  auto l = load(R"(version: 1
name: t
intent:
  add-prefixes:
    - {node: leaf1, prefix: 10.1.9.1/24}
    - {node: server1, prefix: 10.1.8.0/24}
    - {node: leaf1, prefix: 10.1.7.0}
    - {prefix: 10.1.6.0/24}
  remove-prefixes:
    - {node: leaf1, prefx: 10.1.9.0/24}
steps:
  - {name: a, wait: {}}
)");
  ASSERT_FALSE(l.cs.has_value());
  const auto& it = l.diags.items();
  ASSERT_EQ(it.size(), 6u) << dump(l.diags);
  expect_at(it[0], 5, 29, "intent.add-prefixes[0].prefix");
  EXPECT_EQ(it[0].message, "prefix '10.1.9.1/24' has host bits set");
  EXPECT_EQ(it[0].hint, "did you mean '10.1.9.0/24'?");
  expect_at(it[1], 6, 14, "intent.add-prefixes[1].node");
  EXPECT_EQ(it[1].message, "node 'server1' is kind host; only FRR nodes originate prefixes");
  expect_at(it[2], 7, 29, "intent.add-prefixes[2].prefix");
  EXPECT_EQ(it[2].message, "'10.1.7.0' is not an IPv4/IPv6 prefix with length");
  expect_at(it[3], 8, 7, "intent.add-prefixes[3].node");
  EXPECT_EQ(it[3].message, "missing; expected the FRR node that originates the prefix");
  expect_at(it[4], 10, 21, "intent.remove-prefixes[0].prefx");
  EXPECT_EQ(it[4].message, "unknown field 'prefx'");
  EXPECT_EQ(it[4].hint, "did you mean 'prefix'?");
  expect_at(it[5], 10, 7, "intent.remove-prefixes[0].prefix");
  EXPECT_EQ(it[5].message, "missing; expected a prefix such as 10.1.9.0/24");
}

TEST(ChangeSetErrors, MalformedYaml) {
  auto d = only_problem("version: 1\nname: t\nsteps: [{name: a, wait: {}\n");
  EXPECT_EQ(d.file, "c.yaml");
  EXPECT_EQ(d.line, 4);
  EXPECT_EQ(d.column, 1);
  EXPECT_EQ(d.field, "");
  EXPECT_EQ(d.message, "malformed YAML: end of map flow not found");
  EXPECT_EQ(d.hint, "check indentation and brackets near this place");
}

TEST(ChangeSetErrors, TopLevel) {
  auto v2 = only_problem("version: 2\nname: t\nsteps:\n  - {name: a, wait: {}}\n");
  expect_at(v2, 1, 10, "version");
  EXPECT_EQ(v2.message, "unsupported version 2; expected 1");

  auto not_map = only_problem("- a\n");
  expect_at(not_map, 1, 1, "");
  EXPECT_EQ(not_map.message, "expected a mapping with version, name and steps");
  EXPECT_EQ(only_problem("").line, 0);

  auto l = load("# comment\nnaem: x\n");
  ASSERT_EQ(l.diags.items().size(), 4u) << dump(l.diags);
  expect_at(l.diags.items()[0], 2, 1, "naem");
  EXPECT_EQ(l.diags.items()[0].hint, "did you mean 'name'?");
  expect_at(l.diags.items()[1], 2, 1, "version");
  expect_at(l.diags.items()[2], 2, 1, "name");
  expect_at(l.diags.items()[3], 2, 1, "steps");
  EXPECT_EQ(l.diags.items()[3].message, "missing; expected a list of steps");

  auto name = only_problem("version: 1\nname: -x\nsteps: [{name: a, wait: {}}]\n");
  expect_at(name, 2, 7, "name");
  EXPECT_EQ(name.message,
            "invalid change name '-x'; expected A-Z a-z 0-9 _ . - starting with a letter or "
            "digit");

  auto no_steps = only_problem("version: 1\nname: x\nsteps: []\n");
  expect_at(no_steps, 3, 8, "steps");
  EXPECT_EQ(no_steps.message, "no steps; expected at least one");
}

TEST(ChangeSetErrors, AtMostTenThousandSteps) {
  auto steps = [](size_t n) {
    std::string s = "version: 1\nname: x\nsteps:\n";
    for (size_t i = 0; i < n; ++i) s += "  - {name: s" + std::to_string(i) + ", wait: {}}\n";
    return s;
  };
  EXPECT_EQ(twin::replay::kMaxSteps, 10000u);
  // One over: one diagnostic at the list, and not one per step (none is parsed).
  auto over = only_problem(steps(twin::replay::kMaxSteps + 1));
  expect_at(over, 4, 3, "steps");
  EXPECT_EQ(over.message, "10001 steps; a change set has at most 10000");
}

TEST(ChangeSetErrors, SeveralProblemsAtOnce) {
  auto l = load(R"(version: 2
name: t
intent:
  drain: [spine3]
steps:
  - name: a
    frr: {node: server1, add: x}
  - name: a
    interface: {interface: leaf1:swp9, mtu: 9000}
  - name: c
    link: {links: al, mtu: 100000}
  - name: d
    wait: {timeout: 5}
  - name: e
    check: {tests: [bgpp], expect: fail}
)");
  ASSERT_FALSE(l.cs.has_value());
  std::vector<std::string> got;
  for (const auto& d : l.diags.items())
    got.push_back(std::to_string(d.line) + ":" + std::to_string(d.column) + " " + d.field);
  EXPECT_EQ(
      got, (std::vector<std::string>{"1:10 version", "7:17 steps[0].frr.node", "8:11 steps[1].name",
                                     "9:28 steps[1].interface.interface",
                                     "11:19 steps[2].link.links", "11:28 steps[2].link.mtu",
                                     "13:21 steps[3].wait.timeout", "15:21 steps[4].check.tests[0]",
                                     "15:12 steps[4].check.failing", "4:11 intent.drain[0]"}))
      << dump(l.diags);
  // format() lists them by place.
  std::string f = l.diags.format();
  EXPECT_THAT(f, StartsWith("c.yaml:1:10: error: version: unsupported version 2"));
  EXPECT_LT(f.find("c.yaml:4:11"), f.find("c.yaml:7:17"));
}

TEST(ChangeSetErrors, UnknownFieldsInEverySection) {
  auto l = load(R"(version: 1
name: t
intent: {drian: [spine1]}
steps:
  - name: a
    frr: {node: leaf1, add: x, nodse: [leaf1]}
  - name: b
    interface: {interface: leaf1:swp1, mtu: 9000, sate: up}
  - name: c
    link: {link: leaf1:swp1, mtu: 9000, mut: 9000}
  - name: d
    wait: {untill: converged}
  - name: e
    check: {tests: [bgp], timout: 2s}
  - name: f
    topology: {file: clos-2x4-leaf5.yaml, fiel: x}
)");
  ASSERT_FALSE(l.cs.has_value());
  std::vector<std::string> got;
  for (const auto& d : l.diags.items()) got.push_back(d.field + " " + d.hint);
  EXPECT_EQ(got, (std::vector<std::string>{
                     "steps[0].frr.nodse did you mean 'node'?",
                     "steps[1].interface.sate did you mean 'state'?",
                     "steps[2].link.mut did you mean 'mtu'?",
                     "steps[3].wait.untill did you mean 'until'?",
                     "steps[4].check.timout did you mean 'timeout'?",
                     "steps[5].topology.fiel did you mean 'file'?",
                     "intent.drian did you mean 'drain'?",
                 }))
      << dump(l.diags);
}

TEST(ChangeSetErrors, MissingOrUnreadableFile) {
  Diagnostics d;
  EXPECT_FALSE(twin::replay::load_change_set(kChanges + "/nope.yaml", plan(), d));
  ASSERT_EQ(d.items().size(), 1u);
  EXPECT_EQ(d.items()[0].file, kChanges + "/nope.yaml");
  EXPECT_EQ(d.items()[0].line, 0);
  EXPECT_EQ(d.items()[0].message, "cannot read change file: No such file or directory");

  Diagnostics dir;
  EXPECT_FALSE(twin::replay::load_change_set(kChanges, plan(), dir));
  ASSERT_EQ(dir.items().size(), 1u);
  EXPECT_EQ(dir.items()[0].message, "is a directory, not a change file");
}

// ---------------------------------------------------------------------------------------
// twin apply --configs DIR

TEST(ChangeSetConfigs, BothLayoutsInPlanOrder) {
  TempDir dir;
  dir.write("leaf1.conf", "hostname leaf1\n");
  dir.write("spine2/frr.conf", "hostname spine2\n");
  dir.write("README.md", "not a config\n");
  dir.write("notes/todo.txt", "no frr.conf here\n");
  Diagnostics d;
  auto cs = twin::replay::change_set_from_configs(dir.path(), plan(), d);
  ASSERT_TRUE(cs.has_value()) << dump(d);
  EXPECT_EQ(cs->name, "configs from " + fs::path(dir.path()).filename().string());
  EXPECT_EQ(cs->file, "");
  EXPECT_EQ(cs->dir, fs::absolute(dir.path()).string());
  ASSERT_EQ(cs->steps.size(), 2u);
  const auto& s0 = cs->steps[0];  // spine2 comes before leaf1 in the plan
  EXPECT_EQ(s0.name, "replace config of spine2");
  EXPECT_EQ(s0.kind(), StepKind::kFrr);
  EXPECT_EQ(s0.frr().nodes, (std::vector<std::string>{"spine2"}));
  EXPECT_EQ(s0.frr().replace, canonical(dir.path() + "/spine2/frr.conf"));
  EXPECT_TRUE(s0.frr().add.empty());
  EXPECT_EQ(cs->steps[1].name, "replace config of leaf1");
  EXPECT_EQ(cs->steps[1].frr().replace, canonical(dir.path() + "/leaf1.conf"));

  // A trailing slash names the same folder.
  Diagnostics d2;
  auto slash = twin::replay::change_set_from_configs(dir.path() + "/", plan(), d2);
  ASSERT_TRUE(slash.has_value()) << dump(d2);
  EXPECT_EQ(slash->name, cs->name);
}

TEST(ChangeSetConfigs, FilesThatNameNoFrrNode) {
  TempDir dir;
  dir.write("leaf1.conf", "x\n");
  dir.write("lef2.conf", "x\n");
  dir.write("server1.conf", "x\n");
  dir.write("leaf9/frr.conf", "x\n");
  dir.write("zzzzzz.conf", "x\n");
  Diagnostics d;
  EXPECT_FALSE(twin::replay::change_set_from_configs(dir.path(), plan(), d));
  ASSERT_EQ(d.items().size(), 4u) << dump(d);
  const auto& it = d.items();  // in name order
  EXPECT_EQ(it[0].file, dir.path() + "/leaf9/frr.conf");
  EXPECT_EQ(it[0].line, 0);
  EXPECT_EQ(it[0].message, "'leaf9' is no FRR node of lab " + plan().lab);
  EXPECT_EQ(it[0].hint, "did you mean 'leaf1'?");
  EXPECT_EQ(it[1].file, dir.path() + "/lef2.conf");
  EXPECT_EQ(it[1].hint, "did you mean 'leaf2'?");
  EXPECT_EQ(it[2].file, dir.path() + "/server1.conf");
  EXPECT_EQ(it[2].hint, "node server1 is not an FRR node; only FRR nodes take a config");
  EXPECT_EQ(it[3].file, dir.path() + "/zzzzzz.conf");
  EXPECT_EQ(it[3].hint, "FRR nodes: spine1, spine2, leaf1, leaf2, leaf3, leaf4");
}

TEST(ChangeSetConfigs, BothLayoutsForOneNode) {
  TempDir dir;
  dir.write("leaf1.conf", "x\n");
  dir.write("leaf1/frr.conf", "x\n");
  Diagnostics d;
  EXPECT_FALSE(twin::replay::change_set_from_configs(dir.path(), plan(), d));
  ASSERT_EQ(d.items().size(), 1u) << dump(d);
  EXPECT_EQ(d.items()[0].file, dir.path() + "/leaf1/frr.conf");
  EXPECT_EQ(d.items()[0].message, "both leaf1.conf and leaf1/frr.conf exist for node leaf1");
  EXPECT_EQ(d.items()[0].hint, "keep one of them");
}

TEST(ChangeSetConfigs, MissingOrEmptyFolder) {
  TempDir dir;
  Diagnostics missing;
  EXPECT_FALSE(twin::replay::change_set_from_configs(dir.path() + "/nope", plan(), missing));
  ASSERT_EQ(missing.items().size(), 1u);
  EXPECT_EQ(missing.items()[0].file, dir.path() + "/nope");
  EXPECT_EQ(missing.items()[0].message, "no such folder");

  Diagnostics file;
  dir.write("f.conf", "x\n");
  EXPECT_FALSE(twin::replay::change_set_from_configs(dir.path() + "/f.conf", plan(), file));
  ASSERT_EQ(file.items().size(), 1u);
  EXPECT_EQ(file.items()[0].message, "is not a folder");

  TempDir empty;
  Diagnostics none;
  EXPECT_FALSE(twin::replay::change_set_from_configs(empty.path(), plan(), none));
  ASSERT_EQ(none.items().size(), 1u);
  EXPECT_EQ(none.items()[0].message,
            "no <node>.conf found (nor <node>/frr.conf) for any FRR node of lab " + plan().lab);
}

// ---------------------------------------------------------------------------------------
// negate_config

TEST(ChangeSetNegate, LeavesAreNegatedInTheirContext) {
  using twin::replay::negate_config;
  EXPECT_EQ(negate_config("router bgp 65101\n address-family ipv4 unicast\n  network "
                          "10.1.9.0/24\n"),
            "router bgp 65101\n address-family ipv4 unicast\n  no network 10.1.9.0/24\n");
  // Without a final newline, and a top-level leaf.
  EXPECT_EQ(negate_config("ip forwarding"), "no ip forwarding\n");
  EXPECT_EQ(negate_config(""), "");
}

TEST(ChangeSetNegate, NoLeavesAreUnNegated) {
  using twin::replay::negate_config;
  EXPECT_EQ(negate_config("interface swp1\n no shutdown\n ip ospf cost 10\n"),
            "interface swp1\n shutdown\n no ip ospf cost 10\n");
  EXPECT_EQ(negate_config("no ipv6 forwarding\n"), "ipv6 forwarding\n");
}

TEST(ChangeSetNegate, NestedContextsAndEnds) {
  using twin::replay::negate_config;
  const std::string in =
      "router bgp 65101\n"
      " neighbor swp1 interface remote-as external\n"
      " address-family ipv4 unicast\n"
      "  network 10.1.9.0/24\n"
      "  redistribute connected\n"
      " exit-address-family\n"
      " address-family ipv6 unicast\n"
      "  neighbor swp1 activate\n"
      " exit-address-family\n"
      "exit\n"
      "route-map RM permit 10\n"
      " match ip address prefix-list PL\n"
      "end\n";
  const std::string want =
      "router bgp 65101\n"
      " no neighbor swp1 interface remote-as external\n"
      " address-family ipv4 unicast\n"
      "  no network 10.1.9.0/24\n"
      "  no redistribute connected\n"
      " exit-address-family\n"
      " address-family ipv6 unicast\n"
      "  no neighbor swp1 activate\n"
      " exit-address-family\n"
      "exit\n"
      "route-map RM permit 10\n"
      " no match ip address prefix-list PL\n"
      "end\n";
  EXPECT_EQ(negate_config(in), want);
}

TEST(ChangeSetNegate, CommentsAndBlankLinesAreDropped) {
  using twin::replay::negate_config;
  EXPECT_EQ(negate_config("! a comment\n\nrouter bgp 65101\n  \n !\n neighbor x peer-group  \r\n"
                          "!\n"),
            "router bgp 65101\n no neighbor x peer-group\n");
  EXPECT_EQ(negate_config("!\n! only comments\n\n"), "");
}

// ---------------------------------------------------------------------------------------
// The JSON Schema declares exactly what the loader accepts

json read_json(const std::string& p) { return json::parse(read(p)); }

const json& schema() {
  static const json j = read_json(kSchema);
  return j;
}

const json& resolve(const json& s) {
  const json* cur = &s;
  for (int hops = 0; cur->is_object() && cur->contains("$ref"); ++hops) {
    const std::string ref = cur->at("$ref").get<std::string>();
    if (ref.empty() || ref[0] != '#' || hops > 16)
      throw std::runtime_error("unsupported or cyclic $ref '" + ref + "'");
    cur = &schema().at(json::json_pointer(ref.substr(1)));
  }
  return *cur;
}

const json& def(const std::string& name) { return schema().at("$defs").at(name); }

StringSet names(const std::vector<std::string>& v) { return {v.begin(), v.end()}; }

// Each object of the schema and the loader's key list for it.
struct Section {
  std::string name;
  const json* object;
  std::vector<std::string> keys;
};

std::vector<Section> sections() {
  const json& props = schema().at("properties");
  return {
      {"top", &schema(), keys::kTop},
      {"intent", &props.at("intent"), keys::kIntent},
      {"prefix", &def("prefixRef"), keys::kPrefix},
      {"path", &def("pathRef"), keys::kPath},
      {"step", &def("step"), keys::kStep},
      {"frr", &def("frrStep"), keys::kFrr},
      {"interface", &def("interfaceStep"), keys::kInterface},
      {"link", &def("linkStep"), keys::kLink},
      {"wait", &def("waitStep"), keys::kWait},
      {"check", &def("checkStep"), keys::kCheck},
      {"topology", &def("topologyStep"), keys::kTopology},
      {"sysctl", &def("sysctlStep"), keys::kSysctl},
      {"vxlan", &def("vxlanStep"), keys::kVxlan},
  };
}

TEST(ChangeSetSchema, IsDraft202012WithResolvableRefsAndDescriptions) {
  const json& root = schema();
  EXPECT_EQ(root.value("$schema", ""), "https://json-schema.org/draft/2020-12/schema");
  EXPECT_EQ(root.value("type", ""), "object");
  EXPECT_FALSE(root.value("title", "").empty());
  EXPECT_FALSE(root.value("description", "").empty());
  int properties = 0;
  std::function<void(const json&, const std::string&)> walk = [&](const json& s,
                                                                  const std::string& at) {
    if (s.is_object()) {
      if (s.contains("$ref")) {
        EXPECT_NO_THROW((void)resolve(s)) << at;
      }
      if (s.contains("properties") && s.at("properties").is_object() && at.find("/if") == at.npos)
        for (const auto& [name, prop] : s.at("properties").items()) {
          ++properties;
          EXPECT_TRUE(prop.contains("description") &&
                      !prop.at("description").get<std::string>().empty())
              << at << "/properties/" << name << " has no description";
        }
      for (const auto& [k, v] : s.items()) walk(v, at + "/" + k);
    } else if (s.is_array()) {
      for (size_t i = 0; i < s.size(); ++i) walk(s[i], at + "/" + std::to_string(i));
    }
  };
  walk(root, "#");
  EXPECT_GT(properties, 40);
}

TEST(ChangeSetSchema, FieldsEqualTheLoaderKeyLists) {
  for (const auto& s : sections()) {
    SCOPED_TRACE(s.name);
    EXPECT_EQ(property_names(*s.object), names(s.keys));
    EXPECT_EQ(s.object->at("additionalProperties"), json(false));
  }
  // The step kinds: one of them per step.
  StringSet one_of;
  for (const auto& alt : def("step").at("oneOf")) one_of.insert(alt.at("required").at(0));
  EXPECT_EQ(one_of, names(keys::kStepKinds));
  EXPECT_EQ(schema().at("required"), json({"version", "name", "steps"}));
  EXPECT_EQ(def("step").at("required"), json({"name"}));
  EXPECT_EQ(def("topologyStep").at("required"), json({"file"}));
  EXPECT_EQ(def("checkStep").at("required"), json({"tests"}));
  EXPECT_EQ(def("prefixRef").at("required"), json({"node", "prefix"}));
}

// The loader lists a section's fields when it meets one it does not know (a name no typo hint
// comes near): that list equals the schema's.
TEST(ChangeSetSchema, LoaderListsTheSchemaFields) {
  const std::string far = "zzzzzzzzzzzzzzzzzzzz";
  const std::map<std::string, std::string> texts = {
      {"top", kHead + "  - {name: a, wait: {}}\n" + far + ": 1\n"},
      {"intent", "version: 1\nname: t\nintent: {" + far + ": 1}\nsteps: [{name: a, wait: {}}]\n"},
      {"prefix",
       "version: 1\nname: t\nintent: {add-prefixes: [{node: leaf1, prefix: 10.9.0.0/16, " + far +
           ": 1}]}\nsteps: [{name: a, wait: {}}]\n"},
      {"path", "version: 1\nname: t\nintent: {paths: [{node: leaf1, prefix: 10.255.1.2/32, " + far +
                   ": 1}]}\nsteps: [{name: a, wait: {}}]\n"},
      {"step", kHead + "  - {name: a, wait: {}, " + far + ": 1}\n"},
      {"frr", kHead + "  - {name: a, frr: {node: leaf1, add: x, " + far + ": 1}}\n"},
      {"interface",
       kHead + "  - {name: a, interface: {interface: leaf1:swp1, mtu: 9000, " + far + ": 1}}\n"},
      {"link", kHead + "  - {name: a, link: {link: leaf1:swp1, mtu: 9000, " + far + ": 1}}\n"},
      {"wait", kHead + "  - {name: a, wait: {" + far + ": 1}}\n"},
      {"check", kHead + "  - {name: a, check: {tests: [bgp], " + far + ": 1}}\n"},
      {"topology",
       kHead + "  - {name: a, topology: {file: clos-2x4-leaf5.yaml, " + far + ": 1}}\n"},
      {"sysctl", kHead + "  - {name: a, sysctl: {node: leaf1, set: {net.ipv4.ip_forward: 0}, " +
                     far + ": 1}}\n"},
      {"vxlan", kHead + "  - {name: a, vxlan: {node: leaf1, vni: 100, " + far + ": 1}}\n"},
  };
  for (const auto& s : sections()) {
    SCOPED_TRACE(s.name);
    auto l = load(texts.at(s.name));
    ASSERT_EQ(l.diags.items().size(), 1u) << dump(l.diags);
    const auto& d = l.diags.items()[0];
    EXPECT_EQ(d.message, "unknown field '" + far + "'");
    const std::string lead = "expected one of: ";
    ASSERT_THAT(d.hint, StartsWith(lead));
    StringSet listed;
    std::stringstream ss(d.hint.substr(lead.size()));
    for (std::string part; std::getline(ss, part, ',');)
      listed.insert(part.substr(part.find_first_not_of(' ')));
    EXPECT_EQ(listed, property_names(*s.object));
  }
}

// good.yaml uses every field the schema declares, in its section, and loads.
TEST(ChangeSetSchema, TheExampleUsesEveryField) {
  YAML::Node root = YAML::LoadFile(kChanges + "/good.yaml");
  std::map<std::string, StringSet> used;
  auto add = [&](const std::string& section, const YAML::Node& map) {
    ASSERT_TRUE(map.IsMap()) << section;
    for (const auto& kv : map) used[section].insert(kv.first.Scalar());
  };
  add("top", root);
  add("intent", root["intent"]);
  for (const char* k : {"add-prefixes", "remove-prefixes"})
    for (const auto& p : root["intent"][k]) add("prefix", p);
  for (const auto& p : root["intent"]["paths"]) add("path", p);
  for (const auto& step : root["steps"]) {
    add("step", step);
    for (const auto& kind : keys::kStepKinds)
      if (step[kind]) add(kind, step[kind]);
  }
  for (const auto& s : sections()) EXPECT_EQ(used[s.name], property_names(*s.object)) << s.name;
  Diagnostics d;
  EXPECT_TRUE(twin::replay::load_change_set(kChanges + "/good.yaml", plan(), d)) << dump(d);
}

TEST(ChangeSetSchema, EnumsAndLimitsMatchTheLoader) {
  EXPECT_EQ(string_enum(def("state")), names(keys::kState));
  EXPECT_EQ(string_enum(def("waitStep").at("properties").at("until")), names(keys::kUntil));
  EXPECT_EQ(string_enum(def("checkStep").at("properties").at("expect")), names(keys::kExpect));
  EXPECT_EQ(def("mtu").at("minimum"), twin::topology::kMinMtu);
  EXPECT_EQ(def("mtu").at("maximum"), twin::topology::kMaxMtu);
  EXPECT_EQ(schema().at("properties").at("version").at("const"), 1);
  EXPECT_EQ(schema().at("properties").at("name").at("pattern"),
            std::string("^") + keys::kNamePattern + "$");
  EXPECT_EQ(def("duration").at("pattern"), std::string("^") + keys::kDurationPattern + "$");
  const json& set = def("sysctlStep").at("properties").at("set");
  EXPECT_EQ(set.at("propertyNames").at("pattern"),
            std::string("^") + keys::kSysctlKeyPattern + "$");
  EXPECT_EQ(set.at("additionalProperties").at("pattern"),
            std::string("^") + keys::kSysctlValuePattern + "$");
  const json& links = def("linkStep").at("properties").at("links").at("oneOf");
  EXPECT_EQ(links.at(0).at("const"), keys::kAllLinks);
  for (const char* k : {"interfaceStep", "linkStep"})
    EXPECT_EQ(def(k).at("properties").at("mtu").at("$ref"), "#/$defs/mtu");
}

// Test names: the schema's patterns accept exactly what the loader accepts.
TEST(ChangeSetSchema, TestNamesMatchTheLoader) {
  const std::regex selector = pattern_of(def("testSelector"));
  const std::regex single = pattern_of(def("testId"));
  std::vector<std::string> samples = {"bgpp",        "bgp.", "bgp.x", "bgp.-1", "bgp.01",
                                      "bgp.1000000", "BGP",  "",      ".0",     "bgp.0.1"};
  for (const auto& f : twin::validators::family_names())
    for (const char* tail : {"", ".0", ".7", ".999999"}) samples.push_back(f + tail);
  for (const auto& s : samples) {
    SCOPED_TRACE("'" + s + "'");
    auto sel = load(kHead + "  - {name: a, check: {tests: ['" + s + "']}}\n");
    EXPECT_EQ(std::regex_match(s, selector), sel.cs.has_value()) << dump(sel.diags);
    const std::string family = s.substr(0, s.find('.'));
    auto one = load(kHead + "  - {name: a, check: {tests: ['" + family +
                    "'], expect: fail, failing: ['" + s + "']}}\n");
    if (!one.cs && one.diags.items().size() == 1 &&
        one.diags.items()[0].field == "steps[0].check.tests[0]")
      continue;  // the family itself is unknown: `tests` already fails
    EXPECT_EQ(std::regex_match(s, single), one.cs.has_value()) << dump(one.diags);
  }
}

// Durations: the schema's pattern is the loader's; values it cannot judge (zero, fractions of
// a millisecond, more than 24h) only the loader rejects.
TEST(ChangeSetSchema, DurationsMatchTheLoader) {
  const std::regex re = pattern_of(def("duration"));
  const std::vector<std::pair<std::string, bool>> samples = {
      {"500ms", true},        {"2s", true},          {"1.5s", true}, {"1m", true},
      {"30", false},          {"2h", false},         {"1.s", false}, {".5s", false},
      {"-1s", false},         {"1 s", false},        {"1S", false},  {"1.5", false},
      {"1234567890s", false}, {"1.1234567s", false}, {"0s", false},  {"0.5ms", false},
      {"1441m", false}};
  for (const auto& [s, loader] : samples) {
    SCOPED_TRACE(s);
    auto l = load(kHead + "  - {name: a, wait: {timeout: '" + s + "'}}\n");
    EXPECT_EQ(l.cs.has_value(), loader) << dump(l.diags);
    const bool by_value = s == "0s" || s == "0.5ms" || s == "1441m";
    EXPECT_EQ(std::regex_match(s, re), loader || by_value);
  }
}

}  // namespace

// ---- FRR's check of a change's lines, by the release each node runs ----

namespace {

struct NoRunner final : twin::proc::ProcessRunner {
  int runs = 0;
  twin::Result<twin::proc::Output> run(const twin::proc::Command&) override {
    ++runs;
    return twin::harness_error("no program runs in this test");
  }
};

// check_frr_syntax of `cs` on plan() with every node on `drv`; no program may run.
Diagnostics frr_check(const ChangeSet& cs, const twin::drivers::NodeDriver& drv) {
  NoRunner runner;
  Diagnostics d;
  auto r = twin::replay::check_frr_syntax(
      cs, plan(), [&](const twin::plan::Node&) -> const twin::drivers::NodeDriver& { return drv; },
      runner, d);
  EXPECT_TRUE(r) << r.error().message;
  EXPECT_EQ(runner.runs, 0);  // this machine's vtysh was not asked
  return d;
}

}  // namespace

TEST(ChangeSetFrrCheck, AContainerNodesLinesAreCheckedByItsOwnRelease) {
  // leaf4 runs localhost/twin-frr:8.4.4 (plan()): its image, not this machine's FRR, judges the
  // lines meant for it — a line its release refuses is reported at its line, naming the release.
  auto l = load(kHead + R"(  - name: a 10.x-only line
    frr:
      node: leaf4
      add: |
        router bgp 65104
         neighbor fabric capability software-version
)");
  ASSERT_TRUE(l.cs) << dump(l.diags);
  twin_test::FakeNetwork net;
  net.refused_by_image["localhost/twin-frr:8.4.4"] = {
      "software-version", {2, "% Unknown command: neighbor fabric capability software-version"}};
  twin_test::FakeDriver drv(net);
  Diagnostics d = frr_check(*l.cs, drv);
  ASSERT_EQ(d.items().size(), 1u) << dump(d);
  EXPECT_EQ(d.items()[0].line, 9);  // the block's second line
  EXPECT_EQ(d.items()[0].field, "steps[0].frr.add");
  EXPECT_EQ(d.items()[0].message,
            "FRR 8.4.4 (node leaf4) rejects this line: % Unknown command: neighbor fabric "
            "capability software-version");
  EXPECT_EQ(net.log, (std::vector<std::string>{"refused? leaf4"}));
}

TEST(ChangeSetFrrCheck, AfterAnImageStepTheNewReleaseJudgesWhenApplied) {
  // Upgrade, then turn on what the new release brings: nothing checks the line up front against
  // the release the node leaves.
  auto l = load(kHead + R"(  - name: upgrade leaf4
    image: {node: leaf4, to: frr-10}
  - name: a 10.x-only line
    frr:
      node: leaf4
      add: |
        router bgp 65104
         neighbor fabric capability software-version
)");
  ASSERT_TRUE(l.cs) << dump(l.diags);
  twin_test::FakeNetwork net;
  net.refused_by_image["localhost/twin-frr:8.4.4"] = {"software-version", {2, "% Unknown command"}};
  twin_test::FakeDriver drv(net);
  Diagnostics d = frr_check(*l.cs, drv);
  EXPECT_TRUE(d.empty()) << dump(d);
  EXPECT_TRUE(net.log.empty());
}

TEST(ChangeSetFrrCheck, ATopologyStepCannotAddAContainerNode) {
  // The image of a container node is read before a lab is built: one added to a running lab is
  // refused where the topology names it, before anything runs.
  TempDir dir;
  std::string topo = read(kChanges + "/clos-2x4-leaf5.yaml");
  topo.replace(topo.find("  leaf5: {asn: 65105"), std::string("  leaf5: {").size(),
               "  leaf5: {image: frr-10, ");
  std::ofstream(dir.path() + "/with-leaf5.yaml") << topo;
  auto l = load(kHead + "  - name: add leaf5\n    topology: {file: with-leaf5.yaml}\n", dir.path());
  EXPECT_FALSE(l.cs);
  bool said = false;
  for (const auto& i : l.diags.items())
    if (i.field == "nodes.leaf5.image") {
      said = true;
      EXPECT_EQ(i.file, fs::weakly_canonical(dir.path() + "/with-leaf5.yaml").string());
      EXPECT_EQ(i.line, 20);
      EXPECT_NE(i.message.find("node 'leaf5' runs in a container (image frr-10, "
                               "localhost/twin-frr:10.3): a container node joins a lab at "
                               "`twin up`, not a running lab"),
                std::string::npos)
          << i.message;
    }
  EXPECT_TRUE(said) << dump(l.diags);
}

TEST(ChangeSetFrrCheck, AnImageStepToAnImageNotPresentIsRefusedBeforeAnythingRuns) {
  auto l = load(kHead + "  - name: upgrade leaf4\n    image: {node: leaf4, to: frr-10}\n");
  ASSERT_TRUE(l.cs) << dump(l.diags);
  std::vector<twin::plan::PresentImage> present = {
      {{"localhost/twin-frr:8.4.4"}, "aaa", "8.4.4", false}};
  Diagnostics d;
  twin::replay::check_images_present(*l.cs, present, d);
  ASSERT_EQ(d.items().size(), 1u) << dump(d);
  EXPECT_EQ(d.items()[0].line, 4);
  EXPECT_EQ(d.items()[0].field, "steps[0].image.to");
  EXPECT_EQ(d.items()[0].message,
            "image profile 'frr-10' names image localhost/twin-frr:10.3, which is not present on "
            "this machine: the upgrade would rehearse nothing");
  present.push_back({{"localhost/twin-frr:10.3"}, "bbb", "10.3", false});
  Diagnostics none;
  twin::replay::check_images_present(*l.cs, present, none);
  EXPECT_TRUE(none.empty()) << dump(none);
}

TEST(ChangeSetIntent, AnUpgradeTo9OrLaterIntendsMgmtd) {
  // FRR 9.0+ runs mgmtd first (the driver starts it): the gate's intended plan has it too, so a
  // dead mgmtd after an upgrade fails the node family there as in `twin validate`.
  auto l = load(kHead + "  - name: upgrade leaf4\n    image: {node: leaf4, to: frr-10}\n" +
                "  - name: back\n    image: {node: leaf4, to: frr-7.5}\n");
  ASSERT_TRUE(l.cs) << dump(l.diags);
  auto daemons = [&](size_t steps) {
    auto p = twin::replay::intended_plan(plan(), *l.cs, steps);
    return p.find("leaf4")->daemons;
  };
  const auto before = plan().find("leaf4")->daemons;
  ASSERT_FALSE(before.empty());
  EXPECT_NE(before.front(), "mgmtd");
  auto ten = daemons(1);
  ASSERT_FALSE(ten.empty());
  EXPECT_EQ(ten.front(), "mgmtd");
  EXPECT_EQ(std::vector<std::string>(ten.begin() + 1, ten.end()), before);
  EXPECT_EQ(daemons(2), before);  // 7.5 has none
}

TEST(ChangeSetErrors, AnImageStepToTheImageTheNodeRunsUnderAnotherProfileIsRefused) {
  // leaf4 runs localhost/twin-frr:8.4.4 (plan(), profile frr-8.4-container); a profile of the
  // same image by another name is no upgrade (a new user's "FRR 8.4.4 -> FRR 8.4.4" approval).
  TempDir dir;
  dir.write("images/frr-same.yaml",
            "kind: frr\nbackend: container\ncontainer: {image: localhost/twin-frr:8.4.4}\n"
            "daemons: [zebra, bgpd]\n");
  auto d =
      only_problem(kHead + "  - name: same\n    image: {node: leaf4, to: frr-same}\n", dir.path());
  EXPECT_EQ(d.field, "steps[0].image.to");
  EXPECT_EQ(d.message,
            "node leaf4 runs localhost/twin-frr:8.4.4 already (profile frr-8.4-container); "
            "profile frr-same names the same image");
}

// A run step reaches the nodes over the management network: refused at its line on a lab
// without one; its command alone is a step too.
TEST(ChangeSetErrors, ARunNeedsTheLabsManagementNetwork) {
  auto no_mgmt = plan();
  no_mgmt.mgmt.reset();
  Diagnostics d;
  auto cs = twin::replay::load_change_set_text(
      kHead + "  - {name: play, run: \"ansible-playbook site.yml\"}\n", "c.yaml", kChanges,
      no_mgmt, d);
  EXPECT_FALSE(cs);
  ASSERT_EQ(d.items().size(), 1u) << dump(d);
  EXPECT_EQ(d.items()[0].field, "steps[0].run");
  EXPECT_THAT(d.items()[0].message,
              HasSubstr("a run reaches the nodes over the lab's management network, and lab rec "
                        "has none"));
  auto ok = load(kHead + "  - {name: play, run: \"ansible-playbook site.yml\"}\n");
  ASSERT_TRUE(ok.cs) << dump(ok.diags);
  EXPECT_EQ(ok.cs->steps[0].run().command, "ansible-playbook site.yml");
  EXPECT_EQ(ok.cs->steps[0].run().timeout, std::chrono::minutes(10));
  auto empty = load(kHead + "  - {name: play, run: {timeout: 5m}}\n");
  EXPECT_THAT(dump(empty.diags), HasSubstr("missing command"));
}
