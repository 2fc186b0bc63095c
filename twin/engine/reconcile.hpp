#pragma once
// One path that makes a lab's resources match a plan: bringing a lab up is reconciling from an
// empty plan to the topology's; a change set's topology step (and its rollback) is reconciling
// from the running plan to another, without restarting what stays. Nodes and links the target
// adds are created beside the running fabric, the ones it drops are removed, generated FRR
// configs of nodes that stay are brought to the target's as a difference (frr-reload.py),
// link MTUs and VTEPs' tenant devices (VNIs, bridged ports) follow the target, and so do the
// routing daemons of nodes that stay (a change needing staticd starts it). Every resource
// is recorded in the state file before it is created, and dropped from it once gone, so
// `twin down` stays exact at every moment (tenant devices live in their node's namespace and
// go with it). What differs per node kind is the node's driver's (drivers/driver.hpp).
#include <string>
#include <vector>

#include "twin/core/error.hpp"
#include "twin/drivers/driver.hpp"
#include "twin/plan/plan.hpp"
#include "twin/proc/runner.hpp"

namespace twin::engine {

// What a reconcile did, by name.
struct GrowReport {
  std::vector<std::string> added_nodes, removed_nodes, added_links, removed_links, reconfigured,
      mtu_changed, vteps_changed, daemons_changed;
  // New link ends ("spine40 swp19") whose fe80::/64 route the kernel had lost and twin added
  // back, and those left without a working link-local: no IPv6 link-local address 2 s after
  // they came up, or a route that did not come back (wiring::link_local_gaps).
  std::vector<std::string> link_local_repaired, link_local_missing;
  int daemons = 0;                 // processes started
  double wiring_ms = 0;            // namespaces, links, addresses, node files, VMs created
  double daemons_ms = 0;           // daemons started
  [[nodiscard]] std::string summary() const;  // "added nodes leaf5; added links ...; ..."
};

// What reconcile would do, one line (for --dry-run).
std::string describe_reshape(const plan::Plan& from, const plan::Plan& to);

// Makes the lab recorded in ctx.record (running `from`; an empty plan for a new lab) match
// `to`. Errors: a node that changes kind or image (kInput: needs a new lab); a node whose driver
// cannot change its links while running (a VM) gaining, losing or re-MTU-ing a link, or added
// to or removed from a running lab (kInput); a new node's namespace that exists already
// (kUsage); a command that fails (kHarness) — resources already recorded stay recorded, so
// `down` removes them; SIGINT/SIGTERM (kInterrupted). Drivers' readiness waits are the
// caller's (`up`); the state's plan is not changed here.
Result<void> reconcile(const plan::Plan& from, const plan::Plan& to, drivers::BuildContext& ctx,
                       GrowReport* report);

// reconcile for a change set's topology step on lab `lab` (the caller holds the lab lock):
// loads the lab's record, reconciles, saves.
Result<void> reshape_lab(const std::string& lab, const plan::Plan& from, const plan::Plan& to,
                         proc::ProcessRunner& runner, int parallel, GrowReport* report);

}  // namespace twin::engine
