#pragma once
// Durations as users write them in input files: a number and a unit ("500ms", "2s", "1.5s",
// "1m"). The rules are shared by the YAML toolkit, the change-set keys and the schema test.
// And numbers as users give them on the command line, each checked against its range.
#include <chrono>
#include <optional>
#include <string>

namespace twin {

// ECMAScript, whole string; the same pattern is in scenarios/schema/change.schema.json.
inline constexpr const char* kDurationPattern = "[0-9]{1,9}(\\.[0-9]{1,6})?(ms|s|m)";
inline constexpr long long kMaxDurationMs = 24LL * 3600 * 1000;

// Why a text is no duration: a diagnostic's message and hint (the hint may be empty).
struct DurationProblem {
  std::string message;
  std::string hint;
};

// `text` as milliseconds: it must match kDurationPattern and be a whole number of milliseconds,
// > 0 and <= kMaxDurationMs. Otherwise nullopt, and `problem` (may be null) says why. Pure.
std::optional<std::chrono::milliseconds> parse_duration(const std::string& text,
                                                        DurationProblem* problem);

// A command-line number's bounds, inclusive; `unit` names it in messages ("seconds", or "").
struct NumberRange {
  double lo = 0, hi = 0;
  bool integer = false;  // whole numbers only
  const char* unit = "";
};

// Why `text` is not a number within `r` ("expected a number from 1 to 86400 seconds, got
// '1e308'"), or "" when it is one. Decided on the text before any conversion, so no value
// overflows into a duration or an int, and the bounds print as people write them (%g). Pure.
std::string number_problem(const std::string& text, const NumberRange& r);

}  // namespace twin
