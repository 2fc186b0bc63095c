#pragma once
// The one warning channel (beside passed, failed, error and skipped): something a run did not
// honour as asked, honoured differently, or did not check — a config line twin does not read,
// a path redirected into the node's run folder, a family that had nothing to test. Never a
// verdict of its own: reports, JSON and JUnit carry notes beside the results, and no exit code
// depends on them.
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace twin {

struct Note {
  std::string severity = "warning";  // "warning" | "info"
  std::string node;                  // the node it concerns; "" lab-wide
  std::string source;                // where it was written: "r1.conf:12"; "" when nowhere
  std::string text;                  // one line a network engineer reads
  bool operator==(const Note&) const = default;
};

// "warning: leaf1 (r1.conf:12): text". Pure.
std::string to_text(const Note& n);
// Appends `n` unless an equal note is there already (the same fact seen twice says it once).
void add_note(std::vector<Note>& notes, Note n);
// {"severity", "node", "source", "text"}; from_json defaults what is missing.
void to_json(nlohmann::json& j, const Note& n);
void from_json(const nlohmann::json& j, Note& n);

}  // namespace twin
