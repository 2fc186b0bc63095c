// Boost.Process v2 and Asio are header-only here and confined to this file: they cost seconds
// of compile time per translation unit (DESIGN.md §7).
#include <boost/optional.hpp>
#include <boost/type_traits/is_constructible.hpp>
#include <boost/type_traits/remove_pointer.hpp>
// Process v2 needs the three above first when BOOST_PROCESS_USE_STD_FS is set.
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <linux/close_range.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/readable_pipe.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/writable_pipe.hpp>
#include <boost/asio/write.hpp>
#include <boost/process/v2/environment.hpp>
#include <boost/process/v2/process.hpp>
#include <boost/process/v2/stdio.hpp>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>

#include "twin/core/util.hpp"
#include "twin/proc/runner.hpp"

namespace asio = boost::asio;
namespace bp = boost::process::v2;

namespace twin::proc {

namespace {

// The child's own mount namespace: `binds` made, and with `writable` not empty everything
// read-only but those folders, the binds' targets, /proc and /dev (Command::writable). Runs in
// a child before exec: system calls only. Returns nullptr, or the step that failed (errno set).
const char* confine_mounts(const std::vector<std::pair<std::string, std::string>>* binds,
                           const std::vector<std::string>* writable) {
  const bool ro = writable && !writable->empty();
  if ((!binds || binds->empty()) && !ro) return nullptr;
  if (::unshare(CLONE_NEWNS) != 0) return "unshare(CLONE_NEWNS)";
  // Slave: host mounts still propagate in, ours never propagate out.
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr) != 0)
    return "mount --make-rslave /";
  if (ro)
    for (const auto& w : *writable)  // a mount of its own, so that it can stay writable
      if (::mount(w.c_str(), w.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0)
        return "bind-mounting a writable folder on itself";
  if (binds)
    for (const auto& [src, dst] : *binds)
      if (::mount(src.c_str(), dst.c_str(), nullptr, MS_BIND, nullptr) != 0) return "bind mount";
  if (!ro) return nullptr;
  struct mount_attr lock {};
  lock.attr_set = MOUNT_ATTR_RDONLY;
  if (::mount_setattr(AT_FDCWD, "/", AT_RECURSIVE, &lock, sizeof lock) != 0)
    return "making the file system read-only (mount_setattr: Linux >= 5.12)";
  struct mount_attr rw {};
  rw.attr_clr = MOUNT_ATTR_RDONLY;
  for (const auto& w : *writable)
    if (::mount_setattr(AT_FDCWD, w.c_str(), AT_RECURSIVE, &rw, sizeof rw) != 0)
      return "keeping a folder writable";
  if (binds)
    for (const auto& b : *binds)
      if (::mount_setattr(AT_FDCWD, b.second.c_str(), 0, &rw, sizeof rw) != 0)
        return "keeping a bind mount writable";
  // Kernel interfaces, not files: sysctls a daemon sets (`ip forwarding`), /dev/null. Where
  // they are not mounts of their own this changes nothing; that is not an error.
  for (const char* k : {"/proc", "/dev"})
    ::mount_setattr(AT_FDCWD, k, AT_RECURSIVE, &rw, sizeof rw);
  return nullptr;
}

// Runs in the forked child before exec: only async-signal-safe calls.
struct EnterNsAndCgroup {
  int netns_fd = -1;
  int mnt_fd = -1;     // a mount namespace to join first (Command::mount_ns)
  int cgroup_fd = -1;  // cgroup.procs of the target cgroup, opened for writing
  const std::vector<std::pair<std::string, std::string>>* mounts = nullptr;
  const std::vector<std::string>* writable = nullptr;
  const std::string* hostname = nullptr;
  template <class Launcher>
  boost::system::error_code on_exec_setup(Launcher&, const std::filesystem::path&,
                                          const char* const*&) {
    auto fail = [] { return boost::system::error_code{errno, boost::system::system_category()}; };
    if (cgroup_fd >= 0 && ::write(cgroup_fd, "0\n", 2) != 2) return fail();
    if (mnt_fd >= 0 && ::setns(mnt_fd, CLONE_NEWNS) != 0) return fail();
    if (confine_mounts(mounts, writable) != nullptr) return fail();
    if (hostname && !hostname->empty()) {
      if (::unshare(CLONE_NEWUTS) != 0) return fail();
      if (::sethostname(hostname->data(), hostname->size()) != 0) return fail();
    }
    if (netns_fd >= 0 && ::setns(netns_fd, CLONE_NEWNET) != 0) return fail();
    // The program gets its stdio and nothing else: every other descriptor this process holds
    // (another command's pipe ends, sockets) closes at exec. Without it a daemon started by a
    // `twin up` that twin serve ran kept the server's pipe to that `up` open, so the job
    // seemed to run 2 s longer (the runner's drain limit). Marked, not closed: Process v2's own
    // exec-error pipe is still needed until exec.
    ::syscall(SYS_close_range, 3u, ~0u, CLOSE_RANGE_CLOEXEC);
    return {};
  }
};

// Process v2 makes the stdio pipes without O_CLOEXEC and closes the child's ends only after
// fork returns: a program forked meanwhile by another thread would inherit them and hold that
// child's stdout open forever (seen: a daemon keeping `vtysh -b`'s pipe, hanging `up`).
// Spawns are therefore serialised; a spawn costs about a millisecond.
std::mutex spawn_mu;

// Command::detach without copying twin: posix_spawn's way (glibc spawni.c), twice. The child
// and the grandchild are clone(2)d with CLONE_VM | CLONE_VFORK: they run on stacks of their own
// in twin's memory, and the thread that spawns sleeps until each has executed or exited, so
// no page table is copied and none torn down (a fork of twin copied its whole address space,
// twice per daemon, and the children then faulted in copy-on-write pages; measured at 8x48,
// that was half of twin's CPU during `up`). Between clone and exec only system calls run:
// everything they need is prepared here, and every signal is blocked around the clone so that
// none of twin's handlers runs on a borrowed stack. The child enters the cgroup and namespaces
// and starts the grandchild; the grandchild leads a session of its own, takes the output file
// as stdout and stderr, /dev/null as stdin, twin's signal mask back, and executes. The child
// then exits: the program's parent is init (or a subreaper), never twin.
struct DetachedSpawn {
  const char* exe = nullptr;
  char* const* argv = nullptr;
  char* const* envp = nullptr;
  int netns_fd = -1, cgroup_fd = -1, out_fd = -1, null_fd = -1, mnt_fd = -1;
  const std::vector<std::pair<std::string, std::string>>* mounts = nullptr;
  const std::vector<std::string>* writable = nullptr;
  const std::string* hostname = nullptr;
  sigset_t old_mask{};
  char* grandchild_stack = nullptr;
  size_t stack_size = 0;
  // Written by the children, read by the spawning thread once they are done.
  int grandchild_pid = 0;
  int error = 0;             // errno of the step that failed
  const char* step = nullptr;  // which step
};

int detached_grandchild(void* arg) {
  auto* a = static_cast<DetachedSpawn*>(arg);
  // Handlers twin installed would run on this borrowed stack in twin's memory: back to default
  // before any signal is let through (ignored ones stay ignored, as after fork + exec).
  for (int sig = 1; sig < NSIG; ++sig) {
    struct sigaction sa {};
    if (::sigaction(sig, nullptr, &sa) == 0 && sa.sa_handler != SIG_DFL &&
        sa.sa_handler != SIG_IGN) {
      sa.sa_handler = SIG_DFL;
      sa.sa_flags = 0;
      ::sigaction(sig, &sa, nullptr);
    }
  }
  const char* step = "setsid";
  if (::setsid() < 0) goto fail;  // no terminal's Ctrl-C reaches a lab's daemon
  step = "redirecting stdio";
  if (::dup2(a->null_fd, 0) < 0 || ::dup2(a->out_fd, 1) < 0 || ::dup2(a->out_fd, 2) < 0)
    goto fail;
  ::sigprocmask(SIG_SETMASK, &a->old_mask, nullptr);
  step = "exec";
  ::execve(a->exe, a->argv, a->envp);
fail:
  a->error = errno;
  a->step = step;
  ::_exit(127);
}

int detached_child(void* arg) {
  auto* a = static_cast<DetachedSpawn*>(arg);
  auto fail = [&](const char* step) {
    a->error = errno;
    a->step = step;
    ::_exit(127);
  };
  if (a->cgroup_fd >= 0 && ::write(a->cgroup_fd, "0\n", 2) != 2) fail("joining the cgroup");
  if (a->mnt_fd >= 0 && ::setns(a->mnt_fd, CLONE_NEWNS) != 0) fail("entering the mount namespace");
  if (const char* step = confine_mounts(a->mounts, a->writable)) fail(step);
  if (a->hostname && !a->hostname->empty()) {
    if (::unshare(CLONE_NEWUTS) != 0) fail("unshare(CLONE_NEWUTS)");
    if (::sethostname(a->hostname->data(), a->hostname->size()) != 0) fail("sethostname");
  }
  if (a->netns_fd >= 0 && ::setns(a->netns_fd, CLONE_NEWNET) != 0) fail("entering the netns");
  // The program gets its stdio and nothing else (see EnterNsAndCgroup).
  ::syscall(SYS_close_range, 3u, ~0u, CLOSE_RANGE_CLOEXEC);
  int pid = ::clone(detached_grandchild, a->grandchild_stack + a->stack_size,
                    CLONE_VM | CLONE_VFORK | SIGCHLD, a);
  if (pid < 0) fail("clone");
  // Here the grandchild has executed, or failed and said why.
  if (a->error == 0) a->grandchild_pid = pid;
  ::_exit(0);
}

std::filesystem::path find_program(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  auto p = bp::environment::find_executable(name);
  if (!p.empty()) return p;
  for (const char* dir : {"/usr/lib/frr", "/usr/sbin", "/sbin", "/usr/bin", "/bin"}) {
    std::filesystem::path c = std::filesystem::path(dir) / name;
    if (::access(c.c_str(), X_OK) == 0) return c;
  }
  return {};
}

}  // namespace

std::string render(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) {
    if (!s.empty()) s += ' ';
    bool plain = !a.empty() && a.find_first_of(" \t\n'\"\\$`*?;&|<>(){}") == std::string::npos;
    if (plain) {
      s += a;
    } else {
      s += '\'';
      for (char c : a) s += c == '\'' ? std::string("'\\''") : std::string(1, c);
      s += '\'';
    }
  }
  return s;
}

namespace {

// Closes a descriptor the runner opened when it goes out of scope.
struct FdGuard {
  int& fd;
  ~FdGuard() {
    if (fd >= 0) ::close(fd);
  }
};

// The network namespace, cgroup.procs and mount namespace a child enters before exec
// (Command::netns, cgroup, mount_ns); each -1 when not asked for.
Result<void> open_targets(const Command& cmd, int& netns_fd, int& cgroup_fd, int& mnt_fd) {
  if (!cmd.mount_ns.empty()) {
    if (cmd.argv.empty() || cmd.argv[0].empty() || cmd.argv[0][0] != '/')
      return harness_error("a command run in another mount namespace needs an absolute path: " +
                           render(cmd.argv));
    mnt_fd = ::open(cmd.mount_ns.c_str(), O_RDONLY | O_CLOEXEC);
    if (mnt_fd < 0)
      return harness_error("cannot open mount namespace " + cmd.mount_ns + ": " +
                           std::strerror(errno));
  }
  if (!cmd.netns.empty()) {
    std::string path = "/run/netns/" + cmd.netns;
    netns_fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (netns_fd < 0)
      return harness_error("cannot open network namespace " + path + ": " + std::strerror(errno));
  }
  if (!cmd.cgroup.empty()) {
    std::string path = cmd.cgroup + "/cgroup.procs";
    cgroup_fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (cgroup_fd < 0) return harness_error("cannot open " + path + ": " + std::strerror(errno));
  }
  return {};
}

Result<Output> run_detached(const Command& cmd, const std::filesystem::path& exe) {
  if (cmd.output_file.empty()) return harness_error("a detached command needs an output file");
  auto start = std::chrono::steady_clock::now();
  DetachedSpawn a;
  FdGuard g1{a.netns_fd}, g2{a.cgroup_fd}, g3{a.out_fd}, g4{a.null_fd}, g5{a.mnt_fd};
  if (auto r = open_targets(cmd, a.netns_fd, a.cgroup_fd, a.mnt_fd); !r) return r.error();
  a.out_fd = ::open(cmd.output_file.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (a.out_fd < 0)
    return harness_error("cannot open " + cmd.output_file + ": " + std::strerror(errno));
  a.null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (a.null_fd < 0) return harness_error(std::string("cannot open /dev/null: ") + std::strerror(errno));
  // Above the three the grandchild dup2s onto: were twin started with one of them closed, the
  // output file could get it, and dup2 onto itself would leave it close-on-exec.
  for (int* fd : {&a.out_fd, &a.null_fd})
    if (*fd < 3) {
      int moved = ::fcntl(*fd, F_DUPFD_CLOEXEC, 3);
      if (moved < 0) return harness_error(std::string("fcntl: ") + std::strerror(errno));
      ::close(*fd);
      *fd = moved;
    }
  const std::string exe_text = exe.string();
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(exe_text.c_str()));
  for (size_t i = 1; i < cmd.argv.size(); ++i) argv.push_back(const_cast<char*>(cmd.argv[i].c_str()));
  argv.push_back(nullptr);
  a.exe = exe_text.c_str();
  a.argv = argv.data();
  a.envp = environ;
  a.mounts = &cmd.bind_mounts;
  a.writable = &cmd.writable;
  a.hostname = &cmd.hostname;
  // Two stacks in one mapping, freed once both children are done with them.
  constexpr size_t kStack = 256 * 1024;
  void* stacks = ::mmap(nullptr, 2 * kStack, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stacks == MAP_FAILED) return harness_error(std::string("mmap: ") + std::strerror(errno));
  a.grandchild_stack = static_cast<char*>(stacks) + kStack;
  a.stack_size = kStack;
  sigset_t all;
  ::sigfillset(&all);
  int child = -1, clone_errno = 0, status = 0;
  {
    // close_range marks every other descriptor close-on-exec in the child; the lock keeps a
    // concurrent Process v2 spawn's pipes from existing unmarked meanwhile all the same (see
    // spawn_mu), should close_range be missing (Linux < 5.11).
    std::lock_guard lock(spawn_mu);
    ::pthread_sigmask(SIG_SETMASK, &all, &a.old_mask);
    child = ::clone(detached_child, static_cast<char*>(stacks) + kStack,
                    CLONE_VM | CLONE_VFORK | SIGCHLD, &a);
    clone_errno = errno;
    ::pthread_sigmask(SIG_SETMASK, &a.old_mask, nullptr);
  }
  // It has exited (CLONE_VFORK returns then): reap it.
  while (child > 0 && ::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  ::munmap(stacks, 2 * kStack);
  if (child < 0) return harness_error(std::string("clone: ") + std::strerror(clone_errno));
  if (a.error != 0)
    return harness_error("cannot start '" + render(cmd.argv) + "': " +
                         (a.step ? a.step : "unknown step") + ": " + std::strerror(a.error));
  if (WIFSIGNALED(status) || a.grandchild_pid <= 0)
    return harness_error("cannot start '" + render(cmd.argv) + "': the process starting it " +
                         (WIFSIGNALED(status) ? "was killed by signal " +
                                                    std::to_string(WTERMSIG(status))
                                              : std::string("exited without starting it")));
  if (cmd.on_start) cmd.on_start(a.grandchild_pid);
  Output result;
  result.exit_code = 0;
  result.pid = a.grandchild_pid;
  result.elapsed_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace

Result<Output> SystemRunner::run(const Command& cmd) {
  if (cmd.argv.empty()) return harness_error("empty command");
  auto exe = find_program(cmd.argv[0]);
  if (exe.empty()) return env_error("program '" + cmd.argv[0] + "' not found in PATH");
  if (cmd.detach) return run_detached(cmd, exe);

  EnterNsAndCgroup init;
  FdGuard g1{init.netns_fd}, g2{init.cgroup_fd}, g3{init.mnt_fd};
  if (auto r = open_targets(cmd, init.netns_fd, init.cgroup_fd, init.mnt_fd); !r) return r.error();

  init.mounts = &cmd.bind_mounts;
  init.writable = &cmd.writable;
  init.hostname = &cmd.hostname;

  asio::io_context ctx;
  asio::readable_pipe out_pipe(ctx), err_pipe(ctx);
  asio::writable_pipe in_pipe(ctx);
  std::vector<std::string> args(cmd.argv.begin() + 1, cmd.argv.end());
  auto start = std::chrono::steady_clock::now();
  std::unique_ptr<FILE, int (*)(FILE*)> log(nullptr, &std::fclose);
  if (!cmd.output_file.empty()) {
    log.reset(std::fopen(cmd.output_file.c_str(), "ae"));
    if (!log) return harness_error("cannot open " + cmd.output_file + ": " + std::strerror(errno));
  }
  std::optional<bp::process> maybe_child;
  std::unique_lock spawn_lock(spawn_mu);  // see spawn_mu
  try {
    if (log)
      maybe_child.emplace(ctx.get_executor(), exe, args,
                          bp::process_stdio{nullptr, log.get(), log.get()}, init);
    else
      maybe_child.emplace(ctx.get_executor(), exe, args,
                          bp::process_stdio{in_pipe, out_pipe, err_pipe}, init);
  } catch (const boost::system::system_error& e) {
    return harness_error("cannot start '" + render(cmd.argv) + "': " + e.code().message());
  }
  spawn_lock.unlock();
  bp::process& child = *maybe_child;
  if (cmd.on_start) cmd.on_start(static_cast<int>(child.id()));

  Output result;
  std::array<char, 8192> obuf{}, ebuf{};
  std::function<void(boost::system::error_code, size_t)> on_out, on_err;
  bool out_done = static_cast<bool>(log), err_done = static_cast<bool>(log);
  on_out = [&](boost::system::error_code e, size_t n) {
    result.out.append(obuf.data(), n);
    if (!e)
      out_pipe.async_read_some(asio::buffer(obuf), on_out);
    else
      out_done = true;
  };
  size_t err_lines_done = 0;  // result.err up to here was given to on_err_line
  on_err = [&](boost::system::error_code e, size_t n) {
    result.err.append(ebuf.data(), n);
    if (cmd.on_err_line) {
      for (size_t nl; (nl = result.err.find('\n', err_lines_done)) != std::string::npos;
           err_lines_done = nl + 1)
        cmd.on_err_line(result.err.substr(err_lines_done, nl - err_lines_done));
      if (e && err_lines_done < result.err.size()) {
        cmd.on_err_line(result.err.substr(err_lines_done));
        err_lines_done = result.err.size();
      }
    }
    if (!e)
      err_pipe.async_read_some(asio::buffer(ebuf), on_err);
    else
      err_done = true;
  };
  if (!log) {
    out_pipe.async_read_some(asio::buffer(obuf), on_out);
    err_pipe.async_read_some(asio::buffer(ebuf), on_err);
  }
  if (log) {
    // stdin is /dev/null
  } else if (!cmd.input.empty()) {
    asio::async_write(in_pipe, asio::buffer(cmd.input),
                      [&](boost::system::error_code, size_t) { in_pipe.close(); });
  } else {
    in_pipe.close();
  }
  bool timed_out = false, exited = false, cancelled = false;
  int exit_code = -1;
  asio::steady_timer timer(ctx, cmd.timeout);
  timer.async_wait([&](boost::system::error_code e) {
    if (e || exited) return;
    timed_out = true;
    boost::system::error_code ignore;
    child.terminate(ignore);  // SIGKILL
  });
  // Exit is watched through a pidfd (Linux >= 5.3): readable once the child exits. Process v2's
  // async_wait relies on a process-wide SIGCHLD handler shared by every io_context, which was
  // seen to miss a child's exit when several threads launch programs at once (a hung `up`).
  asio::steady_timer poll(ctx);
  asio::posix::stream_descriptor exit_watch(ctx);
  Clock::time_point exit_time;
  auto on_exit = [&] {
    if (exited) return;
    boost::system::error_code ec;
    int code = child.wait(ec);
    exited = true;
    exit_time = Clock::now();
    exit_code = ec ? -1 : code;
    timer.cancel();
    boost::system::error_code ignore;
    exit_watch.cancel(ignore);
  };
  int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, child.id(), 0));
  if (pidfd >= 0) {
    exit_watch.assign(pidfd);
    exit_watch.async_wait(asio::posix::stream_descriptor::wait_read,
                          [&](boost::system::error_code e) {
                            if (!e) on_exit();
                          });
  }
  // SIGINT/SIGTERM only set a flag; check it often so a cancelled CI job stops promptly. Without
  // a pidfd, the same timer polls for the child's exit.
  std::function<void(boost::system::error_code)> check = [&](boost::system::error_code e) {
    if (e) return;
    if (exited) {
      if (out_done && err_done) return;
      // A grandchild that kept our stdout open must not hang the harness: give output 2 s to
      // drain after the child exited, then stop reading.
      if (Clock::now() - exit_time > std::chrono::seconds(2)) {
        boost::system::error_code ignore;
        out_pipe.close(ignore);
        err_pipe.close(ignore);
        return;
      }
      poll.expires_after(std::chrono::milliseconds(50));
      poll.async_wait(check);
      return;
    }
    if (cmd.cancellable && !cancelled && cancel_requested()) {
      cancelled = true;
      boost::system::error_code ignore;
      child.terminate(ignore);
    }
    if (pidfd < 0) {
      boost::system::error_code ec;
      if (!child.running(ec)) {
        exited = true;
        exit_time = Clock::now();
        exit_code = ec ? -1 : child.exit_code();
        timer.cancel();
      }
    }
    poll.expires_after(std::chrono::milliseconds(pidfd < 0 ? 5 : 50));
    poll.async_wait(check);
  };
  check({});
  ctx.run();
  result.elapsed_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (cancelled)
    return Error{ErrorKind::kInterrupted, "interrupted while running '" + render(cmd.argv) + "'"};
  if (timed_out)
    return harness_error("'" + render(cmd.argv) + "' timed out after " +
                         std::to_string(cmd.timeout.count()) + " ms");
  result.exit_code = exit_code;
  return result;
}

std::vector<Result<Output>> run_all(ProcessRunner& runner, const std::vector<Command>& cmds,
                                    int parallel) {
  std::vector<Result<Output>> results(cmds.size(), Result<Output>(harness_error("not run")));
  parallel_for(cmds.size(), parallel, [&](size_t i) { results[i] = runner.run(cmds[i]); });
  return results;
}

Result<Output> run_checked(ProcessRunner& runner, const Command& cmd, const std::string& what) {
  auto r = runner.run(cmd);
  if (!r) return r.error().with_context(what);
  if (r->exit_code != 0) {
    std::string err = r->err.empty() ? r->out : r->err;
    while (!err.empty() && (err.back() == '\n' || err.back() == ' ')) err.pop_back();
    return harness_error(what + ": '" + render(cmd.argv) + "' exited " +
                         std::to_string(r->exit_code) + (err.empty() ? "" : ": " + err));
  }
  return r;
}

}  // namespace twin::proc
