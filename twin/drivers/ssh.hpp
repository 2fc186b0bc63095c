#pragma once
// SSH into a lab's nodes over its management network (docs/management.md): one sshd per member
// node — Debian's openssh-server, no SSH of twin's own — in the node's network namespace, bound
// to its management address only, started with the node and recorded like its daemons (kind
// "process", name "sshd"), whose ForceCommand lands the login in the node's own vtysh (its
// release's, for a container node), with `$SSH_ORIGINAL_COMMAND` as `vtysh -c` when one is given
// (DESIGN.md §4a, measured: non-interactive commands keep vtysh's exit status; `ssh -tt`
// lands at the `leaf1# ` prompt; Ansible's network_cli works against it).
//
// Authentication is the lab's key (ed25519, generated per lab, 0600 in <lab run dir>/ssh,
// removed by `down`); a password too only when the topology gives one (Mgmt::password_hash: only
// the hash is written, in the login's shadow entry). The login (Mgmt::user, "admin") exists only
// inside sshd's private mount namespace: its own passwd and shadow files are bound over the
// machine's, with the login as uid 0, so that vtysh reaches the node's root-owned vty sockets and
// the container's mount namespace. That grants nothing root on this machine does not have already:
// the key is readable by root only, and the addresses are reachable from this machine and the
// lab's namespaces only (wiring/mgmt.hpp). sshd and every login run read-only but the node's
// run folder (proc::Command::writable), as the node's daemons do.
#include <chrono>
#include <string>

#include "twin/core/error.hpp"
#include "twin/drivers/driver.hpp"
#include "twin/plan/plan.hpp"

namespace twin::drivers {

// The sshd program (absolute: sshd refuses a relative path).
inline constexpr const char* kSshd = "/usr/sbin/sshd";

// What `up` checks before it claims a lab with a management network: sshd and ssh-keygen are
// installed. Errors: kEnvironment naming the package.
Result<void> ssh_preflight();

// The lab's files, once, before any node's sshd: the key pair, authorized_keys, the passwd
// and shadow files bound into sshd's mount namespace. Idempotent (an existing key is kept).
Result<void> prepare_lab_ssh(const plan::Plan& plan, proc::ProcessRunner& runner);

// The node's host key (its line appended to the lab's known_hosts), sshd_config and login
// script. Idempotent (an existing host key is kept). Work for a thread of its own while the
// lab is wired: at 56 nodes, mostly ssh-keygen.
Result<void> prepare_node_ssh(const plan::Plan& plan, const plan::Node& node,
                              proc::ProcessRunner& runner);
// sshd for the node (prepare_node_ssh first) in the lab's cgroup, noted in ctx.record; returns
// its PID (0 for a node not on the management network) without waiting.
Result<int> spawn_node_sshd(const plan::Plan& plan, const plan::Node& node, BuildContext& ctx);
// Returns once the node's sshd (`pid`) accepts connections on port 22 of its management
// address. Errors: kHarness naming the node, and sshd's last words, when it exited or `until`
// passed.
Result<void> wait_node_sshd(const plan::Node& node, int pid,
                            std::chrono::steady_clock::time_point until);

// Pure, for the tests: the node's sshd_config, and the login script its ForceCommand runs.
std::string sshd_config(const plan::Mgmt& mgmt, const plan::Node& node);
std::string login_script(const plan::Node& node);
// The login's shadow file: its password hash, or "*" (no password, key only).
std::string lab_shadow(const plan::Mgmt& mgmt);
// The machine's passwd text with `user` as uid 0 (any line of the same name dropped).
std::string lab_passwd(const std::string& host_passwd, const plan::Mgmt& mgmt);

// Where things are: the lab's private key, known_hosts; a node's ssh folder.
std::string lab_key_path(const plan::Mgmt& mgmt);
std::string known_hosts_path(const plan::Mgmt& mgmt);
std::string node_ssh_dir(const plan::Node& node);
// Every SSH session's text on the node, appended: a command given to ssh as "<node># <command>"
// and its answer; an interactive session as its terminal showed it (util-linux `script`).
std::string session_log_path(const plan::Node& node);

}  // namespace twin::drivers
