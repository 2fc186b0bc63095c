#pragma once
// `twin gen clos`: writes a valid topology file (format v1) for a leaf–spine fabric, the
// designs users want anyway and the benchmark uses. Pure: text in, text out, no I/O.
//
// Design (RFC 7938, "Use of BGP for Routing in Large-Scale Data Centers"): eBGP unnumbered on
// every fabric link; spines of one tier share an ASN (so a leaf's routes never come back through
// another spine), every leaf has its own ASN from the 4-byte private range (RFC 6996:
// 4200000000-4294967294); IPv4 and IPv6 loopbacks; servers on point-to-point access links with
// a /24 each (a veth joins two ends, so servers do not share a subnet).
#include <string>

#include "twin/core/error.hpp"

namespace twin::topology {

struct ClosSpec {
  std::string name = "clos";  // lab name
  int spines = 2;             // per pod
  int leaves = 4;             // per pod
  int servers_per_leaf = 0;
  int mtu = 9216;        // fabric links, bytes (L3); server links use 1500
  int super_spines = 0;  // > 0: 3-tier (super-spine / spine / leaf) with `pods` pods
  int pods = 1;          // only with super_spines
  // > 0: the servers belong to this many EVPN tenants (one L2 network each, VNI 10000 + 100 t),
  // dealt round-robin in server order so each tenant spans leaves; server links are then
  // bridged tenant ports (no leaf address), each tenant's servers in 10.<100+t>.0.0/16.
  int tenants = 0;
  // Link rates (`bandwidth:`, core/rate.hpp's spelling, checked by check()): fabric links as
  // the file's default, server links their own; "" = unshaped.
  std::string fabric_rate, server_rate;
};

// Limits that keep names, ports and address plans valid. Errors: kUsage naming the option.
Result<void> check(const ClosSpec& spec);

// The topology file's text. Node names: spine<N>, leaf<N>, server<N> (numbered across pods),
// super<N>; ports swp1.. (leaf uplinks first, then server ports; spine downlinks first, then
// super-spine uplinks); servers use eth0. Loopbacks 10.255.<hi>.<lo>/32 and fd00:255::<n>/128
// numbered over all nodes; server links 172.<16+k/256>.<k%256>.0/24 (leaf .1, server .10), or
// with tenants tenant<t> network `net` (see ClosSpec::tenants).
std::string generate_clos(const ClosSpec& spec);

// `twin gen rail`: a rail-optimised AI fabric. Each server has `rails` NICs (eth0..), NIC r on
// rail r's leaf of its group; `servers_per_leaf` servers make a group (a scalable unit), so a
// rail has one leaf per group, and every rail leaf links to every spine. A collective stays on
// its rail: within a group it crosses one leaf, between groups leaf - spine - leaf (ECMP over
// the spines). eBGP unnumbered as gen clos; NIC r of server i is 10.<100+r>.<i>.10/24 (leaf
// .1), with a route to its rail's 10.<100+r>.0.0/16 through it and the default through rail 1.
struct RailSpec {
  std::string name = "rail";
  int servers = 8;
  int rails = 4;
  int spines = 2;
  int servers_per_leaf = 4;
  int mtu = 9216;                        // fabric links; server links 1500
  std::string fabric_rate, server_rate;  // as ClosSpec's
};
Result<void> check(const RailSpec& spec);
// Node names: spine<N>, rail<r>-leaf<g>, server<N>; leaf ports swp1.. (spine uplinks first).
std::string generate_rail(const RailSpec& spec);

}  // namespace twin::topology
