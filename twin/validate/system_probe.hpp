#pragma once
// The real LabProbe against a running lab: FRR daemons over their vty sockets, the kernel over
// netlink (`ip -j` shapes), in-process ICMP. Every probe's
// command, raw output and duration is kept for --artifacts.
#include <mutex>
#include <string>
#include <vector>

#include "twin/proc/runner.hpp"
#include "twin/validate/validator.hpp"

namespace twin::validate {

struct ProbeRecord {
  std::string node;
  std::string command;
  std::string output;  // raw output, or the error
  double duration_ms = 0;
};

// VM nodes with twin's guest agent (runtime/agent.hpp) are probed inside the guest: tables
// through twin-json, pings with iputils ping run in parallel by one shell command. Exposed for
// unit tests.
std::string guest_ping_script(const std::vector<PingRequest>& reqs);
std::vector<PingResult> parse_guest_pings(const std::string& output, size_t requests);
PingResult guest_ping_result(int exit_code, const std::string& output);

class SystemProbe final : public LabProbe {
 public:
  explicit SystemProbe(proc::ProcessRunner& runner) : runner_(runner) {}
  Result<nlohmann::json> frr_json(const plan::Node& node, const std::string& daemon,
                                  const std::string& command) override;
  Result<nlohmann::json> ip_json(const plan::Node& node,
                                 const std::vector<std::string>& args) override;
  std::vector<PingResult> ping(const plan::Node& node,
                               const std::vector<PingRequest>& requests) override;

  // Copy of everything probed so far.
  std::vector<ProbeRecord> records() const;

 private:
  void record(ProbeRecord r);
  proc::ProcessRunner& runner_;
  mutable std::mutex mu_;
  std::vector<ProbeRecord> records_;
};

}  // namespace twin::validate
