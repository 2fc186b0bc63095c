// `twin apply --dry-run`: what each step would do, without doing it (apply.hpp).
#include <sstream>

#include "twin/drivers/registry.hpp"
#include "twin/engine/reconcile.hpp"
#include "twin/changeset/dry_run.hpp"
#include "twin/changeset/intent.hpp"
#include "twin/changeset/steps.hpp"

namespace twin::replay {

Result<std::string> dry_run(const state::State& st, const ChangeSet& cs,
                            proc::ProcessRunner& runner) {
  std::ostringstream o;
  o << "change " << cs.name << " on lab " << st.lab << ": " << cs.steps.size() << " step"
    << (cs.steps.size() == 1 ? "" : "s") << " (dry run: nothing is applied)\n";
  plan::Plan cur = st.plan;
  for (size_t i = 0; i < cs.steps.size(); ++i) {
    const Step& s = cs.steps[i];
    o << "\n" << i + 1 << ". " << s.name << " [" << to_string(s.kind()) << "]\n";
    if (auto r = std::visit(
            [&](const auto& body) { return describe_step(body, st, cur, runner, o); }, s.body);
        !r)
      return r.error();
  }
  plan::Plan intended = intended_plan(st.plan, cs);
  o << "\nintended after the change: " << intended.sessions.size() << " BGP sessions, "
    << intended.prefixes.size() << " prefixes, " << intended.links.size() << " links\n";
  if (const auto& t = cs.intent.traffic)
    o << "traffic measured before and after: " << t->pattern << ", " << t->duration_s << " s, "
      << t->flows_per_pair << " flow(s) per pair; rejected (bandwidth-lost) when the slowest "
      << "pair or the aggregate falls more than " << static_cast<int>(100 * t->bandwidth_loss + 0.5)
      << " % below the baseline\n";
  return o.str();
}

}  // namespace twin::replay
