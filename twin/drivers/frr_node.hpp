#pragma once
// FRR daemons of a namespace node (netns-frr): files, preflight and start. Internal to drivers/.
#include <vector>

#include "twin/drivers/driver.hpp"

namespace twin::drivers {

// The FRR daemons the nodes need are installed, user frr exists, and FRR's crash-log folder
// /var/tmp/frr exists (each daemon gets a private one over it). Errors: kEnvironment.
Result<void> frr_preflight(const std::vector<plan::Node*>& nodes);

// The node's run folder with frr.conf (generated, or the user's own file), vtysh.conf, tmp/ and,
// for a generated config, each daemon's share of it — all owned by frr. Idempotent.
Result<void> write_frr_files(const plan::Node& node);

// Starts the node's daemons in image order inside the lab's cgroup, each reading its own share
// of a generated config, or else applies the integrated frr.conf afterwards with `vtysh -b`;
// notes every PID in the record (not saved: the caller saves once for all nodes); then asks the
// neighbours for their router advertisements (solicit_neighbours). Returns the number of
// daemons started.
Result<int> start_frr_daemons(const plan::Node& node, BuildContext& ctx);

// One Router Solicitation out each of the node's ports that can carry IPv6 (intended up, MTU
// >= 1280), from its namespace: the neighbours' zebras advertise at once, so this node's zebra
// learns their link-local addresses (BGP unnumbered) without waiting for their next periodic
// advertisement (runtime/ndisc.hpp says why). For after the node's zebra starts or its
// configuration changes (an interface's advertisements switched on). Best effort: nothing to
// report, the periodic advertisements remain.
void solicit_neighbours(const plan::Node& node);
// The ports solicit_neighbours sends on, in topology order.
std::vector<std::string> solicitation_ports(const plan::Node& node);

// `config` (a running configuration) becomes the node's frr.conf, replaced atomically, owned by
// frr: the startup configuration a restart boots from.
Result<void> save_frr_config(const plan::Node& node, const std::string& config);

// Stops the node's recorded daemons (taken out of ctx.record; whatever still runs after a
// failure is noted back) and removes their pid files and vty sockets, which would make new
// daemons wait or refuse.
Result<void> stop_frr_daemons(const plan::Node& node, BuildContext& ctx);
// A running node's daemons become `to`'s (from.daemons -> to.daemons, same node): the recorded
// processes of daemons `to` no longer lists stopped (by PID and start time), daemons it adds
// started with no configuration (the change that needed one applies its lines next) and
// waited for until their vty socket exists. PIDs go in and out of ctx.record (not saved).
// Errors: a daemon that does not stop or start (kHarness, named with its node).
Result<void> change_frr_daemons(const plan::Node& from, const plan::Node& to, BuildContext& ctx);
// Starts the node's daemons with its saved frr.conf applied by `vtysh -b` (never the
// per-daemon shares of a generated config, which an approved change has made stale). Returns
// the number of daemons started.
Result<int> boot_frr_daemons(const plan::Node& node, BuildContext& ctx);

// Restarts one daemon of the node (one of node.daemons) from the node's startup
// configuration: its recorded process stopped if it still runs (by PID and start time), its
// pid file and vty socket removed, a new one started with no configuration, then the node's
// saved frr.conf applied to that daemon alone (`vtysh -b -d DAEMON`), so the daemons that kept
// running (zebra's FIB, the other protocols' sessions) are not touched. The new PID is noted
// in ctx.record (not saved). Errors: kUsage for a daemon the node does not run; kHarness for
// one that does not stop or start; kInput when FRR refuses a line of the saved config.
Result<void> restart_frr_daemon(const plan::Node& node, const std::string& daemon,
                                BuildContext& ctx);

// Each daemon the node runs (node.daemons, image order) against the processes `recorded` for
// it: running, or how it ended — its exit status while it waits for its reaper, else the last
// line of its log that says why it stopped (FRR logs "Received signal 11 ..." or "Terminating
// on signal" before it goes: lib/sigevent.c), else that nothing says.
std::vector<state::ProcessHealth> frr_process_health(const plan::Node& node,
                                                     const std::vector<state::Resource>& recorded);
// The last line of a daemon's log (its tail, at most 64 KiB read) that tells how it stopped;
// "" when none does. Pure but for the read.
std::string frr_last_words(const std::string& log_path);

}  // namespace twin::drivers
