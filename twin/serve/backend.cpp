#include "twin/serve/backend.hpp"

#include <signal.h>

#include <algorithm>
#include <filesystem>

#include "twin/core/util.hpp"
#include "twin/drivers/registry.hpp"
#include "twin/engine/images.hpp"
#include "twin/engine/lab.hpp"
#include "twin/engine/live.hpp"
#include "twin/graph/graph.hpp"
#include "twin/proc/runner.hpp"
#include "twin/state/journal.hpp"
#include "twin/state/state.hpp"

namespace twin::serve {
namespace fs = std::filesystem;

namespace {

// An engine error as the API's: a lab that is not running is 404.
Response from_error(const Error& e, const std::string& lab) {
  if (e.kind == ErrorKind::kUsage && !fs::is_directory(state::lab_dir(lab)))
    return error(404, "lab '" + lab + "' is not running");
  return error(e.kind == ErrorKind::kUsage ? 400 : 500, e.message);
}

}  // namespace

SystemBackend::SystemBackend(std::string self, std::string jobs_root)
    : self_(std::move(self)), jobs_root_(std::move(jobs_root)) {}

SystemBackend::~SystemBackend() {
  std::lock_guard lock(mu_);
  for (auto& j : jobs_) {
    {
      std::lock_guard jl(j->mu);
      if (j->view.state == "running" && j->pid > 0) ::kill(j->pid, SIGTERM);
    }
    if (j->thread.joinable()) j->thread.join();
    // What a job was sent goes with the server, except an `up`'s: its lab records the
    // topology's path (plan.topology_file) and may outlive the server.
    std::error_code ec;
    if (j->view.kind != "up") std::filesystem::remove_all(jobs_root_ + "/" + j->view.id, ec);
  }
  std::error_code ec;
  std::filesystem::remove(jobs_root_, ec);  // only when nothing is left in it
}

std::optional<nlohmann::json> SystemBackend::images(Response* err) {
  proc::SystemRunner runner;
  auto cat = engine::image_catalog(runner, "");
  if (!cat) {
    *err = error(500, cat.error().message);
    return std::nullopt;
  }
  return *cat;
}

nlohmann::json SystemBackend::labs() {
  nlohmann::json running = nlohmann::json::array();
  for (const auto& lab : state::list_labs()) {
    nlohmann::json l{{"name", lab}};
    if (auto st = state::load_state(lab)) {
      l["status"] = st->status;
      l["created_at"] = st->created_at;
      l["nodes"] = st->plan.nodes.size();
      l["links"] = st->plan.links.size();
      l["topology"] = st->plan.topology_file;
    } else {
      l["status"] = "unreadable";
    }
    running.push_back(l);
  }
  return {{"running", running}, {"history", state::labs_with_history()}};
}

std::optional<nlohmann::json> SystemBackend::lab_status(const std::string& lab, Response* err) {
  auto s = engine::status(lab);
  if (!s) return *err = from_error(s.error(), lab), std::nullopt;
  return *s;
}

std::optional<nlohmann::json> SystemBackend::lab_graph(const std::string& lab, Response* err) {
  auto snap = engine::snapshot(lab);
  if (!snap) return *err = from_error(snap.error(), lab), std::nullopt;
  auto g = engine::live_graph(lab, *snap);
  if (!g) return *err = from_error(g.error(), lab), std::nullopt;
  return graph::to_json(*g);
}

std::optional<std::string> SystemBackend::lab_graph_text(const std::string& lab,
                                                         const std::string& format,
                                                         Response* err) {
  auto snap = engine::snapshot(lab);
  if (!snap) return *err = from_error(snap.error(), lab), std::nullopt;
  auto g = engine::live_graph(lab, *snap);
  if (!g) return *err = from_error(g.error(), lab), std::nullopt;
  if (format == "mermaid") return graph::to_mermaid(*g);
  std::string dot = graph::to_dot(*g);
  if (format == "dot") return dot;
  proc::SystemRunner runner;
  auto r = runner.run({{"dot", "-Tsvg"}, dot, std::chrono::seconds(60)});
  if (!r || r->exit_code != 0)
    return *err = error(500, "Graphviz's dot -Tsvg failed: " +
                                 (r ? trim_end(r->err) : r.error().message)),
           std::nullopt;
  return r->out;
}

std::optional<nlohmann::json> SystemBackend::node_detail(const std::string& lab,
                                                         const std::string& node, Response* err) {
  auto st = state::load_state(lab);
  if (!st) return *err = from_error(st.error(), lab), std::nullopt;
  const plan::Node* n = st->plan.find(node);
  if (!n) return *err = error(404, "lab " + lab + " has no node '" + node + "'"), std::nullopt;
  nlohmann::json j{{"lab", lab},
                   {"name", n->name},
                   {"kind", topology::to_string(n->kind)},
                   {"backend", topology::to_string(n->backend)},
                   {"asn", n->asn},
                   {"router_id", n->router_id},
                   {"loopbacks", n->loopbacks},
                   {"daemons", n->daemons},
                   {"config_generated", n->config_generated}};
  const auto& driver = drivers::driver_for(*n);
  nlohmann::json ports = nlohmann::json::array();
  auto table = driver.port_table(*n);
  for (const auto& i : n->interfaces) {
    nlohmann::json p{{"name", i.name},
                     {"peer", i.peer_node + ":" + i.peer_interface},
                     {"mtu_planned", i.mtu},
                     {"addresses", i.addresses},
                     {"intended_up", i.up}};
    // A member port of a LAN segment: the bridge, and the members it reaches across it.
    if (const plan::Node* seg = plan::segment_of(st->plan, i)) {
      p["segment"] = seg->name;
      nlohmann::json l2 = nlohmann::json::array();
      for (const auto& peer : plan::l2_peers(st->plan, *n, i))
        l2.push_back(peer.node + ":" + peer.interface);
      p["segment_peers"] = l2;
    }
    if (table)
      for (const auto& l : *table)
        if (l.value("ifname", "") == i.name) {
          p["operstate"] = l.value("operstate", "?");
          p["mtu"] = l.value("mtu", 0);
        }
    ports.push_back(p);
  }
  j["interfaces"] = ports;
  if (auto snap = engine::snapshot(lab)) {
    nlohmann::json sessions = nlohmann::json::array();
    for (const auto& s : snap->sessions)
      if (s.node == n->name)
        sessions.push_back({{"protocol", s.protocol},
                            {"interface", s.interface},
                            {"peer", s.peer_node},
                            {"state", s.state},
                            {"up", s.up}});
    j["sessions"] = sessions;
    if (auto g = engine::live_graph(lab, *snap)) {
      nlohmann::json fails = nlohmann::json::array();
      for (const auto& gn : g->nodes)
        if (gn.name == n->name)
          for (const auto& f : gn.failures) fails.push_back(graph::to_json(f));
      for (const auto& gl : g->links)
        if (gl.a == n->name || gl.b == n->name)
          for (const auto& f : gl.failures) {
            auto fj = graph::to_json(f);
            fj["link"] = gl.a + ":" + gl.a_interface;
            fails.push_back(fj);
          }
      j["failing_tests"] = fails;
      nlohmann::json causes = nlohmann::json::array();
      for (const auto& c : g->validation.causes)
        if (std::find(c.nodes.begin(), c.nodes.end(), n->name) != c.nodes.end())
          causes.push_back({{"rule", c.rule}, {"cause", c.text}, {"evidence", c.evidence}});
      j["likely_causes"] = causes;
      j["validation"] = graph::to_json(*g)["validation"];
    }
  }
  // The FIB as FRR's zebra has it: prefix -> protocol and next hops (FRR's `show ip route json`).
  if (n->kind == topology::NodeKind::kFrr) {
    nlohmann::json routes = nlohmann::json::array();
    for (const char* cmd : {"show ip route json", "show ipv6 route json"}) {
      auto r = driver.frr_json(*n, "zebra", cmd, nullptr);
      if (!r || !r->is_object()) continue;
      for (const auto& [prefix, entries] : r->items()) {
        if (!entries.is_array() || entries.empty()) continue;
        const auto& e = entries[0];
        nlohmann::json hops = nlohmann::json::array();
        for (const auto& h : e.value("nexthops", nlohmann::json::array()))
          hops.push_back(h.value("interfaceName", h.value("ip", "")));
        routes.push_back({{"prefix", prefix},
                          {"protocol", e.value("protocol", "")},
                          {"installed", e.value("installed", false)},
                          {"nexthops", hops}});
      }
    }
    j["routes"] = routes;
  }
  return j;
}

std::optional<nlohmann::json> SystemBackend::history(const std::string& lab, uint64_t after,
                                                     Response* err) {
  auto j = state::journal_read(lab);
  if (!j) return *err = error(400, j.error().message), std::nullopt;
  nlohmann::json ev = nlohmann::json::array();
  for (auto& e : j->events)
    if (e.value("seq", uint64_t{0}) > after) ev.push_back(std::move(e));
  return nlohmann::json{{"lab", lab}, {"events", ev}};
}

std::optional<nlohmann::json> SystemBackend::report(const std::string& lab,
                                                    const std::string& name, Response* err) {
  auto r = state::journal_report(lab, "reports/" + name);
  if (!r)
    return *err = error(r.error().kind == ErrorKind::kUsage ? 400 : 404, r.error().message),
           std::nullopt;
  return *r;
}

std::optional<Response> SystemBackend::write_files(const std::string& dir, const Files& files) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return error(500, "cannot create " + dir + ": " + ec.message());
  for (const auto& [name, content] : files) {
    fs::create_directories(fs::path(dir + "/" + name).parent_path(), ec);
    if (auto w = write_file(dir + "/" + name, content); !w) return error(500, w.error().message);
  }
  return std::nullopt;
}

std::optional<nlohmann::json> SystemBackend::check_topology(const std::string& topology,
                                                            const Files& files,
                                                            const std::string& name,
                                                            Response* err) {
  TempDir tmp;
  if (tmp.path.empty()) return *err = error(500, "cannot create a scratch folder"), std::nullopt;
  Files all = files;
  all["topology.yaml"] = topology;
  if (auto e = write_files(tmp.path, all)) return *err = *e, std::nullopt;
  // The request's folder is the only root (and the image search path): its files may name
  // each other and nothing else, whatever lies above the folder.
  std::vector<std::string> argv{self_,    "plan",         tmp.path + "/topology.yaml",
                                "--json", "--input-root", tmp.path};
  if (!name.empty()) argv.insert(argv.end(), {"--name", name});
  proc::SystemRunner runner;
  auto r = runner.run({argv, "", std::chrono::seconds(60)});
  if (!r) return *err = error(500, r.error().message), std::nullopt;
  auto j = nlohmann::json::parse(r->out, nullptr, false);
  // Diagnostics name the scratch folder; the client knows its files by their relative names.
  auto relative = [&](std::string s) {
    for (size_t p; (p = s.find(tmp.path + "/")) != std::string::npos;)
      s.erase(p, tmp.path.size() + 1);
    return s;
  };
  if (r->exit_code != 0) {
    if (j.is_object() && j.contains("diagnostics")) {
      for (auto& d : j["diagnostics"]) {
        d["file"] = relative(d.value("file", ""));
        for (const char* k : {"message", "hint"})
          if (d.contains(k) && d[k].is_string()) d[k] = relative(d[k].get<std::string>());
      }
      return *err = error(400, relative(j.value("error", "the topology does not load")),
                          j["diagnostics"]),
             std::nullopt;
    }
    return *err = error(r->exit_code == 2 ? 400 : 500, relative(trim_end(r->err))), std::nullopt;
  }
  if (!j.is_object()) return *err = error(500, "twin plan printed no JSON"), std::nullopt;
  return nlohmann::json{{"lab", j.value("lab", "")}};
}

JobView SystemBackend::start_job(const std::string& kind, const std::string& lab,
                                 const std::vector<std::string>& args, const Files& files) {
  auto job = std::make_unique<Job>();
  std::string id = std::to_string(next_id_++);
  std::string dir = jobs_root_ + "/" + id;
  job->view.id = id;
  job->view.kind = kind;
  job->view.lab = lab;
  job->view.started_at = now_rfc3339();
  job->view.state = "running";
  std::vector<std::string> argv{self_};
  for (const auto& a : args) argv.push_back(a.starts_with("@") ? dir + "/" + a.substr(1) : a);
  // Commands that read what the request sent: its folder is their only root.
  if (kind == "up" || kind == "run" || kind == "apply")
    argv.insert(argv.end(), {"--input-root", dir});
  job->view.argv = argv;
  if (auto e = write_files(dir, files)) {
    job->view.state = "failed";
    job->view.progress.push_back(nlohmann::json::parse(e->body)["error"]["message"]);
    job->view.ended_at = now_rfc3339();
    std::lock_guard lock(mu_);
    jobs_.push_back(std::move(job));
    return jobs_.back()->view;
  }
  Job* j = job.get();
  {
    std::lock_guard lock(mu_);
    // The server remembers the last kMaxJobs; the oldest ended ones are forgotten (their
    // folders stay on disk).
    while (jobs_.size() >= kMaxJobs) {
      auto old = std::find_if(jobs_.begin(), jobs_.end(), [](const auto& x) {
        std::lock_guard l(x->mu);
        return x->view.state != "running";
      });
      if (old == jobs_.end()) break;
      if ((*old)->thread.joinable()) (*old)->thread.join();
      jobs_.erase(old);
    }
    jobs_.push_back(std::move(job));
  }
  j->thread = std::thread([j, argv, dir] {
    proc::Command c{argv, "", std::chrono::hours(2)};
    // The server's own SIGTERM reaches the job through the destructor's SIGTERM, never through
    // the interrupt flag: an interrupted job cleans up its lab itself.
    c.cancellable = false;
    c.on_start = [j](int pid) {
      std::lock_guard l(j->mu);
      j->pid = pid;
      if (j->cancel_requested) ::kill(pid, SIGTERM);
    };
    c.on_err_line = [j](const std::string& line) {
      std::lock_guard l(j->mu);
      j->view.progress.push_back(line);
    };
    proc::SystemRunner runner;
    auto r = runner.run(c);
    std::lock_guard l(j->mu);
    j->view.ended_at = now_rfc3339();
    if (!r) {
      j->view.state = "failed";
      j->view.progress.push_back(r.error().message);
      return;
    }
    j->view.exit_code = r->exit_code;
    // Kept on disk and checked once here (a SAX pass, no document built); served as it is.
    if (nlohmann::json::accept(r->out) && write_file(dir + "/result.json", r->out))
      j->view.result_file = dir + "/result.json";
    j->view.state = j->cancel_requested ? "cancelled" : r->exit_code == 0 ? "done" : "failed";
  });
  std::lock_guard l(j->mu);
  return j->view;
}

std::vector<JobView> SystemBackend::jobs() {
  std::vector<JobView> out;
  std::lock_guard lock(mu_);
  for (auto& j : jobs_) {
    std::lock_guard l(j->mu);
    out.push_back(j->view);
  }
  return out;
}

std::optional<JobView> SystemBackend::job(const std::string& id) {
  std::lock_guard lock(mu_);
  for (auto& j : jobs_)
    if (j->view.id == id) {
      std::lock_guard l(j->mu);
      return j->view;
    }
  return std::nullopt;
}

bool SystemBackend::cancel_job(const std::string& id) {
  std::lock_guard lock(mu_);
  for (auto& j : jobs_)
    if (j->view.id == id) {
      std::lock_guard l(j->mu);
      if (j->view.state != "running" || j->cancel_requested) return false;
      j->cancel_requested = true;
      // Exactly the process this job started; it stops like on Ctrl-C (cleans up its lab).
      if (j->pid > 0) ::kill(j->pid, SIGTERM);
      return true;
    }
  return false;
}

bool SystemBackend::running(const std::string& lab, const std::string& node) {
  auto st = state::load_state(lab);
  return st && (node.empty() || st->plan.find(node) != nullptr);
}

std::optional<nlohmann::json> SystemBackend::exec(const std::string& lab, const std::string& node,
                                                  const std::vector<std::string>& command,
                                                  double timeout_s, Response* err) {
  auto st = state::load_state(lab);
  if (!st) return *err = from_error(st.error(), lab), std::nullopt;
  if (!st->plan.find(node))
    return *err = error(404, "lab " + lab + " has no node '" + node + "'"), std::nullopt;
  std::vector<std::string> argv{self_, "exec", "--lab", lab, node, "--"};
  argv.insert(argv.end(), command.begin(), command.end());
  proc::SystemRunner runner;
  auto r = runner.run({argv, "", std::chrono::milliseconds(static_cast<long>(timeout_s * 1000))});
  if (!r) return *err = error(504, r.error().message), std::nullopt;
  // A reply stays a reply: output beyond 1 MiB per stream is cut (JSON escaping can grow it
  // several times); `twin exec` or a terminal is the way to read more.
  constexpr size_t kMaxOutput = 1u << 20;
  bool cut = false;
  for (std::string* s : {&r->out, &r->err})
    if (s->size() > kMaxOutput) {
      s->resize(kMaxOutput);
      *s += "\n[twin: output cut at 1 MiB]\n";
      cut = true;
    }
  return nlohmann::json{{"exit_code", r->exit_code}, {"stdout", r->out}, {"stderr", r->err},
                        {"truncated", cut}};
}

}  // namespace twin::serve
