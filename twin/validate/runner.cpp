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
  // The lab's own breakage (TestResult::unhealthy) as the last attempt of each family saw it.
  std::vector<std::string> unhealthy(validators.size());
  auto lab_unhealthy = [&]() -> std::string {
    for (const auto& u : unhealthy)
      if (!u.empty()) return u;
    return "";
  };
  // For a family that decides each result on its own (Validator::decides_each_result): its
  // final results in the order they became final (Context::final_results), and where each is.
  std::vector<std::vector<TestResult>> finals(validators.size());
  std::vector<std::unordered_map<std::string, size_t>> final_at(validators.size());
  // When each result that cannot converge first said so (keyed like first_pass).
  std::unordered_map<std::string, Clock::time_point> explained_since;
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
      const bool each = validators[i]->decides_each_result();
      ctx.final_results = each ? &finals[i] : nullptr;
      auto make_final = [&](TestResult& r) {
        r.attempts = attempts[i];
        final_at[i].emplace(key_of(r), finals[i].size());
        finals[i].push_back(r);
      };
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
      if (each) {
        // A final result stays as it was decided; a new pass (or skip) is final at once, so a
        // result that waits for it counts from now.
        for (auto& r : latest[i]) {
          if (auto f = final_at[i].find(key_of(r)); f != final_at[i].end()) {
            r = finals[i][f->second];
          } else if (r.status == Status::kPassed || r.status == Status::kSkipped) {
            if (r.status == Status::kPassed) r.time_to_pass_ms = at;
            make_final(r);
          }
        }
      }
      bool ok = opts.settled ? opts.settled(latest[i]) : settled(latest[i]);
      done[i] = ok;
      unhealthy[i].clear();
      for (const auto& r : latest[i])
        if (r.unhealthy && r.status == Status::kFailed) {
          unhealthy[i] = r.cannot_converge.empty() ? r.message : r.cannot_converge;
          break;
        }
      const std::string sick = lab_unhealthy();
      const auto seen = time.now();
      std::optional<Clock::time_point> until;
      for (auto& r : latest[i]) {
        if (r.status != Status::kFailed && r.status != Status::kError) continue;
        if (each && final_at[i].count(key_of(r))) continue;
        if (r.cannot_converge.empty() && !sick.empty())
          r.cannot_converge = std::string(kLabUnhealthy) + sick;
        Clock::time_point u;
        if (!r.cannot_converge.empty()) {
          auto since = explained_since.emplace(key_of(r), seen).first->second;
          u = since + opts.explained_hold;
        } else {
          u = t0 + validators[i]->retry_window(ctx, r).value_or(opts.converge_timeout);
        }
        if (each && seen >= u) {
          make_final(r);  // past its own window: final, whoever else is still waited for
          continue;
        }
        until = until ? std::max(*until, u) : u;
      }
      deadline[i] = until.value_or(t0 + opts.converge_timeout);
      if (each) {
        ok = ok || std::all_of(latest[i].begin(), latest[i].end(), [&](const TestResult& r) {
               return final_at[i].count(key_of(r)) > 0;
             });
        done[i] = ok;
      }
      ctx.final_results = nullptr;
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
  report.notes = ctx.plan.notes;
  for (size_t i = 0; i < validators.size(); ++i)
    for (auto& n : validators[i]->coverage(ctx, latest[i])) add_note(report.notes, std::move(n));
  size_t total = 0;
  for (const auto& l : latest) total += l.size();
  report.results.reserve(total);
  for (size_t i = 0; i < validators.size(); ++i) {
    for (auto& r : latest[i]) {
      if (!validators[i]->decides_each_result() || r.attempts == 0) r.attempts = attempts[i];
      if (r.status == Status::kPassed)
        if (auto it = first_pass.find(key_of(r)); it != first_pass.end())
          r.time_to_pass_ms = it->second;
      report.results.push_back(std::move(r));
    }
    std::vector<TestResult>().swap(latest[i]);
  }
  for (const auto& v : validators)
    for (auto& b : v->bandwidth()) report.bandwidth.push_back(std::move(b));
  report.lab = ctx.plan.lab;
  report.duration_ms = time.ms_since(t0);
  return report;
}

}  // namespace twin::validate
