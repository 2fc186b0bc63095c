#include "twin/drivers/container.hpp"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "twin/core/util.hpp"
#include "twin/drivers/podman_api.hpp"
#include "twin/plan/images.hpp"
#include "twin/runtime/frr.hpp"
#include "twin/runtime/frr_config.hpp"

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace twin::drivers {

namespace {

// twin's podman folder: its settings and the probes of images; $TWIN_PODMAN_DIR moves it.
std::string podman_dir() {
  const char* env = std::getenv("TWIN_PODMAN_DIR");
  return env && *env ? env : "/var/lib/twin/podman";
}

// DESIGN.md §4b, measured on Debian 12's podman 4.3.1 without systemd: crun refuses this
// kernel's hybrid cgroup layout (runc works); the default ulimits are above what root may set
// here; no systemd: cgroupfs and a file events logger.
constexpr const char* kConf =
    "# twin's podman settings (written by twin; edits are overwritten)\n"
    "[containers]\n"
    "default_ulimits = [\"nofile=20000:20000\", \"nproc=32768:32768\"]\n"
    "[engine]\n"
    "runtime = \"runc\"\n"
    "cgroup_manager = \"cgroupfs\"\n"
    "events_logger = \"file\"\n";

std::string conf_path() { return podman_dir() + "/containers.conf"; }

Result<proc::Output> run_podman(proc::ProcessRunner& runner, const std::vector<std::string>& args,
                                const std::string& what, std::chrono::milliseconds timeout = 60s,
                                bool cancellable = true) {
  auto c = podman_command(args, timeout);
  c.cancellable = cancellable;
  auto r = runner.run(c);
  if (!r) return r.error().with_context(what);
  if (r->exit_code != 0)
    return harness_error(what + ": podman exit " + std::to_string(r->exit_code) + ": " +
                         trim_end(r->err.empty() ? r->out : r->err));
  return r;
}

}  // namespace

Result<std::string> podman_conf() {
  std::error_code ec;
  fs::create_directories(podman_dir(), ec);
  if (ec) return harness_error("creating " + podman_dir() + ": " + ec.message());
  std::ifstream in(conf_path());
  std::string have((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (have != kConf)
    if (auto r = write_file(conf_path(), kConf); !r) return r.error();
  return conf_path();
}

proc::Command podman_command(const std::vector<std::string>& args,
                             std::chrono::milliseconds timeout) {
  // CONTAINERS_CONF through env(1): the runner passes twin's environment as it is, and twin
  // does not change its own (other threads read it).
  std::vector<std::string> argv = {"env", "CONTAINERS_CONF=" + conf_path(), "podman"};
  argv.insert(argv.end(), args.begin(), args.end());
  return proc::Command{argv, "", timeout};
}

Result<std::vector<ImageInfo>> parse_podman_images(const std::string& json_text) {
  auto j = nlohmann::json::parse(json_text, nullptr, false);
  if (j.is_discarded() || !j.is_array())
    return harness_error("podman images: expected a JSON list, got: " + json_text.substr(0, 120));
  std::vector<ImageInfo> out;
  for (const auto& e : j) {
    if (!e.is_object()) continue;
    ImageInfo i;
    i.id = e.value("Id", "");
    if (auto n = e.find("Names"); n != e.end() && n->is_array())
      for (const auto& s : *n)
        if (s.is_string()) i.names.push_back(s.get<std::string>());
    i.bytes = e.value("Size", int64_t{0});
    if (auto l = e.find("Labels"); l != e.end() && l->is_object()) {
      i.frr_version = l->value(kFrrVersionLabel, "");
      i.suite = l->value("org.twin.suite", "");
    }
    if (!i.id.empty()) out.push_back(std::move(i));
  }
  return out;
}

Result<std::vector<ImageInfo>> list_images(proc::ProcessRunner& runner) {
  if (auto c = podman_conf(); !c) return c.error();
  auto r = run_podman(runner, {"images", "--format", "json"}, "listing images (podman images)");
  if (!r) return r.error();
  return parse_podman_images(r->out);
}

const ImageInfo* find_image(const std::vector<ImageInfo>& images, const std::string& ref) {
  if (ref.empty()) return nullptr;
  const std::string want = plan::canonical_image_ref(ref);
  for (const auto& i : images)
    for (const auto& n : i.names)
      if (plan::canonical_image_ref(n) == want) return &i;
  for (const auto& i : images)
    if (ref.size() >= 12 && i.id.rfind(ref, 0) == 0) return &i;
  return nullptr;
}

Result<ImageProbe> parse_image_probe(const std::string& out) {
  std::istringstream in(out);
  ImageProbe p;
  std::string uid, gid, version_line;
  std::getline(in, uid);
  std::getline(in, gid);
  std::getline(in, version_line);
  auto number = [](const std::string& s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), ::isdigit) ? std::stoi(s) : -1;
  };
  p.frr_uid = number(trim_end(uid));
  p.frr_gid = number(trim_end(gid));
  // "zebra version 10.3" (FRR's lib/libfrr.c print_version), possibly with a suffix "-dev".
  const std::string marker = "zebra version ";
  if (auto at = version_line.find(marker); at != std::string::npos) {
    std::string v = version_line.substr(at + marker.size());
    size_t end = 0;
    while (end < v.size() && (std::isdigit(static_cast<unsigned char>(v[end])) || v[end] == '.'))
      ++end;
    p.frr_version = v.substr(0, end);
  }
  if (p.frr_uid < 0 || p.frr_gid < 0)
    return env_error("the image has no user frr (id frr printed '" + trim_end(uid) + "')");
  if (p.frr_version.empty())
    return env_error("the image's /usr/lib/frr/zebra reports no version ('" +
                     trim_end(version_line) + "')");
  return p;
}

Result<ImageProbe> probe_image(proc::ProcessRunner& runner, const std::string& id,
                               const std::string& ref) {
  const std::string cache = podman_dir() + "/probes/" + id + ".json";
  if (std::ifstream f(cache); f) {
    auto j = nlohmann::json::parse(f, nullptr, false);
    if (j.is_object() && j.contains("frr_version"))
      return ImageProbe{j.value("frr_version", ""), j.value("frr_uid", -1), j.value("frr_gid", -1)};
  }
  auto r = run_podman(runner,
                      {"run", "--rm", "--network", "none", "--entrypoint", "/bin/sh", id, "-c",
                       "id -u frr; id -g frr; /usr/lib/frr/zebra --version | head -1"},
                      "reading FRR's version in image " + ref);
  if (!r) return r.error();
  auto p = parse_image_probe(r->out);
  if (!p) return Error{p.error().kind, "image " + ref + ": " + p.error().message};
  std::error_code ec;
  fs::create_directories(fs::path(cache).parent_path(), ec);
  nlohmann::json j = {{"frr_version", p->frr_version},
                      {"frr_uid", p->frr_uid},
                      {"frr_gid", p->frr_gid},
                      {"image", ref}};
  (void)write_file(cache, j.dump() + "\n");  // a cache: failing to keep it costs a probe later
  return p;
}

std::vector<std::string> container_run_args(const std::string& lab, const plan::Node& n) {
  return {"run", "--detach", "--name", n.container.name, "--label",
          std::string(kLabLabel) + "=" + lab, "--label", std::string(kNodeLabel) + "=" + n.name,
          "--hostname", n.name, "--network", "ns:/run/netns/" + n.netns,
          // The machine's PID namespace, as a namespace node's: twin's daemons run in it, and
          // `twin exec`'s ps, ss and /proc see them (a PID namespace of the container's own
          // gave those a /proc of its `sleep` only).
          "--pid", "host", "--cap-add", "NET_ADMIN,NET_RAW,SYS_ADMIN", "--volume",
          n.run_dir + ":" + n.run_dir, "--volume", n.run_dir + ":/etc/frr", "--volume",
          n.run_dir + ":/var/run/frr",
          // The container's process only keeps it alive; twin starts FRR inside it.
          "--entrypoint", "/bin/sleep",
          n.container.image_id.empty() ? n.container.image : n.container.image_id, "infinity"};
}

Result<void> container_preflight(std::vector<plan::Node*>& nodes, proc::ProcessRunner& runner) {
  if (nodes.empty()) return {};
  if (::access("/usr/bin/podman", X_OK) != 0)
    return env_error("node " + nodes.front()->name +
                     " runs in a container and podman is missing; run tools/install-deps.sh "
                     "--containers");
  if (auto c = podman_conf(); !c) return c.error();
  // `up` resolved the images against podman's list just before (plan::resolve_images keeps each
  // image's id): the list is read again only for a node without one (an image step's).
  std::vector<ImageInfo> images;
  if (std::any_of(nodes.begin(), nodes.end(),
                  [](const plan::Node* n) { return n->container.image_id.empty(); })) {
    auto listed = list_images(runner);
    if (!listed) return listed.error();
    images = std::move(*listed);
  }
  std::map<std::string, ImageProbe> probes;  // image id -> probe
  for (auto* n : nodes) {
    const ImageInfo known{n->container.image_id, {n->container.image}, 0, "", ""};
    const ImageInfo* img =
        n->container.image_id.empty() ? find_image(images, n->container.image) : &known;
    if (!img) {
      std::string present;
      for (const auto& i : images)
        for (const auto& name : i.names) present += (present.empty() ? "" : ", ") + name;
      return env_error(
          "node " + n->name + ": image " + n->container.image +
          " is not present on this machine (present: " + (present.empty() ? "none" : present) +
          "); tools/build-images.sh builds twin's FRR images from Debian's archives");
    }
    if (!probes.count(img->id)) {
      auto p = probe_image(runner, img->id, n->container.image);
      if (!p) return p.error().with_context("node " + n->name);
      probes[img->id] = *p;
    }
    const ImageProbe& p = probes[img->id];
    n->container.image_id = img->id;
    n->container.frr_version = p.frr_version;
    n->container.frr_uid = p.frr_uid;
    n->container.frr_gid = p.frr_gid;
    // FRR 9.0+ starts mgmtd first: it holds the configuration staticd and others take.
    if (runtime::frr_has_mgmtd(*n) &&
        std::find(n->daemons.begin(), n->daemons.end(), "mgmtd") == n->daemons.end())
      n->daemons.insert(n->daemons.begin(), "mgmtd");
  }
  return {};
}

namespace {

constexpr const char* kServiceName = "podman-service";

std::string service_socket(const std::string& lab) { return state::lab_dir(lab) + "/podman.sock"; }

// The running service's record, or nullptr.
const state::Resource* service_record(const state::State& st) {
  return state::find_process(st.resources, kServiceName, "");
}

// Stops the service (SIGTERM, then SIGKILL after 2 s) and forgets it. Its containers live on
// under their conmon, as after a `podman run`.
void stop_podman_service(BuildContext& ctx) {
  std::vector<state::Resource> keep;
  for (auto& r : ctx.record.take("process", "")) {
    if (r.name != kServiceName) {
      keep.push_back(r);
      continue;
    }
    if (state::process_alive(r.pid, r.start_time)) ::kill(r.pid, SIGTERM);
    auto until = std::chrono::steady_clock::now() + 2s;
    while (state::process_alive(r.pid, r.start_time) && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(5ms);
    if (state::process_alive(r.pid, r.start_time)) ::kill(r.pid, SIGKILL);
  }
  for (auto& r : keep) ctx.record.note(r);
  std::error_code ec;
  fs::remove(service_socket(ctx.record.state().lab), ec);
}

// The nodes' containers through the service's API, up to 16 at once: each one's PID, or the
// error of the first that failed.
Result<std::vector<int>> run_by_api(const std::vector<const plan::Node*>& nodes,
                                    const std::string& lab, const PodmanApi& api) {
  std::vector<int> pids(nodes.size(), 0);
  std::vector<std::optional<Error>> errors(nodes.size());
  parallel_for(nodes.size(), 16, [&](size_t i) {
    auto r = api_run_container(api, container_spec(lab, *nodes[i]));
    if (r)
      pids[i] = *r;
    else
      errors[i] = r.error().with_context("node " + nodes[i]->name + ": starting its container");
  });
  for (const auto& e : errors)
    if (e) return *e;
  return pids;
}

// The nodes' containers through `podman run`, one process each: each one's PID.
Result<std::vector<int>> run_by_cli(const std::vector<const plan::Node*>& nodes,
                                    const std::string& lab, proc::ProcessRunner& runner,
                                    const std::string& cgroup, int parallel) {
  std::vector<proc::Command> cmds;
  for (const auto* n : nodes) {
    cmds.push_back(podman_command(container_run_args(lab, *n)));
    // In the lab's cgroup: a `twin up` killed meanwhile leaves no `podman run` creating a
    // container after `down` looked (down stops the cgroup first, then removes by label).
    cmds.back().cgroup = cgroup;
  }
  // `podman run` mostly waits (storage, runc, conmon): more at once than --parallel's CPU-bound
  // daemon starts, up to 16.
  const int at_once = std::clamp(static_cast<int>(nodes.size()), std::max(1, parallel), 16);
  auto results = proc::run_all(runner, cmds, at_once);
  for (size_t i = 0; i < nodes.size(); ++i) {
    const auto& r = results[i];
    if (!r) return r.error().with_context("node " + nodes[i]->name + ": starting its container");
    if (r->exit_code != 0)
      return harness_error("node " + nodes[i]->name + ": starting its container (podman run " +
                           nodes[i]->container.image + "): " + trim_end(r->err));
  }
  std::vector<std::string> args = {"inspect", "--type", "container", "--format", "json"};
  for (const auto* n : nodes) args.push_back(n->container.name);
  auto r = run_podman(runner, args, "reading the containers' processes (podman inspect)");
  if (!r) return r.error();
  auto j = nlohmann::json::parse(r->out, nullptr, false);
  if (j.is_discarded() || !j.is_array())
    return harness_error("podman inspect: expected a JSON list");
  std::map<std::string, int> pids;
  for (const auto& c : j)
    if (c.is_object()) {
      std::string name = c.value("Name", "");
      if (!name.empty() && name[0] == '/') name.erase(0, 1);
      if (auto s = c.find("State"); s != c.end() && s->is_object()) pids[name] = s->value("Pid", 0);
    }
  std::vector<int> out;
  for (const auto* n : nodes)
    out.push_back(pids.count(n->container.name) ? pids[n->container.name] : 0);
  return out;
}

}  // namespace

Result<void> start_podman_service(BuildContext& ctx) {
  const std::string& lab = ctx.record.state().lab;
  const std::string sock = service_socket(lab);
  std::error_code ec;
  fs::remove(sock, ec);
  proc::Command c = podman_command({"system", "service", "--time=0", "unix://" + sock}, 10s);
  c.detach = true;  // owned by the lab's cgroup from its first instruction, as a daemon is
  c.cgroup = ctx.record.cgroup();
  c.output_file = state::lab_dir(lab) + "/podman-service.log";
  auto r = ctx.runner.run(c);
  if (!r) return r.error().with_context("starting podman's API service");
  if (r->exit_code != 0 || r->pid <= 0)
    return harness_error("starting podman's API service: exit " + std::to_string(r->exit_code));
  ctx.record.note({"process", kServiceName, "", r->pid, process_start_time(r->pid), ""});
  return ctx.record.save();
}

namespace {

// Containers being created while `up` wires the links (begin_containers), joined by
// create_containers.
struct Begun {
  std::string note;  // said once joined: the service did not answer, the CLI made them
  std::future<Result<std::vector<int>>> pids;
};

// The nodes' containers: through the service's API when it answers within 5 s, else podman's
// CLI (with a note).
Result<std::vector<int>> run_containers(const std::vector<const plan::Node*>& nodes,
                                        const std::string& lab, proc::ProcessRunner& runner,
                                        const std::string& cgroup, int parallel,
                                        std::string* note) {
  auto api = socket_api(service_socket(lab), 60s);
  if (api_ready(*api, std::chrono::steady_clock::now() + 5s)) return run_by_api(nodes, lab, *api);
  *note = "podman's API service did not answer within 5 s (its log: " + state::lab_dir(lab) +
          "/podman-service.log): the containers were started with podman's CLI";
  return run_by_cli(nodes, lab, runner, cgroup, parallel);
}

Result<void> record_containers(const std::vector<const plan::Node*>& nodes, BuildContext& ctx) {
  std::vector<state::Resource> rs;
  for (const auto* n : nodes) rs.push_back({"container", n->container.name, n->name, 0, 0, ""});
  return ctx.record.add(rs);  // recorded before created
}

}  // namespace

Result<void> begin_containers(const std::vector<const plan::Node*>& nodes, BuildContext& ctx) {
  if (nodes.empty() || !service_record(ctx.record.state())) return {};
  if (auto r = record_containers(nodes, ctx); !r) return r;
  // Their run folders are bound into them: made here, written by the driver's write_files.
  for (const auto* n : nodes) {
    std::error_code ec;
    fs::create_directories(n->run_dir, ec);
    if (ec) return harness_error("creating " + n->run_dir + ": " + ec.message());
  }
  auto begun = std::make_shared<Begun>();
  begun->pids = std::async(
      std::launch::async,
      [nodes, lab = ctx.record.state().lab, &runner = ctx.runner, cgroup = ctx.record.cgroup(),
       parallel = ctx.settings.parallel,
       note = &begun->note] { return run_containers(nodes, lab, runner, cgroup, parallel, note); });
  ctx.begun["container-frr"] = begun;
  return {};
}

Result<void> create_containers(const std::vector<const plan::Node*>& nodes, BuildContext& ctx) {
  if (nodes.empty()) return {};
  const std::string lab = ctx.record.state().lab;
  // Begun through podman's API while the links were wired (begin_containers, when `up` started
  // the service), else here by its CLI (a restart's or an image step's container). The service
  // goes once the containers run (nothing of the lab needs it later; a no-op without one).
  Result<std::vector<int>> pids = std::vector<int>{};
  std::string note;
  if (auto it = ctx.begun.find("container-frr"); it != ctx.begun.end()) {
    auto begun = std::static_pointer_cast<Begun>(it->second);
    pids = begun->pids.get();
    note = begun->note;
    ctx.begun.erase(it);
  } else {
    if (auto r = record_containers(nodes, ctx); !r) return r;
    pids = run_by_cli(nodes, lab, ctx.runner, ctx.record.cgroup(), ctx.settings.parallel);
  }
  stop_podman_service(ctx);
  if (!note.empty()) ctx.progress(note);
  if (!pids) return pids.error();
  for (size_t i = 0; i < nodes.size(); ++i) {
    const auto* n = nodes[i];
    const int pid = (*pids)[i];
    const uint64_t start = pid > 0 ? process_start_time(pid) : 0;
    if (start == 0)
      return harness_error("node " + n->name + ": container " + n->container.name +
                           " is not running after podman run");
    for (auto& res : ctx.record.take("container", n->name)) {
      res.pid = pid;
      res.start_time = start;
      ctx.record.note(res);
    }
    if (auto w = write_file(runtime::container_pid_file(*n),
                            std::to_string(pid) + " " + std::to_string(start) + "\n");
        !w)
      return w.error();
  }
  return ctx.record.save();
}

Result<void> recreate_container(const plan::Node& n, BuildContext& ctx) {
  // The old one, by the name the lab's record gives it (podman keeps an exited container).
  auto rm = run_podman(ctx.runner, {"rm", "--force", "--time", "0", "--ignore", n.container.name},
                       "removing node " + n.name + "'s stopped container", 60s,
                       /*cancellable=*/false);
  if (!rm) return rm.error();
  (void)ctx.record.take("container", n.name);  // create_containers records the new one
  if (auto r = create_containers({&n}, ctx); !r) return r;
  return adopt_run_dir(n);
}

void remove_containers(const state::State& st, proc::ProcessRunner& runner, Teardown& out,
                       std::chrono::milliseconds retry_delay) {
  std::set<std::string> recorded;
  for (const auto& r : st.resources)
    if (r.kind == "container") recorded.insert(r.name);
  if (recorded.empty()) return;
  if (::access("/usr/bin/podman", X_OK) != 0) {
    out.problems.push_back("podman is missing: cannot remove the lab's containers");
    for (const auto& res : st.resources)
      if (res.kind == "container") out.left.push_back(res);
    return;
  }
  // Only the lab's own: recorded by name and carrying its label. Teardown runs to its end also
  // after an interrupt (an interrupted `up` tears down with the interrupt flag set).
  auto r = run_podman(runner,
                      {"ps", "--all", "--filter", std::string("label=") + kLabLabel + "=" + st.lab,
                       "--format", "json"},
                      "listing the lab's containers", 30s, /*cancellable=*/false);
  if (!r) {  // podman cannot say what exists: every recorded container stays recorded
    out.problems.push_back(r.error().message);
    for (const auto& res : st.resources)
      if (res.kind == "container") out.left.push_back(res);
    return;
  }
  auto j = nlohmann::json::parse(r->out, nullptr, false);
  std::vector<std::string> ids;
  std::set<std::string> present;  // recorded names podman still has
  if (j.is_array())
    for (const auto& c : j) {
      if (!c.is_object()) continue;
      bool ours = false;
      if (auto names = c.find("Names"); names != c.end() && names->is_array())
        for (const auto& nm : *names)
          if (nm.is_string() && recorded.count(nm.get<std::string>())) {
            ours = true;
            present.insert(nm.get<std::string>());
          }
      if (ours) ids.push_back(c.value("Id", ""));
    }
  if (ids.empty()) return;
  // -t 0: the container's process is `sleep`, which has no SIGTERM handler as PID 1.
  std::vector<std::string> args = {"rm", "--force", "--time", "0"};
  args.insert(args.end(), ids.begin(), ids.end());
  // A container whose `podman run` was killed half-way (a killed `up`: down stops the lab's
  // cgroup first) may still hold its mounts for a moment ("device or resource busy"): podman's
  // own cleanup, then the removal again, a few times.
  Result<proc::Output> rm = harness_error("not run");
  for (int attempt = 0; attempt < 4; ++attempt) {
    if (attempt > 0) {
      std::vector<std::string> cleanup = {"container", "cleanup"};
      cleanup.insert(cleanup.end(), ids.begin(), ids.end());
      auto c = podman_command(cleanup, 30s);
      c.cancellable = false;
      (void)runner.run(c);
      std::this_thread::sleep_for(retry_delay * attempt);
    }
    rm = run_podman(runner, args, "removing the lab's containers", 60s, /*cancellable=*/false);
    if (rm) break;
  }
  if (!rm) {
    out.problems.push_back(rm.error().message);
    for (const auto& r : st.resources)
      if (r.kind == "container" && present.count(r.name)) out.left.push_back(r);
  }
}

Result<std::vector<std::pair<int, std::string>>> check_config_in_image(proc::ProcessRunner& runner,
                                                                       const plan::Node& n,
                                                                       const std::string& config) {
  TempDir tmp;
  if (tmp.path.empty()) return harness_error("cannot create a temporary folder");
  // vtysh -C reads vtysh.conf from its config folder: an empty one of ours, not the image's.
  if (auto w = write_file(tmp.path + "/vtysh.conf", "service integrated-vtysh-config\n"); !w)
    return w.error();
  if (auto w = write_file(tmp.path + "/frr.conf", config); !w) return w.error();
  ::chmod(tmp.path.c_str(), 0755);
  ::chmod((tmp.path + "/frr.conf").c_str(), 0644);
  ::chmod((tmp.path + "/vtysh.conf").c_str(), 0644);
  auto r = runner.run(
      podman_command({"run", "--rm", "--network", "none", "--volume",
                      tmp.path + ":/tmp/twin-check:ro", "--entrypoint", "/usr/bin/vtysh",
                      n.container.image_id.empty() ? n.container.image : n.container.image_id,
                      "--config_dir", "/tmp/twin-check", "-C", "-f", "/tmp/twin-check/frr.conf"}));
  if (!r) return r.error().with_context("checking the configuration with " + n.container.image);
  std::vector<std::pair<int, std::string>> out;
  if (r->exit_code == 0) return out;
  out = runtime::vtysh_complaints(r->out + r->err);
  if (out.empty())
    out.emplace_back(
        0, "vtysh -C exit " + std::to_string(r->exit_code) + ": " + trim_end(r->out + r->err));
  return out;
}

Result<void> adopt_run_dir(const plan::Node& n) {
  if (n.container.frr_uid < 0) return harness_error("node " + n.name + ": its image was not read");
  std::error_code ec;
  auto own = [&](const fs::path& p) -> Result<void> {
    if (::lchown(p.c_str(), static_cast<uid_t>(n.container.frr_uid),
                 static_cast<gid_t>(n.container.frr_gid)) != 0)
      return harness_error("chown " + p.string() + ": " + std::strerror(errno));
    return {};
  };
  if (auto r = own(n.run_dir); !r) return r;
  for (auto it = fs::recursive_directory_iterator(n.run_dir, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
    if (auto r = own(it->path()); !r) return r;
  if (ec) return harness_error("reading " + n.run_dir + ": " + ec.message());
  return {};
}

state::ProcessHealth container_health(const plan::Node& n,
                                      const std::vector<state::Resource>& recorded) {
  state::ProcessHealth h;
  h.name = "container " + n.container.name;
  for (const auto& r : recorded)
    if (r.kind == "container") {
      h.pid = r.pid;
      h.running = r.pid > 0 && state::process_alive(r.pid, r.start_time);
      if (!h.running) h.detail = "its process (PID " + std::to_string(r.pid) + ") is gone";
      return h;
    }
  h.detail = "no container recorded";
  return h;
}

}  // namespace twin::drivers
