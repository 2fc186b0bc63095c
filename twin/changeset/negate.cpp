#include <set>
#include <sstream>

#include "twin/core/util.hpp"
#include "twin/changeset/changeset.hpp"

namespace twin::replay {

std::string negate_config(const std::string& lines) {
  struct Line {
    size_t indent;
    std::string text;  // without the indentation and trailing blanks
  };
  std::vector<Line> ls;
  std::stringstream in(lines);
  std::string line;
  while (std::getline(in, line)) {
    size_t indent = line.find_first_not_of(' ');
    if (indent == std::string::npos) continue;
    std::string t = trim(line.substr(indent));
    if (t.empty() || t[0] == '!') continue;
    ls.push_back({indent, t});
  }
  static const std::set<std::string> kEnds = {"exit", "exit-address-family", "exit-vrf", "exit-vni",
                                              "end"};
  std::string out;
  for (size_t i = 0; i < ls.size(); ++i) {
    const std::string pad(ls[i].indent, ' ');
    const std::string& t = ls[i].text;
    bool context = i + 1 < ls.size() && ls[i + 1].indent > ls[i].indent;
    if (context || kEnds.count(t))
      out += pad + t;
    else if (t.rfind("no ", 0) == 0)
      out += pad + trim(t.substr(3));
    else
      out += pad + "no " + t;
    out += '\n';
  }
  return out;
}

}  // namespace twin::replay
