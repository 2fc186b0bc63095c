#pragma once
// Neighbor Discovery messages twin sends itself (RFC 4861).
//
// Why: FRR's zebra learns a BGP unnumbered peer's link-local address only from that peer's
// router advertisements (zebra/rtadv.c, rtadv_process_advert -> nbr_connected_add_ipv6), and a
// router advertises every `ra-interval` seconds. A node whose zebra starts after its
// neighbours' (a node started late in `up`, a restart, a daemon added by a change) would wait
// up to that interval before its sessions could start. A Router Solicitation makes each
// neighbour's zebra advertise at once (rtadv_process_solicit: with fast retransmit, FRR's
// default, it answers immediately, not after the random 0-0.5 s delay of RFC 4861 6.2.6), so
// the interval only bounds how fast a lost advertisement is made good, not how fast a node
// comes up. zebra reads advertisements only on ports it advertises on itself (rtadv.c,
// rtadv_process_packet): where bgpd, not zebra's own configuration, switches them on (an own
// config's `neighbor swp1 interface` without `no ipv6 nd suppress-ra`), an answer that arrives
// before bgpd's request reached zebra is dropped, and the next periodic one does the work.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "twin/core/error.hpp"

namespace twin::runtime {

// The ICMPv6 Router Solicitation message (RFC 4861 4.1): type 133, code 0, reserved zero, no
// option. 4.1 says the source link-layer address option SHOULD be included; it only saves the
// router a neighbour resolution for a unicast answer, and zebra answers to all-nodes.
// The checksum stays 0: the kernel fills it in for raw ICMPv6 sockets (RFC 3542 3.1).
std::array<uint8_t, 8> router_solicitation();

// Sends one Router Solicitation to all-routers (ff02::2) out each named interface of the
// calling thread's network namespace (use inside run_in_netns), with hop limit 255 (a router
// drops a solicitation with any other, RFC 4861 6.1.1; zebra does too). Best effort by design:
// an interface that is missing, down or still without a link-local address is skipped, since
// the neighbours' periodic advertisements still come. Returns how many were sent. Errors: the
// raw socket could not be opened (needs CAP_NET_RAW). Solicitations are not looped back: the
// node's own zebra would answer them too.
Result<int> solicit_routers(const std::vector<std::string>& ifnames);

}  // namespace twin::runtime
