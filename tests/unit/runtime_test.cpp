// Unit tests for the FRR runtime helpers that replaced processes: the per-daemon split of a
// generated config (what each daemon reads with -f), the fd ceiling, the vty socket client
// against an in-process stand-in for a daemon, and the `ip` arguments served over netlink.
#include <gtest/gtest.h>
#include <linux/if_link.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>

#include "support.hpp"
#include "twin/drivers/frr_node.hpp"
#include "twin/plan/plan.hpp"
#include "twin/proc/runner.hpp"
#include "twin/runtime/frr.hpp"
#include "twin/runtime/frr_check.hpp"
#include "twin/runtime/frr_config.hpp"
#include "twin/runtime/ndisc.hpp"
#include "twin/runtime/netlink.hpp"
#include "twin/runtime/vty.hpp"
#include "twin/topology/loader.hpp"

namespace {

twin::plan::Plan clos() {
  twin::Diagnostics d;
  auto t =
      twin::topology::load_topology(std::string(TWIN_DATA_DIR) + "/topologies/clos-2x4.yaml", d);
  if (!t) throw std::runtime_error(d.format());
  return twin::plan::make_plan(*t);
}

TEST(SplitConfig, GeneratedLeafConfigGoesToZebraAndBgpd) {
  auto p = clos();
  const auto& leaf = *p.find("leaf1");
  auto parts = twin::runtime::split_generated_config(leaf.frr_config, leaf.daemons);
  ASSERT_TRUE(parts.has_value());
  ASSERT_EQ(parts->size(), 2u);  // zebra, bgpd: a generated leaf has no static route
  const auto& z = parts->at("zebra");
  const auto& b = parts->at("bgpd");
  EXPECT_EQ(z.rfind("hostname leaf1\nip forwarding\nipv6 forwarding\n", 0), 0u) << z;
  EXPECT_NE(z.find("interface lo\n ip address 10.255.1.1/32\n"), std::string::npos) << z;
  EXPECT_NE(z.find("interface swp1\n ipv6 nd ra-interval 10\n no ipv6 nd suppress-ra\nexit\n"),
            std::string::npos)
      << z;
  EXPECT_EQ(z.find("router bgp"), std::string::npos);
  EXPECT_EQ(b.rfind("hostname leaf1\nrouter bgp 65101\n", 0), 0u) << b;
  EXPECT_NE(b.find(" neighbor swp1 interface peer-group fabric\n"), std::string::npos) << b;
  EXPECT_NE(b.find("  neighbor fabric activate\n"), std::string::npos) << b;
  EXPECT_EQ(b.substr(b.size() - 5), "exit\n");
  EXPECT_EQ(b.find("\ninterface "), std::string::npos) << "no interface block for bgpd";
  // vtysh's and -F's statements go nowhere.
  for (const auto& [d, text] : *parts) {
    EXPECT_EQ(text.find("frr defaults"), std::string::npos) << d;
    EXPECT_EQ(text.find("service integrated"), std::string::npos) << d;
  }
}

TEST(SplitConfig, EveryLineOfTheGeneratedConfigLandsSomewhere) {
  auto p = clos();
  for (const auto& n : p.nodes) {
    if (n.kind != twin::topology::NodeKind::kFrr) continue;
    auto parts = twin::runtime::split_generated_config(n.frr_config, n.daemons);
    ASSERT_TRUE(parts.has_value()) << n.name;
    std::string all;
    for (const auto& [d, text] : *parts) all += text;
    std::istringstream in(n.frr_config);
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty() || line[0] == '!' || line == "end" || line.rfind("frr defaults", 0) == 0 ||
          line == "service integrated-vtysh-config")
        continue;
      EXPECT_NE(all.find(line + "\n"), std::string::npos) << n.name << ": " << line;
    }
  }
}

TEST(SplitConfig, UnknownStatementsOrMissingDaemonsFallBackToVtysh) {
  const std::string base = "hostname r1\ninterface lo\n ip address 10.0.0.1/32\nexit\n";
  std::vector<std::string> all = {"zebra", "bgpd", "staticd"};
  EXPECT_TRUE(twin::runtime::split_generated_config(base, all).has_value());
  EXPECT_FALSE(twin::runtime::split_generated_config(base + "route-map X permit 10\n", all));
  EXPECT_FALSE(twin::runtime::split_generated_config(base + "router ospf\nexit\n", all));
  EXPECT_FALSE(twin::runtime::split_generated_config(base + "router bgp 1\nexit\n", {"zebra"}));
  EXPECT_FALSE(
      twin::runtime::split_generated_config("interface swp1\n ip address 1.2.3.4/24\n", all))
      << "a block without its exit";
  auto s = twin::runtime::split_generated_config(base + "ip route 10.9.0.0/16 Null0\n", all);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->at("staticd"), "hostname r1\nip route 10.9.0.0/16 Null0\n");
}

// RFC 4861 4.1: type 133, code 0, checksum (the kernel's), 4 reserved bytes, no option.
TEST(RouterSolicitation, IsTheEightByteMessageOfRfc4861) {
  const auto m = twin::runtime::router_solicitation();
  EXPECT_EQ(std::vector<uint8_t>(m.begin(), m.end()),
            (std::vector<uint8_t>{133, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(*twin::runtime::solicit_routers({}), 0);  // nothing to send: no socket needed
}

// Solicited on: the ports that carry IPv6 (IPv6 needs an MTU of 1280, RFC 8200 5) and are meant
// to be up, in topology order.
TEST(RouterSolicitation, GoesOutOfThePortsThatCanCarryIpv6) {
  twin::plan::Node n;
  n.name = "leaf1";
  n.interfaces = {{.name = "swp1", .mtu = 9216},
                  {.name = "swp2", .mtu = 1500, .up = false},
                  {.name = "swp3", .mtu = 1279},
                  {.name = "swp4", .mtu = 1280},
                  {.name = "eth0", .mtu = 1500}};
  EXPECT_EQ(twin::drivers::solicitation_ports(n),
            (std::vector<std::string>{"swp1", "swp4", "eth0"}));
  n.interfaces.clear();
  EXPECT_TRUE(twin::drivers::solicitation_ports(n).empty());
}

TEST(FdLimit, GrowsWithInterfaces) {
  auto p = clos();
  EXPECT_EQ(twin::runtime::fd_limit(*p.find("leaf1")), 256 + 4 * 3);   // 2 uplinks + server
  EXPECT_EQ(twin::runtime::fd_limit(*p.find("spine1")), 256 + 4 * 4);  // 4 leaves
  auto argv = twin::runtime::daemon_argv(*p.find("leaf1"), "bgpd", true);
  auto it = std::find(argv.begin(), argv.end(), "--limit-fds");
  ASSERT_NE(it, argv.end());
  EXPECT_EQ(*(it + 1), "268");
  EXPECT_EQ(*(std::find(argv.begin(), argv.end(), "-f") + 1), "/run/twin/clos-2x4/leaf1/bgpd.conf");
  auto argv2 = twin::runtime::daemon_argv(*p.find("leaf1"), "bgpd", false);
  EXPECT_EQ(*(std::find(argv2.begin(), argv2.end(), "-f") + 1), "/dev/null");
}

// A daemon kept in the foreground (FRR without -d) is started detached: run() returns at once
// with its PID, and it is neither our child (a long-running twin would otherwise collect its
// zombie) nor in our session (a Ctrl-C at twin's terminal must not reach a lab's daemon).
TEST(Runner, DetachedProgramIsNotOurChildAndLeadsItsOwnSession) {
  const auto out = std::filesystem::temp_directory_path() /
                   ("twin-detach-test-" + std::to_string(::getpid()) + ".out");
  twin::proc::SystemRunner runner;
  twin::proc::Command c{{"sleep", "30"}};
  c.detach = true;
  c.output_file = out;
  int started = 0;
  c.on_start = [&](int pid) { started = pid; };
  auto r = runner.run(c);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->exit_code, 0);
  ASSERT_GT(r->pid, 0);
  EXPECT_EQ(started, r->pid);
  std::ifstream f("/proc/" + std::to_string(r->pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  ASSERT_NE(stat.find("(sleep)"), std::string::npos) << stat;
  std::istringstream rest(stat.substr(stat.rfind(')') + 2));
  std::string state;
  int ppid = 0, pgrp = 0, session = 0;
  rest >> state >> ppid >> pgrp >> session;
  EXPECT_EQ(session, r->pid);
  EXPECT_EQ(pgrp, r->pid);
  EXPECT_NE(ppid, ::getpid());
  EXPECT_EQ(::waitpid(r->pid, nullptr, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
  ::kill(r->pid, SIGKILL);
  std::filesystem::remove(out);
}

TEST(Runner, DetachedProgramThatCannotStartIsAnErrorAndNeedsAnOutputFile) {
  twin::proc::SystemRunner runner;
  twin::proc::Command c{{"/nonexistent/twin-daemon"}};
  c.detach = true;
  auto r = runner.run(c);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("needs an output file"), std::string::npos)
      << r.error().message;
  const auto out = std::filesystem::temp_directory_path() /
                   ("twin-detach-test-" + std::to_string(::getpid()) + "-2.out");
  c.output_file = out;
  r = runner.run(c);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("No such file or directory"), std::string::npos)
      << r.error().message;
  // The child that forked the program was reaped, not left a zombie of this process.
  EXPECT_EQ(::waitpid(-1, nullptr, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
  std::filesystem::remove(out);
}

// A stand-in daemon on a Unix socket: reads one NUL-terminated command, answers `reply` in
// `pieces` writes (to exercise partial reads), then the trailer {0,0,0,status}.
class FakeVty {
 public:
  FakeVty(std::string reply, int status, int pieces, bool answer = true) {
    path_ = std::filesystem::temp_directory_path() /
            ("twin-vty-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++));
    fd_ = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strncpy(a.sun_path, path_.c_str(), sizeof a.sun_path - 1);
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd_, 1) != 0)
      throw std::runtime_error("bind");
    t_ = std::thread([=, this] {
      int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      char ch;
      while (::read(c, &ch, 1) == 1 && ch != '\0') received_ += ch;
      if (answer) {
        std::string out = reply + std::string("\0\0\0", 3) + static_cast<char>(status);
        size_t step = out.size() / static_cast<size_t>(pieces) + 1;
        for (size_t i = 0; i < out.size(); i += step)
          (void)!::write(c, out.data() + i, std::min(step, out.size() - i));
      } else {
        while (::read(c, &ch, 1) > 0) {
        }  // until the client gives up and closes
      }
      ::close(c);
    });
  }
  ~FakeVty() {
    t_.join();
    ::close(fd_);
    ::unlink(path_.c_str());
  }
  std::string path() const { return path_; }
  std::string received_;

 private:
  static inline int counter_ = 0;
  std::string path_;
  int fd_ = -1;
  std::thread t_;
};

TEST(Vty, ReadsAReplyInPiecesUpToTheTrailer) {
  std::string big(200000, 'x');
  FakeVty d("{\"a\":\"" + big + "\"}\n", 0, 7);
  auto r = twin::runtime::vty_command(d.path(), "show bgp summary json",
                                      std::chrono::milliseconds(5000));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->status, 0);
  EXPECT_EQ(r->output, "{\"a\":\"" + big + "\"}\n");
}

TEST(Vty, ReportsFrrStatusAndTheCommandSent) {
  std::string received;
  {
    FakeVty d("% Unknown command: show nothing\n", 2, 1);
    auto r = twin::runtime::vty_command(d.path(), "show nothing", std::chrono::milliseconds(5000));
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->status, 2);
    EXPECT_EQ(r->output, "% Unknown command: show nothing\n");
    received = d.received_;
  }
  EXPECT_EQ(received, "show nothing");
}

TEST(Vty, MissingSocketAndSilentDaemonAreErrors) {
  auto r = twin::runtime::vty_command("/nonexistent/bgpd.vty", "show version",
                                      std::chrono::milliseconds(1000));
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("is the daemon running?"), std::string::npos)
      << r.error().message;
  FakeVty d("", 0, 1, /*answer=*/false);
  auto t = twin::runtime::vty_command(d.path(), "show version", std::chrono::milliseconds(20));
  ASSERT_FALSE(t);
  EXPECT_NE(t.error().message.find("no complete reply within 20 ms"), std::string::npos)
      << t.error().message;
}

// A stand-in daemon process for wait_vty_listening: once told "go" on a pipe it listens on
// `path` (listen) and waits to be killed, or exits at once (!listen). Only async-signal-safe
// calls after fork.
class StartingDaemon {
 public:
  StartingDaemon(const std::string& path, bool listen) {
    if (::pipe(go_) != 0) throw std::runtime_error("pipe");
    pid_ = ::fork();
    if (pid_ == 0) {
      char c;
      if (::read(go_[0], &c, 1) != 1) ::_exit(1);
      if (!listen) ::_exit(0);
      int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
      sockaddr_un a{};
      a.sun_family = AF_UNIX;
      std::strncpy(a.sun_path, path.c_str(), sizeof a.sun_path - 1);
      if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd, 1) != 0)
        ::_exit(2);
      for (;;) ::pause();
    }
  }
  ~StartingDaemon() {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    ::close(go_[0]);
    ::close(go_[1]);
  }
  void go() { (void)!::write(go_[1], "g", 1); }
  int pid() const { return pid_; }
  // wait_vty_listening on it, told "go" at the wait's first cancel check: the socket appears
  // (or the process exits) only once the wait is watching.
  twin::runtime::VtyWait wait_after_go(const std::string& sock,
                                       std::chrono::steady_clock::time_point until) {
    bool told = false;
    return twin::runtime::wait_vty_listening(sock, pid_, until, [&] {
      if (!told) go();
      told = true;
      return false;
    });
  }

 private:
  int go_[2] = {-1, -1};
  int pid_ = -1;
};

TEST(WaitVty, ReturnsOnceTheDaemonListensOrExits) {
  using twin::runtime::VtyWait;
  const auto dir = std::filesystem::temp_directory_path() /
                   ("twin-waitvty-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string sock = (dir / "zebra.vty").string();
  const auto later = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  {
    StartingDaemon d(sock, /*listen=*/true);
    EXPECT_EQ(d.wait_after_go(sock, later), VtyWait::kListening);
    EXPECT_TRUE(twin::runtime::vty_listening(sock));
  }
  std::filesystem::remove(sock);
  {
    StartingDaemon d(sock, /*listen=*/false);
    EXPECT_EQ(d.wait_after_go(sock, later), VtyWait::kExited);
  }
  {
    StartingDaemon d(sock, /*listen=*/true);  // never told to go: alive, not listening
    EXPECT_EQ(twin::runtime::wait_vty_listening(sock, d.pid(), std::chrono::steady_clock::now(),
                                                [] { return false; }),
              VtyWait::kTimedOut);
    EXPECT_EQ(twin::runtime::wait_vty_listening(sock, d.pid(), later, [] { return true; }),
              VtyWait::kCancelled);
  }
  std::filesystem::remove_all(dir);
}

TEST(Netlink, IpArgumentsServedInProcess) {
  using twin::runtime::KernelTable;
  KernelTable t;
  ASSERT_TRUE(twin::runtime::kernel_table_of({"link", "show"}, &t));
  EXPECT_EQ(t, KernelTable::kLinks);
  ASSERT_TRUE(twin::runtime::kernel_table_of({"addr", "show"}, &t));
  EXPECT_EQ(t, KernelTable::kAddresses);
  ASSERT_TRUE(twin::runtime::kernel_table_of({"route", "show"}, &t));
  EXPECT_EQ(t, KernelTable::kRoutes4);
  ASSERT_TRUE(twin::runtime::kernel_table_of({"-6", "route", "show"}, &t));
  EXPECT_EQ(t, KernelTable::kRoutes6);
  EXPECT_FALSE(twin::runtime::kernel_table_of({"-s", "link", "show"}, &t));
  EXPECT_FALSE(twin::runtime::kernel_table_of({"route", "show", "table", "local"}, &t));
}

}  // namespace

// vtysh -C's answer for one file, as FRR 8.4.4 printed it for r1.conf with `ip ospf helo-interval 1`
// on line 10; every other file passes.
class SyntaxRunner final : public twin::proc::ProcessRunner {
 public:
  explicit SyntaxRunner(std::string bad) : bad_(std::move(bad)) {}
  twin::Result<twin::proc::Output> run(const twin::proc::Command& cmd) override {
    std::lock_guard lk(mu);
    files.push_back(cmd.argv.back());
    twin::proc::Output o;
    o.exit_code = 0;
    if (cmd.argv.back() == bad_) {
      o.exit_code = 2;
      o.out = "line 10: % Unknown command[17]:  ip ospf helo-interval 1\n";
    }
    return o;
  }
  std::mutex mu;
  std::vector<std::string> files;

 private:
  std::string bad_;
};

TEST(OwnConfigSyntax, RejectedLineIsADiagnosticAtItsPlaceBeforeAnythingIsCreated) {
  twin::Diagnostics d;
  const std::string dir = std::string(TWIN_DATA_DIR) + "/topologies/ospf-triangle";
  auto t = twin::topology::load_topology(dir + "/lab.yaml", d);
  ASSERT_TRUE(t) << d.format();
  SyntaxRunner runner(dir + "/configs/r1.conf");
  ASSERT_TRUE(twin::runtime::check_own_configs(*t, runner, d));
  // One vtysh -C per own config, hosts have none.
  EXPECT_EQ(runner.files.size(), 3u);
  ASSERT_EQ(d.items().size(), 1u) << d.format();
  const auto& i = d.items()[0];
  EXPECT_EQ(i.file, dir + "/configs/r1.conf");
  EXPECT_EQ(i.line, 10);
  EXPECT_EQ(i.column, 2);  // the command, past the block's indent
  EXPECT_EQ(i.field, "node r1");
  EXPECT_EQ(i.message, "FRR rejects this line: Unknown command: ip ospf helo-interval 1");
}

TEST(OwnConfigSyntax, ComplaintsDropFrrsReturnCodesAndPadding) {
  // `vtysh -C -f` of FRR 8.4.4 on a file with `bogus line` (3) and `ip ospf area` (6).
  auto c = twin::runtime::vtysh_complaints(
      "line 3: % Unknown command[25]:  bogus line\n"
      "line 6: % Command incomplete[17]:  ip ospf area\n");
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0], (std::pair<int, std::string>{3, "Unknown command: bogus line"}));
  EXPECT_EQ(c[1], (std::pair<int, std::string>{6, "Command incomplete: ip ospf area"}));
}

TEST(OwnConfigSyntax, ADaemonFrrDoesNotShipIsRefusedAtItsLine) {
  if (std::filesystem::exists("/usr/lib/frr/sharpd")) GTEST_SKIP() << "this FRR ships sharpd";
  const auto dir = std::filesystem::temp_directory_path() / ("twin-sharpd-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::copy(std::string(TWIN_DATA_DIR) + "/topologies/ospf-triangle", dir,
                        std::filesystem::copy_options::recursive);
  {
    std::ifstream in(dir / "configs/daemons");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    text.replace(text.find("sharpd=no"), 9, "sharpd=yes");
    std::ofstream(dir / "configs/daemons") << text;
  }
  twin::Diagnostics d;
  auto t = twin::topology::load_topology((dir / "ospf-triangle.clab.yml").string(), d);
  ASSERT_TRUE(t) << d.format();
  SyntaxRunner runner("");
  ASSERT_TRUE(twin::runtime::check_own_configs(*t, runner, d));
  ASSERT_EQ(d.items().size(), 1u) << d.format();  // once, for the three routers sharing it
  EXPECT_EQ(d.items()[0].field, "nodes r1, r2, r3");
  EXPECT_EQ(d.items()[0].file, (dir / "configs/daemons").string());
  EXPECT_EQ(d.items()[0].line, 16);
  EXPECT_NE(d.items()[0].message.find("sharpd is switched on, but FRR on this machine does not"),
            std::string::npos)
      << d.format();
  std::filesystem::remove_all(dir);
}

// frr-reload.py colours its log for a terminal; the error twin reports keeps the words only.
TEST(FrrReload, FailureMessageHasNoTerminalColourCodes) {
  struct Failing final : twin::proc::ProcessRunner {
    twin::Result<twin::proc::Output> run(const twin::proc::Command&) override {
      twin::proc::Output o;
      o.exit_code = 1;
      o.err = "\x1b[31m2026-12-04 ERROR: Create the bgp interface first\x1b[0m\n";
      return o;
    }
  } runner;
  twin::plan::Node n;
  n.name = "leaf3";
  n.run_dir = "/nonexistent";
  auto r = twin::runtime::frr_reload(runner, n, "/nonexistent/leaf3.conf", false);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            "node leaf3: frr-reload.py exit 1: 2026-12-04 ERROR: Create the bgp interface first");
}

// A first pass can exit 1 on a line that needed another applied first, yet leave the node as
// the file says: a second pass, with nothing left to apply, succeeds. A test run is not redone.
TEST(FrrReload, AFailedPassIsRunOnceMore) {
  struct FirstFails final : twin::proc::ProcessRunner {
    int runs = 0;
    twin::Result<twin::proc::Output> run(const twin::proc::Command&) override {
      twin::proc::Output o;
      o.exit_code = runs++ == 0 ? 1 : 0;
      return o;
    }
  } runner;
  twin::plan::Node n;
  n.name = "leaf3";
  EXPECT_TRUE(twin::runtime::frr_reload(runner, n, "/nonexistent/leaf3.conf", false));
  EXPECT_EQ(runner.runs, 2);
  runner.runs = 0;
  EXPECT_FALSE(twin::runtime::frr_reload(runner, n, "/nonexistent/leaf3.conf", true));
  EXPECT_EQ(runner.runs, 1);
}

// vtysh -f writes a daemon's "% ..." explanation to stdout and its "line N:" note to stderr; both
// go to one file in the order written, so each explanation is told with its own line.
TEST(VtyshApply, EachRefusalIsToldAtItsOwnLine) {
  struct Vtysh final : twin::proc::ProcessRunner {
    twin::Result<twin::proc::Output> run(const twin::proc::Command& c) override {
      std::ofstream(c.output_file)
          << "% Configure the peer-group first\nline 2: Failure to communicate[13] to bgpd, line: "
             "neighbor 10.9.9.9 peer-group nosuchgroup\n% Peer-group member cannot override "
             "remote-as of peer-group.\nline 3: Failure to communicate[13] to bgpd, line: "
             "neighbor swp1 remote-as 65000\n";
      twin::proc::Output o;
      o.exit_code = 1;
      return o;
    }
  } runner;
  twin::plan::Node n;
  n.name = "leaf1";
  auto r = twin::runtime::vtysh_apply(
      runner, n, "router bgp 65101\n neighbor 10.9.9.9 peer-group nosuchgroup\n neighbor swp1 "
                 "remote-as 65000\n", 14, "change.yaml");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            "leaf1 rejected: change.yaml:15: Configure the peer-group first (Failure to "
            "communicate to bgpd, line: neighbor 10.9.9.9 peer-group nosuchgroup); change.yaml:16: "
            "Peer-group member cannot override remote-as of peer-group. (Failure to communicate "
            "to bgpd, line: neighbor swp1 remote-as 65000)");
}

// A port's counters as the netlink dump gives them take `ip -j -s link show`'s shape (recorded
// from iproute2 6.1 on a shaped veth), so twin status and the traffic report read one format.
TEST(KernelLinks, CountersAreIpDashSLinksStats64) {
  auto recorded = nlohmann::json::parse(
      twin_test::read(std::string(TWIN_TEST_DATA) + "/traffic/ip-link-stats.json"));
  const auto& want = recorded[1]["stats64"];
  rtnl_link_stats64 s{};
  s.rx_bytes = want["rx"]["bytes"], s.rx_packets = want["rx"]["packets"];
  s.rx_errors = want["rx"]["errors"], s.rx_dropped = want["rx"]["dropped"];
  s.rx_over_errors = want["rx"]["over_errors"], s.multicast = want["rx"]["multicast"];
  s.tx_bytes = want["tx"]["bytes"], s.tx_packets = want["tx"]["packets"];
  s.tx_errors = want["tx"]["errors"], s.tx_dropped = want["tx"]["dropped"];
  s.tx_carrier_errors = want["tx"]["carrier_errors"], s.collisions = want["tx"]["collisions"];
  s.rx_crc_errors = 7;  // `ip -s -s` prints it; `ip -s` does not, nor does twin
  EXPECT_EQ(twin::runtime::stats64_json(s), want);
}
