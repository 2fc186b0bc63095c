#include "twin/training/session.hpp"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "twin/causes/causes.hpp"
#include "twin/changeset/changeset.hpp"
#include "twin/core/input_policy.hpp"
#include "twin/core/util.hpp"
#include "twin/engine/lab.hpp"
#include "twin/gate/apply.hpp"
#include "twin/gate/gate.hpp"
#include "twin/plan/plan.hpp"
#include "twin/state/state.hpp"
#include "twin/topology/loader.hpp"
#include "twin/topology/names.hpp"
#include "twin/validate/system_probe.hpp"
#include "twin/verdict/watch.hpp"

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace twin::training {

namespace {

double epoch_s() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void say(SessionEnv& env, const std::string& s) {
  if (env.progress) env.progress(s);
}

struct Session {
  Attempt attempt;
  replay::Reference ref;
};

std::string session_path(const std::string& lab) {
  return training_dir() + "/sessions/" + lab + ".json";
}
// Written to a new file and renamed over the old one: a crash never leaves half a record.
Result<void> save(const Session& s) {
  nlohmann::json j = {{"schema_version", 1},
                      {"attempt", to_json(s.attempt)},
                      {"reference", replay::reference_to_json(s.ref)}};
  if (auto r = write_atomically(session_path(s.attempt.lab), j.dump() + "\n"); !r) return r;
  return save_attempt(s.attempt);
}

Result<std::optional<Session>> load(const std::string& lab) {
  std::string path = session_path(lab);
  if (!fs::exists(path)) return std::optional<Session>{};
  auto text = read_file(path);
  if (!text) return text.error();
  try {
    auto j = nlohmann::json::parse(*text);
    Session s;
    s.attempt = attempt_from_json(j.at("attempt"));
    s.ref = replay::reference_from_json(j.at("reference"));
    return std::optional<Session>(std::move(s));
  } catch (const std::exception& e) {
    return harness_error("session file " + path + " is damaged (" + e.what() +
                         "); remove it and start the exercise again");
  }
}

Result<Session> load_running(const std::string& lab) {
  auto s = load(lab);
  if (!s) return s.error();
  if (!*s)
    return usage_error("no exercise runs on lab " + lab +
                       "; `twin exercise list` shows the course, `twin exercise start NAME` "
                       "starts one");
  return std::move(**s);
}

// The gate's environment on lab `lab` (its LabControl lives in `holder`).
struct Gate {
  std::unique_ptr<replay::LabControl> lab;
  replay::GateEnv env;
  replay::ApplyOptions opts;
  Gate(const std::string& name, SessionEnv& s)
      : lab(replay::engine_lab(name, s.runner, s.parallel)),
        env{s.runner, drivers::driver_for, TimeSource::real(), *lab, s.validators,
            replay::system_traffic_probe} {
    opts.parallel = s.parallel;
    opts.validators = s.validators;
    opts.progress = s.progress;
    opts.converge_timeout = 30s;
  }
};

// Whether a BGP session of `plan` came up less than 3 s ago: its routes may still be on their
// way (a trainee checks right after their fix), so the network is not quiet yet even if the
// state held still for a moment. Read from FRR's bgpTimerUpMsec (`show bgp neighbors json`).
std::function<bool()> fresh_sessions(Gate& g, const plan::Plan& plan, SessionEnv& env) {
  return [&g, &plan, &env] {
    std::vector<const plan::Node*> nodes;
    for (const auto& n : plan.nodes)
      if (plan::has_bgp_instance(n) && g.env.drivers(n).manages_frr(n)) nodes.push_back(&n);
    std::atomic<bool> fresh{false};
    validate::SystemProbe probe(env.runner, g.env.drivers);
    parallel_for(nodes.size(), env.parallel, [&](size_t i) {
      auto j = probe.frr_json(*nodes[i], "bgpd", "show bgp neighbors json");
      if (!j || !j->is_object()) return;
      for (const auto& [peer, nb] : j->items())
        if (nb.is_object() && nb.value("bgpState", "") == "Established" &&
            nb.value("bgpTimerUpMsec", 1'000'000L) < 3000)
          fresh = true;
    });
    return fresh.load();
  };
}

// One validation of every family after waiting (at most `settle_timeout`) for a network quiet
// for 500 ms (a trainee checks long after their last change; `check` must answer in under 2 s).
// A failing result is retried for `retry` (300 ms: on a quiet network it is real); a ping lost
// is given up after 250 ms (replies on veths take milliseconds, even with a classroom of labs).
// With `target` (after applying a fix that should bring the reference back), quiet counts only
// once its sessions and routes are back, or settle_timeout passes: an OSPF adjacency and the
// iBGP session over it can sit still for seconds before they return.
replay::Phase judge(Gate& g, const plan::Plan& plan, std::chrono::milliseconds settle_timeout,
                    SessionEnv& env, std::string* settled = nullptr,
                    const replay::NetState* target = nullptr,
                    std::chrono::milliseconds retry = 300ms) {
  if (settle_timeout.count() > 0) {
    replay::LabWatch w(g.env, env.parallel, settle_timeout, {});
    w.set_quiet_period(500ms);
    replay::SettleOptions o;
    o.target = target;
    o.unsettled = fresh_sessions(g, plan, env);
    auto s = w.settle(plan, o);
    if (settled) *settled = s.text;
  }
  replay::LabWatch v(g.env, env.parallel, retry, {});
  v.set_ping_timeout(250ms);
  return v.validate("check", plan);
}

Grade grade_phase(const replay::Phase& ph, const replay::Reference& ref, const plan::Plan& plan,
                  const Exercise& ex) {
  replay::Diff diff = replay::diff_states(ref.state, ph.state, plan, plan);
  return grade(ph.report, diff, ex.criteria, names_in(ex.ticket, plan));
}

std::string first_failure(const validate::Report& r) {
  for (const auto& t : r.results)
    if (t.status == validate::Status::kFailed || t.status == validate::Status::kError)
      return t.validator + " " + t.test_name + " " + t.node + (t.peer.empty() ? "" : " " + t.peer) +
             ": " + (t.message.empty() ? t.observed : t.message);
  return "";
}

Result<replay::ChangeSet> load_changes(const Exercise& ex, const std::string& file,
                                       const plan::Plan& plan, const char* what) {
  Diagnostics d;
  auto cs = replay::load_change_set(file, plan, d, nullptr, &ex.policy, &ex.families);
  if (!cs)
    return input_error(std::string("the exercise's ") + what + " does not load:\n" + d.format());
  return *cs;
}

// The lab healthy and its reference taken, with the fault in and visible: what start and reset
// share. `previous` is the reference of the lab's last exercise (a reused lab is restored to
// it first); a lab that lost a namespace, link or daemon, or is not healthy once restored, is
// rebuilt.
struct Prepared {
  state::State st;
  replay::Reference ref;
  Grade grade;
  std::string how;
};
Result<Prepared> prepare(const Exercise& ex, const plan::Plan& plan, const std::string& lab,
                         const replay::Reference* previous, SessionEnv& env) {
  std::string how;
  bool running = static_cast<bool>(state::load_state(lab));
  if (running) {
    auto status = engine::status(lab);
    if (!status || engine::degraded(*status) || !previous) {
      say(env, "lab " + lab + " is damaged (a namespace, link or daemon is missing): rebuilding");
      auto dn = engine::down(lab, env.runner);
      if (!dn) return dn.error().with_context("rebuilding lab " + lab);
      running = false;
      how = "rebuilt (it had lost a namespace, link or daemon)";
    }
  }
  for (int round = 0; round < 2; ++round) {
    if (!running) {
      say(env, "bringing lab " + lab + " up from " + ex.topology);
      engine::UpOptions eo;
      eo.name = lab;
      eo.parallel = env.parallel;
      auto up = engine::up(plan, eo, env.runner, env.progress);
      if (!up) return up.error().with_context("bringing lab " + lab + " up");
      if (!up->converged)
        return harness_error("lab " + lab + " did not converge: " + up->convergence_text());
      if (how.empty()) how = "built";
    }
    auto st = state::load_state(lab);
    if (!st) return st.error();
    auto lock = state::lock_lab(lab, [&] { say(env, "lab " + lab + " is busy: waiting"); });
    if (!lock) return lock.error();
    Gate g(lab, env);
    if (running && previous) {
      auto r = replay::restore(*st, *previous, g.opts, g.env);
      if (!r) return r.error().with_context("restoring lab " + lab);
      how = r->total() == 0 ? "reused (it was at its healthy reference)"
                            : "reused, restored to its healthy reference (" + r->detail + ")";
    }
    replay::LabWatch w(g.env, env.parallel, 30s, {});
    w.settle(st->plan);
    replay::Phase base = w.validate("baseline", st->plan);
    if (base.report.exit_code() != 0) {
      if (running && round == 0) {
        say(env, "lab " + lab + " is not healthy after restoring it (" +
                     first_failure(base.report) + "): rebuilding");
        *lock = state::LabLock{};  // down takes the lock itself
        if (auto dn = engine::down(lab, env.runner); !dn) return dn.error();
        running = false;
        how = "rebuilt (restoring it did not make it healthy)";
        continue;
      }
      return harness_error("lab " + lab + " is not healthy before the fault: " +
                           first_failure(base.report) +
                           " (`twin validate --lab " + lab + "` shows everything)");
    }
    auto fault = load_changes(ex, ex.fault, st->plan, "fault");
    if (!fault) return fault.error();
    std::map<std::string, std::set<std::string>> extra;  // the fault's own kernel settings
    for (const auto& s : fault->steps)
      if (const auto* sy = std::get_if<replay::SysctlStep>(&s.body))
        for (const auto& n : sy->nodes)
          for (const auto& [k, v] : sy->set) extra[n].insert(k);
    auto ref = replay::read_reference(st->plan, g.env, env.parallel, extra);
    if (!ref) return ref.error();
    ref->state = base.state;
    say(env, "injecting the fault");
    auto inj = replay::inject(*st, *fault, g.opts, g.env);
    if (!inj && inj.error().kind == ErrorKind::kInterrupted)
      return inj.error().with_context("lab " + lab +
                                      " is up with the fault partly in; `twin down --lab " + lab +
                                      "` removes it");
    std::string broken;
    if (!inj) {
      broken = inj.error().message;
    } else if (!inj->ok()) {
      for (const auto& s : inj->steps)
        if (s.status == "failed") broken = "step '" + s.name + "' failed: " + s.detail;
    }
    Prepared p;
    if (broken.empty()) {
      p.grade = grade_phase(judge(g, st->plan, 0ms, env), *ref, st->plan, ex);
      if (p.grade.criteria_failing == 0)
        broken = "the fault did not show: every criterion (" +
                 (ex.criteria.empty() ? std::string("any family") : join_names(ex.criteria)) +
                 ") passes with it in";
    }
    if (!broken.empty()) {
      (void)replay::restore(*st, *ref, g.opts, g.env);  // leave the lab healthy
      return harness_error("exercise " + ex.name + " is broken: " + broken +
                           " (the lab was restored)");
    }
    p.st = std::move(*st);
    p.ref = std::move(*ref);
    p.how = how;
    return p;
  }
  return harness_error("lab " + lab + " could not be made healthy");
}

std::string id_stamp() {
  std::string t = now_rfc3339();  // 2026-12-03T09:30:01Z
  std::string out;
  for (char c : t)
    if (std::isdigit(static_cast<unsigned char>(c))) out += c;
  return out.substr(0, 14);
}

// The attempt's exercise, loaded under the roots it was started with.
Result<Exercise> reload(const Attempt& a, const std::vector<std::string>& families) {
  auto policy = InputPolicy::for_inputs({a.exercise_file}, a.allow_paths);
  if (!policy) return policy.error();
  Diagnostics d;
  auto ex = load_exercise(a.exercise_file, families, d, &*policy);
  if (!ex) return input_error("exercise file " + a.exercise_file + " no longer loads:\n" + d.format());
  return *ex;
}

}  // namespace

Result<std::string> resolve_session(const std::string& lab) {
  if (!lab.empty()) {
    if (!topology::valid_lab_name(lab))
      return usage_error("'" + lab + "' is not a lab name (letters, digits, '-' and '_', "
                         "starting with a letter)");
    return lab;
  }
  std::vector<std::string> labs;
  std::error_code ec;
  for (const auto& f : fs::directory_iterator(training_dir() + "/sessions", ec))
    if (f.path().extension() == ".json") labs.push_back(f.path().stem().string());
  std::sort(labs.begin(), labs.end());
  if (labs.size() == 1) return labs.front();
  if (labs.empty())
    return usage_error(
        "no exercise is running; `twin exercise list` shows the course, `twin exercise start "
        "NAME` starts one");
  return usage_error("exercises run on several labs (" + join_names(labs) + "); give --lab");
}

Result<StartResult> start(const Exercise& ex, const std::string& lab_name, SessionEnv& env) {
  auto t0 = Clock::now();
  Diagnostics d;
  auto topo = topology::load_topology(ex.topology, d, lab_name, &ex.policy);
  if (!topo) return input_error("the exercise's topology does not load:\n" + d.format());
  std::string lab = lab_name.empty() ? topo->name : lab_name;
  auto old = load(lab);
  if (!old) return old.error();
  bool running = static_cast<bool>(state::load_state(lab));
  if (running && !*old)
    return usage_error("lab " + lab + " is running outside an exercise; take it down (`twin down " +
                       lab + "`) or give the exercise its own lab with --name");
  if (running && *old && fs::path((*old)->attempt.topology) != fs::path(ex.topology))
    return usage_error("lab " + lab + " runs exercise " + (*old)->attempt.exercise + " on " +
                       (*old)->attempt.topology + "; stop it first (`twin exercise stop --lab " +
                       lab + "`) or give --name");
  // Everything the exercise needs loads before anything is built: the fault and the fix as
  // change sets against the lab's plan, without topology steps.
  // The plan is made once: the change sets are checked against the one `up` builds.
  const plan::Plan plan = plan::make_plan(*topo, lab_name);
  {
    for (const auto& [file, what] : {std::pair{ex.fault, "fault"}, std::pair{ex.fix, "fix"}}) {
      auto cs = load_changes(ex, file, plan, what);
      if (!cs) return cs.error();
      for (const auto& st : cs->steps)
        if (st.kind() == replay::StepKind::kTopology)
          return input_error(std::string("the exercise's ") + what + " " + file + ": step '" +
                             st.name + "' is a topology step; an exercise keeps its lab's plan "
                             "(use frr, interface, link, sysctl or vxlan steps)");
    }
  }
  if (*old) {
    // A new start closes the previous attempt (its record stays) and its session: a start that
    // fails below must not leave the old session to be graded against a new lab.
    if ((*old)->attempt.state == "in-progress") {
      (*old)->attempt.state = "stopped";
      say(env, "closing the attempt at " + (*old)->attempt.exercise + " on lab " + lab +
                   " (its record stays: twin exercise results)");
    }
    if ((*old)->attempt.ended_at.empty()) (*old)->attempt.ended_at = now_rfc3339();
    (void)save_attempt((*old)->attempt);
    std::error_code ec;
    fs::remove(session_path(lab), ec);
  }
  auto p = prepare(ex, plan, lab, running && *old ? &(*old)->ref : nullptr, env);
  if (!p) return p.error();
  Session s;
  s.ref = std::move(p->ref);
  Attempt& a = s.attempt;
  a.id = id_stamp() + "-" + lab + "-" + ex.name;
  a.lab = lab;
  a.exercise = ex.name;
  a.title = ex.title;
  a.exercise_file = ex.file;
  a.allow_paths = env.allow_paths;
  a.topology = ex.topology;
  a.difficulty = ex.difficulty;
  a.time_budget_s = static_cast<double>(ex.time_budget.count()) / 1000.0;
  a.started_at = now_rfc3339();
  a.started_epoch_s = epoch_s();
  if (auto w = save(s); !w) return w.error();
  StartResult out;
  out.attempt = a;
  out.ticket = ex.ticket;
  out.how = p->how;
  out.grade = p->grade;
  out.duration_ms = ms_since(t0);
  return out;
}

Result<CheckResult> check(const std::string& lab, SessionEnv& env,
                          std::chrono::milliseconds settle_timeout) {
  auto t0 = Clock::now();
  auto s = load_running(lab);
  if (!s) return s.error();
  auto ex = reload(s->attempt, env.families);
  if (!ex) return ex.error();
  auto st = state::load_state(lab);
  if (!st)
    return usage_error("lab " + lab + " is not running; `twin exercise reset --lab " + lab +
                       "` builds it again with the fault");
  auto lock = state::lock_lab(lab, [&] { say(env, "lab " + lab + " is busy: waiting"); });
  if (!lock) return lock.error();
  Gate g(lab, env);
  CheckResult out;
  replay::Phase ph = judge(g, st->plan, settle_timeout, env, &out.settled);
  out.grade = grade_phase(ph, s->ref, st->plan, *ex);
  Attempt& a = s->attempt;
  ++a.checks;
  if (out.grade.solved && a.state == "in-progress") {
    a.state = "solved";
    a.time_to_solve_s = epoch_s() - a.started_epoch_s;
    out.first_solve = true;
  }
  if (auto w = save(*s); !w) return w.error();
  out.attempt = a;
  out.duration_ms = ms_since(t0);
  return out;
}

Result<HintResult> hint(const std::string& lab, SessionEnv& env) {
  auto s = load_running(lab);
  if (!s) return s.error();
  auto ex = reload(s->attempt, env.families);
  if (!ex) return ex.error();
  HintResult out;
  Attempt& a = s->attempt;
  out.of = static_cast<int>(ex->hints.size()) + 1;
  if (a.hints_used < static_cast<int>(ex->hints.size())) {
    out.lines.push_back(ex->hints[a.hints_used]);
  } else {
    // After the authored hints: what the likely-cause rules find in the lab as it is now.
    auto st = state::load_state(lab);
    if (!st) return usage_error("lab " + lab + " is not running");
    auto lock = state::lock_lab(lab, [&] { say(env, "lab " + lab + " is busy: waiting"); });
    if (!lock) return lock.error();
    Gate g(lab, env);
    replay::Phase ph = judge(g, st->plan, 5s, env);
    out.from_rules = true;
    if (ph.report.exit_code() == 0) {
      out.lines.push_back("Every validator passes now: run `twin exercise check`.");
    } else {
      auto causes = replay::explain_phase(st->plan, ph, drivers::driver_for, env.runner, {},
                                          env.parallel);
      for (const auto& c : causes) {
        out.lines.push_back("likely cause: " + c.text);
        for (const auto& e : c.evidence) out.lines.push_back("  " + e);
      }
      if (causes.empty())
        out.lines.push_back(
            "The likely-cause rules find nothing they recognise: compare `twin validate --lab " +
            lab + "` with the ticket, node by node.");
    }
  }
  a.hints_used = std::min(a.hints_used + 1, out.of);
  out.number = a.hints_used;
  if (auto w = save(*s); !w) return w.error();
  out.attempt = a;
  return out;
}

Result<ResetResult> reset(const std::string& lab, SessionEnv& env) {
  auto t0 = Clock::now();
  auto s = load_running(lab);
  if (!s) return s.error();
  auto ex = reload(s->attempt, env.families);
  if (!ex) return ex.error();
  Diagnostics d;
  auto topo = topology::load_topology(ex->topology, d, lab, &ex->policy);
  if (!topo) return input_error("the exercise's topology does not load:\n" + d.format());
  auto p = prepare(*ex, plan::make_plan(*topo, lab), lab, &s->ref, env);
  if (!p) return p.error();
  s->ref = std::move(p->ref);
  ++s->attempt.resets;
  if (auto w = save(*s); !w) return w.error();
  ResetResult out;
  out.attempt = s->attempt;
  out.how = p->how + ", the fault injected again";
  out.grade = p->grade;
  out.duration_ms = ms_since(t0);
  return out;
}

Result<SolutionResult> solution(const std::string& lab, bool apply, SessionEnv& env) {
  auto s = load_running(lab);
  if (!s) return s.error();
  auto ex = reload(s->attempt, env.families);
  if (!ex) return ex.error();
  SolutionResult out;
  auto shown = [](const std::string& file) {
    auto r = read_regular_file(file);
    std::string text = r ? *r : std::string();
    std::istringstream in(text);
    std::string line, kept;
    while (std::getline(in, line))
      if (line.rfind("# yaml-language-server", 0) != 0) kept += line + "\n";
    return kept;
  };
  out.fault_text = shown(ex->fault);
  out.fix_text = shown(ex->fix);
  out.explanation = ex->explanation;
  Attempt& a = s->attempt;
  if (a.state != "solved") a.solution_shown = true;
  if (apply) {
    auto st = state::load_state(lab);
    if (!st) return usage_error("lab " + lab + " is not running; `twin exercise reset` rebuilds it");
    auto fix = load_changes(*ex, ex->fix, st->plan, "fix");
    if (!fix) return fix.error();
    auto lock = state::lock_lab(lab, [&] { say(env, "lab " + lab + " is busy: waiting"); });
    if (!lock) return lock.error();
    Gate g(lab, env);
    say(env, "applying the fix");
    auto inj = replay::inject(*st, *fix, g.opts, g.env);
    std::string failed;  // why the fix did not apply cleanly ("" = it did)
    if (!inj)
      failed = inj.error().message;
    else
      for (const auto& step : inj->steps)
        if (step.status == "failed") failed = "step '" + step.name + "' failed: " + step.detail;
    // A fix is expected to work: failing results get 10 s (EVPN learns MACs after the
    // routes are back, which settling does not see).
    Grade gr = grade_phase(judge(g, st->plan, 30s, env, nullptr, &s->ref.state, 10s), s->ref,
                           st->plan, *ex);
    if (gr.solved) {
      out.how = failed.empty() ? "the fix solved it"
                               : "the fix did not apply cleanly (" + failed +
                                     "), yet every check passes";
    } else {
      // Something besides the fault differs (the trainee's own changes): back to the reference.
      auto r = replay::restore(*st, s->ref, g.opts, g.env);
      if (!r) return r.error().with_context("restoring lab " + lab);
      gr = grade_phase(judge(g, st->plan, 30s, env, nullptr, &s->ref.state, 10s), s->ref, st->plan, *ex);
      out.how = (failed.empty() ? std::string("the fix alone did not make every check pass")
                                : "the fix did not apply cleanly (" + failed + ")") +
                ": restored the healthy reference (" + r->detail + ")";
    }
    out.applied = true;
    out.grade = gr;
    a.solution_applied = true;
    // Solved by the solution is not solved by the trainee: later checks do not count it.
    if (a.state == "in-progress") a.state = "solution-applied";
  }
  if (auto w = save(*s); !w) return w.error();
  out.attempt = a;
  return out;
}

Result<StopResult> stop(const std::string& lab, proc::ProcessRunner& runner) {
  auto s = load_running(lab);
  if (!s && s.error().kind == ErrorKind::kHarness && fs::exists(session_path(lab))) {
    // A damaged session file must not keep its lab up: down it, and drop the file.
    if (state::load_state(lab))
      if (auto dn = engine::down(lab, runner); !dn) return dn.error();
    std::error_code ec;
    fs::remove(session_path(lab), ec);
    return s.error().with_context("lab " + lab + " is down and its damaged session removed");
  }
  if (!s) return s.error();
  StopResult out;
  if (state::load_state(lab)) {
    auto dn = engine::down(lab, runner);
    if (!dn) return dn.error().with_context("taking lab " + lab + " down");
    out.processes_killed = dn->processes_killed;
    out.namespaces_removed = dn->namespaces_removed;
  }
  Attempt& a = s->attempt;
  if (a.state == "in-progress") a.state = "stopped";
  a.ended_at = now_rfc3339();
  if (auto w = save_attempt(a); !w) return w.error();
  std::error_code ec;
  fs::remove(session_path(lab), ec);
  out.attempt = a;
  return out;
}

Result<StatusResult> status(const std::string& lab, const std::vector<std::string>& families) {
  auto s = load_running(lab);
  if (!s) return s.error();
  auto ex = reload(s->attempt, families);
  if (!ex) return ex.error();
  StatusResult out;
  out.attempt = s->attempt;
  out.exercise = *ex;
  out.lab_running = static_cast<bool>(state::load_state(lab));
  out.elapsed_s = epoch_s() - s->attempt.started_epoch_s;
  return out;
}

}  // namespace twin::training
