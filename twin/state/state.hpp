#pragma once
// The lab's state file: /run/twin/<lab>/state.json. Every resource `up` creates is appended
// here and saved BEFORE it is created, so `down` can remove exactly what exists even after a
// crash or SIGKILL of the harness half-way through `up` (a recorded resource that was never
// created is skipped by `down`).
#include <cstdint>
#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "twin/core/error.hpp"
#include "twin/core/util.hpp"
#include "twin/plan/plan.hpp"

namespace twin::state {

struct Resource {
  // "cgroup" (path) · "netns" (name) · "dir" (path, removed recursively) ·
  // "process" (pid + start_time: /proc/<pid>/stat field 22, which makes a reused PID
  // recognisable) · "tap" (root-namespace tap device) · "domain" (libvirt domain at `uri`) ·
  // "host-veth" (the management network's root-namespace veth) · "nft-table" (its nftables
  // table, family inet)
  std::string kind;
  std::string name;
  std::string node;
  int pid = 0;
  uint64_t start_time = 0;
  std::string uri;  // "domain" only
};

// The state file's format. 2: a plan may hold bridge nodes (LAN segments), which a twin that
// reads version 1 does not know. Version 1 files read as they are (they hold none).
inline constexpr int kStateSchemaVersion = 2;

struct State {
  int schema_version = kStateSchemaVersion;
  std::string lab;
  std::string status;  // "creating" | "up" | "failed"
  std::string created_at;
  std::string twin_version;
  plan::Plan plan;
  std::vector<Resource> resources;
};

// /run/twin/<lab>
std::string lab_dir(const std::string& lab);
std::string state_path(const std::string& lab);

// Claims the lab name atomically (mkdir of its directory). Errors: kUsage naming the running
// lab when the directory exists already.
Result<void> claim_lab(const std::string& lab);
// An exclusive flock(2) on the lab's directory, held by `up` from claim to return and by
// `down` while it removes: a second `down` (or a `down` during `up`'s own teardown) waits
// instead of racing. Released on destruction or when the process dies.
class LabLock {
 public:
  LabLock() = default;
  explicit LabLock(int fd) : fd_(fd) {}
  LabLock(LabLock&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  LabLock& operator=(LabLock&& o) noexcept;
  LabLock(const LabLock&) = delete;
  LabLock& operator=(const LabLock&) = delete;
  ~LabLock();

 private:
  int fd_ = -1;
};
// Blocks until the lock is held; `on_wait` (may be empty) is called once when another twin
// command holds it, so the caller can say why it waits. Errors: the lab directory does not
// exist (kUsage); SIGINT/SIGTERM while waiting (kInterrupted).
Result<LabLock> lock_lab(const std::string& lab, const std::function<void()>& on_wait = {});

// Writes atomically (temp file + rename): a crash leaves the old or the new file, never half.
Result<void> save_state(const State& s);
Result<State> load_state(const std::string& lab);
// The lab's recorded resources only, without building its plan (what a validation's process
// check reads on every attempt). Errors as load_state.
Result<std::vector<Resource>> load_resources(const std::string& lab);
// Names of labs (folders under /run/twin, also one whose `up` died before its first state
// save), sorted.
std::vector<std::string> list_labs();
// --lab resolution: the given lab, or the only running lab; kUsage listing labs otherwise.
Result<std::string> resolve_lab(const std::string& requested);

// resolve_lab + load_state: the state of the requested (or only running) lab.
Result<State> load_lab(const std::string& requested);

// /proc/<pid>/stat start time (clock ticks since boot), or 0 if the process does not exist
// (core/util.hpp; the runtime reads it too, for a container's process).
using twin::process_start_time;
// True if pid exists with that start time and is not a zombie.
bool process_alive(int pid, uint64_t start_time);
// The record of process `name` of `node` ("" for one of the lab's own: podman's service, the
// management network's DHCP server) among `resources`, or nullptr.
const Resource* find_process(const std::vector<Resource>& resources, const std::string& name,
                             const std::string& node);

// The lab's cgroup v2 folder as `st` records it ("" before `up` made one).
std::string cgroup_of(const State& st);
// How a recorded process that is no longer alive ended, in words, as far as this machine still
// knows: its exit status while it waits for its reaper ("killed by signal 9 (SIGKILL)", "exited
// with status 1": /proc/<pid>/stat field 52, Linux >= 3.5, readable until PID 1 reaps it, 2-3 s
// here), else "" (then the caller may read the program's own log). Pure but for /proc.
std::string exit_status_text(int pid, uint64_t start_time);
// The text for a wait(2) status ("killed by signal 11 (SIGSEGV)", "exited with status 1"). Pure.
std::string wait_status_text(int status);

// One thing a running node must have running — a daemon, a VM — and whether it does: what
// each node driver answers (drivers::NodeDriver::process_health) from the lab's record, and
// what the `node` validator family judges.
struct ProcessHealth {
  std::string name;   // "zebra", "bgpd", "vm leaf1" ...
  int pid = 0;        // the recorded PID; 0 when none is recorded (or a VM)
  bool known = true;  // false: whether it runs could not be read (detail says why)
  bool running = false;
  // When not running: how it ended where known ("killed by signal 9 (SIGKILL)", the daemon's
  // last words in its log), else why it is thought gone ("no process recorded").
  std::string detail;
};
// Stops recorded processes (kind "process"), by PID and start time only (never by name):
// SIGTERM to each still alive, up to 3 s for them to exit, SIGKILL to the rest, up to 3 s more.
// Errors: a process that survived SIGKILL (kHarness, naming it and `node`).
Result<void> stop_processes(const std::vector<Resource>& procs, const std::string& node);

}  // namespace twin::state
