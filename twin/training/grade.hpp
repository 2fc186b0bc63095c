#pragma once
// Grading a trainee's lab: solved when every validator family passes and nothing the healthy
// lab had is lost or added (the gate's verdict rules, replay::decide, against the reference
// state) — judged by the end state, never by matching the solution's text, so any fix is
// accepted and a "fix" that removes the symptom by breaking something else is not. What still
// fails is said as symptoms a user would report: counts, and only node names the ticket already
// gave; never likely causes (those are what hints reveal). Pure.
#include <set>
#include <string>
#include <vector>

#include "twin/plan/plan.hpp"
#include "twin/validate/result.hpp"
#include "twin/verdict/diff.hpp"

namespace twin::training {

struct Grade {
  bool solved = false;
  // Failing results of the exercise's criteria families (every family when it names none).
  int criteria_failing = 0;
  int failing = 0;  // failing or erroring results of any family
  // What a user would report, one line each, most severe first.
  std::vector<std::string> symptoms;
};

// `report`: a validation of every family; `diff`: reference state vs now
// (replay::diff_states); `criteria` as Exercise::criteria; `named`: the node names the ticket
// mentions (names_in).
Grade grade(const validate::Report& report, const replay::Diff& diff,
            const std::vector<std::string>& criteria, const std::set<std::string>& named);

// The node names of `plan` that `text` mentions as words ("leaf1" in "leaf1's uplink", not in
// "leaf10").
std::set<std::string> names_in(const std::string& text, const plan::Plan& plan);

}  // namespace twin::training
