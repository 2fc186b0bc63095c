#include "twin/gate/scenario.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include "twin/core/util.hpp"
#include "twin/core/yaml_reader.hpp"
#include "twin/topology/traffic_spec.hpp"
#include "twin/verdict/diff.hpp"

namespace fs = std::filesystem;

namespace twin::replay {

namespace {

const std::vector<std::string> kKeys = {"version", "name",     "description",   "topology",
                                        "change",  "per-step", "restart-check", "max-outage",
                                        "traffic", "expect"};
const std::vector<std::string> kExpectKeys = {"verdict", "reason", "reason-contains",
                                              "reasons-include", "failing-step"};
const std::vector<std::string> kVerdicts = {"approve", "reject"};

}  // namespace

std::optional<Scenario> load_scenario(const std::string& path, Diagnostics& d,
                                      const InputPolicy* policy) {
  size_t before = d.items().size();
  std::string abs = fs::absolute(path).lexically_normal().string();
  const InputPolicy own = policy ? *policy : InputPolicy::for_input(abs);
  InputProblem problem;
  auto text = own.read(abs, "scenario", &problem);
  if (!text) {
    d.add({abs, 0, 0, "",
           problem.kind == InputProblem::Kind::kMissing
               ? "cannot read the scenario: cannot read " + abs + ": " + std::strerror(ENOENT)
               : problem.message,
           problem.hint});
    return std::nullopt;
  }
  yaml::Reader r(
      abs, d,
      {.say_what_was_found = false, .string_noun = "a text value", .list_keys_in_message = true});
  auto field = [&](const YAML::Node& map, const std::string& key, const std::string& name) {
    return yaml::at(map[key], name);
  };
  auto doc = r.document(*text, "expected a mapping with version, name, topology and change",
                        "see scenarios/clos-2x4/ for examples");
  if (!doc) return std::nullopt;
  const YAML::Node& root = doc->node;
  Scenario s;
  s.file = abs;
  s.dir = fs::path(abs).parent_path().string();
  s.mark = yaml::mark_of(root);
  r.check_keys(*doc, kKeys);
  if (auto v = field(root, "version", "version"); !v) {
    r.error(yaml::at(root, "version"), "missing; expected `version: 1`",
            "add `version: 1` at the top");
  } else if (auto n = r.string(v); n && *n != "1") {
    r.error(v, "unsupported version " + *n + "; expected 1");
  }
  if (auto v = field(root, "name", "name"); !v)
    r.error(yaml::at(root, "name"), "missing; expected the scenario's name");
  else if (auto n = r.string(v))
    s.name = *n;
  if (auto v = field(root, "description", "description"))
    if (auto n = r.string(v)) s.description = *n;
  for (const char* key : {"topology", "change"}) {
    auto v = field(root, key, key);
    if (v && std::string(key) == "change" && v.node.IsMap()) {
      // A live orchestrator run (docs/management.md): `change: {run: COMMAND, timeout: D}`.
      r.check_keys(v, {"run", "timeout"});
      if (auto c = yaml::child(v, "run")) {
        if (auto cmd = r.string(c)) s.change_run = *cmd;
      } else {
        r.error(v, "missing run: the orchestrator's command line",
                "change: {run: \"ansible-playbook -i $TWIN_INVENTORY site.yml\"}");
      }
      if (auto t = yaml::child(v, "timeout"))
        if (r.duration(t)) s.change_run_timeout = t.node.Scalar();
      continue;
    }
    if (!v) {
      r.error(yaml::at(root, key),
              std::string("missing; expected the path of the ") + key + " file");
      continue;
    }
    auto n = r.string(v);
    if (!n) continue;
    std::string p =
        fs::path(*n).is_absolute() ? *n : (fs::path(s.dir) / *n).lexically_normal().string();
    // Kept as named (the report shows it); its loader reads it under the same policy.
    if (r.named_file(v, p, own, std::string(key) + " file",
                     {std::string(key) + " file " + p + " does not exist",
                      "paths are relative to the scenario's folder"}))
      (std::string(key) == "topology" ? s.topology : s.change) = p;
  }
  if (auto v = field(root, "per-step", "per-step"))
    if (r.string(v)) s.per_step = r.boolean(v).value_or(false);
  if (auto v = field(root, "restart-check", "restart-check"))
    if (r.string(v)) s.restart_check = r.boolean(v).value_or(true);
  if (auto v = field(root, "max-outage", "max-outage"))
    if (auto d = r.duration(v)) {
      s.max_outage = v.node.Scalar();
      // At the default probe interval (10 ms); `twin run --probe-interval` checks its own.
      if (d->count() < 100)
        r.error(v, "max-outage " + s.max_outage +
                       " is below 10 probe intervals (100 ms): an outage that short cannot be "
                       "told from a busy machine");
    }
  if (auto v = field(root, "traffic", "traffic")) {
    s.traffic = topology::read_traffic_spec(r, v);
    s.traffic_is_labs = s.traffic && v.node.IsScalar();
  }
  if (auto e = field(root, "expect", "expect")) {
    if (!e.node.IsMap()) {
      r.error(e,
              "expected a mapping with verdict and optionally reason, reason-contains, "
              "reasons-include, failing-step");
    } else {
      r.check_keys(e, kExpectKeys);
      if (auto v = field(e.node, "verdict", "expect.verdict"))
        if (auto n = r.string(v)) {
          s.expect.verdict = *n;
          if (std::find(kVerdicts.begin(), kVerdicts.end(), *n) == kVerdicts.end())
            r.error(v, "expected approve or reject, got '" + *n + "'");
        }
      if (auto v = field(e.node, "reason", "expect.reason"))
        if (auto n = r.string(v)) {
          const auto& categories = reason_categories();
          s.expect.reason = *n;
          if (std::find(categories.begin(), categories.end(), *n) == categories.end()) {
            std::string near = nearest_name(*n, categories);
            r.error(
                v,
                "unknown reason category '" + *n + "'; expected one of: " + join_names(categories),
                near.empty() ? "" : "did you mean " + near + "?");
          }
        }
      if (auto v = field(e.node, "reason-contains", "expect.reason-contains"))
        if (auto n = r.string(v)) s.expect.reason_contains = *n;
      if (auto v = field(e.node, "reasons-include", "expect.reasons-include")) {
        if (!v.node.IsSequence() || v.node.size() == 0)
          r.error(v, "expected a list of texts some reason must mention",
                  "e.g. reasons-include: [\"area 0.0.0.1 here\"]");
        else
          for (size_t i = 0; i < v.node.size(); ++i)
            if (auto n = r.string(yaml::item(v, i))) s.expect.reasons_include.push_back(*n);
      }
      if (auto v = field(e.node, "failing-step", "expect.failing-step"))
        if (auto n = r.string(v)) s.expect.failing_step = *n;
      if (s.expect.verdict.empty())
        r.error(yaml::at(e.node, "expect.verdict"), "missing; expected approve or reject");
    }
  }
  if (d.items().size() != before) return std::nullopt;
  return s;
}

bool meets(const ScenarioExpect& e, const std::string& verdict, const std::string& category,
           const std::string& message, const std::string& failing_step, std::string* why,
           const std::vector<std::string>& all_messages) {
  if (!e.verdict.empty() && e.verdict != verdict) {
    *why = "expected verdict " + e.verdict + ", got " + verdict;
    return false;
  }
  if (!e.reason.empty() && e.reason != category) {
    *why = "expected first reason " + e.reason + ", got " + (category.empty() ? "none" : category);
    return false;
  }
  if (!e.reason_contains.empty() && message.find(e.reason_contains) == std::string::npos) {
    *why = "expected the first reason to mention '" + e.reason_contains + "', got: " + message;
    return false;
  }
  for (const auto& want : e.reasons_include)
    if (std::none_of(all_messages.begin(), all_messages.end(),
                     [&](const std::string& m) { return m.find(want) != std::string::npos; })) {
      *why = "expected a reason to mention '" + want + "'; none of " +
             std::to_string(all_messages.size()) + " does";
      return false;
    }
  if (!e.failing_step.empty() && e.failing_step != failing_step) {
    *why = "expected failing step '" + e.failing_step + "', got '" + failing_step + "'";
    return false;
  }
  return true;
}

}  // namespace twin::replay
