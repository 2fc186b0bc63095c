#pragma once
// In-process ICMP echo ("ping") from inside a network namespace, many probes at once.
//
// Why in-process: a lab of 56 nodes has 3,080 loopback pairs; one `ping` process per pair costs
// seconds, while raw ICMP sockets opened inside each namespace send every probe of that
// namespace concurrently and finish in about one round-trip time plus the timeout of the losers.
//
// Semantics follow iputils ping: ICMP echo request (RFC 792 type 8 / RFC 4443 type 128),
// payload of `payload_bytes` after the 8-byte ICMP header, so the IP packet size is
// payload_bytes + 8 + 20 (IPv4) or + 8 + 40 (IPv6) — the same as `ping -s payload_bytes`.
// With `dont_fragment` the packet is sent with DF set (IPv4 IP_PMTUDISC_PROBE; IPv6 never
// fragments in transit, IPV6_PMTUDISC_PROBE forbids local fragmentation), as `ping -M probe`:
// like `-M do`, but the path MTU the kernel cached from earlier ICMP errors is ignored (only
// the outgoing device's MTU applies), so each probe measures the path as it is now.
// Needs CAP_NET_RAW (root) and, for a namespace, CAP_SYS_ADMIN (setns).
#include <chrono>
#include <string>
#include <vector>

namespace twin::runtime {

struct PingRequest {
  std::string destination;  // IPv4 or IPv6 literal; IPv6 link-local needs `interface`
  std::string source;       // optional source address to bind (e.g. the node's loopback)
  std::string interface;    // optional: bind to this device (SO_BINDTODEVICE); scope for fe80::
  int payload_bytes = 56;   // ICMP payload size, as `ping -s`
  bool dont_fragment = false;
  // Instead of an echo, an ARP request (RFC 826) for `destination` (IPv4) broadcast on
  // `interface`: a reply means the destination is on that L2 segment, whatever its subnet or
  // the sender's routes (tenant isolation). `detail` of a reply is "is-at <MAC>".
  bool arp = false;
  int count = 1;  // echo requests to send; the probe succeeds if any reply arrives
  std::chrono::milliseconds timeout{1000};  // from the first request until giving up
};

enum class PingOutcome {
  kReply,    // an echo reply with our id/sequence came back
  kTimeout,  // nothing came back in time (dropped somewhere)
  kNoRoute,  // the kernel has no route (ENETUNREACH/EHOSTUNREACH on send, or ICMP unreachable)
  kTooBig,   // packet larger than the path/link MTU with DF set (EMSGSIZE, ICMP frag-needed /
             // packet-too-big)
  kError,    // the probe could not be run (bad address, socket error): see `detail`
};

// "reply" | "timeout" | "no-route" | "too-big" | "error"
const char* to_string(PingOutcome o);

struct PingResult {
  PingOutcome outcome = PingOutcome::kError;
  double rtt_ms = -1;  // round-trip time of the first reply; -1 without a reply
  int mtu = 0;         // with kTooBig: the MTU the kernel or the ICMP error reported, if known
  std::string detail;  // errno text or ICMP type/code for anything but kReply
};

// Runs every request concurrently from inside network namespace `netns` (a name under
// /run/netns; "" means the caller's namespace) and returns results in request order.
// Blocks for at most max(timeout) plus scheduling. Never throws; a namespace that cannot be
// entered yields kError for every request with the reason in `detail`.
std::vector<PingResult> ping_many(const std::string& netns, const std::vector<PingRequest>& reqs);

}  // namespace twin::runtime
