// Boost.Process v2 and Asio are header-only here and confined to this file: they cost seconds
// of compile time per translation unit (DESIGN.md §7).
#include <boost/optional.hpp>
#include <boost/type_traits/is_constructible.hpp>
#include <boost/type_traits/remove_pointer.hpp>
// Process v2 needs the three above first when BOOST_PROCESS_USE_STD_FS is set.
#include <fcntl.h>
#include <sched.h>
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

// Runs in the forked child before exec: only async-signal-safe calls.
struct EnterNsAndCgroup {
  int netns_fd = -1;
  int cgroup_fd = -1;  // cgroup.procs of the target cgroup, opened for writing
  const std::vector<std::pair<std::string, std::string>>* mounts = nullptr;
  const std::string* hostname = nullptr;
  int detach_pid_fd = -1;  // Command::detach: where the grandchild's PID is written

  // The grandchild forked for Command::detach reported its exec error: the child that forked
  // it has exited already and is reaped here, as nobody else will.
  template <class Launcher>
  void on_error(Launcher& launcher, const std::filesystem::path&, const char* const*&,
                const boost::system::error_code&) {
    if (detach_pid_fd >= 0 && launcher.pid > 0) ::waitpid(launcher.pid, nullptr, 0);
  }
  // Never called: Boost 1.81's launcher looks for on_error with this signature (an extra error
  // code first, posix/default_launcher.hpp, invoke_on_error) before calling the one above.
  template <class Launcher>
  void on_error(Launcher&, const boost::system::error_code&, const std::filesystem::path&,
                const char* const*&, const boost::system::error_code&) {}

  template <class Launcher>
  boost::system::error_code on_exec_setup(Launcher&, const std::filesystem::path&,
                                          const char* const*&) {
    auto fail = [] { return boost::system::error_code{errno, boost::system::system_category()}; };
    if (cgroup_fd >= 0 && ::write(cgroup_fd, "0\n", 2) != 2) return fail();
    if (mounts && !mounts->empty()) {
      if (::unshare(CLONE_NEWNS) != 0) return fail();
      // Slave: host mounts still propagate in, ours never propagate out.
      if (::mount(nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr) != 0) return fail();
      for (const auto& [src, dst] : *mounts)
        if (::mount(src.c_str(), dst.c_str(), nullptr, MS_BIND, nullptr) != 0) return fail();
    }
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
    if (detach_pid_fd >= 0) {
      // _Fork, not fork: no atfork handlers in a child of a multi-threaded process.
      pid_t pid = ::_Fork();
      if (pid < 0) return fail();
      if (pid > 0) {
        // The exec-error pipe stays open in the grandchild until it executes, so the parent
        // still learns whether that worked; this child's only job was to let it go.
        ssize_t ignored = ::write(detach_pid_fd, &pid, sizeof pid);
        (void)ignored;
        ::_exit(0);
      }
      if (::setsid() < 0) return fail();  // no terminal's Ctrl-C reaches a lab's daemon
    }
    return {};
  }
};

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

Result<Output> SystemRunner::run(const Command& cmd) {
  if (cmd.argv.empty()) return harness_error("empty command");
  auto exe = find_program(cmd.argv[0]);
  if (exe.empty()) return env_error("program '" + cmd.argv[0] + "' not found in PATH");

  EnterNsAndCgroup init;
  struct FdGuard {
    int& fd;
    ~FdGuard() {
      if (fd >= 0) ::close(fd);
    }
  } g1{init.netns_fd}, g2{init.cgroup_fd};
  if (!cmd.netns.empty()) {
    std::string path = "/run/netns/" + cmd.netns;
    init.netns_fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (init.netns_fd < 0)
      return harness_error("cannot open network namespace " + path + ": " + std::strerror(errno));
  }
  if (!cmd.cgroup.empty()) {
    std::string path = cmd.cgroup + "/cgroup.procs";
    init.cgroup_fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (init.cgroup_fd < 0)
      return harness_error("cannot open " + path + ": " + std::strerror(errno));
  }

  init.mounts = &cmd.bind_mounts;
  init.hostname = &cmd.hostname;
  int pid_pipe[2] = {-1, -1};
  FdGuard g3{pid_pipe[0]}, g4{pid_pipe[1]};
  if (cmd.detach) {
    if (cmd.output_file.empty()) return harness_error("a detached command needs an output file");
    if (::pipe2(pid_pipe, O_CLOEXEC) != 0)
      return harness_error(std::string("pipe: ") + std::strerror(errno));
    init.detach_pid_fd = pid_pipe[1];
  }

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
  // Process v2 makes the stdio pipes without O_CLOEXEC and closes the child's ends only after
  // fork returns: a program forked meanwhile by another thread would inherit them and hold this
  // child's stdout open forever (seen: a daemon keeping `vtysh -b`'s pipe, hanging `up`).
  // Spawns are therefore serialised; a spawn costs about a millisecond.
  static std::mutex spawn_mu;
  std::unique_lock spawn_lock(spawn_mu);
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
  int detached_pid = 0;
  if (cmd.detach) {
    ::close(pid_pipe[1]);
    pid_pipe[1] = -1;
    // Written before the child exits; the exec of the grandchild has already succeeded here.
    while (::read(pid_pipe[0], &detached_pid, sizeof detached_pid) < 0 && errno == EINTR) {
    }
    if (detached_pid <= 0)
      return harness_error("'" + render(cmd.argv) + "' started but its PID was not reported");
  }
  if (cmd.on_start) cmd.on_start(cmd.detach ? detached_pid : static_cast<int>(child.id()));

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
  result.pid = detached_pid;
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
