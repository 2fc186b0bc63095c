// Unit tests for link rates (core/rate.hpp, the loader's `bandwidth:` and `delay:`) and the
// traffic module's pure part (traffic/traffic.hpp): patterns, paths with per-hop ECMP, max-min
// fair shares, iperf3's JSON and the kernel's counters as recorded from real runs
// (tests/data/traffic/), and the figures.
#include "twin/traffic/traffic.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "twin/core/diagnostics.hpp"
#include "twin/core/rate.hpp"
#include "twin/plan/plan.hpp"
#include "twin/topology/generate.hpp"
#include "twin/topology/loader.hpp"
#include "twin/traffic/run.hpp"
#include "validators/traffic/traffic.hpp"

namespace {

using twin::traffic::Endpoint;
using twin::traffic::Pattern;

std::string data(const std::string& name) {
  std::ifstream f(std::string(TWIN_DATA_DIR) + "/tests/data/traffic/" + name);
  if (!f) throw std::runtime_error("missing " + name);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

twin::plan::Plan plan_of_text(const std::string& text) {
  twin::Diagnostics d;
  auto t = twin::topology::load_topology_text(text, "t.yaml", "", d);
  if (!t || !d.empty()) throw std::runtime_error(d.format());
  return twin::plan::make_plan(*t, "");
}

twin::plan::Plan plan_of(const std::string& topology) {
  twin::Diagnostics d;
  auto t = twin::topology::load_topology(std::string(TWIN_DATA_DIR) + "/topologies/" + topology, d);
  if (!t) throw std::runtime_error(d.format());
  return twin::plan::make_plan(*t, "");
}

// Two leaves, two spines, a server per leaf; every fabric link 200M, server links 100M.
const char* kSmall = R"(version: 1
name: small
defaults: {kind: frr, image: frr-8.4, bandwidth: 200M}
nodes:
  spine1: {asn: 65000, loopback: [10.255.0.1/32]}
  spine2: {asn: 65000, loopback: [10.255.0.2/32]}
  leaf1: {asn: 65101, loopback: [10.255.1.1/32]}
  leaf2: {asn: 65102, loopback: [10.255.1.2/32]}
  s1: {kind: host, gateway: 10.0.1.1}
  s2: {kind: host, gateway: 10.0.2.1}
  s3: {kind: host, gateway: 10.0.3.1}
links:
  - endpoints: [leaf1:swp1, spine1:swp1]
  - endpoints: [leaf1:swp2, spine2:swp1]
  - endpoints: [leaf2:swp1, spine1:swp2]
  - endpoints: [leaf2:swp2, spine2:swp2]
  - endpoints: [leaf1:swp3, s1:eth0]
    bandwidth: 100M
    addresses: {leaf1: 10.0.1.1/24, s1: 10.0.1.10/24}
  - endpoints: [leaf2:swp3, s2:eth0]
    bandwidth: 100M
    delay: 2ms
    addresses: {leaf2: 10.0.2.1/24, s2: 10.0.2.10/24}
  - endpoints: [leaf2:swp4, s3:eth0]
    bandwidth: 100M
    addresses: {leaf2: 10.0.3.1/24, s3: 10.0.3.10/24}
)";

TEST(Rate, ParsesSiPrefixesInBitsPerSecond) {
  EXPECT_EQ(twin::parse_rate("100M", nullptr), 100'000'000u);
  EXPECT_EQ(twin::parse_rate("1G", nullptr), 1'000'000'000u);
  EXPECT_EQ(twin::parse_rate("2.5G", nullptr), 2'500'000'000u);
  EXPECT_EQ(twin::parse_rate("500k", nullptr), 500'000u);
  EXPECT_EQ(twin::parse_rate("10Gbit", nullptr), 10'000'000'000u);
  twin::RateProblem why;
  // tc's "bps" is bytes per second, a data sheet's bits: refused, with both readings.
  EXPECT_FALSE(twin::parse_rate("100Mbps", &why));
  EXPECT_EQ(why.hint, "write 100M for 100 Mbit/s (twin's rates are bits per second)");
  // A bare number is bits per second, as tc reads it; the hint is a valid spelling of it.
  EXPECT_FALSE(twin::parse_rate("100000000", &why));
  EXPECT_EQ(why.hint, "add a unit: 100M (bits per second; k, M, G, T are powers of 1000)");
  EXPECT_EQ(twin::parse_rate("100M", nullptr), 100'000'000u);
  EXPECT_FALSE(twin::parse_rate("0", &why));
  EXPECT_EQ(why.hint, "a rate from 8k to 400G, e.g. 100M (bits per second)");
  EXPECT_FALSE(twin::parse_rate("10m", &why));
  EXPECT_EQ(why.hint, "the prefixes are k, M, G, T (upper case but k): 10M");
  EXPECT_FALSE(twin::parse_rate("1T", &why));  // above 400G
  EXPECT_NE(why.message.find("above 400G"), std::string::npos);
  EXPECT_FALSE(twin::parse_rate("1k", &why));  // below 8k
  EXPECT_FALSE(twin::parse_rate("fast", &why));
  EXPECT_FALSE(twin::parse_rate("-1G", &why));
}

TEST(Rate, TheSchemaTakesWhatTheLoaderTakes) {
  std::ifstream f(std::string(TWIN_DATA_DIR) + "/topologies/schema/topology.schema.json");
  auto schema = nlohmann::json::parse(f);
  const auto& def = schema.at("$defs").at("bandwidth");
  EXPECT_EQ(def.at("pattern"), std::string("^") + twin::kRatePattern + "$");
  EXPECT_EQ(schema.at("$defs").at("link").at("properties").at("bandwidth").at("$ref"),
            "#/$defs/bandwidth");
  EXPECT_EQ(schema.at("properties").at("defaults").at("properties").at("bandwidth").at("$ref"),
            "#/$defs/bandwidth");
}

TEST(Rate, SpellsRatesForTcAndPeople) {
  EXPECT_EQ(twin::tc_rate(100'000'000), "100mbit");
  EXPECT_EQ(twin::tc_rate(2'500'000'000ULL), "2500mbit");
  EXPECT_EQ(twin::tc_rate(10'000'000'000ULL), "10gbit");
  EXPECT_EQ(twin::tc_rate(12345), "12345bit");
  EXPECT_EQ(twin::human_rate(950'312'000), "950.3 Mbit/s");
  EXPECT_EQ(twin::human_rate(2.5e9), "2.5 Gbit/s");
}

TEST(LinkRates, EachPortCarriesItsLinksRateAndDelay) {
  auto p = plan_of_text(kSmall);
  auto rate = [&](const char* node, const char* port) {
    return twin::plan::find_interface(*p.find(node), port)->rate_bps;
  };
  EXPECT_EQ(rate("leaf1", "swp1"), 200'000'000u);   // from defaults
  EXPECT_EQ(rate("spine1", "swp1"), 200'000'000u);  // both ends
  EXPECT_EQ(rate("s1", "eth0"), 100'000'000u);      // the link's own
  EXPECT_EQ(twin::plan::find_interface(*p.find("s2"), "eth0")->delay_ms, 2);
  EXPECT_EQ(twin::plan::find_interface(*p.find("leaf2"), "swp3")->delay_ms, 2);
  EXPECT_EQ(twin::plan::find_interface(*p.find("leaf1"), "swp3")->delay_ms, 0);
  // And they survive the state file.
  twin::plan::Plan back = twin::plan::plan_from_json(twin::plan::to_json(p));
  EXPECT_EQ(twin::plan::find_interface(*back.find("s2"), "eth0")->rate_bps, 100'000'000u);
  EXPECT_EQ(twin::plan::find_interface(*back.find("s2"), "eth0")->delay_ms, 2);
}

TEST(LinkRates, ABadRateIsNamedAtItsField) {
  std::string text = kSmall;
  text.replace(text.find("bandwidth: 100M"), 15, "bandwidth: 100000000");
  twin::Diagnostics d;
  auto t = twin::topology::load_topology_text(text, "t.yaml", "", d);
  ASSERT_TRUE(!d.empty());
  std::string msg = d.format();
  EXPECT_NE(msg.find("links[4].bandwidth"), std::string::npos) << msg;
  EXPECT_NE(msg.find("add a unit: 100M (bits per second"), std::string::npos) << msg;
  text = kSmall;
  text.replace(text.find("delay: 2ms"), 10, "delay: 2s");
  twin::Diagnostics d2;
  (void)twin::topology::load_topology_text(text, "t.yaml", "", d2);
  EXPECT_NE(d2.format().find("delay above 1s"), std::string::npos) << d2.format();
}

TEST(Traffic, EndpointsAreServersElseLoopbacks) {
  auto p = plan_of_text(kSmall);
  auto eps = twin::traffic::endpoints(p);
  ASSERT_EQ(eps.size(), 3u);
  EXPECT_EQ(eps[0].node, "s1");
  EXPECT_EQ(eps[0].address, "10.0.1.10");
  EXPECT_EQ(eps[0].interface, "eth0");
  // A lab without servers: the routers' IPv4 loopbacks.
  auto two = plan_of("two-node.yaml");
  auto lo = twin::traffic::endpoints(two);
  ASSERT_EQ(lo.size(), 2u);
  EXPECT_EQ(lo[0].interface, "lo");
  // A node whose packets cannot start here is left out.
  EXPECT_EQ(twin::traffic::endpoints(p, {"s2"}).size(), 2u);
}

TEST(Traffic, PatternsPairNodesRailByRail) {
  std::vector<Endpoint> eps = {{"a", "10.0.0.1", "eth0", 0}, {"a", "10.1.0.1", "eth1", 1},
                               {"b", "10.0.0.2", "eth0", 0}, {"b", "10.1.0.2", "eth1", 1},
                               {"c", "10.0.0.3", "eth0", 0}, {"d", "10.0.0.4", "eth0", 0}};
  auto names = [](const std::vector<twin::traffic::PairSpec>& ps) {
    std::string s;
    for (const auto& p : ps) s += p.src.address + ">" + p.dst.address + " ";
    return s;
  };
  auto all = twin::traffic::pattern_pairs(Pattern::kAllToAll, eps, 2);
  ASSERT_TRUE(all);
  // a-b on both rails, every other pair on rail 0 (c and d have one NIC): 2+2 + 10 = 14.
  EXPECT_EQ(all->size(), 14u);
  EXPECT_EQ(all->front().streams, 2);
  EXPECT_EQ(names(*twin::traffic::pattern_pairs(Pattern::kRing, eps, 1)),
            "10.0.0.1>10.0.0.2 10.1.0.1>10.1.0.2 10.0.0.2>10.0.0.3 10.0.0.3>10.0.0.4 "
            "10.0.0.4>10.0.0.1 ");
  EXPECT_EQ(names(*twin::traffic::pattern_pairs(Pattern::kIncast, eps, 1, "c")),
            "10.0.0.1>10.0.0.3 10.0.0.2>10.0.0.3 10.0.0.4>10.0.0.3 ");
  EXPECT_EQ(names(*twin::traffic::pattern_pairs(Pattern::kPairs, eps, 1)),
            "10.0.0.1>10.0.0.3 10.0.0.3>10.0.0.1 10.0.0.2>10.0.0.4 10.0.0.4>10.0.0.2 ");
  auto bad = twin::traffic::pattern_pairs(Pattern::kIncast, eps, 1, "zz");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "--to zz is not an endpoint of this lab; endpoints: a, b, c, d");
  EXPECT_FALSE(twin::traffic::pattern_pairs(Pattern::kRing, {eps[0]}, 1));
}

TEST(Traffic, APathSplitsOverTheSpinesAtTheLeaf) {
  auto p = plan_of("clos-2x4.yaml");
  auto eps = twin::traffic::endpoints(p);
  ASSERT_EQ(eps.size(), 2u);
  auto path = twin::traffic::pair_path(p, eps[0], eps[1]);
  ASSERT_TRUE(path.reachable);
  using Port = twin::traffic::Port;
  EXPECT_DOUBLE_EQ(path.share.at(Port{"server1", "eth0"}), 1.0);
  EXPECT_DOUBLE_EQ(path.share.at(Port{"leaf1", "swp1"}), 0.5);
  EXPECT_DOUBLE_EQ(path.share.at(Port{"leaf1", "swp2"}), 0.5);
  EXPECT_DOUBLE_EQ(path.share.at(Port{"spine1", "swp4"}), 0.5);
  EXPECT_DOUBLE_EQ(path.share.at(Port{"spine2", "swp4"}), 0.5);
  EXPECT_DOUBLE_EQ(path.share.at(Port{"leaf4", "swp3"}), 1.0);
  EXPECT_EQ(path.share.size(), 6u);  // nothing through another leaf or server
  ASSERT_EQ(path.splits.size(), 1u);
  EXPECT_EQ(path.splits.at("leaf1"), (std::vector<std::string>{"swp1", "swp2"}));
  // A spine's link down in the intent: one path left, no split.
  auto q = p;
  for (auto& i : q.find("leaf1")->interfaces)
    if (i.name == "swp2") i.up = false;
  auto one = twin::traffic::pair_path(q, eps[0], eps[1]);
  EXPECT_DOUBLE_EQ(one.share.at(Port{"leaf1", "swp1"}), 1.0);
  EXPECT_TRUE(one.splits.empty());
}

TEST(Traffic, FairSharesAreMaxMinOverTheBottlenecks) {
  auto p = plan_of_text(kSmall);
  auto eps = twin::traffic::endpoints(p);
  // s1 -> s2 and s1 -> s3: both leave through s1's 100M port, shared evenly; s3 -> s2 meets
  // s1 -> s2 at leaf2's 100M port to s2 — s1's two flows are held to 50 by s1's port, so
  // s3 -> s2 gets the other 50 at leaf2:swp3 as well.
  auto a = twin::traffic::pair_path(p, eps[0], eps[1]);
  auto b = twin::traffic::pair_path(p, eps[0], eps[2]);
  auto c = twin::traffic::pair_path(p, eps[2], eps[1]);
  auto fair = twin::traffic::fair_shares(p, {&a, &b, &c});
  const double goodput = 100e6 * (1500.0 - 52) / (1500.0 + 14);  // TCP's payload at MTU 1500
  ASSERT_EQ(fair.size(), 3u);
  EXPECT_NEAR(fair[0], goodput / 2, 1);
  EXPECT_NEAR(fair[1], goodput / 2, 1);
  EXPECT_NEAR(fair[2], goodput / 2, 1);
  // Alone, s3 -> s2 gets the whole port.
  auto alone = twin::traffic::fair_shares(p, {&c});
  EXPECT_NEAR(alone[0], goodput, 1);
  // No rate on its way: unbounded (0).
  auto q = plan_of("clos-2x4.yaml");
  auto qe = twin::traffic::endpoints(q);
  auto free_path = twin::traffic::pair_path(q, qe[0], qe[1]);
  EXPECT_EQ(twin::traffic::fair_shares(q, {&free_path}), (std::vector<double>{0}));
}

TEST(Traffic, ReadsIperf3ClientsAsRecorded) {
  auto tcp = nlohmann::json::parse(data("iperf3-tcp-2streams.json"));
  auto flows = twin::traffic::parse_iperf_client(tcp, 3, 2);
  ASSERT_EQ(flows.size(), 2u);
  EXPECT_EQ(flows[0].pair, 3);
  EXPECT_EQ(flows[1].stream, 1);
  EXPECT_TRUE(flows[0].error.empty());
  EXPECT_GT(flows[0].src_port, 1024);
  EXPECT_NE(flows[0].src_port, flows[1].src_port);
  // Recorded over a 200 Mbit/s token bucket: the two streams share it.
  double sum = flows[0].bps + flows[1].bps;
  EXPECT_GT(sum, 180e6);
  EXPECT_LT(sum, 200e6);
  EXPECT_EQ(flows[0].retransmits + flows[1].retransmits,
            tcp["end"]["sum_sent"]["retransmits"].get<long>());

  auto udp = nlohmann::json::parse(data("iperf3-udp-300M-over-200M.json"));
  auto u = twin::traffic::parse_iperf_client(udp, 0, 1);
  ASSERT_EQ(u.size(), 1u);
  EXPECT_GT(u[0].lost, 0);  // 300M into 200M: the bucket drops a third
  EXPECT_NEAR(u[0].sent_bps, 300e6, 3e6);
  EXPECT_NEAR(u[0].bps, 200e6, 10e6);

  auto refused =
      twin::traffic::parse_iperf_client(nlohmann::json::parse(data("iperf3-refused.json")), 7, 1);
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_EQ(refused[0].error, "unable to connect to server: Connection refused");
  EXPECT_EQ(twin::traffic::parse_iperf_client(nlohmann::json(), 0, 1)[0].error,
            "iperf3 printed no JSON");
}

TEST(Traffic, FindsTheServersListeningSocket) {
  // Recorded from an iperf3 server on 10.9.0.2 port 5301 (0x14B5).
  EXPECT_TRUE(twin::traffic::listening_on(data("proc-net-tcp.txt"), 5301));
  EXPECT_FALSE(twin::traffic::listening_on(data("proc-net-tcp.txt"), 5302));
  EXPECT_FALSE(twin::traffic::listening_on(data("proc-net-tcp6.txt"), 5301));
  EXPECT_FALSE(twin::traffic::listening_on("", 5301));
}

TEST(Traffic, ReadsPortCountersAndQdiscDrops) {
  auto c = twin::traffic::parse_counters(nlohmann::json::parse(data("ip-link-stats.json")),
                                         nlohmann::json::parse(data("tc-qdisc-tbf.json")));
  ASSERT_TRUE(c.count("twtv0"));
  EXPECT_GT(c["twtv0"].tx_bytes, 800'000'000u);
  EXPECT_EQ(c["twtv0"].qdisc_drops, 61427u);  // the token bucket's, as tc printed them
  EXPECT_EQ(c["lo"].qdisc_drops, 0u);
}

TEST(Traffic, PercentilesAndVariation) {
  std::vector<double> v;
  for (int i = 1; i <= 1000; ++i) v.push_back(i);
  EXPECT_EQ(twin::traffic::percentile(v, 50), 500);
  EXPECT_EQ(twin::traffic::percentile(v, 99), 990);
  EXPECT_EQ(twin::traffic::percentile(v, 99.9), 999);
  EXPECT_EQ(twin::traffic::percentile(v, 100), 1000);
  EXPECT_EQ(twin::traffic::percentile({}, 50), 0);
  EXPECT_DOUBLE_EQ(twin::traffic::coefficient_of_variation({10, 10, 10}), 0);
  EXPECT_DOUBLE_EQ(twin::traffic::coefficient_of_variation({5, 15}), 0.5);
  EXPECT_DOUBLE_EQ(twin::traffic::coefficient_of_variation({7}), 0);
}

TEST(Traffic, SummaryFindsTheSlowestPairAndAnIdleEcmpMember) {
  auto p = plan_of_text(kSmall);
  auto eps = twin::traffic::endpoints(p);
  auto pairs = *twin::traffic::pattern_pairs(Pattern::kRing, eps, 1);  // s1>s2, s2>s3, s3>s1
  twin::traffic::Recorded rec;
  rec.duration_s = 5;
  for (int k = 0; k < 3; ++k) {
    twin::traffic::FlowResult f;
    f.pair = k;
    f.bps = k == 1 ? 30e6 : 90e6;
    rec.flows.push_back(f);
  }
  // leaf1 sent all of s1's traffic up swp1 and none up swp2: a spine's ECMP member lost.
  rec.before["leaf1"]["swp1"] = {1000, 0, 0, 0};
  rec.before["leaf1"]["swp2"] = {1000, 0, 0, 0};
  rec.after["leaf1"]["swp1"] = {1000 + 56'000'000, 0, 0, 0};
  rec.after["leaf1"]["swp2"] = {1000 + 100, 0, 0, 7};
  rec.rtt_unloaded = {0.05, 0.06, 0.07};
  rec.unloaded_sent = 3;
  rec.rtt_loaded = {1, 2, 3, 40};
  rec.loaded_sent = 5;
  auto r = twin::traffic::summarize(p, pairs, rec);
  EXPECT_DOUBLE_EQ(r.aggregate_bps, 210e6);
  ASSERT_EQ(r.slowest, 1);  // a pair: its one flow
  EXPECT_EQ(r.pair_results[1].src, "s2 10.0.2.10");
  EXPECT_EQ(r.pair_results[1].flows, 1);
  EXPECT_EQ(r.fair_basis, "link rates");
  // Every flow alone on its source port (each node sends one flow): 100M's goodput each.
  const double goodput = 100e6 * (1500.0 - 52) / (1500.0 + 14);
  EXPECT_NEAR(r.flows[0].fair_bps, goodput, 1);
  EXPECT_NEAR(r.slowest_ratio, 30e6 / goodput, 1e-9);
  const twin::traffic::EcmpGroup* g = nullptr;
  for (const auto& x : r.groups)
    if (x.node == "leaf1") g = &x;
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->ports, (std::vector<std::string>{"swp1", "swp2"}));
  EXPECT_EQ(g->idle, (std::vector<std::string>{"swp2"}));
  EXPECT_NEAR(g->max_min, 56'000'000 / 100.0, 1e-6);
  EXPECT_EQ(r.drops_shaped, 7u);  // leaf1:swp2 is a 200M port
  EXPECT_EQ(r.loaded.lost, 1);
  EXPECT_DOUBLE_EQ(r.loaded.p50_ms, 2);
  EXPECT_DOUBLE_EQ(r.loaded.p99_ms, 40);
  EXPECT_DOUBLE_EQ(r.unloaded.p99_ms, 0.07);
  auto j = twin::traffic::to_json(r);
  EXPECT_EQ(j["pattern"], "all-to-all");  // summarize leaves the pattern to its caller
  EXPECT_EQ(j["slowest"]["src"], "s2 10.0.2.10");
  EXPECT_EQ(j["ecmp_groups"][0]["idle"][0], "swp2");
  std::string text = twin::traffic::to_text(r);
  EXPECT_NE(text.find("slowest pair   30 Mbit/s over 1 flow(s)  s2 10.0.2.10 -> s3 10.0.3.10"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("idle: swp2"), std::string::npos) << text;
}

// A port's utilisation is its bytes over the seconds between the counter reads (the measured
// ones, after -O); a report without that interval takes the test's duration.
TEST(Traffic, APortsUtilisationIsOverTheSecondsItsCountersSpan) {
  auto p = plan_of_text(kSmall);
  auto pairs = *twin::traffic::pattern_pairs(Pattern::kRing, twin::traffic::endpoints(p), 1);
  twin::traffic::Recorded rec;
  rec.duration_s = 2;
  rec.omit_s = 1;
  rec.counters_s = 3;
  rec.before["leaf1"]["swp1"] = {0, 0, 0, 0};
  rec.after["leaf1"]["swp1"] = {75'000'000, 0, 0, 0};  // 200 Mbit/s for 3 s
  auto r = twin::traffic::summarize(p, pairs, rec);
  ASSERT_EQ(r.ports.size(), 1u);
  EXPECT_EQ(r.ports[0].rate_bps, 200'000'000u);
  EXPECT_DOUBLE_EQ(r.ports[0].utilisation, 1.0);
  rec.counters_s = 0;
  EXPECT_DOUBLE_EQ(twin::traffic::summarize(p, pairs, rec).ports[0].utilisation, 1.5);
}

// What the fair shares put on a port, over its rate: how near its rate the design runs it
// (no-drops' kNearRateByDesign). A ring of one flow per pair on kSmall: each flow's fair share is
// its 100M server port's goodput (1448 of 1514 bytes a frame); leaf1's uplink to spine1 carries
// half of s1 -> s2's, leaf2's port to s2 all of it.
TEST(Traffic, APortsDesignedLoadIsTheFairSharesOverItsRate) {
  auto p = plan_of_text(kSmall);
  auto pairs = *twin::traffic::pattern_pairs(Pattern::kRing, twin::traffic::endpoints(p), 1);
  twin::traffic::Recorded rec;
  rec.duration_s = 3;
  for (int k = 0; k < 3; ++k) {
    twin::traffic::FlowResult f;
    f.pair = k;
    f.bps = 90e6;
    rec.flows.push_back(f);
  }
  for (const auto& [node, port] : {std::pair{"leaf1", "swp1"}, {"leaf2", "swp3"}}) {
    rec.before[node][port] = {0, 0, 0, 0};
    rec.after[node][port] = {1'000'000, 0, 0, 0};
  }
  auto r = twin::traffic::summarize(p, pairs, rec);
  ASSERT_EQ(r.ports.size(), 2u);
  const double goodput = 100e6 * 1448 / 1514;
  EXPECT_NEAR(r.ports[0].designed, goodput / 2 / 200e6, 1e-3);  // leaf1 swp1
  EXPECT_NEAR(r.ports[1].designed, goodput / 100e6, 1e-3);      // leaf2 swp3
}

TEST(Traffic, WithoutRatesTheFairShareIsTheMeasuredMean) {
  auto p = plan_of("clos-2x4.yaml");
  auto pairs = *twin::traffic::pattern_pairs(Pattern::kAllToAll, twin::traffic::endpoints(p), 1);
  twin::traffic::Recorded rec;
  rec.duration_s = 1;
  for (int k = 0; k < 2; ++k) {
    twin::traffic::FlowResult f;
    f.pair = k;
    f.bps = k == 0 ? 4e9 : 6e9;
    rec.flows.push_back(f);
  }
  auto r = twin::traffic::summarize(p, pairs, rec);
  EXPECT_EQ(r.fair_basis, "measured mean (the lab declares no link rates)");
  EXPECT_DOUBLE_EQ(r.flows[0].fair_bps, 5e9);
  EXPECT_DOUBLE_EQ(r.slowest_ratio, 0.8);
}

TEST(Traffic, SaysHowTheRoutersHash) {
  using H = twin::traffic::Hashing;
  EXPECT_EQ(twin::traffic::describe_hashing(
                {{"leaf1", H{"3", "55", "11"}}, {"spine1", H{"3", "55", "22"}}}),
            "policy 3 (fields 0x37), a seed per node");
  EXPECT_EQ(twin::traffic::describe_hashing(
                {{"leaf1", H{"3", "55", "11"}}, {"spine1", H{"0", "7", "11"}}}),
            "policy 0 (L3: addresses only) on spine1; policy 3 (fields 0x37) on leaf1, one seed "
            "on every node (tiers hash alike)");
  EXPECT_EQ(twin::traffic::describe_hashing({}), "not read (no router)");
}

}  // namespace

// ---- The traffic validator family (validators/traffic/) ----------------------------------------

namespace {

// A ring on kSmall (s1>s2 across the spines, s2>s3 on leaf2, s3>s1 across) with `streams` flows
// per pair, each at `bps`, and leaf1's uplinks having sent `swp1`, `swp2` bytes.
twin::traffic::Report ring_report(int streams, double bps, uint64_t swp1, uint64_t swp2) {
  auto p = plan_of_text(kSmall);
  auto pairs = *twin::traffic::pattern_pairs(Pattern::kRing, twin::traffic::endpoints(p), streams);
  twin::traffic::Recorded rec;
  rec.duration_s = 3;
  for (int k = 0; k < 3; ++k)
    for (int s = 0; s < streams; ++s) {
      twin::traffic::FlowResult f;
      f.pair = k;
      f.stream = s;
      f.bps = bps;
      rec.flows.push_back(f);
    }
  rec.before["leaf1"]["swp1"] = {};
  rec.before["leaf1"]["swp2"] = {};
  rec.after["leaf1"]["swp1"] = {swp1, 0, 0, 0};
  rec.after["leaf1"]["swp2"] = {swp2, 0, 0, 0};
  rec.rtt_unloaded = {0.05};
  rec.unloaded_sent = 1;
  rec.rtt_loaded = {10};
  rec.loaded_sent = 1;
  auto r = twin::traffic::summarize(p, pairs, rec);
  r.pattern = Pattern::kRing;
  r.hash_policy = "policy 3 (fields 0x37), a seed per node";
  return r;
}

const twin::validate::TestResult* find(const std::vector<twin::validate::TestResult>& rs,
                                       const std::string& test, const std::string& node = "") {
  for (const auto& r : rs)
    if (r.test_name == test && (node.empty() || r.node == node)) return &r;
  return nullptr;
}

}  // namespace

TEST(TrafficFamily, AnIdleMemberIsAMissingNextHopWhenTheRouteLacksIt) {
  auto p = plan_of_text(kSmall);
  // 12 flows through leaf1 (6 per member: enough to judge), all bytes up swp1.
  auto r = ring_report(12, 3e6, 90'000'000, 0);
  twin::validators::RouteDevices routes;
  routes["leaf1"]["10.0.2.10"] = {"swp1"};
  auto rs = twin::validators::evaluate_traffic(p, twin::topology::TrafficSpec{}, r, routes);
  const auto* g = find(rs, "ecmp-balance", "leaf1");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->status, twin::validate::Status::kFailed);
  EXPECT_EQ(g->peer, "swp1,swp2");
  EXPECT_NE(g->message.find("likely cause: a missing ECMP member: leaf1's route to 10.0.2.10 has 1 "
                            "of 2 next hops (swp1; not swp2)"),
            std::string::npos)
      << g->message;
  // Each flow got 3 of ~8 Mbit/s (12 flows share each server's 100M): the bandwidth test fails
  // with the group's cause.
  const auto* e = find(rs, "effective-bandwidth");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->status, twin::validate::Status::kFailed);
  EXPECT_NE(e->message.find("a missing ECMP member"), std::string::npos) << e->message;
  // leaf2's counters were not read: no data, never a pass.
  const auto* g2 = find(rs, "ecmp-balance", "leaf2");
  ASSERT_NE(g2, nullptr);
  EXPECT_EQ(g2->status, twin::validate::Status::kError);
}

TEST(TrafficFamily, ABalancedGroupPassesAndTooFewFlowsSkip) {
  auto p = plan_of_text(kSmall);
  auto r = ring_report(12, 30e6, 50'000'000, 46'000'000);
  r.groups.erase(std::remove_if(r.groups.begin(), r.groups.end(),
                                [](const auto& g) { return g.node != "leaf1"; }),
                 r.groups.end());
  twin::topology::TrafficSpec spec;
  spec.effective_bandwidth = 0.5;
  auto rs = twin::validators::evaluate_traffic(p, spec, r);
  EXPECT_EQ(find(rs, "ecmp-balance", "leaf1")->status, twin::validate::Status::kPassed);
  // 12 flows each sharing s1's 100M three ways... fair is 100M's goodput / 12 per stream.
  EXPECT_EQ(find(rs, "effective-bandwidth")->status, twin::validate::Status::kPassed)
      << find(rs, "effective-bandwidth")->message;
  auto few = ring_report(2, 30e6, 50'000'000, 46'000'000);
  auto rs2 = twin::validators::evaluate_traffic(p, spec, few);
  const auto* s = find(rs2, "ecmp-balance", "leaf1");
  EXPECT_EQ(s->status, twin::validate::Status::kSkipped);
  EXPECT_NE(s->message.find("2 flow(s) cross leaf1's group of 2: too few"), std::string::npos);
}

TEST(TrafficFamily, DropsCountBelowThePortsRateOnly) {
  auto p = plan_of_text(kSmall);
  auto r = ring_report(1, 30e6, 1, 1);
  r.ports = {{"leaf2", "swp3", "s2:eth0", 36'000'000, 0.96, 100'000'000, 500},
             {"leaf1", "swp1", "spine1:swp1", 20'000'000, 0.27, 200'000'000, 3}};
  auto rs = twin::validators::evaluate_traffic(p, twin::topology::TrafficSpec{}, r);
  EXPECT_EQ(find(rs, "no-drops", "leaf2")->status, twin::validate::Status::kPassed);
  EXPECT_NE(find(rs, "no-drops", "leaf2")->message.find("a bottleneck, as designed"),
            std::string::npos);
  EXPECT_EQ(find(rs, "no-drops", "leaf1")->status, twin::validate::Status::kFailed);
  // ECMP puts more of TCP's flows on one member: at 85 % on average it was at its rate at times.
  r.ports[1].utilisation = 0.85;
  EXPECT_EQ(find(twin::validators::evaluate_traffic(p, twin::topology::TrafficSpec{}, r),
                 "no-drops", "leaf1")
                ->status,
            twin::validate::Status::kPassed);
  r.ports[1].utilisation = 0.75;
  EXPECT_EQ(find(twin::validators::evaluate_traffic(p, twin::topology::TrafficSpec{}, r),
                 "no-drops", "leaf1")
                ->status,
            twin::validate::Status::kFailed);  // ... and so is a port the fair shares load near its
                                               // rate, whatever it averaged.
  r.ports[1].designed = 0.8;
  EXPECT_EQ(find(twin::validators::evaluate_traffic(p, twin::topology::TrafficSpec{}, r),
                 "no-drops", "leaf1")
                ->status,
            twin::validate::Status::kPassed);
}

TEST(TrafficFamily, TailLatencyIsJudgedAgainstTheUnloadedFloor) {
  auto p = plan_of_text(kSmall);
  auto r = ring_report(1, 30e6, 1, 1);
  // Default budget: every queue of the longest round trip full, + 1 ms. s1 -> s2 crosses s1's
  // port and leaf2's (128 KiB at 100 Mbit/s: 10.49 ms each) and leaf1's uplink and the spine's
  // (at 200 Mbit/s: 5.24 ms each): 31.46 ms each way, 63.91 there and back, + 1 = 64.
  EXPECT_NEAR(twin::validators::round_trip_queues_ms(p, r), 62.91, 0.01);
  r.unloaded.p99_ms = 0.1;
  r.loaded.p99_ms = 60;
  auto rs = twin::validators::evaluate_traffic(p, twin::topology::TrafficSpec{}, r);
  const auto* t = find(rs, "tail-latency");
  EXPECT_EQ(t->status, twin::validate::Status::kPassed) << t->message;
  EXPECT_NE(t->expected.find("+ 64 ms (the lab's queues)"), std::string::npos) << t->expected;
  r.loaded.p99_ms = 70;  // more than the queues can hold: the CPU, or a queue twin did not make
  EXPECT_EQ(
      find(twin::validators::evaluate_traffic(p, twin::topology::TrafficSpec{}, r), "tail-latency")
          ->status,
      twin::validate::Status::kFailed);
  r.loaded.p99_ms = 20;
  twin::topology::TrafficSpec strict;
  strict.tail_latency_ms = 5;
  auto rs2 = twin::validators::evaluate_traffic(p, strict, r);
  EXPECT_EQ(find(rs2, "tail-latency")->status, twin::validate::Status::kFailed);
}

TEST(TrafficFamily, ASlowLinkInTheGroupIsTheLikelyCause) {
  std::string text = kSmall;
  text.replace(text.find("  - endpoints: [leaf1:swp2, spine2:swp1]\n"),
               std::string("  - endpoints: [leaf1:swp2, spine2:swp1]\n").size(),
               "  - endpoints: [leaf1:swp2, spine2:swp1]\n    bandwidth: 50M\n");
  auto p = plan_of_text(text);
  auto pairs = *twin::traffic::pattern_pairs(Pattern::kPairs, twin::traffic::endpoints(p), 1);
  twin::traffic::Recorded rec;
  rec.duration_s = 3;
  for (size_t k = 0; k < pairs.size(); ++k) {
    twin::traffic::FlowResult f;
    f.pair = static_cast<int>(k);
    f.bps = k == 0 ? 10e6 : 90e6;
    rec.flows.push_back(f);
  }
  auto r = twin::traffic::summarize(p, pairs, rec);
  auto rs = twin::validators::evaluate_traffic(p, twin::topology::TrafficSpec{}, r);
  const auto* e = find(rs, "effective-bandwidth");
  ASSERT_EQ(e->status, twin::validate::Status::kFailed);
  EXPECT_NE(e->message.find("a link at a lower rate: leaf1:swp2 runs 50 Mbit/s where the rest of "
                            "its ECMP group runs 200 Mbit/s"),
            std::string::npos)
      << e->message;
}

// ---- twin gen rail / gen clos rates ---------------------------------------------------------

TEST(GenRail, EachServersNicsGoToTheirRailsLeafAndEveryLeafToEverySpine) {
  twin::topology::RailSpec s;
  s.name = "r";
  s.servers = 6;
  s.rails = 2;
  s.spines = 3;
  s.servers_per_leaf = 4;  // groups of 4 and 2
  s.server_rate = "50M";
  s.fabric_rate = "100M";
  ASSERT_TRUE(twin::topology::check(s));
  auto p = plan_of_text(twin::topology::generate_rail(s));
  // 3 spines, 2 groups x 2 rails of leaves, 6 servers.
  EXPECT_EQ(p.nodes.size(), 3u + 4u + 6u);
  const auto* s5 = p.find("server5");  // the second group's first server
  ASSERT_NE(s5, nullptr);
  ASSERT_EQ(s5->interfaces.size(), 2u);
  EXPECT_EQ(s5->interfaces[0].peer_node, "rail1-leaf2");
  EXPECT_EQ(s5->interfaces[1].peer_node, "rail2-leaf2");
  EXPECT_EQ(s5->interfaces[1].addresses, (std::vector<std::string>{"10.102.5.10/24"}));
  EXPECT_EQ(s5->interfaces[1].rate_bps, 50'000'000u);
  const auto* leaf = p.find("rail2-leaf2");
  int uplinks = 0;
  for (const auto& i : leaf->interfaces)
    if (i.peer_node.rfind("spine", 0) == 0) {
      ++uplinks;
      EXPECT_EQ(i.rate_bps, 100'000'000u);
    }
  EXPECT_EQ(uplinks, 3);
  // Rail traffic between the groups splits over the three spines at the leaf.
  auto eps = twin::traffic::endpoints(p);
  auto pairs = *twin::traffic::pattern_pairs(Pattern::kAllToAll, eps, 1);
  EXPECT_EQ(pairs.size(), 6u * 5u * 2u);  // every ordered pair, on both rails
  auto path = twin::traffic::pair_path(p, pairs.front().src, eps[8]);  // server1 -> server5 rail 1
  EXPECT_EQ(path.splits.at("rail1-leaf1").size(), 3u);
  s.server_rate = "fast";
  auto bad = twin::topology::check(s);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("--server-rate: expected a rate like 100M"),
            std::string::npos);
  s.server_rate = "";
  s.servers = 1;
  EXPECT_FALSE(twin::topology::check(s));
}

TEST(GenClos, RatesGoToTheDefaultsAndTheServerLinks) {
  twin::topology::ClosSpec s;
  s.servers_per_leaf = 1;
  s.fabric_rate = "1G";
  s.server_rate = "100M";
  auto text = twin::topology::generate_clos(s);
  EXPECT_NE(text.find("defaults:\n  kind: frr\n  image: frr-8.4\n  mtu: 9216\n  bandwidth: 1G\n"),
            std::string::npos)
      << text;
  auto p = plan_of_text(text);
  EXPECT_EQ(twin::plan::find_interface(*p.find("server1"), "eth0")->rate_bps, 100'000'000u);
  EXPECT_EQ(twin::plan::find_interface(*p.find("leaf1"), "swp1")->rate_bps, 1'000'000'000u);
}

TEST(TrafficFamily, ReadsTheNextHopsOfTheMostSpecificRoute) {
  // Recorded on ai-rail-2x4's rail1-leaf1 toward server3, before and after `maximum-paths 1`.
  EXPECT_EQ(
      twin::validators::route_devices(nlohmann::json::parse(data("ip-route-match-ecmp.json"))),
      (std::vector<std::string>{"swp1", "swp2"}));
  EXPECT_EQ(
      twin::validators::route_devices(nlohmann::json::parse(data("ip-route-match-one-path.json"))),
      (std::vector<std::string>{"swp2"}));
  // A default route beside it never wins; nothing is no devices.
  auto both = nlohmann::json::parse(data("ip-route-match-one-path.json"));
  both.push_back({{"dst", "default"}, {"dev", "eth9"}});
  EXPECT_EQ(twin::validators::route_devices(both), (std::vector<std::string>{"swp2"}));
  EXPECT_TRUE(twin::validators::route_devices(nlohmann::json::array()).empty());
  EXPECT_TRUE(twin::validators::route_devices(nlohmann::json()).empty());
}
