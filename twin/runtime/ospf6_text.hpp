#pragma once
// FRR before 8.0 prints no JSON for OSPFv3's neighbors and interfaces: FRR 7.5.1's ospf6d
// answers `show ipv6 ospf6 neighbor json` "% Unknown command" and `show ipv6 ospf6 interface
// json` "No such Interface: json". Its text is read here into the JSON FRR 8.0 and later print
// for the same command (the keys of 8.4.4's, tests/data/frr84/ospf6/), so every reader of that
// JSON (the ospf family, up's convergence wait) reads 7.5 unchanged. Pure; unit-tested on text
// recorded from 7.5.1 (tests/data/frr-releases/).
#include <nlohmann/json.hpp>
#include <string>

namespace twin::runtime {

// `show ipv6 ospf6 neighbor`: one row per neighbor under the header "Neighbor ID Pri DeadTime
// State/IfState Duration I/F[State]" -> {"neighbors": [{"neighborId", "priority", "deadTime",
// "state", "ifState", "duration", "interfaceName", "interfaceState"}]}. Lines that are no row
// are skipped.
nlohmann::json ospf6_neighbors_from_text(const std::string& text);

// `show ipv6 ospf6 interface`: a block per interface ("eth1 is up, type BROADCAST", then indented
// lines) -> {"eth1": {"status", "type", "interfaceId", "operatingAsType", "internetAddress",
// "attachedToArea", "instanceId", "interfaceMtu", "autoDetect", "mtuMismatchDetection",
// "areaId", "cost", "ospf6InterfaceState", "transmitDelaySec", "priority",
// "timerIntervalsConfigHello", "timerIntervalsConfigDead", "timerIntervalsConfigRetransmit",
// "dr", "bdr", "numberOfInterfaceScopedLsa"}}: the keys of the lines FRR printed (an interface
// OSPFv3 does not run on has no area line, so attachedToArea false).
nlohmann::json ospf6_interfaces_from_text(const std::string& text);

// The text command whose output stands for `command` on `daemon` of a release that prints no
// JSON for it (`major`: plan::Container's FRR major; 0 for this machine's 8.4), and its reader;
// "" when the release answers `command` in JSON.
using TextReader = nlohmann::json (*)(const std::string&);
std::string text_instead_of_json(int major, const std::string& daemon, const std::string& command,
                                 TextReader* reader);

}  // namespace twin::runtime
