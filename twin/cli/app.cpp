// The command line: every subcommand and option (app.hpp), bound from the command table
// (twin/options/table.hpp), which declares each option once.
#include "twin/cli/app.hpp"

#include <cstdio>
#include <stdexcept>
#include <type_traits>
#include <variant>

#include "twin/core/diagnostics.hpp"
#include "twin/core/duration.hpp"
#include "twin/core/util.hpp"
#include "twin/options/table.hpp"
#include "validators/registry.hpp"

namespace twin::cli {
namespace {
// A number option's range, checked on its text before CLI11 converts it (core/duration.hpp,
// number_problem): `--timeout 1e308` is refused with readable bounds instead of overflowing a
// duration.
CLI::Validator range(const options::Range& t) {
  if (t.cli11) return CLI::Range(t.lo, t.hi);
  twin::NumberRange r{t.lo, t.hi, t.integer, t.unit};
  char desc[64];
  std::snprintf(desc, sizeof desc, "%.10g..%.10g", t.lo, t.hi);
  return CLI::Validator([r](std::string& s) { return twin::number_problem(s, r); }, desc);
}

// Where an option's value goes: a member of the command's options struct.
using Target = std::variant<bool*, std::string*, std::vector<std::string>*, double*, int*>;
struct Bind {
  const char* name;  // any of the option's names in the table
  Target to;
};

// The table's default written into the struct, so the command runs with it and --help shows it.
void set_default(const options::Option& o, const Target& to) {
  if (o.type == options::Type::kNoFlag) *std::get<bool*>(to) = true;
  if (o.default_value.empty()) return;
  std::visit(
      [&](auto* p) {
        using T = std::remove_pointer_t<decltype(p)>;
        if constexpr (std::is_same_v<T, double>)
          *p = std::stod(o.default_value);
        else if constexpr (std::is_same_v<T, int>)
          *p = std::stoi(o.default_value);
        else if constexpr (std::is_same_v<T, std::string>)
          *p = o.default_value;
        else
          throw std::logic_error("option " + o.names + ": a default of a type it has not");
      },
      to);
}

// Adds the command at `path` (its parent group made first) with every option of its table
// entry, in the table's order, each bound to its target. An option of the table without a
// target, or a target the table does not name, is a programming error: thrown (a unit test
// builds the App).
CLI::App* add_command(CLI::App& root, const std::string& path, const std::vector<Bind>& binds) {
  const options::Command& c = options::command(path);
  CLI::App* parent = &root;
  std::string name = path;
  if (auto sp = path.rfind(' '); sp != std::string::npos) {
    parent = root.get_subcommand(path.substr(0, sp));
    name = path.substr(sp + 1);
  }
  CLI::App* cmd = parent->add_subcommand(name, c.help);
  if (c.has_subcommands) cmd->require_subcommand(1);
  for (const auto& b : binds)
    if (!options::find_option(c, b.name))
      throw std::logic_error("twin " + path + ": " + b.name + " is not in the command table");
  for (const auto& o : c.options) {
    const Bind* b = nullptr;
    for (const auto& x : binds)
      if (options::find_option(c, x.name) == &o) b = &x;
    if (!b) throw std::logic_error("twin " + path + ": " + o.names + " is bound to nothing");
    set_default(o, b->to);
    CLI::Option* opt = nullptr;
    if (o.type == options::Type::kFlag || o.type == options::Type::kNoFlag) {
      opt = cmd->add_flag(o.names, *std::get<bool*>(b->to), o.help);
    } else {
      opt = std::visit(
          [&](auto* p) -> CLI::Option* {
            if constexpr (std::is_same_v<decltype(p), bool*>)
              throw std::logic_error("twin " + path + ": " + o.names +
                                     " is a value, bound to a bool");
            else
              return cmd->add_option(o.names, *p, o.help);
          },
          b->to);
      if (o.show_default) opt->capture_default_str();
      if (o.range) opt->check(range(*o.range));
      if (o.required) opt->required();
      if (!o.type_name.empty()) opt->type_name(o.type_name);
      if (o.single) opt->allow_extra_args(false);
    }
    if (o.hidden) opt->group("");
    if (!o.excludes.empty()) opt->excludes(cmd->get_option(o.excludes));
  }
  return cmd;
}

// --allow-path and the hidden --input-root (docs/commands.md, "Which files inputs may name").
std::vector<Bind> inputs(InputOptions& in) {
  return {{"--allow-path", &in.allow_paths}, {"--input-root", &in.input_root}};
}
std::vector<Bind> operator+(std::vector<Bind> a, const std::vector<Bind>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}
// The probe stream's flags (apply, run, drill).
template <typename O>
std::vector<Bind> stream(O& a) {
  return {{"--max-outage", &a.max_outage},
          {"--probe-interval", &a.probe_interval},
          {"--probe-flows", &a.probe_flows},
          {"--no-probe-stream", &a.no_probe_stream}};
}
// The gate's flags (apply, run).
std::vector<Bind> gate(ApplyOptions& a) {
  return std::vector<Bind>{{"--json", &a.json},
                           {"--verbose", &a.verbose},
                           {"--junit", &a.junit},
                           {"--evidence", &a.evidence},
                           {"--no-rollback", &a.no_rollback},
                           {"--revert", &a.revert},
                           {"--per-step", &a.per_step},
                           {"--traffic", &a.traffic},
                           {"--allow-dirty-baseline", &a.allow_dirty_baseline},
                           {"--converge-timeout", &a.converge_timeout_s}} +
         stream(a) + inputs(a.inputs);
}
}  // namespace

Cli::Cli()
    : app{"twin — digital twin of a data-center network: FRR nodes in network namespaces, "
          "validated end to end"} {
  app.set_version_flag("--version", std::string("twin ") + TWIN_VERSION);
  app.require_subcommand(1);

  add_command(app, "plan",
              std::vector<Bind>{{"file", &plan.file},
                                {"--lab", &plan.name},
                                {"--strict-images", &plan.strict_images},
                                {"--json", &plan.json}} +
                  inputs(plan.inputs))
      ->callback([&] { code = twin::cli::run_plan(plan); });

  auto* u = add_command(app, "up",
                        std::vector<Bind>{{"file", &up.file},
                                          {"--lab", &up.name},
                                          {"--keep-on-failure", &up.keep_on_failure},
                                          {"--no-wait", &up.no_wait},
                                          {"--timeout", &up.timeout_s},
                                          {"--converge-timeout", &up.converge_timeout_s},
                                          {"--parallel", &up.parallel},
                                          {"--libvirt-uri", &up.libvirt_uri},
                                          {"--strict-images", &up.strict_images},
                                          {"--json", &up.json}} +
                            inputs(up.inputs));
  u->callback([this, u] {
    up.timeout_explicit = u->get_option("--timeout")->count() > 0;
    code = twin::cli::run_up(up);
  });

  add_command(
      app, "down",
      {{"lab", &down.lab}, {"--lab", &down.lab}, {"--all", &down.all}, {"--json", &down.json}})
      ->callback([&] { code = twin::cli::run_down(down); });

  add_command(app, "status",
              {{"lab", &status.lab}, {"--lab", &status.lab}, {"--json", &status.json}})
      ->callback([&] { code = twin::cli::run_status(status); });

  add_command(app, "images", {{"--json", &images.json}})->callback([&] {
    code = twin::cli::run_images(images);
  });

  add_command(app, "restart",
              {{"node", &restart.node},
               {"--lab", &restart.lab},
               {"--daemon", &restart.daemon},
               {"--no-wait", &restart.no_wait},
               {"--converge-timeout", &restart.converge_timeout_s},
               {"--json", &restart.json}})
      ->callback([&] { code = twin::cli::run_restart(restart); });

  add_command(app, "list", {{"--json", &list_json}})->callback([&] {
    code = twin::cli::run_list(list_json);
  });

  add_command(app, "exec", {{"--lab", &exec.lab}, {"node", &exec.node}, {"command", &exec.command}})
      ->callback([&] { code = twin::cli::run_exec(exec); });

  add_command(app, "shell", {{"--lab", &shell.lab}, {"node", &shell.node}})->callback([&] {
    code = twin::cli::run_exec(shell);
  });

  add_command(app, "console",
              {{"--lab", &console.lab},
               {"node", &console.node},
               {"--log", &console.log},
               {"--quiet", &console.quiet_s}})
      ->callback([&] { code = twin::cli::run_console(console); });

  add_command(app, "graph",
              std::vector<Bind>{{"target", &graph.target},
                                {"--lab", &graph.target},
                                {"--format", &graph.format},
                                {"--output", &graph.output},
                                {"--no-live", &graph.no_live}} +
                  inputs(graph.inputs))
      ->callback([&] { code = twin::cli::run_graph(graph); });

  add_command(app, "inventory",
              {{"lab", &inventory.lab},
               {"--lab", &inventory.lab},
               {"--format", &inventory.format},
               {"--output", &inventory.output}})
      ->callback([&] { code = twin::cli::run_inventory(inventory); });

  add_command(app, "events",
              {{"lab", &events.lab},
               {"--lab", &events.lab},
               {"--json", &events.json},
               {"--history", &events.history},
               {"--interval", &events.interval_s},
               {"--count", &events.count}})
      ->callback([&] { code = twin::cli::run_events(events); });

  add_command(app, "serve",
              {{"--listen", &serve.listen},
               {"--token-file", &serve.token_file},
               {"--no-token", &serve.no_token},
               {"--web-dir", &serve.web_dir}})
      ->callback([&] { code = twin::cli::run_serve(serve); });

  add_command(app, "history",
              {{"lab", &history.lab},
               {"--lab", &history.lab},
               {"--kind", &history.kind},
               {"--limit", &history.limit},
               {"--json", &history.json}})
      ->callback([&] { code = twin::cli::run_history(history); });

  auto* v = add_command(app, "validate",
                        {{"lab", &val.lab},
                         {"--lab", &val.lab},
                         {"--json", &val.json},
                         {"--verbose", &val.verbose},
                         {"--junit", &val.junit},
                         {"--only", &val.only},
                         {"--artifacts", &val.artifacts},
                         {"--no-causes", &val.causes},
                         {"--converge-timeout", &val.converge_timeout_s},
                         {"--max-pairs", &val.max_pairs},
                         {"--parallel", &val.parallel}});
  // The families as the registry lists them (the table cannot know them: it sits below).
  v->get_option("--only")->description(v->get_option("--only")->get_description() + ": " +
                                       twin::join_names(twin::validators::family_names()));
  v->callback([&] { code = twin::cli::run_validate(val); });

  add_command(app, "traffic",
              {{"lab", &traffic.lab},
               {"--lab", &traffic.lab},
               {"--pattern", &traffic.pattern},
               {"--duration", &traffic.duration},
               {"--flows-per-pair", &traffic.flows_per_pair},
               {"--protocol", &traffic.protocol},
               {"--rate", &traffic.rate},
               {"--to", &traffic.to},
               {"--max-pairs", &traffic.max_pairs},
               {"--json", &traffic.json},
               {"--verbose", &traffic.verbose}})
      ->callback([&] { code = twin::cli::run_traffic(traffic); });

  add_command(app, "apply",
              std::vector<Bind>{{"change", &apply.change},
                                {"--lab", &apply.lab},
                                {"--configs", &apply.configs},
                                {"--run", &apply.run_command},
                                {"--run-timeout", &apply.run_timeout},
                                {"--record", &apply.record},
                                {"--dry-run", &apply.dry_run},
                                {"--restart-check", &apply.restart_check}} +
                  gate(apply))
      ->callback([&] { code = twin::cli::run_apply(apply); });

  add_command(app, "run",
              std::vector<Bind>{{"scenario", &run.scenario},
                                {"--lab", &run.name},
                                {"--keep", &run.keep},
                                {"--no-restart-check", &run.apply.no_restart_check}} +
                  gate(run.apply))
      ->callback([&] { code = twin::cli::run_scenario(run); });

  auto* dr = add_command(app, "drill",
                         std::vector<Bind>{{"lab", &drill.lab},
                                           {"--lab", &drill.lab},
                                           {"--links", &drill.links},
                                           {"--nodes", &drill.nodes},
                                           {"--max-convergence", &drill.max_convergence},
                                           {"--json", &drill.json},
                                           {"--verbose", &drill.verbose},
                                           {"--junit", &drill.junit},
                                           {"--converge-timeout", &drill.converge_timeout_s}} +
                             stream(drill));
  dr->callback([this, dr] {
    // Given but empty is a mistake (an unset shell variable), not "the default".
    drill.links_given = dr->count("--links") > 0;
    drill.nodes_given = dr->count("--nodes") > 0;
    code = twin::cli::run_drill(drill);
  });

  add_command(app, "gen", {});
  add_command(app, "gen clos",
              {{"--spines", &gen.spines},
               {"--leaves", &gen.leaves},
               {"--servers-per-leaf", &gen.servers_per_leaf},
               {"--mtu", &gen.mtu},
               {"--super-spines", &gen.super_spines},
               {"--pods", &gen.pods},
               {"--tenants", &gen.tenants},
               {"--fabric-rate", &gen.fabric_rate},
               {"--server-rate", &gen.server_rate},
               {"--name", &gen.name},
               {"--output", &gen.output}})
      ->callback([&] { code = twin::cli::run_gen_clos(gen); });
  add_command(app, "gen rail",
              {{"--servers", &rail.servers},
               {"--rails", &rail.rails},
               {"--spines", &rail.spines},
               {"--servers-per-leaf", &rail.servers_per_leaf},
               {"--mtu", &rail.mtu},
               {"--fabric-rate", &rail.fabric_rate},
               {"--server-rate", &rail.server_rate},
               {"--name", &rail.name},
               {"--output", &rail.output}})
      ->callback([&] { code = twin::cli::run_gen_rail(rail); });

  add_command(app, "convert",
              std::vector<Bind>{{"file", &conv.file},
                                {"--output", &conv.output},
                                {"--force", &conv.force},
                                {"--name", &conv.name}} +
                  inputs(conv.inputs))
      ->callback([&] { code = twin::cli::run_convert(conv); });

  add_command(app, "exercise", {});
  auto exercise = [&](const char* name, std::vector<Bind> binds) {
    binds.push_back({"--json", &exo.json});
    add_command(app, std::string("exercise ") + name, binds)->callback([&, name] {
      exo.action = name;
      code = twin::cli::run_exercise(exo);
    });
  };
  exercise("list", std::vector<Bind>{{"--dir", &exo.dir}} + inputs(exo.inputs));
  exercise(
      "start",
      std::vector<Bind>{{"exercise", &exo.exercise}, {"--lab", &exo.lab}, {"--dir", &exo.dir}} +
          inputs(exo.inputs));
  for (const char* name : {"status", "check", "hint", "reset", "stop"})
    exercise(name, {{"--lab", &exo.lab}});
  exercise("solution", {{"--lab", &exo.lab}, {"--apply", &exo.apply}});
  exercise("results", {{"--lab", &exo.lab}, {"--exercise", &exo.exercise}, {"--csv", &exo.csv}});
}

std::string unknown_subcommand(CLI::App& app, const std::vector<std::string>& args) {
  CLI::App* at = &app;
  std::string path = "twin";
  for (const auto& word : args) {
    if (word.empty() || word[0] == '-') return "";  // an option: CLI11 judges it
    std::vector<std::string> names;
    CLI::App* next = nullptr;
    for (CLI::App* sub : at->get_subcommands([](CLI::App*) { return true; })) {
      if (sub->get_name().empty()) continue;  // an option group, not a command
      names.push_back(sub->get_name());
      if (sub->check_name(word)) next = sub;
    }
    if (next) {
      at = next;
      path += " " + word;
      continue;
    }
    if (names.empty() || at->get_require_subcommand_min() == 0) return "";
    return path + ": unknown command '" + printable(word) + "'; " +
           did_you_mean(word, names, "the commands are: " + join_names(names));
  }
  return "";
}

}  // namespace twin::cli
