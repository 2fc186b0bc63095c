#pragma once
// Helpers the unit tests share: reading fixture files, printing diagnostics in failure messages,
// and reading field lists out of the JSON Schemas (tests hold the schemas equal to the loaders).
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>

#include "twin/core/diagnostics.hpp"

namespace twin_test {

using StringSet = std::set<std::string>;

// The whole file; throws (failing the test) when it cannot be read.
inline std::string read(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Every diagnostic as "file:line:column field | message | hint", one per line.
inline std::string dump(const twin::Diagnostics& d) {
  std::string s;
  for (const auto& i : d.items())
    s += i.file + ":" + std::to_string(i.line) + ":" + std::to_string(i.column) + " " + i.field +
         " | " + i.message + " | " + i.hint + "\n";
  return s;
}

// The names under an object schema's "properties".
inline StringSet property_names(const nlohmann::json& object_schema) {
  StringSet out;
  for (const auto& [k, v] : object_schema.at("properties").items()) out.insert(k);
  return out;
}

// The values of a string schema's "enum".
inline StringSet string_enum(const nlohmann::json& s) {
  StringSet out;
  for (const auto& v : s.at("enum")) out.insert(v.get<std::string>());
  return out;
}

// A string schema's "pattern" as a regex.
inline std::regex pattern_of(const nlohmann::json& s) {
  return std::regex(s.at("pattern").get<std::string>(), std::regex::ECMAScript);
}

}  // namespace twin_test
