#pragma once
// Reading the recorded rollout-gate runs of tests/data/gate/<case>/: each phase's validator
// results (<phase>.results.json) and raw probe output (<phase>.observe.jsonl, one line per
// probe: {"node","kind","output"}), from a real FRR 8.4 clos-2x4 lab.
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>

#include "tests/unit/support.hpp"
#include "twin/plan/plan.hpp"
#include "twin/validate/result.hpp"
#include "twin/validate/validator.hpp"
#include "twin/verdict/observation.hpp"

namespace twin_test {

// The plan of the recorded clos-2x4 lab (tests/data/gate/clos-2x4-plan.json), read once.
inline const twin::plan::Plan& recorded_clos_plan() {
  static const twin::plan::Plan p = twin::plan::plan_from_json(nlohmann::json::parse(
      read(std::string(TWIN_TEST_DATA) + "/gate/clos-2x4-plan.json")));
  return p;
}

inline twin::validate::Status status_from(const std::string& s) {
  using twin::validate::Status;
  if (s == "passed") return Status::kPassed;
  if (s == "failed") return Status::kFailed;
  if (s == "error") return Status::kError;
  if (s == "skipped") return Status::kSkipped;
  throw std::runtime_error("unknown status " + s);
}

inline twin::validate::Report load_report(const std::string& file) {
  auto j = nlohmann::json::parse(read(file));
  twin::validate::Report r;
  r.lab = j.at("lab").get<std::string>();
  for (const auto& x : j.at("results")) {
    auto t = twin::validate::make_result(x.at("validator"), x.at("test"), x.at("test_name"),
                                         status_from(x.at("status")), x.at("node"), x.at("peer"),
                                         "", "", x.at("message"));
    t.expected = x.at("expected").get<std::string>();
    t.observed = x.at("observed").get<std::string>();
    r.results.push_back(std::move(t));
  }
  return r;
}

// node -> observation. A node without a bgp_summary line (a host) gets `{}`, as observe()
// gives nodes without bgpd.
inline std::map<std::string, twin::replay::NodeObservation> load_observations(
    const std::string& file) {
  std::map<std::string, twin::replay::NodeObservation> m;
  std::istringstream in(read(file));
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    auto j = nlohmann::json::parse(line);
    auto [it, fresh] = m.try_emplace(
        j.at("node").get<std::string>(),
        twin::replay::NodeObservation{twin::ok(nlohmann::json::object()),
                                      twin::harness_error("not recorded"),
                                      twin::harness_error("not recorded"),
                                      twin::harness_error("not recorded")});
    auto out = twin::ok(nlohmann::json::parse(j.at("output").get<std::string>()));
    const std::string kind = j.at("kind").get<std::string>();
    if (kind == "bgp_summary")
      it->second.bgp_summary = out;
    else if (kind == "links")
      it->second.links = out;
    else if (kind == "routes4")
      it->second.routes4 = out;
    else if (kind == "routes6")
      it->second.routes6 = out;
    else
      throw std::runtime_error("unknown kind " + kind + " in " + file);
  }
  return m;
}

}  // namespace twin_test
