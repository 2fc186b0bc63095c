#include "twin/engine/lab.hpp"

#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "twin/core/util.hpp"
#include "twin/engine/node_ops.hpp"
#include "twin/engine/vm.hpp"
#include "twin/plan/plan.hpp"
#include "twin/runtime/agent.hpp"
#include "twin/runtime/frr.hpp"
#include "twin/runtime/netlink.hpp"
#include "twin/validate/validator.hpp"
#include "twin/wiring/wiring.hpp"

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace twin::engine {

std::string cgroup2_mount() {
  std::ifstream f("/proc/self/mountinfo");
  std::string line;
  while (std::getline(f, line)) {
    // "... <mount point> <options> - <fstype> <source> <super options>"
    auto dash = line.find(" - ");
    if (dash == std::string::npos) continue;
    std::istringstream post(line.substr(dash + 3));
    std::string fstype;
    post >> fstype;
    if (fstype != "cgroup2") continue;
    std::istringstream pre(line.substr(0, dash));
    std::string field, mount_point;
    for (int i = 0; i < 5 && pre >> field; ++i)
      if (i == 4) mount_point = field;
    return mount_point;
  }
  return "";
}

namespace {
Result<void> chown_frr(const std::string& path);
}  // namespace

// `down` without taking the lab lock: for `up`'s own teardown, which already holds it.
Result<DownReport> down_locked(const std::string& lab, proc::ProcessRunner& runner);

Result<void> preflight(const plan::Plan& plan, proc::ProcessRunner& runner) {
  if (::geteuid() != 0)
    return env_error("twin needs root to create network namespaces (run with sudo)");
  std::set<std::string> daemons;
  for (const auto& n : plan.nodes)
    for (const auto& d : n.daemons) daemons.insert(d);
  for (const auto& d : daemons)
    if (::access(runtime::daemon_path(d).c_str(), X_OK) != 0)
      return env_error("FRR daemon " + runtime::daemon_path(d) +
                       " is missing; run tools/install-deps.sh (package frr)");
  if (!daemons.empty() && ::getpwnam("frr") == nullptr)
    return env_error("user 'frr' does not exist; the frr package creates it");
  // veth is the one link type every lab needs; probe it in a throw-away namespace so nothing
  // is left behind (the namespace dies with the probe process).
  proc::Command probe{{"unshare", "--net", "ip", "link", "add", "twprobe0", "type", "veth", "peer",
                       "name", "twprobe1"},
                      "",
                      10s};
  auto r = runner.run(probe);
  if (!r) return r.error().with_context("probing kernel features");
  if (r->exit_code != 0)
    return env_error("this kernel cannot create veth links (" + r->err +
                     "); twin needs the veth driver (CONFIG_VETH)");
  // Mount point for each daemon's private crash-log folder (FRR creates the same folder itself
  // on first start: lib/zlog.c TMPBASEDIR).
  if (!daemons.empty() && !fs::is_directory("/var/tmp/frr")) {
    std::error_code ec;
    fs::create_directories("/var/tmp/frr", ec);
    if (ec) return env_error("cannot create /var/tmp/frr: " + ec.message());
    fs::permissions("/var/tmp/frr", fs::perms::owner_all, ec);
    if (auto r = chown_frr("/var/tmp/frr"); !r) return r;
  }
  if (cgroup2_mount().empty())
    return env_error(
        "no cgroup v2 hierarchy is mounted; twin keeps each lab's processes in "
        "its own cgroup (mount -t cgroup2 none /sys/fs/cgroup)");
  return {};
}

namespace {

// Records resources in the state file before they are created. Saving rewrites the whole file
// (the plan included: ~0.5 MB at 56 nodes), so resources created together are recorded together.
struct Recorder {
  State& state;
  Result<void> add_all(std::vector<Resource> rs) {
    for (auto& r : rs) state.resources.push_back(std::move(r));
    return save_state(state);
  }
};

Result<void> chown_frr(const std::string& path) {
  struct passwd* pw = ::getpwnam("frr");
  if (!pw) return env_error("user frr does not exist");
  if (::chown(path.c_str(), pw->pw_uid, pw->pw_gid) != 0)
    return harness_error("chown frr " + path + ": " + std::strerror(errno));
  return {};
}

std::string read_trim(const std::string& path) {
  std::ifstream f(path);
  std::string s;
  std::getline(f, s);
  return s;
}

// The kernel's neighbor tables (ARP, IPv6 ND) are shared by every network namespace and capped
// by the root namespace's gc_thresh3 (1024 by default; values in other namespaces are ignored):
// Documentation/networking/ip-sysctl.rst, "neigh/default/gc_thresh3". Past the cap the kernel
// refuses new entries ("neighbour: ndisc_cache: neighbor table overflow!") and every IPv6
// multicast send fails with EINVAL: measured at 128 nodes / 1,088 link ends, zebra's router
// advertisements failed on every port and BGP unnumbered never found its peers. Each interface
// of a lab needs a few entries per family (the peer's link-local or 169.254.0.1 next hop, the
// all-nodes/all-routers groups, MLD), so twin raises (never lowers) the caps to 8 per interface
// above the default and says so; they are limits, not state, and stay raised after `down`.
Result<void> ensure_neighbor_capacity(const plan::Plan& plan, const Progress& progress) {
  long interfaces = 0;
  for (const auto& n : plan.nodes) interfaces += static_cast<long>(n.interfaces.size()) + 1;
  long want3 = 1024 + 8 * interfaces;
  for (const char* family : {"ipv4", "ipv6"}) {
    std::string base = std::string("/proc/sys/net/") + family + "/neigh/default/";
    long cur3 = std::atol(read_trim(base + "gc_thresh3").c_str());
    long cur2 = std::atol(read_trim(base + "gc_thresh2").c_str());
    if (cur3 >= want3) continue;
    long want2 = std::max(cur2, want3 / 2);
    // thresh2 must stay below thresh3: raise 3 first.
    for (const auto& [file, value] :
         {std::pair<const char*, long>{"gc_thresh3", want3}, {"gc_thresh2", want2}}) {
      std::ofstream f(base + file);
      f << value << "\n";
      f.flush();
      if (!f)
        return env_error(
            "cannot raise " + base + file + " to " + std::to_string(value) + " (the lab's " +
            std::to_string(interfaces) +
            " interfaces need that many kernel neighbor entries): " + std::strerror(errno));
    }
    progress(std::string("raised the kernel's ") + family + " neighbor table limit (gc_thresh3) " +
             std::to_string(cur3) + " -> " + std::to_string(want3) + " for " +
             std::to_string(interfaces) + " interfaces");
  }
  return {};
}

std::string seconds_text(std::chrono::milliseconds ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", static_cast<double>(ms.count()) / 1000.0);
  return buf;
}

Result<void> check_interrupt(const std::string& step) {
  if (interrupted()) return Error{ErrorKind::kInterrupted, "interrupted during " + step};
  return {};
}

// A generated config split per daemon (runtime::split_generated_config), or nullopt when the
// integrated frr.conf must go through `vtysh -b`.
std::optional<std::map<std::string, std::string>> own_configs(const plan::Node& n) {
  if (n.kind != "frr" || !n.config_generated) return std::nullopt;
  return runtime::split_generated_config(n.frr_config, n.daemons);
}

// Starts the node's daemons in image order, each reading its own share of a generated config,
// or else applies the integrated frr.conf afterwards; records PIDs.
Result<int> start_node(const plan::Node& n, const std::string& cgroup, State& state,
                       std::mutex& state_mu, proc::ProcessRunner& runner) {
  int started = 0;
  bool own = own_configs(n).has_value();
  for (const auto& d : n.daemons) {
    proc::Command c{runtime::daemon_argv(n, d, own), "", 30s, n.netns, cgroup};
    // FRR keeps crash logs in /var/tmp/frr/<daemon>.<pid> (lib/zlog.c, fixed path, named after
    // the PID before daemonising); a private bind keeps them in the node's run folder, which
    // `down` removes, and lets --artifacts collect them.
    c.bind_mounts = {{n.run_dir + "/tmp", "/var/tmp/frr"}};
    c.output_file = n.run_dir + "/" + d + ".out";
    c.hostname = n.name;
    auto r = proc::run_checked(runner, c, "starting " + d);
    if (!r) return r.error();
    std::string pid_text = read_trim(n.run_dir + "/" + d + ".pid");
    int pid = std::atoi(pid_text.c_str());
    if (pid <= 0) return harness_error(d + " started but wrote no pid file");
    {
      // In memory only: the caller saves once per phase. Until then the lab's cgroup (recorded
      // and saved before any daemon started) is how `down` finds this process.
      std::lock_guard lk(state_mu);
      state.resources.push_back({"process", d, n.name, pid, process_start_time(pid)});
    }
    ++started;
  }
  if (!n.daemons.empty() && !own) {
    proc::Command c{runtime::boot_config_argv(n), "", 60s};
    auto r = runner.run(c);
    if (!r) return r.error().with_context("applying frr.conf");
    // vtysh -b reports each rejected line; a non-zero exit means part of the config failed.
    if (r->exit_code != 0) {
      std::string msg = r->out + r->err;
      return input_error("applying " + n.run_dir + "/frr.conf" +
                         (n.config_source.empty() ? "" : " (from " + n.config_source + ")") +
                         " failed (vtysh -b exit " + std::to_string(r->exit_code) + "): " + msg);
    }
  }
  return started;
}

// Runs fn for every node, `parallel` at a time; the first error (in plan order) names its node.
Result<void> for_each_node(const plan::Plan& plan, int parallel,
                           const std::function<Result<void>(const plan::Node&)>& fn) {
  std::vector<std::optional<Error>> errors(plan.nodes.size());
  parallel_for(plan.nodes.size(), parallel, [&](size_t i) {
    if (auto r = fn(plan.nodes[i]); !r)
      errors[i] = r.error().with_context("node " + plan.nodes[i].name);
  });
  for (auto& e : errors)
    if (e) return *e;
  return {};
}

Result<void> write_node_files(const plan::Node& n) {
  std::error_code ec;
  fs::create_directories(n.run_dir, ec);
  if (ec) return harness_error("creating " + n.run_dir + ": " + ec.message());
  if (n.kind != "frr") return {};
  std::string config = n.frr_config;
  if (!n.config_generated) {
    auto text = read_file(n.config_source);
    if (!text) return text.error();
    config = *text;
  }
  fs::create_directories(n.run_dir + "/tmp", ec);
  if (ec) return harness_error("creating " + n.run_dir + "/tmp: " + ec.message());
  if (auto r = write_file(n.run_dir + "/frr.conf", config); !r) return r;
  // vtysh inside `twin exec` reads /etc/frr/vtysh.conf (bind-mounted from here); integrated
  // mode makes `write memory` update this node's frr.conf.
  if (auto r = write_file(n.run_dir + "/vtysh.conf", "service integrated-vtysh-config\n"); !r)
    return r;
  for (const auto& p :
       {n.run_dir, n.run_dir + "/tmp", n.run_dir + "/frr.conf", n.run_dir + "/vtysh.conf"})
    if (auto r = chown_frr(p); !r) return r;
  if (auto parts = own_configs(n))
    for (const auto& [daemon, text] : *parts) {
      auto path = runtime::daemon_config_path(n, daemon);
      if (auto r = write_file(path, text); !r) return r;
      if (auto r = chown_frr(path); !r) return r;
    }
  return {};
}

}  // namespace

SessionCount count_sessions(const plan::Plan& plan, int parallel) {
  SessionCount c;
  c.expected = static_cast<int>(plan.sessions.size());
  std::vector<const plan::Node*> nodes;
  for (const auto& n : plan.nodes)
    if (n.kind == "frr" && std::find(n.daemons.begin(), n.daemons.end(), "bgpd") != n.daemons.end())
      nodes.push_back(&n);
  std::vector<int> up(nodes.size(), 0);
  std::vector<std::vector<std::string>> down(nodes.size());
  parallel_for(nodes.size(), parallel, [&](size_t i) {
    auto j = runtime::show_json(*nodes[i], "bgpd", "show bgp summary json", 5s);
    for (const auto& s : plan.sessions) {
      if (s.node != nodes[i]->name) continue;
      const nlohmann::json* peer = j ? validate::find_bgp_peer(*j, s.interface) : nullptr;
      std::string state = !j     ? "no answer from bgpd"
                          : peer ? peer->value("state", "unknown")
                                 : "not configured";
      if (state == "Established")
        ++up[i];
      else
        down[i].push_back(s.node + " " + s.interface + " -> " + s.peer_node + ": " + state);
    }
  });
  for (const auto& d : down) c.down.insert(c.down.end(), d.begin(), d.end());
  for (int u : up) c.established += u;
  return c;
}

Result<UpSummary> up(const topology::Topology& topo, const UpOptions& opts,
                     proc::ProcessRunner& runner, const Progress& progress) {
  auto t0 = Clock::now();
  plan::Plan plan = plan::make_plan(topo, opts.name);
  if (auto r = preflight(plan, runner); !r) return r.error();
  // `down` deletes every namespace it recorded: never record one that exists already (another
  // lab whose name composes to the same "tw-<lab>-<node>", or a leftover not ours).
  for (const auto& n : plan.nodes)
    if (fs::exists("/run/netns/" + n.netns) && !fs::exists(state_path(plan.lab)))
      return usage_error("network namespace " + n.netns + " already exists (node " + n.name +
                         "); another lab or program owns it — choose another lab name with "
                         "--name");
  const bool vms = has_vms(plan);
  if (vms) {
    for (auto& n : plan.nodes)
      if (plan::is_vm(n)) n.vm.uri = opts.libvirt_uri;
    if (auto r = vm_preflight(plan, opts.libvirt_uri); !r) return r.error();
  }
  if (auto r = ensure_neighbor_capacity(plan, progress); !r) return r.error();
  if (auto r = claim_lab(plan.lab); !r) return r.error();
  auto lock = lock_lab(plan.lab);
  if (!lock) return lock.error();

  State state;
  state.lab = plan.lab;
  state.status = "creating";
  state.created_at = now_rfc3339();
  state.twin_version = TWIN_VERSION;
  state.plan = plan;
  Recorder rec{state};
  UpSummary sum;
  sum.lab = plan.lab;
  sum.nodes = static_cast<int>(plan.nodes.size());
  sum.links = static_cast<int>(plan.links.size());
  sum.sessions_expected = static_cast<int>(plan.sessions.size());

  auto fail = [&](const Error& e) -> Result<UpSummary> {
    state.status = "failed";
    (void)save_state(state);
    if (opts.keep_on_failure) {
      return e.with_context("twin up (lab '" + plan.lab +
                            "' kept for inspection: twin down --lab " + plan.lab + ")");
    }
    progress("tearing down lab " + plan.lab + " after failure");
    auto d = down_locked(plan.lab, runner);
    if (!d)
      return e.with_context("twin up").with_context("teardown also failed: " + d.error().message);
    return e.with_context("twin up");
  };
  auto timeout = opts.timeout;
  if (vms && !opts.timeout_explicit)
    timeout = std::max<std::chrono::milliseconds>(timeout, longest_ready_timeout(plan) + 120s);
  auto deadline = t0 + timeout;

  // 1. The lab directory (already claimed) and the cgroup, before any process exists.
  std::string cg = cgroup2_mount() + "/twin/" + plan.lab;
  if (auto r = rec.add_all({{"dir", lab_dir(plan.lab), ""}, {"cgroup", cg, ""}}); !r)
    return fail(r.error());
  std::error_code ec;
  fs::create_directories(cg, ec);
  if (ec) return fail(env_error("creating cgroup " + cg + ": " + ec.message()));
  auto record = [&](std::vector<Resource> rs) { return rec.add_all(std::move(rs)); };

  // VMs: KVM or TCG, decided once per requested accelerator (a trial boot is recorded too).
  if (vms) {
    std::map<std::string, AccelChoice> chosen;
    for (auto& n : plan.nodes) {
      if (!plan::is_vm(n)) continue;
      auto it = chosen.find(n.vm.accel);
      if (it == chosen.end()) {
        auto c = choose_accel(n.vm.accel, opts.libvirt_uri, opts.trial_image_dir, record, progress);
        if (!c) return fail(c.error().with_context("choosing KVM or TCG"));
        progress("VMs run with " + c->why);
        it = chosen.emplace(n.vm.accel, *c).first;
      }
      n.vm.domain_type = it->second.domain_type;
      n.vm.accel_reason = it->second.why;
    }
    state.plan = plan;
    if (auto r = save_state(state); !r) return fail(r.error());
  }

  // 2. Namespaces, recorded first.
  auto tw = Clock::now();
  {
    std::vector<Resource> rs;
    for (const auto& n : plan.nodes) rs.push_back({"netns", n.netns, n.name});
    for (const auto& n : plan.nodes) rs.push_back({"dir", n.run_dir, n.name});
    if (auto r = rec.add_all(std::move(rs)); !r) return fail(r.error());
  }
  if (auto r = check_interrupt("namespace creation"); !r) return fail(r.error());
  if (auto r = wiring::run_batch(runner, wiring::netns_add_script(plan), "", "creating namespaces");
      !r)
    return fail(r.error());
  if (auto r = for_each_node(plan, opts.parallel,
                             [](const plan::Node& n) {
                               return wiring::apply_sysctls(n.netns, wiring::namespace_sysctls(n));
                             });
      !r)
    return fail(r.error());
  // 3. Links: veths live only inside the lab's namespaces and vanish with them.
  if (auto r = wiring::run_batch(runner, wiring::veth_script(plan), "", "creating veth links"); !r)
    return fail(r.error());
  // Links up before the daemons start. Measured at 56 nodes: starting every daemon on links
  // without carrier and raising them all at once halves the daemon phase (no update waves
  // while nodes arrive), but the simultaneous start of 768 sessions then collides (RFC 4271
  // 6.8) and FRR 8.4 backs off for seconds: 13-15 s in total either way, and 4x16 is 1-2 s
  // slower. Nodes arriving one by one into a running fabric converge as they come.
  if (auto r = for_each_node(plan, opts.parallel,
                             [&](const plan::Node& n) {
                               return wiring::links_up(n.netns,
                                                       wiring::interfaces_to_bring_up(plan, n));
                             });
      !r)
    return fail(r.error());
  {
    std::vector<proc::Command> cmds;
    std::vector<const plan::Node*> hosts;
    for (const auto& n : plan.nodes)
      if (auto script = wiring::node_script(n); !script.empty()) {
        cmds.push_back({{"ip", "-n", n.netns, "-batch", "-"}, script, 30s});
        hosts.push_back(&n);
      }
    auto results = proc::run_all(runner, cmds, opts.parallel);
    for (size_t i = 0; i < results.size(); ++i) {
      const auto& r = results[i];
      if (!r) return fail(r.error().with_context("node " + hosts[i]->name));
      if (r->exit_code != 0)
        return fail(harness_error("node " + hosts[i]->name + ": addresses and routes: " + r->err));
    }
  }
  // Node files: FRR configs, and the run folders where a VM's console log and agent socket go.
  for (const auto& n : plan.nodes)
    if (auto r = write_node_files(n); !r) return fail(r.error().with_context("node " + n.name));
  if (vms) {
    if (auto r = check_interrupt("VM start"); !r) return fail(r.error());
    if (auto r = start_vms(plan, record, runner, progress, opts.parallel); !r)
      return fail(r.error());
  }
  sum.wiring_ms = ms_since(tw);
  progress("wired " + std::to_string(plan.nodes.size()) + " namespaces and " +
           std::to_string(plan.links.size()) + " links in " +
           std::to_string(static_cast<int>(sum.wiring_ms)) + " ms");

  // 4. Daemons, nodes in parallel.
  if (auto r = check_interrupt("daemon start"); !r) return fail(r.error());
  auto td = Clock::now();
  {
    std::mutex mu;
    std::vector<const plan::Node*> frr;
    for (const auto& n : plan.nodes)
      if (!n.daemons.empty()) frr.push_back(&n);
    std::vector<std::optional<Error>> errors(frr.size());
    std::atomic<int> ready{0}, daemons{0};
    parallel_for(frr.size(), opts.parallel, [&](size_t i) {
      if (interrupted()) {
        errors[i] = Error{ErrorKind::kInterrupted, "interrupted during daemon start"};
        return;
      }
      auto r = start_node(*frr[i], cg, state, mu, runner);
      if (!r) {
        errors[i] = r.error().with_context("node " + frr[i]->name);
        return;
      }
      daemons += *r;
      int k = ++ready;
      std::lock_guard lk(mu);
      progress("nodes ready " + std::to_string(k) + "/" + std::to_string(frr.size()));
    });
    for (const auto& e : errors)
      if (e) return fail(*e);
    sum.daemons = daemons;
  }
  sum.daemons_ms = ms_since(td);
  if (Clock::now() > deadline)
    return fail(harness_error("timed out after " + seconds_text(timeout) +
                              " (--timeout) while starting daemons"));

  // VMs booted while the daemons started; a lab is up once every guest is ready.
  if (vms) {
    auto tv = Clock::now();
    if (auto r = wait_vms_ready(plan, deadline, progress); !r) return fail(r.error());
    sum.vms_ms = ms_since(tv);
  }

  state.status = "up";
  if (auto r = save_state(state); !r) return fail(r.error());

  // 5. Convergence: every expected session Established (a probe loop, not a sleep).
  auto tc = Clock::now();
  auto converge_deadline = std::min(deadline, tc + opts.converge_timeout);
  int last = -1;
  while (opts.wait_converged && !plan.sessions.empty()) {
    if (auto r = check_interrupt("waiting for BGP"); !r) return fail(r.error());
    auto c = count_sessions(plan, opts.parallel);
    sum.sessions_established = c.established;
    sum.not_established = c.down;
    if (c.established != last) {
      progress("BGP sessions up " + std::to_string(c.established) + "/" +
               std::to_string(c.expected));
      last = c.established;
    }
    if (c.established >= c.expected) {
      sum.converged = true;
      break;
    }
    if (Clock::now() > deadline)
      return fail(harness_error("timed out after " + seconds_text(timeout) +
                                " (--timeout) waiting for BGP: " + std::to_string(c.established) +
                                "/" + std::to_string(c.expected) + " sessions Established"));
    if (Clock::now() > converge_deadline) break;
    std::this_thread::sleep_for(100ms);  // poll interval of the readiness probe
  }
  if (plan.sessions.empty()) sum.converged = true;
  sum.converge_ms = ms_since(tc);
  sum.total_ms = ms_since(t0);
  return sum;
}

Result<DownReport> down(const std::string& lab, proc::ProcessRunner& runner) {
  auto lock = lock_lab(lab);
  if (!lock) return lock.error();
  return down_locked(lab, runner);
}

Result<DownReport> down_locked(const std::string& lab, proc::ProcessRunner& runner) {
  DownReport rep;
  auto st = load_state(lab);
  if (!st) {
    // `up` saves the state before creating anything, so a folder without a state file (a crash
    // in the first milliseconds) holds nothing else to remove.
    std::error_code ec;
    if (fs::is_directory(lab_dir(lab)) && !fs::exists(state_path(lab))) {
      fs::remove_all(lab_dir(lab), ec);
      rep.paths_removed = 1;
      return rep;
    }
    return st.error();
  }
  State& s = *st;

  // 1. Processes: kill the cgroup as a whole, then any recorded PID still alive with the same
  //    start time (a reused PID has another start time and is left alone).
  for (const auto& r : s.resources) {
    if (r.kind != "cgroup") continue;
    if (!fs::exists(r.name)) continue;
    {
      // Count what is really running (daemons, and what `twin exec` left behind) before the kill.
      std::ifstream procs(r.name + "/cgroup.procs");
      std::string line;
      while (std::getline(procs, line))
        if (int pid = std::atoi(line.c_str()); pid > 0 && process_alive(pid, 0))
          ++rep.processes_killed;
    }
    {
      std::ofstream k(r.name + "/cgroup.kill");
      k << "1\n";
    }
    auto until = Clock::now() + 5s;
    for (;;) {
      std::ifstream procs(r.name + "/cgroup.procs");
      std::string line;
      bool any = false;
      while (std::getline(procs, line)) {
        int pid = std::atoi(line.c_str());
        if (pid > 0 && process_alive(pid, 0)) any = true;
      }
      if (!any) break;
      if (Clock::now() > until) {
        rep.problems.push_back("processes in " + r.name + " did not exit within 5 s");
        break;
      }
      std::this_thread::sleep_for(10ms);
    }
  }
  // Without a cgroup (or if one escaped it): recorded PIDs whose start time still matches.
  for (const auto& r : s.resources) {
    if (r.kind != "process") continue;
    if (process_alive(r.pid, r.start_time)) {
      ::kill(r.pid, SIGKILL);
      ++rep.processes_killed;
    }
  }
  for (const auto& r : s.resources) {
    if (r.kind != "process") continue;
    auto until = Clock::now() + 5s;
    while (process_alive(r.pid, r.start_time) && Clock::now() < until)
      std::this_thread::sleep_for(10ms);
    if (process_alive(r.pid, r.start_time))
      rep.problems.push_back("process " + std::to_string(r.pid) + " (" + r.name +
                             ") survived SIGKILL");
  }
  // cgroup directories can be removed once empty (zombies no longer count as members).
  for (const auto& r : s.resources) {
    if (r.kind != "cgroup" || !fs::exists(r.name)) continue;
    bool removed = false;
    for (int i = 0; i < 100 && !removed; ++i) {
      removed = ::rmdir(r.name.c_str()) == 0 || errno == ENOENT;
      if (!removed) std::this_thread::sleep_for(20ms);
    }
    if (!removed)
      rep.problems.push_back("cannot remove cgroup " + r.name + ": " + std::strerror(errno));
    else
      ++rep.paths_removed;
    // The shared parent ".../twin" goes when the last lab leaves.
    ::rmdir(fs::path(r.name).parent_path().c_str());
  }

  // 2. VMs (before their namespaces: QEMU lets go of the taps inside them).
  remove_vms(s, runner, &rep.vms_destroyed, rep.problems);

  // 3. Namespaces (their veths and the VMs' taps go with them).
  std::vector<std::string> ns;
  for (const auto& r : s.resources)
    if (r.kind == "netns" && fs::exists("/run/netns/" + r.name)) ns.push_back(r.name);
  if (!ns.empty()) {
    auto r = wiring::run_batch(runner, wiring::netns_del_script(ns), "", "deleting namespaces",
                               /*cancellable=*/false);
    if (!r) rep.problems.push_back(r.error().message);
    for (const auto& n : ns)
      if (!fs::exists("/run/netns/" + n)) ++rep.namespaces_removed;
  }

  // 4. Files: run folders (FRR's crash-log folders are inside them), the lab folder last.
  for (auto it = s.resources.rbegin(); it != s.resources.rend(); ++it) {
    if (it->kind != "dir") continue;
    std::error_code ec;
    if (fs::remove_all(it->name, ec) > 0) ++rep.paths_removed;
    if (ec && ec != std::errc::no_such_file_or_directory)
      rep.problems.push_back("removing " + it->name + ": " + ec.message());
  }
  // The lab directory holds the state file: if a step above failed, keep nothing half-known.
  std::error_code ec;
  fs::remove_all(lab_dir(lab), ec);
  return rep;
}

Result<nlohmann::json> status(const std::string& lab) {
  auto st = load_state(lab);
  if (!st) return st.error();
  const auto& plan = st->plan;
  nlohmann::json j;
  j["lab"] = lab;
  j["status"] = st->status;
  j["created_at"] = st->created_at;
  j["topology"] = plan.topology_file;
  j["nodes"] = nlohmann::json::array();
  std::map<std::string, nlohmann::json> links_by_node;
  for (const auto& n : plan.nodes) {
    nlohmann::json nj;
    nj["name"] = n.name;
    nj["kind"] = n.kind;
    nj["netns"] = n.netns;
    nj["backend"] = n.backend;
    if (plan::is_vm(n)) nj["vm"] = vm_status(n);
    bool present = fs::exists("/run/netns/" + n.netns);
    nj["netns_present"] = present;
    nj["daemons"] = nlohmann::json::array();
    for (const auto& r : st->resources)
      if (r.kind == "process" && r.node == n.name)
        nj["daemons"].push_back(
            {{"name", r.name}, {"pid", r.pid}, {"alive", process_alive(r.pid, r.start_time)}});
    j["nodes"].push_back(nj);
    if (plan::is_vm(n) && n.vm.agent == "twin") {
      // A VM's ports are the guest's: its namespace only holds the wires' host ends.
      auto l = runtime::guest_table(n.vm.agent_socket, runtime::KernelTable::kLinks);
      if (l) links_by_node[n.name] = *l;
    } else if (present) {
      auto l = runtime::kernel_json(n.netns, runtime::KernelTable::kLinks);
      if (l) links_by_node[n.name] = *l;
    }
  }
  auto find_if = [&](const std::string& node, const std::string& ifname) -> nlohmann::json {
    auto it = links_by_node.find(node);
    if (it == links_by_node.end()) return nullptr;
    for (const auto& l : it->second)
      if (l.value("ifname", "") == ifname) return l;
    return nullptr;
  };
  j["links"] = nlohmann::json::array();
  for (const auto& l : plan.links) {
    auto a = find_if(l.a_node, l.a_interface);
    auto b = find_if(l.b_node, l.b_interface);
    nlohmann::json lj{{"a", l.a_node + ":" + l.a_interface},
                      {"b", l.b_node + ":" + l.b_interface},
                      {"mtu_expected", l.mtu}};
    lj["a_state"] = a.is_null() ? "missing" : a.value("operstate", "?");
    lj["b_state"] = b.is_null() ? "missing" : b.value("operstate", "?");
    lj["a_mtu"] = a.is_null() ? nlohmann::json(nullptr) : a["mtu"];
    lj["b_mtu"] = b.is_null() ? nlohmann::json(nullptr) : b["mtu"];
    j["links"].push_back(lj);
  }
  return ok(std::move(j));
}

}  // namespace twin::engine

namespace twin::engine {

// Per-node building blocks shared with reshape_lab (mutate.cpp): same code as `up`.
Result<void> prepare_node_files(const plan::Node& n) { return write_node_files(n); }

Result<int> start_node_daemons(const plan::Node& n, State& state, std::mutex& state_mu,
                               proc::ProcessRunner& runner) {
  std::string cg;
  for (const auto& r : state.resources)
    if (r.kind == "cgroup") cg = r.name;
  return start_node(n, cg, state, state_mu, runner);
}

}  // namespace twin::engine
