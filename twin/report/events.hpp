#pragma once
// One line a person reads for a journal event (state/journal.hpp) or a live one
// (engine/live.hpp): `twin history`, `twin events`, the web page's history. Pure.
#include <nlohmann/json_fwd.hpp>
#include <string>

namespace twin::report {

// "2026-12-03 02:10:11  validate  324 passed, 0 failed, 0 errors (1.2 s, cli)". Unknown
// kinds print their fields; nothing about an event is invented.
std::string event_line(const nlohmann::json& event);

}  // namespace twin::report
