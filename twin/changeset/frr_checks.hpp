#pragma once
// Checks of a change set's configuration text before anything is applied: FRR's own parser
// (`vtysh -C`) and what only the lab's plan can tell.
#include "twin/changeset/changeset.hpp"
#include "twin/core/diagnostics.hpp"
#include "twin/core/error.hpp"
#include "twin/drivers/registry.hpp"
#include "twin/plan/images.hpp"
#include "twin/plan/plan.hpp"
#include "twin/proc/runner.hpp"

namespace twin::replay {

// FRR's own syntax check of every configuration text in `cs` (`vtysh -C -f`, no daemon
// involved), by the release each node of the step runs: a container node's own image
// (NodeDriver::refused_lines), this machine's FRR for the others. A node an earlier image step
// of `cs` moves to another release is not checked here (its new release judges the lines when
// the step applies them). A rejected line becomes a diagnostic at its line in the change file
// (add/remove blocks) or in the config file (replace), naming the release and node that refused
// it. Errors: vtysh or the image's check could not run (kEnvironment, kHarness).
Result<void> check_frr_syntax(const ChangeSet& cs, const plan::Plan& plan,
                              const drivers::DriverLookup& drivers, proc::ProcessRunner& runner,
                              Diagnostics& diags);

// Every image step's target image is present (`present`: engine::present_images): a step
// moving nodes to an image this machine does not have is refused before anything runs, at the
// step (an upgrade to the wrong release rehearses nothing; `up` may substitute a release, an
// image step does not).
void check_images_present(const ChangeSet& cs, const std::vector<plan::PresentImage>& present,
                          Diagnostics& diags);

// Checks of configuration text against the lab that FRR's parser cannot make: a `router bgp
// N` line whose ASN is not the node's (FRR runs one default BGP instance per node; a second ASN
// is refused only while applying, with an unhelpful message). Adds diagnostics at their line.
void check_against_lab(const ChangeSet& cs, const plan::Plan& plan, Diagnostics& diags);

}  // namespace twin::replay
