// `twin apply --dry-run`: what each step would do, without doing it (apply.hpp).
#include <sstream>

#include "twin/drivers/registry.hpp"
#include "twin/engine/reconcile.hpp"
#include "twin/replay/apply.hpp"
#include "twin/replay/intent.hpp"

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
    switch (s.kind()) {
      case StepKind::kFrr:
        for (const auto& name : s.frr().nodes) {
          const plan::Node* n = cur.find(name);
          if (!n) continue;
          if (!s.frr().replace.empty()) {
            std::string out;
            auto r = drivers::driver_for(*n).reload_config(*n, s.frr().replace, true, &out, runner);
            if (!r) return r.error();
            o << "   " << name << ": configuration difference (frr-reload.py --test):\n";
            std::istringstream in(out);
            std::string line;
            bool any = false;
            while (std::getline(in, line))
              if (!line.empty()) {
                o << "     " << line << "\n";
                any = true;
              }
            if (!any) o << "     (no difference: node left untouched)\n";
          } else {
            std::string text = s.frr().add.empty() ? negate_config(s.frr().remove) : s.frr().add;
            o << "   " << name << ": vtysh -f <<EOF\n";
            std::istringstream in(text);
            std::string line;
            while (std::getline(in, line)) o << "     " << line << "\n";
            o << "   EOF\n";
          }
        }
        break;
      case StepKind::kInterface:
        for (const auto& r : s.interface().interfaces) {
          o << "   " << r.str() << ":";
          if (s.interface().mtu) o << " mtu " << *s.interface().mtu;
          if (s.interface().up) o << (*s.interface().up ? " up" : " down");
          for (const auto& a : s.interface().add_addresses) o << " +" << a;
          for (const auto& a : s.interface().remove_addresses) o << " -" << a;
          o << "\n";
        }
        break;
      case StepKind::kLink: {
        std::vector<std::string> names;
        if (s.link().all)
          for (const auto& l : cur.links)
            names.push_back(l.a_node + ":" + l.a_interface + "--" + l.b_node + ":" + l.b_interface);
        else
          for (const auto& l : s.link().links) names.push_back(l.str());
        for (const auto& n : names) {
          o << "   " << n << ":";
          if (s.link().mtu) o << " mtu " << *s.link().mtu;
          if (s.link().up) o << (*s.link().up ? " up" : " down");
          o << "\n";
        }
        break;
      }
      case StepKind::kWait:
        if (s.wait().until == "duration")
          o << "   wait " << s.wait().duration.count() << " ms\n";
        else
          o << "   until every intended BGP session is Established (at most "
            << s.wait().timeout.count() << " ms)\n";
        break;
      case StepKind::kCheck: {
        o << "   validators:";
        for (const auto& t : s.check().tests) o << " " << t;
        o << ", expect " << s.check().expect;
        for (const auto& f : s.check().failing) o << " " << f;
        o << "\n";
        break;
      }
      case StepKind::kTopology: {
        if (!s.topology().topo) break;
        plan::Plan next = plan::make_plan(*s.topology().topo, st.lab);
        o << "   " << engine::describe_reshape(cur, next);
        cur = next;
        break;
      }
    }
  }
  plan::Plan intended = intended_plan(st.plan, cs);
  o << "\nintended after the change: " << intended.sessions.size() << " BGP sessions, "
    << intended.prefixes.size() << " prefixes, " << intended.links.size() << " links\n";
  return o.str();
}

}  // namespace twin::replay
