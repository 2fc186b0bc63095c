#include "twin/core/note.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace twin {

std::string to_text(const Note& n) {
  std::string where = n.node;
  if (!n.source.empty()) where += (where.empty() ? "(" : " (") + n.source + ")";
  return n.severity + ": " + (where.empty() ? "" : where + ": ") + n.text;
}

void add_note(std::vector<Note>& notes, Note n) {
  if (std::find(notes.begin(), notes.end(), n) == notes.end()) notes.push_back(std::move(n));
}

void to_json(nlohmann::json& j, const Note& n) {
  j = {{"severity", n.severity}, {"node", n.node}, {"source", n.source}, {"text", n.text}};
}

void from_json(const nlohmann::json& j, Note& n) {
  n.severity = j.value("severity", "warning");
  n.node = j.value("node", "");
  n.source = j.value("source", "");
  n.text = j.value("text", "");
}

}  // namespace twin
