#pragma once
// The CLI's subcommands, one file each; app.cpp binds CLI11 options to these structs (CLI11
// is included only through app.hpp: it costs seconds per translation unit). Defaults are not
// here: each option's default is the command table's (twin/options/table.cpp), written into the
// struct when app.cpp binds it; a struct made otherwise holds zeros. Each run_* returns the
// process exit code documented in docs/troubleshooting.md ("Exit codes").
#include <functional>
#include <iosfwd>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "twin/core/input_policy.hpp"

namespace twin::cli {

// Which host files a command's inputs may name (core/input_policy.hpp): the checkout root of
// each input, plus these.
struct InputOptions {
  std::vector<std::string> allow_paths;  // --allow-path DIR, repeatable
  // Hidden --input-root DIR: DIR is the only root (no checkout root is looked for). twin serve
  // gives its jobs the request's folder, which holds everything a request may name.
  std::string input_root;
};

struct PlanOptions {
  std::string file;
  std::string name;
  bool strict_images = false;  // as up's: refuse a substitute release
  bool json = false;
  InputOptions inputs;
};
int run_plan(const PlanOptions& o);

struct UpOptions {
  std::string file;
  std::string name;
  bool keep_on_failure = false;
  bool no_wait = false;
  double timeout_s = 0;
  bool timeout_explicit = false;  // --timeout given (else VMs' ready-timeouts extend it)
  double converge_timeout_s = 0;
  int parallel = 0;
  bool json = false;
  std::string libvirt_uri;  // "" = $TWIN_LIBVIRT_URI or qemu:///system
  bool strict_images = false;  // refuse a substitute release (plan::resolve_images)
  InputOptions inputs;
};
int run_up(const UpOptions& o);

struct DownOptions {
  std::string lab;
  bool all = false;
  bool json = false;
};
int run_down(const DownOptions& o);

struct StatusOptions {
  std::string lab;
  bool json = false;
};
int run_status(const StatusOptions& o);

struct ImagesOptions {
  bool json = false;
};
int run_images(const ImagesOptions& o);
int run_list(bool json);

struct RestartOptions {
  std::string lab;
  std::string node;
  std::string daemon;  // "" = every routing daemon of the node
  bool no_wait = false;
  double converge_timeout_s = 0;  // waiting for the lab's sessions to be back
  bool json = false;
};
// twin restart: exit 0 restarted and converged; 1 restarted, not converged in time; 2 unknown
// lab, node or daemon; 3 a daemon that did not stop or start.
int run_restart(const RestartOptions& o);

struct ExecOptions {
  std::string lab;
  std::string node;
  std::vector<std::string> command;  // empty = interactive shell
};
int run_exec(const ExecOptions& o);

struct ConsoleOptions {
  std::string lab;
  std::string node;
  bool log = false;    // print the console log instead of attaching
  double quiet_s = 0;  // stdin not a terminal: stop after this long without console output
};
int run_console(const ConsoleOptions& o);

struct ValidateOptions {
  std::string lab;
  bool json = false;
  bool verbose = false;
  std::string junit;
  std::string only;  // comma-separated families
  std::string artifacts;
  double converge_timeout_s = 0;
  int max_pairs = 0;  // validate::Context::max_pairs
  int parallel = 0;   // validate::Context::parallel
  bool causes = true;  // on failure, the likely-cause rules (causes/causes.hpp) over what it saw
};
int run_validate(const ValidateOptions& o);

struct TrafficOptions {
  std::string lab;
  std::string pattern;
  std::string duration;  // "5s"
  int flows_per_pair = 0;
  std::string protocol;
  std::string rate;  // UDP per flow; "" = the source port's
  std::string to;    // incast receiver
  int max_pairs = 0;
  bool json = false;
  bool verbose = false;
};
int run_traffic(const TrafficOptions& o);

struct ApplyOptions {
  std::string lab;
  std::string change;   // change set file
  std::string configs;  // --configs DIR: rendered per-node configs instead of a change set
  std::string run_command;  // --run COMMAND: a live orchestrator run instead of a change set
  std::string run_timeout;  // --run-timeout DURATION
  std::string record;       // --record FILE: the run as a change set
  bool dry_run = false;
  bool json = false;
  bool verbose = false;
  std::string junit;
  std::string evidence;
  bool no_rollback = false;
  bool revert = false;
  bool per_step = false;
  bool traffic = false;  // --traffic: the gate runs the lab's traffic pattern before and after
  bool allow_dirty_baseline = false;
  bool restart_check = false;     // apply: --restart-check
  bool no_restart_check = false;  // run: --no-restart-check (the check is on by default there)
  std::string max_outage;         // --max-outage DURATION: the probe stream's budget
  std::string probe_interval;
  int probe_flows = 0;
  bool no_probe_stream = false;
  double converge_timeout_s = 0;   // a rejected change waits this long
  InputOptions inputs;             // apply: the change set or --configs DIR; run: the scenario
};
int run_apply(const ApplyOptions& o);

struct DrillOptions {
  std::string lab;
  std::string links;            // --links all|fabric|LIST
  std::string nodes;            // --nodes all|LIST
  bool links_given = false, nodes_given = false;
  std::string max_convergence;  // --max-convergence DURATION
  bool json = false;
  bool verbose = false;
  std::string junit;
  std::string max_outage;  // the probe stream, as apply's
  std::string probe_interval;
  int probe_flows = 0;
  bool no_probe_stream = false;
  double converge_timeout_s = 0;
};
int run_drill(const DrillOptions& o);

struct RunOptions {
  std::string scenario;
  std::string name;   // lab name override (unique names let CI jobs run in parallel)
  bool keep = false;  // leave the lab up afterwards
  ApplyOptions apply;
};
int run_scenario(const RunOptions& o);

struct GenClosOptions {
  std::string name;
  int spines = 0, leaves = 0, servers_per_leaf = 0, mtu = 0, super_spines = 0, pods = 0;
  int tenants = 0;
  std::string fabric_rate, server_rate;  // "" = unshaped
  std::string output;  // "" or "-" = stdout
};
int run_gen_clos(const GenClosOptions& o);

struct GenRailOptions {
  std::string name;
  int servers = 0, rails = 0, spines = 0, servers_per_leaf = 0, mtu = 0;
  std::string fabric_rate, server_rate;
  std::string output;
};
int run_gen_rail(const GenRailOptions& o);

struct ConvertOptions {
  std::string file;    // containerlab file
  std::string output;  // "" or "-" = stdout
  bool force = false;  // overwrite an existing output file
  std::string name;    // lab name for the output ("" = the file's)
  InputOptions inputs;
};
int run_convert(const ConvertOptions& o);

struct GraphOptions {
  std::string target;          // a topology file, or a lab ("" = the only running lab)
  std::string format;          // dot | svg | mermaid | json
  std::string output;          // "" or "-" = stdout
  bool no_live = false;        // a running lab's plan only, without reading its state
  InputOptions inputs;         // when `target` is a topology file
};
int run_graph(const GraphOptions& o);

struct InventoryOptions {
  std::string lab;
  std::string format;  // graph::kInventoryFormats
  std::string output;  // "" or "-" = stdout
};
int run_inventory(const InventoryOptions& o);

struct EventsOptions {
  std::string lab;
  bool json = false;      // one JSON object per line
  bool history = false;   // the journal's past events first
  double interval_s = 0;  // between two looks at the lab
  int count = 0;          // stop after this many events (0 = until Ctrl-C or `down`)
};
int run_events(const EventsOptions& o);

struct ServeOptions {
  std::string listen;                     // ADDRESS:PORT; port 0 = any free one
  std::string token_file;                 // required for a non-loopback address
  bool no_token = false;                  // loopback only: no token at all (else one is made)
  std::string web_dir;                    // "" = <data dir>/web
};
int run_serve(const ServeOptions& o);

struct HistoryOptions {
  std::string lab;   // "" = the only running lab, else the only lab with a history
  std::string kind;  // only events of this kind ("validate", "apply", ...)
  int limit = 0;     // the newest N (0 = all)
  bool json = false;
};
int run_history(const HistoryOptions& o);

struct ExerciseOptions {
  std::string action;    // list | start | status | check | hint | reset | solution | stop | results
  std::string exercise;  // start: a name of the course or a file; results: a filter
  std::string lab;       // start: the lab's name (default the topology's); others: which session
  std::string dir;       // the course folder ("" = <data dir>/scenarios/exercises)
  bool json = false;
  bool csv = false;    // results
  bool apply = false;  // solution --apply
  InputOptions inputs;  // start, list (--allow-path; kept in the attempt for later commands)
};
int run_exercise(const ExerciseOptions& o);

// Appends an event to the lab's journal (state/journal.hpp), with `report` saved beside it.
// History is a record, not the command's outcome: a failure to write it is one warning on
// stderr, never an exit code.
void record_event(const std::string& lab, const std::string& kind, const nlohmann::json& fields,
                  const nlohmann::json* report = nullptr);
// The same, the report streamed to its file (state::ReportWriter).
void record_event(const std::string& lab, const std::string& kind, const nlohmann::json& fields,
                  const std::function<void(std::ostream&)>& write_report);

// Prints an error line "twin: <message>" on stderr (control characters escaped: a message may
// quote an input) and returns its exit code.
int fail(const std::string& message, int code);
// fail(), and with `json` (the command's --json) one JSON document on stdout too, so a pipeline
// that reads it gets one even when the command ended before it had a report:
// {"schema_version": 1, "verdict": "error", "exit_code": code, "error": message}.
int fail_json(bool json, const std::string& message, int code);

// The policy of a command whose inputs are `inputs` (core/input_policy.hpp). Errors (kUsage):
// an --allow-path or --input-root that is no folder.
Result<InputPolicy> input_policy(const InputOptions& o, const std::vector<std::string>& inputs);

}  // namespace twin::cli
