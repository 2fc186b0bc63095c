// glibc's <netinet/*.h> go first: the <linux/*.h> headers then skip what glibc already defines.
// clang-format off
#include <netinet/in.h>
#include <linux/icmp.h>
// clang-format on
#include "twin/runtime/probe_stream.hpp"

#include <netinet/icmp6.h>
#include <arpa/inet.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <thread>

#include "twin/runtime/netlink.hpp"

namespace twin::runtime {

namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t kIcmpHeader = 8;
constexpr std::size_t kPayload = 16;  // small: the stream measures loss, not path MTU

std::uint16_t checksum(const std::uint8_t* p, std::size_t n) {
  std::uint32_t sum = 0;
  for (; n > 1; p += 2, n -= 2) sum += static_cast<std::uint32_t>((p[0] << 8) | p[1]);
  if (n == 1) sum += std::uint32_t{p[0]} << 8;
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<std::uint16_t>(~sum & 0xffff);
}

struct Flow {
  StreamFlow spec;
  int family = 0;
  int fd = -1;
  std::uint16_t id = 0;
  sockaddr_storage dst{};
  socklen_t dst_len = 0;
  std::vector<Clock::time_point> sent_at;
  std::vector<bool> replied;
  std::vector<double> rtt_ms;
  std::string error;
};

// The socket of one flow, opened in its namespace: raw ICMP, bound to the source, seeing only
// echo replies (the kernel's ICMP filter), non-blocking.
Result<void> open_flow(Flow& f) {
  in6_addr a6{};
  in_addr a4{};
  if (inet_pton(AF_INET, f.spec.destination.c_str(), &a4) == 1) {
    f.family = AF_INET;
    auto* sa = reinterpret_cast<sockaddr_in*>(&f.dst);
    sa->sin_family = AF_INET;
    sa->sin_addr = a4;
    f.dst_len = sizeof(sockaddr_in);
  } else if (inet_pton(AF_INET6, f.spec.destination.c_str(), &a6) == 1) {
    f.family = AF_INET6;
    auto* sa = reinterpret_cast<sockaddr_in6*>(&f.dst);
    sa->sin6_family = AF_INET6;
    sa->sin6_addr = a6;
    f.dst_len = sizeof(sockaddr_in6);
  } else {
    return input_error("not an IP address: " + f.spec.destination);
  }
  return run_in_netns(f.spec.netns, [&]() -> Result<void> {
    int fd = ::socket(f.family, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC,
                      f.family == AF_INET ? static_cast<int>(IPPROTO_ICMP)
                                          : static_cast<int>(IPPROTO_ICMPV6));
    if (fd < 0) return env_error(std::string("raw ICMP socket: ") + std::strerror(errno));
    f.fd = fd;
    if (!f.spec.source.empty()) {
      sockaddr_storage src{};
      socklen_t len = 0;
      if (f.family == AF_INET) {
        auto* sa = reinterpret_cast<sockaddr_in*>(&src);
        sa->sin_family = AF_INET;
        if (inet_pton(AF_INET, f.spec.source.c_str(), &sa->sin_addr) != 1)
          return input_error("not an IPv4 address: " + f.spec.source);
        len = sizeof(sockaddr_in);
      } else {
        auto* sa = reinterpret_cast<sockaddr_in6*>(&src);
        sa->sin6_family = AF_INET6;
        if (inet_pton(AF_INET6, f.spec.source.c_str(), &sa->sin6_addr) != 1)
          return input_error("not an IPv6 address: " + f.spec.source);
        len = sizeof(sockaddr_in6);
      }
      if (::bind(fd, reinterpret_cast<sockaddr*>(&src), len) != 0)
        return env_error("binding " + f.spec.source + ": " + std::strerror(errno));
    }
    if (f.family == AF_INET) {
      icmp_filter filt{};
      filt.data = ~(1u << ICMP_ECHOREPLY);
      ::setsockopt(fd, SOL_RAW, ICMP_FILTER, &filt, sizeof filt);
    } else {
      icmp6_filter filt;
      ICMP6_FILTER_SETBLOCKALL(&filt);
      ICMP6_FILTER_SETPASS(ICMP6_ECHO_REPLY, &filt);
      ::setsockopt(fd, IPPROTO_ICMPV6, ICMP6_FILTER, &filt, sizeof filt);
    }
    return {};
  });
}

void send_echo(Flow& f, Clock::time_point now) {
  std::uint8_t pkt[kIcmpHeader + kPayload] = {};
  const auto seq = static_cast<std::uint16_t>(f.sent_at.size() + 1);
  pkt[0] = f.family == AF_INET ? ICMP_ECHO : ICMP6_ECHO_REQUEST;
  pkt[4] = static_cast<std::uint8_t>(f.id >> 8);
  pkt[5] = static_cast<std::uint8_t>(f.id & 0xff);
  pkt[6] = static_cast<std::uint8_t>(seq >> 8);
  pkt[7] = static_cast<std::uint8_t>(seq & 0xff);
  std::memcpy(pkt + kIcmpHeader, "twin-stream-echo", kPayload);
  if (f.family == AF_INET) {  // the kernel fills ICMPv6's checksum (it covers the pseudo-header)
    const std::uint16_t c = checksum(pkt, sizeof pkt);
    pkt[2] = static_cast<std::uint8_t>(c >> 8);
    pkt[3] = static_cast<std::uint8_t>(c & 0xff);
  }
  f.sent_at.push_back(now);
  f.replied.push_back(false);
  f.rtt_ms.push_back(0);
  // A send that fails (no route while the fabric re-converges) is a lost echo, like a drop.
  (void)::sendto(f.fd, pkt, sizeof pkt, MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&f.dst),
                 f.dst_len);
}

void read_replies(Flow& f, Clock::time_point now, std::chrono::milliseconds reply_timeout) {
  std::uint8_t buf[512];
  for (;;) {
    sockaddr_storage from{};
    socklen_t from_len = sizeof from;
    ssize_t n = ::recvfrom(f.fd, buf, sizeof buf, MSG_DONTWAIT,
                           reinterpret_cast<sockaddr*>(&from), &from_len);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;  // drained (or a pending ICMP error, cleared by this read)
    }
    const std::uint8_t* icmp = buf;
    std::size_t len = static_cast<std::size_t>(n);
    if (f.family == AF_INET) {  // IPv4 raw sockets deliver the IP header too
      if (len < 20 || (buf[0] >> 4) != 4) continue;
      std::size_t ihl = std::size_t{buf[0] & 0x0fu} * 4;
      if (len < ihl + kIcmpHeader) continue;
      icmp += ihl;
      len -= ihl;
    }
    if (len < kIcmpHeader) continue;
    if (icmp[0] != (f.family == AF_INET ? ICMP_ECHOREPLY : ICMP6_ECHO_REPLY)) continue;
    if (((icmp[4] << 8) | icmp[5]) != f.id) continue;
    // Sequence numbers wrap at 65536 (11 minutes at 10 ms): the latest request with these bits.
    const std::uint16_t seq = static_cast<std::uint16_t>((icmp[6] << 8) | icmp[7]);
    for (std::size_t i = f.sent_at.size(); i-- > 0;) {
      if (static_cast<std::uint16_t>(i + 1) != seq) continue;
      if (now - f.sent_at[i] <= reply_timeout) {
        f.replied[i] = true;
        f.rtt_ms[i] = std::chrono::duration<double, std::milli>(now - f.sent_at[i]).count();
      }
      break;
    }
  }
}

std::atomic<std::uint32_t> g_next_id{static_cast<std::uint32_t>(::getpid()) * 40503u};

}  // namespace

FlowStats summarize_flow(const std::string& name, const std::vector<ProbeSample>& samples,
                         double end_ms) {
  FlowStats s;
  s.name = name;
  s.sent = static_cast<long>(samples.size());
  std::size_t i = 0;
  for (const auto& x : samples)
    if (x.replied) s.rtt_ms.push_back(x.rtt_ms);
  while (i < samples.size()) {
    if (samples[i].replied) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < samples.size() && !samples[j].replied) ++j;
    s.lost += static_cast<long>(j - i);
    double until = j < samples.size() ? samples[j].sent_ms : end_ms;
    double outage = until - samples[i].sent_ms;
    if (outage > s.longest_outage_ms) {
      s.longest_outage_ms = outage;
      s.outage_start_ms = samples[i].sent_ms;
    }
    i = j;
  }
  return s;
}

struct ProbeStream::Impl {
  std::vector<Flow> flows;
  std::chrono::milliseconds interval, reply_timeout;
  std::thread thread;
  std::atomic<bool> stopping{false};
  bool started = false, stopped = false;
  Clock::time_point t0, last_send;
  double cpu_ms = 0;
  double max_gap = 0;
  StreamStats result;

  // Stopping need not wait the whole reply timeout: it is over once every flow's last echo
  // was answered, or the flow is in an outage (nothing answered over its last 10 intervals, at
  // least 100 ms), where a reply still on its way would not change that it was out.
  bool all_answered() const {
    const Clock::duration window =
        std::max<Clock::duration>(10 * interval, std::chrono::milliseconds(100));
    for (const auto& f : flows) {
      if (f.fd < 0 || f.sent_at.empty() || f.replied.back()) continue;
      for (std::size_t i = f.sent_at.size(); i-- > 0 && f.sent_at[i] >= last_send - window;)
        if (f.replied[i]) return false;  // answering until just now: its last reply is due
    }
    return true;
  }

  void run() {
    std::vector<pollfd> fds;
    std::vector<Flow*> by_fd;
    for (auto& f : flows)
      if (f.fd >= 0) {
        fds.push_back({f.fd, POLLIN, 0});
        by_fd.push_back(&f);
      }
    auto next = Clock::now();
    t0 = next;
    Clock::time_point stop_at{};
    for (;;) {
      auto now = Clock::now();
      if (!stopping) {
        if (now >= next) {
          for (auto* f : by_fd) send_echo(*f, now);
          if (last_send != Clock::time_point{})
            max_gap = std::max(max_gap, std::chrono::duration<double, std::milli>(now - last_send).count());
          last_send = now;
          // Keep the cadence; after a stall (a busy machine) resume instead of bursting.
          next += interval;
          if (next < now) next = now + interval;
        }
      } else if (stop_at == Clock::time_point{}) {
        stop_at = now + reply_timeout;
      }
      if (stop_at != Clock::time_point{} && (now >= stop_at || all_answered())) break;
      auto wake = stop_at != Clock::time_point{} ? stop_at : next;
      int timeout_ms = static_cast<int>(
          std::max<long>(0, std::chrono::duration_cast<std::chrono::milliseconds>(wake - now).count()));
      if (stopping && stop_at == Clock::time_point{}) timeout_ms = 0;
      int n = ::poll(fds.data(), fds.size(), std::min(timeout_ms, 50));
      if (n > 0) {
        now = Clock::now();
        for (std::size_t i = 0; i < fds.size(); ++i)
          if (fds[i].revents & (POLLIN | POLLERR)) read_replies(*by_fd[i], now, reply_timeout);
      }
    }
    rusage ru{};
    if (::getrusage(RUSAGE_THREAD, &ru) == 0)
      cpu_ms = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000.0 +
               (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000.0;
  }
};

ProbeStream::ProbeStream(std::vector<StreamFlow> flows, std::chrono::milliseconds interval,
                         std::chrono::milliseconds reply_timeout)
    : impl_(std::make_unique<Impl>()) {
  impl_->interval = interval;
  impl_->reply_timeout = reply_timeout;
  for (auto& s : flows) {
    Flow f;
    f.spec = std::move(s);
    impl_->flows.push_back(std::move(f));
  }
}

ProbeStream::~ProbeStream() {
  stop();
  for (auto& f : impl_->flows)
    if (f.fd >= 0) ::close(f.fd);
}

Result<void> ProbeStream::start() {
  if (impl_->started) return {};
  int open = 0;
  std::string first_error;
  for (auto& f : impl_->flows) {
    f.id = static_cast<std::uint16_t>(g_next_id.fetch_add(1));
    if (auto r = open_flow(f); !r) {
      f.error = r.error().message;
      if (f.fd >= 0) ::close(f.fd);
      f.fd = -1;
      if (first_error.empty()) first_error = f.spec.name + ": " + f.error;
      continue;
    }
    ++open;
  }
  if (open == 0 && !impl_->flows.empty())
    return harness_error("no flow of the probe stream could start (" + first_error + ")");
  impl_->started = true;
  impl_->thread = std::thread([this] { impl_->run(); });
  return {};
}

StreamStats ProbeStream::stop() {
  Impl& m = *impl_;
  if (m.stopped || !m.started) return m.result;
  m.stopping = true;
  m.thread.join();
  m.stopped = true;
  m.result.interval = m.interval;
  auto ms = [&](Clock::time_point t) {
    return std::chrono::duration<double, std::milli>(t - m.t0).count();
  };
  double end = ms(m.last_send) + static_cast<double>(m.interval.count());
  m.result.duration_ms = ms(m.last_send);
  m.result.cpu_ms = m.cpu_ms;
  m.result.max_send_gap_ms = m.max_gap;
  for (const auto& f : m.flows) {
    if (!f.error.empty()) {
      FlowStats s;
      s.name = f.spec.name;
      s.error = f.error;
      m.result.flows.push_back(s);
      continue;
    }
    std::vector<ProbeSample> samples;
    samples.reserve(f.sent_at.size());
    for (std::size_t i = 0; i < f.sent_at.size(); ++i)
      samples.push_back({ms(f.sent_at[i]), f.replied[i], f.rtt_ms[i]});
    m.result.flows.push_back(summarize_flow(f.spec.name, samples, end));
  }
  return m.result;
}

}  // namespace twin::runtime
