// twin console: a VM node's serial console. The domain's console is a pty (runtime/libvirt.hpp);
// twin opens it in raw mode and joins it to the terminal, as `virsh console` does, with Ctrl-]
// to leave. With piped input (scripts, tests) the input is sent and the console's output
// printed until it has been quiet for --quiet seconds.
#include <fcntl.h>
#include <poll.h>
#include <termios.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <iostream>
#include <string>

#include "twin/cli/commands.hpp"
#include "twin/core/util.hpp"
#include "twin/drivers/registry.hpp"
#include "twin/state/state.hpp"
#include "twin/runtime/libvirt.hpp"

namespace twin::cli {

namespace {

constexpr char kEscape = 0x1d;  // Ctrl-]

bool write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

}  // namespace

int run_console(const ConsoleOptions& o) {
  auto st = state::load_lab(o.lab);
  if (!st) return fail(st.error().message, exit_code(st.error()));
  const plan::Node* node = st->plan.find(o.node);
  if (!node) {
    std::string names;
    for (const auto& n : st->plan.nodes)
      if (drivers::driver_for(n).has_console()) names += (names.empty() ? "" : ", ") + n.name;
    return fail("lab " + st->lab + " has no node '" + o.node + "'" +
                    (names.empty() ? "; it has no VM nodes" : "; its VM nodes: " + names),
                2);
  }
  if (!drivers::driver_for(*node).has_console())
    return fail(
        "node " + o.node + " is a network namespace, not a VM: use `twin shell " + o.node + "`", 2);
  if (o.log) {
    auto text = read_file(node->vm.console_log);
    if (!text) return fail(text.error().message, 3);
    std::cout << *text;
    return 0;
  }
  auto hv = runtime::Hypervisor::open(node->vm.uri);
  if (!hv) return fail(hv.error().message, exit_code(hv.error()));
  auto xml = (*hv)->live_xml(node->vm.domain);
  if (!xml) return fail(xml.error().message, exit_code(xml.error()));
  auto pty = runtime::console_pty(*xml);
  if (!pty) return fail(pty.error().message, 3);
  int fd = ::open(pty->c_str(), O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return fail("opening the console " + *pty + ": " + std::strerror(errno), 3);
  // The pty's own line discipline would echo the guest's output back into the guest.
  termios raw{};
  ::tcgetattr(fd, &raw);
  ::cfmakeraw(&raw);
  ::tcsetattr(fd, TCSANOW, &raw);

  bool tty = ::isatty(STDIN_FILENO);
  termios saved{};
  if (tty) {
    ::tcgetattr(STDIN_FILENO, &saved);
    termios t = saved;
    ::cfmakeraw(&t);
    ::tcsetattr(STDIN_FILENO, TCSANOW, &t);
    std::cerr << "twin: console of " << st->lab << "/" << o.node << " (" << *pty
              << "); Ctrl-] leaves\r\n";
    write_all(fd, "\r", 1);  // a fresh prompt
  }
  bool stdin_open = true;
  auto last_output = std::chrono::steady_clock::now();
  char buf[4096];
  for (;;) {
    // A closed stdin leaves the set (a negative fd is ignored): else poll keeps reporting its
    // hang-up and the loop spins.
    pollfd p[2] = {{fd, POLLIN, 0}, {stdin_open ? STDIN_FILENO : -1, POLLIN, 0}};
    int n = ::poll(p, 2, 100);
    if (n < 0 && errno != EINTR) break;
    if (interrupted()) break;
    if (n > 0 && (p[0].revents & POLLIN)) {
      ssize_t r = ::read(fd, buf, sizeof buf);
      if (r <= 0) break;
      write_all(STDOUT_FILENO, buf, static_cast<size_t>(r));
      last_output = std::chrono::steady_clock::now();
    } else if (n > 0 && (p[0].revents & (POLLHUP | POLLERR))) {
      break;  // the VM went away
    }
    if (n > 0 && stdin_open && (p[1].revents & (POLLIN | POLLHUP))) {
      ssize_t r = ::read(STDIN_FILENO, buf, sizeof buf);
      if (r <= 0) {
        stdin_open = false;
      } else if (tty) {
        char* esc = static_cast<char*>(std::memchr(buf, kEscape, static_cast<size_t>(r)));
        if (esc) {
          write_all(fd, buf, static_cast<size_t>(esc - buf));
          break;
        }
        write_all(fd, buf, static_cast<size_t>(r));
      } else {
        // A serial line has no flow control here: pace piped input so the guest's 16-byte UART
        // FIFO keeps up.
        for (ssize_t i = 0; i < r; ++i) {
          write_all(fd, buf + i, 1);
          if (buf[i] == '\n') ::usleep(50000);
        }
        last_output = std::chrono::steady_clock::now();
      }
    }
    if (!tty && !stdin_open &&
        std::chrono::steady_clock::now() - last_output >
            std::chrono::milliseconds(static_cast<long>(o.quiet_s * 1000)))
      break;
  }
  if (tty) {
    ::tcsetattr(STDIN_FILENO, TCSANOW, &saved);
    std::cerr << "\ntwin: left the console of " << o.node << "\n";
  }
  ::close(fd);
  return 0;
}

}  // namespace twin::cli
