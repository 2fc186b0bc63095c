#pragma once
// evpn validator family: the overlay of a lab with tenants (topology `tenants:`), NetQ-style.
// Tests:
//   0 evpn-session   every fabric session between generated configs has l2vpn evpn negotiated
//                    and Established (`show bgp l2vpn evpn summary json`: peers.<key>.state),
//                    both ends listing it: Established at one end whose peer's summary could not
//                    be read is an error
//   1 vni-present    each VTEP has exactly the VNIs the tenants put on it: one missing, or one
//                    no tenant network puts there (a mistyped VNI), fails; so does any VNI on a
//                    router no tenant makes a VTEP (a spine; one per such router with BGP,
//                    an error when its devices could not be read)
//                    (`show evpn vni json`: {"<vni>": {"vni", "type": "L2"|"L3", ...}}; nothing at
//                    all when EVPN is off in zebra, which fails every VNI of the VTEP)
//   2 flood-list     per L2 VNI, the remote VTEPs (EVPN type 3, RFC 8365 §9) are exactly the
//                    network's other VTEPs (`show evpn vni json` remoteVteps; the kernel's
//                    all-zero FDB entries on the VXLAN device, `bridge -j fdb show`)
//   3 mac-learned    every server of a VNI is known on every other VTEP of it (EVPN type 2):
//                    in zebra as remote at its VTEP (`show evpn mac vni all json`) and installed
//                    in the kernel FDB toward that VTEP (entry on the VXLAN device, dst)
//   4 vni-bridge     the kernel's devices match the plan: VXLAN device with the VNI, in the
//                    VNI's bridge, each server port in its network's bridge
//                    (`ip -j -d link show`: linkinfo.info_data.id, master)
//   5 overlay-mtu    a DF ping between servers of one network on different VTEPs at the
//                    servers' MTU: the underlay carries full frames plus VXLAN's 50 bytes
// Tests 2 and 3 need both zebra and the kernel: with zebra right and the FDB unread (or empty:
// the kernel always lists its ports' own entries) the result is an error, never a pass.
// Families without tenants in the plan return nothing.
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "twin/validate/validator.hpp"

namespace twin::validators {

class EvpnValidator final : public validate::Validator {
 public:
  std::string name() const override { return "evpn"; }
  bool rides_on_control_plane() const override { return true; }
  std::vector<validate::TestResult> run(validate::Context& ctx) override;
};

// What the family reads on one node; a probe that failed holds its error.
struct EvpnFacts {
  std::optional<Result<nlohmann::json>> summary;  // show bgp l2vpn evpn summary json
  std::optional<Result<nlohmann::json>> vnis;     // show evpn vni json (VTEPs)
  std::optional<Result<nlohmann::json>> macs;     // show evpn mac vni all json (VTEPs)
  std::optional<Result<nlohmann::json>> links;    // ip -j -d link show (VTEPs; routers: stray VNIs)
  std::optional<Result<nlohmann::json>> fdb;      // bridge -j fdb show (VTEPs)
};

// Tests 0-4 over collected facts (node name -> facts). Pure; unit-tested on recorded FRR 8.4
// and iproute2 JSON (tests/data/frr84/evpn/).
std::vector<validate::TestResult> evaluate_evpn(const plan::Plan& plan,
                                                const std::map<std::string, EvpnFacts>& facts);

// Test 5's pings (pure).
std::vector<validate::PingProbe> overlay_mtu_probes(const plan::Plan& plan);

}  // namespace twin::validators
