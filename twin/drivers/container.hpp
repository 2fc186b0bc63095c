#pragma once
// Container nodes (backend container, driver container-frr): the node's FRR comes from an OCI
// image run by podman (Debian 12's, rootful, no systemd: DESIGN.md §4b), joined to the node's
// network namespace, which twin makes and wires as for any namespace node. The container is
// the node's file system: the image's /usr/lib/frr, vtysh, frr-reload.py and /etc, with the
// node's run folder bind-mounted at the same path (and over /etc/frr and /var/run/frr). Its
// own process only keeps it alive (`sleep infinity`, the image's CMD); twin starts the node's
// daemons inside it (proc::Command::mount_ns) in the lab's cgroup, as for a namespace node, so
// PIDs, the restore ladder, process health and `down` work the same. Internal to drivers/.
//
// podman is driven through its CLI with JSON output (`--format json`), through the runner
// (proc::ProcessRunner: unit tests answer with recorded output), under twin's own settings
// file (CONTAINERS_CONF, never the host's /etc/containers).
#include <optional>
#include <string>
#include <vector>

#include "twin/drivers/driver.hpp"
#include "twin/drivers/podman_api.hpp"

namespace twin::drivers {

// twin's podman folder is /var/lib/twin/podman ($TWIN_PODMAN_DIR moves it): its settings file
// and the probes of images (probe_image).
// twin's podman settings (DESIGN.md §4b: runc, cgroupfs, file events logger, ulimits root may
// set here), written when missing or different. Returns its path. Errors: kHarness.
Result<std::string> podman_conf();
// The labels of a lab's containers (kLabLabel, kNodeLabel) are podman_api.hpp's.
// The label twin's own images carry with the FRR version their zebra reported when built.
inline constexpr const char* kFrrVersionLabel = "org.twin.frr-version";

// `podman <args>` under twin's settings, as a runner command.
proc::Command podman_command(const std::vector<std::string>& args,
                             std::chrono::milliseconds timeout = std::chrono::seconds(60));

// An image as podman lists it.
struct ImageInfo {
  std::string id;                  // full id
  std::vector<std::string> names;  // localhost/twin-frr:10.3 ...
  int64_t bytes = 0;
  std::string frr_version;  // the org.twin.frr-version label, "" without one
  std::string suite;        // the org.twin.suite label (twin's images: the Debian suite)
};
// Parses `podman images --format json` (podman 4.3). Errors: not that JSON (kHarness).
Result<std::vector<ImageInfo>> parse_podman_images(const std::string& json_text);
// The images present (podman images). Errors: podman missing (kEnvironment), failing.
Result<std::vector<ImageInfo>> list_images(proc::ProcessRunner& runner);
// The image `ref` names among `images`: by full name, by name without the "localhost/" prefix,
// or by id (prefix); nullptr when none.
const ImageInfo* find_image(const std::vector<ImageInfo>& images, const std::string& ref);

// What an image's FRR is, read from the image itself: its zebra's version and user frr's ids.
struct ImageProbe {
  std::string frr_version;  // "10.3", "8.4.4"
  int frr_uid = -1;
  int frr_gid = -1;
};
// Parses the probe's output: `id -u frr`, `id -g frr`, then `zebra --version`'s first line.
Result<ImageProbe> parse_image_probe(const std::string& out);
// Runs the probe in a throw-away container of image `id` (no network), cached per image id under
// /var/lib/twin/podman/probes (an image id names its content). Errors: the image has no FRR or
// no user frr (kEnvironment, naming the image).
Result<ImageProbe> probe_image(proc::ProcessRunner& runner, const std::string& id,
                               const std::string& ref);

// The `podman run` arguments that start node `n`'s container (detached, named n.container.name,
// labelled with the lab and node, in the node's network namespace and the machine's PID
// namespace, the run folder bound at the
// same path and over /etc/frr and /var/run/frr, the capabilities FRR needs: NET_ADMIN, NET_RAW,
// SYS_ADMIN — without SYS_ADMIN zebra exits).
std::vector<std::string> container_run_args(const std::string& lab, const plan::Node& n);

// Preflight of container nodes: podman present, settings written, each node's image present
// (a node whose image_id plan::resolve_images set is taken as found; the others are looked up in
// `podman images`) and probed (completes n.container: image_id, frr_version, frr_uid/gid; a release
// with mgmtd gets it first in n.daemons). Errors: kEnvironment naming the node, the image and how
// to get it (tools/build-images.sh, `twin images`).
Result<void> container_preflight(std::vector<plan::Node*>& nodes, proc::ProcessRunner& runner);
// Starts `podman system service` on the lab's socket (<lab dir>/podman.sock) in the lab's
// cgroup, recorded as the lab's process "podman-service" (node ""), so create_containers speaks
// podman's API (podman_api.hpp) rather than starting one podman process a container. Returns at
// once: the service reads its settings and storage while twin makes namespaces and links.
// Errors: it could not be started (kHarness).
Result<void> start_podman_service(BuildContext& ctx);
// Once the nodes' namespaces exist, when `up` started podman's service: records the nodes'
// containers and begins creating them through its API on a thread of their own (kept in
// ctx.begun) while twin wires the links; create_containers joins it. Without the service:
// nothing (create_containers does it all).
Result<void> begin_containers(const std::vector<const plan::Node*>& nodes, BuildContext& ctx);
// Creates and starts the nodes' containers, each recorded (kind "container", its name) before
// it is created; then notes each one's init PID and start time in the record and in
// runtime::container_pid_file. Joins what begin_containers began (podman's API; a service that
// did not answer within 5 s left the work to the CLI, said in ctx.progress), else `podman run`;
// then stops the service, if any. Errors name the node and podman's words.
Result<void> create_containers(const std::vector<const plan::Node*>& nodes, BuildContext& ctx);
// Node `n`'s container made again (the recorded one removed by its name, a new one created and
// recorded as create_containers does, the run folder handed to its user frr): a container that
// is gone (killed outside twin) before the node's daemons start again. Errors: podman's.
Result<void> recreate_container(const plan::Node& n, BuildContext& ctx);
// `down`: removes the lab's recorded containers that carry its label (never another's), in one
// podman call, tried again (after podman's own cleanup, waiting `retry_delay` more each time) up
// to 4 times. Appends problems to `out`, and to out.left the recorded containers still there.
void remove_containers(const state::State& st, proc::ProcessRunner& runner, Teardown& out,
                       std::chrono::milliseconds retry_delay = std::chrono::milliseconds(250));
// Lines of `config` (a running configuration) that node `n`'s image refuses, by its own parser
// (`vtysh -C` in a throw-away container of n.container.image_id, no network): (line, FRR's
// words); empty when it parses. Errors: podman failing (kHarness).
Result<std::vector<std::pair<int, std::string>>> check_config_in_image(proc::ProcessRunner& runner,
                                                                       const plan::Node& n,
                                                                       const std::string& config);
// Node `n`'s run folder and everything in it handed to its image's user frr (its image changed,
// and with it user frr's ids). Errors: kHarness naming the file.
Result<void> adopt_run_dir(const plan::Node& n);

// The container's own process: running, or gone (then the node's FRR has no file system).
state::ProcessHealth container_health(const plan::Node& n,
                                      const std::vector<state::Resource>& recorded);

}  // namespace twin::drivers
