#pragma once
// Which host files an input may name, and the one way twin reads them (docs/commands.md,
// "Which files inputs may name").
//
// twin gates pull requests: `twin run SCENARIO` runs on files a pull request wrote, and those
// files name more files (configs, daemons files, image profiles, binds, change sets,
// topologies). None of them may make twin read a host file the job did not mean to give it and
// copy its lines into the job's log. One rule, for the CLI and twin serve alike:
//   - a file may be read when, with every symlink resolved, it lies under a root: the checkout
//     root of the command's input (the nearest enclosing folder holding `.git`, found from the
//     path as it was given, else the input's own folder), a folder given with --allow-path, or,
//     for image profiles, a folder of the image search path;
//   - it must be a regular file (not a FIFO, device or socket) of at most kMaxInputBytes.
// A refused file is named with where files may lie and how to allow it; it is never opened, so
// no message can quote it.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "twin/core/diagnostics.hpp"
#include "twin/core/error.hpp"

namespace twin {

// Bytes: the largest file twin reads as input, and the largest request body twin serve takes
// (one cap on both paths). A 512-node topology is ~0.2 MiB; FRR configs are kilobytes.
inline constexpr std::uintmax_t kMaxInputBytes = 4u << 20;

// A folder inputs may name files under: canonical (symlinks resolved), and why it is one
// ("the checkout root of lab.yaml", "--allow-path").
struct InputRoot {
  std::string dir;
  std::string why;
};

// Why a named file may not be read: a diagnostic's message and hint.
struct InputProblem {
  enum class Kind { kOutside, kMissing, kDirectory, kNotRegular, kTooLarge, kUnreadable };
  Kind kind = Kind::kUnreadable;
  std::string message;  // "config file 'x.conf' resolves to /etc/shadow, outside ..."
  std::string hint;
};

// The folders a command's inputs may name files under. A value: copy it to add roots.
class InputPolicy {
 public:
  // The policy of a command whose inputs (files, or folders such as --configs DIR, as given on
  // the command line) are `inputs`: each one's checkout root, and every `allowed` folder
  // (--allow-path). An allowed folder that does not exist is a usage error naming it.
  static Result<InputPolicy> for_inputs(const std::vector<std::string>& inputs,
                                        const std::vector<std::string>& allowed = {});
  // The checkout root of `input` alone: what a loader uses when its caller gives no policy.
  static InputPolicy for_input(const std::string& input);
  // Only `dir` (twin serve: a request's folder holds everything the request may name).
  static InputPolicy only(const std::string& dir, const std::string& why);

  // A copy that also allows `dirs` (e.g. the image search path), each with `why`. Folders that
  // do not exist are skipped.
  [[nodiscard]] InputPolicy with_roots(const std::vector<std::string>& dirs,
                                       const std::string& why) const;

  // nullopt when `path` (absolute, or relative to the working folder) may be read; otherwise why
  // not, with `what` ("config file") and `path` as given in the message. Outside the roots wins
  // over every other problem: a refused file's existence, type and size are not revealed.
  [[nodiscard]] std::optional<InputProblem> check(const std::string& path,
                                                  const std::string& what) const;
  // Whether `path` lies under a root, symlinks resolved; the file need not exist. Pure but for
  // the symlinks it resolves: twin serve asks it of every value a request holds.
  [[nodiscard]] bool inside(const std::string& path) const;
  // check(), then the whole file (at most kMaxInputBytes, even when it grows while read).
  // nullopt with `*problem` set otherwise.
  std::optional<std::string> read(const std::string& path, const std::string& what,
                                  InputProblem* problem) const;

  [[nodiscard]] const std::vector<InputRoot>& roots() const { return roots_; }
  // The roots for a message: "/work/lab (the checkout root of lab.yaml), /opt/x (--allow-path)".
  [[nodiscard]] std::string where() const;

 private:
  std::optional<InputProblem> outside_problem(const std::string& path, const std::string& what,
                                              const std::string& resolved) const;
  void add(const std::string& dir, const std::string& why);
  std::vector<InputRoot> roots_;
};

// The checkout root of `input` (a file or a folder): the nearest folder holding `.git` above
// it, walked up from its absolute path as given (a symlinked folder inside a checkout does not
// move the root to where it points), else the input's own folder (a folder input: itself).
// Canonical.
std::string checkout_root(const std::string& input);

// `path` read whole if it is a regular file of at most `cap` bytes; no root check. For files an
// input named that its loader checked already (read again when a change is applied), and for
// files the operator gives twin serve. Errors (kInput) name the path and say what it is
// instead ("is not a regular file (a FIFO)", "is 5.0 MiB, over the 4 MiB cap").
Result<std::string> read_regular_file(const std::string& path, std::uintmax_t cap = kMaxInputBytes);

// A command's own input (the topology, change set, scenario or exercise it was given): read
// under `policy` as a file named by no field. A refusal becomes one diagnostic on the file
// itself (a folder: "is a directory, not a <what>" with `dir_hint`); nullopt then.
std::optional<std::string> read_input_file(const InputPolicy& policy, const std::string& path,
                                           const std::string& what, const std::string& dir_hint,
                                           Diagnostics& diags);

}  // namespace twin
