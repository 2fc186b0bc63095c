#include "validators/checks/checks.hpp"

#include <algorithm>
#include <map>

#include "twin/core/diagnostics.hpp"
#include "twin/core/ip.hpp"

namespace twin::validators {

using topology::Check;
using topology::CheckKind;
using validate::make_result;
using validate::PingOutcome;
using validate::PingRequest;
using validate::PingResult;
using validate::Status;
using validate::TestResult;

namespace {

const char* kFamily = "checks";

std::string brief(const nlohmann::json& j, size_t max = 80) {
  std::string s = j.dump();
  return s.size() <= max ? s : s.substr(0, max - 3) + "...";
}

const char* type_noun(const nlohmann::json& j) {
  if (j.is_object()) return "an object";
  if (j.is_array()) return "a list";
  if (j.is_string()) return "a string";
  if (j.is_number()) return "a number";
  if (j.is_boolean()) return "true or false";
  return "null";
}

struct Mismatch {
  std::string path, what;
  int depth = 0;  // how far into the expected JSON it got: the closest list element wins
};

std::string join_path(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

std::optional<Mismatch> subset(const nlohmann::json& exp, const nlohmann::json& got,
                               const std::string& path, int depth) {
  if (exp.is_object()) {
    if (!got.is_object())
      return Mismatch{path, std::string("expected an object, got ") + brief(got), depth};
    for (const auto& [k, v] : exp.items()) {
      std::string p = join_path(path, k);
      auto it = got.find(k);
      if (it == got.end()) {
        std::vector<std::string> keys;
        for (const auto& [gk, gv] : got.items()) keys.push_back(gk);
        return Mismatch{p, keys.empty() ? "missing (no keys here)"
                                        : "missing (keys here: " + join_some(keys, 6) + ")",
                        depth + 1};
      }
      if (auto m = subset(v, *it, p, depth + 1)) return m;
    }
    return std::nullopt;
  }
  if (exp.is_array()) {
    if (!got.is_array())
      return Mismatch{path, std::string("expected a list, got ") + brief(got), depth};
    for (const auto& e : exp) {
      std::optional<Mismatch> best;
      bool found = false;
      for (size_t j = 0; j < got.size() && !found; ++j) {
        auto m = subset(e, got[j], path + "[" + std::to_string(j) + "]", depth + 1);
        if (!m) found = true;
        else if (!best || m->depth > best->depth) best = m;
      }
      if (found) continue;
      if (best) return best;
      return Mismatch{path, "expected an element matching " + brief(e) + ", got []", depth};
    }
    return std::nullopt;
  }
  if (exp == got) return std::nullopt;
  if (exp.type() != got.type() && !(exp.is_number() && got.is_number()))
    return Mismatch{path,
                    "expected " + brief(exp) + ", got " + brief(got) + " (" + type_noun(got) + ")",
                    depth};
  return Mismatch{path, "expected " + brief(exp) + ", got " + brief(got), depth};
}

TestResult result(const Check& c, Status s, const std::string& expected,
                  const std::string& observed, const std::string& message) {
  int test = c.kind == CheckKind::kReach ? 0 : c.kind == CheckKind::kRoute ? 1 : 2;
  return make_result(kFamily, test, topology::spelling_of(c.kind, topology::kCheckKindNames), s,
                     c.node, c.name, expected, observed, message);
}

// Addresses ("10.0.0.1", no length) of a node to ping: its advertised loopbacks, else (hosts,
// routers without loopbacks) the addresses on its interfaces.
std::vector<std::string> addresses_of(const plan::Node& n) {
  std::vector<std::string> out;
  if (n.kind == topology::NodeKind::kFrr)
    for (const auto& l : validate::advertised_loopbacks(n)) out.push_back(validate::address_of(l));
  if (out.empty())
    for (const auto& i : n.interfaces)
      for (const auto& a : i.addresses) out.push_back(validate::address_of(a));
  return out;
}

}  // namespace

std::optional<std::string> json_subset_mismatch(const nlohmann::json& expected,
                                                const nlohmann::json& actual) {
  auto m = subset(expected, actual, "", 0);
  if (!m) return std::nullopt;
  return m->path.empty() ? m->what : m->path + ": " + m->what;
}

std::vector<PingRequest> reach_requests(const plan::Plan& plan, const Check& check) {
  std::vector<PingRequest> out;
  const plan::Node* from = plan.find(check.node);
  if (!from) return out;
  std::vector<std::string> targets;
  if (const plan::Node* to = plan.find(check.to)) targets = addresses_of(*to);
  else targets.push_back(check.to);
  const auto own = addresses_of(*from);
  for (const auto& t : targets) {
    bool v6 = validate::is_ipv6(t);
    std::string source;
    bool has_family = false;
    for (const auto& a : own)
      if (validate::is_ipv6(a) == v6) {
        has_family = true;
        if (source.empty() && from->kind == topology::NodeKind::kFrr) source = a;
      }
    if (!has_family) continue;  // nothing to send it from
    PingRequest q;
    q.destination = t;
    q.source = source;
    q.count = 2;
    q.timeout = std::chrono::milliseconds(1500);
    out.push_back(q);
  }
  return out;
}

TestResult evaluate_reach(const Check& c, const std::vector<PingRequest>& requests,
                          const std::vector<PingResult>& results) {
  const std::string expected = c.reachable ? "echo reply" : "no reply";
  if (requests.empty())
    return result(c, Status::kError, expected, "nothing to ping",
                  c.node + " has no address of a family " + c.to + " has: nothing to ping");
  std::vector<std::string> replied, silent, errors;
  for (size_t i = 0; i < requests.size(); ++i) {
    const auto& d = requests[i].destination;
    if (i >= results.size()) {
      errors.push_back(d + ": not probed");
      continue;
    }
    const auto& r = results[i];
    std::string what = d + " (" + validate::to_string(r.outcome) +
                       (r.detail.empty() ? "" : ": " + r.detail) + ")";
    if (r.outcome == PingOutcome::kReply) replied.push_back(d);
    else if (r.outcome == PingOutcome::kError) errors.push_back(what);
    else silent.push_back(what);
  }
  const std::string to = c.to;
  if (c.reachable) {
    if (!silent.empty())
      return result(c, Status::kFailed, expected, "no reply from " + join_names(silent),
                    c.node + " cannot reach " + to + ": no reply from " + join_names(silent));
    if (!errors.empty())
      return result(c, Status::kError, expected, join_names(errors),
                    "could not ping from " + c.node + ": " + join_names(errors));
    return result(c, Status::kPassed, expected, "echo reply from " + join_names(replied),
                  c.node + " reaches " + to);
  }
  if (!replied.empty())
    return result(c, Status::kFailed, expected, "echo reply from " + join_names(replied),
                  c.node + " reaches " + to + " (" + join_names(replied) +
                      " replied), but it must not");
  if (!errors.empty())
    return result(c, Status::kError, expected, join_names(errors),
                  "could not ping from " + c.node + ": " + join_names(errors));
  return result(c, Status::kPassed, expected, "no reply: " + join_names(silent),
                c.node + " does not reach " + to);
}

TestResult evaluate_route(const Check& c, const Result<nlohmann::json>& table) {
  std::string expected = "installed";
  if (!c.protocol.empty()) expected += ", from " + c.protocol;
  if (c.nexthops)
    expected += ", " + std::to_string(c.nexthops) + " next hop" + (c.nexthops == 1 ? "" : "s");
  const std::string command =
      c.prefix.find(':') == std::string::npos ? "show ip route json" : "show ipv6 route json";
  if (!table)
    return result(c, Status::kError, expected, "no data",
                  "cannot read the routing table: " +
                      validate::source_failed(c.node, command, table.error().message));
  // zebra always lists the connected routes of the node's addresses: {} is no data.
  if (!table->is_object() || table->empty())
    return result(c, Status::kError, expected, brief(*table),
                  "zebra on " + c.node + " returned no routing table for `" + command + "`");
  auto it = table->find(c.prefix);
  if (it == table->end() || !it->is_array() || it->empty())
    return result(c, Status::kFailed, expected, "absent",
                  c.prefix + " is not in " + c.node + "'s routing table");
  std::vector<const nlohmann::json*> cands;
  std::vector<std::string> protocols;
  for (const auto& e : *it) {
    if (!e.is_object()) continue;
    std::string p = e.value("protocol", "");
    protocols.push_back(p);
    if (c.protocol.empty() || p == c.protocol) cands.push_back(&e);
  }
  if (cands.empty())
    return result(c, Status::kFailed, expected, "from " + join_names(protocols),
                  c.prefix + " on " + c.node + " is from " + join_names(protocols) +
                      ", not " + c.protocol);
  const nlohmann::json* inst = nullptr;
  for (const auto* e : cands)
    if (e->value("installed", false)) {
      inst = e;
      break;
    }
  if (!inst)
    return result(c, Status::kFailed, expected, "not installed",
                  c.prefix + " on " + c.node + " is in the RIB (" +
                      cands.front()->value("protocol", "?") + ") but not installed in the FIB");
  std::vector<std::string> hops;
  if (auto nh = inst->find("nexthops"); nh != inst->end() && nh->is_array())
    for (const auto& h : *nh) {
      if (!h.is_object() || !h.value("fib", false)) continue;
      std::string via = h.value("ip", "");
      std::string dev = h.value("interfaceName", "");
      hops.push_back(via.empty() ? dev : dev.empty() ? via : via + " " + dev);
    }
  std::string proto = inst->value("protocol", "?");
  std::string observed = "installed, from " + proto + ", " + std::to_string(hops.size()) +
                         " next hop" + (hops.size() == 1 ? "" : "s") +
                         (hops.empty() ? "" : " (" + join_names(hops) + ")");
  if (c.nexthops && static_cast<int>(hops.size()) != c.nexthops)
    return result(c, Status::kFailed, expected, observed,
                  c.prefix + " on " + c.node + " has " + std::to_string(hops.size()) +
                      " next hop" + (hops.size() == 1 ? "" : "s") + ", expected " +
                      std::to_string(c.nexthops));
  return result(c, Status::kPassed, expected, observed, c.prefix + " on " + c.node + ": " + observed);
}

TestResult evaluate_frr(const Check& c, const Result<nlohmann::json>& output) {
  nlohmann::json match = nlohmann::json::parse(c.match.empty() ? "{}" : c.match, nullptr, false);
  std::string expected = "contains " + brief(match);
  if (!output)
    return result(c, Status::kError, expected, "no data",
                  validate::source_failed(c.node, c.command, output.error().message));
  // FRR answers {} (or nothing) where it has nothing to show: no data, even for a `match: {}`
  // that anything would contain.
  if (output->is_null() || (output->is_object() && output->empty()))
    return result(c, Status::kError, expected, output->is_null() ? "nothing" : "{}",
                  c.daemon + " on " + c.node + " returned no data for `" + c.command + "`");
  if (auto m = json_subset_mismatch(match, *output))
    return result(c, Status::kFailed, expected, *m, c.node + " `" + c.command + "`: " + *m);
  return result(c, Status::kPassed, expected, "contains it", c.node + " `" + c.command + "` matches");
}

namespace {

// One check evaluated against the lab.
TestResult evaluate_one(validate::Context& ctx, const Check& c) {
  const plan::Node* node = ctx.plan.find(c.node);
  if (!node)
    return result(c, Status::kError, "a node " + c.node, "absent",
                  "node " + c.node + " is not in the lab");
  switch (c.kind) {
    case CheckKind::kReach: {
      auto reqs = reach_requests(ctx.plan, c);
      std::vector<PingResult> res;
      if (!reqs.empty()) res = ctx.probe.ping(*node, reqs);
      return evaluate_reach(c, reqs, res);
    }
    case CheckKind::kRoute: {
      bool v6 = c.prefix.find(':') != std::string::npos;
      return evaluate_route(
          c,
          ctx.probe.frr_json(*node, "zebra", v6 ? "show ipv6 route json" : "show ip route json"));
    }
    case CheckKind::kFrr: {
      if (std::find(node->daemons.begin(), node->daemons.end(), c.daemon) == node->daemons.end())
        return result(c, Status::kError, "an answer from " + c.daemon, "not running",
                      c.node + " runs no " + c.daemon + " (it runs " + join_names(node->daemons) +
                          "): nothing answers `" + c.command + "`");
      return evaluate_frr(c, ctx.probe.frr_json(*node, c.daemon, c.command));
    }
  }
  return result(c, Status::kError, "a verdict", "unknown kind", "unknown check kind");
}

const TestResult* final_of(const validate::Context& ctx, const std::string& name) {
  if (!ctx.final_results) return nullptr;
  for (const auto& r : *ctx.final_results)
    if (r.validator == kFamily && r.peer == name) return &r;
  return nullptr;
}

}  // namespace

std::vector<TestResult> ChecksValidator::run(validate::Context& ctx) {
  const auto& checks = ctx.plan.checks;
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < checks.size(); ++i) index.emplace(checks[i].name, i);
  std::vector<std::optional<TestResult>> out(checks.size());
  std::vector<bool> final(checks.size(), false);
  // A final result is not asked again: later attempts cannot change it.
  for (size_t i = 0; i < checks.size(); ++i)
    if (const TestResult* f = final_of(ctx, checks[i].name)) {
      out[i] = *f;
      final[i] = true;
    }
  // In waves: the checks waiting for nobody (or for a check decided already), then those
  // waiting for them, so that `after: X` is evaluated in the attempt X first holds.
  for (;;) {
    std::vector<size_t> ready;
    for (size_t i = 0; i < checks.size(); ++i) {
      if (out[i]) continue;
      const Check& c = checks[i];
      if (c.after.empty()) {
        ready.push_back(i);
        continue;
      }
      auto p = index.find(c.after);
      if (p == index.end()) {  // the loader refuses it; a plan from elsewhere may not
        out[i] = result(c, Status::kError, "check '" + c.after + "' to hold first", "no such check",
                        "'" + c.name + "' waits for '" + c.after + "', which is not declared");
        continue;
      }
      const auto& before = out[p->second];
      if (!before) continue;  // its prerequisite is in a later wave (or a cycle: below)
      if (before->status == Status::kPassed) {
        ready.push_back(i);
      } else if (final[p->second]) {
        out[i] =
            result(c, Status::kSkipped, "check '" + c.after + "' to hold first", "not evaluated",
                   "not evaluated: it runs after '" + c.after + "', which did not hold (" +
                       to_string(before->status) + ")");
      } else {
        out[i] =
            result(c, Status::kFailed, "check '" + c.after + "' to hold first", "not evaluated yet",
                   "not evaluated yet: it runs after '" + c.after +
                       "', which does not hold "
                       "yet (" +
                       before->message + ")");
      }
    }
    if (ready.empty()) break;
    std::vector<TestResult> got(ready.size());
    validate::parallel_for(ready.size(), ctx.parallel,
                           [&](size_t k) { got[k] = evaluate_one(ctx, checks[ready[k]]); });
    for (size_t k = 0; k < ready.size(); ++k) out[ready[k]] = std::move(got[k]);
  }
  std::vector<TestResult> rs;
  rs.reserve(checks.size());
  for (size_t i = 0; i < checks.size(); ++i)
    rs.push_back(out[i] ? std::move(*out[i])
                        : result(checks[i], Status::kError,
                                 "check '" + checks[i].after + "' to hold first", "cycle",
                                 "'" + checks[i].name + "' waits for itself through `after:`"));
  return rs;
}

std::optional<std::chrono::milliseconds> ChecksValidator::retry_window(
    const validate::Context& ctx, const TestResult& r) const {
  return check_window(ctx.plan.checks, r.peer, ctx.final_results);
}

std::optional<std::chrono::milliseconds> check_window(const std::vector<Check>& checks,
                                                      const std::string& name,
                                                      const std::vector<TestResult>* finals) {
  using std::chrono::milliseconds;
  auto find = [&](const std::string& n) -> const Check* {
    for (const auto& c : checks)
      if (c.name == n) return &c;
    return nullptr;
  };
  const Check* c = find(name);
  if (!c) return std::nullopt;
  milliseconds total{0};
  // Up the `after:` chain until a check that waits for nobody, or one whose prerequisite held
  // (from then on), adding each wait; bounded by the list, should a plan hold a cycle.
  for (size_t hops = 0; c && hops <= checks.size(); ++hops) {
    total += std::chrono::seconds(c->wait_s);
    if (c->after.empty()) return total;
    if (finals)
      for (const auto& f : *finals)
        if (f.validator == kFamily && f.peer == c->after && f.status == Status::kPassed &&
            f.time_to_pass_ms >= 0)
          return total + milliseconds(static_cast<long long>(f.time_to_pass_ms));
    c = find(c->after);
  }
  return total;
}

}  // namespace twin::validators
