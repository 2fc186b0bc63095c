#pragma once
// The real LabProbe against a running lab: each node is asked through its driver
// (drivers/registry.hpp): FRR over its vty sockets or a guest's vtysh, the kernel over netlink
// or a guest agent (`ip -j` shapes), in-process ICMP. Every probe's command, raw output and
// duration is kept for --artifacts.
#include <mutex>
#include <string>
#include <vector>

#include "twin/drivers/registry.hpp"
#include "twin/proc/runner.hpp"
#include "twin/validate/validator.hpp"

namespace twin::validate {

struct ProbeRecord {
  std::string node;
  std::string command;
  std::string output;  // raw output, or the error
  double duration_ms = 0;
};

class SystemProbe final : public LabProbe {
 public:
  // Each node is probed through `drivers` (the registry's driver_for unless a test says).
  explicit SystemProbe(proc::ProcessRunner& runner, drivers::DriverLookup drivers = {});
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
  drivers::DriverLookup drivers_;
  mutable std::mutex mu_;
  std::vector<ProbeRecord> records_;
};

}  // namespace twin::validate
