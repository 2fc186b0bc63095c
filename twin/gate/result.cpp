#include "twin/gate/result.hpp"

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

}  // namespace twin::replay
