#include "validators/bfd/bfd.hpp"

#include <set>

namespace twin::validators {

using validate::make_result;
using validate::Status;
using validate::TestResult;

std::vector<TestResult> evaluate_bfd(const plan::Plan& plan,
                                     const std::map<std::string, Result<nlohmann::json>>& peers) {
  std::vector<TestResult> out;
  for (const auto& e : plan.bfd_peers) {
    const std::string subject = e.peer_address.empty() ? e.interface : e.peer_address;
    const std::string expected = "up with " + e.peer_node;
    auto it = peers.find(e.node);
    // [] is data (bfdd has no session); anything but a list is not.
    if (it == peers.end() || !it->second || !it->second->is_array()) {
      const std::string cmd = "show bfd peers json";
      std::string why = it == peers.end() ? e.node + ": `" + cmd + "` not probed"
                        : !it->second
                            ? validate::source_failed(e.node, cmd, it->second.error().message)
                            : e.node + ": `" + cmd + "` did not return a list";
      out.push_back(make_result("bfd", 0, "peer-up", Status::kError, e.node, subject, expected,
                                "no data", "cannot read BFD state: " + why));
      continue;
    }
    // An interface (unnumbered) neighbor has no address in the plan: bgpd asks bfdd for a
    // single-hop session on that interface toward the peer's link-local address, which only
    // the running peer knows; it is found by its interface. Otherwise the session toward the
    // address (bound to the interface when FRR says which). The best state when FRR lists
    // several.
    const bool by_interface = e.peer_address.empty();
    const nlohmann::json* found = nullptr;
    for (const auto& p : *it->second) {
      if (!p.is_object()) continue;
      if (by_interface) {
        if (p.value("multihop", false) || e.interface.empty() ||
            p.value("interface", "") != e.interface)
          continue;
      } else {
        if (p.value("peer", "") != e.peer_address) continue;
        if (p.contains("interface") && !e.interface.empty() &&
            p.value("interface", "") != e.interface)
          continue;
      }
      if (!found || p.value("status", "") == "up") found = &p;
    }
    const std::string toward = by_interface ? "on " + subject : "toward " + subject;
    if (!found) {
      out.push_back(make_result("bfd", 0, "peer-up", Status::kFailed, e.node, subject, expected,
                                "no session",
                                "no BFD session " + toward + " (" + e.peer_node + ")"));
      continue;
    }
    std::string status = found->value("status", "unknown");
    bool up = status == "up";
    std::string diag = found->value("diagnostic", "");
    std::string remote = found->value("remote-diagnostic", "");
    std::string why = status;
    if (!up && !diag.empty() && diag != "ok") why += ": " + diag;
    if (!up && !remote.empty() && remote != "ok") why += " (" + e.peer_node + ": " + remote + ")";
    out.push_back(make_result("bfd", 0, "peer-up", up ? Status::kPassed : Status::kFailed, e.node,
                              subject, expected, status,
                              up ? "BFD session with " + e.peer_node + " is up"
                                 : "BFD session " + toward + " (" + e.peer_node + ") is " + why));
  }
  return out;
}

std::vector<TestResult> BfdValidator::run(validate::Context& ctx) {
  std::vector<const plan::Node*> nodes;
  std::set<std::string> seen;
  for (const auto& e : ctx.plan.bfd_peers)
    if (seen.insert(e.node).second)
      if (const auto* n = ctx.plan.find(e.node)) nodes.push_back(n);
  std::vector<std::optional<Result<nlohmann::json>>> got(nodes.size());
  validate::parallel_for(nodes.size(), ctx.parallel, [&](size_t i) {
    got[i] = ctx.probe.frr_json(*nodes[i], "bfdd", "show bfd peers json");
  });
  std::map<std::string, Result<nlohmann::json>> peers;
  for (size_t i = 0; i < nodes.size(); ++i) peers.emplace(nodes[i]->name, std::move(*got[i]));
  return evaluate_bfd(ctx.plan, peers);
}

}  // namespace twin::validators
