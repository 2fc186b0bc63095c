// podman's REST API as the container driver speaks it: the create spec of a node, the create →
// start → inspect sequence and podman's error replies (recorded from Debian 12's podman 4.3.1
// service), and the socket client against a server on a real unix socket of the test's own.
#include "twin/drivers/podman_api.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "tests/unit/support.hpp"
#include "twin/core/util.hpp"
#include "twin/drivers/container.hpp"
#include "twin/plan/plan.hpp"
#include "twin/topology/loader.hpp"

namespace {

using twin::drivers::HttpReply;

// Answers each "METHOD target" with a recorded reply and keeps what was asked.
class FakeApi final : public twin::drivers::PodmanApi {
 public:
  std::map<std::string, HttpReply> replies;
  mutable std::vector<std::pair<std::string, std::string>> asked;  // (request line, body)

  twin::Result<HttpReply> request(const std::string& method, const std::string& target,
                                  const std::string& body) const override {
    asked.emplace_back(method + " " + target, body);
    auto it = replies.find(method + " " + target);
    if (it == replies.end()) return twin::harness_error("connection refused");
    return it->second;
  }
};

twin::plan::Node leaf1() {
  twin::Diagnostics d;
  auto t = twin::topology::load_topology_text(R"(version: 1
name: mix
nodes:
  spine1: {asn: 65000, loopback: 10.255.0.1/32, image: frr-10}
  leaf1: {asn: 65101, loopback: 10.255.1.1/32, image: frr-7.5}
links:
  - endpoints: [spine1:swp1, leaf1:swp1]
)",
                                              "mix.yaml", "", d);
  EXPECT_TRUE(t) << twin_test::dump(d);
  auto p = twin::plan::make_plan(*t);
  twin::plan::Node n = *p.find("leaf1");
  n.container.image_id = "522a7847e9471c4b";
  return n;
}

const std::string kCreate = "POST /v4.0.0/libpod/containers/create";
const std::string kStart = "POST /v4.0.0/libpod/containers/tw-mix-leaf1/start";
const std::string kInspect = "GET /v4.0.0/libpod/containers/tw-mix-leaf1/json";

}  // namespace

TEST(PodmanApi, TheSpecIsTheSameContainerAsPodmanRun) {
  auto n = leaf1();
  auto s = twin::drivers::container_spec("mix", n);
  EXPECT_EQ(s["name"], "tw-mix-leaf1");
  EXPECT_EQ(s["image"], "522a7847e9471c4b");  // by the id `up` resolved, as podman run is given
  EXPECT_EQ(s["labels"]["org.twin.lab"], "mix");
  EXPECT_EQ(s["labels"]["org.twin.node"], "leaf1");
  EXPECT_EQ(s["hostname"], "leaf1");
  EXPECT_EQ(s["netns"], (nlohmann::json{{"nsmode", "path"}, {"value", "/run/netns/tw-mix-leaf1"}}));
  EXPECT_EQ(s["pidns"], (nlohmann::json{{"nsmode", "host"}}));  // exec's ps sees the daemons
  EXPECT_EQ(s["cap_add"], (nlohmann::json{"NET_ADMIN", "NET_RAW", "SYS_ADMIN"}));
  ASSERT_EQ(s["mounts"].size(), 3u);
  std::vector<std::string> destinations;
  for (const auto& m : s["mounts"]) {
    EXPECT_EQ(m["type"], "bind");
    EXPECT_EQ(m["source"], n.run_dir);
    destinations.push_back(m["destination"]);
  }
  EXPECT_EQ(destinations, (std::vector<std::string>{n.run_dir, "/etc/frr", "/var/run/frr"}));
  EXPECT_EQ(s["entrypoint"], (nlohmann::json{"/bin/sleep"}));
  EXPECT_EQ(s["command"], (nlohmann::json{"infinity"}));
  // Every argument of `podman run` that shapes the container has its field here.
  auto run = twin::drivers::container_run_args("mix", n);
  EXPECT_NE(std::find(run.begin(), run.end(), "ns:/run/netns/tw-mix-leaf1"), run.end());
  EXPECT_NE(std::find(run.begin(), run.end(), "NET_ADMIN,NET_RAW,SYS_ADMIN"), run.end());
}

TEST(PodmanApi, CreateStartInspectGivesTheContainersPid) {
  FakeApi api;
  // Replies as podman 4.3.1's service gave them (bodies shortened to the fields read).
  api.replies[kCreate] = {201, R"({"Id":"bc8ee67c1023","Warnings":[]})"};
  api.replies[kStart] = {204, ""};
  api.replies[kInspect] = {200,
                           R"({"Id":"bc8ee67c1023","State":{"Status":"running","Pid":14215}})"};
  auto pid = twin::drivers::api_run_container(api, twin::drivers::container_spec("mix", leaf1()));
  ASSERT_TRUE(pid) << pid.error().message;
  EXPECT_EQ(*pid, 14215);
  ASSERT_EQ(api.asked.size(), 3u);
  EXPECT_EQ(api.asked[0].first, kCreate);
  EXPECT_EQ(nlohmann::json::parse(api.asked[0].second)["name"], "tw-mix-leaf1");
  EXPECT_EQ(api.asked[1].first, kStart);
  EXPECT_EQ(api.asked[2].first, kInspect);
}

TEST(PodmanApi, PodmansOwnWordsNameWhatFailed) {
  FakeApi api;
  api.replies[kCreate] = {
      500,
      R"({"cause":"image not known","message":"localhost/twin-frr:9.9: image not known","response":500})"};
  auto pid = twin::drivers::api_run_container(api, twin::drivers::container_spec("mix", leaf1()));
  ASSERT_FALSE(pid);
  EXPECT_EQ(pid.error().message,
            "creating container tw-mix-leaf1: podman's API answered 500: localhost/twin-frr:9.9: "
            "image not known");
  EXPECT_EQ(api.asked.size(), 1u);  // nothing started after a failed create

  api.replies[kCreate] = {201, R"({"Id":"bc8ee67c1023"})"};
  api.replies[kStart] = {
      404,
      R"({"cause":"no such container","message":"no container with name or ID \"tw-mix-leaf1\" found: no such container","response":404})"};
  pid = twin::drivers::api_run_container(api, twin::drivers::container_spec("mix", leaf1()));
  ASSERT_FALSE(pid);
  EXPECT_NE(pid.error().message.find("starting container tw-mix-leaf1: podman's API answered 404"),
            std::string::npos);

  api.replies[kStart] = {204, ""};
  api.replies[kInspect] = {200, R"({"State":{"Status":"exited","Pid":0}})"};
  pid = twin::drivers::api_run_container(api, twin::drivers::container_spec("mix", leaf1()));
  ASSERT_FALSE(pid);
  EXPECT_EQ(pid.error().message, "container tw-mix-leaf1 has no process after its start");
}

TEST(PodmanApi, ReadyOnlyWhenThePingAnswers) {
  FakeApi api;
  auto now = std::chrono::steady_clock::now();
  EXPECT_FALSE(twin::drivers::api_ready(api, now));  // refused, deadline passed: not ready
  api.replies["GET /_ping"] = {200, "OK"};
  EXPECT_TRUE(twin::drivers::api_ready(api, now));
  EXPECT_EQ(api.asked.size(), 2u);
}

TEST(PodmanApi, TheSocketClientSpeaksHttpOverAUnixSocket) {
  namespace asio = boost::asio;
  namespace http = boost::beast::http;
  using local = asio::local::stream_protocol;
  twin::TempDir dir;
  const std::string path = dir.path + "/podman.sock";
  asio::io_context io;
  local::acceptor acceptor(io, local::endpoint(path));
  http::request<http::string_body> seen;
  std::thread server([&] {
    local::socket s(io);
    acceptor.accept(s);
    boost::beast::flat_buffer buf;
    http::read(s, buf, seen);
    http::response<http::string_body> res(http::status::created, 11);
    res.body() = R"({"Id":"abc"})";
    res.prepare_payload();
    http::write(s, res);
  });
  auto api = twin::drivers::socket_api(path, std::chrono::seconds(5));
  auto r = api->request("POST", "/v4.0.0/libpod/containers/create", R"({"name":"x"})");
  server.join();
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->status, 201);
  EXPECT_EQ(r->body, R"({"Id":"abc"})");
  EXPECT_EQ(seen.method_string(), "POST");
  EXPECT_EQ(seen.target(), "/v4.0.0/libpod/containers/create");
  EXPECT_EQ(seen[http::field::content_type], "application/json");
  EXPECT_EQ(seen.body(), R"({"name":"x"})");

  // Nobody listening: an error naming the socket, not a hang.
  auto gone = twin::drivers::socket_api(dir.path + "/none.sock", std::chrono::seconds(5));
  auto e = gone->request("GET", "/_ping", "");
  ASSERT_FALSE(e);
  EXPECT_NE(e.error().message.find("connecting to podman's API at " + dir.path + "/none.sock"),
            std::string::npos);
}
