#include "twin/report/events.hpp"

#include <nlohmann/json.hpp>
#include <sstream>

#include "twin/core/util.hpp"

namespace twin::report {
namespace {

std::string str(const nlohmann::json& j, const char* key) { return json_text(j, key); }

int num(const nlohmann::json& e, const char* key) {
  auto it = e.find(key);
  return it != e.end() && it->is_number() ? it->get<int>() : 0;
}

}  // namespace

std::string event_line(const nlohmann::json& e) {
  std::string time = str(e, "time");
  // "2026-12-03T02:10:11.123Z" -> "2026-12-03 02:10:11"
  if (time.size() >= 19) time = time.substr(0, 10) + " " + time.substr(11, 8);
  std::string kind = str(e, "kind");
  std::ostringstream o;
  o << time << "  " << kind << "  ";
  std::string source = str(e, "source");
  if (kind == "validate") {
    o << num(e, "passed") << " passed, " << num(e, "failed") << " failed, " << num(e, "errors")
      << " errors";
    if (e.contains("duration_ms") && e["duration_ms"].is_number())
      o << " in " << ms_text(e["duration_ms"].get<double>());
    if (e.value("interrupted", false)) o << ", interrupted";
  } else if (kind == "apply" || kind == "run") {
    o << str(e, "verdict");
    if (!str(e, "scenario").empty()) o << "  scenario " << str(e, "scenario");
    if (!str(e, "change").empty()) o << "  change " << str(e, "change");
  } else if (kind == "up") {
    if (e.value("ok", false))
      o << num(e, "nodes") << " nodes, " << num(e, "links") << " links"
        << (e.value("converged", false) ? ", converged" : ", not converged");
    else
      o << "failed: " << str(e, "error");
  } else if (kind == "down") {
    o << (e.value("ok", false) ? "removed" : "left something: " + str(e, "problems")) << " ("
      << num(e, "processes") << " processes, " << num(e, "namespaces") << " namespaces)";
  } else if (kind == "drill") {
    o << (num(e, "exit_code") == 0 ? "passed" : "failed (exit " + str(e, "exit_code") + ")");
  } else if (kind == "link" || kind == "session" || kind == "daemon" || kind == "node") {
    o << str(e, "subject") << ": " << str(e, "from") << " -> " << str(e, "to");
  } else {
    nlohmann::json rest = e;
    for (const char* k : {"seq", "time", "lab", "kind", "source"}) rest.erase(k);
    o << rest.dump();
  }
  if (!source.empty()) o << "  (" << source << ")";
  return o.str();
}

}  // namespace twin::report
