#pragma once
// The records of training: one JSON file per attempt under <training dir>/attempts/, kept
// after `twin exercise stop` for an instructor (`twin exercise results`, JSON or CSV). The
// training dir is /var/lib/twin/training, or $TWIN_TRAINING_DIR (tests run without root).
// Files are written to a new name and renamed over the old one: a crash never leaves half a
// record.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "twin/core/error.hpp"

namespace twin::training {

// <training dir> (see above).
std::string training_dir();

// The record of one attempt, as `twin exercise results` prints it.
struct Attempt {
  std::string id;  // "<started, compact UTC>-<lab>-<exercise>"
  std::string lab, exercise, title, exercise_file, topology;
  int difficulty = 1;
  double time_budget_s = 0;
  std::string started_at, ended_at;  // RFC 3339 UTC; ended_at "" while running
  double started_epoch_s = 0;
  // in-progress | solved (a check found it solved) | solution-applied (`solution --apply`
  // before that) | stopped (before either)
  std::string state = "in-progress";
  double time_to_solve_s = -1;        // from start to the first check that found it solved
  int hints_used = 0;
  int checks = 0;
  int resets = 0;
  bool solution_shown = false;  // `solution` was asked before it was solved
  bool solution_applied = false;
  // `exercise start --allow-path` folders: later commands reload the exercise under them too.
  std::vector<std::string> allow_paths;
};
nlohmann::json to_json(const Attempt& a);
Attempt attempt_from_json(const nlohmann::json& j);

// <training dir>/attempts/<id>.json
std::string attempt_path(const std::string& id);
// Writes `text` to `path`, its folder created, with write_file_atomically. Errors:
// kHarness naming the path.
Result<void> write_atomically(const std::string& path, const std::string& text);
Result<void> save_attempt(const Attempt& a);

// Every attempt recorded, oldest first; `lab`/`exercise` filter when not empty.
std::vector<Attempt> results(const std::string& lab = "", const std::string& exercise = "");
// CSV with a header line: one row per attempt (RFC 4180 quoting).
std::string results_csv(const std::vector<Attempt>& attempts);

}  // namespace twin::training
