// The `wait` change step (a pause: until the intended sessions are Established, or a fixed
// duration): how the change-set loader reads it, how the gate applies it, what a dry run says of
// it, and what it means for the intended plan (steps.hpp).
#include "twin/core/util.hpp"
#include "twin/changeset/changeset_keys.hpp"
#include "twin/changeset/changeset_loader.hpp"
#include "twin/changeset/intent.hpp"
#include "twin/changeset/steps.hpp"

using namespace std::chrono_literals;

namespace twin::replay {

void ChangeSetLoader::parse_body(const Value& v, WaitStep& out) {
  r_.check_keys(v, keys::kWait);
  bool until_ok = true;
  if (auto u = child(v, "until")) {
    auto s = r_.choice(u, keys::kUntil);
    if (s)
      out.until = *s;
    else
      until_ok = false;
  }
  if (auto t = child(v, "timeout"))
    if (auto d = r_.duration(t)) out.timeout = *d;
  auto dv = child(v, "duration");
  if (dv)
    if (auto d = r_.duration(dv)) out.duration = *d;
  if (!until_ok) return;
  if (out.until == "duration" && !dv)
    r_.error(v.mark(), dv.field, "missing; `until: duration` needs a duration",
             "e.g. duration: 2s");
  if (out.until == "converged" && dv)
    r_.error(dv.key_mark(), dv.field, "duration applies only to `until: duration`",
             "remove it, or set `until: duration`");
}

Result<void> apply_step(const WaitStep& b, StepRun& run, std::string* detail) {
  if (b.until == "duration") {
    // The user asked for a fixed pause (e.g. a timer that must expire); honour it.
    auto end = run.env.time.now() + b.duration;
    while (run.env.time.now() < end && !interrupted()) run.env.time.sleep_for(50ms);
    *detail = "waited " + std::to_string(b.duration.count()) + " ms";
    return {};
  }
  *detail = run.wait_converged(intended_plan(run.st.plan, run.cs, run.index + 1), b.timeout);
  return {};
}

Result<void> describe_step(const WaitStep& b, const state::State&, plan::Plan&,
                           proc::ProcessRunner&, std::ostream& out) {
  if (b.until == "duration")
    out << "   wait " << b.duration.count() << " ms\n";
  else
    out << "   until every intended BGP session is Established (at most " << b.timeout.count()
        << " ms)\n";
  return {};
}

void intend_step(const WaitStep&, const std::string&, plan::Plan&) {}

}  // namespace twin::replay
