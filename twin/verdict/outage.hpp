#pragma once
// Hitless measurement (docs/gate.md, "Traffic while a change runs"): from the first step until the
// network has settled, the gate streams ICMP echoes over a set of flows (runtime/
// probe_stream.hpp) and reports, per flow, the echoes lost and the longest outage; with a
// budget, a flow out longer than it rejects the change (reason `outage`). Which flows, and the
// verdict rule, are pure; TrafficProbe is the seam to the stream (faked in unit tests).
#include <chrono>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "twin/plan/plan.hpp"
#include "twin/verdict/diff.hpp"
#include "twin/runtime/probe_stream.hpp"

namespace twin::replay {

// A budget must span this many probe intervals: below it, one stalled interval on a busy
// machine reads as an outage.
inline constexpr int kMinIntervalsPerBudget = 10;

struct OutageOptions {
  bool enabled = true;                       // measure at all
  std::chrono::milliseconds interval{10};    // between two echoes of one flow
  int max_flows = 32;                        // flows streamed at most
  std::optional<std::chrono::milliseconds> budget;  // --max-outage; unset = measure only
};

// One flow the gate may stream over: from `src_node`'s `source` to `destination` (owned by
// `dst_node`).
struct FlowChoice {
  std::string src_node, dst_node, source, destination;
  [[nodiscard]] std::string name() const {  // "server1 -> server2 2001:db8:4::10"
    return src_node + " -> " + dst_node + " " + destination;
  }
};

// The flows: every pair of hosts, then pairs of FRR loopbacks sampled evenly (every k-th in
// name order), both families, at most `max_flows` — only pairs that answered in the baseline
// (`baseline.reachable`), one direction per pair (an echo crosses the path both ways). The
// source is the host's address, or the node's loopback, of the destination's family. Pure.
std::vector<FlowChoice> choose_flows(const plan::Plan& plan, const NetState& baseline,
                                     int max_flows);

// The `outage` reason when some flow's longest outage exceeds `budget`: flows worst first,
// each "name: N ms (lost L of S echoes)"; nullopt when none does. Flows named in `not_judged`
// do not count (an endpoint the change itself works on: a node in maintenance may be
// unreachable; what it must not do is take other flows down). Pure.
std::optional<Reason> outage_reason(const runtime::StreamStats& stats,
                                    std::chrono::milliseconds budget,
                                    const std::set<std::string>& not_judged = {});

// What the gate measured (ApplyResult::outage).
struct OutageReport {
  runtime::StreamStats stats;
  std::optional<std::chrono::milliseconds> budget;
  std::string detail;  // why nothing was measured, or what could not be streamed
  // Flows with an endpoint on a node the change works on: measured, not judged.
  std::set<std::string> not_judged;
};

// The seam between the gate and the probe stream.
class TrafficProbe {
 public:
  virtual ~TrafficProbe() = default;
  virtual Result<void> start(const std::vector<runtime::StreamFlow>& flows,
                             std::chrono::milliseconds interval) = 0;
  virtual runtime::StreamStats stop() = 0;
};

// The real stream (runtime::ProbeStream).
std::unique_ptr<TrafficProbe> system_traffic_probe();

}  // namespace twin::replay
