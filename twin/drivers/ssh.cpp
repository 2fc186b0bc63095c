#include "twin/drivers/ssh.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <mutex>
#include <sstream>
#include <thread>

#include "twin/core/util.hpp"
#include "twin/runtime/frr.hpp"

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace twin::drivers {

namespace {

Result<void> keygen(proc::ProcessRunner& runner, const std::string& path,
                    const std::string& comment) {
  if (fs::exists(path)) return {};
  proc::Command c{{"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", path},
                  "",
                  10s};
  auto r = proc::run_checked(runner, c, "generating SSH key " + path);
  if (!r) return r.error();
  return {};
}

// Whether something accepts TCP connections on addr:22 (from the root namespace, which reaches
// the management network through the host's veth).
bool port_open(const std::string& addr) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(22);
  ::inet_pton(AF_INET, addr.c_str(), &sa.sin_addr);
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0;
  ::close(fd);
  return ok;
}

std::mutex known_hosts_mu;  // nodes start in parallel; each appends its line

}  // namespace

std::string lab_key_path(const plan::Mgmt& m) { return m.key_dir + "/id_ed25519"; }
std::string known_hosts_path(const plan::Mgmt& m) { return m.key_dir + "/known_hosts"; }
std::string node_ssh_dir(const plan::Node& n) { return n.run_dir + "/ssh"; }
std::string session_log_path(const plan::Node& n) { return node_ssh_dir(n) + "/sessions.log"; }

Result<void> ssh_preflight() {
  for (const char* p : {kSshd, "/usr/bin/ssh-keygen"})
    if (::access(p, X_OK) != 0)
      return env_error(std::string(p) +
                       " is missing: a lab with `mgmt:` runs sshd on every node; run "
                       "tools/install-deps.sh (packages openssh-server, openssh-client)");
  return {};
}

std::string lab_passwd(const std::string& host_passwd, const plan::Mgmt& m) {
  std::istringstream in(host_passwd);
  std::string line, out;
  while (std::getline(in, line))
    if (line.rfind(m.user + ":", 0) != 0) out += line + "\n";
  // uid 0 in sshd's own mount namespace only (ssh.hpp says why); home: the lab's ssh folder.
  out += m.user + ":x:0:0:twin lab login:" + m.key_dir + ":/bin/sh\n";
  return out;
}

Result<void> prepare_lab_ssh(const plan::Plan& plan, proc::ProcessRunner& runner) {
  if (!plan.mgmt) return {};
  const plan::Mgmt& m = *plan.mgmt;
  std::error_code ec;
  fs::create_directories(m.key_dir, ec);
  if (ec) return harness_error("creating " + m.key_dir + ": " + ec.message());
  ::chmod(m.key_dir.c_str(), 0700);
  // sshd's privilege-separation folder, which the package's tmpfiles.d makes at boot; absent
  // on a machine where its own sshd never ran (install-deps masks that service).
  if (!fs::is_directory("/run/sshd")) {
    fs::create_directories("/run/sshd", ec);
    ::chmod("/run/sshd", 0755);
  }
  if (auto r = keygen(runner, lab_key_path(m), "twin-lab-" + plan.lab); !r) return r;
  auto pub = read_file(lab_key_path(m) + ".pub");
  if (!pub) return pub.error();
  if (auto w = write_file_mode(m.key_dir + "/authorized_keys", *pub, 0600); !w) return w;
  auto passwd = read_file("/etc/passwd");
  if (!passwd) return passwd.error();
  if (auto w = write_file_mode(m.key_dir + "/passwd", lab_passwd(*passwd, m), 0644); !w) return w;
  if (auto w = write_file_mode(m.key_dir + "/shadow", lab_shadow(m), 0600); !w) return w;
  return write_file_mode(known_hosts_path(m), "", 0644);
}

std::string lab_shadow(const plan::Mgmt& m) {
  // "*" is no password and not a locked account (sshd refuses "!" even for a key).
  return m.user + ":" + (m.password_hash.empty() ? "*" : m.password_hash) + ":19000:0:99999:7:::\n";
}

std::string sshd_config(const plan::Mgmt& m, const plan::Node& n) {
  const std::string dir = node_ssh_dir(n);
  std::ostringstream s;
  s << "# twin: sshd of node " << n.name << " (docs/management.md)\n"
    << "ListenAddress " << n.mgmt_ip() << ":22\n"
    << "HostKey " << dir << "/ssh_host_ed25519_key\n"
    << "PidFile none\n"
    << "AuthorizedKeysFile " << m.key_dir << "/authorized_keys\n"
    << "AllowUsers " << m.user
    << "\n"
    // The login is uid 0 inside sshd's mount namespace: a password needs root's permission.
    << "PermitRootLogin " << (m.password_hash.empty() ? "prohibit-password" : "yes") << "\n"
    << "PubkeyAuthentication yes\n"
    << "PasswordAuthentication " << (m.password_hash.empty() ? "no" : "yes") << "\n"
    << "KbdInteractiveAuthentication no\n"
    << "UsePAM no\n"
    << "UseDNS no\n"
    << "PrintMotd no\n"
    << "PrintLastLog no\n"
    << "PermitUserEnvironment no\n"
    << "AllowTcpForwarding no\n"
    << "AllowAgentForwarding no\n"
    << "AllowStreamLocalForwarding no\n"
    << "X11Forwarding no\n"
    << "PermitTunnel no\n"
    << "StrictModes yes\n"
    << "MaxStartups 64:30:128\n"
    << "LogLevel INFO\n"
    << "ForceCommand " << dir << "/login\n";
  return s.str();
}

std::string login_script(const plan::Node& n) {
  std::ostringstream s;
  s << "#!/bin/sh\n"
    << "# twin: an SSH login to node " << n.name << " lands in its vtysh; a command given to ssh\n"
    << "# runs as `vtysh -c` and its exit status is ssh's.\n";
  std::string vtysh = "/usr/bin/vtysh --vty_socket " + n.run_dir + " --config_dir " + n.run_dir;
  if (!n.container.name.empty()) {
    // The container's own vtysh (its release's), in its mount namespace, found at login: the
    // container may have been made again since sshd started (twin restart).
    s << "read pid start < " << runtime::container_pid_file(n) << " || exit 255\n";
    vtysh = "/usr/bin/nsenter --mount=/proc/$pid/ns/mnt -- " + vtysh;
  }
  // Every session is recorded on the node (session_log_path): the gate reads FRR's answer to
  // each line an orchestrator sent, whatever its client made of it (issue 48 item 6a).
  const std::string log = session_log_path(n);
  s << "if [ -n \"$SSH_ORIGINAL_COMMAND\" ]; then\n"
    << "  out=$(" << vtysh << " -c \"$SSH_ORIGINAL_COMMAND\" 2>&1)\n"
    << "  rc=$?\n"
    << "  printf '%s\\n' \"$out\"\n"
    << "  printf '%s# %s\\n%s\\n' " << n.name << " \"$SSH_ORIGINAL_COMMAND\" \"$out\" >> " << log
    << "\n"
    << "  exit $rc\n"
    << "fi\n"
    << "exec /usr/bin/script -q -f -e -a -c \"" << vtysh << "\" " << log << "\n";
  return s.str();
}

Result<void> prepare_node_ssh(const plan::Plan& plan, const plan::Node& n,
                              proc::ProcessRunner& runner) {
  if (!plan.mgmt || n.mgmt_address.empty()) return {};
  const plan::Mgmt& m = *plan.mgmt;
  const std::string dir = node_ssh_dir(n);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return harness_error("creating " + dir + ": " + ec.message());
  ::chmod(dir.c_str(), 0700);
  if (auto r = keygen(runner, dir + "/ssh_host_ed25519_key", n.name); !r) return r;
  if (auto w = write_file_mode(dir + "/sshd_config", sshd_config(m, n), 0600); !w) return w;
  if (auto w = write_file_mode(dir + "/login", login_script(n), 0755); !w) return w;
  auto host_pub = read_file(dir + "/ssh_host_ed25519_key.pub");
  if (!host_pub) return host_pub.error();
  // "<address> <type> <key>": the lab's known_hosts, so `ssh -F` checks every host key.
  std::istringstream k(*host_pub);
  std::string type, key;
  k >> type >> key;
  std::lock_guard lk(known_hosts_mu);
  auto old = read_file(known_hosts_path(m));
  std::string text = old ? *old : "";
  std::string line = n.mgmt_ip() + " " + type + " " + key + "\n";
  if (text.find(line) == std::string::npos)
    if (auto w = write_file_mode(known_hosts_path(m), text + line, 0644); !w) return w;
  return {};
}

Result<int> spawn_node_sshd(const plan::Plan& plan, const plan::Node& n, BuildContext& ctx) {
  if (!plan.mgmt || n.mgmt_address.empty()) return 0;
  const plan::Mgmt& m = *plan.mgmt;
  const std::string dir = node_ssh_dir(n);
  proc::Command c{{kSshd, "-D", "-e", "-f", dir + "/sshd_config"}, "", 10s, n.netns,
                  ctx.record.cgroup()};
  c.bind_mounts = {{m.key_dir + "/passwd", "/etc/passwd"}, {m.key_dir + "/shadow", "/etc/shadow"}};
  c.writable = {n.run_dir};
  c.hostname = n.name;
  c.output_file = dir + "/sshd.log";
  c.detach = true;
  c.cancellable = false;  // its PID must be noted once it runs
  auto r = proc::run_checked(ctx.runner, c, "starting sshd");
  if (!r) return r.error().with_context("node " + n.name);
  ctx.record.note({"process", "sshd", n.name, r->pid, state::process_start_time(r->pid)});
  return r->pid;
}

Result<void> wait_node_sshd(const plan::Node& n, int pid,
                            std::chrono::steady_clock::time_point until) {
  const std::string addr = n.mgmt_ip();
  while (!port_open(addr)) {
    if (!state::process_alive(pid, 0) || std::chrono::steady_clock::now() > until) {
      auto log = read_file(node_ssh_dir(n) + "/sshd.log");
      if (log) std::erase(*log, '\r');
      return harness_error("node " + n.name + ": sshd " +
                           (state::process_alive(pid, 0)
                                ? "does not accept connections on " + addr + ":22"
                                : "exited") +
                           (log && !log->empty() ? "; it said: " + trim_end(*log) : ""));
    }
    std::this_thread::sleep_for(20ms);
  }
  return {};
}

}  // namespace twin::drivers
