#include "validators/routes/routes.hpp"

namespace twin::validators {

using validate::make_result;
using validate::Status;
using validate::TestResult;

int nexthop_count(const nlohmann::json& route) {
  if (route.contains("nexthops") && route["nexthops"].is_array())
    return static_cast<int>(route["nexthops"].size());
  if (route.contains("gateway") || route.contains("via") || route.contains("dev")) return 1;
  return 0;
}

std::string normalize_dst(const std::string& dst) {
  if (dst.find('/') != std::string::npos || dst == "default") return dst;
  return dst + (dst.find(':') == std::string::npos ? "/32" : "/128");
}

std::vector<TestResult> evaluate_routes(const plan::Plan& plan,
                                        const std::map<std::string, Result<nlohmann::json>>& fibs) {
  std::vector<TestResult> out;
  auto paths = plan::expected_paths(plan);
  for (const auto& n : plan.nodes) {
    if (n.kind != topology::NodeKind::kFrr) continue;
    auto it = fibs.find(n.name);
    if (it == fibs.end() || !it->second || !it->second->is_array()) {
      std::string why = it == fibs.end() ? "not probed"
                        : !it->second    ? it->second.error().message
                                         : "`ip -j route` did not return a list";
      out.push_back(make_result("routes", 0, "fib-complete", Status::kError, n.name, "",
                                "every expected prefix", "no data", "cannot read the FIB: " + why));
      continue;
    }
    std::map<std::string, int> fib;  // normalized dst -> next hops
    for (const auto& r : *it->second) {
      if (!r.contains("dst")) continue;
      // Only the main table's unicast routes count (not local/broadcast/unreachable).
      if (r.contains("type") && r["type"] != "unicast") continue;
      fib[normalize_dst(r["dst"].get<std::string>())] = nexthop_count(r);
    }
    for (const auto& p : plan.prefixes) {
      if (p.owner == n.name) continue;
      auto pe = paths.find({n.name, p.owner});
      if (pe == paths.end() || pe->second.ecmp == 0) continue;  // not expected here
      int want = pe->second.ecmp;
      auto f = fib.find(p.prefix);
      if (f == fib.end()) {
        out.push_back(make_result(
            "routes", 0, "fib-complete", Status::kFailed, n.name, p.prefix, "installed", "missing",
            p.kind + " " + p.prefix + " of " + p.owner + " is not in the kernel FIB"));
        continue;
      }
      out.push_back(make_result("routes", 0, "fib-complete", Status::kPassed, n.name, p.prefix,
                                "installed", "installed", ""));
      int have = f->second;
      std::string exp = std::to_string(want) + " next hop" + (want == 1 ? "" : "s");
      std::string obs = std::to_string(have) + " next hop" + (have == 1 ? "" : "s");
      out.push_back(make_result("routes", 1, "ecmp-width",
                                have >= want ? Status::kPassed : Status::kFailed, n.name, p.prefix,
                                exp, obs,
                                have >= want ? ""
                                             : "lost redundancy: " + p.prefix + " of " + p.owner +
                                                   " over " + obs + ", the topology gives " + exp));
    }
  }
  return out;
}

std::vector<TestResult> RoutesValidator::run(validate::Context& ctx) {
  std::vector<const plan::Node*> nodes;
  for (const auto& n : ctx.plan.nodes)
    if (n.kind == topology::NodeKind::kFrr) nodes.push_back(&n);
  std::vector<std::optional<Result<nlohmann::json>>> got(nodes.size());
  validate::parallel_for(nodes.size(), ctx.parallel, [&](size_t i) {
    auto v4 = ctx.probe.ip_json(*nodes[i], {"route", "show"});
    auto v6 = ctx.probe.ip_json(*nodes[i], {"-6", "route", "show"});
    if (!v4) {
      got[i] = v4;
    } else if (!v6) {
      got[i] = v6;
    } else {
      nlohmann::json all = *v4;
      for (const auto& r : *v6) all.push_back(r);
      got[i] = ok(std::move(all));
    }
  });
  std::map<std::string, Result<nlohmann::json>> fibs;
  for (size_t i = 0; i < nodes.size(); ++i) fibs.emplace(nodes[i]->name, std::move(*got[i]));
  return evaluate_routes(ctx.plan, fibs);
}

}  // namespace twin::validators
