#include "validators/routes/routes.hpp"

#include <algorithm>
#include <initializer_list>
#include <optional>
#include <unordered_map>

#include "twin/core/diagnostics.hpp"
#include "twin/core/ip.hpp"

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

std::string normalize_dst(const std::string& dst, bool v6) {
  if (auto p = route_dst_prefix(dst, v6)) return *p;
  if (dst != "default" && dst.find(':') != std::string::npos)
    if (auto p = route_dst_prefix(dst, true)) return *p;
  return dst;
}

bool route_is_v6(const nlohmann::json& route) {
  auto v6 = [](const nlohmann::json& j, const char* key) {
    return j.contains(key) && j[key].is_string() &&
           j[key].get_ref<const std::string&>().find(':') != std::string::npos;
  };
  if (route.contains("dst") && route["dst"].is_string() && route["dst"] != "default")
    return v6(route, "dst");
  if (v6(route, "gateway") || v6(route, "prefsrc")) return true;
  if (route.contains("nexthops") && route["nexthops"].is_array())
    for (const auto& h : route["nexthops"])
      if (h.is_object() && v6(h, "gateway")) return true;
  return false;
}

namespace {

// One installed route: how many next hops, and the devices they leave by.
struct FibRoute {
  int hops = 0;
  std::vector<std::string> devs;
};
using Fib = std::unordered_map<std::string, FibRoute>;  // normalized dst -> its route

std::vector<std::string> nexthop_devs(const nlohmann::json& r) {
  std::vector<std::string> out;
  auto dev = [&](const nlohmann::json& h) {
    if (h.is_object() && h.contains("dev") && h["dev"].is_string())
      out.push_back(h["dev"].get<std::string>());
  };
  if (r.contains("nexthops") && r["nexthops"].is_array())
    for (const auto& h : r["nexthops"]) dev(h);
  else
    dev(r);
  return out;
}

// One table's routes into `fib`; `v6` says which table, or nullopt for both in one list (each
// route's family then read from its addresses: a default route has none of its own).
void add_routes(const nlohmann::json& routes, std::optional<bool> v6, Fib& fib) {
  for (const auto& r : routes) {
    if (!r.contains("dst") || !r["dst"].is_string()) continue;
    // Only the main table's unicast routes count (not local/broadcast/unreachable).
    if (r.contains("type") && r["type"] != "unicast") continue;
    fib[normalize_dst(r["dst"].get<std::string>(), v6.value_or(route_is_v6(r)))] = {
        nexthop_count(r), nexthop_devs(r)};
  }
}

TestResult unreadable(const std::string& node, const std::string& why) {
  return make_result("routes", 0, "fib-complete", Status::kError, node, "",
                     "every expected prefix", "no data", "cannot read the FIB: " + why);
}

// A route table and the command that read it (for the message).
struct Table {
  const Result<nlohmann::json>* routes;
  std::string command;
};

// Folds a node's route tables (IPv4's first) into `fib`; the error for the node when one could
// not be read or is not a list, the first read error winning, or when every table is empty.
std::optional<TestResult> read_fib(const plan::Node& n, std::initializer_list<Table> tables,
                                   Fib& fib) {
  for (const auto& t : tables)
    if (!*t.routes)
      return unreadable(n.name,
                        validate::source_failed(n.name, t.command, t.routes->error().message));
  bool any = false;
  // Two tables: IPv4's, then IPv6's; one: both families in one list.
  size_t k = 0;
  for (const auto& t : tables) {
    if (!(*t.routes)->is_array())
      return unreadable(n.name, n.name + ": `" + t.command + "` did not return a list");
    any |= !(*t.routes)->empty();
    add_routes(**t.routes, tables.size() == 2 ? std::optional<bool>(k++ == 1) : std::nullopt,
               fib);
  }
  // A running node's kernel always has routes: IPv6's own on lo and on each port (fe80::/64),
  // whatever routing does. Empty tables are a read that returned nothing (`ip` printing
  // nothing is read as []), not a FIB that lost every route.
  if (!any) return unreadable(n.name, n.name + ": the kernel listed no route at all");
  return std::nullopt;
}

// Each anycast address with what every router other than its holders should install.
struct AnycastPlan {
  plan::AnycastGroup group;
  std::map<std::string, plan::AnycastExpectation> paths;
};
std::vector<AnycastPlan> anycast_plan(const plan::Plan& plan) {
  std::vector<AnycastPlan> out;
  for (auto& g : plan::anycast_groups(plan)) {
    auto paths = plan::anycast_paths(plan, g);
    out.push_back({std::move(g), std::move(paths)});
  }
  return out;
}

// Tests 0-2 of anycast addresses at `n`: installed, as wide as the nearest holders together
// give, and leaving only toward them.
void check_anycast(const plan::Plan& plan, const std::vector<AnycastPlan>& anycast,
                   const plan::Node& n, const Fib& fib, std::vector<TestResult>& out) {
  for (const auto& a : anycast) {
    const auto& holders = a.group.holders;
    if (std::find(holders.begin(), holders.end(), n.name) != holders.end()) continue;
    auto e = a.paths.find(n.name);
    if (e == a.paths.end()) continue;  // not expected here
    const std::string& prefix = a.group.prefix;
    const std::string what = "anycast " + prefix + " (held by " + join_names(holders) + ")";
    auto f = fib.find(prefix);
    if (f == fib.end()) {
      out.push_back(make_result("routes", 0, "fib-complete", Status::kFailed, n.name, prefix,
                                "installed", "missing", what + " is not in the kernel FIB"));
      continue;
    }
    out.push_back(make_result("routes", 0, "fib-complete", Status::kPassed, n.name, prefix,
                              "installed", "installed", ""));
    int want = e->second.path.ecmp, have = f->second.hops;
    if (const plan::PathIntent* pi = plan.path_intent(n.name, prefix))
      want = pi->ecmp > 0 ? pi->ecmp : 1;
    std::string exp = std::to_string(want) + " next hop" + (want == 1 ? "" : "s");
    std::string obs = std::to_string(have) + " next hop" + (have == 1 ? "" : "s");
    out.push_back(make_result(
        "routes", 1, "ecmp-width", have >= want ? Status::kPassed : Status::kFailed, n.name, prefix,
        exp, obs,
        have >= want
            ? ""
            : "lost redundancy: " + what + " over " + obs + ", its nearest holders give " + exp));
    // Where the routes go: each next hop toward a neighbor on a shortest path to a nearest
    // holder (the plan names them where eBGP or the IGP picks; a moved path is the intent's).
    const auto& via = e->second.via;
    if (via.empty() || plan.path_intent(n.name, prefix)) continue;
    std::vector<std::string> toward, wrong;
    for (const auto& dev : f->second.devs) {
      std::string peer = dev;  // a device the plan does not know names itself
      for (const auto& i : n.interfaces)
        if (i.name == dev) peer = i.peer_node;
      toward.push_back(peer);
      if (std::find(via.begin(), via.end(), peer) == via.end()) wrong.push_back(peer);
    }
    const bool ok = wrong.empty() && !toward.empty();
    std::sort(toward.begin(), toward.end());
    toward.erase(std::unique(toward.begin(), toward.end()), toward.end());
    out.push_back(
        make_result("routes", 2, "anycast-nearest", ok ? Status::kPassed : Status::kFailed, n.name,
                    prefix, "toward " + join_names(via),
                    toward.empty() ? "no next hop" : "toward " + join_names(toward),
                    ok ? ""
                       : what + " leaves " + n.name + " toward " +
                             (wrong.empty() ? std::string("no neighbor") : join_names(wrong)) +
                             ", not on a shortest path to its nearest holders (toward " +
                             join_names(via) + ")"));
  }
}

void check_node(const plan::Plan& plan, const plan::FamilyPaths& paths,
                const std::vector<AnycastPlan>& anycast, const plan::Node& n, const Fib& fib,
                std::vector<TestResult>& out) {
  check_anycast(plan, anycast, n, fib, out);
  for (const auto& p : plan.prefixes) {
    if (p.owner == n.name || p.kind == "anycast") continue;
    // The prefix's own family's paths: an OSPFv3-only router learns no IPv4 route.
    const auto& table = paths.of(p.prefix);
    auto pe = table.find({n.name, p.owner});
    if (pe == table.end() || pe->second.ecmp == 0) continue;  // not expected here
    int want = pe->second.ecmp;
    // A path an approved change moved on purpose (intent.paths): its declared width, or any.
    if (const plan::PathIntent* pi = plan.path_intent(n.name, p.prefix))
      want = pi->ecmp > 0 ? pi->ecmp : 1;
    auto f = fib.find(p.prefix);
    if (f == fib.end()) {
      out.push_back(make_result(
          "routes", 0, "fib-complete", Status::kFailed, n.name, p.prefix, "installed", "missing",
          p.kind + " " + p.prefix + " of " + p.owner + " is not in the kernel FIB"));
      continue;
    }
    out.push_back(make_result("routes", 0, "fib-complete", Status::kPassed, n.name, p.prefix,
                              "installed", "installed", ""));
    int have = f->second.hops;
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

}  // namespace

std::vector<TestResult> evaluate_routes(const plan::Plan& plan,
                                        const std::map<std::string, Result<nlohmann::json>>& fibs) {
  std::vector<TestResult> out;
  auto paths = plan::expected_paths_by_family(plan);
  const auto anycast = anycast_plan(plan);
  for (const auto& n : plan.nodes) {
    if (n.kind != topology::NodeKind::kFrr) continue;
    auto it = fibs.find(n.name);
    if (it == fibs.end()) {
      out.push_back(unreadable(n.name, n.name + ": routes not probed"));
      continue;
    }
    Fib fib;
    if (auto e = read_fib(n, {{&it->second, validate::ip_command({"route", "show"})}}, fib))
      out.push_back(std::move(*e));
    else
      check_node(plan, paths, anycast, n, fib, out);
  }
  return out;
}

std::vector<TestResult> RoutesValidator::run(validate::Context& ctx) {
  std::vector<const plan::Node*> nodes;
  for (const auto& n : ctx.plan.nodes)
    if (n.kind == topology::NodeKind::kFrr) nodes.push_back(&n);
  const auto paths = plan::expected_paths_by_family(ctx.plan);
  const auto anycast = anycast_plan(ctx.plan);
  // Each worker reads one node's tables and judges them at once: at 512 nodes, holding every
  // node's ~1,000 routes as JSON until the last was read cost more than reading them.
  std::vector<std::vector<TestResult>> per_node(nodes.size());
  validate::parallel_for(nodes.size(), ctx.parallel, [&](size_t i) {
    const plan::Node& n = *nodes[i];
    // Both tables are read whatever the first gave: each read is evidence where it is kept.
    const std::vector<std::string> a4 = {"route", "show"}, a6 = {"-6", "route", "show"};
    auto v4 = ctx.probe.ip_json(n, a4);
    auto v6 = ctx.probe.ip_json(n, a6);
    Fib fib;
    if (auto e =
            read_fib(n, {{&v4, validate::ip_command(a4)}, {&v6, validate::ip_command(a6)}}, fib)) {
      per_node[i].push_back(std::move(*e));
      return;
    }
    per_node[i].reserve(2 * ctx.plan.prefixes.size());  // two tests per prefix at most
    check_node(ctx.plan, paths, anycast, n, fib, per_node[i]);
  });
  size_t total = 0;
  for (const auto& v : per_node) total += v.size();
  std::vector<TestResult> out;
  out.reserve(total);
  for (auto& v : per_node) {
    out.insert(out.end(), std::make_move_iterator(v.begin()), std::make_move_iterator(v.end()));
    std::vector<TestResult>().swap(v);  // one copy of the family's results at a time
  }
  return out;
}

}  // namespace twin::validators
