#pragma once
// Runs validator families inside a convergence window: a family is re-run until all its tests
// pass (or are skipped) or the window closes; a test fails only if it still fails at the end.
// Converging is not failing (DESIGN.md §5).
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "twin/core/clock.hpp"
#include "twin/validate/validator.hpp"

namespace twin::validate {

// How a result that does not pass because the lab is unhealthy says so in cannot_converge:
// this, then the unhealthy result's own reason ("bgpd on leaf2 is not running").
inline constexpr const char* kLabUnhealthy = "the lab is unhealthy: ";

struct RunOptions {
  std::chrono::milliseconds converge_timeout{std::chrono::seconds(30)};
  std::chrono::milliseconds retry_interval{std::chrono::milliseconds(250)};
  std::function<void(const std::string&)> progress;  // may be empty
  // When set, decides whether a family's results are final (default: none failed or errored).
  // A negative check (a test that must fail) settles when that test fails.
  std::function<bool(const std::vector<TestResult>&)> settled;
  TimeSource* time = nullptr;  // the window's clock; nullptr = TimeSource::real()
  // Families that ride on the control plane wait for it (Validator::control_plane). Right for
  // a network still converging (after `up`): their probes toward a route still missing only
  // wait out their timeouts. Not for one known to be settled (the gate after a change): there a
  // failing control plane is the answer, and its riders' evidence is wanted in the same window.
  bool hold_riders = true;
  // How long a result that cannot converge (TestResult::cannot_converge) must keep failing
  // before it is final: the confirmation that what explains it is not a passing moment.
  std::chrono::milliseconds explained_hold{std::chrono::seconds(2)};
};

// A family stops being retried when its results settle or when every result that does not
// pass is past its window (Validator::retry_window, else converge_timeout). A result that
// cannot converge (TestResult::cannot_converge) has a window of explained_hold from the attempt
// that first said so. While any family reports the lab unhealthy (TestResult::unhealthy), every
// other result that does not pass cannot converge either: the lab must be repaired first
// (`twin restart`), so it is not waited for, and says why. A family that decides each result on
// its own (Validator::decides_each_result) keeps each result as it was when it became final —
// passed, or failing past its own window — so its verdict does not depend on how long the
// family was retried for another result; such a result's attempts is the attempt that decided
// it.
// Runs `validators` in rounds and fills a Report (lab, versions and timing are the caller's),
// results in the order of `validators`. With hold_riders, families that ride on the control
// plane run only once every control-plane family is done, in the same round.
// Each result's time_to_pass_ms is measured from the start of this call to the first attempt
// in which that (test, subject) passed; attempts counts the family's runs.
Report run_validation(Context& ctx, const std::vector<std::unique_ptr<Validator>>& validators,
                      const RunOptions& opts);

}  // namespace twin::validate
