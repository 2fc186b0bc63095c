// `twin exercise` on real labs: every exercise of the course starts with its fault visible, is
// not solved by a destructive shortcut or half a fix, resets to its faulted start, is solved by
// its fix, and leaves nothing behind. The clos-2x4 exercises share one lab, each `start`
// restoring it to its healthy reference (no rebuild between exercises).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/integration/cli_support.hpp"

using namespace twin_it;
using ::testing::HasSubstr;

namespace {

struct Course {
  std::string exercise;
  std::string shortcut;  // run with `sh` after "twin exec --lab LAB "; must not solve it
};

// Every node name of clos-2x4: a symptom may name only those its exercise's ticket names.
const std::vector<std::string> kClosNodes = {"spine1", "spine2", "leaf1", "leaf2",
                                             "leaf3",  "leaf4",  "server1", "server2"};

json run_json(const std::string& args, int* code = nullptr) {
  auto r = twin(args + " --json");
  if (code) *code = r.code;
  try {
    return json::parse(r.out);
  } catch (...) {
    ADD_FAILURE() << "twin " << args << " printed no JSON (exit " << r.code << "):\n"
                  << r.out << r.err;
    return json::object();
  }
}

// The whole life of one exercise on `lab`: start, the fault visible, check, a shortcut that does
// not count, reset, the fix, solved.
void exercise_life(const std::string& lab, const Course& c,
                   const std::vector<std::string>& nodes) {
  int code = -1;
  auto start = run_json("exercise start " + c.exercise + " --name " + lab, &code);
  ASSERT_EQ(code, 0) << start.dump(2);
  EXPECT_EQ(start.value("exercise", ""), c.exercise);
  EXPECT_TRUE(start.value("fault_visible", false));
  std::string ticket = start.value("ticket", "");
  EXPECT_FALSE(ticket.empty());
  auto symptoms = start["grade"]["symptoms"];
  ASSERT_FALSE(symptoms.empty());
  for (const auto& s : symptoms)
    for (const auto& n : nodes)
      if (ticket.find(n) == std::string::npos) {
        EXPECT_THAT(s.get<std::string>(), ::testing::Not(HasSubstr(n)))
            << c.exercise << ": a symptom names " << n << ", which the ticket does not";
      }

  auto check = run_json("exercise check --lab " + lab, &code);
  EXPECT_EQ(code, 1);
  EXPECT_FALSE(check.value("solved", true));
  EXPECT_GT(check.value("criteria_failing", 0), 0);

  auto sc = sh(c.shortcut);
  EXPECT_EQ(sc.code, 0) << c.shortcut << ": " << sc.err;
  auto after = run_json("exercise check --lab " + lab, &code);
  EXPECT_EQ(code, 1) << c.exercise << ": the shortcut `" << c.shortcut << "` counted as solved";
  EXPECT_FALSE(after.value("solved", true));
  EXPECT_FALSE(after["symptoms"].empty());

  auto reset = run_json("exercise reset --lab " + lab, &code);
  EXPECT_EQ(code, 0) << reset.dump(2);
  EXPECT_TRUE(reset.value("fault_visible", false));
  EXPECT_THAT(reset.value("how", ""), HasSubstr("reused"));  // restored, not rebuilt

  auto sol = run_json("exercise solution --apply --lab " + lab, &code);
  EXPECT_EQ(code, 0) << sol.dump(2);
  EXPECT_EQ(sol.value("how", ""), "the fix solved it") << c.exercise;
  EXPECT_TRUE(sol["grade"].value("solved", false));
  EXPECT_FALSE(sol.value("fault", "").empty());
  EXPECT_FALSE(sol.value("explanation", "").empty());
  auto done = run_json("exercise check --lab " + lab, &code);
  EXPECT_EQ(code, 0) << done.dump(2);
  EXPECT_TRUE(done.value("solved", false));
  EXPECT_TRUE(done["symptoms"].empty());
}

class TrainingClos : public ::testing::TestWithParam<Course> {
 protected:
  static void TearDownTestSuite() {
    if (!root()) return;
    auto stop = twin("exercise stop --lab " + lab());
    EXPECT_EQ(stop.code, 0) << stop.err;
    EXPECT_EQ(leftovers(lab()), std::vector<std::string>{});
  }
  void SetUp() override {
    if (!root()) TWIN_SKIP_WITHOUT("root", "needs root (network namespaces, FRR)");
  }
  static const std::string& lab() {
    static const std::string name = unique_lab("ex");
    return name;
  }
};

TEST_P(TrainingClos, StartsVisibleResistsAShortcutResetsAndIsSolvedByItsFix) {
  Course c = GetParam();
  std::string l = lab();
  auto replace = [&](std::string s) {
    for (size_t at; (at = s.find("LAB")) != std::string::npos;) s.replace(at, 3, l);
    return s;
  };
  c.shortcut = replace(c.shortcut);
  exercise_life(l, c, kClosNodes);
}

std::string vtysh(const std::string& lines) { return "vtysh -c 'conf t' " + lines; }

INSTANTIATE_TEST_SUITE_P(
    Course, TrainingClos,
    ::testing::Values(
        // Delete the session that does not come up: the validator still expects it.
        Course{"wrong-asn", kTwin + " exec --lab LAB leaf4 -- " +
                                vtysh("-c 'router bgp 65104' -c 'no neighbor swp1'")},
        // Take the unreachable address away instead of announcing it.
        Course{"loopback-not-advertised",
               kTwin + " exec --lab LAB leaf1 -- ip addr del 10.255.1.1/32 dev lo"},
        // Make both ends agree at the wrong MTU.
        Course{"mtu-one-end", kTwin + " exec --lab LAB spine1 -- ip link set dev swp2 mtu 1500"},
        // Half a fix: IPv6 on again, its global addresses still gone.
        Course{"ipv6-off",
               kTwin + " exec --lab LAB leaf4 -- sysctl -qw net.ipv6.conf.all.disable_ipv6=0"},
        // Half a fix: the IPv4 filter removed, the IPv6 one left.
        Course{"filtered-leaf",
               kTwin + " exec --lab LAB leaf3 -- " +
                   vtysh("-c 'router bgp 65103' -c 'address-family ipv4 unicast' -c 'no "
                         "neighbor fabric prefix-list NOTHING out'")},
        // One path by design: shut the idle uplink.
        Course{"ecmp-lost", kTwin + " exec --lab LAB leaf2 -- ip link set dev swp2 down"},
        // Steer traffic off the broken spine by shutting its sessions.
        Course{"forwarding-off", kTwin + " exec --lab LAB spine1 -- " +
                                     vtysh("-c 'router bgp 65000' -c 'neighbor fabric shutdown'")},
        // One fault of two fixed.
        Course{"two-faults", kTwin + " exec --lab LAB leaf3 -- ip link set dev swp2 mtu 9216"}),
    [](const ::testing::TestParamInfo<Course>& i) {
      std::string n = i.param.exercise;
      for (auto& ch : n)
        if (ch == '-') ch = '_';
      return n;
    });

// Hints one at a time and counted, the likely-cause rules after the authored ones, the
// attempt's record as JSON and CSV, and stop: the record stays, the lab goes.
TEST(TrainingHints, AreCountedThenTheRulesSpeakAndTheRecordOutlivesStop) {
  if (!root()) TWIN_SKIP_WITHOUT("root", "needs root (network namespaces, FRR)");
  std::string l = unique_lab("hint");
  LabGuard guard{l};
  int code = -1;
  auto start = run_json("exercise start wrong-asn --name " + l, &code);
  ASSERT_EQ(code, 0) << start.dump(2);
  EXPECT_EQ(start.value("lab_was", ""), "built");
  std::vector<json> hints;
  for (int i = 0; i < 4; ++i) hints.push_back(run_json("exercise hint --lab " + l));
  EXPECT_EQ(hints[0].value("number", 0), 1);
  EXPECT_EQ(hints[0].value("of", 0), 4);
  EXPECT_FALSE(hints[0].value("from_rules", true));
  EXPECT_THAT(hints[0]["hint"][0].get<std::string>(), HasSubstr("BGP sessions on leaf4"));
  EXPECT_TRUE(hints[3].value("from_rules", false));
  std::string rules = hints[3]["hint"].dump();
  EXPECT_THAT(rules, HasSubstr("leaf4 expects remote-as 65001 on swp1, but spine1 is AS 65000"));
  auto status = run_json("exercise status --lab " + l);
  EXPECT_EQ(status.value("hints_used", 0), 4);
  EXPECT_EQ(status.value("state", ""), "in-progress");
  // The trainee's own fix, not the solution's text: the session back in the peer group by
  // deleting and re-creating the neighbor.
  auto fix = sh(kTwin + " exec --lab " + l + " leaf4 -- " +
                vtysh("-c 'router bgp 65104' -c 'no neighbor swp1' -c 'neighbor swp1 "
                      "interface peer-group fabric'"));
  ASSERT_EQ(fix.code, 0) << fix.err;
  auto check = run_json("exercise check --lab " + l, &code);
  EXPECT_EQ(code, 0) << check.dump(2);
  EXPECT_TRUE(check.value("solved", false));
  EXPECT_GT(check.value("time_to_solve_s", 0.0), 0.0);
  auto stop = twin("exercise stop --lab " + l);
  EXPECT_EQ(stop.code, 0) << stop.err;
  EXPECT_THAT(stop.out, HasSubstr("exercise wrong-asn solved"));
  EXPECT_EQ(leftovers(l), std::vector<std::string>{});
  auto results = run_json("exercise results --lab " + l);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].value("state", ""), "solved");
  EXPECT_EQ(results[0].value("hints_used", 0), 4);
  EXPECT_EQ(results[0].value("checks", 0), 1);
  auto csv = twin("exercise results --csv --lab " + l);
  EXPECT_THAT(csv.out, HasSubstr(l + ",wrong-asn,1,"));
  EXPECT_THAT(csv.out, HasSubstr(",solved,"));
  // No session is left for the lab: its commands say so.
  auto gone = twin("exercise check --lab " + l);
  EXPECT_EQ(gone.code, 2);
  EXPECT_THAT(gone.err, HasSubstr("no exercise runs on lab " + l));
}

// The exercises on the other labs, each on its own lab, built and stopped here.
TEST(TrainingOtherLabs, OspfAreaAndVniTypoRunTheirWholeLife) {
  if (!root()) TWIN_SKIP_WITHOUT("root", "needs root (network namespaces, FRR)");
  struct Other {
    Course c;
    std::vector<std::string> nodes;
  };
  for (auto o : {Other{{"ospf-area", "leaf2 -- " + vtysh("-c 'interface eth1' -c 'no ip ospf area'")},
                       {"rr1", "leaf1", "leaf2", "leaf3"}},
                 Other{{"vni-typo", ""}, {"spine1", "spine2", "leaf1", "leaf2", "leaf3", "leaf4",
                                          "red1", "red2", "red3", "red4", "blue1", "blue2",
                                          "blue3"}}}) {
    std::string l = unique_lab("oth");
    LabGuard guard{l};
    // Half a fix for the VNI typo: the mistyped VNI removed, red2's port left in no bridge.
    o.c.shortcut = o.c.exercise == "vni-typo"
                       ? kTwin + " exec --lab " + l + " leaf3 -- sh -c 'ip link del vx10010; ip link del br10010'"
                       : kTwin + " exec --lab " + l + " " + o.c.shortcut;
    exercise_life(l, o.c, o.nodes);
    auto stop = twin("exercise stop --lab " + l);
    EXPECT_EQ(stop.code, 0) << stop.err;
    EXPECT_EQ(leftovers(l), std::vector<std::string>{});
  }
}

}  // namespace
