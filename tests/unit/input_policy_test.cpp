// Which host files inputs may name (core/input_policy.hpp): the checkout root, --allow-path,
// symlinks resolved, the size cap, FIFOs and devices.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "support.hpp"
#include "twin/core/input_policy.hpp"

namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;
using twin::InputPolicy;
using twin::InputProblem;
using Kind = InputProblem::Kind;

const std::string kRepo = TWIN_DATA_DIR;
// What a host secret looks like; no message may ever hold it.
const std::string kSecret = "hunter2";

// A scratch tree: checkout/ (a checkout: it holds .git) with its lab in checkout/lab, and
// outside/ beside it, which holds a secret. Removed with its contents.
class Tree {
 public:
  Tree() {
    std::string tmpl = ::testing::TempDir() + "twin-inputs-XXXXXX";
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    root_ = fs::weakly_canonical(tmpl).string();
    fs::create_directories(root_ + "/checkout/.git");
    fs::create_directories(root_ + "/checkout/lab");
    fs::create_directories(root_ + "/outside");
    // A daemons file whose lines twin would quote back if it read them.
    write("outside/secret", kSecret + "=yes\n");
  }
  ~Tree() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  Tree(const Tree&) = delete;
  Tree& operator=(const Tree&) = delete;

  std::string path(const std::string& rel) const { return root_ + "/" + rel; }
  std::string write(const std::string& rel, const std::string& text) const {
    fs::create_directories(fs::path(path(rel)).parent_path());
    std::ofstream(path(rel)) << text;
    return path(rel);
  }
  void link(const std::string& rel, const std::string& target) const {
    fs::create_symlink(target, path(rel));
  }

 private:
  std::string root_;
};

// ---------------------------------------------------------------------------------------
// The checkout root

TEST(CheckoutRoot, IsTheNearestFolderWithGitAboveTheInput) {
  Tree t;
  t.write("checkout/lab/deep/lab.yaml", "x");
  EXPECT_EQ(twin::checkout_root(t.path("checkout/lab/deep/lab.yaml")), t.path("checkout"));
  // A folder input (--configs DIR) starts from itself.
  EXPECT_EQ(twin::checkout_root(t.path("checkout/lab")), t.path("checkout"));
}

TEST(CheckoutRoot, IsTheInputsFolderOutsideACheckout) {
  Tree t;
  t.write("outside/lab.yaml", "x");
  EXPECT_EQ(twin::checkout_root(t.path("outside/lab.yaml")), t.path("outside"));
}

TEST(CheckoutRoot, ASymlinkedFolderInsideACheckoutStartsNoOtherOne) {
  // A pull request can commit a symlink to another checkout on the machine; the root stays
  // the checkout the input lies in, so that one's files are outside.
  Tree t;
  fs::create_directories(t.path("other/.git"));
  t.write("other/lab.yaml", "x");
  t.link("checkout/lab/evil", t.path("other"));
  EXPECT_EQ(twin::checkout_root(t.path("checkout/lab/evil/lab.yaml")), t.path("checkout"));
  auto p = InputPolicy::for_input(t.path("checkout/lab/evil/lab.yaml"));
  auto bad = p.check(t.path("checkout/lab/evil/lab.yaml"), "topology file");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->kind, Kind::kOutside);
}

// ---------------------------------------------------------------------------------------
// The policy

TEST(InputPolicy, AFileUnderTheCheckoutRootIsRead) {
  Tree t;
  std::string conf = t.write("checkout/lab/r1.conf", "hostname r1\n");
  auto p = InputPolicy::for_input(t.path("checkout/lab/lab.yaml"));
  EXPECT_FALSE(p.check(conf, "config file"));
  InputProblem why;
  EXPECT_EQ(p.read(conf, "config file", &why), "hostname r1\n");
  ASSERT_EQ(p.roots().size(), 1u);
  EXPECT_EQ(p.roots()[0].dir, t.path("checkout"));
  EXPECT_EQ(p.roots()[0].why, "the checkout root of lab.yaml");
}

TEST(InputPolicy, AFileOutsideIsRefusedByNameWithTheRootsAndTheFlag) {
  Tree t;
  auto p = InputPolicy::for_input(t.path("checkout/lab/lab.yaml"));
  InputProblem why;
  EXPECT_FALSE(p.read(t.path("outside/secret"), "daemons file", &why));
  EXPECT_EQ(why.kind, Kind::kOutside);
  EXPECT_EQ(why.message, "daemons file '" + t.path("outside/secret") +
                             "' lies outside the folders inputs may name files under: " +
                             t.path("checkout") + " (the checkout root of lab.yaml)");
  EXPECT_EQ(why.hint, "move it under " + t.path("checkout") +
                          ", or allow its folder with --allow-path " + t.path("outside"));
}

TEST(InputPolicy, SymlinksAreResolvedFirst) {
  Tree t;
  t.link("checkout/lab/r1.conf", t.path("outside/secret"));
  auto p = InputPolicy::for_input(t.path("checkout/lab/lab.yaml"));
  InputProblem why;
  EXPECT_FALSE(p.read(t.path("checkout/lab/r1.conf"), "config file", &why));
  EXPECT_EQ(why.kind, Kind::kOutside);
  EXPECT_THAT(why.message, HasSubstr("'" + t.path("checkout/lab/r1.conf") + "' resolves to " +
                                     t.path("outside/secret") + ", outside"));
  // A path that climbs out is outside too, and a link to a folder inside stays inside.
  EXPECT_EQ(p.check(t.path("checkout/lab/../../outside/secret"), "x")->kind, Kind::kOutside);
  t.write("checkout/shared/r2.conf", "!\n");
  t.link("checkout/lab/shared", t.path("checkout/shared"));
  EXPECT_FALSE(p.check(t.path("checkout/lab/shared/r2.conf"), "config file"));
}

TEST(InputPolicy, OutsideIsSaidBeforeWhetherTheFileExists) {
  // Probing the host with names must not tell which files exist there.
  Tree t;
  auto p = InputPolicy::for_input(t.path("checkout/lab/lab.yaml"));
  EXPECT_EQ(p.check(t.path("outside/nope"), "x")->kind, Kind::kOutside);
  EXPECT_EQ(p.check("/etc/shadow", "x")->kind, Kind::kOutside);
  EXPECT_EQ(p.check(t.path("checkout/nope"), "x")->kind, Kind::kMissing);
}

TEST(InputPolicy, AllowPathAddsAFolder) {
  Tree t;
  auto p = InputPolicy::for_inputs({t.path("checkout/lab/lab.yaml")}, {t.path("outside")});
  ASSERT_TRUE(p) << p.error().message;
  InputProblem why;
  EXPECT_EQ(p->read(t.path("outside/secret"), "daemons file", &why), kSecret + "=yes\n");
  EXPECT_EQ(p->where(), t.path("checkout") + " (the checkout root of lab.yaml), " +
                            t.path("outside") + " (--allow-path)");
  auto none = InputPolicy::for_inputs({t.path("checkout/lab/lab.yaml")}, {t.path("nope")});
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().kind, twin::ErrorKind::kUsage);
  EXPECT_EQ(none.error().message, "--allow-path " + t.path("nope") +
                                      ": no such folder; give a folder whose files inputs may "
                                      "name");
}

TEST(InputPolicy, AFifoIsNotARegularFileAndIsNeverOpened) {
  Tree t;
  ASSERT_EQ(::mkfifo(t.path("checkout/lab/r1.conf").c_str(), 0600), 0);
  auto p = InputPolicy::for_input(t.path("checkout/lab/lab.yaml"));
  auto start = std::chrono::steady_clock::now();
  InputProblem why;
  // Opening a FIFO without a writer would block: the refusal comes first.
  EXPECT_FALSE(p.read(t.path("checkout/lab/r1.conf"), "config file", &why));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  EXPECT_EQ(why.kind, Kind::kNotRegular);
  EXPECT_EQ(why.message,
            "config file '" + t.path("checkout/lab/r1.conf") + "' is not a regular file (a FIFO)");
  EXPECT_THAT(why.hint, HasSubstr("regular files"));
}

TEST(InputPolicy, ADeviceIsNotARegularFile) {
  Tree t;
  auto p = InputPolicy::for_inputs({t.path("checkout/lab/lab.yaml")}, {"/dev"});
  ASSERT_TRUE(p);
  auto bad = p->check("/dev/zero", "config file");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->kind, Kind::kNotRegular);
  EXPECT_EQ(bad->message, "config file '/dev/zero' is not a regular file (a character device)");
  auto raw = twin::read_regular_file("/dev/zero");
  ASSERT_FALSE(raw);
  EXPECT_EQ(raw.error().message, "/dev/zero is not a regular file (a character device)");
}

TEST(InputPolicy, FilesOverTheCapAreRefusedWithTheCapAndTheSize) {
  Tree t;
  auto p = InputPolicy::for_input(t.path("checkout/lab/lab.yaml"));
  std::string at_cap = t.write("checkout/lab/at-cap.conf", "");
  fs::resize_file(at_cap, twin::kMaxInputBytes);
  InputProblem why;
  auto text = p.read(at_cap, "config file", &why);
  ASSERT_TRUE(text) << why.message;
  EXPECT_EQ(text->size(), twin::kMaxInputBytes);

  std::string over = t.write("checkout/lab/over.conf", "");
  fs::resize_file(over, twin::kMaxInputBytes + 1);
  EXPECT_FALSE(p.read(over, "config file", &why));
  EXPECT_EQ(why.kind, Kind::kTooLarge);
  EXPECT_EQ(why.message, "config file '" + over +
                             "' is 4.0 MiB (4194305 bytes), over the 4 MiB (4194304 bytes) cap "
                             "on input files");
  auto raw = twin::read_regular_file(over);
  ASSERT_FALSE(raw);
  EXPECT_THAT(raw.error().message, HasSubstr("4194305 bytes"));
  // The API's body cap is the same number.
  EXPECT_EQ(twin::kMaxInputBytes, 4u << 20);
}

}  // namespace
