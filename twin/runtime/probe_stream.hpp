#pragma once
// A continuous ICMP echo stream over a set of flows, for as long as a change runs: how much
// traffic each flow lost, and for how long at a stretch (the gate's hitless measurement).
//
// One raw ICMP/ICMPv6 socket per flow, opened inside the flow's network namespace and bound to
// its source address; one thread sends an echo request on every flow each `interval` and reads
// the replies. Semantics of an echo as runtime/ping.hpp (RFC 792 / RFC 4443), with a small
// payload. A request is lost when no reply arrives within `reply_timeout`.
//
// Resolution: an outage is measured in whole probe intervals (a lost echo stands for the
// interval until the next one), so budgets below about ten intervals mean nothing on a busy
// machine; the gate refuses them. Needs CAP_NET_RAW and CAP_SYS_ADMIN (setns).
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "twin/core/error.hpp"

namespace twin::runtime {

struct StreamFlow {
  std::string name;         // "server1 -> server2 2001:db8:4::10", as reports show it
  std::string netns;        // where the echo requests leave (a name under /run/netns)
  std::string source;       // address the requests leave from (bound)
  std::string destination;  // IPv4 or IPv6 literal
};

// One echo request: when it was sent (ms since the stream started) and whether it was answered.
struct ProbeSample {
  double sent_ms = 0;
  bool replied = false;
  // Round-trip time of the answer, ms: from the send to the stream's thread reading the reply
  // (woken by poll(2), so it includes that thread's scheduling: an upper bound). 0 unanswered.
  double rtt_ms = 0;
};

struct FlowStats {
  std::string name;
  long sent = 0;
  long lost = 0;
  // The longest run of lost echoes, from the send time of its first request to that of the
  // next answered one (to the end of the stream when none was answered after it); 0 when none
  // was lost.
  double longest_outage_ms = 0;
  double outage_start_ms = -1;  // when that run began, ms since the stream started; -1 = none
  std::string error;            // the flow could not be probed at all ("" = it ran)
  // Each answered echo's round-trip time (ProbeSample::rtt_ms), in send order: latency under
  // load (twin traffic's percentiles).
  std::vector<double> rtt_ms;
};

// Pure: a flow's figures from its samples (in send order); `end_ms` is when the stream
// stopped sending.
FlowStats summarize_flow(const std::string& name, const std::vector<ProbeSample>& samples,
                         double end_ms);

struct StreamStats {
  std::chrono::milliseconds interval{10};
  double duration_ms = 0;  // from the first to the last request
  double cpu_ms = 0;       // CPU time the stream's thread used (user + system)
  // The longest gap between two rounds of requests: the resolution actually achieved (the
  // interval on an idle machine; more when the thread was not scheduled in time).
  double max_send_gap_ms = 0;
  std::vector<FlowStats> flows;
};

class ProbeStream {
 public:
  ProbeStream(std::vector<StreamFlow> flows, std::chrono::milliseconds interval,
              std::chrono::milliseconds reply_timeout = std::chrono::milliseconds(1000));
  ~ProbeStream();  // stops the thread if still running
  ProbeStream(const ProbeStream&) = delete;
  ProbeStream& operator=(const ProbeStream&) = delete;

  // Opens the sockets and starts sending. A flow whose socket cannot be opened (namespace
  // gone, bad address) is reported with its error and not probed. Errors: no flow could start.
  Result<void> start();
  // Stops sending, waits up to reply_timeout for the last replies, and returns every flow's
  // figures. Idempotent: a second call returns the same figures.
  StreamStats stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace twin::runtime
