// The gate's fidelity (issue 42): a default route read as the prefix it is, a declared path
// move judged by what it declares, the restore ladder after a restart check, and interface
// steps on a VTEP's devices.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/unit/fakes.hpp"
#include "tests/unit/recorded.hpp"
#include "tests/unit/support.hpp"
#include "twin/causes/causes.hpp"
#include "twin/changeset/changeset.hpp"
#include "twin/changeset/intent.hpp"
#include "twin/core/ip.hpp"
#include "twin/gate/gate.hpp"
#include "twin/topology/frr_conf.hpp"
#include "twin/topology/loader.hpp"
#include "twin/verdict/diff.hpp"
#include "twin/verdict/observation.hpp"
#include "validators/ospf/ospf.hpp"
#include "validators/routes/routes.hpp"

using nlohmann::json;
using ::testing::HasSubstr;
using twin::replay::Change;
using twin::replay::Decision;
using twin::replay::NetState;
using twin::replay::NodeObservation;

namespace {

const twin::plan::Plan& ospf6() {
  static const twin::plan::Plan p = [] {
    twin::Diagnostics d;
    auto t = twin::topology::load_topology(
        std::string(TWIN_DATA_DIR) + "/topologies/ospf-6/lab.yaml", d);
    if (!t) throw std::runtime_error(d.format());
    return twin::plan::make_plan(*t);
  }();
  return p;
}

twin::replay::ChangeSet change(const std::string& text, const twin::plan::Plan& plan) {
  twin::Diagnostics d;
  auto cs = twin::replay::load_change_set_text(text, "t.yaml", "/tmp", plan, d);
  if (!cs) throw std::runtime_error(twin_test::dump(d));
  return *cs;
}

// One node's observation with these kernel routes (IPv4 and IPv6 tables as `ip -j` prints them).
NodeObservation routes(json v4, json v6 = json::array()) {
  return {twin::ok(json::object()), twin::ok(json::array()), twin::ok(std::move(v4)),
          twin::ok(std::move(v6))};
}

std::vector<const Change*> of(const twin::replay::Diff& d, const std::string& category) {
  std::vector<const Change*> out;
  for (const auto& c : d.changes)
    if (c.category == category) out.push_back(&c);
  return out;
}

// ---- 1. The default route

TEST(DefaultRoute, ReadAsTheAllZerosPrefixOfItsTable) {
  EXPECT_EQ(twin::route_dst_prefix("default", false), "0.0.0.0/0");
  EXPECT_EQ(twin::route_dst_prefix("default", true), "::/0");
  EXPECT_EQ(twin::route_dst_prefix("10.6.255.4", false), "10.6.255.4/32");
  EXPECT_EQ(twin::route_dst_prefix("fd00::4", true), "fd00::4/128");
  EXPECT_EQ(twin::route_dst_prefix("10.6.4.7/24", false), "10.6.4.0/24");
  EXPECT_FALSE(twin::route_dst_prefix("10.6.4.0/24", true));  // not the IPv6 table's
  EXPECT_FALSE(twin::route_dst_prefix("default/32", false));
  EXPECT_EQ(twin::validators::normalize_dst("default", true), "::/0");
  // Both tables in one list: the family from the route's own addresses.
  EXPECT_TRUE(twin::validators::route_is_v6(
      json::parse(R"({"dst":"default","gateway":"fe80::1","dev":"eth1","protocol":"ospf6"})")));
  EXPECT_FALSE(twin::validators::route_is_v6(
      json::parse(R"({"dst":"default","gateway":"10.6.45.2","dev":"eth2"})")));
}

// As the kernel printed it on r1 of ospf-6 once r4 originated a default route (FRR 8.4.4,
// `ip -j route show`), and a default route over BGP unnumbered in the IPv6 table.
const char* kDefaultV4 =
    R"([{"dst":"default","nhid":34,"protocol":"ospf","metric":20,"flags":[],
        "nexthops":[{"gateway":"10.6.12.2","dev":"eth1","weight":1,"flags":[]},
                    {"gateway":"10.6.16.2","dev":"eth2","weight":1,"flags":[]}]}])";
const char* kDefaultV6 =
    R"([{"dst":"default","nhid":40,"protocol":"bgp","metric":20,"pref":"medium","flags":[],
        "gateway":"fe80::7f:ff:fe00:1","dev":"eth1"}])";

TEST(DefaultRoute, AnUndeclaredOneIsAGainAndADeclaredOneIsNot) {
  const auto& plan = ospf6();
  std::map<std::string, NodeObservation> before{{"r1", routes(json::array())}};
  std::map<std::string, NodeObservation> after{
      {"r1", routes(json::parse(kDefaultV4), json::parse(kDefaultV6))}};
  NetState b = twin::replay::state_from_observations(before);
  NetState a = twin::replay::state_from_observations(after);
  ASSERT_TRUE(a.gaps.empty()) << a.gaps.front();
  EXPECT_EQ(a.fib["r1"].at("0.0.0.0/0"), 2);
  EXPECT_EQ(a.fib["r1"].at("::/0"), 1);
  EXPECT_EQ(a.fib_via["r1"].at("0.0.0.0/0"), (std::vector<std::string>{"eth1", "eth2"}));
  auto undeclared = twin::replay::diff_states(b, a, plan, plan);
  auto gained = of(undeclared, "prefix-gained");
  ASSERT_EQ(gained.size(), 2u);
  EXPECT_EQ(gained[0]->subject, "0.0.0.0/0");
  EXPECT_FALSE(gained[0]->intended);
  auto v = twin::replay::decide({},
                                twin_test::load_report(std::string(TWIN_TEST_DATA) +
                                                       "/gate/drain-spine2/baseline.results.json"),
                                undeclared, nullptr);
  EXPECT_EQ(v.decision, Decision::kReject);
  EXPECT_EQ(v.reasons.front().category, "prefix-gained");
  auto cs = change(
      "version: 1\nname: d\nintent:\n  add-prefixes:\n    - {node: r4, prefix: 0.0.0.0/0}\n"
      "    - {node: r4, prefix: '::/0'}\nsteps:\n  - name: s\n    wait: {until: duration, "
      "duration: 1s}\n",
      plan);
  auto intended = twin::replay::intended_plan(plan, cs);
  auto declared = twin::replay::diff_states(b, a, plan, intended);
  for (const auto* c : of(declared, "prefix-gained")) EXPECT_TRUE(c->intended) << c->subject;
}

TEST(DefaultRoute, ADestinationThatIsNoPrefixIsAGapNeverIgnored) {
  std::map<std::string, NodeObservation> after{
      {"r1", routes(json::parse(R"([{"dst":"bogus","protocol":"ospf","dev":"eth1"}])"))}};
  NetState a = twin::replay::state_from_observations(after);
  ASSERT_EQ(a.gaps.size(), 1u);
  EXPECT_THAT(a.gaps[0], HasSubstr("r1: routes: destination 'bogus' is not a prefix"));
  EXPECT_TRUE(a.fib["r1"].empty());
}

// ---- 3. Paths meant to move

NetState fib_of(int hops, std::vector<std::string> via,
                const std::string& prefix = "10.6.255.4/32") {
  NetState s;
  s.fib["r1"][prefix] = hops;
  s.fib_via["r1"][prefix] = std::move(via);
  s.fib["r1"]["10.6.255.3/32"] = 1;
  s.fib_via["r1"]["10.6.255.3/32"] = {"eth1"};
  return s;
}

TEST(PathIntent, ADeclaredMoveIsApprovedAndShowsOldAndNewNextHops) {
  const auto& plan = ospf6();
  auto cs = change(
      "version: 1\nname: te\nintent:\n  paths:\n    - {node: r1, prefixes: [10.6.255.4/32, "
      "10.6.4.0/24], ecmp: 1, next-hops: [r6]}\nsteps:\n  - name: s\n    wait: {until: duration, "
      "duration: 1s}\n",
      plan);
  ASSERT_EQ(cs.intent.paths.size(), 1u);
  auto intended = twin::replay::intended_plan(plan, cs);
  ASSERT_EQ(intended.path_intents.size(), 2u);
  auto d =
      twin::replay::diff_states(fib_of(2, {"eth1", "eth2"}), fib_of(1, {"eth2"}), plan, intended);
  auto shrunk = of(d, "ecmp-shrunk");
  ASSERT_EQ(shrunk.size(), 1u);
  EXPECT_TRUE(shrunk[0]->intended);
  EXPECT_EQ(shrunk[0]->before, "2 next hops (eth1 to r2, eth2 to r6)");
  EXPECT_EQ(shrunk[0]->after, "1 next hop (eth2 to r6)");
  // The same move undeclared: rejected.
  auto bare =
      twin::replay::diff_states(fib_of(2, {"eth1", "eth2"}), fib_of(1, {"eth2"}), plan, plan);
  ASSERT_EQ(of(bare, "ecmp-shrunk").size(), 1u);
  EXPECT_FALSE(of(bare, "ecmp-shrunk")[0]->intended);
  // Declared through r6, gone through r2 instead: not what was declared.
  auto wrong =
      twin::replay::diff_states(fib_of(2, {"eth1", "eth2"}), fib_of(1, {"eth1"}), plan, intended);
  ASSERT_EQ(of(wrong, "ecmp-shrunk").size(), 1u);
  EXPECT_FALSE(of(wrong, "ecmp-shrunk")[0]->intended);
  EXPECT_THAT(of(wrong, "ecmp-shrunk")[0]->message,
              HasSubstr("the change declares 1 next hop through r6"));
  // Declared, and nothing moved: the change did not do what it says.
  auto none = twin::replay::diff_states(fib_of(2, {"eth1", "eth2"}), fib_of(2, {"eth1", "eth2"}),
                                        plan, intended);
  ASSERT_EQ(of(none, "paths-moved").size(), 1u);
  EXPECT_FALSE(of(none, "paths-moved")[0]->intended);
  // A change that declares paths is judged strictly: another path moving is not allowed.
  NetState moved_other = fib_of(1, {"eth2"});
  moved_other.fib_via["r1"]["10.6.255.3/32"] = {"eth2"};
  auto strict = twin::replay::diff_states(fib_of(2, {"eth1", "eth2"}), moved_other, plan, intended);
  auto other = of(strict, "paths-moved");
  ASSERT_EQ(other.size(), 1u);
  EXPECT_EQ(other[0]->subject, "10.6.255.3/32");
  EXPECT_FALSE(other[0]->intended);
  auto v = twin::replay::decide({},
                                twin_test::load_report(std::string(TWIN_TEST_DATA) +
                                                       "/gate/drain-spine2/baseline.results.json"),
                                strict, nullptr);
  EXPECT_EQ(v.decision, Decision::kReject);
  EXPECT_EQ(v.reasons.front().category, "paths-moved");
}

TEST(PathIntent, BadDeclarationsAreReportedAtTheirPlace) {
  twin::Diagnostics d;
  auto cs = twin::replay::load_change_set_text(
      "version: 1\nname: te\nintent:\n  paths:\n    - {node: r1, prefix: 10.6.255.4/32, "
      "next-hops: [r9]}\n    - {node: r1, prefix: 10.6.4.1/24}\n    - {node: r1}\n"
      "    - {node: r1, prefix: 10.6.4.0/24, ecmp: 0}\nsteps:\n  - name: s\n    wait: {until: "
      "duration, duration: 1s}\n",
      "t.yaml", "/tmp", ospf6(), d);
  EXPECT_FALSE(cs);
  const auto text = d.format();
  EXPECT_THAT(text, HasSubstr("t.yaml:5:"));
  EXPECT_THAT(text, HasSubstr("'r9' is neither a neighbor nor an interface of r1"));
  EXPECT_THAT(text, HasSubstr("prefix '10.6.4.1/24' has host bits set"));
  EXPECT_THAT(text, HasSubstr("missing; expected the prefix (or prefixes) whose paths move"));
  EXPECT_THAT(text, HasSubstr("1-256 next hops"));
}

// ---- 2. The restore ladder

TEST(RestoreLadder, AfterARestartCheckTheRollbackRestartsFromTheBaselinesConfig) {
  twin_test::FakeNetwork net;
  net.good = twin_test::load_observations(std::string(TWIN_TEST_DATA) +
                                          "/gate/withdraw-loopback/baseline.observe.jsonl");
  net.bad = twin_test::load_observations(std::string(TWIN_TEST_DATA) +
                                         "/gate/withdraw-loopback/after.observe.jsonl");
  net.good_report = twin_test::load_report(std::string(TWIN_TEST_DATA) +
                                           "/gate/withdraw-loopback/baseline.results.json");
  net.bad_report = twin_test::load_report(std::string(TWIN_TEST_DATA) +
                                          "/gate/withdraw-loopback/after.results.json");
  net.broken = [](const auto&) { return false; };
  net.latent = [](const auto& a) { return a.count("leaf1") > 0; };
  net.sticky = true;  // what the restart took in stays until it restarts again
  twin_test::FakeDriver driver{net};
  twin_test::FakeRunner runner;
  twin_test::FakeTime time;
  twin_test::FakeLab lab;
  lab.net = &net;
  twin::state::State st;
  st.lab = "rec";
  st.plan = twin_test::recorded_clos_plan();
  twin::replay::ApplyOptions opts;
  opts.parallel = 2;
  opts.restart_check = true;
  twin::replay::GateEnv env{
      runner,
      [&](const twin::plan::Node&) -> const twin::drivers::NodeDriver& { return driver; },
      time,
      lab,
      twin_test::recorded_validators(net),
      {}};
  twin::replay::ChangeSet cs;
  cs.name = "router-id";
  twin::replay::Step s;
  s.name = "leaf1 takes another id";
  s.body = twin::replay::FrrStep{};
  s.frr().nodes = {"leaf1"};
  s.frr().add = "router ospf\n ospf router-id 10.255.1.2\nexit\n";
  cs.steps.push_back(s);
  auto r = twin::replay::run_gate(st, cs, opts, env);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->verdict.decision, Decision::kReject);
  EXPECT_EQ(r->verdict.reasons.front().category, "restart-divergence");
  EXPECT_TRUE(r->rollback_ok) << r->rollback_detail;
  EXPECT_EQ(r->rollback_rung, "restart");
  EXPECT_THAT(r->rollback_detail, HasSubstr("proven by the restart rung"));
  EXPECT_FALSE(net.shows_bad());
  std::vector<std::string> order;
  for (const auto& l : net.log)
    if (l.find("leaf1") != std::string::npos && l.rfind("interfaces", 0) != 0) order.push_back(l);
  EXPECT_THAT(order,
              ::testing::ElementsAre("apply leaf1", "save leaf1", "restart leaf1", "reload leaf1",
                                     "save leaf1", "startup leaf1", "restart leaf1"));
}

TEST(RestoreLadder, ANodeThatOnlyARebuildRepairsIsRebuiltAndWhatFailsIsSaid) {
  twin_test::FakeNetwork net;
  net.good = twin_test::load_observations(std::string(TWIN_TEST_DATA) +
                                          "/gate/withdraw-loopback/baseline.observe.jsonl");
  net.bad = twin_test::load_observations(std::string(TWIN_TEST_DATA) +
                                         "/gate/withdraw-loopback/after.observe.jsonl");
  net.good_report = twin_test::load_report(std::string(TWIN_TEST_DATA) +
                                           "/gate/withdraw-loopback/baseline.results.json");
  net.bad_report = twin_test::load_report(std::string(TWIN_TEST_DATA) +
                                          "/gate/withdraw-loopback/after.results.json");
  twin_test::FakeDriver driver{net};
  twin_test::FakeRunner runner;
  twin_test::FakeTime time;
  twin_test::FakeLab lab;
  lab.net = &net;
  // Broken by the change, and by nothing a reload or a restart undoes: only a node built anew
  // (two reshapes: without it, with it) comes back.
  bool applied = false;
  net.on_apply = [&](const std::string&) { applied = true; };
  net.also_bad = [&] { return applied && lab.reshapes.size() < 2; };
  twin::state::State st;
  st.lab = "rec";
  st.plan = twin_test::recorded_clos_plan();
  twin::replay::ApplyOptions opts;
  opts.parallel = 2;
  twin::replay::GateEnv env{
      runner,
      [&](const twin::plan::Node&) -> const twin::drivers::NodeDriver& { return driver; },
      time,
      lab,
      twin_test::recorded_validators(net),
      {}};
  twin::replay::ChangeSet cs;
  cs.name = "x";
  twin::replay::Step s;
  s.name = "break leaf1";
  s.body = twin::replay::FrrStep{};
  s.frr().nodes = {"leaf1"};
  s.frr().add = "! BREAK\n";
  cs.steps.push_back(s);
  auto r = twin::replay::run_gate(st, cs, opts, env);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->verdict.decision, Decision::kReject);
  EXPECT_TRUE(r->rollback_ok) << r->rollback_detail;
  EXPECT_EQ(r->rollback_rung, "recreate");
  EXPECT_THAT(r->rollback_detail, HasSubstr("after the reload rung still different"));
  EXPECT_THAT(r->rollback_detail, HasSubstr("after the restart rung still different"));
  ASSERT_EQ(lab.reshapes.size(), 2u);
  EXPECT_EQ(lab.reshaped_to[0].find("leaf1"), nullptr);  // without the node, then with it
  EXPECT_NE(lab.reshaped_to[1].find("leaf1"), nullptr);
}

// ---- 6. A VTEP's devices in an interface step

TEST(VtepDevices, AnInterfaceStepTakesAVxlanDeviceOrBridgeAndTheOverlayJudgesIt) {
  twin::Diagnostics d;
  auto t =
      twin::topology::load_topology(std::string(TWIN_DATA_DIR) + "/topologies/evpn-2x4.yaml", d);
  ASSERT_TRUE(t) << d.format();
  auto plan = twin::plan::make_plan(*t);
  const twin::plan::Node* leaf = nullptr;
  for (const auto& n : plan.nodes)
    if (!n.vnis.empty()) leaf = &n;
  ASSERT_NE(leaf, nullptr);
  const std::string vx = leaf->vnis.front().vxlan, br = leaf->vnis.front().bridge;
  auto cs = change(
      "version: 1\nname: m\nsteps:\n  - name: jumbo overlay\n    interface:\n"
      "      interfaces: [" +
          leaf->name + ":" + vx + ", " + leaf->name + ":" + br + "]\n      mtu: 9000\n",
      plan);
  ASSERT_EQ(cs.steps.size(), 1u);
  EXPECT_EQ(cs.steps[0].interface().interfaces[0].interface, vx);
  // Its MTU moving is the overlay family's to judge, not a link's "mtu-changed".
  NetState b, a;
  b.mtu[leaf->name + ":" + vx] = 1500;
  a.mtu[leaf->name + ":" + vx] = 9000;
  auto diff = twin::replay::diff_states(b, a, plan, plan);
  ASSERT_EQ(of(diff, "mtu-changed").size(), 1u);
  EXPECT_TRUE(of(diff, "mtu-changed")[0]->intended);
  // Addresses do not go on them.
  twin::Diagnostics bad;
  EXPECT_FALSE(twin::replay::load_change_set_text(
      "version: 1\nname: m\nsteps:\n  - name: s\n    interface:\n      interface: " + leaf->name +
          ":" + br + "\n      add-addresses: [10.9.9.1/24]\n",
      "t.yaml", "/tmp", plan, bad));
  EXPECT_THAT(bad.format(), HasSubstr("addresses on a VTEP's VXLAN device or bridge"));
}

}  // namespace

// ---- 4. OSPF authentication and router-ids, read from the running configs

namespace ospf4 {

using twin::topology::ospf_auth_mismatch;
using twin::topology::ospf_auth_type;
using twin::topology::parse_frr_conf;

TEST(OspfAuth, TypesAndKeysFromTheConfigNeverQuotingAKey) {
  auto md5 = parse_frr_conf(
      "interface eth1\n ip ospf authentication message-digest\n"
      " ip ospf message-digest-key 1 md5 s3cret\nexit\n",
      "r5");
  auto none = parse_frr_conf("interface eth2\n ip ospf area 0\nexit\n", "r6");
  auto area = parse_frr_conf(
      "interface eth2\n ip ospf message-digest-key 1 md5 s3cret\nexit\n"
      "router ospf\n area 0 authentication message-digest\nexit\n",
      "r6");
  auto other_key = parse_frr_conf(
      "interface eth2\n ip ospf authentication message-digest\n"
      " ip ospf message-digest-key 1 md5 other\nexit\n",
      "r6");
  EXPECT_EQ(ospf_auth_type(md5, "eth1", "0.0.0.0"), "message-digest");
  EXPECT_EQ(ospf_auth_type(none, "eth2", "0.0.0.0"), "none");
  EXPECT_EQ(ospf_auth_type(area, "eth2", "0"), "message-digest");  // the area's
  EXPECT_EQ(ospf_auth_mismatch(md5, "eth1", none, "eth2", "0.0.0.0", "r6:eth2"),
            "authentication message-digest here, none on r6:eth2");
  EXPECT_EQ(ospf_auth_mismatch(md5, "eth1", area, "eth2", "0.0.0.0", "r6:eth2"), "");
  const auto keys = ospf_auth_mismatch(md5, "eth1", other_key, "eth2", "0.0.0.0", "r6:eth2");
  EXPECT_EQ(keys, "message-digest key 1 differs here and on r6:eth2");
  EXPECT_EQ(keys.find("s3cret"), std::string::npos);
  EXPECT_EQ(keys.find("other"), std::string::npos);
  auto simple = parse_frr_conf(
      "interface eth1\n ip ospf authentication\n"
      " ip ospf authentication-key abc\nexit\n",
      "r1");
  auto simple2 = parse_frr_conf(
      "interface eth1\n ip ospf authentication\n"
      " ip ospf authentication-key abd\nexit\n",
      "r2");
  EXPECT_EQ(ospf_auth_mismatch(simple, "eth1", simple2, "eth1", "0.0.0.0", "r2:eth1"),
            "authentication keys differ (simple password) here and on r2:eth1");
}

TEST(OspfAuth, TheLikelyCauseNamesBothEnds) {
  const auto& plan = ospf6();
  twin::replay::CauseFacts facts;
  facts.nodes["r5"].config =
      "interface eth1\n ip ospf authentication message-digest\n"
      " ip ospf message-digest-key 1 md5 s3cret\nexit\n";
  facts.nodes["r6"].config = "interface eth2\n ip ospf area 0\nexit\n";
  auto causes = twin::replay::likely_causes(plan, facts);
  const twin::replay::Cause* auth = nullptr;
  for (const auto& c : causes)
    if (c.rule == "ospf-auth") auth = &c;
  ASSERT_NE(auth, nullptr);
  EXPECT_THAT(auth->text, HasSubstr("OSPF authentication of r5:eth1 and r6:eth2 does not match"));
  EXPECT_THAT(auth->evidence[0], HasSubstr("r5:eth1: authentication message-digest"));
  for (const auto& e : auth->evidence) EXPECT_EQ(e.find("s3cret"), std::string::npos);
}

// The OSPF family over ospf-6 with every router's JSON as FRR 8.4 printed it, the running
// configs as given.
std::map<std::string, twin::validators::OspfObservation> observed(
    const std::map<std::string, std::string>& configs) {
  std::map<std::string, twin::validators::OspfObservation> out;
  for (const auto& n : ospf6().nodes) {
    if (n.kind != twin::topology::NodeKind::kFrr) continue;
    auto& o = out[n.name];
    json ifs = json::object();
    for (const auto& oi : n.ospf_interfaces)
      ifs[oi.name] = {{"area", "0.0.0.0"},   {"networkType", "POINTOPOINT"},
                      {"timerMsecs", 10000}, {"timerDeadSecs", 40},
                      {"mtuBytes", 1500},    {"timerPassiveIface", oi.passive}};
    o.interfaces = twin::ok(json{{"interfaces", ifs}});
    json nbrs = json::object();
    for (const auto& a : ospf6().adjacencies)
      if (a.node == n.name)
        nbrs[a.peer_node + "-id"] =
            json::array({{{"nbrState", "Full/-"}, {"ifaceName", a.interface + ":10.6.0.1"}}});
    o.neighbors = twin::ok(json{{"neighbors", nbrs}});
    o.instance = twin::ok(json{{"routerId", n.ospf_router_id}});
    o.routes = twin::ok(json::object());
    auto c = configs.find(n.name);
    o.config = c == configs.end() ? twin::ok(std::string("hostname " + n.name + "\n"))
                                  : twin::ok(c->second);
  }
  return out;
}

TEST(OspfFamily, AnAuthMismatchFailsAtOnceAndCannotConverge) {
  auto obs = observed({{"r5",
                        "interface eth1\n ip ospf authentication message-digest\n"
                        " ip ospf message-digest-key 1 md5 s3cret\nexit\n"}});
  auto rs = twin::validators::evaluate_ospf(ospf6(), obs);
  const twin::validate::TestResult* agree = nullptr;
  for (const auto& r : rs)
    if (r.test == 1 && r.node == "r5" && r.peer == "eth1") agree = &r;
  ASSERT_NE(agree, nullptr);
  EXPECT_EQ(agree->status, twin::validate::Status::kFailed);
  EXPECT_THAT(agree->message, HasSubstr("authentication message-digest here, none on r6:eth2"));
  EXPECT_FALSE(agree->cannot_converge.empty());
}

TEST(OspfFamily, ARouterIdWaitingForARestartIsANoteOrALatentDuplicate) {
  // r3 configured with a new, unique id it does not run yet: a note, no failure.
  auto fresh = observed({{"r3", "router ospf\n ospf router-id 10.6.255.33\nexit\n"}});
  const auto fresh_results = twin::validators::evaluate_ospf(ospf6(), fresh);
  int router_ids = 0;
  for (const auto& r : fresh_results) {
    if (r.test != 2) continue;
    ++router_ids;
    EXPECT_EQ(r.status, twin::validate::Status::kPassed) << r.node << r.message;
  }
  EXPECT_EQ(router_ids, 6);
  auto notes = twin::validators::ospf_notes(ospf6(), fresh);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0].node, "r3");
  EXPECT_THAT(notes[0].text, HasSubstr("runs OSPF router-id 10.6.255.3 but its config says "
                                       "10.6.255.33"));
  // r3 configured with r2's id: a duplicate once r3 restarts, failed now.
  auto dup = observed({{"r3", "router ospf\n ospf router-id 10.6.255.2\nexit\n"}});
  const auto results = twin::validators::evaluate_ospf(ospf6(), dup);
  const twin::validate::TestResult* r3 = nullptr;
  for (const auto& r : results)
    if (r.test == 2 && r.node == "r3") r3 = &r;
  ASSERT_NE(r3, nullptr);
  EXPECT_EQ(r3->status, twin::validate::Status::kFailed);
  EXPECT_THAT(r3->message, HasSubstr("OSPF router-id 10.6.255.2 is shared with r2 once ospfd "
                                     "restarts on r3 (runs 10.6.255.3)"));
  EXPECT_FALSE(r3->cannot_converge.empty());
}

}  // namespace ospf4

// ---- 5. A reject that cannot converge does not wait out the dead interval

TEST(EarlyReject, AMismatchBothEndsConfiguredIsRejectedWithoutTheDeadInterval) {
  for (bool explained : {true, false}) {
    SCOPED_TRACE(explained);
    twin_test::FakeNetwork net;
    net.good = twin_test::load_observations(std::string(TWIN_TEST_DATA) +
                                            "/gate/withdraw-loopback/baseline.observe.jsonl");
    net.bad = net.good;
    net.good_report = twin_test::load_report(std::string(TWIN_TEST_DATA) +
                                             "/gate/withdraw-loopback/baseline.results.json");
    net.bad_report = net.good_report;
    auto bad = twin::validate::make_result(
        "ospf", 1, "interfaces-agree", twin::validate::Status::kFailed, "leaf1", "swp1", "agree",
        "hello 5000 ms here, 10000 ms on spine1:swp1", "ends disagree");
    if (explained) bad.cannot_converge = "OSPF ends disagree: hello";
    net.bad_report.results.push_back(bad);
    twin_test::FakeDriver driver{net};
    twin_test::FakeRunner runner;
    twin_test::FakeTime time;
    twin_test::FakeLab lab;
    lab.net = &net;
    twin::state::State st;
    st.lab = "rec";
    st.plan = twin_test::recorded_clos_plan();
    // leaf1 runs OSPF with spine1 on FRR's default dead interval, from their own configs: a
    // 40 s settle floor.
    for (const char* n : {"leaf1", "spine1"}) {
      auto* node = st.plan.find(n);
      node->config_generated = false;
      node->ospf_interfaces.push_back({"swp1", "0.0.0.0", false, 2, 0, 40});
    }
    twin::plan::derive_expectations(st.plan);
    ASSERT_FALSE(st.plan.adjacencies.empty());
    twin::replay::ApplyOptions opts;
    opts.parallel = 2;
    twin::replay::GateEnv env{
        runner,
        [&](const twin::plan::Node&) -> const twin::drivers::NodeDriver& { return driver; },
        time,
        lab,
        twin_test::recorded_validators(net),
        {}};
    twin::replay::ChangeSet cs;
    cs.name = "hello";
    twin::replay::Step s;
    s.name = "hello 5 s on leaf1";
    s.body = twin::replay::FrrStep{};
    s.frr().nodes = {"leaf1"};
    s.frr().add = "interface swp1\n ip ospf hello-interval 5\nexit\n";
    cs.steps.push_back(s);
    auto r = twin::replay::run_gate(st, cs, opts, env);
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->verdict.decision, Decision::kReject);
    if (explained) {
      EXPECT_EQ(r->early_reject, "OSPF ends disagree: hello");
      EXPECT_LT(r->verdict_ms, 6000.0);  // the early look's 3 s window, not the 40 s floor
    } else {
      EXPECT_TRUE(r->early_reject.empty());
      EXPECT_GE(r->verdict_ms, 40000.0);
    }
    EXPECT_GT(r->duration_ms, r->verdict_ms);  // the rollback comes after the verdict
  }
}
