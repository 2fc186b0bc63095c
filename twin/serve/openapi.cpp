// The OpenAPI 3.0 description of twin serve's API (served at /api/openapi.json): its paths are
// the router's routes (Api::routes()), each described here.
#include <cctype>

#include "twin/options/table.hpp"
#include "twin/serve/api.hpp"

namespace twin::serve {
namespace {

nlohmann::json ref(const std::string& name) { return {{"$ref", "#/components/schemas/" + name}}; }

nlohmann::json op(const std::string& summary, const std::string& response_schema, int status = 200,
                  const nlohmann::json& body = nullptr) {
  nlohmann::json o{{"summary", summary}};
  o["responses"][std::to_string(status)] = {
      {"description", status == 202 ? "a job was started: poll Location (/api/jobs/{id})" : "OK"},
      {"content", {{"application/json", {{"schema", ref(response_schema)}}}}}};
  o["responses"]["default"] = {{"description", "an error"},
                               {"content", {{"application/json", {{"schema", ref("Error")}}}}}};
  if (!body.is_null())
    o["requestBody"] = {{"required", true},
                        {"content", {{"application/json", {{"schema", body}}}}}};
  return o;
}

nlohmann::json param(const std::string& name, const std::string& where = "path") {
  return {{"name", name}, {"in", where}, {"required", where == "path"},
          {"schema", {{"type", "string"}}}};
}

nlohmann::json obj(nlohmann::json props, std::vector<std::string> required = {}) {
  nlohmann::json o{{"type", "object"}, {"properties", std::move(props)}};
  if (!required.empty()) o["required"] = required;
  return o;
}

const nlohmann::json kStr{{"type", "string"}};
const nlohmann::json kBool{{"type", "boolean"}};
const nlohmann::json kNum{{"type", "number"}};
const nlohmann::json kFiles{{"type", "object"},
                            {"description", "relative path -> content: the files the YAML refers to"},
                            {"additionalProperties", {{"type", "string"}}}};

// The JSON type of an option's request field.
nlohmann::json field_schema(const options::Option& o) {
  switch (o.type) {
    case options::Type::kFlag:
    case options::Type::kNoFlag:
      return kBool;
    case options::Type::kNumber:
      return kNum;
    case options::Type::kInteger:
      return {{"type", "integer"}};
    default:
      return kStr;
  }
}

// A job's request body: `own` fields, plus the options of `command` the API takes (the command
// table's entries with an API field: options/table.hpp), as the API reads them.
nlohmann::json job_body_schema(const std::string& command,
                               nlohmann::json own = nlohmann::json::object(),
                               std::vector<std::string> required = {}) {
  for (const options::Option* o : options::api_options(command))
    own[o->api_field] = field_schema(*o);
  return obj(std::move(own), std::move(required));
}

// A route's description: the operation (its security comes from the route's access) and its
// query parameters (its path parameters come from its pattern).
struct Doc {
  nlohmann::json op;
  std::vector<std::string> query;
};

// By "METHOD pattern".
const std::map<std::string, Doc>& docs() {
  static const std::map<std::string, Doc> d{
      {"GET /api/openapi.json", {op("this document", "Any")}},
      {"GET /api/images",
       {op("the image profiles and whether this machine runs each (twin images --json)",
           "Images")}},
      {"GET /api/labs", {op("running labs and labs with a history", "Labs")}},
      {"POST /api/labs",
       {op("bring a lab up from a topology (job: twin up)", "Job", 202,
           job_body_schema("up", {{"topology", kStr}, {"files", kFiles}}, {"topology"}))}},
      {"GET /api/labs/{lab}",
       {op("nodes, daemons, links with oper state, MTU, each end's byte counters and the "
           "link's rate, and when the ports were read (twin status --json)",
           "Any")}},
      {"DELETE /api/labs/{lab}", {op("remove the lab (job: twin down)", "Job", 202)}},
      {"GET /api/labs/{lab}/graph",
       {op("the lab as a graph with live state (format json | svg | dot | mermaid)", "Graph"),
        {"format"}}},
      {"GET /api/labs/{lab}/history",
       {op("the lab's journal after a sequence number", "History"), {"after"}}},
      {"GET /api/labs/{lab}/reports/{name}", {op("a report the journal refers to", "Any")}},
      {"GET /api/labs/{lab}/events",
       {op("WebSocket (Upgrade): journal events and live changes, one JSON object per message",
           "Event", 101)}},
      {"GET /api/labs/{lab}/nodes/{node}/terminal",
       {op("WebSocket (Upgrade): a terminal, `twin shell` in a pty (a root shell in the node; the "
           "token as ?token= whenever one is set). Binary frames carry terminal bytes both ways; a "
           "text frame {\"cols\": C, \"rows\": R} resizes it",
           "Any", 101)}},
      {"GET /api/labs/{lab}/nodes/{node}",
       {op("a node: interfaces, sessions, routes, failing tests", "Any")}},
      {"POST /api/labs/{lab}/nodes/{node}/exec",
       {op("run a command in the node, as twin exec (root in its namespaces)", "Exec", 200,
           obj({{"command", {{"type", "array"}, {"items", kStr}}}, {"timeout", kNum}},
               {"command"}))}},
      {"POST /api/labs/{lab}/nodes/{node}/restart",
       {op("the node's routing daemons (or one: daemon) back from its startup configuration "
           "(job: twin restart --json)",
           "Job", 202, job_body_schema("restart"))}},
      {"POST /api/labs/{lab}/validate",
       {op("validate (job: twin validate --json)", "Job", 202, job_body_schema("validate"))}},
      {"POST /api/labs/{lab}/traffic",
       {op("a traffic pattern through iperf3: goodput against fair share, ECMP balance, drops, "
           "latency under load (job: twin traffic --json)",
           "Job", 202, job_body_schema("traffic"))}},
      {"POST /api/labs/{lab}/apply",
       {op("apply a change set, or rendered per-node configs (configs: {\"leaf1.conf\": ...}), "
           "through the gate (job: twin apply --json)",
           "Job", 202,
           job_body_schema("apply", {{"change", kStr}, {"configs", kFiles}, {"files", kFiles}}))}},
      {"POST /api/labs/{lab}/drill",
       {op("failure drill (job: twin drill --json)", "Job", 202, job_body_schema("drill"))}},
      {"POST /api/run",
       {op("a scenario from nothing to verdict and back (job: twin run --json)", "Job", 202,
           job_body_schema("run", {{"scenario", kStr}, {"files", kFiles}}, {"scenario"}))}},
      {"GET /api/jobs", {op("every job of this server", "Jobs")}},
      {"GET /api/jobs/{id}", {op("a job: state, progress lines, exit code, result", "Job")}},
      {"DELETE /api/jobs/{id}",
       {op("cancel a running job (SIGTERM: it cleans up as on Ctrl-C)", "Job", 202)}},
  };
  return d;
}

// A route's parameters: its pattern's {x} in order, then its query's.
nlohmann::json parameters(const std::string& pattern, const std::vector<std::string>& query) {
  nlohmann::json out = nlohmann::json::array();
  for (size_t open = pattern.find('{'); open != std::string::npos;
       open = pattern.find('{', open + 1))
    out.push_back(param(pattern.substr(open + 1, pattern.find('}', open) - open - 1)));
  for (const auto& q : query) out.push_back(param(q, "query"));
  return out;
}

}  // namespace

nlohmann::json Api::openapi() {
  nlohmann::json d;
  d["openapi"] = "3.0.3";
  d["info"] = {{"title", "twin"},
               {"version", TWIN_VERSION},
               {"description",
                "A digital twin of a data-center network. Long work (up, down, validate, apply, "
                "run, drill) is a job: 202 with Location /api/jobs/{id}; the job's result is the "
                "JSON the CLI prints with --json. With a token configured, POST and DELETE (and "
                "every read on a non-loopback listener) need Authorization: Bearer <token>."}};
  for (const Route& r : routes()) {
    auto doc = docs().find(r.method + " " + r.pattern);
    // Undescribed: an empty summary, which the unit tests refuse.
    const Doc& what = doc != docs().end() ? doc->second : Doc{op("", "Any"), {}};
    auto& path = d["paths"][r.pattern];
    if (auto p = parameters(r.pattern, what.query); !p.empty()) path["parameters"] = p;
    std::string method = r.method;
    for (auto& c : method) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    path[method] = what.op;
    if (r.access == Access::kChange)
      path[method]["security"] = nlohmann::json::array({{{"bearer", nlohmann::json::array()}}});
  }
  auto& s = d["components"]["schemas"];
  s["Any"] = {{"type", "object"}};
  s["Error"] = obj({{"error", obj({{"status", {{"type", "integer"}}},
                                   {"message", kStr},
                                   {"diagnostics", {{"type", "array"}, {"items", obj({
                                       {"file", kStr}, {"line", {{"type", "integer"}}},
                                       {"column", {{"type", "integer"}}}, {"field", kStr},
                                       {"message", kStr}, {"hint", kStr}})}}}})}},
                   {"error"});
  s["Job"] = obj({{"id", kStr}, {"kind", kStr}, {"lab", kStr},
                  {"state", {{"type", "string"}, {"enum", {"running", "done", "failed", "cancelled"}}}},
                  {"started_at", kStr}, {"ended_at", kStr},
                  {"progress", {{"type", "array"}, {"items", kStr}}},
                  {"exit_code", {{"type", "integer"}}}, {"result", {{"type", "object"}, {"nullable", true}}},
                  {"argv", {{"type", "array"}, {"items", kStr}}}});
  s["Jobs"] = obj({{"jobs", {{"type", "array"}, {"items", ref("Job")}}}});
  s["Images"] = obj({{"images", {{"type", "array"}, {"items", {{"type", "object"}}}}},
                     {"unprofiled", {{"type", "array"}, {"items", {{"type", "object"}}}}},
                     {"podman", kBool}});
  s["Labs"] = obj({{"running", {{"type", "array"}, {"items", {{"type", "object"}}}}},
                   {"history", {{"type", "array"}, {"items", kStr}}}});
  const nlohmann::json kInt{{"type", "integer"}};
  const nlohmann::json kStrs{{"type", "array"}, {"items", kStr}};
  const nlohmann::json kObjs{{"type", "array"}, {"items", {{"type", "object"}}}};
  // A byte counter of one end's port since it was made; null when it was not read.
  const nlohmann::json kCounter{{"type", "integer"}, {"nullable", true}};
  s["Graph"] = obj({{"lab", kStr},
                    {"live", kBool},
                    {"read_at_ms",
                     {{"type", "integer"},
                      {"description",
                       "when the ports' counters were read (Unix ms; 0: not read): "
                       "two reads' byte counters over this difference are a "
                       "link's rate"}}},
                    {"nodes", kObjs},
                    {"links", {{"type", "array"}, {"items", ref("GraphLink")}}},
                    {"validation", {{"type", "object"}, {"nullable", true}}}});
  s["GraphLink"] = obj({{"id", kStr},
                        {"a", kStr},
                        {"a_interface", kStr},
                        {"b", kStr},
                        {"b_interface", kStr},
                        {"mtu", kInt},
                        {"fabric", kBool},
                        {"intended_up", kBool},
                        {"bandwidth_bps",
                         {{"type", "integer"},
                          {"description",
                           "the rate its ends are shaped to (bandwidth:), bits "
                           "per second; 0 = unshaped"}}},
                        {"state", kStr},
                        {"a_oper", kStr},
                        {"b_oper", kStr},
                        {"a_mtu", kInt},
                        {"b_mtu", kInt},
                        {"a_tx_bytes", kCounter},
                        {"a_rx_bytes", kCounter},
                        {"b_tx_bytes", kCounter},
                        {"b_rx_bytes", kCounter},
                        {"sessions", kStrs},
                        {"sessions_up", kBool},
                        {"notes", kStrs},
                        {"failures", kObjs}});
  s["History"] = obj({{"events", {{"type", "array"}, {"items", ref("Event")}}}});
  s["Event"] = obj({{"seq", {{"type", "integer"}}}, {"time", kStr}, {"lab", kStr}, {"kind", kStr},
                    {"source", kStr}, {"report", kStr}, {"subject", kStr}, {"from", kStr},
                    {"to", kStr}, {"live", kBool}});
  s["Exec"] = obj({{"exit_code", {{"type", "integer"}}}, {"stdout", kStr}, {"stderr", kStr}});
  d["components"]["securitySchemes"]["bearer"] = {{"type", "http"}, {"scheme", "bearer"}};
  return d;
}

}  // namespace twin::serve
