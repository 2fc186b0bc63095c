#include "twin/topology/names.hpp"

#include <cctype>
#include <regex>

#include "twin/topology/model.hpp"

namespace twin::topology {

bool valid_lab_name(const std::string& name) {
  static const std::regex re("[A-Za-z0-9][A-Za-z0-9_-]*");
  return !name.empty() && name.size() <= kMaxLabName && std::regex_match(name, re);
}

IpPrefix default_mgmt_subnet(const std::string& lab) {
  uint32_t h = 2166136261u;  // FNV-1a, 32 bits
  for (unsigned char c : lab) h = (h ^ c) * 16777619u;
  return *IpPrefix::parse("172.30." + std::to_string(h % 256) + ".0/24");
}

IpPrefix mgmt_dhcp_address(const IpPrefix& subnet) {
  IpPrefix a = subnet.network();
  for (int bit = subnet.length; bit < 32; ++bit) a.bytes[bit / 8] |= (0x80 >> (bit % 8));
  a.bytes[3] = static_cast<uint8_t>(a.bytes[3] - 1);  // below the broadcast address
  return a;
}

bool valid_interface_name(const std::string& name, std::string* why) {
  auto fail = [&](const std::string& w) {
    if (why) *why = w;
    return false;
  };
  if (name.empty()) return fail("interface name is empty");
  if (name.size() > kMaxInterfaceName)
    return fail("interface name '" + name + "' is " + std::to_string(name.size()) +
                " bytes; Linux allows at most 15 (IFNAMSIZ)");
  if (name == "." || name == "..") return fail("interface name cannot be '.' or '..'");
  for (unsigned char c : name) {
    if (c == '/' || c == ':' || std::isspace(c) || c < 0x20)
      return fail("interface name '" + name + "' contains '/', ':' or whitespace");
  }
  return true;
}

}  // namespace twin::topology
