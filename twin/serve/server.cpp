#include "twin/serve/server.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <deque>
#include <functional>
#include <thread>

#include "twin/core/util.hpp"
#include "twin/engine/live.hpp"
#include "twin/serve/terminal.hpp"

namespace twin::serve {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;

bool is_loopback(const std::string& address) {
  boost::system::error_code ec;
  auto a = asio::ip::make_address(address, ec);
  return !ec && a.is_loopback();
}

namespace {

std::atomic<int> g_connections{0};

Request to_request(const http::request<http::string_body>& req) {
  Request r;
  r.method = std::string(req.method_string());
  r.target = std::string(req.target());
  for (const auto& f : req) {
    std::string name(f.name_string());
    for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    r.headers[name] = std::string(f.value());
  }
  r.body = req.body();
  return r;
}

http::response<http::string_body> to_beast(const Response& r, unsigned version, bool keep_alive) {
  http::response<http::string_body> res{static_cast<http::status>(r.status), version};
  res.set(http::field::server, "twin");
  res.set(http::field::content_type, r.content_type);
  for (const auto& [k, v] : r.headers) res.set(k, v);
  res.keep_alive(keep_alive);
  res.body() = r.body;
  res.prepare_payload();
  return res;
}

// One lab's events to one client. Asynchronous on its own io_context: a read is always
// pending, so the client's pings, pongs and close are answered at once, and Beast's keep-alive
// pings find a client that vanished (no answer within 30 s ends the stream); a timer looks at
// the lab every `interval_s`; writes go out one at a time from a queue.
void stream_events(tcp::socket socket, const http::request<http::string_body>& upgrade,
                   const std::string& lab, double interval_s) {
  asio::io_context io;
  boost::system::error_code ec;
  auto protocol = socket.local_endpoint(ec).protocol();
  if (ec) return;
  tcp::socket mine(io);
  mine.assign(protocol, socket.release(), ec);
  if (ec) return;
  websocket::stream<tcp::socket> ws(std::move(mine));
  ws.read_message_max(64 * 1024);
  websocket::stream_base::timeout t{};
  t.handshake_timeout = std::chrono::seconds(30);
  t.idle_timeout = std::chrono::seconds(30);
  t.keep_alive_pings = true;
  ws.set_option(t);
  ws.accept(upgrade, ec);
  if (ec) return;
  ws.text(true);

  engine::EventFollower follower(lab, false);
  std::deque<std::string> queue;
  bool writing = false, ended = false, gone = false;
  std::function<void()> write_next = [&] {
    if (writing || ended || queue.empty()) return;
    writing = true;
    ws.async_write(asio::buffer(queue.front()), [&](boost::system::error_code e, size_t) {
      writing = false;
      if (e) {
        ended = true;
        io.stop();
        return;
      }
      queue.pop_front();
      write_next();
    });
  };
  auto send = [&](const nlohmann::json& j) {
    queue.push_back(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    write_next();
  };
  asio::steady_timer timer(io);
  std::function<void()> tick = [&] {
    if (ended) return;
    if (interrupted()) {  // the server stops
      ended = true;
      ws.async_close(websocket::close_code::going_away, [&](boost::system::error_code) { io.stop(); });
      return;
    }
    bool running = true;
    for (const auto& e : follower.poll(&running)) send(e);
    // Said once per disappearance; the stream stays: the lab may come back (an `up` of that name).
    if (!running && !gone) send({{"kind", "gone"}, {"lab", lab}});
    gone = !running;
    timer.expires_after(std::chrono::milliseconds(static_cast<long>(interval_s * 1000)));
    timer.async_wait([&](boost::system::error_code e) {
      if (!e) tick();
    });
  };
  beast::flat_buffer in;
  std::function<void()> read = [&] {
    ws.async_read(in, [&](boost::system::error_code e, size_t) {
      if (e) {  // closed by the client (Beast has answered its close), timed out, or gone
        ended = true;
        io.stop();
        return;
      }
      in.consume(in.size());  // the stream ignores what clients send
      read();
    });
  };
  // The page draws the graph first; events then say what changed.
  send({{"kind", "hello"}, {"lab", lab}});
  tick();
  read();
  io.run();
}

void session(tcp::socket socket, Api& api, const ServerOptions& o) {
  struct Count {
    Count() { ++g_connections; }
    ~Count() { --g_connections; }
  } count;
  // Sync reads have no Beast timeout: an idle or stalled client frees its thread after 30 s.
  timeval tv{30, 0};
  ::setsockopt(socket.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  beast::flat_buffer buffer;
  boost::system::error_code ec;
  while (true) {
    http::request_parser<http::string_body> parser;
    parser.body_limit(kMaxBody);
    parser.header_limit(16 * 1024);
    http::read(socket, buffer, parser, ec);
    if (ec == http::error::end_of_stream || ec == asio::error::connection_reset) break;
    if (ec == http::error::body_limit) {
      http::write(socket, to_beast(error(413, "the body is larger than " +
                                                  std::to_string(kMaxBody) + " bytes"),
                                   11, false),
                  ec);
      break;
    }
    if (ec) {
      if (ec != asio::error::would_block && ec != asio::error::timed_out &&
          ec != asio::error::eof)
        http::write(socket, to_beast(error(400, "malformed HTTP request: " + ec.message()), 11, false),
                    ec);
      break;
    }
    auto req = parser.release();
    if (g_connections > o.max_connections) {
      http::write(socket, to_beast(error(503, "too many connections"), req.version(), false), ec);
      break;
    }
    if (websocket::is_upgrade(req)) {
      Api::WebSocketTarget to;
      if (auto refused = api.check_websocket(to_request(req), &to)) {
        http::write(socket, to_beast(*refused, req.version(), false), ec);
        break;
      }
      if (to.kind == "terminal") {
        // A terminal may sit idle for hours; only the event stream's pings bound idleness.
        timeval none{0, 0};
        ::setsockopt(socket.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &none, sizeof none);
        run_terminal(std::move(socket), req, o.twin_program, to.lab, to.node);
        return;
      }
      stream_events(std::move(socket), req, to.lab, o.event_interval_s);
      return;
    }
    Response r = api.handle(to_request(req));
    bool keep = req.keep_alive();
    http::write(socket, to_beast(r, req.version(), keep), ec);
    if (ec || !keep) break;
  }
  socket.shutdown(tcp::socket::shutdown_send, ec);
}

}  // namespace

Result<void> serve(const ServerOptions& o, Api& api, bool has_token,
                   const std::function<void(const std::string&)>& on_listening) {
  boost::system::error_code ec;
  auto address = asio::ip::make_address(o.address, ec);
  if (ec) return usage_error("--listen: '" + o.address + "' is not an IP address");
  if (!address.is_loopback() && !has_token)
    return usage_error("--listen " + o.address +
                       " is not a loopback address: anyone who reaches it could run commands as "
                       "root in the lab's nodes; give --token-file FILE (every request then needs "
                       "its token) or listen on 127.0.0.1");
  asio::io_context ctx;
  tcp::acceptor acceptor(ctx);
  tcp::endpoint ep(address, static_cast<unsigned short>(o.port));
  acceptor.open(ep.protocol(), ec);
  if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(ep, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec)
    return env_error("cannot listen on " + o.address + ":" + std::to_string(o.port) + ": " +
                     ec.message());
  auto bound = acceptor.local_endpoint();
  std::string where = (bound.address().is_v6() ? "[" + bound.address().to_string() + "]"
                                               : bound.address().to_string()) +
                      ":" + std::to_string(bound.port());
  if (on_listening) on_listening(where);
  // Waits for a connection at most 200 ms at a time, so that SIGINT/SIGTERM (a flag) ends the
  // loop promptly without delaying any accept.
  while (!interrupted()) {
    pollfd pfd{acceptor.native_handle(), POLLIN, 0};
    if (::poll(&pfd, 1, 200) <= 0) continue;
    tcp::socket socket(ctx);
    acceptor.accept(socket, ec);
    if (ec) continue;
    std::thread([s = std::move(socket), &api, o]() mutable { session(std::move(s), api, o); })
        .detach();
  }
  return {};
}

}  // namespace twin::serve
