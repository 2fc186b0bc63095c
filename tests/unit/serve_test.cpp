// twin serve's API without the network: routing, the token and origin rules, input checks and
// the jobs' command lines, against a fake Backend that records what it was asked.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <tuple>

#include "twin/core/diagnostics.hpp"
#include "twin/core/util.hpp"
#include "twin/graph/graph.hpp"
#include "twin/options/table.hpp"
#include "twin/serve/api.hpp"
#include "twin/serve/server.hpp"

namespace {

using ::testing::HasSubstr;
using twin::serve::Api;
using twin::serve::ApiOptions;
using twin::serve::Files;
using twin::serve::JobView;
using twin::serve::Request;
using twin::serve::Response;

struct FakeBackend : twin::serve::Backend {
  struct Started {
    std::string kind, lab;
    std::vector<std::string> args;
    Files files;
  };
  std::vector<Started> started;
  int topology_checks = 0;
  nlohmann::json labs() override { return {{"running", {{{"name", "g1"}}}}, {"history", {"g1"}}}; }
  std::optional<nlohmann::json> images(Response*) override {
    return nlohmann::json{{"images", {{{"name", "frr-10"}, {"present", true}}}},
                          {"unprofiled", nlohmann::json::array()},
                          {"podman", true}};
  }
  std::optional<nlohmann::json> lab_status(const std::string& lab, Response* err) override {
    if (lab != "g1") return *err = twin::serve::error(404, "lab '" + lab + "' is not running"), std::nullopt;
    return nlohmann::json{{"lab", lab}};
  }
  std::optional<nlohmann::json> lab_graph(const std::string& lab, Response*) override {
    return nlohmann::json{{"lab", lab}, {"nodes", nlohmann::json::array()}};
  }
  std::optional<std::string> lab_graph_text(const std::string&, const std::string& f, Response*) override {
    return "drawn as " + f;
  }
  std::optional<nlohmann::json> node_detail(const std::string& lab, const std::string& node,
                                            Response*) override {
    return nlohmann::json{{"lab", lab}, {"name", node}};
  }
  std::optional<nlohmann::json> history(const std::string& lab, uint64_t after, Response*) override {
    return nlohmann::json{{"lab", lab}, {"after", after}};
  }
  std::optional<nlohmann::json> report(const std::string&, const std::string& name, Response*) override {
    return nlohmann::json{{"name", name}};
  }
  std::optional<nlohmann::json> check_topology(const std::string& topology, const Files&,
                                               const std::string& name, Response* err) override {
    ++topology_checks;
    if (topology.find("bad") != std::string::npos)
      return *err = twin::serve::error(400, "1 problem",
                                       nlohmann::json::array({{{"file", "topology.yaml"}, {"line", 3}}})),
             std::nullopt;
    return nlohmann::json{{"lab", name.empty() ? "from-file" : name}};
  }
  JobView start_job(const std::string& kind, const std::string& lab,
                    const std::vector<std::string>& args, const Files& files) override {
    started.push_back({kind, lab, args, files});
    JobView j;
    j.id = std::to_string(started.size());
    j.kind = kind;
    j.lab = lab;
    j.state = "running";
    return j;
  }
  std::vector<JobView> jobs() override { return {}; }
  std::optional<JobView> job(const std::string& id) override {
    if (id != "1" && id != "2") return std::nullopt;
    JobView j;
    j.id = id;
    j.state = id == "1" ? "done" : "running";
    return j;
  }
  bool running(const std::string& lab, const std::string& node) override {
    return lab == "g1" && node != "ghost";
  }
  std::set<std::string> cancelled;
  bool cancel_job(const std::string& id) override { return cancelled.insert(id).second; }
  std::vector<std::vector<std::string>> execs;
  std::optional<nlohmann::json> exec(const std::string&, const std::string&,
                                     const std::vector<std::string>& c, double, Response*) override {
    execs.push_back(c);
    return nlohmann::json{{"exit_code", 0}};
  }
};

Request req(const std::string& method, const std::string& target, const std::string& body = "",
            std::map<std::string, std::string> headers = {}) {
  Request r{method, target, std::move(headers), body};
  if (!body.empty() && !r.headers.count("content-type")) r.headers["content-type"] = "application/json";
  r.headers["host"] = "127.0.0.1:8080";
  return r;
}

nlohmann::json body(const Response& r) { return nlohmann::json::parse(r.body); }

struct ApiTest : ::testing::Test {
  FakeBackend b;
  ApiOptions o;
  Response call(const Request& r) { return Api(o, b).handle(r); }
};

TEST_F(ApiTest, ListsTheImagesAsTwinImagesDoes) {
  auto r = call(req("GET", "/api/images"));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(body(r)["images"][0]["name"], "frr-10");
}

TEST_F(ApiTest, ListsLabsAndReadsALab) {
  auto r = call(req("GET", "/api/labs"));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(body(r)["running"][0]["name"], "g1");
  EXPECT_EQ(call(req("GET", "/api/labs/g1")).status, 200);
  auto missing = call(req("GET", "/api/labs/nope"));
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(body(missing)["error"]["message"], "lab 'nope' is not running");
  EXPECT_EQ(body(call(req("GET", "/api/labs/g1/history?after=7")))["after"], 7);
  EXPECT_EQ(call(req("GET", "/api/labs/g1/history?after=x")).status, 400);
  EXPECT_EQ(body(call(req("GET", "/api/labs/g1/reports/3-validate.json")))["name"], "3-validate.json");
  EXPECT_EQ(body(call(req("GET", "/api/labs/g1/nodes/leaf1")))["name"], "leaf1");
}

TEST_F(ApiTest, GraphFormats) {
  EXPECT_EQ(body(call(req("GET", "/api/labs/g1/graph")))["lab"], "g1");
  auto svg = call(req("GET", "/api/labs/g1/graph?format=svg"));
  EXPECT_EQ(svg.content_type, "image/svg+xml");
  EXPECT_EQ(svg.body, "drawn as svg");
  EXPECT_EQ(call(req("GET", "/api/labs/g1/graph?format=png")).status, 400);
}

TEST_F(ApiTest, BadNamesMethodsAndPathsAreJsonErrors) {
  EXPECT_EQ(call(req("GET", "/api/labs/bad%2fname")).status, 400);
  EXPECT_EQ(call(req("GET", "/api/labs/a..b")).status, 400);
  EXPECT_EQ(call(req("GET", "/api/labs/-x")).status, 400);
  EXPECT_EQ(call(req("GET", "/api/labs/g1/nodes/.hidden")).status, 400);
  EXPECT_EQ(call(req("PUT", "/api/labs/g1")).status, 405);
  auto r = call(req("GET", "/api/nothing"));
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.content_type, "application/json");
  EXPECT_EQ(body(r)["error"]["status"], 404);
  EXPECT_EQ(call(req("POST", "/api/labs/g1/validate", "{not json")).status, 400);
  EXPECT_EQ(call(req("POST", "/api/labs/g1/validate", "[1]")).status, 400);
  EXPECT_EQ(call(req("POST", "/api/labs/g1/validate", R"({"only": 3})")).status, 400);
  EXPECT_EQ(call(req("POST", "/api/labs/g1/validate", std::string(twin::serve::kMaxBody + 1, ' '))).status,
            413);
  EXPECT_TRUE(b.started.empty());  // nothing ran
}

TEST_F(ApiTest, TrafficIsAJobWithTheClisArguments) {
  auto t = call(req("POST", "/api/labs/g1/traffic",
                    R"({"pattern": "pairs", "duration": "3s", "flows_per_pair": 4})"));
  EXPECT_EQ(t.status, 202);
  ASSERT_EQ(b.started.size(), 1u);
  EXPECT_EQ(b.started[0].args,
            (std::vector<std::string>{"traffic", "--lab", "g1", "--json", "--pattern", "pairs",
                                      "--duration", "3s", "--flows-per-pair", "4"}));
  // A value never becomes an option; an unknown field is refused before anything runs.
  EXPECT_EQ(call(req("POST", "/api/labs/g1/traffic", R"({"to": "--pattern=ring"})")).status, 400);
  EXPECT_EQ(call(req("POST", "/api/labs/g1/traffic", R"({"flows": 4})")).status, 400);
  // An integer option takes a whole number: 4.5 flows is refused, never cut to 4.
  EXPECT_EQ(call(req("POST", "/api/labs/g1/traffic", R"({"flows_per_pair": 4.5})")).status, 400);
  EXPECT_EQ(b.started.size(), 1u);
}

TEST_F(ApiTest, ValidateApplyDrillAndDownAreJobsWithTheClisArguments) {
  auto v = call(req("POST", "/api/labs/g1/validate", R"({"only": "bgp,mtu"})"));
  EXPECT_EQ(v.status, 202);
  EXPECT_EQ(v.headers["Location"], "/api/jobs/1");
  ASSERT_EQ(b.started.size(), 1u);
  EXPECT_EQ(b.started[0].args,
            (std::vector<std::string>{"validate", "--lab", "g1", "--json", "--only", "bgp,mtu"}));
  auto a = call(req("POST", "/api/labs/g1/apply",
                    R"({"change": "version: 1\nsteps: []\n", "revert": true, "dry_run": true})"));
  EXPECT_EQ(a.status, 202);
  EXPECT_EQ(b.started[1].args, (std::vector<std::string>{"apply", "--lab", "g1", "--json",
                                                         "@change.yaml", "--revert", "--dry-run"}));
  EXPECT_EQ(b.started[1].files.at("change.yaml"), "version: 1\nsteps: []\n");
  EXPECT_EQ(call(req("POST", "/api/labs/g1/drill", R"({"links": "fabric"})")).status, 202);
  EXPECT_EQ(b.started[2].args,
            (std::vector<std::string>{"drill", "--lab", "g1", "--json", "--links", "fabric"}));
  EXPECT_EQ(call(req("DELETE", "/api/labs/g1")).status, 202);
  EXPECT_EQ(b.started[3].args, (std::vector<std::string>{"down", "--lab", "g1", "--json"}));
  // A value never becomes an option.
  EXPECT_EQ(call(req("POST", "/api/labs/g1/drill", R"({"links": "--nodes=all"})")).status, 400);
  EXPECT_EQ(call(req("POST", "/api/labs/g1/apply", R"({"revert": true})")).status, 400);
  EXPECT_EQ(call(req("POST", "/api/labs/g1/apply", R"({"change": "x: 1\n", "configs": {"leaf1.conf": "!"}})"))
                .status,
            400);  // one or the other
  EXPECT_EQ(call(req("POST", "/api/labs/g1/apply", R"({"configs": {"../leaf1.conf": "!"}})")).status, 400);
  EXPECT_EQ(call(req("POST", "/api/labs/g1/apply", R"({"configs": {"leaf1.conf": "!"}, "probe_interval": "-5"})"))
                .status,
            400);
  EXPECT_EQ(b.started.size(), 4u);
  // Rendered configs: written under configs/ and given as --configs.
  auto c = call(req("POST", "/api/labs/g1/apply",
                    R"({"configs": {"leaf1.conf": "hostname leaf1\n", "spine1/frr.conf": "!"},
                        "no_probe_stream": true, "converge_timeout": 20})"));
  EXPECT_EQ(c.status, 202) << c.body;
  ASSERT_EQ(b.started.size(), 5u);
  EXPECT_EQ(b.started[4].args,
            (std::vector<std::string>{"apply", "--lab", "g1", "--json", "--configs", "@configs",
                                      "--no-probe-stream", "--converge-timeout", "20.000000"}));
  EXPECT_EQ(b.started[4].files.at("configs/leaf1.conf"), "hostname leaf1\n");
  EXPECT_EQ(b.started[4].files.at("configs/spine1/frr.conf"), "!");
}

// Every option the command table (twin/options/table.hpp) gives the API reaches the job as the
// CLI spells it, with its value.
TEST_F(ApiTest, EveryOptionTheTableGivesTheApiReachesTheJob) {
  struct Op {
    std::string target, command;
    nlohmann::json base;
  };
  for (const auto& op :
       std::vector<Op>{{"/api/labs", "up", {{"topology", "name: x\n"}}},
                       {"/api/labs/g1/nodes/leaf1/restart", "restart", nlohmann::json::object()},
                       {"/api/labs/g1/validate", "validate", nlohmann::json::object()},
                       {"/api/labs/g1/apply", "apply", {{"change", "version: 1\nsteps: []\n"}}},
                       {"/api/labs/g1/drill", "drill", nlohmann::json::object()},
                       {"/api/run", "run", {{"scenario", "version: 1\n"}}}}) {
    for (const twin::options::Option* o : twin::options::api_options(op.command)) {
      SCOPED_TRACE(op.command + " " + o->api_field);
      nlohmann::json rq = op.base;
      std::vector<std::string> want{o->long_name()};
      if (o->type == twin::options::Type::kFlag) {
        rq[o->api_field] = true;
      } else if (o->type == twin::options::Type::kNumber) {
        rq[o->api_field] = o->api_range->lo;
        want.push_back(std::to_string(o->api_range->lo));
      } else {
        rq[o->api_field] = "x1";
        want.push_back("x1");
      }
      auto r = call(req("POST", op.target, rq.dump()));
      ASSERT_EQ(r.status, 202) << r.body;
      const auto& args = b.started.back().args;
      auto at = std::search(args.begin(), args.end(), want.begin(), want.end());
      EXPECT_NE(at, args.end()) << twin::join_names(args);
    }
  }
}

TEST_F(ApiTest, UpChecksTheTopologyFirstAndReturnsItsDiagnostics) {
  auto ok = call(req("POST", "/api/labs",
                     R"({"topology": "name: x\n", "name": "mine", "files": {"frr/leaf1.conf": "!"}})"));
  EXPECT_EQ(ok.status, 202);
  ASSERT_EQ(b.started.size(), 1u);
  EXPECT_EQ(b.started[0].lab, "mine");
  EXPECT_EQ(b.started[0].args,
            (std::vector<std::string>{"up", "@topology.yaml", "--json", "--name", "mine"}));
  EXPECT_EQ(b.started[0].files.at("frr/leaf1.conf"), "!");
  auto bad = call(req("POST", "/api/labs", R"({"topology": "bad"})"));
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(body(bad)["error"]["diagnostics"][0]["line"], 3);
  EXPECT_EQ(b.started.size(), 1u);
}

TEST_F(ApiTest, RefersOnlyToFilesSentWithTheRequest) {
  for (const char* t : {R"({"topology": "nodes:\n  a: {config: /etc/shadow}\n"})",
                        R"({"topology": "nodes:\n  a:\n    image: ../../../etc/passwd\n"})",
                        R"({"topology": "nodes:\n  a:\n    daemons-file: /usr/share/doc/x\n"})",
                        R"({"topology": "x: 1", "files": {"../up": "x"}})",
                        R"({"topology": "x: 1", "files": {"/etc/x": "x"}})",
                        R"({"topology": "x: 1", "files": {"t.yaml": "a: [frr/../../x]"}})"}) {
    auto r = call(req("POST", "/api/labs", t));
    EXPECT_EQ(r.status, 400) << t;
  }
  EXPECT_EQ(b.topology_checks, 0);  // refused before the topology was even read
  EXPECT_TRUE(b.started.empty());
  auto r = call(req("POST", "/api/labs", R"({"topology": "nodes:\n  a: {config: /etc/shadow}\n"})"));
  EXPECT_THAT(body(r)["error"]["message"].get<std::string>(), HasSubstr("line 2: /etc/shadow"));
}

TEST(OutsideReference, ReadsYamlAsTheLoadersDo) {
  using twin::serve::outside_reference;
  EXPECT_EQ(outside_reference("a: 10.0.0.1/24\nb: fd00::1/128\nc: frr/leaf1.conf\n"), "");
  EXPECT_EQ(outside_reference("a: |\n  ip route 10.0.0.0/8 blackhole\n"), "");
  EXPECT_EQ(outside_reference("a: [x, /abs]\n"), "line 1: /abs");
  EXPECT_EQ(outside_reference("a:\n  - b: 'frr/../../../etc'\n"), "line 2: frr/../../../etc");
  EXPECT_EQ(outside_reference("--- \na: 1\n---\nb: ..\n"), "line 4: ..");
  EXPECT_EQ(outside_reference("{{{ not yaml"), "");  // the loader reports it, with its place
  // The CLI's rule (InputPolicy): twin expands no "~", and the image search path is allowed.
  EXPECT_EQ(outside_reference("a: ~root/x\n"), "");
  EXPECT_EQ(outside_reference("image: " + std::string(TWIN_DATA_DIR) + "/images/frr-8.4.yaml\n"),
            "");
  EXPECT_EQ(outside_reference("image: " + std::string(TWIN_DATA_DIR) + "/README.md\n"),
            "line 1: " + std::string(TWIN_DATA_DIR) + "/README.md");
  EXPECT_TRUE(twin::serve::safe_relative_path("frr/leaf1.conf"));
  EXPECT_FALSE(twin::serve::safe_relative_path("frr/../x"));
  EXPECT_FALSE(twin::serve::safe_relative_path(".hidden"));
  EXPECT_FALSE(twin::serve::safe_relative_path("a//b"));
}

TEST_F(ApiTest, TheTokenGuardsChangesAndOnANonLoopbackListenerReadsToo) {
  o.token = "0123456789abcdef0123";
  auto no = call(req("POST", "/api/labs/g1/validate", "{}"));
  EXPECT_EQ(no.status, 401);
  EXPECT_EQ(no.headers["WWW-Authenticate"], "Bearer");
  EXPECT_EQ(call(req("POST", "/api/labs/g1/validate", "{}", {{"authorization", "Bearer wrong"}})).status, 401);
  EXPECT_EQ(call(req("DELETE", "/api/labs/g1")).status, 401);
  EXPECT_EQ(call(req("POST", "/api/labs/g1/nodes/leaf1/exec", R"({"command": ["true"]})")).status, 401);
  EXPECT_TRUE(b.started.empty());
  EXPECT_TRUE(b.execs.empty());
  EXPECT_EQ(call(req("POST", "/api/labs/g1/validate", "{}",
                     {{"authorization", "Bearer 0123456789abcdef0123"}}))
                .status,
            202);
  EXPECT_EQ(call(req("GET", "/api/labs")).status, 200);  // loopback: reads are open
  o.loopback = false;
  EXPECT_EQ(call(req("GET", "/api/labs")).status, 401);
  EXPECT_EQ(call(req("GET", "/api/labs", "", {{"authorization", "Bearer 0123456789abcdef0123"}})).status, 200);
}

TEST_F(ApiTest, AnotherOriginOrAFormPostCannotDriveTheLab) {
  auto r = call(req("POST", "/api/labs/g1/validate", "{}", {{"origin", "http://evil.example"}}));
  EXPECT_EQ(r.status, 403);
  EXPECT_EQ(call(req("POST", "/api/labs/g1/validate", "{}", {{"origin", "http://127.0.0.1:8080"}})).status, 202);
  EXPECT_EQ(call(req("POST", "/api/labs/g1/validate", "only=bgp",
                     {{"content-type", "application/x-www-form-urlencoded"}}))
                .status,
            415);
  EXPECT_EQ(b.started.size(), 1u);
}

TEST_F(ApiTest, ExecTakesAnArgvArray) {
  EXPECT_EQ(call(req("POST", "/api/labs/g1/nodes/leaf1/exec", R"({"command": "ls"})")).status, 400);
  EXPECT_EQ(call(req("POST", "/api/labs/g1/nodes/leaf1/exec", R"({"command": ["ls", 1]})")).status, 400);
  EXPECT_EQ(call(req("POST", "/api/labs/g1/nodes/leaf1/exec", R"({"command": ["ip", "-j", "link"]})")).status,
            200);
  ASSERT_EQ(b.execs.size(), 1u);
  EXPECT_EQ(b.execs[0], (std::vector<std::string>{"ip", "-j", "link"}));
}

TEST(JobBody, AResultFileIsSplicedInAsItIsAndListsLeaveResultsOut) {
  twin::TempDir d;
  std::ofstream(d.path + "/result.json") << "{\"verdict\": \"approve\", \"n\": [1, 2]}\n";
  JobView j;
  j.id = "7";
  j.state = "done";
  j.exit_code = 0;
  j.result_file = d.path + "/result.json";
  auto body = nlohmann::json::parse(job_body(j));
  EXPECT_EQ(body["id"], "7");
  EXPECT_EQ(body["result"]["verdict"], "approve");
  EXPECT_EQ(body["result"]["n"][1], 2);
  EXPECT_FALSE(to_json(j).contains("result"));
  j.result_file.clear();
  EXPECT_TRUE(nlohmann::json::parse(job_body(j))["result"].is_null());
  j.result = {{"summary", {{"passed", 3}}}};
  EXPECT_EQ(nlohmann::json::parse(job_body(j))["result"]["summary"]["passed"], 3);
}

TEST_F(ApiTest, JobsAndCancel) {
  EXPECT_EQ(body(call(req("GET", "/api/jobs/1")))["state"], "done");
  EXPECT_EQ(call(req("GET", "/api/jobs/9")).status, 404);
  EXPECT_EQ(call(req("DELETE", "/api/jobs/1")).status, 409);  // it has ended
  // A running job is cancelled once; a second DELETE must not be a second Ctrl-C.
  EXPECT_EQ(call(req("DELETE", "/api/jobs/2")).status, 202);
  auto again = call(req("DELETE", "/api/jobs/2"));
  EXPECT_EQ(again.status, 409);
  EXPECT_NE(body(again)["error"]["message"].get<std::string>().find("already being cancelled"),
            std::string::npos);
  EXPECT_EQ(b.cancelled.size(), 1u);
}

TEST(LoopbackHost, NamesOfThisMachineOnly) {
  for (const char* h : {"127.0.0.1:8080", "127.1.2.3", "localhost:8080", "LOCALHOST", "[::1]:8080", ""})
    EXPECT_TRUE(twin::serve::loopback_host(h)) << h;
  for (const char* h : {"evil.example:8080", "127.0.0.1.evil.example", "10.0.0.1:8080", "[::2]:80",
                        "128.0.0.1", "127.0.0.256", "localhost.evil.example"})
    EXPECT_FALSE(twin::serve::loopback_host(h)) << h;
}

TEST_F(ApiTest, ALoopbackServerRefusesAForeignHostAndTakesAnyCaseOfBearer) {
  // DNS rebinding: evil.example now resolves to 127.0.0.1; its page must read nothing.
  auto r = req("GET", "/api/labs/g1/history");
  r.headers["host"] = "evil.example:8080";
  EXPECT_EQ(call(r).status, 403);
  auto ws = req("GET", "/api/labs/g1/events");
  ws.headers["host"] = "evil.example:8080";
  ws.headers["origin"] = "http://evil.example:8080";
  Api::WebSocketTarget to;
  Api api(o, b);
  EXPECT_EQ(api.check_websocket(ws, &to)->status, 403);
  o.token = "0123456789abcdef0123";
  Api locked(o, b);
  EXPECT_EQ(locked.handle(req("POST", "/api/labs/g1/validate", "{}",
                              {{"authorization", "bearer 0123456789abcdef0123"}}))
                .status,
            202);
  EXPECT_EQ(locked.handle(req("POST", "/api/labs/g1/validate", "{}",
                              {{"authorization", "Basic 0123456789abcdef0123"}}))
                .status,
            401);
  // A terminal to a node the lab does not have is refused before the upgrade.
  EXPECT_EQ(api.check_websocket(req("GET", "/api/labs/g1/nodes/ghost/terminal"), &to)->status, 404);
}

TEST_F(ApiTest, WorkOnALabThatIsNotRunningIs404AndStartsNothing) {
  for (const auto& [m, t] : std::vector<std::pair<std::string, std::string>>{
           {"POST", "/api/labs/nope/validate"}, {"POST", "/api/labs/nope/drill"},
           {"DELETE", "/api/labs/nope"}})
    EXPECT_EQ(call(req(m, t, m == "POST" ? "{}" : "")).status, 404) << m << " " << t;
  EXPECT_EQ(call(req("POST", "/api/labs/nope/apply", R"({"change": "version: 1\n"})")).status, 404);
  EXPECT_EQ(call(req("POST", "/api/labs/g1/nodes/ghost/exec", R"({"command": ["true"]})")).status, 404);
  EXPECT_TRUE(b.started.empty());
  EXPECT_TRUE(b.execs.empty());
}

TEST_F(ApiTest, WebSocketUpgradesFollowTheSameRules) {
  Api api(o, b);
  Api::WebSocketTarget to;
  EXPECT_FALSE(api.check_websocket(req("GET", "/api/labs/g1/events"), &to));
  EXPECT_EQ(to.lab, "g1");
  EXPECT_EQ(to.kind, "events");
  EXPECT_EQ(api.check_websocket(req("GET", "/api/labs/g1/other"), &to)->status, 404);
  EXPECT_EQ(api.check_websocket(req("GET", "/api/labs/g1/events", "", {{"origin", "http://x"}}), &to)->status,
            403);
  // Without a token configured (loopback), a terminal opens: the operator chose no token.
  EXPECT_FALSE(api.check_websocket(req("GET", "/api/labs/g1/nodes/leaf1/terminal"), &to));
  EXPECT_EQ(to.kind, "terminal");
  EXPECT_EQ(to.node, "leaf1");
  EXPECT_EQ(api.check_websocket(req("GET", "/api/labs/g1/nodes/le$af/terminal"), &to)->status, 400);
  o.token = "0123456789abcdef0123";
  Api loopback_token(o, b);
  // On loopback with a token, events stay readable but a terminal needs the token.
  EXPECT_FALSE(loopback_token.check_websocket(req("GET", "/api/labs/g1/events"), &to));
  EXPECT_EQ(loopback_token.check_websocket(req("GET", "/api/labs/g1/nodes/leaf1/terminal"), &to)->status, 401);
  EXPECT_EQ(loopback_token.check_websocket(req("GET", "/api/labs/g1/nodes/leaf1/terminal?token=wrong-token-0000000"), &to)->status, 401);
  EXPECT_FALSE(loopback_token.check_websocket(
      req("GET", "/api/labs/g1/nodes/leaf1/terminal?token=0123456789abcdef0123"), &to));
  o.loopback = false;
  Api locked(o, b);
  EXPECT_EQ(locked.check_websocket(req("GET", "/api/labs/g1/events"), &to)->status, 401);
  EXPECT_FALSE(locked.check_websocket(req("GET", "/api/labs/g1/events?token=0123456789abcdef0123"), &to));
}

TEST_F(ApiTest, ThePageAndD3AreServedAsUtf8) {
  twin::TempDir web;
  std::ofstream(web.path + "/index.html") << "<!doctype html>";
  std::ofstream(web.path + "/d3.js") << "/* d3 */";
  o.web_dir = web.path;
  o.d3_path = web.path + "/d3.js";
  auto page = call(req("GET", "/"));
  EXPECT_EQ(page.status, 200);
  EXPECT_EQ(page.content_type, "text/html; charset=utf-8");
  EXPECT_EQ(page.body, "<!doctype html>");
  auto d3 = call(req("GET", "/d3.min.js"));
  EXPECT_EQ(d3.content_type, "text/javascript; charset=utf-8");
  EXPECT_EQ(d3.body, "/* d3 */");
  EXPECT_EQ(call(req("GET", "/etc-passwd")).status, 404);
  EXPECT_EQ(call(req("GET", "/app.js")).status, 500);  // named, but not in this folder
}

TEST(OpenApi, DescribesEveryRoute) {
  auto d = Api::openapi();
  EXPECT_EQ(d["openapi"], "3.0.3");
  for (const auto& [path, method] : std::vector<std::pair<std::string, std::string>>{
           {"/api/labs", "get"},
           {"/api/labs", "post"},
           {"/api/labs/{lab}", "get"},
           {"/api/labs/{lab}", "delete"},
           {"/api/labs/{lab}/graph", "get"},
           {"/api/labs/{lab}/history", "get"},
           {"/api/labs/{lab}/reports/{name}", "get"},
           {"/api/labs/{lab}/events", "get"},
           {"/api/labs/{lab}/nodes/{node}", "get"},
           {"/api/labs/{lab}/nodes/{node}/terminal", "get"},
           {"/api/labs/{lab}/nodes/{node}/exec", "post"},
           {"/api/labs/{lab}/validate", "post"},
           {"/api/labs/{lab}/apply", "post"},
           {"/api/labs/{lab}/drill", "post"},
           {"/api/labs/{lab}/traffic", "post"},
           {"/api/run", "post"},
           {"/api/jobs", "get"},
           {"/api/jobs/{id}", "get"},
           {"/api/jobs/{id}", "delete"},
           {"/api/openapi.json", "get"}})
    EXPECT_TRUE(d["paths"].contains(path) && d["paths"][path].contains(method)) << method << " " << path;
}

// The router's table and the document agree both ways: nothing answered goes undescribed,
// nothing described is unanswered.
TEST(OpenApi, DescribesExactlyTheRoutesOfTheRouter) {
  const auto d = Api::openapi();
  std::set<std::pair<std::string, std::string>> routes, described;
  for (const Api::Route& r : Api::routes()) {
    std::string m = r.method;
    std::transform(m.begin(), m.end(), m.begin(), [](unsigned char c) { return std::tolower(c); });
    EXPECT_TRUE(routes.insert({r.pattern, m}).second)
        << "declared twice: " << m << " " << r.pattern;
  }
  for (const auto& [path, item] : d["paths"].items())
    for (const auto& [key, o] : item.items()) {
      if (key == "parameters") continue;
      described.insert({path, key});
      EXPECT_FALSE(o.value("summary", "").empty()) << key << " " << path << " has no description";
      // A change needs the token whenever one is set: the document says so of exactly those.
      const bool change = key == "post" || key == "delete";
      EXPECT_EQ(o.contains("security"), change) << key << " " << path;
    }
  EXPECT_EQ(routes, described);
}

// The document's Graph and GraphLink name exactly what twin's graph JSON gives (the counters
// and rate the page computes utilisation from included).
TEST(OpenApi, GraphSchemasNameEveryFieldOfTheGraphJson) {
  twin::graph::Graph g;
  g.links.emplace_back();
  const auto j = twin::graph::to_json(g);
  const auto d = Api::openapi();
  auto keys = [](const nlohmann::json& o) {
    std::set<std::string> k;
    for (const auto& [key, v] : o.items()) k.insert(key);
    return k;
  };
  EXPECT_EQ(keys(d["components"]["schemas"]["Graph"]["properties"]), keys(j));
  EXPECT_EQ(keys(d["components"]["schemas"]["GraphLink"]["properties"]), keys(j["links"][0]));
}

// A route's access is what its method has always meant to the token and origin rules.
TEST(Routes, ReadsAreGetsAndChangesArePostsAndDeletes) {
  for (const Api::Route& r : Api::routes()) {
    SCOPED_TRACE(r.method + " " + r.pattern);
    if (r.access == Api::Access::kChange)
      EXPECT_TRUE(r.method == "POST" || r.method == "DELETE");
    else
      EXPECT_EQ(r.method, "GET");
    EXPECT_TRUE(r.pattern.starts_with("/api/"));
    EXPECT_EQ(r.access == Api::Access::kUpgrade,
              r.pattern.ends_with("/events") || r.pattern.ends_with("/terminal"));
  }
}

// What a method no route takes is answered today, path by path (no Allow header).
TEST_F(ApiTest, AMethodNoRouteTakesIs405UnderLabsAndJobsAnd404Elsewhere) {
  const std::string kDoc = " (see /api/openapi.json)";
  for (const auto& [m, t, status, message] :
       std::vector<std::tuple<std::string, std::string, int, std::string>>{
           {"PUT", "/api/labs", 405, "PUT /api/labs is not an operation of this API"},
           {"PATCH", "/api/labs/g1", 405, "PATCH /api/labs/g1 is not an operation of this API"},
           {"POST", "/api/labs/g1/nodes/leaf1", 405,
            "POST /api/labs/g1/nodes/leaf1 is not an operation of this API"},
           {"GET", "/api/labs/g1/nodes/leaf1/exec", 405,
            "GET /api/labs/g1/nodes/leaf1/exec is not an operation of this API"},
           {"GET", "/api/labs/g1/validate", 405,
            "GET /api/labs/g1/validate is not an operation of this API" + kDoc},
           {"DELETE", "/api/labs/g1/graph", 405,
            "DELETE /api/labs/g1/graph is not an operation of this API" + kDoc},
           {"POST", "/api/jobs", 405, "POST /api/jobs is not an operation of this API" + kDoc},
           {"PUT", "/api/jobs/1", 405, "PUT /api/jobs/1 is not an operation of this API" + kDoc},
           {"PUT", "/api/jobs/9", 404, "no job '9'"},  // the job is looked up first
           {"get", "/api/labs", 405, "get /api/labs is not an operation of this API"},
           // A WebSocket's path without the upgrade.
           {"GET", "/api/labs/g1/events", 405,
            "GET /api/labs/g1/events is not an operation of this API" + kDoc},
           {"GET", "/api/labs/g1/nodes/leaf1/terminal", 405,
            "GET /api/labs/g1/nodes/leaf1/terminal is not an operation of this API"},
           {"POST", "/api/openapi.json", 404, "no resource /api/openapi.json" + kDoc},
           {"GET", "/api/run", 404, "no resource /api/run" + kDoc},
           {"POST", "/", 404, "no resource /"},
           {"DELETE", "/index.html", 404, "no resource /index.html"}}) {
    SCOPED_TRACE(m + " " + t);
    auto r = call(req(m, t, m == "POST" || m == "PUT" || m == "PATCH" ? "{}" : ""));
    EXPECT_EQ(r.status, status);
    EXPECT_EQ(body(r)["error"]["message"], message);
    EXPECT_EQ(r.content_type, "application/json");
    EXPECT_TRUE(r.headers.empty());
  }
  EXPECT_TRUE(b.started.empty());
}

// A path no route has: 404 outside a lab and a job, 405 inside one, after its names are checked.
TEST_F(ApiTest, AnUnknownPathIs404OrInsideALabOrJob405) {
  const std::string kDoc = " (see /api/openapi.json)";
  for (const auto& [t, status, message] : std::vector<std::tuple<std::string, int, std::string>>{
           {"/api", 404, "no resource /api" + kDoc},
           {"/api/nothing", 404, "no resource /api/nothing" + kDoc},
           {"/api/run/x", 404, "no resource /api/run/x" + kDoc},
           {"/api/openapi.json/x", 404, "no resource /api/openapi.json/x" + kDoc},
           {"/x/y", 404, "no resource /x/y"},
           {"/nope", 404, "no page /nope"},
           {"/api/labs/g1/nothing", 405,
            "GET /api/labs/g1/nothing is not an operation of this API" + kDoc},
           {"/api/labs/g1/nodes", 405,
            "GET /api/labs/g1/nodes is not an operation of this API" + kDoc},
           {"/api/labs/g1/graph/x", 405,
            "GET /api/labs/g1/graph/x is not an operation of this API" + kDoc},
           {"/api/labs/g1/nodes/leaf1/x/y", 405,
            "GET /api/labs/g1/nodes/leaf1/x/y is not an operation of this API"},
           {"/api/jobs/9/x", 405, "GET /api/jobs/9/x is not an operation of this API" + kDoc},
           {"/api/labs/-x/nothing", 400, "invalid lab name '-x'"},
           {"/api/labs/g1/nodes/.n/x", 400, "invalid node name '.n'"},
           {"/api/labs/-x/nodes/.n", 400, "invalid lab name '-x'"}}) {
    SCOPED_TRACE(t);
    auto r = call(req("GET", t));
    EXPECT_EQ(r.status, status);
    EXPECT_EQ(body(r)["error"]["message"], message);
    EXPECT_TRUE(r.headers.empty());
  }
}

// The token comes before a 404, a 405 or a name check: without it nothing is said of what exists.
TEST_F(ApiTest, TheTokenComesBeforeA404Or405) {
  o.token = "0123456789abcdef0123";
  for (const auto& [m, t] :
       std::vector<std::pair<std::string, std::string>>{{"POST", "/api/nothing"},
                                                        {"PUT", "/api/labs"},
                                                        {"DELETE", "/api/jobs/9"},
                                                        {"POST", "/api/labs/-x/validate"}})
    EXPECT_EQ(call(req(m, t)).status, 401) << m << " " << t;
  o.loopback = false;
  EXPECT_EQ(call(req("GET", "/api/nothing")).status, 401);
  EXPECT_EQ(call(req("GET", "/api/jobs/9")).status, 401);
}

TEST(Listener, LoopbackAddresses) {
  EXPECT_TRUE(twin::serve::is_loopback("127.0.0.1"));
  EXPECT_TRUE(twin::serve::is_loopback("127.8.0.1"));
  EXPECT_TRUE(twin::serve::is_loopback("::1"));
  EXPECT_FALSE(twin::serve::is_loopback("0.0.0.0"));
  EXPECT_FALSE(twin::serve::is_loopback("10.1.1.1"));
  EXPECT_FALSE(twin::serve::is_loopback("localhost"));  // not an address: refused by serve()
}

}  // namespace
