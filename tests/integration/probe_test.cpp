// Integration tests of the in-process probes against a real clos-2x4 lab (root): netlink dumps
// must read what `ip -j` reads and the vty socket what vtysh reads, field for field where twin's
// validators and gate look.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "tests/integration/cli_support.hpp"
#include "tests/integration/config_read.hpp"
#include "twin/state/state.hpp"
#include "twin/runtime/frr.hpp"
#include "twin/runtime/netlink.hpp"

using nlohmann::json;

class Probes : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!twin_it::root()) return;
    lab_ = twin_it::unique_lab("probes");
    auto r = twin_it::twin("up " + twin_it::kRepo + "/topologies/clos-2x4.yaml --name " + lab_);
    up_ok_ = r.code == 0;
    up_out_ = r.out + r.err;
    // `up` returns once every session is Established; ECMP routes may still be filling in. The
    // tables are compared once every FIB is complete, so both reads see the same FIB.
    if (up_ok_) {
      auto v = twin_it::validate(lab_, "routes", 30);
      up_ok_ = v.value("verdict", "") == "pass";
      if (!up_ok_) up_out_ = "FIBs did not complete: " + v.dump().substr(0, 2000);
    }
  }
  static void TearDownTestSuite() {
    if (!twin_it::root() || lab_.empty()) return;
    auto r = twin_it::twin("down --lab " + lab_);
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(twin_it::leftovers(lab_), std::vector<std::string>{});
  }
  void SetUp() override {
    if (!twin_it::root()) TWIN_SKIP_WITHOUT("root", "needs root (network namespaces)");
    ASSERT_TRUE(up_ok_) << up_out_;
  }
  static inline std::string lab_;
  static inline bool up_ok_ = false;
  static inline std::string up_out_;
};

// The in-process probes (netlink, vty socket) must read what `ip -j` and vtysh read: every
// field twin's validators and gate use, on a leaf, a spine and a server.
TEST_F(Probes, NetlinkTablesMatchIpJson) {
  auto st = twin::state::load_state(lab_);
  ASSERT_TRUE(st) << st.error().message;
  using twin::runtime::KernelTable;
  auto by = [](const json& list, const std::string& key) {
    std::map<std::string, json> m;
    for (const auto& e : list) m[e.value(key, "")] = e;
    return m;
  };
  for (const char* name : {"leaf1", "spine2", "server1"}) {
    const auto* n = st->plan.find(name);
    ASSERT_NE(n, nullptr);
    auto ip = [&](const std::string& args) {
      auto r = twin_it::sh("ip -n " + n->netns + " -j " + args);
      EXPECT_EQ(r.code, 0) << r.err;
      return json::parse(r.out);
    };
    auto links = twin::runtime::kernel_json(n->netns, KernelTable::kLinks);
    ASSERT_TRUE(links) << links.error().message;
    auto want = by(ip("link show"), "ifname");
    auto got = by(*links, "ifname");
    ASSERT_EQ(got.size(), want.size()) << name;
    for (const auto& [ifname, w] : want) {
      for (const char* k : {"mtu", "operstate", "flags", "address", "ifindex", "link_type"})
        EXPECT_EQ(got[ifname][k], w[k]) << name << " " << ifname << " " << k;
    }
    auto addrs = twin::runtime::kernel_json(n->netns, KernelTable::kAddresses);
    ASSERT_TRUE(addrs) << addrs.error().message;
    auto wa = by(ip("addr show"), "ifname");
    auto ga = by(*addrs, "ifname");
    for (const auto& [ifname, w] : wa) {
      auto key = [](const json& infos) {
        std::set<std::string> s;
        for (const auto& i : infos)
          s.insert(i.value("family", "") + " " + i.value("local", "") + "/" +
                   std::to_string(i.value("prefixlen", 0)) + " " + i.value("scope", "") +
                   (i.contains("tentative") ? " tentative" : ""));
        return s;
      };
      EXPECT_EQ(key(ga[ifname]["addr_info"]), key(w["addr_info"])) << name << " " << ifname;
    }
    for (auto [table, args] : {std::pair{KernelTable::kRoutes4, std::string("route show")},
                               {KernelTable::kRoutes6, std::string("-6 route show")}}) {
      auto routes = twin::runtime::kernel_json(n->netns, table);
      ASSERT_TRUE(routes) << routes.error().message;
      auto render = [](const json& list) {
        std::set<std::string> s;
        for (const auto& r : list) {
          std::string hops;
          auto hop = [](const json& h) {
            return h.value("gateway", h.contains("via") ? h["via"].value("host", "") : "") + "@" +
                   h.value("dev", "");
          };
          if (r.contains("nexthops")) {
            std::set<std::string> hs;
            for (const auto& h : r["nexthops"]) hs.insert(hop(h));
            for (const auto& h : hs) hops += h + ",";
          } else {
            hops = hop(r);
          }
          s.insert(r.value("dst", "") + " " + r.value("type", "unicast") + " " +
                   r.value("protocol", "") + " " + hops);
        }
        return s;
      };
      EXPECT_EQ(render(*routes), render(ip(args))) << name << " " << args;
      EXPECT_FALSE(routes->empty()) << name << " " << args;
    }
  }
}

TEST_F(Probes, VtySocketAnswersLikeVtysh) {
  auto st = twin::state::load_state(lab_);
  ASSERT_TRUE(st) << st.error().message;
  for (const char* name : {"leaf2", "spine1"}) {
    auto got = twin::runtime::show_json(*st->plan.find(name), "bgpd", "show bgp summary json");
    ASSERT_TRUE(got) << got.error().message;
    auto r =
        twin_it::twin("exec --lab " + lab_ + " " + name + " -- vtysh -c 'show bgp summary json'");
    ASSERT_EQ(r.code, 0) << r.err;
    auto want = json::parse(r.out);
    for (const char* af : {"ipv4Unicast", "ipv6Unicast"}) {
      EXPECT_EQ((*got)[af]["routerId"], want[af]["routerId"]) << name;
      EXPECT_EQ((*got)[af]["as"], want[af]["as"]) << name;
      ASSERT_EQ((*got)[af]["peers"].size(), want[af]["peers"].size()) << name;
      for (const auto& [peer, p] : want[af]["peers"].items())
        EXPECT_EQ((*got)[af]["peers"][peer]["state"], p["state"]) << name << " " << peer;
    }
  }
  // A command FRR refuses is an error carrying FRR's own message, never empty data.
  auto bad = twin::runtime::show_json(*st->plan.find("leaf2"), "bgpd", "show bgp nothing json");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("Unknown command"), std::string::npos) << bad.error().message;
}

TEST_F(Probes, RunningConfigsFromTheSocketsAreVtyshsByteForByte) {
  twin_it::expect_running_configs_read_like_vtysh(lab_);
}
