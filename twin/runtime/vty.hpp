#pragma once
// A client for an FRR daemon's vty socket (<run_dir>/<daemon>.vty), the same Unix socket vtysh
// talks to. Why: a `vtysh -c` process costs ~30–50 ms of CPU (it builds FRR's whole command
// graph before sending one line); the socket answers a `show ... json` in ~0.1–2 ms. At 56 nodes
// polled several times a second while BGP converges, that difference is most of a CPU core.
//
// Protocol (FRR lib/vty.c, vtysh_read / vtysh_flush; vtysh/vtysh.c vtysh_client_run): the
// client writes one command line terminated by a NUL byte; the daemon answers with the
// command's output followed by a 4-byte trailer {0, 0, 0, status}, status being the CMD_*
// code (0 = CMD_SUCCESS). A new connection starts in VIEW_NODE: `show` commands work as is.
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "twin/core/error.hpp"

namespace twin::runtime {

struct VtyReply {
  int status = 0;      // FRR's CMD_* code: 0 success, 1 warning, 2 unknown command, …
  std::string output;  // the command's output, trailer removed
};

// Connects to `socket_path`, runs `command`, returns the reply and closes the connection.
// Errors (kHarness): the socket is missing or refuses the connection (daemon not running),
// the daemon closed it mid-reply, or no complete reply within `timeout`. Thread-safe (one
// connection per call); never blocks past `timeout`.
Result<VtyReply> vty_command(const std::string& socket_path, const std::string& command,
                             std::chrono::milliseconds timeout);
// Whether a daemon listens on `socket_path`: a connection is accepted (and closed at once). FRR
// binds its vty socket before it listens on it (lib/vty.c, vty_serv_un), so the file existing
// does not say that a client would get in. Never blocks.
bool vty_listening(const std::string& socket_path);

enum class VtyWait { kListening, kExited, kTimedOut, kCancelled };
// Waits until a daemon listens on `socket_path` (vty_listening), process `pid` has exited
// without listening (kExited), `until` passes (kTimedOut), or `cancelled` says so (checked at
// least every 50 ms).
// Sleeps in poll(2) on an inotify watch of the socket's folder (the socket file appears at
// FRR's bind, which its listen follows at once) and a pidfd of `pid` (readable when it
// exits): nothing is polled while the daemon builds its command graph, which under load takes
// up to ~100 ms per daemon. Without inotify or pidfd (old kernel) it polls every 2 ms.
VtyWait wait_vty_listening(const std::string& socket_path, int pid,
                           std::chrono::steady_clock::time_point until,
                           const std::function<bool()>& cancelled);
// Several commands on one connection, in order (e.g. {"enable", "show bfd peers json"}); the
// reply of the last, or of the first that did not succeed. Same errors as vty_command.
Result<VtyReply> vty_commands(const std::string& socket_path,
                              const std::vector<std::string>& commands,
                              std::chrono::milliseconds timeout);

}  // namespace twin::runtime
