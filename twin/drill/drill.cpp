#include "twin/drill/drill.hpp"

#include <algorithm>
#include <sstream>

#include "twin/core/util.hpp"
#include "twin/causes/causes.hpp"
#include "twin/changeset/steps.hpp"
#include "twin/verdict/watch.hpp"
#include "twin/validate/validator.hpp"

using namespace std::chrono_literals;

namespace twin::replay {

std::string DrillElement::name() const {
  return kind == Kind::kNode ? node : node + ":" + a_interface + "--" + b_node + ":" + b_interface;
}

namespace {

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) out.push_back(trim(item));
  if (!s.empty() && s.back() == ',') out.push_back("");  // getline drops a trailing empty item
  return out;
}

DrillElement link_element(const plan::Link& l) {
  DrillElement e;
  e.kind = DrillElement::Kind::kLink;
  e.node = l.a_node;
  e.a_interface = l.a_interface;
  e.b_node = l.b_node;
  e.b_interface = l.b_interface;
  return e;
}

std::vector<std::string> node_names(const plan::Plan& plan, bool frr_only) {
  std::vector<std::string> out;
  for (const auto& n : plan.nodes)
    if (!frr_only || n.kind == topology::NodeKind::kFrr) out.push_back(n.name);
  return out;
}

// The link with an end at `node`:`ifname`, or nullptr (with the problem in `why`).
const plan::Link* link_at(const plan::Plan& plan, const std::string& end, std::string* why,
                          std::string* hint) {
  auto colon = end.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == end.size()) {
    *why = "'" + end + "' is not a link end; expected node:interface";
    *hint = "e.g. --links leaf1:swp1, or --links leaf1:swp1--spine1:swp1";
    return nullptr;
  }
  std::string node = end.substr(0, colon), ifname = end.substr(colon + 1);
  const plan::Node* n = plan.find(node);
  if (!n) {
    *why = "no node '" + node + "' in the lab";
    *hint = did_you_mean(node, node_names(plan, false), "the nodes: " + join_some(node_names(plan, false), 8));
    return nullptr;
  }
  for (const auto& l : plan.links)
    if ((l.a_node == node && l.a_interface == ifname) ||
        (l.b_node == node && l.b_interface == ifname))
      return &l;
  std::vector<std::string> ends;
  for (const auto& l : plan.links) {
    if (l.a_node == node) ends.push_back(l.a_interface);
    if (l.b_node == node) ends.push_back(l.b_interface);
  }
  *why = "node " + node + " has no link on interface '" + ifname + "'";
  *hint = did_you_mean(ifname, ends, "its links: " + join_some(ends, 8));
  return nullptr;
}

}  // namespace

std::optional<std::vector<DrillElement>> drill_elements(const plan::Plan& plan,
                                                        const std::string& links_arg,
                                                        const std::string& nodes_arg,
                                                        Diagnostics& diags) {
  const size_t before = diags.items().size();
  std::vector<DrillElement> out;
  std::set<std::string> seen;
  auto bad = [&](const std::string& field, const std::string& message, const std::string& hint) {
    diags.add({"", 0, 0, field, message, hint});
  };
  auto add = [&](const DrillElement& e, const std::string& field) {
    if (!seen.insert(e.name()).second) {
      bad(field, std::string(e.kind_name()) + " " + e.name() + " is listed twice", "");
      return;
    }
    out.push_back(e);
  };
  std::string links = trim(links_arg), nodes = trim(nodes_arg);
  if (links.empty() && nodes.empty()) links = "all";
  auto lowered = [](std::string s) {
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
  };
  if (lowered(links) == "all" || lowered(links) == "fabric") links = lowered(links);
  if (lowered(nodes) == "all") nodes = "all";
  if (links == "all" || links == "fabric") {
    for (const auto& l : plan.links) {
      const plan::Node* a = plan.find(l.a_node);
      const plan::Node* b = plan.find(l.b_node);
      bool fabric = a && b && a->kind == topology::NodeKind::kFrr &&
                    b->kind == topology::NodeKind::kFrr;
      if (links == "all" || fabric) add(link_element(l), "--links");
    }
  } else if (!links.empty()) {
    for (const auto& item : split_list(links)) {
      if (item.empty()) {
        bad("--links", "an empty item in '" + links + "'", "separate links with single commas");
        continue;
      }
      auto dash = item.find("--");
      std::string first = dash == std::string::npos ? item : item.substr(0, dash);
      std::string why, hint;
      std::string lower = item;
      std::transform(lower.begin(), lower.end(), lower.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      if (first.find(':') == std::string::npos && !plan.find(item) &&
          !nearest_name(lower, {"all", "fabric"}).empty()) {
        bool exact = lower == "all" || lower == "fabric";
        bad("--links",
            exact ? "'" + item + "' selects links by itself; it cannot be part of a list"
                  : "'" + item + "' is not a link end; expected node:interface",
            exact ? "give --links " + lower + " alone"
                  : did_you_mean(lower, {"all", "fabric"}, ""));
        continue;
      }
      const plan::Link* l = link_at(plan, first, &why, &hint);
      if (!l) {
        bad("--links", why, hint);
        continue;
      }
      if (dash != std::string::npos) {
        std::string second = item.substr(dash + 2);
        const plan::Link* l2 = link_at(plan, second, &why, &hint);
        if (!l2) {
          bad("--links", why, hint);
          continue;
        }
        if (l2 != l || second == first) {
          DrillElement e = link_element(*l);
          bad("--links",
              first + " and " + second + " are not the two ends of one link (" + first +
                  " is on " + e.name() + ")",
              "name one end, or both ends of the same link");
          continue;
        }
      }
      add(link_element(*l), "--links");
    }
  }
  auto add_node = [&](const plan::Node& n) {
    DrillElement e;
    e.kind = DrillElement::Kind::kNode;
    e.node = n.name;
    add(e, "--nodes");
  };
  if (nodes == "all") {
    for (const auto& n : plan.nodes)
      // The routers whose daemons twin runs (a VM's NOS starts its own: the plan lists none).
      if (n.kind == topology::NodeKind::kFrr && !n.daemons.empty()) add_node(n);
  } else if (!nodes.empty()) {
    for (const auto& item : split_list(nodes)) {
      if (item.empty()) {
        bad("--nodes", "an empty item in '" + nodes + "'", "separate nodes with single commas");
        continue;
      }
      const plan::Node* n = plan.find(item);
      if (!n) {
        bad("--nodes", "no node '" + item + "' in the lab",
            did_you_mean(item, node_names(plan, true),
                         "the routers: " + join_some(node_names(plan, true), 8)));
      } else if (n->kind != topology::NodeKind::kFrr) {
        std::string end = n->interfaces.empty() ? "" : n->name + ":" + n->interfaces.front().name;
        const bool bridge = n->kind == topology::NodeKind::kBridge;
        bad("--nodes",
            n->name + (bridge ? " is a bridge (a LAN segment)" : " is a host") +
                ": it runs no routing daemons to stop",
            end.empty() ? ""
            : bridge    ? "fail one member's port instead: --links " + end
                        : "fail its link instead: --links " + end);
      } else if (n->daemons.empty()) {
        bad("--nodes",
            n->name + "'s routing daemons are its NOS's own (" +
                (n->vm.domain.empty() ? "twin starts none" : "inside its VM") +
                "): twin does not stop them",
            "fail its links instead (--links " + n->name + ":<interface>)");
      } else {
        add_node(*n);
      }
    }
  }
  if (diags.items().size() != before) return std::nullopt;
  return out;
}

plan::Plan degraded_plan(const plan::Plan& base, const DrillElement& e) {
  plan::Plan p = base;
  for (auto& n : p.nodes) {
    if (e.kind == DrillElement::Kind::kNode) {
      if (n.name != e.node) continue;
      n.drained = true;
      n.daemons.clear();  // nothing to ask: its daemons are stopped
      continue;
    }
    for (auto& i : n.interfaces)
      if ((n.name == e.node && i.name == e.a_interface) ||
          (n.name == e.b_node && i.name == e.b_interface))
        i.up = false;
  }
  plan::derive_expectations(p);
  return p;
}

bool flow_expected(const plan::Plan& plan, const plan::FamilyPaths& family_paths,
                   const FlowChoice& f) {
  const plan::PathTable& paths = family_paths.of(f.destination);
  const plan::Node* s = plan.find(f.src_node);
  const plan::Node* d = plan.find(f.dst_node);
  if (!s || !d) return false;
  using topology::NodeKind;
  if (s->kind == NodeKind::kHost && d->kind == NodeKind::kHost)
    return validate::hosts_routed(plan, paths, *s, *d, f.source, f.destination);
  if (s->kind != NodeKind::kFrr || d->kind != NodeKind::kFrr || s->drained || d->drained)
    return false;
  auto there = paths.find({s->name, d->name});
  auto back = paths.find({d->name, s->name});
  if (there == paths.end() || there->second.ecmp == 0 || back == paths.end() ||
      back->second.ecmp == 0)
    return false;
  auto advertises = [](const plan::Node& n, const std::string& address) {
    for (const auto& l : validate::advertised_loopbacks(n))
      if (validate::address_of(l) == address) return true;
    return false;
  };
  return advertises(*d, f.destination) && advertises(*s, f.source);
}

int DrillResult::hurt() const {
  return static_cast<int>(std::count_if(elements.begin(), elements.end(),
                                        [](const DrillOutcome& o) { return o.status == "hurt"; }));
}

int DrillResult::exit_code() const {
  if (stage == "baseline-failed") return 4;
  if (stage == "baseline-unhealthy") return 5;
  if (stage == "stopped") return 3;
  for (const auto& o : elements)
    if (o.status == "error") return 3;
  return hurt() > 0 ? 1 : 0;
}

namespace {

class Drill {
 public:
  Drill(const state::State& st, const DrillOptions& opts, GateEnv& env)
      : st_(st),
        opts_(opts),
        env_(env),
        watch_(env, opts.parallel, opts.converge_timeout, opts.progress) {}

  Result<DrillResult> run();

 private:
  void say(const std::string& s) const {
    if (opts_.progress) opts_.progress(s);
  }
  const plan::Node* node(const std::string& name) const { return st_.plan.find(name); }
  Result<void> set_link(const DrillElement& e, bool up);
  Result<void> fail(const DrillElement& e);
  Result<void> restore(const DrillElement& e);
  // Keeps the running configs of the FRR nodes `e` involves (snapshots_), so that a restore and
  // a recovery put back what they ran, not their startup config (they differ until a change
  // saves).
  Result<void> snapshot(const DrillElement& e);
  // Back to `snapshots_[name]` for each of `nodes`: started (stopped ones) or restarted, then the
  // running config reloaded where it differs.
  Result<void> boot_from_snapshots(const std::vector<std::string>& nodes,
                                   engine::RoutingAction action);
  // An element whose restore did not bring the baseline back: its FRR nodes restarted from
  // their snapshots, and the baseline proven again. Says how it went in `o`.
  // `judged`/`findings`: the element's status and how many findings it had before the restore.
  void recover(DrillOutcome& o, const std::string& judged, size_t findings);
  void start_stream(OutageReport& out) {
    if (opts_.outage.enabled) watch_.start_stream(st_.plan, res_.baseline.state, opts_.outage, out);
  }
  void judge(DrillOutcome& o, const plan::Plan& degraded);
  void explain(DrillOutcome& o, const plan::Plan& degraded);
  void prove_restored(DrillOutcome& o, const Result<void>& restored);
  Error interrupted_during(const DrillElement& e);

  const state::State& st_;
  const DrillOptions& opts_;
  GateEnv& env_;
  LabWatch watch_;
  DrillResult res_;
  std::string work_dir_;
  std::map<std::string, std::string> snapshots_;  // FRR node -> its running config's file
  bool touched_ = false;  // fail() changed something (a failed fail() may have changed nothing)
};

Result<void> Drill::set_link(const DrillElement& e, bool up) {
  const std::string state = up ? " up\n" : " down\n";
  const plan::Node* a = node(e.node);
  const plan::Node* b = node(e.b_node);
  if (!a || !b) return input_error("link " + e.name() + " is not in the lab");
  // A VM's end lives in its guest: the namespace end taken down pulls the cable all the same.
  auto in_guest = [&](const plan::Node* n) { return !env_.drivers(*n).ports_in_namespace(); };
  if (in_guest(a) && in_guest(b))
    return usage_error("link " + e.name() +
                       " joins two guests' ports (VMs): twin has no end of it to take down");
  for (const auto& [name, ifname] : {std::pair{e.node, e.a_interface}, {e.b_node, e.b_interface}}) {
    const plan::Node* n = node(name);
    if (in_guest(n)) continue;
    if (auto r = env_.drivers(*n).change_interfaces(*n, "link set dev " + ifname + state,
                                                    "node " + name, env_.runner);
        !r)
      return r;
  }
  if (!up) return {};
  // A host's routes left with its port (taken down: not a VM's, whose carrier only went): put
  // them back once both ends are up.
  for (const auto* n : {a, b}) {
    const std::string& name = n->name;
    if (n->kind != topology::NodeKind::kHost || in_guest(n)) continue;
    std::string script = plan_routes_script(*n);
    if (script.empty()) continue;
    if (auto r = env_.drivers(*n).change_interfaces(*n, script, "node " + name, env_.runner); !r)
      return r;
  }
  return {};
}

Result<void> Drill::snapshot(const DrillElement& e) {
  snapshots_.clear();
  std::vector<std::string> names = {e.node};
  if (e.kind == DrillElement::Kind::kLink) names.push_back(e.b_node);
  for (const auto& name : names) {
    const plan::Node* n = node(name);
    if (!n) return input_error("node " + name + " is not in the lab");
    if (!env_.drivers(*n).manages_frr(*n)) continue;
    auto cfg = env_.drivers(*n).running_config(*n, env_.runner);
    if (!cfg) {
      // A link's end whose config cannot be read can still be failed; only a recovery needs it.
      if (e.kind == DrillElement::Kind::kLink) continue;
      return cfg.error().with_context("saving the running config of " + name);
    }
    std::string path = work_dir_ + "/" + name + ".running.conf";
    if (auto w = write_file(path, *cfg); !w) return w;
    snapshots_[name] = path;
  }
  return {};
}

Result<void> Drill::fail(const DrillElement& e) {
  touched_ = false;
  if (auto r = snapshot(e); !r) return r;
  touched_ = true;
  if (e.kind == DrillElement::Kind::kLink) return set_link(e, false);
  auto r = env_.lab.control_routing(st_.plan, {e.node}, engine::RoutingAction::kStop);
  if (!r) return r.error();
  return {};
}

Result<void> Drill::boot_from_snapshots(const std::vector<std::string>& nodes,
                                        engine::RoutingAction action) {
  if (auto r = env_.lab.control_routing(st_.plan, nodes, action); !r) return r.error();
  for (const auto& name : nodes) {
    const plan::Node* n = node(name);
    auto snap = snapshots_.find(name);
    if (!n || snap == snapshots_.end()) continue;
    auto before = read_file(snap->second);
    auto now = env_.drivers(*n).running_config(*n, env_.runner);
    if (before && now && *before == *now) continue;
    if (auto r = env_.drivers(*n).reload_config(*n, snap->second, false, nullptr, env_.runner); !r)
      return r;
  }
  return {};
}

Result<void> Drill::restore(const DrillElement& e) {
  if (e.kind == DrillElement::Kind::kLink) return set_link(e, true);
  return boot_from_snapshots({e.node}, engine::RoutingAction::kStart);
}

void Drill::recover(DrillOutcome& o, const std::string& judged, size_t findings) {
  std::vector<std::string> nodes;
  for (const auto& [name, path] : snapshots_) nodes.push_back(name);
  if (nodes.empty()) return;
  std::string names;
  for (const auto& n : nodes) names += (names.empty() ? "" : ", ") + n;
  std::string why = o.restore_detail;
  say("  not back at the baseline (" + why + "): restarting the routing daemons of " + names);
  Result<void> r;
  {
    InterruptShield shield;
    r = boot_from_snapshots(nodes, engine::RoutingAction::kRestart);
  }
  auto at = env_.time.now();
  SettleOptions so;
  so.target = &res_.baseline.state;
  so.since = at;
  so.poll = 100ms;
  Settled back = watch_.settle(st_.plan, so);
  o.status = judged;
  o.findings.resize(findings);
  o.restore_detail.clear();
  prove_restored(o, r);
  if (!o.restored) return;
  o.status = "hurt";
  o.findings.insert(o.findings.begin(),
                    "the fabric did not recover by itself once it was restored (" + why +
                        "); it was back only after restarting the routing daemons of " + names +
                        " (" + ms_text(back.converged_ms) + ")");
  o.restore_detail += "; after restarting the routing daemons of " + names;
}

// The degraded state against the design: pairs it keeps that were lost, other tests failing,
// budgets, and the flows it does not keep (cut off, not judged).
void Drill::judge(DrillOutcome& o, const plan::Plan& degraded) {
  const auto paths = plan::expected_paths_by_family(degraded);
  for (const auto& f : watch_.flows())
    if (!flow_expected(degraded, paths, f)) o.outage.not_judged.insert(f.name());
  for (const auto& f : o.outage.stats.flows)
    if (f.error.empty() && !o.outage.not_judged.count(f.name) &&
        f.longest_outage_ms > o.worst_outage_ms) {
      o.worst_outage_ms = f.longest_outage_ms;
      o.worst_flow = f.name;
    }
  const Phase& ph = *o.degraded;
  o.pairs_lost.assign(ph.state.unreachable.begin(), ph.state.unreachable.end());
  for (const auto& pair : res_.baseline.state.reachable)
    if (!ph.state.reachable.count(pair) && !ph.state.unreachable.count(pair))
      o.cut_off.push_back(pair);
  int errors = 0;
  for (const auto& r : ph.report.results) {
    bool reach = r.validator == "reachability" && (r.test == 0 || r.test == 1);
    if (r.status == validate::Status::kError) ++errors;
    if (r.status != validate::Status::kFailed || reach) continue;
    o.failing.push_back(r.validator + " " + r.test_name + " " + r.node +
                        (r.peer.empty() ? "" : " " + r.peer) + ": " + r.message);
  }
  if (!o.pairs_lost.empty())
    o.findings.push_back(std::to_string(o.pairs_lost.size()) +
                         " pair(s) the design keeps connected lost reachability: " +
                         join_some(o.pairs_lost, 3));
  if (!o.failing.empty())
    o.findings.push_back(std::to_string(o.failing.size()) +
                         " test(s) fail in the state the design expects: " + o.failing.front());
  if (!o.converged)
    o.findings.push_back("did not settle: " + o.settle_detail);
  else if (opts_.max_convergence &&
           o.convergence_ms > static_cast<double>(opts_.max_convergence->count()))
    o.findings.push_back("converged in " + ms_text(o.convergence_ms) + ", over the " +
                         ms_text(static_cast<double>(opts_.max_convergence->count())) + " budget");
  if (o.outage.budget)
    if (auto reason = outage_reason(o.outage.stats, *o.outage.budget, o.outage.not_judged))
      o.findings.push_back(reason->message);
  if (!o.findings.empty()) {
    o.status = "hurt";
  } else if (errors > 0) {
    o.status = "error";
    o.findings.push_back(std::to_string(errors) +
                         " test(s) could not be checked in the degraded state");
  }
}

// Why it hurt, from the lab as it is with the element failed (the rules of the gate).
void Drill::explain(DrillOutcome& o, const plan::Plan& degraded) {
  o.causes = explain_phase(degraded, *o.degraded, env_.drivers, env_.runner, {}, opts_.parallel);
}

void Drill::prove_restored(DrillOutcome& o, const Result<void>& restored) {
  Phase ph = watch_.validate("after restoring " + o.element.name(), st_.plan);
  Diff back = diff_states(res_.baseline.state, ph.state, st_.plan, st_.plan);
  Verdict v = decide({}, ph.report, back, nullptr);
  o.restored = restored && v.decision == Decision::kApprove;
  if (!restored) o.restore_detail = "restoring failed: " + restored.error().message;
  if (!o.restored && !v.reasons.empty())
    o.restore_detail += (o.restore_detail.empty() ? "" : "; ") +
                        std::string("still different from the baseline: ") +
                        v.reasons.front().message;
  if (o.restored) o.restore_detail = "baseline proven in " + ms_text(o.restore_ms);
  o.restore = std::move(ph);
  if (!o.restored) {
    o.status = "error";
    o.findings.push_back("not restored: " + o.restore_detail);
  }
}

Error Drill::interrupted_during(const DrillElement& e) {
  say("interrupted: restoring " + std::string(e.kind_name()) + " " + e.name() + " first");
  Result<void> r;
  {
    InterruptShield shield;  // a router half started is worse than either state
    r = restore(e);
  }
  if (r)
    return Error{ErrorKind::kInterrupted, "interrupted while drilling " + e.name() +
                                              "; it was restored; not re-validated: run twin "
                                              "validate --lab " + st_.lab};
  return Error{ErrorKind::kInterrupted, "interrupted while drilling " + e.name() +
                                            "; it is NOT restored (" + r.error().message +
                                            "): twin down and up, or repair by hand"};
}

Result<DrillResult> Drill::run() {
  auto t0 = env_.time.now();
  res_.lab = st_.lab;
  res_.started_at = now_rfc3339();
  res_.max_convergence = opts_.max_convergence;
  res_.max_outage = opts_.outage.budget;
  res_.planned = static_cast<int>(opts_.elements.size());
  TempDir work;
  if (work.path.empty()) return harness_error("cannot create a temporary folder");
  work_dir_ = work.path;

  say("baseline: validating lab " + st_.lab);
  res_.baseline = watch_.validate("baseline", st_.plan);
  if (interrupted())
    return Error{ErrorKind::kInterrupted, "interrupted during the baseline; nothing was failed"};
  if (res_.baseline.report.exit_code() != 0) {
    const auto& rs = res_.baseline.report.results;
    res_.stage = std::any_of(rs.begin(), rs.end(),
                             [](const validate::TestResult& r) {
                               return r.unhealthy && r.status == validate::Status::kFailed;
                             })
                     ? "baseline-unhealthy"
                     : "baseline-failed";
    res_.baseline_verdict = decide({}, res_.baseline.report, Diff{}, nullptr);
    res_.duration_ms = env_.time.ms_since(t0);
    return res_;
  }

  for (size_t k = 0; k < opts_.elements.size(); ++k) {
    const DrillElement& e = opts_.elements[k];
    DrillOutcome o;
    o.element = e;
    auto te = env_.time.now();
    say("drill " + std::to_string(k + 1) + "/" + std::to_string(opts_.elements.size()) + ": " +
        e.kind_name() + " " + e.name() +
        (e.kind == DrillElement::Kind::kLink ? " down at both ends" : ": routing daemons stopped"));
    plan::Plan degraded = degraded_plan(st_.plan, e);
    start_stream(o.outage);
    auto failed_at = env_.time.now();
    Result<void> failed;
    {
      InterruptShield shield;  // both ends down, or neither
      failed = fail(e);
    }
    if (!failed) {
      watch_.stop_stream(o.outage);
      o.status = "error";
      o.findings.push_back("could not fail it: " + failed.error().message);
      // Whatever part of it failed is put back before anything else runs.
      Result<void> back;
      if (touched_) {
        InterruptShield shield;
        back = restore(e);
      }
      prove_restored(o, back);
      o.duration_ms = env_.time.ms_since(te);
      res_.elements.push_back(std::move(o));
      if (!res_.elements.back().restored) {
        res_.stage = "stopped";
        break;
      }
      continue;
    }
    Touched t;
    if (e.kind == DrillElement::Kind::kNode) t.frr_nodes.insert(e.node);
    // A link taken down is seen at both ends at once; a stopped node only when its neighbors'
    // dead timers expire: the OSPF floor applies to nodes.
    SettleOptions fo;
    if (e.kind == DrillElement::Kind::kNode) fo.floor = ospf_settle_floor(st_.plan, t);
    fo.since = failed_at;
    fo.poll = 100ms;
    Settled s = watch_.settle(degraded, fo);
    watch_.stop_stream(o.outage);
    if (interrupted()) return interrupted_during(e);
    o.converged = s.quiet;
    o.convergence_ms = s.converged_ms;
    o.resolution_ms = s.resolution_ms;
    o.settle_detail = s.text;
    say("  converged in " + ms_text(o.convergence_ms) + " (±" + ms_text(o.resolution_ms) + "; " +
        s.text + ")");
    o.degraded = watch_.validate("with " + e.name() + " failed", degraded);
    if (interrupted()) return interrupted_during(e);
    judge(o, degraded);
    for (const auto& f : o.findings) say("  HURT: " + f);
    if (o.status == "hurt") {
      explain(o, degraded);
      for (const auto& c : o.causes) say("  likely cause: " + c.text);
    }

    start_stream(o.restore_outage);
    auto restored_at = env_.time.now();
    Result<void> r;
    {
      InterruptShield shield;  // a router started but not yet configured is worse than either
      r = restore(e);
    }
    SettleOptions ro;
    ro.target = &res_.baseline.state;
    ro.moved_from = o.degraded ? &o.degraded->state : nullptr;
    ro.since = restored_at;
    ro.poll = 100ms;
    Settled back = watch_.settle(st_.plan, ro);
    watch_.stop_stream(o.restore_outage);
    // Measured, not judged: what a restore costs is reported; the element is judged on its
    // failure.
    for (const auto& f : o.restore_outage.stats.flows) o.restore_outage.not_judged.insert(f.name);
    o.restore_ms = back.converged_ms;
    if (interrupted())
      return Error{ErrorKind::kInterrupted,
                   "interrupted after " + e.name() +
                       " was restored; not proven back at the baseline: run twin validate --lab " +
                       st_.lab};
    const std::string judged = o.status;
    const size_t findings = o.findings.size();
    prove_restored(o, r);
    if (!o.restored && r && !interrupted()) recover(o, judged, findings);
    say("  restore: " + std::string(o.restored ? "" : "FAILED: ") + o.restore_detail);
    o.duration_ms = env_.time.ms_since(te);
    bool ok = o.restored;
    res_.elements.push_back(std::move(o));
    if (!ok) {
      res_.stage = "stopped";
      break;
    }
  }
  res_.duration_ms = env_.time.ms_since(t0);
  return res_;
}

}  // namespace

Result<DrillResult> run_drill(const state::State& st, const DrillOptions& opts, GateEnv& env) {
  Drill d(st, opts, env);
  return d.run();
}

Result<DrillResult> drill(const state::State& st, const DrillOptions& opts,
                          proc::ProcessRunner& runner) {
  auto lock = state::lock_lab(st.lab, [&] {
    if (opts.progress)
      opts.progress("lab " + st.lab + " is busy (another twin command holds it): waiting");
  });
  if (!lock) return lock.error();
  auto lab = engine_lab(st.lab, runner, opts.parallel);
  GateEnv env{runner, drivers::driver_for, TimeSource::real(), *lab, opts.validators,
              system_traffic_probe};
  return run_drill(st, opts, env);
}

}  // namespace twin::replay
