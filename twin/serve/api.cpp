#include "twin/serve/api.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <regex>
#include <set>
#include <sstream>

#include "twin/core/util.hpp"
#include "twin/options/table.hpp"
#include "twin/topology/image_profile.hpp"
#include "twin/topology/names.hpp"

namespace twin::serve {
namespace {

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : path) {
    if (c == '/') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

// A query component decoded (RFC 3986 percent-encoding, '+' as space); a malformed escape
// stays as it is.
std::string percent_decode(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out += ' ';
    } else if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
               std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::map<std::string, std::string> parse_query(const std::string& q) {
  std::map<std::string, std::string> out;
  std::stringstream ss(q);
  std::string kv;
  while (std::getline(ss, kv, '&')) {
    auto eq = kv.find('=');
    if (eq == std::string::npos)
      out[percent_decode(kv)] = "";
    else
      out[percent_decode(kv.substr(0, eq))] = percent_decode(kv.substr(eq + 1));
  }
  return out;
}

bool valid_node_name(const std::string& n) {
  static const std::regex re("[A-Za-z0-9][A-Za-z0-9_.-]{0,62}");
  return std::regex_match(n, re);
}

Response json_response(int status, const nlohmann::json& j) {
  Response r;
  r.status = status;
  r.body = j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  return r;
}

// Constant time in the length of `given`: the comparison does not leak how much matched.
bool same_secret(const std::string& given, const std::string& want) {
  unsigned char diff = given.size() == want.size() ? 0 : 1;
  for (size_t i = 0; i < given.size(); ++i)
    diff |= static_cast<unsigned char>(given[i] ^ want[i % std::max<size_t>(1, want.size())]);
  return diff == 0;
}

std::string header(const Request& r, const std::string& name) {
  auto it = r.headers.find(name);
  return it == r.headers.end() ? "" : it->second;
}

// Whether the request carries `token` (none configured: it does).
bool token_ok(const Request& r, const std::string& token) {
  if (token.empty()) return true;
  std::string auth = header(r, "authorization");
  // The scheme is case-insensitive (RFC 7235 §2.1).
  if (auth.size() < 7) return false;
  std::string scheme = auth.substr(0, 7);
  for (auto& c : scheme) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (scheme != "bearer ") return false;
  return same_secret(trim(auth.substr(7)), token);
}

// A body's optional string/bool/number fields, with the type checked.
struct Body {
  nlohmann::json j;
  std::string problem;
  std::set<std::string> used;  // the fields the operation read
  // The first problem, or a field the operation does not take (a typo such as "onyl" must
  // not silently run a full validation).
  std::optional<Response> check() const {
    if (!problem.empty()) return error(400, problem);
    if (j.is_object())
      for (const auto& [k, v] : j.items())
        if (!used.count(k)) {
          std::string known;
          for (const auto& u : used) known += (known.empty() ? "" : ", ") + u;
          return error(400, "field '" + k + "' is not one this operation takes" +
                                (known.empty() ? std::string(" (it takes none)") : "; it takes: " + known));
        }
    return std::nullopt;
  }
  std::string str(const char* key) {
    used.insert(key);
    if (!j.contains(key) || j[key].is_null()) return "";
    if (!j[key].is_string()) {
      problem = std::string("field '") + key + "': expected a string";
      return "";
    }
    return j[key].get<std::string>();
  }
  bool flag(const char* key) {
    used.insert(key);
    if (!j.contains(key) || j[key].is_null()) return false;
    if (!j[key].is_boolean()) {
      problem = std::string("field '") + key + "': expected true or false";
      return false;
    }
    return j[key].get<bool>();
  }
  // `whole`: an integer option's field, refused unless a whole number (never truncated).
  std::optional<double> number(const char* key, double lo, double hi, bool whole = false) {
    used.insert(key);
    if (!j.contains(key) || j[key].is_null()) return std::nullopt;
    if (!j[key].is_number() || j[key].get<double>() < lo || j[key].get<double>() > hi ||
        (whole && j[key].get<double>() != std::floor(j[key].get<double>()))) {
      problem = std::string("field '") + key + "': expected " + (whole ? "a whole" : "a") +
                " number from " + std::to_string(static_cast<int>(lo)) + " to " +
                std::to_string(static_cast<int>(hi));
      return std::nullopt;
    }
    return j[key].get<double>();
  }
  // The object `key` ("files", or "configs" for rendered per-node configs) of relative path ->
  // content.
  Files files(const char* key = "files") {
    used.insert(key);
    Files out;
    if (!j.contains(key) || j[key].is_null()) return out;
    const std::string k0 = key;
    if (!j[key].is_object()) {
      problem = "field '" + k0 + "': expected an object of relative path -> file content";
      return out;
    }
    for (const auto& [k, v] : j[key].items()) {
      if (!safe_relative_path(k)) {
        problem = k0 + ": '" + k + "' is not a relative path inside the request (no '/' at the "
                  "start, no '..', A-Z a-z 0-9 . _ - / only)";
        return {};
      }
      if (!v.is_string()) {
        problem = k0 + ": '" + k + "': expected the file's content as a string";
        return {};
      }
      out[k] = v.get<std::string>();
    }
    return out;
  }
};

std::optional<Body> parse_body(const Request& r, Response* err) {
  Body b;
  if (r.body.empty()) {
    b.j = nlohmann::json::object();
    return b;
  }
  b.j = nlohmann::json::parse(r.body, nullptr, false);
  if (b.j.is_discarded() || !b.j.is_object()) {
    *err = error(400, "the body is not a JSON object");
    return std::nullopt;
  }
  return b;
}

// Every YAML sent (the main text and the files) checked for references outside the request.
std::optional<Response> check_references(const std::string& what, const std::string& text,
                                         const Files& files) {
  if (auto bad = outside_reference(text); !bad.empty())
    return error(400, what + " refers outside what was sent (" + bad +
                          "): send the files it needs in 'files' and refer to them by relative "
                          "path, images by profile name");
  for (const auto& [name, content] : files)
    if (name.ends_with(".yaml") || name.ends_with(".yml"))
      if (auto bad = outside_reference(content); !bad.empty())
        return error(400, "files: " + name + " refers outside what was sent (" + bad + ")");
  return std::nullopt;
}

// The options of a job's command that a request gives (the command table's entries with an
// API field: options/table.hpp), read from the body with their types and the API's bounds.
struct JobOptions {
  std::vector<std::pair<const options::Option*, nlohmann::json>> given;  // in argv order

  // The option's value as given ("" / absent when not).
  std::string str(const std::string& long_name) const {
    for (const auto& [o, v] : given)
      if (o->long_name() == long_name && v.is_string()) return v.get<std::string>();
    return "";
  }
  // The job's arguments for them, as the CLI spells them.
  void append_to(std::vector<std::string>& args) const {
    for (const auto& [o, v] : given) {
      if (v.is_boolean()) {
        if (v.get<bool>()) args.push_back(o->long_name());
      } else if (v.is_string()) {
        if (!v.get<std::string>().empty())
          args.insert(args.end(), {o->long_name(), v.get<std::string>()});
      } else if (v.is_number()) {
        // An integer option as CLI11 parses it ("4", not "4.000000", which it refuses).
        args.insert(args.end(),
                    {o->long_name(), o->type == options::Type::kInteger
                                         ? std::to_string(static_cast<long long>(v.get<double>()))
                                         : std::to_string(v.get<double>())});
      }
    }
  }
  // The options whose next argument is a value taken from the request.
  bool valued(const std::string& arg) const {
    for (const auto& [o, v] : given)
      if (o->long_name() == arg && o->type != options::Type::kFlag) return true;
    return false;
  }
};

JobOptions read_options(Body& body, const std::string& command) {
  JobOptions out;
  for (const options::Option* o : options::api_options(command)) {
    const char* field = o->api_field.c_str();
    switch (o->type) {
      case options::Type::kFlag:
        out.given.emplace_back(o, body.flag(field));
        break;
      case options::Type::kNumber:
      case options::Type::kInteger: {
        const options::Range r = o->api_range ? *o->api_range : o->range.value_or(options::Range{});
        if (auto n = body.number(field, r.lo, r.hi, o->type == options::Type::kInteger))
          out.given.emplace_back(o, *n);
        break;
      }
      default:
        out.given.emplace_back(o, body.str(field));
        break;
    }
  }
  return out;
}

Response accepted(const JobView& j) {
  Response r;
  r.status = 202;
  r.body = job_body(j);
  r.headers["Location"] = "/api/jobs/" + j.id;
  return r;
}

}  // namespace

Response error(int status, const std::string& message, const nlohmann::json& diagnostics) {
  nlohmann::json e{{"status", status}, {"message", message}};
  if (!diagnostics.is_null()) e["diagnostics"] = diagnostics;
  return json_response(status, {{"error", e}});
}

nlohmann::json to_json(const JobView& j) {
  return {{"id", j.id},
          {"kind", j.kind},
          {"lab", j.lab},
          {"state", j.state},
          {"started_at", j.started_at},
          {"ended_at", j.ended_at},
          {"progress", j.progress},
          {"exit_code", j.exit_code},
          {"argv", j.argv}};
}

std::string job_body(const JobView& j) {
  std::string head = to_json(j).dump(2);
  head.pop_back();  // the closing brace: the result goes last
  head = trim_end(std::move(head));
  std::string result = j.result.dump(2);
  if (j.result.is_null() && !j.result_file.empty()) {
    if (auto text = read_file(j.result_file)) result = std::move(*text);
  }
  result = trim_end(std::move(result));
  return head + ",\n  \"result\": " + result + "\n}\n";
}

namespace {
// Where a request's files are taken to lie for the check: only a value's place relative to it
// matters (the job's folder, <jobs root>/<id>, holds the same files at the same places). It
// need not exist: below it a path is read as written.
constexpr const char* kRequestFolder = "/run/twin-serve/request";

const InputPolicy& request_policy() {
  static const InputPolicy p =
      InputPolicy::only(kRequestFolder, "what the request sent")
          .with_roots(topology::image_search_path(""), "image search path");
  return p;
}

bool outside(const std::string& v) {
  return !v.empty() &&
         !request_policy().inside((std::filesystem::path(kRequestFolder) / v).string());
}
std::string first_outside(const YAML::Node& n) {
  if (n.IsScalar()) {
    const std::string& v = n.Scalar();
    return outside(v) ? "line " + std::to_string(n.Mark().line + 1) + ": " + v : "";
  }
  if (n.IsSequence())
    for (const auto& c : n)
      if (auto b = first_outside(c); !b.empty()) return b;
  if (n.IsMap())
    for (const auto& kv : n) {
      if (auto b = first_outside(kv.first); !b.empty()) return b;
      if (auto b = first_outside(kv.second); !b.empty()) return b;
    }
  return "";
}
}  // namespace

std::string outside_reference(const std::string& text) {
  try {
    // Every document of the text, every scalar, keys included (YAML's own parser: quoting,
    // flow style and block scalars are read as the loaders will read them).
    for (const auto& doc : YAML::LoadAll(text))
      if (auto b = first_outside(doc); !b.empty()) return b;
  } catch (const YAML::Exception&) {
    // Not YAML: the loader says where, with file:line:col, and nothing runs.
  }
  return "";
}

bool safe_relative_path(const std::string& p) {
  static const std::regex re("[A-Za-z0-9_][A-Za-z0-9._-]*(/[A-Za-z0-9_][A-Za-z0-9._-]*)*");
  return p.size() <= 200 && std::regex_match(p, re) && p.find("..") == std::string::npos;
}

bool loopback_host(const std::string& host_header) {
  if (host_header.empty()) return true;  // HTTP/1.0 tools; a browser always sends one
  std::string h = host_header;
  if (h.front() == '[') {
    auto end = h.find(']');
    h = end == std::string::npos ? h : h.substr(1, end - 1);
  } else if (auto colon = h.rfind(':'); colon != std::string::npos) {
    h = h.substr(0, colon);
  }
  for (auto& c : h) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (h == "localhost" || h == "::1") return true;
  unsigned a, b, c, d;
  char extra;
  return std::sscanf(h.c_str(), "%u.%u.%u.%u%c", &a, &b, &c, &d, &extra) == 4 && a == 127 &&
         b < 256 && c < 256 && d < 256;
}

std::optional<Response> Api::host_refused(const Request& r) const {
  // DNS rebinding: a web page whose name now resolves to 127.0.0.1 would reach a loopback
  // server as its own origin. On loopback (where reads need no token) the Host must be a
  // loopback name; elsewhere every request needs the token anyway.
  if (o_.loopback && !loopback_host(header(r, "host")))
    return error(403, "Host '" + header(r, "host") +
                          "' is not this server's: it answers on loopback names only "
                          "(127.0.0.1, localhost, [::1])");
  return std::nullopt;
}

std::optional<Response> Api::guard(const Request& r, bool changes_state) const {
  if (auto h = host_refused(r)) return h;
  // A browser's request says where it comes from; only this server's own page may act.
  std::string origin = header(r, "origin");
  if (!origin.empty() && origin != "http://" + header(r, "host") &&
      origin != "https://" + header(r, "host"))
    return error(403, "origin " + origin + " may not use this server (only its own page may)");
  if (changes_state) {
    std::string ct = header(r, "content-type");
    if (!r.body.empty() && ct.rfind("application/json", 0) != 0)
      return error(415, "a request that changes a lab sends JSON (Content-Type: application/json)");
  }
  bool need_token = !o_.token.empty() && (changes_state || !o_.loopback);
  if (need_token && !token_ok(r, o_.token)) {
    auto e = error(401, "this request needs the server's token: Authorization: Bearer <token>");
    e.headers["WWW-Authenticate"] = "Bearer";
    return e;
  }
  return std::nullopt;
}

std::optional<Response> Api::check_websocket(const Request& r, WebSocketTarget* to) const {
  auto q = r.target.find('?');
  std::string path = r.target.substr(0, q);
  auto query = parse_query(q == std::string::npos ? "" : r.target.substr(q + 1));
  auto parts = split_path(path);
  bool events = parts.size() == 4 && parts[0] == "api" && parts[1] == "labs" && parts[3] == "events";
  bool terminal = parts.size() == 6 && parts[0] == "api" && parts[1] == "labs" &&
                  parts[3] == "nodes" && parts[5] == "terminal";
  if (!events && !terminal)
    return error(404, "no WebSocket at " + path +
                          "; events are at /api/labs/{lab}/events, terminals at "
                          "/api/labs/{lab}/nodes/{node}/terminal");
  if (!topology::valid_lab_name(parts[2])) return error(400, "invalid lab name '" + parts[2] + "'");
  if (terminal && !valid_node_name(parts[4]))
    return error(400, "invalid node name '" + parts[4] + "'");
  if (auto h = host_refused(r)) return h;
  std::string origin = header(r, "origin");
  if (!origin.empty() && origin != "http://" + header(r, "host"))
    return error(403, "origin " + origin + " may not open this server's WebSocket");
  if (!o_.token.empty() && (terminal || !o_.loopback)) {
    Request with = r;
    if (query.count("token")) with.headers["authorization"] = "Bearer " + query["token"];
    if (!token_ok(with, o_.token))
      return error(401, std::string(terminal ? "a terminal" : "the event stream") +
                            " needs the server's token (?token=)");
  }
  if (terminal && !b_.running(parts[2], parts[4]))
    return error(404, "lab '" + parts[2] + "' is not running or has no node '" + parts[4] + "'");
  to->kind = terminal ? "terminal" : "events";
  to->lab = parts[2];
  to->node = terminal ? parts[4] : "";
  return std::nullopt;
}

namespace {

// The page and its assets: no token (they hold no lab data), UTF-8 declared (d3's minified
// file has non-ASCII characters: without a charset Chromium stops on a SyntaxError).
Response page(const ApiOptions& o, const std::string& name, const std::string& path) {
  static const std::map<std::string, std::string> kTypes{
      {"index.html", "text/html; charset=utf-8"},
      {"app.js", "text/javascript; charset=utf-8"},
      {"app.css", "text/css; charset=utf-8"},
      {"d3.min.js", "text/javascript; charset=utf-8"},
      {"xterm.js", "text/javascript; charset=utf-8"},
      {"xterm.css", "text/css; charset=utf-8"}};
  auto t = kTypes.find(name);
  if (t == kTypes.end()) return error(404, "no page " + path);
  bool bundled = name == "xterm.js" || name == "xterm.css";
  std::string file = name == "d3.min.js" ? o.d3_path
                     : bundled           ? o.bundle_dir + "/" + name
                                         : o.web_dir + "/" + name;
  auto text = read_file(file);
  if (!text) {
    if (bundled)
      return error(404,
                   "the browser terminal was not built (" + file +
                       "): install esbuild and node-xterm (tools/install-deps.sh) and rebuild");
    return error(500,
                 "cannot read " + file +
                     (name == "d3.min.js" ? " (Debian's libjs-d3: tools/install-deps.sh)" : ""));
  }
  Response resp;
  resp.content_type = t->second;
  resp.body = std::move(*text);
  resp.headers["Cache-Control"] = "no-cache";
  // xterm.js styles its DOM renderer with <style> elements it creates: inline styles allowed.
  resp.headers["X-Content-Type-Options"] = "nosniff";
  resp.headers["Content-Security-Policy"] =
      "default-src 'self'; connect-src 'self' ws: wss:; img-src 'self' data:; "
      "style-src 'self' 'unsafe-inline'";
  return resp;
}

// What a route's handler is given: the request, its path and query, the pattern's parameters
// (checked: take_parameters) and the Api's backend and options.
struct Call {
  const Request& r;
  const std::string& path;
  const std::map<std::string, std::string>& query;
  Backend& b;
  const ApiOptions& o;
  std::string lab, node, name, id;  // {lab}, {node}, {name}, {id}
  std::optional<JobView> job;       // {id}'s job
  Response err;                     // where the backend puts a refusal
};
using Handler = Response (*)(Call&);

Response document(Call&) { return json_response(200, Api::openapi()); }

Response list_jobs(Call& c) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& j : c.b.jobs()) a.push_back(to_json(j));
  return json_response(200, {{"jobs", a}});
}

Response show_job(Call& c) {
  Response r;
  r.body = job_body(*c.job);
  return r;
}

Response cancel_job(Call& c) {
  const JobView& j = *c.job;
  if (j.state != "running") return error(409, "job " + j.id + " has ended (" + j.state + ")");
  // Once only: a second SIGTERM would be a second Ctrl-C, which stops the job's own
  // rollback or cleanup half-way.
  if (!c.b.cancel_job(j.id))
    return error(409, "job " + j.id +
                          " is already being cancelled (it is rolling back or "
                          "cleaning up; poll it)");
  Response r;
  r.status = 202;
  r.body = job_body(*c.b.job(c.id));
  return r;
}

Response run_scenario(Call& c) {
  auto body = parse_body(c.r, &c.err);
  if (!body) return c.err;
  std::string scenario = body->str("scenario");
  Files files = body->files();
  const JobOptions opts = read_options(*body, "run");
  const std::string name = opts.str("--name");
  if (auto bad = body->check()) return *bad;
  if (scenario.empty()) return error(400, "field 'scenario': expected the scenario's YAML text");
  if (!name.empty() && !topology::valid_lab_name(name))
    return error(400, "field 'name': invalid lab name '" + name + "'");
  if (auto bad = check_references("the scenario", scenario, files)) return *bad;
  files["scenario.yaml"] = scenario;
  std::vector<std::string> args{"run", "@scenario.yaml", "--json"};
  opts.append_to(args);
  return accepted(c.b.start_job("run", name, args, files));
}

Response list_labs(Call& c) { return json_response(200, c.b.labs()); }

Response list_images(Call& c) {
  auto j = c.b.images(&c.err);
  return j ? json_response(200, *j) : c.err;
}

Response bring_up(Call& c) {
  auto body = parse_body(c.r, &c.err);
  if (!body) return c.err;
  std::string topo = body->str("topology");
  Files files = body->files();
  const JobOptions opts = read_options(*body, "up");
  const std::string name = opts.str("--name");
  if (auto bad = body->check()) return *bad;
  if (topo.empty()) return error(400, "field 'topology': expected the topology's YAML text");
  if (!name.empty() && !topology::valid_lab_name(name))
    return error(400, "field 'name': invalid lab name '" + name + "'");
  if (auto bad = check_references("the topology", topo, files)) return *bad;
  auto plan = c.b.check_topology(topo, files, name, &c.err);
  if (!plan) return c.err;
  std::string lab = plan->value("lab", name);
  files["topology.yaml"] = topo;
  std::vector<std::string> args{"up", "@topology.yaml", "--json"};
  opts.append_to(args);
  return accepted(c.b.start_job("up", lab, args, files));
}

Response lab_status(Call& c) {
  auto s = c.b.lab_status(c.lab, &c.err);
  return s ? json_response(200, *s) : c.err;
}

Response take_down(Call& c) {
  if (!c.b.running(c.lab)) return error(404, "lab '" + c.lab + "' is not running");
  return accepted(c.b.start_job("down", c.lab, {"down", "--lab", c.lab, "--json"}, {}));
}

Response lab_graph(Call& c) {
  std::string format = c.query.count("format") ? c.query.at("format") : "json";
  if (format == "json") {
    auto g = c.b.lab_graph(c.lab, &c.err);
    return g ? json_response(200, *g) : c.err;
  }
  static const std::map<std::string, std::string> kTypes{
      {"svg", "image/svg+xml"},
      {"dot", "text/vnd.graphviz; charset=utf-8"},
      {"mermaid", "text/plain; charset=utf-8"}};
  auto t = kTypes.find(format);
  if (t == kTypes.end())
    return error(400, "format '" + format + "': expected json, svg, dot or mermaid");
  auto text = c.b.lab_graph_text(c.lab, format, &c.err);
  if (!text) return c.err;
  Response resp;
  resp.content_type = t->second;
  resp.body = std::move(*text);
  return resp;
}

Response lab_history(Call& c) {
  uint64_t after = 0;
  if (c.query.count("after")) {
    try {
      after = std::stoull(c.query.at("after"));
    } catch (...) {
      return error(400, "after: expected a sequence number");
    }
  }
  auto h = c.b.history(c.lab, after, &c.err);
  return h ? json_response(200, *h) : c.err;
}

Response lab_report(Call& c) {
  auto rep = c.b.report(c.lab, c.name, &c.err);
  return rep ? json_response(200, *rep) : c.err;
}

Response node_detail(Call& c) {
  auto d = c.b.node_detail(c.lab, c.node, &c.err);
  return d ? json_response(200, *d) : c.err;
}

Response node_exec(Call& c) {
  // A command in a node is root in its namespaces: the token's, whenever there is one.
  if (!c.o.token.empty() && !token_ok(c.r, c.o.token))
    return error(401, "exec needs the server's token");
  auto body = parse_body(c.r, &c.err);
  if (!body) return c.err;
  auto timeout = body->number("timeout", 1, 300);
  body->used.insert("command");
  if (auto bad = body->check()) return *bad;
  const auto& cmd = body->j.contains("command") ? body->j["command"] : nlohmann::json();
  std::vector<std::string> argv;
  if (cmd.is_array())
    for (const auto& a : cmd)
      if (a.is_string()) argv.push_back(a.get<std::string>());
  if (argv.empty() || argv.size() != cmd.size())
    return error(400, "field 'command': expected a non-empty array of strings (argv)");
  if (!c.b.running(c.lab, c.node))
    return error(404, "lab '" + c.lab + "' is not running or has no node '" + c.node + "'");
  auto out = c.b.exec(c.lab, c.node, argv, timeout.value_or(30), &c.err);
  return out ? json_response(200, *out) : c.err;
}

Response node_restart(Call& c) {
  auto body = parse_body(c.r, &c.err);
  if (!body) return c.err;
  const JobOptions opts = read_options(*body, "restart");
  const std::string daemon = opts.str("--daemon");
  if (auto bad = body->check()) return *bad;
  // A daemon's name is a program name of FRR's: never an option or a path.
  if (!daemon.empty() &&
      (daemon.size() > 32 || !std::all_of(daemon.begin(), daemon.end(), [](char ch) {
         return std::islower(static_cast<unsigned char>(ch)) ||
                std::isdigit(static_cast<unsigned char>(ch));
       })))
    return error(400, "field 'daemon': expected an FRR daemon's name (e.g. bgpd)");
  if (!c.b.running(c.lab, c.node))
    return error(404, "lab '" + c.lab + "' is not running or has no node '" + c.node + "'");
  std::vector<std::string> args{"restart", c.node, "--lab", c.lab, "--json"};
  opts.append_to(args);
  return accepted(c.b.start_job("restart", c.lab, args, {}));
}

// How validate, apply and drill begin: the body a JSON object, then the lab running.
std::optional<Body> lab_job_body(Call& c) {
  auto body = parse_body(c.r, &c.err);
  if (!body) return std::nullopt;
  if (!c.b.running(c.lab)) {
    c.err = error(404, "lab '" + c.lab + "' is not running");
    return std::nullopt;
  }
  return body;
}

// ... and how they end: `twin <what> --lab <lab> --json <input...>` and the options given, no
// value from the body an option of its own.
Response start_lab_job(Call& c, const std::string& what, const JobOptions& opts,
                       const std::vector<std::string>& input, Files files) {
  std::vector<std::string> args{what, "--lab", c.lab, "--json"};
  args.insert(args.end(), input.begin(), input.end());
  opts.append_to(args);
  for (size_t i = 5; i < args.size(); ++i)
    if (args[i].starts_with("-") && args[i - 1].starts_with("--") && opts.valued(args[i - 1]))
      return error(400, args[i - 1] + ": a value may not start with '-': " + args[i]);
  return accepted(c.b.start_job(what, c.lab, args, files));
}

// validate, traffic and drill take their options and nothing else.
Response options_job(Call& c, const std::string& what) {
  auto body = lab_job_body(c);
  if (!body) return c.err;
  const JobOptions opts = read_options(*body, what);
  if (auto bad = body->check()) return *bad;
  return start_lab_job(c, what, opts, {}, {});
}
Response validate_lab(Call& c) { return options_job(c, "validate"); }
Response drill_lab(Call& c) { return options_job(c, "drill"); }
Response traffic_lab(Call& c) { return options_job(c, "traffic"); }

Response apply_change(Call& c) {
  auto body = lab_job_body(c);
  if (!body) return c.err;
  std::string change = body->str("change");
  Files files = body->files();
  // Or rendered per-node configs (twin apply --configs DIR): <node>.conf or <node>/frr.conf.
  Files configs = body->files("configs");
  const JobOptions opts = read_options(*body, "apply");
  if (auto bad = body->check()) return *bad;
  if (change.empty() == configs.empty())
    return error(400,
                 "give either 'change' (the change set's YAML text) or 'configs' "
                 "(rendered per-node configs: {\"leaf1.conf\": \"...\"})");
  if (!change.empty()) {
    if (auto bad = check_references("the change set", change, files)) return *bad;
    files["change.yaml"] = change;
    return start_lab_job(c, "apply", opts, {"@change.yaml"}, std::move(files));
  }
  for (auto& [name, text] : configs) files["configs/" + name] = std::move(text);
  return start_lab_job(c, "apply", opts, {"--configs", "@configs"}, std::move(files));
}

// Every operation of the API, once. {x} is one path segment, handed to the handler once
// checked (take_parameters). A WebSocket has no handler: the server upgrades it after
// Api::check_websocket, and handle() answers it as a path without the method.
struct Entry {
  std::string_view method, pattern;
  Api::Access access;
  Handler handler;
};
using A = Api::Access;
constexpr Entry kRoutes[] = {
    {"GET", "/api/openapi.json", A::kRead, document},
    {"GET", "/api/images", A::kRead, list_images},
    {"GET", "/api/labs", A::kRead, list_labs},
    {"POST", "/api/labs", A::kChange, bring_up},
    {"GET", "/api/labs/{lab}", A::kRead, lab_status},
    {"DELETE", "/api/labs/{lab}", A::kChange, take_down},
    {"GET", "/api/labs/{lab}/graph", A::kRead, lab_graph},
    {"GET", "/api/labs/{lab}/history", A::kRead, lab_history},
    {"GET", "/api/labs/{lab}/reports/{name}", A::kRead, lab_report},
    {"GET", "/api/labs/{lab}/events", A::kUpgrade, nullptr},
    {"GET", "/api/labs/{lab}/nodes/{node}", A::kRead, node_detail},
    {"GET", "/api/labs/{lab}/nodes/{node}/terminal", A::kUpgrade, nullptr},
    {"POST", "/api/labs/{lab}/nodes/{node}/exec", A::kChange, node_exec},
    {"POST", "/api/labs/{lab}/nodes/{node}/restart", A::kChange, node_restart},
    {"POST", "/api/labs/{lab}/validate", A::kChange, validate_lab},
    {"POST", "/api/labs/{lab}/traffic", A::kChange, traffic_lab},
    {"POST", "/api/labs/{lab}/apply", A::kChange, apply_change},
    {"POST", "/api/labs/{lab}/drill", A::kChange, drill_lab},
    {"POST", "/api/run", A::kChange, run_scenario},
    {"GET", "/api/jobs", A::kRead, list_jobs},
    {"GET", "/api/jobs/{id}", A::kRead, show_job},
    {"DELETE", "/api/jobs/{id}", A::kChange, cancel_job},
};

// Where a request that no route takes is answered 405 (a path of the API, not that method)
// rather than 404, the first that fits; "**" is any number of segments, none included. The
// message points to the document from some and not others: kept as the API always answered.
struct Scope {
  std::string_view pattern;
  bool points_to_document;
};
// clang-format off
constexpr Scope kScopes[] = {
    {"/api/jobs/**", true},
    {"/api/labs", false},
    {"/api/labs/{lab}", false},
    {"/api/labs/{lab}/nodes/{node}/**", false},
    {"/api/labs/{lab}/**", true},
};
// clang-format on

using Parameters = std::vector<std::pair<std::string, std::string>>;  // name, value

// Whether `parts` fit `pattern`; its parameters' values in `params`.
bool fits(std::string_view pattern, const std::vector<std::string>& parts, Parameters* params) {
  params->clear();
  auto segments = split_path(std::string(pattern));
  const bool rest = !segments.empty() && segments.back() == "**";
  if (rest) segments.pop_back();
  if (rest ? parts.size() < segments.size() : parts.size() != segments.size()) return false;
  for (size_t i = 0; i < segments.size(); ++i) {
    if (segments[i].front() == '{')
      params->emplace_back(segments[i].substr(1, segments[i].size() - 2), parts[i]);
    else if (segments[i] != parts[i])
      return false;
  }
  return true;
}

// The route that takes `method` on `parts`, else the scope that answers 405; the parameters of
// the first route the path fits whatever its method (so a job is looked up, a name checked,
// before a method is refused), else the scope's.
struct Found {
  const Entry* route = nullptr;
  const Scope* scope = nullptr;
  Parameters params;
};
Found find_route(const std::string& method, const std::vector<std::string>& parts) {
  Found f;
  bool fitted = false;
  Parameters p;
  for (const Entry& e : kRoutes) {
    if (!fits(e.pattern, parts, &p)) continue;
    if (e.method == method && e.handler) {
      f.route = &e;
      f.params = std::move(p);
      return f;
    }
    if (!fitted) f.params = p;
    fitted = true;
  }
  for (const Scope& s : kScopes)
    if (fits(s.pattern, parts, &p)) {
      f.scope = &s;
      if (!fitted) f.params = std::move(p);
      break;
    }
  return f;
}

// The parameters checked in path order into `c`: a name as twin's names are, a job that exists.
std::optional<Response> take_parameters(const Parameters& params, Call& c) {
  for (const auto& [name, value] : params) {
    if (name == "lab") {
      if (!topology::valid_lab_name(value)) return error(400, "invalid lab name '" + value + "'");
      c.lab = value;
    } else if (name == "node") {
      if (!valid_node_name(value)) return error(400, "invalid node name '" + value + "'");
      c.node = value;
    } else if (name == "id") {
      c.id = value;
      c.job = c.b.job(value);
      if (!c.job) return error(404, "no job '" + value + "'");
    } else {
      c.name = value;
    }
  }
  return std::nullopt;
}

}  // namespace

const std::vector<Api::Route>& Api::routes() {
  static const std::vector<Route> kAll = [] {
    std::vector<Route> out;
    for (const Entry& e : kRoutes)
      out.push_back({std::string(e.method), std::string(e.pattern), e.access});
    return out;
  }();
  return kAll;
}

Response Api::handle(const Request& r) {
  if (r.body.size() > kMaxBody)
    return error(413, "the body is larger than " + std::to_string(kMaxBody) + " bytes");
  auto q = r.target.find('?');
  const std::string path = r.target.substr(0, q);
  const auto query = parse_query(q == std::string::npos ? "" : r.target.substr(q + 1));
  if (path.find('%') != std::string::npos || path.find("..") != std::string::npos)
    return error(400, "the path holds characters twin's names never have");
  const auto parts = split_path(path);
  const std::string& m = r.method;
  if (m == "GET" && (parts.empty() || (parts.size() == 1 && parts[0] != "api")))
    return page(o_, parts.empty() ? "index.html" : parts[0], path);
  if (parts.empty() || parts[0] != "api") return error(404, "no resource " + path);
  Found f = find_route(m, parts);
  // A request no route takes is judged by its method: the token before a 404 or 405.
  bool changes = f.route ? f.route->access == Access::kChange
                         : m == "POST" || m == "DELETE" || m == "PUT" || m == "PATCH";
  if (auto g = guard(r, changes)) return *g;
  Call c{r, path, query, b_, o_, {}, {}, {}, {}, {}, {}};
  if (auto bad = take_parameters(f.params, c)) return *bad;
  if (f.route) return f.route->handler(c);
  if (f.scope)
    return error(405, m + " " + path + " is not an operation of this API" +
                          (f.scope->points_to_document ? " (see /api/openapi.json)" : ""));
  return error(404, "no resource " + path + " (see /api/openapi.json)");
}

}  // namespace twin::serve
