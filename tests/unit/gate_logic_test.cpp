// The rollout gate's logic (twin/gate/gate.hpp) against fakes: a fake node driver shows the
// probe output a real FRR 8.4 clos-2x4 lab gave before and after each recorded change
// (tests/data/gate/<case>/), validators answer with that run's recorded results, and time
// passes only when the gate sleeps. Baseline, apply, settle, verdict, rollback (and its
// failure), per-step validation, bisection and Ctrl-C run in milliseconds, without root.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "tests/unit/fakes.hpp"
#include "tests/unit/recorded.hpp"
#include "twin/changeset/changeset.hpp"
#include "twin/changeset/intent.hpp"
#include "twin/changeset/steps.hpp"
#include "twin/core/util.hpp"
#include "twin/engine/lab.hpp"
#include "twin/gate/gate.hpp"
#include "twin/verdict/watch.hpp"

namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using twin::replay::ApplyResult;
using twin::replay::ChangeSet;
using twin::replay::Decision;
using twin::replay::Step;
using twin::replay::StepKind;
using twin_test::FakeDriver;
using twin_test::FakeLab;
using twin_test::FakeNetwork;
using twin_test::FakeRunner;
using twin_test::FakeTime;
using twin_test::FakeTraffic;

const std::string kGate = std::string(TWIN_TEST_DATA) + "/gate";

const twin::plan::Plan& clos() { return twin_test::recorded_clos_plan(); }

// The recorded run `c`: its baseline as the good state, its state after the change as the bad.
void load_case(FakeNetwork& net, const std::string& c) {
  net.good = twin_test::load_observations(kGate + "/" + c + "/baseline.observe.jsonl");
  net.bad = twin_test::load_observations(kGate + "/" + c + "/after.observe.jsonl");
  net.good_report = twin_test::load_report(kGate + "/" + c + "/baseline.results.json");
  net.bad_report = twin_test::load_report(kGate + "/" + c + "/after.results.json");
}

ChangeSet recorded_change(const std::string& c) {
  twin::Diagnostics d;
  auto cs = twin::replay::load_change_set(kGate + "/" + c + "/change.yaml", clos(), d);
  if (!cs) throw std::runtime_error("loading " + c + "/change.yaml:\n" + twin_test::dump(d));
  return *cs;
}

// A change of `n` FRR steps on leaf1..leaf4 in turn; the steps numbered in `breaking`
// (1-based) carry a line the fake network breaks on.
ChangeSet leaf_steps(int n, std::set<int> breaking) {
  ChangeSet cs;
  cs.name = "maintenance";
  for (int i = 1; i <= n; ++i) {
    Step s;
    s.name = "step " + std::to_string(i);
    s.body = twin::replay::FrrStep{};
    s.frr().nodes = {"leaf" + std::to_string(1 + (i - 1) % 4)};
    s.frr().add = breaking.count(i) ? "! BREAK\n" : "! harmless " + std::to_string(i) + "\n";
    cs.steps.push_back(s);
  }
  return cs;
}

bool breaks_on_marker(const std::map<std::string, std::vector<std::string>>& applied) {
  for (const auto& [node, texts] : applied)
    for (const auto& t : texts)
      if (t.find("BREAK") != std::string::npos) return true;
  return false;
}

struct Harness {
  FakeNetwork net;
  FakeDriver driver{net};
  FakeRunner runner;
  FakeTime time;
  FakeLab lab;
  twin::state::State st;
  twin::replay::ApplyOptions opts;
  std::function<std::unique_ptr<twin::replay::TrafficProbe>()> traffic;

  Harness() {
    st.lab = "rec";
    st.plan = clos();
    opts.parallel = 2;
    lab.net = &net;
  }

  twin::Result<ApplyResult> run(const ChangeSet& cs) {
    twin::replay::GateEnv env{runner,
                              [this](const twin::plan::Node&) -> const twin::drivers::NodeDriver& {
                                return driver;
                              },
                              time, lab, twin_test::recorded_validators(net), traffic};
    return twin::replay::run_gate(st, cs, opts, env);
  }

  twin::replay::GateEnv env() {
    return twin::replay::GateEnv{runner,
                                 [this](const twin::plan::Node&) -> const twin::drivers::NodeDriver& {
                                   return driver;
                                 },
                                 time, lab, twin_test::recorded_validators(net), traffic};
  }

  long count(const std::string& line) const {
    return std::count(net.log.begin(), net.log.end(), line);
  }
};

TEST(GateLogic, ApprovesAChangeWhoseLossesAreIntendedAndSavesTheIntent) {
  Harness h;
  load_case(h.net, "drain-spine2");
  auto cs = recorded_change("drain-spine2");
  auto r = h.run(cs);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->verdict.decision, Decision::kApprove);
  EXPECT_EQ(r->exit_code(), 0);
  EXPECT_EQ(r->stage, "judged");
  EXPECT_FALSE(r->rolled_back);
  EXPECT_TRUE(r->intent_saved);
  ASSERT_TRUE(h.lab.saved.has_value());
  // The saved intent is the change's: spine2 drained.
  EXPECT_TRUE(h.lab.saved->find("spine2")->drained);
  EXPECT_EQ(h.lab.saved->sessions.size(), twin::replay::intended_plan(clos(), cs).sessions.size());
  EXPECT_LT(h.lab.saved->sessions.size(), clos().sessions.size());
  EXPECT_EQ(h.count("apply spine2"), 1);
  EXPECT_EQ(h.count("reload spine2"), 0);
  // Every FRR node's configuration was snapshotted before the change.
  EXPECT_EQ(r->config_before.size(), 6u);
  // The settle loop waited on the clock seam, not on the wall clock, at least as long as FRR's
  // idle evidence must hold.
  EXPECT_GE(h.time.slept(), twin::replay::kAtTargetHold);
}

// A first static route on a node without staticd: the daemon is started before the lines (a
// reshape of daemons only), runs on in the saved intent, and a rollback stops it again.
ChangeSet with_static_route(ChangeSet cs) {
  Step s;
  s.name = "static route on leaf1";
  s.body = twin::replay::FrrStep{};
  s.frr().nodes = {"leaf1"};
  s.frr().add = "ip route 10.99.0.0/16 blackhole\n";
  cs.steps.insert(cs.steps.begin(), s);
  return cs;
}

TEST(GateLogic, AStaticRouteStartsStaticdWhichTheApprovalKeeps) {
  Harness h;
  load_case(h.net, "drain-spine2");
  h.st.plan.find("leaf1")->daemons = {"zebra", "bgpd"};  // recorded when every node ran staticd
  auto r = h.run(with_static_route(recorded_change("drain-spine2")));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->verdict.decision, Decision::kApprove);
  ASSERT_EQ(h.lab.reshaped_to.size(), 1u);
  EXPECT_THAT(h.lab.reshaped_to[0].find("leaf1")->daemons, ElementsAre("zebra", "bgpd", "staticd"));
  EXPECT_EQ(h.lab.reshaped_to[0].find("leaf2")->daemons, h.st.plan.find("leaf2")->daemons);
  EXPECT_EQ(r->steps[0].detail, "configured 1 node(s); started leaf1 staticd");
  ASSERT_TRUE(h.lab.saved.has_value());
  EXPECT_THAT(h.lab.saved->find("leaf1")->daemons, ElementsAre("zebra", "bgpd", "staticd"));
}

TEST(GateLogic, ARejectedStaticRouteStopsTheStaticdItStarted) {
  Harness h;
  load_case(h.net, "withdraw-loopback");
  h.st.plan.find("leaf1")->daemons = {"zebra", "bgpd"};
  auto r = h.run(with_static_route(recorded_change("withdraw-loopback")));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->verdict.decision, Decision::kReject);
  EXPECT_TRUE(r->rollback_ok) << r->rollback_detail;
  ASSERT_EQ(h.lab.reshaped_to.size(), 2u);
  EXPECT_THAT(h.lab.reshaped_to[0].find("leaf1")->daemons, ElementsAre("zebra", "bgpd", "staticd"));
  EXPECT_THAT(h.lab.reshaped_to[1].find("leaf1")->daemons, ElementsAre("zebra", "bgpd"));
}

TEST(GateLogic, RejectsALostPrefixAndProvesTheRollback) {
  Harness h;
  load_case(h.net, "withdraw-loopback");
  auto r = h.run(recorded_change("withdraw-loopback"));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->verdict.decision, Decision::kReject);
  EXPECT_EQ(r->exit_code(), 1);
  ASSERT_FALSE(r->verdict.reasons.empty());
  EXPECT_EQ(r->verdict.reasons.front().category, "prefix-lost");
  EXPECT_THAT(r->verdict.reasons.front().message, HasSubstr("10.255.1.1/32"));
  // Rolled back to the snapshot and proven back at the baseline.
  EXPECT_TRUE(r->rolled_back);
  EXPECT_TRUE(r->rollback_ok) << r->rollback_detail;
  EXPECT_EQ(h.count("apply leaf1"), 1);
  EXPECT_EQ(h.count("reload leaf1"), 1);
  EXPECT_FALSE(h.net.shows_bad());
  EXPECT_FALSE(h.lab.saved.has_value());
  ASSERT_TRUE(r->rollback.has_value());
  EXPECT_EQ(r->rollback->name, "rollback");
}

TEST(GateLogic, NoRollbackLeavesTheRejectedChangeInPlace) {
  Harness h;
  load_case(h.net, "withdraw-loopback");
  h.opts.no_rollback = true;
  auto r = h.run(recorded_change("withdraw-loopback"));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->verdict.decision, Decision::kReject);
  EXPECT_FALSE(r->rolled_back);
  EXPECT_EQ(h.count("reload leaf1"), 0);
  EXPECT_TRUE(h.net.shows_bad());
}

// A sysctl step: the old value of each key is read before the first write, and the rollback
// writes them back, the last written first.
ChangeSet sysctl_change(std::vector<std::pair<std::string, std::string>> set) {
  ChangeSet cs;
  cs.name = "kernel settings";
  Step s;
  s.name = "forwarding off on spine1";
  s.body = twin::replay::SysctlStep{{"spine1"}, std::move(set)};
  cs.steps.push_back(s);
  return cs;
}

TEST(GateLogic, ASysctlStepIsRolledBackToTheValuesBeforeIt) {
  Harness h;
  load_case(h.net, "withdraw-loopback");
  h.net.sysctls["spine1"] = {{"net.ipv4.ip_forward", "1"}, {"net.ipv4.conf.all.rp_filter", "0"}};
  h.net.sysctl_broken = [](const auto& s) { return s.at("spine1").at("net.ipv4.ip_forward") == "0"; };
  auto r = h.run(sysctl_change({{"net.ipv4.ip_forward", "0"}, {"net.ipv4.conf.all.rp_filter", "2"}}));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->verdict.decision, Decision::kReject);
  ASSERT_EQ(r->steps.size(), 1u);
  EXPECT_EQ(r->steps[0].kind, "sysctl");
  EXPECT_EQ(r->steps[0].detail, "2 setting(s) written on 1 node(s)");
  EXPECT_TRUE(r->rollback_ok) << r->rollback_detail;
  EXPECT_THAT(r->rollback_detail, HasSubstr("2 kernel setting(s) written back"));
  std::vector<std::string> writes;
  for (const auto& l : h.net.log)
    if (l.rfind("sysctl ", 0) == 0) writes.push_back(l);
  EXPECT_THAT(writes, ElementsAre("sysctl spine1 net.ipv4.ip_forward=0",
                                  "sysctl spine1 net.ipv4.conf.all.rp_filter=2",
                                  "sysctl spine1 net.ipv4.conf.all.rp_filter=0",
                                  "sysctl spine1 net.ipv4.ip_forward=1"));
  EXPECT_EQ(h.net.sysctls["spine1"]["net.ipv4.ip_forward"], "1");
}

TEST(GateLogic, ASysctlTheKernelLacksFailsTheStepAndRestoresWhatWasWritten) {
  Harness h;
  load_case(h.net, "withdraw-loopback");
  h.net.sysctls["spine1"] = {{"net.ipv4.ip_forward", "1"}};
  auto r = h.run(sysctl_change({{"net.ipv4.ip_forward", "0"}, {"net.ipv4.tcp_nothing", "1"}}));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->verdict.decision, Decision::kReject);
  ASSERT_FALSE(r->verdict.reasons.empty());
  EXPECT_EQ(r->verdict.reasons[0].category, "step-failed");
  EXPECT_THAT(r->verdict.reasons[0].message,
              HasSubstr("node spine1: the kernel has no setting net.ipv4.tcp_nothing"));
  EXPECT_EQ(h.net.sysctls["spine1"]["net.ipv4.ip_forward"], "1");
}

// A live orchestrator run (issue 48): judged by what it changed on the nodes, read back
// through their drivers; a run that exits non-zero fails its step; the rollback restores
// running and saved configs on exactly the nodes it changed; the restart check boots the nodes
// from what they saved, so a run without `write memory` diverges.
ChangeSet run_change(const std::string& command = "ansible-playbook site.yml") {
  ChangeSet cs;
  cs.name = "run";
  Step s;
  s.name = "playbook";
  s.body = twin::replay::RunStep{command, std::chrono::minutes(1)};
  cs.steps = {s};
  return cs;
}

void with_mgmt(Harness& h) {
  h.st.plan.mgmt = twin::plan::Mgmt{"172.30.9.0/24", "172.30.9.1/24", "tw-rec.mgmt", "twm0",
                                    "mgmt0",         "admin",         "twin_mgmt_rec",
                                    "/nonexistent/ssh"};
}

TEST(GateLogic, ARunIsJudgedByWhatItChangedAndRolledBackRunningAndSaved) {
  Harness h;
  load_case(h.net, "withdraw-loopback");
  with_mgmt(h);
  h.runner.on_run = [&](const twin::proc::Command& c, twin::proc::Output&) {
    if (c.argv.empty() || c.argv[0] != "/bin/sh") return;
    std::lock_guard lk(h.net.mu);
    h.net.applied["leaf1"].push_back("router bgp 65101\n no network 10.255.1.1/32\n");
    h.net.startup["leaf1"] = "saved by the run\n";
  };
  auto r = h.run(run_change());
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->verdict.decision, Decision::kReject);
  ASSERT_EQ(r->steps.size(), 1u);
  EXPECT_EQ(r->steps[0].kind, "run");
  EXPECT_EQ(r->steps[0].status, "applied");
  EXPECT_THAT(r->steps[0].detail, HasSubstr("ran `ansible-playbook site.yml` in "));
  EXPECT_THAT(r->steps[0].detail,
              HasSubstr("running config changed on leaf1; saved on leaf1"));
  // The command ran through the shell, in the lab's environment.
  bool ran = false;
  for (const auto& c : h.runner.commands)
    if (c.find("/bin/sh -c") == 0 && c.find("TWIN_INVENTORY=") != std::string::npos &&
        c.find("ansible-playbook site.yml") != std::string::npos)
      ran = true;
  EXPECT_TRUE(ran);
  EXPECT_TRUE(r->rollback_ok) << r->rollback_detail;
  EXPECT_EQ(h.count("reload leaf1"), 1);
  EXPECT_EQ(h.count("reload leaf2"), 0);  // only what the run changed
  EXPECT_THAT(r->rollback_detail, HasSubstr("saved config restored on leaf1"));
  EXPECT_EQ(h.net.startup["leaf1"], "saved leaf1\n");  // what leaf1 had saved before the run
}

// --record: the nodes the run changed, each a replace step of its config after the run.
TEST(GateLogic, ARecordedRunReplacesTheConfigsOfTheNodesItChanged) {
  ApplyResult r;
  r.lab = "rec";
  r.started_at = "2026-12-07T10:00:00Z";
  r.config_before = {{"leaf1", "a\n"}, {"leaf2", "b\n"}, {"spine1", "c\n"}};
  r.config_after = {{"leaf1", "a\nx\n"}, {"leaf2", "b\n"}, {"spine1", "c\ny\n"}};
  auto rec = twin::replay::record_change(r, "run.configs");
  EXPECT_EQ(rec.configs, (std::map<std::string, std::string>{{"leaf1", "a\nx\n"},
                                                             {"spine1", "c\ny\n"}}));
  EXPECT_THAT(rec.yaml, HasSubstr("steps:\n  - name: leaf1\n    frr: {node: leaf1, replace: "
                                  "run.configs/leaf1.conf}\n  - name: spine1\n"));
  EXPECT_THAT(rec.yaml, Not(HasSubstr("leaf2")));
  // Nothing changed: a change set that waits, not an empty one.
  r.config_after = r.config_before;
  EXPECT_THAT(twin::replay::record_change(r, "x").yaml, HasSubstr("wait: {until: converged}"));
}

TEST(GateLogic, ARunThatExitsNonZeroFailsItsStep) {
  Harness h;
  load_case(h.net, "withdraw-loopback");
  with_mgmt(h);
  h.runner.on_run = [](const twin::proc::Command& c, twin::proc::Output& o) {
    if (!c.argv.empty() && c.argv[0] == "/bin/sh") {
      o.exit_code = 2;
      o.out = "fatal: [leaf1]: FAILED!\n";
    }
  };
  auto r = h.run(run_change());
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->verdict.decision, Decision::kReject);
  ASSERT_FALSE(r->verdict.reasons.empty());
  EXPECT_EQ(r->verdict.reasons[0].category, "step-failed");
  EXPECT_THAT(r->verdict.reasons[0].message, HasSubstr("the run exited 2"));
  EXPECT_THAT(r->steps[0].text, HasSubstr("fatal: [leaf1]: FAILED!"));
}

TEST(GateLogic, ARunThatDidNotSaveDivergesAtTheRestartCheck) {
  Harness h;
  load_case(h.net, "withdraw-loopback");
  with_mgmt(h);
  h.net.broken = [](const auto&) { return false; };  // the change itself is harmless
  h.opts.restart_check = true;
  h.runner.on_run = [&](const twin::proc::Command& c, twin::proc::Output&) {
    if (c.argv.empty() || c.argv[0] != "/bin/sh") return;
    std::lock_guard lk(h.net.mu);
    h.net.applied["leaf1"].push_back("ip prefix-list P seq 5 permit 10.0.0.0/8\n");
  };
  auto r = h.run(run_change());
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->verdict.decision, Decision::kReject);
  ASSERT_FALSE(r->verdict.reasons.empty());
  EXPECT_EQ(r->verdict.reasons[0].category, "restart-divergence");
  EXPECT_THAT(r->verdict.reasons[0].message, HasSubstr("running config not saved on leaf1"));
  EXPECT_EQ(h.count("save leaf1"), 0);  // the nodes restart from what they saved themselves
  ASSERT_FALSE(r->notes.empty());
  EXPECT_THAT(r->notes[0].text, HasSubstr("did not save it (no `write memory`)"));
}

// A vxlan step: each node's VNIs are recorded before the first change, the step runs the
// difference, and the rollback turns what it left back into the baseline's. Here the second
// step fails (leaf2 has no VNI 200): leaf1's new VNI goes again.
TEST(GateLogic, AVxlanStepIsRolledBackToTheBaselineVnis) {
  Harness h;
  load_case(h.net, "withdraw-loopback");
  ChangeSet cs;
  cs.name = "vni";
  Step add;
  add.name = "VNI 100 on leaf1";
  add.body = twin::replay::VxlanStep{{"leaf1"}, 100, {"swp3"}, false};
  Step rm;
  rm.name = "no VNI 200 on leaf2";
  rm.body = twin::replay::VxlanStep{{"leaf2"}, 200, {}, true};
  cs.steps = {add, rm};
  auto r = h.run(cs);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->verdict.decision, Decision::kReject);
  ASSERT_EQ(r->steps.size(), 2u);
  EXPECT_EQ(r->steps[0].kind, "vxlan");
  EXPECT_EQ(r->steps[0].detail, "VNI 100 on 1 node(s) with 1 port(s)");
  EXPECT_EQ(r->steps[1].status, "failed");
  EXPECT_EQ(r->steps[1].detail, "node leaf2 has no VNI 200 to remove");
  EXPECT_TRUE(r->rollback_ok) << r->rollback_detail;
  EXPECT_THAT(r->rollback_detail, HasSubstr("the VNIs of 1 VTEP(s) put back"));
  std::vector<std::string> leaf1;
  for (const auto& l : h.net.log)
    if (l.rfind("interfaces leaf1: ", 0) == 0) leaf1.push_back(l);
  ASSERT_EQ(leaf1.size(), 2u);
  EXPECT_EQ(leaf1[0],
            "interfaces leaf1: link add vx100 type vxlan id 100 local 10.255.1.1 dstport 4789 "
            "nolearning df set\nlink set vx100 mtu 1500\nlink add br100 type bridge\n"
            "link set vx100 master br100\nlink set dev vx100 type bridge_slave learning off\n"
            "link set swp3 master br100\nlink set br100 up\nlink set vx100 up\n");
  EXPECT_EQ(leaf1[1], "interfaces leaf1: link del vx100\nlink del br100\n");
}

// The restart check: an approved change's nodes save their config and restart from it; a
// setting that breaks the network only then is rejected and rolled back, startup config too.
TEST(GateLogic, TheRestartCheckRejectsALatentSettingAndRestoresTheStartupConfig) {
  Harness h;
  load_case(h.net, "withdraw-loopback");
  h.net.broken = [](const auto&) { return false; };            // fine while running
  h.net.latent = [](const auto& a) { return a.count("leaf1") > 0; };  // broken once restarted
  h.opts.restart_check = true;
  std::vector<std::string> said;
  h.opts.progress = [&](const std::string& s) { said.push_back(s); };
  auto r = h.run(leaf_steps(1, {}));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->verdict.decision, Decision::kReject);
  // Short of the approved state with FRR idle: nothing in flight would bring it back, so
  // settling ends there instead of at the convergence timeout — and without the floor for
  // bgpd's held-back re-announcements, as restarted daemons were not configured while running.
  auto settled = std::find_if(said.begin(), said.end(), [](const std::string& s) {
    return s.rfind("restart check: 3 daemon(s) started; settling: ", 0) == 0;
  });
  ASSERT_NE(settled, said.end()) << ::testing::PrintToString(said);
  EXPECT_THAT(*settled, HasSubstr("not back at the expected state"));
  EXPECT_LT(std::stoi(settled->substr(settled->find("after ") + 6)),
            twin::replay::kEvidenceFloor.count())
      << *settled;
  ASSERT_EQ(r->verdict.reasons.size(), 1u);
  const auto& reason = r->verdict.reasons[0];
  EXPECT_EQ(reason.category, "restart-divergence");
  EXPECT_EQ(reason.rank, 8);
  EXPECT_THAT(reason.message,
              HasSubstr("after restarting the routing daemons of leaf1 from their saved config, "
                        "the network came back different: prefixes lost: 5"));
  EXPECT_THAT(reason.subjects, Contains(HasSubstr("prefix-lost: leaf2 10.255.1.1/32")));
  ASSERT_TRUE(r->restart_check.has_value());
  EXPECT_FALSE(r->restart_check->ok);
  EXPECT_EQ(r->restart_check->nodes, std::vector<std::string>{"leaf1"});
  EXPECT_EQ(r->restart_check->daemons, 3);
  ASSERT_TRUE(r->restart_check->phase.has_value());
  EXPECT_EQ(r->restart_check->phase->name, "after restart");
  EXPECT_GT(r->restart_check->diff.count("prefix-lost", false), 0);
  EXPECT_TRUE(r->rolled_back);
  EXPECT_TRUE(r->rollback_ok) << r->rollback_detail;
  EXPECT_TRUE(r->configs_saved.empty());
  // Saved, restarted, restored, and the restored running config saved as startup config again.
  std::vector<std::string> order;
  for (const auto& l : h.net.log)
    if (l.find("leaf1") != std::string::npos && l.rfind("interfaces", 0) != 0) order.push_back(l);
  // The restarted node goes straight to the restore ladder's restart rung: booted again from
  // the baseline's config (written as its startup config).
  EXPECT_THAT(order, ElementsAre("apply leaf1", "save leaf1", "restart leaf1", "reload leaf1",
                                 "save leaf1", "startup leaf1", "restart leaf1"));
  EXPECT_EQ(r->rollback_rung, "restart");
  EXPECT_FALSE(h.net.shows_bad());
}

TEST(GateLogic, AnApprovalSavesTheTouchedNodesStartupConfigWithOrWithoutTheRestartCheck) {
  for (bool check : {true, false}) {
    SCOPED_TRACE(check);
    Harness h;
    load_case(h.net, "withdraw-loopback");
    h.net.broken = [](const auto&) { return false; };
    h.opts.restart_check = check;
    auto r = h.run(leaf_steps(2, {}));  // leaf1 and leaf2
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->verdict.decision, Decision::kApprove);
    EXPECT_EQ(r->configs_saved, (std::vector<std::string>{"leaf1", "leaf2"}));
    EXPECT_EQ(h.count("save leaf1"), 1);
    EXPECT_EQ(h.count("save leaf2"), 1);
    EXPECT_EQ(h.count("save leaf3"), 0);
    EXPECT_EQ(h.count("restart leaf1"), check ? 1 : 0);
    EXPECT_EQ(r->restart_check.has_value(), check);
    if (check) {
      EXPECT_TRUE(r->restart_check->ok) << r->restart_check->detail;
      EXPECT_THAT(r->restart_check->detail,
                  HasSubstr("leaf1, leaf2 restarted from the saved config (6 daemons)"));
    }
  }
}

TEST(GateLogic, ARevertedApprovalLeavesTheStartupConfigAsItWas) {
  Harness h;
  load_case(h.net, "withdraw-loopback");
  h.net.broken = [](const auto&) { return false; };
  h.opts.restart_check = true;
  h.opts.revert = true;
  auto r = h.run(leaf_steps(1, {}));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->verdict.decision, Decision::kApprove);
  EXPECT_TRUE(r->rollback_ok);
  EXPECT_TRUE(r->configs_saved.empty());
  // Saved for the restart, then saved again once the running config was restored.
  EXPECT_EQ(h.count("save leaf1"), 2);
  EXPECT_EQ(h.count("reload leaf1"), 1);
}

TEST(GateLogic, AFlowOutLongerThanTheBudgetRejectsForOutage) {
  Harness h;
  load_case(h.net, "withdraw-loopback");
  h.net.broken = [](const auto&) { return false; };  // the end state is the baseline
  std::vector<std::string> started;
  h.traffic = [&] {
    return std::make_unique<FakeTraffic>(
        std::map<std::string, double>{{"server1 -> server2 10.0.4.10", 3000},
                                      {"leaf2 -> leaf3 10.255.1.3", 200}},
        &started);
  };
  h.opts.outage.budget = std::chrono::milliseconds(1000);
  auto r = h.run(leaf_steps(1, {}));  // works on leaf1
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->verdict.decision, Decision::kReject);
  ASSERT_EQ(r->verdict.reasons.size(), 1u);
  EXPECT_EQ(r->verdict.reasons[0].category, "outage");
  EXPECT_EQ(r->verdict.reasons[0].rank, 7);
  EXPECT_EQ(r->verdict.reasons[0].message,
            "1 flow lost traffic for longer than the 1000 ms budget while the change ran: "
            "server1 -> server2 10.0.4.10: 3000 ms (lost 300 of 500 echoes)");
  // The flows left from each source node's namespace (the driver's), sources its addresses.
  EXPECT_THAT(started, Contains("server1 -> server2 10.0.4.10 from 10.0.1.10 in fake-server1"));
  ASSERT_TRUE(r->outage.has_value());
  EXPECT_EQ(r->outage->stats.flows.size(), started.size());
  // Flows to or from leaf1 (the node the change works on) are measured, not judged.
  EXPECT_FALSE(r->outage->not_judged.empty());
  for (const auto& name : r->outage->not_judged) EXPECT_THAT(name, HasSubstr("leaf1"));
  EXPECT_TRUE(r->rolled_back);
}

TEST(GateLogic, WithoutABudgetTheOutageIsReportedNotJudged) {
  Harness h;
  load_case(h.net, "withdraw-loopback");
  h.net.broken = [](const auto&) { return false; };
  std::vector<std::string> started;
  h.traffic = [&] {
    return std::make_unique<FakeTraffic>(
        std::map<std::string, double>{{"server1 -> server2 10.0.4.10", 3000}}, &started);
  };
  auto r = h.run(leaf_steps(1, {}));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->verdict.decision, Decision::kApprove);
  ASSERT_TRUE(r->outage.has_value());
  EXPECT_FALSE(r->outage->budget.has_value());
  auto worst = std::max_element(
      r->outage->stats.flows.begin(), r->outage->stats.flows.end(),
      [](const auto& a, const auto& b) { return a.longest_outage_ms < b.longest_outage_ms; });
  EXPECT_EQ(worst->name, "server1 -> server2 10.0.4.10");
  EXPECT_DOUBLE_EQ(worst->longest_outage_ms, 3000);
  // Switched off: nothing measured.
  Harness off;
  load_case(off.net, "withdraw-loopback");
  off.net.broken = [](const auto&) { return false; };
  off.traffic = h.traffic;
  off.opts.outage.enabled = false;
  started.clear();
  auto o = off.run(leaf_steps(1, {}));
  ASSERT_TRUE(o) << o.error().message;
  EXPECT_FALSE(o->outage.has_value());
  EXPECT_TRUE(started.empty());
}

TEST(GateLogic, ABudgetThatCannotBeMeasuredIsAnError) {
  Harness h;  // no probe stream in this environment
  load_case(h.net, "withdraw-loopback");
  h.net.broken = [](const auto&) { return false; };
  h.opts.outage.budget = std::chrono::milliseconds(1000);
  auto r = h.run(leaf_steps(1, {}));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->verdict.decision, Decision::kError);
  ASSERT_EQ(r->verdict.reasons.size(), 1u);
  EXPECT_EQ(r->verdict.reasons[0].category, "validator-error");
  EXPECT_THAT(r->verdict.reasons[0].message, HasSubstr("the outage budget could not be checked"));
}

TEST(GateLogic, AFailedRollbackIsReportedNotHidden) {
  Harness h;
  load_case(h.net, "withdraw-loopback");
  // Every rung of the restore ladder fails: the reload, and the restarts (after a rebuild too).
  h.net.fail_reload = true;
  h.net.fail_restart = true;
  auto r = h.run(recorded_change("withdraw-loopback"));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->verdict.decision, Decision::kReject);
  EXPECT_TRUE(r->rolled_back);
  EXPECT_FALSE(r->rollback_ok);
  EXPECT_EQ(r->rollback_rung, "");
  EXPECT_THAT(r->rollback_detail, HasSubstr("frr-reload.py failed on leaf1"));
  EXPECT_THAT(r->rollback_detail, HasSubstr("restart: "));
  EXPECT_THAT(r->rollback_detail, HasSubstr("zebra did not start again"));
  EXPECT_EQ(h.lab.reshapes.size(), 2u);  // the recreate rung was tried
  // Rejected, but the twin is not restored: the harness failed, and the exit code says so.
  EXPECT_EQ(r->exit_code(), 3);
  // Still broken, and the validation after the rollback says so.
  EXPECT_TRUE(h.net.shows_bad());
  EXPECT_FALSE(r->rollback_diff.changes.empty());
}

TEST(GateLogic, ARevertedApprovalWhoseRestoreFailsIsAHarnessError) {
  Harness h;
  load_case(h.net, "drain-spine2");
  h.opts.revert = true;
  h.net.fail_reload = true;
  h.net.fail_restart = true;
  auto r = h.run(recorded_change("drain-spine2"));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->verdict.decision, Decision::kApprove);
  EXPECT_TRUE(r->rolled_back);
  EXPECT_FALSE(r->rollback_ok);
  EXPECT_EQ(r->exit_code(), 3);
  EXPECT_FALSE(h.lab.saved.has_value());
}

TEST(GateLogic, AFailingBaselineJudgesNothing) {
  Harness h;
  load_case(h.net, "withdraw-loopback");
  h.net.good_report = h.net.bad_report;  // the lab is already broken
  auto r = h.run(recorded_change("withdraw-loopback"));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->stage, "baseline-failed");
  EXPECT_EQ(r->exit_code(), 4);
  EXPECT_TRUE(r->steps.empty());
  EXPECT_TRUE(h.net.log.empty());  // nothing applied, nothing restored
}

TEST(GateLogic, PerStepNamesTheStepThatBreaksAndSkipsTheRest) {
  Harness h;
  load_case(h.net, "withdraw-loopback");
  h.net.broken = breaks_on_marker;
  h.opts.per_step = true;
  auto r = h.run(leaf_steps(3, {2}));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->verdict.decision, Decision::kReject);
  EXPECT_EQ(r->first_failing_step, "step 2");
  ASSERT_EQ(r->steps.size(), 3u);
  EXPECT_EQ(r->steps[0].status, "applied");
  EXPECT_EQ(r->steps[1].status, "broke");
  EXPECT_EQ(r->steps[2].status, "skipped");
  EXPECT_EQ(h.count("apply leaf3"), 0);  // step 3 was never applied
  EXPECT_TRUE(r->rollback_ok) << r->rollback_detail;
  EXPECT_FALSE(h.net.shows_bad());
}

TEST(GateLogic, BisectionFindsTheFirstBreakingStepOfALongChange) {
  Harness h;
  load_case(h.net, "withdraw-loopback");
  h.net.broken = breaks_on_marker;
  h.opts.per_step = true;
  auto r = h.run(leaf_steps(8, {6}));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->verdict.decision, Decision::kReject);
  EXPECT_EQ(r->first_failing_step, "step 6");
  EXPECT_EQ(r->steps[5].status, "broke");
  // log2(8) = 3 probes of prefixes: 4 steps, 6 steps, 5 steps.
  std::vector<std::string> probes;
  for (const auto& ph : r->per_step) probes.push_back(ph.name);
  EXPECT_THAT(probes, ElementsAre("bisect: first 4 steps", "bisect: first 6 steps",
                                  "bisect: first 5 steps"));
  for (const auto& reason : r->verdict.reasons) EXPECT_EQ(reason.step, "step 6");
  EXPECT_TRUE(r->rollback_ok) << r->rollback_detail;
  EXPECT_FALSE(h.net.shows_bad());
}

TEST(GateLogic, InterruptWhileApplyingRollsBackAndSaysSo) {
  Harness h;
  load_case(h.net, "withdraw-loopback");
  int applied = 0;
  h.net.on_apply = [&](const std::string&) {
    if (++applied == 2) twin::g_interrupted = true;
  };
  auto r = h.run(leaf_steps(4, {}));
  bool flag = twin::interrupted();
  twin::g_interrupted = false;
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, twin::ErrorKind::kInterrupted);
  EXPECT_THAT(r.error().message, HasSubstr("interrupted while applying; the change was rolled back"));
  EXPECT_TRUE(flag);  // the interrupt stays visible to the caller (exit 130)
  // Steps 1 and 2 were applied and restored; 3 and 4 never ran.
  EXPECT_EQ(h.count("apply leaf1"), 1);
  EXPECT_EQ(h.count("apply leaf2"), 1);
  EXPECT_EQ(h.count("apply leaf3"), 0);
  EXPECT_EQ(h.count("reload leaf1"), 1);
  EXPECT_EQ(h.count("reload leaf2"), 1);
  EXPECT_FALSE(h.net.shows_bad());
}

// A rejected change's rollback is not given up at one SIGINT/SIGTERM (docs/gate.md: a second
// signal stops it): the first lets it finish and the run ends as interrupted, rolled back; two stop
// the restore and say the lab is not restored.
TEST(GateLogic, OneInterruptDuringTheRollbackLetsItFinishTwoStopIt) {
  for (int signals : {1, 2}) {
    Harness h;
    load_case(h.net, "withdraw-loopback");
    h.net.on_reload = [&](const std::string&) {
      for (int i = 0; i < signals; ++i) {
        ++twin::g_interrupt_count;
        twin::g_interrupted = true;
      }
    };
    auto r = h.run(recorded_change("withdraw-loopback"));
    twin::g_interrupted = false;
    twin::g_interrupt_count = 0;
    ASSERT_FALSE(r) << signals;
    EXPECT_EQ(r.error().kind, twin::ErrorKind::kInterrupted);
    if (signals == 1) {
      EXPECT_THAT(r.error().message,
                  HasSubstr("interrupted while rolling back; the change was rolled back"));
      EXPECT_FALSE(h.net.shows_bad());
    } else {
      EXPECT_THAT(r.error().message,
                  HasSubstr("interrupted while rolling back; the lab is NOT restored"));
      EXPECT_TRUE(h.net.shows_bad());
    }
  }
}

TEST(Interrupts, ASecondInterruptShieldStopsProgramsAtTheSecondSignalOnly) {
  {
    twin::SecondInterruptShield hold;
    EXPECT_FALSE(twin::cancel_requested());
    ++twin::g_interrupt_count;
    twin::g_interrupted = true;
    EXPECT_TRUE(twin::interrupted());
    EXPECT_FALSE(twin::cancel_requested());
    ++twin::g_interrupt_count;
    EXPECT_TRUE(twin::cancel_requested());
  }
  EXPECT_TRUE(twin::cancel_requested());  // no shield: the first signal stops programs
  twin::g_interrupted = false;
  twin::g_interrupt_count = 0;
  EXPECT_FALSE(twin::cancel_requested());
}

TEST(GateLogic, InterruptDuringTheBaselineAppliesNothing) {
  Harness h;
  load_case(h.net, "withdraw-loopback");
  twin::g_interrupted = true;
  auto r = h.run(recorded_change("withdraw-loopback"));
  twin::g_interrupted = false;
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, twin::ErrorKind::kInterrupted);
  EXPECT_THAT(r.error().message, HasSubstr("nothing was applied"));
  EXPECT_TRUE(h.net.log.empty());
}

}  // namespace

// Training's fault injection: the steps applied, nothing judged, nothing rolled back.
TEST(GateLogic, InjectAppliesTheStepsWithoutJudgingOrRollingBack) {
  Harness h;
  load_case(h.net, "withdraw-loopback");
  h.net.broken = breaks_on_marker;
  auto env = h.env();
  auto r = twin::replay::inject(h.st, leaf_steps(2, {2}), h.opts, env);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->ok());
  ASSERT_EQ(r->steps.size(), 2u);
  EXPECT_EQ(r->steps[1].status, "applied");
  EXPECT_EQ(h.count("apply leaf1"), 1);
  EXPECT_EQ(h.count("apply leaf2"), 1);
  EXPECT_EQ(h.count("reload leaf2"), 0);  // no rollback
  EXPECT_TRUE(h.net.shows_bad());         // the fault stays in
  EXPECT_THAT(r->settled, HasSubstr("quiet after"));
  EXPECT_FALSE(h.lab.saved.has_value());  // no intent saved: the lab keeps its plan
}

TEST(GateLogic, InjectRefusesATopologyStep) {
  Harness h;
  load_case(h.net, "withdraw-loopback");
  ChangeSet cs;
  Step s;
  s.name = "grow";
  s.body = twin::replay::TopologyStep{};
  cs.steps.push_back(s);
  auto env = h.env();
  auto r = twin::replay::inject(h.st, cs, h.opts, env);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, twin::ErrorKind::kUsage);
  EXPECT_THAT(r.error().message, HasSubstr("topology step cannot be injected"));
  EXPECT_TRUE(h.net.log.empty());
}

// restore(): back to the reference for exactly what differs, whoever changed it; a second
// restore finds nothing to do.
TEST(GateLogic, RestoreRollsBackWhatDiffersFromTheReferenceAndIsIdempotent) {
  Harness h;
  load_case(h.net, "withdraw-loopback");
  h.net.broken = breaks_on_marker;
  for (const auto& n : clos().nodes)
    if (!n.daemons.empty())
      for (const auto& k : twin::replay::reference_sysctl_keys(n)) h.net.sysctls[n.name][k] = "1";
  h.net.sysctls["leaf3"]["net.ipv6.conf.all.disable_ipv6"] = "0";
  auto env = h.env();
  auto ref = twin::replay::read_reference(clos(), env, 2);
  ASSERT_TRUE(ref) << ref.error().message;
  EXPECT_EQ(ref->configs.size(), 6u);
  EXPECT_EQ(ref->sysctls.at("leaf3").at("net.ipv6.conf.all.disable_ipv6"), "0");
  twin::validate::SystemProbe probe(h.runner, env.drivers);
  ref->state = twin::replay::observe(clos(), probe, 2);

  // A trainee's (or a fault's) changes: leaf2's FRR config, and IPv6 off on leaf3.
  ASSERT_TRUE(twin::replay::inject(h.st, leaf_steps(2, {2}), h.opts, env));
  h.net.sysctls["leaf3"]["net.ipv6.conf.all.disable_ipv6"] = "1";
  ASSERT_TRUE(h.net.shows_bad());
  h.net.log.clear();
  auto r = twin::replay::restore(h.st, *ref, h.opts, env);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->configs, 2);  // leaf1 and leaf2 got lines; the other FRR nodes are untouched
  EXPECT_EQ(r->sysctls, 1);
  EXPECT_EQ(h.count("reload leaf1"), 1);
  EXPECT_EQ(h.count("reload leaf2"), 1);
  EXPECT_EQ(h.count("reload spine1"), 0);
  EXPECT_EQ(h.count("sysctl leaf3 net.ipv6.conf.all.disable_ipv6=0"), 1);
  EXPECT_EQ(h.net.sysctls["leaf3"]["net.ipv6.conf.all.disable_ipv6"], "0");
  EXPECT_FALSE(h.net.shows_bad());
  EXPECT_THAT(r->detail, HasSubstr("2 FRR config(s)"));

  h.net.log.clear();
  auto again = twin::replay::restore(h.st, *ref, h.opts, env);
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(again->total(), 0) << again->detail;
  EXPECT_EQ(again->detail, "nothing differs from the reference");
  for (const auto& l : h.net.log) EXPECT_THAT(l, ::testing::Not(HasSubstr("reload"))) << l;
}

// The gate's convergence poll (engine::count_sessions, behind a step's `wait: {until:
// converged}`) asks the nodes in parallel from one shared index of the plan's sessions: with as
// many threads as nodes, every poll gives the exact count, and a silent node's sessions are
// named. (That the threads only read the index is held by the compiler: it is const.)
TEST(GateLogic, ConvergencePollCountsEverySessionFromParallelThreads) {
  Harness h;
  load_case(h.net, "drain-spine2");
  auto env = h.env();
  for (int i = 0; i < 200; ++i) {
    auto c = twin::engine::count_sessions(clos(), 8, env.drivers);
    ASSERT_EQ(c.expected, 16);
    ASSERT_EQ(c.established, 16) << ::testing::PrintToString(c.down);
    ASSERT_TRUE(c.down.empty());
    ASSERT_TRUE(c.converged());
  }
  // A node whose bgpd does not answer: its two sessions are down, by name, the others counted.
  h.net.good.erase("leaf4");
  auto c = twin::engine::count_sessions(clos(), 8, env.drivers);
  EXPECT_EQ(c.established, 14);
  EXPECT_FALSE(c.converged());
  EXPECT_THAT(c.down, ElementsAre(HasSubstr("leaf4 swp1 -> spine1: no answer from bgpd"),
                                  HasSubstr("leaf4 swp2 -> spine2: no answer from bgpd")));
}

// A change that edits a prefix-list leaf1 already uses: bgpd applies it only when its route-map
// delay timer fires (FRR's default 5 s), so the fake lab shows the loss from 5 s after the edit.
// The gate holds its settling until then and rejects; a change that only adds a new list (it
// takes effect when attached, at once) settles without that wait.
TEST(GateLogic, EditedPolicyIsJudgedOnlyAfterTheRouteMapDelayTimer) {
  using namespace std::chrono_literals;
  auto change = [](const std::string& lines) {
    ChangeSet cs;
    cs.name = "policy";
    Step s;
    s.name = "leaf1's outbound list";
    s.body = twin::replay::FrrStep{};
    s.frr().nodes = {"leaf1"};
    s.frr().add = lines;
    cs.steps.push_back(s);
    return cs;
  };
  // The fake lab shows the change's loss `delay` after an edit to leaf1 whose lines hold a
  // "seq 4 deny" entry (as bgpd applies it when its route-map delay timer fires).
  auto lose_after = [](Harness& h, std::optional<twin::Clock::time_point>& edited,
                       std::chrono::seconds delay) {
    h.net.on_apply = [&h, &edited](const std::string&) { edited = h.time.now(); };
    h.net.broken = [&h, &edited, delay](const std::map<std::string, std::vector<std::string>>& a) {
      auto l = a.find("leaf1");
      bool deny = l != a.end() && std::any_of(l->second.begin(), l->second.end(),
                                              [](const std::string& t) {
                                                return t.find("seq 4 deny") != std::string::npos;
                                              });
      return deny && edited && h.time.now() >= *edited + delay;
    };
  };
  // A timer set by the same lines as the edit (30 s, longer than the convergence timeout)
  // holds the judgement as long, plus 1 s.
  {
    Harness h;
    load_case(h.net, "withdraw-loopback");
    std::optional<twin::Clock::time_point> edited;
    lose_after(h, edited, 30s);
    h.net.applied["leaf1"] = {"ip prefix-list PL seq 5 permit any\n"};
    h.opts.converge_timeout = 10s;
    auto r = h.run(change("bgp route-map delay-timer 30\nip prefix-list PL seq 4 deny any\n"));
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->verdict.decision, Decision::kReject);
    EXPECT_GE(h.time.slept(), 31s);
  }
  // With the timer off FRR does not apply the edit by itself: nothing to wait for, and the
  // step says so.
  {
    Harness h;
    load_case(h.net, "withdraw-loopback");
    h.net.broken = [](const auto&) { return false; };
    h.net.applied["leaf1"] = {"bgp route-map delay-timer 0\nip prefix-list PL seq 5 permit any\n"};
    auto r = h.run(change("ip prefix-list PL seq 4 deny any\n"));
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_LT(h.time.slept(), 5s);
    ASSERT_EQ(r->steps.size(), 1u);
    EXPECT_THAT(r->steps[0].detail, HasSubstr("leaf1 run `bgp route-map delay-timer 0`"));
  }
  for (bool existing : {true, false}) {
    SCOPED_TRACE(existing ? "edit of a list in use" : "a new list");
    Harness h;
    load_case(h.net, "withdraw-loopback");
    std::optional<twin::Clock::time_point> edited;
    lose_after(h, edited, 5s);
    std::vector<std::string> settles;
    h.opts.progress = [&](const std::string& l) {
      if (l.rfind("settling: ", 0) == 0) settles.push_back(l);
    };
    if (existing)
      h.net.applied["leaf1"] = {
          "ip prefix-list PL seq 5 permit any\nroute-map RM permit 10\n match ip address "
          "prefix-list PL\nexit\n"};
    auto r = h.run(change(existing ? "ip prefix-list PL seq 4 deny 10.255.1.1/32\n"
                                   : "ip prefix-list NEW seq 4 deny 10.255.1.1/32\n"));
    ASSERT_TRUE(r) << r.error().message;
    if (existing) {
      EXPECT_EQ(r->verdict.decision, Decision::kReject);
      ASSERT_FALSE(r->verdict.reasons.empty());
      EXPECT_EQ(r->verdict.reasons.front().category, "prefix-lost");
      EXPECT_GE(h.time.slept(), 6s);
      // The rollback reloads with a soft clear, which applies the restored list at once.
      ASSERT_EQ(settles.size(), 2u);
      EXPECT_THAT(settles[0], HasSubstr("route-map delay timer (5 s)"));
      EXPECT_THAT(settles[1], Not(HasSubstr("delay timer")));
    } else {
      EXPECT_EQ(r->verdict.decision, Decision::kApprove);
      EXPECT_LT(h.time.slept(), 5s);
    }
  }
}

TEST(GateLogic, PolicyObjectsAndTheRouteMapDelayTimerAreReadFromConfigText) {
  const std::string running =
      "frr defaults datacenter\nhostname leaf1\n!\nbgp route-map delay-timer 2\n"
      "router bgp 65101\n neighbor swp1 route-map RM out\nexit\n!\n"
      "ip prefix-list PL seq 5 permit any\nbgp community-list standard C seq 5 permit 1:1\n"
      "route-map RM permit 10\n match ip address prefix-list PL\nexit\n";
  auto objs = twin::replay::policy_objects(running);
  std::vector<std::string> keys;
  for (const auto& o : objs) keys.push_back(o.key);
  EXPECT_THAT(keys, ElementsAre("ip prefix-list PL", "bgp community-list C", "route-map RM"));
  EXPECT_EQ(objs[2].text, "route-map RM permit 10\nmatch ip address prefix-list PL");
  EXPECT_EQ(twin::replay::route_map_delay_s(running), 2);
  EXPECT_EQ(twin::replay::route_map_delay_s("hostname x\n"), 5);  // FRR's default
  using twin::replay::edits_existing_policy;
  // Lines to add or remove: an object the node has is an edit; a new one is not.
  EXPECT_TRUE(edits_existing_policy(running, "ip prefix-list PL seq 4 deny any\n"));
  EXPECT_TRUE(edits_existing_policy(running, "route-map RM permit 10\n set metric 5\n"));
  EXPECT_FALSE(edits_existing_policy(running, "ip prefix-list NEW seq 5 permit any\n"));
  EXPECT_FALSE(edits_existing_policy(running, "router bgp 65101\n neighbor swp2 shutdown\n"));
  // A list defined for the first time that a route-map already matches is picked up by it when
  // the timer fires: in use.
  const std::string names_it = running + "route-map RM deny 5\n match ip address prefix-list "
                                         "LATER\nexit\n";
  EXPECT_TRUE(edits_existing_policy(names_it, "ip prefix-list LATER seq 5 permit any\n"));
  EXPECT_EQ(twin::replay::declared_route_map_delay_s("bgp route-map delay-timer 30\n"), 30);
  EXPECT_EQ(twin::replay::declared_route_map_delay_s(running), 2);
  EXPECT_FALSE(twin::replay::declared_route_map_delay_s("ip prefix-list PL seq 5 permit any\n"));
}

// After the change, only the nodes it worked on have their running config read again; the
// others' is the snapshot's (no step touched them), so the record is still complete.
TEST(GateLogic, ConfigsAfterTheChangeAreReadOnlyFromTheNodesItWorkedOn) {
  Harness h;
  load_case(h.net, "drain-spine2");
  auto r = h.run(recorded_change("drain-spine2"));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(h.net.config_reads["spine2"], 2);  // the snapshot, and after the change
  for (const char* n : {"spine1", "leaf1", "leaf2", "leaf3", "leaf4"}) {
    EXPECT_EQ(h.net.config_reads[n], 1) << n;  // the snapshot only
    EXPECT_EQ(r->config_after.at(n), r->config_before.at(n)) << n;
  }
  EXPECT_EQ(r->config_after.size(), 6u);
  EXPECT_NE(r->config_after.at("spine2"), r->config_before.at("spine2"));
}

// A rollback's settling ends once the lab shows exactly the baseline for two observations:
// the network moved there from the rejected state, and anything still in flight would move it
// away. Settling after the change, toward a state nobody knows, still waits the quiet period
// while FRR shows work in flight.
TEST(GateLogic, RollbackSettlesOnceExactlyBackAtTheBaseline) {
  Harness h;
  load_case(h.net, "withdraw-loopback");
  h.net.busy = [] { return true; };
  std::vector<std::string> said;
  h.opts.progress = [&](const std::string& s) { said.push_back(s); };
  auto r = h.run(recorded_change("withdraw-loopback"));
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->verdict.decision, Decision::kReject);
  ASSERT_TRUE(r->rollback_ok) << r->rollback_detail;
  std::vector<std::string> settles;
  for (const auto& s : said)
    if (s.rfind("settling: ", 0) == 0) settles.push_back(s);
  ASSERT_EQ(settles.size(), 2u) << ::testing::PrintToString(said);
  auto ms_of = [](const std::string& s) {
    return std::stoi(s.substr(s.find("after ") + 6));
  };
  EXPECT_GE(ms_of(settles[0]), 1000) << settles[0];  // the whole quiet period
  EXPECT_THAT(settles[0], Not(HasSubstr("back at the expected state")));
  EXPECT_LT(ms_of(settles[1]), 1000) << settles[1];
  EXPECT_GE(ms_of(settles[1]), 200) << settles[1];  // held for kAtTargetHold
  EXPECT_THAT(settles[1], HasSubstr("back at the expected state"));
}

// Where FRR shows nothing in flight — every session Established or down because an end is
// shut, no message queued, no BGP table moving — settling after the change ends once that held
// for kAtTargetHold, no sooner than kEvidenceFloor. A change that sets an
// advertisement-interval (UPDATEs wait for that timer, which FRR's summary does not show) waits
// the quiet period.
TEST(GateLogic, SettlingEndsOnFrrsEvidenceThatNothingIsInFlight) {
  auto first_settle = [](const ChangeSet& cs) {
    Harness h;
    load_case(h.net, "withdraw-loopback");
    std::vector<std::string> said;
    h.opts.progress = [&](const std::string& s) { said.push_back(s); };
    auto r = h.run(cs);
    EXPECT_TRUE(r) << r.error().message;
    for (const auto& s : said)
      if (s.rfind("settling: ", 0) == 0) return s;
    return std::string("no settling");
  };
  auto ms_of = [](const std::string& s) { return std::stoi(s.substr(s.find("after ") + 6)); };
  std::string idle = first_settle(recorded_change("withdraw-loopback"));
  EXPECT_THAT(idle, HasSubstr("FRR idle"));
  EXPECT_GE(ms_of(idle), twin::replay::kEvidenceFloor.count()) << idle;  // bgpd's announce delay
  EXPECT_LT(ms_of(idle), 1000) << idle;
  ChangeSet mrai = recorded_change("withdraw-loopback");
  mrai.steps[0].frr().remove.clear();
  mrai.steps[0].frr().add =
      "router bgp 65101\n neighbor fabric advertisement-interval 1\n address-family ipv4 unicast\n"
      "  no network 10.255.1.1/32\n";
  std::string timed = first_settle(mrai);
  EXPECT_THAT(timed, Not(HasSubstr("FRR idle")));
  EXPECT_GE(ms_of(timed), 1000) << timed;
}

// A probe keeps each probe's command and output only when it is evidence (the gate's phases,
// validate --artifacts): otherwise a large lab's routing tables would be re-serialized and held
// for nobody. The answers are the same either way.
TEST(SystemProbe, KeepsEachProbesOutputOnlyWhenAskedForEvidence) {
  Harness h;
  load_case(h.net, "withdraw-loopback");
  auto env = h.env();
  const twin::plan::Node* leaf1 = nullptr;
  for (const auto& n : clos().nodes)
    if (n.name == "leaf1") leaf1 = &n;
  ASSERT_NE(leaf1, nullptr);
  twin::validate::SystemProbe quiet(h.runner, env.drivers);
  twin::validate::SystemProbe kept(h.runner, env.drivers,
                                   twin::validate::SystemProbe::Evidence::kKeep);
  auto a = quiet.ip_json(*leaf1, {"route", "show"});
  auto b = kept.ip_json(*leaf1, {"route", "show"});
  ASSERT_TRUE(a && b);
  EXPECT_EQ(*a, *b);
  ASSERT_TRUE(a->is_array());
  EXPECT_GT(a->size(), 0u);
  auto s = kept.frr_json(*leaf1, "bgpd", "show bgp summary json");
  ASSERT_TRUE(s);
  twin::runtime::PingRequest echo;
  echo.destination = "10.255.1.4";
  auto pa = quiet.ping(*leaf1, {echo});
  auto pb = kept.ping(*leaf1, {echo});
  ASSERT_EQ(pa.size(), 1u);
  ASSERT_EQ(pb.size(), 1u);
  EXPECT_EQ(pa[0].outcome, pb[0].outcome);
  EXPECT_TRUE(quiet.records().empty());
  auto r = kept.records();
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].node, "leaf1");
  EXPECT_EQ(r[0].command, "fake");
  EXPECT_EQ(r[0].output, b->dump());
  EXPECT_EQ(r[1].command, "fake");
  EXPECT_EQ(r[1].output, s->dump());
  EXPECT_EQ(r[2].command, "ping x1");
  EXPECT_THAT(r[2].output, HasSubstr("10.255.1.4 size"));
}
