#pragma once
// ospf validator family (OSPFv2, ospfd; OSPFv3, ospf6d, for tests 0 and 1). Tests:
//   0 adjacency-full      every expected adjacency (plan::ExpectedAdjacency: both ends run OSPF
//                         on the link, neither passive) is Full; otherwise the reason, from both
//                         ends' JSON: a passive end, area / hello / dead / network-type
//                         mismatch, ExStart/Exchange with the MTUs of both ends, a duplicate
//                         router-id, or the state it is in
//   1 interfaces-agree    both ends of every expected adjacency agree on what must match for
//                         an adjacency (RFC 2328 §10.5: area, hello and dead intervals; §10.6:
//                         interface MTU; network type for FRR's p2p/broadcast handling;
//                         appendix D: authentication type and key, from the running configs) —
//                         checked at once, not after a dead interval has expired; a mismatch
//                         cannot converge (TestResult::cannot_converge), so it is not waited for
//   2 router-id-unique    OSPF router-ids differ across the lab, counting a configured one that
//                         takes effect only at ospfd's next start (FRR keeps the id it started
//                         with until `clear ip ospf process`): a duplicate waiting for a restart
//                         fails now, a different id waiting for one is a warning note
//   3 networks-installed  every network an OSPF router runs OSPF on is installed in the FIB of
//                         every OSPF router that shares an area with it
// Sources (FRR 8.4, recorded in tests/data/frr84/ospf/): `show ip ospf neighbor json`
// {"neighbors": {"<router-id>": [{"nbrState": "Full/-", "ifaceName": "eth1:10.0.12.1", ...}]}},
// `show ip ospf interface json` {"interfaces": {"eth1": {"area", "networkType", "timerMsecs"
// (hello, ms), "timerDeadSecs", "mtuBytes", "timerPassiveIface", "state", "ipAddress",
// "ipAddressPrefixlen", ...}}}, `show ip ospf json` {"routerId", "areas": {...}}, and zebra's
// `show ip route json` {"<prefix>": [{"installed": true, ...}]}. FRR 8.4's interface JSON has
// no authentication field: authentication and the configured router-id come from the running
// configuration (topology/frr_conf.hpp reads it). OSPFv3 (recorded in
// tests/data/frr84/ospf6/): `show ipv6 ospf6 neighbor json` {"neighbors": [{"neighborId",
// "state", "interfaceName"}]} and `show ipv6 ospf6 interface json` {"eth1": {"areaId",
// "operatingAsType", "timerIntervalsConfigHello" (s), "timerIntervalsConfigDead",
// "interfaceMtu", ...}}. An answer without the key FRR prints when it has the state (`{}` from
// an ospfd with no `router ospf`), or an empty interface list or routing table, is no data: an
// error naming the node and command, never a pass; a router whose interfaces are unknown is one
// test-3 error (its networks and areas unknown), not left out.
#include <map>
#include <nlohmann/json.hpp>

#include "twin/validate/validator.hpp"

namespace twin::validators {

class OspfValidator final : public validate::Validator {
 public:
  std::string name() const override { return "ospf"; }
  bool control_plane() const override { return true; }
  std::vector<validate::TestResult> run(validate::Context& ctx) override;
  std::vector<Note> coverage(const validate::Context&,
                             const std::vector<validate::TestResult>&) const override {
    return notes_;
  }

 private:
  std::vector<Note> notes_;  // of the latest run
};

// What one OSPF router printed; an error where the probe failed.
struct OspfObservation {
  Result<nlohmann::json> neighbors{boost::system::in_place_error, harness_error("not probed")};
  Result<nlohmann::json> interfaces{boost::system::in_place_error, harness_error("not probed")};
  Result<nlohmann::json> instance{boost::system::in_place_error, harness_error("not probed")};
  Result<nlohmann::json> routes{boost::system::in_place_error, harness_error("not probed")};
  // OSPFv3, where ospf6d runs
  Result<nlohmann::json> neighbors6{boost::system::in_place_error, harness_error("not probed")};
  Result<nlohmann::json> interfaces6{boost::system::in_place_error, harness_error("not probed")};
  // The running configuration (LabProbe::running_config): OSPF authentication and a
  // configured router-id, which FRR 8.4's JSON does not show. Unread, they are not compared.
  Result<std::string> config{boost::system::in_place_error, usage_error("not probed")};
};

// What the family had to say beside its results of the latest evaluation: a router-id that
// takes effect only at ospfd's next start (warning notes).
std::vector<Note> ospf_notes(const plan::Plan& plan,
                             const std::map<std::string, OspfObservation>& observed);

// Nodes the family looks at: FRR nodes that run ospfd (ospf6d) and have OSPFv2 (v3) interfaces
// in the plan; `version` 2 or 3.
bool runs_ospf(const plan::Node& n, int version = 2);

// Pure evaluation over the observations of the OSPF routers (keyed by node name). Exposed for
// unit tests with recorded FRR output.
std::vector<validate::TestResult> evaluate_ospf(
    const plan::Plan& plan, const std::map<std::string, OspfObservation>& observed);

}  // namespace twin::validators
