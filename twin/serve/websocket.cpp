#include "twin/serve/websocket.hpp"

namespace twin::serve {

std::optional<WebSocket> accept_websocket(
    boost::asio::ip::tcp::socket socket,
    const boost::beast::http::request<boost::beast::http::string_body>& upgrade,
    boost::asio::io_context& io, std::chrono::seconds idle) {
  boost::system::error_code ec;
  auto protocol = socket.local_endpoint(ec).protocol();
  if (ec) return std::nullopt;
  boost::asio::ip::tcp::socket mine(io);
  mine.assign(protocol, socket.release(), ec);
  if (ec) return std::nullopt;
  std::optional<WebSocket> ws(std::in_place, std::move(mine));
  ws->read_message_max(64 * 1024);
  boost::beast::websocket::stream_base::timeout t{};
  t.handshake_timeout = std::chrono::seconds(30);
  t.idle_timeout = idle;
  t.keep_alive_pings = true;
  ws->set_option(t);
  ws->accept(upgrade, ec);
  if (ec) return std::nullopt;
  return ws;
}

}  // namespace twin::serve
