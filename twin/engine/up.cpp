#include <algorithm>
#include <atomic>
#include <filesystem>
#include <thread>

#include "twin/core/diagnostics.hpp"
#include "twin/core/util.hpp"
#include "twin/drivers/registry.hpp"
#include "twin/engine/images.hpp"
#include "twin/engine/lab.hpp"
#include "twin/engine/reconcile.hpp"

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace twin::engine {

// `down` without taking the lab lock: for `up`'s own teardown, which already holds it.
Result<DownReport> down_locked(const std::string& lab, proc::ProcessRunner& runner);

namespace {

std::string seconds_text(std::chrono::milliseconds ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", static_cast<double>(ms.count()) / 1000.0);
  return buf;
}

Result<void> check_interrupt(const std::string& step) {
  if (interrupted()) return Error{ErrorKind::kInterrupted, "interrupted during " + step};
  return {};
}

// "leaf1 bgpd (pid 123), ..." for every recorded process that is no longer alive.
std::string dead_processes(const state::State& st) {
  std::string s;
  for (const auto& r : st.resources)
    if (r.kind == "process" && !state::process_alive(r.pid, r.start_time))
      s += (s.empty() ? "" : ", ") + r.node + " " + r.name + " (pid " + std::to_string(r.pid) + ")";
  return s;
}

}  // namespace

Result<UpSummary> up(const topology::Topology& topo, const UpOptions& opts,
                     proc::ProcessRunner& runner, const Progress& progress) {
  return up(plan::make_plan(topo, opts.name), opts, runner, progress);
}

Result<UpSummary> up(plan::Plan plan, const UpOptions& opts, proc::ProcessRunner& runner,
                     const Progress& progress) {
  auto t0 = Clock::now();
  // The image each node names, or the closest release present with a note (never silently).
  if (plan::asks_for_images(plan)) {
    auto present = present_images(runner);
    if (!present) return present.error();
    const size_t before = plan.notes.size();
    if (auto r = plan::resolve_images(plan, *present, opts.strict_images); !r) return r.error();
    for (size_t i = before; i < plan.notes.size(); ++i) progress(to_text(plan.notes[i]));
  }
  if (auto r = preflight(plan, runner); !r) return r.error();
  if (auto r = shaping_preflight(plan, runner, progress); !r) return r.error();
  // `down` deletes every namespace it recorded: never record one that exists already (another
  // lab whose name composes to the same "tw-<lab>-<node>", or a leftover not ours).
  for (const auto& n : plan.nodes)
    if (fs::exists("/run/netns/" + n.netns) && !fs::exists(state::state_path(plan.lab)))
      return usage_error("network namespace " + n.netns + " already exists (node " + n.name +
                         "); another lab or program owns it — choose another lab name with "
                         "--name");
  drivers::DriverSettings settings{opts.parallel, opts.libvirt_uri, opts.trial_image_dir};
  auto groups = drivers::group_by_driver(plan.nodes);
  for (auto& g : groups)
    if (auto r = g.driver->preflight(g.nodes, settings, runner); !r) return r.error();
  if (auto r = ensure_neighbor_capacity(plan, progress); !r) return r.error();
  if (auto r = state::claim_lab(plan.lab); !r) return r.error();
  auto lock = state::lock_lab(plan.lab);
  if (!lock) return lock.error();

  state::State state;
  state.lab = plan.lab;
  state.status = "creating";
  state.created_at = now_rfc3339();
  state.twin_version = TWIN_VERSION;
  state.plan = plan;
  drivers::Record rec(state);
  UpSummary sum;
  sum.lab = plan.lab;
  sum.nodes = static_cast<int>(plan.nodes.size());
  sum.links = static_cast<int>(plan.links.size());
  sum.sessions_expected = static_cast<int>(plan.sessions.size());
  sum.adjacencies_expected = static_cast<int>(plan.adjacencies.size());
  sum.notes = plan.notes;

  auto fail = [&](const Error& e) -> Result<UpSummary> {
    state.status = "failed";
    (void)state::save_state(state);
    if (opts.keep_on_failure) {
      return Error{e.kind, e.message + " (lab " + plan.lab +
                               " kept for inspection: twin down --lab " + plan.lab + ")"};
    }
    progress("tearing down lab " + plan.lab +
             (e.kind == ErrorKind::kInterrupted ? " after the interrupt" : " after failure"));
    auto d = down_locked(plan.lab, runner);
    if (!d)
      return Error{e.kind, e.message + "; teardown also failed: " + d.error().message};
    if (!d->problems.empty())
      return Error{e.kind, e.message + "; teardown left what it could not remove (" +
                               d->problems.front() + "): twin down --lab " + plan.lab +
                               " tries again"};
    return e;
  };
  // Unless the caller chose a timeout, nodes that take long to be ready (a NOS under TCG may
  // take 10 minutes to boot) get their drivers' ready timeout plus 120 s.
  auto timeout = opts.timeout;
  std::chrono::seconds longest_ready{0};
  for (const auto& n : plan.nodes)
    longest_ready = std::max(longest_ready, drivers::driver_for(n).ready_timeout(n));
  if (longest_ready.count() > 0 && !opts.timeout_explicit)
    timeout = std::max<std::chrono::milliseconds>(timeout, longest_ready + 120s);
  auto deadline = t0 + timeout;

  // 1. The lab directory (already claimed) and the cgroup, before any process exists.
  std::string cg = cgroup2_mount() + "/twin/" + plan.lab;
  if (auto r = rec.add({{"dir", state::lab_dir(plan.lab), ""}, {"cgroup", cg, ""}}); !r)
    return fail(r.error());
  std::error_code ec;
  fs::create_directories(cg, ec);
  if (ec) return fail(env_error("creating cgroup " + cg + ": " + ec.message()));
  drivers::BuildContext ctx{runner, rec, progress, settings, deadline};

  // 2. Decisions drivers make once the lab is recorded (a VM's KVM or TCG, after a trial boot).
  for (auto& g : groups)
    if (auto r = g.driver->prepare(g.nodes, ctx); !r) return fail(r.error());
  state.plan = plan;
  if (auto r = rec.save(); !r) return fail(r.error());

  // 3. Namespaces, links, node files, VMs and daemons: reconciling from nothing to the plan.
  plan::Plan empty;
  empty.lab = plan.lab;
  GrowReport grown;
  if (auto r = reconcile(empty, plan, ctx, &grown); !r) return fail(r.error());
  sum.wiring_ms = grown.wiring_ms;
  sum.daemons_ms = grown.daemons_ms;
  sum.daemons = grown.daemons;
  sum.link_local_repaired = grown.link_local_repaired;
  sum.link_local_missing = grown.link_local_missing;
  if (Clock::now() > deadline)
    return fail(harness_error("timed out after " + seconds_text(timeout) +
                              " (--timeout) while starting daemons"));

  // 4. Nodes that boot on their own (VMs booted while the daemons started) are ready.
  if (longest_ready.count() > 0) {
    auto tv = Clock::now();
    for (const auto& g : drivers::group_by_driver([&] {
           std::vector<const plan::Node*> v;
           for (const auto& n : plan.nodes) v.push_back(&n);
           return v;
         }()))
      if (auto r = g.driver->wait_ready(g.nodes, ctx); !r) return fail(r.error());
    sum.vms_ms = ms_since(tv);
  }

  state.status = "up";
  if (auto r = rec.save(); !r) return fail(r.error());

  // 5. Convergence: every expected BGP session Established and OSPF adjacency Full (a probe
  // loop, not a sleep), and nothing else: a lab of own configs waits for what they configure.
  auto tc = Clock::now();
  auto converge_deadline = std::min(deadline, tc + opts.converge_timeout);
  std::string last;
  bool said_waiting = false;
  const bool expects = !plan.sessions.empty() || sum.adjacencies_expected > 0;
  while (opts.wait_converged && expects) {
    if (auto r = check_interrupt("waiting for convergence"); !r) return fail(r.error());
    auto c = count_sessions(plan, opts.parallel);
    sum.sessions_established = c.established;
    sum.adjacencies_full = c.full;
    sum.adjacencies_two_way = c.two_way;
    sum.not_established = c.down;
    if (c.text() != last) {
      progress(c.text());
      last = c.text();
    }
    if (!c.waiting.empty() && !said_waiting) {
      progress("OSPF: waiting for FRR's wait timer before the DR election on " +
               join_some(c.waiting) + " (broadcast networks wait one dead interval)");
      said_waiting = true;
    }
    if (c.converged()) {
      sum.converged = true;
      break;
    }
    if (Clock::now() > deadline)
      return fail(harness_error("timed out after " + seconds_text(timeout) +
                                " (--timeout) waiting for convergence: " + c.text()));
    if (Clock::now() > converge_deadline) break;
    std::this_thread::sleep_for(100ms);  // poll interval of the readiness probe
  }
  if (!expects) sum.converged = true;
  sum.converge_ms = ms_since(tc);
  // A daemon that died after it started (killed, or crashed on its config) leaves a lab that
  // only looks up: `up` says so instead of reporting success.
  if (auto dead = dead_processes(state); !dead.empty())
    return fail(harness_error("daemon" + std::string(dead.size() > 1 ? "s" : "") +
                              " no longer running after start: " + dead +
                              " (see the node's <daemon>.log under " + state::lab_dir(plan.lab) +
                              "; twin up --keep-on-failure keeps the lab)"));
  sum.total_ms = ms_since(t0);
  return sum;
}

}  // namespace twin::engine
