#include "twin/core/input_policy.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace fs = std::filesystem;

namespace twin {

namespace {

// The path with symlinks resolved as far as it exists (a missing file keeps its name).
fs::path resolve(const std::string& path) {
  std::error_code ec;
  fs::path abs = fs::absolute(path, ec);
  if (ec) abs = fs::path(path);
  fs::path r = fs::weakly_canonical(abs, ec);
  return ec ? abs.lexically_normal() : r;
}

// A path for a message: as absolute and normal as it reads, without a trailing '/'.
std::string lexical(const std::string& path) {
  std::error_code ec;
  fs::path p = fs::absolute(path, ec).lexically_normal();
  if (p.filename().empty() && p.has_parent_path() && p != p.root_path()) p = p.parent_path();
  return p.string();
}

bool under(const std::string& path, const std::string& dir) {
  if (dir == "/") return true;
  return path == dir || (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
                         path[dir.size()] == '/');
}

std::string mib(std::uintmax_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1u << 20));
  return buf;
}

std::string cap_text(std::uintmax_t cap) {
  return (cap % (1u << 20) == 0 ? std::to_string(cap >> 20) + " MiB" : mib(cap)) + " (" +
         std::to_string(cap) + " bytes)";
}

const char* type_name(mode_t m) {
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  return "not a file";
}

using Kind = InputProblem::Kind;

// What the file at `resolved` is, if it cannot be read as input: missing, a folder, a FIFO or
// device, too large. `st` gets its status.
std::optional<std::pair<Kind, std::string>> file_problem(const fs::path& resolved,
                                                         std::uintmax_t cap, struct stat* st) {
  if (::stat(resolved.c_str(), st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR)
      return std::pair{Kind::kMissing, std::string("does not exist")};
    return std::pair{Kind::kUnreadable, std::string("cannot be read: ") + std::strerror(errno)};
  }
  if (S_ISDIR(st->st_mode)) return std::pair{Kind::kDirectory, std::string("is a directory")};
  if (!S_ISREG(st->st_mode))
    return std::pair{Kind::kNotRegular,
                     std::string("is not a regular file (") + type_name(st->st_mode) + ")"};
  if (static_cast<std::uintmax_t>(st->st_size) > cap)
    return std::pair{Kind::kTooLarge, "is " + mib(static_cast<std::uintmax_t>(st->st_size)) + " (" +
                                          std::to_string(st->st_size) + " bytes), over the " +
                                          cap_text(cap) + " cap on input files"};
  return std::nullopt;
}

const char* hint_for(Kind k) {
  switch (k) {
    case Kind::kNotRegular:
      return "twin reads its inputs from regular files: a pipe or device could feed it without "
             "end";
    case Kind::kTooLarge:
      return "input files are topologies, change sets and FRR configs: kilobytes, not megabytes";
    default:
      return "";
  }
}

// The file's bytes, at most `cap`: opened without following a last symlink (`resolved` has
// none) and without blocking, then checked again on the descriptor it read from.
std::optional<std::string> read_capped(const fs::path& resolved, std::uintmax_t cap,
                                       std::pair<Kind, std::string>* why) {
  int fd = ::open(resolved.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW);
  if (fd < 0) {
    *why = {errno == ENOENT ? Kind::kMissing : Kind::kUnreadable,
            errno == ENOENT ? std::string("does not exist")
                            : std::string("cannot be read: ") + std::strerror(errno)};
    return std::nullopt;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    *why = {Kind::kNotRegular,
            std::string("is not a regular file (") + type_name(st.st_mode) + ")"};
    return std::nullopt;
  }
  std::string out;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      *why = {Kind::kUnreadable, std::string("cannot be read: ") + std::strerror(errno)};
      ::close(fd);
      return std::nullopt;
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    // A file that grows while read (or a /proc file that says it is empty) stops at the cap.
    if (out.size() > cap) {
      ::close(fd);
      *why = {Kind::kTooLarge, "is larger than the " + cap_text(cap) + " cap on input files"};
      return std::nullopt;
    }
  }
  ::close(fd);
  return out;
}

}  // namespace

std::string checkout_root(const std::string& input) {
  fs::path abs(lexical(input));
  std::error_code ec;
  fs::path start = fs::is_directory(abs, ec) ? abs : abs.parent_path();
  // From the top down: the innermost folder holding .git, but a symlinked folder inside a
  // checkout starts none (the checkout's author chose where it points).
  std::vector<fs::path> chain;
  for (fs::path p = start; !p.empty(); p = p.parent_path()) {
    chain.push_back(p);
    if (p == p.root_path()) break;
  }
  fs::path root;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    if (!root.empty() && fs::is_symlink(*it, ec)) break;
    if (fs::exists(*it / ".git", ec)) root = *it;
  }
  if (root.empty()) root = start;
  auto c = fs::weakly_canonical(root, ec);
  return ec ? root.string() : c.string();
}

Result<InputPolicy> InputPolicy::for_inputs(const std::vector<std::string>& inputs,
                                            const std::vector<std::string>& allowed) {
  InputPolicy p;
  for (const auto& in : inputs)
    if (!in.empty())
      p.add(checkout_root(in), "the checkout root of " + fs::path(lexical(in)).filename().string());
  for (const auto& a : allowed) {
    std::error_code ec;
    if (!fs::is_directory(a, ec))
      return usage_error("--allow-path " + a + ": " +
                         (fs::exists(a, ec) ? "not a folder" : "no such folder") +
                         "; give a folder whose files inputs may name");
    p.add(resolve(a).string(), "--allow-path");
  }
  return p;
}

InputPolicy InputPolicy::for_input(const std::string& input) {
  InputPolicy p;
  p.add(checkout_root(input),
        "the checkout root of " + fs::path(lexical(input)).filename().string());
  return p;
}

InputPolicy InputPolicy::only(const std::string& dir, const std::string& why) {
  InputPolicy p;
  p.add(resolve(dir).string(), why);
  return p;
}

InputPolicy InputPolicy::with_roots(const std::vector<std::string>& dirs,
                                    const std::string& why) const {
  InputPolicy p = *this;
  for (const auto& d : dirs) {
    std::error_code ec;
    if (fs::is_directory(d, ec)) p.add(resolve(d).string(), why);
  }
  return p;
}

void InputPolicy::add(const std::string& dir, const std::string& why) {
  for (const auto& r : roots_)
    if (r.dir == dir) return;
  roots_.push_back({dir, why});
}

std::string InputPolicy::where() const {
  std::string s;
  for (const auto& r : roots_) s += (s.empty() ? "" : ", ") + r.dir + " (" + r.why + ")";
  return s.empty() ? "none" : s;
}

bool InputPolicy::inside(const std::string& path) const {
  std::string r = resolve(path).string();
  for (const auto& root : roots_)
    if (under(r, root.dir)) return true;
  return false;
}

std::optional<InputProblem> InputPolicy::outside_problem(const std::string& path,
                                                         const std::string& what,
                                                         const std::string& resolved) const {
  for (const auto& root : roots_)
    if (under(resolved, root.dir)) return std::nullopt;
  std::string named = lexical(path);
  InputProblem p;
  p.kind = Kind::kOutside;
  p.message = what + " '" + path + "' " +
              (named == resolved ? "lies" : "resolves to " + resolved + ",") +
              " outside the folders inputs may name files under: " + where();
  std::string folder = fs::path(resolved).parent_path().string();
  p.hint = "move it under " + (roots_.empty() ? std::string("the input's folder") : roots_[0].dir) +
           ", or allow its folder with --allow-path " + folder;
  return p;
}

std::optional<InputProblem> InputPolicy::check(const std::string& path,
                                               const std::string& what) const {
  std::string resolved = resolve(path).string();
  if (auto out = outside_problem(path, what, resolved)) return out;
  struct stat st {};
  if (auto bad = file_problem(resolved, kMaxInputBytes, &st))
    return InputProblem{bad->first, what + " '" + path + "' " + bad->second, hint_for(bad->first)};
  return std::nullopt;
}

std::optional<std::string> InputPolicy::read(const std::string& path, const std::string& what,
                                             InputProblem* problem) const {
  if (auto bad = check(path, what)) {
    *problem = *bad;
    return std::nullopt;
  }
  std::pair<Kind, std::string> why;
  auto text = read_capped(resolve(path), kMaxInputBytes, &why);
  if (!text) *problem = {why.first, what + " '" + path + "' " + why.second, hint_for(why.first)};
  return text;
}

Result<std::string> read_regular_file(const std::string& path, std::uintmax_t cap) {
  fs::path resolved = resolve(path);
  struct stat st {};
  std::pair<Kind, std::string> why;
  if (auto bad = file_problem(resolved, cap, &st)) {
    why = *bad;
  } else if (auto text = read_capped(resolved, cap, &why)) {
    return *text;
  }
  return input_error(path + " " + why.second);
}

std::optional<std::string> read_input_file(const InputPolicy& policy, const std::string& path,
                                           const std::string& what, const std::string& dir_hint,
                                           Diagnostics& diags) {
  InputProblem p;
  auto text = policy.read(path, what, &p);
  if (text) return text;
  switch (p.kind) {
    case Kind::kDirectory:
      diags.add({path, 0, 0, "", "is a directory, not a " + what, dir_hint});
      break;
    case Kind::kMissing:
      diags.add({path, 0, 0, "", "cannot read " + what + ": " + std::strerror(ENOENT), ""});
      break;
    default:
      diags.add({path, 0, 0, "", p.message, p.hint});
  }
  return std::nullopt;
}

}  // namespace twin
