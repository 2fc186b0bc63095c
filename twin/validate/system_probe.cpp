#include "twin/validate/system_probe.hpp"

#include <cstring>
#include <nlohmann/json.hpp>
#include <sstream>

#include "twin/core/util.hpp"
#include "twin/drivers/registry.hpp"

namespace twin::validate {

SystemProbe::SystemProbe(proc::ProcessRunner& runner, drivers::DriverLookup drivers,
                         Evidence evidence)
    : runner_(runner),
      drivers_(drivers ? std::move(drivers) : drivers::DriverLookup(drivers::driver_for)),
      keep_(evidence == Evidence::kKeep) {}

Result<nlohmann::json> SystemProbe::frr_json(const plan::Node& node, const std::string& daemon,
                                             const std::string& command) {
  auto t = Clock::now();
  std::string how;
  auto r = drivers_(node).frr_json(node, daemon, command, keep_ ? &how : nullptr);
  if (keep_) record({node.name, how, r ? r->dump() : "error: " + r.error().message, ms_since(t)});
  return r;
}

Result<nlohmann::json> SystemProbe::ip_json(const plan::Node& node,
                                            const std::vector<std::string>& args) {
  auto t = Clock::now();
  std::string how;
  auto r = drivers_(node).ip_json(node, args, runner_, keep_ ? &how : nullptr);
  if (keep_) record({node.name, how, r ? r->dump() : "error: " + r.error().message, ms_since(t)});
  return r;
}

std::vector<PingResult> SystemProbe::ping(const plan::Node& node,
                                          const std::vector<PingRequest>& requests) {
  auto t = Clock::now();
  std::vector<PingResult> results = drivers_(node).ping(node, requests);
  if (!keep_) return results;
  std::string out;
  for (size_t i = 0; i < requests.size() && i < results.size(); ++i) {
    const auto& q = requests[i];
    const auto& a = results[i];
    out += q.destination + (q.interface.empty() ? "" : "%" + q.interface) +
           (q.source.empty() ? "" : " from " + q.source) + " size " +
           std::to_string(q.payload_bytes) + (q.dont_fragment ? " DF" : "") + ": " +
           to_string(a.outcome) + (a.rtt_ms >= 0 ? " " + std::to_string(a.rtt_ms) + " ms" : "") +
           (a.detail.empty() ? "" : " (" + a.detail + ")") + "\n";
  }
  record({node.name, "ping x" + std::to_string(requests.size()), out, ms_since(t)});
  return results;
}

void SystemProbe::record(ProbeRecord r) {
  std::lock_guard lk(mu_);
  records_.push_back(std::move(r));
}

std::vector<ProbeRecord> SystemProbe::records() const {
  std::lock_guard lk(mu_);
  return records_;
}

}  // namespace twin::validate
