#pragma once
// The kernel's view of a node (links, addresses, routes) over rtnetlink, in-process, and the few
// link changes wiring needs. Why not `ip -j`: one `ip -n NS` process costs ~4–8 ms (it also
// unshares a mount namespace and remounts /sys), and a validation of a 56-node lab needs ~200
// of them; a netlink dump of the same table costs well under 1 ms.
//
// Output shape: the same JSON as iproute2's `ip -j` (iproute2 6.1, Debian 12) for the fields
// twin reads, so validators, the gate and recorded test data keep one format:
//   links:     [{"ifindex","ifname","flags":["BROADCAST",...,"UP","LOWER_UP"],"mtu","operstate",
//                "link_type","address"[, "link_index", "link_netnsid", "master"],
//                "stats64":{"rx":{...},"tx":{...}}}] — the counters as `ip -j -s link show`
//                prints them (stats64_json), which the kernel sends in every link dump anyway
//   addresses: the link objects, each with "addr_info":[{"family":"inet"|"inet6","local",
//                "prefixlen","scope"[, "tentative": true][, "dadfailed": true][, "label"]}]
//   routes:    the main table (254) of one family: [{"dst" ("default", "10.0.0.1" for a host
//                route, else "10.0.0.0/24"),"gateway"|"via":{"family","host"},"dev","protocol"
//                (not for "boot", the default; names as in /etc/iproute2/rt_protos[.d]: "kernel",
//                "bgp", ...),
//                "scope" (when not global),"metric","prefsrc","flags":["onlink"],
//                "type" (only when not unicast), "nexthops":[{"gateway"|"via","dev","weight",
//                "flags"}] for multipath}]
// Message formats: rtnetlink(7), linux/rtnetlink.h, linux/if_link.h, linux/if_addr.h.
#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "twin/core/error.hpp"

struct rtnl_link_stats64;  // linux/if_link.h

namespace twin::runtime {

// A link-layer address as `ip` prints it: lower-case hex bytes joined by ':'.
std::string mac_text(const unsigned char* bytes, size_t n);

// A port's counters (IFLA_STATS64) as iproute2 6.1's `ip -j -s link show` writes them:
// {"rx":{"bytes","packets","errors","dropped","over_errors","multicast"},
//  "tx":{"bytes","packets","errors","dropped","carrier_errors","collisions"}}.
nlohmann::json stats64_json(const ::rtnl_link_stats64& s);

enum class KernelTable {
  kLinks,      // `ip -j link show`
  kAddresses,  // `ip -j addr show`
  kRoutes4,    // `ip -j route show`
  kRoutes6,    // `ip -j -6 route show`
};

// Which KernelTable an `ip` argument list asks for ({"link","show"}, {"addr","show"},
// {"route","show"}, {"-6","route","show"}); false for anything else (run `ip` for those).
bool kernel_table_of(const std::vector<std::string>& ip_args, KernelTable* out);

// The `ip` arguments that show `table` ("link show"): kernel_table_of's inverse.
std::string ip_args_of(KernelTable table);

// Dumps `what` from network namespace `netns` (a name under /run/netns). Errors (kHarness): the
// namespace cannot be entered, or netlink fails. Thread-safe.
Result<nlohmann::json> kernel_json(const std::string& netns, KernelTable what);
// The main table's routes of one protocol (`ip -j [-6] route show proto PROTOCOL`; `family`
// AF_INET or AF_INET6, `protocol` an RTPROT_* number), in kernel_json's shape. The kernel
// filters them (strict dump checking) where it can, so a table of ~1,000 BGP routes costs
// what its few kernel routes cost. Errors as kernel_json.
Result<nlohmann::json> kernel_routes(const std::string& netns, int family, int protocol);

// Runs `fn` on a thread of its own that has entered `netns` (setns(2) moves only the calling
// thread, so the caller never leaves its namespace). Errors: entering failed, or fn's error.
Result<void> run_in_netns(const std::string& netns, const std::function<Result<void>()>& fn);

// Sets each named interface administratively up (RTM_NEWLINK, IFF_UP), in the calling thread's
// network namespace (use inside run_in_netns). Idempotent. Errors name the interface.
Result<void> set_links_up(const std::vector<std::string>& ifnames);

// Adds the kernel's own link-local prefix route of port `ifindex` (`ifname` names it in errors)
// back, `fe80::/64 dev IFNAME proto kernel metric 256` in the main table, as addrconf installs
// it when the port gets its link-local address (net/ipv6/addrconf.c, addrconf_prefix_route),
// in the calling thread's network namespace. Sent with NLM_F_APPEND, not NLM_F_EXCL: every port's route has the same
// prefix and metric, so an exclusive add (`ip -6 route add`) is refused with EEXIST while any
// other port has its route, and a replace (`ip -6 route replace`) takes another port's route
// over (IPv6 replace matches prefix and metric, not the device). Idempotent: the kernel refuses
// the same route on the same port (EEXIST), taken as done. Errors name the interface (no such
// interface, or the kernel's refusal).
Result<void> append_link_local_route(int ifindex, const std::string& ifname);

}  // namespace twin::runtime
