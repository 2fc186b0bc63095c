#include "twin/core/diagnostics.hpp"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <tuple>

#include "twin/core/util.hpp"

namespace twin {

namespace {
std::string format_sorted(const std::vector<Diagnostic>& items, const char* severity) {
  // By place in the file, as an editor lists them; problems without a place come first.
  std::vector<const Diagnostic*> sorted;
  for (const auto& d : items) sorted.push_back(&d);
  std::stable_sort(sorted.begin(), sorted.end(), [](const Diagnostic* a, const Diagnostic* b) {
    return std::tie(a->file, a->line, a->column) < std::tie(b->file, b->line, b->column);
  });
  std::ostringstream out;
  for (const Diagnostic* p : sorted) {
    const Diagnostic& d = *p;
    // Every part may quote an input file (a value, a config line): printed escaped, one line.
    out << printable(d.file);
    if (d.line > 0) out << ':' << d.line << ':' << d.column;
    out << ": " << severity << ": ";
    if (!d.field.empty()) out << printable(d.field) << ": ";
    out << printable(d.message);
    if (!d.hint.empty()) out << " (hint: " << printable(d.hint) << ")";
    out << '\n';
  }
  return out.str();
}
}  // namespace

std::string Diagnostics::format() const { return format_sorted(items_, "error"); }

nlohmann::json Diagnostics::to_json() const {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& d : items_)
    a.push_back({{"file", d.file},
                 {"line", d.line},
                 {"column", d.column},
                 {"field", d.field},
                 {"message", d.message},
                 {"hint", d.hint}});
  return a;
}
std::string Diagnostics::format_warnings() const { return format_sorted(warnings_, "warning"); }

namespace {
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}
}  // namespace

std::string nearest_name(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_d = std::max<size_t>(2, word.size() / 3) + 1;
  for (const auto& c : candidates) {
    size_t d = edit_distance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best;
}

std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates,
                         const std::string& otherwise) {
  std::string near = nearest_name(word, candidates);
  return near.empty() ? otherwise : "did you mean '" + near + "'?";
}

std::string join_names(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& x : names) s += (s.empty() ? "" : ", ") + x;
  return s;
}

std::string join_some(const std::vector<std::string>& names, size_t max) {
  if (names.size() <= max) return join_names(names);
  std::vector<std::string> head(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(max));
  return join_names(head) + " and " + std::to_string(names.size() - max) + " more";
}

}  // namespace twin
