#pragma once
// The real LabProbe against a running lab: each node is asked through its driver
// (drivers/registry.hpp): FRR over its vty sockets or a guest's vtysh, the kernel over netlink
// or a guest agent (`ip -j` shapes), in-process ICMP. With Evidence::kKeep every probe's command,
// raw output and duration is kept (validate --artifacts; replay::LabWatch's phases, which apply,
// run, drills and exercises share and `--evidence` writes out); by default
// nothing is: at 256 nodes the routes family alone would re-serialize ~260,000 routes into
// strings nobody reads, and freeing them cost a quarter of the validation's CPU.
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
  enum class Evidence { kDiscard, kKeep };
  // Each node is probed through `drivers` (the registry's driver_for unless a test says).
  explicit SystemProbe(proc::ProcessRunner& runner, drivers::DriverLookup drivers = {},
                       Evidence evidence = Evidence::kDiscard);
  Result<nlohmann::json> frr_json(const plan::Node& node, const std::string& daemon,
                                  const std::string& command) override;
  Result<nlohmann::json> ip_json(const plan::Node& node,
                                 const std::vector<std::string>& args) override;
  std::vector<PingResult> ping(const plan::Node& node,
                               const std::vector<PingRequest>& requests) override;
  // From the lab's state file (plan.lab) and each node's driver (process_health).
  Result<std::map<std::string, std::vector<ProcessHealth>>> processes(
      const plan::Plan& plan) override;
  // Through the node's driver (its vty sockets).
  Result<std::string> running_config(const plan::Node& node) override;
  Result<traffic::Report> traffic(const plan::Plan& plan, const traffic::Options& o) override;

  // Copy of everything probed so far; empty unless constructed with Evidence::kKeep.
  std::vector<ProbeRecord> records() const;

 private:
  void record(ProbeRecord r);
  proc::ProcessRunner& runner_;
  drivers::DriverLookup drivers_;
  bool keep_;
  mutable std::mutex mu_;
  std::vector<ProbeRecord> records_;
};

}  // namespace twin::validate
