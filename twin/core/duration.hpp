#pragma once
// Durations as users write them in input files: a number and a unit ("500ms", "2s", "1.5s",
// "1m"). The rules are shared by the YAML toolkit, the change-set keys and the schema test.
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

}  // namespace twin
