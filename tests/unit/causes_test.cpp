// Likely-cause rules (twin/causes/causes.hpp) on FRR 8.4 and kernel JSON recorded from
// clos-2x4 runs (tests/data/frr84/causes/): each rule on the state that should trigger it, and
// silent on a healthy one; then how causes attach to a verdict's reasons.
#include "twin/causes/causes.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "tests/unit/recorded.hpp"
#include "twin/verdict/observation.hpp"

namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using twin::replay::Cause;
using twin::replay::CauseFacts;

const std::string kData = std::string(TWIN_TEST_DATA);
const std::string kCauses = kData + "/frr84/causes/";

const twin::plan::Plan& clos() { return twin_test::recorded_clos_plan(); }

json recorded(const std::string& f) { return json::parse(twin_test::read(kCauses + f)); }

std::vector<Cause> by_rule(const std::vector<Cause>& all, const std::string& rule) {
  std::vector<Cause> out;
  for (const auto& c : all)
    if (c.rule == rule) out.push_back(c);
  return out;
}

// A healthy node as the kernel showed it: leaf1 before the duplicate-address change.
CauseFacts healthy() {
  CauseFacts f;
  f.nodes["leaf1"].addresses = recorded("dup-loopback.leaf1.addr.json");
  f.nodes["leaf1"].sysctls = {{"net.ipv4.conf.all.forwarding", "1"},
                              {"net.ipv6.conf.all.forwarding", "1"},
                              {"net.ipv6.conf.swp1.disable_ipv6", "0"}};
  return f;
}

TEST(Causes, NothingOnAHealthyNode) {
  EXPECT_TRUE(twin::replay::likely_causes(clos(), healthy()).empty());
}

TEST(Causes, AnAddressOnTwoNodes) {
  CauseFacts f;
  f.nodes["leaf1"].addresses = recorded("dup-loopback.leaf1.addr.json");
  f.nodes["leaf2"].addresses = recorded("dup-loopback.leaf2.addr.json");
  auto c = by_rule(twin::replay::likely_causes(clos(), f), "duplicate-address");
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].text,
            "address 10.255.1.1 is configured on 2 nodes: leaf1 lo and leaf2 swp1; traffic for it "
            "goes to whichever is nearer");
  EXPECT_THAT(c[0].evidence, ElementsAre("leaf1: `ip addr` shows lo 10.255.1.1/32",
                                         "leaf2: `ip addr` shows swp1 10.255.1.1/32"));
  EXPECT_THAT(c[0].nodes, ElementsAre("leaf1", "leaf2"));
  // One the plan gives both nodes (anycast by design) is no fault.
  twin::plan::Plan anycast = clos();
  for (auto& n : anycast.nodes)
    if (n.name == "leaf2") n.config_addresses["swp1"] = {"10.255.1.1/32"};
  EXPECT_TRUE(by_rule(twin::replay::likely_causes(anycast, f), "duplicate-address").empty());
}

TEST(Causes, ABadPeerAsNamesTheEndWithTheWrongNumberOnce) {
  CauseFacts f;
  f.nodes["leaf4"].bgp_neighbors = recorded("wrong-remote-as.leaf4.neighbors.json");
  f.nodes["spine1"].bgp_neighbors = recorded("wrong-remote-as.spine1.neighbors.json");
  auto c = by_rule(twin::replay::likely_causes(clos(), f), "bgp-notification");
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].text,
            "BGP session leaf4 swp1 (to spine1) is Idle: it sent NOTIFICATION OPEN Message "
            "Error/Bad Peer AS — leaf4 expects remote-as 65001 on swp1, but spine1 is AS 65000");
  EXPECT_THAT(c[0].evidence[0], HasSubstr("lastErrorCodeSubcode 0202"));
  EXPECT_THAT(c[0].nodes, ElementsAre("leaf4", "spine1"));
  // Seen from spine1 alone (leaf4 not asked), the notification is still named.
  CauseFacts one;
  one.nodes["spine1"].bgp_neighbors = f.nodes["spine1"].bgp_neighbors;
  json nb = *one.nodes["spine1"].bgp_neighbors;
  nb["swp4"]["lastNotificationReason"] = "OPEN Message Error/Bad Peer AS";
  nb["swp4"]["lastResetDueTo"] = "BGP Notification received";
  one.nodes["spine1"].bgp_neighbors = nb;
  auto s = twin::replay::likely_causes(clos(), one);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_THAT(s[0].text, HasSubstr("spine1 swp4 (to leaf4) is Idle: it received NOTIFICATION"));
  // A hold timer: the path drops packets.
  nb["swp4"]["lastNotificationReason"] = "Hold Timer Expired";
  one.nodes["spine1"].bgp_neighbors = nb;
  EXPECT_THAT(twin::replay::likely_causes(clos(), one)[0].text,
              HasSubstr("within the hold time (9 s)"));
}

// Recorded in CI: the OPEN collision after "Bad Peer AS" left spine1 with an FSM error as its last
// NOTIFICATION. The wrong remote-as is still named, from the configuration.
TEST(Causes, AWrongRemoteAsIsNamedWhateverTheLastNotificationSaid) {
  CauseFacts f;
  json nb = recorded("wrong-remote-as.spine1.neighbors.json");
  nb["swp4"]["lastNotificationReason"] =
      "Neighbor Events Error/Receive Unexpected Message in OpenSent State";
  nb["swp4"]["lastErrorCodeSubcode"] = "0501";
  nb["swp4"]["lastResetDueTo"] = "BGP Notification send";
  f.nodes["spine1"].bgp_neighbors = nb;
  json leaf4 = recorded("wrong-remote-as.leaf4.neighbors.json");
  leaf4["swp1"].erase("lastNotificationReason");
  f.nodes["leaf4"].bgp_neighbors = leaf4;
  auto c = twin::replay::likely_causes(clos(), f);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].rule, "remote-as-mismatch");
  EXPECT_EQ(c[0].text,
            "BGP session leaf4 swp1 (to spine1) is Idle — leaf4 expects remote-as 65001 on swp1, "
            "but spine1 is AS 65000");
  // Without leaf4's side the mismatch cannot be known: spine1's notification is named as it is.
  CauseFacts one;
  one.nodes["spine1"].bgp_neighbors = nb;
  one.nodes["leaf4"].bgp_neighbors = json::object();
  auto s = twin::replay::likely_causes(clos(), one);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].rule, "bgp-notification");
  EXPECT_THAT(s[0].text, HasSubstr("Receive Unexpected Message in OpenSent State"));
}

TEST(Causes, APolicyNamingAnUndefinedRouteMap) {
  CauseFacts f;
  f.nodes["leaf2"].config = twin_test::read(kCauses + "misspelled-route-map.leaf2.running.conf");
  auto c = twin::replay::likely_causes(clos(), f);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].rule, "policy-undefined");
  EXPECT_EQ(c[0].text,
            "leaf2: `neighbor fabric route-map ALOW-ALL out` names a route-map that is not "
            "defined, so nothing passes out of leaf2 that way (did you mean 'ALLOW-ALL'?)");
  EXPECT_THAT(c[0].evidence[0], HasSubstr("defined route-maps: ALLOW-ALL"));
}

// Prefix-lists are per family: `ip prefix-list NOTHING` is defined for the IPv4 family's use
// (it was once read as undefined: the definition pattern matched `ipv6 prefix-list` only), and
// an IPv6 family naming an IPv4-only list is the undefined one.
TEST(Causes, PrefixListsAreDefinedPerFamily) {
  const std::string both =
      "ip prefix-list NOTHING seq 5 deny any\n!\nipv6 prefix-list NOTHING6 seq 5 deny any\n!\n"
      "router bgp 4200000003\n neighbor fabric peer-group\n !\n address-family ipv4 unicast\n"
      "  neighbor fabric prefix-list NOTHING out\n exit-address-family\n !\n"
      " address-family ipv6 unicast\n  neighbor fabric activate\n"
      "  neighbor fabric prefix-list NOTHING6 out\n exit-address-family\nexit\n";
  CauseFacts f;
  f.nodes["leaf3"].config = both;
  auto all = twin::replay::likely_causes(clos(), f);
  EXPECT_TRUE(by_rule(all, "policy-undefined").empty());
  // Both lists deny everything: each family's use is named.
  auto deny = by_rule(all, "policy-denies-all");
  ASSERT_EQ(deny.size(), 2u);
  EXPECT_EQ(deny[0].text,
            "leaf3: prefix-list NOTHING (`neighbor fabric prefix-list NOTHING out`) has deny "
            "entries only: it denies every route");
  EXPECT_THAT(deny[1].text, HasSubstr("ipv6 prefix-list NOTHING6"));
  f.nodes["leaf3"].config = "ip prefix-list NOTHING seq 10 permit 10.0.0.0/8 le 32\n" + both;
  EXPECT_EQ(by_rule(twin::replay::likely_causes(clos(), f), "policy-denies-all").size(), 1u);
  // `both` with one use of a list swapped for another name.
  auto swapped = [&](const std::string& from, const std::string& to) {
    std::string s = both;
    s.replace(s.find(from), from.size(), to);
    return s;
  };
  f.nodes["leaf3"].config = swapped("prefix-list NOTHING6 out", "prefix-list NOTHING out");
  auto c = by_rule(twin::replay::likely_causes(clos(), f), "policy-undefined");
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].text,
            "leaf3: `neighbor fabric prefix-list NOTHING out` names an ipv6 prefix-list that is "
            "not defined, so nothing passes out of leaf3 that way (`ip prefix-list NOTHING` "
            "exists, but it filters IPv4 routes)");
  EXPECT_THAT(c[0].evidence[0], HasSubstr("defined ipv6 prefix-lists: NOTHING6"));
  // The name defined for the other family only: that is what is said.
  f.nodes["leaf3"].config = swapped("prefix-list NOTHING out", "prefix-list NOTHING6 out");
  c = by_rule(twin::replay::likely_causes(clos(), f), "policy-undefined");
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].text,
            "leaf3: `neighbor fabric prefix-list NOTHING6 out` names a prefix-list that is not "
            "defined, so nothing passes out of leaf3 that way (`ipv6 prefix-list NOTHING6` "
            "exists, but it filters IPv6 routes)");
}

TEST(Causes, ARouteMapThatDeniesEverythingAndBothEndsPassive) {
  CauseFacts f;
  f.nodes["leaf1"].config =
      "route-map DRAIN deny 10\nexit\nrouter bgp 65101\n neighbor fabric peer-group\n"
      " neighbor fabric passive\n neighbor swp1 interface peer-group fabric\n"
      " address-family ipv4 unicast\n  neighbor fabric route-map DRAIN out\n"
      "  neighbor fabric prefix-list NONE in\n exit-address-family\nexit\n";
  f.nodes["spine1"].config = "router bgp 65000\n neighbor swp1 passive\nexit\n";
  auto all = twin::replay::likely_causes(clos(), f);
  auto deny = by_rule(all, "policy-denies-all");
  ASSERT_EQ(deny.size(), 1u);
  EXPECT_THAT(deny[0].text, HasSubstr("route-map DRAIN (`neighbor fabric route-map DRAIN out`) "
                                      "has deny entries only"));
  auto undefined = by_rule(all, "policy-undefined");
  ASSERT_EQ(undefined.size(), 1u);
  EXPECT_THAT(undefined[0].text, HasSubstr("names a prefix-list that is not defined, so nothing "
                                           "passes into leaf1"));
  auto passive = by_rule(all, "both-passive");
  ASSERT_EQ(passive.size(), 1u);
  EXPECT_THAT(passive[0].text, HasSubstr("is passive at both ends"));
  EXPECT_THAT(passive[0].nodes, ElementsAre("spine1", "leaf1"));
}

TEST(Causes, Rfc8212WithoutPolicyOnANeighbor) {
  CauseFacts f;
  f.nodes["leaf1"].config =
      "router bgp 65101\n bgp ebgp-requires-policy\n neighbor fabric peer-group\n"
      " neighbor swp1 interface peer-group fabric\n neighbor swp2 interface peer-group fabric\n"
      "exit\n";
  auto c = twin::replay::likely_causes(clos(), f);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].rule, "policy-required");
  EXPECT_EQ(c[0].text,
            "leaf1: `bgp ebgp-requires-policy` (RFC 8212) is on, and neighbor fabric has no "
            "route-map in and out: from its next session start it accepts and sends no route");
  // With route-maps both ways on the peer-group, nothing to say; `no bgp ...` is off.
  f.nodes["leaf1"].config += "router bgp 65101\n address-family ipv4 unicast\n"
                             "  neighbor fabric route-map ALL in\n  neighbor fabric route-map ALL out\n"
                             "route-map ALL permit 10\n";
  EXPECT_TRUE(by_rule(twin::replay::likely_causes(clos(), f), "policy-required").empty());
  CauseFacts off;
  off.nodes["leaf1"].config = "router bgp 65101\n no bgp ebgp-requires-policy\nexit\n";
  EXPECT_TRUE(twin::replay::likely_causes(clos(), off).empty());
}

TEST(Causes, KernelStateOfAPort) {
  CauseFacts f = healthy();
  json addr = *f.nodes["leaf1"].addresses;
  for (auto& l : addr) {
    if (l["ifname"] == "swp2") l["addr_info"] = json::array();  // no link-local left
    if (l["ifname"] == "lo") l["flags"] = json::array({"LOOPBACK"});
  }
  f.nodes["leaf1"].addresses = addr;
  f.nodes["leaf1"].sysctls["net.ipv6.conf.swp1.disable_ipv6"] = "1";
  f.nodes["leaf1"].sysctls["net.ipv4.conf.all.forwarding"] = "0";
  // spine1's end of leaf1:swp1 at another MTU.
  json spine = json::array(
      {{{"ifname", "swp1"},
        {"mtu", 1500},
        {"flags", {"UP"}},
        {"addr_info", {{{"family", "inet6"}, {"local", "fe80::1"}, {"scope", "link"}}}}}});
  f.nodes["spine1"].addresses = spine;
  auto all = twin::replay::likely_causes(clos(), f);
  auto v6 = by_rule(all, "unnumbered-ipv6");
  ASSERT_EQ(v6.size(), 2u);
  EXPECT_EQ(v6[0].text, "IPv6 is disabled on leaf1:swp1: its BGP unnumbered session needs the "
                        "port's link-local address");
  EXPECT_THAT(v6[1].text, HasSubstr("no IPv6 link-local address on leaf1:swp2"));
  auto fwd = by_rule(all, "forwarding-off");
  ASSERT_EQ(fwd.size(), 1u);
  EXPECT_EQ(fwd[0].text, "IPv4 forwarding is off on leaf1: it keeps its sessions and routes but "
                         "drops the traffic it should carry");
  EXPECT_THAT(fwd[0].evidence, ElementsAre("leaf1: net.ipv4.conf.all.forwarding = 0"));
  auto lo = by_rule(all, "lo-down");
  ASSERT_EQ(lo.size(), 1u);
  EXPECT_THAT(lo[0].text, HasSubstr("lo is down on leaf1"));
  auto mtu = by_rule(all, "mtu-mismatch");
  ASSERT_EQ(mtu.size(), 1u);
  EXPECT_THAT(mtu[0].text, HasSubstr("(9216)"));
  EXPECT_THAT(mtu[0].text, HasSubstr("(1500)"));
  EXPECT_THAT(mtu[0].text, HasSubstr("packets above 1500 bytes are dropped one way"));
}

TEST(Causes, AHostRouteByHandInsideAFabricPrefixOverridesIt) {
  // leaf4's table after `ip route add 10.0.1.10/32 via 169.254.0.1 dev swp1 onlink`: the
  // fabric's 10.0.1.0/24 (leaf1's server subnet) over both spines, and the pinned /32.
  twin::replay::NodeObservation o{twin::ok(json::object()), twin::ok(json::array()),
                                  twin::ok(recorded("leaf4-pinned-host-route.routes4.json")),
                                  twin::ok(json::array())};
  twin::replay::NetState st = twin::replay::state_from_observations({{"leaf4", o}});
  EXPECT_EQ(st.other_routes["leaf4"]["10.0.1.10/32"], "boot via 169.254.0.1 dev swp1");
  EXPECT_EQ(st.fib["leaf4"]["10.0.1.0/24"], 2);
  CauseFacts f;
  f.state = &st;
  auto all = by_rule(twin::replay::likely_causes(clos(), f), "static-override");
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].text,
            "leaf4 has a route 10.0.1.10/32 (boot via 169.254.0.1 dev swp1) inside 10.0.1.0/24 "
            "(host-subnet of leaf1): that traffic takes its one path whatever the fabric's "
            "routing does");
  EXPECT_THAT(all[0].nodes, ElementsAre("leaf4", "leaf1"));
  // Its own connected subnet (protocol kernel) is no override.
  EXPECT_EQ(st.other_routes["leaf4"]["10.0.4.0/24"].rfind("kernel", 0), 0u);
  // Without the observed state the rule says nothing.
  f.state = nullptr;
  EXPECT_TRUE(by_rule(twin::replay::likely_causes(clos(), f), "static-override").empty());
}

TEST(Causes, TheOspfFamilysOwnMismatchFinding) {
  twin::validate::Report after;
  twin::validate::TestResult r;
  r.validator = "ospf";
  r.test = 1;
  r.status = twin::validate::Status::kFailed;
  r.node = "leaf1";
  r.peer = "rr1 eth1";
  r.message = "area mismatch: area 0.0.0.1 here, 0.0.0.0 on rr1";
  after.results = {r, r};
  CauseFacts f;
  f.after = &after;
  auto c = twin::replay::likely_causes(clos(), f);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].rule, "ospf-mismatch");
  EXPECT_EQ(c[0].text, "OSPF: area mismatch: area 0.0.0.1 here, 0.0.0.0 on rr1");
  EXPECT_THAT(c[0].nodes, ElementsAre("leaf1", "rr1"));
}

TEST(Causes, AttachToTheReasonsThatNameTheirNodes) {
  twin::replay::Verdict v;
  v.reasons = {{3, "session-lost", "", "BGP sessions lost: 1 (leaf4 swp1 (Established -> Idle))",
                {"leaf4 swp1 (Established -> Idle)"}},
               {4, "prefix-lost", "", "prefixes lost: 1 (leaf10 10.9.0.0/24)", {"leaf10 10.9.0.0/24"}}};
  Cause leaf4{"bgp-notification", "leaf4 ...", {}, {"leaf4", "spine1"}};
  Cause leaf1{"lo-down", "lo is down on leaf1", {}, {"leaf1"}};
  twin::replay::attach_causes(v, {leaf4, leaf1});
  ASSERT_EQ(v.reasons[0].causes.size(), 2u);  // leaf4's, and leaf1's that no reason names
  EXPECT_EQ(v.reasons[0].causes[0].rule, "bgp-notification");
  EXPECT_EQ(v.reasons[0].causes[1].rule, "lo-down");
  EXPECT_TRUE(v.reasons[1].causes.empty()) << "leaf10 is not leaf1";
}

}  // namespace

// A lost prefix's reason names the nodes that lost it; the node it belongs to is in the diff's
// words behind it (Reason::context): a cause about that node is attached there too, so the
// first reason of a filtered loopback has its cause, not "none of twin's rules matches".
TEST(Causes, ACauseGoesToTheReasonOfThePrefixesOfItsNode) {
  twin::replay::Verdict v;
  twin::replay::Reason lost;
  lost.category = "prefix-lost";
  lost.message = "prefixes lost: 1 (leaf1 10.255.0.11/32 (8 next hops -> missing))";
  lost.subjects = {"leaf1 10.255.0.11/32 (8 next hops -> missing)"};
  lost.context = {"leaf1 lost the route to 10.255.0.11/32 (loopback of leaf3)"};
  v.reasons.push_back(lost);
  twin::replay::Reason other = lost;
  other.message = "prefixes lost: 1 (leaf1 10.255.0.12/32 (8 next hops -> missing))";
  other.context = {"leaf1 lost the route to 10.255.0.12/32 (loopback of leaf4)"};
  v.reasons.push_back(other);
  twin::replay::Reason failed;
  failed.category = "validator-failed";
  failed.message = "bgp.1 prefixes-received failed on 1 subject";
  failed.subjects = {"spine1 swp3 ipv4: Established but nothing received from leaf3 (filtered?)"};
  v.reasons.push_back(failed);
  twin::replay::attach_causes(v, {{"policy-denies-all", "leaf3: prefix-list NOTHING denies every "
                                                        "route", {}, {"leaf3"}}});
  ASSERT_EQ(v.reasons[0].causes.size(), 1u);
  EXPECT_EQ(v.reasons[0].causes[0].rule, "policy-denies-all");
  EXPECT_TRUE(v.reasons[1].causes.empty());
  EXPECT_EQ(v.reasons[2].causes.size(), 1u);
}

// The rules are one list (cause_rules()): docs/likely-causes.md's table names each, in the
// list's order, so a rule added to the code without its page row (or a row for a rule that is
// gone) fails here.
TEST(CauseRules, TheDocsTableNamesEveryRuleInTheListsOrder) {
  const std::string page =
      twin_test::read((std::filesystem::path(TWIN_TEST_DATA).parent_path().parent_path() / "docs" /
                       "likely-causes.md")
                          .string());
  std::vector<std::string> documented;
  std::istringstream in(page);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("| `", 0) == 0) documented.push_back(line.substr(3, line.find('`', 3) - 3));
  std::vector<std::string> listed;
  for (const auto& r : twin::replay::cause_rules()) {
    listed.push_back(r.name);
    EXPECT_GT(std::string(r.summary).size(), 10u) << r.name;
  }
  EXPECT_EQ(documented, listed);
  EXPECT_EQ(listed.size(), 19u);
  EXPECT_EQ(listed.front(), "daemon-dead");  // it explains whatever else fails at its node
}

// Every cause the rules return names a listed rule (likely_causes throws on one that does not;
// the other tests of this file make most rules fire through it): forwarding switched off on a
// recorded healthy node comes back as the listed forwarding-off, once.
TEST(CauseRules, WhatTheRulesFindCarriesAListedName) {
  std::set<std::string> listed;
  for (const auto& r : twin::replay::cause_rules()) listed.insert(r.name);
  CauseFacts f = healthy();
  f.nodes["leaf1"].sysctls["net.ipv4.conf.all.forwarding"] = "0";
  auto found = twin::replay::likely_causes(clos(), f);
  ASSERT_FALSE(found.empty());
  for (const auto& c : found) EXPECT_TRUE(listed.count(c.rule)) << c.rule;
  EXPECT_EQ(by_rule(found, "forwarding-off").size(), 1u);
}
