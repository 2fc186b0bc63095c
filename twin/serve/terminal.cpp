#include "twin/serve/terminal.hpp"
#include "twin/serve/websocket.hpp"

#include <linux/close_range.h>
#include <pty.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>
#include <chrono>
#include <cstring>
#include <functional>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

extern char** environ;

namespace twin::serve {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;

namespace {

// Ends the shell: the pty is closed by then (SIGHUP went to its session); whatever ignores
// that gets SIGKILL on its process group (the shell is a session leader: pgid == pid).
void reap(pid_t pid) {
  for (int i = 0; i < 40; ++i) {
    if (::waitpid(pid, nullptr, WNOHANG) == pid) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ::kill(-pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
}

}  // namespace

void run_terminal(tcp::socket socket,
                  const boost::beast::http::request<boost::beast::http::string_body>& upgrade,
                  const std::string& twin_program, const std::string& lab, const std::string& node) {
  // Its own io_context: the pty and the socket are read at once, without a thread each.
  asio::io_context io;
  // An idle terminal stays open; a browser that vanished is found by keep-alive pings.
  auto accepted = accept_websocket(std::move(socket), upgrade, io, std::chrono::seconds(60));
  if (!accepted) return;
  WebSocket& ws = *accepted;
  boost::system::error_code ec;

  // Everything the child needs is built before fork: a threaded process may only exec after.
  std::vector<std::string> args{twin_program, "shell", "--lab", lab, node};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_store{"TERM=xterm-256color", "SHELL=/bin/bash"};
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "TERM=", 5) != 0 && std::strncmp(*e, "SHELL=", 6) != 0)
      env_store.emplace_back(*e);
  std::vector<char*> envp;
  for (auto& e : env_store) envp.push_back(e.data());
  envp.push_back(nullptr);

  int master = -1;
  winsize size{24, 80, 0, 0};
  pid_t pid = ::forkpty(&master, nullptr, nullptr, &size);
  if (pid < 0) {
    ws.text(true);
    ws.write(asio::buffer(std::string("twin: cannot open a pseudo-terminal: ") + std::strerror(errno)),
             ec);
    ws.close(websocket::close_code::internal_error, ec);
    return;
  }
  if (pid == 0) {
    // The shell gets its terminal only: not the server's listening socket, clients or job pipes.
    ::syscall(SYS_close_range, 3u, ~0u, CLOSE_RANGE_CLOEXEC);
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }

  asio::posix::stream_descriptor pty(io, master);  // owns (closes) master
  std::array<char, 16384> out{};
  beast::flat_buffer in;
  bool closing = false;
  auto finish = [&] {
    if (closing) return;
    closing = true;
    ws.async_close(websocket::close_code::normal, [&](boost::system::error_code) { io.stop(); });
  };
  std::function<void()> read_pty = [&] {
    pty.async_read_some(asio::buffer(out), [&](boost::system::error_code e, size_t n) {
      if (e) {  // EIO: the shell has exited and the pty has no writer left
        finish();
        return;
      }
      ws.binary(true);
      ws.async_write(asio::buffer(out.data(), n), [&](boost::system::error_code w, size_t) {
        if (w) {
          io.stop();
          return;
        }
        read_pty();
      });
    });
  };
  std::function<void()> read_ws = [&] {
    ws.async_read(in, [&](boost::system::error_code e, size_t) {
      if (e) {  // closed by the browser, or gone
        io.stop();
        return;
      }
      std::string data = beast::buffers_to_string(in.data());
      in.consume(in.size());
      if (ws.got_text()) {
        auto j = nlohmann::json::parse(data, nullptr, false);
        if (j.is_object() && j["cols"].is_number_unsigned() && j["rows"].is_number_unsigned()) {
          winsize w{};
          w.ws_col = static_cast<unsigned short>(std::min<unsigned>(j["cols"].get<unsigned>(), 1000));
          w.ws_row = static_cast<unsigned short>(std::min<unsigned>(j["rows"].get<unsigned>(), 1000));
          ::ioctl(pty.native_handle(), TIOCSWINSZ, &w);
        }
      } else {
        boost::system::error_code we;
        asio::write(pty, asio::buffer(data), we);
      }
      read_ws();
    });
  };
  read_pty();
  read_ws();
  io.run();
  pty.close(ec);  // hangs up the shell's session
  reap(pid);
}

}  // namespace twin::serve
