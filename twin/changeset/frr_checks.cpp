// FRR's own syntax check of a change set's configuration text, and the checks against the lab
// FRR's parser cannot make (apply.hpp).
#include "twin/changeset/frr_checks.hpp"

#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "twin/core/util.hpp"
#include "twin/plan/images.hpp"
#include "twin/runtime/frr_check.hpp"
#include "twin/runtime/frr_config.hpp"

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace twin::replay {

namespace {

// Where a rejected line of step `i` is reported: its file, line and field.
void report_refused(const ChangeSet& cs, size_t i, int line, const std::string& what,
                    const std::string& by, Diagnostics& diags) {
  const Step& s = cs.steps[i];
  const bool replace = !s.frr().replace.empty();
  const std::string file = replace ? s.frr().replace : cs.file;
  const int first = replace ? 1 : s.frr().text_line;
  std::string field = "steps[" + std::to_string(i) + "].frr." +
                      (replace               ? "replace"
                       : s.frr().add.empty() ? "remove"
                                             : "add");
  if (line == 0)
    diags.add(
        {file, s.mark.line, s.mark.column, field, by + " rejects this configuration: " + what, ""});
  else
    diags.add({file, first > 0 ? first + line - 1 : s.mark.line, first > 0 ? 1 : s.mark.column,
               field, by + " rejects this line: " + what,
               "check the command against FRR's documentation for this version"});
}

}  // namespace

Result<void> check_frr_syntax(const ChangeSet& cs, const plan::Plan& plan,
                              const drivers::DriverLookup& drivers, proc::ProcessRunner& runner,
                              Diagnostics& diags) {
  TempDir tmp;
  if (tmp.path.empty()) return harness_error("cannot create a temporary folder");
  std::vector<size_t> steps;       // the frr steps this machine's FRR checks, in order
  std::vector<std::string> paths;  // what vtysh -C reads for each
  std::set<std::string> upgraded;  // nodes an earlier image step moves to another release
  // A container node's own release checks the lines meant for it (its image's vtysh), once per
  // image and text; every other node's are this machine's FRR's, all of a step at once.
  std::map<std::pair<std::string, std::string>, std::vector<std::pair<int, std::string>>> seen;
  for (size_t i = 0; i < cs.steps.size(); ++i) {
    const Step& s = cs.steps[i];
    if (s.kind() == StepKind::kImage) {
      for (const auto& n : s.image().nodes) upgraded.insert(n);
      continue;
    }
    if (s.kind() != StepKind::kFrr) continue;
    std::string text;
    if (!s.frr().replace.empty()) {
      if (!fs::is_regular_file(s.frr().replace)) continue;  // the loader reports a missing file
      auto file = read_file(s.frr().replace);
      if (file) text = *file;
    } else {
      text = s.frr().add.empty() ? s.frr().remove : s.frr().add;
    }
    bool host = s.frr().nodes.empty();
    for (const auto& name : s.frr().nodes) {
      const plan::Node* node = plan.find(name);
      if (!node) {
        host = true;
        continue;
      }
      // After an image step the node's release is the new image's: its own vtysh judges the
      // lines when the step applies them (step-failed naming the line), not a check here.
      if (upgraded.count(name)) continue;
      // This machine's FRR (a namespace node; a VM's NOS, as before): one check for the step.
      if (node->container.image.empty()) {
        host = true;
        continue;
      }
      const std::string key = node->image + "|" + node->container.image_id;
      auto it = seen.find({key, text});
      if (it == seen.end()) {
        auto refused = drivers(*node).refused_lines(*node, text, runner);
        if (!refused) return refused.error().with_context("node " + name);
        it = seen.emplace(std::make_pair(key, text), *refused).first;
        const std::string by = "FRR " +
                               (node->container.frr_version.empty() ? node->container.image
                                                                    : node->container.frr_version) +
                               " (node " + name + ")";
        for (const auto& [line, what] : it->second) report_refused(cs, i, line, what, by, diags);
      }
    }
    if (!host) continue;
    if (!s.frr().replace.empty()) {
      if (!fs::is_regular_file(s.frr().replace)) continue;  // the loader reports a missing file
      paths.push_back(s.frr().replace);
    } else {
      paths.push_back(tmp.path + "/step" + std::to_string(i) + ".conf");
      if (auto w = write_file(paths.back(), s.frr().add.empty() ? s.frr().remove : s.frr().add);
          !w)
        return w.error();
    }
    steps.push_back(i);
  }
  auto checked = runtime::frr_syntax_check(runner, paths);
  if (!checked) return checked.error();
  for (size_t k = 0; k < steps.size(); ++k)
    for (const auto& [line, what] : (*checked)[k])
      report_refused(cs, steps[k], line, what, "FRR", diags);
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

void check_images_present(const ChangeSet& cs, const std::vector<plan::PresentImage>& present,
                          Diagnostics& diags) {
  for (size_t i = 0; i < cs.steps.size(); ++i) {
    const Step& s = cs.steps[i];
    if (s.kind() != StepKind::kImage) continue;
    const std::string& image = s.image().profile.container.image;
    if (image.empty() || plan::present_by_name(present, image)) continue;
    diags.add({cs.file, s.mark.line, s.mark.column, "steps[" + std::to_string(i) + "].image.to",
               "image profile '" + s.image().to + "' names image " + image +
                   ", which is not present on this machine: the upgrade would rehearse nothing",
               "tools/build-images.sh builds twin's FRR images; `twin images` lists what is "
               "present"});
  }
}

}  // namespace twin::replay
