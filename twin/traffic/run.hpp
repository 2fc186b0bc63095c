#pragma once
// Runs a traffic pattern on a running lab with Debian's iperf3 (DESIGN.md §4a: it works in
// namespaces; `--json` gives per-stream results): per pair one iperf3 server in the
// destination's namespace (`--one-off`: it exits after its one test) and one client in the
// source's, all in the lab's cgroup (so `down` ends whatever a cut-short run left), the
// kernel's counters of every port before and after, and the probe stream's round trips
// unloaded (before) and under load. Nothing of the lab changes; the run's files live in a
// temporary folder of the lab's run folder, removed at the end.
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "twin/core/error.hpp"
#include "twin/proc/runner.hpp"
#include "twin/state/state.hpp"
#include "twin/traffic/traffic.hpp"

namespace twin::traffic {

struct Options {
  Pattern pattern = Pattern::kAllToAll;
  std::string protocol = "tcp";              // tcp | udp
  std::chrono::milliseconds duration{5000};  // each client's test
  int streams = 1;                           // flows per pair (iperf3 -P)
  std::string incast_to;                     // incast's receiver ("" = the first node)
  // UDP only: each flow's sending rate, bits/s; 0 = its source port's rate, else 1 Gbit/s.
  uint64_t udp_rate_bps = 0;
  std::chrono::milliseconds probe_interval{10};
  std::chrono::milliseconds unloaded{1000};  // the latency floor is measured this long first
  int max_pairs = 256;                       // more pairs is refused (each is two processes)
};

using Progress = std::function<void(const std::string&)>;

// Errors: kEnvironment without iperf3; kUsage for a pattern with fewer than two endpoint
// nodes, an unknown incast receiver or too many pairs; kHarness when no server could start.
// A client that fails (cannot connect: no route) is a flow with an error in the report, not
// an error of the run. Interrupt: clients and servers are killed, kInterrupted.
Result<Report> run(const state::State& st, const Options& o, proc::ProcessRunner& runner,
                   const Progress& progress);

// What the routers hash ECMP with, from each one's (policy, fields, seed) sysctls: "policy 3
// (fields 0x37: addresses, protocol, ports), a seed per node", or per group of nodes when they
// differ ("policy 0 (L3) on spine1, spine2; policy 3 ... on leaf1, ..."). Pure.
struct Hashing {
  std::string policy, fields, seed;
};
std::string describe_hashing(const std::vector<std::pair<std::string, Hashing>>& by_node);

}  // namespace twin::traffic
