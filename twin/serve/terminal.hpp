#pragma once
// A node's terminal over a WebSocket: `twin shell --lab LAB NODE` (the same program and code
// path as the CLI's, so the same namespaces, cgroup and environment) in a pseudo-terminal whose
// bytes the socket carries both ways. Binary frames are terminal bytes; a text frame from the
// client is a control message, {"cols": C, "rows": R}, that resizes the pty (TIOCSWINSZ).
//
// The shell joins the lab's cgroup, so `twin down` ends it with the lab. Closing the socket
// hangs up the pty (SIGHUP to the shell and what it runs in the foreground) and then kills the
// shell's process group after 2 s if it is still there; only that recorded pid, never by name.
// Blocks until the terminal ends. The caller has checked the token and origin (api.hpp).
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/http.hpp>
#include <string>

namespace twin::serve {

void run_terminal(boost::asio::ip::tcp::socket socket,
                  const boost::beast::http::request<boost::beast::http::string_body>& upgrade,
                  const std::string& twin_program, const std::string& lab, const std::string& node);

}  // namespace twin::serve
