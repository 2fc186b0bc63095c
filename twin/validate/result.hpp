#pragma once
// What validators report: one TestResult per (test, subject). A subject is what the test
// looked at: a node, a session (node + peer), a link, a pair of endpoints.
//
// failed  = the network is wrong (the gate must block);
// error   = the harness could not tell (no data, a probe that could not run);
// skipped = the test does not apply (with the reason in `message`).
// Never conflate failed and error (DESIGN.md §3).
#include <cstdint>
#include <string>
#include <vector>

#include "twin/core/note.hpp"

namespace twin::validate {

enum class Status { kPassed, kFailed, kError, kSkipped };

// "passed" | "failed" | "error" | "skipped"
const char* to_string(Status s);

struct TestResult {
  std::string validator;  // family (validators/registry.hpp), e.g. "bgp"
  int test = 0;           // number within the family (stable, documented in docs/validators.md)
  std::string test_name;  // e.g. "session-established"
  Status status = Status::kError;
  std::string node;             // subject node ("" when the test is lab-wide)
  std::string peer;             // peer node / interface / destination ("" when n/a)
  std::string expected;         // human-readable expected value, e.g. "Established"
  std::string observed;         // what was seen, e.g. "Active"
  std::string message;          // one line a network engineer reads first
  // Set by a family on a result that waiting cannot make pass (a daemon that died, a mismatch
  // configured at both ends): why. The runner then stops retrying it after a short
  // confirmation (RunOptions::explained_hold) instead of holding the whole convergence window.
  std::string cannot_converge;
  // On a failed result: the lab itself is broken (a process or VM twin runs is gone), not the
  // network it carries. Every other result that does not pass is then not waited for, and the
  // gate takes no baseline from such a lab.
  bool unhealthy = false;
  double duration_ms = 0;       // time spent on this test's final attempt
  double time_to_pass_ms = -1;  // from the start of validation until it first passed; -1 if never
  int attempts = 0;
};

// What the traffic family measured in one pattern run (traffic/traffic.hpp Report, in brief):
// the figures a change's before and after are compared by (the gate's bandwidth-lost).
// Rates in bits per second of goodput.
struct Bandwidth {
  std::string pattern;  // "all-to-all" | "ring" | "incast" | "pairs"
  int pairs = 0;        // pairs whose flows ran
  int flows = 0;        // flows that ran
  double aggregate_bps = 0;
  // The job-completion figure: the pair that got the least of its fair share ("server1 ->
  // server3"), its goodput, its fair share and their ratio; "" when no pair ran.
  std::string slowest_pair;
  double slowest_bps = 0, slowest_fair_bps = 0, slowest_ratio = 0;
};

// The whole outcome of one `twin validate` (or one validation inside `apply`).
struct Report {
  std::string lab;
  std::string twin_version;
  std::string frr_version;
  std::string kernel_version;
  std::string started_at;  // RFC 3339 UTC
  double duration_ms = 0;
  std::vector<TestResult> results;
  // Beside the results, never counted in them: the plan's notes and what the validation did not
  // check (a family that produced no test where the lab could have had one).
  std::vector<Note> notes;
  // The traffic family's figures, one per pattern it ran (empty when it did not run).
  std::vector<Bandwidth> bandwidth;

  // Counts per status.
  [[nodiscard]] int count(Status s) const;
  // The verdict's exit code: 0 all passed or skipped, 1 any failed (failed wins over error),
  // 3 errors but no failure, or no result at all (nothing checked approves nothing).
  [[nodiscard]] int exit_code() const;
};

}  // namespace twin::validate
