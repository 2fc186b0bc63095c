#include "twin/verdict/watch.hpp"

#include <cstdio>

#include "twin/core/ip.hpp"
#include "twin/core/util.hpp"
#include "twin/plan/images.hpp"
#include "twin/runtime/frr.hpp"
#include "twin/validate/runner.hpp"
#include "twin/validate/system_probe.hpp"

using namespace std::chrono_literals;

namespace twin::replay {

namespace {
// Validation window once settle() found the network quiet.
constexpr std::chrono::milliseconds kQuietWindow{3000};
// How long past the convergence timeout settle() waits for silent sessions at most (they are
// torn down by a hold time of at most 30 s: silent_sessions only counts keepalives <= 10 s).
constexpr double kSilentGrace = 30000;
// "40 s", "5.9 s".
std::string seconds_text(std::chrono::milliseconds d) {
  char buf[32];
  if (d.count() % 1000 == 0)
    std::snprintf(buf, sizeof buf, "%lld s", static_cast<long long>(d.count() / 1000));
  else
    std::snprintf(buf, sizeof buf, "%.1f s", static_cast<double>(d.count()) / 1000.0);
  return buf;
}
}  // namespace

std::string fingerprint(const NetState& s) {
  std::string f;
  for (const auto& [k, v] : s.sessions)
    if (v.state == "Established") f += k + ";";
  for (const auto& [node, fib] : s.fib)
    for (const auto& [prefix, hops] : fib)
      f += node + " " + prefix + " " + std::to_string(hops) + ";";
  return f;
}

std::string frr_busy(const NetState& s, const plan::Plan& plan) {
  if (!s.gaps.empty()) return "no data: " + s.gaps.front();
  auto admin_at = [&](const std::string& node, const std::string& key) {
    auto it = s.sessions.find(node + " " + key);
    return it != s.sessions.end() && it->second.admin;
  };
  // Whether `node` owns `address` (a loopback, an interface's or its config's), compared as
  // addresses, not text (an own config may spell an IPv6 address another way than the plan).
  auto owns = [&](const plan::Node& n, const std::string& address) {
    auto want = IpPrefix::parse(address, true);
    auto is = [&](const std::string& prefix) {
      auto p = IpPrefix::parse(prefix, true);
      return want && p && p->address() == want->address();
    };
    for (const auto& l : n.loopbacks)
      if (is(l)) return true;
    for (const auto& i : n.interfaces)
      for (const auto& a : i.addresses)
        if (is(a)) return true;
    for (const auto& [ifname, addrs] : n.config_addresses)
      for (const auto& a : addrs)
        if (is(a)) return true;
    return false;
  };
  auto family = [](const std::string& address) {
    auto p = IpPrefix::parse(address, true);
    return p ? p->family : 0;
  };
  // A session's other end: through the link for an unnumbered one; for a numbered one, the
  // peer's session toward an address of this node, in the same family, over the other end of
  // the same link (or over none, both between loopbacks): a dual-stack pair's IPv4 session is
  // not its IPv6 one's other end.
  auto peer_shut = [&](const std::string& node, const std::string& key) {
    const plan::Node* n = plan.find(node);
    if (!n) return false;
    for (const auto& i : n->interfaces)
      if (i.name == key && !i.peer_node.empty()) return admin_at(i.peer_node, i.peer_interface);
    for (const auto& e : plan.sessions) {
      if (e.node != node || e.key() != key || e.peer_address.empty()) continue;
      std::string far_end;  // the peer's interface on e's link, "" without one
      for (const auto& i : n->interfaces)
        if (!e.interface.empty() && i.name == e.interface) far_end = i.peer_interface;
      for (const auto& back : plan.sessions)
        if (back.node == e.peer_node && back.peer_node == node && !back.peer_address.empty() &&
            back.interface == far_end && family(back.peer_address) == family(e.peer_address) &&
            owns(*n, back.peer_address) && admin_at(back.node, back.key()))
          return true;
    }
    return false;
  };
  for (const auto& [k, v] : s.sessions) {
    if (v.queued > 0) return k + ": " + std::to_string(v.queued) + " BGP messages queued";
    if (v.state == "Established" || v.admin) continue;
    auto sp = k.find(' ');
    if (sp == std::string::npos || !peer_shut(k.substr(0, sp), k.substr(sp + 1)))
      return k + ": " + v.state;
  }
  return "";
}

std::string idle_evidence_blocked(const plan::Plan& plan,
                                  const std::map<std::string, std::string>& configs,
                                  const std::string& change_text) {
  static const char* const kHeldBack[] = {
      "advertisement-interval",      "update-delay", "advertise-map",
      "default-originate route-map", "dampening",    "graceful-restart"};
  auto held_back = [](const std::string& text) -> std::string {
    for (const char* w : kHeldBack)
      if (text.find(w) != std::string::npos) return w;
    return "";
  };
  auto other_daemon = [](const std::vector<std::string>& daemons) -> std::string {
    for (const auto& d : daemons)
      if (d != "zebra" && d != "bgpd" && d != "staticd") return d;
    return "";
  };
  if (!plan.tenants.empty()) return "the lab has tenants (EVPN and VRF tables)";
  for (const auto& n : plan.nodes) {
    if (n.kind != topology::NodeKind::kFrr) continue;
    // A NOS that starts its own FRR (a VM's) shows twin none of its timers or queues.
    if (n.daemons.empty()) return n.name + " runs no FRR daemons of twin's";
    if (auto d = other_daemon(n.daemons); !d.empty()) return d + " runs on " + n.name;
    auto c = configs.find(n.name);
    const std::string& text = c != configs.end() ? c->second : n.frr_config;
    if (text.empty()) {
      if (plan::has_bgp_instance(n)) return n.name + "'s running config is not known";
      continue;
    }
    if (auto w = held_back(text); !w.empty()) return n.name + "'s config has " + w;
    if (text.find("\nvrf ") != std::string::npos || text.find(" vrf ") != std::string::npos ||
        text.find("l2vpn evpn") != std::string::npos)
      return n.name + "'s config has a VRF or EVPN";
    if (text.find("router bgp") != std::string::npos &&
        text.find(" coalesce-time 0\n") == std::string::npos)
      return n.name + "'s config has no coalesce-time 0";
    plan::Node needs = n;
    plan::add_needed_daemons(needs, text);
    if (auto d = other_daemon(needs.daemons); !d.empty()) return n.name + "'s config needs " + d;
  }
  if (auto w = held_back(change_text); !w.empty()) return "the change sets " + w;
  if (change_text.find("coalesce-time") != std::string::npos)
    return "the change sets a coalesce-time";
  return "";
}

bool restores(const NetState& now, const NetState& base) {
  for (const auto& [k, v] : base.sessions) {
    if (v.state != "Established") continue;
    auto it = now.sessions.find(k);
    if (it == now.sessions.end() || it->second.state != "Established") return false;
  }
  for (const auto& [node, fib] : base.fib) {
    auto nf = now.fib.find(node);
    for (const auto& [prefix, hops] : fib) {
      if (nf == now.fib.end()) return false;
      auto r = nf->second.find(prefix);
      if (r == nf->second.end() || r->second < hops) return false;
    }
  }
  return true;
}

std::vector<std::string> silent_sessions(const nlohmann::json& neighbors, double since_change_ms) {
  constexpr double kResolution = 1000;    // bgpTimerLastRead counts whole seconds
  constexpr double kMaxKeepalive = 10000;  // longer keepalives: not waited for
  std::vector<std::string> out;
  if (!neighbors.is_object()) return out;
  for (const auto& [name, n] : neighbors.items()) {
    if (!n.is_object() || n.value("bgpState", "") != "Established") continue;
    auto last = n.find("bgpTimerLastRead");
    auto hold = n.find("bgpTimerHoldTimeMsecs");
    auto keepalive = n.find("bgpTimerKeepAliveIntervalMsecs");
    if (last == n.end() || !last->is_number() || hold == n.end() || !hold->is_number()) continue;
    // A hold time of minutes (FRR's traditional defaults: keepalive 60 s, hold 180 s) is more
    // than a gate waits for: such a session is judged as it shows.
    if (keepalive != n.end() && keepalive->is_number() && keepalive->get<double>() > kMaxKeepalive)
      continue;
    bool heard_since = last->get<double>() + kResolution < since_change_ms;
    bool may_still_expire = since_change_ms < hold->get<double>() + kResolution;
    if (!heard_since && may_still_expire) out.push_back(name);
  }
  return out;
}

LabWatch::LabWatch(GateEnv& env, int parallel, std::chrono::milliseconds converge_timeout,
                   std::function<void(const std::string&)> progress)
    : env_(env),
      parallel_(parallel),
      converge_timeout_(converge_timeout),
      progress_(std::move(progress)) {}

LabWatch::~LabWatch() = default;

Phase LabWatch::validate(const std::string& name, const plan::Plan& plan) {
  // On a quiet network a failure is real: retry briefly (a ping right after a route install),
  // not for the whole convergence window.
  return validate(name, plan,
                  quiet_ ? std::min<std::chrono::milliseconds>(converge_timeout_, kQuietWindow)
                         : converge_timeout_);
}

Phase LabWatch::validate(const std::string& name, const plan::Plan& plan,
                         std::chrono::milliseconds window) {
  Phase ph;
  ph.name = name;
  // Each phase's probes are the change's evidence (<name>-probes.jsonl).
  validate::SystemProbe probe(env_.runner, env_.drivers, validate::SystemProbe::Evidence::kKeep);
  validate::Context ctx{plan, probe, parallel_};
  ctx.ping_timeout = ping_timeout_;
  validate::RunOptions ro;
  ro.converge_timeout = window;
  ro.hold_riders = !quiet_ && window == converge_timeout_;
  ro.time = &env_.time;
  auto validators = env_.validators({}, nullptr);
  auto t0 = env_.time.now();
  ph.report = validate::run_validation(ctx, validators, ro);
  ph.report.started_at = now_rfc3339();
  ph.report.twin_version = TWIN_VERSION;
  if (frr_version_.empty()) frr_version_ = runtime::frr_version(env_.runner);
  ph.report.frr_version = plan::frr_versions(plan, frr_version_);
  ph.report.kernel_version = kernel_release();
  ph.state = observe(plan, probe, parallel_);
  add_reachability(ph.state, ph.report);
  ph.state.bandwidth = ph.report.bandwidth;
  ph.probes = probe.records();
  int bad = ph.report.count(validate::Status::kFailed) + ph.report.count(validate::Status::kError);
  say(name + ": " + std::to_string(ph.report.count(validate::Status::kPassed)) + " passed, " +
      std::to_string(bad) + " not passing (" +
      std::to_string(static_cast<int>(env_.time.ms_since(t0))) + " ms)");
  return ph;
}

// Right after a change, a validation could otherwise see the old state (an update still in
// flight) and approve what is about to break.
Settled LabWatch::settle(const plan::Plan& plan, const SettleOptions& o) {
  TimeSource& time = env_.time;
  validate::SystemProbe probe(env_.runner, env_.drivers);
  quiet_ = false;
  Settled out;
  auto t0 = time.now();
  auto from = o.since.value_or(t0);
  double longest_observation = 0;
  auto look = [&] {
    auto a = time.now();
    NetState s = observe(plan, probe, parallel_);
    longest_observation = std::max(longest_observation, time.ms_since(a));
    return s;
  };
  // The BGP tables' versions beside the fingerprint: work FRR did that no route shows (yet).
  auto work_of = [](const NetState& s) {
    std::string w;
    for (const auto& [node, t] : s.bgp_tables) w += node + " " + t + ";";
    return w;
  };
  NetState first = look();
  std::string last = fingerprint(first);
  std::string last_work = work_of(first);
  // The first observation may already show the new state: it counts from when it was taken.
  auto last_change = time.now();
  auto last_work_change = last_change;
  const std::string blocked = o.running_configs
                                  ? idle_evidence_blocked(plan, *o.running_configs, o.change_text)
                                  : "no running configs to check";
  const auto evidence_from = t0 + (o.configured ? kEvidenceFloor : kAtTargetHold);
  auto ms = [&](Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
  };
  auto finish = [&](bool quiet, const std::string& text) {
    out.quiet = quiet;
    quiet_ = quiet;
    out.converged_ms = std::max(0.0, ms(from, last_change));
    out.elapsed_ms = ms(t0, time.now());
    out.resolution_ms = static_cast<double>(o.poll.count()) + longest_observation;
    out.text = text;
    return out;
  };
  const std::string target_print = o.target ? fingerprint(*o.target) : std::string();
  const bool moved_from_elsewhere = o.moved_from && fingerprint(*o.moved_from) != target_print;
  while (!interrupted()) {
    // The observation that may first take the evidence is taken as soon as it counts.
    auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(evidence_from - time.now());
    time.sleep_for(blocked.empty() && wait.count() > 0 && wait < o.poll ? wait : o.poll);
    NetState now = look();
    std::string cur = fingerprint(now);
    if (cur != last) {
      last = cur;
      last_change = time.now();
      ++out.changes;
    }
    if (std::string w = work_of(now); w != last_work) {
      last_work = std::move(w);
      last_work_change = time.now();
    }
    bool at_target = o.target && cur == target_print && (out.changes > 0 || moved_from_elsewhere);
    // FRR shows nothing in flight, and its tables have not moved for as long as a state at its
    // target must hold.
    bool idle = !at_target && blocked.empty() && time.now() >= evidence_from &&
                time.now() - last_work_change >= kAtTargetHold && frr_busy(now, plan).empty();
    auto hold = at_target || idle ? std::min(quiet_period_, kAtTargetHold) : quiet_period_;
    bool held = time.now() - last_change >= hold && time.now() - t0 >= o.floor.ms;
    bool back = !o.target || restores(now, *o.target);
    // Short of the target with nothing in flight: nothing is left that would bring it back.
    bool short_of_target = !back && idle && held;
    bool silent = held && (back || short_of_target) && o.unsettled && o.unsettled();
    if (held && (back || short_of_target) && !silent)
      return finish(
          true,
          "quiet after " + std::to_string(static_cast<int>(time.ms_since(t0))) + " ms (" +
              std::to_string(out.changes) + " change" + (out.changes == 1 ? "" : "s") + " seen" +
              (at_target ? ", back at the expected state" : "") +
              (idle && hold < quiet_period_ ? ", FRR idle: every session settled, nothing queued"
                                            : std::string()) +
              (short_of_target ? ", not back at the expected state" : "") +
              (o.floor.ms.count() > 0
                   ? ", held at least " + seconds_text(o.floor.ms) + ": " + o.floor.why
                   : std::string()) +
              ")");
    // Silent sessions end by themselves within their hold time (silent_sessions): waiting for
    // them may outlast the convergence timeout, within a bound.
    // The floor is a known wait (a timer that must fire), not convergence: it adds to the
    // timeout rather than being cut off by it.
    double limit = static_cast<double>(converge_timeout_.count() + o.floor.ms.count()) +
                   (silent ? kSilentGrace : 0.0);
    if (time.ms_since(t0) > limit)
      return finish(false, (!held  ? "still changing after "
                            : !back ? "quiet but not back at the baseline after "
                                    : "quiet but BGP sessions silent since the change after ") +
                               std::to_string(static_cast<int>(time.ms_since(t0))) + " ms");
  }
  return finish(false, "interrupted");
}

void LabWatch::start_stream(const plan::Plan& plan, const NetState& baseline,
                            const OutageOptions& o, OutageReport& rep) {
  flows_.clear();
  rep.budget = o.budget;
  rep.stats = runtime::StreamStats{};
  rep.stats.interval = o.interval;
  rep.detail.clear();
  if (!env_.traffic) {
    rep.detail = "no probe stream in this environment";
    return;
  }
  std::vector<runtime::StreamFlow> flows;
  int skipped = 0;
  for (const auto& f : choose_flows(plan, baseline, o.max_flows)) {
    const plan::Node* n = plan.find(f.src_node);
    std::string ns = n ? env_.drivers(*n).packet_namespace(*n) : "";
    if (ns.empty()) {
      ++skipped;
      continue;
    }
    flows.push_back({f.name(), ns, f.source, f.destination});
    flows_.push_back(f);
  }
  if (skipped)
    rep.detail = std::to_string(skipped) + " flow(s) leave from nodes twin cannot send from (VMs)";
  if (flows.empty()) {
    rep.detail = "no flow to stream over (no pair answered in the baseline)";
    return;
  }
  traffic_ = env_.traffic();
  if (auto r = traffic_->start(flows, o.interval); !r) {
    rep.detail = "the probe stream could not start: " + r.error().message;
    traffic_.reset();
    flows_.clear();
    return;
  }
  say("probe stream: " + std::to_string(flows.size()) + " flows, an echo every " +
      std::to_string(o.interval.count()) + " ms on each");
}

void LabWatch::stop_stream(OutageReport& rep) {
  if (!traffic_) return;
  rep.stats = traffic_->stop();
  traffic_.reset();
  const auto& st = rep.stats;
  const runtime::FlowStats* worst = nullptr;
  int lossy = 0;
  for (const auto& f : st.flows) {
    if (!f.error.empty()) continue;
    if (f.lost > 0) ++lossy;
    if (!worst || f.longest_outage_ms > worst->longest_outage_ms) worst = &f;
  }
  say("probe stream: " + std::to_string(lossy) + " of " + std::to_string(st.flows.size()) +
      " flows lost echoes" +
      (worst && worst->lost > 0
           ? "; longest outage " + std::to_string(static_cast<long>(worst->longest_outage_ms)) +
                 " ms on " + worst->name
           : std::string()));
}

}  // namespace twin::replay
