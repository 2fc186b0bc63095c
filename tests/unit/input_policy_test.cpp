// Which host files inputs may name (core/input_policy.hpp) — the checkout root, --allow-path,
// symlinks resolved, the size cap, FIFOs and devices — and the loaders that apply it: a
// topology, a containerlab file, a change set and a scenario must refuse a file outside by name,
// at the field that names it, without a byte of it in any message.
#include "twin/core/input_policy.hpp"

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
#include "twin/changeset/changeset.hpp"
#include "twin/gate/scenario.hpp"
#include "twin/plan/plan.hpp"
#include "twin/topology/containerlab.hpp"
#include "twin/topology/loader.hpp"

namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;
using twin::Diagnostics;
using twin::InputPolicy;
using twin::InputProblem;
using twin_test::dump;
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

// Every diagnostic's text, as a user would see it.
std::string shown(const Diagnostics& d) { return d.format() + d.format_warnings(); }

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

// ---------------------------------------------------------------------------------------
// The loaders

TEST(InputLoaders, ATopologyNamingAFileOutsideIsRefusedAtTheField) {
  Tree t;
  std::string lab = t.write("checkout/lab/lab.yaml",
                            "version: 1\n"
                            "name: x\n"
                            "nodes:\n"
                            "  r1: {asn: 65001, loopback: 10.0.0.1/32, config: r1.conf,\n"
                            "       daemons-file: " +
                                t.path("outside/secret") +
                                "}\n");
  t.write("checkout/lab/r1.conf", "router bgp 65001\n");
  Diagnostics d;
  EXPECT_FALSE(twin::topology::load_topology(lab, d));
  ASSERT_EQ(d.items().size(), 1u) << dump(d);
  const auto& e = d.items()[0];
  EXPECT_EQ(e.file, lab);
  EXPECT_EQ(e.line, 5);
  EXPECT_EQ(e.column, 22);
  EXPECT_EQ(e.field, "nodes.r1.daemons-file");
  EXPECT_THAT(e.message, HasSubstr("daemons file '" + t.path("outside/secret") + "' lies outside"));
  EXPECT_THAT(e.hint, HasSubstr("--allow-path " + t.path("outside")));
  EXPECT_THAT(shown(d), Not(HasSubstr(kSecret)));

  // Allowed, the file is read: its line is what a message would quote (twin cannot start
  // "hunter2"), which is why it must not be read unless allowed.
  auto allowed = InputPolicy::for_inputs({lab}, {t.path("outside")});
  Diagnostics d2;
  EXPECT_FALSE(twin::topology::load_topology(lab, d2, "", &*allowed));
  EXPECT_THAT(shown(d2), HasSubstr(kSecret));
}

TEST(InputLoaders, ASymlinkedConfigLeadingOutIsRefused) {
  Tree t;
  std::string lab = t.write("checkout/lab/lab.yaml",
                            "version: 1\nname: x\nnodes:\n"
                            "  r1: {asn: 65001, loopback: 10.0.0.1/32, config: r1.conf}\n");
  t.link("checkout/lab/r1.conf", t.path("outside/secret"));
  Diagnostics d;
  EXPECT_FALSE(twin::topology::load_topology(lab, d));
  ASSERT_EQ(d.items().size(), 1u) << dump(d);
  EXPECT_EQ(d.items()[0].field, "nodes.r1.config");
  EXPECT_EQ(d.items()[0].line, 4);
  EXPECT_THAT(d.items()[0].message, HasSubstr("resolves to " + t.path("outside/secret")));
  EXPECT_THAT(shown(d), Not(HasSubstr(kSecret)));
}

TEST(InputLoaders, TheInputItselfMayNotBeALinkOut) {
  // `twin run scenarios/x.yaml` where the pull request made x.yaml a link to a host file.
  Tree t;
  t.link("checkout/lab/lab.yaml", t.path("outside/secret"));
  Diagnostics d;
  EXPECT_FALSE(twin::topology::load_topology(t.path("checkout/lab/lab.yaml"), d));
  ASSERT_EQ(d.items().size(), 1u) << dump(d);
  EXPECT_THAT(d.items()[0].message, HasSubstr("resolves to " + t.path("outside/secret")));
  EXPECT_THAT(shown(d), Not(HasSubstr(kSecret)));
}

TEST(InputLoaders, AFifoNamedByATopologyIsNotARegularFile) {
  Tree t;
  std::string lab = t.write("checkout/lab/lab.yaml",
                            "version: 1\nname: x\nnodes:\n"
                            "  r1: {asn: 65001, loopback: 10.0.0.1/32, config: r1.conf}\n");
  ASSERT_EQ(::mkfifo(t.path("checkout/lab/r1.conf").c_str(), 0600), 0);
  Diagnostics d;
  EXPECT_FALSE(twin::topology::load_topology(lab, d));
  ASSERT_EQ(d.items().size(), 1u) << dump(d);
  EXPECT_THAT(d.items()[0].message, HasSubstr("is not a regular file (a FIFO)"));
  EXPECT_THAT(d.items()[0].message, Not(HasSubstr("does not exist")));
}

TEST(InputLoaders, AnImageProfileByPathMustBeInsideToo) {
  Tree t;
  t.write("outside/img.yaml", "kind: frr\ndaemons: [zebra, " + kSecret + "]\n");
  std::string lab = t.write("checkout/lab/lab.yaml",
                            "version: 1\nname: x\nnodes:\n"
                            "  r1: {asn: 65001, loopback: 10.0.0.1/32, image: " +
                                t.path("outside/img.yaml") + "}\n");
  Diagnostics d;
  EXPECT_FALSE(twin::topology::load_topology(lab, d));
  ASSERT_EQ(d.items().size(), 1u) << dump(d);
  EXPECT_EQ(d.items()[0].field, "nodes.r1.image");
  EXPECT_THAT(d.items()[0].message, HasSubstr("image profile '" + t.path("outside/img.yaml")));
  EXPECT_THAT(shown(d), Not(HasSubstr(kSecret)));
  // The image search path is allowed: the repository's profiles load by name.
  std::string by_name = t.write("checkout/lab/named.yaml",
                                "version: 1\nname: x\nnodes:\n"
                                "  r1: {asn: 65001, loopback: 10.0.0.1/32, image: frr-8.4}\n");
  Diagnostics ok;
  EXPECT_TRUE(twin::topology::load_topology(by_name, ok)) << dump(ok);
}

TEST(InputLoaders, AContainerlabBindOutsideIsRefusedAtTheBind) {
  Tree t;
  t.write("outside/frr.conf", "hostname " + kSecret + "\n");
  std::string clab = t.write("checkout/lab/x.clab.yml",
                             "name: x\n"
                             "topology:\n"
                             "  nodes:\n"
                             "    r1:\n"
                             "      kind: linux\n"
                             "      image: frrouting/frr:v8.4.1\n"
                             "      binds:\n"
                             "        - " +
                                 t.path("outside/frr.conf") + ":/etc/frr/frr.conf\n");
  Diagnostics d;
  EXPECT_FALSE(twin::topology::load_topology(clab, d));
  ASSERT_FALSE(d.items().empty());
  EXPECT_EQ(d.items()[0].line, 8) << dump(d);
  EXPECT_EQ(d.items()[0].field, "topology.nodes.r1.binds[0]");
  EXPECT_THAT(d.items()[0].message, HasSubstr("bound file '" + t.path("outside/frr.conf")));
  EXPECT_THAT(d.items()[0].message, HasSubstr("outside"));
  EXPECT_THAT(shown(d), Not(HasSubstr(kSecret)));
}

const twin::plan::Plan& clos() {
  static const auto p = [] {
    Diagnostics d;
    auto t = twin::topology::load_topology(kRepo + "/topologies/clos-2x4.yaml", d);
    if (!t) throw std::runtime_error(d.format());
    return twin::plan::make_plan(*t);
  }();
  return p;
}

TEST(InputLoaders, AChangeSetNamingAFileOutsideIsRefusedAtTheField) {
  Tree t;
  t.write("outside/leaf1.conf", "hostname " + kSecret + "\n");
  std::string change = t.write("checkout/changes/c.yaml",
                               "version: 1\n"
                               "name: c\n"
                               "steps:\n"
                               "  - name: whole config\n"
                               "    frr: {node: leaf1, replace: ../../outside/leaf1.conf}\n");
  Diagnostics d;
  EXPECT_FALSE(twin::replay::load_change_set(change, clos(), d));
  ASSERT_EQ(d.items().size(), 1u) << dump(d);
  EXPECT_EQ(d.items()[0].line, 5);
  EXPECT_EQ(d.items()[0].field, "steps[0].frr.replace");
  EXPECT_THAT(d.items()[0].message, HasSubstr("lies outside"));
  EXPECT_THAT(shown(d), Not(HasSubstr(kSecret)));
  // With the folder allowed it loads.
  auto allowed = InputPolicy::for_inputs({change}, {t.path("outside")});
  Diagnostics d2;
  EXPECT_TRUE(twin::replay::load_change_set(change, clos(), d2, nullptr, &*allowed)) << dump(d2);
}

TEST(InputLoaders, RenderedConfigsThatLinkOutAreRefused) {
  Tree t;
  t.write("checkout/rendered/leaf2.conf", "hostname leaf2\n");
  t.link("checkout/rendered/leaf1.conf", t.path("outside/secret"));
  Diagnostics d;
  EXPECT_FALSE(twin::replay::change_set_from_configs(t.path("checkout/rendered"), clos(), d));
  ASSERT_EQ(d.items().size(), 1u) << dump(d);
  EXPECT_EQ(d.items()[0].file, t.path("checkout/rendered/leaf1.conf"));
  EXPECT_THAT(d.items()[0].message, HasSubstr("resolves to " + t.path("outside/secret")));
}

TEST(InputLoaders, AScenarioNamingATopologyOutsideIsRefused) {
  Tree t;
  t.write("outside/lab.yaml", "version: 1\nname: " + kSecret + "\n");
  t.write("checkout/changes/c.yaml", "version: 1\nname: c\nsteps: [{name: s, wait: {}}]\n");
  std::string sc = t.write("checkout/scenario.yaml",
                           "version: 1\n"
                           "name: s\n"
                           "topology: " +
                               t.path("outside/lab.yaml") +
                               "\n"
                               "change: changes/c.yaml\n");
  Diagnostics d;
  EXPECT_FALSE(twin::replay::load_scenario(sc, d));
  ASSERT_EQ(d.items().size(), 1u) << dump(d);
  EXPECT_EQ(d.items()[0].line, 3);
  EXPECT_EQ(d.items()[0].field, "topology");
  EXPECT_THAT(d.items()[0].message, HasSubstr("topology file '" + t.path("outside/lab.yaml")));
  EXPECT_THAT(d.items()[0].hint, HasSubstr("--allow-path"));
}

}  // namespace
