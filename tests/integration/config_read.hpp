#pragma once
// Shared by the integration suites: twin reads a node's running config from its daemons' vty
// sockets and merges them as vtysh does (runtime/vtysh_merge.hpp); on every FRR node of a real
// lab that text must be byte for byte what `vtysh -c "show running-config"` prints.
// (Declared without twin's headers: the suites call their CLI helper `twin`, which would clash
// with the namespace.)
#include <string>

namespace twin_it {

void expect_running_configs_read_like_vtysh(const std::string& lab);

}  // namespace twin_it
