#pragma once
// The one way twin serve accepts a WebSocket: the connection moves onto the caller's own
// io_context (each stream runs its reads, writes and timers asynchronously on its thread),
// messages are capped at 64 KiB, and Beast's keep-alive pings end a stream whose client stopped
// answering for `idle` (a browser tab closed without a close frame, a cable pulled).
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <chrono>
#include <optional>

namespace twin::serve {

using WebSocket = boost::beast::websocket::stream<boost::asio::ip::tcp::socket>;

// Completes the upgrade `upgrade` (already checked by Api::check_websocket) on `socket`.
// Empty when the socket cannot move or the handshake fails (the client is gone; nothing to say).
std::optional<WebSocket> accept_websocket(
    boost::asio::ip::tcp::socket socket,
    const boost::beast::http::request<boost::beast::http::string_body>& upgrade,
    boost::asio::io_context& io, std::chrono::seconds idle);

}  // namespace twin::serve
