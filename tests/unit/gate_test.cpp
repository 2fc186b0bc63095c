// Unit tests for the rollout gate's pure parts, against data recorded on a real FRR 8.4
// clos-2x4 lab (tests/data/gate/): the intended plan of a change (twin/changeset/intent.hpp) and
// the plan functions it relies on (carries_bgp, derive_expectations, expected_paths); the
// network state folded from raw probe output and the difference between two states
// (twin/verdict/diff.hpp); the verdict rules and exit codes; scenario files (twin/gate/
// scenario.hpp) and their JSON Schema (scenarios/schema/scenario.schema.json).
//
// Recorded cases (tests/data/gate/<case>/): withdraw-loopback (leaf1 stops advertising
// 10.255.1.1/32, rejected), drain-spine2 (spine2's sessions shut with `intent: drain`,
// approved), mtu-one-end (leaf2:swp1 at 1500 while spine1:swp2 stays at 9216, rejected by
// mtu.0). Each holds the probes' raw output and the validators' results at baseline, after the
// change and after the rollback (recorded from a real run), the change set, and verdict.json:
// the verdict and diff this code derives from those recordings, kept so that a change of the
// verdict rules shows as a change of this file in review (not a real run's output;
// `TWIN_UPDATE_GOLDENS=1 build/twin_unit_tests --gtest_filter='DiffRecorded.*:Verdict.*'`
// rewrites it, tests/data/gate/README.md).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "tests/unit/recorded.hpp"
#include "tests/unit/support.hpp"
#include "twin/changeset/changeset.hpp"
#include "twin/changeset/intent.hpp"
#include "twin/core/diagnostics.hpp"
#include "twin/core/error.hpp"
#include "twin/gate/scenario.hpp"
#include "twin/plan/plan.hpp"
#include "twin/topology/loader.hpp"
#include "twin/validate/result.hpp"
#include "twin/validate/validator.hpp"
#include "twin/verdict/diff.hpp"
#include "twin/verdict/observation.hpp"

namespace {

using twin_test::dump;
using twin_test::load_observations;
using twin_test::load_report;
using twin_test::status_from;
using twin_test::property_names;
using twin_test::read;
using twin_test::string_enum;

namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using twin::Diagnostic;
using twin::Diagnostics;
using twin::plan::Plan;
using twin::replay::Change;
using twin::replay::ChangeSet;
using twin::replay::Decision;
using twin::replay::Diff;
using twin::replay::NetState;
using twin::replay::NodeObservation;
using twin::replay::Reason;
using twin::replay::SessionObs;
using twin::replay::StepKind;
using twin::replay::StepOutcome;
using twin::replay::Verdict;
using twin::validate::Report;
using twin::validate::Status;
using twin::validate::TestResult;
using twin_test::StringSet;

const std::string kRepo = TWIN_DATA_DIR;
const std::string kTestData = TWIN_TEST_DATA;
const std::string kGate = kTestData + "/gate";
const std::string kScenarioSchema = kRepo + "/scenarios/schema/scenario.schema.json";

// ---------------------------------------------------------------------------------------
// Recorded data

// The recorded lab's plan (lab "rec"): spine1/2 AS 65000, leaf1..4 AS 65101..65104, server1
// behind leaf1:swp3, server2 behind leaf4:swp3; fabric links at 9216, access links at 1500.
const twin::plan::Plan& clos() { return twin_test::recorded_clos_plan(); }

const twin::plan::Node& node_of(const Plan& p, const std::string& name) {
  const auto* n = p.find(name);
  if (!n) throw std::runtime_error("no node " + name);
  return *n;
}

const twin::plan::Interface& iface_of(const Plan& p, const std::string& node,
                                      const std::string& ifname) {
  for (const auto& i : node_of(p, node).interfaces)
    if (i.name == ifname) return i;
  throw std::runtime_error("no interface " + node + ":" + ifname);
}

twin::plan::Interface& iface_of(Plan& p, const std::string& node, const std::string& ifname) {
  return const_cast<twin::plan::Interface&>(iface_of(static_cast<const Plan&>(p), node, ifname));
}

twin::plan::Node& node_of(Plan& p, const std::string& name) {
  return const_cast<twin::plan::Node&>(node_of(static_cast<const Plan&>(p), name));
}

const twin::plan::Link& link_of(const Plan& p, const std::string& a_node, const std::string& a_if) {
  for (const auto& l : p.links)
    if ((l.a_node == a_node && l.a_interface == a_if) ||
        (l.b_node == a_node && l.b_interface == a_if))
      return l;
  throw std::runtime_error("no link at " + a_node + ":" + a_if);
}

// "node interface peer" of every expected session.
StringSet sessions_of(const Plan& p) {
  StringSet out;
  for (const auto& s : p.sessions) out.insert(s.node + " " + s.interface + " " + s.peer_node);
  return out;
}

// "prefix owner kind" of every expected prefix.
StringSet prefixes_of(const Plan& p) {
  StringSet out;
  for (const auto& e : p.prefixes) out.insert(e.prefix + " " + e.owner + " " + e.kind);
  return out;
}

int ecmp(const twin::plan::PathTable& t, const std::string& node, const std::string& owner) {
  auto it = t.find({node, owner});
  return it == t.end() ? 0 : it->second.ecmp;
}

// "node owner ecmp/as-path-length" of every entry.
StringSet paths_text(const twin::plan::PathTable& t) {
  StringSet out;
  for (const auto& [k, v] : t)
    out.insert(k.first + " " + k.second + " " + std::to_string(v.ecmp) + "/" +
               std::to_string(v.as_path_len));
  return out;
}

TestResult result(const std::string& validator, int test, const std::string& name, Status st,
                  const std::string& node, const std::string& peer,
                  const std::string& message = "") {
  return twin::validate::make_result(validator, test, name, st, node, peer, "", "", message);
}


struct Phase {
  NetState state;  // with the reachability results of `report`
  Report report;
};

struct Recorded {
  Phase baseline, after, rollback;
  ChangeSet cs;
  Plan intended;
  json verdict;  // what this code decided on the recordings (see the top of this file)
};

Phase load_phase(const std::string& c, const std::string& phase) {
  Phase p;
  p.state = twin::replay::state_from_observations(
      load_observations(kGate + "/" + c + "/" + phase + ".observe.jsonl"));
  p.report = load_report(kGate + "/" + c + "/" + phase + ".results.json");
  twin::replay::add_reachability(p.state, p.report);
  return p;
}

const Recorded& recorded(const std::string& c) {
  static std::map<std::string, Recorded> cache;
  if (auto it = cache.find(c); it != cache.end()) return it->second;
  Recorded r;
  r.baseline = load_phase(c, "baseline");
  r.after = load_phase(c, "after");
  r.rollback = load_phase(c, "rollback");
  Diagnostics d;
  auto cs = twin::replay::load_change_set(kGate + "/" + c + "/change.yaml", clos(), d);
  if (!cs) throw std::runtime_error("loading " + c + "/change.yaml:\n" + dump(d));
  r.cs = *cs;
  r.intended = twin::replay::intended_plan(clos(), r.cs);
  r.verdict = json::parse(read(kGate + "/" + c + "/verdict.json"));
  return cache.emplace(c, std::move(r)).first->second;
}

const std::vector<std::string> kCases = {"withdraw-loopback", "drain-spine2", "mtu-one-end"};

Diff diff_of(const std::string& c) {
  const auto& r = recorded(c);
  return twin::replay::diff_states(r.baseline.state, r.after.state, clos(), r.intended);
}

// `got` against verdict.json's `key` of case `c`; with TWIN_UPDATE_GOLDENS set, written there
// instead (the file's other keys kept).
void expect_golden(const std::string& c, const std::string& key, const json& got) {
  if (std::getenv("TWIN_UPDATE_GOLDENS")) {
    const std::string path = kGate + "/" + c + "/verdict.json";
    json j = json::parse(read(path));
    j[key] = got;
    std::ofstream(path) << j.dump(1) << "\n";
    const_cast<Recorded&>(recorded(c)).verdict[key] = got;
    return;
  }
  EXPECT_EQ(got, recorded(c).verdict.at(key)) << c << " " << key;
}

// Changes as JSON, in verdict.json's form (keys sorted).
json to_json(const Diff& d) {
  json out = json::array();
  for (const auto& c : d.changes)
    out.push_back({{"after", c.after},
                   {"before", c.before},
                   {"category", c.category},
                   {"intended", c.intended},
                   {"message", c.message},
                   {"node", c.node},
                   {"subject", c.subject}});
  return out;
}

json to_json(const std::vector<Reason>& reasons) {
  json out = json::array();
  for (const auto& r : reasons)
    out.push_back({{"category", r.category},
                   {"message", r.message},
                   {"rank", r.rank},
                   {"step", r.step},
                   {"subjects", r.subjects}});
  return out;
}

// "node subject" of the changes of one category.
StringSet subjects(const Diff& d, const std::string& category) {
  StringSet out;
  for (const auto& c : d.changes)
    if (c.category == category) out.insert(c.node + " " + c.subject);
  return out;
}

std::vector<Change> of(const Diff& d, const std::string& category) {
  std::vector<Change> out;
  for (const auto& c : d.changes)
    if (c.category == category) out.push_back(c);
  return out;
}

std::vector<StepOutcome> applied(const std::string& name, const std::string& kind) {
  StepOutcome s;
  s.name = name;
  s.kind = kind;
  return {s};
}

// ---------------------------------------------------------------------------------------
// Change sets in memory

ChangeSet change_text(const std::string& text) {
  Diagnostics d;
  auto cs = twin::replay::load_change_set_text(text, "t.yaml", kGate, clos(), d);
  if (!cs) throw std::runtime_error("loading change text:\n" + dump(d));
  return *cs;
}

twin::replay::InterfaceRef ref(const std::string& node, const std::string& ifname) {
  twin::replay::InterfaceRef r;
  r.node = node;
  r.interface = ifname;
  return r;
}

twin::replay::LinkRef link_ref(const std::string& an, const std::string& ai, const std::string& bn,
                               const std::string& bi) {
  twin::replay::LinkRef l;
  l.a = ref(an, ai);
  l.b = ref(bn, bi);
  return l;
}

twin::replay::Step interface_mtu_step(const std::string& name, const std::string& node,
                                      const std::string& ifname, int mtu) {
  twin::replay::Step s;
  s.name = name;
  s.body = twin::replay::InterfaceStep{};
  s.interface().interfaces = {ref(node, ifname)};
  s.interface().mtu = mtu;
  return s;
}

twin::replay::PrefixRef prefix_ref(const std::string& node, const std::string& prefix) {
  twin::replay::PrefixRef p;
  p.node = node;
  p.prefix = prefix;
  return p;
}

// Every "node:if" -> MTU of a plan.
std::map<std::string, int> mtus(const Plan& p) {
  std::map<std::string, int> out;
  for (const auto& n : p.nodes)
    for (const auto& i : n.interfaces) out[n.name + ":" + i.name] = i.mtu;
  return out;
}

// =======================================================================================
// Intent: the plan a change means to build

TEST(Intent, InterfaceMtuOnOneEndChangesThatEndAndTheLinkOnly) {
  ChangeSet cs;
  cs.steps.push_back(interface_mtu_step("leaf2 uplink", "leaf2", "swp1", 1500));
  Plan p = twin::replay::intended_plan(clos(), cs);
  EXPECT_EQ(iface_of(p, "leaf2", "swp1").mtu, 1500);
  EXPECT_EQ(iface_of(p, "spine1", "swp2").mtu, 9216);  // the other end is not touched
  EXPECT_EQ(link_of(p, "leaf2", "swp1").mtu, 1500);    // a link carries its smaller end
  auto before = mtus(clos()), after = mtus(p);
  ASSERT_EQ(before.size(), after.size());
  for (const auto& [k, m] : before) {
    if (k != "leaf2:swp1") {
      EXPECT_EQ(after[k], m) << k;
    }
  }
  for (const auto& l : p.links) {
    if (!(l.a_node == "leaf2" && l.a_interface == "swp1")) {
      EXPECT_EQ(l.mtu, link_of(clos(), l.a_node, l.a_interface).mtu) << l.a_node << l.a_interface;
    }
  }
  // Raising one end above the other: the link keeps the smaller end's MTU.
  ChangeSet up;
  up.steps.push_back(interface_mtu_step("raise", "leaf2", "swp1", 9500));
  Plan q = twin::replay::intended_plan(clos(), up);
  EXPECT_EQ(iface_of(q, "leaf2", "swp1").mtu, 9500);
  EXPECT_EQ(link_of(q, "leaf2", "swp1").mtu, 9216);
  // The input plan is left as it was; MTU is not intent about sessions.
  EXPECT_EQ(iface_of(clos(), "leaf2", "swp1").mtu, 9216);
  EXPECT_EQ(p.sessions.size(), 16u);
}

TEST(Intent, RecordedMtuOneEndChangeSet) {
  const auto& r = recorded("mtu-one-end");
  ASSERT_EQ(r.cs.steps.size(), 1u);
  EXPECT_EQ(r.cs.steps[0].kind(), StepKind::kInterface);
  EXPECT_EQ(iface_of(r.intended, "leaf2", "swp1").mtu, 1500);
  EXPECT_EQ(iface_of(r.intended, "spine1", "swp2").mtu, 9216);
  EXPECT_EQ(link_of(r.intended, "spine1", "swp2").mtu, 1500);
  EXPECT_EQ(sessions_of(r.intended), sessions_of(clos()));
  EXPECT_EQ(prefixes_of(r.intended), prefixes_of(clos()));
}

TEST(Intent, LinkStepAllSetsEveryInterface) {
  ChangeSet cs = change_text(
      "version: 1\nname: t\nsteps:\n  - {name: jumbo, link: {links: all, mtu: 9000}}\n");
  ASSERT_TRUE(cs.steps[0].link().all);
  Plan p = twin::replay::intended_plan(clos(), cs);
  auto m = mtus(p);
  EXPECT_EQ(m.size(), 20u);  // 10 links, two ends each
  for (const auto& [k, mtu] : m) EXPECT_EQ(mtu, 9000) << k;
  EXPECT_EQ(m.at("server1:eth0"), 9000);  // access links too
  for (const auto& l : p.links) EXPECT_EQ(l.mtu, 9000) << l.a_node << ":" << l.a_interface;
}

TEST(Intent, LinkStepOnOneLinkSetsBothEnds) {
  ChangeSet cs = change_text(
      "version: 1\nname: t\nsteps:\n  - {name: one, link: {link: leaf1:swp1, mtu: 9000}}\n");
  Plan p = twin::replay::intended_plan(clos(), cs);
  EXPECT_EQ(iface_of(p, "leaf1", "swp1").mtu, 9000);
  EXPECT_EQ(iface_of(p, "spine1", "swp1").mtu, 9000);
  EXPECT_EQ(link_of(p, "leaf1", "swp1").mtu, 9000);
  EXPECT_EQ(iface_of(p, "leaf1", "swp2").mtu, 9216);
  EXPECT_EQ(iface_of(p, "spine1", "swp2").mtu, 9216);
  EXPECT_EQ(link_of(p, "leaf1", "swp2").mtu, 9216);
  EXPECT_EQ(iface_of(p, "leaf1", "swp3").mtu, 1500);
}

TEST(Intent, AddressesAreAddedAndRemoved) {
  ChangeSet cs = change_text(
      "version: 1\nname: t\nsteps:\n"
      "  - name: renumber\n"
      "    interface:\n"
      "      interface: leaf1:swp3\n"
      "      add-addresses: [10.9.9.1/24, 2001:db8:1::1/64]\n"
      "      remove-addresses: [10.0.1.1/24]\n");
  Plan p = twin::replay::intended_plan(clos(), cs);
  // Already present addresses are not added twice; removed ones are gone; order kept.
  EXPECT_THAT(iface_of(p, "leaf1", "swp3").addresses,
              ElementsAre("2001:db8:1::1/64", "10.9.9.1/24"));
  EXPECT_THAT(iface_of(clos(), "leaf1", "swp3").addresses,
              ElementsAre("10.0.1.1/24", "2001:db8:1::1/64"));
  // The host subnet behind leaf1 follows its addresses.
  StringSet pre = prefixes_of(p);
  EXPECT_TRUE(pre.count("10.9.9.0/24 leaf1 host-subnet"));
  EXPECT_FALSE(pre.count("10.0.1.0/24 leaf1 host-subnet"));
  EXPECT_TRUE(pre.count("2001:db8:1::/64 leaf1 host-subnet"));
  EXPECT_EQ(p.prefixes.size(), 16u);
}

TEST(Intent, DrainRemovesTheNodesSessionsAndPaths) {
  ChangeSet cs;
  cs.intent.drain = {"spine2"};
  Plan p = twin::replay::intended_plan(clos(), cs);
  EXPECT_TRUE(node_of(p, "spine2").drained);
  EXPECT_FALSE(node_of(p, "spine1").drained);
  EXPECT_EQ(p.sessions.size(), 8u);
  StringSet want = {"spine1 swp1 leaf1", "spine1 swp2 leaf2", "spine1 swp3 leaf3",
                    "spine1 swp4 leaf4", "leaf1 swp1 spine1", "leaf2 swp1 spine1",
                    "leaf3 swp1 spine1", "leaf4 swp1 spine1"};
  EXPECT_EQ(sessions_of(p), want);
  for (const auto& s : p.sessions) {
    EXPECT_NE(s.node, "spine2");
    EXPECT_NE(s.peer_node, "spine2");
  }
  auto base = twin::plan::expected_paths(clos(), 4);
  auto paths = twin::plan::expected_paths(p, 4);
  const std::vector<std::string> leaves = {"leaf1", "leaf2", "leaf3", "leaf4"};
  for (const auto& a : leaves)
    for (const auto& b : leaves) {
      if (a == b) continue;
      EXPECT_EQ(ecmp(base, a, b), 2) << a << " -> " << b;
      EXPECT_EQ(ecmp(paths, a, b), 1) << a << " -> " << b;
      EXPECT_EQ(paths.at({a, b}).as_path_len, 2) << a << " -> " << b;
    }
  for (const auto& n : clos().nodes) {
    EXPECT_EQ(ecmp(paths, n.name, "spine2"), 0) << n.name;  // spine2's prefixes: nowhere
    EXPECT_EQ(ecmp(paths, "spine2", n.name), 0) << n.name;  // nothing through spine2 either
  }
  EXPECT_EQ(ecmp(base, "leaf1", "spine2"), 1);
  EXPECT_EQ(ecmp(paths, "leaf1", "spine1"), 1);
  EXPECT_EQ(ecmp(paths, "spine1", "leaf1"), 1);
  // The drained node's prefixes stay in the plan (owned by it), only unreachable.
  EXPECT_EQ(prefixes_of(p), prefixes_of(clos()));
}

TEST(Intent, RecordedDrainChangeSet) {
  const auto& r = recorded("drain-spine2");
  EXPECT_THAT(r.cs.intent.drain, ElementsAre("spine2"));
  ASSERT_EQ(r.cs.steps.size(), 1u);
  EXPECT_EQ(r.cs.steps[0].kind(), StepKind::kFrr);
  EXPECT_TRUE(node_of(r.intended, "spine2").drained);
  EXPECT_EQ(r.intended.sessions.size(), 8u);
  EXPECT_EQ(mtus(r.intended), mtus(clos()));  // an frr step says nothing the plan reads
}

TEST(Intent, LinksDownTakesBothEndsDown) {
  ChangeSet cs = change_text(
      "version: 1\nname: t\nintent: {links-down: ['leaf1:swp1']}\n"
      "steps: [{name: a, wait: {}}]\n");
  ASSERT_EQ(cs.intent.links_down.size(), 1u);
  EXPECT_EQ(cs.intent.links_down[0].str(), "leaf1:swp1--spine1:swp1");  // loader fills the peer
  Plan p = twin::replay::intended_plan(clos(), cs);
  EXPECT_FALSE(iface_of(p, "leaf1", "swp1").up);
  EXPECT_FALSE(iface_of(p, "spine1", "swp1").up);
  EXPECT_TRUE(iface_of(p, "leaf1", "swp2").up);
  EXPECT_TRUE(iface_of(p, "spine1", "swp2").up);
  EXPECT_EQ(p.sessions.size(), 14u);
  StringSet s = sessions_of(p);
  EXPECT_FALSE(s.count("leaf1 swp1 spine1"));
  EXPECT_FALSE(s.count("spine1 swp1 leaf1"));
  EXPECT_TRUE(s.count("leaf1 swp2 spine2"));
  auto paths = twin::plan::expected_paths(p, 4);
  EXPECT_EQ(ecmp(paths, "leaf1", "leaf2"), 1);
  EXPECT_EQ(ecmp(paths, "leaf2", "leaf1"), 1);
  EXPECT_EQ(ecmp(paths, "leaf1", "spine1"), 0);  // only reachable over the downed link
  EXPECT_EQ(ecmp(paths, "spine1", "leaf1"), 0);  // and back (spines share AS 65000)
  EXPECT_EQ(ecmp(paths, "leaf2", "leaf3"), 2);   // untouched elsewhere
}

TEST(Intent, AServerLinkDownTakesItsSubnetOutOfTheExpectedPrefixes) {
  ChangeSet cs = change_text(
      "version: 1\nname: t\nintent: {links-down: ['server1:eth0']}\n"
      "steps: [{name: a, wait: {}}]\n");
  Plan p = twin::replay::intended_plan(clos(), cs);
  auto has = [](const Plan& pl, const std::string& prefix) {
    return std::any_of(pl.prefixes.begin(), pl.prefixes.end(),
                       [&](const auto& e) { return e.prefix == prefix; });
  };
  EXPECT_TRUE(has(clos(), "10.0.1.0/24"));
  EXPECT_FALSE(has(p, "10.0.1.0/24"));
  EXPECT_FALSE(has(p, "2001:db8:1::/64"));
  EXPECT_TRUE(has(p, "10.0.4.0/24"));  // server2's, on leaf4
  EXPECT_EQ(p.prefixes.size(), clos().prefixes.size() - 2);
  EXPECT_EQ(p.sessions.size(), clos().sessions.size());  // no fabric session lost
}

TEST(Intent, AddAndRemovePrefixes) {
  ChangeSet cs = change_text(
      "version: 1\nname: t\n"
      "intent:\n"
      "  add-prefixes: [{node: leaf3, prefix: 10.200.3.0/24}]\n"
      "  remove-prefixes: [{node: leaf1, prefix: 10.255.1.1/32}]\n"
      "steps: [{name: a, wait: {}}]\n");
  Plan p = twin::replay::intended_plan(clos(), cs);
  StringSet pre = prefixes_of(p);
  EXPECT_TRUE(pre.count("10.200.3.0/24 leaf3 originated"));
  EXPECT_FALSE(pre.count("10.255.1.1/32 leaf1 loopback"));
  EXPECT_TRUE(pre.count("fd00:255::101/128 leaf1 loopback"));  // the other loopback stays
  EXPECT_EQ(p.prefixes.size(), 16u);
  EXPECT_THAT(node_of(p, "leaf3").originates, ElementsAre("10.200.3.0/24"));
  EXPECT_THAT(node_of(p, "leaf1").withdraws, ElementsAre("10.255.1.1/32"));
  // Removing what was added earlier in the plan: gone again, the owner's entry too.
  ChangeSet again;
  again.intent.remove_prefixes = {prefix_ref("leaf3", "10.200.3.0/24")};
  Plan q = twin::replay::intended_plan(p, again);
  EXPECT_FALSE(prefixes_of(q).count("10.200.3.0/24 leaf3 originated"));
  EXPECT_TRUE(node_of(q, "leaf3").originates.empty());
  EXPECT_EQ(q.prefixes.size(), 15u);
}

TEST(Intent, StepsLimitCountsStepsButNotTheIntentBlock) {
  ChangeSet cs;
  cs.intent.drain = {"spine2"};
  cs.steps.push_back(interface_mtu_step("first", "leaf2", "swp1", 1500));
  cs.steps.push_back(interface_mtu_step("second", "leaf3", "swp1", 4000));
  Plan none = twin::replay::intended_plan(clos(), cs, 0);
  EXPECT_EQ(mtus(none), mtus(clos()));
  EXPECT_TRUE(node_of(none, "spine2").drained);
  EXPECT_EQ(none.sessions.size(), 8u);
  Plan one = twin::replay::intended_plan(clos(), cs, 1);
  EXPECT_EQ(iface_of(one, "leaf2", "swp1").mtu, 1500);
  EXPECT_EQ(iface_of(one, "leaf3", "swp1").mtu, 9216);
  EXPECT_TRUE(node_of(one, "spine2").drained);
  Plan all = twin::replay::intended_plan(clos(), cs);
  EXPECT_EQ(iface_of(all, "leaf2", "swp1").mtu, 1500);
  EXPECT_EQ(iface_of(all, "leaf3", "swp1").mtu, 4000);
  EXPECT_EQ(link_of(all, "leaf3", "swp1").mtu, 4000);
  Plan beyond = twin::replay::intended_plan(clos(), cs, 7);
  EXPECT_EQ(mtus(beyond), mtus(all));
}

TEST(Intent, AdminStateDownIsNotIntent) {
  ChangeSet cs = change_text(
      "version: 1\nname: t\nsteps:\n"
      "  - {name: port, interface: {interface: leaf1:swp1, state: down}}\n"
      "  - {name: link, link: {link: leaf2:swp1, state: down}}\n");
  ASSERT_EQ(cs.steps[0].interface().up, std::optional<bool>(false));
  ASSERT_EQ(cs.steps[1].link().up, std::optional<bool>(false));
  Plan p = twin::replay::intended_plan(clos(), cs);
  EXPECT_TRUE(iface_of(p, "leaf1", "swp1").up);
  EXPECT_TRUE(iface_of(p, "spine1", "swp2").up);
  EXPECT_EQ(sessions_of(p), sessions_of(clos()));  // still expected: judged by what it breaks
  EXPECT_EQ(mtus(p), mtus(clos()));
  auto paths = twin::plan::expected_paths(p, 4);
  EXPECT_EQ(ecmp(paths, "leaf1", "leaf2"), 2);
}

TEST(Intent, TopologyStepBuildsThePlanOfItsFileUnderTheLabsName) {
  Diagnostics d;
  auto cs = twin::replay::load_change_set(kRepo + "/scenarios/clos-2x4/changes/add-leaf5.yaml",
                                          clos(), d);
  ASSERT_TRUE(cs) << dump(d);
  Plan p = twin::replay::intended_plan(clos(), *cs);
  EXPECT_EQ(p.lab, "rec");
  ASSERT_NE(p.find("leaf5"), nullptr);
  EXPECT_EQ(node_of(p, "leaf5").asn, 65105u);
  EXPECT_EQ(p.sessions.size(), 20u);
  EXPECT_TRUE(sessions_of(p).count("spine1 swp5 leaf5"));
  EXPECT_TRUE(prefixes_of(p).count("10.255.1.5/32 leaf5 loopback"));
  // Steps before the topology step: the plan of the lab as it is.
  Plan before = twin::replay::intended_plan(clos(), *cs, 0);
  EXPECT_EQ(before.find("leaf5"), nullptr);
  EXPECT_EQ(before.sessions.size(), 16u);
}

// =======================================================================================
// PlanIntent: carries_bgp, derive_expectations, expected_paths under intended state

TEST(PlanIntent, CarriesBgpOnlyOverUpLinksBetweenServingNodes) {
  auto carries = [](const Plan& p, const std::string& n, const std::string& i) {
    return twin::plan::carries_bgp(p, node_of(p, n), iface_of(p, n, i));
  };
  {
    Plan p = clos();
    EXPECT_TRUE(carries(p, "leaf1", "swp1"));
    EXPECT_TRUE(carries(p, "spine1", "swp1"));
    EXPECT_FALSE(carries(p, "leaf1", "swp3"));  // access port: not fabric
  }
  {
    Plan p = clos();
    node_of(p, "leaf1").drained = true;  // drained node
    EXPECT_FALSE(carries(p, "leaf1", "swp1"));
    EXPECT_FALSE(carries(p, "leaf1", "swp2"));
    EXPECT_FALSE(carries(p, "spine1", "swp1"));  // drained peer
    EXPECT_TRUE(carries(p, "spine1", "swp2"));
  }
  {
    Plan p = clos();
    node_of(p, "spine1").drained = true;  // drained peer
    EXPECT_FALSE(carries(p, "leaf1", "swp1"));
    EXPECT_TRUE(carries(p, "leaf1", "swp2"));
  }
  {
    Plan p = clos();
    iface_of(p, "leaf1", "swp1").up = false;  // down interface
    EXPECT_FALSE(carries(p, "leaf1", "swp1"));
    EXPECT_FALSE(carries(p, "spine1", "swp1"));  // down peer interface
    EXPECT_TRUE(carries(p, "leaf1", "swp2"));
  }
  {
    Plan p = clos();
    iface_of(p, "spine1", "swp1").up = false;  // down peer interface only
    EXPECT_FALSE(carries(p, "leaf1", "swp1"));
    EXPECT_TRUE(carries(p, "spine1", "swp2"));
  }
}

TEST(PlanIntent, DeriveExpectationsIsIdempotentAndFollowsIntent) {
  Plan p = clos();
  twin::plan::derive_expectations(p);
  EXPECT_EQ(twin::plan::to_json(p), twin::plan::to_json(clos()));  // same as recorded
  node_of(p, "spine2").drained = true;
  iface_of(p, "leaf3", "swp1").up = false;
  node_of(p, "leaf2").originates.push_back("10.200.2.0/24");
  twin::plan::derive_expectations(p);
  json once = twin::plan::to_json(p);
  twin::plan::derive_expectations(p);
  EXPECT_EQ(twin::plan::to_json(p), once);
  // leaf3 keeps no session at all: swp1 is down, swp2 faces the drained spine2.
  StringSet s = sessions_of(p);
  EXPECT_EQ(s.size(), 6u);
  EXPECT_FALSE(s.count("leaf3 swp1 spine1"));
  EXPECT_FALSE(s.count("leaf3 swp2 spine2"));
  EXPECT_TRUE(prefixes_of(p).count("10.200.2.0/24 leaf2 originated"));
  EXPECT_EQ(p.prefixes.size(), 17u);
}

TEST(PlanIntent, WithdrawsRemovesALoopbackPrefix) {
  Plan p = clos();
  node_of(p, "leaf1").withdraws = {"10.255.1.1/32", "10.0.1.0/24"};
  twin::plan::derive_expectations(p);
  StringSet pre = prefixes_of(p);
  EXPECT_FALSE(pre.count("10.255.1.1/32 leaf1 loopback"));
  EXPECT_FALSE(pre.count("10.0.1.0/24 leaf1 host-subnet"));
  EXPECT_TRUE(pre.count("fd00:255::101/128 leaf1 loopback"));
  EXPECT_EQ(p.prefixes.size(), 14u);
  EXPECT_EQ(p.sessions.size(), 16u);
  // Path expectations are per owner: a withdrawal does not change them.
  EXPECT_EQ(paths_text(twin::plan::expected_paths(p, 4)),
            paths_text(twin::plan::expected_paths(clos(), 4)));
}

TEST(PlanIntent, MakePlanOnClos2x4Has16Sessions) {
  Diagnostics d;
  auto topo = twin::topology::load_topology(kRepo + "/topologies/clos-2x4.yaml", d);
  ASSERT_TRUE(topo) << dump(d);
  Plan p = twin::plan::make_plan(*topo, "rec");
  EXPECT_EQ(p.sessions.size(), 16u);
  EXPECT_EQ(sessions_of(p), sessions_of(clos()));
  EXPECT_EQ(prefixes_of(p), prefixes_of(clos()));
  for (const auto& n : p.nodes) {
    EXPECT_FALSE(n.drained) << n.name;
    for (const auto& i : n.interfaces) EXPECT_TRUE(i.up) << n.name << ":" << i.name;
  }
}

TEST(PlanIntent, ExpectedPathsFollowDownInterfacesAndDrains) {
  auto base = twin::plan::expected_paths(clos(), 4);
  EXPECT_EQ(ecmp(base, "leaf1", "leaf4"), 2);
  EXPECT_EQ(ecmp(base, "spine1", "leaf1"), 1);
  EXPECT_EQ(ecmp(base, "spine1", "spine2"), 0);  // same AS: no path between the spines
  Plan p = clos();
  iface_of(p, "leaf4", "swp2").up = false;
  auto down = twin::plan::expected_paths(p, 4);
  EXPECT_EQ(ecmp(down, "leaf1", "leaf4"), 1);
  EXPECT_EQ(ecmp(down, "leaf4", "leaf1"), 1);
  EXPECT_EQ(ecmp(down, "spine2", "leaf4"), 0);
  EXPECT_EQ(ecmp(down, "leaf1", "leaf2"), 2);
  node_of(p, "spine1").drained = true;  // now leaf4 has no uplink left
  auto isolated = twin::plan::expected_paths(p, 4);
  EXPECT_EQ(ecmp(isolated, "leaf1", "leaf4"), 0);
  EXPECT_EQ(ecmp(isolated, "leaf4", "leaf1"), 0);
  EXPECT_EQ(ecmp(isolated, "leaf1", "leaf2"), 1);
}

// =======================================================================================
// Diff: state from recorded probes, and the difference between states

TEST(DiffRecorded, BaselineState) {
  const NetState& s = recorded("drain-spine2").baseline.state;
  StringSet keys;
  for (const auto& [k, o] : s.sessions) {
    keys.insert(k);
    EXPECT_EQ(o.state, "Established") << k;
  }
  StringSet want = {"leaf1 swp1",  "leaf1 swp2",  "leaf2 swp1",  "leaf2 swp2",
                    "leaf3 swp1",  "leaf3 swp2",  "leaf4 swp1",  "leaf4 swp2",
                    "spine1 swp1", "spine1 swp2", "spine1 swp3", "spine1 swp4",
                    "spine2 swp1", "spine2 swp2", "spine2 swp3", "spine2 swp4"};
  EXPECT_EQ(keys, want);
  // Prefixes received per family (FRR's pfxRcd).
  EXPECT_EQ(s.sessions.at("leaf1 swp1").pfx_v4, 5);
  EXPECT_EQ(s.sessions.at("leaf1 swp1").pfx_v6, 5);
  EXPECT_EQ(s.sessions.at("spine2 swp1").pfx_v4, 2);  // leaf1: loopback + server subnet
  EXPECT_EQ(s.sessions.at("spine2 swp2").pfx_v4, 1);  // leaf2: loopback only
  // FIB: BGP routes only, ECMP width = next hops.
  const auto& leaf1 = s.fib.at("leaf1");
  EXPECT_EQ(leaf1.at("10.255.1.2/32"), 2);
  EXPECT_EQ(leaf1.at("10.0.4.0/24"), 2);
  EXPECT_EQ(leaf1.at("fd00:255::104/128"), 2);
  EXPECT_EQ(leaf1.at("10.255.0.1/32"), 1);
  EXPECT_EQ(leaf1.at("fd00:255::2/128"), 1);
  EXPECT_FALSE(leaf1.count("10.0.1.0/24"));        // kernel route of its own subnet
  EXPECT_FALSE(leaf1.count("10.255.1.1/32"));      // its own loopback
  EXPECT_FALSE(leaf1.count("fd00:255::101/128"));  // kernel route on lo
  EXPECT_EQ(leaf1.size(), 12u);
  EXPECT_EQ(s.fib.at("spine1").at("10.255.1.1/32"), 1);
  EXPECT_FALSE(s.fib.at("spine1").count("10.255.0.2/32"));  // same AS as spine2
  EXPECT_EQ(s.fib.at("spine1").size(), 12u);
  EXPECT_EQ(s.fib.at("leaf2").size(), 14u);
  EXPECT_TRUE(s.fib.at("server1").empty());  // a host: static default route only
  // Interfaces: "node:if", lo left out.
  EXPECT_EQ(s.mtu.at("leaf1:swp1"), 9216);
  EXPECT_EQ(s.mtu.at("leaf1:swp3"), 1500);
  EXPECT_EQ(s.mtu.at("server2:eth0"), 1500);
  EXPECT_FALSE(s.mtu.count("leaf1:lo"));
  EXPECT_EQ(s.mtu.size(), 20u);
  EXPECT_EQ(s.admin_up.size(), 20u);
  for (const auto& [k, up] : s.admin_up) EXPECT_TRUE(up) << k;
  EXPECT_TRUE(s.gaps.empty());
  // Reachability: 56 loopback pairs (not spine1 <-> spine2) and 4 server pairs answered.
  EXPECT_EQ(s.reachable.size(), 60u);
  EXPECT_TRUE(s.unreachable.empty());
  EXPECT_TRUE(s.reachable.count("leaf1 -> leaf2 10.255.1.2"));
  EXPECT_TRUE(s.reachable.count("server1 -> server2 10.0.4.10"));
}

TEST(DiffRecorded, WithdrawLoopbackLosesThePrefixUnintendedly) {
  Diff d = diff_of("withdraw-loopback");
  StringSet lost = {"leaf2 10.255.1.1/32", "leaf3 10.255.1.1/32", "leaf4 10.255.1.1/32",
                    "spine1 10.255.1.1/32", "spine2 10.255.1.1/32"};
  EXPECT_EQ(subjects(d, "prefix-lost"), lost);
  for (const auto& c : of(d, "prefix-lost")) {
    EXPECT_FALSE(c.intended) << c.node;
    EXPECT_EQ(c.after, "missing");
    EXPECT_EQ(c.before, c.node.rfind("leaf", 0) == 0 ? "2 next hops" : "1 next hop") << c.node;
    EXPECT_THAT(c.message, HasSubstr("(loopback of leaf1)"));
  }
  EXPECT_EQ(d.count("prefix-lost", false), 5);
  EXPECT_EQ(d.count("reachability-lost", false), 10);
  EXPECT_EQ(d.count("reachability-lost", true), 0);
  EXPECT_TRUE(subjects(d, "reachability-lost").count("leaf2 leaf2 -> leaf1 10.255.1.1"));
  EXPECT_TRUE(subjects(d, "reachability-lost").count("leaf1 leaf1 -> spine1 10.255.0.1"));
  for (const auto& c : of(d, "reachability-lost")) EXPECT_EQ(c.after, "no reply") << c.subject;
  EXPECT_EQ(d.count("session-prefixes-lost", false), 8);
  EXPECT_TRUE(of(d, "session-lost").empty());
  EXPECT_TRUE(of(d, "ecmp-shrunk").empty());
  EXPECT_TRUE(of(d, "mtu-changed").empty());
  EXPECT_EQ(d.changes.size(), 23u);
  // Exactly what the real run recorded.
  expect_golden("withdraw-loopback", "diff", to_json(d));
}

TEST(DiffRecorded, WithdrawLoopbackIsIntendedWhenDeclared) {
  const auto& r = recorded("withdraw-loopback");
  ChangeSet cs = r.cs;
  cs.intent.remove_prefixes = {prefix_ref("leaf1", "10.255.1.1/32")};
  Plan intended = twin::replay::intended_plan(clos(), cs);
  Diff d = twin::replay::diff_states(r.baseline.state, r.after.state, clos(), intended);
  EXPECT_EQ(d.count("prefix-lost", true), 5);
  EXPECT_EQ(d.count("prefix-lost", false), 0);
  EXPECT_EQ(d.count("session-prefixes-lost", true), 8);
  // Pings that went unanswered are still unintended: the validator expected them.
  EXPECT_EQ(d.count("reachability-lost", false), 10);
}

TEST(DiffRecorded, DrainSpine2LossesAreAllIntended) {
  Diff d = diff_of("drain-spine2");
  StringSet sessions = {"spine2 swp1", "spine2 swp2", "spine2 swp3", "spine2 swp4",
                        "leaf1 swp2",  "leaf2 swp2",  "leaf3 swp2",  "leaf4 swp2"};
  EXPECT_EQ(subjects(d, "session-lost"), sessions);
  for (const auto& c : of(d, "session-lost")) {
    EXPECT_TRUE(c.intended) << c.node << " " << c.subject;
    EXPECT_EQ(c.before, "Established");
    EXPECT_EQ(c.after, c.node == "spine2" ? "Idle (Admin)" : "Active") << c.node;
  }
  EXPECT_EQ(d.count("ecmp-shrunk", true), 36);
  for (const auto& c : of(d, "ecmp-shrunk")) {
    // The next hops by port and neighbor: the leaves keep only their uplink to spine1.
    EXPECT_EQ(c.before, "2 next hops (swp1 to spine1, swp2 to spine2)")
        << c.node << " " << c.subject;
    EXPECT_EQ(c.after, "1 next hop (swp1 to spine1)") << c.node << " " << c.subject;
  }
  EXPECT_TRUE(subjects(d, "ecmp-shrunk").count("leaf1 10.255.1.2/32"));
  // spine2's loopbacks at the leaves, and everything spine2 itself had.
  EXPECT_EQ(d.count("prefix-lost", true), 20);
  EXPECT_TRUE(subjects(d, "prefix-lost").count("leaf3 10.255.0.2/32"));
  EXPECT_TRUE(subjects(d, "prefix-lost").count("spine2 10.255.1.1/32"));
  // Pairs with spine2 are no longer probed: intended.
  EXPECT_EQ(d.count("reachability-lost", true), 16);
  for (const auto& c : of(d, "reachability-lost")) {
    EXPECT_EQ(c.after, "not expected") << c.subject;
    EXPECT_THAT(c.subject, HasSubstr("spine2"));
  }
  EXPECT_TRUE(subjects(d, "reachability-lost").count("leaf1 leaf1 -> spine2 10.255.0.2"));
  for (const auto& c : d.changes) EXPECT_TRUE(c.intended) << c.category << " " << c.message;
  EXPECT_EQ(d.changes.size(), 80u);
  expect_golden("drain-spine2", "diff", to_json(d));
}

TEST(DiffRecorded, DrainSpine2WithoutIntentIsUnintended) {
  const auto& r = recorded("drain-spine2");
  Diff d = twin::replay::diff_states(r.baseline.state, r.after.state, clos(), clos());
  EXPECT_EQ(d.count("session-lost", false), 8);
  EXPECT_EQ(d.count("ecmp-shrunk", false), 36);
  EXPECT_EQ(d.count("prefix-lost", false), 20);
  EXPECT_EQ(d.count("reachability-lost", true), 16);  // not probed: by the after report alone
}

// One end changed alone is not intended even though the change file sets it: the intended MTUs
// of the link's two ends differ.
TEST(DiffRecorded, MtuOneEndIsOneUnintendedMtuChange) {
  Diff d = diff_of("mtu-one-end");
  ASSERT_EQ(d.changes.size(), 1u);
  const Change& c = d.changes[0];
  EXPECT_EQ(c.category, "mtu-changed");
  EXPECT_EQ(c.node, "leaf2");
  EXPECT_EQ(c.subject, "leaf2:swp1");
  EXPECT_EQ(c.before, "9216");
  EXPECT_EQ(c.after, "1500");
  EXPECT_FALSE(c.intended);
  EXPECT_EQ(c.message, "MTU of leaf2:swp1 changed from 9216 to 1500");
  expect_golden("mtu-one-end", "diff", to_json(d));
  // Against the topology alone the same change is not intended.
  const auto& r = recorded("mtu-one-end");
  Diff plain = twin::replay::diff_states(r.baseline.state, r.after.state, clos(), clos());
  EXPECT_EQ(plain.count("mtu-changed", false), 1);
}

TEST(DiffRecorded, RollbackIsBackAtBaseline) {
  for (const auto& c : kCases) {
    SCOPED_TRACE(c);
    const auto& r = recorded(c);
    Diff back = twin::replay::diff_states(r.baseline.state, r.rollback.state, clos(), clos());
    EXPECT_TRUE(back.changes.empty()) << to_json(back).dump(1);
    EXPECT_EQ(r.rollback.state.sessions.size(), 16u);
    EXPECT_EQ(r.rollback.state.reachable, r.baseline.state.reachable);
    EXPECT_EQ(r.rollback.state.fib, r.baseline.state.fib);
    // And the after state is not (the data does differ).
    Diff after = twin::replay::diff_states(r.baseline.state, r.after.state, clos(), clos());
    EXPECT_FALSE(after.changes.empty());
  }
}

NodeObservation failing(const std::string& why) {
  return NodeObservation{twin::harness_error(why), twin::harness_error(why),
                         twin::harness_error(why), twin::harness_error(why)};
}

TEST(Diff, MissingNodeDataIsAGap) {
  auto obs = load_observations(kGate + "/drain-spine2/baseline.observe.jsonl");
  obs["leaf1"] = failing("timeout");
  NetState s = twin::replay::state_from_observations(obs);
  EXPECT_THAT(s.gaps, ElementsAre("leaf1: bgp: timeout", "leaf1: links: timeout",
                                  "leaf1: routes: timeout", "leaf1: routes (IPv6): timeout"));
  EXPECT_FALSE(s.sessions.count("leaf1 swp1"));
  EXPECT_FALSE(s.mtu.count("leaf1:swp1"));
  EXPECT_TRUE(s.fib["leaf1"].empty());
  EXPECT_EQ(s.sessions.size(), 14u);  // the other nodes' data is still there
  EXPECT_EQ(s.fib.at("leaf2").size(), 14u);
  // Only the probe that failed is a gap.
  auto one = load_observations(kGate + "/drain-spine2/baseline.observe.jsonl");
  one["spine1"].links = twin::harness_error("ip: no such netns");
  NetState t = twin::replay::state_from_observations(one);
  EXPECT_THAT(t.gaps, ElementsAre("spine1: links: ip: no such netns"));
  EXPECT_EQ(t.sessions.size(), 16u);
  EXPECT_FALSE(t.mtu.count("spine1:swp1"));
}

TEST(Diff, BlindNodeInventsNoLossAndTheVerdictSaysWhy) {
  auto before = twin::replay::state_from_observations(
      load_observations(kGate + "/drain-spine2/baseline.observe.jsonl"));
  auto obs = load_observations(kGate + "/drain-spine2/baseline.observe.jsonl");
  obs["leaf1"] = failing("timeout");
  auto after = twin::replay::state_from_observations(obs);
  twin::plan::Plan p = clos();
  Diff d = twin::replay::diff_states(before, after, p, p);
  for (const auto& c : d.changes) EXPECT_NE(c.node, "leaf1") << c.category << " " << c.subject;
  EXPECT_EQ(d.gaps.size(), 4u);
  twin::validate::Report rep;
  rep.results.push_back(twin::validate::make_result("bgp", 0, "session-established",
                                                    twin::validate::Status::kPassed, "leaf2",
                                                    "swp1", "", "", ""));
  auto v = twin::replay::decide({}, rep, d, nullptr);
  EXPECT_EQ(v.decision, twin::replay::Decision::kError);
  ASSERT_FALSE(v.reasons.empty());
  EXPECT_EQ(v.reasons[0].category, "validator-error");
  EXPECT_THAT(v.reasons[0].message, HasSubstr("no data after the change: leaf1: bgp: timeout"));
}

TEST(Diff, TheKernelsMulticastEntriesAreNoRoutes) {
  // A 6.x guest kernel's main table, as `ip -j -6 route` prints it (and the test VM's
  // twin-json): ff00::/8 of type multicast is neither a route nor a gap.
  auto obs = load_observations(kGate + "/drain-spine2/baseline.observe.jsonl");
  obs["leaf1"].routes6 = twin::ok(json::parse(R"([
    {"type":"multicast","dst":"ff00::/8","dev":"swp1","protocol":"kernel","metric":256},
    {"dst":"fe80::/64","dev":"swp1","protocol":"kernel","metric":256},
    {"dst":"multicast","dev":"swp1"}])"));
  NetState s = twin::replay::state_from_observations(obs);
  EXPECT_FALSE(s.other_routes["leaf1"].count("ff00::/8"));
  // A word where a destination belongs is still never read as one.
  EXPECT_THAT(s.gaps,
              ElementsAre("leaf1: routes: destination 'multicast' is not a prefix twin can read"));
}

TEST(Diff, FailedIpv6RouteProbeIsAGap) {
  auto obs = load_observations(kGate + "/drain-spine2/baseline.observe.jsonl");
  obs["leaf1"].routes6 = twin::harness_error("timeout");
  NetState s = twin::replay::state_from_observations(obs);
  ASSERT_EQ(s.gaps.size(), 1u);
  EXPECT_THAT(s.gaps[0], StartsWith("leaf1: routes"));
  EXPECT_THAT(s.gaps[0], HasSubstr("timeout"));
}

TEST(Diff, ProbeOutputIsFoldedAsDocumented) {
  std::map<std::string, NodeObservation> obs;
  obs["r1"] = NodeObservation{
      twin::ok(json::parse(R"({"ipv4Unicast": {"peers": {
           "swp1": {"state": "Established", "pfxRcd": 3},
           "10.0.0.2": {"state": "Active"}}},
         "ipv6Unicast": {"peers": {"swp1": {"state": "Established", "pfxRcd": 4}}}})")),
      twin::ok(json::parse(R"([{"ifname": "lo", "mtu": 65536, "flags": ["UP"]},
          {"ifname": "swp1", "mtu": 9000, "flags": ["BROADCAST", "UP", "LOWER_UP"]},
          {"ifname": "swp2", "mtu": 1500, "flags": ["BROADCAST"]}])")),
      twin::ok(json::parse(R"([{"dst": "10.1.0.0/16", "protocol": "bgp", "nexthops": [{}, {}, {}]},
          {"dst": "10.9.9.9", "protocol": "bgp", "dev": "swp1"},
          {"dst": "10.8.0.0/16", "protocol": "static", "dev": "swp1"},
          {"dst": "10.6.0.0/16", "protocol": "ospf", "dev": "swp1"},
          {"dst": "10.7.0.0/16", "protocol": "kernel", "dev": "swp1"}])")),
      twin::ok(json::parse(R"([{"dst": "fd00::9", "protocol": "bgp", "dev": "swp1"}])"))};
  NetState s = twin::replay::state_from_observations(obs);
  ASSERT_EQ(s.sessions.size(), 2u);
  EXPECT_EQ(s.sessions.at("r1 swp1").state, "Established");
  EXPECT_EQ(s.sessions.at("r1 swp1").pfx_v4, 3);
  EXPECT_EQ(s.sessions.at("r1 swp1").pfx_v6, 4);
  EXPECT_EQ(s.sessions.at("r1 10.0.0.2").state, "Active");
  EXPECT_EQ(s.sessions.at("r1 10.0.0.2").pfx_v4, -1);
  EXPECT_EQ(s.sessions.at("r1 10.0.0.2").pfx_v6, -1);  // family not active
  std::map<std::string, int> fib = {
      {"10.1.0.0/16", 3}, {"10.6.0.0/16", 1}, {"10.9.9.9/32", 1}, {"fd00::9/128", 1}};
  EXPECT_EQ(s.fib.at("r1"), fib);
  std::map<std::string, int> mtu = {{"r1:swp1", 9000}, {"r1:swp2", 1500}};
  EXPECT_EQ(s.mtu, mtu);
  std::map<std::string, bool> up = {{"r1:swp1", true}, {"r1:swp2", false}};
  EXPECT_EQ(s.admin_up, up);
  EXPECT_TRUE(s.gaps.empty());
}

TEST(Diff, AddReachabilityTakesTheMeshTests0To2) {
  Report r;
  r.results = {
      result("reachability", 0, "loopback-mesh", Status::kPassed, "leaf1", "leaf2 10.255.1.2"),
      result("reachability", 1, "server-mesh", Status::kFailed, "server1", "server2 10.0.4.10"),
      result("reachability", 0, "loopback-mesh", Status::kError, "leaf1", "leaf3 10.255.1.3"),
      result("reachability", 2, "tenant-mesh", Status::kPassed, "red1", "red2 10.10.1.12"),
      // Isolation is no pair that answers: a pass there means silence.
      result("reachability", 3, "tenant-isolation", Status::kPassed, "red1", "blue1 10.20.1.21"),
      result("mtu", 0, "link-mtu", Status::kPassed, "leaf1", "leaf1:swp1")};
  NetState s;
  twin::replay::add_reachability(s, r);
  EXPECT_EQ(s.reachable, (StringSet{"leaf1 -> leaf2 10.255.1.2", "red1 -> red2 10.10.1.12"}));
  EXPECT_EQ(s.unreachable, StringSet{"server1 -> server2 10.0.4.10"});
}

// Tiny hand-made states, one per category.

NetState with_session(const std::string& key, const std::string& state, long v4 = -1) {
  NetState s;
  s.sessions[key] = SessionObs{state, v4, -1};
  return s;
}

TEST(Diff, SessionGainedIsAlwaysIntended) {
  NetState before, after = with_session("leaf1 swp1", "Established");
  Diff d = twin::replay::diff_states(before, after, clos(), clos());
  ASSERT_EQ(d.changes.size(), 1u);
  EXPECT_EQ(d.changes[0].category, "session-gained");
  EXPECT_EQ(d.changes[0].node, "leaf1");
  EXPECT_EQ(d.changes[0].subject, "swp1");
  EXPECT_EQ(d.changes[0].before, "absent");
  EXPECT_EQ(d.changes[0].after, "Established");
  EXPECT_TRUE(d.changes[0].intended);
  Diff from_active =
      twin::replay::diff_states(with_session("leaf1 swp1", "Active"), after, clos(), clos());
  ASSERT_EQ(from_active.changes.size(), 1u);
  EXPECT_EQ(from_active.changes[0].before, "Active");
  // Not Established after: neither gained nor lost.
  EXPECT_TRUE(
      twin::replay::diff_states(before, with_session("leaf1 swp1", "Connect"), clos(), clos())
          .changes.empty());
}

TEST(Diff, SessionLostIsIntendedOnlyWhenTheIntentDropsIt) {
  NetState before = with_session("leaf1 swp2", "Established");
  NetState after = with_session("leaf1 swp2", "Active");
  Diff plain = twin::replay::diff_states(before, after, clos(), clos());
  ASSERT_EQ(plain.changes.size(), 1u);
  EXPECT_EQ(plain.changes[0].category, "session-lost");
  EXPECT_FALSE(plain.changes[0].intended);
  EXPECT_EQ(plain.changes[0].message, "BGP session leaf1 swp2 went from Established to Active");
  ChangeSet drain;
  drain.intent.drain = {"spine2"};
  Diff d = twin::replay::diff_states(before, NetState{}, clos(),
                                     twin::replay::intended_plan(clos(), drain));
  ASSERT_EQ(d.changes.size(), 1u);
  EXPECT_EQ(d.changes[0].after, "absent");
  EXPECT_TRUE(d.changes[0].intended);
  // A node the intended plan no longer has: its losses are intended.
  Plan without = clos();
  without.nodes.erase(std::remove_if(without.nodes.begin(), without.nodes.end(),
                                     [](const auto& n) { return n.name == "leaf1"; }),
                      without.nodes.end());
  Diff gone = twin::replay::diff_states(before, NetState{}, clos(), without);
  ASSERT_EQ(gone.changes.size(), 1u);
  EXPECT_TRUE(gone.changes[0].intended);
}

TEST(Diff, PrefixGainedIsIntendedOnlyWhenThePlanExpectsIt) {
  NetState before, after;
  before.fib["leaf1"] = {{"10.255.1.2/32", 2}, {"10.0.4.0/24", 2}};
  after.fib["leaf1"] = {{"10.255.1.2/32", 2},
                        {"10.0.4.0/24", 2},
                        {"10.200.3.0/24", 2},   // declared below
                        {"10.200.9.0/24", 2},   // declared nowhere
                        {"10.0.4.128/25", 2}};  // a more-specific of leaf4's server subnet
  after.fib["leaf9"] = {{"10.255.1.3/32", 1}};  // a node new in the after state: leaf3's loopback
  twin::replay::ChangeSet cs;
  cs.intent.add_prefixes = {{"leaf3", "10.200.3.0/24", {}}};
  Plan intended = twin::replay::intended_plan(clos(), cs);
  Diff d = twin::replay::diff_states(before, after, clos(), intended);
  ASSERT_EQ(d.changes.size(), 4u);
  EXPECT_EQ(subjects(d, "prefix-gained"),
            (StringSet{"leaf1 10.0.4.128/25", "leaf1 10.200.3.0/24", "leaf1 10.200.9.0/24",
                       "leaf9 10.255.1.3/32"}));
  std::map<std::string, const Change*> by;
  for (const auto& c : d.changes) {
    EXPECT_EQ(c.before, "missing");
    by[c.subject] = &c;
  }
  EXPECT_TRUE(by["10.200.3.0/24"]->intended);
  EXPECT_TRUE(by["10.255.1.3/32"]->intended);
  EXPECT_FALSE(by["10.200.9.0/24"]->intended);
  EXPECT_EQ(by["10.200.9.0/24"]->covering, "");
  EXPECT_EQ(by["10.200.9.0/24"]->message, "leaf1 learned 10.200.9.0/24");
  EXPECT_FALSE(by["10.0.4.128/25"]->intended);
  EXPECT_EQ(by["10.0.4.128/25"]->covering, "10.0.4.0/24");
  EXPECT_EQ(by["10.0.4.128/25"]->message,
            "leaf1 learned 10.0.4.128/25, a more-specific of 10.0.4.0/24 (host-subnet of leaf4): "
            "it takes that prefix's traffic");
  EXPECT_EQ(by["10.200.3.0/24"]->after, "2 next hops");
  // Judged against the topology alone, the declared one is undeclared too.
  Diff plain = twin::replay::diff_states(before, after, clos(), clos());
  EXPECT_EQ(plain.count("prefix-gained", false), 3);
  Verdict v = twin::replay::decide({}, Report{}, d, nullptr);
  ASSERT_FALSE(v.reasons.empty());
  EXPECT_EQ(v.reasons[0].category, "prefix-gained");
  EXPECT_EQ(v.reasons[0].message,
            "prefixes gained that the change does not declare: 2 (10.0.4.128/25, in leaf1's FIB, "
            "a more-specific of 10.0.4.0/24, 10.200.9.0/24, in leaf1's FIB)");
}

TEST(Diff, LinkSubnetsGainedAreInfrastructure) {
  // An OSPF lab's transit /30s reach every FIB: they are interface subnets, not originations.
  Plan p = clos();
  for (auto& n : p.nodes)
    if (n.name == "spine1") n.config_addresses["swp9"] = {"10.9.0.1/30"};
  NetState before, after;
  after.fib["leaf1"] = {{"10.9.0.0/30", 1}};
  Diff d = twin::replay::diff_states(before, after, p, p);
  ASSERT_EQ(d.changes.size(), 1u);
  EXPECT_TRUE(d.changes[0].intended);
}

TEST(Diff, OriginFromTheBgpPath) {
  const Plan& p = clos();
  // Recorded on clos-2x4 (FRR 8.4.4) with undeclared-prefix.yaml and hijack-server-subnet.yaml
  // applied: `show bgp ipv4 unicast <prefix> json` on a leaf, a spine and the originator.
  auto recorded_route = [](const std::string& f) {
    return json::parse(read(kRepo + "/tests/data/frr84/bgp-route/" + f + ".json"));
  };
  EXPECT_EQ(twin::replay::origin_from_bgp_route(recorded_route("leaf1-10.200.9.0_24"), p, "leaf1"),
            "leaf3");
  EXPECT_EQ(twin::replay::origin_from_bgp_route(recorded_route("spine1-10.200.9.0_24"), p, "spine1"),
            "leaf3");
  EXPECT_EQ(twin::replay::origin_from_bgp_route(recorded_route("leaf3-10.200.9.0_24"), p, "leaf3"),
            "leaf3");
  EXPECT_EQ(twin::replay::origin_from_bgp_route(recorded_route("leaf2-10.0.1.128_25"), p, "leaf2"),
            "leaf4");
  // FRR 8.4's `show bgp ipv4 unicast 10.200.9.0/24 json` on leaf1 (shape as recorded).
  json via_spines = json::parse(R"({"prefix":"10.200.9.0/24","paths":[
    {"aspath":{"string":"65000 65103","segments":[{"type":"as-sequence","list":[65000,65103]}],
     "length":2},"bestpath":{"overall":true,"selectionReason":"First path received"},
     "peer":{"peerId":"fe80::1","routerId":"10.255.0.1","type":"external"}},
    {"aspath":{"string":"65000 65103","length":2},
     "peer":{"peerId":"fe80::2","routerId":"10.255.0.2","type":"external"}}]})");
  EXPECT_EQ(twin::replay::origin_from_bgp_route(via_spines, p, "leaf1"), "leaf3");
  // From a spine: the spines share AS 65000; a one-AS path came from its originator.
  json from_spine = json::parse(R"({"paths":[{"aspath":{"string":"65000"},
    "bestpath":{"overall":true},"peer":{"routerId":"10.255.0.2"}}]})");
  EXPECT_EQ(twin::replay::origin_from_bgp_route(from_spine, p, "leaf1"), "spine2");
  // Seen further away, nothing narrows the shared AS down.
  json far = json::parse(R"({"paths":[{"aspath":{"string":"65102 65000"},
    "bestpath":{"overall":true},"peer":{"routerId":"10.255.1.2"}}]})");
  EXPECT_EQ(twin::replay::origin_from_bgp_route(far, p, "leaf1"), "AS 65000 (spine1, spine2)");
  // iBGP through a route reflector: ORIGINATOR_ID names the originator.
  json reflected = json::parse(R"({"paths":[{"aspath":{"string":"Local","length":0},
    "bestpath":{"overall":true},"originatorId":"10.255.1.4","peer":{"routerId":"10.255.0.1"}}]})");
  EXPECT_EQ(twin::replay::origin_from_bgp_route(reflected, p, "leaf1"), "leaf4");
  json direct = json::parse(R"({"paths":[{"aspath":{"string":""},"bestpath":{"overall":true},
    "peer":{"routerId":"10.255.1.2"}}]})");
  EXPECT_EQ(twin::replay::origin_from_bgp_route(direct, p, "leaf1"), "leaf2");
  json sourced = json::parse(R"({"paths":[{"aspath":{"string":"Local"},"sourced":true,
    "bestpath":{"overall":true}}]})");
  EXPECT_EQ(twin::replay::origin_from_bgp_route(sourced, p, "leaf3"), "leaf3");
  // An aggregate's AS_SET names no single origin; an unknown AS is said as such.
  json unknown = json::parse(R"({"paths":[{"aspath":{"string":"65000 64999"},
    "bestpath":{"overall":true}}]})");
  EXPECT_EQ(twin::replay::origin_from_bgp_route(unknown, p, "leaf1"), "AS 64999");
  EXPECT_EQ(twin::replay::origin_from_bgp_route(json::object(), p, "leaf1"), "");
  EXPECT_EQ(twin::replay::origin_from_bgp_route(json::parse(R"({"paths":[]})"), p, "leaf1"), "");
}

// A probe that answers nothing: attribution falls back on the FIBs alone.
class SilentProbe final : public twin::validate::LabProbe {
 public:
  twin::Result<json> frr_json(const twin::plan::Node&, const std::string&,
                              const std::string&) override {
    ++asked;
    return twin::harness_error("no bgpd here");
  }
  twin::Result<json> ip_json(const twin::plan::Node&, const std::vector<std::string>&) override {
    return twin::harness_error("not asked");
  }
  std::vector<twin::validate::PingResult> ping(
      const twin::plan::Node&, const std::vector<twin::validate::PingRequest>&) override {
    return {};
  }
  int asked = 0;
};

TEST(Diff, OriginOfADefaultNobodyInstallsIsWhereItsNextHopsLead) {
  // OSPF's `default-information originate always` on leaf4: every other node routes 0.0.0.0/0
  // toward it, leaf4 itself has no such route, and no BGP path names it.
  NetState before, after;
  for (const char* leaf : {"leaf1", "leaf2", "leaf3"}) {
    after.fib[leaf] = {{"0.0.0.0/0", 2}};
    after.fib_via[leaf]["0.0.0.0/0"] = {"swp1", "swp2"};
  }
  for (const char* spine : {"spine1", "spine2"}) {
    after.fib[spine] = {{"0.0.0.0/0", 1}};
    after.fib_via[spine]["0.0.0.0/0"] = {"swp4"};
  }
  Diff d = twin::replay::diff_states(before, after, clos(), clos());
  ASSERT_EQ(d.count("prefix-gained", false), 5);
  SilentProbe probe;
  twin::replay::attribute_origins(d, before, after, clos(), probe);
  EXPECT_GT(probe.asked, 0);  // BGP was asked first
  for (const auto& c : d.changes) EXPECT_EQ(c.origin, "leaf4") << c.node;
  Verdict v = twin::replay::decide({}, Report{}, d, nullptr);
  ASSERT_FALSE(v.reasons.empty());
  EXPECT_EQ(v.reasons[0].message,
            "prefixes gained that the change does not declare: 1 (0.0.0.0/0 originated by leaf4, "
            "in 5 FIBs)");
  // A loop of next hops that never leaves the routers that route it names nobody.
  NetState looped;
  looped.fib["leaf1"] = {{"0.0.0.0/0", 1}};
  looped.fib_via["leaf1"]["0.0.0.0/0"] = {"swp1"};
  looped.fib["spine1"] = {{"0.0.0.0/0", 1}};
  looped.fib_via["spine1"]["0.0.0.0/0"] = {"swp1"};
  Diff l = twin::replay::diff_states(before, looped, clos(), clos());
  twin::replay::attribute_origins(l, before, looped, clos(), probe);
  for (const auto& c : l.changes) EXPECT_EQ(c.origin, "") << c.node;
}

TEST(Diff, PrefixLostIntendedOnlyWhenNoLongerExpected) {
  NetState before, after;
  before.fib["leaf2"] = {{"10.255.1.1/32", 2}, {"10.200.9.0/24", 1}};
  after.fib["leaf2"] = {};
  Diff d = twin::replay::diff_states(before, after, clos(), clos());
  ASSERT_EQ(d.changes.size(), 2u);
  EXPECT_EQ(d.count("prefix-lost", false), 2);  // a prefix no one owns is not expected to go
  EXPECT_EQ(d.changes[1].message, "leaf2 lost the route to 10.255.1.1/32 (loopback of leaf1)");
  EXPECT_EQ(d.changes[0].message, "leaf2 lost the route to 10.200.9.0/24");
  ChangeSet remove;
  remove.intent.remove_prefixes = {prefix_ref("leaf1", "10.255.1.1/32")};
  Diff r =
      twin::replay::diff_states(before, after, clos(), twin::replay::intended_plan(clos(), remove));
  EXPECT_EQ(r.count("prefix-lost", true), 1);
  EXPECT_EQ(r.count("prefix-lost", false), 1);
}

TEST(Diff, EcmpShrinkUnintendedWhileThePlanExpectsTheWidth) {
  NetState before, after;
  before.fib["leaf1"] = {{"10.255.1.2/32", 2}};
  after.fib["leaf1"] = {{"10.255.1.2/32", 1}};
  Diff d = twin::replay::diff_states(before, after, clos(), clos());
  ASSERT_EQ(d.changes.size(), 1u);
  const Change& c = d.changes[0];
  EXPECT_EQ(c.category, "ecmp-shrunk");
  EXPECT_FALSE(c.intended);  // the plan still expects 2
  EXPECT_EQ(c.before, "2 next hops");
  EXPECT_EQ(c.after, "1 next hop");
  EXPECT_EQ(c.message, "leaf1 reaches 10.255.1.2/32 over 1 next hop, was 2 next hops");
  ChangeSet down;
  down.intent.links_down = {link_ref("leaf1", "swp2", "spine2", "swp1")};
  Diff ok =
      twin::replay::diff_states(before, after, clos(), twin::replay::intended_plan(clos(), down));
  ASSERT_EQ(ok.changes.size(), 1u);
  EXPECT_TRUE(ok.changes[0].intended);
  // Growing ECMP is no change.
  EXPECT_TRUE(twin::replay::diff_states(after, before, clos(), clos()).changes.empty());
}

TEST(Diff, SessionPrefixesLostFollowsTheNodesPrefixLoss) {
  NetState before = with_session("leaf2 swp1", "Established", 6);
  NetState after = with_session("leaf2 swp1", "Established", 5);
  before.fib["leaf2"] = {{"10.255.1.1/32", 2}};
  after.fib["leaf2"] = {};
  Diff d = twin::replay::diff_states(before, after, clos(), clos());
  auto c = of(d, "session-prefixes-lost");
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].subject, "swp1 ipv4");
  EXPECT_EQ(c[0].before, "6");
  EXPECT_EQ(c[0].after, "5");
  EXPECT_FALSE(c[0].intended);  // leaf2 lost a prefix it should have
  after.fib["leaf2"] = {{"10.255.1.1/32", 2}};
  Diff only = twin::replay::diff_states(before, after, clos(), clos());
  ASSERT_EQ(only.changes.size(), 1u);
  EXPECT_TRUE(only.changes[0].intended);  // no unintended prefix loss at leaf2
}

TEST(Diff, ReachabilityLostAndGained) {
  NetState before, after;
  before.reachable = {"leaf1 -> leaf2 10.255.1.2", "leaf1 -> leaf3 10.255.1.3"};
  before.unreachable = {"leaf1 -> leaf4 10.255.1.4"};
  after.reachable = {"leaf1 -> leaf4 10.255.1.4"};
  after.unreachable = {"leaf1 -> leaf2 10.255.1.2"};
  Diff d = twin::replay::diff_states(before, after, clos(), clos());
  ASSERT_EQ(d.changes.size(), 3u);
  EXPECT_EQ(d.changes[0].subject, "leaf1 -> leaf2 10.255.1.2");
  EXPECT_EQ(d.changes[0].after, "no reply");
  EXPECT_FALSE(d.changes[0].intended);
  EXPECT_EQ(d.changes[1].subject, "leaf1 -> leaf3 10.255.1.3");
  EXPECT_EQ(d.changes[1].after, "not expected");
  EXPECT_TRUE(d.changes[1].intended);
  EXPECT_EQ(d.changes[2].category, "reachability-gained");
  EXPECT_EQ(d.changes[2].node, "leaf1");
  EXPECT_TRUE(d.changes[2].intended);
}

TEST(Diff, MtuChangedAgainstTheIntent) {
  NetState before, after;
  before.mtu = {{"leaf1:swp1", 9216}, {"leaf1:swp2", 9216}};
  after.mtu = {{"leaf1:swp1", 1500}};  // swp2 not seen: no change reported
  Diff d = twin::replay::diff_states(before, after, clos(), clos());
  ASSERT_EQ(d.changes.size(), 1u);
  EXPECT_EQ(d.changes[0].category, "mtu-changed");
  EXPECT_FALSE(d.changes[0].intended);
  ChangeSet cs;
  cs.steps.push_back(interface_mtu_step("s", "leaf1", "swp1", 1500));
  Diff one_end =
      twin::replay::diff_states(before, after, clos(), twin::replay::intended_plan(clos(), cs));
  ASSERT_EQ(one_end.changes.size(), 1u);
  EXPECT_FALSE(one_end.changes[0].intended) << "the peer spine1:swp1 still intends 9216";
  cs.steps.push_back(interface_mtu_step("t", "spine1", "swp1", 1500));
  Diff ok =
      twin::replay::diff_states(before, after, clos(), twin::replay::intended_plan(clos(), cs));
  ASSERT_EQ(ok.changes.size(), 1u);
  EXPECT_TRUE(ok.changes[0].intended);
}

TEST(Diff, AdminStateChangedIntendedOnlyViaLinksDown) {
  NetState before, after;
  before.admin_up = {{"leaf1:swp1", true}, {"leaf1:swp2", false}};
  after.admin_up = {{"leaf1:swp1", false}, {"leaf1:swp2", true}};
  Diff d = twin::replay::diff_states(before, after, clos(), clos());
  ASSERT_EQ(d.changes.size(), 2u);
  EXPECT_EQ(d.changes[0].category, "admin-state-changed");
  EXPECT_EQ(d.changes[0].subject, "leaf1:swp1");
  EXPECT_EQ(d.changes[0].before, "up");
  EXPECT_EQ(d.changes[0].after, "down");
  EXPECT_FALSE(d.changes[0].intended);
  EXPECT_EQ(d.changes[0].message, "leaf1:swp1 is administratively down");
  EXPECT_TRUE(d.changes[1].intended);  // coming up is never a loss
  // The same, with an interface step taking it down: still not intent.
  ChangeSet step = change_text(
      "version: 1\nname: t\nsteps:\n  - {name: p, interface: {interface: leaf1:swp1, state: "
      "down}}\n");
  Diff s =
      twin::replay::diff_states(before, after, clos(), twin::replay::intended_plan(clos(), step));
  EXPECT_FALSE(s.changes[0].intended);
  // Declared with links-down: intended (the peer's end too).
  ChangeSet down = change_text(
      "version: 1\nname: t\nintent: {links-down: ['spine1:swp1']}\nsteps: [{name: a, wait: {}}]\n");
  Plan intended = twin::replay::intended_plan(clos(), down);
  Diff ok = twin::replay::diff_states(before, after, clos(), intended);
  EXPECT_TRUE(ok.changes[0].intended);
  EXPECT_EQ(ok.count("admin-state-changed", false), 0);
}

TEST(Diff, CountFiltersByCategoryAndIntent) {
  Diff d;
  d.changes = {{"session-lost", "a", "x", "", "", true, ""},
               {"session-lost", "a", "y", "", "", false, ""},
               {"session-lost", "b", "z", "", "", false, ""},
               {"prefix-lost", "b", "z", "", "", false, ""}};
  EXPECT_EQ(d.count("session-lost", true), 1);
  EXPECT_EQ(d.count("session-lost", false), 2);
  EXPECT_EQ(d.count("prefix-lost", false), 1);
  EXPECT_EQ(d.count("mtu-changed", false), 0);
}

// =======================================================================================
// Verdict: decide() and exit codes

TEST(Verdict, WithdrawLoopbackRejectsWithPrefixLostFirst) {
  const auto& r = recorded("withdraw-loopback");
  Verdict v = twin::replay::decide(applied("drop leaf1's loopback network", "frr"), r.after.report,
                                   diff_of("withdraw-loopback"), nullptr);
  EXPECT_EQ(v.decision, Decision::kReject);
  EXPECT_EQ(twin::replay::exit_code(v), 1);
  ASSERT_EQ(v.reasons.size(), 6u);
  EXPECT_EQ(v.reasons[0].category, "prefix-lost");
  EXPECT_EQ(v.reasons[0].rank, 5);
  EXPECT_EQ(v.reasons[0].step, "");
  EXPECT_EQ(v.reasons[0].subjects.size(), 5u);
  EXPECT_EQ(v.reasons[0].subjects[0], "leaf2 10.255.1.1/32 (2 next hops -> missing)");
  EXPECT_THAT(v.reasons[0].message, StartsWith("prefixes lost: 5 ("));
  EXPECT_THAT(v.reasons[0].message, HasSubstr("… (1 more)"));
  EXPECT_EQ(v.reasons[1].category, "reachability-lost");
  EXPECT_EQ(v.reasons[1].rank, 6);
  EXPECT_EQ(v.reasons[1].subjects.size(), 10u);
  EXPECT_EQ(v.reasons[2].category, "validator-failed");
  EXPECT_EQ(v.reasons[2].rank, 10);
  EXPECT_THAT(v.reasons[2].message, StartsWith("routes.0 fib-complete failed on 5 subjects: "));
  EXPECT_THAT(v.reasons[3].message, StartsWith("mtu.2 path-mtu failed on 10 subjects"));
  EXPECT_THAT(v.reasons[4].message, StartsWith("reachability.0 loopback-mesh failed on 10"));
  EXPECT_EQ(v.reasons[5].category, "session-prefixes-lost");
  EXPECT_EQ(v.reasons[5].rank, 14);
  expect_golden("withdraw-loopback", "reasons", to_json(v.reasons));
  EXPECT_EQ(twin::replay::to_string(v.decision), r.verdict.at("verdict").get<std::string>());
}

TEST(Verdict, DrainSpine2Approves) {
  const auto& r = recorded("drain-spine2");
  Verdict v = twin::replay::decide(applied("shut spine2's fabric sessions", "frr"), r.after.report,
                                   diff_of("drain-spine2"), nullptr);
  EXPECT_EQ(v.decision, Decision::kApprove);
  EXPECT_TRUE(v.reasons.empty());
  EXPECT_EQ(twin::replay::exit_code(v), 0);
  EXPECT_EQ(twin::replay::to_string(v.decision), r.verdict.at("verdict").get<std::string>());
  EXPECT_TRUE(r.verdict.at("reasons").empty());
  // Judged against the topology alone, the drain is a loss of sessions first.
  Diff plain = twin::replay::diff_states(r.baseline.state, r.after.state, clos(), clos());
  Verdict bad = twin::replay::decide({}, r.after.report, plain, nullptr);
  EXPECT_EQ(bad.decision, Decision::kReject);
  ASSERT_FALSE(bad.reasons.empty());
  EXPECT_EQ(bad.reasons[0].category, "session-lost");
  EXPECT_EQ(bad.reasons[0].rank, 4);
  EXPECT_EQ(bad.reasons[0].subjects[0], "leaf1 swp2 (Established -> Active)");
}

TEST(Verdict, MtuOneEndRejectsWithTheMtuValidator) {
  const auto& r = recorded("mtu-one-end");
  Verdict v = twin::replay::decide(applied("leaf2 uplink to 1500", "interface"), r.after.report,
                                   diff_of("mtu-one-end"), nullptr);
  EXPECT_EQ(v.decision, Decision::kReject);
  ASSERT_EQ(v.reasons.size(), 2u);
  EXPECT_EQ(v.reasons[0].category, "validator-failed");
  EXPECT_EQ(v.reasons[0].rank, 10);
  EXPECT_EQ(v.reasons[1].category, "mtu-changed");
  EXPECT_THAT(v.reasons[0].message, HasSubstr("mtu.0 link-mtu"));
  EXPECT_EQ(v.reasons[0].message,
            "mtu.0 link-mtu failed on 1 subject: leaf2 leaf2:swp1 <-> spine1:swp2: MTU mismatch: "
            "leaf2:swp1 1500 vs spine1:swp2 9216 (intended: leaf2:swp1=1500 spine1:swp2=9216)");
  expect_golden("mtu-one-end", "reasons", to_json(v.reasons));
}

TEST(Verdict, RollbackReportsApproveAgainstTheBaseline) {
  for (const auto& c : kCases) {
    SCOPED_TRACE(c);
    const auto& r = recorded(c);
    Diff back = twin::replay::diff_states(r.baseline.state, r.rollback.state, clos(), clos());
    Verdict v = twin::replay::decide({}, r.rollback.report, back, nullptr);
    EXPECT_EQ(v.decision, Decision::kApprove);
  }
}

TEST(Verdict, FailedStepOutranksEverything) {
  const auto& r = recorded("withdraw-loopback");
  std::vector<StepOutcome> steps = applied("first", "wait");
  StepOutcome bad;
  bad.name = "drop leaf1's loopback network";
  bad.kind = "frr";
  bad.status = "failed";
  bad.detail = "% Unknown command";
  steps.push_back(bad);
  StepOutcome skipped;
  skipped.name = "later";
  skipped.kind = "check";
  skipped.status = "skipped";
  steps.push_back(skipped);
  Verdict v = twin::replay::decide(steps, r.after.report, diff_of("withdraw-loopback"), nullptr);
  EXPECT_EQ(v.decision, Decision::kReject);
  ASSERT_EQ(v.reasons.size(), 7u);
  EXPECT_EQ(v.reasons[0].rank, 1);
  EXPECT_EQ(v.reasons[0].category, "step-failed");
  EXPECT_EQ(v.reasons[0].step, "drop leaf1's loopback network");
  EXPECT_EQ(v.reasons[0].message,
            "step 'drop leaf1's loopback network' (frr) failed: % Unknown command");
  EXPECT_THAT(v.reasons[0].subjects, ElementsAre("drop leaf1's loopback network"));
  EXPECT_EQ(v.reasons[1].category, "prefix-lost");
  for (size_t i = 1; i < v.reasons.size(); ++i)
    EXPECT_LE(v.reasons[i - 1].rank, v.reasons[i].rank) << i;
  // A failed step alone rejects, even when everything validated.
  Verdict alone =
      twin::replay::decide({bad}, recorded("drain-spine2").after.report, Diff{}, nullptr);
  EXPECT_EQ(alone.decision, Decision::kReject);
  ASSERT_EQ(alone.reasons.size(), 1u);
  EXPECT_EQ(alone.reasons[0].category, "step-failed");
}

TEST(Verdict, EveryLossCategoryHasItsRank) {
  Diff d;
  // Listed least severe first; intended ones never count.
  d.changes = {
      {"admin-state-changed", "leaf1", "leaf1:swp1", "up", "down", false, ""},
      {"mtu-changed", "leaf1", "leaf1:swp1", "9216", "1500", false, ""},
      {"session-prefixes-lost", "leaf1", "swp1 ipv4", "5", "4", false, ""},
      {"paths-moved", "leaf1", "10.255.1.3/32", "1 next hop", "1 next hop", false, ""},
      {"ecmp-shrunk", "leaf1", "10.255.1.2/32", "2 next hops", "1 next hop", false, ""},
      {"reachability-lost", "leaf1", "leaf1 -> leaf2 10.255.1.2", "reply", "no reply", false, ""},
      {"prefix-lost", "leaf1", "10.255.1.2/32", "2 next hops", "missing", false, ""},
      {"session-lost", "leaf1", "swp1", "Established", "Active", false, ""},
      {"session-lost", "leaf1", "swp2", "Established", "absent", true, ""},
      {"session-gained", "leaf1", "swp3", "absent", "Established", true, ""},
      {"prefix-gained", "leaf1", "10.9.0.0/16", "missing", "1 next hop", true, ""},
      {"prefix-gained", "leaf2", "10.9.9.0/24", "missing", "1 next hop", false, "", "", "leaf3"},
      {"reachability-gained", "leaf1", "leaf1 -> x", "no reply", "reply", true, ""},
      {"bandwidth-lost", "", "pairs", "slowest pair 46 Mbit/s", "slowest pair 27 Mbit/s", false,
       "pairs: the slowest pair got 27 Mbit/s"},
  };
  Report after;
  after.results = {result("bgp", 0, "session-established", Status::kPassed, "leaf1", "swp1"),
                   result("mtu", 0, "link-mtu", Status::kFailed, "leaf1", "leaf1:swp1", "bad"),
                   result("routes", 1, "fib-ecmp", Status::kError, "leaf2", "", "no data")};
  Verdict v = twin::replay::decide({}, after, d, nullptr);
  EXPECT_EQ(v.decision, Decision::kReject);
  std::vector<std::pair<int, std::string>> got;
  for (const auto& r : v.reasons) got.emplace_back(r.rank, r.category);
  std::vector<std::pair<int, std::string>> want = {
      {4, "session-lost"},   {5, "prefix-lost"},          {6, "reachability-lost"},
      {9, "bandwidth-lost"}, {10, "validator-failed"},    {11, "prefix-gained"},
      {12, "ecmp-shrunk"},   {13, "paths-moved"},         {14, "session-prefixes-lost"},
      {15, "mtu-changed"},   {16, "admin-state-changed"}, {17, "validator-error"}};
  EXPECT_EQ(got, want);
  EXPECT_EQ(v.reasons[0].message, "BGP sessions lost: 1 (leaf1 swp1 (Established -> Active))");
  EXPECT_THAT(v.reasons[0].subjects, ElementsAre("leaf1 swp1 (Established -> Active)"));
  EXPECT_THAT(v.reasons[2].subjects, ElementsAre("leaf1 -> leaf2 10.255.1.2 (reply -> no reply)"));
  // A pattern's bandwidth: its own words, not before -> after.
  EXPECT_EQ(v.reasons[3].message, "bandwidth lost: pairs: the slowest pair got 27 Mbit/s");
  EXPECT_EQ(v.reasons[4].message, "mtu.0 link-mtu failed on 1 subject: leaf1 leaf1:swp1: bad");
  EXPECT_EQ(v.reasons[5].message,
            "prefixes gained that the change does not declare: 1 (10.9.9.0/24 originated by "
            "leaf3, in leaf2's FIB)");
  EXPECT_EQ(v.reasons[11].message, "routes.1 fib-ecmp could not tell on 1 subject: leaf2: no data");
}

TEST(Verdict, OnlyErrorsGiveError) {
  Report after;
  after.results = {result("bgp", 0, "session-established", Status::kPassed, "leaf1", "swp1"),
                   result("routes", 0, "fib-complete", Status::kError, "leaf2", "10.255.1.1/32",
                          "vtysh timed out"),
                   result("routes", 0, "fib-complete", Status::kError, "leaf3", "10.255.1.1/32",
                          "vtysh timed out"),
                   result("mtu", 1, "x", Status::kSkipped, "leaf1", "")};
  Diff intended_only;
  intended_only.changes = {{"session-lost", "leaf1", "swp2", "Established", "Active", true, ""}};
  Verdict v = twin::replay::decide(applied("s", "frr"), after, intended_only, nullptr);
  EXPECT_EQ(v.decision, Decision::kError);
  EXPECT_EQ(twin::replay::exit_code(v), 3);
  ASSERT_EQ(v.reasons.size(), 1u);
  EXPECT_EQ(v.reasons[0].category, "validator-error");
  EXPECT_EQ(v.reasons[0].rank, 17);
  EXPECT_EQ(v.reasons[0].subjects.size(), 2u);
  EXPECT_THAT(v.reasons[0].message,
              StartsWith("routes.0 fib-complete could not tell on 2 subjects: leaf2 "));
  // A failure next to the errors: reject (failed wins over error).
  after.results.push_back(
      result("bgp", 0, "session-established", Status::kFailed, "leaf4", "swp1", "Active"));
  Verdict f = twin::replay::decide({}, after, intended_only, nullptr);
  EXPECT_EQ(f.decision, Decision::kReject);
  ASSERT_EQ(f.reasons.size(), 2u);
  EXPECT_EQ(f.reasons[0].category, "validator-failed");
  EXPECT_EQ(f.reasons[1].category, "validator-error");
}

TEST(Verdict, EmptyAfterReportIsAnError) {
  Verdict v = twin::replay::decide(applied("s", "frr"), Report{}, Diff{}, nullptr);
  EXPECT_EQ(v.decision, Decision::kError);
  EXPECT_EQ(twin::replay::exit_code(v), 3);
  ASSERT_EQ(v.reasons.size(), 1u);
  EXPECT_EQ(v.reasons[0].category, "validator-error");
  EXPECT_EQ(v.reasons[0].rank, 17);
  EXPECT_THAT(v.reasons[0].message, HasSubstr("nothing was validated"));
  // Something lost without anything validated: still a reject.
  Diff d;
  d.changes = {{"prefix-lost", "leaf2", "10.255.1.1/32", "2 next hops", "missing", false, ""}};
  Verdict r = twin::replay::decide({}, Report{}, d, nullptr);
  EXPECT_EQ(r.decision, Decision::kReject);
  ASSERT_EQ(r.reasons.size(), 2u);
  EXPECT_EQ(r.reasons[0].category, "prefix-lost");
  EXPECT_EQ(r.reasons[1].category, "validator-error");
}

TEST(Verdict, DirtyBaselineIgnoresFailuresAlreadyThere) {
  Report baseline;
  baseline.results = {
      result("bgp", 0, "session-established", Status::kFailed, "leaf4", "swp1", "Active"),
      result("routes", 0, "fib-complete", Status::kError, "leaf3", "10.255.1.1/32", "no data"),
      result("bgp", 0, "session-established", Status::kPassed, "leaf1", "swp1")};
  Report after;
  after.results = {
      result("bgp", 0, "session-established", Status::kFailed, "leaf4", "swp1", "Active"),
      result("routes", 0, "fib-complete", Status::kError, "leaf3", "10.255.1.1/32", "no data"),
      result("bgp", 0, "session-established", Status::kPassed, "leaf1", "swp1")};
  Verdict clean = twin::replay::decide({}, after, Diff{}, nullptr);
  EXPECT_EQ(clean.decision, Decision::kReject);
  Verdict dirty = twin::replay::decide({}, after, Diff{}, &baseline);
  EXPECT_EQ(dirty.decision, Decision::kApprove);
  EXPECT_TRUE(dirty.reasons.empty());
  // A new failure: another peer of the same test, or the same subject of another test.
  for (const auto& extra :
       {result("bgp", 0, "session-established", Status::kFailed, "leaf4", "swp2", "Active"),
        result("bgp", 1, "session-afi", Status::kFailed, "leaf4", "swp1", "no ipv6"),
        result("bgp", 0, "session-established", Status::kFailed, "leaf1", "swp1", "Idle")}) {
    SCOPED_TRACE(extra.node + " " + extra.peer + " " + std::to_string(extra.test));
    Report a = after;
    a.results.push_back(extra);
    Verdict v = twin::replay::decide({}, a, Diff{}, &baseline);
    EXPECT_EQ(v.decision, Decision::kReject);
    ASSERT_EQ(v.reasons.size(), 1u);
    EXPECT_EQ(v.reasons[0].category, "validator-failed");
    EXPECT_EQ(v.reasons[0].subjects.size(), 1u);
    EXPECT_THAT(v.reasons[0].subjects[0], StartsWith(extra.node + " " + extra.peer + ": "));
  }
}

TEST(Verdict, ExitCodesAndNames) {
  Verdict v;
  v.decision = Decision::kApprove;
  EXPECT_EQ(twin::replay::exit_code(v), 0);
  EXPECT_STREQ(twin::replay::to_string(v.decision), "approve");
  v.decision = Decision::kReject;
  EXPECT_EQ(twin::replay::exit_code(v), 1);
  EXPECT_STREQ(twin::replay::to_string(v.decision), "reject");
  v.decision = Decision::kError;
  EXPECT_EQ(twin::replay::exit_code(v), 3);
  EXPECT_STREQ(twin::replay::to_string(v.decision), "error");
  EXPECT_EQ(twin::replay::exit_code(Verdict{}), 3);  // undecided is an error
}

// =======================================================================================
// Scenario files

const StringSet kScenarioKeys = {"version",  "name",          "description", "topology", "change",
                                 "per-step", "restart-check", "max-outage",  "traffic",  "expect"};
const StringSet kExpectKeys = {"verdict", "reason", "reason-contains", "reasons-include",
                               "failing-step"};
const StringSet kReasonCategories(twin::replay::reason_categories().begin(),
                                  twin::replay::reason_categories().end());

// docs/gate.md documents the one ranked list of reasons, in rank order.
TEST(Verdict, TheGatePageListsTheReasonsInRankOrder) {
  std::string readme = read(kRepo + "/docs/gate.md");
  auto at = readme.find("<!-- reasons -->");
  ASSERT_NE(at, std::string::npos) << "docs/gate.md lost its ranked list of reasons";
  std::vector<std::string> listed;
  std::regex row(R"(\n\| (\d+) \| `([a-z-]+)` \|)");
  auto end = readme.find("<!-- /reasons -->", at);
  for (std::sregex_iterator it(readme.begin() + at, readme.begin() + end, row), e; it != e; ++it) {
    EXPECT_EQ(std::stoi((*it)[1]), static_cast<int>(listed.size()) + 1);
    listed.push_back((*it)[2]);
  }
  EXPECT_EQ(listed, twin::replay::reason_categories());
}

// Scenario folder -> the topology its scenarios run on.
const std::map<std::string, std::string> kScenarioFolders = {
    {"clos-2x4", "topologies/clos-2x4.yaml"},
    {"ibgp-rr", "topologies/ibgp-rr/lab.yaml"},
    {"ospf-6", "topologies/ospf-6/lab.yaml"},
    {"ai-rail", "scenarios/ai-rail/topologies/ai-rail-gate.yaml"}};

std::vector<std::string> shipped_scenarios() {
  std::vector<std::string> out;
  for (const auto& [folder, topology] : kScenarioFolders)
    for (const auto& e : fs::directory_iterator(kRepo + "/scenarios/" + folder))
      if (e.is_regular_file() && e.path().extension() == ".yaml")
        out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

// A folder of its own, removed at the end of the test; holds a change and a topology file.
class ScenarioFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "twin-scenario-XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    const char* made = ::mkdtemp(buf.data());
    ASSERT_NE(made, nullptr);
    dir_ = made;
    write("change.yaml", "version: 1\nname: c\nsteps: [{name: a, wait: {}}]\n");
    write("topo.yaml", "version: 1\nname: t\nnodes: {}\n");
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string write(const std::string& name, const std::string& text) {
    std::string p = dir_ + "/" + name;
    std::ofstream(p) << text;
    return p;
  }
  // Loads `text` as s.yaml; expects failure with exactly one problem and returns it.
  Diagnostic only_problem(const std::string& text) {
    Diagnostics d;
    auto s = twin::replay::load_scenario(write("s.yaml", text), d);
    EXPECT_FALSE(s.has_value());
    EXPECT_EQ(d.items().size(), 1u) << dump(d);
    if (d.items().empty()) return {};
    EXPECT_EQ(d.items()[0].file, dir_ + "/s.yaml");
    return d.items()[0];
  }
  std::string dir_;
};

const std::string kGood = "version: 1\nname: s\ntopology: topo.yaml\nchange: change.yaml\n";

TEST(Scenario, EveryShippedScenarioLoads) {
  auto files = shipped_scenarios();
  // The twelve docs/scenarios.md describes are there (more may be added).
  StringSet names;
  for (const auto& f : files) names.insert(fs::path(f).stem().string());
  for (const char* n :
       {"approve-add-leaf5", "approve-drain-spine2", "approve-jumbo-everywhere",
        "approve-new-server-subnet", "approve-service-prefix", "reject-filter-leaf3",
        "reject-isolate-leaf2", "reject-maintenance-with-a-slip", "reject-misspelled-route-map",
        "reject-mtu-one-end", "reject-withdraw-loopback", "reject-wrong-remote-as"})
    EXPECT_TRUE(names.count(n)) << n;
  ASSERT_GE(files.size(), 20u);  // and the eight of scenarios/ibgp-rr
  for (const auto& f : files) {
    SCOPED_TRACE(f);
    const std::string folder = fs::path(f).parent_path().filename().string();
    const std::string topo = kRepo + "/" + kScenarioFolders.at(folder);
    Diagnostics d;
    auto s = twin::replay::load_scenario(f, d);
    ASSERT_TRUE(s) << dump(d);
    EXPECT_TRUE(d.empty());
    const std::string stem = fs::path(f).stem().string();
    EXPECT_EQ(s->name, stem);
    EXPECT_EQ(s->file, fs::path(f).lexically_normal().string());
    EXPECT_EQ(fs::weakly_canonical(s->topology), fs::weakly_canonical(topo));
    EXPECT_TRUE(fs::is_regular_file(s->change));
    EXPECT_THAT(s->change, HasSubstr("/scenarios/" + folder + "/changes/"));
    EXPECT_FALSE(s->description.empty());
    EXPECT_EQ(s->expect.verdict, stem.rfind("approve-", 0) == 0 ? "approve" : "reject");
    if (s->expect.verdict == "reject") {
      EXPECT_TRUE(kReasonCategories.count(s->expect.reason));
    } else {
      EXPECT_TRUE(s->expect.reason.empty());
    }
  }
  Diagnostics d;
  auto slip = twin::replay::load_scenario(
      kRepo + "/scenarios/clos-2x4/reject-maintenance-with-a-slip.yaml", d);
  ASSERT_TRUE(slip) << dump(d);
  EXPECT_TRUE(slip->per_step);
  EXPECT_EQ(slip->expect.reason, "session-lost");
  EXPECT_EQ(slip->expect.failing_step, "shut leaf3 uplink to spine1");
  auto mtu = twin::replay::load_scenario(kRepo + "/scenarios/clos-2x4/reject-mtu-one-end.yaml", d);
  ASSERT_TRUE(mtu) << dump(d);
  EXPECT_FALSE(mtu->per_step);
  EXPECT_EQ(mtu->expect.reason, "validator-failed");
  EXPECT_EQ(mtu->expect.reason_contains, "mtu.0 link-mtu");
  EXPECT_EQ(fs::path(mtu->change).filename(), "mtu-one-end.yaml");
}

// The recorded runs meet what the shipped scenarios expect of them.
TEST(Scenario, RecordedRunsMeetTheShippedExpectations) {
  const std::map<std::string, std::string> scenario_of = {
      {"withdraw-loopback", "reject-withdraw-loopback.yaml"},
      {"drain-spine2", "approve-drain-spine2.yaml"},
      {"mtu-one-end", "reject-mtu-one-end.yaml"}};
  for (const auto& [c, file] : scenario_of) {
    SCOPED_TRACE(c);
    Diagnostics d;
    auto s = twin::replay::load_scenario(kRepo + "/scenarios/clos-2x4/" + file, d);
    ASSERT_TRUE(s) << dump(d);
    const auto& r = recorded(c);
    Verdict v = twin::replay::decide({}, r.after.report, diff_of(c), nullptr);
    std::string cat = v.reasons.empty() ? "" : v.reasons[0].category;
    std::string msg = v.reasons.empty() ? "" : v.reasons[0].message;
    std::string why;
    EXPECT_TRUE(
        twin::replay::meets(s->expect, twin::replay::to_string(v.decision), cat, msg, "", &why))
        << why;
  }
}

TEST_F(ScenarioFiles, MinimalScenarioLoads) {
  Diagnostics d;
  auto s = twin::replay::load_scenario(write("s.yaml", kGood), d);
  ASSERT_TRUE(s) << dump(d);
  EXPECT_EQ(s->name, "s");
  EXPECT_EQ(s->dir, dir_);
  EXPECT_EQ(s->topology, dir_ + "/topo.yaml");
  EXPECT_EQ(s->change, dir_ + "/change.yaml");
  EXPECT_FALSE(s->per_step);
  EXPECT_TRUE(s->restart_check);  // on unless the scenario turns it off
  EXPECT_TRUE(s->expect.verdict.empty());
  EXPECT_EQ(s->mark.line, 1);
  EXPECT_EQ(s->mark.column, 1);
}

TEST_F(ScenarioFiles, MissingChangeFile) {
  Diagnostic d = only_problem("version: 1\nname: s\ntopology: topo.yaml\nchange: nope.yaml\n");
  EXPECT_EQ(d.line, 4);
  EXPECT_EQ(d.column, 9);
  EXPECT_EQ(d.field, "change");
  EXPECT_EQ(d.message, "change file " + dir_ + "/nope.yaml does not exist");
  EXPECT_EQ(d.hint, "paths are relative to the scenario's folder");
}

TEST_F(ScenarioFiles, MissingFields) {
  Diagnostics d;
  EXPECT_FALSE(twin::replay::load_scenario(write("s.yaml", "# c\ndescription: x\n"), d));
  ASSERT_EQ(d.items().size(), 4u) << dump(d);
  std::vector<std::string> fields;
  for (const auto& i : d.items()) {
    fields.push_back(i.field);
    EXPECT_EQ(i.line, 2) << i.field;  // the mapping's place
    EXPECT_EQ(i.column, 1) << i.field;
    EXPECT_THAT(i.message, StartsWith("missing")) << i.field;
  }
  EXPECT_THAT(fields, ElementsAre("version", "name", "topology", "change"));
  EXPECT_EQ(d.items()[0].hint, "add `version: 1` at the top");
}

TEST_F(ScenarioFiles, UnknownKeyWithHint) {
  Diagnostic d = only_problem(kGood + "per_step: true\n");
  EXPECT_EQ(d.line, 5);
  EXPECT_EQ(d.column, 1);
  EXPECT_EQ(d.field, "per_step");
  EXPECT_THAT(d.message, StartsWith("unknown field 'per_step'; expected one of: "));
  EXPECT_EQ(d.hint, "did you mean per-step?");
  Diagnostic e = only_problem(kGood + "expect:\n  verdict: reject\n  reason-contain: x\n");
  EXPECT_EQ(e.line, 7);
  EXPECT_EQ(e.column, 3);
  EXPECT_EQ(e.field, "expect.reason-contain");
  EXPECT_EQ(e.hint, "did you mean reason-contains?");
}

TEST_F(ScenarioFiles, BadVerdictValue) {
  Diagnostic d = only_problem(kGood + "expect:\n  verdict: approved\n");
  EXPECT_EQ(d.line, 6);
  EXPECT_EQ(d.column, 12);
  EXPECT_EQ(d.field, "expect.verdict");
  EXPECT_EQ(d.message, "expected approve or reject, got 'approved'");
  Diagnostic m = only_problem(kGood + "expect: {reason: prefix-lost}\n");
  EXPECT_EQ(m.line, 5);
  EXPECT_EQ(m.column, 9);
  EXPECT_EQ(m.field, "expect.verdict");
  EXPECT_EQ(m.message, "missing; expected approve or reject");
}

TEST_F(ScenarioFiles, UnknownReasonCategoryWithNearestName) {
  Diagnostic d = only_problem(kGood + "expect:\n  verdict: reject\n  reason: prefix-lots\n");
  EXPECT_EQ(d.line, 7);
  EXPECT_EQ(d.column, 11);
  EXPECT_EQ(d.field, "expect.reason");
  EXPECT_THAT(d.message, StartsWith("unknown reason category 'prefix-lots'; expected one of: "));
  EXPECT_EQ(d.hint, "did you mean prefix-lost?");
  Diagnostic far = only_problem(kGood + "expect:\n  verdict: reject\n  reason: zzzzzzzzzzzz\n");
  EXPECT_EQ(far.hint, "");
}

TEST_F(ScenarioFiles, Version2IsUnsupported) {
  Diagnostic d = only_problem("name: s\nversion: 2\ntopology: topo.yaml\nchange: change.yaml\n");
  EXPECT_EQ(d.line, 2);
  EXPECT_EQ(d.column, 10);
  EXPECT_EQ(d.field, "version");
  EXPECT_EQ(d.message, "unsupported version 2; expected 1");
}

TEST_F(ScenarioFiles, MalformedYaml) {
  // An unclosed flow list: yaml-cpp gives up at the ':' of the next line's key.
  Diagnostic d = only_problem("version: 1\nname: [s\ntopology: topo.yaml\n");
  EXPECT_EQ(d.line, 3);
  EXPECT_EQ(d.column, 9);
  EXPECT_EQ(d.field, "");
  EXPECT_EQ(d.message, "malformed YAML: end of sequence flow not found");
  EXPECT_EQ(d.hint, "check indentation and brackets near this place");
  // A key indented under a scalar.
  Diagnostic t = only_problem("version: 1\n  name: s\n");
  EXPECT_EQ(t.line, 2);
  EXPECT_EQ(t.column, 7);
  EXPECT_EQ(t.message, "malformed YAML: illegal map value");
}

TEST_F(ScenarioFiles, OtherBadValues) {
  Diagnostic p = only_problem(kGood + "per-step: maybe\n");
  EXPECT_EQ(p.line, 5);
  EXPECT_EQ(p.column, 11);
  EXPECT_EQ(p.field, "per-step");
  EXPECT_EQ(p.message, "expected true or false");
  Diagnostic e = only_problem(kGood + "expect: reject\n");
  EXPECT_EQ(e.line, 5);
  EXPECT_EQ(e.column, 9);
  EXPECT_EQ(e.field, "expect");
  Diagnostic n =
      only_problem("version: 1\nname: [a, b]\ntopology: topo.yaml\nchange: change.yaml\n");
  EXPECT_EQ(n.line, 2);
  EXPECT_EQ(n.column, 7);
  EXPECT_EQ(n.field, "name");
  EXPECT_EQ(n.message, "expected a text value");
  Diagnostic root = only_problem("- a\n- b\n");
  EXPECT_EQ(root.line, 1);
  EXPECT_EQ(root.column, 1);
  EXPECT_THAT(root.message, StartsWith("expected a mapping"));
  Diagnostics d;
  EXPECT_FALSE(twin::replay::load_scenario(dir_ + "/absent.yaml", d));
  ASSERT_EQ(d.items().size(), 1u);
  EXPECT_EQ(d.items()[0].line, 0);
  EXPECT_THAT(d.items()[0].message, StartsWith("cannot read the scenario: "));
}

TEST_F(ScenarioFiles, EveryProblemIsReportedAtOnce) {
  Diagnostics d;
  EXPECT_FALSE(twin::replay::load_scenario(
      write("s.yaml",
            "version: 3\nname: s\ntopology: none.yaml\nchange: change.yaml\nextra: 1\n"
            "expect: {verdict: maybe, reason: mtu-change}\n"),
      d));
  std::vector<std::string> fields;
  for (const auto& i : d.items()) fields.push_back(i.field);
  EXPECT_THAT(fields,
              ElementsAre("extra", "version", "topology", "expect.verdict", "expect.reason"));
  EXPECT_EQ(d.items()[4].hint, "did you mean mtu-changed?");
}

TEST(Scenario, ReasonsIncludeLooksAtEveryReason) {
  twin::replay::ScenarioExpect e;
  e.verdict = "reject";
  e.reasons_include = {"area 0.0.0.1 here", "leaf2"};
  const std::vector<std::string> all = {
      "BGP sessions lost: 2 (leaf2 10.0.255.1 (Established -> Active))",
      "ospf.1 interfaces-agree failed on 2 subjects: leaf2 eth1: ends disagree: area 0.0.0.1 "
      "here, 0.0.0.0 on rr1:eth2"};
  std::string why;
  EXPECT_TRUE(twin::replay::meets(e, "reject", "session-lost", all[0], "", &why, all)) << why;
  EXPECT_FALSE(twin::replay::meets(e, "reject", "session-lost", all[0], "", &why, {all[0]}));
  EXPECT_EQ(why, "expected a reason to mention 'area 0.0.0.1 here'; none of 1 does");
}

TEST(Scenario, MeetsEachMismatchAndTheMatch) {
  twin::replay::ScenarioExpect e;
  e.verdict = "reject";
  e.reason = "prefix-lost";
  e.reason_contains = "10.255.1.1/32";
  e.failing_step = "drop";
  const std::string msg = "prefixes lost: 1 (leaf2 10.255.1.1/32 (2 next hops -> missing))";
  std::string why;
  EXPECT_TRUE(twin::replay::meets(e, "reject", "prefix-lost", msg, "drop", &why)) << why;
  EXPECT_FALSE(twin::replay::meets(e, "approve", "", "", "", &why));
  EXPECT_EQ(why, "expected verdict reject, got approve");
  EXPECT_FALSE(twin::replay::meets(e, "reject", "session-lost", msg, "drop", &why));
  EXPECT_EQ(why, "expected first reason prefix-lost, got session-lost");
  EXPECT_FALSE(twin::replay::meets(e, "reject", "", msg, "drop", &why));
  EXPECT_EQ(why, "expected first reason prefix-lost, got none");
  EXPECT_FALSE(twin::replay::meets(e, "reject", "prefix-lost", "prefixes lost: 10.255.1.2/32",
                                   "drop", &why));
  EXPECT_EQ(why,
            "expected the first reason to mention '10.255.1.1/32', got: prefixes lost: "
            "10.255.1.2/32");
  EXPECT_FALSE(twin::replay::meets(e, "reject", "prefix-lost", msg, "other", &why));
  EXPECT_EQ(why, "expected failing step 'drop', got 'other'");
  // Nothing expected: anything meets it.
  twin::replay::ScenarioExpect none;
  EXPECT_TRUE(twin::replay::meets(none, "error", "validator-error", "x", "", &why));
  twin::replay::ScenarioExpect approve;
  approve.verdict = "approve";
  EXPECT_TRUE(twin::replay::meets(approve, "approve", "", "", "", &why));
  EXPECT_FALSE(twin::replay::meets(approve, "error", "validator-error", "x", "", &why));
  EXPECT_EQ(why, "expected verdict approve, got error");
}

// =======================================================================================
// The scenario JSON Schema declares exactly what the loader accepts

const json& scenario_schema() {
  static const json j = json::parse(read(kScenarioSchema));
  return j;
}

// "…; expected one of: a, b, c" -> {a, b, c}
StringSet listed_after(const std::string& message, const std::string& lead) {
  StringSet out;
  auto at = message.find(lead);
  if (at == std::string::npos) return out;
  std::stringstream ss(message.substr(at + lead.size()));
  for (std::string part; std::getline(ss, part, ',');)
    out.insert(part.substr(part.find_first_not_of(' ')));
  return out;
}

TEST(ScenarioSchema, IsDraft202012WithDescriptions) {
  const json& root = scenario_schema();
  EXPECT_EQ(root.value("$schema", ""), "https://json-schema.org/draft/2020-12/schema");
  EXPECT_EQ(root.value("type", ""), "object");
  EXPECT_FALSE(root.value("title", "").empty());
  EXPECT_FALSE(root.value("description", "").empty());
  int described = 0;
  for (const json* obj : {&root, &root.at("properties").at("expect")})
    for (const auto& [name, prop] : obj->at("properties").items()) {
      EXPECT_FALSE(prop.value("description", "").empty()) << name;
      ++described;
    }
  EXPECT_EQ(described, 15);
}

TEST(ScenarioSchema, FieldsEqualTheLoaderKeyLists) {
  const json& root = scenario_schema();
  const json& expect = root.at("properties").at("expect");
  EXPECT_EQ(property_names(root), kScenarioKeys);
  EXPECT_EQ(property_names(expect), kExpectKeys);
  EXPECT_EQ(root.at("additionalProperties"), json(false));
  EXPECT_EQ(expect.at("additionalProperties"), json(false));
  EXPECT_EQ(root.at("required"), json({"version", "name", "topology", "change"}));
  EXPECT_EQ(expect.at("required"), json({"verdict"}));
  EXPECT_EQ(root.at("properties").at("version").at("const"), 1);
  EXPECT_EQ(root.at("properties").at("per-step").at("type"), "boolean");
  EXPECT_EQ(expect.at("type"), "object");
  EXPECT_EQ(string_enum(expect.at("properties").at("verdict")), (StringSet{"approve", "reject"}));
  EXPECT_EQ(string_enum(expect.at("properties").at("reason")), kReasonCategories);
}

// The loader lists its fields and reason categories when it meets one it does not know; those
// lists equal the schema's.
TEST_F(ScenarioFiles, LoaderListsTheSchemaFields) {
  const json& root = scenario_schema();
  const json& expect = root.at("properties").at("expect");
  const std::string far = "zzzzzzzzzzzzzzzzzzzz";
  Diagnostic top = only_problem(kGood + far + ": 1\n");
  EXPECT_TRUE(top.hint.empty());
  EXPECT_EQ(listed_after(top.message, "expected one of: "), property_names(root));
  Diagnostic ex = only_problem(kGood + "expect: {verdict: approve, " + far + ": 1}\n");
  EXPECT_EQ(listed_after(ex.message, "expected one of: "), property_names(expect));
  Diagnostic reason = only_problem(kGood + "expect: {verdict: reject, reason: " + far + "}\n");
  EXPECT_EQ(listed_after(reason.message, "expected one of: "),
            string_enum(expect.at("properties").at("reason")));
}

// A scenario using every field the schema declares loads, with each value in place.
TEST_F(ScenarioFiles, LoaderAcceptsEverySchemaField) {
  const std::string text =
      "version: 1\nname: every-field\ndescription: all of them\ntopology: topo.yaml\n"
      "change: change.yaml\nper-step: true\nrestart-check: false\nmax-outage: 1.5s\n"
      "traffic: {pattern: ring, flows-per-pair: 2}\nexpect:\n  verdict: reject\n  reason: "
      "session-lost\n  reason-contains: leaf2 swp1\n"
      "  reasons-include: [area, leaf2]\n  failing-step: a\n";
  YAML::Node y = YAML::Load(text);
  StringSet used, used_expect;
  for (const auto& kv : y) used.insert(kv.first.Scalar());
  for (const auto& kv : y["expect"]) used_expect.insert(kv.first.Scalar());
  EXPECT_EQ(used, property_names(scenario_schema()));
  EXPECT_EQ(used_expect, property_names(scenario_schema().at("properties").at("expect")));
  EXPECT_EQ(used, kScenarioKeys);
  EXPECT_EQ(used_expect, kExpectKeys);
  Diagnostics d;
  auto s = twin::replay::load_scenario(write("s.yaml", text), d);
  ASSERT_TRUE(s) << dump(d);
  EXPECT_EQ(s->name, "every-field");
  EXPECT_EQ(s->description, "all of them");
  EXPECT_TRUE(s->per_step);
  EXPECT_FALSE(s->restart_check);
  EXPECT_EQ(s->max_outage, "1.5s");
  ASSERT_TRUE(s->traffic);
  EXPECT_EQ(s->traffic->pattern, "ring");
  EXPECT_EQ(s->traffic->flows_per_pair, 2);
  EXPECT_EQ(s->expect.verdict, "reject");
  EXPECT_EQ(s->expect.reason, "session-lost");
  EXPECT_EQ(s->expect.reason_contains, "leaf2 swp1");
  EXPECT_EQ(s->expect.failing_step, "a");
  EXPECT_EQ(s->expect.reasons_include, (std::vector<std::string>{"area", "leaf2"}));
  // Every reason category of the schema is one the loader accepts.
  for (const auto& r :
       string_enum(scenario_schema().at("properties").at("expect").at("properties").at("reason"))) {
    SCOPED_TRACE(r);
    Diagnostics e;
    auto t = twin::replay::load_scenario(
        write("r.yaml", kGood + "expect: {verdict: reject, reason: " + r + "}\n"), e);
    ASSERT_TRUE(t) << dump(e);
    EXPECT_EQ(t->expect.reason, r);
  }
}

// The shipped scenarios use only declared fields and values the schema allows.
TEST(ScenarioSchema, ShippedScenariosConform) {
  const json& root = scenario_schema();
  const json& expect = root.at("properties").at("expect");
  StringSet verdicts = string_enum(expect.at("properties").at("verdict"));
  StringSet reasons = string_enum(expect.at("properties").at("reason"));
  for (const auto& f : shipped_scenarios()) {
    SCOPED_TRACE(f);
    YAML::Node y = YAML::LoadFile(f);
    for (const auto& kv : y) EXPECT_TRUE(root.at("properties").contains(kv.first.Scalar()));
    for (const auto& req : root.at("required")) EXPECT_TRUE(y[req.get<std::string>()]);
    EXPECT_EQ(y["version"].as<int>(), 1);
    ASSERT_TRUE(y["expect"]);
    for (const auto& kv : y["expect"])
      EXPECT_TRUE(expect.at("properties").contains(kv.first.Scalar()));
    EXPECT_TRUE(verdicts.count(y["expect"]["verdict"].Scalar()));
    if (y["expect"]["reason"]) {
      EXPECT_TRUE(reasons.count(y["expect"]["reason"].Scalar()));
    }
    if (y["per-step"]) {
      EXPECT_NO_THROW((void)y["per-step"].as<bool>());
    }
    EXPECT_THAT(read(f),
                StartsWith("# yaml-language-server: $schema=../schema/scenario.schema.json"));
  }
}

}  // namespace

TEST(Diff, ARoutedPrefixAStaticRouteTookOverIsNamedSo) {
  // leaf1's route to leaf4's servers: BGP with 2 next hops before, a static route after (the
  // shape `ip -j route` printed on the ibgp-rr lab for the static-wrong-next-hop scenario).
  auto before = twin::replay::state_from_observations(
      load_observations(kGate + "/drain-spine2/baseline.observe.jsonl"));
  auto obs = load_observations(kGate + "/drain-spine2/baseline.observe.jsonl");
  auto& routes = *obs["leaf1"].routes4;
  for (auto& r : routes)
    if (r.value("dst", "") == "10.0.4.0/24")
      r = json::parse(R"({"dst": "10.0.4.0/24", "gateway": "10.0.1.10", "dev": "swp3",
                          "protocol": "static", "metric": 20, "flags": []})");
  auto after = twin::replay::state_from_observations(obs);
  EXPECT_EQ(after.other_routes["leaf1"]["10.0.4.0/24"], "static via 10.0.1.10 dev swp3");
  twin::plan::Plan p = clos();
  Diff d = twin::replay::diff_states(before, after, p, p);
  bool found = false;
  for (const auto& c : d.changes)
    if (c.category == "prefix-lost" && c.node == "leaf1" && c.subject == "10.0.4.0/24") {
      found = true;
      EXPECT_EQ(c.after, "replaced by static via 10.0.1.10 dev swp3");
      EXPECT_FALSE(c.intended);
    }
  EXPECT_TRUE(found) << to_json(d).dump(1);
}
