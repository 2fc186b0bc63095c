#pragma once
// The topology file as data (format v1, documented in README.md and
// topologies/schema/topology.schema.json). Pure data: loading and checking live in loader.hpp.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "twin/core/ip.hpp"

namespace twin::topology {

// Where something was written: 1-based line and column in `Topology::file`.
struct Mark {
  int line = 0;
  int column = 0;
};

// What a node boots: an image profile file images/<name>.yaml.
struct ImageProfile {
  std::string name;
  std::string file;                        // absolute path of the profile
  std::string kind;                        // node kind it is for: "frr" or "host"
  std::string backend = "netns";           // only "netns" today
  std::vector<std::string> daemons;        // FRR daemons started in this order, e.g. zebra, bgpd
  std::string frr_profile = "datacenter";  // FRR `-F` profile (FRR docs: "frr defaults")
  int rp_filter = 0;                       // net.ipv4.conf.{all,default}.rp_filter in the namespace
  int ra_interval_s = 1;                   // `ipv6 nd ra-interval` on fabric ports (BGP unnumbered)
  int coalesce_time_ms = 0;                // bgp `coalesce-time`: 0 sends updates without waiting
  // zebra installs routes through kernel nexthop objects (`zebra nexthop kernel enable`).
  bool kernel_nexthop_groups = true;
};

struct Node {
  std::string name;
  std::string kind;   // "frr" | "host"
  std::string image;  // profile name
  ImageProfile profile;
  std::optional<uint32_t> asn;
  std::optional<IpPrefix> router_id;  // IPv4 (BGP identifier, RFC 6286); /32
  std::vector<IpPrefix> loopbacks;    // host prefixes on lo: /32 and/or /128
  std::string config;                 // absolute path of a user frr.conf; "" = generated
  std::vector<IpPrefix> gateways;     // host kind: default-route next hops (one per family)
  Mark mark;
};

struct Endpoint {
  std::string node;
  std::string interface;
  Mark mark;
};

struct Link {
  Endpoint a, b;
  int mtu = 1500;  // bytes, excluding the L2 header (what `ip link set mtu` takes)
  bool mtu_explicit = false;
  // Addresses per node name on this link ("10.0.1.1/24"); a node absent here has none
  // (BGP unnumbered uses IPv6 link-local addresses only).
  std::map<std::string, std::vector<IpPrefix>> addresses;
  Mark mark;
};

struct Topology {
  std::string file;  // absolute path of the topology file
  std::string dir;   // its folder: relative paths resolve against it
  int version = 1;
  std::string name;  // lab name
  std::vector<Node> nodes;
  std::vector<Link> links;

  [[nodiscard]] const Node* find_node(const std::string& name) const;
};

// Accepted values, shared by the loader, the schema test and `twin plan`.
inline constexpr int kMinMtu = 68;  // RFC 791: every IPv4 host must accept 68 bytes
inline constexpr int kMaxMtu = 65535;
inline constexpr int kMinIpv6Mtu = 1280;         // RFC 8200 §5; Linux removes IPv6 below it
inline constexpr size_t kMaxInterfaceName = 15;  // IFNAMSIZ - 1 (linux/if.h)
inline constexpr size_t kMaxLabName = 24;        // keeps "tw-<lab>-<node>" paths readable

}  // namespace twin::topology
