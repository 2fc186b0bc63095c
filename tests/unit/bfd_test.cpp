// Unit tests for the bfd validator family over FRR 8.4.4 `show bfd peers json` recorded from
// tests/data/frr84/bfd/lab (two routers, numbered eBGP with bfd and a bfd peer block each):
// the session up, then shut down by r2 ("neighbor signaled session down"); and from
// tests/data/frr84/bfd/unnumbered (eBGP unnumbered, `neighbor eth1 bfd`): the session bgpd
// asked for on eth1 toward r2's link-local address, up, then down.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "twin/plan/plan.hpp"
#include "twin/topology/loader.hpp"
#include "validators/bfd/bfd.hpp"

namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using twin::validate::Status;

const std::string kData = std::string(TWIN_TEST_DATA) + "/frr84/bfd/";

json read_json(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw std::runtime_error("cannot read " + path);
  return json::parse(f);
}

twin::plan::Plan plan(const std::string& lab = "lab") {
  twin::Diagnostics d;
  auto t = twin::topology::load_topology(kData + lab + "/lab.yaml", d);
  if (!t) throw std::runtime_error("cannot load the bfd lab " + lab);
  return twin::plan::make_plan(*t);
}

TEST(BfdPlan, OneSessionPerPeerThoughConfiguredTwice) {
  auto p = plan();
  // r1 names 10.9.0.2 in a bfd peer block and on its BGP neighbor: one session each way.
  ASSERT_EQ(p.bfd_peers.size(), 2u);
  EXPECT_EQ(p.bfd_peers[0].node, "r1");
  EXPECT_EQ(p.bfd_peers[0].peer_address, "10.9.0.2");
  EXPECT_EQ(p.bfd_peers[0].interface, "eth1");
  EXPECT_EQ(p.bfd_peers[0].peer_node, "r2");
}

TEST(Bfd, UpPeerPasses) {
  auto p = plan();
  std::map<std::string, twin::Result<json>> obs;
  obs.emplace("r1", twin::ok(read_json(kData + "r1-bfd-peers.json")));
  auto rs = twin::validators::evaluate_bfd(p, obs);
  ASSERT_EQ(rs.size(), 2u);
  EXPECT_EQ(rs[0].status, Status::kPassed);
  EXPECT_EQ(rs[0].peer, "10.9.0.2");
  EXPECT_EQ(rs[0].observed, "up");
  // r2 was not probed: an error, never a pass.
  EXPECT_EQ(rs[1].status, Status::kError);
}

TEST(Bfd, PeerShutDownFailsWithFrrsDiagnostic) {
  auto p = plan();
  std::map<std::string, twin::Result<json>> obs;
  obs.emplace("r1", twin::ok(read_json(kData + "r1-bfd-peers-r2-shutdown.json")));
  auto rs = twin::validators::evaluate_bfd(p, obs);
  ASSERT_FALSE(rs.empty());
  EXPECT_EQ(rs[0].status, Status::kFailed);
  EXPECT_EQ(rs[0].observed, "down");
  EXPECT_EQ(rs[0].message,
            "BFD session toward 10.9.0.2 (r2) is down: neighbor signaled session down");
}

TEST(Bfd, NoSessionTowardTheAddressFails) {
  auto p = plan();
  std::map<std::string, twin::Result<json>> obs;
  obs.emplace("r1", twin::ok(json::array()));
  auto rs = twin::validators::evaluate_bfd(p, obs);
  EXPECT_EQ(rs[0].status, Status::kFailed);
  EXPECT_THAT(rs[0].message, HasSubstr("no BFD session toward 10.9.0.2"));
}

TEST(BfdPlan, AnUnnumberedNeighborExpectsASessionOnItsInterface) {
  auto p = plan("unnumbered");
  ASSERT_EQ(p.bfd_peers.size(), 2u);
  EXPECT_EQ(p.bfd_peers[0].node, "r1");
  EXPECT_EQ(p.bfd_peers[0].peer_address, "");
  EXPECT_EQ(p.bfd_peers[0].interface, "eth1");
  EXPECT_EQ(p.bfd_peers[0].peer_node, "r2");
}

// FRR lists the session bgpd asked for under the peer's link-local address, which the plan
// cannot know: found by its interface. It used to be looked for by an empty address: "no
// session".
TEST(Bfd, UnnumberedSessionIsFoundByItsInterface) {
  auto p = plan("unnumbered");
  json got = read_json(kData + "unnumbered-r1-bfd-peers.json");
  ASSERT_EQ(got.size(), 1u);
  ASSERT_EQ(got[0]["interface"], "eth1");
  ASSERT_EQ(got[0]["peer"].get<std::string>().rfind("fe80::", 0), 0u);  // link-local
  std::map<std::string, twin::Result<json>> obs;
  obs.emplace("r1", twin::ok(got));
  auto rs = twin::validators::evaluate_bfd(p, obs);
  ASSERT_EQ(rs.size(), 2u);
  EXPECT_EQ(rs[0].status, Status::kPassed) << rs[0].message;
  EXPECT_EQ(rs[0].peer, "eth1");
  EXPECT_EQ(rs[0].observed, "up");
  EXPECT_EQ(rs[0].message, "BFD session with r2 is up");
}

TEST(Bfd, UnnumberedSessionDownFailsWithFrrsDiagnostic) {
  auto p = plan("unnumbered");
  std::map<std::string, twin::Result<json>> obs;
  obs.emplace("r1", twin::ok(read_json(kData + "unnumbered-r1-bfd-peers-down.json")));
  auto rs = twin::validators::evaluate_bfd(p, obs);
  ASSERT_FALSE(rs.empty());
  EXPECT_EQ(rs[0].status, Status::kFailed);
  EXPECT_EQ(rs[0].observed, "down");
  EXPECT_EQ(rs[0].message,
            "BFD session on eth1 (r2) is down: neighbor signaled session down (r2: neighbor "
            "signaled session down)");
}

// The forms do not stand in for each other: a numbered session (peer 10.9.0.2, no interface)
// is not the unnumbered neighbor's, nor is the unnumbered one (on eth1, toward fe80::...) a
// session toward 10.9.0.2.
TEST(Bfd, EachFormIsMatchedOnlyByItsOwnKey) {
  {
    auto p = plan("unnumbered");
    std::map<std::string, twin::Result<json>> obs;
    obs.emplace("r1", twin::ok(read_json(kData + "r1-bfd-peers.json")));
    auto rs = twin::validators::evaluate_bfd(p, obs);
    EXPECT_EQ(rs[0].status, Status::kFailed);
    EXPECT_EQ(rs[0].message, "no BFD session on eth1 (r2)");
  }
  {
    auto p = plan();
    std::map<std::string, twin::Result<json>> obs;
    obs.emplace("r1", twin::ok(read_json(kData + "unnumbered-r1-bfd-peers.json")));
    auto rs = twin::validators::evaluate_bfd(p, obs);
    EXPECT_EQ(rs[0].status, Status::kFailed);
    EXPECT_EQ(rs[0].message, "no BFD session toward 10.9.0.2 (r2)");
  }
}

}  // namespace
