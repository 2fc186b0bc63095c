#include "twin/gate/gate.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <set>

#include <nlohmann/json.hpp>

#include "twin/core/util.hpp"
#include "twin/engine/lab.hpp"
#include "twin/causes/causes.hpp"
#include "twin/changeset/intent.hpp"
#include "twin/changeset/steps.hpp"
#include "twin/verdict/watch.hpp"
#include "twin/runtime/frr.hpp"
#include "twin/validate/runner.hpp"
#include "twin/validate/system_probe.hpp"

using namespace std::chrono_literals;

namespace twin::replay {

SettleFloor ospf_settle_floor(const plan::Plan& plan, const Touched& t) {
  const std::set<std::string> nodes = t.nodes();
  // The adjacencies a touched node takes part in, at both ends (the peer's dead timer is the
  // one that notices a silent neighbor).
  int dead_s = 0;
  for (const auto& a : plan.adjacencies) {
    if (a.version != 2 || (!t.topology && !nodes.count(a.node) && !nodes.count(a.peer_node)))
      continue;
    const plan::Node* n = plan.find(a.node);
    if (!n) continue;
    for (const auto& oi : n->ospf_interfaces)
      if (oi.name == a.interface && oi.version == 2) dead_s = std::max(dead_s, oi.dead_s);
  }
  if (dead_s == 0) return {};
  return {std::chrono::seconds(dead_s), "the OSPF dead interval of what changed"};
}

SettleFloor settle_floor(const plan::Plan& plan, const Touched& t, Clock::time_point now) {
  SettleFloor f = ospf_settle_floor(plan, t);
  int delay_s = 0;
  std::string node;
  for (const auto& [n, d] : t.policy_delay_s)
    if (d > delay_s) {
      delay_s = d;
      node = n;
    }
  // The timer counts from the edit; the second is for bgpd's work once it fires (the quiet
  // period then still follows any change it makes).
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      t.policy_edited_at + std::chrono::seconds(delay_s + 1) - now);
  if (delay_s > 0 && left > f.ms) {
    f.ms = left;
    f.why = node + "'s route-map delay timer (" + std::to_string(delay_s) +
            " s) must fire before FRR applies the edited policy";
  }
  return f;
}

namespace {

// --per-step validates step by step up to this many steps, and bisects longer changes.
constexpr size_t kBisectAbove = 6;

// A settle floor longer than this earns an early look for failures that cannot converge, and
// that look's window: what cannot converge is final after its confirmation (RunOptions::
// explained_hold, 2 s); the rest is not believed before the floor has passed.
constexpr std::chrono::milliseconds kEarlyLookAbove{5000};
constexpr std::chrono::milliseconds kEarlyLookWindow{3000};

class Gate {
 public:
  Gate(const state::State& st, const ChangeSet& cs, const ApplyOptions& opts, GateEnv& env)
      : st_(st),
        cs_(cs),
        opts_(opts),
        env_(env),
        runner_(env.runner),
        time_(env.time),
        watch_(env, opts.parallel, opts.converge_timeout, opts.progress),
        change_text_(frr_text_of(cs)) {}

  Result<ApplyResult> run();
  Result<Injected> inject();
  Result<Restored> restore(const Reference& ref);

 private:
  void say(const std::string& s) {
    if (opts_.progress) opts_.progress(s);
  }
  Phase validate_phase(const std::string& name, const plan::Plan& plan) {
    return watch_.validate(name, plan);
  }
  Phase validate_phase_within(const std::string& name, const plan::Plan& plan,
                              std::chrono::milliseconds window) {
    return watch_.validate(name, plan, window);
  }
  // run()'s stages, in order. judge_baseline: false when the baseline did not pass (res_ says
  // why; nothing is applied).
  struct StepsRun {
    bool bisecting = false;  // --per-step on more than kBisectAbove steps
    size_t attempted = 0;    // steps applied or failed (the rest were skipped)
  };
  Result<bool> judge_baseline();
  Result<StepsRun> apply_steps(Touched& touched);
  Result<bool> validate_step(const Step& s, size_t i, const Touched& touched);
  Result<void> validate_after(const Touched& touched, const plan::Plan& intended);
  Result<void> judge(Touched& touched, const plan::Plan& intended, const StepsRun& steps);
  void keep_change(const Touched& touched, const plan::Plan& intended);
  Result<void> roll_back(const Touched& touched);
  void climb_ladder(const Touched& touched);
  Result<void> snapshot();
  // `work` (a new TempDir) becomes work_dir_, readable by FRR's tools (snapshots are reloaded
  // from it).
  Result<void> use_work_dir(const TempDir& work) {
    if (work.path.empty()) return harness_error("cannot create a temporary folder");
    work_dir_ = work.path;
    if (::chmod(work_dir_.c_str(), 0755) != 0) return harness_error("chmod " + work_dir_);
    return {};
  }
  Result<void> apply_step(const Step& s, size_t index, Touched& t, std::string* detail,
                          std::string* text = nullptr);
  void wait_converged(const plan::Plan& plan, std::chrono::milliseconds timeout,
                      std::string* detail);
  // LabWatch::settle, as one line for the progress. After a change that touched `t`'s
  // kernel state (ports, addresses, sysctls) on nodes with BGP, settling also waits until
  // their sessions were heard from since the change or dropped (silent_sessions).
  // `moved_from`: the state a restore to `target` starts from; `configured`: FRR was
  // configured just before, not restarted (SettleOptions).
  std::string settle(const plan::Plan& plan, const SettleFloor& floor = {},
                     const NetState* target = nullptr, const Touched* t = nullptr,
                     const NetState* moved_from = nullptr, bool configured = true) {
    SettleOptions o;
    o.configured = configured;
    o.floor = floor;
    o.target = target;
    o.moved_from = moved_from;
    o.running_configs = &res_.config_before;
    o.change_text = change_text_;
    if (t) o.unsettled = silent_check(plan, *t);
    return watch_.settle(plan, o).text;
  }
  std::function<bool()> silent_check(const plan::Plan& plan, const Touched& t);
  // What settling after the first `upto` steps waits for: the baseline's sessions and routes
  // when those steps only move nodes to other images (and wait or check) — the same configs on
  // another release must route as before — else nothing (nullptr). Without it an OSPF
  // adjacency still re-forming after the daemons' restart (ospfd's timers are not visible)
  // looked quiet and the short validation of a quiet network rejected it (a new user saw 4 of
  // 5 downgrades of a 4-router OSPF lab rejected, ECMP back 3 s later).
  const NetState* upgrade_target(size_t upto) const {
    bool image = false;
    for (size_t i = 0; i < upto && i < cs_.steps.size(); ++i) {
      const StepKind k = cs_.steps[i].kind();
      if (k == StepKind::kImage)
        image = true;
      else if (k != StepKind::kWait && k != StepKind::kCheck)
        return nullptr;
    }
    return image ? &res_.baseline.state : nullptr;
  }
  // Every FRR step's lines (a `replace`'s whole config), for idle_evidence_blocked.
  static std::string frr_text_of(const ChangeSet& cs) {
    std::string text;
    for (const auto& st : cs.steps) {
      if (st.kind() != StepKind::kFrr) continue;
      const FrrStep& f = st.frr();
      text += f.add + f.remove;
      if (!f.replace.empty())
        if (auto r = read_regular_file(f.replace)) text += *r;
    }
    return text;
  }
  Clock::time_point steps_started_{};  // when the latest step began to be applied
  void bisect(Touched& touched, size_t attempted);
  Error abort_interrupted(const Touched& touched, const std::string& when);
  Result<void> rollback(const Touched& t, std::string* detail);
  // Validates the lab against the baseline after a rollback rung (`ok`: the rung itself did
  // all it should); sets rollback_ok, rollback_rung when proven, the diff and the phase.
  void prove_rollback(bool ok, const std::string& rung);
  // One rung of the restore ladder on `nodes`: "restart" boots their routing daemons from the
  // baseline's running config (written as their startup config first); "recreate" builds each
  // node anew (its namespace, links and daemons, as `up` does) and then boots it so.
  Result<void> restore_nodes(const std::vector<std::string>& nodes, const std::string& rung,
                             std::string* how);
  // The running configs after the change in res_.config_after: read from the nodes the change
  // worked on (every node after a topology step), the snapshot's for the others, which no step
  // touched (on 8x48, 55 vtysh reads of ~0.1 CPU-second each saved per change).
  Result<void> record_configs_after(const plan::Plan& plan, const Touched& t);
  // The running config of every node of `plan` whose FRR twin manages (those `only` accepts,
  // when given), in plan order.
  std::vector<std::pair<const plan::Node*, Result<std::string>>> running_configs(
      const plan::Plan& plan, const std::function<bool(const plan::Node&)>& only = {});
  // FRR nodes whose configuration the change touched: a step's, or a running config that
  // differs from its snapshot (a topology step's new and reconfigured nodes). Sorted.
  std::vector<std::string> touched_frr_nodes(const Touched& t) const;
  // Each node's running config becomes its startup config; the names go to saved_.
  std::string save_configs(const std::vector<std::string>& nodes);
  void restart_check(const plan::Plan& intended, const Touched& t);
  // Likely causes of the verdict's reasons, from the lab as it is now (causes.hpp).
  void explain(const plan::Plan& plan, const Phase& phase, const plan::Plan* intended = nullptr);
  // The hitless measurement: start before the first step, stop once the network settled.
  void start_stream() {
    if (opts_.outage.enabled)
      watch_.start_stream(st_.plan, res_.baseline.state, opts_.outage, res_.outage.emplace());
  }
  void stop_stream() {
    if (res_.outage) watch_.stop_stream(*res_.outage);
  }
  void judge_outage(const Touched& touched, const plan::Plan& intended);

  const state::State& st_;
  const ChangeSet& cs_;
  const ApplyOptions& opts_;
  GateEnv& env_;
  proc::ProcessRunner& runner_;
  TimeSource& time_;
  ApplyResult res_;
  plan::Plan current_;  // the plan the lab runs now (grows with topology steps)
  // The lab's plan with the traffic pattern the change asked for (intent.traffic): what the
  // baseline and the rollback's proof validate. nullopt: st_.plan.
  std::optional<plan::Plan> baseline_plan_;
  std::map<std::string, std::string> snapshot_paths_;  // node -> saved running config
  std::set<std::string> saved_;  // nodes whose startup config was overwritten by this run
  std::string work_dir_;
  LabWatch watch_;
  const std::string change_text_;  // frr_text_of
};

std::vector<std::pair<const plan::Node*, Result<std::string>>> Gate::running_configs(
    const plan::Plan& plan, const std::function<bool(const plan::Node&)>& only) {
  std::vector<std::pair<const plan::Node*, Result<std::string>>> out;
  for (const auto& n : plan.nodes)
    if (env_.drivers(n).manages_frr(n) && (!only || only(n))) out.emplace_back(&n, std::string());
  // A vtysh per node (~0.1 s each, most of it vtysh building FRR's command graph): nodes at
  // once, as many as --parallel.
  parallel_for(out.size(), opts_.parallel, [&](size_t i) {
    out[i].second = env_.drivers(*out[i].first).running_config(*out[i].first, runner_);
  });
  return out;
}

Result<void> Gate::snapshot() {
  for (auto& [n, cfg] : running_configs(current_)) {
    if (!cfg) return cfg.error().with_context("snapshot");
    std::string path = work_dir_ + "/" + n->name + ".before.conf";
    if (auto w = write_file(path, *cfg); !w) return w.error();
    snapshot_paths_[n->name] = path;
    res_.config_before[n->name] = *cfg;
  }
  return {};
}

void Gate::wait_converged(const plan::Plan& plan, std::chrono::milliseconds timeout,
                          std::string* detail) {
  auto t0 = time_.now();
  for (;;) {
    auto c = engine::count_sessions(plan, opts_.parallel, env_.drivers);
    if (c.converged()) {
      *detail = c.text() + " after " + std::to_string(static_cast<int>(time_.ms_since(t0))) +
                " ms";
      return;
    }
    if (time_.ms_since(t0) > static_cast<double>(timeout.count()) || interrupted()) {
      *detail = "not converged after " + std::to_string(static_cast<int>(time_.ms_since(t0))) +
                " ms: " + c.text();
      if (!c.down.empty()) *detail += " (" + c.down.front() + ")";
      return;
    }
    time_.sleep_for(100ms);  // poll interval of the readiness probe
  }
}

std::function<bool()> Gate::silent_check(const plan::Plan& plan, const Touched& t) {
  std::vector<const plan::Node*> nodes;
  for (const auto& name : t.kernel_nodes())
    if (const plan::Node* n = plan.find(name); n && plan::has_bgp_instance(*n)) nodes.push_back(n);
  if (nodes.empty()) return {};
  return [this, nodes] {
    validate::SystemProbe probe(runner_, env_.drivers);
    double since = time_.ms_since(steps_started_);
    for (const auto* n : nodes) {
      auto j = probe.frr_json(*n, "bgpd", "show bgp neighbors json");
      if (!j) continue;
      auto silent = silent_sessions(*j, since);
      if (!silent.empty()) return true;
    }
    return false;
  };
}

Result<void> Gate::apply_step(const Step& s, size_t index, Touched& t, std::string* detail,
                              std::string* text) {
  steps_started_ = time_.now();
  StepRun run{env_,
              opts_,
              st_,
              cs_,
              index,
              current_,
              t,
              [this](const plan::Plan& plan, std::chrono::milliseconds timeout) {
                std::string d;
                wait_converged(plan, timeout, &d);
                return d;
              },
              &res_.notes,
              text};
  return std::visit([&](const auto& body) { return replay::apply_step(body, run, detail); },
                    s.body);
}

Result<void> Gate::rollback(const Touched& t, std::string* detail) {
  std::vector<std::string> problems;
  // Nodes an image step moved: back on the image the baseline ran, booting the configuration
  // they saved before the step (the last replaced first), before anything else is restored.
  int images = 0;
  for (auto it = t.images.rbegin(); it != t.images.rend(); ++it) {
    const auto& [before, config] = *it;
    auto r = env_.lab.boot_image(current_, before, config);
    if (!r) {
      problems.push_back("node " + before.name + ": back to " + before.container.image + ": " +
                         r.error().message);
      continue;
    }
    ++images;
    for (auto& n : current_.nodes)
      if (n.name == before.name) n = before;
  }
  // VTEPs a vxlan step changed: from the VNIs their kernel runs now (as the steps left them,
  // when it cannot be read) to those before the change, or to the plan's when a topology step
  // reshaped the lab (its reshape back, below, works from that plan).
  int vteps = 0;
  for (const auto& [name, before] : t.vteps) {
    const plan::Node* n = current_.find(name);
    if (!n) continue;
    const auto& driver = env_.drivers(*n);
    plan::Node now = *n, back = *n;
    auto running = driver.running_vnis(*n, runner_);
    now.vnis = running ? *running : t.vteps_left.at(name);
    if (!t.topology) back.vnis = before;
    std::string script = driver.vtep_change_script(now, back);
    if (script.empty()) continue;
    ++vteps;
    if (auto r = driver.change_interfaces(*n, script, "node " + name, runner_); !r)
      problems.push_back(r.error().message);
  }
  if (t.topology || t.daemons) {
    engine::GrowReport g;
    if (auto r = env_.lab.reshape(current_, st_.plan, &g); !r)
      problems.push_back("topology: " + r.error().message);
    current_ = st_.plan;
  }
  // Interfaces: MTU and admin state as observed in the baseline.
  std::map<std::string, std::string> scripts;
  for (const auto& key : t.interfaces) {
    auto c = key.find(':');
    std::string node = key.substr(0, c), ifname = key.substr(c + 1);
    auto m = res_.baseline.state.mtu.find(key);
    auto u = res_.baseline.state.admin_up.find(key);
    if (m != res_.baseline.state.mtu.end())
      scripts[node] += "link set dev " + ifname + " mtu " + std::to_string(m->second) + "\n";
    if (u != res_.baseline.state.admin_up.end())
      scripts[node] += "link set dev " + ifname + (u->second ? " up" : " down") + "\n";
  }
  for (const auto& [node, ifname, a] : t.host_added)
    scripts[node] += "address del " + a + " dev " + ifname + "\n";
  for (const auto& [node, ifname, a] : t.host_removed)
    scripts[node] += "address add " + a + " dev " + ifname + "\n";
  // Removing an address also removes the routes through it (the kernel's default route of a
  // server): put the plan's routes back.
  std::set<std::string> hosts;
  for (const auto& [node, ifname, a] : t.host_removed) hosts.insert(node);
  for (const auto& [node, ifname, a] : t.host_added) hosts.insert(node);
  // So does taking a host's port down: a link step's rollback brings it back up first.
  for (const auto& key : t.interfaces)
    if (const plan::Node* n = st_.plan.find(key.substr(0, key.find(':')));
        n && n->kind == topology::NodeKind::kHost)
      hosts.insert(n->name);
  for (const auto& h : hosts)
    if (const plan::Node* n = st_.plan.find(h)) scripts[h] += plan_routes_script(*n);
  for (const auto& [node, script] : scripts) {
    const plan::Node* n = st_.plan.find(node);
    if (!n) continue;
    if (auto r = env_.drivers(*n).change_interfaces(*n, script, "node " + node, runner_); !r)
      problems.push_back(r.error().message);
  }
  // Kernel settings: the values before the change, the last written first.
  for (auto it = t.sysctls.rbegin(); it != t.sysctls.rend(); ++it) {
    const auto& [node, key, old] = *it;
    const plan::Node* n = st_.plan.find(node);
    if (!n) continue;
    if (auto r = env_.drivers(*n).write_sysctl(*n, key, old); !r)
      problems.push_back("node " + node + ": " + r.error().message);
  }
  // Disabling IPv6 made the kernel delete the IPv6 addresses (and routes) of what it covered;
  // enabling it again brings back only link-local ones. The plan's addresses go back on, and
  // bounced ports make zebra reinstall the routes through them.
  std::set<std::string> v6_nodes = t.readdress;
  for (const auto& [node, key, old] : t.sysctls)
    if (key.find("disable_ipv6") != std::string::npos) v6_nodes.insert(node);
  for (const auto& node : v6_nodes) {
    const plan::Node* n = st_.plan.find(node);
    if (!n) continue;
    std::string script;
    bool both = t.readdress.count(node) > 0;  // (IPv6 alone when only IPv6 was turned off)
    auto readd = [&](const std::string& a, const std::string& dev) {
      if (both || a.find(':') != std::string::npos)
        script += "address replace " + a + " dev " + dev + "\n";
    };
    for (const auto& a : n->loopbacks) readd(a, "lo");
    for (const auto& [dev, addrs] : n->config_addresses)
      for (const auto& a : addrs) readd(a, dev);
    for (const auto& i : n->interfaces) {
      for (const auto& a : i.addresses) readd(a, i.name);
      if (i.up) script += "link set dev " + i.name + " down\nlink set dev " + i.name + " up\n";
    }
    script += plan_routes_script(*n, 6);
    if (auto r = env_.drivers(*n).change_interfaces(*n, script, "node " + node, runner_); !r)
      problems.push_back(r.error().message);
  }
  // FRR: back to the snapshot, applied as a difference (and soft-cleared: restored policy
  // applies at once, runtime::frr_reload).
  std::vector<const plan::Node*> nodes;
  for (const auto& name : t.frr_nodes)
    if (const auto* n = st_.plan.find(name); n && snapshot_paths_.count(name)) nodes.push_back(n);
  std::vector<std::optional<Error>> errs(nodes.size());
  parallel_for(nodes.size(), opts_.parallel, [&](size_t i) {
    const auto& path = snapshot_paths_.at(nodes[i]->name);
    auto r = env_.drivers(*nodes[i]).reload_config(*nodes[i], path, false, nullptr, runner_);
    if (!r) errs[i] = r.error();
  });
  for (const auto& e : errs)
    if (e) problems.push_back(e->message);
  // The kernel dropped routes through an interface that lost its last IPv4 address; zebra
  // reinstalls them when the interface comes back up.
  for (const auto& key : t.frr_addressed) {
    auto c = key.find(':');
    const plan::Node* n = st_.plan.find(key.substr(0, c));
    if (!n) continue;
    std::string ifname = key.substr(c + 1);
    if (auto r = env_.drivers(*n).change_interfaces(
            *n, "link set dev " + ifname + " down\nlink set dev " + ifname + " up\n",
            "node " + n->name, runner_);
        !r)
      problems.push_back(r.error().message);
  }
  std::string restored = std::to_string(nodes.size()) + " FRR config(s) and " +
                         std::to_string(scripts.size()) + " node(s)' interfaces restored";
  if (!t.readdress.empty())
    restored += ", the addresses of " + std::to_string(t.readdress.size()) + " router(s) put back";
  if (!t.sysctls.empty())
    restored += ", " + std::to_string(t.sysctls.size()) + " kernel setting(s) written back";
  if (vteps > 0) restored += ", the VNIs of " + std::to_string(vteps) + " VTEP(s) put back";
  if (images > 0) restored += ", " + std::to_string(images) + " node(s) back on their image";
  if (!problems.empty()) {
    *detail = "not all restored (of " + restored + "): " + problems.front();
    return harness_error(*detail);
  }
  *detail = restored;
  return {};
}

void Gate::prove_rollback(bool ok, const std::string& rung) {
  // What the baseline validated: with intent.traffic, the bandwidth must be back too.
  const plan::Plan& base = baseline_plan_ ? *baseline_plan_ : st_.plan;
  Phase ph = validate_phase("rollback", base);
  Diff back = diff_states(res_.baseline.state, ph.state, st_.plan, base);
  Verdict v =
      decide({}, ph.report, back, opts_.allow_dirty_baseline ? &res_.baseline.report : nullptr);
  res_.rollback_ok = ok && v.decision == Decision::kApprove;
  res_.rollback_diff = back;
  if (res_.rollback_ok) {
    res_.rollback_rung = rung;
    res_.rollback_detail += "; proven by the " + rung + " rung";
  } else if (!v.reasons.empty()) {
    res_.rollback_detail += "; after the " + rung +
                            " rung still different from the baseline: " + v.reasons.front().message;
  }
  res_.rollback = std::move(ph);
}

Result<void> Gate::restore_nodes(const std::vector<std::string>& nodes, const std::string& rung,
                                 std::string* how) {
  std::vector<std::string> names;
  for (const auto& name : nodes)
    if (st_.plan.find(name) && res_.config_before.count(name)) names.push_back(name);
  if (names.empty()) {
    *how = "no node to restore";
    return {};
  }
  if (rung == "recreate") {
    // Without the nodes, then with them again: their namespaces, links (and so their peers'
    // ends), addresses and daemons made anew by the one path that builds labs.
    plan::Plan without = st_.plan;
    std::erase_if(without.nodes, [&](const plan::Node& n) {
      return std::find(names.begin(), names.end(), n.name) != names.end();
    });
    std::erase_if(without.links, [&](const plan::Link& l) {
      return std::find(names.begin(), names.end(), l.a_node) != names.end() ||
             std::find(names.begin(), names.end(), l.b_node) != names.end();
    });
    plan::derive_expectations(without);
    engine::GrowReport g;
    if (auto r = env_.lab.reshape(st_.plan, without, &g); !r) return r;
    if (auto r = env_.lab.reshape(without, st_.plan, &g); !r) return r;
  }
  std::string problems;
  for (const auto& name : names) {
    const plan::Node* n = st_.plan.find(name);
    if (auto r = env_.drivers(*n).write_startup_config(*n, res_.config_before.at(name)); !r)
      problems += (problems.empty() ? "" : "; ") + r.error().message;
  }
  if (!problems.empty()) return harness_error("baseline config not written: " + problems);
  auto started = env_.lab.control_routing(st_.plan, names, engine::RoutingAction::kRestart);
  if (!started) return started.error();
  *how = (rung == "recreate" ? "rebuilt " : "restarted ") + join_names(names) +
         " from the baseline's config (" + std::to_string(*started) + " daemons)";
  saved_.clear();  // their startup configs are the baseline's now
  return {};
}

Result<void> Gate::record_configs_after(const plan::Plan& plan, const Touched& t) {
  const std::set<std::string> worked_on = t.nodes();
  auto changed = [&](const plan::Node& n) {
    return t.topology || worked_on.count(n.name) || !res_.config_before.count(n.name);
  };
  for (auto& [n, cfg] : running_configs(plan, changed))
    if (cfg) res_.config_after[n->name] = *cfg;
  for (const auto& n : plan.nodes)
    if (!changed(n))
      if (auto b = res_.config_before.find(n.name); b != res_.config_before.end())
        res_.config_after[n.name] = b->second;
  return {};
}

std::vector<std::string> Gate::touched_frr_nodes(const Touched& t) const {
  std::set<std::string> nodes;
  for (const auto& n : t.frr_nodes)
    if (res_.config_after.count(n)) nodes.insert(n);
  for (const auto& [n, after] : res_.config_after) {
    auto b = res_.config_before.find(n);
    if (b == res_.config_before.end() || b->second != after) nodes.insert(n);
  }
  return {nodes.begin(), nodes.end()};
}

std::string Gate::save_configs(const std::vector<std::string>& nodes) {
  std::vector<Result<void>> done(nodes.size());
  parallel_for(nodes.size(), opts_.parallel, [&](size_t i) {
    if (const plan::Node* n = current_.find(nodes[i]))
      done[i] = env_.drivers(*n).save_config(*n, runner_);
  });
  std::string problems;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!current_.find(nodes[i])) continue;
    if (!done[i])
      problems += (problems.empty() ? "" : "; ") + nodes[i] + ": " + done[i].error().message;
    else
      saved_.insert(nodes[i]);
  }
  return problems;
}

// An approved change, proven to survive a reboot of what it touched: running configs saved as
// startup configs, routing daemons restarted from them, and the network must come back to the
// approved state. Configuration that holds only in running state, or whose effect shows only
// once a session resets (an RFC 8212 policy requirement switched on under established
// sessions), diverges here.
void Gate::restart_check(const plan::Plan& intended, const Touched& t) {
  auto t0 = time_.now();
  RestartCheck& rc = res_.restart_check.emplace();
  rc.nodes = touched_frr_nodes(t);
  if (rc.nodes.empty()) {
    rc.ok = true;
    rc.detail = "no FRR configuration was touched: nothing to restart";
    say("restart check: " + rc.detail);
    return;
  }
  std::string names;
  for (const auto& n : rc.nodes) names += (names.empty() ? "" : ", ") + n;
  if (t.from_saved)
    say("restart check: restarting the routing daemons of " + names +
        " from what they saved themselves (what a reboot loads)");
  else
    say("restart check: saving the running config of " + names +
        " as startup config and restarting their routing daemons");
  auto fail = [&](const std::string& category, const std::string& why,
                  std::vector<std::string> subjects = {}) {
    rc.ok = false;
    rc.detail = why;
    if (subjects.empty()) subjects = {why};
    res_.verdict.reasons.push_back({reason_rank(category), category, "", why, subjects});
    std::stable_sort(res_.verdict.reasons.begin(), res_.verdict.reasons.end(),
                     [](const Reason& a, const Reason& b) { return a.rank < b.rank; });
    if (category != "validator-error") res_.verdict.decision = Decision::kReject;
    else if (res_.verdict.decision == Decision::kApprove) res_.verdict.decision = Decision::kError;
  };
  // A live run's nodes keep what they saved (or did not): restarting from it is the check.
  if (auto problems = t.from_saved ? std::string() : save_configs(rc.nodes); !problems.empty()) {
    fail("validator-error", "restart check: could not save the running config: " + problems);
    rc.duration_ms = time_.ms_since(t0);
    return;
  }
  auto started = env_.lab.control_routing(current_, rc.nodes, engine::RoutingAction::kRestart);
  if (!started) {
    // FRR refusing its own saved configuration is a divergence of the change; anything else is
    // the harness's.
    bool refused = started.error().kind == ErrorKind::kInput;
    fail(refused ? "restart-divergence" : "validator-error",
         "restart check: restarting " + names + " failed: " + started.error().message);
    rc.duration_ms = time_.ms_since(t0);
    return;
  }
  rc.daemons = *started;
  say("restart check: " + std::to_string(*started) + " daemon(s) started; settling: " +
      settle(intended, ospf_settle_floor(intended, t), &res_.after->state, nullptr, nullptr,
             /*configured=*/false));
  Phase ph = validate_phase("after restart", intended);
  rc.diff = diff_states(res_.after->state, ph.state, intended, intended);
  Verdict v = decide({}, ph.report, rc.diff,
                     opts_.allow_dirty_baseline ? &res_.baseline.report : nullptr);
  rc.phase = std::move(ph);
  rc.duration_ms = time_.ms_since(t0);
  // A live run that never saved: its nodes booted what they had saved, without the run's
  // change, even where the network's state does not show it (a policy object not yet used).
  if (v.decision == Decision::kApprove && t.from_saved && !t.unsaved.empty()) {
    const std::string nodes = join_names({t.unsaved.begin(), t.unsaved.end()});
    fail("restart-divergence",
         "running config not saved on " + nodes + ": the run never said `write memory`, so "
         "after a restart " + nodes + " run what they had saved, without the run's change",
         {"running config not saved: " + nodes});
    say("restart check: DIVERGED (running config not saved)");
    return;
  }
  if (v.decision == Decision::kApprove) {
    rc.ok = true;
    rc.detail = names + " restarted from the saved config (" + std::to_string(rc.daemons) +
                " daemons); the network came back to the approved state in " +
                std::to_string(static_cast<int>(rc.duration_ms)) + " ms";
    say("restart check: passed");
    return;
  }
  std::vector<std::string> subjects;
  for (const auto& r : v.reasons)
    for (const auto& s : r.subjects) subjects.push_back(r.category + ": " + s);
  std::string why = "after restarting the routing daemons of " + names +
                    " from their saved config, the network came back different: " +
                    v.reasons.front().message;
  if (!t.unsaved.empty())
    why += " (running config not saved on " +
           join_names({t.unsaved.begin(), t.unsaved.end()}) +
           ": the run never said `write memory`, so a reboot loses what it did)";
  bool only_errors = v.decision == Decision::kError;
  fail(only_errors ? "validator-error" : "restart-divergence", why, subjects);
  say("restart check: " + std::string(only_errors ? "could not tell" : "DIVERGED"));
}

void Gate::explain(const plan::Plan& plan, const Phase& phase, const plan::Plan* intended) {
  if (res_.verdict.reasons.empty()) return;
  // (A failing baseline has no snapshot yet: the configs are read then.)
  const auto& configs = res_.config_after.empty() ? res_.config_before : res_.config_after;
  auto causes =
      explain_phase(plan, phase, env_.drivers, runner_, configs, opts_.parallel, intended);
  attach_causes(res_.verdict, causes);
  // A loss of bandwidth: the traffic family's own diagnosis of it, where no rule named one.
  for (auto& r : res_.verdict.reasons)
    if (r.category == "bandwidth-lost" && r.causes.empty()) r.causes = traffic_causes(phase.report);
  if (!causes.empty()) say("likely cause: " + causes.front().text);
}

// The probe stream's verdict: flows to or from a node the change works on are measured, not
// judged; with a budget, a judged flow out longer rejects (reason outage), and a budget that
// could not be measured makes the verdict an error rather than an approval.
void Gate::judge_outage(const Touched& touched, const plan::Plan& intended) {
  if (!res_.outage) return;
  OutageReport& out = *res_.outage;
  std::set<std::string> worked_on = touched.nodes();
  // Servers the change means to move, cut off or remove: their losses are intended.
  for (const auto& n : st_.plan.nodes) {
    if (n.kind != topology::NodeKind::kHost) continue;
    const auto* before = plan::tenant_network_of_server(st_.plan, n.name);
    const auto* after = intended.find(n.name) ? plan::tenant_network_of_server(intended, n.name)
                                              : nullptr;
    if (!intended.find(n.name) || (before ? before->vni : 0) != (after ? after->vni : 0))
      worked_on.insert(n.name);
  }
  for (const auto& f : watch_.flows())
    if (worked_on.count(f.src_node) || worked_on.count(f.dst_node)) out.not_judged.insert(f.name());
  if (!out.budget) return;
  std::optional<Reason> reason;
  if (out.stats.flows.empty())
    reason = Reason{reason_rank("validator-error"), "validator-error", "",
                    "the outage budget could not be checked: " + out.detail, {out.detail}};
  else
    reason = outage_reason(out.stats, *out.budget, out.not_judged);
  if (!reason) return;
  res_.verdict.reasons.push_back(*reason);
  std::stable_sort(res_.verdict.reasons.begin(), res_.verdict.reasons.end(),
                   [](const Reason& a, const Reason& b) { return a.rank < b.rank; });
  if (reason->category == "outage")
    res_.verdict.decision = Decision::kReject;
  else if (res_.verdict.decision == Decision::kApprove)
    res_.verdict.decision = Decision::kError;
}

// Finds the first step after which the change is rejected, in O(log n) validations: the
// baseline (0 steps) is known good and all n steps known bad; each probe rolls back to the
// baseline, applies the first `mid` steps and judges them like the whole change. Assumes a
// broken network stays broken as more steps are applied (true of the faults a rollout gate
// exists for; a later step that repairs an earlier one can make bisection name a later step).
void Gate::bisect(Touched& touched, size_t attempted) {
  size_t good = 0, bad = attempted;
  while (bad - good > 1 && !interrupted()) {
    size_t mid = (good + bad) / 2;
    std::string d;
    if (auto r = rollback(touched, &d); !r) {
      say("bisect stopped: rollback failed: " + d);
      return;
    }
    touched = Touched{};
    bool applied = true;
    for (size_t i = 0; i < mid && applied; ++i) {
      std::string detail;
      applied = static_cast<bool>(apply_step(cs_.steps[i], i, touched, &detail));
    }
    plan::Plan p = intended_plan(st_.plan, cs_, mid);
    say("bisect: first " + std::to_string(mid) + " of " + std::to_string(cs_.steps.size()) +
        " steps; settling: " + settle(p, settle_floor(p, touched, time_.now()), nullptr, &touched));
    Phase ph = validate_phase("bisect: first " + std::to_string(mid) + " steps", p);
    Diff diff = diff_states(res_.baseline.state, ph.state, st_.plan, p);
    Verdict v =
        decide({}, ph.report, diff, opts_.allow_dirty_baseline ? &res_.baseline.report : nullptr);
    res_.per_step.push_back(std::move(ph));
    if (applied && v.decision == Decision::kApprove)
      good = mid;
    else
      bad = mid;
  }
  res_.first_failing_step = cs_.steps[bad - 1].name;
  res_.steps[bad - 1].status = "broke";
  res_.steps[bad - 1].detail += "; bisection: the network fails validation from this step on";
  say("bisect: the first step that breaks the network is '" + res_.first_failing_step + "'");
}

// SIGINT/SIGTERM after something was applied: restore the baseline before exiting 130. The
// flag is cleared so the rollback's own commands are not cancelled; a second signal stops it.
Error Gate::abort_interrupted(const Touched& touched, const std::string& when) {
  g_interrupted = false;
  say("interrupted " + when + ": rolling back (interrupt again to stop the rollback)");
  std::string d;
  auto r = rollback(touched, &d);
  bool again = interrupted();
  g_interrupted = true;
  if (r && !again)
    return Error{ErrorKind::kInterrupted,
                 "interrupted " + when + "; the change was rolled back (" + d + ")" +
                     (opts_.lab_outlives ? "; not re-validated: run twin validate --lab " + st_.lab
                                         : std::string())};
  return Error{ErrorKind::kInterrupted, "interrupted " + when + "; the lab is NOT restored (" +
                                            (again ? "rollback interrupted" : d) +
                                            "): twin down and up, or repair by hand"};
}

// The gate's run, as the four stages of DESIGN.md §6: baseline, steps, judge, keep or roll back.
Result<ApplyResult> Gate::run() {
  const auto t0 = time_.now();
  res_.lab = st_.lab;
  res_.change_name = cs_.name;
  res_.change_file = cs_.file;
  res_.started_at = now_rfc3339();
  current_ = st_.plan;
  TempDir work;
  if (auto w = use_work_dir(work); !w) return w.error();

  auto judged = judge_baseline();
  if (!judged) return judged.error();
  if (!*judged) {  // the baseline did not pass: nothing was applied
    res_.duration_ms = time_.ms_since(t0);
    return res_;
  }
  if (auto r = snapshot(); !r) return r.error();
  start_stream();

  Touched touched;
  auto steps = apply_steps(touched);
  if (!steps) return steps.error();
  if (interrupted()) return abort_interrupted(touched, "while applying");

  const plan::Plan intended = intended_plan(st_.plan, cs_);
  if (auto r = validate_after(touched, intended); !r) return r.error();
  if (auto r = judge(touched, intended, *steps); !r) return r.error();
  res_.verdict_ms = time_.ms_since(t0);
  say(std::string("verdict: ") + to_string(res_.verdict.decision) + " after " +
      std::to_string(static_cast<int>(res_.verdict_ms / 1000)) + " s");
  if (res_.verdict.decision != Decision::kApprove) {
    const Phase& seen = res_.restart_check && res_.restart_check->phase
                            ? *res_.restart_check->phase
                            : *res_.after;
    explain(current_, seen, &intended);  // tenant rules: against what the change means
  }

  // Approve: the lab's intent now includes the change, and the touched nodes' startup configs
  // hold it. Reject: roll back and prove it.
  if (res_.verdict.decision == Decision::kApprove && !opts_.revert) {
    keep_change(touched, intended);
  } else if (!opts_.no_rollback || res_.verdict.decision == Decision::kApprove) {
    if (auto r = roll_back(touched); !r) return r.error();
  }
  res_.duration_ms = time_.ms_since(t0);
  return res_;
}

Result<bool> Gate::judge_baseline() {
  say("baseline: validating lab " + st_.lab);
  // A change that asks for the traffic family (intent.traffic) is compared with a baseline that
  // ran the same pattern.
  if (cs_.intent.traffic) {
    baseline_plan_ = st_.plan;
    baseline_plan_->traffic = cs_.intent.traffic;
  }
  res_.baseline = validate_phase("baseline", baseline_plan_ ? *baseline_plan_ : st_.plan);
  if (interrupted())
    return Error{ErrorKind::kInterrupted, "interrupted during the baseline; nothing was applied"};
  const bool unhealthy =
      std::any_of(res_.baseline.report.results.begin(), res_.baseline.report.results.end(),
                  [](const validate::TestResult& r) {
                    return r.unhealthy && r.status == validate::Status::kFailed;
                  });
  if (!unhealthy && (res_.baseline.report.exit_code() == 0 || opts_.allow_dirty_baseline))
    return true;
  // A lab with a dead daemon is not a baseline at all: whatever the change did would be judged
  // against a network that is missing a part, and blamed on it.
  res_.stage = unhealthy ? "baseline-unhealthy" : "baseline-failed";
  // The reasons say what was already wrong (the change is not to blame).
  res_.verdict = decide({}, res_.baseline.report, Diff{}, nullptr);
  explain(st_.plan, res_.baseline);
  return false;
}

// With --per-step, up to kBisectAbove steps are validated one by one; a longer change is
// applied whole and, if rejected, bisected (bisect()).
Result<Gate::StepsRun> Gate::apply_steps(Touched& touched) {
  StepsRun run;
  run.bisecting = opts_.per_step && cs_.steps.size() > kBisectAbove;
  const bool step_by_step = opts_.per_step && !run.bisecting;
  bool broke = false;
  for (size_t i = 0; i < cs_.steps.size(); ++i) {
    const Step& s = cs_.steps[i];
    StepOutcome out{s.name, to_string(s.kind())};
    if (broke || interrupted()) {
      out.status = "skipped";
      out.detail = interrupted() ? "interrupted"
                   : res_.first_failing_step.empty()
                       ? "an earlier step failed"
                       : "not applied: an earlier step broke the network";
      res_.steps.push_back(out);
      continue;
    }
    say("step " + std::to_string(i + 1) + "/" + std::to_string(cs_.steps.size()) + ": " + s.name);
    auto ts = time_.now();
    run.attempted = i + 1;
    auto r = apply_step(s, i, touched, &out.detail, &out.text);
    out.duration_ms = time_.ms_since(ts);
    if (!r) {
      if (r.error().kind == ErrorKind::kInterrupted) {
        out.status = "skipped";
        out.detail = "interrupted";
      } else {
        out.status = "failed";
        out.detail = r.error().message;
        broke = true;
        // Step by step, a failing step is the culprit. Bisecting, an earlier step may already
        // have broken the network (a failing check only says it broke before): bisection finds
        // the first prefix of steps that fails, to apply or to validate.
        if (opts_.per_step && res_.first_failing_step.empty() && !run.bisecting)
          res_.first_failing_step = s.name;
      }
    }
    say("  " + out.status + ": " + out.detail);
    res_.steps.push_back(out);
    if (step_by_step && !broke && changes_network(s.kind()) && res_.first_failing_step.empty()) {
      auto held = validate_step(s, i, touched);
      if (!held) return held.error();
      broke = !*held;
    }
  }
  return run;
}

// --per-step: the network after step `i` against the intent of the steps so far. False when it
// broke (the step is marked, and this validation is the after-change one).
Result<bool> Gate::validate_step(const Step& s, size_t i, const Touched& touched) {
  plan::Plan p = intended_plan(st_.plan, cs_, i + 1);
  say("settling: " +
      settle(p, settle_floor(p, touched, time_.now()), upgrade_target(i + 1), &touched));
  Phase ph = validate_phase("after step '" + s.name + "'", p);
  Diff diff = diff_states(res_.baseline.state, ph.state, st_.plan, p);
  Verdict v = decide(res_.steps, ph.report, diff,
                     opts_.allow_dirty_baseline ? &res_.baseline.report : nullptr);
  if (interrupted()) return abort_interrupted(touched, "while validating a step");
  bool held = v.decision == Decision::kApprove;
  if (!held) {
    res_.first_failing_step = s.name;
    res_.steps.back().status = "broke";
    res_.steps.back().detail += "; the network failed validation after this step";
    res_.after = ph;  // nothing else changes: this validation is the after-change one
  }
  res_.per_step.push_back(std::move(ph));
  return held;
}

// Converge and validate against the intent (with --per-step, the validation after the breaking
// step is reused).
Result<void> Gate::validate_after(const Touched& touched, const plan::Plan& intended) {
  if (!res_.after) {
    const SettleFloor floor = settle_floor(intended, touched, time_.now());
    // A long floor (OSPF's dead interval: 40 s on FRR's defaults) is needed before an approval,
    // not before a reject that a failure explains by itself: both ends configured to disagree
    // cannot converge, however long one waits. An early look settles that; anything else
    // waits out the floor as before.
    if (floor.ms > kEarlyLookAbove) {
      say("early look: for what cannot converge, before waiting out " + floor.why + " (" +
          std::to_string(floor.ms.count() / 1000) + " s)");
      Phase look = validate_phase_within("after", intended, kEarlyLookWindow);
      std::string why;
      for (const auto& r : look.report.results)
        if (r.status == validate::Status::kFailed && !r.cannot_converge.empty()) {
          why = r.cannot_converge;
          break;
        }
      if (!why.empty()) {
        say("early look: not waiting for " + floor.why + ": " + why);
        res_.early_reject = why;
        res_.after = std::move(look);
      }
    }
  }
  if (!res_.after) {
    say("settling: " + settle(intended, settle_floor(intended, touched, time_.now()),
                              upgrade_target(cs_.steps.size()), &touched));
    stop_stream();
    if (interrupted()) return abort_interrupted(touched, "while settling");
    res_.after = validate_phase("after", intended);
  }
  stop_stream();
  if (interrupted()) return abort_interrupted(touched, "while validating");
  return {};
}

// The diff against the baseline, the verdict, the outage rule, bisection, and for an approval
// the restart check.
Result<void> Gate::judge(Touched& touched, const plan::Plan& intended, const StepsRun& steps) {
  record_configs_after(intended, touched);
  res_.diff = diff_states(res_.baseline.state, res_.after->state, st_.plan, intended);
  if (res_.diff.count("prefix-gained", false) > 0) {
    validate::SystemProbe probe(runner_, env_.drivers);
    attribute_origins(res_.diff, res_.baseline.state, res_.after->state, intended, probe);
  }
  res_.verdict = decide(res_.steps, res_.after->report, res_.diff,
                        opts_.allow_dirty_baseline ? &res_.baseline.report : nullptr);
  judge_outage(touched, intended);
  if (steps.bisecting && res_.verdict.decision == Decision::kReject &&
      res_.first_failing_step.empty())
    bisect(touched, steps.attempted);
  if (interrupted())
    return abort_interrupted(touched, steps.bisecting ? "while bisecting" : "while judging");
  if (!res_.first_failing_step.empty() && !res_.verdict.reasons.empty())
    for (auto& reason : res_.verdict.reasons)
      if (reason.step.empty()) reason.step = res_.first_failing_step;
  // An approved change must survive a restart of what it touched.
  if (opts_.restart_check && res_.verdict.decision == Decision::kApprove) {
    restart_check(intended, touched);
    if (interrupted()) return abort_interrupted(touched, "during the restart check");
  }
  return {};
}

void Gate::keep_change(const Touched& touched, const plan::Plan& intended) {
  // (The record is reloaded there: a topology step recorded new resources meanwhile.) The
  // traffic pattern the change asked the gate for is not the lab's from now on.
  std::optional<plan::Plan> own;
  if (cs_.intent.traffic) {
    ChangeSet without = cs_;
    without.intent.traffic.reset();
    own = intended_plan(st_.plan, without);
  }
  res_.intent_saved = static_cast<bool>(env_.lab.save_intent(own ? *own : intended));
  std::vector<std::string> nodes;
  for (const auto& n : touched_frr_nodes(touched))
    // (the restart check saved the others; a live run's nodes keep what they saved themselves)
    if (!saved_.count(n) && !touched.from_saved) nodes.push_back(n);
  if (auto problems = save_configs(nodes); !problems.empty())
    say("saving the approved config as startup config failed: " + problems);
  res_.configs_saved.assign(saved_.begin(), saved_.end());
}

// The rollback (or --revert): the snapshot reloaded, then the restore ladder while the
// baseline is not proven back.
Result<void> Gate::roll_back(const Touched& touched) {
  say(res_.verdict.decision == Decision::kApprove ? "reverting (--revert)" : "rolling back");
  res_.rolled_back = true;
  std::string d;
  Result<void> r;
  bool twice = false;  // a second signal stopped the rollback
  {
    // One SIGINT/SIGTERM does not stop a rollback half-way (a second does): it is finished,
    // then reported as an interrupted change that was rolled back.
    SecondInterruptShield hold;
    r = rollback(touched, &d);
    // A restart check saved the change as startup config: the restored running config is the
    // startup config again.
    if (!saved_.empty())
      if (auto problems = save_configs({saved_.begin(), saved_.end()}); !problems.empty())
        d += "; startup config not restored: " + problems;
    twice = hold.signals() >= 2;
  }
  if (interrupted()) {
    if (r && !twice)
      return Error{ErrorKind::kInterrupted,
                   "interrupted while rolling back; the change was rolled back (" + d + ")" +
                       (opts_.lab_outlives
                            ? "; not re-validated: run twin validate --lab " + st_.lab
                            : std::string())};
    return Error{ErrorKind::kInterrupted, "interrupted while rolling back; the lab is NOT "
                                          "restored (" + (r ? d : r.error().message) +
                                          "): twin down and up, or repair by hand"};
  }
  say("settling: " + settle(st_.plan, ospf_settle_floor(st_.plan, touched), &res_.baseline.state,
                            nullptr, res_.after ? &res_.after->state : nullptr));
  res_.rollback_detail = d;
  // Daemons the restart check restarted run what they booted with, whatever text is applied
  // now: those nodes go straight to the restart rung.
  const bool restarted =
      res_.restart_check && !res_.restart_check->nodes.empty() && res_.restart_check->daemons > 0;
  if (restarted)
    res_.rollback_detail += "; the restart check restarted " +
                            join_names(res_.restart_check->nodes) + ": restarting them again";
  else
    prove_rollback(static_cast<bool>(r), "reload");
  climb_ladder(touched);
  // What a live run saved on its nodes goes back to what they had saved before it (after the
  // ladder, whose restart rung boots the baseline's running config).
  for (const auto& [name, text] : touched.saved_before)
    if (const plan::Node* n = st_.plan.find(name))
      if (auto w = env_.drivers(*n).write_startup_config(*n, text); !w)
        res_.rollback_detail += "; " + name + "'s saved config not restored: " + w.error().message;
  if (!touched.saved_before.empty())
    res_.rollback_detail += "; saved config restored on " + join_names([&] {
           std::vector<std::string> v;
           for (const auto& [name, _] : touched.saved_before) v.push_back(name);
           return v;
         }());
  say(std::string("rollback ") +
      (res_.rollback_ok ? "proven (" + res_.rollback_rung + "): baseline restored"
                        : std::string("FAILED")) +
      " (" + res_.rollback_detail + ")");
  return {};
}

// The restore ladder: what the configuration's text did not bring back (a daemon that keeps an
// identity it took when restarted, state a reload does not reset) a restart from the baseline's
// config, then a node built anew, may. Each rung only when the one below did not prove the
// baseline, on the nodes the change touched (and those the restart check restarted); the lab is
// never left worse while a stronger restore remains untried.
void Gate::climb_ladder(const Touched& touched) {
  std::vector<std::string> ladder_nodes = touched_frr_nodes(touched);
  if (res_.restart_check)
    for (const auto& n : res_.restart_check->nodes)
      if (std::find(ladder_nodes.begin(), ladder_nodes.end(), n) == ladder_nodes.end())
        ladder_nodes.push_back(n);
  for (const char* rung : {"restart", "recreate"}) {
    if (res_.rollback_ok || ladder_nodes.empty() || interrupted()) break;
    SecondInterruptShield hold;
    std::string how;
    auto climbed = restore_nodes(ladder_nodes, rung, &how);
    res_.rollback_detail += std::string("; ") + rung + ": " + how;
    if (!climbed) {
      res_.rollback_detail += " (" + climbed.error().message + ")";
      continue;
    }
    say("settling: " + settle(st_.plan, ospf_settle_floor(st_.plan, touched),
                              &res_.baseline.state, nullptr, nullptr, /*configured=*/false));
    prove_rollback(true, rung);
  }
}

Result<Injected> Gate::inject() {
  for (const auto& s : cs_.steps)
    if (s.kind() == StepKind::kTopology)
      return Error{ErrorKind::kUsage, "step '" + s.name +
                                          "': a topology step cannot be injected (the lab must "
                                          "keep its plan); use frr, interface, link, sysctl or "
                                          "vxlan steps"};
  current_ = st_.plan;
  Injected out;
  Touched touched;
  bool broke = false;
  for (size_t i = 0; i < cs_.steps.size(); ++i) {
    const Step& s = cs_.steps[i];
    StepOutcome o{s.name, to_string(s.kind())};
    if (broke || interrupted()) {
      o.status = "skipped";
      o.detail = interrupted() ? "interrupted" : "an earlier step failed";
      out.steps.push_back(o);
      continue;
    }
    auto ts = time_.now();
    auto r = apply_step(s, i, touched, &o.detail);
    o.duration_ms = time_.ms_since(ts);
    if (!r) {
      if (r.error().kind == ErrorKind::kInterrupted) return r.error();
      o.status = "failed";
      o.detail = r.error().message;
      broke = true;
    }
    out.steps.push_back(o);
  }
  if (interrupted()) return Error{ErrorKind::kInterrupted, "interrupted while injecting"};
  out.settled = settle(current_, settle_floor(current_, touched, time_.now()), nullptr, &touched);
  return out;
}

Result<Restored> Gate::restore(const Reference& ref) {
  current_ = st_.plan;
  TempDir work;
  if (auto w = use_work_dir(work); !w) return w.error();
  res_.baseline.state = ref.state;  // the rollback's interfaces go back to it
  Restored out;
  Touched t;
  // FRR: the nodes whose running configuration is not the reference's.
  for (auto& [n, cfg] : running_configs(st_.plan)) {
    auto want = ref.configs.find(n->name);
    if (want == ref.configs.end()) continue;
    if (cfg && *cfg == want->second) continue;
    std::string path = work_dir_ + "/" + n->name + ".reference.conf";
    if (auto w = write_file(path, want->second); !w) return w.error();
    snapshot_paths_[n->name] = path;
    t.frr_nodes.insert(n->name);
  }
  out.configs = static_cast<int>(t.frr_nodes.size());
  // Interfaces, kernel settings, VTEPs and servers' addresses: read now, node by node.
  validate::SystemProbe probe(runner_, env_.drivers);
  NetState now = observe(st_.plan, probe, opts_.parallel);
  for (const auto& [key, mtu] : ref.state.mtu) {
    auto m = now.mtu.find(key);
    auto u = now.admin_up.find(key);
    auto ru = ref.state.admin_up.find(key);
    bool mtu_differs = m != now.mtu.end() && m->second != mtu;
    bool up_differs = u != now.admin_up.end() && ru != ref.state.admin_up.end() &&
                      u->second != ru->second;
    if (mtu_differs || up_differs) t.interfaces.insert(key);
  }
  out.interfaces = static_cast<int>(t.interfaces.size());
  for (const auto& [node, keys] : ref.sysctls) {
    const plan::Node* n = st_.plan.find(node);
    if (!n) continue;
    for (const auto& [key, value] : keys) {
      auto v = env_.drivers(*n).read_sysctl(*n, key);
      if (v && trim_end(*v) != value) t.sysctls.emplace_back(node, key, value);
    }
  }
  out.sysctls = static_cast<int>(t.sysctls.size());
  for (const auto& n : st_.plan.nodes) {
    if (n.vnis.empty()) continue;
    auto running = env_.drivers(n).running_vnis(n, runner_);
    if (!running) continue;
    plan::Node seen = n;
    seen.vnis = *running;
    if (env_.drivers(n).vtep_change_script(seen, n).empty()) continue;
    t.vteps[n.name] = n.vnis;
    t.vteps_left[n.name] = *running;
    ++out.vteps;
  }
  for (const auto& n : st_.plan.nodes) {
    if (n.kind != topology::NodeKind::kHost) continue;
    auto j = probe.ip_json(n, {"addr", "show"});
    if (!j || !j->is_array()) continue;
    bool changed = false;
    for (const auto& i : n.interfaces) {
      std::set<std::string> have;
      for (const auto& link : *j)
        if (link.value("ifname", "") == i.name)
          for (const auto& a : link.value("addr_info", nlohmann::json::array()))
            if (a.value("scope", "") == "global")
              have.insert(a.value("local", "") + "/" + std::to_string(a.value("prefixlen", 0)));
      std::set<std::string> want(i.addresses.begin(), i.addresses.end());
      for (const auto& a : want)
        if (!have.count(a)) {
          t.host_removed.emplace_back(n.name, i.name, a);
          changed = true;
        }
      for (const auto& a : have)
        if (!want.count(a)) {
          t.host_added.emplace_back(n.name, i.name, a);
          changed = true;
        }
    }
    out.hosts += changed ? 1 : 0;
  }
  // Routers' planned addresses (loopbacks, ports, own configs') the kernel lost: IPv6 turned
  // off and on deletes the global ones, and a trainee may remove any.
  for (const auto& n : st_.plan.nodes) {
    if (n.kind == topology::NodeKind::kHost || !env_.drivers(n).manages_frr(n)) continue;
    auto j = probe.ip_json(n, {"addr", "show"});
    if (!j || !j->is_array()) continue;
    std::set<std::string> have;
    for (const auto& link : *j)
      for (const auto& a : link.value("addr_info", nlohmann::json::array()))
        have.insert(link.value("ifname", "") + " " + a.value("local", "") + "/" +
                    std::to_string(a.value("prefixlen", 0)));
    auto lost = [&](const std::string& dev, const std::string& a) {
      return !have.count(dev + " " + a);
    };
    bool missing = false;
    for (const auto& a : n.loopbacks) missing |= lost("lo", a);
    for (const auto& [dev, addrs] : n.config_addresses)
      for (const auto& a : addrs) missing |= lost(dev, a);
    for (const auto& i : n.interfaces)
      for (const auto& a : i.addresses) missing |= lost(i.name, a);
    if (missing) t.readdress.insert(n.name);
  }
  out.addresses = static_cast<int>(t.readdress.size());
  if (out.total() == 0) {
    out.detail = "nothing differs from the reference";
    return out;
  }
  if (auto r = rollback(t, &out.detail); !r) return r.error();
  out.settled = settle(st_.plan, ospf_settle_floor(st_.plan, t), &ref.state, nullptr, &now);
  return out;
}

}  // namespace

Result<ApplyResult> run_gate(const state::State& st, const ChangeSet& cs, const ApplyOptions& opts,
                             GateEnv& env) {
  Gate g(st, cs, opts, env);
  return g.run();
}

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(SessionObs, state, pfx_v4, pfx_v6)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(NetState, sessions, fib, other_routes, mtu, admin_up, reachable,
                                   unreachable, gaps)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Reference, configs, state, sysctls)

nlohmann::json reference_to_json(const Reference& ref) { return ref; }
Reference reference_from_json(const nlohmann::json& j) { return j.get<Reference>(); }

bool Injected::ok() const {
  return std::all_of(steps.begin(), steps.end(),
                     [](const StepOutcome& s) { return s.status == "applied"; });
}

std::vector<std::string> reference_sysctl_keys(const plan::Node& node) {
  // What the rules read, and IPv6 for the whole node (a hardening profile's switch).
  std::vector<std::string> keys = fact_sysctl_keys(node);
  keys.push_back("net.ipv6.conf.all.disable_ipv6");
  return keys;
}

Result<Reference> read_reference(const plan::Plan& plan, GateEnv& env, int parallel,
                                 const std::map<std::string, std::set<std::string>>& extra) {
  std::vector<const plan::Node*> nodes;
  for (const auto& n : plan.nodes)
    if (env.drivers(n).manages_frr(n) || extra.count(n.name)) nodes.push_back(&n);
  std::vector<std::string> configs(nodes.size());
  std::vector<std::map<std::string, std::string>> sysctls(nodes.size());
  std::vector<std::optional<Error>> errs(nodes.size());
  parallel_for(nodes.size(), parallel, [&](size_t i) {
    const plan::Node& n = *nodes[i];
    const auto& d = env.drivers(n);
    std::set<std::string> keys;
    if (d.manages_frr(n)) {
      auto cfg = d.running_config(n, env.runner);
      if (!cfg) {
        errs[i] = cfg.error().with_context("node " + n.name + ": reading its configuration");
        return;
      }
      configs[i] = *cfg;
      for (const auto& k : reference_sysctl_keys(n)) keys.insert(k);
    }
    if (auto e = extra.find(n.name); e != extra.end()) keys.insert(e->second.begin(), e->second.end());
    for (const auto& k : keys)
      if (auto v = d.read_sysctl(n, k)) sysctls[i][k] = trim_end(*v);
  });
  Reference ref;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (errs[i]) return *errs[i];
    if (env.drivers(*nodes[i]).manages_frr(*nodes[i])) ref.configs[nodes[i]->name] = configs[i];
    if (!sysctls[i].empty()) ref.sysctls[nodes[i]->name] = sysctls[i];
  }
  return ref;
}

Result<Injected> inject(const state::State& st, const ChangeSet& cs, const ApplyOptions& opts,
                        GateEnv& env) {
  Gate g(st, cs, opts, env);
  return g.inject();
}

Result<Restored> restore(const state::State& st, const Reference& ref, const ApplyOptions& opts,
                         GateEnv& env) {
  static const ChangeSet kNoChange;
  Gate g(st, kNoChange, opts, env);
  return g.restore(ref);
}

}  // namespace twin::replay
