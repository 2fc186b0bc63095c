#pragma once
// Problems found in user input (topology, image profile, change set), collected all at once.
// Lines and columns are 1-based, as editors show them.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace twin {

// Where something was written in a user's file: 1-based line and column; 0 when unknown (a
// value built in memory).
struct Mark {
  int line = 0;
  int column = 0;
};

struct Diagnostic {
  std::string file;
  int line = 0;         // 1-based; 0 when the problem has no single place (e.g. a missing field)
  int column = 0;       // 1-based
  std::string field;    // dotted path, e.g. "nodes.leaf1.asn" or "links[3].endpoints[0]"
  std::string message;  // what is wrong and what was expected
  std::string hint;     // how to fix it; may be empty
};

// Errors (`add`, `items`) fail a load; warnings (`warn`) do not: they say what was read but not
// honoured (a containerlab field twin ignores). `empty()` and `items()` count errors only, so
// loaders that compare `items().size()` before and after are unaffected by warnings.
class Diagnostics {
 public:
  void add(Diagnostic d) { items_.push_back(std::move(d)); }
  void warn(Diagnostic d) { warnings_.push_back(std::move(d)); }
  [[nodiscard]] bool empty() const { return items_.empty(); }
  [[nodiscard]] const std::vector<Diagnostic>& items() const { return items_; }
  [[nodiscard]] const std::vector<Diagnostic>& warnings() const { return warnings_; }
  // "file:line:col: error: field: message (hint: ...)" one per line, sorted by file, line and
  // column (stable: problems at one place keep the order they were found in).
  [[nodiscard]] std::string format() const;
  // The warnings the same way, with "warning:" for "error:".
  [[nodiscard]] std::string format_warnings() const;
  // The errors as [{"file","line","column","field","message","hint"}], in the order found: what
  // `--json` reports and twin serve's error bodies carry.
  [[nodiscard]] nlohmann::json to_json() const;

 private:
  std::vector<Diagnostic> items_;
  std::vector<Diagnostic> warnings_;
};

// The closest candidate to `word` by edit distance, or "" when none is close enough to be a
// plausible typo (distance > max(2, |word|/3)).
std::string nearest_name(const std::string& word, const std::vector<std::string>& candidates);

// The hint for a misspelt name: "did you mean 'x'?" with nearest_name's pick, or `otherwise`
// when no candidate is close.
std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates,
                         const std::string& otherwise);

// "a, b, c": the accepted names a diagnostic lists, in the given order.
std::string join_names(const std::vector<std::string>& names);
// Like join_names, but at most `max` names, then "and N more": for lists a message quotes back.
std::string join_some(const std::vector<std::string>& names, size_t max = 4);

}  // namespace twin
