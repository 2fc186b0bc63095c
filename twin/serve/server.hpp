#pragma once
// twin serve's listener: HTTP/1.1 and WebSocket with Boost.Beast, one thread per connection
// (a lab's operators are few; blocking reads of FRR are simplest on their own threads). HTTP
// requests go to Api::handle; a WebSocket upgrade of /api/labs/{lab}/events streams that lab's
// events (engine::EventFollower: the journal and live changes), one JSON object per text
// message, until the client leaves or the server stops; one of
// /api/labs/{lab}/nodes/{node}/terminal is a node's terminal (terminal.hpp).
#include <functional>
#include <string>

#include "twin/core/error.hpp"
#include "twin/serve/api.hpp"

namespace twin::serve {

struct ServerOptions {
  std::string address = "127.0.0.1";
  int port = 8080;                 // 0 = any free port (the bound one is reported)
  double event_interval_s = 0.5;   // between two looks at a lab for its event stream
  int max_connections = 64;        // beyond: 503 (event streams and terminals count)
  int request_timeout_s = 15;      // to receive a request, or send a reply; then the
                                   // connection closes (an idle keep-alive one too)
  std::string twin_program;        // this program's path: terminals run `<it> shell`
};

// Whether `address` is a loopback address (127.0.0.0/8, ::1). Pure.
bool is_loopback(const std::string& address);

// Serves until SIGINT/SIGTERM (twin::interrupted()). `on_listening` is called once with the
// bound "address:port". Errors: the address cannot be bound (kEnvironment), a non-loopback
// address without a token (kUsage: refused before binding).
Result<void> serve(const ServerOptions& o, Api& api, bool has_token,
                   const std::function<void(const std::string&)>& on_listening);

}  // namespace twin::serve
