// vtysh's merge of the daemons' running configs (runtime/vtysh_merge.hpp), against what FRR
// 8.4.4's vtysh printed for the same daemons' answers (tests/data/frr84/running: each daemon's
// `write terminal` and `vtysh -c "show running-config"`, recorded on real labs: policy objects
// and link-params on a clos-2x4 leaf, a static route, EVPN, OSPF, BFD).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "twin/runtime/vtysh_merge.hpp"

namespace fs = std::filesystem;
using twin::runtime::merge_running_configs;
using twin::runtime::parse_vtysh_conf;
using twin::runtime::VtyshOwn;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

VtyshOwn own(const std::string& host) {
  VtyshOwn o;
  o.hostname = host;
  o.integrated = true;
  return o;
}

}  // namespace

TEST(VtyshMerge, RecordedDaemonAnswersMergeToWhatVtyshPrinted) {
  const fs::path dir = fs::path(TWIN_TEST_DATA) / "frr84" / "running";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"policy-leaf1", "leaf1"}, {"static-leaf4", "leaf4"}, {"evpn-leaf1", "leaf1"},
      {"ospf-r1", "r1"},         {"bfd-r1", "r1"}};
  for (const auto& [name, host] : cases) {
    std::vector<std::string> outputs;
    for (const auto& d : twin::runtime::vtysh_daemon_order())
      if (fs::exists(dir / (name + "." + d + ".txt")))
        outputs.push_back(slurp(dir / (name + "." + d + ".txt")));
    ASSERT_GE(outputs.size(), 2u) << name;
    std::string vtysh = slurp(dir / (name + ".vtysh.txt"));
    auto p = vtysh.find("Current configuration:\n");
    ASSERT_NE(p, std::string::npos) << name;
    EXPECT_EQ(merge_running_configs(outputs, own(host)), vtysh.substr(p + 23)) << name;
  }
}

// The rules one by one, on small answers: top-level lines kept once or appended by prefix; a
// block two daemons print joined, its lines kept once in strcmp order (interface); blocks
// grouped by FRR's node-type order (prefix-lists, access-lists, then route-maps after router
// blocks), no `!` between list entries of one kind; "router ospf6" grouped with "router ospf"
// (vtysh tests prefixes); a key chain's keys nested with their own exit.
TEST(VtyshMerge, JoinsOrdersAndDelimitsAsVtysh) {
  std::string zebra =
      "frr version 8.4.4\nfrr defaults traditional\n!\nhostname r1\n!\n"
      "interface eth1\n ip address 10.0.0.1/31\n description up\nexit\n!\n"
      "route-map RM permit 10\n set src 10.0.0.1\nexit\n!\n"
      "ip prefix-list A seq 5 permit 10.0.0.0/8\nip prefix-list B seq 5 deny any\n!\n"
      "ip forwarding\n!\nkey chain KC\n key 1\n  key-string s\n exit\nexit\n!\n";
  std::string ospf6d =
      "frr version 8.4.4\nfrr defaults traditional\n!\nhostname r1\nlog syslog\n!\n"
      "interface eth1\n ipv6 ospf6 area 0\n description up\nexit\n!\n"
      "router ospf6\n ospf6 router-id 1.1.1.1\nexit\n!\n";
  std::string bgpd =
      "frr version 8.4.4\nfrr defaults traditional\n!\nhostname r1\n!\n"
      "router bgp 65001\n neighbor eth1 interface remote-as external\nexit\n!\n"
      "route-map RM permit 10\n set src 10.0.0.1\n match tag 5\nexit\n!\n"
      "access-list AL seq 5 permit any\n!\nbgp community-list standard CL seq 5 permit 1:1\n";
  std::string want =
      "!\n"
      "frr version 8.4.4\nfrr defaults traditional\nhostname r1\nlog syslog\n"
      "service integrated-vtysh-config\n!\n"
      "key chain KC\n key 1\n  key-string s\n exit\nexit\n!\n"
      "interface eth1\n description up\n ip address 10.0.0.1/31\n ipv6 ospf6 area 0\nexit\n!\n"
      "router bgp 65001\n neighbor eth1 interface remote-as external\nexit\n!\n"
      "router ospf6\n ospf6 router-id 1.1.1.1\nexit\n!\n"
      "access-list AL seq 5 permit any\n!\n"
      "ip prefix-list A seq 5 permit 10.0.0.0/8\nip prefix-list B seq 5 deny any\n!\n"
      "bgp community-list standard CL seq 5 permit 1:1\n!\n"
      "route-map RM permit 10\n match tag 5\n set src 10.0.0.1\nexit\n!\n"
      "ip forwarding\n!\n"
      "end\n";
  EXPECT_EQ(merge_running_configs({zebra, ospf6d, bgpd}, own("r1")), want);
}

// What vtysh adds of its own: its host name when no daemon printed it, the domain name, the
// integrated-config line only when vtysh.conf has one.
TEST(VtyshMerge, AddsVtyshsOwnLines) {
  VtyshOwn o;
  o.hostname = "vm";
  o.domainname = "lab.example";
  EXPECT_EQ(merge_running_configs({"frr version 8.4.4\nhostname r1\n"}, o),
            "!\nfrr version 8.4.4\nhostname r1\nhostname vm\ndomainname lab.example\n!\nend\n");
  o.domainname.clear();
  o.integrated = false;
  EXPECT_EQ(merge_running_configs({"hostname vm\n"}, o),
            "!\nhostname vm\nno service integrated-vtysh-config\n!\nend\n");
}

TEST(VtyshMerge, VtyshConfIsReadOnlyWhereTheMergeKnowsItsEffect) {
  auto a = parse_vtysh_conf("! twin\nservice integrated-vtysh-config\n\n", VtyshOwn{});
  ASSERT_TRUE(a);
  EXPECT_EQ(a->integrated, std::optional<bool>(true));
  auto b = parse_vtysh_conf("no service integrated-vtysh-config\n", VtyshOwn{});
  ASSERT_TRUE(b);
  EXPECT_EQ(b->integrated, std::optional<bool>(false));
  EXPECT_FALSE(parse_vtysh_conf("", VtyshOwn{})->integrated.has_value());
  EXPECT_FALSE(parse_vtysh_conf("hostname other\n", VtyshOwn{}));
  EXPECT_FALSE(parse_vtysh_conf("username admin nopassword\n", VtyshOwn{}));
}
