#pragma once
// The command line as CLI11 sees it: every subcommand with its options, bound to the options
// structs of commands.hpp. Building it runs nothing and touches nothing; parsing runs the chosen
// command's callback, which sets `code`. main.cpp parses it; a unit test walks it, so the docs'
// command blocks name only subcommands and options that exist (tests/unit/docs_test.cpp).
// CLI11 is included only here (it costs seconds per translation unit): by main.cpp, app.cpp and
// that test.
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "twin/cli/commands.hpp"

namespace twin::cli {

class Cli {
 public:
  Cli();
  // The callbacks hold `this`: a Cli stays where it was built.
  Cli(const Cli&) = delete;
  Cli& operator=(const Cli&) = delete;

  CLI::App app;
  int code = 0;  // the command's exit code, once app.parse ran its callback

 private:
  PlanOptions plan;
  UpOptions up;
  DownOptions down;
  StatusOptions status;
  ImagesOptions images;
  RestartOptions restart;
  bool list_json = false;
  ExecOptions exec;
  ExecOptions shell;
  ConsoleOptions console;
  GraphOptions graph;
  InventoryOptions inventory;
  EventsOptions events;
  ServeOptions serve;
  HistoryOptions history;
  ValidateOptions val;
  TrafficOptions traffic;
  ApplyOptions apply;
  RunOptions run;
  DrillOptions drill;
  GenClosOptions gen;
  GenRailOptions rail;
  ConvertOptions conv;
  ExerciseOptions exo;
};

// What CLI11 says only as "A subcommand is required" when a command word is misspelt: the
// first word of `args` (argv without the program) that names no subcommand where one is
// required, as one line with the nearest command ("twin: unknown command 'valdate'; did you
// mean 'validate'?"); "" when every word up to the first option names a subcommand. Runs nothing.
std::string unknown_subcommand(CLI::App& app, const std::vector<std::string>& args);

}  // namespace twin::cli
