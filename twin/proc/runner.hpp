#pragma once
// The one place twin starts programs (DESIGN.md §2 proc/). Every run has a timeout; output is
// captured; the child can be placed in a network namespace and a cgroup before it executes,
// so a daemon is inside its lab's cgroup from its first instruction (no window in which a crash
// of the harness could leave an untracked process).
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "twin/core/error.hpp"

namespace twin::proc {

struct Command {
  std::vector<std::string> argv;  // argv[0] is looked up in PATH (and /usr/lib/frr, /usr/sbin)
  std::string input;              // written to the child's stdin, then stdin is closed
  std::chrono::milliseconds timeout{30000};
  std::string netns;   // enter /run/netns/<netns> before exec ("" = stay)
  std::string cgroup;  // cgroup v2 directory to join before exec ("" = stay)
  // A mount namespace to join before the bind mounts below (a file such as /proc/<pid>/ns/mnt:
  // a container's, whose root then is the child's root). argv[0] must then be an absolute path
  // inside that namespace. "" = the caller's.
  std::string mount_ns;
  // Bind mounts (source, target) made in a private mount namespace of the child, e.g. to give
  // an FRR daemon its own /var/tmp/frr. Empty = share the caller's mount namespace.
  std::vector<std::pair<std::string, std::string>> bind_mounts;
  // When not empty, the child's private mount namespace is read-only everywhere but these
  // folders (each must exist), the bind mounts' targets, /proc and /dev: where a lab's FRR
  // daemons and vtysh run, so that a command writing a file (`log file`, `output file`, ...)
  // reaches nothing of the machine's, whatever path it names. Needs Linux >= 5.12
  // (mount_setattr(2)); the error says so on an older one.
  std::vector<std::string> writable;
  // When set, the child gets a private UTS namespace with this hostname (FRR advertises it in
  // the BGP hostname capability and shows it in `show bgp summary`).
  std::string hostname;
  // When set, stdout and stderr are appended to this file instead of being captured. Needed for
  // daemons that fork: a captured pipe would stay open in the daemon and never reach EOF.
  std::string output_file;
  // Teardown must finish even after SIGINT/SIGTERM: such commands ignore the interrupt flag.
  bool cancellable = true;
  // Called on the runner's thread with each complete line of stderr (no newline) as it arrives,
  // besides collecting it in Output::err: a long child's progress, streamed (twin serve's jobs).
  std::function<void(const std::string&)> on_err_line;
  // Called once with the child's PID right after it started (to signal it later: a job's
  // cancel sends SIGTERM to exactly this process).
  std::function<void(int)> on_start;
  // Start the program in a session of its own and do not wait for it: the runner's child starts
  // it and exits at once, so the program belongs to init, never a zombie of a long-running
  // twin (serve). Both are clone(2)d sharing twin's memory until they execute (posix_spawn's
  // way), so twin's address space is never copied (runner.cpp, DetachedSpawn). run() returns once it has executed (exit_code 0, Output::pid its PID) or
  // with the error exec gave. For daemons kept in the foreground (FRR without -d): FRR's own
  // daemonising forks a process that has already built its command graph and YANG context,
  // and the copy-on-write faults that follow cost ~20 ms of CPU per daemon (bench/README).
  // Needs output_file (the program's stdout and stderr); stdin is /dev/null.
  bool detach = false;
};

struct Output {
  int exit_code = -1;  // 128+N when killed by signal N (as shells report it)
  int pid = 0;         // Command::detach: the PID of the program started (else 0)
  std::string out;
  std::string err;
  double elapsed_ms = 0;
};

// Seam for tests: validators and the engine take a runner so they can be fed recorded output.
class ProcessRunner {
 public:
  virtual ~ProcessRunner() = default;
  // Runs to completion. Errors: program not found, namespace/cgroup cannot be entered, timeout
  // (the child is killed with SIGKILL and reaped), interruption (SIGINT/SIGTERM seen by the
  // harness: the child is killed; ErrorKind::kInterrupted). A non-zero exit is NOT an error:
  // callers decide what an exit code means.
  virtual Result<Output> run(const Command& cmd) = 0;
};

// The real runner (Boost.Process v2 + Asio).
class SystemRunner final : public ProcessRunner {
 public:
  Result<Output> run(const Command& cmd) override;
};

// Runs commands with at most `parallel` at a time; results in input order.
std::vector<Result<Output>> run_all(ProcessRunner& runner, const std::vector<Command>& cmds,
                                    int parallel);

// "ip -n ns link ..." style helper: runs and turns a non-zero exit into an error carrying
// stderr. `what` names the action for the message.
Result<Output> run_checked(ProcessRunner& runner, const Command& cmd, const std::string& what);

// Shell-style rendering of argv for logs and error messages.
std::string render(const std::vector<std::string>& argv);

}  // namespace twin::proc
