// FRR commands that name a file of the machine (topology/host_paths.hpp): found as FRR's CLI
// reads them (abbreviated, under `no` and `do`), redirected into the node's run folder, and
// the note that says so.
#include "twin/topology/host_paths.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "twin/topology/frr_conf.hpp"

using ::testing::HasSubstr;
using twin::topology::find_host_paths;
using twin::topology::redirect_host_paths;

namespace {

TEST(HostPaths, EveryCommandThatNamesAFileOfTheMachine) {
  const std::string text =
      "frr version 8.4.4\n"
      "log file /var/log/frr/bgpd.log informational\n"
      "log filtered-file /etc/cron.d/x\n"
      "dump bgp all /tmp/dump-%Y.mrt 60\n"
      "banner motd file /etc/shadow\n"
      "router bgp 65000\n"
      " output file /root/.ssh/authorized_keys\n"
      "exit\n"
      "do copy /etc/passwd running-config\n"
      "rpki\n"
      " rpki cache 10.0.0.9 22 admin /root/.ssh/id_rsa /etc/ssh/known preference 1\n"
      "exit\n";
  auto uses = find_host_paths(text);
  ASSERT_EQ(uses.size(), 8u);
  EXPECT_EQ(uses[0].line, 2);
  EXPECT_EQ(uses[0].command, "log file");
  EXPECT_EQ(uses[0].path, "/var/log/frr/bgpd.log");
  EXPECT_TRUE(uses[0].writes);
  EXPECT_EQ(uses[1].command, "log filtered-file");
  EXPECT_EQ(uses[2].command, "dump bgp");
  EXPECT_EQ(uses[2].path, "/tmp/dump-%Y.mrt");
  EXPECT_EQ(uses[3].command, "banner motd file");
  EXPECT_FALSE(uses[3].writes);  // read: its content would be shown to every vty
  EXPECT_EQ(uses[4].command, "output file");
  EXPECT_EQ(uses[4].line, 7);
  EXPECT_EQ(uses[5].command, "copy");
  EXPECT_EQ(uses[5].path, "/etc/passwd");
  EXPECT_EQ(uses[6].path, "/root/.ssh/id_rsa");
  EXPECT_EQ(uses[7].path, "/etc/ssh/known");
}

TEST(HostPaths, AbbreviationsAsFrrTakesThemAndNothingElse) {
  // Unique prefixes FRR accepts: found.
  auto a = find_host_paths("lo file /x\nno log fi /y\ndu bgp updates /z\nou f /w\nban motd f /v\n");
  ASSERT_EQ(a.size(), 4u);
  EXPECT_EQ(a[0].path, "/x");
  // `log fi` is ambiguous (file, filtered-file): FRR refuses it, nothing to redirect.
  EXPECT_EQ(a[1].path, "/z");
  EXPECT_EQ(a[2].path, "/w");
  EXPECT_EQ(a[3].path, "/v");
  // Not file commands: `log facility`, `log syslog`, `copy running-config startup-config`,
  // a neighbor named like a path, comments.
  EXPECT_TRUE(find_host_paths("log facility local7\nlog syslog informational\n"
                              "copy running-config startup-config\n"
                              "! log file /etc/x\n neighbor /x remote-as 1\n")
                  .empty());
  // rpki over TCP names no key.
  EXPECT_TRUE(find_host_paths(" rpki cache 10.0.0.9 3323 preference 1\n").empty());
}

TEST(HostPaths, RedirectedIntoTheFolderLineForLine) {
  std::vector<twin::topology::HostPath> done;
  const std::string folder = "/run/twin/lab/r1/files";
  auto out = redirect_host_paths(
      "hostname r1\nlog file debugging debugging\n!\ndump bgp all ../../etc/x\n"
      "log file /run/twin/lab/r1/files/kept.log\n",
      folder, &done);
  EXPECT_EQ(out,
            "hostname r1\nlog file /run/twin/lab/r1/files/debugging debugging\n!\n"
            "dump bgp all /run/twin/lab/r1/files/.._.._etc_x\n"
            "log file /run/twin/lab/r1/files/kept.log\n");
  ASSERT_EQ(done.size(), 2u);  // the one already inside is kept as it is
  EXPECT_EQ(done[0].path, "debugging");
  EXPECT_EQ(twin::topology::redirected_path(folder, "/var/log/frr/bgpd.log"),
            folder + "/var_log_frr_bgpd.log");
  EXPECT_EQ(twin::topology::redirected_path(folder, ".."), folder + "/file..");
  EXPECT_THAT(twin::topology::redirect_text(done[1], folder),
              HasSubstr("`dump bgp ../../etc/x` writes " + folder + "/.._.._etc_x instead"));
  // Nothing to redirect: the text comes back unchanged, its last line without a newline too.
  EXPECT_EQ(redirect_host_paths("hostname r1", folder, nullptr), "hostname r1");
}

TEST(HostPaths, AnOwnConfigKnowsItsHostPaths) {
  auto c = twin::topology::parse_frr_conf("log file /var/log/frr/r1.log\n", "r1.conf");
  ASSERT_EQ(c.host_paths.size(), 1u);
  EXPECT_EQ(c.host_paths[0].line, 1);
}

}  // namespace
