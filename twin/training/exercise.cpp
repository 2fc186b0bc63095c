#include "twin/training/exercise.hpp"

#include <algorithm>
#include <filesystem>
#include <regex>

#include "twin/core/util.hpp"
#include "twin/core/yaml_reader.hpp"

namespace fs = std::filesystem;

namespace twin::training {

std::optional<Exercise> load_exercise(const std::string& path,
                                      const std::vector<std::string>& families, Diagnostics& d,
                                      const InputPolicy* policy) {
  size_t before = d.items().size();
  std::string abs = fs::absolute(path).lexically_normal().string();
  const InputPolicy own = policy ? *policy : InputPolicy::for_input(abs);
  auto text = read_input_file(own, abs, "exercise file", "give an exercise's .yaml file", d);
  if (!text) return std::nullopt;
  yaml::Reader r(abs, d);
  auto doc = r.document(*text,
                        "expected a mapping with version, name, topology, fault, ticket, hints "
                        "and solution",
                        "see scenarios/exercises/ for examples");
  if (!doc) return std::nullopt;
  Exercise e;
  e.policy = own;
  e.families = families;
  e.file = abs;
  e.dir = fs::path(abs).parent_path().string();
  e.mark = yaml::mark_of(doc->node);
  r.check_keys(*doc, kExerciseKeys);
  auto required = [&](const char* key, const std::string& expected) {
    auto v = yaml::child(*doc, key);
    if (!v) r.error(e.mark, key, "missing; expected " + expected);
    return v;
  };
  if (auto v = required("version", "`version: 1`"))
    if (auto n = r.string(v); n && *n != "1") r.error(v, "unsupported version " + *n + "; expected 1");
  if (auto v = required("name", "the exercise's name, e.g. `name: wrong-asn`"))
    if (auto n = r.string(v)) {
      static const std::regex kName("[A-Za-z0-9][A-Za-z0-9_-]{0,62}");
      if (!std::regex_match(*n, kName))
        r.error(v, "'" + *n + "' is not a usable name; expected letters, digits, '-' and '_'");
      else
        e.name = *n;
    }
  if (auto v = required("title", "one line naming the exercise"))
    if (auto n = r.string(v)) e.title = *n;
  if (auto v = yaml::child(*doc, "difficulty"))
    if (auto n = r.integer(v, 1, kMaxDifficulty, "")) e.difficulty = static_cast<int>(*n);
  if (auto v = yaml::child(*doc, "time-budget"))
    if (auto t = r.duration(v)) {
      if (t->count() < 60'000)
        r.error(v, "a time budget under a minute leaves a trainee no time to read the ticket",
                "e.g. time-budget: 15m");
      else
        e.time_budget = *t;
    }
  auto file_field = [&](const yaml::Value& v, const char* what, std::string& out) {
    auto n = r.string(v);
    if (!n) return;
    std::string p =
        fs::path(*n).is_absolute() ? *n : (fs::path(e.dir) / *n).lexically_normal().string();
    if (r.named_file(v, p, own, std::string(what) + " file",
                     {std::string(what) + " file " + p + " does not exist",
                      "paths are relative to the exercise's folder"}))
      out = p;
  };
  if (auto v = required("topology", "the path of the lab's topology file"))
    file_field(v, "topology", e.topology);
  if (auto v = required("fault", "the path of the change set that injects the fault"))
    file_field(v, "fault", e.fault);
  if (auto v = required("ticket", "the symptom as a user reports it"))
    if (auto n = r.string(v)) {
      e.ticket = trim_end(*n);
      if (e.ticket.empty()) r.error(v, "empty; expected the symptom as a user reports it");
    }
  if (auto v = yaml::child(*doc, "criteria")) {
    if (v.node.IsSequence() && v.node.size() == 0)
      r.error(v, "empty list; name the families the fault makes fail (or leave criteria out)",
              "e.g. criteria: [bgp]");
    for (const auto& item : r.scalar_or_list(v, "expected a list of validator families"))
      if (auto n = r.string(item)) {
        if (std::find(families.begin(), families.end(), *n) == families.end()) {
          std::string near = nearest_name(*n, families);
          r.error(item, "unknown validator family '" + *n + "'; expected one of: " +
                            join_names(families),
                  near.empty() ? "" : "did you mean " + near + "?");
        } else {
          e.criteria.push_back(*n);
        }
      }
  }
  if (auto v = required("hints", "a list of hints, most general first"))
    if (r.list(v, "hints", "\"Which sessions are not Established?\""))
      for (size_t i = 0; i < v.node.size(); ++i)
        if (auto n = r.string(yaml::item(v, i))) e.hints.push_back(trim_end(*n));
  if (auto s = required("solution", "a mapping with fix and explanation")) {
    if (!s.node.IsMap()) {
      r.error(s, "expected a mapping with fix (a change set) and explanation");
    } else {
      r.check_keys(s, kSolutionKeys);
      auto fix = yaml::child(s, "fix");
      if (!fix)
        r.error(s.mark(), "solution.fix", "missing; expected the path of the fix's change set");
      else
        file_field(fix, "fix", e.fix);
      auto ex = yaml::child(s, "explanation");
      if (!ex)
        r.error(s.mark(), "solution.explanation", "missing; expected why the fault did what it did");
      else if (auto n = r.string(ex))
        e.explanation = trim_end(*n);
    }
  }
  if (d.items().size() != before) return std::nullopt;
  return e;
}

std::vector<CourseEntry> load_course(const std::string& dir,
                                     const std::vector<std::string>& families,
                                     const std::vector<std::string>& allow) {
  std::vector<CourseEntry> out;
  std::error_code ec;
  for (const auto& f : fs::directory_iterator(dir, ec)) {
    if (!f.is_regular_file() || f.path().extension() != ".yaml") continue;
    CourseEntry c;
    c.file = f.path().string();
    auto policy = InputPolicy::for_inputs({c.file}, allow);
    if (!policy) {
      c.diags.add({c.file, 0, 0, "", policy.error().message, ""});
    } else {
      c.exercise = load_exercise(c.file, families, c.diags, &*policy);
    }
    out.push_back(std::move(c));
  }
  std::sort(out.begin(), out.end(), [](const CourseEntry& a, const CourseEntry& b) {
    int da = a.exercise ? a.exercise->difficulty : kMaxDifficulty + 1;
    int db = b.exercise ? b.exercise->difficulty : kMaxDifficulty + 1;
    return std::tie(da, a.file) < std::tie(db, b.file);
  });
  return out;
}

Result<Exercise> find_exercise(const std::string& dir, const std::string& name_or_path,
                               const std::vector<std::string>& families,
                               const std::vector<std::string>& allow) {
  auto loaded = [&](const std::string& file) -> Result<Exercise> {
    auto policy = InputPolicy::for_inputs({file}, allow);
    if (!policy) return policy.error();
    Diagnostics d;
    auto e = load_exercise(file, families, d, &*policy);
    if (!e) return Error{ErrorKind::kInput, "exercise " + file + " does not load:\n" + d.format()};
    return *e;
  };
  if (name_or_path.find('/') != std::string::npos || fs::is_regular_file(name_or_path))
    return loaded(name_or_path);
  std::vector<std::string> names;
  for (auto& c : load_course(dir, families, allow)) {
    std::string stem = fs::path(c.file).stem().string();
    if (c.exercise && c.exercise->name == name_or_path) return *c.exercise;
    if (!c.exercise && stem == name_or_path) return loaded(c.file);
    if (c.exercise) names.push_back(c.exercise->name);
  }
  std::string near = nearest_name(name_or_path, names);
  return Error{ErrorKind::kUsage,
               "no exercise '" + name_or_path + "' in " + dir +
                   (near.empty() ? "" : " (did you mean " + near + "?)") +
                   "; `twin exercise list` shows the course"};
}

}  // namespace twin::training
