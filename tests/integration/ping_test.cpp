// ping_many() against real namespaces joined by veth pairs. Every address pinged here lives
// inside the namespaces the test creates (or is unrouted there), so no probe leaves them.
#include "twin/runtime/ping.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/cli_support.hpp"

namespace {

using twin::runtime::ping_many;
using twin::runtime::PingOutcome;
using twin::runtime::PingRequest;
using twin::runtime::PingResult;
using namespace std::chrono_literals;

struct Output {
  int status = -1;
  std::string text;
};

Output run(const std::string& cmd) {
  Output out;
  FILE* f = popen((cmd + " 2>&1").c_str(), "r");
  if (f == nullptr) return out;
  std::array<char, 4096> buf;
  std::size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), f)) > 0) out.text.append(buf.data(), n);
  const int st = pclose(f);
  out.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return out;
}

testing::AssertionResult sh(const std::string& cmd) {
  const Output out = run(cmd);
  if (out.status == 0) return testing::AssertionSuccess();
  return testing::AssertionFailure() << "`" << cmd << "` exited " << out.status << ": " << out.text;
}

PingRequest req(std::string destination, int payload = 56, bool df = false) {
  PingRequest r;
  r.destination = std::move(destination);
  r.payload_bytes = payload;
  r.dont_fragment = df;
  return r;
}

std::string describe(const PingResult& r) {
  return std::string(to_string(r.outcome)) + " mtu=" + std::to_string(r.mtu) +
         " rtt=" + std::to_string(r.rtt_ms) + " detail=" + r.detail;
}

double elapsed_ms(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since)
      .count();
}

// Namespaces a (192.0.2.1 on vab) and b (192.0.2.2 on vba) joined by one veth pair; the routed
// tests add c behind b.
class PingTest : public testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) {
      TWIN_SKIP_WITHOUT("root",
                        "needs root: creates network namespaces and opens raw ICMP sockets");
    }
    static int counter = 0;
    const std::string prefix =
        "twt-ping-" + std::to_string(getpid()) + "-" + std::to_string(++counter);
    a_ = prefix + "-a";
    b_ = prefix + "-b";
    c_ = prefix + "-c";
  }

  void TearDown() override {
    // Deleting a namespace also destroys the veth ends inside it.
    for (auto it = created_.rbegin(); it != created_.rend(); ++it) {
      EXPECT_TRUE(sh("ip netns del " + *it));
    }
    created_.clear();
  }

  testing::AssertionResult add_namespace(const std::string& ns) {
    created_.push_back(ns);  // recorded first, so TearDown also removes a half-made namespace
    if (auto r = sh("ip netns add " + ns); !r) return r;
    // DAD must be off before the links exist, or their link-local addresses stay tentative
    // (unusable) for a second or more.
    return sh("ip netns exec " + ns +
              " sysctl -q -w net.ipv6.conf.default.accept_dad=0 net.ipv6.conf.all.accept_dad=0");
  }

  testing::AssertionResult add_link(const std::string& ns1, const std::string& if1, int mtu1,
                                    const std::string& addr1, const std::string& ns2,
                                    const std::string& if2, int mtu2, const std::string& addr2) {
    for (const auto& cmd : {
             "ip link add " + if1 + " netns " + ns1 + " type veth peer name " + if2 + " netns " +
                 ns2,
             "ip -n " + ns1 + " link set " + if1 + " mtu " + std::to_string(mtu1),
             "ip -n " + ns2 + " link set " + if2 + " mtu " + std::to_string(mtu2),
             "ip -n " + ns1 + " addr add " + addr1 + " dev " + if1,
             "ip -n " + ns2 + " addr add " + addr2 + " dev " + if2,
             "ip -n " + ns1 + " link set " + if1 + " up",
             "ip -n " + ns2 + " link set " + if2 + " up",
             "ip -n " + ns1 + " link set lo up",
             "ip -n " + ns2 + " link set lo up",
         }) {
      if (auto r = sh(cmd); !r) return r;
    }
    return testing::AssertionSuccess();
  }

  // a <-> b over vab/vba with the given MTUs.
  void wire(int mtu_a, int mtu_b) {
    ASSERT_TRUE(add_namespace(a_));
    ASSERT_TRUE(add_namespace(b_));
    ASSERT_TRUE(add_link(a_, "vab", mtu_a, "192.0.2.1/24", b_, "vba", mtu_b, "192.0.2.2/24"));
  }

  // The fe80:: address of `dev`, once usable (not tentative); "" if it never shows up.
  static std::string link_local(const std::string& ns, const std::string& dev) {
    for (int attempt = 0; attempt < 50; ++attempt) {
      const Output out = run("ip -j -n " + ns + " addr show dev " + dev);
      if (out.status == 0) {
        const auto j = nlohmann::json::parse(out.text, nullptr, false);
        if (j.is_array()) {
          for (const auto& link : j) {
            for (const auto& a : link.value("addr_info", nlohmann::json::array())) {
              if (a.value("family", "") == "inet6" && a.value("scope", "") == "link" &&
                  !a.value("tentative", false)) {
                return a.value("local", "");
              }
            }
          }
        }
      }
      std::this_thread::sleep_for(100ms);
    }
    return {};
  }

  std::string a_, b_, c_;
  std::vector<std::string> created_;
};

TEST_F(PingTest, ReplyForNormalPing) {
  ASSERT_NO_FATAL_FAILURE(wire(9000, 9000));
  PingRequest three = req("192.0.2.2");
  three.count = 3;
  const auto res = ping_many(a_, {req("192.0.2.2"), three});
  ASSERT_EQ(res.size(), 2u);
  for (const auto& r : res) {
    EXPECT_EQ(r.outcome, PingOutcome::kReply) << describe(r);
    EXPECT_GE(r.rtt_ms, 0.0);
    EXPECT_LT(r.rtt_ms, 1000.0);
    EXPECT_EQ(r.mtu, 0);
  }
}

TEST_F(PingTest, DontFragmentAtMtuReplies) {
  ASSERT_NO_FATAL_FAILURE(wire(9000, 9000));
  const auto res = ping_many(a_, {req("192.0.2.2", 9000 - 28, true), req("192.0.2.2", 9000 - 28)});
  ASSERT_EQ(res.size(), 2u);
  EXPECT_EQ(res[0].outcome, PingOutcome::kReply) << describe(res[0]);
  EXPECT_EQ(res[1].outcome, PingOutcome::kReply) << describe(res[1]);
}

TEST_F(PingTest, DontFragmentAboveMtuIsTooBig) {
  ASSERT_NO_FATAL_FAILURE(wire(9000, 9000));
  const auto start = std::chrono::steady_clock::now();
  const auto res = ping_many(a_, {req("192.0.2.2", 9000 - 28 + 1, true)});
  ASSERT_EQ(res.size(), 1u);
  EXPECT_EQ(res[0].outcome, PingOutcome::kTooBig) << describe(res[0]);
  EXPECT_EQ(res[0].mtu, 9000) << describe(res[0]);
  EXPECT_EQ(res[0].rtt_ms, -1);
  EXPECT_LT(elapsed_ms(start), 500.0) << "a local EMSGSIZE must not wait for the timeout";
  // Without DF the kernel fragments it, as plain `ping -s 8973` does.
  const auto frag = ping_many(a_, {req("192.0.2.2", 9000 - 28 + 1)});
  EXPECT_EQ(frag[0].outcome, PingOutcome::kReply) << describe(frag[0]);
}

TEST_F(PingTest, NoRouteInsideNamespace) {
  ASSERT_NO_FATAL_FAILURE(wire(1500, 1500));
  const auto start = std::chrono::steady_clock::now();
  // The namespace has only its connected /24: this never leaves it.
  const auto res = ping_many(a_, {req("198.51.100.1")});
  ASSERT_EQ(res.size(), 1u);
  EXPECT_EQ(res[0].outcome, PingOutcome::kNoRoute) << describe(res[0]);
  EXPECT_FALSE(res[0].detail.empty());
  EXPECT_LT(elapsed_ms(start), 500.0);
}

TEST_F(PingTest, UnownedOnLinkAddressTimesOut) {
  ASSERT_NO_FATAL_FAILURE(wire(1500, 1500));
  PingRequest r = req("192.0.2.99");
  r.timeout = 300ms;
  const auto start = std::chrono::steady_clock::now();
  const auto res = ping_many(a_, {r});
  const double took = elapsed_ms(start);
  ASSERT_EQ(res.size(), 1u);
  EXPECT_EQ(res[0].outcome, PingOutcome::kTimeout) << describe(res[0]);
  EXPECT_EQ(res[0].rtt_ms, -1);
  EXPECT_GE(took, 290.0);
  EXPECT_LT(took, 800.0);
}

TEST_F(PingTest, Ipv6LinkLocalWithInterface) {
  ASSERT_NO_FATAL_FAILURE(wire(9000, 9000));
  ASSERT_FALSE(link_local(a_, "vab").empty());
  const std::string peer = link_local(b_, "vba");
  ASSERT_FALSE(peer.empty());
  PingRequest plain = req(peer);
  plain.interface = "vab";
  PingRequest at_mtu = req(peer, 9000 - 48, true);
  at_mtu.interface = "vab";
  PingRequest above = req(peer, 9000 - 48 + 1, true);
  above.interface = "vab";
  PingRequest no_interface = req(peer);
  const auto res = ping_many(a_, {plain, at_mtu, above, no_interface});
  ASSERT_EQ(res.size(), 4u);
  EXPECT_EQ(res[0].outcome, PingOutcome::kReply) << describe(res[0]);
  EXPECT_GE(res[0].rtt_ms, 0.0);
  EXPECT_EQ(res[1].outcome, PingOutcome::kReply) << describe(res[1]);
  EXPECT_EQ(res[2].outcome, PingOutcome::kTooBig) << describe(res[2]);
  EXPECT_EQ(res[2].mtu, 9000) << describe(res[2]);
  EXPECT_EQ(res[3].outcome, PingOutcome::kError) << describe(res[3]);
  EXPECT_NE(res[3].detail.find("interface"), std::string::npos) << res[3].detail;
}

TEST_F(PingTest, MixedRequestsComeBackInRequestOrder) {
  ASSERT_NO_FATAL_FAILURE(wire(9000, 9000));
  const std::string peer = link_local(b_, "vba");
  ASSERT_FALSE(peer.empty());
  ASSERT_FALSE(link_local(a_, "vab").empty());
  PingRequest lost = req("192.0.2.99");
  lost.timeout = 300ms;
  PingRequest v6 = req(peer);
  v6.interface = "vab";
  const std::vector<PingRequest> reqs = {
      lost,
      req("192.0.2.2"),
      req("198.51.100.1"),
      req("192.0.2.2", 9000 - 28 + 1, true),
      v6,
      req("not-an-address"),
      req("192.0.2.2", 9000 - 28, true),
  };
  const auto start = std::chrono::steady_clock::now();
  const auto res = ping_many(a_, reqs);
  const double took = elapsed_ms(start);
  ASSERT_EQ(res.size(), reqs.size());
  const std::vector<PingOutcome> want = {
      PingOutcome::kTimeout, PingOutcome::kReply, PingOutcome::kNoRoute, PingOutcome::kTooBig,
      PingOutcome::kReply,   PingOutcome::kError, PingOutcome::kReply,
  };
  for (std::size_t i = 0; i < res.size(); ++i) {
    EXPECT_EQ(res[i].outcome, want[i])
        << "request " << i << " (" << reqs[i].destination << "): " << describe(res[i]);
  }
  EXPECT_EQ(res[3].mtu, 9000);
  // Concurrent: the whole batch costs about the one loser's 300 ms, not a sum of timeouts.
  EXPECT_LT(took, 900.0);
}

TEST_F(PingTest, NonexistentNamespaceIsError) {
  const std::string missing = a_ + "-missing";
  const auto res = ping_many(missing, {req("192.0.2.2"), req("2001:db8::1")});
  ASSERT_EQ(res.size(), 2u);
  for (const auto& r : res) {
    EXPECT_EQ(r.outcome, PingOutcome::kError);
    EXPECT_NE(r.detail.find(missing), std::string::npos) << r.detail;
  }
  EXPECT_TRUE(ping_many(missing, {}).empty());
}

TEST_F(PingTest, MtuMismatchOnOneSideDropsSilently) {
  // a says 9000, b says 1500: b's veth drops frames above its MTU without any ICMP, which is
  // why the harness checks MTU with DF pings at all.
  ASSERT_NO_FATAL_FAILURE(wire(9000, 1500));
  PingRequest big_from_a = req("192.0.2.2", 9000 - 28, true);
  big_from_a.timeout = 400ms;
  const auto from_a = ping_many(a_, {req("192.0.2.2"), big_from_a});
  ASSERT_EQ(from_a.size(), 2u);
  EXPECT_EQ(from_a[0].outcome, PingOutcome::kReply) << describe(from_a[0]);
  EXPECT_EQ(from_a[1].outcome, PingOutcome::kTimeout) << describe(from_a[1]);
  const auto from_b =
      ping_many(b_, {req("192.0.2.1", 1500 - 28, true), req("192.0.2.1", 9000 - 28, true)});
  ASSERT_EQ(from_b.size(), 2u);
  EXPECT_EQ(from_b[0].outcome, PingOutcome::kReply) << describe(from_b[0]);
  EXPECT_EQ(from_b[1].outcome, PingOutcome::kTooBig) << describe(from_b[1]);
  EXPECT_EQ(from_b[1].mtu, 1500);
}

TEST_F(PingTest, SourceAndInterfaceBinding) {
  ASSERT_NO_FATAL_FAILURE(wire(1500, 1500));
  PingRequest bound = req("192.0.2.2");
  bound.source = "192.0.2.1";
  bound.interface = "vab";
  PingRequest foreign_source = req("192.0.2.2");
  foreign_source.source = "192.0.2.77";
  PingRequest mixed_family = req("192.0.2.2");
  mixed_family.source = "2001:db8::1";
  PingRequest no_such_interface = req("192.0.2.2");
  no_such_interface.interface = "nosuchif0";
  PingRequest bad_count = req("192.0.2.2");
  bad_count.count = 0;
  const auto res = ping_many(
      a_, {bound, foreign_source, mixed_family, no_such_interface, bad_count, req("", 56)});
  ASSERT_EQ(res.size(), 6u);
  EXPECT_EQ(res[0].outcome, PingOutcome::kReply) << describe(res[0]);
  for (std::size_t i = 1; i < res.size(); ++i) {
    EXPECT_EQ(res[i].outcome, PingOutcome::kError) << i << ": " << describe(res[i]);
    EXPECT_FALSE(res[i].detail.empty()) << i;
  }
}

TEST_F(PingTest, EmptyNameUsesCallersNamespace) {
  ASSERT_NO_FATAL_FAILURE(wire(1500, 1500));
  // Run the caller on a thread that has itself joined namespace a, so the probe stays inside.
  std::vector<PingResult> res;
  std::string failure;
  std::thread caller([&] {
    const int fd = open(("/run/netns/" + a_).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0 || setns(fd, CLONE_NEWNET) != 0) {
      failure = "cannot enter " + a_;
      if (fd >= 0) close(fd);
      return;
    }
    close(fd);
    res = ping_many("", {req("192.0.2.2")});
  });
  caller.join();
  ASSERT_TRUE(failure.empty()) << failure;
  ASSERT_EQ(res.size(), 1u);
  EXPECT_EQ(res[0].outcome, PingOutcome::kReply) << describe(res[0]);
}

// a --(9000)-- b --(1500)-- c with b and c routing, so errors come from a router, through
// the error queue, instead of from a's own kernel. Unreachable from b: 203.0.113.0/25 and
// 2001:db8:3::/64 (b has no route). Looping between b and c until the hop limit runs out:
// 203.0.113.128/25 and 2001:db8:4::/64. (A loop through a itself would not do: a drops its own
// packets coming back as martians.)
class RoutedPingTest : public PingTest {
 protected:
  void route_through_b() {
    ASSERT_NO_FATAL_FAILURE(wire(9000, 9000));
    ASSERT_TRUE(add_namespace(c_));
    ASSERT_TRUE(add_link(b_, "vbc", 1500, "198.51.100.2/24", c_, "vcb", 1500, "198.51.100.1/24"));
    for (const auto& cmd : {
             "ip -n " + a_ + " addr add 2001:db8:1::1/64 dev vab",
             "ip -n " + b_ + " addr add 2001:db8:1::2/64 dev vba",
             "ip -n " + b_ + " addr add 2001:db8:2::2/64 dev vbc",
             "ip -n " + c_ + " addr add 2001:db8:2::1/64 dev vcb",
             "ip netns exec " + b_ + " sysctl -q -w net.ipv4.ip_forward=1" +
                 " net.ipv6.conf.all.forwarding=1",
             "ip netns exec " + c_ + " sysctl -q -w net.ipv4.ip_forward=1" +
                 " net.ipv6.conf.all.forwarding=1",
             "ip -n " + a_ + " route add 198.51.100.0/24 via 192.0.2.2",
             "ip -n " + a_ + " route add 203.0.113.0/24 via 192.0.2.2",
             "ip -n " + b_ + " route add 203.0.113.128/25 via 198.51.100.1",
             "ip -n " + c_ + " route add 192.0.2.0/24 via 198.51.100.2",
             "ip -n " + c_ + " route add 203.0.113.128/25 via 198.51.100.2",
             "ip -n " + a_ + " route add 2001:db8::/32 via 2001:db8:1::2",
             "ip -n " + b_ + " route add 2001:db8:4::/64 via 2001:db8:2::1",
             "ip -n " + c_ + " route add 2001:db8:1::/64 via 2001:db8:2::2",
             "ip -n " + c_ + " route add 2001:db8:4::/64 via 2001:db8:2::2",
         }) {
      ASSERT_TRUE(sh(cmd));
    }
  }
};

TEST_F(RoutedPingTest, Ipv4RouterErrors) {
  ASSERT_NO_FATAL_FAILURE(route_through_b());
  const auto res = ping_many(a_, {
                                     req("198.51.100.1"),
                                     req("198.51.100.1", 9000 - 28, true),
                                     req("198.51.100.1", 9000 - 28),
                                     req("203.0.113.1"),
                                     req("203.0.113.129"),
                                 });
  ASSERT_EQ(res.size(), 5u);
  EXPECT_EQ(res[0].outcome, PingOutcome::kReply) << describe(res[0]);
  EXPECT_EQ(res[1].outcome, PingOutcome::kTooBig) << describe(res[1]);
  EXPECT_EQ(res[1].mtu, 1500) << describe(res[1]);
  EXPECT_NE(res[1].detail.find("192.0.2.2"), std::string::npos) << res[1].detail;
  EXPECT_EQ(res[2].outcome, PingOutcome::kReply) << "b fragments without DF: " << describe(res[2]);
  EXPECT_EQ(res[3].outcome, PingOutcome::kNoRoute) << describe(res[3]);
  EXPECT_NE(res[3].detail.find("192.0.2.2"), std::string::npos) << res[3].detail;
  EXPECT_EQ(res[4].outcome, PingOutcome::kNoRoute) << describe(res[4]);
  EXPECT_NE(res[4].detail.find("time exceeded"), std::string::npos) << res[4].detail;

  // a now knows the path MTU, so the next DF probe fails locally with the learned value.
  const auto again = ping_many(a_, {req("198.51.100.1", 9000 - 28, true)});
  EXPECT_EQ(again[0].outcome, PingOutcome::kTooBig) << describe(again[0]);
  EXPECT_EQ(again[0].mtu, 1500) << describe(again[0]);
}

TEST_F(RoutedPingTest, Ipv6RouterErrors) {
  ASSERT_NO_FATAL_FAILURE(route_through_b());
  // IPv6 routers never fragment: without DF the first big echo draws packet-too-big too, and
  // only a later echo, which a fragments to the learned path MTU, gets through.
  PingRequest retried = req("2001:db8:2::1", 9000 - 48);
  retried.count = 2;
  const auto res = ping_many(a_, {
                                     req("2001:db8:2::1"),
                                     req("2001:db8:2::1", 9000 - 48, true),
                                     retried,
                                     req("2001:db8:3::1"),
                                     req("2001:db8:4::1"),
                                 });
  ASSERT_EQ(res.size(), 5u);
  EXPECT_EQ(res[0].outcome, PingOutcome::kReply) << describe(res[0]);
  EXPECT_EQ(res[1].outcome, PingOutcome::kTooBig) << describe(res[1]);
  EXPECT_EQ(res[1].mtu, 1500) << describe(res[1]);
  EXPECT_NE(res[1].detail.find("2001:db8:1::2"), std::string::npos) << res[1].detail;
  EXPECT_EQ(res[2].outcome, PingOutcome::kReply) << describe(res[2]);
  EXPECT_EQ(res[3].outcome, PingOutcome::kNoRoute) << describe(res[3]);
  EXPECT_NE(res[3].detail.find("2001:db8:1::2"), std::string::npos) << res[3].detail;
  EXPECT_EQ(res[4].outcome, PingOutcome::kNoRoute) << describe(res[4]);
  EXPECT_NE(res[4].detail.find("time exceeded"), std::string::npos) << res[4].detail;
}

TEST(PingOutcomeText, Names) {
  EXPECT_STREQ(to_string(PingOutcome::kReply), "reply");
  EXPECT_STREQ(to_string(PingOutcome::kTimeout), "timeout");
  EXPECT_STREQ(to_string(PingOutcome::kNoRoute), "no-route");
  EXPECT_STREQ(to_string(PingOutcome::kTooBig), "too-big");
  EXPECT_STREQ(to_string(PingOutcome::kError), "error");
}

}  // namespace
