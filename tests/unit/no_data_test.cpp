// No data is never a pass (docs/validators.md; DESIGN §3): every validator family of the
// registry, run over labs that make each of them produce tests, against a lab whose every
// source fails (FRR's vty, `ip -j`, the prober) or answers with nothing ({}, null, [], no ping
// result). No result may pass; each is an error naming what could not be read, or skipped for
// a reason of its own. A family added to validators/registry.cpp is run here without a change
// to this file, and fails it until some plan below makes it produce tests.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "tests/unit/support.hpp"
#include "twin/plan/plan.hpp"
#include "twin/topology/loader.hpp"
#include "twin/validate/validator.hpp"
#include "validators/registry.hpp"

namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using twin::validate::PingOutcome;
using twin::validate::PingRequest;
using twin::validate::PingResult;
using twin::validate::Status;
using twin::validate::TestResult;

const std::string kRepo = TWIN_DATA_DIR;
const std::string kData = TWIN_TEST_DATA;

// What the fake's failures say, so each error can be traced to the source that failed.
constexpr const char* kFrrDown = "injected: vty socket refused";
constexpr const char* kIpDown = "injected: ip exited 1";
constexpr const char* kPingDown = "injected: raw socket refused";
constexpr const char* kTrafficDown = "injected: iperf3 could not start";

// How the lab answers: every source fails, or answers with nothing.
enum class Answer { kFail, kEmptyObject, kNull };

class NoDataProbe final : public twin::validate::LabProbe {
 public:
  explicit NoDataProbe(Answer a) : answer_(a) {}
  twin::Result<json> frr_json(const twin::plan::Node&, const std::string&,
                              const std::string&) override {
    ++frr_calls;
    if (answer_ == Answer::kFail) return twin::harness_error(kFrrDown);
    return twin::ok(answer_ == Answer::kNull ? json() : json::object());
  }
  // `ip` printing nothing is read as [] (runtime::ip_json).
  twin::Result<json> ip_json(const twin::plan::Node&, const std::vector<std::string>&) override {
    ++ip_calls;
    if (answer_ == Answer::kFail) return twin::harness_error(kIpDown);
    return twin::ok(json::array());
  }
  // Traffic that could not run, or a run that measured nothing (no flow, no echo).
  twin::Result<twin::traffic::Report> traffic(const twin::plan::Plan&,
                                              const twin::traffic::Options&) override {
    if (answer_ == Answer::kFail) return twin::harness_error(kTrafficDown);
    return twin::ok(twin::traffic::Report{});
  }
  // A prober that could not send (error outcomes), or that returned nothing at all.
  std::vector<PingResult> ping(const twin::plan::Node&,
                               const std::vector<PingRequest>& reqs) override {
    ++ping_calls;
    if (answer_ != Answer::kFail) return {};
    PingResult r;
    r.outcome = PingOutcome::kError;
    r.detail = kPingDown;
    return std::vector<PingResult>(reqs.size(), r);
  }
  std::atomic<int> frr_calls{0}, ip_calls{0}, ping_calls{0};

 private:
  Answer answer_;
};

twin::plan::Plan plan_of(const std::string& path, const std::string& lab,
                         const std::string& extra = "") {
  twin::Diagnostics d;
  auto t = extra.empty() ? twin::topology::load_topology(path, d)
                         : twin::topology::load_topology_text(twin_test::read(path) + extra, path,
                                                              path.substr(0, path.rfind('/')), d);
  if (!t) throw std::runtime_error(path + ":\n" + twin_test::dump(d));
  return twin::plan::make_plan(*t, lab);
}

// Labs that, between them, make every family produce tests: a BGP Clos (bgp, routes, mtu,
// reachability; with `traffic:`, traffic), EVPN tenants (evpn, tenant reachability), OSPF from own
// configs (ospf, v2) with a declared check of each kind (checks), OSPFv3, and BGP with BFD (bfd).
const std::vector<twin::plan::Plan>& plans() {
  static const std::vector<twin::plan::Plan> p = [] {
    std::vector<twin::plan::Plan> out;
    out.push_back(plan_of(kRepo + "/topologies/clos-2x4.yaml", "clos", "traffic: true\n"));
    out.push_back(plan_of(kRepo + "/topologies/evpn-2x4.yaml", "evpn"));
    out.push_back(plan_of(kRepo + "/topologies/ospf-triangle/lab.yaml", "tri",
                          "checks:\n"
                          "  - reach: {from: pc1, to: pc3}\n"
                          "  - reach: {from: r1, to: 10.9.0.1, expect: unreachable}\n"
                          "  - route: {node: r1, prefix: 192.168.3.0/24, protocol: ospf}\n"
                          "  - route: {node: r2, prefix: 2001:db8:9::/64}\n"
                          "  - frr:\n"
                          "      node: r1\n"
                          "      command: show ip ospf neighbor json\n"
                          "      match: {neighbors: {10.0.255.2: [{nbrState: Full/-}]}}\n"
                          "  - frr: {node: r2, command: show ip ospf json, match: {}}\n"));
    out.push_back(plan_of(kData + "/frr84/ospf6/lab.yaml", "o6"));
    out.push_back(plan_of(kData + "/frr84/bfd/lab/lab.yaml", "bfdrec"));
    return out;
  }();
  return p;
}

std::string show(const TestResult& r) {
  return r.validator + "." + std::to_string(r.test) + " " + r.test_name + " [" +
         twin::validate::to_string(r.status) + "] " + r.node + " " + r.peer +
         ": observed=" + r.observed + " msg=" + r.message;
}

// Every family's results over every plan, against `answer`; per family, how many.
struct Outcome {
  std::vector<TestResult> results;
  std::map<std::string, size_t> per_family;
};
Outcome run_all(Answer answer) {
  Outcome run;
  for (const auto& family : twin::validators::family_names()) run.per_family[family] = 0;
  for (const auto& plan : plans()) {
    NoDataProbe probe(answer);
    twin::validate::Context ctx{plan, probe};
    std::vector<std::string> unknown;
    for (auto& v : twin::validators::make_validators({}, &unknown)) {
      auto rs = v->run(ctx);
      run.per_family[v->name()] += rs.size();
      for (auto& r : rs) {
        EXPECT_EQ(r.validator, v->name()) << show(r);
        run.results.push_back(std::move(r));
      }
    }
    EXPECT_TRUE(unknown.empty());
    // The sources were asked (not skipped by a family that found nothing to do).
    EXPECT_GT(probe.frr_calls + probe.ip_calls, 0) << plan.lab;
  }
  return run;
}

// Loud when a family got nothing to judge: a family new to the registry needs a plan above
// that exercises it, or this test proves nothing about it.
void expect_every_family_tested(const Outcome& run) {
  for (const auto& [family, n] : run.per_family)
    EXPECT_GT(n, 0u) << "family `" << family << "` produced no test on the plans of "
                     << "no_data_test.cpp: add a plan that exercises it";
}

// A node named in a message as a source's owner: "leaf1: `show bgp summary json` failed".
bool names_a_source(const TestResult& r) {
  for (const auto& plan : plans())
    for (const auto& n : plan.nodes)
      if (r.message.find(n.name + ": `") != std::string::npos) return true;
  return false;
}

TEST(NoData, EveryFamilyWithEverySourceFailingPassesNothing) {
  const Outcome run = run_all(Answer::kFail);
  expect_every_family_tested(run);
  std::set<std::string> families_seen;
  for (const auto& r : run.results) {
    SCOPED_TRACE(show(r));
    families_seen.insert(r.validator);
    if (r.status == Status::kSkipped) {
      // Skipped only where the test does not apply, and saying why.
      EXPECT_FALSE(r.message.empty());
      EXPECT_THAT(r.message, ::testing::Not(HasSubstr("no data")));
      EXPECT_NE(r.observed, "no data");
      continue;
    }
    EXPECT_EQ(r.status, Status::kError);
    if (r.status != Status::kError) continue;
    // Each error carries the failure it comes from, and an FRR or `ip` failure names the node
    // and the command that failed.
    const bool frr = r.message.find(kFrrDown) != std::string::npos;
    const bool ip = r.message.find(kIpDown) != std::string::npos;
    const bool ping = r.message.find(kPingDown) != std::string::npos;
    const bool traffic = r.message.find(kTrafficDown) != std::string::npos;
    EXPECT_TRUE(frr || ip || ping || traffic) << "an error that does not say what failed";
    if (frr || ip) {
      EXPECT_TRUE(names_a_source(r)) << "names no node and command";
    }
  }
  EXPECT_EQ(families_seen.size(), twin::validators::family_names().size());
}

// FRR answering {} or nothing at all, `ip` an empty list, the prober no result. Where that is
// no data the result is an error; it may be a failure only where an empty answer is what FRR
// prints for a network that is wrong (listed below with why); it is never a pass.
TEST(NoData, EveryFamilyWithEveryAnswerEmptyPassesNothing) {
  // FRR 8.4's empty answers that are data about the network:
  const std::set<std::string> empty_is_data = {
      // `show bgp l2vpn evpn summary json` is {} from a bgpd whose neighbors do not activate
      // l2vpn evpn (no `router bgp` at all answers an error: bgp's session test says so).
      "evpn.0",
      // `show evpn vni json`: {} is "EVPN on, no VNI", null "EVPN off" (recorded); either way
      // the tenants' VNIs are missing, and so are their remote VTEPs.
      "evpn.1", "evpn.2",
      // `show evpn mac vni all json`: {} or null, no VNI and so no MAC: each server's missing.
      "evpn.3"};
  for (Answer a : {Answer::kEmptyObject, Answer::kNull}) {
    SCOPED_TRACE(a == Answer::kNull ? "FRR printed nothing" : "FRR answered {}");
    const Outcome run = run_all(a);
    expect_every_family_tested(run);
    for (const auto& r : run.results) {
      SCOPED_TRACE(show(r));
      EXPECT_NE(r.status, Status::kPassed);
      if (r.status == Status::kSkipped) {
        EXPECT_FALSE(r.message.empty());
        EXPECT_THAT(r.message, ::testing::Not(HasSubstr("no data")));
      }
      if (r.status == Status::kFailed) {
        EXPECT_TRUE(empty_is_data.count(r.validator + "." + std::to_string(r.test)))
            << "a failure on an empty answer that is no data";
      }
    }
  }
}

}  // namespace
