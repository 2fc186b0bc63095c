#pragma once
// Report sinks: one validation Report (twin/validate/result.hpp) rendered for a terminal, for
// machines (JSON) and for CI test reporters (JUnit XML). Pure functions: no I/O, no clock, no
// locale; the same Report always renders to the same bytes.
//
// Verdict (all three sinks agree, and agree with Report::exit_code()):
//   "pass"  exit 0  every result passed or was skipped (also when there are no results);
//   "fail"  exit 1  at least one result failed — failed wins over error (DESIGN.md §3);
//   "error" exit 3  no failure, but at least one error: the harness could not tell.
//
// Ordering everywhere: validator families in order of their first result; within a family,
// results in the order they appear in Report::results.
//
// Units: milliseconds in JSON (as in the model); seconds in JUnit (as JUnit requires); the
// text summary prints seconds with one decimal ("1.2 s").
//
// Strings that came from the network (observed values, messages) may hold anything: invalid
// UTF-8 is replaced with U+FFFD in JSON and JUnit (so dumping the JSON never throws and the
// XML is well formed), and control characters are made harmless per sink (see below).
#include <iosfwd>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "twin/validate/result.hpp"

namespace twin::report {

// "pass" | "fail" | "error", from Report::exit_code() (0, 1, 3).
const char* verdict(const twin::validate::Report& report);

// Text summary for a terminal. No colours; one line per item; lines end in '\n'.
//
//   twin validation report — lab dc1 (twin 0.1.0, FRR 8.4.4, kernel 6.1.0, started <t>, 12.3 s)
//   bgp: 15 passed, 1 failed, 0 errors, 0 skipped
//     [PASS] bgp 0 session-established  15/16 (time to pass 1.2 s)
//     [FAIL] bgp 0 session-established leaf1 swp1: expected Established, observed Active — msg
//   VERDICT: FAIL — 1 failed
//
// Header: the lab name, then whichever of the versions / start time are known, then the
// duration. Per family: a counts line, then per result, in order:
//   failed / error  always one line: [FAIL] / [ERROR] validator test test_name [node] [peer]
//                   then ": expected E, observed O" (parts that are empty are left out) and
//                   " — message" when there is a message;
//   passed          verbose: one such line per result (plus " (time to pass X s)");
//                   otherwise one aggregate line per test number, at the position of its first
//                   passed result: "[PASS] validator test test_name  P/T" where T counts every
//                   result of that test number, plus " (time to pass X s)" with the maximum
//                   time_to_pass over its passed subjects (left out when none is known);
//   skipped         verbose: one line per result; otherwise one aggregate line per test number
//                   "[SKIP] validator test test_name  S/T — reason" (the reason when all its
//                   skipped results give the same one).
// Text that came from the network is also sanitised (invalid UTF-8 -> U+FFFD).
// Verdict line, last:
//   "VERDICT: PASS (N tests, P passed, S skipped)"
//   "VERDICT: FAIL — F failed[, E error(s)]"
//   "VERDICT: ERROR — harness could not tell: E error(s)"
// Control characters (including newlines and ESC) in any field are replaced with a space, so
// one result stays one line and nothing reaches the terminal as an escape sequence.
std::string render_text(const twin::validate::Report& report, bool verbose);

// A stable JSON document (keys sorted, as nlohmann::json keeps them):
//   {"schema_version": 1, "lab", "twin_version", "frr_version", "kernel_version",
//    "started_at" (RFC 3339 UTC, as given), "duration_ms" (number),
//    "verdict": "pass"|"fail"|"error", "exit_code": 0|1|3,
//    "summary": {"passed", "failed", "error", "skipped", "total"} (integers),
//    "notes": [{"severity", "node", "source", "text"}],
//    "bandwidth": [bandwidth_json per pattern the traffic family ran] ([] when it did not),
//    "results": [{"lab", "validator", "test" (integer), "test_name",
//                 "status": "passed"|"failed"|"error"|"skipped", "node", "peer", "expected",
//                 "observed", "message", "duration_ms" (number),
//                 "time_to_pass_ms" (number, or null when it never passed), "attempts"}]}
// "results" is in Report::results order. Absent strings are "" (never null). Invalid UTF-8 in
// strings is replaced with U+FFFD, so dump() never throws.
nlohmann::json to_json(const twin::validate::Report& report);
// One traffic run's figures: {"pattern", "pairs", "flows", "aggregate_bps", "slowest_pair",
// "slowest_bps", "slowest_fair_bps", "slowest_ratio"} (bits per second of goodput).
nlohmann::json bandwidth_json(const twin::validate::Bandwidth& b);

// The same document written to `out` as to_json(report), with the keys of `extra` (an object,
// e.g. "likely_causes") added at the top level, .dump(indent) would give it — byte for byte —
// without building the tree: one result at a time. Why: a validation of 512 nodes holds ~1.8
// million results, whose tree took ~7 GB. indent < 0 is compact (one line).
void write_json(std::ostream& out, const twin::validate::Report& report, int indent,
                const nlohmann::json& extra);

// JUnit XML as read by Jenkins, GitLab and GitHub test reporters:
//   <?xml version="1.0" encoding="UTF-8"?>
//   <testsuites name="twin" tests= failures= errors= skipped= time="<report duration, s>">
//     <testsuite name="<validator>" tests= failures= errors= skipped= time="<sum, s>">
//       <properties> lab, twin_version, frr_version, kernel_version, started_at (when known)
//       <testcase classname="twin.<lab>.<validator>" name="<test> <test_name> <node> <peer>"
//                 time="<duration, s>">             (empty node / peer left out of the name)
//         <failure message="<message>" type="failed">expected: E\nobserved: O</failure>
//         <error message="<message>" type="error">expected: E\nobserved: O</error>
//         <skipped message="<message>"/>
// (one testsuite per family, in family order; one testcase per result; a suite's time is the
// sum of its results' duration_ms; the body of <failure>/<error> is left out when expected and
// observed are both empty.)
// Times are seconds with millisecond precision ("1.234"). When a failed / error result has no
// message, "expected E, observed O" is used as the message. Escaping: & < > " ' become
// entities; tab, newline and carriage return are kept (as character references where XML would
// otherwise normalise them away); other characters that XML 1.0 forbids (C0 controls, U+FFFE,
// U+FFFF) and invalid UTF-8 become U+FFFD.
std::string render_junit(const twin::validate::Report& report);

// For the text reports: `s` with control characters (from the network) turned into spaces, so
// one item stays one line and nothing reaches the terminal; `ms` as "1.2 s".
std::string one_line(std::string s);
std::string seconds_text(double ms);

}  // namespace twin::report
