// The sandbox a lab's FRR daemons and vtysh run in (proc::Command::writable): real mount
// namespaces, so root.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/integration/cli_support.hpp"
#include "twin/proc/runner.hpp"

namespace fs = std::filesystem;


// What a lab's daemons and vtysh run in (proc::Command::writable): the whole file system
// read-only but their own folder, so a config line naming a file of this machine cannot write
// it, whatever twin's list of such commands misses.
TEST(Lab, ConfinedProgramsWriteOnlyTheirOwnFolder) {
  if (!twin_it::root()) TWIN_SKIP_WITHOUT("root", "needs root (mount namespaces)");
  const fs::path dir = fs::temp_directory_path() / ("twin-confined-" + std::to_string(getpid()));
  const fs::path outside = fs::temp_directory_path() / ("twin-outside-" + std::to_string(getpid()));
  fs::create_directories(dir);
  twin::proc::SystemRunner runner;
  twin::proc::Command c{
      {"sh", "-c", "echo in > " + (dir / "in").string() + " && echo out > " + outside.string()},
      "",
      std::chrono::seconds(10)};
  c.writable = {dir.string()};
  auto r = runner.run(c);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_NE(r->exit_code, 0);
  EXPECT_NE(r->err.find("Read-only file system"), std::string::npos) << r->err;
  EXPECT_TRUE(fs::exists(dir / "in"));
  EXPECT_FALSE(fs::exists(outside));
  // Kernel interfaces stay usable: /dev/null, and /proc (a daemon's sysctls).
  twin::proc::Command k{{"sh", "-c", "echo x > /dev/null && cat /proc/sys/net/ipv4/ip_forward"},
                        "",
                        std::chrono::seconds(10)};
  k.writable = {dir.string()};
  auto kr = runner.run(k);
  ASSERT_TRUE(kr) << kr.error().message;
  EXPECT_EQ(kr->exit_code, 0) << kr->err;
  // Nothing of it reached this machine's mounts.
  std::ifstream mounts("/proc/self/mountinfo");
  std::string all((std::istreambuf_iterator<char>(mounts)), {});
  EXPECT_EQ(all.find(dir.string()), std::string::npos);
  fs::remove_all(dir);
}
