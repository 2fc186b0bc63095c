#include "twin/replay/scenario.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <vector>

#include "twin/core/util.hpp"
#include "twin/replay/diff.hpp"
#include "twin/topology/yaml_mark.hpp"

namespace fs = std::filesystem;

namespace twin::replay {

namespace {

const std::vector<std::string> kKeys = {"version", "name",     "description", "topology",
                                        "change",  "per-step", "expect"};
const std::vector<std::string> kExpectKeys = {"verdict", "reason", "reason-contains",
                                              "failing-step"};
const std::vector<std::string> kVerdicts = {"approve", "reject"};

}  // namespace

std::optional<Scenario> load_scenario(const std::string& path, Diagnostics& d) {
  size_t before = d.items().size();
  std::string abs = fs::absolute(path).lexically_normal().string();
  auto text = read_file(abs);
  if (!text) {
    d.add({abs, 0, 0, "", "cannot read the scenario: " + text.error().message, ""});
    return std::nullopt;
  }
  auto parsed = topology::parse_yaml(*text, abs, d);
  if (!parsed) return std::nullopt;
  YAML::Node root = *parsed;
  auto err = [&](const YAML::Node& n, const std::string& field, const std::string& msg,
                 const std::string& hint = "") {
    topology::Mark m = topology::mark_of(n);
    d.add({abs, m.line, m.column, field, msg, hint});
  };
  if (!root.IsMap()) {
    err(root, "", "expected a mapping with version, name, topology and change",
        "see scenarios/clos-2x4/ for examples");
    return std::nullopt;
  }
  Scenario s;
  s.file = abs;
  s.dir = fs::path(abs).parent_path().string();
  s.mark = topology::mark_of(root);
  auto scalar = [&](const YAML::Node& n, const std::string& field) -> std::optional<std::string> {
    if (!n.IsScalar()) {
      err(n, field, "expected a text value");
      return std::nullopt;
    }
    return n.Scalar();
  };
  for (const auto& kv : root) {
    std::string key = kv.first.Scalar();
    if (std::find(kKeys.begin(), kKeys.end(), key) == kKeys.end()) {
      std::string near = nearest_name(key, kKeys);
      err(kv.first, key,
          "unknown field '" + key + "'; expected one of: " + topology::join_names(kKeys),
          near.empty() ? "" : "did you mean " + near + "?");
    }
  }
  if (!root["version"]) {
    err(root, "version", "missing; expected `version: 1`", "add `version: 1` at the top");
  } else if (auto v = scalar(root["version"], "version"); v && *v != "1") {
    err(root["version"], "version", "unsupported version " + *v + "; expected 1");
  }
  if (!root["name"])
    err(root, "name", "missing; expected the scenario's name");
  else if (auto v = scalar(root["name"], "name"))
    s.name = *v;
  if (root["description"])
    if (auto v = scalar(root["description"], "description")) s.description = *v;
  for (const char* field : {"topology", "change"}) {
    if (!root[field]) {
      err(root, field, std::string("missing; expected the path of the ") + field + " file");
      continue;
    }
    auto v = scalar(root[field], field);
    if (!v) continue;
    std::string p =
        fs::path(*v).is_absolute() ? *v : (fs::path(s.dir) / *v).lexically_normal().string();
    if (!fs::is_regular_file(p))
      err(root[field], field, std::string(field) + " file " + p + " does not exist",
          "paths are relative to the scenario's folder");
    (std::string(field) == "topology" ? s.topology : s.change) = p;
  }
  if (root["per-step"]) {
    auto v = scalar(root["per-step"], "per-step");
    if (v && *v != "true" && *v != "false")
      err(root["per-step"], "per-step", "expected true or false");
    s.per_step = v && *v == "true";
  }
  if (auto e = root["expect"]) {
    if (!e.IsMap()) {
      err(e, "expect",
          "expected a mapping with verdict and optionally reason, reason-contains, "
          "failing-step");
    } else {
      for (const auto& kv : e) {
        std::string key = kv.first.Scalar();
        if (std::find(kExpectKeys.begin(), kExpectKeys.end(), key) == kExpectKeys.end()) {
          std::string near = nearest_name(key, kExpectKeys);
          err(kv.first, "expect." + key,
              "unknown field '" + key + "'; expected one of: " + topology::join_names(kExpectKeys),
              near.empty() ? "" : "did you mean " + near + "?");
        }
      }
      if (e["verdict"])
        if (auto v = scalar(e["verdict"], "expect.verdict")) {
          s.expect.verdict = *v;
          if (std::find(kVerdicts.begin(), kVerdicts.end(), *v) == kVerdicts.end())
            err(e["verdict"], "expect.verdict", "expected approve or reject, got '" + *v + "'");
        }
      if (e["reason"])
        if (auto v = scalar(e["reason"], "expect.reason")) {
          const auto& categories = reason_categories();
          s.expect.reason = *v;
          if (std::find(categories.begin(), categories.end(), *v) == categories.end()) {
            std::string near = nearest_name(*v, categories);
            err(e["reason"], "expect.reason",
                "unknown reason category '" + *v +
                    "'; expected one of: " + topology::join_names(categories),
                near.empty() ? "" : "did you mean " + near + "?");
          }
        }
      if (e["reason-contains"])
        if (auto v = scalar(e["reason-contains"], "expect.reason-contains"))
          s.expect.reason_contains = *v;
      if (e["failing-step"])
        if (auto v = scalar(e["failing-step"], "expect.failing-step")) s.expect.failing_step = *v;
      if (s.expect.verdict.empty()) err(e, "expect.verdict", "missing; expected approve or reject");
    }
  }
  if (d.items().size() != before) return std::nullopt;
  return s;
}

bool meets(const ScenarioExpect& e, const std::string& verdict, const std::string& category,
           const std::string& message, const std::string& failing_step, std::string* why) {
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
  if (!e.failing_step.empty() && e.failing_step != failing_step) {
    *why = "expected failing step '" + e.failing_step + "', got '" + failing_step + "'";
    return false;
  }
  return true;
}

}  // namespace twin::replay
