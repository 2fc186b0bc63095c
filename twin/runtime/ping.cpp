#include "twin/runtime/ping.hpp"

// glibc's <net/if.h> and <netinet/in.h> go first: the <linux/*.h> headers then skip what glibc
// already defines instead of redefining it.
// clang-format off
#include <net/if.h>
#include <netinet/in.h>
#include <linux/errqueue.h>
#include <linux/icmp.h>
// clang-format on

#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <netinet/icmp6.h>
#include <sys/ioctl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <unordered_map>

#include "twin/core/error.hpp"
#include "twin/runtime/netlink.hpp"

namespace twin::runtime {

const char* to_string(PingOutcome o) {
  switch (o) {
    case PingOutcome::kReply:
      return "reply";
    case PingOutcome::kTimeout:
      return "timeout";
    case PingOutcome::kNoRoute:
      return "no-route";
    case PingOutcome::kTooBig:
      return "too-big";
    case PingOutcome::kError:
      return "error";
  }
  return "error";
}

namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t kIcmpHeader = 8;
constexpr std::size_t kIpv4MinHeader = 20;
constexpr std::size_t kIpv6Header = 40;
// Largest payloads that fit the 16-bit IPv4 total length / IPv6 payload length (no jumbograms).
constexpr int kMaxPayload4 = 65535 - 20 - 8;
constexpr int kMaxPayload6 = 65535 - 8;
constexpr std::uint8_t kIcmp4EchoRequest = 8;
constexpr std::uint8_t kIcmp4EchoReply = 0;
constexpr std::uint8_t kIcmp6EchoRequest = 128;
constexpr std::uint8_t kIcmp6EchoReply = 129;

std::string errno_text(const std::string& what, int err) {
  char buf[256];
  // GNU strerror_r: thread-safe, unlike strerror, and probes of several namespaces run at once.
  const char* msg = strerror_r(err, buf, sizeof buf);
  return what + ": " + msg;
}

std::uint16_t get16(const std::uint8_t* p) {
  return static_cast<std::uint16_t>((p[0] << 8) | p[1]);
}

std::uint32_t get32(const std::uint8_t* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
         p[3];
}

void put16(std::uint8_t* p, std::uint16_t v) {
  p[0] = static_cast<std::uint8_t>(v >> 8);
  p[1] = static_cast<std::uint8_t>(v & 0xff);
}

// RFC 1071. Only IPv4 needs it: the kernel fills the ICMPv6 checksum of raw ICMPv6 sockets
// because it covers the IPv6 pseudo-header, which user space does not fully know.
std::uint16_t inet_checksum(const std::uint8_t* p, std::size_t n) {
  std::uint32_t sum = 0;
  for (; n > 1; p += 2, n -= 2) sum += get16(p);
  if (n == 1) sum += std::uint32_t{p[0]} << 8;
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<std::uint16_t>(~sum & 0xffff);
}

std::string address_text(const sockaddr_storage& sa) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (sa.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&sa);
    if (inet_ntop(AF_INET, &in->sin_addr, buf, sizeof buf)) return buf;
  } else if (sa.ss_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&sa);
    if (inet_ntop(AF_INET6, &in6->sin6_addr, buf, sizeof buf)) return buf;
  }
  return {};
}

// Identifiers only need to differ between probes alive at the same time in one namespace; the
// pid mix keeps two harness processes probing the same namespace apart as well.
std::uint16_t next_identifier() {
  static std::atomic<std::uint32_t> counter{static_cast<std::uint32_t>(getpid()) * 2654435761u >>
                                            16};
  return static_cast<std::uint16_t>(counter.fetch_add(1, std::memory_order_relaxed));
}

enum class EchoState : std::uint8_t { kPending, kReplied, kFailed };

struct Verdict {
  PingOutcome outcome = PingOutcome::kError;
  int mtu = 0;
  std::string detail;
};

// One raw ICMP socket per family, source, device and DF setting in the namespace, shared by the
// probes that ask for the same: replies are told apart by their ICMP identifier. Why shared: a
// socket per probe cost 7 system calls each, and every ICMP packet entering the namespace was
// matched against every open raw socket (~1,000 per node at 512 nodes).
struct Channel {
  Channel() = default;
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;
  ~Channel() {
    if (fd >= 0) close(fd);
  }
  int family = AF_UNSPEC;
  std::string source, interface;
  bool dont_fragment = false;
  int fd = -1;
  std::string error;  // why the socket could not be set up; every probe on it fails with it
};

struct Probe {
  Probe() = default;
  Probe(const Probe&) = delete;
  Probe& operator=(const Probe&) = delete;

  const PingRequest* req = nullptr;
  PingResult result;
  bool done = false;
  Channel* ch = nullptr;
  int* open = nullptr;  // the run's count of probes not yet done
  int family = AF_UNSPEC;
  sockaddr_storage dst{};
  socklen_t dst_len = 0;
  std::uint16_t id = 0;
  int sent = 0;    // echo requests handed to send(); their sequence numbers are 1..sent
  int failed = 0;  // echo requests answered by an ICMP error
  int lost = 0;    // sends the kernel refused for lack of buffer space
  std::vector<Clock::time_point> sent_at;
  std::vector<EchoState> echo;
  Clock::time_point start{};
  Clock::duration interval{};
  // An ICMP error for one echo only decides the probe once no other echo can still be answered.
  bool has_error = false;
  Verdict first_error;
};

void finish(Probe& p, PingOutcome outcome, std::string detail, int mtu = 0) {
  if (p.done) return;
  p.done = true;
  p.result.outcome = outcome;
  p.result.detail = std::move(detail);
  p.result.mtu = mtu;
  if (p.open) --*p.open;
}

void finish(Probe& p, Verdict v) { finish(p, v.outcome, std::move(v.detail), v.mtu); }

void finish_unanswered(Probe& p) {
  if (p.has_error) return finish(p, p.first_error);
  std::string detail = "no reply within " + std::to_string(p.req->timeout.count()) + " ms (" +
                       std::to_string(p.sent - p.lost) + " echo request(s) sent";
  if (p.lost > 0) {
    detail += ", " + std::to_string(p.lost) + " dropped at send: no buffer space or device drop";
  }
  finish(p, PingOutcome::kTimeout, detail + ")");
}

const char* unreach4_name(int code) {
  switch (code) {
    case 0:
      return "net unreachable";
    case 1:
      return "host unreachable";
    case 2:
      return "protocol unreachable";
    case 3:
      return "port unreachable";
    case 5:
      return "source route failed";
    case 6:
      return "destination net unknown";
    case 7:
      return "destination host unknown";
    case 9:
    case 10:
    case 13:
      return "administratively prohibited";
    default:
      return nullptr;
  }
}

const char* unreach6_name(int code) {
  switch (code) {
    case 0:
      return "no route";
    case 1:
      return "administratively prohibited";
    case 2:
      return "beyond scope of source address";
    case 3:
      return "address unreachable";
    case 4:
      return "port unreachable";
    case 5:
      return "source address failed policy";
    case 6:
      return "reject route";
    default:
      return nullptr;
  }
}

// `mtu` is the next-hop MTU carried by frag-needed / packet-too-big errors.
Verdict classify_icmp(int family, int type, int code, std::uint32_t mtu, const std::string& from) {
  const std::string tail = " (type " + std::to_string(type) + " code " + std::to_string(code) +
                           ")" + (from.empty() ? "" : " from " + from);
  Verdict v;
  if (family == AF_INET) {
    if (type == ICMP_DEST_UNREACH && code == ICMP_FRAG_NEEDED) {
      v.outcome = PingOutcome::kTooBig;
      v.mtu = static_cast<int>(mtu);
      v.detail = "ICMP fragmentation needed, mtu " + std::to_string(mtu) + tail;
    } else if (type == ICMP_DEST_UNREACH) {
      const char* name = unreach4_name(code);
      v.outcome = PingOutcome::kNoRoute;
      v.detail = std::string("ICMP destination unreachable") + (name ? ": " : "") +
                 (name ? name : "") + tail;
    } else if (type == ICMP_TIME_EXCEEDED) {
      // A TTL that runs out on the way is a forwarding loop: there is no usable route.
      v.outcome = PingOutcome::kNoRoute;
      v.detail = "ICMP time exceeded" + tail;
    } else {
      v.detail = "ICMP error" + tail;
    }
  } else {
    if (type == ICMP6_PACKET_TOO_BIG) {
      v.outcome = PingOutcome::kTooBig;
      v.mtu = static_cast<int>(mtu);
      v.detail = "ICMPv6 packet too big, mtu " + std::to_string(mtu) + tail;
    } else if (type == ICMP6_DST_UNREACH) {
      const char* name = unreach6_name(code);
      v.outcome = PingOutcome::kNoRoute;
      v.detail = std::string("ICMPv6 destination unreachable") + (name ? ": " : "") +
                 (name ? name : "") + tail;
    } else if (type == ICMP6_TIME_EXCEEDED) {
      v.outcome = PingOutcome::kNoRoute;
      v.detail = "ICMPv6 time exceeded" + tail;
    } else {
      v.detail = "ICMPv6 error" + tail;
    }
  }
  return v;
}

Verdict classify_local(int err, std::uint32_t info, const std::string& what) {
  Verdict v;
  if (err == EMSGSIZE) {
    v.outcome = PingOutcome::kTooBig;
    v.mtu = static_cast<int>(info);
    v.detail = errno_text(what, err) + ", mtu " + std::to_string(info);
  } else if (err == ENETUNREACH || err == EHOSTUNREACH) {
    v.outcome = PingOutcome::kNoRoute;
    v.detail = errno_text(what, err);
  } else {
    v.detail = errno_text(what, err);
  }
  return v;
}

void note_icmp_error(Probe& p, int seq, Verdict v) {
  if (seq < 1 || seq > p.sent || p.echo[seq - 1] != EchoState::kPending) return;
  p.echo[seq - 1] = EchoState::kFailed;
  ++p.failed;
  if (!p.has_error) {
    p.has_error = true;
    p.first_error = std::move(v);
  }
  if (p.failed == p.req->count) finish(p, p.first_error);
}

// Returns the sequence number if `icmp` (len bytes) is one of this probe's echo requests, else 0.
int own_echo_request(const Probe& p, const std::uint8_t* icmp, std::size_t len) {
  const std::uint8_t request = p.family == AF_INET ? kIcmp4EchoRequest : kIcmp6EchoRequest;
  if (len < kIcmpHeader || icmp[0] != request || get16(icmp + 4) != p.id) return 0;
  const int seq = get16(icmp + 6);
  return seq >= 1 && seq <= p.sent ? seq : 0;
}

bool same_destination(const Probe& p, const void* addr) {
  if (p.family == AF_INET) {
    return std::memcmp(addr, &reinterpret_cast<const sockaddr_in*>(&p.dst)->sin_addr, 4) == 0;
  }
  return std::memcmp(addr, &reinterpret_cast<const sockaddr_in6*>(&p.dst)->sin6_addr, 16) == 0;
}

// A span of bytes in a received packet.
struct Bytes {
  const std::uint8_t* data = nullptr;
  std::size_t size = 0;
};

// The ICMP message of a packet read from a raw socket of `family` (IPv4 raw sockets deliver the
// IP header too; IPv6 raw sockets never do); empty if it is too short to hold one.
Bytes icmp_part(int family, const std::uint8_t* buf, std::size_t n) {
  if (family == AF_INET) {
    if (n < kIpv4MinHeader || (buf[0] >> 4) != 4) return {};
    const std::size_t ihl = std::size_t{buf[0] & 0x0fu} * 4;
    if (ihl < kIpv4MinHeader || n < ihl + kIcmpHeader) return {};
    return {buf + ihl, n - ihl};
  }
  return n < kIcmpHeader ? Bytes{} : Bytes{buf, n};
}

// The datagram an ICMP error quotes: its destination address and its ICMP message (one of our
// requests carries no extension headers, so that follows the IP header); empty if it is not
// an ICMP datagram of `family`.
struct Quoted {
  const std::uint8_t* destination = nullptr;  // 4 or 16 bytes
  Bytes icmp;
};
Quoted quoted_datagram(int family, Bytes icmp) {
  const std::uint8_t* inner = icmp.data + kIcmpHeader;
  const std::size_t inner_len = icmp.size - kIcmpHeader;
  if (family == AF_INET) {
    if (inner_len < kIpv4MinHeader || (inner[0] >> 4) != 4) return {};
    const std::size_t ihl = std::size_t{inner[0] & 0x0fu} * 4;
    if (ihl < kIpv4MinHeader || inner_len < ihl || inner[9] != IPPROTO_ICMP) return {};
    return {inner + 16, {inner + ihl, inner_len - ihl}};
  }
  if (inner_len < kIpv6Header || (inner[0] >> 4) != 6 || inner[6] != IPPROTO_ICMPV6) return {};
  return {inner + 24, {inner + kIpv6Header, inner_len - kIpv6Header}};
}

// ICMP errors also arrive as ordinary packets (the ICMP filter lets them through); they quote
// the offending datagram, which identifies the echo request. The error queue normally reports
// them first, and note_icmp_error ignores the second report of the same echo.
void handle_quoted_error(Probe& p, Bytes icmp, const sockaddr_storage& from) {
  const Quoted q = quoted_datagram(p.family, icmp);
  if (!q.destination || !same_destination(p, q.destination)) return;
  const int seq = own_echo_request(p, q.icmp.data, q.icmp.size);
  if (seq == 0) return;
  const std::uint8_t* m = icmp.data;
  std::uint32_t mtu = 0;
  if (p.family == AF_INET && m[0] == ICMP_DEST_UNREACH && m[1] == ICMP_FRAG_NEEDED) {
    mtu = get16(m + 6);
  } else if (p.family == AF_INET6 && m[0] == ICMP6_PACKET_TOO_BIG) {
    mtu = get32(m + 4);
  }
  note_icmp_error(p, seq, classify_icmp(p.family, m[0], m[1], mtu, address_text(from)));
}

void handle_packet(Probe& p, Bytes icmp, const sockaddr_storage& from, Clock::time_point now) {
  const std::uint8_t reply = p.family == AF_INET ? kIcmp4EchoReply : kIcmp6EchoReply;
  if (icmp.data[0] != reply) {
    if (icmp.data[0] != kIcmp4EchoRequest && icmp.data[0] != kIcmp6EchoRequest) {
      handle_quoted_error(p, icmp, from);
    }
    return;
  }
  if (from.ss_family != p.family) return;
  const void* src =
      p.family == AF_INET
          ? static_cast<const void*>(&reinterpret_cast<const sockaddr_in*>(&from)->sin_addr)
          : static_cast<const void*>(&reinterpret_cast<const sockaddr_in6*>(&from)->sin6_addr);
  if (!same_destination(p, src) || icmp.data[1] != 0 || get16(icmp.data + 4) != p.id) return;
  const int seq = get16(icmp.data + 6);
  if (seq < 1 || seq > p.sent || p.echo[seq - 1] == EchoState::kReplied) return;
  p.echo[seq - 1] = EchoState::kReplied;
  p.result.rtt_ms = std::chrono::duration<double, std::milli>(now - p.sent_at[seq - 1]).count();
  finish(p, PingOutcome::kReply, "");
}

// The probes of one run by ICMP identifier (unique among them: see next_identifier).
using Owners = std::unordered_map<std::uint16_t, Probe*>;

// The probe an ICMP message answers (an echo reply's identifier) or concerns (the identifier of
// the request an error quotes); nullptr when it is none of ours.
Probe* owner_of(const Owners& owners, int family, Bytes icmp) {
  std::uint16_t id = 0;
  if (icmp.data[0] == (family == AF_INET ? kIcmp4EchoReply : kIcmp6EchoReply)) {
    id = get16(icmp.data + 4);
  } else {
    const Quoted q = quoted_datagram(family, icmp);
    if (q.icmp.size < kIcmpHeader) return nullptr;
    id = get16(q.icmp.data + 4);
  }
  auto it = owners.find(id);
  return it == owners.end() || it->second->family != family ? nullptr : it->second;
}

void read_replies(Channel& c, const Owners& owners, std::vector<std::uint8_t>& buf) {
  for (;;) {
    sockaddr_storage from{};
    socklen_t from_len = sizeof from;
    const ssize_t n = recvfrom(c.fd, buf.data(), buf.size(), MSG_DONTWAIT,
                               reinterpret_cast<sockaddr*>(&from), &from_len);
    if (n < 0) {
      // EAGAIN: drained. Anything else is a pending socket error that an ICMP error raised;
      // reading returned and cleared it, and the error queue holds the details.
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      continue;
    }
    const Bytes icmp = icmp_part(c.family, buf.data(), static_cast<std::size_t>(n));
    if (!icmp.data) continue;
    Probe* p = owner_of(owners, c.family, icmp);
    if (p && !p->done) handle_packet(*p, icmp, from, Clock::now());
  }
}

void handle_extended_error(Probe& p, const sock_extended_err& ee, const sockaddr_storage& offender,
                           const std::uint8_t* data, std::size_t n) {
  if (ee.ee_origin == SO_EE_ORIGIN_LOCAL) {
    // Raised by the send() that just failed (e.g. EMSGSIZE with the MTU in ee_info): the
    // caller passes the probe that sent it.
    return finish(p, classify_local(static_cast<int>(ee.ee_errno), ee.ee_info, "local error"));
  }
  if (ee.ee_origin != SO_EE_ORIGIN_ICMP && ee.ee_origin != SO_EE_ORIGIN_ICMP6) return;
  // The kernel queues the error on every raw socket whose addresses match the quoted packet,
  // so another probe toward the same destination sees it too: the quoted id/seq decides.
  int seq = p.sent;
  if (n >= kIcmpHeader) {
    seq = own_echo_request(p, data, n);
    if (seq == 0) return;
  }
  note_icmp_error(
      p, seq, classify_icmp(p.family, ee.ee_type, ee.ee_code, ee.ee_info, address_text(offender)));
}

// Drains the error queue of `c`: ICMP errors go to the probe whose request they quote; a local
// error (raised by a send on this socket) goes to `sender`, the probe whose send just failed,
// when it concerns that probe's destination — otherwise its send already reported it.
void read_errors(Channel& c, const Owners& owners, Probe* sender) {
  for (;;) {
    std::uint8_t data[64];
    alignas(cmsghdr) char control[512];
    sockaddr_storage name{};
    iovec iov{data, sizeof data};
    msghdr msg{};
    msg.msg_name = &name;
    msg.msg_namelen = sizeof name;
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    const ssize_t n = recvmsg(c.fd, &msg, MSG_ERRQUEUE | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;
    }
    for (cmsghdr* m = CMSG_FIRSTHDR(&msg); m != nullptr; m = CMSG_NXTHDR(&msg, m)) {
      const bool is_err = (m->cmsg_level == SOL_IP && m->cmsg_type == IP_RECVERR) ||
                          (m->cmsg_level == SOL_IPV6 && m->cmsg_type == IPV6_RECVERR);
      if (!is_err || m->cmsg_len < CMSG_LEN(sizeof(sock_extended_err))) continue;
      sock_extended_err ee{};
      std::memcpy(&ee, CMSG_DATA(m), sizeof ee);
      // The offender address (SO_EE_OFFENDER) follows the struct inside the same cmsg.
      sockaddr_storage offender{};
      const std::size_t room = m->cmsg_len - CMSG_LEN(sizeof ee);
      std::memcpy(&offender, CMSG_DATA(m) + sizeof ee, std::min(room, sizeof offender));
      Probe* p = nullptr;
      if (ee.ee_origin == SO_EE_ORIGIN_LOCAL) {
        // msg_name holds the destination of the datagram that could not be sent.
        const void* dst =
            c.family == AF_INET
                ? static_cast<const void*>(&reinterpret_cast<const sockaddr_in*>(&name)->sin_addr)
                : static_cast<const void*>(&reinterpret_cast<const sockaddr_in6*>(&name)->sin6_addr);
        if (sender && name.ss_family == c.family && same_destination(*sender, dst)) p = sender;
      } else if (static_cast<std::size_t>(n) >= kIcmpHeader) {
        auto it = owners.find(get16(data + 4));
        if (it != owners.end() && it->second->family == c.family) p = it->second;
      }
      if (p && !p->done) handle_extended_error(*p, ee, offender, data, static_cast<std::size_t>(n));
    }
  }
}

// Path MTU for a local EMSGSIZE: the error queue entry of ip(v6)_local_error carries the exact
// value the kernel compared against (0 if the entry is missing).
int local_mtu(Probe& p, const Owners& owners) {
  read_errors(*p.ch, owners, &p);
  return p.done ? p.result.mtu : 0;
}

void send_echo(Probe& p, const Owners& owners, std::vector<std::uint8_t>& pkt) {
  const int seq = p.sent + 1;
  pkt.assign(kIcmpHeader + static_cast<std::size_t>(p.req->payload_bytes), 0);
  pkt[0] = p.family == AF_INET ? kIcmp4EchoRequest : kIcmp6EchoRequest;
  put16(&pkt[4], p.id);
  put16(&pkt[6], static_cast<std::uint16_t>(seq));
  for (std::size_t i = kIcmpHeader; i < pkt.size(); ++i) {
    pkt[i] = static_cast<std::uint8_t>(i - kIcmpHeader);
  }
  if (p.family == AF_INET) put16(&pkt[2], inet_checksum(pkt.data(), pkt.size()));

  const auto now = Clock::now();
  if (seq == 1) p.start = now;
  p.sent_at[static_cast<std::size_t>(seq - 1)] = now;
  p.sent = seq;
  auto send_once = [&] {
    ssize_t n;
    do {
      n = sendto(p.ch->fd, pkt.data(), pkt.size(), 0, reinterpret_cast<const sockaddr*>(&p.dst),
                 p.dst_len);
    } while (n < 0 && errno == EINTR);
    return n < 0 ? errno : 0;
  };
  int err = send_once();
  if (err == 0) return;
  if (err != EMSGSIZE && err != EAGAIN && err != EWOULDBLOCK && err != ENOBUFS) {
    // An ICMP error another probe of this socket received is reported by the next send as the
    // socket's pending error (and cleared by it): hand the queue to its owners and send again.
    // A second failure is this send's own (no route).
    read_errors(*p.ch, owners, nullptr);
    if (p.done) return;
    err = send_once();
    if (err == 0) return;
  }
  if (err == EAGAIN || err == EWOULDBLOCK || err == ENOBUFS) {
    // A drop like a lossy link's; later echoes may still get through. veth reports its peer
    // refusing an oversized frame this way too when the neighbour is already resolved.
    ++p.lost;
    return;
  }
  if (err == EMSGSIZE) {
    const int mtu = local_mtu(p, owners);
    if (!p.done) {
      finish(p, PingOutcome::kTooBig, errno_text("send", err) + ", mtu " + std::to_string(mtu),
             mtu);
    }
    return;
  }
  finish(p, classify_local(err, 0, "send"));
}

bool set_int(int fd, int level, int name, int value) {
  return setsockopt(fd, level, name, &value, sizeof value) == 0;
}

// Sets up a channel's raw socket; on failure `c.error` says why.
void open_channel(Channel& c) {
  const int proto = c.family == AF_INET ? int{IPPROTO_ICMP} : int{IPPROTO_ICMPV6};
  c.fd = socket(c.family, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, proto);
  if (c.fd < 0) {
    c.error = errno_text("socket", errno);
    return;
  }
  auto fail = [&c](const std::string& what) { c.error = errno_text(what, errno); };
  if (!c.interface.empty() && setsockopt(c.fd, SOL_SOCKET, SO_BINDTODEVICE, c.interface.c_str(),
                                         static_cast<socklen_t>(c.interface.size())) < 0) {
    return fail("SO_BINDTODEVICE " + c.interface);
  }
  // Every reply of a burst may queue here before it is read (a node probes ~1,000 loopbacks at
  // 512 nodes, path-MTU replies are 9 KB): room for them, beyond rmem_max (root may).
  const int rcvbuf = 32 << 20;
  if (setsockopt(c.fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof rcvbuf) < 0)
    (void)setsockopt(c.fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
  if (c.family == AF_INET) {
    if (!set_int(c.fd, IPPROTO_IP, IP_RECVERR, 1)) return fail("IP_RECVERR");
    // Without DF, IP_PMTUDISC_DONT lets routers fragment as `ping` does without -M; the kernel's
    // default (WANT) would set DF on every packet that fits the first hop. With DF, PROBE (as
    // `ping -M probe`) ignores the path MTU the kernel cached from an earlier ICMP "fragmentation
    // needed": each probe tests the path as it is now, so a path fixed a minute ago is not
    // reported too small until the cache expires (~10 min).
    const int pmtu = c.dont_fragment ? IP_PMTUDISC_PROBE : IP_PMTUDISC_DONT;
    if (!set_int(c.fd, IPPROTO_IP, IP_MTU_DISCOVER, pmtu)) return fail("IP_MTU_DISCOVER");
    // ICMP_FILTER is a mask of types to drop; cuts wake-ups from unrelated ICMP traffic.
    icmp_filter filter{};
    filter.data = ~((1u << ICMP_ECHOREPLY) | (1u << ICMP_DEST_UNREACH) |
                    (1u << ICMP_TIME_EXCEEDED) | (1u << ICMP_PARAMETERPROB));
    if (setsockopt(c.fd, SOL_RAW, ICMP_FILTER, &filter, sizeof filter) < 0)
      return fail("ICMP_FILTER");
  } else {
    if (!set_int(c.fd, IPPROTO_IPV6, IPV6_RECVERR, 1)) return fail("IPV6_RECVERR");
    // IPv6 routers never fragment; without DF the kernel default already fragments locally.
    if (c.dont_fragment &&
        !set_int(c.fd, IPPROTO_IPV6, IPV6_MTU_DISCOVER, IPV6_PMTUDISC_PROBE)) {
      return fail("IPV6_MTU_DISCOVER");
    }
    icmp6_filter filter{};
    ICMP6_FILTER_SETBLOCKALL(&filter);
    ICMP6_FILTER_SETPASS(ICMP6_ECHO_REPLY, &filter);
    ICMP6_FILTER_SETPASS(ICMP6_DST_UNREACH, &filter);
    ICMP6_FILTER_SETPASS(ICMP6_PACKET_TOO_BIG, &filter);
    ICMP6_FILTER_SETPASS(ICMP6_TIME_EXCEEDED, &filter);
    if (setsockopt(c.fd, IPPROTO_ICMPV6, ICMP6_FILTER, &filter, sizeof filter) < 0) {
      return fail("ICMP6_FILTER");
    }
  }
  if (c.source.empty()) return;
  sockaddr_storage src{};
  socklen_t src_len = 0;
  if (c.family == AF_INET) {
    auto* s4 = reinterpret_cast<sockaddr_in*>(&src);
    if (inet_pton(AF_INET, c.source.c_str(), &s4->sin_addr) != 1) {
      c.error = "source '" + c.source + "' is not an IPv4 address like the destination";
      return;
    }
    s4->sin_family = AF_INET;
    src_len = sizeof *s4;
  } else {
    auto* s6 = reinterpret_cast<sockaddr_in6*>(&src);
    if (inet_pton(AF_INET6, c.source.c_str(), &s6->sin6_addr) != 1) {
      c.error = "source '" + c.source + "' is not an IPv6 address like the destination";
      return;
    }
    s6->sin6_family = AF_INET6;
    if (IN6_IS_ADDR_LINKLOCAL(&s6->sin6_addr)) {
      const unsigned ifindex = c.interface.empty() ? 0 : if_nametoindex(c.interface.c_str());
      if (ifindex == 0) {
        c.error = "link-local source " + c.source + " needs an interface";
        return;
      }
      s6->sin6_scope_id = ifindex;
    }
    src_len = sizeof *s6;
  }
  if (bind(c.fd, reinterpret_cast<const sockaddr*>(&src), src_len) < 0) fail("bind " + c.source);
}

// The channels of one run, by family, source, device and DF setting.
class Channels {
 public:
  Channel& get(int family, const PingRequest& r) {
    for (auto& c : list_)
      if (c->family == family && c->source == r.source && c->interface == r.interface &&
          c->dont_fragment == r.dont_fragment)
        return *c;
    auto& c = *list_.emplace_back(std::make_unique<Channel>());
    c.family = family;
    c.source = r.source;
    c.interface = r.interface;
    c.dont_fragment = r.dont_fragment;
    open_channel(c);
    return c;
  }
  const std::vector<std::unique_ptr<Channel>>& all() const { return list_; }

 private:
  std::vector<std::unique_ptr<Channel>> list_;
};

// Parses the request and gives it its channel and an identifier.
void open_probe(Probe& p, Channels& channels, Owners& owners) {
  const PingRequest& r = *p.req;
  // Sequence numbers are 16 bits; beyond that, replies could no longer be told apart.
  if (r.count < 1 || r.count > 65535) {
    return finish(p, PingOutcome::kError, "count must be between 1 and 65535");
  }
  if (r.timeout.count() <= 0) return finish(p, PingOutcome::kError, "timeout must be positive");
  if (r.payload_bytes < 0) return finish(p, PingOutcome::kError, "payload_bytes is negative");

  sockaddr_in dst4{};
  sockaddr_in6 dst6{};
  if (inet_pton(AF_INET, r.destination.c_str(), &dst4.sin_addr) == 1) {
    p.family = AF_INET;
    dst4.sin_family = AF_INET;
  } else if (inet_pton(AF_INET6, r.destination.c_str(), &dst6.sin6_addr) == 1) {
    p.family = AF_INET6;
    dst6.sin6_family = AF_INET6;
  } else {
    return finish(p, PingOutcome::kError,
                  "destination is not an IPv4 or IPv6 address: '" + r.destination + "'");
  }
  const int max_payload = p.family == AF_INET ? kMaxPayload4 : kMaxPayload6;
  if (r.payload_bytes > max_payload) {
    return finish(p, PingOutcome::kError,
                  "payload_bytes " + std::to_string(r.payload_bytes) + " exceeds the maximum " +
                      std::to_string(max_payload));
  }

  unsigned ifindex = 0;
  if (!r.interface.empty()) {
    if (r.interface.size() >= IFNAMSIZ) {
      return finish(p, PingOutcome::kError, "interface name too long: '" + r.interface + "'");
    }
    ifindex = if_nametoindex(r.interface.c_str());
    if (ifindex == 0)
      return finish(p, PingOutcome::kError, errno_text("interface " + r.interface, errno));
  }
  if (p.family == AF_INET6 &&
      (IN6_IS_ADDR_LINKLOCAL(&dst6.sin6_addr) || IN6_IS_ADDR_MC_LINKLOCAL(&dst6.sin6_addr))) {
    if (ifindex == 0) {
      return finish(p, PingOutcome::kError,
                    "link-local destination " + r.destination + " needs an interface");
    }
    dst6.sin6_scope_id = ifindex;
  }
  if (p.family == AF_INET) {
    std::memcpy(&p.dst, &dst4, sizeof dst4);
    p.dst_len = sizeof dst4;
  } else {
    std::memcpy(&p.dst, &dst6, sizeof dst6);
    p.dst_len = sizeof dst6;
  }
  p.ch = &channels.get(p.family, r);
  if (!p.ch->error.empty()) return finish(p, PingOutcome::kError, p.ch->error);
  // Identifiers are unique among the probes of this run (65,536 of them at most alive at once).
  for (int tries = 0; tries < 65536; ++tries) {
    p.id = next_identifier();
    if (owners.emplace(p.id, &p).second) break;
  }
  if (owners.at(p.id) != &p) return finish(p, PingOutcome::kError, "too many probes at once");
  p.sent_at.resize(static_cast<std::size_t>(r.count));
  p.echo.assign(static_cast<std::size_t>(r.count), EchoState::kPending);
  p.interval = std::chrono::duration_cast<Clock::duration>(r.timeout) / r.count;
}

std::vector<PingResult> run_probes(const std::vector<PingRequest>& reqs) {
  std::vector<Probe> probes(reqs.size());
  int open = static_cast<int>(reqs.size());
  Channels channels;
  Owners owners;
  owners.reserve(reqs.size());
  for (std::size_t i = 0; i < reqs.size(); ++i) {
    probes[i].req = &reqs[i];
    probes[i].open = &open;
    open_probe(probes[i], channels, owners);
  }
  // Largest IPv4 datagram including its header; IPv6 raw sockets deliver at most this much too.
  std::vector<std::uint8_t> buf(65536);
  std::vector<std::uint8_t> pkt;
  auto drain = [&](Channel& c, short ev) {
    if (ev & POLLERR) read_errors(c, owners, nullptr);
    if (ev & POLLIN) read_replies(c, owners, buf);
  };
  // First echoes of every probe at once; the replies (answered within this thread's sends,
  // veth delivers synchronously) are read every 64 sends so that no socket queue overflows.
  std::size_t burst = 0;
  for (auto& p : probes) {
    if (p.done) continue;
    send_echo(p, owners, pkt);
    if (++burst % 64 == 0)
      for (auto& c : channels.all())
        if (c->fd >= 0) drain(*c, POLLIN | POLLERR);
  }
  std::vector<pollfd> pfds;
  std::vector<Channel*> by_fd;
  for (auto& c : channels.all())
    if (c->fd >= 0) {
      pfds.push_back(pollfd{c->fd, POLLIN, 0});
      by_fd.push_back(c.get());
    }
  // Timers (the next echo of a probe with count > 1, give-up deadlines) are swept over all
  // probes only when one is due, not at every reply: a reply costs O(1).
  auto next_timer = Clock::time_point::min();
  while (open > 0) {
    const auto now = Clock::now();
    if (now >= next_timer) {
      next_timer = Clock::time_point::max();
      for (auto& p : probes) {
        if (p.done) continue;
        const int count = p.req->count;
        while (!p.done && p.sent < count && Clock::now() >= p.start + p.sent * p.interval)
          send_echo(p, owners, pkt);
        if (p.done) continue;
        const auto deadline = p.start + p.req->timeout;
        if (Clock::now() >= deadline) {
          finish_unanswered(p);
          continue;
        }
        next_timer = std::min(next_timer, deadline);
        if (p.sent < count) next_timer = std::min(next_timer, p.start + p.sent * p.interval);
      }
      if (open == 0) break;
    }
    const auto wait = std::chrono::ceil<std::chrono::milliseconds>(next_timer - Clock::now());
    const int wait_ms = static_cast<int>(std::clamp<long long>(wait.count(), 0, INT_MAX));
    if (poll(pfds.data(), pfds.size(), wait_ms) < 0) {
      if (errno == EINTR) continue;
      const std::string detail = errno_text("poll", errno);
      for (auto& p : probes) finish(p, PingOutcome::kError, detail);
      break;
    }
    for (std::size_t k = 0; k < pfds.size(); ++k)
      if (pfds[k].revents) drain(*by_fd[k], pfds[k].revents);
  }
  std::vector<PingResult> out;
  out.reserve(probes.size());
  for (auto& p : probes) out.push_back(std::move(p.result));
  return out;
}

// ---- ARP (RFC 826): who-has on one interface, for L2 reachability.

struct ArpProbe {
  const PingRequest* req = nullptr;
  int fd = -1;
  int ifindex = 0;
  std::uint8_t own_mac[6] = {};
  in_addr source{}, target{};
  std::chrono::steady_clock::time_point sent;
  int sends = 0;
  bool done = false;
  PingResult res;
};

void arp_fail(ArpProbe& a, const std::string& detail) {
  a.res.outcome = PingOutcome::kError;
  a.res.detail = detail;
  a.done = true;
}

void arp_open(ArpProbe& a) {
  const PingRequest& r = *a.req;
  if (inet_pton(AF_INET, r.destination.c_str(), &a.target) != 1)
    return arp_fail(a, "ARP needs an IPv4 destination, got '" + r.destination + "'");
  if (r.interface.empty()) return arp_fail(a, "ARP needs an interface");
  a.ifindex = static_cast<int>(if_nametoindex(r.interface.c_str()));
  if (a.ifindex == 0) return arp_fail(a, errno_text("interface " + r.interface, errno));
  a.fd = socket(AF_PACKET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, htons(ETH_P_ARP));
  if (a.fd < 0) return arp_fail(a, errno_text("packet socket", errno));
  sockaddr_ll ll{};
  ll.sll_family = AF_PACKET;
  ll.sll_protocol = htons(ETH_P_ARP);
  ll.sll_ifindex = a.ifindex;
  if (bind(a.fd, reinterpret_cast<sockaddr*>(&ll), sizeof ll) != 0)
    return arp_fail(a, errno_text("bind to " + r.interface, errno));
  ifreq ifr{};
  std::snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", r.interface.c_str());
  if (ioctl(a.fd, SIOCGIFHWADDR, &ifr) != 0)
    return arp_fail(a, errno_text("MAC of " + r.interface, errno));
  std::memcpy(a.own_mac, ifr.ifr_hwaddr.sa_data, 6);
  // The sender address: the one asked for, else the interface's primary IPv4 one, else
  // 0.0.0.0 (an ARP probe, RFC 5227 §2.1.1, which Linux answers too).
  if (!r.source.empty()) {
    if (inet_pton(AF_INET, r.source.c_str(), &a.source) != 1)
      return arp_fail(a, "bad ARP source '" + r.source + "'");
  } else {
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    ifreq ia{};
    std::snprintf(ia.ifr_name, sizeof ia.ifr_name, "%s", r.interface.c_str());
    if (s >= 0 && ioctl(s, SIOCGIFADDR, &ia) == 0)
      a.source = reinterpret_cast<sockaddr_in*>(&ia.ifr_addr)->sin_addr;
    if (s >= 0) close(s);
  }
}

void arp_send(ArpProbe& a) {
  std::uint8_t pkt[28] = {};
  put16(pkt, 1);                  // Ethernet
  put16(pkt + 2, ETHERTYPE_IP);   // IPv4
  pkt[4] = 6;
  pkt[5] = 4;
  put16(pkt + 6, 1);              // request
  std::memcpy(pkt + 8, a.own_mac, 6);
  std::memcpy(pkt + 14, &a.source, 4);
  std::memcpy(pkt + 24, &a.target, 4);
  sockaddr_ll to{};
  to.sll_family = AF_PACKET;
  to.sll_protocol = htons(ETH_P_ARP);
  to.sll_ifindex = a.ifindex;
  to.sll_halen = 6;
  std::memset(to.sll_addr, 0xff, 6);
  if (sendto(a.fd, pkt, sizeof pkt, 0, reinterpret_cast<sockaddr*>(&to), sizeof to) < 0)
    return arp_fail(a, errno_text("ARP send", errno));
  if (a.sends++ == 0) a.sent = std::chrono::steady_clock::now();
}

void arp_read(ArpProbe& a) {
  std::uint8_t buf[256];
  for (;;) {
    ssize_t n = recv(a.fd, buf, sizeof buf, 0);
    if (n < 0) return;
    if (n < 28 || get16(buf + 6) != 2 || std::memcmp(buf + 14, &a.target, 4) != 0) continue;
    a.res.outcome = PingOutcome::kReply;
    a.res.rtt_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                             a.sent)
                       .count();
    a.res.detail = "is-at " + mac_text(buf + 8, 6);
    a.done = true;
    return;
  }
}

// Every ARP request at once: send, resend every timeout/count, collect the first reply each.
void run_arp(std::vector<ArpProbe>& probes) {
  for (auto& a : probes) {
    arp_open(a);
    if (!a.done) arp_send(a);
  }
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    std::vector<pollfd> pfds;
    std::vector<ArpProbe*> owner;
    auto now = std::chrono::steady_clock::now();
    for (auto& a : probes) {
      if (a.done) continue;
      auto per = a.req->timeout / std::max(1, a.req->count);
      if (now - start >= a.req->timeout) {
        a.res.outcome = PingOutcome::kTimeout;
        a.res.detail = "no ARP reply within " + std::to_string(a.req->timeout.count()) + " ms (" +
                       std::to_string(a.sends) + " request(s) sent)";
        a.done = true;
        continue;
      }
      if (a.sends < a.req->count && now - start >= per * a.sends) arp_send(a);
      if (a.done) continue;
      pfds.push_back({a.fd, POLLIN, 0});
      owner.push_back(&a);
    }
    if (pfds.empty()) break;
    if (poll(pfds.data(), pfds.size(), 20) < 0 && errno != EINTR) {
      for (auto* a : owner) arp_fail(*a, errno_text("poll", errno));
      break;
    }
    for (size_t i = 0; i < pfds.size(); ++i)
      if (pfds[i].revents & POLLIN) arp_read(*owner[i]);
  }
  for (auto& a : probes)
    if (a.fd >= 0) close(a.fd);
}

std::vector<PingResult> all_errors(std::size_t n, const std::string& detail) {
  PingResult r;
  r.outcome = PingOutcome::kError;
  r.detail = detail;
  return std::vector<PingResult>(n, r);
}

}  // namespace

std::vector<PingResult> ping_many(const std::string& netns, const std::vector<PingRequest>& reqs) {
  if (reqs.empty()) return {};
  std::vector<PingResult> out;
  auto body = [&]() -> Result<void> {
    try {
      std::vector<PingRequest> icmp;
      std::vector<ArpProbe> arp;
      for (const auto& r : reqs)
        if (r.arp) arp.push_back(ArpProbe{&r});
        else icmp.push_back(r);
      std::vector<PingResult> echoes;
      if (!icmp.empty()) echoes = run_probes(icmp);
      run_arp(arp);
      size_t e = 0, a = 0;
      for (const auto& r : reqs) out.push_back(r.arp ? arp[a++].res : echoes[e++]);
    } catch (const std::exception& e) {
      return harness_error(std::string("ping: ") + e.what());
    }
    return {};
  };
  // A namespace is joined on a thread of its own (runtime::run_in_netns): the caller's thread
  // never leaves its namespace.
  auto r = netns.empty() ? body() : runtime::run_in_netns(netns, body);
  if (!r) return all_errors(reqs.size(), r.error().message);
  return out;
}

}  // namespace twin::runtime
