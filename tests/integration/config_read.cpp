#include "tests/integration/config_read.hpp"

#include <gtest/gtest.h>

#include "twin/proc/runner.hpp"
#include "twin/runtime/frr_config.hpp"
#include "twin/state/state.hpp"

namespace twin_it {

void expect_running_configs_read_like_vtysh(const std::string& lab) {
  auto st = twin::state::load_state(lab);
  ASSERT_TRUE(st) << st.error().message;
  twin::proc::SystemRunner runner;
  int compared = 0;
  for (const auto& n : st->plan.nodes) {
    if (n.kind != twin::topology::NodeKind::kFrr || n.daemons.empty()) continue;  // (a VM: its NOS)
    auto fast = twin::runtime::running_config_from_sockets(n);
    auto vtysh = twin::runtime::running_config_vtysh(runner, n);
    ASSERT_TRUE(vtysh) << n.name << ": " << vtysh.error().message;
    ASSERT_TRUE(fast.has_value()) << n.name << ": the sockets could not be read";
    EXPECT_EQ(*fast, *vtysh) << n.name;
    ++compared;
  }
  EXPECT_GT(compared, 0);
}

}  // namespace twin_it
