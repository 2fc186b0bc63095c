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

Result<traffic::Report> SystemProbe::traffic(const plan::Plan& plan, const traffic::Options& o) {
  auto st = state::load_lab(plan.lab);
  if (!st) return st.error();
  st->plan = plan;  // as the caller judges it (a change's intended plan)
  return traffic::run(*st, o, runner_, [](const std::string&) {});
}

Result<std::map<std::string, std::vector<ProcessHealth>>> SystemProbe::processes(
    const plan::Plan& plan) {
  auto t = Clock::now();
  auto recorded = state::load_resources(plan.lab);
  if (!recorded) return recorded.error();
  std::map<std::string, std::vector<state::Resource>> by_node;
  std::vector<state::Resource> lab_wide;  // the management network's DHCP server
  for (auto& r : *recorded) (r.node.empty() ? lab_wide : by_node[r.node]).push_back(std::move(r));
  // A VM on the management network depends on the lab's DHCP server: it is that node's too.
  for (const auto& n : plan.nodes)
    if (!n.vm.mgmt_netns.empty())
      for (const auto& r : lab_wide)
        if (r.kind == "process" && r.name == plan::kMgmtDhcpProcess) by_node[n.name].push_back(r);
  std::map<std::string, std::vector<ProcessHealth>> out;
  static const std::vector<state::Resource> kNone;
  std::string said;
  for (const auto& n : plan.nodes) {
    auto it = by_node.find(n.name);
    auto h = drivers_(n).process_health(n, it == by_node.end() ? kNone : it->second);
    if (h.empty()) continue;
    if (keep_)
      for (const auto& p : h)
        said += n.name + " " + p.name + (p.pid ? " PID " + std::to_string(p.pid) : "") + ": " +
                (!p.known    ? "unknown"
                 : p.running ? "running"
                             : "not running") +
                (p.detail.empty() ? "" : " (" + p.detail + ")") + "\n";
    out.emplace(n.name, std::move(h));
  }
  if (keep_)
    record({"", "processes recorded in " + state::state_path(plan.lab), said, ms_since(t)});
  return out;
}

Result<std::string> SystemProbe::running_config(const plan::Node& node) {
  auto t = Clock::now();
  auto r = drivers_(node).running_config(node, runner_);
  if (keep_)
    record({node.name, "show running-config", r ? *r : "error: " + r.error().message, ms_since(t)});
  return r;
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
