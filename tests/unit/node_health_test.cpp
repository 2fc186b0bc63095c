// A dead daemon is never a pass: the node family (validators/node), the runner's handling of
// an unhealthy lab (not waited for, said why), the gate's reason and likely cause for it, how a
// daemon's end is told (exit status, its FRR log), and `twin restart`'s API route.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "fakes.hpp"
#include "twin/causes/causes.hpp"
#include "twin/drivers/frr_node.hpp"
#include "twin/state/state.hpp"
#include "twin/validate/runner.hpp"
#include "twin/verdict/diff.hpp"
#include "validators/node/node.hpp"

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using twin::validate::ProcessHealth;
using twin::validate::Status;
using twin::validate::TestResult;

namespace {

twin::plan::Plan two_routers() {
  twin::plan::Plan p;
  p.lab = "t";
  for (const char* n : {"leaf1", "spine1"}) {
    twin::plan::Node node;
    node.name = n;
    node.daemons = {"zebra", "bgpd"};
    p.nodes.push_back(node);
  }
  twin::plan::Node host;
  host.name = "server1";
  host.kind = twin::topology::NodeKind::kHost;
  p.nodes.push_back(host);
  return p;
}

using Processes = std::map<std::string, std::vector<ProcessHealth>>;

TEST(NodeFamily, EveryDaemonRunningPassesOneTestEach) {
  Processes procs{{"leaf1", {{"zebra", 10, true, true, ""}, {"bgpd", 11, true, true, ""}}},
                  {"spine1", {{"zebra", 20, true, true, ""}, {"bgpd", 21, true, true, ""}}}};
  auto rs = twin::validators::evaluate_node(two_routers(), twin::ok(procs));
  ASSERT_EQ(rs.size(), 4u);
  for (const auto& r : rs) {
    EXPECT_EQ(r.status, Status::kPassed) << r.node << " " << r.peer;
    EXPECT_EQ(r.validator, "node");
    EXPECT_EQ(r.test_name, "daemons");
    EXPECT_FALSE(r.unhealthy);
  }
  EXPECT_EQ(rs[1].node, "leaf1");
  EXPECT_EQ(rs[1].peer, "bgpd");
  EXPECT_EQ(rs[1].observed, "running (PID 11)");
}

TEST(NodeFamily, ADeadDaemonFailsUnhealthyWithHowItEnded) {
  Processes procs{
      {"leaf1",
       {{"zebra", 10, true, true, ""}, {"bgpd", 11, true, false, "killed by signal 9 (SIGKILL)"}}},
      {"spine1",
       {{"zebra", 0, true, false, "no process recorded for it"},
        {"bgpd", 21, false, false, "cannot read /proc"}}}};
  auto rs = twin::validators::evaluate_node(two_routers(), twin::ok(procs));
  ASSERT_EQ(rs.size(), 4u);
  EXPECT_EQ(rs[0].status, Status::kPassed);
  const auto& dead = rs[1];
  EXPECT_EQ(dead.status, Status::kFailed);
  EXPECT_TRUE(dead.unhealthy);
  EXPECT_EQ(dead.message, "bgpd (PID 11) is not running: killed by signal 9 (SIGKILL)");
  EXPECT_EQ(dead.cannot_converge, "bgpd on leaf1 is not running");
  EXPECT_EQ(rs[2].status, Status::kFailed);
  EXPECT_EQ(rs[2].message, "zebra is not running: no process recorded for it");
  // Not knowing is an error, never a pass nor a failure.
  EXPECT_EQ(rs[3].status, Status::kError);
  EXPECT_FALSE(rs[3].unhealthy);
  EXPECT_THAT(rs[3].message, HasSubstr("cannot tell whether bgpd runs: cannot read /proc"));
}

TEST(NodeFamily, AnUnreadableRecordIsAnErrorAndAProbeWithoutProcessesASkip) {
  auto err =
      twin::validators::evaluate_node(two_routers(), twin::harness_error("corrupt state file"));
  ASSERT_EQ(err.size(), 1u);
  EXPECT_EQ(err[0].status, Status::kError);
  EXPECT_THAT(err[0].message, HasSubstr("corrupt state file"));
  auto skip = twin::validators::evaluate_node(two_routers(), twin::usage_error("no processes"));
  ASSERT_EQ(skip.size(), 1u);
  EXPECT_EQ(skip[0].status, Status::kSkipped);
}

// A probe whose processes are a table, and families that fail or pass as told.
class TableProbe final : public twin::validate::LabProbe {
 public:
  twin::Result<nlohmann::json> frr_json(const twin::plan::Node&, const std::string&,
                                        const std::string&) override {
    return twin::harness_error("not asked");
  }
  twin::Result<nlohmann::json> ip_json(const twin::plan::Node&,
                                       const std::vector<std::string>&) override {
    return twin::harness_error("not asked");
  }
  std::vector<twin::validate::PingResult> ping(
      const twin::plan::Node&, const std::vector<twin::validate::PingRequest>&) override {
    return {};
  }
  twin::Result<Processes> processes(const twin::plan::Plan&) override {
    ++asked;
    return twin::ok(table);
  }
  Processes table;
  int asked = 0;
};

class Fixed final : public twin::validate::Validator {
 public:
  Fixed(std::string name, Status s, bool control)
      : name_(std::move(name)), s_(s), control_(control) {}
  std::string name() const override { return name_; }
  std::vector<TestResult> run(twin::validate::Context&) override {
    ++runs;
    return {twin::validate::make_result(name_, 0, "t", s_, "spine1", "swp1", "x", "y", "m")};
  }
  bool control_plane() const override { return control_; }
  bool rides_on_control_plane() const override { return !control_; }
  int runs = 0;

 private:
  std::string name_;
  Status s_;
  bool control_;
};

TEST(RunValidation, AnUnhealthyLabIsNotWaitedForAndSaysWhy) {
  auto plan = two_routers();
  TableProbe probe;
  probe.table = {{"leaf1", {{"zebra", 10, true, true, ""}, {"bgpd", 11, true, false, "gone"}}}};
  twin::validate::Context ctx{plan, probe};
  std::vector<std::unique_ptr<twin::validate::Validator>> vs;
  vs.push_back(std::make_unique<twin::validators::NodeValidator>());
  vs.push_back(std::make_unique<Fixed>("bgp", Status::kFailed, true));
  vs.push_back(std::make_unique<Fixed>("reach", Status::kFailed, false));
  twin_test::FakeTime time;
  twin::validate::RunOptions opts;
  opts.time = &time;
  opts.converge_timeout = std::chrono::seconds(30);
  opts.retry_interval = std::chrono::milliseconds(250);
  auto report = twin::validate::run_validation(ctx, vs, opts);
  // Done after the confirmation (2 s) for the control plane and again for the riders that ran
  // once it was done; nowhere near the 30 s window.
  EXPECT_LE(time.slept(), std::chrono::milliseconds(4500));
  EXPECT_GE(time.slept(), std::chrono::milliseconds(2000));
  ASSERT_EQ(report.results.size(), 4u);
  EXPECT_EQ(report.results[1].status, Status::kFailed);
  EXPECT_TRUE(report.results[1].unhealthy);
  const auto& bgp = report.results[2];
  EXPECT_EQ(bgp.validator, "bgp");
  EXPECT_EQ(bgp.cannot_converge, "the lab is unhealthy: bgpd on leaf1 is not running");
  EXPECT_EQ(report.results[3].validator, "reach");
  EXPECT_FALSE(report.results[3].cannot_converge.empty());
  EXPECT_EQ(report.exit_code(), 1);
}

TEST(RunValidation, AHealthyLabKeepsTheWholeWindowForFailures) {
  auto plan = two_routers();
  TableProbe probe;
  probe.table = {{"leaf1", {{"zebra", 10, true, true, ""}}}};
  twin::validate::Context ctx{plan, probe};
  std::vector<std::unique_ptr<twin::validate::Validator>> vs;
  vs.push_back(std::make_unique<twin::validators::NodeValidator>());
  vs.push_back(std::make_unique<Fixed>("bgp", Status::kFailed, true));
  twin_test::FakeTime time;
  twin::validate::RunOptions opts;
  opts.time = &time;
  opts.converge_timeout = std::chrono::seconds(30);
  auto report = twin::validate::run_validation(ctx, vs, opts);
  EXPECT_GE(time.slept(), std::chrono::seconds(30));
  ASSERT_EQ(report.results.size(), 2u);
  EXPECT_EQ(report.results[0].status, Status::kPassed);
  EXPECT_EQ(probe.asked, 1);  // passed: not asked again
  EXPECT_TRUE(report.results[1].cannot_converge.empty());
}

// A family whose failure says by itself that it cannot converge (a mismatch at both ends).
class Explained final : public twin::validate::Validator {
 public:
  std::string name() const override { return "ospf"; }
  std::vector<TestResult> run(twin::validate::Context&) override {
    auto r = twin::validate::make_result("ospf", 1, "t", Status::kFailed, "r1", "eth1", "", "", "");
    r.cannot_converge = "hello interval 10 s on r1, 1 s on r2";
    return {r};
  }
  bool control_plane() const override { return true; }
};

TEST(RunValidation, AnExplainedFailureIsFinalAfterTheConfirmation) {
  auto plan = two_routers();
  TableProbe probe;
  twin::validate::Context ctx{plan, probe};
  std::vector<std::unique_ptr<twin::validate::Validator>> vs;
  vs.push_back(std::make_unique<Explained>());
  twin_test::FakeTime time;
  twin::validate::RunOptions opts;
  opts.time = &time;
  opts.explained_hold = std::chrono::milliseconds(3000);
  auto report = twin::validate::run_validation(ctx, vs, opts);
  EXPECT_GE(time.slept(), std::chrono::milliseconds(3000));
  EXPECT_LT(time.slept(), std::chrono::milliseconds(3500));
  ASSERT_EQ(report.results.size(), 1u);
  EXPECT_EQ(report.results[0].status, Status::kFailed);
}

TEST(GateReasons, ADeadDaemonRanksRightAfterAFailedStep) {
  twin::validate::Report after;
  auto dead = twin::validate::make_result("node", 0, "daemons", Status::kFailed, "leaf1", "bgpd",
                                          "running", "not running",
                                          "bgpd (PID 11) is not running: killed by signal 11");
  dead.unhealthy = true;
  after.results.push_back(dead);
  after.results.push_back(twin::validate::make_result("bgp", 0, "session-established",
                                                      Status::kFailed, "spine1", "swp1",
                                                      "Established", "Active", ""));
  auto v = twin::replay::decide({}, after, {}, nullptr);
  EXPECT_EQ(v.decision, twin::replay::Decision::kReject);
  ASSERT_EQ(v.reasons.size(), 2u);
  EXPECT_EQ(v.reasons[0].category, "daemon-dead");
  EXPECT_EQ(v.reasons[0].rank, 2);
  EXPECT_THAT(v.reasons[0].message, HasSubstr("1 daemon not running (leaf1 bgpd: bgpd (PID 11)"));
  EXPECT_EQ(v.reasons[1].category, "validator-failed");
  // And the likely cause names the daemon and the repair.
  twin::replay::CauseFacts facts;
  facts.after = &after;
  auto causes = twin::replay::likely_causes(two_routers(), facts);
  ASSERT_FALSE(causes.empty());
  EXPECT_EQ(causes[0].rule, "daemon-dead");
  EXPECT_EQ(causes[0].text,
            "bgpd on leaf1 is not running: every test through it fails until it is back "
            "(twin restart leaf1)");
}

TEST(ApplyResult, AnUnhealthyBaselineExitsFive) {
  twin::replay::ApplyResult r;
  r.stage = "baseline-unhealthy";
  EXPECT_EQ(r.exit_code(), 5);
  r.stage = "baseline-failed";
  EXPECT_EQ(r.exit_code(), 4);
}

TEST(ProcessEnd, WaitStatusesInWords) {
  EXPECT_EQ(twin::state::wait_status_text(SIGKILL), "killed by signal 9 (SIGKILL)");
  EXPECT_EQ(twin::state::wait_status_text(SIGSEGV | 0x80),
            "killed by signal 11 (SIGSEGV), core dumped");
  EXPECT_EQ(twin::state::wait_status_text(1 << 8), "exited with status 1");
  // A process that is not a zombie (this one) has no exit status to tell.
  EXPECT_EQ(twin::state::exit_status_text(getpid(), 0), "");
}

TEST(ProcessEnd, AZombiesExitStatusIsReadUntilItIsReaped) {
  pid_t child = fork();
  if (child == 0) _exit(3);
  ASSERT_GT(child, 0);
  // The child is a zombie until waited for: poll /proc without sleeping a fixed time.
  std::string said;
  for (int i = 0; i < 100000 && said.empty(); ++i)
    said = twin::state::exit_status_text(child, twin::state::process_start_time(child));
  EXPECT_EQ(said, "exited with status 3");
  int st = 0;
  waitpid(child, &st, 0);
  EXPECT_EQ(twin::state::exit_status_text(child, 0), "");
}

TEST(ProcessEnd, FrrsLastWordsFromItsLog) {
  const fs::path log = fs::temp_directory_path() / ("twin-lastwords-" + std::to_string(getpid()));
  std::ofstream(log) << "2026/12/06 10:00:00 BGP: [M7Q4P-46WDR] vty[5]@> enable\n"
                        "2026/12/06 10:00:01 BGP: [X1AB2-CDE3F] Received signal 11 at 1733 "
                        "(si_addr 0x0, PC 0x55d1); aborting...\n"
                        "2026/12/06 10:00:01 BGP: [Y2XY3-ZZZ4Q] in thread bgp_read scheduled\n";
  EXPECT_EQ(twin::drivers::frr_last_words(log.string()),
            "Received signal 11 at 1733 (si_addr 0x0, PC 0x55d1); aborting...");
  std::ofstream(log) << "2026/12/06 10:00:00 ZEBRA: [AAAAA-BBBBB] client 25 says hello\n";
  EXPECT_EQ(twin::drivers::frr_last_words(log.string()), "");
  fs::remove(log);
  EXPECT_EQ(twin::drivers::frr_last_words(log.string()), "");  // no log at all
}

TEST(ProcessEnd, AnFrrNodesDaemonsAgainstItsRecord) {
  auto plan = two_routers();
  const auto& leaf = *plan.find("leaf1");
  std::vector<twin::state::Resource> recorded{
      {"process", "zebra", "leaf1", getpid(), twin::state::process_start_time(getpid())},
      {"process", "bgpd", "leaf1", getpid(), 1}};  // a start time that is not this process's
  auto h = twin::drivers::frr_process_health(leaf, recorded);
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h[0].name, "zebra");
  EXPECT_TRUE(h[0].running);
  EXPECT_EQ(h[1].name, "bgpd");
  EXPECT_FALSE(h[1].running);  // a reused PID is not the daemon
  EXPECT_THAT(h[1].detail, HasSubstr("ended without a word"));
  auto none = twin::drivers::frr_process_health(leaf, {});
  ASSERT_EQ(none.size(), 2u);
  EXPECT_FALSE(none[0].running);
  EXPECT_THAT(none[0].detail, HasSubstr("no process recorded"));
}

}  // namespace
