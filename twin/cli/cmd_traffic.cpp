// twin traffic: a traffic pattern on a running lab (traffic/run.hpp), reported as text or
// JSON and kept in the lab's history like a validation.
#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>

#include "twin/cli/commands.hpp"
#include "twin/core/duration.hpp"
#include "twin/core/rate.hpp"
#include "twin/core/util.hpp"
#include "twin/state/state.hpp"
#include "twin/traffic/run.hpp"

namespace twin::cli {

int run_traffic(const TrafficOptions& o) {
  traffic::Options to;
  auto pattern = traffic::pattern_from(o.pattern);
  if (!pattern) {
    std::string names;
    for (const auto& [p, name] : traffic::kPatternNames)
      names += (names.empty() ? "" : ", ") + std::string(name);
    return fail_json(o.json, "unknown pattern '" + o.pattern + "'; expected one of: " + names, 2);
  }
  to.pattern = *pattern;
  DurationProblem why;
  auto d = parse_duration(o.duration, &why);
  if (!d) return fail_json(o.json, "--duration: " + why.message, 2);
  if (d->count() % 1000 != 0 || *d < std::chrono::seconds(1) || *d > std::chrono::minutes(10))
    return fail_json(o.json,
                     "--duration: expected whole seconds from 1s to 10m (iperf3 counts seconds), "
                     "got '" +
                         o.duration + "'",
                     2);
  to.duration = *d;
  if (o.protocol != "tcp" && o.protocol != "udp")
    return fail_json(o.json, "--protocol: expected tcp or udp, got '" + o.protocol + "'", 2);
  to.protocol = o.protocol;
  if (!o.rate.empty()) {
    if (o.protocol != "udp")
      return fail_json(o.json,
                       "--rate is a UDP sending rate; TCP finds its own (give --protocol udp)", 2);
    RateProblem rp;
    auto r = parse_rate(o.rate, &rp);
    if (!r) return fail_json(o.json, "--rate: " + rp.message, 2);
    to.udp_rate_bps = *r;
  }
  if (!o.to.empty() && to.pattern != traffic::Pattern::kIncast)
    return fail_json(o.json, "--to names incast's receiver; give --pattern incast", 2);
  to.incast_to = o.to;
  to.streams = o.flows_per_pair;
  to.max_pairs = o.max_pairs;

  auto st = state::load_lab(o.lab);
  if (!st) return fail_json(o.json, st.error().message, exit_code(st.error()));
  proc::SystemRunner runner;
  auto start = Clock::now();
  auto progress = [&](const std::string& line) {
    std::cerr << "twin: [" << static_cast<int>(ms_since(start)) << " ms] " << line << "\n";
  };
  auto r = traffic::run(*st, to, runner, progress);
  if (!r) return fail_json(o.json, r.error().message, exit_code(r.error()));
  nlohmann::json j = traffic::to_json(*r);
  int code = r->problems.empty() ? 0 : 1;
  record_event(st->lab, "traffic",
               {{"pattern", traffic::to_string(r->pattern)},
                {"aggregate_bps", r->aggregate_bps},
                {"slowest_ratio", r->slowest_ratio},
                {"exit_code", code},
                {"source", "cli"}},
               &j);
  if (o.json)
    std::cout << j.dump(2) << "\n";
  else
    std::cout << traffic::to_text(*r, o.verbose);
  return code;
}

}  // namespace twin::cli
