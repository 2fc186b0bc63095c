#include "twin/runtime/vty.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <thread>

#include "twin/core/util.hpp"

namespace twin::runtime {

namespace {
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// Waits for `events` on fd until `deadline`; false on timeout.
bool wait_for(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, events, 0};
    int r = ::poll(&p, 1, static_cast<int>(left.count()));
    if (r > 0) return true;
    if (r < 0 && errno != EINTR) return true;  // let the read/write report the error
  }
}
// Connects `s` to the Unix stream socket at `path`; the errno-style reason when it cannot.
std::optional<std::string> connect_unix(const std::string& path, Fd& s) {
  sockaddr_un addr{};
  if (path.size() >= sizeof addr.sun_path) return "socket path too long";
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  s.fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s.fd < 0) return std::string("socket: ") + std::strerror(errno);
  if (::connect(s.fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
    return std::string("connect: ") + std::strerror(errno) + " (is the daemon running?)";
  return std::nullopt;
}
}  // namespace

bool vty_listening(const std::string& socket_path) {
  Fd s;
  return !connect_unix(socket_path, s);
}

VtyWait wait_vty_listening(const std::string& socket_path, int pid,
                           std::chrono::steady_clock::time_point until,
                           const std::function<bool()>& cancelled) {
  const std::filesystem::path path(socket_path);
  const std::string name = path.filename().string();
  Fd watch, proc;
  watch.fd = ::inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  if (watch.fd >= 0 &&
      ::inotify_add_watch(watch.fd, path.parent_path().c_str(), IN_CREATE | IN_MOVED_TO) < 0) {
    ::close(watch.fd);
    watch.fd = -1;
  }
  proc.fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (proc.fd < 0 && errno == ESRCH) return vty_listening(socket_path) ? VtyWait::kListening : VtyWait::kExited;
  const bool sleep_in_poll = watch.fd >= 0 && proc.fd >= 0;
  // The socket appeared (or was there before the watch): FRR's listen follows its bind at once.
  std::error_code ec;
  bool created = std::filesystem::exists(path, ec);
  for (int spins = 0;; ++spins) {
    // After each wake-up, and once after the watch exists (the socket may predate it).
    if (vty_listening(socket_path)) return VtyWait::kListening;
    if (cancelled && cancelled()) return VtyWait::kCancelled;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
    if (left.count() <= 0) return VtyWait::kTimedOut;
    if (!sleep_in_poll && ::kill(pid, 0) != 0 && errno == ESRCH) return VtyWait::kExited;
    int wait_ms = sleep_in_poll ? static_cast<int>(std::min<long>(left.count(), 50)) : 2;
    if (created && spins < 200) {
      std::this_thread::sleep_for(std::chrono::microseconds(250));
      continue;
    }
    pollfd fds[2] = {{watch.fd, POLLIN, 0}, {proc.fd, POLLIN, 0}};
    int r = ::poll(fds, sleep_in_poll ? 2 : 0, wait_ms);
    if (r < 0 && errno != EINTR) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    if (r <= 0) continue;
    if (fds[1].revents & POLLIN)
      return vty_listening(socket_path) ? VtyWait::kListening : VtyWait::kExited;
    if (fds[0].revents & POLLIN) {
      alignas(inotify_event) char buf[4096];
      ssize_t n;
      while ((n = ::read(watch.fd, buf, sizeof buf)) > 0)
        for (ssize_t off = 0; off < n;) {
          auto* e = reinterpret_cast<const inotify_event*>(buf + off);
          if (e->len > 0 && name == e->name) {
            created = true;
            spins = 0;
          }
          off += static_cast<ssize_t>(sizeof(inotify_event) + e->len);
        }
    }
  }
}

Result<VtyReply> vty_commands(const std::string& socket_path,
                              const std::vector<std::string>& commands,
                              std::chrono::milliseconds timeout) {
  const std::string command = commands.empty() ? "" : commands.back();
  auto deadline = Clock::now() + timeout;
  auto fail = [&](const std::string& why) -> Result<VtyReply> {
    return harness_error("vty " + socket_path + ": '" + command + "': " + why);
  };
  Fd s;
  if (auto why = connect_unix(socket_path, s)) return fail(*why);
  for (size_t k = 0; k < commands.size(); ++k) {
  std::string line = commands[k];
  line.push_back('\0');
  size_t sent = 0;
  while (sent < line.size()) {
    if (!wait_for(s.fd, POLLOUT, deadline)) return fail("timed out sending");
    ssize_t n = ::send(s.fd, line.data() + sent, line.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail(std::string("send: ") + std::strerror(errno));
    sent += static_cast<size_t>(n);
  }
  std::string buf;
  char chunk[65536];
  for (;;) {
    // The trailer is the last 4 bytes of a complete reply: three NULs and the status.
    if (buf.size() >= 4 && buf[buf.size() - 4] == '\0' && buf[buf.size() - 3] == '\0' &&
        buf[buf.size() - 2] == '\0') {
      VtyReply r;
      r.status = static_cast<unsigned char>(buf.back());
      buf.resize(buf.size() - 4);
      r.output = std::move(buf);
      if (k + 1 == commands.size() || r.status != 0) return r;
      break;  // an earlier command (`enable`) succeeded: send the next
    }
    if (!wait_for(s.fd, POLLIN, deadline))
      return fail("no complete reply within " + std::to_string(timeout.count()) + " ms");
    ssize_t n = ::recv(s.fd, chunk, sizeof chunk, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail(std::string("recv: ") + std::strerror(errno));
    if (n == 0) return fail("the daemon closed the connection before its reply ended");
    buf.append(chunk, static_cast<size_t>(n));
  }
  }
  return fail("no command to send");
}

Result<VtyReply> vty_command(const std::string& socket_path, const std::string& command,
                             std::chrono::milliseconds timeout) {
  return vty_commands(socket_path, {command}, timeout);
}

}  // namespace twin::runtime
