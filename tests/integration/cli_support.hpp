#pragma once
// Shared by the integration tests: run the real `twin` CLI, name labs uniquely, and find
// anything a lab left behind (namespace, run folder, cgroup, process).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace twin_it {

namespace fs = std::filesystem;
using nlohmann::json;

inline const std::string kTwin = TWIN_BINARY;
inline const std::string kRepo = fs::path(TWIN_TEST_DATA).parent_path().parent_path().string();

struct CmdResult {
  int code = -1;
  std::string out;
  std::string err;
};

// Runs a shell command line; captures stdout and stderr separately.
inline CmdResult sh(const std::string& cmd) {
  char errpath[] = "/tmp/twin-it-err-XXXXXX";
  int fd = mkstemp(errpath);
  close(fd);
  CmdResult r;
  FILE* p = popen((cmd + " 2>" + errpath).c_str(), "r");
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  int st = pclose(p);
  r.code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  std::ifstream e(errpath);
  std::stringstream ss;
  ss << e.rdbuf();
  r.err = ss.str();
  unlink(errpath);
  return r;
}

inline CmdResult twin(const std::string& args) { return sh(kTwin + " " + args); }

inline std::string unique_lab(const std::string& base) {
  static int n = 0;
  return "twt" + std::to_string(getpid() % 100000) + base + std::to_string(n++);
}

// Everything a lab can leave behind, as a list of findings (empty = clean).
inline std::vector<std::string> leftovers(const std::string& lab) {
  std::vector<std::string> found;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/run/netns", ec))
    if (e.path().filename().string().rfind("tw-" + lab + "-", 0) == 0 ||
        e.path().filename().string() == "tw-" + lab + ".mgmt")
      found.push_back("netns " + e.path().filename().string());
  // A management network's nftables table (its veth goes with its namespace).
  if (sh("nft list tables 2>/dev/null").out.find("twin_mgmt_" + lab + "\n") != std::string::npos)
    found.push_back("nftables table twin_mgmt_" + lab);
  if (fs::exists("/run/twin/" + lab)) found.push_back("dir /run/twin/" + lab);
  for (const char* cg : {"/sys/fs/cgroup/unified/twin/", "/sys/fs/cgroup/twin/"})
    if (fs::exists(std::string(cg) + lab)) found.push_back(std::string("cgroup ") + cg + lab);
  // Processes whose command line mentions the lab's run folder, unless zombies awaiting their
  // reaper (they hold no resources).
  std::string marker = "/run/twin/" + lab + "/";
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    std::string pid = e.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream cmd(e.path() / "cmdline");
    std::string c((std::istreambuf_iterator<char>(cmd)), {});
    if (c.find(marker) == std::string::npos) continue;
    std::ifstream stat(e.path() / "stat");
    std::string s;
    std::getline(stat, s);
    auto close = s.rfind(')');
    if (close != std::string::npos && close + 2 < s.size() && s[close + 2] == 'Z') continue;
    found.push_back("process " + pid);
  }
  // Containers labelled with the lab (container nodes), found the way `down` finds them.
  if (fs::exists("/usr/bin/podman")) {
    auto ps =
        sh("env CONTAINERS_CONF=/var/lib/twin/podman/containers.conf podman ps --all "
           "--quiet --filter label=org.twin.lab=" +
           lab);
    std::istringstream ids(ps.out);
    for (std::string id; ids >> id;) found.push_back("container " + id);
  }
  return found;
}

inline json validate(const std::string& lab, const std::string& only, int converge_s) {
  auto r = twin("validate --lab " + lab + " --json --only " + only + " --converge-timeout " +
                std::to_string(converge_s));
  EXPECT_TRUE(r.code == 0 || r.code == 1) << r.err;
  try {
    return json::parse(r.out);
  } catch (...) {
    ADD_FAILURE() << "validate printed no JSON: " << r.out << r.err;
    return json::object();
  }
}

// Results of one validator test that did not pass.
inline std::vector<json> failures(const json& report, const std::string& validator, int test) {
  std::vector<json> out;
  for (const auto& r : report.value("results", json::array()))
    if (r["validator"] == validator && r["test"] == test && r["status"] != "passed")
      out.push_back(r);
  return out;
}

inline bool root() { return geteuid() == 0; }

// What a test can need from the machine beyond the build: root (namespaces, FRR), vm (libvirt,
// QEMU, the test-vm image), browser (Chromium, chromedriver, python3-selenium), vrf (the
// kernel's VRF devices). Without one a test skips, saying why; TWIN_REQUIRE lists those a run
// must have (.ci/run: browser,vm, what it installs), and there a missing one is a failure, so
// coverage the CI paid for cannot turn into a quiet skip.
inline const std::vector<std::string> kCapabilities{"root", "vm", "browser", "vrf", "containers"};

// TWIN_REQUIRE's names, split at commas and spaces.
inline std::vector<std::string> required_capabilities() {
  const char* env = std::getenv("TWIN_REQUIRE");
  std::string list = env ? env : "";
  std::replace(list.begin(), list.end(), ',', ' ');
  std::istringstream words(list);
  std::vector<std::string> out;
  for (std::string w; words >> w;) out.push_back(w);
  return out;
}

inline bool known_capability(const std::string& name) {
  return std::find(kCapabilities.begin(), kCapabilities.end(), name) != kCapabilities.end();
}

inline bool required(const std::string& capability) {
  for (const auto& c : required_capabilities())
    if (c == capability) return true;
  return false;
}

// A name in TWIN_REQUIRE that no test knows would require nothing, silently: refuse the run.
class RequiredCapabilitiesKnown : public ::testing::Environment {
 public:
  void SetUp() override {
    for (const auto& c : required_capabilities())
      if (!known_capability(c))
        FAIL() << "TWIN_REQUIRE names '" << c
               << "', which no test knows (they know: " << ::testing::PrintToString(kCapabilities)
               << ")";
  }
};
inline ::testing::Environment* const kRequiredCapabilitiesKnown =
    ::testing::AddGlobalTestEnvironment(new RequiredCapabilitiesKnown);

}  // namespace twin_it

// Skips the test for want of `capability` (one of twin_it::kCapabilities), giving `reason`; fails
// it instead when TWIN_REQUIRE lists the capability. Returns from the calling function, as
// GTEST_SKIP and FAIL do.
#define TWIN_SKIP_WITHOUT(capability, reason)                                               \
  do {                                                                                      \
    const std::string twin_capability_ = (capability);                                      \
    const std::string twin_reason_ = (reason);                                              \
    if (!::twin_it::known_capability(twin_capability_)) {                                   \
      FAIL() << "TWIN_SKIP_WITHOUT: unknown capability " << twin_capability_;               \
    } else if (::twin_it::required(twin_capability_)) {                                     \
      FAIL() << "required capability " << twin_capability_ << " missing: " << twin_reason_; \
    } else {                                                                                \
      GTEST_SKIP() << twin_reason_;                                                         \
    }                                                                                       \
  } while (0)

namespace twin_it {

// tests/integration/browser_check.py, run with Debian's python3 (which has python3-selenium,
// unlike whatever python3 is first on PATH).
inline std::string browser_check() {
  return "/usr/bin/python3 " + kRepo + "/tests/integration/browser_check.py";
}
// What the browser check said is missing when it exits 77 ({"skip": why}).
inline std::string browser_skip_reason(const CmdResult& r) {
  auto j = json::parse(r.out, nullptr, false);
  return j.is_object() ? j.value("skip", r.out) : r.out + r.err;
}
// Whether the browser stack is installed: "" when it is; else why not (the script's exit 77, or
// no /usr/bin/python3). `broken` is set when the script failed otherwise.
inline std::string browser_missing(std::string* broken) {
  if (!fs::exists("/usr/bin/python3")) return "no /usr/bin/python3";
  auto pre = sh(browser_check() + " --prerequisites");
  if (pre.code == 77) return browser_skip_reason(pre);
  if (pre.code != 0) *broken = pre.out + pre.err;
  return "";
}

}  // namespace twin_it

// Skips the calling test, as TWIN_SKIP_WITHOUT("browser", ...) does, when the browser stack is
// not installed; fails it when the check itself is broken.
#define TWIN_SKIP_WITHOUT_BROWSER()                                                            \
  do {                                                                                         \
    std::string twin_broken_;                                                                  \
    const std::string twin_why_ = ::twin_it::browser_missing(&twin_broken_);                   \
    if (!twin_why_.empty()) TWIN_SKIP_WITHOUT("browser", twin_why_);                           \
    ASSERT_TRUE(twin_broken_.empty()) << "browser_check.py --prerequisites: " << twin_broken_; \
  } while (0)

namespace twin_it {

// How many results each (validator, test) has in a report, whatever their status.
inline std::map<std::pair<std::string, int>, int> result_counts(const json& report) {
  std::map<std::pair<std::string, int>, int> n;
  for (const auto& r : report.value("results", json::array())) n[{r["validator"], r["test"]}]++;
  return n;
}

// `twin down` of `lab` succeeds and leaves nothing of it behind.
inline void expect_down_clean(const std::string& lab) {
  auto down = twin("down --lab " + lab);
  EXPECT_EQ(down.code, 0) << down.err;
  EXPECT_EQ(leftovers(lab), std::vector<std::string>{});
}

// Takes `lab` down when the test ends however it ends (a failed ASSERT returns early), so a
// failing test leaves nothing running; `twin down` of a lab already down is a no-op.
struct LabGuard {
  std::string lab;
  ~LabGuard() {
    if (!lab.empty()) (void)twin("down --lab " + lab);
  }
};

// A lab shared by a test suite's tests: up once from `topology` (relative to topologies/), down
// once, nothing left behind. Tests that change it restore it (the gate's rollback).
struct SharedLab {
  std::string lab;
  bool up_ok = false;
  std::string up_out;  // what `up` printed, stdout then stderr
  void up(const std::string& topology, const std::string& tag) {
    if (!root()) return;
    lab = unique_lab(tag);
    auto r = twin("up " + kRepo + "/topologies/" + topology + " --name " + lab);
    up_ok = r.code == 0;
    up_out = r.out + r.err;
    if (!up_ok) {
      std::cerr << tag << " lab did not come up: " << r.err;
      return;
    }
    // `up` returns once daemons run; routes (ECMP after an OSPF DR election) may still be
    // moving. Every suite's first test starts from a settled lab, whichever runs first.
    auto v = twin("validate --lab " + lab + " --json --converge-timeout 90");
    if (v.code != 0) std::cerr << tag << " lab did not settle to a passing validation\n";
  }
  void down() {
    if (!lab.empty()) expect_down_clean(lab);
  }
  void require() const {
    if (!root()) TWIN_SKIP_WITHOUT("root", "needs root (network namespaces, FRR)");
    ASSERT_TRUE(up_ok) << "the shared " << lab << " lab did not come up";
  }
};

// A test suite over one SharedLab: `Lab` names it (static constexpr const char* kTopology,
// kTag); `Base` is ::testing::Test or ::testing::TestWithParam<...>.
template <class Lab, class Base = ::testing::Test>
class SharedLabSuite : public Base {
 protected:
  static void SetUpTestSuite() { shared_.up(Lab::kTopology, Lab::kTag); }
  static void TearDownTestSuite() { shared_.down(); }
  void SetUp() override { shared_.require(); }
  static inline SharedLab shared_;
};

// Polls until `pred` holds (a seeded fault has propagated) or 20 s pass. Without it, a
// validator could pass on its first attempt before the fault reaches the node it looks at.
inline bool eventually(const std::function<bool()>& pred) {
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < until) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

// A `twin serve` a test started (its PID recorded: stopped by exactly that PID), listening
// where `start`'s options say; `port` is the one it printed it serves on.
struct Server {
  int pid = -1;
  int port = 0;
  std::string token;  // the one the server made (printed in its address), "" with --token-file
  std::string log;
  std::string start(const std::vector<std::string>& extra) {
    static int started = 0;  // one log per server: a second must not read the first's line
    log =
        "/tmp/twin-serve-it-" + std::to_string(getpid()) + "-" + std::to_string(++started) + ".log";
    pid = fork();
    if (pid == 0) {
      int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(fd, 2);
      std::vector<std::string> args{kTwin, "serve"};
      args.insert(args.end(), extra.begin(), extra.end());
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(kTwin.c_str(), argv.data());
      _exit(127);
    }
    // The bound port, from the line the server prints once it listens.
    std::regex re("serving http://127\\.0\\.0\\.1:([0-9]+)/");
    for (int i = 0; i < 100; ++i) {
      std::ifstream in(log);
      std::string text((std::istreambuf_iterator<char>(in)), {});
      std::smatch m;
      if (std::regex_search(text, m, re)) {
        port = std::stoi(m[1]);
        std::smatch t;
        if (std::regex_search(text, t, std::regex("/\\?token=([0-9a-f]+)"))) token = t[1];
        return "";
      }
      int st = 0;
      if (waitpid(pid, &st, WNOHANG) == pid) {
        pid = -1;
        return text;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return "no listening line";
  }
  void stop() {
    if (pid > 0) {
      kill(pid, SIGTERM);
      int st = 0;
      waitpid(pid, &st, 0);
      pid = -1;
    }
  }
  ~Server() { stop(); }
};

}  // namespace twin_it
