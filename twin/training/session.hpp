#pragma once
// `twin exercise`: a trainee's run of one exercise on their own lab. start brings the lab up
// (or reuses it, restored to its healthy reference), keeps that reference, injects the fault
// without judging it and proves it visible; check grades the lab by the validators against the
// reference; hint reveals the exercise's hints one at a time, then the likely-cause rules' own
// findings; reset restores the reference and injects the fault again (a rebuild only when the
// lab lost a namespace, a link or a daemon); solution shows the fault and the fix, and with
// apply applies the fix (restoring the reference where the fix alone does not make it pass);
// stop takes the lab down and closes the attempt.
//
// A session lives in <training dir>/sessions/<lab>.json (with the reference); each attempt's
// record in <training dir>/attempts/<id>.json (records.hpp), which outlives stop. Every change to the
// lab holds its lock (state::lock_lab), so a `twin apply` on the same lab waits.
#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "twin/core/error.hpp"
#include "twin/proc/runner.hpp"
#include "twin/training/exercise.hpp"
#include "twin/training/grade.hpp"
#include "twin/training/records.hpp"
#include "twin/validate/validator.hpp"

namespace twin::training {

struct SessionEnv {
  proc::ProcessRunner& runner;
  validate::ValidatorFactory validators;
  std::vector<std::string> families;  // the registry's names (exercises' criteria name them)
  std::function<void(const std::string&)> progress;  // may be empty
  int parallel = 4;
  // `start --allow-path`: recorded in the attempt, so later commands load under them too.
  std::vector<std::string> allow_paths;
};

struct StartResult {
  Attempt attempt;
  std::string ticket;
  std::string how;        // "built" | "reused (restored to its healthy reference)" | ...
  Grade grade;            // the fault, as check would grade it now
  double duration_ms = 0;
};
// Errors: kUsage (the lab runs another topology or outside an exercise), kInput (the fault or
// fix does not load), kEnvironment/kHarness (up failed; the lab was not healthy before the
// fault; the fault did not show — the exercise is broken — in which case the reference is
// restored).
Result<StartResult> start(const Exercise& ex, const std::string& lab_name, SessionEnv& env);

struct CheckResult {
  Attempt attempt;
  Grade grade;
  std::string settled;  // how waiting for a quiet network ended
  double duration_ms = 0;
  bool first_solve = false;  // this check found it solved for the first time
};
// Grades the lab now (after waiting at most `settle_timeout` for it to be quiet).
Result<CheckResult> check(const std::string& lab, SessionEnv& env,
                          std::chrono::milliseconds settle_timeout = std::chrono::seconds(10));

struct HintResult {
  Attempt attempt;
  int number = 0, of = 0;          // this hint's number, and how many the exercise has
  std::vector<std::string> lines;  // the hint (the likely causes after the authored ones)
  bool from_rules = false;         // the likely-cause rules' findings, not an authored hint
};
Result<HintResult> hint(const std::string& lab, SessionEnv& env);

struct ResetResult {
  Attempt attempt;
  std::string how;  // "restored and the fault injected again" | "rebuilt ..."
  Grade grade;
  double duration_ms = 0;
};
Result<ResetResult> reset(const std::string& lab, SessionEnv& env);

struct SolutionResult {
  Attempt attempt;
  std::string fault_text, fix_text, explanation;  // the change sets as written, the why
  bool applied = false;
  std::string how;  // with apply: "the fix solved it" | "the fix alone did not: ..."
  std::optional<Grade> grade;  // with apply: the grade after it
};
Result<SolutionResult> solution(const std::string& lab, bool apply, SessionEnv& env);

struct StopResult {
  Attempt attempt;
  int processes_killed = 0, namespaces_removed = 0;
};
Result<StopResult> stop(const std::string& lab, proc::ProcessRunner& runner);

// The session's attempt and exercise of `lab` (nothing changed).
struct StatusResult {
  Attempt attempt;
  Exercise exercise;
  bool lab_running = false;
  double elapsed_s = 0;
};
Result<StatusResult> status(const std::string& lab, const std::vector<std::string>& families);

// The lab of the only session when `lab` is empty. Errors (kUsage): none, or several (named).
Result<std::string> resolve_session(const std::string& lab);

}  // namespace twin::training
