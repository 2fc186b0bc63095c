// twin exercise: troubleshooting exercises for trainees (training/session.hpp).
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "twin/cli/commands.hpp"
#include "twin/core/util.hpp"
#include "twin/proc/runner.hpp"
#include "twin/training/exercise.hpp"
#include "twin/training/session.hpp"
#include "validators/registry.hpp"

namespace twin::cli {

namespace {

std::string course_dir(const ExerciseOptions& o) {
  return o.dir.empty() ? std::string(TWIN_DATA_DIR) + "/scenarios/exercises" : o.dir;
}

// The folders an exercise's files may come from besides its checkout root: --allow-path, and
// for twin's own course twin's data folder (its lab topologies and change sets), which is no
// checkout once installed. Absolute: later commands (check, reset) may run elsewhere.
std::vector<std::string> allowed(const ExerciseOptions& o) {
  std::vector<std::string> out;
  for (const auto& a : o.inputs.allow_paths)
    out.push_back(std::filesystem::absolute(a).lexically_normal().string());
  if (o.dir.empty()) out.push_back(TWIN_DATA_DIR);
  return out;
}

std::string minutes(double s) {
  long t = std::lround(s);
  std::ostringstream o;
  o << t / 60 << "m" << std::setw(2) << std::setfill('0') << t % 60 << "s";
  return o.str();
}

nlohmann::json grade_json(const training::Grade& g) {
  return {{"solved", g.solved},
          {"criteria_failing", g.criteria_failing},
          {"failing", g.failing},
          {"symptoms", g.symptoms}};
}

int emit(const ExerciseOptions& o, const nlohmann::json& j, const std::string& text, int code) {
  if (o.json)
    std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  else
    std::cout << text;
  return code;
}

int list(const ExerciseOptions& o) {
  auto course = training::load_course(course_dir(o), validators::family_names(), allowed(o));
  if (course.empty())
    return fail("no exercises in " + course_dir(o) + " (--dir gives another course folder)", 2);
  nlohmann::json j = nlohmann::json::array();
  std::ostringstream t;
  t << std::left << std::setw(26) << "EXERCISE" << std::setw(6) << "LEVEL" << std::setw(8)
    << "BUDGET" << "TITLE\n";
  int bad = 0;
  for (const auto& c : course) {
    if (!c.exercise) {
      ++bad;
      std::cerr << c.diags.format();
      j.push_back({{"file", c.file}, {"diagnostics", c.diags.to_json()}});
      continue;
    }
    const auto& e = *c.exercise;
    double budget = static_cast<double>(e.time_budget.count()) / 1000.0;
    j.push_back({{"name", e.name},
                 {"title", e.title},
                 {"difficulty", e.difficulty},
                 {"time_budget_s", budget},
                 {"topology", e.topology},
                 {"hints", e.hints.size()},
                 {"file", e.file}});
    t << std::left << std::setw(26) << e.name << std::setw(6) << e.difficulty << std::setw(8)
      << (std::to_string(static_cast<long>(budget / 60)) + "m") << e.title << "\n";
  }
  t << "\nstart one: twin exercise start NAME [--name LAB]\n";
  return emit(o, j, t.str(), bad ? 2 : 0);
}

}  // namespace

int run_exercise(const ExerciseOptions& o) {
  if (o.action == "list") return list(o);
  if (o.action == "results") {
    auto all = training::results(o.lab, o.exercise);
    if (o.csv) {
      std::cout << training::results_csv(all);
      return 0;
    }
    nlohmann::json j = nlohmann::json::array();
    std::ostringstream t;
    t << std::left << std::setw(12) << "LAB" << std::setw(24) << "EXERCISE" << std::setw(18)
      << "STATE" << std::setw(10) << "SOLVED IN" << std::setw(7) << "HINTS" << std::setw(8)
      << "CHECKS" << "STARTED\n";
    for (const auto& a : all) {
      j.push_back(training::to_json(a));
      t << std::left << std::setw(12) << a.lab << std::setw(24) << a.exercise << std::setw(18)
        << a.state << std::setw(10) << (a.time_to_solve_s < 0 ? "-" : minutes(a.time_to_solve_s))
        << std::setw(7) << a.hints_used << std::setw(8) << a.checks << a.started_at << "\n";
    }
    if (all.empty()) t.str("no attempts recorded in " + training::training_dir() + "\n");
    return emit(o, j, t.str(), 0);
  }
  proc::SystemRunner runner;
  auto start_time = Clock::now();
  training::SessionEnv env{runner, validators::make_validators, {}, {}, 4};
  env.families = validators::family_names();
  env.progress = [&](const std::string& line) {
    std::cerr << "twin: [" << std::fixed << std::setprecision(1) << ms_since(start_time) / 1000.0
              << "s] " << printable(line) << "\n";
  };
  if (o.action == "start") {
    env.allow_paths = allowed(o);
    auto ex = training::find_exercise(course_dir(o), o.exercise, env.families, env.allow_paths);
    if (!ex) return fail(ex.error().message, exit_code(ex.error()));
    auto r = training::start(*ex, o.lab, env);
    if (!r) return fail(r.error().message, exit_code(r.error()));
    record_event(r->attempt.lab, "exercise",
                 {{"action", "start"}, {"exercise", ex->name}, {"source", "cli"}});
    nlohmann::json j = {{"lab", r->attempt.lab},
                        {"exercise", ex->name},
                        {"title", ex->title},
                        {"difficulty", ex->difficulty},
                        {"time_budget_s", r->attempt.time_budget_s},
                        {"ticket", r->ticket},
                        {"lab_was", r->how},
                        {"fault_visible", r->grade.criteria_failing > 0},
                        {"grade", grade_json(r->grade)},
                        {"duration_ms", r->duration_ms},
                        {"attempt", r->attempt.id}};
    std::ostringstream t;
    t << "exercise " << ex->name << ": " << ex->title << " (level " << ex->difficulty
      << ", budget " << minutes(r->attempt.time_budget_s) << ")\n"
      << "lab " << r->attempt.lab << " " << r->how << "; ready in " << std::fixed
      << std::setprecision(1) << r->duration_ms / 1000.0 << " s\n\n"
      << "TICKET\n";
    std::istringstream in(r->ticket);
    for (std::string line; std::getline(in, line);) t << "  " << line << "\n";
    t << "\nWork in the lab: twin shell --lab " << r->attempt.lab << " NODE, twin exec --lab "
      << r->attempt.lab << " NODE -- CMD (or the terminal of `twin serve`).\n"
      << "twin exercise check   grades the lab     twin exercise hint      one hint at a time\n"
      << "twin exercise reset   back to the start  twin exercise solution  the fault and its fix\n";
    return emit(o, j, t.str(), 0);
  }
  auto lab = training::resolve_session(o.lab);
  if (!lab) return fail(lab.error().message, exit_code(lab.error()));
  if (o.action == "status") {
    auto r = training::status(*lab, env.families);
    if (!r) return fail(r.error().message, exit_code(r.error()));
    const auto& a = r->attempt;
    nlohmann::json j = training::to_json(a);
    j["lab_running"] = r->lab_running;
    j["elapsed_s"] = r->elapsed_s;
    j["hints_available"] = r->exercise.hints.size() + 1;
    j["ticket"] = r->exercise.ticket;
    std::ostringstream t;
    t << "lab " << a.lab << ": exercise " << a.exercise << " — " << a.title << "\n"
      << "  state " << a.state
      << (a.time_to_solve_s >= 0 ? " in " + minutes(a.time_to_solve_s) : std::string()) << ", "
      << minutes(r->elapsed_s) << " since start (budget " << minutes(a.time_budget_s) << ")\n"
      << "  hints " << a.hints_used << "/" << r->exercise.hints.size() + 1 << ", checks "
      << a.checks << ", resets " << a.resets
      << (a.solution_shown ? ", solution shown" : "") << "\n"
      << (r->lab_running ? "" : "  the lab is down: `twin exercise reset` builds it again\n");
    return emit(o, j, t.str(), 0);
  }
  if (o.action == "check") {
    auto r = training::check(*lab, env);
    if (!r) return fail(r.error().message, exit_code(r.error()));
    if (r->first_solve)
      record_event(*lab, "exercise",
                   {{"action", "solved"}, {"exercise", r->attempt.exercise},
                    {"time_to_solve_s", r->attempt.time_to_solve_s}, {"source", "cli"}});
    nlohmann::json j = grade_json(r->grade);
    j["lab"] = *lab;
    j["exercise"] = r->attempt.exercise;
    j["checks"] = r->attempt.checks;
    j["duration_ms"] = r->duration_ms;
    j["time_to_solve_s"] = r->attempt.time_to_solve_s < 0
                               ? nlohmann::json(nullptr)
                               : nlohmann::json(r->attempt.time_to_solve_s);
    std::ostringstream t;
    if (r->grade.solved) {
      t << "SOLVED: every validator passes and nothing the healthy fabric had is lost";
      if (r->attempt.time_to_solve_s >= 0)
        t << " (in " << minutes(r->attempt.time_to_solve_s) << ", " << r->attempt.hints_used
          << " hint" << (r->attempt.hints_used == 1 ? "" : "s") << ", " << r->attempt.checks
          << " check" << (r->attempt.checks == 1 ? "" : "s") << ")";
      t << "\n  next: twin exercise stop, or twin exercise start ANOTHER\n";
    } else {
      t << "NOT YET: " << r->grade.symptoms.size()
        << (r->grade.symptoms.size() == 1 ? " symptom remains" : " symptoms remain")
        << " (a change just made may still be converging: check again in a few seconds)\n";
      for (const auto& s : r->grade.symptoms) t << "  - " << s << "\n";
    }
    return emit(o, j, t.str(), r->grade.solved ? 0 : 1);
  }
  if (o.action == "hint") {
    auto r = training::hint(*lab, env);
    if (!r) return fail(r.error().message, exit_code(r.error()));
    nlohmann::json j = {{"lab", *lab},
                        {"number", r->number},
                        {"of", r->of},
                        {"from_rules", r->from_rules},
                        {"hint", r->lines}};
    std::ostringstream t;
    t << "hint " << r->number << "/" << r->of
      << (r->from_rules ? " (what twin's likely-cause rules find in the lab now)" : "") << ":\n";
    for (const auto& l : r->lines) t << "  " << l << "\n";
    return emit(o, j, t.str(), 0);
  }
  if (o.action == "reset") {
    auto r = training::reset(*lab, env);
    if (!r) return fail(r.error().message, exit_code(r.error()));
    nlohmann::json j = {{"lab", *lab},
                        {"exercise", r->attempt.exercise},
                        {"how", r->how},
                        {"fault_visible", r->grade.criteria_failing > 0},
                        {"grade", grade_json(r->grade)},
                        {"duration_ms", r->duration_ms}};
    std::ostringstream t;
    t << "lab " << *lab << " " << r->how << " in " << std::fixed << std::setprecision(1)
      << r->duration_ms / 1000.0 << " s; the ticket's symptoms are back:\n";
    std::string text = t.str();
    for (const auto& s : r->grade.symptoms) text += "  - " + s + "\n";
    return emit(o, j, text, 0);
  }
  if (o.action == "solution") {
    auto r = training::solution(*lab, o.apply, env);
    if (!r) return fail(r.error().message, exit_code(r.error()));
    nlohmann::json j = {{"lab", *lab},
                        {"exercise", r->attempt.exercise},
                        {"fault", r->fault_text},
                        {"fix", r->fix_text},
                        {"explanation", r->explanation},
                        {"applied", r->applied}};
    if (r->grade) {
      j["how"] = r->how;
      j["grade"] = grade_json(*r->grade);
    }
    std::ostringstream t;
    t << "THE FAULT (" << r->attempt.exercise << ")\n" << r->fault_text << "\nTHE FIX\n"
      << r->fix_text << "\nWHY\n" << r->explanation << "\n";
    if (r->grade) {
      t << "\napplied: " << r->how << "\n"
        << (r->grade->solved ? "every validator passes again\n" : "STILL FAILING:\n");
      std::string text = t.str();
      for (const auto& s : r->grade->symptoms) text += "  - " + s + "\n";
      return emit(o, j, text, r->grade->solved ? 0 : 1);
    }
    return emit(o, j, t.str(), 0);
  }
  if (o.action == "stop") {
    auto r = training::stop(*lab, runner);
    if (!r) return fail(r.error().message, exit_code(r.error()));
    record_event(*lab, "exercise",
                 {{"action", "stop"}, {"exercise", r->attempt.exercise},
                  {"state", r->attempt.state}, {"source", "cli"}});
    nlohmann::json j = training::to_json(r->attempt);
    std::ostringstream t;
    t << "exercise " << r->attempt.exercise << " " << r->attempt.state
      << (r->attempt.time_to_solve_s >= 0 ? " in " + minutes(r->attempt.time_to_solve_s)
                                          : std::string())
      << "; lab " << *lab << " is down (" << r->processes_killed << " processes, "
      << r->namespaces_removed << " namespaces removed)\n"
      << "the record stays: twin exercise results\n";
    return emit(o, j, t.str(), 0);
  }
  return fail("unknown exercise action '" + o.action + "'", 2);
}

}  // namespace twin::cli
