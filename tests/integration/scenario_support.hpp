#pragma once
// Shared by the integration suites that run shipped scenarios through the gate on a shared lab
// (gate_test.cpp, container_test.cpp): the scenario files of a folder, and one scenario's
// `twin apply` checked against its `expect:` with the lab proven back at its baseline.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/integration/cli_support.hpp"
#include "twin/core/diagnostics.hpp"
#include "twin/gate/scenario.hpp"

namespace twin_it {

// The scenarios of scenarios/<folder>, sorted.
inline std::vector<std::string> scenario_files(const std::string& folder = "clos-2x4") {
  std::vector<std::string> v;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(kRepo + "/scenarios/" + folder, ec))
    if (e.is_regular_file() && e.path().extension() == ".yaml") v.push_back(e.path().string());
  std::sort(v.begin(), v.end());
  return v;
}

// Test names from scenario file names (approve-drain-spine2 -> approve_drain_spine2).
inline std::string scenario_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string n = fs::path(info.param).stem().string();
  std::replace(n.begin(), n.end(), '-', '_');
  return n;
}

inline json parse_or_fail(const CmdResult& r) {
  try {
    return json::parse(r.out);
  } catch (...) {
    ADD_FAILURE() << "no JSON on stdout (exit " << r.code << "): " << r.out << "\n" << r.err;
    return json::object();
  }
}

inline void expect_back_at_baseline(const json& j) {
  EXPECT_TRUE(j.value("rollback_ran", false));
  EXPECT_TRUE(j.value("rollback_ok", false)) << j.value("rollback_detail", "");
  // Sessions, FIB entries with their ECMP width, reachability, MTU and admin state all equal
  // the baseline's.
  EXPECT_TRUE(j.value("rollback_diff", json::array()).empty()) << j["rollback_diff"].dump(1);
  ASSERT_TRUE(j["rollback"].is_object());
  EXPECT_EQ(j["rollback"]["verdict"], "pass");
  EXPECT_EQ(j["rollback"]["summary"]["total"], j["baseline"]["summary"]["total"]);
}

// `twin apply` of one scenario's change on `lab` (--revert for approved ones, so every test
// leaves the lab at its baseline): its verdict, first reason and failing step are the
// scenario's, and the lab is proven back at its baseline afterwards.
inline void check_scenario(const std::string& lab, const std::string& file) {
  twin::Diagnostics d;
  auto sc = twin::replay::load_scenario(file, d);
  ASSERT_TRUE(sc) << d.format();
  ASSERT_FALSE(sc->expect.verdict.empty()) << "every shipped scenario states its verdict";
  // Short windows keep CI fast (the network is settled first). The restart check as `twin
  // run` does it: on unless the scenario turns it off.
  auto r = twin_it::twin("apply --lab " + lab + " --json --converge-timeout 6 " + sc->change +
                         " --revert" + (sc->per_step ? " --per-step" : "") +
                         (sc->restart_check ? " --restart-check" : "") +
                         (sc->max_outage.empty() ? "" : " --max-outage " + sc->max_outage));
  json j = parse_or_fail(r);
  bool approve = sc->expect.verdict == "approve";
  EXPECT_EQ(r.code, approve ? 0 : 1) << r.err;
  EXPECT_EQ(j.value("verdict", ""), sc->expect.verdict) << j.value("reasons", json()).dump(1);
  if (approve) {
    EXPECT_TRUE(j["reasons"].empty());
    for (const auto& s : j["steps"]) EXPECT_EQ(s["status"], "applied") << s.dump();
    EXPECT_EQ(j["after"]["verdict"], "pass");
    if (!sc->max_outage.empty()) {
      // Measured on every flow; none judged out longer than the budget.
      ASSERT_TRUE(j["outage"].is_object());
      EXPECT_FALSE(j["outage"]["flows"].empty());
      for (const auto& f : j["outage"]["flows"]) {
        if (!f["judged"].get<bool>()) continue;
        EXPECT_LE(f["longest_outage_ms"].get<double>(), j["outage"]["budget_ms"].get<double>())
            << f.dump();
      }
    }
    if (sc->restart_check) {
      ASSERT_TRUE(j["restart_check"].is_object());
      EXPECT_TRUE(j["restart_check"]["ok"].get<bool>()) << j["restart_check"].dump(1);
    }
  } else {
    ASSERT_FALSE(j["reasons"].empty());
    const auto& first = j["reasons"][0];
    if (!sc->expect.reason.empty()) {
      EXPECT_EQ(first["category"], sc->expect.reason);
    }
    EXPECT_NE(first["message"].get<std::string>().find(sc->expect.reason_contains),
              std::string::npos)
        << first["message"];
    for (const auto& want : sc->expect.reasons_include) {
      bool found = false;
      for (const auto& reason : j["reasons"]) {
        found |= reason["message"].get<std::string>().find(want) != std::string::npos;
        for (const auto& c : reason["causes"])
          found |= c["cause"].get<std::string>().find(want) != std::string::npos;
      }
      EXPECT_TRUE(found) << "no reason mentions '" << want << "': " << j["reasons"].dump(1);
    }
  }
  if (!sc->expect.failing_step.empty()) {
    EXPECT_EQ(j.value("first_failing_step", ""), sc->expect.failing_step);
  }
  expect_back_at_baseline(j);
  // Every node runs exactly its planned daemons again: a daemon a change started (staticd for
  // a first static route) was stopped by the rollback, and nothing died.
  auto st = twin_it::twin("status --lab " + lab + " --json");
  ASSERT_EQ(st.code, 0) << st.err;
  std::ifstream sf("/run/twin/" + lab + "/state.json");
  json plan = json::parse(sf)["plan"];
  for (const auto& n : json::parse(st.out)["nodes"]) {
    std::vector<std::string> running;
    for (const auto& d : n["daemons"])
      if (d["alive"].get<bool>()) running.push_back(d["name"]);
    auto pn = std::find_if(plan["nodes"].begin(), plan["nodes"].end(),
                           [&](const json& p) { return p["name"] == n["name"]; });
    if (pn == plan["nodes"].end()) {
      ADD_FAILURE() << "node " << n["name"] << " is not in the saved plan";
      continue;
    }
    auto want = pn->value("daemons", std::vector<std::string>{});
    std::sort(want.begin(), want.end());
    std::sort(running.begin(), running.end());
    EXPECT_EQ(running, want) << "node " << n["name"];
  }
}

}  // namespace twin_it
