#pragma once
// twin serve's HTTP API, apart from the network: a Request in, a Response out. Routing, the
// token and origin rules, size limits and input checks live here, against a Backend (the real
// one runs twin's own commands; unit tests give a fake). Every error is JSON:
// {"error": {"status": 400, "message": "...", "diagnostics": [...]}} and changes nothing.
//
// Security model (docs/serve.md, "Security"):
// - The server listens on loopback unless a token is configured (server.hpp refuses otherwise).
// - With a token, every state-changing request (POST, DELETE), every command run in a node and
//   every terminal needs `Authorization: Bearer <token>` (WebSocket: `?token=`); on a non-loopback
//   listener, reads need it too. The token grants what root in a node grants.
// - A state-changing request must say `Content-Type: application/json`, and a request that
//   carries an Origin (a browser) must come from the server's own origin: another web page
//   cannot drive the lab through the user's browser (no CORS is ever allowed).
// - A topology, change set or scenario sent refers only to files sent with it and to image
//   profiles by name: absolute paths, `..` and `~` anywhere in it are refused before anything runs.
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "twin/core/input_policy.hpp"

namespace twin::serve {

// Bytes: a topology with its configs fits. The CLI's cap on an input file, so nothing the API
// accepts is refused by the job it starts for being too large.
inline constexpr size_t kMaxBody = kMaxInputBytes;

struct Request {
  std::string method;                         // "GET", "POST", ...
  std::string target;                         // path and query, as sent: "/api/labs?x=1"
  std::map<std::string, std::string> headers;  // names lower-case
  std::string body;
};

struct Response {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::map<std::string, std::string> headers;  // extra ones
};

// The JSON error response.
Response error(int status, const std::string& message,
               const nlohmann::json& diagnostics = nullptr);

// A job: long work (up, down, validate, apply, run, drill) runs as `twin <command> --json` in a
// child process, so the API uses the CLI's own code paths and lab locks; its result is the
// command's JSON on stdout, the same the CLI prints.
struct JobView {
  std::string id, kind, lab;
  std::string state;  // "running" | "done" | "failed" | "cancelled"
  std::string started_at, ended_at;
  std::vector<std::string> progress;  // the command's stderr lines so far
  int exit_code = -1;                 // the command's (docs/troubleshooting.md, "Exit codes")
  nlohmann::json result;              // its stdout parsed, null when not JSON (yet), or:
  std::string result_file;            // where its stdout (checked to be JSON) is kept: a large
                                      // report (8x48 validate: ~10 MB) stays on disk, not in RAM
  std::vector<std::string> argv;      // what runs, for the record
};
// Without the result (lists of jobs).
nlohmann::json to_json(const JobView& j);
// The job with its result, as the HTTP body: a result file is spliced in as it is (not parsed
// and printed again).
std::string job_body(const JobView& j);

// Files sent with a request: relative path -> content.
using Files = std::map<std::string, std::string>;

class Backend {
 public:
  virtual ~Backend() = default;
  virtual nlohmann::json labs() = 0;  // {"running": [...], "history": [...]}
  // The image profiles and whether this machine runs each (engine::image_catalog, `twin
  // images --json`).
  virtual std::optional<nlohmann::json> images(Response* err) = 0;
  // Errors are returned as Responses (status + message); success as JSON.
  virtual std::optional<nlohmann::json> lab_status(const std::string& lab, Response* err) = 0;
  virtual std::optional<nlohmann::json> lab_graph(const std::string& lab, Response* err) = 0;
  // A rendering of the graph: "dot", "svg", "mermaid".
  virtual std::optional<std::string> lab_graph_text(const std::string& lab,
                                                    const std::string& format, Response* err) = 0;
  virtual std::optional<nlohmann::json> node_detail(const std::string& lab,
                                                    const std::string& node, Response* err) = 0;
  virtual std::optional<nlohmann::json> history(const std::string& lab, uint64_t after_seq,
                                                Response* err) = 0;
  virtual std::optional<nlohmann::json> report(const std::string& lab, const std::string& name,
                                               Response* err) = 0;
  // Checks a topology (written with its files into a scratch folder) the way `twin plan`
  // does; the diagnostics on failure.
  virtual std::optional<nlohmann::json> check_topology(const std::string& topology,
                                                       const Files& files, const std::string& name,
                                                       Response* err) = 0;
  // Starts `twin <args...>` with `files` (and the main input as `main_name`) in a scratch
  // folder the job owns; `args` may name them by their relative paths.
  virtual JobView start_job(const std::string& kind, const std::string& lab,
                            const std::vector<std::string>& args, const Files& files) = 0;
  virtual std::vector<JobView> jobs() = 0;
  virtual std::optional<JobView> job(const std::string& id) = 0;
  // Whether `lab` is running (its state file is there) and, when `node` is given, has that node.
  virtual bool running(const std::string& lab, const std::string& node = "") = 0;
  // SIGTERM to the job's process, once: false when it is not running or already cancelled.
  virtual bool cancel_job(const std::string& id) = 0;
  // Runs a command in a node (twin exec), at most `timeout_s`; {"exit_code","stdout","stderr"}.
  virtual std::optional<nlohmann::json> exec(const std::string& lab, const std::string& node,
                                             const std::vector<std::string>& command,
                                             double timeout_s, Response* err) = 0;
};

struct ApiOptions {
  std::string token;       // "" = none configured
  bool loopback = true;    // the listener is on a loopback address
  std::string web_dir;     // the page's files (index.html, app.js, app.css)
  std::string d3_path = "/usr/share/javascript/d3/d3.min.js";  // Debian's libjs-d3
  std::string bundle_dir;  // xterm.js and xterm.css, bundled at build time (CMakeLists.txt)
};

class Api {
 public:
  Api(ApiOptions o, Backend& b) : o_(std::move(o)), b_(b) {}
  // Who may use a route, by the rules at the top of this file.
  enum class Access {
    kRead,     // the token only on a non-loopback listener
    kChange,   // the token whenever one is set, and a body sent as JSON (POST, DELETE)
    kUpgrade,  // a WebSocket: check_websocket's rules, not handle's
  };
  // One operation: `method` on `pattern`, in which {x} is one path segment
  // ("/api/labs/{lab}/nodes/{node}").
  struct Route {
    std::string method, pattern;
    Access access;
  };
  // Every operation of the API, as the router declares it; the OpenAPI document lists exactly
  // these.
  static const std::vector<Route>& routes();
  // The page and its assets (GET / and /<file>), or a route. A request no route takes is 404,
  // or 405 (no Allow header) under /api/labs and /api/jobs; either after the token rules.
  Response handle(const Request& r);
  // For a WebSocket upgrade: empty when allowed (and `to` says where), else the refusal.
  //   /api/labs/{lab}/events                  the event stream (reads' rules)
  //   /api/labs/{lab}/nodes/{node}/terminal   a terminal: `twin shell` in a pty, a root shell
  //                                           in the node; needs the token whenever one is set
  // A browser cannot set headers on a WebSocket, so the token comes as `?token=`.
  struct WebSocketTarget {
    std::string kind;  // "events" | "terminal"
    std::string lab, node;
  };
  std::optional<Response> check_websocket(const Request& r, WebSocketTarget* to) const;
  // The OpenAPI 3.0 document served at /api/openapi.json.
  static nlohmann::json openapi();

 private:
  [[nodiscard]] std::optional<Response> host_refused(const Request& r) const;
  std::optional<Response> guard(const Request& r, bool changes_state) const;
  ApiOptions o_;
  Backend& b_;
};

// Whether a YAML text (topology, change set, scenario) refers to a path outside what was sent
// with it: any value that, read as a path in the request's folder, lies outside it by the CLI's
// own rule (core/input_policy.hpp, InputPolicy::inside, with the image search path allowed as
// for the CLI) — an absolute path elsewhere, or one that climbs out with "..". The first
// offending "line N: value" or "" when clean. Used on everything the API receives, so such a
// request is refused (400) before a job starts; the job runs with the request's folder as its
// only root (--input-root), under the same policy.
std::string outside_reference(const std::string& yaml_text);
// A file name sent with a request: relative, no "..", no empty or hidden segments, at most 200
// characters of A-Z a-z 0-9 . _ - /.
bool safe_relative_path(const std::string& p);
// Whether a Host header names this machine's loopback (127.0.0.0/8, localhost, [::1], any
// port); an empty one counts as loopback.
bool loopback_host(const std::string& host_header);

}  // namespace twin::serve
