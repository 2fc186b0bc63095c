#pragma once
// What the rollout gate and the failure drill share to watch a running lab: one validation
// with the state it observed (a Phase), waiting until the network is quiet (settle), and the
// probe stream around a disruption. Everything goes through GateEnv, so both run against
// fakes in unit tests (time passes only when slept on).
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "twin/core/clock.hpp"
#include "twin/verdict/seams.hpp"
#include "twin/verdict/outage.hpp"

namespace twin::replay {

// How a settle() ended.
struct Settled {
  bool quiet = false;  // the network held still long enough (and the target, if any, was back)
  // From `since` (settle's argument; its start by default) to the end of the observation that
  // first showed the final state: the convergence time, to within one poll interval plus one
  // observation. 0 when the first observation already showed it within the same instant.
  double converged_ms = 0;
  double elapsed_ms = 0;  // the whole wait, quiet period included
  // How precise converged_ms is: the poll interval plus the longest observation of the lab
  // (a change shows at the end of the observation that sees it, up to one poll late).
  double resolution_ms = 0;
  int changes = 0;        // state changes seen while polling
  std::string text;       // "quiet after 1400 ms (2 changes seen)" / "still changing after ..."
};

// What settle() waits for (LabWatch::settle).
struct SettleOptions {
  // At least this long, and what for (said in Settled::text): ospf_settle_floor,
  // settle_floor.
  SettleFloor floor;
  // A restore's state to come back to (a rollback's baseline, an approved state after a
  // restart): quiet counts only once its sessions and routes are back.
  const NetState* target = nullptr;
  // The state the restore started from. Once the observed state equals `target` exactly, and
  // the network is known to have moved to it (a change was seen, or `moved_from` differs from
  // the target), it need hold only kAtTargetHold rather than the quiet period.
  const NetState* moved_from = nullptr;
  std::optional<Clock::time_point> since;  // when the disruption happened (converged_ms)
  std::chrono::milliseconds poll{200};
  // Asked once the state has held still: true keeps waiting (BGP sessions gone silent that
  // still show Established: silent_sessions).
  std::function<bool()> unsettled;
  // FRR's own evidence that nothing is in flight (frr_busy) may end the wait after
  // kAtTargetHold, no sooner than kEvidenceFloor, instead of the quiet period — where
  // idle_evidence_blocked finds nothing against it in these running configs (node -> config)
  // and the change's FRR lines. Without configs (nullptr) the quiet period applies.
  const std::map<std::string, std::string>* running_configs = nullptr;
  std::string change_text;
  // What came just before was configuration, a soft clear or an address change on running
  // daemons, which bgpd may answer with a re-announcement it holds back (kEvidenceFloor). False
  // after daemons restarted from their saved config: a fresh bgpd has no session to re-announce
  // to until one comes up, and that shows.
  bool configured = true;
};

// How soon after a settle starts FRR's idle evidence may end it (SettleOptions::configured):
// bgpd defers a neighbor's re-announcement after a policy change, a soft clear, a route-refresh
// or an address change by 100 ms, or 500 ms when its update subgroup has other peers (FRR 8.4
// bgpd/bgp_route.c bgp_announce_route, BGP_ANNOUNCE_ROUTE_DELAY_MS), and nothing shows the
// timer meanwhile; the rest is its processing.
inline constexpr std::chrono::milliseconds kEvidenceFloor{700};

// How long a state exactly equal to a restore's target must hold (two observations 200 ms
// apart), where an unknown end state must hold for the whole quiet period: anything still in
// flight would move it away from the known state it reached.
inline constexpr std::chrono::milliseconds kAtTargetHold{200};

class LabWatch {
 public:
  // `progress` may be empty. `parallel`: nodes probed at once. `converge_timeout` bounds
  // settle() and is the validation's convergence window until the network was found quiet.
  LabWatch(GateEnv& env, int parallel, std::chrono::milliseconds converge_timeout,
           std::function<void(const std::string&)> progress);
  ~LabWatch();

  // Validates `plan` with env.validators and observes the state (sessions, FIBs, links,
  // reachability) for the diff. After a quiet settle() a failure is real, so results are retried
  // for a short window only (3 s) instead of the whole convergence window.
  Phase validate(const std::string& name, const plan::Plan& plan);
  // The same with a convergence window of its own, and riders not held back: an early look
  // at a network that has not settled (the gate's early reject), where only what cannot
  // converge (TestResult::cannot_converge) is believed.
  Phase validate(const std::string& name, const plan::Plan& plan, std::chrono::milliseconds window);

  // Waits until the network is quiet — which sessions are Established and every FIB's routes
  // with their next-hop counts unchanged for the quiet period (1 s), polled every `o.poll` —
  // and at least `o.floor` has passed. Where FRR itself shows that nothing is in flight (every
  // session settled, no message queued, no BGP table changed: frr_busy) for kAtTargetHold, that
  // is enough (SettleOptions::running_configs, idle_evidence_blocked, kEvidenceFloor). With
  // `o.target`, quiet counts only once the target's sessions and routes are back (OSPF can sit
  // still for seconds before its routes come back), or FRR's evidence shows nothing in flight
  // that could bring them back, or the convergence timeout passes; a state equal to the target
  // holds for kAtTargetHold only (SettleOptions::moved_from).
  Settled settle(const plan::Plan& plan, const SettleOptions& o = {});

  // The probe stream (outage.hpp): flows chosen on `plan` from the pairs that answered in
  // `baseline`, each sent from its source node's packet namespace (nodes without one, VMs,
  // are skipped and said in `out.detail`). Fills `out` with what it could not stream; a stream
  // that could not start leaves `out.stats.flows` empty with the reason in `out.detail`.
  void start_stream(const plan::Plan& plan, const NetState& baseline, const OutageOptions& o,
                    OutageReport& out);
  // Stops the stream (if running) and puts the per-flow figures in `out`. Idempotent.
  void stop_stream(OutageReport& out);
  // The flows the last start_stream() chose (FlowChoice::name() is the flow's name).
  [[nodiscard]] const std::vector<FlowChoice>& flows() const { return flows_; }

  [[nodiscard]] bool quiet() const { return quiet_; }
  // How long the state must hold still for settle() to call it quiet (1 s by default; a
  // trainee's check, long after their last change, asks for less to answer within 2 s).
  void set_quiet_period(std::chrono::milliseconds q) { quiet_period_ = q; }
  // Caps every ping of validate() (validate::Context::ping_timeout; 0 = the families' own).
  void set_ping_timeout(std::chrono::milliseconds t) { ping_timeout_ = t; }
  // The FRR version, asked once (for reports).
  [[nodiscard]] const std::string& frr_version() const { return frr_version_; }

 private:
  void say(const std::string& s) const {
    if (progress_) progress_(s);
  }
  GateEnv& env_;
  int parallel_;
  std::chrono::milliseconds converge_timeout_;
  std::function<void(const std::string&)> progress_;
  bool quiet_ = false;  // the last settle() ended quiet
  std::chrono::milliseconds quiet_period_{1000};  // how long the state must hold still
  std::chrono::milliseconds ping_timeout_{0};
  std::string frr_version_;
  std::unique_ptr<TrafficProbe> traffic_;
  std::vector<FlowChoice> flows_;
};

// The state a settle() compares: which sessions are Established and every FIB's routes with
// their next-hop counts (sessions cycling through Idle, Connect and Active count as one "not
// Established"). Pure.
std::string fingerprint(const NetState& s);
// The neighbors in one node's `show bgp neighbors json` that show Established but have heard
// nothing from their peer since a change `since_change_ms` ago while their hold time has not
// run out since: a peer gone silent (the port lost IPv6, a filter drops its packets) still shows
// Established until the hold timer expires (RFC 4271 §6.5, 9 s with FRR's datacenter
// defaults), so a network that holds still proves nothing before. Read from FRR's
// bgpTimerLastRead (ms since the last message, 1 s resolution) and bgpTimerHoldTimeMsecs. A
// healthy session is heard within one keepalive interval (3 s by those defaults); sessions
// with a keepalive over 10 s (FRR's traditional 60 s, hold 180 s) are not waited for. Pure.
std::vector<std::string> silent_sessions(const nlohmann::json& neighbors, double since_change_ms);

// Why FRR may still have work in flight that `s` does not show yet, "" when nothing can be:
// a BGP session neither Established nor down for good — shut down at either end (FRR's
// peerState "Admin" here, or at its peer found through `plan`'s links and sessions) — whose
// start, connect or hold timers may still change it; a message queued to or from a peer; a node
// that returned no data. Together with BGP tables whose versions do not move (FRR bumps a
// table's version on every change it processes) and an unchanged FIB, nothing is left to
// arrive: with FRR's eBGP and iBGP advertisement interval of 0 (bgpd.h,
// BGP_DEFAULT_*_ROUTEADV), an UPDATE is sent as soon as its table changed. Pure.
std::string frr_busy(const NetState& s, const plan::Plan& plan);
// Why frr_busy's evidence cannot stand in for the quiet period on `plan`, "" when it can. It
// sees bgpd's default instance only, and no timer, so it does not stand in where:
// - a daemon runs or a config needs one whose timers it does not see (ospfd's, bfdd's: a BFD
//   session fails 3 intervals after its last packet), or a node is a VM;
// - the lab has tenants (EVPN routes live in per-RD tables whose versions the summary does not
//   show, VRF instances are not in it) or a config has a VRF or l2vpn evpn;
// - a config (the node's entry in `configs`, else its generated frr_config; a BGP node with
//   neither is unknown) or `change_text` sets a timer that holds routes back after a table
//   changed: advertisement-interval, update-delay, advertise-map (conditional advertisement,
//   60 s scans), default-originate route-map (5 s), dampening, graceful-restart;
// - a BGP config lacks `coalesce-time 0`: a new session's first UPDATEs then wait for its
//   update subgroup's coalesce timer (1 s + 50 ms per peer by default, bgpd/bgp_updgrp.h).
// Pure.
std::string idle_evidence_blocked(const plan::Plan& plan,
                                  const std::map<std::string, std::string>& configs,
                                  const std::string& change_text);

// Whether `now` has everything `base` had: its Established sessions, and its routes with at
// least as many next hops (what a rollback or a restore must bring back). Pure.
bool restores(const NetState& now, const NetState& base);

}  // namespace twin::replay
