#include "twin/runtime/agent.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>

#include "twin/core/util.hpp"
#include "twin/proc/runner.hpp"

namespace twin::runtime {

namespace {

std::mutex& socket_mutex(const std::string& socket) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<std::mutex>> by_socket;
  std::lock_guard lk(mu);
  auto& m = by_socket[socket];
  if (!m) m = std::make_unique<std::mutex>();
  return *m;
}

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::string sh_quote(const std::string& s) {
  std::string o = "'";
  for (char c : s) o += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return o + "'";
}

Result<AgentReply> agent_exec(const std::string& socket, const std::string& command,
                              std::chrono::milliseconds timeout) {
  if (command.find('\n') != std::string::npos)
    return usage_error("a guest agent command is one line");
  std::lock_guard serial(socket_mutex(socket));
  // Unique across processes: a reply left over from a request another twin process abandoned
  // (timed out, interrupted) carries that request's id and is skipped, never taken for ours.
  static std::atomic<unsigned> next_id{1};
  std::string id = std::to_string(::getpid()) + "." + std::to_string(next_id++);
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  if (socket.size() >= sizeof sa.sun_path) return harness_error("socket path too long: " + socket);
  std::strncpy(sa.sun_path, socket.c_str(), sizeof sa.sun_path - 1);
  Fd s{::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)};
  if (s.fd < 0) return harness_error(std::string("socket: ") + std::strerror(errno));
  if (::connect(s.fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0)
    return env_error("cannot reach the guest agent at " + socket + ": " + std::strerror(errno) +
                     " (is the VM running, and does its image run twin's agent?)");
  // The guest kills the command when the caller stops waiting: the agent runs one command at
  // a time, and one that never ends would block every later request.
  long limit_s = std::max<long>(1, static_cast<long>((timeout.count() + 999) / 1000));
  std::string line =
      id + " timeout -s KILL " + std::to_string(limit_s) + " sh -c " + sh_quote(command) + "\n";
  for (size_t off = 0; off < line.size();) {
    ssize_t w = ::send(s.fd, line.data() + off, line.size() - off, MSG_NOSIGNAL);
    if (w < 0) {
      if (errno == EINTR) continue;
      return env_error("writing to the guest agent: " + std::string(std::strerror(errno)));
    }
    off += static_cast<size_t>(w);
  }
  std::string buf, marker = "\x1eTWIN-END " + id + " ";
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    auto at = buf.find(marker);
    if (at != std::string::npos) {
      auto eol = buf.find('\n', at);
      if (eol != std::string::npos) {
        AgentReply r;
        r.exit_code = std::atoi(buf.substr(at + marker.size(), eol - at - marker.size()).c_str());
        r.output = buf.substr(0, at);
        // Replies from an earlier, abandoned request (timed out) come first: drop them.
        auto prev = r.output.rfind("\x1eTWIN-END ");
        if (prev != std::string::npos) {
          auto nl = r.output.find('\n', prev);
          r.output = nl == std::string::npos ? "" : r.output.substr(nl + 1);
        }
        if (!r.output.empty() && r.output.back() == '\n') r.output.pop_back();
        return r;
      }
    }
    if (interrupted())
      return Error{ErrorKind::kInterrupted,
                   "interrupted waiting for the guest agent (the command may still run in the "
                   "guest until its time limit)"};
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0)
      return harness_error("the guest agent did not answer '" + command + "' within " +
                           std::to_string(timeout.count()) + " ms");
    pollfd p{s.fd, POLLIN, 0};
    int pr = ::poll(&p, 1, static_cast<int>(std::min<long>(left.count(), 200)));
    if (pr < 0 && errno == EINTR) continue;
    if (pr <= 0) continue;
    char chunk[4096];
    ssize_t n = ::recv(s.fd, chunk, sizeof chunk, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return env_error("the guest agent closed the connection");
    buf.append(chunk, static_cast<size_t>(n));
  }
}

namespace {
// Each table's command: twin-json's (the agent's test-vm image) and iproute2's (a NOS over ssh).
struct TableCommand {
  KernelTable table;
  const char* agent;
  const char* ip;
};
constexpr TableCommand kTableCommands[] = {
    {KernelTable::kLinks, "twin-json links", "ip -j link show"},
    {KernelTable::kAddresses, "twin-json addrs", "ip -j addr show"},
    {KernelTable::kRoutes4, "twin-json routes4", "ip -j -4 route show"},
    {KernelTable::kRoutes6, "twin-json routes6", "ip -j -6 route show"},
};
std::string table_command(KernelTable table, bool agent) {
  for (const auto& c : kTableCommands)
    if (c.table == table) return agent ? c.agent : c.ip;
  return "";
}
}  // namespace

std::string guest_table_command(KernelTable table) { return table_command(table, true); }

Error no_agent(const plan::Node& node) {
  if (node.vm.agent == "ssh")
    return env_error("node " + node.name +
                     " is a VM that twin reads over SSH on the lab's "
                     "management network, which this lab has not: add `mgmt: true` to its "
                     "topology (docs/management.md)");
  return env_error("node " + node.name + " is a VM whose image (" + node.image +
                   ") runs no twin guest agent: twin cannot read it");
}

namespace {
bool over_ssh(const plan::Node& n) {
  return n.vm.agent == "ssh" && !n.vm.mgmt_netns.empty() && !n.mgmt_address.empty();
}
}  // namespace

bool guest_readable(const plan::Node& n) { return n.vm.agent == "twin" || over_ssh(n); }

std::string guest_askpass_path(const plan::Node& n) { return n.run_dir + "/ssh-askpass"; }

std::string guest_askpass_script(const plan::Node& n) {
  return "#!/bin/sh\nexec cat " + sh_quote(n.vm.ssh_password_file) + "\n";
}

std::vector<std::string> guest_ssh_argv(const plan::Node& n, const std::string& command) {
  const bool password = n.vm.ssh_key.empty();
  std::vector<std::string> a;
  if (password) a = {"env", "SSH_ASKPASS=" + guest_askpass_path(n), "SSH_ASKPASS_REQUIRE=force"};
  a.insert(a.end(), {"/usr/bin/ssh",
                     "-F",
                     "/dev/null",
                     "-T",
                     "-o",
                     std::string("BatchMode=") + (password ? "no" : "yes"),
                     "-o",
                     "StrictHostKeyChecking=accept-new",
                     "-o",
                     "UserKnownHostsFile=" + n.run_dir + "/known_hosts",
                     "-o",
                     "GlobalKnownHostsFile=/dev/null",
                     "-o",
                     "ConnectTimeout=5",
                     "-o",
                     "LogLevel=ERROR",
                     "-o",
                     "NumberOfPasswordPrompts=1",
                     "-o",
                     std::string("PreferredAuthentications=") +
                         (password ? "password,keyboard-interactive" : "publickey")});
  if (!password) a.insert(a.end(), {"-i", n.vm.ssh_key, "-o", "IdentitiesOnly=yes"});
  a.insert(a.end(), {n.vm.ssh_user + "@" + n.mgmt_ip(), "--", command});
  return a;
}

Result<AgentReply> guest_exec(const plan::Node& n, const std::string& command,
                              std::chrono::milliseconds timeout) {
  if (n.vm.agent == "twin") return agent_exec(n.vm.agent_socket, command, timeout);
  if (!over_ssh(n)) return no_agent(n);
  proc::SystemRunner runner;
  proc::Command c{guest_ssh_argv(n, command), "", timeout + std::chrono::seconds(6)};
  auto r = runner.run(c);
  if (!r) return r.error().with_context("ssh to node " + n.name);
  if (r->exit_code == 255)
    return env_error("node " + n.name + ": ssh " + n.vm.ssh_user + "@" + n.mgmt_ip() +
                     " failed: " + trim_end(r->err));
  // The guest's stderr only with a failure: a JSON answer stays parseable past a login banner
  // or sudo's warnings.
  return AgentReply{r->exit_code, r->exit_code == 0 ? r->out : r->out + r->err};
}

std::string guest_table_command(const plan::Node& n, KernelTable table) {
  return table_command(table, n.vm.agent == "twin");
}

Result<nlohmann::json> guest_table(const plan::Node& n, KernelTable table) {
  const std::string cmd = guest_table_command(n, table);
  auto r = guest_exec(n, cmd);
  if (!r) return r.error();
  if (r->exit_code != 0)
    return harness_error("'" + cmd + "' in the guest exited " + std::to_string(r->exit_code) +
                         ": " + r->output);
  auto j = nlohmann::json::parse(r->output, nullptr, false);
  if (j.is_discarded())
    return harness_error("'" + cmd + "' in the guest printed no JSON: " + r->output.substr(0, 200));
  return ok(std::move(j));
}

std::string guest_vtysh(const plan::Node& n) {
  return n.vm.agent == "ssh" ? n.vm.vtysh : std::string("vtysh");
}

}  // namespace twin::runtime
