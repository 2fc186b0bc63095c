#include "twin/core/duration.hpp"

#include <regex>

namespace twin {

std::optional<std::chrono::milliseconds> parse_duration(const std::string& text,
                                                        DurationProblem* problem) {
  auto fail = [&](std::string message, std::string hint) {
    if (problem) *problem = {std::move(message), std::move(hint)};
    return std::nullopt;
  };
  static const std::regex re(kDurationPattern);
  static const std::regex bare("[0-9]+(\\.[0-9]+)?");
  if (!std::regex_match(text, re))
    return fail("expected a duration like 500ms, 2s, 1.5s or 1m, got '" + text + "'",
                std::regex_match(text, bare) ? "add a unit: " + text + "s (units: ms, s, m)"
                                             : "a number followed by ms, s or m");
  // Digits only (checked above): whole[.frac]unit. Integer arithmetic, so 0.001s is exactly 1ms.
  size_t unit_at = text.find_first_not_of("0123456789.");
  std::string number = text.substr(0, unit_at), unit = text.substr(unit_at);
  long long factor = unit == "ms" ? 1 : unit == "s" ? 1000 : 60000;
  auto dot = number.find('.');
  long long whole = std::stoll(number.substr(0, dot));
  long long frac = 0, scale = 1;
  if (dot != std::string::npos) {
    frac = std::stoll(number.substr(dot + 1));
    for (size_t i = dot + 1; i < number.size(); ++i) scale *= 10;
  }
  if (frac * factor % scale != 0)
    return fail("duration '" + text + "' is not a whole number of milliseconds", "");
  long long ms = whole * factor + frac * factor / scale;
  if (ms <= 0) return fail("duration '" + text + "' is zero; expected a positive duration", "");
  if (ms > kMaxDurationMs) return fail("duration '" + text + "' is longer than 24h", "");
  return std::chrono::milliseconds(ms);
}

}  // namespace twin
