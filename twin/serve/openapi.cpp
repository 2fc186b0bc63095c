// The OpenAPI 3.0 description of twin serve's API (served at /api/openapi.json). Kept beside the
// router: a unit test asserts every route the router answers is described here.
#include "twin/options/table.hpp"
#include "twin/serve/api.hpp"

namespace twin::serve {
namespace {

nlohmann::json ref(const std::string& name) { return {{"$ref", "#/components/schemas/" + name}}; }

nlohmann::json op(const std::string& summary, const std::string& response_schema,
                  int status = 200, const nlohmann::json& body = nullptr,
                  bool changes = false) {
  nlohmann::json o{{"summary", summary}};
  o["responses"][std::to_string(status)] = {
      {"description", status == 202 ? "a job was started: poll Location (/api/jobs/{id})" : "OK"},
      {"content", {{"application/json", {{"schema", ref(response_schema)}}}}}};
  o["responses"]["default"] = {{"description", "an error"},
                               {"content", {{"application/json", {{"schema", ref("Error")}}}}}};
  if (!body.is_null())
    o["requestBody"] = {{"required", true},
                        {"content", {{"application/json", {{"schema", body}}}}}};
  if (changes) o["security"] = nlohmann::json::array({{{"bearer", nlohmann::json::array()}}});
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
  auto& p = d["paths"];
  p["/api/openapi.json"]["get"] = op("this document", "Any");
  p["/api/labs"]["get"] = op("running labs and labs with a history", "Labs");
  p["/api/labs"]["post"] =
      op("bring a lab up from a topology (job: twin up)", "Job", 202,
         job_body_schema("up", {{"topology", kStr}, {"files", kFiles}}, {"topology"}), true);
  auto lab = nlohmann::json::array({param("lab")});
  p["/api/labs/{lab}"]["parameters"] = lab;
  p["/api/labs/{lab}"]["get"] = op("nodes, daemons, links with oper state and MTU (twin status)", "Any");
  p["/api/labs/{lab}"]["delete"] = op("remove the lab (job: twin down)", "Job", 202, nullptr, true);
  p["/api/labs/{lab}/graph"]["parameters"] =
      nlohmann::json::array({param("lab"), param("format", "query")});
  p["/api/labs/{lab}/graph"]["get"] =
      op("the lab as a graph with live state (format json | svg | dot | mermaid)", "Graph");
  p["/api/labs/{lab}/history"]["parameters"] =
      nlohmann::json::array({param("lab"), param("after", "query")});
  p["/api/labs/{lab}/history"]["get"] = op("the lab's journal after a sequence number", "History");
  p["/api/labs/{lab}/reports/{name}"]["parameters"] =
      nlohmann::json::array({param("lab"), param("name")});
  p["/api/labs/{lab}/reports/{name}"]["get"] = op("a report the journal refers to", "Any");
  p["/api/labs/{lab}/events"]["parameters"] = lab;
  p["/api/labs/{lab}/events"]["get"] =
      op("WebSocket (Upgrade): journal events and live changes, one JSON object per message",
         "Event", 101);
  p["/api/labs/{lab}/nodes/{node}/terminal"]["parameters"] =
      nlohmann::json::array({param("lab"), param("node")});
  p["/api/labs/{lab}/nodes/{node}/terminal"]["get"] = op(
      "WebSocket (Upgrade): a terminal, `twin shell` in a pty (a root shell in the node; the "
      "token as ?token= whenever one is set). Binary frames carry terminal bytes both ways; a "
      "text frame {\"cols\": C, \"rows\": R} resizes it",
      "Any", 101);
  p["/api/labs/{lab}/nodes/{node}"]["parameters"] =
      nlohmann::json::array({param("lab"), param("node")});
  p["/api/labs/{lab}/nodes/{node}"]["get"] =
      op("a node: interfaces, sessions, routes, failing tests", "Any");
  p["/api/labs/{lab}/nodes/{node}/exec"]["parameters"] =
      nlohmann::json::array({param("lab"), param("node")});
  p["/api/labs/{lab}/nodes/{node}/exec"]["post"] =
      op("run a command in the node, as twin exec (root in its namespaces)", "Exec", 200,
         obj({{"command", {{"type", "array"}, {"items", kStr}}}, {"timeout", kNum}}, {"command"}),
         true);
  p["/api/labs/{lab}/nodes/{node}/restart"]["parameters"] =
      nlohmann::json::array({param("lab"), param("node")});
  p["/api/labs/{lab}/nodes/{node}/restart"]["post"] =
      op("the node's routing daemons (or one: daemon) back from its startup configuration "
         "(job: twin restart --json)",
         "Job", 202, job_body_schema("restart"), true);
  p["/api/labs/{lab}/validate"]["parameters"] = lab;
  p["/api/labs/{lab}/validate"]["post"] =
      op("validate (job: twin validate --json)", "Job", 202, job_body_schema("validate"), true);
  p["/api/labs/{lab}/apply"]["parameters"] = lab;
  p["/api/labs/{lab}/apply"]["post"] = op(
      "apply a change set, or rendered per-node configs (configs: {\"leaf1.conf\": ...}), "
      "through the gate (job: twin apply --json)",
      "Job", 202,
      job_body_schema("apply", {{"change", kStr}, {"configs", kFiles}, {"files", kFiles}}), true);
  p["/api/labs/{lab}/drill"]["parameters"] = lab;
  p["/api/labs/{lab}/drill"]["post"] =
      op("failure drill (job: twin drill --json)", "Job", 202, job_body_schema("drill"), true);
  p["/api/run"]["post"] =
      op("a scenario from nothing to verdict and back (job: twin run --json)", "Job", 202,
         job_body_schema("run", {{"scenario", kStr}, {"files", kFiles}}, {"scenario"}), true);
  p["/api/jobs"]["get"] = op("every job of this server", "Jobs");
  p["/api/jobs/{id}"]["parameters"] = nlohmann::json::array({param("id")});
  p["/api/jobs/{id}"]["get"] = op("a job: state, progress lines, exit code, result", "Job");
  p["/api/jobs/{id}"]["delete"] = op("cancel a running job (SIGTERM: it cleans up as on Ctrl-C)",
                                     "Job", 202, nullptr, true);
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
  s["Labs"] = obj({{"running", {{"type", "array"}, {"items", {{"type", "object"}}}}},
                   {"history", {{"type", "array"}, {"items", kStr}}}});
  s["Graph"] = obj({{"lab", kStr}, {"live", kBool},
                    {"nodes", {{"type", "array"}, {"items", {{"type", "object"}}}}},
                    {"links", {{"type", "array"}, {"items", {{"type", "object"}}}}},
                    {"validation", {{"type", "object"}, {"nullable", true}}}});
  s["History"] = obj({{"events", {{"type", "array"}, {"items", ref("Event")}}}});
  s["Event"] = obj({{"seq", {{"type", "integer"}}}, {"time", kStr}, {"lab", kStr}, {"kind", kStr},
                    {"source", kStr}, {"report", kStr}, {"subject", kStr}, {"from", kStr},
                    {"to", kStr}, {"live", kBool}});
  s["Exec"] = obj({{"exit_code", {{"type", "integer"}}}, {"stdout", kStr}, {"stderr", kStr}});
  d["components"]["securitySchemes"]["bearer"] = {{"type", "http"}, {"scheme", "bearer"}};
  return d;
}

}  // namespace twin::serve
