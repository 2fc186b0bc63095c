// The lab's history as the CLI writes and reads it: record_event (every command that changes or
// judges a lab), `twin history`.
#include <cstdlib>
#include <iostream>
#include <set>
#include <nlohmann/json.hpp>

#include "twin/cli/commands.hpp"
#include "twin/report/events.hpp"
#include "twin/state/journal.hpp"
#include "twin/state/state.hpp"

namespace twin::cli {

void record_event(const std::string& lab, const std::string& kind, const nlohmann::json& fields,
                  const nlohmann::json* report) {
  if (!report) return record_event(lab, kind, fields, state::ReportWriter{});
  record_event(lab, kind, fields, [&](std::ostream& o) {
    o << report->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  });
}

void record_event(const std::string& lab, const std::string& kind, const nlohmann::json& fields,
                  const std::function<void(std::ostream&)>& report) {
  nlohmann::json f = fields;
  // A job of `twin serve` runs this binary; the server names itself as the source.
  if (const char* src = std::getenv("TWIN_EVENT_SOURCE"); src && *src) f["source"] = src;
  if (auto r = state::journal_append(lab, kind, std::move(f), report); !r)
    std::cerr << "twin: warning: history of lab " << lab << " not recorded: " << r.error().message
              << "\n";
}

int run_history(const HistoryOptions& o) {
  std::string lab = o.lab;
  if (lab.empty()) {
    auto labs = state::labs_with_history();
    auto running = state::list_labs();
    if (running.size() == 1) {
      lab = running.front();
    } else if (labs.size() == 1) {
      lab = labs.front();
    } else {
      std::string names;
      for (const auto& n : labs) names += (names.empty() ? "" : ", ") + n;
      return fail(labs.empty() ? "no lab has a history yet (" + state::history_root() + ")"
                               : "which lab? --lab one of: " + names,
                  2);
    }
  }
  auto chunk = state::journal_read(lab);
  if (!chunk) return fail(chunk.error().message, exit_code(chunk.error()));
  auto& ev = chunk->events;
  if (o.kind.size()) {
    std::set<std::string> kinds;
    for (const auto& e : ev) kinds.insert(e.value("kind", ""));
    std::erase_if(ev, [&](const nlohmann::json& e) { return e.value("kind", "") != o.kind; });
    if (ev.empty() && !kinds.empty() && !o.json) {
      std::string names;
      for (const auto& k : kinds) names += (names.empty() ? "" : ", ") + k;
      std::cout << "lab " << lab << " has no '" << o.kind << "' events; its history has: " << names
                << "\n";
      return 0;
    }
  }
  if (o.limit > 0 && ev.size() > static_cast<size_t>(o.limit))
    ev.erase(ev.begin(), ev.end() - o.limit);
  if (o.json) {
    std::cout << nlohmann::json(ev).dump(2) << "\n";
    return 0;
  }
  if (ev.empty()) std::cout << "lab " << lab << " has no history yet\n";
  for (const auto& e : ev) std::cout << report::event_line(e) << "\n";
  return 0;
}

}  // namespace twin::cli
