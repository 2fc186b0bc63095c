#pragma once
// A lab's history: what every twin command (CLI or `twin serve`) did to it, kept under
// /var/lib/twin/labs/<lab>/ so it outlives `down` (labs/ keeps a lab named "images" off the VM
// images' folder) (the state in /run/twin does not, and /run is
// cleared at boot). journal.jsonl holds one JSON object per line, appended whole; the reports
// an event refers to (a validation's, a gate's) sit beside it in reports/. The server follows
// the file, so what a CLI `apply` did shows up in the browser too.
//
// An event: {"seq": line number from 1, "time": RFC 3339 UTC, "lab", "kind", ...fields}
// kinds written today: "up", "down", "validate", "traffic", "apply", "run", "drill", and the live
// ones the server adds as it watches ("link", "session", "daemon").
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "twin/core/error.hpp"

namespace twin::state {

// /var/lib/twin/labs, or $TWIN_HISTORY_DIR when set (tests run without root).
std::string history_root();
// <history_root>/<lab>. The lab name is checked (topology::valid_lab_name): never a path.
std::string history_dir(const std::string& lab);

// Appends one event, written with one write(2) on an O_APPEND descriptor under an flock(2),
// so concurrent commands never interleave or share a sequence number. With `write_report`, the
// report is saved first as reports/<seq>-<kind>.json — the writer streams compact JSON with
// invalid UTF-8 from a node's output replaced, as the CLI prints it; streamed, not dumped from a
// tree held here, because a validation of 512 nodes is ~1.8 million results — and the event
// carries "report": that relative path. Returns the event as written. Errors: an invalid lab
// name (kUsage), the folder or file cannot be written (kEnvironment, naming the path). Callers
// treat an error as a warning: history is a record, never a reason to fail the command that
// made it.
using ReportWriter = std::function<void(std::ostream&)>;
Result<nlohmann::json> journal_append(const std::string& lab, const std::string& kind,
                                      nlohmann::json fields,
                                      const ReportWriter& write_report = {});

// Events after byte `offset` of the journal (0: from the start), in order, and the offset to
// continue from. A line still being written (no newline yet) is left for the next call; a
// line that is not JSON is skipped. A lab without history gives no events (not an error).
struct JournalChunk {
  std::vector<nlohmann::json> events;
  uint64_t next_offset = 0;
};
Result<JournalChunk> journal_read(const std::string& lab, uint64_t offset = 0);

// A report an event refers to ("reports/12-validate.json"), read back. Errors: a path outside
// the lab's reports/ (kUsage), a missing or unreadable file.
Result<nlohmann::json> journal_report(const std::string& lab, const std::string& relative);

// Labs with a history (folders under history_root), sorted.
std::vector<std::string> labs_with_history();

}  // namespace twin::state
