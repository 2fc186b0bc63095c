#include "twin/drivers/frr_node.hpp"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "twin/core/input_policy.hpp"
#include "twin/core/util.hpp"
#include "twin/runtime/frr.hpp"
#include "twin/runtime/frr_config.hpp"
#include "twin/runtime/ndisc.hpp"
#include "twin/runtime/netlink.hpp"
#include "twin/runtime/vty.hpp"
#include "twin/topology/host_paths.hpp"

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace twin::drivers {

namespace {

// User frr owns what the node's daemons write and read: this machine's frr, or the one of a
// container node's image (its ids differ: 997:996 in Debian 13's, 102:106 on this host).
Result<void> chown_frr(const plan::Node* n, const std::string& path) {
  uid_t uid;
  gid_t gid;
  if (n && n->container.frr_uid >= 0) {
    uid = static_cast<uid_t>(n->container.frr_uid);
    gid = static_cast<gid_t>(n->container.frr_gid);
  } else {
    struct passwd* pw = ::getpwnam("frr");
    if (!pw) return env_error("user frr does not exist");
    uid = pw->pw_uid;
    gid = pw->pw_gid;
  }
  if (::chown(path.c_str(), uid, gid) != 0)
    return harness_error("chown frr " + path + ": " + std::strerror(errno));
  return {};
}

// A generated config split per daemon (runtime::split_generated_config), or nullopt when the
// integrated frr.conf must go through `vtysh -b`.
std::optional<std::map<std::string, std::string>> own_configs(const plan::Node& n) {
  // With mgmtd, staticd reads no file of its own: the integrated config goes through vtysh.
  if (!n.config_generated || runtime::frr_has_mgmtd(n)) return std::nullopt;
  return runtime::split_generated_config(n.frr_config, n.daemons);
}

}  // namespace

Result<void> frr_preflight(const std::vector<plan::Node*>& nodes) {
  std::set<std::string> daemons;
  for (const auto* n : nodes)
    for (const auto& d : n->daemons) daemons.insert(d);
  for (const auto& d : daemons)
    if (::access(runtime::daemon_path(d).c_str(), X_OK) != 0)
      return env_error("FRR daemon " + runtime::daemon_path(d) +
                       " is missing; run tools/install-deps.sh (package frr)");
  if (daemons.empty()) return {};
  if (::getpwnam("frr") == nullptr)
    return env_error("user 'frr' does not exist; the frr package creates it");
  // Mount point for each daemon's private crash-log folder (FRR creates the same folder itself
  // on first start: lib/zlog.c TMPBASEDIR).
  if (!fs::is_directory("/var/tmp/frr")) {
    std::error_code ec;
    fs::create_directories("/var/tmp/frr", ec);
    if (ec) return env_error("cannot create /var/tmp/frr: " + ec.message());
    fs::permissions("/var/tmp/frr", fs::perms::owner_all, ec);
    if (auto r = chown_frr(nullptr, "/var/tmp/frr"); !r) return r;
  }
  return {};
}

Result<void> write_frr_files(const plan::Node& n) {
  std::error_code ec;
  fs::create_directories(n.run_dir, ec);
  if (ec) return harness_error("creating " + n.run_dir + ": " + ec.message());
  std::string config = n.frr_config;
  // A user's file, read now; a node without one (containerlab's FRR node that names none)
  // boots the plan's text, as a generated config does.
  if (!n.config_generated && !n.config_source.empty()) {
    auto text = read_regular_file(n.config_source);  // the loader checked it; the cap holds
    if (!text) return text.error();
    // What the user's lines would write or read on this machine lands in the node's run
    // folder (the plan's notes name each).
    config = topology::redirect_host_paths(*text, topology::host_files_dir(n.run_dir), nullptr);
  }
  fs::create_directories(n.run_dir + "/tmp", ec);
  if (!ec) fs::create_directories(n.run_dir + "/log", ec);
  if (!ec) fs::create_directories(topology::host_files_dir(n.run_dir), ec);
  if (ec) return harness_error("creating " + n.run_dir + "/tmp: " + ec.message());
  if (auto r = write_file(n.run_dir + "/frr.conf", config); !r) return r;
  // vtysh inside `twin exec` reads /etc/frr/vtysh.conf (bind-mounted from here); integrated
  // mode makes `write memory` update this node's frr.conf.
  if (auto r = write_file(n.run_dir + "/vtysh.conf", "service integrated-vtysh-config\n"); !r)
    return r;
  for (const auto& p :
       {n.run_dir, n.run_dir + "/tmp", n.run_dir + "/log", topology::host_files_dir(n.run_dir),
        n.run_dir + "/frr.conf", n.run_dir + "/vtysh.conf"})
    if (auto r = chown_frr(&n, p); !r) return r;
  if (auto parts = own_configs(n))
    for (const auto& [daemon, text] : *parts) {
      auto path = runtime::daemon_config_path(n, daemon);
      if (auto r = write_file(path, text); !r) return r;
      if (auto r = chown_frr(&n, path); !r) return r;
    }
  return {};
}

Result<void> save_frr_config(const plan::Node& n, const std::string& config) {
  const std::string path = n.run_dir + "/frr.conf";
  const std::string tmp = path + ".saving";
  if (auto r = write_file(tmp, config); !r) return r;
  if (auto r = chown_frr(&n, tmp); !r) return r;
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) return harness_error("saving " + path + ": " + ec.message());
  return {};
}

Result<void> stop_frr_daemons(const plan::Node& n, BuildContext& ctx) {
  auto procs = ctx.record.take("process", n.name);
  // The node's sshd (drivers/ssh.hpp) is no routing daemon: a restart of FRR keeps it.
  std::erase_if(procs, [&](const state::Resource& p) {
    if (p.name != "sshd") return false;
    ctx.record.note(p);
    return true;
  });
  if (auto r = state::stop_processes(procs, n.name); !r) {
    for (const auto& p : procs)  // whatever still runs is still the lab's
      if (state::process_alive(p.pid, p.start_time)) ctx.record.note(p);
    return r.error();
  }
  for (const auto& d : n.daemons) {
    std::error_code ec;
    fs::remove(n.run_dir + "/" + d + ".pid", ec);
    fs::remove(n.run_dir + "/" + d + ".vty", ec);
  }
  return {};
}

Result<int> boot_frr_daemons(const plan::Node& n, BuildContext& ctx) {
  plan::Node boot = n;
  boot.config_generated = false;  // the saved integrated frr.conf, through vtysh -b
  boot.config_source.clear();
  return start_frr_daemons(boot, ctx);
}

namespace {

// The last lines a daemon printed (its output file): why it stopped during start-up.
std::string output_tail(const std::string& path) {
  std::ifstream f(path);
  std::string text = trim_end(
      std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>()));
  constexpr size_t kTail = 600;
  return text.size() > kTail ? "..." + text.substr(text.size() - kTail) : text;
}

// Starts daemon `d` of node `n` in the lab's cgroup, reading its own share of the generated
// config when `own`, else nothing (-f /dev/null); its PID is noted in ctx.record. Returns once
// the daemon serves its vty socket: FRR opens it after writing the pid file and before its first
// event, the read of its config (lib/libfrr.c, frr_config_fork and frr_run), so commands sent
// from then on follow the config.
Result<void> start_daemon(const plan::Node& n, const std::string& d, bool own, BuildContext& ctx) {
  proc::Command c{runtime::daemon_argv(n, d, own), "", 30s, n.netns, ctx.record.cgroup()};
  // FRR keeps crash logs in /var/tmp/frr/<daemon>.<pid> (lib/zlog.c, fixed path, named after
  // its PID); a private bind keeps them in the node's run folder, which `down` removes, and
  // lets --artifacts collect them.
  c.bind_mounts = {{n.run_dir + "/tmp", "/var/tmp/frr"}};
  // A user's `log file /var/log/frr/...` (where FRR's packages log) lands in the node's run
  // folder too, not in this machine's: `down` removes it, --artifacts collects it.
  if (std::error_code e; fs::is_directory("/var/log/frr", e))
    c.bind_mounts.push_back({n.run_dir + "/log", "/var/log/frr"});
  c.output_file = n.run_dir + "/" + d + ".out";
  c.hostname = n.name;
  // Nothing but the node's run folder (which holds the two binds above) is writable for the
  // daemon: whatever file a line of its config names, the machine's stay untouched.
  c.writable = {n.run_dir};
  runtime::use_node_programs(n, c);  // a container node's daemons are its image's
  c.detach = true;  // in the foreground of its own session: see runtime::daemon_argv
  // The run ends as soon as the daemon is executing; an interrupt then would lose its PID (it
  // would stay in the lab's cgroup, unrecorded). The wait below stops on the interrupt.
  c.cancellable = false;
  // A socket left by an earlier run of this daemon would read as this one being ready.
  const std::string sock = n.run_dir + "/" + d + ".vty";
  std::error_code ec;
  fs::remove(sock, ec);
  auto r = proc::run_checked(ctx.runner, c, "starting " + d);
  if (!r) return r.error();
  const int pid = r->pid;
  const uint64_t start_time = state::process_start_time(pid);
  // In memory only: the caller saves once per phase. Until then the lab's cgroup (recorded
  // and saved before any daemon started) is how `down` finds this process.
  ctx.record.note({"process", d, n.name, pid, start_time});
  const auto until = std::chrono::steady_clock::now() + c.timeout;
  // The daemon is recorded: whoever stops on an interrupt (up's teardown, a rollback) stops it.
  switch (runtime::wait_vty_listening(sock, pid, until, [] { return cancel_requested(); })) {
    case runtime::VtyWait::kListening:
      break;
    case runtime::VtyWait::kExited:
      return harness_error(d + " exited during start-up: " + output_tail(c.output_file));
    case runtime::VtyWait::kCancelled:
      return Error{ErrorKind::kInterrupted, "interrupted while " + d + " was starting"};
    case runtime::VtyWait::kTimedOut:
      if (!state::process_alive(pid, start_time))
        return harness_error(d + " exited during start-up: " + output_tail(c.output_file));
      return harness_error(d + " started (PID " + std::to_string(pid) +
                           ") but did not serve its vty socket " + sock + " within " +
                           std::to_string(c.timeout.count() / 1000) + " s");
  }
  return {};
}

}  // namespace

std::vector<std::string> solicitation_ports(const plan::Node& n) {
  std::vector<std::string> ports;
  for (const auto& i : n.interfaces)
    if (i.up && i.mtu >= 1280) ports.push_back(i.name);  // below 1280 the port has no IPv6
  return ports;
}

void solicit_neighbours(const plan::Node& n) {
  const auto ports = solicitation_ports(n);
  if (ports.empty() || n.netns.empty()) return;
  (void)runtime::run_in_netns(n.netns, [&]() -> Result<void> {
    auto r = runtime::solicit_routers(ports);
    if (!r) return r.error();
    return {};
  });
}

Result<int> start_frr_daemons(const plan::Node& n, BuildContext& ctx) {
  int started = 0;
  bool own = own_configs(n).has_value();
  for (const auto& d : n.daemons) {
    if (auto r = start_daemon(n, d, own, ctx); !r) return r.error();
    ++started;
  }
  if (!n.daemons.empty() && !own) {
    proc::Command c = runtime::vtysh_command(n, {"-b"}, 60s);
    auto r = ctx.runner.run(c);
    if (!r) return r.error().with_context("applying frr.conf");
    // vtysh -b reports each rejected line; a non-zero exit means part of the config failed.
    if (r->exit_code != 0) {
      // Own configs passed FRR's parser before `up` (check_own_configs): what remains is a
      // line a daemon refused at run time, named by its line in the user's file.
      const std::string file = n.config_source.empty() ? n.run_dir + "/frr.conf" : n.config_source;
      std::string msg;
      // Each daemon that refuses a line says so: the line once.
      std::set<std::pair<int, std::string>> said;
      for (const auto& c : runtime::vtysh_complaints(r->out + r->err))
        if (said.insert(c).second)
          msg += (msg.empty() ? "" : "; ") + file + ":" + std::to_string(c.first) + ": " + c.second;
      if (msg.empty()) msg = trim_end(r->out + r->err);
      // A container node's release is named: the same line may pass on another release.
      const std::string frr = n.container.frr_version.empty() ? "FRR"
                                                              : "FRR " + n.container.frr_version +
                                                                    " (" + n.container.image + ")";
      return input_error("node " + n.name + ": " + frr +
                         " rejected its configuration (vtysh -b exit " +
                         std::to_string(r->exit_code) + "): " + msg);
    }
  }
  // zebra now advertises on the ports its configuration (or bgpd) enabled; the neighbours'
  // advertisements it missed while it was not running are asked for again.
  if (started > 0) solicit_neighbours(n);
  return started;
}

Result<void> restart_frr_daemon(const plan::Node& n, const std::string& d, BuildContext& ctx) {
  if (std::find(n.daemons.begin(), n.daemons.end(), d) == n.daemons.end()) {
    std::string known;
    for (const auto& x : n.daemons) known += (known.empty() ? "" : ", ") + x;
    return usage_error("node " + n.name + " does not run " + d + " (it runs " + known + ")");
  }
  std::vector<state::Resource> stop, keep;
  for (auto& r : ctx.record.take("process", n.name)) (r.name == d ? stop : keep).push_back(r);
  for (auto& r : keep) ctx.record.note(r);
  if (auto r = state::stop_processes(stop, n.name); !r) {
    for (const auto& p : stop)
      if (state::process_alive(p.pid, p.start_time)) ctx.record.note(p);
    return r.error();
  }
  std::error_code ec;
  fs::remove(n.run_dir + "/" + d + ".pid", ec);
  fs::remove(n.run_dir + "/" + d + ".vty", ec);
  if (auto r = start_daemon(n, d, false, ctx); !r) return r.error();
  // The startup config's lines for this daemon only: vtysh connects to the daemons -d names and
  // sends each line to those of them that take it.
  proc::Command c = runtime::vtysh_command(n, {"-b", "-d", d}, 60s);
  auto r = ctx.runner.run(c);
  if (!r) return r.error().with_context("applying frr.conf to " + d);
  if (r->exit_code != 0) {
    std::string msg;
    for (const auto& [line, what] : runtime::vtysh_complaints(r->out + r->err))
      msg +=
          (msg.empty() ? "" : "; ") + n.run_dir + "/frr.conf:" + std::to_string(line) + ": " + what;
    if (msg.empty()) msg = trim_end(r->out + r->err);
    return input_error("node " + n.name + ": FRR's " + d +
                       " rejected the startup configuration (vtysh -b exit " +
                       std::to_string(r->exit_code) + "): " + msg);
  }
  if (d == "zebra") solicit_neighbours(n);
  return {};
}

std::string frr_last_words(const std::string& log_path) {
  std::ifstream f(log_path, std::ios::binary);
  if (!f) return "";
  constexpr std::streamoff kTail = 64 * 1024;
  f.seekg(0, std::ios::end);
  const std::streamoff size = f.tellg();
  f.seekg(size > kTail ? size - kTail : 0);
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  // FRR's words as a daemon goes (lib/sigevent.c, lib/libfrr.c, each daemon's sigint handler).
  static const std::vector<std::string> kMarkers = {"Received signal",
                                                    "Terminating on signal",
                                                    "Exiting on signal",
                                                    "exiting",
                                                    "aborting",
                                                    "Assertion",
                                                    "FATAL",
                                                    "Fatal"};
  std::string found;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(pos, end - pos);
    for (const auto& m : kMarkers)
      if (line.find(m) != std::string::npos) {
        found = line;
        break;
      }
    pos = end + 1;
  }
  // "2026/12/06 10:00:01 BGP: [XYZ12-ABCDE] Received signal 11 ...": from the message on.
  if (auto tag = found.find("] "); tag != std::string::npos && tag < 80)
    found = found.substr(tag + 2);
  constexpr size_t kMax = 200;
  if (found.size() > kMax) found = found.substr(0, kMax) + "...";
  return trim_end(found);
}

namespace {
// The last line sshd printed (<node run dir>/ssh/sshd.log), "" when none.
std::string sshd_last_words(const plan::Node& n) {
  std::ifstream f(n.run_dir + "/ssh/sshd.log");
  std::string line, last;
  while (std::getline(f, line)) {
    std::erase(line, '\r');
    if (!trim(line).empty()) last = trim(line);
  }
  return last;
}
}  // namespace

std::vector<state::ProcessHealth> frr_process_health(const plan::Node& n,
                                                     const std::vector<state::Resource>& recorded) {
  std::vector<state::ProcessHealth> out;
  std::vector<std::string> expected = n.daemons;
  // A member of the management network serves SSH: a dead sshd is an orchestrator locked out.
  if (!n.mgmt_address.empty()) expected.push_back("sshd");
  for (const auto& d : expected) {
    state::ProcessHealth h{d};
    const state::Resource* rec = nullptr;
    for (const auto& r : recorded)  // the last one recorded is the current one
      if (r.kind == "process" && r.name == d) rec = &r;
    if (!rec) {
      h.detail = "no process recorded for it (not started, or stopped and not restarted)";
      out.push_back(h);
      continue;
    }
    h.pid = rec->pid;
    h.running = state::process_alive(rec->pid, rec->start_time);
    if (!h.running) {
      std::string how = state::exit_status_text(rec->pid, rec->start_time);
      // sshd's own output (drivers/ssh.hpp) is its last words; the daemons' are FRR's logs.
      std::string words = d == "sshd" ? sshd_last_words(n) : frr_last_words(n.run_dir + "/" + d + ".log");
      if (how.empty() && words.empty())
        how =
            "it ended without a word: no exit status left to read, nothing in its log (as "
            "after a SIGKILL)";
      h.detail = how + (how.empty() || words.empty() ? "" : "; ") +
                 (words.empty() ? "" : "its log: " + words);
    }
    out.push_back(h);
  }
  return out;
}

Result<void> change_frr_daemons(const plan::Node& from, const plan::Node& to, BuildContext& ctx) {
  auto has = [](const plan::Node& n, const std::string& d) {
    return std::find(n.daemons.begin(), n.daemons.end(), d) != n.daemons.end();
  };
  // Gone first: a daemon that no longer runs must not hold what a new one takes.
  std::vector<state::Resource> stop;
  for (auto& r : ctx.record.take("process", from.name))
    if (has(to, r.name))
      ctx.record.note(r);
    else
      stop.push_back(r);
  if (auto r = state::stop_processes(stop, from.name); !r) {
    for (const auto& p : stop)
      if (state::process_alive(p.pid, p.start_time)) ctx.record.note(p);
    return r.error();
  }
  for (const auto& p : stop) {
    std::error_code ec;
    fs::remove(from.run_dir + "/" + p.name + ".pid", ec);
    fs::remove(from.run_dir + "/" + p.name + ".vty", ec);
  }
  for (const auto& d : to.daemons) {
    if (has(from, d)) continue;
    // Started empty: the configuration that needed it follows (the change's own lines).
    // Returns once its vty socket is served: the lines that follow reach it through that.
    if (auto r = start_daemon(to, d, false, ctx); !r) return r.error();
  }
  return {};
}

}  // namespace twin::drivers
