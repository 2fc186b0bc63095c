#include "twin/validate/system_probe.hpp"

#include <nlohmann/json.hpp>

#include "twin/core/util.hpp"
#include "twin/runtime/frr.hpp"
#include "twin/runtime/netlink.hpp"

namespace twin::validate {

Result<nlohmann::json> SystemProbe::frr_json(const plan::Node& node, const std::string& daemon,
                                             const std::string& command) {
  auto t = Clock::now();
  auto r = runtime::show_json(node, daemon, command);
  record({node.name, daemon + ".vty: " + command, r ? r->dump() : "error: " + r.error().message,
          ms_since(t)});
  return r;
}

Result<nlohmann::json> SystemProbe::ip_json(const plan::Node& node,
                                            const std::vector<std::string>& args) {
  auto t = Clock::now();
  runtime::KernelTable table;
  // The tables validators read come over netlink in-process, in `ip -j`'s shape; anything else
  // runs `ip` itself.
  bool netlink = runtime::kernel_table_of(args, &table);
  auto r = netlink ? runtime::kernel_json(node.netns, table)
                   : runtime::ip_json(runner_, node.netns, args);
  record({node.name,
          (netlink ? "netlink (as ip -j " : "ip -n " + node.netns + " -j ") + proc::render(args) +
              (netlink ? ")" : ""),
          r ? r->dump() : "error: " + r.error().message, ms_since(t)});
  return r;
}

std::vector<PingResult> SystemProbe::ping(const plan::Node& node,
                                          const std::vector<PingRequest>& requests) {
  auto t = Clock::now();
  auto results = ping_many(node.netns, requests);
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
