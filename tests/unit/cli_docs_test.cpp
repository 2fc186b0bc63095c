// The command table (twin/options/table.hpp) is what the CLI, the API's OpenAPI document and
// docs/cli.md say: the CLI11 App has exactly the table's commands and options, the API's job
// bodies describe exactly the options the table gives the API, and the checked-in docs/cli.md
// is the page the table generates.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

#include "twin/cli/app.hpp"
#include "twin/options/table.hpp"
#include "twin/serve/api.hpp"

namespace fs = std::filesystem;
namespace options = twin::options;

namespace {

const fs::path kRepo = fs::path(TWIN_TEST_DATA).parent_path().parent_path();

CLI::App* find(CLI::App* app, const std::string& path) {
  std::stringstream ss(path);
  std::string word;
  while (ss >> word) {
    auto subs = app->get_subcommands([&](CLI::App* s) { return s->get_name() == word; });
    if (subs.empty()) return nullptr;
    app = subs.front();
  }
  return app;
}

// An option's names as CLI11 keeps them: "--name,--lab" -> {"--name", "--lab"}; a positional's.
std::set<std::string> names_of(const CLI::Option* o) {
  std::set<std::string> out;
  for (const auto& l : o->get_lnames()) out.insert("--" + l);
  for (const auto& s : o->get_snames()) out.insert("-" + s);
  if (out.empty()) out.insert(o->get_name());
  return out;
}
std::set<std::string> names_of(const options::Option& o) {
  std::set<std::string> out;
  std::stringstream ss(o.names.starts_with("!") ? o.names.substr(1) : o.names);
  std::string part;
  while (std::getline(ss, part, ',')) out.insert(part);
  return out;
}

// The API's job operations and the command each runs.
const std::vector<std::pair<std::string, std::string>> kJobs = {
    {"/api/labs", "up"},
    {"/api/labs/{lab}/nodes/{node}/restart", "restart"},
    {"/api/labs/{lab}/validate", "validate"},
    {"/api/labs/{lab}/apply", "apply"},
    {"/api/labs/{lab}/drill", "drill"},
    {"/api/labs/{lab}/traffic", "traffic"},
    {"/api/run", "run"}};
// What a job's body holds besides options: the inputs it sends.
const std::set<std::string> kInputs = {"topology", "files", "change", "configs", "scenario"};

}  // namespace

TEST(CommandTable, TheCliHasExactlyTheTablesCommandsAndOptions) {
  twin::cli::Cli cli;  // builds the App only: a table option bound to nothing would throw here
  size_t commands = 0;
  for (const auto& c : options::commands()) {
    SCOPED_TRACE("twin " + c.path);
    CLI::App* app = find(&cli.app, c.path);
    ASSERT_NE(app, nullptr);
    ++commands;
    EXPECT_EQ(app->get_description(), c.help);
    std::vector<std::set<std::string>> want, have;
    for (const auto& o : c.options) want.push_back(names_of(o));
    for (const CLI::Option* o : app->get_options())
      if (o->get_name() != "--help" && !o->check_lname("help")) have.push_back(names_of(o));
    EXPECT_EQ(have, want);
    for (const auto& o : c.options) {
      const CLI::Option* opt = app->get_option_no_throw(*names_of(o).begin());
      ASSERT_NE(opt, nullptr) << o.names;
      EXPECT_EQ(opt->get_required(), o.required) << o.names;
      EXPECT_EQ(opt->get_group().empty(), o.hidden) << o.names;
      if (o.show_default) {
        EXPECT_FALSE(opt->get_default_str().empty()) << o.names;
      }
    }
  }
  // And no subcommand the table lacks.
  std::function<size_t(CLI::App*)> count = [&](CLI::App* a) {
    size_t n = 0;
    for (CLI::App* s : a->get_subcommands([](CLI::App*) { return true; })) n += 1 + count(s);
    return n;
  };
  EXPECT_EQ(count(&cli.app), commands);
}

// The shared options are declared once (table.cpp): each command's --converge-timeout keeps
// the default it always had.
TEST(CommandTable, ConvergeTimeoutKeepsEachCommandsDefault) {
  for (const auto& [cmd, def] : std::vector<std::pair<std::string, std::string>>{{"up", "60"},
                                                                                 {"restart", "60"},
                                                                                 {"validate", "30"},
                                                                                 {"apply", "10"},
                                                                                 {"run", "10"},
                                                                                 {"drill", "30"}}) {
    const options::Option* o = options::find_option(options::command(cmd), "--converge-timeout");
    ASSERT_NE(o, nullptr) << cmd;
    EXPECT_EQ(o->default_value, def) << cmd;
  }
}

TEST(CommandTable, TheOpenApiDocumentDescribesExactlyTheOptionsTheApiTakes) {
  const nlohmann::json doc = twin::serve::Api::openapi();
  std::set<std::string> with_api;
  for (const auto& c : options::commands())
    for (const auto& o : c.options)
      if (!o.api_field.empty()) with_api.insert(c.path);
  std::set<std::string> described;
  for (const auto& [path, cmd] : kJobs) {
    SCOPED_TRACE(path);
    described.insert(cmd);
    const auto& props = doc.at("paths")
                            .at(path)
                            .at("post")
                            .at("requestBody")
                            .at("content")
                            .at("application/json")
                            .at("schema")
                            .at("properties");
    std::set<std::string> fields;
    for (const options::Option* o : options::api_options(cmd)) {
      fields.insert(o->api_field);
      ASSERT_TRUE(props.contains(o->api_field)) << o->api_field;
      const std::string type = props.at(o->api_field).at("type");
      const bool flag = o->type == options::Type::kFlag;
      const bool number = o->type == options::Type::kNumber;
      const bool integer = o->type == options::Type::kInteger;
      EXPECT_EQ(type, flag      ? "boolean"
                      : number  ? "number"
                      : integer ? "integer"
                                : "string")
          << o->api_field;
    }
    for (const auto& [name, schema] : props.items())
      EXPECT_TRUE(fields.count(name) || kInputs.count(name))
          << name << " is described but is no option of twin " << cmd << " the API takes";
  }
  EXPECT_EQ(described, with_api) << "a command with API options whose job no test names";
}

TEST(CommandTable, DocsCliMdIsTheGeneratedPage) {
  std::ifstream in(kRepo / "docs" / "cli.md");
  std::stringstream checked_in;
  checked_in << in.rdbuf();
  EXPECT_TRUE(checked_in.str() == options::markdown())
      << "docs/cli.md differs from what the command table (twin/options/table.cpp) generates; "
         "regenerate it: cmake --build build --target twin_cli_docs && build/twin_cli_docs > "
         "docs/cli.md";
}

// A misspelt command word is named with the nearest command, where CLI11 alone says "A
// subcommand is required"; words that name commands, positionals and options are left alone.
TEST(CommandLine, AnUnknownCommandIsNamedWithTheNearestOne) {
  twin::cli::Cli cli;
  using twin::cli::unknown_subcommand;
  EXPECT_EQ(unknown_subcommand(cli.app, {"valdate", "--lab", "x"}),
            "twin: unknown command 'valdate'; did you mean 'validate'?");
  EXPECT_EQ(unknown_subcommand(cli.app, {"exercise", "strt"}),
            "twin exercise: unknown command 'strt'; did you mean 'start'?");
  const std::string far = unknown_subcommand(cli.app, {"frobnicate"});
  EXPECT_THAT(far, ::testing::StartsWith("twin: unknown command 'frobnicate'; the commands are: "
                                         "plan, up, down"));
  EXPECT_EQ(unknown_subcommand(cli.app, {"validate", "--lab", "x"}), "");
  EXPECT_EQ(unknown_subcommand(cli.app, {"exercise", "start", "01-x"}), "");
  EXPECT_EQ(unknown_subcommand(cli.app, {"--version"}), "");
  EXPECT_EQ(unknown_subcommand(cli.app, {}), "");  // CLI11's own "A subcommand is required"
}
