#pragma once
// Reshaping a running lab to another plan without restarting it (a change set's topology step,
// and its rollback): nodes and links the new plan adds are created beside the running fabric,
// the ones it drops are removed, generated FRR configs of nodes that stay are brought to the new
// plan's as a difference (frr-reload.py), and link MTUs follow the new plan. Every resource is
// recorded in the state file before it is created, and removed from it after it is gone, so
// `twin down` stays exact at every moment.
#include <string>
#include <vector>

#include "twin/core/error.hpp"
#include "twin/plan/plan.hpp"
#include "twin/proc/runner.hpp"

namespace twin::engine {

struct GrowReport {
  std::vector<std::string> added_nodes, removed_nodes, added_links, removed_links, reconfigured,
      mtu_changed;
  [[nodiscard]] std::string summary() const;  // "added nodes leaf5; added links ...; ..."
};

// What reshape_lab would do, one line (for --dry-run).
std::string describe_reshape(const plan::Plan& from, const plan::Plan& to);

// Reshapes lab `lab` (running `from`) into `to`. The caller holds the lab lock. Errors: a node
// that changes kind or image (needs a restart: kInput); a command that fails (kHarness) —
// resources already recorded stay recorded, so `down` removes them. The state file's plan is
// not changed here (apply saves the intended plan on approval).
Result<void> reshape_lab(const std::string& lab, const plan::Plan& from, const plan::Plan& to,
                         proc::ProcessRunner& runner, int parallel, GrowReport* report);

}  // namespace twin::engine
