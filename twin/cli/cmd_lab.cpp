// twin plan / up / down / status / list
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "twin/cli/commands.hpp"
#include "twin/core/diagnostics.hpp"
#include "twin/core/util.hpp"
#include "twin/engine/images.hpp"
#include "twin/engine/lab.hpp"
#include "twin/plan/plan.hpp"
#include "twin/runtime/frr_check.hpp"
#include "twin/runtime/libvirt.hpp"
#include "twin/topology/loader.hpp"
#include "twin/topology/names.hpp"

namespace twin::cli {

int fail(const std::string& message, int code) {
  std::cerr << "twin: " << printable(message, true) << "\n";
  return code;
}

int fail_json(bool json, const std::string& message, int code) {
  if (json)
    std::cout << nlohmann::json{{"schema_version", 1},
                                {"verdict", "error"},
                                {"exit_code", code},
                                {"error", message}}
                     .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
              << "\n";
  return fail(message, code);
}

Result<InputPolicy> input_policy(const InputOptions& o, const std::vector<std::string>& inputs) {
  if (o.input_root.empty()) return InputPolicy::for_inputs(inputs, o.allow_paths);
  std::error_code ec;
  if (!std::filesystem::is_directory(o.input_root, ec))
    return usage_error("--input-root " + o.input_root + ": no such folder");
  auto allowed = InputPolicy::for_inputs({}, o.allow_paths);
  if (!allowed) return allowed.error();
  InputPolicy p = InputPolicy::only(o.input_root, "the request's folder");
  for (const auto& r : allowed->roots()) p = p.with_roots({r.dir}, r.why);
  return p;
}

namespace {

// With `json`, a topology that does not load is printed on stdout as
// {"error": "...", "diagnostics": [{"file","line","column","field","message","hint"}]}: what
// `twin serve` returns to an API client (plan --json).
std::optional<topology::Topology> load(const std::string& file, const std::string& name,
                                       const InputOptions& inputs, bool json = false) {
  auto policy = input_policy(inputs, {file});
  if (!policy) {
    fail(policy.error().message, 2);
    return std::nullopt;
  }
  Diagnostics diags;
  auto t = topology::load_topology(file, diags, name, &*policy);
  // FRR's parser on the user's own configs now, so a typo is exit 2 before anything exists.
  if (t) {
    proc::SystemRunner runner;
    if (auto c = runtime::check_own_configs(*t, runner, diags); !c) {
      fail(c.error().message, 3);
      return std::nullopt;
    }
    if (!diags.empty()) t.reset();
  }
  std::cerr << diags.format_warnings();
  if (!t && json) {
    std::cout << nlohmann::json{{"error", std::to_string(diags.items().size()) + " problem" +
                                              (diags.items().size() == 1 ? "" : "s") + " in " +
                                              file + "; nothing was created"},
                                {"diagnostics", diags.to_json()}}
                     .dump(2)
              << "\n";
  }
  if (!t) {
    std::cerr << diags.format();
    std::cerr << "twin: " << diags.items().size() << " problem"
              << (diags.items().size() == 1 ? "" : "s") << " in " << printable(file)
              << "; nothing was created\n";
  }
  return t;
}

std::string count(int n, const std::string& noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

std::string secs(double ms) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(ms < 10000 ? 2 : 1) << ms / 1000.0 << " s";
  return o.str();
}

}  // namespace

namespace {
// `--name` becomes namespace and path names: `plan` refuses what `up` would (exit 2).
bool bad_name(const std::string& name) {
  if (name.empty() || topology::valid_lab_name(name)) return false;
  fail("invalid --name '" + name + "'; expected 1-" + std::to_string(topology::kMaxLabName) +
           " of A-Z a-z 0-9 _ - starting with a letter or digit",
       2);
  return true;
}
}  // namespace

int run_plan(const PlanOptions& o) {
  if (bad_name(o.name)) return 2;
  auto t = load(o.file, o.name, o.inputs, o.json);
  if (!t) return 2;
  auto p = plan::make_plan(*t, o.name);
  // Which image each node would run here, as `up` decides it: read from podman when a node
  // names a container image. What `up` would refuse, the plan refuses too.
  if (plan::asks_for_images(p)) {
    proc::SystemRunner runner;
    auto present = engine::present_images(runner);
    if (!present) {
      std::cerr << "twin: warning: cannot read the images present (" << present.error().message
                << "): the plan shows the images the lab names\n";
    } else if (auto r = plan::resolve_images(p, *present, o.strict_images); !r) {
      std::cerr << "twin: " << r.error().message << "\n";
      return exit_code(r.error());
    }
  }
  if (o.json)
    std::cout << plan::to_json(p).dump(2) << "\n";
  else
    std::cout << plan::render_plan_text(p);
  return 0;
}

int run_up(const UpOptions& o) {
  if (bad_name(o.name)) return 2;
  auto t = load(o.file, o.name, o.inputs);
  if (!t) return 2;
  engine::UpOptions eo;
  eo.name = o.name;
  eo.keep_on_failure = o.keep_on_failure;
  eo.wait_converged = !o.no_wait;
  eo.timeout = std::chrono::milliseconds(static_cast<long>(o.timeout_s * 1000));
  eo.timeout_explicit = o.timeout_explicit;
  eo.parallel = o.parallel;
  eo.converge_timeout = std::chrono::milliseconds(static_cast<long>(o.converge_timeout_s * 1000));
  eo.libvirt_uri = o.libvirt_uri.empty() ? runtime::default_libvirt_uri() : o.libvirt_uri;
  eo.strict_images = o.strict_images;
  auto start = Clock::now();
  proc::SystemRunner runner;
  std::string lab = o.name.empty() ? t->name : o.name;
  auto progress = [&](const std::string& line) {
    std::ostringstream ts;
    ts << std::fixed << std::setprecision(2) << ms_since(start) / 1000.0;
    std::cerr << "twin: [" << ts.str() << "s] " << lab << ": " << line << std::endl;
  };
  auto r = engine::up(*t, eo, runner, progress);
  if (!r) {
    record_event(lab, "up", {{"ok", false}, {"error", r.error().message}, {"source", "cli"}});
    return fail(r.error().message, exit_code(r.error()));
  }
  const auto& s = *r;
  nlohmann::json j{{"lab", s.lab},
                   {"nodes", s.nodes},
                   {"links", s.links},
                   {"daemons", s.daemons},
                   {"sessions_expected", s.sessions_expected},
                   {"sessions_established", s.sessions_established},
                   {"adjacencies_expected", s.adjacencies_expected},
                   {"adjacencies_full", s.adjacencies_full},
                   {"converged", s.converged},
                   {"not_established", s.not_established},
                   {"link_local_repaired", s.link_local_repaired},
                   {"link_local_missing", s.link_local_missing},
                   {"wiring_ms", s.wiring_ms},
                   {"daemons_ms", s.daemons_ms},
                   {"converge_ms", s.converge_ms},
                   {"vms_ms", s.vms_ms},
                   {"total_ms", s.total_ms},
                   {"notes", s.notes}};
  record_event(s.lab, "up",
               {{"ok", s.converged || o.no_wait},
                {"nodes", s.nodes},
                {"links", s.links},
                {"converged", s.converged},
                {"total_ms", s.total_ms},
                {"topology", t->file},
                {"source", "cli"}});
  if (o.json) {
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << "lab " << s.lab << " is up: " << count(s.nodes, "node") << ", "
              << count(s.links, "link") << ", " << count(s.daemons, "FRR daemon") << "; "
              << s.convergence_text() << "\n"
              << "  wiring " << secs(s.wiring_ms) << ", daemons " << secs(s.daemons_ms)
              << (s.vms_ms > 0 ? ", VMs ready " + secs(s.vms_ms) : std::string())
              << ", convergence " << secs(s.converge_ms) << ", total " << secs(s.total_ms) << "\n"
              << (s.link_local_repaired.empty()
                      ? std::string()
                      : "  repaired (the kernel had lost their fe80::/64 route): " +
                            join_some(s.link_local_repaired, 8) + "\n")
              << (s.link_local_missing.empty()
                      ? std::string()
                      : "  without a working IPv6 link-local (BGP unnumbered cannot use them): " +
                            join_some(s.link_local_missing, 8) + "\n")
              << "  next: twin validate --lab " << s.lab << "   twin status --lab " << s.lab
              << "   twin down --lab " << s.lab << "\n";
  }
  if (!s.converged && !o.no_wait) {
    std::cerr << "twin: not converged after " << secs(s.converge_ms) << " (--converge-timeout): "
              << s.convergence_text() << "; the lab is kept for inspection. Not there yet:\n";
    for (const auto& d : s.not_established) std::cerr << "  " << d << "\n";
    std::cerr << "twin: inspect with `twin validate --lab " << s.lab << "` or `twin exec --lab "
              << s.lab << " NODE -- vtysh -c '"
              << (s.sessions_established < s.sessions_expected ? "show bgp neighbors"
                                                               : "show ip ospf neighbor")
              << "'`; remove with `twin down --lab "
              << s.lab << "`\n";
    return 1;
  }
  return 0;
}

int run_down(const DownOptions& o) {
  proc::SystemRunner runner;
  std::vector<std::string> labs;
  if (o.all) {
    labs = state::list_labs();
  } else {
    if (o.lab.empty() && state::list_labs().empty()) {
      std::cout << (o.json ? "[]" : "no lab is running; nothing to remove") << "\n";
      return 0;
    }
    if (!o.lab.empty() && topology::valid_lab_name(o.lab) &&
        !std::filesystem::is_directory(state::lab_dir(o.lab))) {
      // Idempotent: removing a lab that is already gone succeeds.
      if (o.json)
        std::cout << "[]\n";
      else
        std::cout << "lab " << o.lab << " is not running; nothing to remove\n";
      return 0;
    }
    auto lab = state::resolve_lab(o.lab);
    if (!lab) return fail(lab.error().message, exit_code(lab.error()));
    labs.push_back(*lab);
  }
  int code = 0;
  nlohmann::json out = nlohmann::json::array();
  for (const auto& lab : labs) {
    auto t = Clock::now();
    auto r = engine::down(lab, runner);
    if (!r) {
      code = std::max(code, exit_code(r.error()));
      std::cerr << "twin: down " << lab << ": " << r.error().message << "\n";
      continue;
    }
    for (const auto& p : r->problems) std::cerr << "twin: down " << lab << ": " << p << "\n";
    record_event(lab, "down",
                 {{"ok", r->problems.empty()},
                  {"processes", r->processes_killed},
                  {"namespaces", r->namespaces_removed},
                  {"problems", r->problems},
                  {"source", "cli"}});
    if (!r->problems.empty()) code = std::max(code, 3);
    if (o.json) {
      out.push_back({{"lab", lab},
                     {"processes", r->processes_killed},
                     {"namespaces", r->namespaces_removed},
                     {"paths", r->paths_removed},
                     {"vms", r->vms_destroyed},
                     {"problems", r->problems},
                     {"duration_ms", ms_since(t)}});
    } else {
      std::cout << "lab " << lab << " is down: " << r->processes_killed << " processes stopped, "
                << (r->vms_destroyed ? std::to_string(r->vms_destroyed) + " VMs destroyed, " : "")
                << r->namespaces_removed << " namespaces, " << r->paths_removed
                << " files/folders removed in " << secs(ms_since(t)) << "\n";
    }
  }
  if (o.json) std::cout << out.dump(2) << "\n";
  if (labs.empty() && !o.json) std::cout << "no lab is running; nothing to remove\n";
  return code;
}

int run_images(const ImagesOptions& o) {
  proc::SystemRunner runner;
  auto cat = engine::image_catalog(runner, "");
  if (!cat) return fail(cat.error().message, exit_code(cat.error()));
  if (o.json) {
    std::cout << cat->dump(2) << "\n";
    return 0;
  }
  auto mb = [](const nlohmann::json& e) {
    return e.contains("bytes") ? std::to_string(e["bytes"].get<int64_t>() / 1000000) + " MB" : "";
  };
  std::cout << std::left << std::setw(20) << "IMAGE" << std::setw(10) << "BACKEND" << std::setw(9)
            << "FRR" << std::setw(9) << "SIZE"
            << "PRESENT\n";
  for (const auto& e : (*cat)["images"]) {
    std::cout << std::left << std::setw(20) << e.value("name", "") << std::setw(10)
              << e.value("backend", "") << std::setw(9) << e.value("frr_version", "-")
              << std::setw(9) << mb(e)
              << (e.value("present", false) ? "yes" : "no: " + e.value("missing", "")) << "\n";
    if (e.contains("image"))
      std::cout << "  " << e["image"].get<std::string>()
                << (e.contains("image_id") ? " (" + e["image_id"].get<std::string>() + ")" : "")
                << "\n";
    if (e.contains("note")) std::cout << "  note: " << e["note"].get<std::string>() << "\n";
  }
  if (!(*cat)["unprofiled"].empty()) {
    std::cout << "\ncontainer images no profile names (a profile with `backend: container` and "
                 "`container: {image: ...}` makes one usable):\n";
    for (const auto& e : (*cat)["unprofiled"])
      std::cout << "  " << e.value("image", "") << "  FRR " << e.value("frr_version", "?") << "  "
                << mb(e) << "\n";
  }
  if (!(*cat)["podman"].get<bool>())
    std::cout << "\npodman is not installed: container images need tools/install-deps.sh "
                 "--containers\n";
  return 0;
}

int run_status(const StatusOptions& o) {
  auto lab = state::resolve_lab(o.lab);
  if (!lab) return fail(lab.error().message, exit_code(lab.error()));
  proc::SystemRunner runner;
  auto r = engine::status(*lab);
  if (!r) return fail(r.error().message, exit_code(r.error()));
  const auto& j = *r;
  // Degraded (a daemon dead, a VM not running, a namespace, link or interface missing) or
  // incomplete (its `up` never finished): exit 1, so scripts can check health.
  bool degraded = engine::degraded(j);
  bool incomplete = j.value("incomplete", false);
  if (o.json) {
    std::cout << j.dump(2) << "\n";
    return degraded || incomplete ? 1 : 0;
  }
  std::cout << "lab " << j["lab"].get<std::string>() << " (" << j["status"].get<std::string>()
            << ", since " << j["created_at"].get<std::string>() << ")\n";
  if (j.contains("mgmt")) {
    const auto& m = j["mgmt"];
    std::cout << "management network " << m.value("subnet", "") << " (this machine "
              << m.value("host_address", "") << "): ssh -i " << m.value("key", "") << " "
              << m.value("user", "") << "@ADDRESS"
              << (m.value("password_login", false) ? " (or its password)" : "")
              << ", or twin inventory -f ssh-config\n";
    if (m.contains("dhcp"))
      std::cout << "  DHCP for its VMs: dnsmasq[" << m["dhcp"].value("pid", 0) << "] at "
                << m["dhcp"].value("address", "")
                << (m["dhcp"].value("running", false)
                        ? ""
                        : " NOT RUNNING (twin restart VM --daemon dnsmasq)")
                << "\n";
  }
  std::cout << "\nnodes:\n";
  for (const auto& n : j["nodes"]) {
    std::cout << "  " << std::left << std::setw(12) << n["name"].get<std::string>() << std::setw(6)
              << n["kind"].get<std::string>()
              << (n["netns_present"].get<bool>() ? "netns ok " : "netns MISSING ");
    for (const auto& d : n["daemons"])
      std::cout << " " << d["name"].get<std::string>() << "[" << d["pid"].get<int>()
                << (d["alive"].get<bool>() ? "" : " DEAD") << "]";
    if (n.contains("mgmt_address")) std::cout << " mgmt " << n.value("mgmt_address", "");
    if (n.contains("vm")) {
      const auto& vm = n["vm"];
      std::cout << " VM " << vm.value("domain", "") << " "
                << (vm["running"] == true    ? "running"
                    : vm["running"] == false ? "NOT RUNNING"
                                             : "unknown")
                << " (" << vm.value("accel", "") << ")";
      if (vm.contains("mgmt")) std::cout << ", mgmt " << vm.value("mgmt", "");
    }
    if (n.contains("container")) {
      const auto& c = n["container"];
      std::cout << " container " << c.value("name", "") << " "
                << (c.value("running", false) ? "running" : "NOT RUNNING") << " ("
                << c.value("image", "") << ", FRR " << c.value("frr_version", "") << ")";
    }
    std::cout << "\n";
  }
  std::cout << "\nlinks:\n";
  for (const auto& l : j["links"]) {
    auto mtu = [](const nlohmann::json& v) { return v.is_null() ? std::string("-") : v.dump(); };
    bool ok = l["a_mtu"] == l["mtu_expected"] && l["b_mtu"] == l["mtu_expected"];
    std::cout << "  " << std::left << std::setw(18) << l["a"].get<std::string>() << " "
              << std::setw(5) << l["a_state"].get<std::string>() << " <-> " << std::setw(18)
              << l["b"].get<std::string>() << " " << std::setw(5) << l["b_state"].get<std::string>()
              << " mtu " << mtu(l["a_mtu"]) << "/" << mtu(l["b_mtu"])
              << (ok ? "" : "  (expected " + mtu(l["mtu_expected"]) + ")") << "\n";
  }
  if (degraded)
    std::cout << "\nlab is degraded: a daemon is dead, a VM or container is not running, or a "
                 "namespace, "
                 "link or interface is missing\n";
  if (incomplete)
    std::cout << "\nlab is incomplete: "
              << (j["status"] == "failed"
                      ? "its `twin up` failed and left it for inspection (--keep-on-failure)"
                      : "its `twin up` has not finished (killed half-way, or still running)")
              << "; what it made is in the state file: `twin down --lab " << *lab
              << "` removes it\n";
  return degraded || incomplete ? 1 : 0;
}

int run_list(bool json) {
  auto labs = state::list_labs();
  if (json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& l : labs) {
      auto s = state::load_state(l);
      out.push_back({{"lab", l},
                     {"status", s ? s->status : "unknown"},
                     {"created_at", s ? s->created_at : ""},
                     {"topology", s ? s->plan.topology_file : ""}});
    }
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  if (labs.empty()) std::cout << "no lab is running\n";
  for (const auto& l : labs) {
    auto s = state::load_state(l);
    std::cout << l << "  "
              << (s ? s->status + "  " + s->created_at + "  " + s->plan.topology_file : "") << "\n";
  }
  return 0;
}

}  // namespace twin::cli
