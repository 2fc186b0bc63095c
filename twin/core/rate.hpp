#pragma once
// Link rates as users write them in topology files and on the command line: bits per second
// with an SI prefix ("100M", "1G", "2.5G", "500k", "10Gbit"), the way tc(8) and vendors' port
// speeds count them (k = 1000, not 1024). Not "bps": to tc(8) "10Gbps" is bytes per second,
// to a port's data sheet bits — refused with a hint rather than read one way. Pure.
#include <cstdint>
#include <optional>
#include <string>

namespace twin {

// ECMAScript, whole string; the same pattern is in topologies/schema/topology.schema.json.
inline constexpr const char* kRatePattern = "[0-9]{1,6}(\\.[0-9]{1,3})?[kKMGT](bit)?";
// What tbf takes and a veth could ever mean: 8 kbit/s .. 400 Gbit/s.
inline constexpr uint64_t kMinRateBps = 8000;
inline constexpr uint64_t kMaxRateBps = 400'000'000'000ULL;

// Why a text is no rate: a diagnostic's message and hint.
struct RateProblem {
  std::string message;
  std::string hint;
};

// `text` in bits per second: it must match kRatePattern and fall within kMinRateBps..kMaxRateBps.
// Otherwise nullopt, and `problem` (may be null) says why, with a hint that is itself valid
// where one can be read (a bare 100000000 is 100M; 10Gbps is 10G or 80G).
std::optional<uint64_t> parse_rate(const std::string& text, RateProblem* problem);

// The token bucket twin gives a port shaped to `rate_bps` (wiring::shaping_script), bytes: its
// burst, max(64 KiB, 1 ms at the rate) — below 64 KiB TCP stays under the rate (DESIGN.md §4a)
// — and its queue, max(128 KiB, 2 ms at the rate): ~86 full-size frames, 21 ms at 50 Mbit/s.
// Shaped ports also send no GSO segments (gso_max_segs 1, wiring::shaping_link_script): with
// them a 128 KiB queue holds two 64 KB segments, and 6 TCP flows through 50 Mbit/s for 3 s got
// 0.9 to 13.6 Mbit/s with 3320 retransmits; without, 7.4 to 9.4 with 2 (measured here).
uint64_t tbf_burst_bytes(uint64_t rate_bps);
uint64_t tbf_limit_bytes(uint64_t rate_bps);

// tc(8)'s spelling of a rate, exact: "100mbit", "2500mbit", "8kbit", "12345bit".
std::string tc_rate(uint64_t bps);
// People's: "100 Mbit/s", "2.5 Gbit/s", "950.3 Mbit/s" (up to 4 significant digits).
std::string human_rate(double bps);

}  // namespace twin
