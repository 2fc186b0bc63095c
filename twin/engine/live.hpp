#pragma once
// A running lab as it is now, read for people and the web page: one snapshot (nodes' namespaces
// and daemons, links' oper state and MTU, every expected session's state), the graph it draws
// (graph/graph.hpp with the last validation from the journal), and what changed between two
// snapshots as events (`twin events`, the server's event stream).
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "twin/core/error.hpp"
#include "twin/engine/lab.hpp"
#include "twin/graph/graph.hpp"

namespace twin::engine {

struct LiveSnapshot {
  nlohmann::json status;               // engine::status()
  std::vector<SessionState> sessions;  // engine::count_sessions().sessions
};

// Reads the lab (status: one `ip -j link` per node; sessions: one vtysh query per FRR node with
// sessions, `parallel` nodes at once). Errors: the lab has no state (kUsage).
Result<LiveSnapshot> snapshot(const std::string& lab, int parallel = 8);

// The graph of `lab` with `snap` over it and the lab's last validation since its last `up`
// (from the journal; none when there is no such validation).
Result<graph::Graph> live_graph(const std::string& lab, const LiveSnapshot& snap);

// What differs from `before` to `after`, as journal-shaped events without seq/time/lab:
// {"kind":"link","subject":"leaf1:swp1 -- spine1:swp1","from":"UP/UP","to":"DOWN/UP"},
// {"kind":"session","subject":"bgp leaf1 swp1 -> spine1","from":"Established","to":"Active"},
// {"kind":"daemon","subject":"leaf1 bgpd","from":"alive","to":"exited"},
// {"kind":"node","subject":"leaf1","from":"present","to":"namespace missing"}. Pure.
std::vector<nlohmann::json> live_changes(const LiveSnapshot& before, const LiveSnapshot& after);

// What happens to a lab, as it happens: the journal's new events (commands' results, from any
// process) and the live changes between consecutive snapshots, each stamped with "time" and
// "lab" (live ones carry "live": true and no seq). Not thread-safe; one per watcher.
class EventFollower {
 public:
  // from_start: the journal's history first; else only what is appended from now on.
  EventFollower(std::string lab, bool from_start, int parallel = 8);
  // One poll (reads the journal; when the lab runs, one snapshot). `running` says whether the
  // lab still has a state (a `down` ends it).
  std::vector<nlohmann::json> poll(bool* running = nullptr);
  [[nodiscard]] const std::string& lab() const { return lab_; }
  // The last snapshot (empty status before the first poll of a running lab).
  [[nodiscard]] const LiveSnapshot& last() const { return last_; }

 private:
  std::string lab_;
  int parallel_;
  uint64_t offset_ = 0;
  bool have_snapshot_ = false;
  LiveSnapshot last_;
};

}  // namespace twin::engine
