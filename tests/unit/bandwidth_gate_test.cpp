// The traffic family in the gate: a change set's intent.traffic and a scenario's traffic: are
// read like a topology's, the baseline's and the after-change figures are compared per pattern
// (bandwidth-lost, ranked after restart-divergence), and the reports carry them. Figures are
// those measured on scenarios/ai-rail's lab (twin traffic --pattern pairs --flows-per-pair 16:
// before, and with maximum-paths 1 on rail1-leaf1).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "twin/changeset/changeset.hpp"
#include "twin/changeset/intent.hpp"
#include "twin/core/diagnostics.hpp"
#include "twin/gate/result.hpp"
#include "twin/gate/scenario.hpp"
#include "twin/plan/plan.hpp"
#include "twin/report/apply_report.hpp"
#include "twin/report/report.hpp"
#include "twin/topology/loader.hpp"
#include "twin/traffic/traffic.hpp"
#include "twin/verdict/diff.hpp"
#include "validators/traffic/traffic.hpp"

namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using twin::Diagnostics;
using twin::replay::Decision;
using twin::replay::Diff;
using twin::replay::NetState;
using twin::validate::Bandwidth;

const std::string kRepo = TWIN_DATA_DIR;
const std::string kGateLab = kRepo + "/scenarios/ai-rail/topologies/ai-rail-gate.yaml";

const twin::plan::Plan& rail() {
  static const twin::plan::Plan p = [] {
    Diagnostics d;
    auto t = twin::topology::load_topology(kGateLab, d);
    if (!t) throw std::runtime_error(d.format());
    return twin::plan::make_plan(*t, "");
  }();
  return p;
}

std::optional<twin::replay::ChangeSet> change(const std::string& text, Diagnostics& d,
                                              const twin::plan::Plan& plan = rail()) {
  return twin::replay::load_change_set_text(text, "c.yaml", kRepo + "/scenarios/ai-rail", plan, d);
}

const char* kHead = "version: 1\nname: c\nsteps: [{name: a, wait: {}}]\n";

// Measured: the baseline (slowest pair 45.9 Mbit/s of a 47.8 fair share, 371.9 aggregate) and
// with one uplink on rail1-leaf1 (27.5 of 47.8, 330.4 aggregate).
Bandwidth before() {
  return {"pairs", 8, 128, 371.9e6, "server1 -> server3", 45.9e6, 47.8e6, 0.96};
}
Bandwidth single_path() {
  return {"pairs", 8, 128, 330.4e6, "server2 -> server4", 27.5e6, 47.8e6, 0.575};
}

Diff diff_of(const Bandwidth& b, const Bandwidth& a, const twin::plan::Plan& intended) {
  NetState x, y;
  x.bandwidth = {b};
  y.bandwidth = {a};
  return twin::replay::diff_states(x, y, rail(), intended);
}

TEST(TrafficIntent, ReadsAMappingWithItsLossAllowance) {
  Diagnostics d;
  auto cs = change(std::string(kHead) +
                       "intent:\n  traffic: {pattern: pairs, duration: 2s, flows-per-pair: 16, "
                       "bandwidth-loss: 10%}\n",
                   d);
  ASSERT_TRUE(cs) << d.format();
  ASSERT_TRUE(cs->intent.traffic);
  EXPECT_EQ(cs->intent.traffic->pattern, "pairs");
  EXPECT_EQ(cs->intent.traffic->duration_s, 2);
  EXPECT_EQ(cs->intent.traffic->flows_per_pair, 16);
  EXPECT_DOUBLE_EQ(cs->intent.traffic->bandwidth_loss, 0.1);
  // The intended plan runs it; the running lab's plan does not.
  auto p = twin::replay::intended_plan(rail(), *cs);
  ASSERT_TRUE(p.traffic);
  EXPECT_EQ(p.traffic->flows_per_pair, 16);
  EXPECT_FALSE(rail().traffic);
}

TEST(TrafficIntent, TrueIsTheLabsOwnPatternElseTheDefaults) {
  Diagnostics d;
  auto cs = change(std::string(kHead) + "intent: {traffic: true}\n", d);
  ASSERT_TRUE(cs) << d.format();
  ASSERT_TRUE(cs->intent.traffic);
  EXPECT_EQ(cs->intent.traffic->pattern, "all-to-all");  // twin's default: the lab has none
  EXPECT_DOUBLE_EQ(cs->intent.traffic->bandwidth_loss, 0.2);
  twin::plan::Plan own = rail();
  own.traffic = twin::topology::TrafficSpec{};
  own.traffic->pattern = "ring";
  auto labs = change(std::string(kHead) + "intent: {traffic: true}\n", d, own);
  ASSERT_TRUE(labs) << d.format();
  EXPECT_EQ(labs->intent.traffic->pattern, "ring");
  auto off = change(std::string(kHead) + "intent: {traffic: false}\n", d);
  ASSERT_TRUE(off);
  EXPECT_FALSE(off->intent.traffic);
}

TEST(TrafficIntent, BadValuesAreReportedAtTheirPlace) {
  Diagnostics d;
  auto cs = change(std::string(kHead) +
                       "intent:\n  traffic: {pattern: mesh, bandwidth-loss: 120%, duration: 0s}\n",
                   d);
  EXPECT_FALSE(cs);
  ASSERT_EQ(d.items().size(), 3u) << d.format();
  const std::string all = d.format();
  EXPECT_THAT(all, HasSubstr("c.yaml:5:"));
  EXPECT_THAT(all, HasSubstr("mesh"));
  EXPECT_THAT(all, HasSubstr("expected a fraction from 0.05 to 1 or a percentage from 5% to 100%, "
                             "got '120%'"));
  EXPECT_THAT(all, HasSubstr("duration '0s' is zero"));
}

TEST(TrafficIntent, AnAllowanceWithinTheNoiseOrWithoutItsPercentIsRefused) {
  for (const auto& [value, hint] :
       std::vector<std::pair<std::string, std::string>>{{"20", "did you mean 20%?"},
                                                        {"2%", "below 5 % is run-to-run noise"},
                                                        {"0", "below 5 % is run-to-run noise"}}) {
    Diagnostics d;
    EXPECT_FALSE(
        change(std::string(kHead) + "intent: {traffic: {bandwidth-loss: " + value + "}}\n", d));
    ASSERT_EQ(d.items().size(), 1u) << value << d.format();
    EXPECT_THAT(d.items()[0].hint, HasSubstr(hint)) << value;
  }
  Diagnostics d;
  EXPECT_FALSE(change(std::string(kHead) + "intent: {traffic: yes-please}\n", d));
  EXPECT_THAT(d.format(), HasSubstr("expected true, false, or a mapping of pattern"));
  EXPECT_THAT(d.format(), HasSubstr("got 'yes-please'"));
}

TEST(TrafficGateDiff, OneUplinkFewerIsBandwidthLostRankedAfterRestartDivergence) {
  twin::plan::Plan intended = rail();
  intended.traffic = twin::topology::TrafficSpec{};
  Diff d = diff_of(before(), single_path(), intended);
  ASSERT_EQ(d.bandwidth.size(), 1u);
  EXPECT_TRUE(d.bandwidth[0].lost);
  EXPECT_DOUBLE_EQ(d.bandwidth[0].allowed_loss, 0.2);
  ASSERT_EQ(d.count("bandwidth-lost", false), 1);
  const auto& ch = d.changes.back();
  EXPECT_EQ(ch.subject, "pairs");
  EXPECT_EQ(ch.node, "");
  EXPECT_EQ(ch.message,
            "pairs: the slowest pair got 27.5 Mbit/s (server2 -> server4), 40.1 % below the "
            "baseline's 45.9 Mbit/s (server1 -> server3) (bandwidth-loss allows 20 %)");
  twin::validate::Report after;
  after.results.push_back({"bgp", 0, "session-established", twin::validate::Status::kPassed});
  auto v = twin::replay::decide({}, after, d, nullptr);
  EXPECT_EQ(v.decision, Decision::kReject);
  ASSERT_EQ(v.reasons.size(), 1u);
  EXPECT_EQ(v.reasons[0].category, "bandwidth-lost");
  EXPECT_EQ(v.reasons[0].rank, twin::replay::reason_rank("restart-divergence") + 1);
  EXPECT_EQ(v.reasons[0].rank, twin::replay::reason_rank("validator-failed") - 1);
  EXPECT_EQ(v.reasons[0].message, "bandwidth lost: " + ch.message);
}

TEST(TrafficGateDiff, TheFamilysDiagnosisIsTheLossesLikelyCause) {
  twin::validate::Report after;
  auto failed = [](int test, const std::string& name, const std::string& node,
                   const std::string& message) {
    twin::validate::TestResult r;
    r.validator = "traffic";
    r.test = test;
    r.test_name = name;
    r.status = twin::validate::Status::kFailed;
    r.node = node;
    r.message = message;
    return r;
  };
  const std::string member =
      "a missing ECMP member: rail1-leaf1's route to 10.101.3.10 has 1 of 2 next hops (swp1; not "
      "swp2)";
  after.results = {
      failed(0, "effective-bandwidth", "", "pairs: the slowest pair ... — likely cause: " + member),
      failed(1, "ecmp-balance", "rail1-leaf1", "rail1-leaf1 spread ... — likely cause: " + member),
      failed(2, "no-drops", "rail1-leaf1", "rail1-leaf1:swp1 dropped 3 packets")};
  after.results.push_back(after.results[0]);
  after.results.back().validator = "bgp";  // another family's words are not the loss's
  auto causes = twin::replay::traffic_causes(after);
  ASSERT_EQ(causes.size(), 1u);  // one per distinct text
  EXPECT_EQ(causes[0].rule, "traffic.effective-bandwidth");
  EXPECT_EQ(causes[0].text, member);
  EXPECT_TRUE(twin::replay::traffic_causes(twin::validate::Report{}).empty());
}

TEST(TrafficGateDiff, WithinTheAllowanceIsShownNotLost) {
  twin::plan::Plan intended = rail();
  intended.traffic = twin::topology::TrafficSpec{};
  Bandwidth a = before();
  a.slowest_bps = 45.9e6 * 0.81;  // 19 % lower: within 20 %
  a.aggregate_bps = 371.9e6 * 0.95;
  Diff d = diff_of(before(), a, intended);
  ASSERT_EQ(d.bandwidth.size(), 1u);
  EXPECT_FALSE(d.bandwidth[0].lost);
  EXPECT_EQ(d.count("bandwidth-lost", false), 0);
  // A tighter allowance catches it; the aggregate alone can lose it too.
  intended.traffic->bandwidth_loss = 0.1;
  EXPECT_EQ(diff_of(before(), a, intended).count("bandwidth-lost", false), 1);
  Bandwidth agg = before();
  agg.aggregate_bps = 371.9e6 * 0.7;
  Diff g = diff_of(before(), agg, intended);
  ASSERT_EQ(g.count("bandwidth-lost", false), 1);
  EXPECT_THAT(g.changes.back().message,
              HasSubstr("the aggregate fell to 260.3 Mbit/s, 30.0 % below"));
  // bandwidth-loss 100 % allows anything.
  intended.traffic->bandwidth_loss = 1;
  EXPECT_EQ(diff_of(before(), single_path(), intended).count("bandwidth-lost", false), 0);
}

TEST(TrafficGateDiff, OnlyPatternsBothValidationsRanAreCompared) {
  NetState x, y;
  x.bandwidth = {before()};  // the rollback's validation does not run the change's pattern
  Diff d = twin::replay::diff_states(x, y, rail(), rail());
  EXPECT_TRUE(d.bandwidth.empty());
  Bandwidth ring = single_path();
  ring.pattern = "ring";
  y.bandwidth = {ring};
  EXPECT_TRUE(twin::replay::diff_states(x, y, rail(), rail()).bandwidth.empty());
}

TEST(TrafficGateReport, ApplyJsonTextAndJunitCarryTheFigures) {
  twin::replay::ApplyResult r;
  r.lab = "ai-rail-gate";
  twin::plan::Plan intended = rail();
  intended.traffic = twin::topology::TrafficSpec{};
  r.diff = diff_of(before(), single_path(), intended);
  r.verdict = twin::replay::decide({}, twin::validate::Report{}, r.diff, nullptr);
  auto j = twin::report::apply_to_json(r);
  ASSERT_EQ(j.at("bandwidth").size(), 1u);
  EXPECT_EQ(j["bandwidth"][0]["pattern"], "pairs");
  EXPECT_EQ(j["bandwidth"][0]["lost"], true);
  EXPECT_DOUBLE_EQ(j["bandwidth"][0]["allowed_loss"].get<double>(), 0.2);
  EXPECT_DOUBLE_EQ(j["bandwidth"][0]["before"]["slowest_bps"].get<double>(), 45.9e6);
  EXPECT_EQ(j["bandwidth"][0]["after"]["slowest_pair"], "server2 -> server4");
  EXPECT_EQ(j["reasons"][0]["category"], "bandwidth-lost");
  const std::string text = twin::report::render_apply_text(r, false);
  EXPECT_THAT(text, HasSubstr("bandwidth, pairs: slowest pair 45.9 Mbit/s -> 27.5 Mbit/s, "
                              "aggregate 371.9 Mbit/s -> 330.4 Mbit/s (LOST: more than 20 % "
                              "below the baseline)"));
  const std::string junit = twin::report::render_apply_junit(r);
  EXPECT_THAT(junit, HasSubstr("apply.bandwidth"));
  r.diff.bandwidth[0].lost = false;
  EXPECT_THAT(twin::report::render_apply_text(r, false), HasSubstr("(within the 20 % allowed)"));
  EXPECT_THAT(junit, HasSubstr("slowest pair 45.9 Mbit/s -&gt; 27.5 Mbit/s"));
}

TEST(TrafficGateReport, AValidationReportListsItsBandwidth) {
  twin::validate::Report rep;
  rep.bandwidth = {before()};
  auto j = twin::report::to_json(rep);
  ASSERT_EQ(j.at("bandwidth").size(), 1u);
  EXPECT_EQ(j["bandwidth"][0]["pattern"], "pairs");
  EXPECT_EQ(j["bandwidth"][0]["pairs"], 8);
  EXPECT_EQ(j["bandwidth"][0]["flows"], 128);
  EXPECT_DOUBLE_EQ(j["bandwidth"][0]["slowest_ratio"].get<double>(), 0.96);
  EXPECT_EQ(twin::report::to_json(twin::validate::Report{}).at("bandwidth"),
            nlohmann::json::array());
}

TEST(TrafficGateReport, TheFamilysFiguresComeFromItsRun) {
  twin::traffic::Report r;
  r.pattern = twin::traffic::Pattern::kPairs;
  r.aggregate_bps = 371.9e6;
  r.flows.resize(3);
  r.flows[2].error = "connection refused";
  r.pair_results = {{0, "server1 10.101.1.10", "server3 10.101.3.10", 2, 45.9e6, 47.8e6},
                    {1, "server3 10.101.3.10", "server1 10.101.1.10", 1, 47.0e6, 47.8e6}};
  r.slowest = 0;
  r.slowest_ratio = 45.9 / 47.8;
  Bandwidth b = twin::validators::bandwidth_of(r);
  EXPECT_EQ(b.pattern, "pairs");
  EXPECT_EQ(b.pairs, 2);
  EXPECT_EQ(b.flows, 2);  // the one that could not connect did not run
  EXPECT_EQ(b.slowest_pair, "server1 10.101.1.10 -> server3 10.101.3.10");
  EXPECT_DOUBLE_EQ(b.slowest_bps, 45.9e6);
  EXPECT_DOUBLE_EQ(b.slowest_fair_bps, 47.8e6);
  r.slowest = -1;
  EXPECT_EQ(twin::validators::bandwidth_of(r).slowest_pair, "");
}

TEST(TrafficScenario, AScenarioAsksTheGateForTraffic) {
  Diagnostics d;
  auto s = twin::replay::load_scenario(kRepo + "/scenarios/ai-rail/approve-service-prefix.yaml", d);
  ASSERT_TRUE(s) << d.format();
  ASSERT_TRUE(s->traffic);
  EXPECT_FALSE(s->traffic_is_labs);
  EXPECT_EQ(s->traffic->pattern, "pairs");
  EXPECT_EQ(s->traffic->flows_per_pair, 16);
  auto r = twin::replay::load_scenario(
      kRepo + "/scenarios/ai-rail/reject-single-path-rail1-leaf1.yaml", d);
  ASSERT_TRUE(r) << d.format();
  EXPECT_FALSE(r->traffic);  // its change asks (intent.traffic)
  EXPECT_EQ(r->expect.reason, "bandwidth-lost");
}

}  // namespace
