// Unit tests for twin/core: IpPrefix (parse, str, network, contains), the mapping of error
// kinds to exit codes (DESIGN.md §3), quoted input escaped for a terminal, and command-line
// numbers checked against their range before conversion.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <stdexcept>
#include <string>

#include "twin/core/diagnostics.hpp"
#include "twin/core/duration.hpp"
#include "twin/core/error.hpp"
#include "twin/core/ip.hpp"
#include "twin/core/util.hpp"

namespace {

using twin::IpPrefix;

IpPrefix must_parse(const std::string& text, bool allow_bare = false) {
  auto p = IpPrefix::parse(text, allow_bare);
  if (!p) throw std::runtime_error("did not parse: " + text);
  return *p;
}

TEST(IpPrefix, ParsesIpv4WithLength) {
  auto p = must_parse("10.0.1.1/24");
  EXPECT_EQ(p.family, 4);
  EXPECT_EQ(p.length, 24);
  EXPECT_EQ(p.bytes[0], 10);
  EXPECT_EQ(p.bytes[1], 0);
  EXPECT_EQ(p.bytes[2], 1);
  EXPECT_EQ(p.bytes[3], 1);
  EXPECT_EQ(p.bytes[4], 0);  // IPv4 uses the first 4 bytes only
  EXPECT_EQ(p.address(), "10.0.1.1");
  EXPECT_EQ(p.str(), "10.0.1.1/24");
  EXPECT_FALSE(p.is_host());
}

TEST(IpPrefix, ParsesIpv6AndPrintsCanonicalText) {
  auto p = must_parse("2001:0db8:0001:0000:0000:0000:0000:0010/64");
  EXPECT_EQ(p.family, 6);
  EXPECT_EQ(p.length, 64);
  EXPECT_EQ(p.address(), "2001:db8:1::10");
  EXPECT_EQ(p.str(), "2001:db8:1::10/64");
  EXPECT_EQ(must_parse("FD00:255::101/128").str(), "fd00:255::101/128");
}

TEST(IpPrefix, BareAddressOnlyWhenAllowed) {
  EXPECT_FALSE(IpPrefix::parse("10.255.0.1").has_value());
  EXPECT_FALSE(IpPrefix::parse("fd00::1").has_value());
  auto v4 = must_parse("10.255.0.1", true);
  EXPECT_EQ(v4.str(), "10.255.0.1/32");
  EXPECT_TRUE(v4.is_host());
  auto v6 = must_parse("fd00::1", true);
  EXPECT_EQ(v6.str(), "fd00::1/128");
  EXPECT_TRUE(v6.is_host());
}

TEST(IpPrefix, BoundaryLengths) {
  EXPECT_EQ(must_parse("0.0.0.0/0").str(), "0.0.0.0/0");
  EXPECT_EQ(must_parse("10.0.0.1/32").length, 32);
  EXPECT_EQ(must_parse("::/0").str(), "::/0");
  EXPECT_EQ(must_parse("fd00::1/128").length, 128);
}

TEST(IpPrefix, RejectsInvalidInput) {
  for (const char* bad : {
           "",                               // nothing
           "/24",                            // no address
           "10.0.1.1/",                      // empty length
           "10.0.1.1/33",                    // too long for IPv4
           "10.0.1.1/-1",                    // negative
           "10.0.1.1/+8",                    // sign
           "10.0.1.1/24x",                   // trailing garbage
           "10.0.1.1/24/8",                  // two slashes
           "10.0.1.1/ 24",                   // space
           "10.0.1/24",                      // three octets
           "10.0.1.256/24",                  // octet out of range
           " 10.0.1.1/24",                   // leading space
           "fd00::1/129",                    // too long for IPv6
           "fd00:::1/64",                    // bad IPv6
           "leaf1/32",                       // a name
           "10.0.1.1/99999999999999999999",  // overflow
       }) {
    EXPECT_FALSE(IpPrefix::parse(bad).has_value()) << bad;
    EXPECT_FALSE(IpPrefix::parse(bad, true).has_value()) << bad;
  }
}

TEST(IpPrefix, NetworkClearsHostBits) {
  EXPECT_EQ(must_parse("10.0.1.10/24").network().str(), "10.0.1.0/24");
  EXPECT_EQ(must_parse("10.0.1.10/23").network().str(), "10.0.0.0/23");
  EXPECT_EQ(must_parse("10.0.1.10/0").network().str(), "0.0.0.0/0");
  EXPECT_EQ(must_parse("10.0.1.10/32").network().str(), "10.0.1.10/32");
  EXPECT_EQ(must_parse("192.168.255.255/17").network().str(), "192.168.128.0/17");
  EXPECT_EQ(must_parse("2001:db8:1::10/64").network().str(), "2001:db8:1::/64");
  EXPECT_EQ(must_parse("2001:db8:1:ffff::1/52").network().str(), "2001:db8:1:f000::/52");
  EXPECT_EQ(must_parse("fd00:255::101/128").network().str(), "fd00:255::101/128");
  EXPECT_EQ(must_parse("fd00::1/0").network().str(), "::/0");
}

TEST(IpPrefix, ContainsComparesUnderTheOuterLength) {
  auto subnet = must_parse("10.0.1.1/24");
  EXPECT_TRUE(subnet.contains(must_parse("10.0.1.10/24")));
  EXPECT_TRUE(subnet.contains(must_parse("10.0.1.255", true)));
  EXPECT_FALSE(subnet.contains(must_parse("10.0.2.1/24")));
  EXPECT_FALSE(subnet.contains(must_parse("10.0.0.255", true)));
  // other's address inside *this, whatever other's length
  EXPECT_TRUE(subnet.contains(must_parse("10.0.1.0/16")));
  EXPECT_FALSE(must_parse("10.0.1.0/24").contains(must_parse("10.0.0.0/8")));
  EXPECT_TRUE(must_parse("0.0.0.0/0").contains(must_parse("192.0.2.1/32")));

  auto v6 = must_parse("2001:db8:1::1/64");
  EXPECT_TRUE(v6.contains(must_parse("2001:db8:1::10/64")));
  EXPECT_TRUE(v6.contains(must_parse("2001:db8:1:0:ffff::1", true)));
  EXPECT_FALSE(v6.contains(must_parse("2001:db8:2::10/64")));

  // Families never contain each other, even ::/0 and 0.0.0.0/0.
  EXPECT_FALSE(must_parse("::/0").contains(must_parse("10.0.0.1/32")));
  EXPECT_FALSE(must_parse("0.0.0.0/0").contains(must_parse("::1/128")));
}

TEST(IpPrefix, EqualityComparesFamilyBytesAndLength) {
  EXPECT_EQ(must_parse("10.0.1.1/24"), must_parse("10.0.1.1/24"));
  EXPECT_NE(must_parse("10.0.1.1/24"), must_parse("10.0.1.1/25"));
  EXPECT_NE(must_parse("10.0.1.1/24"), must_parse("10.0.1.2/24"));
  EXPECT_EQ(must_parse("10.0.1.1", true), must_parse("10.0.1.1/32"));
}

TEST(Error, ExitCodePerKind) {
  using twin::ErrorKind;
  EXPECT_EQ(twin::exit_code(twin::Error{ErrorKind::kUsage, "x"}), 2);
  EXPECT_EQ(twin::exit_code(twin::Error{ErrorKind::kInput, "x"}), 2);
  EXPECT_EQ(twin::exit_code(twin::Error{ErrorKind::kEnvironment, "x"}), 3);
  EXPECT_EQ(twin::exit_code(twin::Error{ErrorKind::kHarness, "x"}), 3);
  EXPECT_EQ(twin::exit_code(twin::Error{ErrorKind::kInterrupted, "x"}), 130);
  EXPECT_EQ(twin::exit_code(twin::usage_error("x")), 2);
  EXPECT_EQ(twin::exit_code(twin::input_error("x")), 2);
  EXPECT_EQ(twin::exit_code(twin::env_error("x")), 3);
  EXPECT_EQ(twin::exit_code(twin::harness_error("x")), 3);
}

TEST(Error, ContextIsPrependedAndKindKept) {
  auto e = twin::env_error("no such file").with_context("starting bgpd").with_context("node leaf1");
  EXPECT_EQ(e.kind, twin::ErrorKind::kEnvironment);
  EXPECT_EQ(e.message, "node leaf1: starting bgpd: no such file");
}

TEST(Error, ResultValueOnErrorThrowsWithTheMessage) {
  twin::Result<int> r = twin::harness_error("ip exited 2");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "ip exited 2");
  try {
    (void)r.value();
    FAIL() << "value() on an error did not throw";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "ip exited 2");
  }
  twin::Result<int> good = 7;
  EXPECT_EQ(good.value(), 7);
}

// ---------------------------------------------------------------------------------------
// Quoted input on a terminal

TEST(Printable, EscapesWhatDrivesATerminal) {
  using twin::printable;
  EXPECT_EQ(printable("\x1b[2J\x1b]0;pwned\x07"), "\\x1b[2J\\x1b]0;pwned\\x07");
  EXPECT_EQ(printable("a\rb\x7f"), "a\\x0db\\x7f");
  EXPECT_EQ(printable("line1\nline2"), "line1\\x0aline2");
  EXPECT_EQ(printable("line1\nline2", true), "line1\nline2");
  EXPECT_EQ(printable("tab\there"), "tab\there");
  // C1: U+009B (CSI) as UTF-8, and a lone 0x9b byte an 8-bit terminal reads as CSI.
  EXPECT_EQ(printable("x\xc2\x9b" "31m"), "x\\u009b31m");
  EXPECT_EQ(printable("x\x9b" "31m"), "x\\x9b31m");
  // Other UTF-8 stays: names, and twin's own dashes.
  EXPECT_EQ(printable("r\xc3\xa9seau \xe2\x80\x94 ok"), "r\xc3\xa9seau \xe2\x80\x94 ok");
  EXPECT_EQ(printable("\xe2\x80"), "\\xe2\\x80");  // a cut sequence
}

TEST(Printable, DiagnosticsQuoteInputEscaped) {
  twin::Diagnostics d;
  d.add({"lab.yaml", 3, 5, "nodes.r\x1b[31m", "unknown node 'x\x1b]8;;http://evil\x07'",
         "did you mean '\x9b'?"});
  std::string out = d.format();
  EXPECT_EQ(out.find('\x1b'), std::string::npos) << out;
  EXPECT_EQ(out.find('\x07'), std::string::npos) << out;
  EXPECT_EQ(out,
            "lab.yaml:3:5: error: nodes.r\\x1b[31m: unknown node 'x\\x1b]8;;http://evil\\x07' "
            "(hint: did you mean '\\x9b'?)\n");
}

// ---------------------------------------------------------------------------------------
// Command-line numbers

TEST(NumberRange, CheckedOnTheTextWithReadableBounds) {
  using twin::number_problem;
  const twin::NumberRange timeout{1, 86400, false, "seconds"};
  EXPECT_EQ(number_problem("300", timeout), "");
  EXPECT_EQ(number_problem("0.5e3", timeout), "");
  EXPECT_EQ(number_problem("1e308", timeout),
            "expected a number from 1 to 86400 seconds, got '1e308'");
  for (const char* bad : {"1e309", "inf", "nan", "-1", "0", "abc", "", "1s", "0x10"})
    EXPECT_EQ(number_problem(bad, timeout),
              std::string("expected a number from 1 to 86400 seconds, got '") + bad + "'")
        << bad;
  const twin::NumberRange parallel{1, 64, true, ""};
  EXPECT_EQ(number_problem("64", parallel), "");
  for (const char* bad : {"65", "1.5", "1e1", "99999999999999999999", "-0x1"})
    EXPECT_EQ(number_problem(bad, parallel),
              std::string("expected a whole number from 1 to 64, got '") + bad + "'")
        << bad;
  // A bound prints as written, never as 300 digits.
  EXPECT_EQ(number_problem("1e8", {0.1, 1e7, false, ""}),
            "expected a number from 0.1 to 10000000, got '1e8'");
}

}  // namespace

// A secret is written with its mode from the start (no moment readable by others), an existing
// file takes the new mode, and a symbolic link in its place is refused, never followed.
TEST(WriteFileMode, CreatesWithTheModeReplacesAndRefusesALink) {
  twin::TempDir dir;
  ASSERT_FALSE(dir.path.empty());
  const std::string f = dir.path + "/secret";
  ASSERT_TRUE(twin::write_file(f, "old\n"));  // 0644 under the usual umask
  ASSERT_TRUE(twin::write_file_mode(f, "new\n", 0600));
  struct stat st {};
  ASSERT_EQ(::stat(f.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(*twin::read_file(f), "new\n");
  const std::string link = dir.path + "/link";
  ASSERT_EQ(::symlink(f.c_str(), link.c_str()), 0);
  auto r = twin::write_file_mode(link, "x", 0600);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find(link), std::string::npos);
  EXPECT_EQ(*twin::read_file(f), "new\n");
}
