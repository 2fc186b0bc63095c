#include "validators/node/node.hpp"

namespace twin::validators {

using validate::make_result;
using validate::Status;
using validate::TestResult;

std::vector<TestResult> evaluate_node(
    const plan::Plan& plan,
    const Result<std::map<std::string, std::vector<validate::ProcessHealth>>>& processes) {
  std::vector<TestResult> out;
  if (!processes) {
    // A probe that cannot see processes at all (a recorded run) is not a lab whose processes
    // are unknown: say so, and let the other families judge.
    const bool unsupported = processes.error().kind == ErrorKind::kUsage;
    out.push_back(
        unsupported
            ? make_result("node", 0, "daemons", Status::kSkipped, "", "", "every daemon running",
                          "not observable", processes.error().message)
            : make_result("node", 0, "daemons", Status::kError, "", "", "every daemon running",
                          "no data",
                          "cannot read the lab's processes: " + processes.error().message));
    return out;
  }
  for (const auto& n : plan.nodes) {
    auto it = processes->find(n.name);
    if (it == processes->end()) continue;
    for (const auto& p : it->second) {
      const std::string pid = p.pid ? " (PID " + std::to_string(p.pid) + ")" : "";
      if (!p.known) {
        out.push_back(make_result("node", 0, "daemons", Status::kError, n.name, p.name, "running",
                                  "unknown",
                                  "cannot tell whether " + p.name + " runs: " + p.detail));
        continue;
      }
      if (p.running) {
        out.push_back(make_result("node", 0, "daemons", Status::kPassed, n.name, p.name, "running",
                                  "running" + pid, p.name + " is running"));
        continue;
      }
      auto r = make_result("node", 0, "daemons", Status::kFailed, n.name, p.name, "running",
                           "not running", p.name + pid + " is not running: " + p.detail);
      r.unhealthy = true;
      // Nothing of twin's brings a dead daemon back by itself.
      r.cannot_converge = p.name + " on " + n.name + " is not running";
      out.push_back(std::move(r));
    }
  }
  return out;
}

std::vector<TestResult> NodeValidator::run(validate::Context& ctx) {
  return evaluate_node(ctx.plan, ctx.probe.processes(ctx.plan));
}

}  // namespace twin::validators
