#include "twin/core/rate.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <regex>

namespace twin {

std::optional<uint64_t> parse_rate(const std::string& text, RateProblem* problem) {
  auto fail = [&](std::string message, std::string hint) -> std::optional<uint64_t> {
    if (problem) *problem = {std::move(message), std::move(hint)};
    return std::nullopt;
  };
  static const std::regex re(kRatePattern);
  static const std::regex bare("[0-9]{1,15}");
  static const std::regex bytes("([0-9]{1,6}(\\.[0-9]{1,3})?)([kKMGT])[bB]ps");
  std::smatch m;
  if (std::regex_match(text, m, bytes))
    return fail("'" + text +
                    "' is ambiguous: port speeds count bits per second, tc(8)'s 'bps' "
                    "bytes",
                "write " + m[1].str() + m[3].str() + " for " + m[1].str() + " " + m[3].str() +
                    "bit/s (twin's rates are bits per second)");
  if (!std::regex_match(text, re)) {
    std::string hint = "a number followed by k, M, G or T, optionally 'bit': 100M, 10Gbit";
    if (std::regex_match(text, bare)) {
      uint64_t n = std::stoull(text);
      // A bare number is bits per second (tc's own default unit): say it with its prefix.
      if (n >= kMinRateBps && n <= kMaxRateBps) {
        std::string t = tc_rate(n);  // "100mbit"
        std::string num = t.substr(0, t.find_first_not_of("0123456789"));
        char prefix = t[num.size()];
        hint = prefix == 'b' ? "add a unit: k, M, G or T (bits per second, powers of 1000)"
                             : "add a unit: " + num +
                                   static_cast<char>(prefix == 'k' ? 'k' : std::toupper(prefix)) +
                                   " (bits per second; k, M, G, T are powers of 1000)";
      } else {
        hint = "a rate from 8k to 400G, e.g. 100M (bits per second)";
      }
    } else if (text.size() > 1 && std::string("mgt").find(text.back()) != std::string::npos) {
      hint = "the prefixes are k, M, G, T (upper case but k): " + text.substr(0, text.size() - 1) +
             static_cast<char>(std::toupper(text.back()));
    }
    return fail("expected a rate like 100M, 1G or 2.5G (bits per second), got '" + text + "'",
                hint);
  }
  size_t unit_at = text.find_first_of("kKMGT");
  std::string number = text.substr(0, unit_at);
  char unit = text[unit_at];
  uint64_t factor = unit == 'k' || unit == 'K' ? 1000ULL
                    : unit == 'M'              ? 1000'000ULL
                    : unit == 'G'              ? 1000'000'000ULL
                                               : 1000'000'000'000ULL;
  // Integer arithmetic: 2.5G is exactly 2500000000.
  auto dot = number.find('.');
  uint64_t whole = std::stoull(number.substr(0, dot)), frac = 0, scale = 1;
  if (dot != std::string::npos) {
    frac = std::stoull(number.substr(dot + 1));
    for (size_t i = dot + 1; i < number.size(); ++i) scale *= 10;
  }
  if (frac * factor % scale != 0)
    return fail("rate '" + text + "' is not a whole number of bits per second", "");
  uint64_t bps = whole * factor + frac * factor / scale;
  if (bps < kMinRateBps) return fail("rate '" + text + "' is below 8k; expected 8k to 400G", "");
  if (bps > kMaxRateBps) return fail("rate '" + text + "' is above 400G; expected 8k to 400G", "");
  return bps;
}

uint64_t tbf_burst_bytes(uint64_t rate_bps) {
  return std::max<uint64_t>(64 * 1024, rate_bps / 8 / 1000);
}

uint64_t tbf_limit_bytes(uint64_t rate_bps) {
  return std::max<uint64_t>(128 * 1024, rate_bps / 8 / 500);
}

std::string tc_rate(uint64_t bps) {
  if (bps % 1000'000'000ULL == 0) return std::to_string(bps / 1000'000'000ULL) + "gbit";
  if (bps % 1000'000ULL == 0) return std::to_string(bps / 1000'000ULL) + "mbit";
  if (bps % 1000ULL == 0) return std::to_string(bps / 1000ULL) + "kbit";
  return std::to_string(bps) + "bit";
}

std::string human_rate(double bps) {
  const char* unit = "bit/s";
  double v = bps;
  if (bps >= 1e9) {
    v = bps / 1e9;
    unit = "Gbit/s";
  } else if (bps >= 1e6) {
    v = bps / 1e6;
    unit = "Mbit/s";
  } else if (bps >= 1e3) {
    v = bps / 1e3;
    unit = "kbit/s";
  }
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.4g %s", v, unit);
  return buf;
}

}  // namespace twin
