#pragma once
// A troubleshooting exercise (format v1, docs/training.md,
// scenarios/schema/exercise.schema.json): a topology, a hidden fault (a change set applied
// without being judged), the ticket a user would write about its symptom, the validator families
// that must fail while the fault is in and pass once it is fixed, ordered hints, a fix (a change
// set) with its explanation, a difficulty and a time budget. Loading is pure apart from reading
// the files; every problem is a diagnostic at file:line:col.
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "twin/core/diagnostics.hpp"
#include "twin/core/error.hpp"
#include "twin/core/input_policy.hpp"
#include "twin/topology/model.hpp"

namespace twin::training {

struct Exercise {
  std::string file, dir;  // absolute
  std::string name;       // as `twin exercise start NAME` spells it
  std::string title;
  int difficulty = 1;  // 1 (first day) .. 5 (senior)
  std::chrono::milliseconds time_budget{std::chrono::minutes(15)};
  std::string topology;  // absolute path of the topology file
  std::string fault;     // absolute path of the fault's change set (hidden from the trainee)
  std::string ticket;    // the symptom as a user reports it
  // Validator families that must fail while the fault is in (proof it is visible); empty = any.
  // Solved means every family passes and nothing the healthy lab had is lost, whatever these say.
  std::vector<std::string> criteria;
  std::vector<std::string> hints;  // in the order `hint` reveals them
  std::string fix;                 // absolute path of the fix's change set
  std::string explanation;
  topology::Mark mark;
  // What it was loaded under: its topology and change sets load under the same policy, and
  // with the same validator families (a check step of its fault or fix names them).
  InputPolicy policy;
  std::vector<std::string> families;
};

// The fields of an exercise file, as the loader accepts them (the schema test holds them equal
// to scenarios/schema/exercise.schema.json).
inline const std::vector<std::string> kExerciseKeys = {
    "version", "name",     "title", "difficulty", "time-budget", "topology",
    "fault",   "ticket",   "criteria", "hints",   "solution"};
inline const std::vector<std::string> kSolutionKeys = {"fix", "explanation"};
inline constexpr int kMaxDifficulty = 5;

// Loads and checks an exercise file: version 1, a name of letters, digits, '-' and '_', topology,
// fault and fix files that exist, criteria among `families` (the validator registry's), at least
// one hint. Every problem goes to `diags`; nullopt when there is any. The file and those it
// names pass `policy` (core/input_policy.hpp; null: the checkout root of `path`).
std::optional<Exercise> load_exercise(const std::string& path,
                                      const std::vector<std::string>& families, Diagnostics& diags,
                                      const InputPolicy* policy = nullptr);

// The exercises of a course folder (every *.yaml directly in it), each loaded; ordered by
// difficulty, then file name. Files that do not load are returned with their diagnostics, so a
// listing shows them instead of hiding them.
struct CourseEntry {
  std::string file;
  std::optional<Exercise> exercise;
  Diagnostics diags;
};
// `allow` (--allow-path) folders are allowed besides each file's checkout root.
std::vector<CourseEntry> load_course(const std::string& dir,
                                     const std::vector<std::string>& families,
                                     const std::vector<std::string>& allow = {});

// The exercise `name_or_path` of the course in `dir`: a file path, or an exercise's name.
// Errors (kUsage): no such exercise (naming the nearest names), or it does not load (with
// its diagnostics).
Result<Exercise> find_exercise(const std::string& dir, const std::string& name_or_path,
                               const std::vector<std::string>& families,
                               const std::vector<std::string>& allow = {});

}  // namespace twin::training
