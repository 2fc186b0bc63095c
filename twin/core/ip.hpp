#pragma once
// IPv4/IPv6 addresses with prefix length ("10.0.1.1/24", "fd00::1/128"), parsed with
// inet_pton. Pure value type; no I/O.
#include <array>
#include <cstdint>
#include <optional>
#include <string>

namespace twin {

// Interface MTUs users may give (bytes, excluding the L2 header, as `ip link set mtu` takes).
inline constexpr int kMinMtu = 68;  // RFC 791: every IPv4 host must accept 68 bytes
inline constexpr int kMaxMtu = 65535;

struct IpPrefix {
  int family = 0;                   // 4 or 6
  std::array<uint8_t, 16> bytes{};  // IPv4 uses the first 4
  int length = 0;                   // prefix length in bits

  // Parses "addr/len" (or "addr" when allow_bare, meaning a host prefix /32 or /128).
  // Returns nullopt on anything else, including a length out of range for the family.
  static std::optional<IpPrefix> parse(const std::string& text, bool allow_bare = false);

  [[nodiscard]] std::string address() const;                 // "10.0.1.1"
  [[nodiscard]] std::string str() const;                     // "10.0.1.1/24"
  [[nodiscard]] IpPrefix network() const;                    // host bits cleared: "10.0.1.0/24"
  [[nodiscard]] bool contains(const IpPrefix& other) const;  // other's address inside *this
  [[nodiscard]] bool is_host() const { return length == (family == 4 ? 32 : 128); }
  friend bool operator==(const IpPrefix&, const IpPrefix&) = default;
};

// The prefix a kernel route's `dst` stands for, as `ip -j route` prints it, in the form the
// plan writes prefixes: "default" is "0.0.0.0/0" (or "::/0" from the IPv6 table: `v6`), a bare
// address its host prefix ("10.0.0.1" -> "10.0.0.1/32"), host bits cleared; nullopt when `dst`
// is none of these (the caller says so: an unreadable destination is never a route it knows).
std::optional<std::string> route_dst_prefix(const std::string& dst, bool v6);

}  // namespace twin
