// Container nodes (backend container): image profiles, reading podman's JSON and the image
// probe (recorded from twin's images of FRR 7.5.1, 8.4.4 and 10.3 built by
// tools/build-images.sh), each release's daemon command line, the container's `podman run`,
// and the driver's preflight, creation and removal against a fake podman behind the runner.
#include "twin/drivers/container.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>

#include "tests/unit/support.hpp"
#include "twin/core/util.hpp"
#include "twin/drivers/registry.hpp"
#include "twin/plan/images.hpp"
#include "twin/plan/plan.hpp"
#include "twin/runtime/frr.hpp"
#include "twin/state/state.hpp"
#include "twin/topology/image_profile.hpp"
#include "twin/topology/loader.hpp"
#include "twin/validate/result.hpp"
#include "validators/bgp/bgp.hpp"
#include "validators/checks/checks.hpp"

namespace fs = std::filesystem;
using twin::Diagnostics;
using twin_test::dump;
using twin_test::read;

namespace {

const std::string kData = std::string(TWIN_TEST_DATA) + "/podman";

// Three releases in one lab, from the repository's profiles.
const std::string kMixed = R"(version: 1
name: mix
defaults: {image: frr-10}
nodes:
  spine1: {asn: 65000, loopback: 10.255.0.1/32}
  leaf1: {asn: 65101, loopback: 10.255.1.1/32, image: frr-7.5}
  leaf2: {asn: 65102, loopback: 10.255.1.2/32, image: frr-8.4-container}
  leaf3: {asn: 65103, loopback: 10.255.1.3/32, image: frr-8.4}
links:
  - endpoints: [spine1:swp1, leaf1:swp1]
  - endpoints: [spine1:swp2, leaf2:swp1]
  - endpoints: [spine1:swp3, leaf3:swp1]
)";

twin::plan::Plan mixed_plan() {
  Diagnostics d;
  auto t = twin::topology::load_topology_text(kMixed, "mix.yaml", "", d);
  EXPECT_TRUE(t && d.empty()) << dump(d);
  return twin::plan::make_plan(*t);
}

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// podman as recorded: `images` and the probe answer from tests/data/podman; `run` starts
// nothing; `inspect` names this test process as every container's process (alive, with a
// start time); `ps` lists what `containers` holds. Keeps each argv after "podman".
class FakePodman final : public twin::proc::ProcessRunner {
 public:
  twin::Result<twin::proc::Output> run(const twin::proc::Command& cmd) override {
    std::lock_guard lk(mu);
    twin::proc::Output o;
    o.exit_code = 0;
    auto at = std::find(cmd.argv.begin(), cmd.argv.end(), "podman");
    if (at == cmd.argv.end()) return o;
    std::vector<std::string> args(at + 1, cmd.argv.end());
    calls.push_back(args);
    const std::string& verb = args.at(0);
    if (verb == "images") {
      o.out = read(kData + "/images.json");
    } else if (verb == "run" && has(args, "--rm")) {
      const std::string& image = args.at(args.size() - 3);  // ... IMAGE -c SCRIPT
      ++probes;
      o.out = probe_for.count(image) ? read(kData + "/" + probe_for[image]) : "";
      if (o.out.empty()) o.exit_code = 127;
    } else if (verb == "run") {
      if (on_create) on_create(args);
    } else if (verb == "inspect") {
      nlohmann::json list = nlohmann::json::array();
      for (size_t i = 5; i < args.size(); ++i)
        list.push_back({{"Name", args[i]}, {"State", {{"Pid", ::getpid()}}}});
      o.out = list.dump();
    } else if (verb == "ps") {
      o.out = containers.dump();
    } else if (verb == "rm" && fail_rm) {
      o.exit_code = 125;
      o.err = "Error: removing container aaa root filesystem: device or resource busy";
    }
    return o;
  }
  std::mutex mu;
  std::vector<std::vector<std::string>> calls;
  std::map<std::string, std::string> probe_for;  // image id -> recorded probe file
  nlohmann::json containers = nlohmann::json::array();
  int probes = 0;
  bool fail_rm = false;  // `rm` fails as a half-created container's busy mount made it
  std::function<void(const std::vector<std::string>&)> on_create;  // each `podman run --detach`
};

// Image ids of tests/data/podman/images.json, by FRR version.
std::string id_of(const std::string& version) {
  auto images = twin::drivers::parse_podman_images(read(kData + "/images.json"));
  for (const auto& i : *images)
    if (i.frr_version == version) return i.id;
  return "";
}

class ContainerDriver : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(tmp_.path.empty());
    dir_ = tmp_.path;
    ::setenv("TWIN_PODMAN_DIR", dir_.c_str(), 1);  // settings and probe cache of this test only
    for (const char* v : {"7.5.1", "8.4.4", "10.3"})
      podman_.probe_for[id_of(v)] = std::string("probe-") + v + ".txt";
  }
  void TearDown() override { ::unsetenv("TWIN_PODMAN_DIR"); }
  twin::TempDir tmp_{::testing::TempDir()};
  fs::path dir_;
  FakePodman podman_;
};

}  // namespace

TEST(ContainerProfile, TheRepositorysReleasesLoadAsContainerProfiles) {
  auto p = mixed_plan();
  const auto* spine = p.find("spine1");
  const auto* leaf1 = p.find("leaf1");
  const auto* leaf3 = p.find("leaf3");
  ASSERT_TRUE(spine && leaf1 && leaf3);
  EXPECT_EQ(spine->backend, twin::topology::Backend::kContainer);
  EXPECT_EQ(spine->container.image, "localhost/twin-frr:10.3");
  EXPECT_EQ(spine->container.name, "tw-mix-spine1");
  EXPECT_EQ(spine->container.frr_version, "10.3");  // the profile's word until up reads the image
  EXPECT_EQ(leaf1->container.image, "localhost/twin-frr:7.5.1");
  EXPECT_TRUE(leaf3->container.image.empty());  // the host's FRR
  EXPECT_STREQ(twin::drivers::driver_for(*spine).name(), "container-frr");
  EXPECT_STREQ(twin::drivers::driver_for(*leaf3).name(), "netns-frr");
  // The plan's state round-trips the container (and leaves it out of namespace nodes).
  auto j = twin::plan::to_json(p);
  EXPECT_EQ(j["nodes"][0]["container"]["image"], "localhost/twin-frr:10.3");
  EXPECT_FALSE(j["nodes"][3].contains("container"));
}

TEST(ContainerProfile, ASectionInTheWrongPlaceOrMissingIsRefusedByField) {
  auto load = [](const std::string& profile) {
    twin::TempDir tmp(::testing::TempDir());
    EXPECT_FALSE(tmp.path.empty());
    const std::string path = tmp.path + "/x.yaml";
    std::ofstream(path) << profile;
    Diagnostics d;
    auto p = twin::topology::load_image_profile("x", path, d);
    return std::make_pair(p.has_value(), dump(d));
  };
  auto [ok, msgs] = load(
      "kind: frr\nbackend: container\ncontainer: {image: localhost/a:1}\n"
      "daemons: [zebra]\n");
  EXPECT_TRUE(ok) << msgs;
  std::tie(ok, msgs) = load("kind: frr\nbackend: container\ndaemons: [zebra]\n");
  EXPECT_FALSE(ok);
  EXPECT_NE(msgs.find("container | missing; backend container needs a container section"),
            std::string::npos)
      << msgs;
  std::tie(ok, msgs) = load("kind: frr\ncontainer: {image: a}\ndaemons: [zebra]\n");
  EXPECT_NE(msgs.find("'container' applies to backend container only"), std::string::npos) << msgs;
  std::tie(ok, msgs) = load("kind: host\nbackend: container\ncontainer: {image: a}\n");
  EXPECT_NE(msgs.find("backend container runs kind frr only"), std::string::npos) << msgs;
  std::tie(ok, msgs) = load(
      "kind: frr\nbackend: container\ncontainer: {image: a, tag: b}\n"
      "daemons: [zebra]\n");
  EXPECT_NE(msgs.find("container.tag"), std::string::npos) << msgs;
  // What podman would not take as an image (or would take as an option), and a release that is
  // no release, refused at their field (a new user's: each was accepted, then substituted).
  for (const std::string bad : {"\"  \"", "\"--privileged\"",
                                "\"localhost/twin-frr:10.3; rm -rf /\"", "\"Twin-FRR:10.3\""}) {
    std::tie(ok, msgs) =
        load("kind: frr\nbackend: container\ncontainer: {image: " + bad + "}\ndaemons: [zebra]\n");
    EXPECT_FALSE(ok) << bad;
    EXPECT_NE(msgs.find("container.image | '"), std::string::npos) << msgs;
    EXPECT_NE(msgs.find("is not an image reference"), std::string::npos) << msgs;
  }
  for (const std::string good : {"localhost/twin-frr:10.3", "quay.io/frrouting/frr:10.5.1",
                                 "registry.local:5000/net/frr:v8.4.1", "frr"}) {
    std::tie(ok, msgs) =
        load("kind: frr\nbackend: container\ncontainer: {image: " + good + "}\ndaemons: [zebra]\n");
    EXPECT_TRUE(ok) << good << " " << msgs;
  }
  std::tie(ok, msgs) = load(
      "kind: frr\nbackend: container\ncontainer: {image: a, frr-version: ten}\n"
      "daemons: [zebra]\n");
  EXPECT_FALSE(ok);
  EXPECT_NE(msgs.find("container.frr-version | 'ten' is not an FRR release"), std::string::npos)
      << msgs;
}

TEST(PodmanJson, ImagesAreReadAndFoundByTheNamesALabGives) {
  auto images = twin::drivers::parse_podman_images(read(kData + "/images.json"));
  ASSERT_TRUE(images) << images.error().message;
  ASSERT_EQ(images->size(), 3u);
  using twin::drivers::find_image;
  const auto* ten = find_image(*images, "localhost/twin-frr:10.3");
  ASSERT_NE(ten, nullptr);
  EXPECT_EQ(ten->frr_version, "10.3");
  EXPECT_EQ(ten->suite, "trixie");
  EXPECT_GT(ten->bytes, 100'000'000);
  EXPECT_EQ(find_image(*images, "twin-frr:10.3"), ten);  // podman's localhost/ for a bare name
  EXPECT_EQ(find_image(*images, ten->id.substr(0, 12)), ten);
  EXPECT_EQ(find_image(*images, "twin-frr:9.1"), nullptr);
  EXPECT_EQ(find_image(*images, "twin-frr"), nullptr);  // :latest, which no image has
  EXPECT_EQ(find_image(*images, "quay.io/frrouting/frr:10.3"), nullptr);
  EXPECT_FALSE(twin::drivers::parse_podman_images("Error: no such thing"));
}

TEST(PodmanJson, TheProbeReadsEachReleasesVersionAndItsUserFrr) {
  struct Case {
    const char* file;
    const char* version;
    int uid, gid;
  };
  // Recorded: user frr's ids differ between the images and from this host's (102:106).
  for (const Case& c :
       {Case{"probe-7.5.1.txt", "7.5.1", 101, 103}, Case{"probe-8.4.4.txt", "8.4.4", 100, 103},
        Case{"probe-10.3.txt", "10.3", 997, 996}}) {
    auto p = twin::drivers::parse_image_probe(read(kData + "/" + c.file));
    ASSERT_TRUE(p) << c.file << ": " << p.error().message;
    EXPECT_EQ(p->frr_version, c.version);
    EXPECT_EQ(p->frr_uid, c.uid);
    EXPECT_EQ(p->frr_gid, c.gid);
  }
  auto none = twin::drivers::parse_image_probe("id: 'frr': no such user\n\nsh: zebra: not found\n");
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("no user frr"), std::string::npos);
}

TEST(ReleaseArgv, EachReleaseGetsTheCommandLineItAccepts) {
  auto p = mixed_plan();
  twin::plan::Node n = *p.find("spine1");
  auto argv = [&](const std::string& d) { return twin::runtime::daemon_argv(n, d, false); };
  n.container.frr_version = "10.3";
  EXPECT_TRUE(twin::runtime::frr_has_mgmtd(n));
  EXPECT_FALSE(has(argv("mgmtd"), "-f"));  // measured: 10.3's mgmtd and staticd refuse -f
  EXPECT_FALSE(has(argv("staticd"), "-f"));
  EXPECT_TRUE(has(argv("zebra"), "-f"));
  EXPECT_TRUE(has(argv("zebra"), "--limit-fds"));
  EXPECT_FALSE(has(argv("bfdd"), "--bfdctl"));  // 10.2 removed bfdd's control socket
  n.container.frr_version = "10.1";
  EXPECT_TRUE(has(argv("bfdd"), "--bfdctl"));
  n.container.frr_version = "7.5.1";
  EXPECT_FALSE(twin::runtime::frr_has_mgmtd(n));
  EXPECT_FALSE(has(argv("zebra"), "--limit-fds"));  // 7.5 has no such option
  EXPECT_TRUE(has(argv("staticd"), "-f"));
  EXPECT_TRUE(has(argv("bfdd"), "--bfdctl"));
  n.container = {};  // the host's FRR: as before containers
  EXPECT_EQ(twin::runtime::frr_major(n), 0);
  EXPECT_TRUE(has(argv("zebra"), "--limit-fds"));
  EXPECT_TRUE(has(argv("staticd"), "-f"));
  EXPECT_TRUE(has(argv("bfdd"), "--bfdctl"));
}

TEST(ReleaseArgv, TheContainerRunsInTheNodesNamespaceWithItsRunFolderAndLabels) {
  auto p = mixed_plan();
  twin::plan::Node n = *p.find("leaf1");
  n.container.image_id = "522a7847e947";
  auto a = twin::drivers::container_run_args("mix", n);
  auto after = [&](const std::string& flag, int k = 0) {
    int seen = 0;
    for (size_t i = 0; i + 1 < a.size(); ++i)
      if (a[i] == flag && seen++ == k) return a[i + 1];
    return std::string();
  };
  EXPECT_EQ(after("--name"), "tw-mix-leaf1");
  EXPECT_EQ(after("--network"), "ns:/run/netns/tw-mix-leaf1");
  EXPECT_EQ(after("--pid"), "host");
  EXPECT_EQ(after("--label", 0), "org.twin.lab=mix");
  EXPECT_EQ(after("--label", 1), "org.twin.node=leaf1");
  EXPECT_EQ(after("--volume", 0), n.run_dir + ":" + n.run_dir);
  EXPECT_EQ(after("--volume", 1), n.run_dir + ":/etc/frr");
  EXPECT_EQ(after("--cap-add"), "NET_ADMIN,NET_RAW,SYS_ADMIN");
  EXPECT_EQ(a[a.size() - 2], "522a7847e947");  // the image up read, by id
  EXPECT_EQ(a.back(), "infinity");
}

TEST_F(ContainerDriver, PreflightReadsEachImageOnceAndCompletesTheNodes) {
  auto p = mixed_plan();
  auto groups = twin::drivers::group_by_driver(p.nodes);
  std::vector<twin::plan::Node*>* containers = nullptr;
  for (auto& g : groups)
    if (std::string(g.driver->name()) == "container-frr") containers = &g.nodes;
  ASSERT_NE(containers, nullptr);
  ASSERT_EQ(containers->size(), 3u);
  ASSERT_TRUE(twin::drivers::container_preflight(*containers, podman_));
  const auto* spine = p.find("spine1");
  EXPECT_EQ(spine->container.image_id, id_of("10.3"));
  EXPECT_EQ(spine->container.frr_uid, 997);
  EXPECT_EQ(spine->daemons.front(), "mgmtd");  // 10.3 starts mgmtd before zebra
  EXPECT_EQ(p.find("leaf1")->container.frr_version, "7.5.1");
  EXPECT_EQ(p.find("leaf1")->daemons.front(), "zebra");
  EXPECT_EQ(p.find("leaf2")->container.frr_uid, 100);
  EXPECT_EQ(podman_.probes, 3);
  // A second up reads the cached probes: no container is started to read an image again.
  auto again = mixed_plan();
  for (auto& g : twin::drivers::group_by_driver(again.nodes)) {
    if (std::string(g.driver->name()) == "container-frr") {
      ASSERT_TRUE(twin::drivers::container_preflight(g.nodes, podman_));
    }
  }
  EXPECT_EQ(podman_.probes, 3);
  EXPECT_TRUE(fs::exists(dir_ / "containers.conf"));
}

TEST_F(ContainerDriver, AnImageNotPresentStopsUpBeforeAnythingNamingWhatIsThere) {
  Diagnostics d;
  std::string text = kMixed;
  auto t = twin::topology::load_topology_text(text, "mix.yaml", "", d);
  ASSERT_TRUE(t);
  auto p = twin::plan::make_plan(*t);
  p.nodes[0].container.image = "localhost/twin-frr:9.1";
  std::vector<twin::plan::Node*> one = {&p.nodes[0]};
  auto r = twin::drivers::container_preflight(one, podman_);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, twin::ErrorKind::kEnvironment);
  EXPECT_NE(r.error().message.find("node spine1: image localhost/twin-frr:9.1 is not present"),
            std::string::npos)
      << r.error().message;
  EXPECT_NE(r.error().message.find("localhost/twin-frr:10.3"), std::string::npos);
  EXPECT_NE(r.error().message.find("tools/build-images.sh"), std::string::npos);
}

TEST_F(ContainerDriver, ContainersAreRecordedBeforeCreatedAndDownRemovesOnlyTheLabsOwn) {
  auto p = mixed_plan();
  std::vector<twin::plan::Node*> nodes;
  for (auto& n : p.nodes)
    if (!n.container.image.empty()) nodes.push_back(&n);
  ASSERT_TRUE(twin::drivers::container_preflight(nodes, podman_));
  for (auto* n : nodes) {
    n->run_dir = (dir_ / n->name).string();
    fs::create_directories(n->run_dir);
  }
  twin::state::State st;
  st.lab = "mix";
  int saves = 0;
  twin::drivers::Record rec(st, [&](const twin::state::State&) -> twin::Result<void> {
    ++saves;
    return {};
  });
  std::vector<const twin::plan::Node*> cn(nodes.begin(), nodes.end());
  podman_.calls.clear();
  twin::drivers::BuildContext ctx{podman_, rec, [](const std::string&) {}, {}};
  // Each container is in the saved record before podman creates it.
  podman_.on_create = [&](const std::vector<std::string>& args) {
    EXPECT_EQ(saves, 1);
    const std::string name = args.at(3);  // run --detach --name NAME
    EXPECT_TRUE(std::any_of(st.resources.begin(), st.resources.end(), [&](const auto& r) {
      return r.kind == "container" && r.name == name;
    })) << name;
  };
  auto r = twin::drivers::create_containers(cn, ctx);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(saves, 2);  // once before the containers exist, once with their processes
  int recorded = 0;
  for (const auto& res : st.resources)
    if (res.kind == "container") {
      ++recorded;
      EXPECT_EQ(res.pid, ::getpid());
      EXPECT_EQ(res.start_time, twin::state::process_start_time(::getpid()));
    }
  EXPECT_EQ(recorded, 3);
  int runs = 0;
  for (const auto& c : podman_.calls) runs += c.at(0) == "run";
  EXPECT_EQ(runs, 3);
  // The pid file the runtime joins the container's mount namespace through.
  const auto* spine = p.find("spine1");
  EXPECT_EQ(read(twin::runtime::container_pid_file(*spine)),
            std::to_string(::getpid()) + " " +
                std::to_string(twin::state::process_start_time(::getpid())) + "\n");
  EXPECT_EQ(twin::runtime::container_pid(*spine), ::getpid());
  twin::proc::Command c{{"/usr/bin/vtysh"}};
  c.writable = {spine->run_dir};
  twin::runtime::use_node_programs(*spine, c);
  EXPECT_EQ(c.mount_ns, "/proc/" + std::to_string(::getpid()) + "/ns/mnt");
  EXPECT_TRUE(has(c.writable, "/run/frr"));

  // down: the lab's containers by label; another lab's, or one not recorded, stay.
  podman_.containers = nlohmann::json::parse(R"([
    {"Id": "aaa", "Names": ["tw-mix-spine1"]},
    {"Id": "bbb", "Names": ["tw-mix-leaf1"]},
    {"Id": "ccc", "Names": ["someone-elses"]}])");
  podman_.calls.clear();
  twin::drivers::Teardown t;
  twin::drivers::remove_containers(st, podman_, t);
  EXPECT_TRUE(t.problems.empty());
  ASSERT_EQ(podman_.calls.size(), 2u);
  EXPECT_TRUE(has(podman_.calls[0], "label=org.twin.lab=mix"));
  EXPECT_EQ(podman_.calls[1],
            (std::vector<std::string>{"rm", "--force", "--time", "0", "aaa", "bbb"}));
  EXPECT_TRUE(t.left.empty());

  // A removal that keeps failing: podman's cleanup and the removal again, then the containers
  // podman still has stay recorded (down keeps them for the next down), the third not.
  podman_.fail_rm = true;
  podman_.calls.clear();
  twin::drivers::Teardown failed;
  twin::drivers::remove_containers(st, podman_, failed, std::chrono::milliseconds(0));
  int rms = 0, cleanups = 0;
  for (const auto& c : podman_.calls) {
    rms += c.at(0) == "rm";
    cleanups += c.at(0) == "container" && c.at(1) == "cleanup";
  }
  EXPECT_EQ(rms, 4);
  EXPECT_EQ(cleanups, 3);
  ASSERT_EQ(failed.problems.size(), 1u);
  EXPECT_NE(failed.problems[0].find("device or resource busy"), std::string::npos);
  std::vector<std::string> left;
  for (const auto& r : failed.left) left.push_back(r.name);
  EXPECT_EQ(left, (std::vector<std::string>{"tw-mix-spine1", "tw-mix-leaf1"}));
}

// ---- Which image a node runs (plan::resolve_images) ----

namespace {

std::vector<twin::plan::PresentImage> present_here() {
  // What this machine kind has after tools/build-images.sh, and Debian 12's own FRR.
  return {{{}, "", "8.4.4", true},
          {{"localhost/twin-frr:7.5.1"}, "522a7847e947", "7.5.1", false},
          {{"localhost/twin-frr:8.4.4"}, "8a04a38fe75a", "8.4.4", false},
          {{"localhost/twin-frr:10.3"}, "e2c54d1af8e6", "10.3", false}};
}

}  // namespace

TEST(ImageChoice, TheReleaseATagNames) {
  using twin::plan::release_of_tag;
  EXPECT_EQ(release_of_tag("quay.io/frrouting/frr:10.5.1"), "10.5.1");
  EXPECT_EQ(release_of_tag("frrouting/frr:v8.4.1"), "8.4.1");
  EXPECT_EQ(release_of_tag("localhost:5000/frr:9.1-rc1"), "9.1");  // a registry port is no tag
  EXPECT_EQ(release_of_tag("frrouting/frr:latest"), "");
  EXPECT_EQ(release_of_tag("frrouting/frr"), "");
}

TEST(ImageChoice, TheClosestReleaseFollowsTheWorkplansRule) {
  using twin::plan::closest_release;
  const std::vector<std::string> have = {"7.5.1", "8.4.4", "10.3", "10.7.1", "8.4.2"};
  EXPECT_EQ(closest_release("8.4.1", have), 1);   // same major.minor: its newest patch
  EXPECT_EQ(closest_release("10.5.1", have), 3);  // 10.3 and 10.7 are 2 apart: the newer
  EXPECT_EQ(closest_release("10.4", have), 2);    // 10.3 is nearer than 10.7
  EXPECT_EQ(closest_release("7.2", have), 0);
  EXPECT_EQ(closest_release("9.1", have), -1);  // no 9.x: refused, never a jump of majors
  EXPECT_EQ(closest_release("", have), 3);      // no release asked (latest): the newest
  EXPECT_EQ(closest_release("8.4", {}), -1);
}

TEST(ImageChoice, APresentImageIsUsedAsNamedAndAMissingOneIsReplacedWithANote) {
  auto p = mixed_plan();
  ASSERT_TRUE(twin::plan::resolve_images(p, present_here(), false));
  EXPECT_TRUE(p.notes.empty());  // every profile's image is present
  EXPECT_EQ(p.find("spine1")->container.image, "localhost/twin-frr:10.3");

  // A profile naming 10.5 on a machine with 10.3: 10.3 runs, and the note names both.
  auto q = mixed_plan();
  q.nodes[0].container.image = "localhost/twin-frr:10.5";
  q.nodes[0].container.frr_version = "10.5";
  ASSERT_TRUE(twin::plan::resolve_images(q, present_here(), false));
  EXPECT_EQ(q.nodes[0].container.image, "localhost/twin-frr:10.3");
  ASSERT_EQ(q.notes.size(), 1u);
  EXPECT_EQ(q.notes[0].node, "spine1");
  EXPECT_EQ(q.notes[0].text,
            "image localhost/twin-frr:10.5 (FRR 10.5) is not present; it runs "
            "localhost/twin-frr:10.3 (FRR 10.3), the closest release present");
  // --strict-images refuses the same.
  auto s = mixed_plan();
  s.nodes[0].container.image = "localhost/twin-frr:10.5";
  s.nodes[0].container.frr_version = "10.5";
  s.nodes[1].container.image = "localhost/twin-frr:10.4";  // a second node substituted
  s.nodes[1].container.frr_version = "10.4";
  auto r = twin::plan::resolve_images(s, present_here(), true);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("--strict-images refuses a substitute"), std::string::npos);
  // Every node refused is named at once, not the first only.
  EXPECT_NE(r.error().message.find("node " + s.nodes[0].name + ": image localhost/twin-frr:10.5"),
            std::string::npos)
      << r.error().message;
  EXPECT_NE(r.error().message.find("; node " + s.nodes[1].name + ": image localhost/twin-frr:10.4"),
            std::string::npos)
      << r.error().message;
}

TEST(ImageChoice, AContainerlabImageRunsAsNamedOrAsTheClosestReleaseNeverSilently) {
  auto clab = [](const std::string& image) {
    auto p = mixed_plan();
    auto& n = p.nodes[3];  // leaf3, this machine's FRR by its profile
    n.asked_image = image;
    return p;
  };
  // Present by name (a user's `podman load`): that image, in a container.
  auto present = present_here();
  present.push_back({{"quay.io/frrouting/frr:10.5.1"}, "0123456789ab", "", false});
  auto a = clab("quay.io/frrouting/frr:10.5.1");
  ASSERT_TRUE(twin::plan::resolve_images(a, present, false));
  EXPECT_EQ(a.nodes[3].backend, twin::topology::Backend::kContainer);
  EXPECT_EQ(a.nodes[3].container.image, "quay.io/frrouting/frr:10.5.1");
  EXPECT_TRUE(a.notes.empty());
  // Not present: 10.3 for 10.5.1, with the note.
  auto b = clab("quay.io/frrouting/frr:10.5.1");
  ASSERT_TRUE(twin::plan::resolve_images(b, present_here(), false));
  EXPECT_EQ(b.nodes[3].container.image, "localhost/twin-frr:10.3");
  ASSERT_EQ(b.notes.size(), 1u);
  EXPECT_NE(b.notes[0].text.find("image quay.io/frrouting/frr:10.5.1 (FRR 10.5.1) is not present"),
            std::string::npos);
  // The plan names the image asked for, then what runs (not the profile the file's kind maps to).
  EXPECT_NE(twin::plan::render_plan_text(b).find(
                "  leaf3  kind frr, image quay.io/frrouting/frr:10.5.1 (runs "
                "localhost/twin-frr:10.3, FRR 10.3), netns "),
            std::string::npos)
      << twin::plan::render_plan_text(b);
  // 8.4.1 with no container images: this machine's 8.4.4 in a namespace, said so (the other
  // routers run this machine's FRR too, here).
  auto c = clab("frrouting/frr:v8.4.1");
  for (auto& n : c.nodes) {
    if (n.name != "leaf3") n.container = {};
  }
  ASSERT_TRUE(twin::plan::resolve_images(c, {{{}, "", "8.4.4", true}}, false));
  EXPECT_EQ(c.nodes[3].backend, twin::topology::Backend::kNetns);
  ASSERT_EQ(c.notes.size(), 1u);
  EXPECT_NE(c.notes[0].text.find("it runs this machine's FRR 8.4.4 in a namespace"),
            std::string::npos)
      << c.notes[0].text;
  EXPECT_NE(twin::plan::render_plan_text(c).find(
                "  leaf3  kind frr, image frrouting/frr:v8.4.1 (runs this machine's FRR in a "
                "namespace, profile frr-8.4), netns "),
            std::string::npos)
      << twin::plan::render_plan_text(c);
  // 9.1: no 9.x anywhere, refused with what is present and how to get more.
  auto d = clab("quay.io/frrouting/frr:9.1.0");
  auto r = twin::plan::resolve_images(d, present_here(), false);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("node leaf3: image quay.io/frrouting/frr:9.1.0 (FRR 9.1.0) is "
                                   "not present on this machine, nor any release of FRR 9.x"),
            std::string::npos)
      << r.error().message;
  EXPECT_NE(r.error().message.find("localhost/twin-frr:10.3 (FRR 10.3)"), std::string::npos);
}

TEST(ImageChoice, TheReportNamesEveryReleaseInTheLab) {
  auto p = mixed_plan();
  ASSERT_TRUE(twin::plan::resolve_images(p, present_here(), false));
  p.nodes[1].container.frr_version = "7.5.1";  // as up reads them from the images
  p.nodes[2].container.frr_version = "8.4.4";
  for (auto& n : p.nodes)
    if (n.daemons.empty()) n.daemons = {"zebra"};
  EXPECT_EQ(twin::plan::frr_versions(p, "8.4.4"),
            "10.3 (spine1), 7.5.1 (leaf1), 8.4.4 (leaf2, leaf3)");
  auto same = mixed_plan();
  for (auto& n : same.nodes) n.container = {};
  EXPECT_EQ(twin::plan::frr_versions(same, "8.4.4"), "8.4.4");
}

// ---- Each release's JSON, as the validators read it ----
// Recorded from topologies/clos-2x4-mixed.yaml with the node's own vtysh (tests/data/
// frr-releases/<node>-<release>-*.json): spine1 on FRR 10.3, leaf1 on 8.4.4, leaf4 on 7.5.1.
// 7.5 has no peerState in `show bgp summary json`; 10.3 adds `local` routes to `show ip route
// json` (DESIGN.md §4b). The families must read all three the same.

namespace {

const std::string kReleases = std::string(TWIN_TEST_DATA) + "/frr-releases/";

nlohmann::json release_json(const std::string& file) {
  return nlohmann::json::parse(read(kReleases + file));
}

twin::plan::Plan mixed_fabric() {
  Diagnostics d;
  auto t = twin::topology::load_topology(
      std::string(TWIN_DATA_DIR) + "/topologies/clos-2x4-mixed.yaml", d);
  EXPECT_TRUE(t) << dump(d);
  return twin::plan::make_plan(*t);
}

}  // namespace

TEST(ReleaseJson, TheBgpFamilyReadsEachReleasesSummary) {
  // The shapes differ where it matters: 7.5 says only "state", 8.4 and 10.3 add "peerState".
  auto v75 = release_json("leaf4-7.5.1-bgp-summary.json");
  auto v84 = release_json("leaf1-8.4.4-bgp-summary.json");
  EXPECT_FALSE(v75["ipv4Unicast"]["peers"]["swp1"].contains("peerState"));
  EXPECT_TRUE(v84["ipv4Unicast"]["peers"]["swp1"].contains("peerState"));
  std::map<std::string, twin::Result<nlohmann::json>> sums;
  sums.emplace("spine1", twin::ok(release_json("spine1-10.3-bgp-summary.json")));
  sums.emplace("leaf1", twin::ok(v84));
  sums.emplace("leaf4", twin::ok(v75));
  auto rs = twin::validators::evaluate_bgp(mixed_fabric(), sums);
  std::map<std::string, int> passed;
  for (const auto& r : rs) {
    if (!sums.count(r.node)) continue;  // the nodes not recorded here are errors, as ever
    EXPECT_EQ(r.status, twin::validate::Status::kPassed) << r.node << " " << r.message;
    if (r.test == 0) ++passed[r.node];
  }
  // Every session of each recorded node Established, whatever release says so.
  EXPECT_EQ(passed, (std::map<std::string, int>{{"leaf1", 2}, {"leaf4", 2}, {"spine1", 4}}));
}

TEST(ReleaseJson, TheChecksFamilyReadsEachReleasesRoutingTable) {
  // spine1's route to leaf4's loopback, over the one link, on each release's table.
  for (const auto& [file, prefix, hops] : std::vector<std::tuple<std::string, std::string, int>>{
           {"spine1-10.3-ip-route.json", "10.255.1.4/32", 1},
           {"leaf1-8.4.4-ip-route.json", "10.255.1.4/32", 2},
           {"leaf4-7.5.1-ip-route.json", "10.255.1.1/32", 2}}) {
    SCOPED_TRACE(file);
    const std::string node = file.substr(0, file.find('-'));
    Diagnostics d;
    auto t = twin::topology::load_topology_text(
        "version: 1\nname: c\nnodes:\n  " + node + ": {asn: 65000, loopback: 10.9.9.9/32}\n" +
            "checks:\n  - route: {node: " + node + ", prefix: " + prefix +
            ", nexthops: " + std::to_string(hops) + ", protocol: bgp}\n",
        "c.yaml", "", d);
    ASSERT_TRUE(t) << dump(d);
    auto r = twin::validators::evaluate_route(t->checks.at(0), twin::ok(release_json(file)));
    EXPECT_EQ(r.status, twin::validate::Status::kPassed) << r.message << " / " << r.observed;
  }
}
