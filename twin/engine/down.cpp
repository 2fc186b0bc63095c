#include <signal.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "twin/core/util.hpp"
#include "twin/drivers/registry.hpp"
#include "twin/engine/lab.hpp"
#include "twin/wiring/wiring.hpp"

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace twin::engine {

Result<DownReport> down_locked(const std::string& lab, proc::ProcessRunner& runner);

Result<DownReport> down(const std::string& lab, proc::ProcessRunner& runner) {
  auto lock = state::lock_lab(lab);
  if (!lock) return lock.error();
  return down_locked(lab, runner);
}

Result<DownReport> down_locked(const std::string& lab, proc::ProcessRunner& runner) {
  DownReport rep;
  auto st = state::load_state(lab);
  if (!st) {
    // `up` saves the state before creating anything, so a folder without a state file (a crash
    // in the first milliseconds) holds nothing else to remove.
    std::error_code ec;
    if (fs::is_directory(state::lab_dir(lab)) && !fs::exists(state::state_path(lab))) {
      fs::remove_all(state::lab_dir(lab), ec);
      rep.paths_removed = 1;
      return rep;
    }
    return st.error();
  }
  state::State& s = *st;

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
        if (int pid = std::atoi(line.c_str()); pid > 0 && state::process_alive(pid, 0))
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
        if (pid > 0 && state::process_alive(pid, 0)) any = true;
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
    if (state::process_alive(r.pid, r.start_time)) {
      ::kill(r.pid, SIGKILL);
      ++rep.processes_killed;
    }
  }
  for (const auto& r : s.resources) {
    if (r.kind != "process") continue;
    auto until = Clock::now() + 5s;
    while (state::process_alive(r.pid, r.start_time) && Clock::now() < until)
      std::this_thread::sleep_for(10ms);
    if (state::process_alive(r.pid, r.start_time))
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

  // 2. What drivers made beside namespaces and processes (VMs, before their namespaces: QEMU
  //    lets go of the taps inside them).
  std::vector<state::Resource> left;  // recorded, still there: kept for the next `down`
  {
    drivers::Teardown t;
    for (const auto* d : drivers::all_drivers()) d->remove(s, runner, t);
    rep.vms_destroyed = t.vms_destroyed;
    rep.problems.insert(rep.problems.end(), t.problems.begin(), t.problems.end());
    left = std::move(t.left);
  }

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

  // The management network's host veth (gone with its peer's namespace, unless that failed)
  // and nftables table.
  for (const auto& r : s.resources) {
    if (r.kind == "host-veth" && fs::exists("/sys/class/net/" + r.name)) {
      auto d = wiring::run_batch(runner, "link del dev " + r.name + "\n", "",
                                 "removing the management veth", /*cancellable=*/false);
      if (!d) rep.problems.push_back(d.error().message);
    } else if (r.kind == "nft-table") {
      proc::Command c{{"nft", "delete", "table", "inet", r.name}, "", 10s};
      c.cancellable = false;
      auto d = runner.run(c);
      if (!d)
        rep.problems.push_back("removing nftables table " + r.name + ": " + d.error().message);
      else if (d->exit_code != 0 && d->err.find("No such file") == std::string::npos)
        rep.problems.push_back("removing nftables table " + r.name + ": " + trim_end(d->err));
    }
  }

  // 4. Files: run folders (FRR's crash-log folders are inside them), the lab folder last —
  //    unless something recorded is still there: its record (the state file in the lab folder)
  //    stays, holding only that, so the next `down` removes it rather than forgetting it.
  const std::string lab_folder = state::lab_dir(lab);
  for (auto it = s.resources.rbegin(); it != s.resources.rend(); ++it) {
    if (it->kind != "dir" || (!left.empty() && it->name == lab_folder)) continue;
    std::error_code ec;
    if (fs::remove_all(it->name, ec) > 0) ++rep.paths_removed;
    if (ec && ec != std::errc::no_such_file_or_directory)
      rep.problems.push_back("removing " + it->name + ": " + ec.message());
  }
  if (!left.empty()) {
    s.status = "down-incomplete";
    s.resources = std::move(left);
    s.resources.push_back({"dir", lab_folder, ""});
    if (auto saved = state::save_state(s); !saved)
      rep.problems.push_back("keeping the record of what is left: " + saved.error().message);
    else
      rep.problems.push_back("what could not be removed stays recorded: run `twin down --lab " +
                             lab + "` again");
    return rep;
  }
  // The lab directory holds the state file: if a step above failed, keep nothing half-known.
  std::error_code ec;
  fs::remove_all(lab_folder, ec);
  return rep;
}

}  // namespace twin::engine
