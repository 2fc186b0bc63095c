#pragma once
// The `tenants:` section: EVPN-VXLAN tenants and their L2 networks (docs/tenants-evpn.md).
// Read and checked here at file:line:col, against the topology's nodes and links:
//   - a VNI (L2 or L3) used twice, in one tenant or two;
//   - a port that is not a leaf's link to a server, or that is in two networks;
//   - a network with no port (no VTEP);
//   - an address on the leaf's end of a bridged port (the port is a bridge member: L2 only);
//   - servers of one network in different subnets (one L2 segment is one subnet);
//   - an underlay too small for the overlay: every link between two routers must carry the
//     largest server frame of any network plus kVxlanOverhead;
//   - a gateway without an L3 VNI, or outside its servers' subnet.
#include <cstdint>
#include <string>
#include <vector>

#include "twin/core/diagnostics.hpp"
#include "twin/topology/model.hpp"

namespace twin::yaml {
class Reader;
struct Value;
}  // namespace twin::yaml

namespace twin::topology {

inline const std::vector<std::string> kTenantKeys = {"l3vni", "networks"};
inline const std::vector<std::string> kTenantNetworkKeys = {"vni", "ports", "gateway"};

// What VXLAN over IPv4 adds to a server's packet, in bytes of the underlay's MTU (which
// excludes the outer L2 header): the inner Ethernet header 14, VXLAN 8, UDP 8, outer IPv4 20
// (RFC 7348 §5). The underlay needs the servers' MTU plus this.
inline constexpr int kVxlanOverhead = 50;
// A VNI is 24 bits (RFC 7348 §5).
inline constexpr uint32_t kMaxVni = 16777215;

// Reads the mapping `map` (field path "tenants") into tenants; `t`'s nodes and links must be
// read already. Every problem goes to `r`'s diagnostics.
std::vector<Tenant> read_tenants(yaml::Reader& r, const yaml::Value& map, const Topology& t);

// The network (and its tenant) that port `node`:`interface` belongs to, or nullptr.
const TenantNetwork* tenant_network_of(const Topology& t, const std::string& node,
                                       const std::string& interface,
                                       const Tenant** tenant = nullptr);

}  // namespace twin::topology
