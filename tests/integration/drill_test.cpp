// `twin drill` on a real clos-2x4 lab (FRR 8.4 in namespaces, real packets): single failures
// the design absorbs converge to the degraded state it expects, lose only what is cut off by
// design and are restored to a proven baseline; a latent fault the baseline cannot show (a
// pinned static route that bypasses the fabric's ECMP) hurts once the link it relies on fails;
// bad element names and a failing baseline change nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/integration/cli_support.hpp"

using nlohmann::json;
using namespace twin_it;

namespace {

struct Clos {
  static constexpr const char* kTopology = "clos-2x4.yaml";
  static constexpr const char* kTag = "drill";
};

class DrillLab : public SharedLabSuite<Clos> {
 protected:
  static CmdResult drill(const std::string& args) {
    return twin("drill --lab " + shared_.lab + " --json --converge-timeout 15 " + args);
  }
  static json parse(const CmdResult& r) {
    try {
      return json::parse(r.out);
    } catch (...) {
      ADD_FAILURE() << "drill printed no JSON: " << r.out << r.err;
      return json::object();
    }
  }
  static const json* element(const json& j, const std::string& name) {
    for (const auto& e : j["elements"])
      if (e["name"] == name) return &e;
    ADD_FAILURE() << "no element " << name << " in " << j["elements"].size() << " elements";
    return nullptr;
  }
  static bool contains(const json& list, const std::string& item) {
    return std::find(list.begin(), list.end(), item) != list.end();
  }
  // The lab passes validation again (after a test changed it by hand).
  static bool passes() {
    auto r = twin("validate --lab " + shared_.lab + " --converge-timeout 1");
    return r.code == 0;
  }
};

TEST_F(DrillLab, SingleFailuresTheDesignAbsorbsConvergeAndAreRestored) {
  std::string junit = "/tmp/" + shared_.lab + "-drill.xml";
  auto r = drill("--links leaf1:swp1,server1:eth0 --nodes spine1,leaf4 --junit " + junit);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  json j = parse(r);
  EXPECT_EQ(j["stage"], "drilled");
  ASSERT_EQ(j["elements"].size(), 4u);
  for (const auto& e : j["elements"]) {
    EXPECT_EQ(e["status"], "ok") << e["name"] << ": " << e["findings"].dump();
    EXPECT_TRUE(e["converged"].get<bool>()) << e["name"];
    // Measured, not assumed: a real failure takes some time to show and settles within seconds.
    EXPECT_GT(e["convergence_ms"].get<double>(), 0) << e["name"];
    EXPECT_LT(e["convergence_ms"].get<double>(), 10000) << e["name"];
    EXPECT_TRUE(e["pairs_lost"].empty()) << e["name"] << ": " << e["pairs_lost"].dump();
    EXPECT_TRUE(e["restore"]["ok"].get<bool>()) << e["name"] << ": " << e["restore"]["detail"];
    EXPECT_GT(e["outage"]["flows"].size(), 0u) << e["name"];
  }
  // leaf1's uplink to spine1: only leaf1 <-> spine1 is cut off (the spines share an AS, so
  // nothing else leads there); server1 <-> server2 keeps flowing over spine2.
  if (const json* e = element(j, "leaf1:swp1--spine1:swp1")) {
    // One echo per pair and family, from whichever end sends the pair's echoes.
    int v4 = 0, v6 = 0;
    for (const auto& c : (*e)["cut_off"]) {
      const std::string s = c.get<std::string>();
      v4 += s == "leaf1 -> spine1 10.255.0.1" || s == "spine1 -> leaf1 10.255.1.1";
      v6 += s == "leaf1 -> spine1 fd00:255::1" || s == "spine1 -> leaf1 fd00:255::101";
    }
    EXPECT_EQ(v4, 1) << (*e)["cut_off"].dump();
    EXPECT_EQ(v6, 1) << (*e)["cut_off"].dump();
    EXPECT_EQ((*e)["cut_off"].size(), 2u);
    int server_flows = 0;
    for (const auto& f : (*e)["outage"]["flows"])
      if (f["name"].get<std::string>().rfind("server1 -> server2", 0) == 0) {
        ++server_flows;
        EXPECT_TRUE(f["judged"].get<bool>());
        EXPECT_GT(f["sent"].get<long>(), 50);  // an echo every 10 ms for a second and more
      }
    EXPECT_GT(server_flows, 0) << "no server1 -> server2 flow: " << (*e)["outage"]["flows"].dump();
  }
  // The server link: server1 is single-homed, so its pairs are cut off by design, not lost.
  if (const json* e = element(j, "leaf1:swp3--server1:eth0")) {
    EXPECT_TRUE(contains((*e)["cut_off"], "server2 -> server1 10.0.1.10"));
    EXPECT_TRUE(contains((*e)["cut_off"], "server1 -> server2 2001:db8:4::10"));
  }
  if (const json* e = element(j, "spine1")) {
    for (const auto& f : (*e)["outage"]["flows"]) {
      if (f["name"].get<std::string>().find("spine1") != std::string::npos) {
        EXPECT_FALSE(f["judged"].get<bool>()) << f["name"];
      }
    }
  }
  if (const json* e = element(j, "leaf4")) {  // server2 sits behind it
    EXPECT_TRUE(contains((*e)["cut_off"], "server1 -> server2 10.0.4.10"));
  }
  std::ifstream x(junit);
  std::string xml((std::istreambuf_iterator<char>(x)), {});
  EXPECT_NE(xml.find("tests=\"4\" failures=\"0\" errors=\"0\""), std::string::npos) << xml;
  EXPECT_NE(xml.find(" node spine1\""), std::string::npos) << xml;
  EXPECT_EQ(xml.find("<failure"), std::string::npos) << xml;
  std::filesystem::remove(junit);
  EXPECT_TRUE(passes());
}

TEST_F(DrillLab, APinnedStaticRouteHurtsOnceTheLinkItReliesOnFails) {
  // leaf4 sends server1's traffic to spine1 only (a host route someone left behind): the
  // baseline passes, every ECMP route is there, and nothing shows until spine1 loses leaf1.
  const std::string lab = shared_.lab;
  auto add = twin("exec --lab " + lab + " leaf4 -- ip route add 10.0.1.10/32 via 169.254.0.1 dev swp1 onlink");
  ASSERT_EQ(add.code, 0) << add.err;
  struct Unpin {
    std::string lab;
    ~Unpin() { (void)twin("exec --lab " + lab + " leaf4 -- ip route del 10.0.1.10/32"); }
  } unpin{lab};
  ASSERT_TRUE(passes()) << "the pinned route must not show in the baseline";
  auto r = drill("--links leaf1:swp1");
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  json j = parse(r);
  ASSERT_EQ(j["elements"].size(), 1u);
  const auto& e = j["elements"][0];
  EXPECT_EQ(e["status"], "hurt");
  EXPECT_TRUE(contains(e["pairs_lost"], "server2 -> server1 10.0.1.10")) << e["pairs_lost"].dump();
  EXPECT_TRUE(contains(e["pairs_lost"], "server1 -> server2 10.0.4.10")) << e["pairs_lost"].dump();
  ASSERT_FALSE(e["findings"].empty());
  EXPECT_NE(e["findings"][0].get<std::string>().find("the design keeps connected lost reachability"),
            std::string::npos);
  // The IPv4 server flow never came back while the link was down.
  const auto& flows = e["outage"]["flows"];
  auto v4_flow = std::find_if(flows.begin(), flows.end(), [](const json& f) {
    return f["name"] == "server1 -> server2 10.0.4.10";
  });
  ASSERT_NE(v4_flow, flows.end()) << flows.dump();
  EXPECT_TRUE((*v4_flow)["judged"].get<bool>());
  EXPECT_GT((*v4_flow)["longest_outage_ms"].get<double>(), 500);
  EXPECT_EQ(e["worst_flow"].get<std::string>().rfind("server", 0), 0u) << e["worst_flow"];
  EXPECT_TRUE(e["restore"]["ok"].get<bool>()) << e["restore"]["detail"];
  EXPECT_EQ(j["summary"]["hurt"], 1);
  // The likely cause names the pinned route and the subnet it hides in.
  bool named = false;
  for (const auto& c : e["causes"])
    named |= c["rule"] == "static-override" &&
             c["cause"].get<std::string>().find("leaf4 has a route 10.0.1.10/32") != std::string::npos &&
             c["cause"].get<std::string>().find("inside 10.0.1.0/24") != std::string::npos;
  EXPECT_TRUE(named) << e["causes"].dump(1);
}

TEST_F(DrillLab, BadNamesAndBudgetsExitTwoAndFailNothing) {
  auto r = twin("drill --lab " + shared_.lab + " --links leaf1:swp9");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--links: node leaf1 has no link on interface 'swp9'"), std::string::npos) << r.err;
  r = twin("drill --lab " + shared_.lab + " --nodes server1");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("server1 is a host"), std::string::npos) << r.err;
  r = twin("drill --lab " + shared_.lab + " --max-convergence 100ms");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("below 500 ms"), std::string::npos) << r.err;
  r = twin("drill --lab " + shared_.lab + " --max-outage 20ms");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("below 10 probe intervals"), std::string::npos) << r.err;
  EXPECT_TRUE(passes());
}

TEST_F(DrillLab, AFailingBaselineExitsFourAndFailsNothing) {
  const std::string lab = shared_.lab;
  ASSERT_EQ(twin("exec --lab " + lab + " leaf2 -- ip link set dev swp1 down").code, 0);
  struct Up {
    std::string lab;
    ~Up() { (void)twin("exec --lab " + lab + " leaf2 -- ip link set dev swp1 up"); }
  } up{lab};
  auto r = twin("drill --lab " + lab + " --json --nodes spine2 --converge-timeout 2");
  EXPECT_EQ(r.code, 4) << r.out << r.err;
  json j = parse(r);
  EXPECT_EQ(j["stage"], "baseline-failed");
  EXPECT_TRUE(j["elements"].empty());
  EXPECT_FALSE(j["baseline_reasons"].empty());
  (void)twin("exec --lab " + lab + " leaf2 -- ip link set dev swp1 up");
  EXPECT_TRUE(eventually([] { return passes(); }));
}

}  // namespace
