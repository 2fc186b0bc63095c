// The docs' command lines name only what twin has: every line of README.md and docs/*.md that
// runs `twin <subcommand> ...` in a shell block (also `build/twin`, `./build/twin`, `sudo twin`,
// a `$ ` prompt in an output block, a CI file's `build/twin` step) names a subcommand of the
// CLI's own definition (twin/cli/app.hpp, the App `twin` parses) and only options of that
// subcommand. The lines are read, never run: no root, no lab.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "twin/cli/app.hpp"

namespace fs = std::filesystem;

namespace {

const fs::path kRepo = fs::path(TWIN_TEST_DATA).parent_path().parent_path();

// One command line as the docs show it.
struct DocLine {
  std::string where;  // file:line
  std::string text;
};

// A word of a shell line, or an operator between commands (`|`, `&&`, `;`, `(`, ...).
struct Word {
  std::string text;
  bool op = false;
};

// Shell-like words: quotes group (and go), a word starting with `#` begins a comment, the
// operators | & ; ( ) < > stand alone. `[`...`]` is the docs' "optional" and `|` inside it an
// alternative, not a pipe: the brackets go and such a `|` is dropped.
std::vector<Word> shell_words(const std::string& line) {
  std::vector<Word> out;
  std::string cur;
  bool in_word = false;
  int brackets = 0;
  auto end_word = [&] {
    if (!in_word) return;
    std::string w;
    for (char c : cur) {
      if (c == '[')
        ++brackets;
      else if (c == ']')
        brackets = std::max(0, brackets - 1);
      else
        w += c;
    }
    if (!w.empty()) out.push_back({w, false});
    cur.clear();
    in_word = false;
  };
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '\'' || c == '"') {
      const size_t close = line.find(c, i + 1);
      const size_t stop = close == std::string::npos ? line.size() : close;
      cur += line.substr(i + 1, stop - i - 1);
      in_word = true;
      i = stop;
    } else if (c == '\\' && i + 1 < line.size()) {
      cur += line[++i];
      in_word = true;
    } else if (c == ' ' || c == '\t') {
      end_word();
    } else if (c == '#' && !in_word) {
      break;
    } else if (std::string("|&;()<>").find(c) != std::string::npos) {
      end_word();
      if (c == '|' && brackets > 0) continue;
      std::string op(1, c);
      while (i + 1 < line.size() && line[i + 1] == c && (c == '|' || c == '&' || c == '>'))
        op += line[++i];
      out.push_back({op, true});
    } else {
      cur += c;
      in_word = true;
    }
  }
  end_word();
  return out;
}

bool is_twin(const std::string& w) {
  return w == "twin" || w == "build/twin" || w == "./build/twin";
}

CLI::App* subcommand_of(CLI::App* app, const std::string& name) {
  auto subs = app->get_subcommands([&](CLI::App* s) { return s->get_name() == name; });
  return subs.empty() ? nullptr : subs.front();
}

std::string subcommand_names(CLI::App* app) {
  std::string out;
  for (CLI::App* s : app->get_subcommands([](CLI::App* s) { return !s->get_name().empty(); }))
    out += (out.empty() ? "" : ", ") + s->get_name();
  return out;
}

std::string option_names(CLI::App* app) {
  std::string out;
  for (CLI::Option* o : app->get_options()) {
    if (o->get_group().empty()) continue;  // hidden (twin serve's --input-root)
    for (const auto& l : o->get_lnames()) out += (out.empty() ? "--" : ", --") + l;
    for (const auto& s : o->get_snames()) out += (out.empty() ? "-" : ", -") + s;
  }
  return out;
}

// What is wrong with one twin command (its words after `twin`), as the CLI defines it; "" when
// nothing is.
std::string check_twin_command(CLI::App& app, const std::vector<std::string>& args) {
  CLI::App* cur = &app;
  std::string path = "twin";
  bool need_subcommand = true;  // twin itself, and `gen`, `exercise`, take one first
  for (const std::string& a : args) {
    if (a == "--") break;  // what follows is the node's command (twin exec NODE -- CMD)
    if (a == "..." || a == "…") continue;
    if (a.size() > 1 && a[0] == '-' && !std::isdigit(static_cast<unsigned char>(a[1]))) {
      const std::string name = a.substr(0, a.find('='));
      const bool is_long = name.rfind("--", 0) == 0;
      const std::string bare = name.substr(is_long ? 2 : 1);
      auto options = cur->get_options([&](const CLI::Option* o) {
        return is_long ? o->check_lname(bare) : (bare.size() == 1 && o->check_sname(bare));
      });
      if (options.empty())
        return "`" + path + "` has no option " + name + " (its options: " + option_names(cur) + ")";
      continue;
    }
    if (need_subcommand) {
      CLI::App* sub = subcommand_of(cur, a);
      if (!sub)
        return "`" + path + "` has no subcommand `" + a +
               "` (its subcommands: " + subcommand_names(cur) + ")";
      cur = sub;
      path += " " + a;
      need_subcommand = !subcommand_names(cur).empty();
    }
    // else a positional or an option's value: not the docs' business here
  }
  if (need_subcommand) return "`" + path + "` needs a subcommand: " + subcommand_names(cur);
  return "";
}

// Every twin command of one shell line: what is wrong with each ("" each right), and how many
// there were.
std::vector<std::string> check_shell_line(CLI::App& app, const std::string& line) {
  std::vector<std::string> problems;
  auto words = shell_words(line);
  size_t i = 0;
  while (i < words.size()) {
    // One command: up to the next operator that ends it.
    std::vector<std::string> cmd;
    for (; i < words.size(); ++i) {
      const Word& w = words[i];
      if (!w.op) {
        cmd.push_back(w.text);
        continue;
      }
      if (w.text == "<" || w.text == ">" || w.text == ">>") {
        if (i + 1 < words.size() && words[i + 1].text == "&") ++i;  // 2>&1
        if (i + 1 < words.size() && !words[i + 1].op) ++i;          // the file (or descriptor)
        continue;
      }
      ++i;
      break;
    }
    size_t k = 0;
    while (k < cmd.size() && (cmd[k].find('=') != std::string::npos && cmd[k][0] != '-'))
      ++k;  // VAR=value
    if (k < cmd.size() && cmd[k] == "sudo") {
      ++k;
      while (k < cmd.size() && cmd[k][0] == '-') ++k;
    }
    if (k < cmd.size() && is_twin(cmd[k]))
      problems.push_back(
          check_twin_command(app, std::vector<std::string>(cmd.begin() + k + 1, cmd.end())));
  }
  return problems;
}

// The lines that run twin in one Markdown file: every line of a sh/bash/shell/console block
// (continuations joined), a `$ ` prompt's line in any other block, a `build/twin` step in a
// yaml block (a CI file).
std::vector<DocLine> command_lines(const fs::path& file) {
  std::vector<DocLine> out;
  std::ifstream in(file);
  std::string line, info;
  bool fenced = false;
  int n = 0;
  std::string pending;
  int pending_at = 0;
  const std::string name = fs::relative(file, kRepo).string();
  while (std::getline(in, line)) {
    ++n;
    const std::string trimmed = line.substr(std::min(line.find_first_not_of(' '), line.size()));
    if (trimmed.rfind("```", 0) == 0) {
      fenced = !fenced;
      info = fenced ? trimmed.substr(3) : "";
      continue;
    }
    if (!fenced) continue;
    const bool shell = info == "sh" || info == "bash" || info == "shell" || info == "console";
    std::string cmd;
    if (trimmed.rfind("$ ", 0) == 0)
      cmd = trimmed.substr(2);
    else if (shell)
      cmd = trimmed;
    else if (info == "yaml" && trimmed.find("build/twin ") != std::string::npos)
      cmd = trimmed.substr(trimmed.find("build/twin "));
    else
      continue;
    if (pending.empty()) pending_at = n;
    if (!cmd.empty() && cmd.back() == '\\') {
      pending += cmd.substr(0, cmd.size() - 1) + " ";
      continue;
    }
    out.push_back({name + ":" + std::to_string(pending_at), pending + cmd});
    pending.clear();
  }
  return out;
}

std::vector<fs::path> doc_files() {
  std::vector<fs::path> files = {kRepo / "README.md"};
  for (const auto& e : fs::directory_iterator(kRepo / "docs"))
    if (e.path().extension() == ".md") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

TEST(DocsCommands, EveryTwinCommandInTheDocsNamesASubcommandAndOptionsTwinHas) {
  twin::cli::Cli cli;  // builds the App only: nothing is parsed, nothing runs
  int commands = 0;
  std::vector<std::string> pages;
  for (const fs::path& f : doc_files()) {
    int here = 0;
    for (const DocLine& l : command_lines(f)) {
      for (const std::string& problem : check_shell_line(cli.app, l.text)) {
        ++here;
        EXPECT_EQ(problem, "") << l.where << ": " << l.text;
      }
    }
    if (here > 0) pages.push_back(f.filename().string());
    commands += here;
  }
  // The extraction itself must keep finding the docs' commands: when this was written, 62 on
  // 7 pages (the README's tour, commands, the gate, scenarios, serve, training, VM nodes).
  EXPECT_GE(commands, 50);
  EXPECT_GE(pages.size(), 5u);
}

// The checker refuses what twin would refuse, and reads the docs' notation as they mean it.
TEST(DocsCommands, TheCheckerFindsWhatIsWrong) {
  twin::cli::Cli cli;
  auto one = [&](const std::string& line) {
    auto p = check_shell_line(cli.app, line);
    return p.size() == 1 ? p[0] : "(" + std::to_string(p.size()) + " twin commands)";
  };
  EXPECT_EQ(one("twin validate --json --junit r.xml --only bgp,mtu"), "");
  EXPECT_EQ(one("sudo build/twin run s.yaml --name gh-1 --evidence e  # a comment --bogus"), "");
  EXPECT_EQ(one("twin exec leaf1 -- vtysh -c 'show bgp summary' --whatever"), "");
  EXPECT_EQ(one("twin exercise results [--csv | --json]"), "");
  EXPECT_EQ(one("twin graph -f svg -o fabric.svg"), "");
  EXPECT_EQ(one("twin gen clos --spines 2 --leaves 4 -o lab.yaml"), "");
  EXPECT_EQ(one("T=$(cat f); ./build/twin apply c.yaml --max-outage=1s > out.json 2>&1"), "");
  EXPECT_EQ(one("twin validate --bogus"),
            "`twin validate` has no option --bogus (its options: --help, -h, --lab, --json, "
            "--verbose, -v, --junit, --only, --artifacts, --no-causes, --converge-timeout, "
            "--max-pairs, --parallel)");
  EXPECT_NE(one("twin validate -x"), "");
  EXPECT_NE(one("twin valdate"), "");
  EXPECT_NE(one("twin gen clos --spine 2"), "");
  EXPECT_NE(one("twin exercise begin x"), "");
  EXPECT_NE(one("twin gen"), "");
  EXPECT_NE(one("cd /tmp && sudo twin apply c.yaml --restart-checks"), "");
  EXPECT_EQ(check_shell_line(cli.app, "tools/test.sh --twin --bogus").size(), 0u);
}
