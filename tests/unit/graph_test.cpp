// twin graph's model: tiers from the topology, live state over it (recorded from a real clos-2x4
// with leaf1:swp1 set down: `twin status --json`, and the validation that followed), the
// renderings; the journal that keeps a lab's history; live changes as events.
#include "twin/graph/graph.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "support.hpp"
#include "twin/core/diagnostics.hpp"
#include "twin/core/util.hpp"
#include "twin/engine/lab.hpp"
#include "twin/engine/live.hpp"
#include "twin/plan/plan.hpp"
#include "twin/report/events.hpp"
#include "twin/state/journal.hpp"
#include "twin/topology/loader.hpp"

namespace {

using ::testing::HasSubstr;
using ::testing::Not;
namespace graph = twin::graph;

const std::string kRepo = TWIN_DATA_DIR;
const std::string kTestData = TWIN_TEST_DATA;

twin::plan::Plan plan_of(const std::string& file, const std::string& name = "") {
  twin::Diagnostics d;
  auto t = twin::topology::load_topology(file, d);
  if (!t) throw std::runtime_error(d.format());
  return twin::plan::make_plan(*t, name);
}

const graph::Node& node(const graph::Graph& g, const std::string& name) {
  for (const auto& n : g.nodes)
    if (n.name == name) return n;
  throw std::runtime_error("no node " + name);
}

const graph::Link& link(const graph::Graph& g, const std::string& id) {
  for (const auto& l : g.links)
    if (l.a + ":" + l.a_interface == id) return l;
  throw std::runtime_error("no link " + id);
}

TEST(Graph, ClosRowsPutSpinesOverLeavesOverServers) {
  auto g = graph::from_plan(plan_of(kRepo + "/topologies/clos-2x4.yaml"));
  EXPECT_EQ(g.lab, "clos-2x4");
  ASSERT_EQ(g.nodes.size(), 8u);
  ASSERT_EQ(g.links.size(), 10u);
  EXPECT_EQ(node(g, "spine1").tier, 0);
  EXPECT_EQ(node(g, "spine1").role, "spine");
  EXPECT_EQ(node(g, "leaf2").tier, 1);  // no server on it, still the leaves' row
  EXPECT_EQ(node(g, "server1").tier, 2);
  EXPECT_EQ(node(g, "server1").kind, "host");
  EXPECT_EQ(node(g, "leaf1").asn, 65101u);
  const auto& l = link(g, "leaf1:swp1");
  EXPECT_EQ(l.b, "spine1");
  EXPECT_EQ(l.mtu, 9216);
  EXPECT_TRUE(l.fabric);
  EXPECT_FALSE(link(g, "leaf1:swp3").fabric);  // to server1
  EXPECT_EQ(l.state, "");                       // not live
  EXPECT_FALSE(g.live);
}

TEST(Graph, WithoutServersTheMostNumerousRoleIsTheBottomRow) {
  twin::plan::Plan p;
  p.lab = "t";
  for (const char* n : {"s1", "l1", "l2", "l3"}) {
    p.nodes.push_back({});
    p.nodes.back().name = n;
  }
  for (const char* l : {"l1", "l2", "l3"}) p.links.push_back({l, "swp1", "s1", "swp1", 1500});
  auto g = graph::from_plan(p);
  EXPECT_EQ(node(g, "s1").role, "s");
  EXPECT_EQ(node(g, "s1").tier, 0);
  EXPECT_EQ(node(g, "l1").tier, 1);
  EXPECT_EQ(node(g, "l3").tier, 1);
}

struct LiveFixture : ::testing::Test {
  twin::plan::Plan p = plan_of(kRepo + "/topologies/clos-2x4.yaml", "g1");
  nlohmann::json status = nlohmann::json::parse(
      twin_test::read(kTestData + "/graph/status-clos-2x4-leaf1-swp1-down.json"));
  nlohmann::json validation = nlohmann::json::parse(
      twin_test::read(kTestData + "/graph/validate-clos-2x4-leaf1-swp1-down.json"));
  std::vector<graph::SessionView> sessions{
      {"bgp", "leaf1", "swp1", "spine1", "Idle", false},
      {"bgp", "spine1", "swp1", "leaf1", "Idle", false},
      {"bgp", "leaf1", "swp2", "spine2", "Established", true},
  };
  graph::Graph live() {
    auto g = graph::from_plan(p);
    graph::LiveInput in;
    in.status = &status;
    in.sessions = &sessions;
    in.validation = &validation;
    in.validation_at = "2026-12-03T02:08:47.000Z";
    graph::overlay(g, in);
    return g;
  }
};

TEST_F(LiveFixture, ADownPortTurnsItsLinkDownWithTheFailingTestsOnIt) {
  auto g = live();
  EXPECT_TRUE(g.live);
  const auto& l = link(g, "leaf1:swp1");
  EXPECT_EQ(l.state, "down");
  EXPECT_EQ(l.a_oper, "DOWN");
  EXPECT_EQ(l.b_oper, "DOWN");  // a veth's peer goes down with it
  EXPECT_FALSE(l.sessions_up);
  EXPECT_THAT(l.sessions, ::testing::Contains("bgp leaf1->spine1 Idle"));
  std::set<std::string> tests;
  for (const auto& f : l.failures) tests.insert(f.test);
  EXPECT_TRUE(tests.count("bgp.session-established"));
  EXPECT_TRUE(tests.count("mtu.link-df"));
  const auto& ok = link(g, "leaf1:swp2");
  EXPECT_EQ(ok.state, "up");
  EXPECT_TRUE(ok.failures.empty());
  EXPECT_EQ(link(g, "leaf4:swp3").state, "up");
  EXPECT_EQ(node(g, "leaf1").state, "up");  // its namespace and daemons are there
  // The recorded validation: 278 passed, 36 failed.
  EXPECT_EQ(g.validation.passed, 278);
  EXPECT_EQ(g.validation.failed, 36);
  EXPECT_EQ(g.validation.at, "2026-12-03T02:08:47.000Z");
  int placed = static_cast<int>(g.validation.lab_wide.size());
  for (const auto& n : g.nodes) placed += static_cast<int>(n.failures.size());
  for (const auto& x : g.links) placed += static_cast<int>(x.failures.size());
  EXPECT_EQ(placed, 36);  // every failing test shown somewhere, once
}

TEST_F(LiveFixture, FailingTestsKeepTheirEvidenceAndLikelyCausesTheirNodes) {
  // twin validate's likely_causes, as report::causes_json writes them.
  validation["likely_causes"] = nlohmann::json::array(
      {{{"rule", "mtu-mismatch"},
        {"cause", "MTU mismatch on the link spine2:swp1 (9216) -- leaf1:swp2 (1500)"},
        {"evidence", {"spine2: swp1 mtu 9216", "leaf1: swp2 mtu 1500"}},
        {"nodes", {"spine2", "leaf1"}}}});
  auto g = live();
  ASSERT_EQ(g.validation.causes.size(), 1u);
  EXPECT_EQ(g.validation.causes[0].rule, "mtu-mismatch");
  EXPECT_EQ(g.validation.causes[0].nodes, (std::vector<std::string>{"spine2", "leaf1"}));
  EXPECT_EQ(g.validation.causes[0].evidence[1], "leaf1: swp2 mtu 1500");
  auto j = graph::to_json(g);
  EXPECT_EQ(j["validation"]["likely_causes"][0]["cause"],
            "MTU mismatch on the link spine2:swp1 (9216) -- leaf1:swp2 (1500)");
  const auto& l = link(g, "leaf1:swp1");
  bool found = false;
  for (const auto& f : l.failures)
    if (f.test == "bgp.session-established") {
      found = true;
      EXPECT_NE(f.expected.find("Established"), std::string::npos) << f.expected;
      EXPECT_EQ(graph::to_json(f)["observed"], f.observed);
      EXPECT_FALSE(f.observed.empty());
    }
  EXPECT_TRUE(found);
}

TEST_F(LiveFixture, AnMtuThatDiffersFromThePlanDegradesAnUpLink) {
  for (auto& l : status["links"])
    if (l["a"] == "leaf2:swp1") l["a_mtu"] = 1500;
  auto g = live();
  const auto& l = link(g, "leaf2:swp1");
  EXPECT_EQ(l.state, "degraded");
  EXPECT_THAT(l.notes, ::testing::Contains("MTU 1500 on leaf2:swp1, 9216 planned"));
}

TEST_F(LiveFixture, AnExitedDaemonDegradesItsNodeAndAMissingNamespaceDownsIt) {
  for (auto& n : status["nodes"]) {
    if (n["name"] == "leaf3") n["daemons"][0]["alive"] = false;
    if (n["name"] == "leaf4") n["netns_present"] = false;
  }
  auto g = live();
  EXPECT_EQ(node(g, "leaf3").state, "degraded");
  EXPECT_THAT(node(g, "leaf3").notes, ::testing::Contains(HasSubstr("exited")));
  EXPECT_EQ(node(g, "leaf4").state, "down");
}

TEST_F(LiveFixture, DotColoursTheDownLinkRedAndRanksTiers) {
  auto dot = graph::to_dot(live());
  EXPECT_THAT(dot, HasSubstr("{ rank=same; \"spine1\"; \"spine2\"; }"));
  // The spine is the tail: dot draws it above the leaf.
  EXPECT_THAT(dot, HasSubstr("\"spine1\" -- \"leaf1\" [id=\"link-leaf1:swp1\", taillabel=\"swp1\", "
                             "headlabel=\"swp1\", color=\"#d62728\", style=dashed"));
  EXPECT_THAT(dot, HasSubstr("\"spine2\" -- \"leaf1\" [id=\"link-leaf1:swp2\", taillabel=\"swp1\", "
                             "headlabel=\"swp2\", color=\"#2ca02c\", style=solid"));
  EXPECT_THAT(dot, HasSubstr("(live)"));
}

TEST_F(LiveFixture, MermaidStylesTheDownLinkByItsIndex) {
  auto m = graph::to_mermaid(live());
  EXPECT_THAT(m, HasSubstr("n2 ---|\"swp1 · swp1 · 9216\"| n0"));
  EXPECT_THAT(m, HasSubstr("linkStyle 0 stroke:#d62728"));
  EXPECT_THAT(m, Not(HasSubstr("linkStyle 1 ")));
}

TEST_F(LiveFixture, JsonCarriesEveryNodeAndLinkWithState) {
  auto j = graph::to_json(live());
  EXPECT_EQ(j["lab"], "g1");
  EXPECT_EQ(j["nodes"].size(), 8u);
  EXPECT_EQ(j["links"].size(), 10u);
  EXPECT_EQ(j["links"][0]["id"], "leaf1:swp1");
  EXPECT_EQ(j["links"][0]["state"], "down");
  EXPECT_EQ(j["validation"]["failed"], 36);
  auto s = graph::to_json(graph::from_plan(p));
  EXPECT_TRUE(s["validation"].is_null());
}

TEST(Graph, DotQuotesNamesItCannotTrust) {
  graph::Graph g;
  g.lab = "a\"b";
  g.nodes.push_back({});
  g.nodes[0].name = "x\\y";
  auto dot = graph::to_dot(g);
  EXPECT_THAT(dot, HasSubstr("graph \"a\\\"b\""));
  EXPECT_THAT(dot, HasSubstr("\"x\\\\y\""));
}

// A report writer that dumps `report` as the CLI's record_event does.
twin::state::ReportWriter dump_of(const nlohmann::json& report) {
  return [report](std::ostream& o) { o << report.dump(); };
}

struct JournalFixture : ::testing::Test {
  twin::TempDir dir;
  void SetUp() override { ::setenv("TWIN_HISTORY_DIR", dir.path.c_str(), 1); }
  void TearDown() override { ::unsetenv("TWIN_HISTORY_DIR"); }
};

TEST_F(JournalFixture, AppendsNumberedEventsWithTheirReportsAndReadsThemBack) {
  auto a = twin::state::journal_append("lab1", "up", {{"nodes", 8}});
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_EQ((*a)["seq"], 1);
  nlohmann::json report{{"results", nlohmann::json::array()}, {"verdict", "PASS"}};
  auto b = twin::state::journal_append("lab1", "validate", {{"passed", 3}}, dump_of(report));
  ASSERT_TRUE(b);
  EXPECT_EQ((*b)["seq"], 2);
  EXPECT_EQ((*b)["report"], "reports/2-validate.json");
  auto all = twin::state::journal_read("lab1");
  ASSERT_TRUE(all);
  ASSERT_EQ(all->events.size(), 2u);
  EXPECT_EQ(all->events[0]["kind"], "up");
  EXPECT_EQ(all->events[0]["lab"], "lab1");
  EXPECT_EQ(all->events[1]["passed"], 3);
  auto r = twin::state::journal_report("lab1", "reports/2-validate.json");
  ASSERT_TRUE(r);
  EXPECT_EQ((*r)["verdict"], "PASS");
  // Reading on from the offset gives only what came after.
  auto c = twin::state::journal_append("lab1", "down", {});
  ASSERT_TRUE(c);
  auto more = twin::state::journal_read("lab1", all->next_offset);
  ASSERT_TRUE(more);
  ASSERT_EQ(more->events.size(), 1u);
  EXPECT_EQ(more->events[0]["seq"], 3);
  EXPECT_EQ(twin::state::labs_with_history(), std::vector<std::string>{"lab1"});
}

// A node's output that is not UTF-8 (a probe's raw bytes) is stored replaced, as the CLI prints
// it, rather than failing the record.
TEST_F(JournalFixture, TheReportIsWhatItsWriterStreamed) {
  // The writer replaces invalid UTF-8 (report::write_json, the CLI's record_event); the
  // journal stores its bytes as they come, one line.
  auto a = twin::state::journal_append("lab1", "apply", {}, [](std::ostream& o) {
    o << nlohmann::json{{"output", std::string("ok \xff\xfe end")}}.dump(
        -1, ' ', false, nlohmann::json::error_handler_t::replace);
  });
  ASSERT_TRUE(a) << a.error().message;
  auto r = twin::state::journal_report("lab1", (*a)["report"].get<std::string>());
  ASSERT_TRUE(r);
  EXPECT_EQ((*r)["output"], "ok \xef\xbf\xbd\xef\xbf\xbd end");  // two U+FFFD
}

TEST_F(JournalFixture, ALineStillBeingWrittenWaitsForTheNextRead) {
  ASSERT_TRUE(twin::state::journal_append("lab1", "up", {}));
  std::ofstream(dir.path + "/lab1/journal.jsonl", std::ios::app) << "{\"seq\":2,\"kind\":\"val";
  auto r = twin::state::journal_read("lab1");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->events.size(), 1u);
  std::ofstream(dir.path + "/lab1/journal.jsonl", std::ios::app) << "idate\"}\n";
  auto rest = twin::state::journal_read("lab1", r->next_offset);
  ASSERT_TRUE(rest);
  ASSERT_EQ(rest->events.size(), 1u);
  EXPECT_EQ(rest->events[0]["kind"], "validate");
}

TEST_F(JournalFixture, RefusesPathsForLabsAndReports) {
  EXPECT_FALSE(twin::state::journal_append("../etc", "up", {}));
  EXPECT_FALSE(twin::state::journal_read("a/b"));
  ASSERT_TRUE(twin::state::journal_append("lab1", "up", {}));
  auto r = twin::state::journal_report("lab1", "reports/../../../etc/passwd");
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("not a report"));
  EXPECT_FALSE(twin::state::journal_report("lab1", "/etc/passwd"));
  // No history is no error: nothing to read.
  auto none = twin::state::journal_read("other");
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->events.empty());
}

TEST(LiveChanges, ALinkDownAndItsSessionsLeavingEstablishedAreEvents) {
  twin::engine::LiveSnapshot a, b;
  a.status = {{"nodes", {{{"name", "leaf1"}, {"netns_present", true},
                          {"daemons", {{{"name", "bgpd"}, {"alive", true}}}}}}},
              {"links", {{{"a", "leaf1:swp1"}, {"b", "spine1:swp1"}, {"a_state", "UP"},
                          {"b_state", "UP"}}}}};
  b.status = a.status;
  b.status["links"][0]["a_state"] = "DOWN";
  b.status["nodes"][0]["daemons"][0]["alive"] = false;
  a.sessions = {{"bgp", "leaf1", "swp1", "spine1", "Established", true}};
  b.sessions = {{"bgp", "leaf1", "swp1", "spine1", "Active", false}};
  auto ev = twin::engine::live_changes(a, b);
  ASSERT_EQ(ev.size(), 3u);
  EXPECT_EQ(ev[0]["kind"], "link");
  EXPECT_EQ(ev[0]["subject"], "leaf1:swp1 -- spine1:swp1");
  EXPECT_EQ(ev[0]["from"], "UP/UP");
  EXPECT_EQ(ev[0]["to"], "DOWN/UP");
  EXPECT_EQ(ev[1]["kind"], "session");
  EXPECT_EQ(ev[1]["subject"], "bgp leaf1 swp1 -> spine1");
  EXPECT_EQ(ev[1]["to"], "Active");
  EXPECT_EQ(ev[2]["kind"], "daemon");
  EXPECT_EQ(ev[2]["to"], "exited");
  EXPECT_TRUE(twin::engine::live_changes(a, a).empty());
}

TEST(EventLine, SaysWhatEachKindMeans) {
  EXPECT_EQ(twin::report::event_line({{"time", "2026-12-03T02:08:47.123Z"},
                                      {"kind", "validate"},
                                      {"passed", 278},
                                      {"failed", 36},
                                      {"errors", 0},
                                      {"duration_ms", 1200.0},
                                      {"source", "cli"}}),
            "2026-12-03 02:08:47  validate  278 passed, 36 failed, 0 errors in 1200 ms  (cli)");
  // Ctrl-C ended the convergence window early: its failures may be tests still retrying.
  EXPECT_THAT(twin::report::event_line({{"kind", "validate"},
                                        {"passed", 286},
                                        {"failed", 30},
                                        {"errors", 0},
                                        {"exit_code", 130},
                                        {"interrupted", true}}),
              HasSubstr("286 passed, 30 failed, 0 errors, interrupted"));
  EXPECT_EQ(twin::report::event_line({{"time", "2026-12-03T02:09:55.000Z"},
                                      {"kind", "link"},
                                      {"subject", "leaf1:swp1 -- spine1:swp1"},
                                      {"from", "DOWN/DOWN"},
                                      {"to", "UP/UP"}}),
            "2026-12-03 02:09:55  link  leaf1:swp1 -- spine1:swp1: DOWN/DOWN -> UP/UP");
  EXPECT_THAT(twin::report::event_line({{"kind", "run"}, {"verdict", "approve"},
                                        {"scenario", "approve-drain-spine2"}}),
              HasSubstr("approve  scenario approve-drain-spine2"));
}

}  // namespace

// A rail lab's links carry their rate from the plan, and a live graph each end's byte counters
// as the status read them: the ports of every node of ai-rail-2x4 as `ip -j -s link show`
// printed them while `twin traffic --pattern pairs` ran (recorded), through engine's
// status_links and the graph's overlay, to the JSON the web page computes rates from.
TEST(GraphTraffic, LinksCarryTheirRateAndEachEndsCountersFromIpDashSLink) {
  auto p = plan_of(kRepo + "/topologies/ai-rail-2x4.yaml", "g2");
  auto rec =
      nlohmann::json::parse(twin_test::read(kTestData + "/graph/ip-s-link-ai-rail-2x4-pairs.json"));
  std::map<std::string, nlohmann::json> tables;
  for (const auto& [node, ports] : rec["nodes"].items()) tables[node] = ports;
  auto port = [&](const std::string& node, const std::string& ifname) {
    for (const auto& x : rec["nodes"][node])
      if (x["ifname"] == ifname) return x;
    throw std::runtime_error("no port " + node + ":" + ifname);
  };
  nlohmann::json status{{"nodes", nlohmann::json::array()},
                        {"links", twin::engine::status_links(p, tables)},
                        {"read_at_ms", rec["read_at_ms"]}};
  auto server = std::find_if(status["links"].begin(), status["links"].end(),
                             [](const auto& l) { return l["a"] == "rail1-leaf1:swp3"; });
  ASSERT_NE(server, status["links"].end());
  EXPECT_EQ((*server)["b"], "server1:eth0");
  EXPECT_EQ((*server)["bandwidth_bps"], 50'000'000u);
  EXPECT_EQ((*server)["a_state"], "UP");
  EXPECT_EQ((*server)["a_tx_bytes"], port("rail1-leaf1", "swp3")["stats64"]["tx"]["bytes"]);
  EXPECT_EQ((*server)["a_rx_bytes"], port("rail1-leaf1", "swp3")["stats64"]["rx"]["bytes"]);
  EXPECT_EQ((*server)["b_tx_bytes"], port("server1", "eth0")["stats64"]["tx"]["bytes"]);
  EXPECT_EQ((*server)["b_rx_bytes"], port("server1", "eth0")["stats64"]["rx"]["bytes"]);
  // Recorded under load: the server sent megabytes toward its pair.
  EXPECT_GT((*server)["b_tx_bytes"].get<uint64_t>(), 1'000'000u);

  auto g = graph::from_plan(p);
  graph::LiveInput in;
  in.status = &status;
  graph::overlay(g, in);
  EXPECT_EQ(g.read_at_ms, rec["read_at_ms"].get<int64_t>());
  const auto& fabric = link(g, "rail1-leaf1:swp1");
  EXPECT_EQ(fabric.bandwidth_bps, 100'000'000u);
  EXPECT_EQ(fabric.state, "up");
  ASSERT_TRUE(fabric.a_tx_bytes && fabric.b_rx_bytes);
  EXPECT_EQ(*fabric.a_tx_bytes, port("rail1-leaf1", "swp1")["stats64"]["tx"]["bytes"]);
  EXPECT_EQ(*fabric.b_tx_bytes, port("spine1", "swp1")["stats64"]["tx"]["bytes"]);
  auto j = graph::to_json(g);
  EXPECT_EQ(j["read_at_ms"], rec["read_at_ms"]);
  EXPECT_EQ(j["links"][0]["id"], "rail1-leaf1:swp1");
  EXPECT_EQ(j["links"][0]["bandwidth_bps"], 100'000'000u);
  EXPECT_EQ(j["links"][0]["a_tx_bytes"], *fabric.a_tx_bytes);
  EXPECT_THAT(graph::to_dot(g), HasSubstr("MTU 9216, rate 100 Mbit/s"));
}

// A port the status could not read (a node's table missing) has no counters: null, not 0,
// and a link without `bandwidth:` has rate 0 (the page colours it by its absolute rate).
TEST_F(LiveFixture, CountersNotReadAreNullAndAnUnshapedLinkHasNoRate) {
  auto g = live();  // the recorded status predates counters
  const auto& l = link(g, "leaf1:swp2");
  EXPECT_EQ(l.bandwidth_bps, 0u);
  EXPECT_FALSE(l.a_tx_bytes.has_value());
  auto j = graph::to_json(g);
  EXPECT_TRUE(j["links"][1]["a_tx_bytes"].is_null());
  EXPECT_EQ(j["links"][1]["bandwidth_bps"], 0);
  EXPECT_EQ(j["read_at_ms"], 0);
  std::map<std::string, nlohmann::json> none;
  auto links = twin::engine::status_links(p, none);
  EXPECT_EQ(links[0]["a_state"], "missing");
  EXPECT_TRUE(links[0]["a_tx_bytes"].is_null());
}
