// Training (twin/training): the exercise loader and the course as shipped, grading over
// recorded validation results, and the attempt records. No root: the sessions themselves run
// in tests/integration/training_test.cpp.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "twin/changeset/changeset.hpp"
#include "twin/core/util.hpp"
#include "twin/plan/plan.hpp"
#include "twin/proc/runner.hpp"
#include "twin/topology/loader.hpp"
#include "twin/training/exercise.hpp"
#include "twin/training/grade.hpp"
#include "twin/training/session.hpp"
#include "validators/registry.hpp"

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

const std::string kRoot = fs::path(TWIN_TEST_DATA).parent_path().parent_path().string();
const std::string kCourse = kRoot + "/scenarios/exercises";

std::vector<std::string> families() { return twin::validators::family_names(); }

std::string all(const twin::Diagnostics& d) { return d.format(); }

// An exercise file in a scratch folder beside a topology, fault and fix that exist.
struct Scratch {
  twin::TempDir dir;
  Scratch() {
    std::ofstream(dir.path + "/topo.yaml") << "x\n";
    std::ofstream(dir.path + "/fault.yaml") << "x\n";
    std::ofstream(dir.path + "/fix.yaml") << "x\n";
  }
  std::string write(const std::string& text) {
    std::string p = dir.path + "/ex.yaml";
    std::ofstream(p) << text;
    return p;
  }
};

const char* kGood = R"(version: 1
name: my-fault
title: A title
difficulty: 2
time-budget: 12m
topology: topo.yaml
fault: fault.yaml
ticket: |
  server1 cannot reach server2.
criteria: [bgp, reachability]
hints:
  - first
  - >-
    second, folded
    over two lines
solution:
  fix: fix.yaml
  explanation: because
)";

}  // namespace

TEST(Exercise, LoadsEveryField) {
  Scratch s;
  twin::Diagnostics d;
  auto e = twin::training::load_exercise(s.write(kGood), families(), d);
  ASSERT_TRUE(e) << all(d);
  EXPECT_EQ(e->name, "my-fault");
  EXPECT_EQ(e->difficulty, 2);
  EXPECT_EQ(e->time_budget, std::chrono::minutes(12));
  EXPECT_EQ(e->topology, s.dir.path + "/topo.yaml");
  EXPECT_EQ(e->fix, s.dir.path + "/fix.yaml");
  EXPECT_EQ(e->ticket, "server1 cannot reach server2.");
  EXPECT_EQ(e->criteria, (std::vector<std::string>{"bgp", "reachability"}));
  ASSERT_EQ(e->hints.size(), 2u);
  EXPECT_EQ(e->hints[1], "second, folded over two lines");
  EXPECT_EQ(e->explanation, "because");
}

TEST(Exercise, ReportsEveryProblemAtItsPlace) {
  Scratch s;
  std::string text = kGood;
  auto swap = [&](const std::string& a, const std::string& b) {
    text.replace(text.find(a), a.size(), b);
  };
  swap("criteria: [bgp, reachability]", "criteria: [bpg]");
  swap("time-budget: 12m", "time-budget: 30s");
  swap("fault: fault.yaml", "fault: nowhere.yaml");
  swap("name: my-fault", "name: my fault");
  swap("ticket: |\n  server1 cannot reach server2.\n", "tickets: x\n");
  twin::Diagnostics d;
  auto e = twin::training::load_exercise(s.write(text), families(), d);
  ASSERT_FALSE(e);
  std::string out = all(d);
  EXPECT_THAT(out, HasSubstr("ex.yaml:9:12: error: criteria[0]: unknown validator family 'bpg'"));
  EXPECT_THAT(out, HasSubstr("did you mean bgp?"));
  EXPECT_THAT(out, HasSubstr("ex.yaml:5:14: error: time-budget: a time budget under a minute"));
  EXPECT_THAT(out, HasSubstr("fault file " + s.dir.path + "/nowhere.yaml does not exist"));
  EXPECT_THAT(out, HasSubstr("'my fault' is not a usable name"));
  EXPECT_THAT(out, HasSubstr("unknown field 'tickets'"));
  EXPECT_THAT(out, HasSubstr("ticket: missing"));
}

TEST(Exercise, FindsByNameAndNamesTheNearestOtherwise) {
  auto e = twin::training::find_exercise(kCourse, "wrong-asn", families());
  ASSERT_TRUE(e) << e.error().message;
  EXPECT_EQ(fs::path(e->file).filename(), "01-wrong-asn.yaml");
  auto miss = twin::training::find_exercise(kCourse, "wrong-asm", families());
  ASSERT_FALSE(miss);
  EXPECT_EQ(miss.error().kind, twin::ErrorKind::kUsage);
  EXPECT_THAT(miss.error().message, HasSubstr("did you mean wrong-asn?"));
}

// The course as shipped: at least ten exercises, each loading, with a fault and a fix that load
// against its lab's plan, and a ticket that names the failing things only by what a user sees.
TEST(Exercise, TheCourseLoadsWithFaultsAndFixesForItsLabs) {
  auto course = twin::training::load_course(kCourse, families());
  ASSERT_GE(course.size(), 10u);
  std::set<std::string> names;
  int last = 0;
  for (const auto& c : course) {
    ASSERT_TRUE(c.exercise) << c.file << ":\n" << all(c.diags);
    const auto& e = *c.exercise;
    EXPECT_TRUE(names.insert(e.name).second) << "two exercises named " << e.name;
    EXPECT_GE(e.difficulty, last) << "the course is listed by difficulty";
    last = e.difficulty;
    twin::Diagnostics d;
    auto topo = twin::topology::load_topology(e.topology, d);
    ASSERT_TRUE(topo) << e.name << ":\n" << all(d);
    auto plan = twin::plan::make_plan(*topo);
    for (const auto& f : {e.fault, e.fix}) {
      twin::Diagnostics dc;
      auto cs = twin::replay::load_change_set(f, plan, dc);
      ASSERT_TRUE(cs) << e.name << " " << f << ":\n" << all(dc);
      for (const auto& st : cs->steps)
        EXPECT_NE(st.kind(), twin::replay::StepKind::kTopology) << e.name << ": " << f;
    }
    EXPECT_FALSE(e.hints.empty());
  }
  // Rising difficulty, from a first day to two faults at once.
  EXPECT_EQ(course.front().exercise->difficulty, 1);
  EXPECT_GE(course.back().exercise->difficulty, 4);
}

TEST(Exercise, TheSchemaNamesTheLoadersFieldsAndTheRegistrysFamilies) {
  auto text = twin::read_file(kRoot + "/scenarios/schema/exercise.schema.json");
  ASSERT_TRUE(text);
  auto j = nlohmann::json::parse(*text);
  std::set<std::string> props, want(twin::training::kExerciseKeys.begin(),
                                    twin::training::kExerciseKeys.end());
  for (const auto& [k, v] : j.at("properties").items()) props.insert(k);
  EXPECT_EQ(props, want);
  std::set<std::string> sol, want_sol(twin::training::kSolutionKeys.begin(),
                                      twin::training::kSolutionKeys.end());
  for (const auto& [k, v] : j.at("properties").at("solution").at("properties").items())
    sol.insert(k);
  EXPECT_EQ(sol, want_sol);
  auto fams = j.at("properties").at("criteria").at("items").at("enum").get<std::vector<std::string>>();
  EXPECT_EQ(fams, families());
}

// --- Grading ---

namespace {

twin::validate::TestResult result(const std::string& family, const std::string& test,
                                  twin::validate::Status st, const std::string& node = "",
                                  const std::string& peer = "") {
  return twin::validate::make_result(family, 0, test, st, node, peer, "", "", "");
}

using twin::validate::Status;

}  // namespace

TEST(Grade, SaysFailuresAsCountsAndOnlyTheTicketsNames) {
  twin::validate::Report rep;
  rep.results = {result("bgp", "session-established", Status::kPassed, "leaf1", "swp1"),
                 result("bgp", "session-established", Status::kFailed, "leaf4", "swp1"),
                 result("bgp", "session-established", Status::kFailed, "spine1", "swp4"),
                 result("reachability", "host-mesh", Status::kFailed, "server1", "server2 10.0.4.10"),
                 result("reachability", "host-mesh", Status::kFailed, "server2", "server1 10.0.1.10"),
                 result("reachability", "loopback-mesh", Status::kFailed, "spine1", "leaf4 10.255.1.4")};
  auto g = twin::training::grade(rep, {}, {"bgp"}, {"server1", "server2"});
  EXPECT_FALSE(g.solved);
  EXPECT_EQ(g.criteria_failing, 2);
  EXPECT_EQ(g.failing, 5);
  ASSERT_EQ(g.symptoms.size(), 3u);
  EXPECT_EQ(g.symptoms[0], "2 BGP sessions are not Established");
  EXPECT_EQ(g.symptoms[1],
            "2 pairs of servers cannot reach each other, among them: server1 cannot reach "
            "server2; server2 cannot reach server1");
  EXPECT_EQ(g.symptoms[2], "1 pair of routers cannot reach each other");
  // Names the ticket does not give never appear: the trainee finds leaf4 and spine1 themselves.
  for (const auto& s : g.symptoms) {
    EXPECT_THAT(s, Not(HasSubstr("leaf4")));
    EXPECT_THAT(s, Not(HasSubstr("spine1")));
  }
}

TEST(Grade, ALoopbackMeshFailureBetweenNamedRoutersNamesNoDirection) {
  // One echo stands for both ways (validators/reachability): which end sent it says nothing.
  twin::validate::Report rep;
  rep.results = {
      result("reachability", "loopback-mesh", Status::kFailed, "spine1", "leaf4 10.255.1.4")};
  auto g = twin::training::grade(rep, {}, {"reachability"}, {"spine1", "leaf4"});
  ASSERT_EQ(g.symptoms.size(), 1u);
  EXPECT_EQ(g.symptoms[0],
            "1 pair of routers cannot reach each other, among them: leaf4 and spine1 cannot "
            "reach each other");
}

TEST(Grade, SolvedNeedsEveryFamilyPassingAndNothingLostOrAdded) {
  twin::validate::Report rep;
  rep.results = {result("bgp", "session-established", Status::kPassed, "leaf1", "swp1"),
                 result("routes", "fib-complete", Status::kPassed, "leaf1")};
  EXPECT_TRUE(twin::training::grade(rep, {}, {"bgp"}, {}).solved);

  // A "fix" that hides the symptom with a route the healthy fabric did not have.
  twin::replay::Diff diff;
  twin::replay::Change gained;
  gained.category = "prefix-gained";
  gained.node = "leaf2";
  gained.subject = "10.255.1.3/32";
  diff.changes.push_back(gained);
  auto g = twin::training::grade(rep, diff, {"bgp"}, {});
  EXPECT_FALSE(g.solved);
  ASSERT_EQ(g.symptoms.size(), 1u);
  EXPECT_THAT(g.symptoms[0], HasSubstr("1 route appeared that the healthy fabric does not have"));

  // A port shut to silence a failing session: lost, so not solved, and said so.
  twin::replay::Diff shut;
  twin::replay::Change down;
  down.category = "admin-state-changed";
  down.node = "leaf4";
  down.subject = "swp1";
  shut.changes.push_back(down);
  auto g2 = twin::training::grade(rep, shut, {}, {});
  EXPECT_FALSE(g2.solved);
  EXPECT_EQ(g2.symptoms, std::vector<std::string>{"1 interface is down that was up at the start"});

  // A result the harness could not get is no pass.
  rep.results.push_back(result("bgp", "prefixes-received", Status::kError, "leaf3"));
  auto g3 = twin::training::grade(rep, {}, {}, {});
  EXPECT_FALSE(g3.solved);
  EXPECT_THAT(g3.symptoms.back(), HasSubstr("1 check got no answer"));
}

TEST(Grade, WhileTestsFailTheDiffAddsOnlyWhatTheyDoNotShow) {
  twin::validate::Report rep;
  rep.results = {result("bgp", "session-established", Status::kFailed, "leaf4", "swp1")};
  twin::replay::Diff diff;
  twin::replay::Change lost;
  lost.category = "session-lost";
  lost.node = "leaf4";
  diff.changes.push_back(lost);
  twin::replay::Change mtu;
  mtu.category = "mtu-changed";
  mtu.node = "leaf2";
  diff.changes.push_back(mtu);
  auto g = twin::training::grade(rep, diff, {}, {});
  EXPECT_EQ(g.symptoms,
            (std::vector<std::string>{"1 BGP session is not Established",
                                      "1 interface's MTU is not what it was at the start"}));
}

TEST(Grade, NamesInTheTicketAreWholeWords) {
  twin::plan::Plan p;
  for (const char* n : {"leaf1", "leaf10", "server2", "spine1"}) {
    twin::plan::Node node;
    node.name = n;
    p.nodes.push_back(node);
  }
  auto names = twin::training::names_in("leaf1's uplink went down; server2 is fine (not spine10)", p);
  EXPECT_EQ(names, (std::set<std::string>{"leaf1", "server2"}));
}

// --- Records ---

TEST(Attempt, RoundTripsAsJsonAndPrintsAsCsv) {
  twin::training::Attempt a;
  a.id = "20261203093138-tr1-wrong-asn";
  a.lab = "tr1";
  a.exercise = "wrong-asn";
  a.title = "An uplink, \"lost\"";
  a.difficulty = 1;
  a.time_budget_s = 600;
  a.started_at = "2026-12-03T09:31:38.143Z";
  a.state = "solved";
  a.time_to_solve_s = 153.4;
  a.hints_used = 2;
  a.checks = 5;
  auto b = twin::training::attempt_from_json(twin::training::to_json(a));
  EXPECT_EQ(twin::training::to_json(b), twin::training::to_json(a));
  EXPECT_EQ(twin::training::to_json(a)["within_budget"], true);
  a.lab = "class,room";
  std::string csv = twin::training::results_csv({a});
  EXPECT_EQ(csv,
            "lab,exercise,difficulty,started_at,ended_at,state,time_to_solve_s,time_budget_s,"
            "within_budget,hints_used,checks,resets,solution_shown,solution_applied\r\n"
            "\"class,room\",wrong-asn,1,2026-12-03T09:31:38.143Z,,solved,153,600,yes,2,5,0,no,no\r\n");
}

TEST(Exercise, AnEmptyCriteriaListIsRefused) {
  Scratch s;
  std::string text = kGood;
  text.replace(text.find("[bgp, reachability]"), 19, "[]");
  twin::Diagnostics d;
  EXPECT_FALSE(twin::training::load_exercise(s.write(text), families(), d));
  EXPECT_THAT(all(d), HasSubstr("criteria: empty list"));
}

// An exercise whose fault would reshape the lab is refused before anything is built (no root
// needed: nothing runs).
TEST(Session, AFaultWithATopologyStepIsRefusedBeforeAnythingIsBuilt) {
  twin::TempDir records;
  ::setenv("TWIN_TRAINING_DIR", records.path.c_str(), 1);
  Scratch s;
  std::string text = kGood;
  auto swap = [&](const std::string& a, const std::string& b) {
    text.replace(text.find(a), a.size(), b);
  };
  swap("topology: topo.yaml", "topology: " + kRoot + "/topologies/clos-2x4.yaml");
  swap("fault: fault.yaml", "fault: " + kRoot + "/scenarios/clos-2x4/changes/add-leaf5.yaml");
  swap("fix: fix.yaml", "fix: " + kCourse + "/fixes/wrong-asn.yaml");
  // The exercise lies outside the repository it names: allowed (`--allow-path`).
  std::string file = s.write(text);
  auto policy = twin::InputPolicy::for_inputs({file}, {kRoot});
  ASSERT_TRUE(policy);
  twin::Diagnostics d;
  auto ex = twin::training::load_exercise(file, families(), d, &*policy);
  ASSERT_TRUE(ex) << all(d);
  twin::proc::SystemRunner runner;
  twin::training::SessionEnv env{runner, twin::validators::make_validators, families(), {}, 2};
  auto r = twin::training::start(*ex, "twtnever", env);
  ::unsetenv("TWIN_TRAINING_DIR");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, twin::ErrorKind::kInput);
  EXPECT_THAT(r.error().message, HasSubstr("is a topology step"));
  EXPECT_FALSE(fs::exists("/run/twin/twtnever"));
}
