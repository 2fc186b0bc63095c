#include "twin/core/duration.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <regex>

#include "twin/core/util.hpp"

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

std::string number_problem(const std::string& text, const NumberRange& r) {
  auto bound = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.10g", v);
    return std::string(buf);
  };
  std::string expected = std::string("expected ") + (r.integer ? "a whole number" : "a number") +
                         " from " + bound(r.lo) + " to " + bound(r.hi) +
                         (*r.unit ? std::string(" ") + r.unit : std::string()) + ", got '" +
                         printable(text) + "'";
  double v = 0;
  if (r.integer) {
    // Digits only (no exponent, no fraction); more than 15 of them is beyond any bound here
    // and beyond what a double holds exactly.
    static const std::regex kWhole("[-+]?[0-9]{1,15}");
    if (!std::regex_match(text, kWhole)) return expected;
    v = static_cast<double>(std::stoll(text));
  } else {
    static const std::regex kReal("[-+]?([0-9]+(\\.[0-9]*)?|\\.[0-9]+)([eE][-+]?[0-9]+)?");
    if (!std::regex_match(text, kReal)) return expected;
    v = std::strtod(text.c_str(), nullptr);
    if (!std::isfinite(v)) return expected;
  }
  return v < r.lo || v > r.hi ? expected : "";
}

}  // namespace twin
