#include "twin/core/ip.hpp"

#include <arpa/inet.h>

#include <charconv>

namespace twin {

std::optional<IpPrefix> IpPrefix::parse(const std::string& text, bool allow_bare) {
  IpPrefix p;
  auto slash = text.find('/');
  std::string addr = text.substr(0, slash);
  if (inet_pton(AF_INET, addr.c_str(), p.bytes.data()) == 1) {
    p.family = 4;
  } else if (inet_pton(AF_INET6, addr.c_str(), p.bytes.data()) == 1) {
    p.family = 6;
  } else {
    return std::nullopt;
  }
  int max = p.family == 4 ? 32 : 128;
  if (slash == std::string::npos) {
    if (!allow_bare) return std::nullopt;
    p.length = max;
    return p;
  }
  std::string len = text.substr(slash + 1);
  auto [ptr, ec] = std::from_chars(len.data(), len.data() + len.size(), p.length);
  if (ec != std::errc() || ptr != len.data() + len.size() || len.empty() || p.length < 0 ||
      p.length > max) {
    return std::nullopt;
  }
  return p;
}

std::string IpPrefix::address() const {
  char buf[INET6_ADDRSTRLEN] = {};
  inet_ntop(family == 4 ? AF_INET : AF_INET6, bytes.data(), buf, sizeof buf);
  return buf;
}

std::string IpPrefix::str() const { return address() + "/" + std::to_string(length); }

IpPrefix IpPrefix::network() const {
  IpPrefix n = *this;
  int nbytes = family == 4 ? 4 : 16;
  for (int i = 0; i < nbytes; ++i) {
    int keep = std::max(0, std::min(8, length - i * 8));
    n.bytes[i] &= static_cast<uint8_t>(keep == 0 ? 0 : (0xff << (8 - keep)) & 0xff);
  }
  return n;
}

bool IpPrefix::contains(const IpPrefix& other) const {
  if (family != other.family) return false;
  IpPrefix o = other;
  o.length = length;
  return o.network().bytes == network().bytes;
}

std::optional<std::string> route_dst_prefix(const std::string& dst, bool v6) {
  if (dst == "default") return std::string(v6 ? "::/0" : "0.0.0.0/0");
  auto p = IpPrefix::parse(dst, true);
  if (!p || (p->family == 6) != v6) return std::nullopt;
  return p->network().str();
}

}  // namespace twin
