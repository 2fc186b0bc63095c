// FRR's own syntax check of a change set's configuration text, and the checks against the lab
// FRR's parser cannot make (apply.hpp).
#include <filesystem>
#include <regex>
#include <sstream>

#include "twin/core/util.hpp"
#include "twin/replay/apply.hpp"
#include "twin/runtime/frr_config.hpp"

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace twin::replay {

Result<void> check_frr_syntax(const ChangeSet& cs, proc::ProcessRunner& runner,
                              Diagnostics& diags) {
  TempDir tmp;
  if (tmp.path.empty()) return harness_error("cannot create a temporary folder");
  if (auto w = write_file(tmp.path + "/vtysh.conf", "service integrated-vtysh-config\n"); !w)
    return w.error();
  for (size_t i = 0; i < cs.steps.size(); ++i) {
    const Step& s = cs.steps[i];
    if (s.kind() != StepKind::kFrr) continue;
    std::string path, file = cs.file;
    int first = s.frr().text_line;
    if (!s.frr().replace.empty()) {
      if (!fs::is_regular_file(s.frr().replace)) continue;  // the loader reports a missing file
      path = s.frr().replace;
      file = s.frr().replace;
      first = 1;
    } else {
      path = tmp.path + "/step" + std::to_string(i) + ".conf";
      if (auto w = write_file(path, s.frr().add.empty() ? s.frr().remove : s.frr().add); !w)
        return w.error();
    }
    auto r = runner.run({{"vtysh", "--config_dir", tmp.path, "-C", "-f", path}, "", 30s});
    if (!r) return r.error().with_context("FRR syntax check (vtysh -C)");
    if (r->exit_code == 0) continue;
    auto complaints = runtime::vtysh_complaints(r->out + r->err);
    std::string field = "steps[" + std::to_string(i) + "].frr." +
                        (!s.frr().replace.empty() ? "replace"
                         : s.frr().add.empty()    ? "remove"
                                                : "add");
    if (complaints.empty())
      diags.add({file, s.mark.line, s.mark.column, field,
                 "FRR rejects this configuration (vtysh -C exit " + std::to_string(r->exit_code) +
                     "): " + trim_end(r->out + r->err),
                 ""});
    for (const auto& [line, what] : complaints)
      diags.add({file, first > 0 ? first + line - 1 : s.mark.line, first > 0 ? 1 : s.mark.column,
                 field, "FRR rejects this line: " + what,
                 "check the command against FRR's documentation for this version"});
  }
  return {};
}

void check_against_lab(const ChangeSet& cs, const plan::Plan& plan, Diagnostics& diags) {
  static const std::regex kRouterBgp(R"(^router bgp (\d+)\s*$)");
  for (size_t i = 0; i < cs.steps.size(); ++i) {
    const Step& s = cs.steps[i];
    if (s.kind() != StepKind::kFrr || (s.frr().add.empty() && s.frr().remove.empty())) continue;
    const std::string& text = s.frr().add.empty() ? s.frr().remove : s.frr().add;
    std::istringstream in(text);
    std::string line;
    for (int n = 0; std::getline(in, line); ++n) {
      std::smatch m;
      if (!std::regex_match(line, m, kRouterBgp)) continue;
      for (const auto& name : s.frr().nodes) {
        const plan::Node* node = plan.find(name);
        if (!node || node->asn == 0 || std::to_string(node->asn) == m[1].str()) continue;
        diags.add({cs.file, s.frr().text_line > 0 ? s.frr().text_line + n : s.mark.line, 1,
                   "steps[" + std::to_string(i) + "].frr." + (s.frr().add.empty() ? "remove" : "add"),
                   "node " + name + " runs router bgp " + std::to_string(node->asn) + ", not " +
                       m[1].str() + " (one BGP instance per node)",
                   "write `router bgp " + std::to_string(node->asn) + "`"});
      }
    }
  }
}

}  // namespace twin::replay
