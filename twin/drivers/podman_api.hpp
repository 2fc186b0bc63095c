#pragma once
// podman's REST API (libpod v4; podman's documented remote interface besides its CLI), spoken
// over the unix socket of a `podman system service` that twin starts in the lab's cgroup for
// the length of one `up` (container.hpp: start_podman_service). Why not the CLI alone: each
// `podman run` is a new podman process that reads its settings and storage before it does
// anything; the service reads them once. Measured here (podman 4.3.1, 2 vCPUs, idle): create
// 28 ms + start 93 ms by the API against 156 ms for `podman run -d`; DESIGN.md §4b: 225 vs 362
// ms per create+start, medians, on a loaded machine. Internal to drivers/.
#include <chrono>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "twin/core/error.hpp"
#include "twin/plan/plan.hpp"

namespace twin::drivers {

// The label every container of a lab carries (org.twin.lab=<lab>): how leftovers are found.
inline constexpr const char* kLabLabel = "org.twin.lab";
// The label naming the node a container runs (org.twin.node=<node>).
inline constexpr const char* kNodeLabel = "org.twin.node";

struct HttpReply {
  int status = 0;    // HTTP status (201 created, 204 started, 404 no such container, ...)
  std::string body;  // podman's JSON ({"cause","message","response"} on an error status)
};

// The seam: unit tests answer with recorded replies.
class PodmanApi {
 public:
  virtual ~PodmanApi() = default;
  // One HTTP/1.1 request (`target` such as "/v4.0.0/libpod/containers/create", `body` JSON or
  // ""). Errors (kHarness): the socket does not answer, or no whole reply within the API's
  // timeout. A status that is not 2xx is a reply, not an error: callers read podman's message.
  virtual Result<HttpReply> request(const std::string& method, const std::string& target,
                                    const std::string& body) const = 0;
};

// The API at unix socket `path`, one connection per request (safe to use from several threads
// at once), each request given at most `timeout`.
std::unique_ptr<PodmanApi> socket_api(std::string path, std::chrono::milliseconds timeout);

// The API path prefix: podman 4.x answers every v4 path; 4.0.0 is the oldest release whose
// libpod create takes this spec.
inline constexpr const char* kLibpod = "/v4.0.0/libpod";

// The libpod create spec (podman's SpecGenerator JSON) of node `n`'s container: the same
// container as container_run_args' `podman run` (name, labels, hostname, the node's network
// namespace by path, the machine's PID namespace, NET_ADMIN/NET_RAW/SYS_ADMIN, the run folder bound
// at its own path and over /etc/frr and /var/run/frr, `sleep infinity` as its process).
nlohmann::json container_spec(const std::string& lab, const plan::Node& n);

// Whether the service answers GET /_ping ("OK") before `deadline`, asked every 10 ms.
bool api_ready(const PodmanApi& api, std::chrono::steady_clock::time_point deadline);

// Creates and starts the container of `spec` and returns its process's PID (from its
// inspection). Errors (kHarness) carry podman's own message and the step that failed.
Result<int> api_run_container(const PodmanApi& api, const nlohmann::json& spec);

}  // namespace twin::drivers
