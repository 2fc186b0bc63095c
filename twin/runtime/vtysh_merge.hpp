#pragma once
// vtysh's `show running-config` without a vtysh process. Why: a `vtysh` costs ~70–100 ms of CPU
// before it sends one line (it builds FRR's whole command graph); the rollout gate reads every
// node's running config before a change (56 vtysh at 8x48: ~2 s of the gate on 2 cores), and
// drills, restores and causes read them too. Each daemon answers `write terminal` on its vty
// socket in about a millisecond; what vtysh adds is the merge of those answers into one text.
//
// The merge reproduces FRR 8.4's vtysh byte for byte (vtysh/vtysh.c vtysh_write_terminal: the
// daemons asked in vtysh_client[] order, watchfrr skipped; vtysh/vtysh_config.c
// vtysh_config_parse_line, vtysh_config_write, vtysh_config_dump): top-level lines kept once
// or appended by their prefix, blocks of the same header line from several daemons joined
// (interface, route-map and nexthop-group lines kept once and inserted in strcmp order, the
// others appended), blocks printed grouped by FRR's node type in enum order, `!` between them
// as vtysh prints it. Twin's other reads of the config (the gate's snapshot, frr-reload.py's
// input, the evidence's before.conf) therefore do not change with it; an integration test holds
// it equal to vtysh on labs running zebra, bgpd, ospfd, ospf6d, staticd and bfdd.
#include <optional>
#include <string>
#include <vector>

namespace twin::runtime {

// The daemons vtysh asks for their configuration, in the order it asks them (FRR 8.4
// vtysh_client[], without watchfrr, whose config vtysh skips).
const std::vector<std::string>& vtysh_daemon_order();

// What vtysh itself adds to the merged configuration (vtysh_config_write).
struct VtyshOwn {
  std::string hostname;    // vtysh's host name: its UTS host name unless vtysh.conf sets one
  std::string domainname;  // the UTS domain name; empty when the kernel says "(none)"
  // "service integrated-vtysh-config" in vtysh.conf: true; "no service ...": false; absent:
  // unset (vtysh then prints neither line).
  std::optional<bool> integrated;
};

// vtysh.conf as vtysh reads it into VtyshOwn::integrated (`service integrated-vtysh-config`
// and its `no` form; `!`/`#` comments and blank lines ignored). nullopt for any other line
// (`hostname`, `username`, ...: vtysh applies those its own way): the caller then asks vtysh.
std::optional<VtyshOwn> parse_vtysh_conf(const std::string& text, VtyshOwn defaults);

// The text `vtysh -c "show running-config"` prints after its "Current configuration:" line
// ("!" first, "end" last), from each daemon's answer to `write terminal` in
// vtysh_daemon_order() order (daemons that are not running left out, as vtysh leaves them).
std::string merge_running_configs(const std::vector<std::string>& daemon_outputs,
                                  const VtyshOwn& own);

}  // namespace twin::runtime
