// twin restart: one node of a running lab back from its startup configuration, without
// `down`/`up` — the repair for a daemon that died (validate's node.daemons, the gate's
// baseline-unhealthy).
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "twin/cli/commands.hpp"
#include "twin/core/util.hpp"
#include "twin/engine/lab.hpp"
#include "twin/report/report.hpp"
#include "twin/state/state.hpp"

namespace twin::cli {

int run_restart(const RestartOptions& o) {
  auto lab = state::resolve_lab(o.lab);
  if (!lab) return fail(lab.error().message, exit_code(lab.error()));
  auto say = [&](const std::string& line) {
    if (!o.json) std::cerr << "twin: " << line << "\n";
  };
  proc::SystemRunner runner;
  auto t0 = Clock::now();
  Result<engine::RestartReport> rep = [&]() -> Result<engine::RestartReport> {
    auto lock = state::lock_lab(
        *lab, [&] { say("lab " + *lab + " is busy (another twin command holds it): waiting"); });
    if (!lock) return lock.error();
    // Said only of a node the lab has: for another, restart_node's error is the only line.
    if (auto st = state::load_state(*lab); st && st->plan.find(o.node))
      say("restarting " + (o.daemon.empty() ? "the routing daemons" : o.daemon) + " of " + o.node +
          " from its startup configuration");
    return engine::restart_node(*lab, o.node, o.daemon, runner);
  }();
  if (!rep) {
    record_event(*lab, "restart",
                 {{"ok", false},
                  {"node", o.node},
                  {"daemon", o.daemon},
                  {"error", rep.error().message},
                  {"source", "cli"}});
    if (o.json)
      std::cout << nlohmann::json{{"lab", *lab},
                                  {"node", o.node},
                                  {"ok", false},
                                  {"exit_code", exit_code(rep.error())},
                                  {"error", rep.error().message}}
                       .dump(2)
                << "\n";
    return fail(rep.error().message, exit_code(rep.error()));
  }
  // Then, as `up` does, until the lab's sessions are back: a restart is done when the node
  // routes again, not when its processes exist.
  engine::SessionCount count;
  bool converged = true;
  auto tc = Clock::now();
  if (!o.no_wait) {
    auto st = state::load_state(*lab);
    if (!st) return fail(st.error().message, exit_code(st.error()));
    const auto until =
        tc + std::chrono::milliseconds(static_cast<long>(o.converge_timeout_s * 1000));
    std::string last;
    for (;;) {
      count = engine::count_sessions(st->plan, 4);
      if (count.text() != last) say(last = count.text());
      converged = count.converged();
      if (converged || Clock::now() >= until || interrupted()) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the readiness poll
    }
  }
  const double converge_ms = o.no_wait ? 0 : ms_since(tc);
  const int code = interrupted() ? 130 : converged ? 0 : 1;
  nlohmann::json fields{{"ok", code == 0},
                        {"node", o.node},
                        {"daemon", o.daemon},
                        {"daemons", rep->daemons},
                        {"restart_ms", rep->restart_ms},
                        {"converged", converged},
                        {"converge_ms", converge_ms},
                        {"source", "cli"}};
  record_event(*lab, "restart", fields);
  if (o.json) {
    fields.erase("source");
    fields["lab"] = *lab;
    fields["exit_code"] = code;
    fields["duration_ms"] = ms_since(t0);
    if (!o.no_wait) fields["sessions"] = count.text();
    if (!converged) fields["not_established"] = count.down;
    std::cout << fields.dump(2) << "\n";
    return code;
  }
  std::string list;
  for (const auto& d : rep->daemons) list += (list.empty() ? "" : ", ") + d;
  std::cout << "node " << o.node << " of lab " << *lab << " restarted from its startup "
            << "configuration in " << report::seconds_text(rep->restart_ms) << ": " << list << "\n";
  if (!o.no_wait) {
    std::cout << count.text() << (converged ? " after " : " — not converged after ")
              << report::seconds_text(converge_ms) << "\n";
    if (!converged)
      for (const auto& d : count.down) std::cout << "  " << d << "\n";
  }
  return code;
}

}  // namespace twin::cli
