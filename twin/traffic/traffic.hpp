#pragma once
// Traffic the way training jobs send it (`twin traffic`, the `traffic` validator family): a
// pattern of flows between the lab's endpoints, and what the fabric made of it — each flow's
// goodput against its fair share under the links' rates, the bytes per fabric port, the
// balance of each ECMP group, drops, and latency under load against the same lab unloaded.
//
// This file is the pure part: which flows a pattern makes, what a flow should get (max-min
// fairness over the plan's links with per-hop ECMP), and the figures from what iperf3, the
// kernel's counters and the probe stream recorded (tests/data/traffic/ holds real outputs).
// The runner (run.hpp) produces those recordings.
#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "twin/core/error.hpp"
#include "twin/plan/plan.hpp"

namespace twin::traffic {

// all-to-all: every ordered pair of endpoint nodes (the collective a training step waits on);
// ring: node i to node i+1, the last to the first (ring all-reduce); incast: every node to the
// first (a parameter server, the worst case for one port); pairs: the first half to the second
// half and back (bisection bandwidth).
enum class Pattern { kAllToAll, kRing, kIncast, kPairs };
inline constexpr std::pair<Pattern, const char*> kPatternNames[] = {
    {Pattern::kAllToAll, "all-to-all"},
    {Pattern::kRing, "ring"},
    {Pattern::kIncast, "incast"},
    {Pattern::kPairs, "pairs"}};
const char* to_string(Pattern p);
std::optional<Pattern> pattern_from(const std::string& name);

// One address traffic starts or ends at.
struct Endpoint {
  std::string node;
  std::string address;    // IPv4 literal, no length
  std::string interface;  // the port it is on; "lo" for a router's loopback
  int rail = 0;  // its position among its node's endpoints: a rail server's NIC k is rail k
};

// The lab's endpoints: every host node's first IPv4 address on each of its ports, in port
// order (rails); when no host has one, every FRR node's first IPv4 loopback. Nodes in `skip`
// (a VM, whose packets cannot start in a namespace here) are left out.
std::vector<Endpoint> endpoints(const plan::Plan& plan, const std::vector<std::string>& skip = {});

// One iperf3 test: `streams` TCP (or UDP) flows from src to dst in one client.
struct PairSpec {
  Endpoint src, dst;
  int streams = 1;
};
// The pattern's pairs over the endpoints' nodes in plan order; between two nodes one pair per
// rail both have (rail r to rail r: a rail-optimised fabric keeps a collective on its rail).
// `incast_to` names incast's receiver ("" = the first node). Errors: fewer than two nodes, or
// an unknown receiver.
Result<std::vector<PairSpec>> pattern_pairs(Pattern p, const std::vector<Endpoint>& eps,
                                            int streams, const std::string& incast_to = "");

// ---- What a flow should get ------------------------------------------------------------------
// A port a flow leaves through: (node, interface).
using Port = std::pair<std::string, std::string>;

// Where one pair's traffic goes with ideal per-hop ECMP: the share of it on each egress port
// (1.0 on a port all of it crosses), over the shortest paths by hop count in which only routers
// and bridges forward — what generated eBGP fabrics and OSPF on equal costs install. And each
// node where it splits: the ports of that ECMP group.
struct PairPath {
  std::map<Port, double> share;
  std::map<std::string, std::vector<std::string>> splits;  // node -> its group's ports (sorted)
  bool reachable = false;
};
PairPath pair_path(const plan::Plan& plan, const Endpoint& src, const Endpoint& dst);

// Max-min fair goodput of each flow, bits/s (progressive filling over
// fractional routes): every flow grows alike until a port it crosses fills (its rate `rate_bps`
// scaled by TCP's payload per frame at the port's MTU, (MTU-52)/(MTU+14)), then stays. 0 for a
// flow that crosses no port with a rate (nothing to be fair about: unbounded). `flows` gives
// each flow's path (flows of one pair share it).
// `saturated` (may be null): the shaped ports the solution fills — the bottlenecks, where drops
// are expected.
std::vector<double> fair_shares(const plan::Plan& plan, const std::vector<const PairPath*>& flows,
                                std::vector<Port>* saturated = nullptr);

// ---- Measured --------------------------------------------------------------------------------
struct FlowResult {
  int pair = 0;                // index into the pairs
  int stream = 0;              // its stream within the pair's client
  std::string src, dst;        // "server1 10.0.1.10"
  int src_port = 0;            // the flow's TCP/UDP source port (its ECMP hash input)
  double bps = 0;              // goodput at the receiver, bits/s
  double sent_bps = 0;         // at the sender
  long retransmits = 0;        // TCP
  long lost = 0, packets = 0;  // UDP, at the receiver
  double fair_bps = 0;         // fair_shares' figure (0 = unbounded)
  std::string error;           // the client's complaint; "" = it ran
};

// One client's flows from iperf3's `--json` output (3.12: end.streams[] with sender/receiver
// for TCP, udp for UDP; start.connected[] for the ports; "error" when it failed). `pair` is
// stamped on each. A client that failed gives one flow carrying the error.
std::vector<FlowResult> parse_iperf_client(const nlohmann::json& j, int pair, int streams);

// Whether a listening TCP socket on `port` is in a /proc/<pid>/net/tcp or tcp6 table (state 0A).
bool listening_on(const std::string& proc_net_tcp, int port);

// Per-port counters of one namespace, from `ip -s -j link show` (stats64) and `tc -s -j qdisc
// show` (root qdiscs' drops).
struct PortCounters {
  uint64_t tx_bytes = 0, rx_bytes = 0, tx_dropped = 0, qdisc_drops = 0;
};
std::map<std::string, PortCounters> parse_counters(const nlohmann::json& links,
                                                   const nlohmann::json& qdiscs);

// Nearest-rank percentile (p in 0..100) of `v`; 0 for none. Pure.
double percentile(std::vector<double> v, double p);
// Coefficient of variation (population standard deviation / mean); 0 for < 2 values or mean 0.
double coefficient_of_variation(const std::vector<double>& v);

// One pair's transfer: the sum of its flows (a collective's message between two endpoints is
// split over several flows — NCCL's channels — and arrives when the last of them does).
struct PairResult {
  int pair = 0;
  std::string src, dst;
  int flows = 0;        // that ran
  double bps = 0;       // their goodput summed
  double fair_bps = 0;  // their fair shares summed (or the mean pair's: see Report::fair_basis)
};

struct EcmpGroup {
  std::string node;
  std::vector<std::string> ports;
  int flows = 0;                // flows of the run that split over it
  std::vector<uint64_t> bytes;  // per port, transmitted during the run
  double max_min = 0;           // max / min bytes (0 when a member carried nothing: see `idle`)
  double cv = 0;
  std::vector<std::string> idle;  // members that carried < 1 % of the group's mean
};
struct PortLoad {
  std::string node, port, peer;  // peer "spine1:swp3"
  uint64_t tx_bytes = 0;
  double utilisation = 0;  // tx between the counter reads / (rate × their interval); 0 unshaped
  uint64_t rate_bps = 0;
  uint64_t drops = 0;       // qdisc drops + tx_dropped during the run
  bool bottleneck = false;  // the fair shares fill it (fair_shares' `saturated`)
  // The goodput the fair shares put on it over its rate (0 unshaped or unbounded): how near its
  // rate the lab's design runs it.
  double designed = 0;
};
struct Latency {
  long samples = 0, lost = 0;
  double p50_ms = 0, p99_ms = 0, p999_ms = 0, max_ms = 0;
};

struct Report {
  std::string lab;
  Pattern pattern = Pattern::kAllToAll;
  std::string protocol = "tcp";
  double duration_s = 0;
  int streams = 1;          // flows per pair
  std::string hash_policy;  // what the routers hash ECMP with, as read from them
  std::vector<PairSpec> pairs;
  std::vector<PairPath> paths;  // per pair: where its traffic goes (pair_path)
  std::vector<FlowResult> flows;
  std::vector<PairResult> pair_results;  // pairs with at least one flow that ran, in pair order
  double aggregate_bps = 0;
  // The job-completion figure: the pair whose transfer got the least of its fair share (index
  // into pair_results), and that ratio. A training step waits for its slowest transfer.
  int slowest = -1;
  double slowest_ratio = 0;
  std::string fair_basis;       // "link rates" | "measured mean (the lab declares no link rates)"
  std::vector<PortLoad> ports;  // fabric and server ports that carried traffic, by node
  std::vector<EcmpGroup> groups;
  uint64_t drops_shaped = 0, drops_unshaped = 0;
  Latency unloaded, loaded;
  // How long starting every client took, and the seconds each test ran before measuring
  // (iperf3 -O): flows that start apart share the fabric only once all run, so a spread longer
  // than `omit_s` leaves each flow more than its fair share (the text says so).
  double start_spread_s = 0;
  int omit_s = 0;
  double counters_s = 0;              // the seconds the ports' figures span (Recorded::counters_s)
  double wall_s = 0;                  // the whole run, setup included
  std::vector<std::string> problems;  // what failed outright (a client that could not connect)
};

// The figures: each flow's fair share (fair_shares over its pair's path, or the measured mean
// when no flow crosses a rate), the aggregate, the pairs' transfers and the slowest, port loads and
// drops from the counters before and after (per node), the ECMP groups of the pairs' paths
// with the bytes their members sent. `rtt_unloaded`, `rtt_loaded`: the probe stream's answered
// round trips (ms) and how many it sent and lost under load.
struct Recorded {
  std::vector<FlowResult> flows;
  std::map<std::string, std::map<std::string, PortCounters>> before, after;  // node -> port
  std::vector<double> rtt_unloaded, rtt_loaded;
  long unloaded_sent = 0, loaded_sent = 0;
  double duration_s = 0;
  double start_spread_s = 0;  // from the first client's start to the last's
  int omit_s = 0;             // the seconds each test ran before it measured (iperf3 -O)
  // The seconds between the two counter reads (`before` once the clients' -O seconds are over,
  // `after` once they ended): what a port's bytes are over. 0: duration_s.
  double counters_s = 0;
};
Report summarize(const plan::Plan& plan, const std::vector<PairSpec>& pairs, Recorded rec);

nlohmann::json to_json(const Report& r);
// `v` with `digits` decimals ("%.*f"), as the reports print figures.
std::string fixed(double v, int digits);
// A person's summary: the pattern's figures, the slowest flows, ECMP groups, drops, latency.
std::string to_text(const Report& r, bool all_flows = false);

}  // namespace twin::traffic
