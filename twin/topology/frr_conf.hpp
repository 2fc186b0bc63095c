#pragma once
// What a user's integrated frr.conf configures, as far as twin needs to know it: which daemons
// it needs, which BGP neighbors, OSPF interfaces, BFD peers and static routes it sets up, and
// which addresses it puts on interfaces. Read line by line (FRR's config is line-oriented:
// one command per line, blocks opened by `interface`/`router`/`bfd` and closed by `exit`, `!`
// at column 0 or the next block); never executed. A pure function of the text.
//
// The grammar followed is FRR 8.4's (FRR user docs: "Basic commands", "BGP", "OSPFv2",
// "OSPFv3", "BFD", "Static"), keyword abbreviations included: each line is first resolved as
// FRR's CLI resolves it (frr_grammar.hpp) in its block's node, then in the nodes around it, as
// FRR tries a config line in the parent nodes, so `int eth1` / ` ip addr 10.0.1.1/24` read as
// `interface eth1` / ` ip address 10.0.1.1/24`. Commands twin does not need are skipped, not
// rejected: FRR itself checks the config when `up` loads it (`vtysh -b`), and reports the
// line. A line of a node twin reads that FRR's grammar has no command for, or whose
// abbreviation is ambiguous, is kept in FrrConf::not_read.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "twin/core/diagnostics.hpp"
#include "twin/topology/host_paths.hpp"

namespace twin::topology {

// A command and the line (1-based) of the config file it was read from.
struct ConfLine {
  int line = 0;
  std::string text;
};

struct BgpNeighborConf {
  std::string peer;        // an address, or an interface name when `unnumbered`
  bool unnumbered = false; // `neighbor IF interface ...`
  std::string remote_as;   // "internal" | "external" | an ASN; from its peer group if unset
  std::string peer_group;  // "" when not in a group
  bool shutdown = false;
  bool bfd = false;
  // `neighbor X route-map NAME in|out` (any address family; from its peer group if unset):
  // RFC 8212 policy, without which FRR's traditional profile exchanges no eBGP routes.
  bool route_map_in = false, route_map_out = false;
  // The route-maps by name ("" = none), and whether a prefix-list, filter-list or
  // distribute-list filters that way: policy twin does not evaluate (see route_map_transparent).
  std::string route_map_in_name, route_map_out_name;
  bool list_in = false, list_out = false;
  // `neighbor X activate` under `address-family l2vpn evpn` (from its peer group if unset):
  // the session carries EVPN routes when both ends activate it (RFC 4760).
  bool evpn = false;
  // `neighbor X route-reflector-client` and `neighbor X next-hop-self` (a unicast address
  // family, or none; from its peer group if unset): iBGP route reflection (RFC 4456) and the
  // next hop this node announces to X (itself, instead of the route's).
  bool rr_client = false, next_hop_self = false;
  bool next_hop_self_force = false;  // `next-hop-self force`: reflected routes too
  int line = 0;            // where the neighbor is first named
};

// An interface OSPF runs on, from `ip ospf area` under the interface or `network P area A`
// under `router ospf` (matched to the interface's addresses by the caller, who knows them).
struct OspfInterfaceConf {
  std::string interface;
  std::string area;  // dotted quad: "0.0.0.0" (FRR accepts "0" and prints dotted)
  bool passive = false;
  int version = 2;   // 2: ospfd (`ip ospf area`), 3: ospf6d (`ipv6 ospf6 area`)
  int line = 0;
};
struct OspfNetworkConf {
  std::string prefix;  // "10.0.0.0/30"
  std::string area;    // dotted quad
  int line = 0;
};

// OSPFv2 authentication an interface sets itself (RFC 2328 appendix D; FRR's docs, "OSPFv2":
// `ip ospf authentication [message-digest|null]`, `ip ospf authentication-key KEY`,
// `ip ospf message-digest-key N md5 KEY`).
struct OspfAuthConf {
  std::string type;        // "" (not set here: the area's), "simple", "message-digest", "null"
  std::string simple_key;  // authentication-key
  std::map<int, std::string> md5_keys;  // key id -> key
  int md5_youngest = -1;  // the key id configured last: FRR signs with it (ospf_auth.c)
  int line = 0;           // where the interface's authentication is first set
};

struct StaticRouteConf {
  std::string prefix;  // "10.9.0.0/24"
  std::string via;     // next-hop address; "" for an interface or blackhole route
  std::string interface;
  int line = 0;
};

struct BfdPeerConf {
  std::string peer;       // address
  std::string interface;  // "" when not bound to one
  int line = 0;
};

struct FrrConf {
  std::string file;       // as given to parse_frr_conf
  std::string defaults;   // `frr defaults X` ("" when the line is absent)
  std::string hostname;
  // Daemon → first line that needs it (`router bgp` → bgpd, `ip route` → staticd, ...).
  // zebra is not listed: every FRR node runs it.
  std::map<std::string, int> needs;
  // Daemon → every line that needs it, in file order, trimmed: what will not run when a daemons
  // file switches that daemon off (`neighbor X bfd` is bgpd's line, but BFD needs bfdd).
  std::map<std::string, std::vector<ConfLine>> need_lines;
  // interface → addresses the config puts on it ("10.0.0.1/30"), `interface lo` included.
  std::map<std::string, std::vector<std::string>> addresses;
  std::map<std::string, std::vector<int>> address_lines;  // parallel to `addresses`

  std::optional<uint32_t> bgp_asn;
  std::string bgp_router_id;
  int bgp_line = 0, bgp_router_id_line = 0;  // `router bgp N`, `bgp router-id X`
  std::vector<BgpNeighborConf> bgp_neighbors;  // peer groups resolved; groups themselves omitted

  std::string ospf_router_id, ospf6_router_id;
  std::vector<OspfInterfaceConf> ospf_interfaces;  // interface-level areas (v2 and v3)
  std::vector<OspfNetworkConf> ospf_networks;      // `network P area A` (v2)
  bool ospf_passive_default = false;               // `passive-interface default`
  std::vector<std::string> ospf_passive;           // `passive-interface IF` / `ip ospf passive`
  std::vector<std::string> ospf_active;            // `no passive-interface IF`, `no ip ospf passive`
  std::map<std::string, int> ospf_costs;           // interface -> `ip ospf cost N` (v2)
  // interface -> dead interval in seconds, where the config sets `ip ospf dead-interval` or
  // `ip ospf hello-interval` (dead = 4 x hello then, RFC 2328 appendix C.3); 1 for
  // `dead-interval minimal`. Absent: FRR's default, 40 s.
  std::map<std::string, int> ospf_dead_s;
  std::map<std::string, OspfAuthConf> ospf_auth;      // interface -> its own authentication
  std::map<std::string, std::string> ospf_area_auth;  // area -> "simple" | "message-digest"

  // What the config originates: `network P` under router bgp (any unicast family), and the
  // sources of `redistribute SRC` per protocol and family: "bgp4" (router bgp, IPv4 unicast or
  // no address family), "bgp6", "ospf", "ospf6" -> {"connected", "static", ...}.
  std::vector<std::string> bgp_networks;
  std::map<std::string, std::vector<std::string>> redistribute;
  bool bgp_multipath_relax = false;  // `bgp bestpath as-path multipath-relax`
  // route-map name -> true when every entry is a bare `permit` (no match, set, call, deny):
  // the common way to satisfy RFC 8212 without filtering. Any other route-map can drop or
  // change routes, which twin does not evaluate.
  std::map<std::string, bool> route_map_transparent;
  // `[no] bgp ebgp-requires-policy`; nullopt = the profile's default (FRR's docs, "Require
  // policy on EBGP": on in the traditional profile, off in datacenter).
  std::optional<bool> ebgp_requires_policy;

  // Commands naming a file of the machine (`log file PATH`, `dump bgp ... PATH`, ...:
  // host_paths.hpp), which the node's FRR reaches inside its run folder instead.
  std::vector<HostPath> host_paths;

  std::vector<StaticRouteConf> static_routes;
  std::vector<BfdPeerConf> bfd_peers;
  // Lines twin cannot model and that change what a lab must expect (a VRF's `router bgp`):
  // reported by the loader as unsupported, with the line.
  std::vector<ConfLine> unsupported;
  // Lines of the nodes twin reads that are no command of FRR 8.4's grammar there, or whose
  // abbreviation two commands match (frr_grammar.hpp): nothing is expected of them, and the
  // planner says so in a note with the line. FRR's own check at `up` judges them.
  struct NotRead {
    int line = 0;
    std::string text;  // the line, trimmed
    std::string why;   // KeywordResolution::problem
  };
  std::vector<NotRead> not_read;
};

// The OSPFv2 authentication interface `ifname` of area `area` runs with under `c`: its own
// `ip ospf authentication`, else its area's `area A authentication`, else "none"; "null" is
// none too. Pure.
std::string ospf_auth_type(const FrrConf& c, const std::string& ifname, const std::string& area);
// Why two ends of an OSPFv2 link (each config, interface and area) cannot authenticate each
// other, in words that name no key ("message-digest here, none on r6:eth1", "message-digest
// key 1 differs"), or "" when they agree. Pure.
std::string ospf_auth_mismatch(const FrrConf& here, const std::string& here_if,
                               const FrrConf& there, const std::string& there_if,
                               const std::string& area, const std::string& there_name);

// Parses `text` (the content of `file`). Never fails: unknown commands are skipped.
FrrConf parse_frr_conf(const std::string& text, const std::string& file);

// The daemon a top-level or block command needs, or "" (e.g. "router ospf" → "ospfd",
// "ip route 10.0.0.0/8 ..." → "staticd", "bfd" → "bfdd"). Exposed for tests and the docs table.
std::string daemon_for_command(const std::string& command);

// "0" → "0.0.0.0", "1.2.3.4" → "1.2.3.4"; OSPF area IDs are 32-bit (RFC 2328 §C.2) and FRR
// accepts both spellings. "" when `area` is neither.
std::string normalize_area(const std::string& area);

// FRR 8.4's daemons in the order FRR's init starts them (zebra first; staticd last among
// routing daemons so its routes meet the others' state). Daemons twin knows how to start.
const std::vector<std::string>& frr_daemon_order();

}  // namespace twin::topology
