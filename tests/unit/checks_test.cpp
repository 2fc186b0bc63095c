// Unit tests for declared checks (topology `checks:`, topology/declared_checks.hpp) and the
// `checks` validator family (validators/checks/): loading and every bad input with its place,
// the companion file of a containerlab file, the plan's JSON, the JSON subset matcher, and the
// evaluation over FRR 8.4 JSON recorded from topologies/ospf-triangle (tests/data/frr84/ospf/).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unistd.h>

#include "fakes.hpp"
#include "twin/plan/plan.hpp"
#include "twin/topology/declared_checks.hpp"
#include "twin/topology/loader.hpp"
#include "twin/validate/runner.hpp"
#include "validators/checks/checks.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::HasSubstr;
using twin::Diagnostics;
using twin::topology::Check;
using twin::topology::CheckKind;
using twin::validate::Status;
using twin::validators::json_subset_mismatch;

const fs::path kTriangle =
    fs::path(TWIN_TEST_DATA).parent_path().parent_path() / "topologies" / "ospf-triangle";
const std::string kData = std::string(TWIN_TEST_DATA) + "/frr84/ospf/";

std::string read_text(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}
json read_json(const std::string& path) { return json::parse(read_text(path)); }

// The OSPF triangle lab with `checks` appended; its first line is line base_lines() + 1.
const std::string& triangle() {
  static const std::string t = read_text(kTriangle / "lab.yaml");
  return t;
}
int base_lines() { return static_cast<int>(std::count(triangle().begin(), triangle().end(), '\n')); }

struct Loaded {
  std::optional<twin::topology::Topology> topo;
  Diagnostics diags;
};
Loaded load(const std::string& checks) {
  Loaded l;
  l.topo = twin::topology::load_topology_text(triangle() + checks, "t.yaml", kTriangle.string(),
                                              l.diags);
  return l;
}

// The one problem of `checks`: at line (relative to the checks text, 1-based), column, field.
twin::Diagnostic only_problem(const std::string& checks) {
  auto l = load(checks);
  EXPECT_FALSE(l.topo.has_value());
  EXPECT_EQ(l.diags.items().size(), 1u) << l.diags.format();
  if (l.diags.items().empty()) return {};
  auto d = l.diags.items().front();
  d.line -= base_lines();
  return d;
}

const std::string kGood = R"(checks:
  - reach: {from: pc1, to: pc3}
  - name: no way out
    reach: {from: pc1, to: 10.9.0.1, expect: unreachable}
    wait: 2
  - route: {node: r1, prefix: 192.168.3.0/24, nexthops: 1, protocol: ospf}
  - frr:
      node: r1
      command: show ip ospf neighbor json
      match:
        neighbors:
          10.0.255.2: [{nbrState: Full/-}]
)";

// ---- loading --------------------------------------------------------------------------------

TEST(ChecksLoad, ReadsEveryKind) {
  auto l = load(kGood);
  ASSERT_TRUE(l.topo) << l.diags.format();
  const auto& c = l.topo->checks;
  ASSERT_EQ(c.size(), 4u);
  EXPECT_EQ(c[0].kind, CheckKind::kReach);
  EXPECT_EQ(c[0].name, "reach pc1->pc3");
  EXPECT_EQ(c[0].wait_s, 10);
  EXPECT_TRUE(c[0].reachable);
  EXPECT_EQ(c[1].name, "no way out");
  EXPECT_EQ(c[1].to, "10.9.0.1");
  EXPECT_FALSE(c[1].reachable);
  EXPECT_EQ(c[1].wait_s, 2);
  EXPECT_EQ(c[2].kind, CheckKind::kRoute);
  EXPECT_EQ(c[2].name, "route r1 192.168.3.0/24");
  EXPECT_EQ(c[2].nexthops, 1);
  EXPECT_EQ(c[2].protocol, "ospf");
  EXPECT_EQ(c[3].kind, CheckKind::kFrr);
  EXPECT_EQ(c[3].daemon, "ospfd");
  EXPECT_EQ(json::parse(c[3].match),
            json::parse(R"({"neighbors": {"10.0.255.2": [{"nbrState": "Full/-"}]}})"));
  EXPECT_EQ(c[3].mark.line, base_lines() + 7);
}

TEST(ChecksLoad, MatchScalarsAreTypedAsJson) {
  auto l = load(R"(checks:
  - frr: {node: r1, command: show ip ospf json, match: {a: 1, b: true, c: "1", d: 0.0.0.0, e: 2.5, f: ~}}
)");
  ASSERT_TRUE(l.topo) << l.diags.format();
  EXPECT_EQ(json::parse(l.topo->checks[0].match),
            json::parse(R"({"a": 1, "b": true, "c": "1", "d": "0.0.0.0", "e": 2.5, "f": null})"));
}

TEST(ChecksLoad, DaemonForShowCommands) {
  using twin::topology::daemon_for_show;
  EXPECT_EQ(daemon_for_show("show ip ospf neighbor json"), "ospfd");
  EXPECT_EQ(daemon_for_show("show  bgp summary json"), "bgpd");
  EXPECT_EQ(daemon_for_show("show ip route json"), "zebra");
  EXPECT_EQ(daemon_for_show("show ipv6 ospf6 neighbor json"), "ospf6d");
  EXPECT_EQ(daemon_for_show("show bfd peers json"), "bfdd");
  EXPECT_EQ(daemon_for_show("show ospfx json"), "");
  EXPECT_EQ(daemon_for_show("show version json"), "");
}

struct Bad {
  const char* what;
  std::string checks;
  int line, column;
  std::string field, message;
};

TEST(ChecksLoad, EveryBadInputHasItsPlace) {
  const std::vector<Bad> cases = {
      {"unknown node", "checks:\n  - reach: {from: pc9, to: pc3}\n", 2, 19, "checks[0].reach.from",
       "unknown node 'pc9'"},
      {"unknown field", "checks:\n  - route: {node: r1, prefix: 10.0.12.0/30, nexthop: 2}\n", 2,
       45, "checks[0].route.nexthop", "unknown field 'nexthop'"},
      {"unknown check field", "checks:\n  - reach: {from: pc1, to: pc3}\n    wiat: 3\n", 3, 5,
       "checks[0].wiat", "unknown field 'wiat'"},
      {"bad prefix", "checks:\n  - route: {node: r1, prefix: 192.168.3/24}\n", 2, 31,
       "checks[0].route.prefix", "'192.168.3/24' is not a prefix"},
      {"host bits", "checks:\n  - route: {node: r1, prefix: 192.168.3.1/24}\n", 2, 31,
       "checks[0].route.prefix", "'192.168.3.1/24' has host bits set"},
      {"not json", "checks:\n  - frr: {node: r1, command: show ip ospf neighbor, match: {a: 1}}\n",
       2, 30, "checks[0].frr.command", "only `show ... json` commands are allowed"},
      {"not show", "checks:\n  - frr: {node: r1, command: clear ip ospf process json, match: {a: 1}}\n",
       2, 30, "checks[0].frr.command", "only `show ... json` commands are allowed"},
      {"unknown daemon", "checks:\n  - frr: {node: r1, command: show version json, match: {a: 1}}\n",
       2, 30, "checks[0].frr.command", "cannot tell which FRR daemon answers"},
      {"host for route", "checks:\n  - route: {node: pc1, prefix: 10.0.12.0/30}\n", 2, 19,
       "checks[0].route.node", "node 'pc1' is a host"},
      {"to neither", "checks:\n  - reach: {from: pc1, to: pc33}\n", 2, 28, "checks[0].reach.to",
       "'pc33' is neither a node of the lab nor an address"},
      {"to with length", "checks:\n  - reach: {from: pc1, to: 10.0.0.1/32}\n", 2, 28,
       "checks[0].reach.to", "'10.0.0.1/32' has a prefix length"},
      {"expect", "checks:\n  - reach: {from: pc1, to: pc3, expect: never}\n", 2, 41,
       "checks[0].reach.expect", "unknown value 'never'"},
      {"wait", "checks:\n  - reach: {from: pc1, to: pc3}\n    wait: 9999\n", 3, 11, "checks[0].wait",
       "expected 0-600 seconds"},
      {"no kind", "checks:\n  - name: x\n", 2, 5, "checks[0]", "missing the check"},
      {"two kinds", "checks:\n  - reach: {from: pc1, to: pc3}\n    route: {node: r1, prefix: 10.0.12.0/30}\n",
       3, 5, "checks[0].route", "a check has one kind"},
      {"missing field", "checks:\n  - route: {node: r1}\n", 2, 12, "checks[0].route.prefix",
       "missing"},
      {"match scalar", "checks:\n  - frr: {node: r1, command: show ip ospf json, match: 3}\n", 2, 56,
       "checks[0].frr.match", "expected a mapping"},
      {"duplicate name",
       "checks:\n  - reach: {from: pc1, to: pc3}\n  - reach: {from: pc1, to: pc3}\n", 3, 5,
       "checks[1].name", "a check named 'reach pc1->pc3' is already given at line"},
      {"not a list", "checks: {reach: {from: pc1, to: pc3}}\n", 1, 9, "checks",
       "expected a list of checks"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    auto d = only_problem(c.checks);
    EXPECT_EQ(d.file, "t.yaml");
    EXPECT_EQ(d.line, c.line) << d.message;
    EXPECT_EQ(d.column, c.column) << d.message;
    EXPECT_EQ(d.field, c.field) << d.message;
    EXPECT_THAT(d.message, HasSubstr(c.message));
  }
}

// ---- the companion file of a containerlab file -------------------------------------------------

class ChecksCompanion : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("twin-checks-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    fs::copy(kTriangle / "configs", dir_ / "configs", fs::copy_options::recursive);
    fs::copy_file(kTriangle / "ospf-triangle.clab.yml", dir_ / "tri.clab.yml");
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(ChecksCompanion, PathBesideTheClabFile) {
  EXPECT_EQ(twin::topology::companion_checks_path("a/lab.clab.yml"), "a/lab.checks.yaml");
  EXPECT_EQ(twin::topology::companion_checks_path("lab.clab.yaml"), "lab.checks.yaml");
  EXPECT_EQ(twin::topology::companion_checks_path("x/fabric.yml"), "x/fabric.checks.yaml");
}

TEST_F(ChecksCompanion, IsReadWithTheClabFile) {
  Diagnostics d;
  auto t = twin::topology::load_topology((dir_ / "tri.clab.yml").string(), d);
  ASSERT_TRUE(t) << d.format();
  EXPECT_TRUE(t->checks.empty());  // no companion: no checks
  std::ofstream(dir_ / "tri.checks.yaml") << kGood;
  Diagnostics d2;
  t = twin::topology::load_topology((dir_ / "tri.clab.yml").string(), d2);
  ASSERT_TRUE(t) << d2.format();
  EXPECT_EQ(t->checks.size(), 4u);
  EXPECT_EQ(twin::plan::make_plan(*t).checks.size(), 4u);
}

TEST_F(ChecksCompanion, ProblemsNameTheCompanion) {
  std::ofstream(dir_ / "tri.checks.yaml") << "checks:\n  - reach: {from: pc1, to: pc4}\nextra: 1\n";
  Diagnostics d;
  auto t = twin::topology::load_topology((dir_ / "tri.clab.yml").string(), d);
  EXPECT_FALSE(t);
  ASSERT_EQ(d.items().size(), 2u) << d.format();
  EXPECT_EQ(d.items()[0].field, "extra");
  EXPECT_THAT(d.items()[1].file, HasSubstr("tri.checks.yaml"));
  EXPECT_EQ(d.items()[1].line, 2);
  EXPECT_EQ(d.items()[1].column, 28);
  EXPECT_EQ(d.items()[1].message, "'pc4' is neither a node of the lab nor an address");
}

// ---- the plan ---------------------------------------------------------------------------------

TEST(ChecksPlan, RoundTripAndOmittedWhenEmpty) {
  auto l = load(kGood);
  ASSERT_TRUE(l.topo) << l.diags.format();
  auto p = twin::plan::make_plan(*l.topo);
  json j = twin::plan::to_json(p);
  ASSERT_TRUE(j.contains("checks"));
  EXPECT_EQ(j["checks"][3]["match"]["neighbors"]["10.0.255.2"][0]["nbrState"], "Full/-");
  auto back = twin::plan::plan_from_json(j);
  ASSERT_EQ(back.checks.size(), 4u);
  EXPECT_EQ(twin::plan::to_json(back), j);
  EXPECT_EQ(back.checks[1].name, "no way out");
  EXPECT_FALSE(back.checks[1].reachable);
  EXPECT_EQ(back.checks[1].wait_s, 2);

  auto plain = load("");
  ASSERT_TRUE(plain.topo);
  EXPECT_FALSE(twin::plan::to_json(twin::plan::make_plan(*plain.topo)).contains("checks"));
}

// ---- the JSON subset matcher --------------------------------------------------------------------

TEST(JsonSubset, ObjectsArraysScalars) {
  json got = json::parse(R"({"a": 1, "b": {"c": "x", "d": [1, 2, {"e": true}]}, "f": 2.0})");
  EXPECT_FALSE(json_subset_mismatch(json::object(), got));
  EXPECT_FALSE(json_subset_mismatch(json::parse(R"({"a": 1})"), got));
  EXPECT_FALSE(json_subset_mismatch(json::parse(R"({"b": {"d": [{"e": true}, 2]}})"), got));
  EXPECT_FALSE(json_subset_mismatch(json::parse(R"({"f": 2})"), got));  // numbers by value
  EXPECT_EQ(*json_subset_mismatch(json::parse(R"({"a": 2})"), got), "a: expected 2, got 1");
  EXPECT_EQ(*json_subset_mismatch(json::parse(R"({"b": {"c": "y"}})"), got),
            R"(b.c: expected "y", got "x")");
  EXPECT_EQ(*json_subset_mismatch(json::parse(R"({"a": "1"})"), got),
            R"(a: expected "1", got 1 (a number))");
  EXPECT_EQ(*json_subset_mismatch(json::parse(R"({"b": {"z": 1}})"), got),
            "b.z: missing (keys here: c, d)");
  EXPECT_EQ(*json_subset_mismatch(json::parse(R"({"b": {"d": [{"e": false}]}})"), got),
            "b.d[2].e: expected false, got true");
  EXPECT_EQ(*json_subset_mismatch(json::parse(R"({"b": {"d": [3]}})"), got),
            "b.d[0]: expected 3, got 1");
  EXPECT_EQ(*json_subset_mismatch(json::parse(R"({"b": {"c": {}}})"), got),
            R"(b.c: expected an object, got "x")");
  EXPECT_EQ(*json_subset_mismatch(json::parse(R"({"a": [1]})"), got), "a: expected a list, got 1");
  EXPECT_EQ(*json_subset_mismatch(json::parse(R"({"x": [1]})"), json::parse(R"({"x": []})")),
            "x: expected an element matching 1, got []");
}

TEST(JsonSubset, NamesTheOspfNeighborThatIsNotFull) {
  json match = json::parse(R"({"neighbors": {"10.0.255.2": [{"nbrState": "Full/-"}]}})");
  EXPECT_FALSE(json_subset_mismatch(match, read_json(kData + "healthy/r1-ospf-neighbor.json")));
  EXPECT_EQ(*json_subset_mismatch(match, read_json(kData + "mtu-mismatch/r1-ospf-neighbor.json")),
            R"(neighbors.10.0.255.2[0].nbrState: expected "Full/-", got "Exchange/-")");
  EXPECT_EQ(*json_subset_mismatch(match, read_json(kData + "area-mismatch/r1-ospf-neighbor.json")),
            "neighbors.10.0.255.2: missing (keys here: 10.0.255.3)");
}

// ---- evaluation over recorded FRR JSON -----------------------------------------------------------

Check check_of(const std::string& yaml_checks, size_t i = 0) {
  auto l = load(yaml_checks);
  if (!l.topo) throw std::runtime_error(l.diags.format());
  return l.topo->checks.at(i);
}

TEST(ChecksEvaluate, FrrOnRecordedOspf) {
  Check c = check_of(kGood, 3);
  auto pass = twin::validators::evaluate_frr(c, twin::ok(read_json(kData + "healthy/r1-ospf-neighbor.json")));
  EXPECT_EQ(pass.status, Status::kPassed) << pass.message;
  EXPECT_EQ(pass.validator, "checks");
  EXPECT_EQ(pass.test, 2);
  EXPECT_EQ(pass.test_name, "frr");
  EXPECT_EQ(pass.node, "r1");
  EXPECT_EQ(pass.peer, "frr r1 show ip ospf neighbor json");
  auto fail = twin::validators::evaluate_frr(
      c, twin::ok(read_json(kData + "mtu-mismatch/r1-ospf-neighbor.json")));
  EXPECT_EQ(fail.status, Status::kFailed);
  EXPECT_THAT(fail.message,
              HasSubstr(R"(neighbors.10.0.255.2[0].nbrState: expected "Full/-", got "Exchange/-")"));
  EXPECT_EQ(twin::validators::evaluate_frr(c, twin::ok(json::object())).status, Status::kError);
  twin::Result<json> broken{boost::system::in_place_error, twin::harness_error("no vty")};
  EXPECT_EQ(twin::validators::evaluate_frr(c, broken).status, Status::kError);
}

// {} is FRR's "nothing to show": no data even for a `match: {}` that any object contains, and
// an unreadable source is an error naming the node and the command.
TEST(ChecksEvaluate, AnEmptyAnswerIsNoDataWhateverTheMatch) {
  Check anything =
      check_of("checks:\n  - frr: {node: r1, command: show ip ospf json, match: {}}\n");
  auto empty = twin::validators::evaluate_frr(anything, twin::ok(json::object()));
  EXPECT_EQ(empty.status, Status::kError);
  EXPECT_EQ(empty.message, "ospfd on r1 returned no data for `show ip ospf json`");
  EXPECT_EQ(twin::validators::evaluate_frr(anything, twin::ok(json())).status, Status::kError);
  EXPECT_EQ(
      twin::validators::evaluate_frr(anything, twin::ok(read_json(kData + "healthy/r1-ospf.json")))
          .status,
      Status::kPassed);
  twin::Result<json> down{boost::system::in_place_error, twin::harness_error("ospfd.vty: refused")};
  EXPECT_EQ(twin::validators::evaluate_frr(anything, down).message,
            "r1: `show ip ospf json` failed: ospfd.vty: refused");
  Check route = check_of("checks:\n  - route: {node: r1, prefix: 192.168.3.0/24}\n");
  auto unread = twin::validators::evaluate_route(route, down);
  EXPECT_EQ(unread.status, Status::kError);
  EXPECT_EQ(unread.message,
            "cannot read the routing table: r1: `show ip route json` failed: ospfd.vty: refused");
  auto none = twin::validators::evaluate_route(route, twin::ok(json::object()));
  EXPECT_EQ(none.status, Status::kError);
  EXPECT_EQ(none.message, "zebra on r1 returned no routing table for `show ip route json`");
}

TEST(ChecksEvaluate, RouteOnRecordedTable) {
  auto table = twin::ok(read_json(kData + "healthy/r1-ip-route.json"));
  auto r = [&](const std::string& route) {
    return twin::validators::evaluate_route(check_of("checks:\n  - route: " + route + "\n"), table);
  };
  auto ok = r("{node: r1, prefix: 192.168.3.0/24, nexthops: 1, protocol: ospf}");
  EXPECT_EQ(ok.status, Status::kPassed) << ok.message;
  EXPECT_EQ(ok.test, 1);
  EXPECT_THAT(ok.observed, HasSubstr("1 next hop (10.0.13.2 eth2)"));
  auto ecmp = r("{node: r1, prefix: 192.168.3.0/24, nexthops: 2}");
  EXPECT_EQ(ecmp.status, Status::kFailed);
  EXPECT_EQ(ecmp.message, "192.168.3.0/24 on r1 has 1 next hop, expected 2");
  auto proto = r("{node: r1, prefix: 192.168.3.0/24, protocol: bgp}");
  EXPECT_EQ(proto.status, Status::kFailed);
  EXPECT_EQ(proto.message, "192.168.3.0/24 on r1 is from ospf, not bgp");
  auto absent = r("{node: r1, prefix: 10.9.0.0/24}");
  EXPECT_EQ(absent.status, Status::kFailed);
  EXPECT_EQ(absent.message, "10.9.0.0/24 is not in r1's routing table");
  EXPECT_EQ(r("{node: r1, prefix: 192.168.1.0/24, protocol: connected}").status, Status::kPassed);
}

TEST(ChecksEvaluate, ReachAndIsolation) {
  auto l = load(kGood);
  ASSERT_TRUE(l.topo);
  auto plan = twin::plan::make_plan(*l.topo);
  const Check& reach = plan.checks[0];
  auto reqs = twin::validators::reach_requests(plan, reach);
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(reqs[0].destination, "192.168.3.10");
  EXPECT_EQ(reqs[0].source, "");  // a host pings from its own address
  using twin::validate::PingOutcome;
  using twin::validate::PingResult;
  auto pass = twin::validators::evaluate_reach(reach, reqs, {PingResult{PingOutcome::kReply, 1, 0, ""}});
  EXPECT_EQ(pass.status, Status::kPassed);
  EXPECT_EQ(pass.test, 0);
  auto fail = twin::validators::evaluate_reach(reach, reqs, {PingResult{PingOutcome::kTimeout, -1, 0, ""}});
  EXPECT_EQ(fail.status, Status::kFailed);
  EXPECT_EQ(fail.message, "pc1 cannot reach pc3: no reply from 192.168.3.10 (timeout)");
  auto err = twin::validators::evaluate_reach(reach, reqs, {PingResult{PingOutcome::kError, -1, 0, "EPERM"}});
  EXPECT_EQ(err.status, Status::kError);

  const Check& iso = plan.checks[1];
  auto ireqs = twin::validators::reach_requests(plan, iso);
  ASSERT_EQ(ireqs.size(), 1u);
  EXPECT_EQ(ireqs[0].destination, "10.9.0.1");
  EXPECT_EQ(twin::validators::evaluate_reach(iso, ireqs, {PingResult{PingOutcome::kNoRoute, -1, 0, ""}}).status,
            Status::kPassed);
  auto leak = twin::validators::evaluate_reach(iso, ireqs, {PingResult{PingOutcome::kReply, 1, 0, ""}});
  EXPECT_EQ(leak.status, Status::kFailed);
  EXPECT_EQ(leak.peer, "no way out");

  // A router pings another router's loopback from its own.
  Check rr = check_of("checks:\n  - reach: {from: r1, to: r3}\n");
  auto rreqs = twin::validators::reach_requests(plan, rr);
  ASSERT_EQ(rreqs.size(), 1u);
  EXPECT_EQ(rreqs[0].destination, "10.0.255.3");
  EXPECT_EQ(rreqs[0].source, "10.0.255.1");
}

// ---- the family in the runner ------------------------------------------------------------------

// Answers every probe from recorded data; pings time out.
class RecordedProbe final : public twin::validate::LabProbe {
 public:
  std::string neighbor_case = "healthy";
  int frr_calls = 0;
  twin::Result<json> frr_json(const twin::plan::Node& node, const std::string& daemon,
                              const std::string& command) override {
    ++frr_calls;
    if (daemon == "zebra") return twin::ok(read_json(kData + "healthy/" + node.name + "-ip-route.json"));
    if (command == "show ip ospf neighbor json")
      return twin::ok(read_json(kData + neighbor_case + "/" + node.name + "-ospf-neighbor.json"));
    return twin::ok(json::object());
  }
  twin::Result<json> ip_json(const twin::plan::Node&, const std::vector<std::string>&) override {
    return twin::ok(json::array());
  }
  std::vector<twin::validate::PingResult> ping(
      const twin::plan::Node&, const std::vector<twin::validate::PingRequest>& reqs) override {
    return std::vector<twin::validate::PingResult>(
        reqs.size(), twin::validate::PingResult{twin::validate::PingOutcome::kTimeout, -1, 0, ""});
  }
};

twin::validate::Report run_checks(const twin::plan::Plan& plan, RecordedProbe& probe,
                                  twin_test::FakeTime& time) {
  twin::validate::Context ctx{plan, probe};
  std::vector<std::unique_ptr<twin::validate::Validator>> v;
  v.push_back(std::make_unique<twin::validators::ChecksValidator>());
  twin::validate::RunOptions opts;
  opts.converge_timeout = std::chrono::seconds(30);
  opts.time = &time;
  return twin::validate::run_validation(ctx, v, opts);
}

TEST(ChecksFamily, NoChecksNoResults) {
  auto l = load("");
  ASSERT_TRUE(l.topo);
  auto plan = twin::plan::make_plan(*l.topo);
  RecordedProbe probe;
  twin_test::FakeTime time;
  auto report = run_checks(plan, probe, time);
  EXPECT_TRUE(report.results.empty());
  EXPECT_EQ(time.slept().count(), 0);
}

TEST(ChecksFamily, AFailingCheckIsRetriedForItsWait) {
  auto l = load(R"(checks:
  - frr: {node: r1, command: show ip ospf neighbor json, match: {neighbors: {10.0.255.2: [{nbrState: Full/-}]}}}
    wait: 3
  - name: isolated
    reach: {from: pc1, to: 10.9.0.1, expect: unreachable}
)");
  ASSERT_TRUE(l.topo) << l.diags.format();
  auto plan = twin::plan::make_plan(*l.topo);
  RecordedProbe probe;
  probe.neighbor_case = "mtu-mismatch";
  twin_test::FakeTime time;
  auto report = run_checks(plan, probe, time);
  ASSERT_EQ(report.results.size(), 2u);
  EXPECT_EQ(report.results[0].status, Status::kFailed);
  EXPECT_EQ(report.results[1].status, Status::kPassed);
  // Retried for its 3 s wait (not the run's 30 s), then final.
  EXPECT_GE(time.slept(), std::chrono::seconds(3));
  EXPECT_LT(time.slept(), std::chrono::seconds(4));
  EXPECT_GT(report.results[0].attempts, 1);

  probe.neighbor_case = "healthy";
  twin_test::FakeTime time2;
  auto good = run_checks(plan, probe, time2);
  EXPECT_EQ(good.results[0].status, Status::kPassed);
  EXPECT_EQ(time2.slept().count(), 0);
}

// ---- each check on its own clock, and `after:` ---------------------------------------------

// OSPF neighbors as FRR 8.4 showed them (tests/data/frr84/ospf/): a node's adjacency is
// mtu-mismatch until `healthy_from[node]` and healthy after (and, with `broken_from`, broken
// again from then), on the fake clock.
class TimedProbe final : public twin::validate::LabProbe {
 public:
  explicit TimedProbe(twin_test::FakeTime& time) : time_(time) {}
  std::map<std::string, std::chrono::milliseconds> healthy_from, broken_from;
  std::map<std::string, int> calls;  // per node
  twin::Result<json> frr_json(const twin::plan::Node& node, const std::string&,
                              const std::string& command) override {
    ++calls[node.name];
    auto now =
        std::chrono::duration_cast<std::chrono::milliseconds>(time_.now().time_since_epoch());
    bool healthy = healthy_from.count(node.name) && now >= healthy_from[node.name] &&
                   !(broken_from.count(node.name) && now >= broken_from[node.name]);
    EXPECT_EQ(command, "show ip ospf neighbor json");
    return twin::ok(read_json(kData + (healthy ? "healthy/" : "mtu-mismatch/") + node.name +
                              "-ospf-neighbor.json"));
  }
  twin::Result<json> ip_json(const twin::plan::Node&, const std::vector<std::string>&) override {
    return twin::ok(json::array());
  }
  std::vector<twin::validate::PingResult> ping(
      const twin::plan::Node&, const std::vector<twin::validate::PingRequest>& reqs) override {
    return std::vector<twin::validate::PingResult>(
        reqs.size(), twin::validate::PingResult{twin::validate::PingOutcome::kTimeout, -1, 0, ""});
  }

 private:
  twin_test::FakeTime& time_;
};

twin::validate::Report run_timed(const std::string& checks, TimedProbe& probe,
                                 twin_test::FakeTime& time) {
  auto l = load(checks);
  EXPECT_TRUE(l.topo) << l.diags.format();
  if (!l.topo) return {};
  auto plan = twin::plan::make_plan(*l.topo);
  twin::validate::Context ctx{plan, probe};
  std::vector<std::unique_ptr<twin::validate::Validator>> v;
  v.push_back(std::make_unique<twin::validators::ChecksValidator>());
  twin::validate::RunOptions opts;
  opts.converge_timeout = std::chrono::seconds(30);
  opts.time = &time;
  return twin::validate::run_validation(ctx, v, opts);
}

const twin::validate::TestResult* named(const twin::validate::Report& r, const std::string& name) {
  for (const auto& t : r.results)
    if (t.peer == name) return &t;
  return nullptr;
}

const std::string kQuick = R"(  - name: quick
    frr: {node: r1, command: show ip ospf neighbor json, match: {neighbors: {10.0.255.2: [{nbrState: Full/-}]}}}
    wait: 2
)";
const std::string kSlow = R"(  - name: slow
    frr: {node: r2, command: show ip ospf neighbor json, match: {neighbors: {10.0.255.1: [{nbrState: Full/-}]}}}
    wait: 20
)";

// r1's adjacency comes up at 5 s, after the quick check's 2 s: it fails, with or without a
// slower check that keeps the family retrying until 15 s (it used to pass then, as the family
// was retried until the latest deadline among its failing checks).
TEST(ChecksFamily, AShortWaitIsDecidedWhateverASlowerCheckWaitsFor) {
  using namespace std::chrono_literals;
  twin_test::FakeTime alone_time;
  TimedProbe alone_probe(alone_time);
  alone_probe.healthy_from = {{"r1", 5s}, {"r2", 15s}};
  auto alone = run_timed("checks:\n" + kQuick, alone_probe, alone_time);

  twin_test::FakeTime both_time;
  TimedProbe both_probe(both_time);
  both_probe.healthy_from = {{"r1", 5s}, {"r2", 15s}};
  auto both = run_timed("checks:\n" + kQuick + kSlow, both_probe, both_time);

  const auto* q1 = named(alone, "quick");
  const auto* q2 = named(both, "quick");
  const auto* slow = named(both, "slow");
  ASSERT_TRUE(q1 && q2 && slow);
  EXPECT_EQ(q1->status, Status::kFailed);
  EXPECT_EQ(q2->status, Status::kFailed);
  EXPECT_EQ(q2->observed, q1->observed);
  EXPECT_EQ(q2->attempts, q1->attempts);  // decided at the same attempt: its 2 s were up
  EXPECT_THAT(q2->observed, HasSubstr("Exchange/-"));
  // The slow one still had its own time, and got it.
  EXPECT_EQ(slow->status, Status::kPassed);
  EXPECT_GE(both_time.slept(), 15s);
  EXPECT_LT(both_time.slept(), 16s);
  EXPECT_LT(alone_time.slept(), 3s);
}

// A check that passed is final: the family retried for another one does not ask it again, so
// it cannot turn into a failure the check alone would never have shown.
TEST(ChecksFamily, APassIsFinalThoughTheFamilyIsRetriedForAnother) {
  using namespace std::chrono_literals;
  twin_test::FakeTime time;
  TimedProbe probe(time);
  probe.healthy_from = {{"r1", 0s}, {"r2", 6s}};
  probe.broken_from = {{"r1", 1s}};
  auto report = run_timed("checks:\n" + kQuick + kSlow, probe, time);
  const auto* quick = named(report, "quick");
  ASSERT_TRUE(quick);
  EXPECT_EQ(quick->status, Status::kPassed);
  EXPECT_EQ(quick->attempts, 1);
  EXPECT_EQ(probe.calls["r1"], 1);  // never asked again
  EXPECT_EQ(named(report, "slow")->status, Status::kPassed);
  EXPECT_GT(probe.calls["r2"], 1);
}

// `after:` evaluates a check only once the other holds, and its wait counts from then: r2's
// adjacency comes up at 5 s, 1 s after r1's at 4 s; 2 s from the start would have failed it.
TEST(ChecksFamily, AfterEvaluatesOnceTheOtherHoldsAndCountsItsWaitFromThere) {
  using namespace std::chrono_literals;
  twin_test::FakeTime time;
  TimedProbe probe(time);
  probe.healthy_from = {{"r1", 4s}, {"r2", 5s}};
  auto report = run_timed(R"(checks:
  - name: first
    frr: {node: r1, command: show ip ospf neighbor json, match: {neighbors: {10.0.255.2: [{nbrState: Full/-}]}}}
    wait: 10
  - name: then
    after: first
    frr: {node: r2, command: show ip ospf neighbor json, match: {neighbors: {10.0.255.1: [{nbrState: Full/-}]}}}
    wait: 2
)",
                          probe, time);
  const auto* first = named(report, "first");
  const auto* then = named(report, "then");
  ASSERT_TRUE(first && then);
  EXPECT_EQ(first->status, Status::kPassed);
  EXPECT_EQ(then->status, Status::kPassed);
  EXPECT_GE(then->time_to_pass_ms, 5000);
  EXPECT_GE(first->time_to_pass_ms, 4000);
  EXPECT_LT(first->time_to_pass_ms, 4500);
  // r2 was first asked in the attempt where r1's adjacency held, not before: once per 250 ms
  // from 4 s to 5 s.
  EXPECT_GE(probe.calls["r2"], 4);
  EXPECT_LE(probe.calls["r2"], 6);
}

// If the check it waits for never holds, it is skipped, saying why, once that one is final.
TEST(ChecksFamily, AfterACheckThatNeverHoldsIsSkippedWithItsReason) {
  using namespace std::chrono_literals;
  twin_test::FakeTime time;
  TimedProbe probe(time);
  probe.healthy_from = {{"r2", 0s}};  // r1 never
  auto report = run_timed("checks:\n" + kQuick + R"(  - name: then
    after: quick
    frr: {node: r2, command: show ip ospf neighbor json, match: {neighbors: {10.0.255.1: [{nbrState: Full/-}]}}}
)",
                          probe, time);
  const auto* then = named(report, "then");
  ASSERT_TRUE(then);
  EXPECT_EQ(named(report, "quick")->status, Status::kFailed);
  EXPECT_EQ(then->status, Status::kSkipped);
  EXPECT_EQ(then->message, "not evaluated: it runs after 'quick', which did not hold (failed)");
  EXPECT_EQ(probe.calls["r2"], 0);
  EXPECT_LT(time.slept(), 3s);  // not its own 10 s: it never started
}

TEST(ChecksWindow, CountsUpTheAfterChain) {
  using std::chrono::milliseconds;
  std::vector<Check> cs(3);
  cs[0].name = "a";
  cs[0].wait_s = 5;
  cs[1].name = "b";
  cs[1].wait_s = 2;
  cs[1].after = "a";
  cs[2].name = "c";
  cs[2].wait_s = 1;
  cs[2].after = "b";
  EXPECT_EQ(twin::validators::check_window(cs, "a", nullptr), milliseconds(5000));
  EXPECT_EQ(twin::validators::check_window(cs, "c", nullptr), milliseconds(8000));
  EXPECT_EQ(twin::validators::check_window(cs, "x", nullptr), std::nullopt);
  twin::validate::TestResult a_passed;
  a_passed.validator = "checks";
  a_passed.peer = "a";
  a_passed.status = Status::kPassed;
  a_passed.time_to_pass_ms = 1250;
  std::vector<twin::validate::TestResult> finals = {a_passed};
  EXPECT_EQ(twin::validators::check_window(cs, "b", &finals), milliseconds(3250));
  EXPECT_EQ(twin::validators::check_window(cs, "c", &finals), milliseconds(4250));
}

TEST(ChecksLoad, AfterNamesAnotherCheckWithoutCycles) {
  auto l = load("checks:\n" + kQuick + "  - name: then\n    after: quick\n" +
                "    route: {node: r1, prefix: 192.168.3.0/24}\n");
  ASSERT_TRUE(l.topo) << l.diags.format();
  EXPECT_EQ(l.topo->checks[1].after, "quick");
  EXPECT_EQ(l.topo->checks[0].after, "");
  // Through the state file.
  auto plan = twin::plan::make_plan(*l.topo);
  auto back = twin::plan::plan_from_json(twin::plan::to_json(plan));
  EXPECT_EQ(back.checks[1].after, "quick");

  auto unknown = only_problem("checks:\n" + kQuick + "  - name: then\n    after: quik\n" +
                              "    route: {node: r1, prefix: 192.168.3.0/24}\n");
  EXPECT_EQ(unknown.line, 6);
  EXPECT_EQ(unknown.column, 12);
  EXPECT_EQ(unknown.field, "checks[1].after");
  EXPECT_EQ(unknown.message, "no check is named 'quik'");
  EXPECT_EQ(unknown.hint, "did you mean 'quick'?");

  auto self = only_problem("checks:\n" + kQuick + "    after: quick\n");
  EXPECT_EQ(self.line, 5);
  EXPECT_EQ(self.message, "check 'quick' cannot wait for itself");

  auto cycle = only_problem(R"(checks:
  - name: a
    after: c
    route: {node: r1, prefix: 192.168.3.0/24}
  - name: b
    after: a
    route: {node: r2, prefix: 192.168.3.0/24}
  - name: c
    after: b
    route: {node: r3, prefix: 192.168.3.0/24}
  - name: d
    after: a
    route: {node: r3, prefix: 192.168.1.0/24}
)");
  EXPECT_EQ(cycle.line, 3);
  EXPECT_EQ(cycle.field, "checks[0].after");
  EXPECT_EQ(cycle.message, "checks wait for each other in a cycle: 'a' -> 'c' -> 'b' -> 'a'");
}

}  // namespace
