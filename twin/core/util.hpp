#pragma once
// Small shared utilities: cancellation flag, clock, files.
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "twin/core/error.hpp"

namespace twin {

// Set by the CLI's SIGINT/SIGTERM handler; long operations poll it between steps and clean up
// like a failure does.
extern std::atomic<bool> g_interrupted;
inline bool interrupted() { return g_interrupted.load(std::memory_order_relaxed); }

// While an InterruptShield lives (any thread), programs run to their end despite SIGINT/SIGTERM:
// work that must not stop half-way (putting a failed element back: a router's daemons started
// but its configuration not yet applied is worse than either) finishes, and the caller sees
// interrupted() afterwards. Nestable.
extern std::atomic<int> g_interrupt_shields;
struct InterruptShield {
  InterruptShield() { ++g_interrupt_shields; }
  ~InterruptShield() { --g_interrupt_shields; }
  InterruptShield(const InterruptShield&) = delete;
  InterruptShield& operator=(const InterruptShield&) = delete;
};
// SIGINT/SIGTERM received so far (the CLI's handler counts them).
extern std::atomic<int> g_interrupt_count;
// While a SecondInterruptShield lives, programs run on through the first SIGINT/SIGTERM that
// arrives after it was raised, and stop at the second: a rollback is not given up at one Ctrl-C
// (docs/gate.md: "a second signal stops the rollback"). interrupted() still reports the first,
// so the caller knows afterwards. One at a time (not nestable).
extern std::atomic<int> g_second_interrupt_base;  // g_interrupt_count when raised; -1: none
struct SecondInterruptShield {
  SecondInterruptShield() { g_second_interrupt_base = base_; }
  ~SecondInterruptShield() { g_second_interrupt_base = -1; }
  // Signals received since the shield was raised (2 or more: programs were stopped).
  int signals() const { return g_interrupt_count.load() - base_; }
  SecondInterruptShield(const SecondInterruptShield&) = delete;
  SecondInterruptShield& operator=(const SecondInterruptShield&) = delete;

 private:
  const int base_ = g_interrupt_count.load();
};
// Whether a running program should be stopped: interrupted, and no shield holds it.
inline bool cancel_requested() {
  if (!interrupted() || g_interrupt_shields.load(std::memory_order_relaxed) != 0) return false;
  int base = g_second_interrupt_base.load(std::memory_order_relaxed);
  return base < 0 || g_interrupt_count.load(std::memory_order_relaxed) - base >= 2;
}

// A duration for people: milliseconds rounded to whole ones, "1310 ms".
std::string ms_text(double ms);

// Current time as RFC 3339 UTC with milliseconds: "2026-11-30T11:16:17.123Z".
std::string now_rfc3339();

using Clock = std::chrono::steady_clock;
inline double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

// Runs fn(i) for every i in [0, n) on up to `parallel` threads (at least one) and returns when
// all are done. fn must be safe to call concurrently for different i.
void parallel_for(size_t n, int parallel, const std::function<void(size_t)>& fn);

// `s` without leading and trailing blanks (space, tab, CR, LF).
std::string trim(const std::string& s);
// The blank-separated words of `s` (a configuration line's tokens).
std::vector<std::string> words(const std::string& s);

// Whole-file read / write helpers. Errors name the path.
Result<std::string> read_file(const std::string& path);
Result<void> write_file(const std::string& path, const std::string& content);
// write_file with the file's permission bits `mode` from the moment it exists (0600 for a key
// or a password); a symbolic link at `path` is refused. Errors (kHarness) name the file.
Result<void> write_file_mode(const std::string& path, const std::string& content, mode_t mode);
// write_file to `path`.tmp, renamed over `path`: a crash leaves the old file or the new one,
// never half of one. Errors (kHarness) name the file that failed.
Result<void> write_file_atomically(const std::string& path, const std::string& content);

// A private scratch folder under /tmp (mode 0700), removed with its contents on destruction.
// `path` is "" when it could not be created.
// /proc/<pid>/stat field 22, the process's start time in clock ticks since boot (what tells a
// reused PID apart), or 0 if the process does not exist.
uint64_t process_start_time(int pid);

struct TempDir {
  std::string path;
  TempDir();
  // Inside `parent` ("" = /tmp), which must exist.
  explicit TempDir(const std::string& parent);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

// `text` safe to print on a terminal: every control character an input file could carry to
// drive the terminal (ESC and the other C0 controls, DEL, and C1 — U+0080..U+009F, or a lone
// byte 0x80..0x9F that is no UTF-8) becomes `\xHH` (`\u00HH` for C1 in UTF-8), so a quoted
// value shows what it holds. Tab stays; newlines stay only with `keep_newlines` (a whole
// report); other UTF-8 (names, twin's own "—") is kept as it is. Pure.
std::string printable(std::string_view text, bool keep_newlines = false);

// `s` without trailing newlines and spaces (program output in messages).
std::string trim_end(std::string s);

// First line of `uname -r`-equivalent (utsname release).
std::string kernel_release();

// `j[key]` as text for messages and labels: a string as it is, another value as its JSON, ""
// when absent or null. Never throws.
std::string json_text(const nlohmann::json& j, const char* key);

// The connected components of an undirected graph (a lab's islands: nodes joined by links,
// directly or through others): each of `nodes` mapped to one member of its component, the same
// for the whole component. An edge naming a node not in `nodes` is left out.
std::map<std::string, std::string> components(
    const std::vector<std::string>& nodes,
    const std::vector<std::pair<std::string, std::string>>& edges);

}  // namespace twin
