#include "twin/serve/server.hpp"

#include <poll.h>
#include <sys/socket.h>

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
#include "twin/serve/websocket.hpp"

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
  auto accepted = accept_websocket(std::move(socket), upgrade, io, std::chrono::seconds(30));
  if (!accepted) return;
  WebSocket& ws = *accepted;
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
  // Asynchronous on this thread's own io_context, so that every read and write has a deadline:
  // a client that sends nothing, or a byte at a time, loses its connection (and frees its
  // thread and its place among max_connections) after request_timeout_s.
  asio::io_context io;
  boost::system::error_code ec;
  auto protocol = socket.local_endpoint(ec).protocol();
  if (ec) return;
  tcp::socket mine(io);
  mine.assign(protocol, socket.release(), ec);
  if (ec) return;
  beast::tcp_stream stream(std::move(mine));
  const auto deadline = std::chrono::seconds(o.request_timeout_s);
  auto reply = [&](const Response& r, unsigned version, bool keep) {
    auto res = to_beast(r, version, keep);
    boost::system::error_code wec;
    stream.expires_after(deadline);
    http::async_write(stream, res, [&](boost::system::error_code e, size_t) { wec = e; });
    io.restart();
    io.run();
    return !wec;
  };
  beast::flat_buffer buffer;
  while (true) {
    http::request_parser<http::string_body> parser;
    parser.body_limit(kMaxBody);
    parser.header_limit(16 * 1024);
    boost::system::error_code rec;
    stream.expires_after(deadline);
    http::async_read(stream, buffer, parser, [&](boost::system::error_code e, size_t) { rec = e; });
    io.restart();
    io.run();
    if (rec == http::error::end_of_stream || rec == asio::error::connection_reset ||
        rec == asio::error::eof || rec == beast::error::timeout)
      break;
    if (rec == http::error::body_limit) {
      reply(error(413, "the body is larger than " + std::to_string(kMaxBody) + " bytes"), 11, false);
      break;
    }
    if (rec == http::error::header_limit) {
      reply(error(431, "the request's headers are larger than 16 KiB"), 11, false);
      break;
    }
    if (rec) {
      reply(error(400, "malformed HTTP request: " + rec.message()), 11, false);
      break;
    }
    auto req = parser.release();
    if (g_connections > o.max_connections) {
      reply(error(503, "too many connections (at most " + std::to_string(o.max_connections) + ")"),
            req.version(), false);
      break;
    }
    if (websocket::is_upgrade(req)) {
      Api::WebSocketTarget to;
      if (auto refused = api.check_websocket(to_request(req), &to)) {
        reply(*refused, req.version(), false);
        break;
      }
      // From here the stream keeps its own deadlines (keep-alive pings): an idle terminal stays.
      stream.expires_never();
      tcp::socket upgraded = stream.release_socket();
      if (to.kind == "terminal")
        run_terminal(std::move(upgraded), req, o.twin_program, to.lab, to.node);
      else
        stream_events(std::move(upgraded), req, to.lab, o.event_interval_s);
      return;
    }
    Response r = api.handle(to_request(req));
    bool keep = req.keep_alive();
    if (!reply(r, req.version(), keep) || !keep) break;
  }
  stream.socket().shutdown(tcp::socket::shutdown_send, ec);
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
