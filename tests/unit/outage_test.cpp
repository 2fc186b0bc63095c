// Hitless measurement without a lab: a flow's figures from its echoes
// (runtime::summarize_flow), which flows the gate streams over (replay::choose_flows, on the
// baseline of a recorded clos-2x4 run), and when an outage rejects (replay::outage_reason).
#include "twin/verdict/outage.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "tests/unit/recorded.hpp"
#include "twin/runtime/probe_stream.hpp"
#include "twin/verdict/diff.hpp"
#include "twin/verdict/watch.hpp"

namespace {

using ::testing::HasSubstr;
using twin::runtime::FlowStats;
using twin::runtime::ProbeSample;
using twin::runtime::summarize_flow;

const std::string kGate = std::string(TWIN_TEST_DATA) + "/gate";

// Echoes every 10 ms; `lost` holds the indexes without a reply.
std::vector<ProbeSample> echoes(int n, std::set<int> lost) {
  std::vector<ProbeSample> v;
  for (int i = 0; i < n; ++i) v.push_back({i * 10.0, !lost.count(i)});
  return v;
}

TEST(ProbeStream, TheLongestRunOfLostEchoesIsTheOutage) {
  // Lost 1..3 (answered again at 40 ms) and 7: runs of 30 and 10 ms.
  FlowStats s = summarize_flow("a -> b 10.0.0.2", echoes(10, {1, 2, 3, 7}), 100);
  EXPECT_EQ(s.name, "a -> b 10.0.0.2");
  EXPECT_EQ(s.sent, 10);
  EXPECT_EQ(s.lost, 4);
  EXPECT_DOUBLE_EQ(s.longest_outage_ms, 30);
  EXPECT_DOUBLE_EQ(s.outage_start_ms, 10);
  // A run still open when the stream stopped lasts until the end.
  FlowStats open = summarize_flow("x", echoes(10, {6, 7, 8, 9}), 100);
  EXPECT_DOUBLE_EQ(open.longest_outage_ms, 40);
  EXPECT_DOUBLE_EQ(open.outage_start_ms, 60);
  // A single lost echo is one interval: the resolution.
  EXPECT_DOUBLE_EQ(summarize_flow("x", echoes(10, {5}), 100).longest_outage_ms, 10);
  FlowStats clean = summarize_flow("x", echoes(10, {}), 100);
  EXPECT_EQ(clean.lost, 0);
  EXPECT_DOUBLE_EQ(clean.longest_outage_ms, 0);
  EXPECT_DOUBLE_EQ(clean.outage_start_ms, -1);
  EXPECT_EQ(summarize_flow("x", {}, 0).sent, 0);
}

const twin::plan::Plan& clos() { return twin_test::recorded_clos_plan(); }

twin::replay::NetState recorded_baseline() {
  twin::replay::NetState s;
  twin::replay::add_reachability(s, twin_test::load_report(kGate + "/withdraw-loopback/baseline.results.json"));
  return s;
}

TEST(ChooseFlows, ServerPairsFirstThenLoopbackPairsEvenlyOneDirectionEach) {
  auto base = recorded_baseline();
  ASSERT_FALSE(base.reachable.empty());
  auto all = twin::replay::choose_flows(clos(), base, 1000);
  ASSERT_GE(all.size(), 2u);
  // server1 <-> server2 in both families, from the servers' own addresses.
  EXPECT_EQ(all[0].name(), "server1 -> server2 10.0.4.10");
  EXPECT_EQ(all[0].source, "10.0.1.10");
  EXPECT_EQ(all[1].name(), "server1 -> server2 2001:db8:4::10");
  EXPECT_EQ(all[1].source, "2001:db8:1::10");
  // Six FRR nodes: 15 loopback pairs per family, less spine1-spine2 (the spines share AS 65000,
  // so neither accepts the other's loopback through a leaf): 14 per family, one direction each.
  EXPECT_EQ(all.size(), 2u + 28u);
  std::set<std::string> pairs;
  for (const auto& f : all) {
    EXPECT_TRUE(pairs.insert(std::min(f.src_node, f.dst_node) + "|" +
                             std::max(f.src_node, f.dst_node) + "|" +
                             (f.destination.find(':') == std::string::npos ? "4" : "6"))
                    .second)
        << f.name();
    if (f.src_node.rfind("server", 0) != 0) {
      EXPECT_THAT(f.source, ::testing::AnyOf(HasSubstr("10.255."), HasSubstr("fd00:255::")));
    }
  }
  // Capped: the servers first, then every k-th loopback pair.
  auto few = twin::replay::choose_flows(clos(), base, 7);
  ASSERT_EQ(few.size(), 7u);
  EXPECT_EQ(few[0].name(), all[0].name());
  EXPECT_EQ(few[1].name(), all[1].name());
  std::set<std::string> sources;
  for (size_t i = 2; i < few.size(); ++i) sources.insert(few[i].src_node);
  EXPECT_GE(sources.size(), 3u) << "sampled across the fabric, not from one node";
  // A pair that did not answer in the baseline is not streamed.
  twin::replay::NetState none;
  EXPECT_TRUE(twin::replay::choose_flows(clos(), none, 32).empty());
}

TEST(OutageReason, FlowsOverTheBudgetWorstFirstAndOnlyJudgedOnes) {
  twin::runtime::StreamStats s;
  s.flows = {summarize_flow("a -> b 10.0.0.2", echoes(500, {}), 5000),
             summarize_flow("c -> d 10.0.0.4", echoes(500, [] {
                              std::set<int> l;
                              for (int i = 100; i < 250; ++i) l.insert(i);
                              return l;
                            }()),
                            5000),
             summarize_flow("e -> f 10.0.0.6", echoes(500, [] {
                              std::set<int> l;
                              for (int i = 100; i < 400; ++i) l.insert(i);
                              return l;
                            }()),
                            5000),
             summarize_flow("g -> h 10.0.0.8", echoes(500, [] {
                              std::set<int> l;
                              for (int i = 0; i < 500; ++i) l.insert(i);
                              return l;
                            }()),
                            5000)};
  FlowStats broken;
  broken.name = "x -> y 10.0.0.9";
  broken.error = "entering network namespace: gone";
  s.flows.push_back(broken);
  auto r = twin::replay::outage_reason(s, std::chrono::milliseconds(1000), {"g -> h 10.0.0.8"});
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->category, "outage");
  EXPECT_EQ(r->rank, twin::replay::reason_rank("outage"));
  EXPECT_EQ(r->subjects, (std::vector<std::string>{"e -> f 10.0.0.6: 3000 ms (lost 300 of 500 echoes)",
                                                   "c -> d 10.0.0.4: 1500 ms (lost 150 of 500 echoes)"}));
  EXPECT_EQ(r->message,
            "2 flows lost traffic for longer than the 1000 ms budget while the change ran: "
            "e -> f 10.0.0.6: 3000 ms (lost 300 of 500 echoes), c -> d 10.0.0.4: 1500 ms (lost "
            "150 of 500 echoes)");
  // A budget above every judged outage: no reason.
  EXPECT_FALSE(twin::replay::outage_reason(s, std::chrono::milliseconds(3000), {"g -> h 10.0.0.8"}));
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Settling after a change to a node's kernel state: BGP sessions gone silent

namespace {
nlohmann::json silent_leaf4() {
  // leaf4 4 s after IPv6 was disabled on swp1 (FRR 8.4, datacenter defaults: keepalive 3 s,
  // hold 9 s): swp1 last heard 5 s ago and still Established; swp2 heard 2 s ago.
  return nlohmann::json::parse(twin_test::read(std::string(TWIN_TEST_DATA) +
                                               "/frr84/settle/leaf4-ipv6-off-swp1.neighbors.json"));
}
}  // namespace

TEST(SilentSessions, AnEstablishedSessionNotHeardSinceTheChangeIsSilent) {
  EXPECT_THAT(twin::replay::silent_sessions(silent_leaf4(), 4000), ::testing::ElementsAre("swp1"));
  // Right after the change neither was heard since: both may still be going.
  EXPECT_THAT(twin::replay::silent_sessions(silent_leaf4(), 1500),
              ::testing::ElementsAre("swp1", "swp2"));
}

TEST(SilentSessions, NothingIsSilentOnceTheHoldTimeHasRunOutOrOnBadInput) {
  // 10 s after the change a silent session has been torn down by its hold timer; one that
  // still shows Established was heard (the JSON is a snapshot: past the hold time it proves
  // nothing more).
  EXPECT_TRUE(twin::replay::silent_sessions(silent_leaf4(), 10500).empty());
  EXPECT_TRUE(twin::replay::silent_sessions(nlohmann::json::array(), 4000).empty());
  nlohmann::json down = silent_leaf4();
  down["swp1"]["bgpState"] = "Active";
  EXPECT_TRUE(twin::replay::silent_sessions(down, 4000).empty());
}

TEST(SilentSessions, MinuteLongTimersAreNotWaitedFor) {
  nlohmann::json j = silent_leaf4();
  j["swp1"]["bgpTimerKeepAliveIntervalMsecs"] = 60000;  // FRR's traditional defaults
  j["swp1"]["bgpTimerHoldTimeMsecs"] = 180000;
  EXPECT_TRUE(twin::replay::silent_sessions(j, 4000).empty());
}

// Settling on FRR's evidence that nothing is in flight (replay::frr_busy), on the recorded
// drain of spine2 (FRR 8.4): the leaves' sessions toward spine2 sit in Active, spine2's own in
// Idle (Admin).

namespace {
std::map<std::string, twin::replay::NodeObservation> drained() {
  return twin_test::load_observations(kGate + "/drain-spine2/after.observe.jsonl");
}
// Sets `key` of peer `peer` in every family of `node`'s recorded summary.
void set_peer(std::map<std::string, twin::replay::NodeObservation>& obs, const std::string& node,
              const std::string& peer, const std::string& key, const nlohmann::json& value) {
  for (auto& [af, sum] : obs.at(node).bgp_summary->items())
    if (sum.contains("peers") && sum["peers"].contains(peer)) sum["peers"][peer][key] = value;
}
}  // namespace

TEST(IdleEvidence, SessionsDownBecauseTheirOtherEndIsShutAreSettled) {
  auto s = twin::replay::state_from_observations(drained());
  ASSERT_EQ(s.sessions.at("leaf1 swp2").state, "Active");
  EXPECT_TRUE(s.sessions.at("spine2 swp1").admin);
  EXPECT_FALSE(s.sessions.at("leaf1 swp2").admin);
  EXPECT_EQ(twin::replay::frr_busy(s, clos()), "");
  // The tables' versions, every family FRR reports.
  EXPECT_EQ(s.bgp_tables.at("leaf1"), "ipv4Unicast 15 ipv6Unicast 13 ");
}

TEST(IdleEvidence, ASessionThatMayStillComeUpOrAQueuedMessageIsWorkInFlight) {
  auto obs = drained();
  // spine2 no longer shut: leaf1's session toward it may come up when a timer fires.
  for (const char* p : {"swp1", "swp2", "swp3", "swp4"})
    set_peer(obs, "spine2", p, "peerState", "OK");
  EXPECT_EQ(twin::replay::frr_busy(twin::replay::state_from_observations(obs), clos()),
            "leaf1 swp2: Active");
  obs = drained();
  set_peer(obs, "leaf3", "swp1", "outq", 2);
  set_peer(obs, "leaf3", "swp1", "inq", 1);
  // Both families' queues of the session add up.
  EXPECT_EQ(twin::replay::frr_busy(twin::replay::state_from_observations(obs), clos()),
            "leaf3 swp1: 6 BGP messages queued");
  obs = drained();
  obs.at("leaf2").routes4 = twin::harness_error("timed out");
  EXPECT_THAT(twin::replay::frr_busy(twin::replay::state_from_observations(obs), clos()),
              HasSubstr("no data: leaf2: routes: timed out"));
}

TEST(IdleEvidence, ANumberedSessionsOtherEndIsThePeersSessionTowardThisNodesAddress) {
  twin::plan::Plan p;
  p.nodes.resize(2);
  p.nodes[0].name = "a";
  p.nodes[0].interfaces.push_back({});
  p.nodes[0].interfaces[0].name = "eth1";
  p.nodes[0].interfaces[0].addresses = {"10.0.0.1/30"};
  p.nodes[1].name = "b";
  p.nodes[0].interfaces[0].addresses.push_back("fd00:0:0::1/64");
  p.sessions = {{"a", "", "b", "10.0.0.2"}, {"b", "", "a", "10.0.0.1"}, {"b", "", "a", "10.9.9.9"},
                {"a", "", "b", "fd00::2"}, {"b", "", "a", "fd00::1"}};
  twin::replay::NetState s;
  s.sessions["a 10.0.0.2"].state = "Connect";
  s.sessions["b 10.0.0.1"].state = "Idle (Admin)";
  s.sessions["b 10.0.0.1"].admin = true;
  s.sessions["b 10.9.9.9"].state = "Idle (Admin)";
  s.sessions["b 10.9.9.9"].admin = true;
  EXPECT_EQ(twin::replay::frr_busy(s, p), "");
  // The same address however it is spelled: fd00::1 is a's fd00:0:0::1.
  s.sessions["a fd00::2"].state = "Active";
  s.sessions["b fd00::1"].state = "Idle (Admin)";
  s.sessions["b fd00::1"].admin = true;
  EXPECT_EQ(twin::replay::frr_busy(s, p), "");
  // b's IPv4 session toward a is still shut, but it is not this IPv6 session's other end.
  s.sessions["b fd00::1"] = {"Idle"};
  EXPECT_EQ(twin::replay::frr_busy(s, p), "a fd00::2: Active");
  s.sessions["b fd00::1"] = {"Idle (Admin)", -1, -1, true};
  // Only the session toward a's own address is its other end, not another one b shut.
  s.sessions["b 10.0.0.1"] = {"Active"};
  EXPECT_EQ(twin::replay::frr_busy(s, p), "a 10.0.0.2: Connect");
}

TEST(IdleEvidence, LabsWithTimersTheEvidenceDoesNotSeeWaitTheQuietPeriod) {
  using twin::replay::idle_evidence_blocked;
  const std::map<std::string, std::string> none;
  // Generated configs: datacenter defaults, coalesce-time 0.
  EXPECT_EQ(idle_evidence_blocked(clos(), none, ""), "");
  auto p = clos();
  p.find("leaf2")->daemons.push_back("bfdd");
  EXPECT_EQ(idle_evidence_blocked(p, none, ""), "bfdd runs on leaf2");
  const std::string leaf3 = clos().find("leaf3")->frr_config;
  EXPECT_EQ(
      idle_evidence_blocked(
          clos(),
          {{"leaf3", leaf3 + "router bgp 65103\n neighbor fabric advertisement-interval 2\n"}}, ""),
      "leaf3's config has advertisement-interval");
  EXPECT_EQ(idle_evidence_blocked(clos(), {{"leaf3", leaf3 + "router ospf\n"}}, ""),
            "leaf3's config needs ospfd");
  EXPECT_EQ(idle_evidence_blocked(
                clos(),
                {{"leaf1", "router bgp 65101\n neighbor swp1 interface remote-as external\n"}}, ""),
            "leaf1's config has no coalesce-time 0");
  EXPECT_EQ(idle_evidence_blocked(clos(), none, "router bgp 65101\n update-delay 5\n"),
            "the change sets update-delay");
  p = clos();
  p.find("spine1")->backend = twin::topology::Backend::kLibvirt;
  p.find("spine1")->daemons.clear();  // a VM's NOS starts its own (the planner lists none)
  EXPECT_EQ(idle_evidence_blocked(p, none, ""), "spine1 runs no FRR daemons of twin's");
  p = clos();
  p.find("leaf4")->frr_config.clear();  // an own config, not read
  EXPECT_EQ(idle_evidence_blocked(p, none, ""), "leaf4's running config is not known");
  p.tenants.push_back({});
  EXPECT_EQ(idle_evidence_blocked(p, none, ""), "the lab has tenants (EVPN and VRF tables)");
}
