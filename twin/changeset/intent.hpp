#pragma once
// Intent: the network a change set means to build, as a Plan that validators check against
// (DESIGN.md §6). Without it no good change could be approved: a raised MTU is the new
// expected MTU, a new topology's sessions are expected, a declared drain is expected to carry
// nothing. Pure: no I/O.
#include <cstddef>
#include <limits>

#include "twin/plan/plan.hpp"
#include "twin/changeset/changeset.hpp"

namespace twin::replay {

// The plan after the first `steps` steps of `cs` (all by default) plus the change's intent
// block, which holds from the first step on:
// - topology step: the plan of its topology file, under the running lab's name;
// - interface/link step mtu: the new intended MTU of each end (a link's MTU is the smaller
//   end's: a veth drops frames above the receiver's MTU);
// - interface step addresses: added to / removed from the interface;
// - interface/link admin state is NOT intent: taking a link down is judged by what it breaks,
//   unless intent.links-down declares it;
// - vxlan steps are NOT intent (the kernel knows VNI numbers, a wrong one is what the gate
//   catches): intent.tenant-networks and tenant-ports declare a meant network and port move;
// - intent.drain, links-down, add-prefixes, remove-prefixes as documented in changeset.hpp;
// - intent.traffic: the plan's traffic spec (the family runs in its validations). What the
//   gate keeps as the lab's intent after an approval does not take it (the gate asked for it).
// Sessions and prefixes are re-derived (plan::derive_expectations).
plan::Plan intended_plan(const plan::Plan& base, const ChangeSet& cs,
                         size_t steps = std::numeric_limits<size_t>::max());

}  // namespace twin::replay
