// twin exec / twin shell: run a command inside a node, the way its driver reaches it
// (drivers/driver.hpp: a namespace node's command gets a private mount namespace in which a
// plain `vtysh` reaches that node's FRR only; a VM's runs in the guest through twin's agent).
#include "twin/cli/commands.hpp"
#include "twin/drivers/registry.hpp"
#include "twin/plan/plan.hpp"
#include "twin/state/state.hpp"

namespace twin::cli {

int run_exec(const ExecOptions& o) {
  auto st = state::load_lab(o.lab);
  if (!st) return fail(st.error().message, exit_code(st.error()));
  const plan::Node* node = st->plan.find(o.node);
  if (!node) {
    std::string names;
    for (const auto& n : st->plan.nodes) names += (names.empty() ? "" : ", ") + n.name;
    return fail("lab " + st->lab + " has no node '" + o.node + "'; nodes: " + names, 2);
  }
  return drivers::driver_for(*node).exec(*st, *node, o.command);
}

}  // namespace twin::cli
