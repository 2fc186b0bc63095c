// Unit tests for the wiring script builders (twin/wiring/wiring.hpp): the exact `ip -batch`
// lines for two-node and for a host of clos-2x4, and the sysctls pinned per namespace kind.
#include "twin/wiring/wiring.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "twin/plan/plan.hpp"
#include "twin/topology/loader.hpp"

namespace {

using Sysctls = std::vector<std::pair<std::string, std::string>>;

twin::plan::Plan plan_of(const std::string& topology, const std::string& name = "") {
  twin::Diagnostics d;
  auto t = twin::topology::load_topology(std::string(TWIN_DATA_DIR) + "/topologies/" + topology, d);
  if (!t) throw std::runtime_error(d.format());
  return twin::plan::make_plan(*t, name);
}

TEST(Wiring, TwoNodeNetnsScripts) {
  auto p = plan_of("two-node.yaml");
  EXPECT_EQ(twin::wiring::netns_add_script(p),
            "netns add tw-two-node-r1\n"
            "netns add tw-two-node-r2\n");
  EXPECT_EQ(twin::wiring::netns_del_script({"tw-two-node-r1", "tw-two-node-r2"}),
            "netns del tw-two-node-r1\n"
            "netns del tw-two-node-r2\n");
  EXPECT_EQ(twin::wiring::netns_del_script({}), "");
}

TEST(Wiring, TwoNodeVethScript) {
  auto p = plan_of("two-node.yaml");
  const std::string mac_r1 = p.nodes[0].interfaces[0].mac;
  const std::string mac_r2 = p.nodes[1].interfaces[0].mac;
  EXPECT_EQ(mac_r1, "02:b1:00:00:01:c8");
  EXPECT_EQ(mac_r2, "02:b1:00:01:01:c8");
  EXPECT_EQ(twin::wiring::veth_script(p),
            "link add eth1 netns tw-two-node-r1 mtu 9216 address 02:b1:00:00:01:c8 up type veth "
            "peer name eth1 netns tw-two-node-r2 mtu 9216 address 02:b1:00:01:01:c8\n");
}

TEST(Wiring, TwoNodeFrrNodesNeedNoScriptOnlyTheirBEndsUp) {
  // FRR nodes get their addresses from zebra (frr.conf), not from the wiring; `a` ends are
  // created up, so each node brings up lo and the `b` ends it owns.
  auto p = plan_of("two-node.yaml");
  EXPECT_EQ(twin::wiring::node_script(p.nodes[0]), "");
  EXPECT_EQ(twin::wiring::node_script(p.nodes[1]), "");
  EXPECT_EQ(twin::wiring::interfaces_to_bring_up(p, p.nodes[0]), (std::vector<std::string>{"lo"}));
  EXPECT_EQ(twin::wiring::interfaces_to_bring_up(p, p.nodes[1]),
            (std::vector<std::string>{"lo", "eth1"}));
}

TEST(Wiring, ClosVethScriptUsesEachLinksMtuAndPlanMacs) {
  auto p = plan_of("clos-2x4.yaml", "rec");
  std::string s = twin::wiring::veth_script(p);
  // One line per link, in topology order.
  EXPECT_EQ(std::count(s.begin(), s.end(), '\n'), 10);
  EXPECT_EQ(s.substr(0, s.find('\n') + 1),
            "link add swp1 netns tw-rec-leaf1 mtu 9216 address 02:7f:00:02:01:49 up type veth peer "
            "name swp1 netns tw-rec-spine1 mtu 9216 address 02:7f:00:00:01:49\n");
  EXPECT_NE(
      s.find("link add swp3 netns tw-rec-leaf1 mtu 1500 address 02:7f:00:02:03:49 up type veth "
             "peer name eth0 netns tw-rec-server1 mtu 1500 address 02:7f:00:06:01:49\n"),
      std::string::npos)
      << s;
}

TEST(Wiring, HostNodeScriptAddsAddressesAndDefaultRoutes) {
  auto p = plan_of("clos-2x4.yaml");
  EXPECT_EQ(twin::wiring::node_script(*p.find("server1")),
            "address add 10.0.1.10/24 dev eth0\n"
            "address add 2001:db8:1::10/64 dev eth0 nodad\n"
            "route add 0.0.0.0/0 via 10.0.1.1\n"
            "route add ::/0 via 2001:db8:1::1\n");
  // The leaf next to it: nothing, although swp3 has addresses (zebra sets them); it is the `a`
  // end of all its links, so only lo needs bringing up.
  EXPECT_EQ(twin::wiring::node_script(*p.find("leaf1")), "");
  EXPECT_EQ(twin::wiring::interfaces_to_bring_up(p, *p.find("leaf1")),
            (std::vector<std::string>{"lo"}));
  EXPECT_EQ(twin::wiring::interfaces_to_bring_up(p, *p.find("server1")),
            (std::vector<std::string>{"lo", "eth0"}));
}

TEST(Wiring, HostRouteToAPrefix) {
  twin::plan::Node h;
  h.name = "h";
  h.kind = twin::topology::NodeKind::kHost;
  h.routes = {{"192.0.2.0/24", "10.0.0.1"}, {"default", "fe80::1"}};
  EXPECT_EQ(twin::wiring::node_script(h),
            "route add 192.0.2.0/24 via 10.0.0.1\n"
            "route add ::/0 via fe80::1\n");
}

TEST(Wiring, SysctlsForFrr) {
  auto p = plan_of("clos-2x4.yaml");
  Sysctls hashing = {{"net/ipv4/fib_multipath_hash_policy", "3"},
                     {"net/ipv4/fib_multipath_hash_fields", "55"},
                     {"net/ipv6/fib_multipath_hash_policy", "3"},
                     {"net/ipv6/fib_multipath_hash_fields", "55"}};
  if (access("/proc/sys/net/ipv4/fib_multipath_hash_seed", F_OK) == 0)
    hashing.push_back({"net/ipv4/fib_multipath_hash_seed",
                       std::to_string(twin::wiring::ecmp_seed(*p.find("leaf1")))});
  auto got = twin::wiring::namespace_sysctls(*p.find("leaf1"));
  ASSERT_GE(got.size(), hashing.size());
  EXPECT_EQ(Sysctls(got.end() - hashing.size(), got.end()), hashing);
  got.resize(got.size() - hashing.size());
  EXPECT_EQ(got, (Sysctls{
                     {"net/ipv6/conf/all/disable_ipv6", "0"},
                     {"net/ipv6/conf/default/disable_ipv6", "0"},
                     {"net/ipv6/conf/all/accept_dad", "0"},
                     {"net/ipv6/conf/default/accept_dad", "0"},
                     {"net/ipv6/conf/default/dad_transmits", "0"},
                     {"net/ipv4/ip_forward", "1"},
                     {"net/ipv6/conf/all/forwarding", "1"},
                     {"net/ipv4/conf/all/rp_filter", "0"},
                     {"net/ipv4/conf/default/rp_filter", "0"},
                     {"net/ipv6/conf/default/keep_addr_on_down", "1"},
                     {"net/ipv6/conf/default/accept_ra", "0"},
                 }));
}

TEST(Wiring, EcmpSeedsDifferPerNodeAndStay) {
  auto p = plan_of("clos-2x4.yaml");
  std::set<uint32_t> seeds;
  for (const auto& n : p.nodes) {
    uint32_t seed = twin::wiring::ecmp_seed(n);
    EXPECT_NE(seed, 0u) << n.name;  // 0 asks the kernel for a random one
    EXPECT_EQ(seed, twin::wiring::ecmp_seed(n));
    seeds.insert(seed);
  }
  EXPECT_EQ(seeds.size(), p.nodes.size());
}

TEST(Wiring, ShapingScriptPutsTheLinkRateOnEachPortsEgress) {
  twin::plan::Node n;
  n.name = "leaf1";
  twin::plan::Interface a, b, c;
  a.name = "swp1";
  a.rate_bps = 100'000'000;
  b.name = "swp2";  // unshaped
  c.name = "swp3";
  c.rate_bps = 10'000'000'000ULL;
  c.delay_ms = 2;
  n.interfaces = {a, b, c};
  // 100 Mbit/s: the 64 KiB floor of the burst and the 128 KiB floor of the queue; 10 Gbit/s:
  // 1 ms (1.25 MB) of burst, 2 ms of queue; the delay at the root with the bucket its child.
  EXPECT_EQ(twin::wiring::shaping_script(n, true),
            "qdisc replace dev swp1 root handle 1: tbf rate 100mbit burst 65536 limit 131072\n"
            "qdisc replace dev swp3 root handle 1: netem delay 2ms\n"
            "qdisc replace dev swp3 parent 1:1 handle 10: tbf rate 10gbit burst 1250000 "
            "limit 2500000\n");
  // Without netem the rate stays, the delay goes (up said so).
  EXPECT_EQ(twin::wiring::shaping_script(n, false, {"swp3"}),
            "qdisc replace dev swp3 root handle 1: tbf rate 10gbit burst 1250000 limit 2500000\n");
  EXPECT_EQ(twin::wiring::shaping_script(n, true, {"swp2"}), "");
  // Shaped ports send full-size frames, not GSO segments (core/rate.hpp says why).
  EXPECT_EQ(twin::wiring::shaping_link_script(n),
            "link set dev swp1 gso_max_segs 1\n"
            "link set dev swp3 gso_max_segs 1\n");
  EXPECT_EQ(twin::wiring::shaping_link_script(n, {"swp2"}), "");
}

TEST(Wiring, SysctlsForHost) {
  auto p = plan_of("clos-2x4.yaml");
  EXPECT_EQ(twin::wiring::namespace_sysctls(*p.find("server1")),
            (Sysctls{
                {"net/ipv6/conf/all/disable_ipv6", "0"},
                {"net/ipv6/conf/default/disable_ipv6", "0"},
                {"net/ipv6/conf/all/accept_dad", "0"},
                {"net/ipv6/conf/default/accept_dad", "0"},
                {"net/ipv6/conf/default/dad_transmits", "0"},
                {"net/ipv4/ip_forward", "0"},
                {"net/ipv6/conf/all/forwarding", "0"},
                {"net/ipv4/conf/all/rp_filter", "0"},
                {"net/ipv4/conf/default/rp_filter", "0"},
                {"net/ipv6/conf/default/keep_addr_on_down", "1"},
                {"net/ipv6/conf/default/accept_ra", "1"},
            }));
}

TEST(Wiring, SysctlsTakeRpFilterFromTheImage) {
  twin::plan::Node n;
  n.kind = twin::topology::NodeKind::kFrr;
  n.rp_filter = 2;
  auto s = twin::wiring::namespace_sysctls(n);
  auto value = [&](const std::string& key) {
    for (const auto& [k, v] : s)
      if (k == key) return v;
    return std::string("absent");
  };
  EXPECT_EQ(value("net/ipv4/conf/all/rp_filter"), "2");
  EXPECT_EQ(value("net/ipv4/conf/default/rp_filter"), "2");
}

}  // namespace

// Recorded on clos-2x4's spine1 (`ip -j addr show`, `ip -j -6 route show`, trimmed to the
// fields link_local_gaps reads and a few others) after `ip -6 route del fe80::/64 dev swp1`: the
// state a 512-node bring-up left on spine40 swp19 after `percpu: allocation failed`.
const char* kSpineAddresses = R"([
 {"ifindex": 1, "ifname": "lo", "flags": ["LOOPBACK", "UP", "LOWER_UP"], "mtu": 65536,
  "addr_info": [{"family": "inet", "local": "10.255.0.1", "prefixlen": 32, "scope": "global"},
                {"family": "inet6", "local": "::1", "prefixlen": 128, "scope": "host"}]},
 {"ifindex": 2, "ifname": "swp1", "flags": ["BROADCAST", "MULTICAST", "UP", "LOWER_UP"],
  "mtu": 9216, "operstate": "UP",
  "addr_info": [{"family": "inet6", "local": "fe80::f1:ff:fe00:1b4", "prefixlen": 64, "scope": "link"}]},
 {"ifindex": 3, "ifname": "swp2", "flags": ["BROADCAST", "MULTICAST", "UP", "LOWER_UP"],
  "mtu": 9216, "operstate": "UP",
  "addr_info": [{"family": "inet6", "local": "fe80::f1:ff:fe00:2b4", "prefixlen": 64, "scope": "link"}]},
 {"ifindex": 4, "ifname": "swp3", "flags": ["BROADCAST", "MULTICAST", "UP", "LOWER_UP"],
  "mtu": 9216, "operstate": "UP", "addr_info": []},
 {"ifindex": 5, "ifname": "swp4", "flags": ["BROADCAST", "MULTICAST", "UP"], "mtu": 9216,
  "operstate": "LOWERLAYERDOWN", "addr_info": []}
])";
const char* kSpineRoutes6 = R"([
 {"dst": "fd00:255::102", "gateway": "fe80::f1:ff:fe03:1b4", "dev": "swp2", "protocol": "bgp", "metric": 20},
 {"dst": "fe80::/64", "dev": "swp2", "protocol": "kernel", "metric": 256},
 {"dst": "fe80::/64", "dev": "swp3", "protocol": "kernel", "metric": 256},
 {"dst": "fe80::/64", "dev": "swp4", "protocol": "kernel", "metric": 256}
])";

TEST(Wiring, LinkLocalGapsNameThePortWithoutItsRouteAndThePortWithoutAnAddress) {
  auto gaps = twin::wiring::link_local_gaps(nlohmann::json::parse(kSpineAddresses),
                                            nlohmann::json::parse(kSpineRoutes6),
                                            {"swp1", "swp2", "swp3", "swp4", "swp9"});
  // swp1: address, no route (repairable); swp3: carrier, no address; swp4 has no carrier yet
  // (skipped: the kernel makes its address when carrier comes); swp9 is not in the kernel.
  ASSERT_EQ(gaps.size(), 2u);
  EXPECT_EQ(gaps[0].ifname, "swp1");
  EXPECT_EQ(gaps[0].ifindex, 2);
  EXPECT_TRUE(gaps[0].has_address);
  EXPECT_FALSE(gaps[0].repaired);
  EXPECT_EQ(gaps[1].ifname, "swp3");
  EXPECT_EQ(gaps[1].ifindex, 4);
  EXPECT_FALSE(gaps[1].has_address);
}

TEST(Wiring, LinkLocalGapsLookOnlyAtTheGivenPortsAndTheirOwnRoute) {
  auto addrs = nlohmann::json::parse(kSpineAddresses);
  auto routes = nlohmann::json::parse(kSpineRoutes6);
  EXPECT_TRUE(twin::wiring::link_local_gaps(addrs, routes, {"swp2"}).empty());
  // Another port's fe80::/64 does not count for swp1, nor does a route through swp1's link-local
  // neighbour: only `fe80::/64 dev swp1`.
  routes.push_back({{"dst", "fd00:255::101"}, {"gateway", "fe80::f1:ff:fe02:1b4"}, {"dev", "swp1"}});
  ASSERT_EQ(twin::wiring::link_local_gaps(addrs, routes, {"swp1"}).size(), 1u);
  routes.push_back({{"dst", "fe80::/64"}, {"dev", "swp1"}, {"protocol", "kernel"}, {"metric", 256}});
  EXPECT_TRUE(twin::wiring::link_local_gaps(addrs, routes, {"swp1"}).empty());
  // A tentative link-local address (DAD still running) is not an address yet.
  addrs[1]["addr_info"][0]["tentative"] = true;
  auto gaps = twin::wiring::link_local_gaps(addrs, routes, {"swp1"});
  ASSERT_EQ(gaps.size(), 1u);
  EXPECT_FALSE(gaps[0].has_address);
  EXPECT_TRUE(twin::wiring::link_local_gaps(nlohmann::json(), nlohmann::json(), {"swp1"}).empty());
  // Below 1280 bytes the kernel runs no IPv6 on a port: no address is due there.
  addrs[3]["mtu"] = 1200;
  EXPECT_TRUE(twin::wiring::link_local_gaps(addrs, routes, {"swp3"}).empty());
  addrs[3]["mtu"] = 1280;
  EXPECT_EQ(twin::wiring::link_local_gaps(addrs, routes, {"swp3"}).size(), 1u);
}
