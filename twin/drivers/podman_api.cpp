#include "twin/drivers/podman_api.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>
#include <thread>

#include "twin/core/util.hpp"

namespace twin::drivers {

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using local = asio::local::stream_protocol;

class SocketApi final : public PodmanApi {
 public:
  SocketApi(std::string path, std::chrono::milliseconds timeout)
      : path_(std::move(path)), timeout_(timeout) {}

  Result<HttpReply> request(const std::string& method, const std::string& target,
                            const std::string& body) const override {
    asio::io_context io;
    local::socket sock(io);
    http::request<http::string_body> req(http::string_to_verb(method), target, 11);
    req.set(http::field::host, "podman");  // HTTP/1.1 needs one; the socket decides where
    if (!body.empty()) req.set(http::field::content_type, "application/json");
    req.body() = body;
    req.prepare_payload();
    http::response<http::string_body> res;
    beast::flat_buffer buf;
    boost::system::error_code failed;
    const char* stage = "connecting to";
    bool done = false;
    // Asynchronous, so that one deadline covers connect, write and read (run_for).
    sock.async_connect(local::endpoint(path_), [&](boost::system::error_code ec) {
      if (ec) {
        failed = ec;
        return;
      }
      stage = "writing to";
      http::async_write(sock, req, [&](boost::system::error_code ec, size_t) {
        if (ec) {
          failed = ec;
          return;
        }
        stage = "reading from";
        http::async_read(sock, buf, res, [&](boost::system::error_code ec, size_t) {
          failed = ec;
          done = !ec;
        });
      });
    });
    io.run_for(timeout_);
    const std::string what = method + " " + target;
    if (failed)
      return harness_error(std::string(stage) + " podman's API at " + path_ + " (" + what +
                           "): " + failed.message());
    if (!done)
      return harness_error("podman's API at " + path_ + " gave no reply to " + what + " within " +
                           std::to_string(timeout_.count()) + " ms");
    return HttpReply{static_cast<int>(res.result_int()), std::move(res.body())};
  }

 private:
  std::string path_;
  std::chrono::milliseconds timeout_;
};

// podman's words from an error reply ({"cause", "message", "response"}), else the body.
std::string podman_message(const HttpReply& r) {
  auto j = nlohmann::json::parse(r.body, nullptr, false);
  if (j.is_object() && j.contains("message") && j["message"].is_string())
    return j["message"].get<std::string>();
  return trim_end(r.body);
}

Result<HttpReply> expect(const PodmanApi& api, const std::string& method, const std::string& target,
                         const std::string& body, const std::string& what) {
  auto r = api.request(method, target, body);
  if (!r) return r.error().with_context(what);
  if (r->status < 200 || r->status >= 300)
    return harness_error(what + ": podman's API answered " + std::to_string(r->status) + ": " +
                         podman_message(*r));
  return r;
}

}  // namespace

std::unique_ptr<PodmanApi> socket_api(std::string path, std::chrono::milliseconds timeout) {
  return std::make_unique<SocketApi>(std::move(path), timeout);
}

nlohmann::json container_spec(const std::string& lab, const plan::Node& n) {
  auto bind = [](const std::string& source, const std::string& destination) {
    return nlohmann::json{
        {"type", "bind"}, {"source", source}, {"destination", destination}, {"options", {"rbind"}}};
  };
  return {
      {"name", n.container.name},
      {"image", n.container.image_id.empty() ? n.container.image : n.container.image_id},
      {"labels", {{kLabLabel, lab}, {kNodeLabel, n.name}}},
      {"hostname", n.name},
      {"netns", {{"nsmode", "path"}, {"value", "/run/netns/" + n.netns}}},
      {"pidns", {{"nsmode", "host"}}},
      {"cap_add", {"NET_ADMIN", "NET_RAW", "SYS_ADMIN"}},
      {"mounts",
       {bind(n.run_dir, n.run_dir), bind(n.run_dir, "/etc/frr"), bind(n.run_dir, "/var/run/frr")}},
      // The container's process only keeps it alive; twin starts FRR inside it.
      {"entrypoint", {"/bin/sleep"}},
      {"command", {"infinity"}},
  };
}

bool api_ready(const PodmanApi& api, std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    if (auto r = api.request("GET", "/_ping", ""); r && r->status == 200) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

Result<int> api_run_container(const PodmanApi& api, const nlohmann::json& spec) {
  const std::string name = spec.value("name", "");
  if (auto r = expect(api, "POST", std::string(kLibpod) + "/containers/create", spec.dump(),
                      "creating container " + name);
      !r)
    return r.error();
  const std::string at = std::string(kLibpod) + "/containers/" + name;
  if (auto r = expect(api, "POST", at + "/start", "", "starting container " + name); !r)
    return r.error();
  auto r = expect(api, "GET", at + "/json", "", "inspecting container " + name);
  if (!r) return r.error();
  auto j = nlohmann::json::parse(r->body, nullptr, false);
  int pid = 0;
  if (j.is_object())
    if (auto s = j.find("State"); s != j.end() && s->is_object()) pid = s->value("Pid", 0);
  if (pid <= 0) return harness_error("container " + name + " has no process after its start");
  return pid;
}

}  // namespace twin::drivers
