#include "twin/training/records.hpp"

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "twin/core/util.hpp"

namespace fs = std::filesystem;

namespace twin::training {

std::string training_dir() {
  const char* env = std::getenv("TWIN_TRAINING_DIR");
  return env && *env ? std::string(env) : std::string("/var/lib/twin/training");
}

nlohmann::json to_json(const Attempt& a) {
  nlohmann::json j = {
      {"id", a.id},
      {"lab", a.lab},
      {"exercise", a.exercise},
      {"title", a.title},
      {"exercise_file", a.exercise_file},
      {"topology", a.topology},
      {"difficulty", a.difficulty},
      {"time_budget_s", a.time_budget_s},
      {"started_at", a.started_at},
      {"ended_at", a.ended_at},
      {"started_epoch_s", a.started_epoch_s},
      {"state", a.state},
      {"time_to_solve_s",
       a.time_to_solve_s < 0 ? nlohmann::json(nullptr) : nlohmann::json(a.time_to_solve_s)},
      {"within_budget", a.time_to_solve_s < 0
                            ? nlohmann::json(nullptr)
                            : nlohmann::json(a.time_to_solve_s <= a.time_budget_s)},
      {"hints_used", a.hints_used},
      {"checks", a.checks},
      {"resets", a.resets},
      {"solution_shown", a.solution_shown},
      {"solution_applied", a.solution_applied}};
  if (!a.allow_paths.empty()) j["allow_paths"] = a.allow_paths;
  return j;
}

Attempt attempt_from_json(const nlohmann::json& j) {
  Attempt a;
  if (j.contains("allow_paths") && j["allow_paths"].is_array())
    for (const auto& p : j["allow_paths"])
      if (p.is_string()) a.allow_paths.push_back(p.get<std::string>());
  a.id = j.value("id", "");
  a.lab = j.value("lab", "");
  a.exercise = j.value("exercise", "");
  a.title = j.value("title", "");
  a.exercise_file = j.value("exercise_file", "");
  a.topology = j.value("topology", "");
  a.difficulty = j.value("difficulty", 1);
  a.time_budget_s = j.value("time_budget_s", 0.0);
  a.started_at = j.value("started_at", "");
  a.ended_at = j.value("ended_at", "");
  a.started_epoch_s = j.value("started_epoch_s", 0.0);
  a.state = j.value("state", "in-progress");
  if (j.contains("time_to_solve_s") && j["time_to_solve_s"].is_number())
    a.time_to_solve_s = j["time_to_solve_s"].get<double>();
  a.hints_used = j.value("hints_used", 0);
  a.checks = j.value("checks", 0);
  a.resets = j.value("resets", 0);
  a.solution_shown = j.value("solution_shown", false);
  a.solution_applied = j.value("solution_applied", false);
  return a;
}

std::string attempt_path(const std::string& id) {
  return training_dir() + "/attempts/" + id + ".json";
}

Result<void> write_atomically(const std::string& path, const std::string& text) {
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  if (ec) return harness_error("cannot create " + fs::path(path).parent_path().string() + ": " +
                               ec.message());
  return write_file_atomically(path, text);
}

Result<void> save_attempt(const Attempt& a) {
  return write_atomically(attempt_path(a.id), to_json(a).dump(2) + "\n");
}

std::vector<Attempt> results(const std::string& lab, const std::string& exercise) {
  std::vector<Attempt> out;
  std::error_code ec;
  for (const auto& f : fs::directory_iterator(training_dir() + "/attempts", ec)) {
    if (f.path().extension() != ".json") continue;
    auto text = read_file(f.path().string());
    if (!text) continue;
    auto j = nlohmann::json::parse(*text, nullptr, false);
    if (j.is_discarded()) continue;
    Attempt a = attempt_from_json(j);
    if ((!lab.empty() && a.lab != lab) || (!exercise.empty() && a.exercise != exercise)) continue;
    out.push_back(a);
  }
  std::sort(out.begin(), out.end(), [](const Attempt& x, const Attempt& y) {
    return std::tie(x.started_epoch_s, x.id) < std::tie(y.started_epoch_s, y.id);
  });
  return out;
}

std::string results_csv(const std::vector<Attempt>& attempts) {
  auto q = [](const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string o = "\"";
    for (char c : s) o += c == '"' ? std::string("\"\"") : std::string(1, c);
    return o + "\"";
  };
  std::ostringstream o;
  o << "lab,exercise,difficulty,started_at,ended_at,state,time_to_solve_s,time_budget_s,"
       "within_budget,hints_used,checks,resets,solution_shown,solution_applied\r\n";
  for (const auto& a : attempts) {
    o << q(a.lab) << "," << q(a.exercise) << "," << a.difficulty << "," << a.started_at << ","
      << a.ended_at << "," << a.state << ",";
    if (a.time_to_solve_s >= 0) o << static_cast<long>(a.time_to_solve_s + 0.5);
    o << "," << static_cast<long>(a.time_budget_s) << ",";
    if (a.time_to_solve_s >= 0) o << (a.time_to_solve_s <= a.time_budget_s ? "yes" : "no");
    o << "," << a.hints_used << "," << a.checks << "," << a.resets << ","
      << (a.solution_shown ? "yes" : "no") << "," << (a.solution_applied ? "yes" : "no") << "\r\n";
  }
  return o.str();
}

}  // namespace twin::training
