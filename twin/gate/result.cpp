#include "twin/gate/result.hpp"

#include <sstream>

namespace twin::replay {

int ApplyResult::exit_code() const {
  if (stage == "baseline-failed") return 4;
  if (stage == "baseline-unhealthy") return 5;
  // A rollback (or a --revert restore) that failed leaves a lab that is not what the caller
  // thinks: the harness failed, whatever the verdict — a CI job must not read "rejected and
  // restored" from it.
  if (rolled_back && !rollback_ok) return 3;
  return replay::exit_code(verdict);
}

RecordedChange record_change(const ApplyResult& r, const std::string& configs_dir) {
  RecordedChange out;
  std::ostringstream y;
  y << "# recorded by twin apply --run on lab " << r.lab << " (" << r.started_at << ")\n"
    << "version: 1\nname: recorded-run\ndescription: what the orchestrator's run changed\n"
    << "steps:\n";
  for (const auto& [node, after] : r.config_after) {
    auto before = r.config_before.find(node);
    if (before == r.config_before.end() || before->second == after) continue;
    out.configs[node] = after;
    y << "  - name: " << node << "\n    frr: {node: " << node << ", replace: " << configs_dir
      << "/" << node << ".conf}\n";
  }
  if (out.configs.empty()) y << "  - name: nothing\n    wait: {until: converged}\n";
  out.yaml = y.str();
  return out;
}

}  // namespace twin::replay
