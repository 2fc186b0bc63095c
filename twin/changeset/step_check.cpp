// The `check` change step (validators run mid-change, expected to pass or to fail): how the
// change-set loader reads it, how the gate applies it, what a dry run says of it, and what it means
// for the intended plan (steps.hpp).
#include <algorithm>
#include <set>

#include "twin/changeset/changeset_keys.hpp"
#include "twin/changeset/changeset_loader.hpp"
#include "twin/changeset/intent.hpp"
#include "twin/changeset/steps.hpp"
#include "twin/validate/runner.hpp"
#include "twin/validate/system_probe.hpp"

using namespace std::chrono_literals;

namespace twin::replay {

namespace {

// The families of `tests` ("bgp" of "bgp.0"), in order; the single tests go to `exact`.
std::vector<std::string> split_tests(const std::vector<std::string>& tests,
                                     std::set<std::string>* exact) {
  std::vector<std::string> families;
  for (const auto& t : tests) {
    auto dot = t.find('.');
    std::string fam = t.substr(0, dot);
    if (std::find(families.begin(), families.end(), fam) == families.end()) families.push_back(fam);
    if (dot != std::string::npos) exact->insert(t);
  }
  return families;
}

}  // namespace

void ChangeSetLoader::parse_body(const Value& v, CheckStep& out) {
  r_.check_keys(v, keys::kCheck);
  if (auto tv = child(v, "tests"); !tv) {
    r_.error(v.mark(), tv.field,
             "missing; expected the tests to run: families (bgp) or single tests (bgp.0)",
             "e.g. tests: [bgp, routes]");
  } else if (r_.list(tv, "test families or tests", "tests: [bgp, mtu.0]")) {
    for (size_t i = 0; i < tv.node.size(); ++i) {
      const Value it = item(tv, i);
      if (auto s = r_.string(it); s && test_name(it, *s, false)) out.tests.push_back(*s);
    }
  }
  bool expect_ok = true;
  if (auto ev = child(v, "expect")) {
    if (auto s = r_.choice(ev, keys::kExpect))
      out.expect = *s;
    else
      expect_ok = false;
  }
  auto fv = child(v, "failing");
  if (expect_ok && out.expect == "fail") {
    if (!fv) {
      r_.error(v.mark(), fv.field, "missing; `expect: fail` needs the tests that must fail",
               "e.g. failing: [bgp.0]");
    } else if (r_.list(fv, "tests", "failing: [bgp.0]")) {
      for (size_t i = 0; i < fv.node.size(); ++i) {
        const Value it = item(fv, i);
        auto s = r_.string(it);
        if (!s || !test_name(it, *s, true)) continue;
        std::string fam = s->substr(0, s->find('.'));
        if (!has(out.tests, *s) && !has(out.tests, fam))
          r_.error(it, "test " + *s + " is not among the selected tests",
                   "add " + fam + " (or " + *s + ") to tests");
        out.failing.push_back(*s);
      }
    }
  } else if (expect_ok && fv) {
    r_.error(fv.key_mark(), fv.field, "failing applies only to `expect: fail`",
             "set `expect: fail`, or remove failing");
  }
  if (auto t = child(v, "timeout"))
    if (auto d = r_.duration(t)) out.timeout = *d;
}

Result<void> apply_step(const CheckStep& b, StepRun& run, std::string* detail) {
  std::set<std::string> exact;
  auto families = split_tests(b.tests, &exact);
  std::vector<std::string> unknown;
  auto validators = run.env.validators(families, &unknown);
  if (!unknown.empty()) return input_error("unknown validator " + unknown.front());
  plan::Plan p = intended_plan(run.st.plan, run.cs, run.index + 1);
  validate::SystemProbe probe(run.env.runner, run.env.drivers);
  validate::Context ctx{p, probe, run.opts.parallel};
  validate::RunOptions ro;
  ro.time = &run.env.time;
  ro.converge_timeout = b.timeout;
  auto selected = [&](const validate::TestResult& r) {
    return exact.empty() || exact.count(r.validator + "." + std::to_string(r.test)) ||
           std::find(b.tests.begin(), b.tests.end(), r.validator) != b.tests.end();
  };
  bool expect_fail = b.expect == "fail";
  ro.settled = [&](const std::vector<validate::TestResult>& rs) {
    if (expect_fail) {
      for (const auto& f : b.failing) {
        bool seen = std::any_of(rs.begin(), rs.end(), [&](const validate::TestResult& r) {
          return r.validator + "." + std::to_string(r.test) == f &&
                 r.status == validate::Status::kFailed;
        });
        bool in_family = std::any_of(rs.begin(), rs.end(), [&](const validate::TestResult& r) {
          return f.rfind(r.validator + ".", 0) == 0;
        });
        if (in_family && !seen) return false;
      }
      return true;
    }
    return std::none_of(rs.begin(), rs.end(), [&](const validate::TestResult& r) {
      return selected(r) &&
             (r.status == validate::Status::kFailed || r.status == validate::Status::kError);
    });
  };
  auto rep = validate::run_validation(ctx, validators, ro);
  std::vector<std::string> problems;
  if (expect_fail) {
    for (const auto& f : b.failing) {
      bool seen = std::any_of(rep.results.begin(), rep.results.end(), [&](const auto& r) {
        return r.validator + "." + std::to_string(r.test) == f &&
               r.status == validate::Status::kFailed;
      });
      if (!seen) problems.push_back(f + " was expected to fail but did not");
    }
  } else {
    for (const auto& r : rep.results)
      if (selected(r) &&
          (r.status == validate::Status::kFailed || r.status == validate::Status::kError))
        problems.push_back(r.validator + "." + std::to_string(r.test) + " " + r.node +
                           (r.peer.empty() ? "" : " " + r.peer) + ": " +
                           (r.message.empty() ? r.observed : r.message));
  }
  int checked = static_cast<int>(std::count_if(rep.results.begin(), rep.results.end(),
                                               [&](const auto& r) { return selected(r); }));
  if (checked == 0)
    problems.push_back("no result for " + [&] {
      std::string t;
      for (const auto& x : b.tests) t += (t.empty() ? "" : ", ") + x;
      return t;
    }() + ": no such test in this lab (see docs/validators.md for the test numbers)");
  if (!problems.empty()) {
    std::string msg;
    for (size_t i = 0; i < problems.size() && i < 3; ++i) msg += (i ? "; " : "") + problems[i];
    if (problems.size() > 3) msg += "; … (" + std::to_string(problems.size() - 3) + " more)";
    return input_error(msg);
  }
  *detail = "check " + b.expect + ": " + std::to_string(checked) + " results as expected";
  return {};
}

Result<void> describe_step(const CheckStep& b, const state::State&, plan::Plan&,
                           proc::ProcessRunner&, std::ostream& out) {
  out << "   validators:";
  for (const auto& t : b.tests) out << " " << t;
  out << ", expect " << b.expect;
  for (const auto& f : b.failing) out << " " << f;
  out << "\n";
  return {};
}

void intend_step(const CheckStep&, const std::string&, plan::Plan&) {}

}  // namespace twin::replay
