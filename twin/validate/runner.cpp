#include "twin/validate/runner.hpp"

#include <algorithm>
#include <optional>
#include <unordered_map>

#include "twin/core/util.hpp"

namespace twin::validate {

namespace {
std::string key_of(const TestResult& r) {
  return r.validator + "\x1f" + std::to_string(r.test) + "\x1f" + r.node + "\x1f" + r.peer;
}
bool settled(const std::vector<TestResult>& rs) {
  for (const auto& r : rs)
    if (r.status == Status::kFailed || r.status == Status::kError) return false;
  return true;
}
}  // namespace

Report run_validation(Context& ctx, const std::vector<std::unique_ptr<Validator>>& validators,
                      const RunOptions& opts) {
  Report report;
  TimeSource& time = opts.time ? *opts.time : TimeSource::real();
  auto t0 = time.now();
  // Keyed by test (family, number, node, peer): hashed, as a 512-node validation holds ~1.6
  // million results, each offered on every attempt that passes it and looked up at the end.
  std::unordered_map<std::string, double> first_pass;
  std::vector<std::vector<TestResult>> latest(validators.size());
  std::vector<bool> done(validators.size(), false);
  std::vector<int> attempts(validators.size(), 0);
  std::vector<int> last_bad(validators.size(), -1);  // the count a progress line last gave
  std::vector<Clock::time_point> last_said(validators.size());
  // Until when each family is retried: the latest window among its results that do not pass.
  std::vector<Clock::time_point> deadline(validators.size(), t0 + opts.converge_timeout);
  // Riders (Validator::rides_on_control_plane) after the others in each round, so that they
  // run in the round the control plane is done.
  std::vector<size_t> order;
  for (int riders = 0; riders < 2; ++riders)
    for (size_t i = 0; i < validators.size(); ++i)
      if (validators[i]->rides_on_control_plane() == (riders == 1)) order.push_back(i);
  auto control_plane_pending = [&] {
    for (size_t j = 0; j < validators.size(); ++j)
      if (validators[j]->control_plane() && !done[j]) return true;
    return false;
  };
  for (;;) {
    for (size_t i : order) {
      if (done[i]) continue;
      if (opts.hold_riders && validators[i]->rides_on_control_plane() && control_plane_pending())
        continue;
      auto ta = time.now();
      try {
        latest[i] = validators[i]->run(ctx);
      } catch (const std::exception& e) {
        // Unexpected data shape from FRR or iproute2: the harness could not tell.
        latest[i] = {make_result(validators[i]->name(), 0, "internal", Status::kError, "", "",
                                 "a verdict", "exception",
                                 std::string("validator stopped: ") + e.what())};
      }
      double took = time.ms_since(ta);
      ++attempts[i];
      double at = time.ms_since(t0);
      // Probes of a family run together; each result gets an equal share of the family's time,
      // so per-family sums (JUnit testsuite time) equal the time actually spent.
      double share = latest[i].empty() ? took : took / static_cast<double>(latest[i].size());
      if (attempts[i] == 1) first_pass.reserve(first_pass.size() + latest[i].size());
      for (auto& r : latest[i]) {
        if (r.duration_ms == 0) r.duration_ms = share;
        if (r.status == Status::kPassed) first_pass.emplace(key_of(r), at);
      }
      const bool ok = opts.settled ? opts.settled(latest[i]) : settled(latest[i]);
      done[i] = ok;
      std::optional<std::chrono::milliseconds> window;
      for (const auto& r : latest[i]) {
        if (r.status != Status::kFailed && r.status != Status::kError) continue;
        auto w = validators[i]->retry_window(ctx, r).value_or(opts.converge_timeout);
        window = window ? std::max(*window, w) : w;
      }
      deadline[i] = t0 + window.value_or(opts.converge_timeout);
      if (opts.progress) {
        int bad = 0, ran = 0;
        for (const auto& r : latest[i]) {
          bad += r.status == Status::kFailed || r.status == Status::kError;
          ran += r.status != Status::kSkipped;
        }
        // A line when the count moves, or every 5 s while it does not: a fault that stays for
        // the whole window is news once, not at every retry (hundreds of lines in 30 s).
        bool moved = bad != last_bad[i] || ok;
        if (moved || time.now() - last_said[i] >= std::chrono::seconds(5)) {
          // A family with nothing to test (no declared checks, no OSPF) passed nothing.
          std::string what = !ok        ? std::to_string(bad) + " not passing yet"
                             : ran == 0 ? "no tests"
                                        : "passed";
          opts.progress(validators[i]->name() + ": " + what + " (attempt " +
                        std::to_string(attempts[i]) + ")");
          last_bad[i] = bad;
          last_said[i] = time.now();
        }
      }
      // Out of time: its results are final (now, so that riders may run in this round).
      if (time.now() >= deadline[i]) done[i] = true;
    }
    auto now = time.now();
    for (size_t i = 0; i < validators.size(); ++i)
      if (attempts[i] > 0 && now >= deadline[i]) done[i] = true;  // out of time: final
    bool all = std::all_of(done.begin(), done.end(), [](bool b) { return b; });
    if (all || interrupted()) break;
    time.sleep_for(opts.retry_interval);  // poll interval inside the window
  }
  // Reserved, and each family's vector released once moved: a 512-node validation has ~1.6
  // million results (~0.5 GB), and growing the report one doubling at a time moved all of it
  // again and again after the last family had passed.
  size_t total = 0;
  for (const auto& l : latest) total += l.size();
  report.results.reserve(total);
  for (size_t i = 0; i < validators.size(); ++i) {
    for (auto& r : latest[i]) {
      r.attempts = attempts[i];
      if (r.status == Status::kPassed)
        if (auto it = first_pass.find(key_of(r)); it != first_pass.end())
          r.time_to_pass_ms = it->second;
      report.results.push_back(std::move(r));
    }
    std::vector<TestResult>().swap(latest[i]);
  }
  report.lab = ctx.plan.lab;
  report.duration_ms = time.ms_since(t0);
  return report;
}

}  // namespace twin::validate
