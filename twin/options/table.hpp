#pragma once
// The command table: every subcommand of `twin` and each of its options declared once — name,
// type, default, help, bounds, and the field of twin serve's API that takes it. Pure data, no
// CLI11: cli/app.cpp binds each entry to its options struct (the table's default is the one the
// command runs with), serve's API reads a request's fields through the entries it names and
// turns them into the job's command line, its OpenAPI document describes those fields from the
// same entries, and `markdown()` is docs/cli.md (tools/cli_docs.cpp writes it; a unit test
// fails when the checked-in page differs).
//
// Options several commands share (`--lab`/`--name`, `--json`, `--junit`, `--converge-timeout`,
// the gate's and the probe stream's flags) are made by one function each in table.cpp, with
// what differs per command (a default, a help text, bounds) passed as data.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace twin::options {

enum class Type {
  kFlag,     // bool, set by giving it
  kNoFlag,   // bool, true by default, cleared by giving it (CLI11's "!--no-x")
  kString,   // one word
  kStrings,  // a list (repeatable, or the rest of the line for a positional)
  kNumber,   // double
  kInteger,  // int
};

// A number option's bounds, checked on its text before it is converted (core/duration.hpp,
// number_problem), shown in --help as "lo..hi". `cli11` instead checks with CLI11's own
// CLI::Range and shows its "[lo - hi]" (restart's --converge-timeout, as it always did).
struct Range {
  double lo = 0, hi = 0;
  const char* unit = "";
  bool integer = false;
  bool cli11 = false;
};

struct Option {
  std::string names;  // CLI11's spelling: "--name,--lab", "-o,--output", "lab" (positional)
  Type type = Type::kString;
  std::string help;
  std::string default_value;  // "" = none (false, empty, 0); else the command's default, as text
  bool show_default = false;  // shown in --help ("[60]")
  std::optional<Range> range;
  bool required = false;
  std::string type_name;  // --help's placeholder ("DIR"); "" = CLI11's own
  bool hidden = false;    // not in --help or the docs (twin serve's jobs use it)
  bool single = false;    // a list that takes one value per occurrence (--allow-path DIR)
  std::string excludes;   // an option of the same command it may not be given with
  // twin serve: the request body's field that gives this option to the job ("" = the API does
  // not take it), and the bounds the API allows when narrower than the CLI's.
  std::string api_field;
  std::optional<Range> api_range;

  // The long name ("--converge-timeout"), or the positional's name.
  std::string long_name() const;
  bool positional() const { return !names.starts_with("-") && !names.starts_with("!"); }
};

struct Command {
  std::string path;  // "validate", "gen clos", "exercise start"
  std::string help;
  std::vector<Option> options;   // in --help order
  bool has_subcommands = false;  // "gen", "exercise": a group, not a command
};

// Every command, in `twin --help` order (a group before its subcommands).
const std::vector<Command>& commands();
// The command at `path`; throws std::out_of_range naming it when there is none.
const Command& command(std::string_view path);
// An option of a command by any of its names ("--lab" finds "--name,--lab"); nullptr if none.
const Option* find_option(const Command& c, std::string_view name);

// The API: the options a job of `command` takes from a request body, in the order their
// arguments follow the command's own (the entries with an api_field, in table order, unless
// the API lists them otherwise: see api_options in table.cpp).
std::vector<const Option*> api_options(std::string_view command);

// docs/cli.md: every command, its options with type, default and help. Deterministic.
std::string markdown();

}  // namespace twin::options
