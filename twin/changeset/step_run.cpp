// The `run` change step (a live orchestrator run over the management network, issue 48): how the
// change-set loader reads it, how the gate applies it — the command, then what it changed on
// every FRR node read back — what a dry run says of it, and what it means for the intended plan
// (nothing: a run is judged by what it does) (steps.hpp).
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "twin/changeset/changeset_keys.hpp"
#include "twin/changeset/changeset_loader.hpp"
#include "twin/changeset/steps.hpp"
#include "twin/core/util.hpp"
#include "twin/drivers/registry.hpp"
#include "twin/drivers/ssh.hpp"

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace twin::replay {

namespace {

// The last `n` bytes of `text`, from a line start where there is one.
std::string tail(const std::string& text, size_t n = 1500) {
  if (text.size() <= n) return trim_end(text);
  std::string t = text.substr(text.size() - n);
  if (auto nl = t.find('\n'); nl != std::string::npos) t = t.substr(nl + 1);
  return "..." + trim_end(t);
}

// A unified diff of two configs (diff(1) of the two texts: GNU diffutils), "" when equal.
std::string unified_diff(proc::ProcessRunner& runner, const std::string& node,
                         const std::string& before, const std::string& after) {
  if (before == after) return "";
  TempDir tmp;
  const std::string a = tmp.path + "/before", b = tmp.path + "/after";
  if (!write_file(a, before) || !write_file(b, after)) return "(no diff: cannot write)\n";
  proc::Command c{{"diff", "-u", "--label", node + " before", "--label", node + " after", a, b},
                  "",
                  10s};
  auto r = runner.run(c);
  if (!r || r->exit_code > 1) return "(no diff: diff(1) failed)\n";
  return r->out;
}

size_t file_size(const std::string& path) {
  std::error_code ec;
  auto s = fs::file_size(path, ec);
  return ec ? 0 : static_cast<size_t>(s);
}

std::string read_from(const std::string& path, size_t offset) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return "";
  f.seekg(static_cast<std::streamoff>(offset));
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

// One word for /bin/sh, quoted where it needs it (proc::render's quoting).
std::string sh_word(const std::string& s) { return proc::render({s}); }

// A config's lines as FRR reads them back: without `!` separators, `end` and blank lines, which
// differ between a running config (runtime::running_config, banner already dropped) and what
// `write memory` wrote.
std::vector<std::string> config_lines(const std::string& text) {
  std::vector<std::string> v;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    l = trim_end(l);
    const std::string t = trim(l);
    if (t.empty() || t == "!" || t == "end") continue;
    v.push_back(l);
  }
  return v;
}

}  // namespace

std::vector<std::string> refusals_in_session(const std::string& text) {
  // CSI/OSC sequences and carriage returns of a terminal session (vtysh's line editor).
  static const std::regex kControl(R"(\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\r)");
  static const std::regex kPrompt(R"(^[A-Za-z0-9_.-]+(\([a-z0-9-]+\))?[#>] ?(.*)$)");
  std::istringstream in(std::regex_replace(text, kControl, ""));
  std::vector<std::string> out;
  std::string line, sent;
  std::smatch m;
  while (std::getline(in, line)) {
    line = trim_end(line);
    if (std::regex_match(line, m, kPrompt)) {
      sent = trim(std::string(m[2]));
      continue;
    }
    // FRR marks what it refuses with "% " (lib/command.c: "% Unknown command", "% Command
    // incomplete", vtysh's "% Ambiguous command"; daemons' own "% Malformed ..." and the like).
    if (line.rfind("% ", 0) == 0) out.push_back("`" + sent + "`: " + line.substr(2));
  }
  return out;
}

void ChangeSetLoader::parse_body(const Value& v, RunStep& out) {
  if (v.node.IsScalar()) {
    if (auto s = r_.string(v)) out.command = *s;
  } else if (v.node.IsMap()) {
    r_.check_keys(v, keys::kRun);
    if (auto c = child(v, "command")) {
      if (auto s = r_.string(c)) out.command = *s;
    } else {
      r_.error(v.mark(), v.field + ".command", "missing command: the orchestrator's command line",
               "command: ansible-playbook -i $TWIN_INVENTORY site.yml");
    }
    if (auto t = child(v, "timeout"))
      if (auto d = r_.duration(t)) out.timeout = *d;
  } else {
    r_.error(v, "expected a command line, or a mapping of command and timeout",
             "run: ansible-playbook -i $TWIN_INVENTORY site.yml");
    return;
  }
  if (out.command.find_first_not_of(" \t\n") == std::string::npos && v.node.IsScalar())
    r_.error(v, "empty command", "run: ansible-playbook -i $TWIN_INVENTORY site.yml");
  // The running lab's (a topology step cannot change the management network).
  if (!all_plans_.front()->mgmt)
    r_.error(v.mark(), v.field,
             "a run reaches the nodes over the lab's management network, and lab " +
                 all_plans_.front()->lab +
                 " has none",
             "add `mgmt: true` to its topology (docs/management.md), then twin down and twin up");
}

Result<void> apply_step(const RunStep& b, StepRun& run, std::string* detail) {
  const plan::Plan& p = run.current;
  if (!p.mgmt)
    return input_error("lab " + p.lab + " has no management network (`mgmt:`): a run cannot "
                       "reach its nodes");
  std::vector<const plan::Node*> nodes;
  for (const auto& n : p.nodes)
    if (run.env.drivers(n).manages_frr(n)) nodes.push_back(&n);
  // Before: each node's running and saved configs, and where its session log ends.
  std::vector<std::string> running(nodes.size()), saved(nodes.size());
  std::vector<size_t> log_at(nodes.size());
  std::vector<std::string> problems(nodes.size());
  auto read_state = [&](std::vector<std::string>& run_out, std::vector<std::string>& saved_out) {
    parallel_for(nodes.size(), run.opts.parallel, [&](size_t i) {
      const auto& d = run.env.drivers(*nodes[i]);
      auto r = d.running_config(*nodes[i], run.env.runner);
      auto s = d.startup_config(*nodes[i]);
      if (!r || !s)
        problems[i] = nodes[i]->name + ": " + (!r ? r.error().message : s.error().message);
      else {
        run_out[i] = *r;
        saved_out[i] = *s;
      }
    });
    std::string all;
    for (auto& x : problems)
      if (!x.empty()) all += (all.empty() ? "" : "; ") + x;
    for (auto& x : problems) x.clear();
    return all;
  };
  if (auto bad = read_state(running, saved); !bad.empty())
    return harness_error("reading the nodes before the run: " + bad);
  for (size_t i = 0; i < nodes.size(); ++i)
    log_at[i] = file_size(drivers::session_log_path(*nodes[i]));
  run.touched.from_saved = true;

  // The run, in a cgroup of its own under the lab's: a timeout stops everything it started.
  const std::string dir = run.cs.dir.empty() ? fs::current_path().string() : run.cs.dir;
  const std::string& kd = p.mgmt->key_dir;
  const std::string script =
      "cd " + sh_word(dir) + " || exit 127\nexport TWIN_LAB=" + sh_word(p.lab) +
      " TWIN_INVENTORY=" + sh_word(kd + "/inventory.yml") +
      " TWIN_SSH_CONFIG=" + sh_word(kd + "/ssh_config") + "\nexec 2>&1\n" + b.command + "\n";
  proc::Command c{{"/bin/sh", "-c", script}, "", b.timeout};
  std::string cg;
  if (const std::string lab_cg = state::cgroup_of(run.st); !lab_cg.empty()) {
    cg = lab_cg + "/run-" + std::to_string(::getpid());
    std::error_code ec;
    fs::create_directory(cg, ec);
    if (!ec) c.cgroup = cg;
  }
  auto stop_cgroup = [&] {
    if (cg.empty()) return;
    std::ofstream(cg + "/cgroup.kill") << "1\n";
    for (int i = 0; i < 100 && ::rmdir(cg.c_str()) != 0 && errno == EBUSY; ++i)
      std::this_thread::sleep_for(20ms);
  };
  const auto t0 = run.env.time.now();
  auto out = run.env.runner.run(c);
  stop_cgroup();
  const double secs =
      std::chrono::duration<double>(run.env.time.now() - t0).count();
  std::ostringstream d;
  char took[32];
  std::snprintf(took, sizeof took, "%.1f s", secs);

  // After (also after a failed run: what it changed half-way is rolled back exactly).
  std::vector<std::string> running_after(nodes.size()), saved_after(nodes.size());
  const std::string read_problem = read_state(running_after, saved_after);
  std::vector<std::string> refused;
  std::string diffs;
  std::vector<std::string> changed, saved_changed;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const std::string& name = nodes[i]->name;
    if (read_problem.empty()) {
      if (running_after[i] != running[i]) {
        run.touched.frr_nodes.insert(name);
        changed.push_back(name);
        diffs += unified_diff(run.env.runner, name, running[i], running_after[i]);
        if (config_lines(running_after[i]) != config_lines(saved_after[i]))
          run.touched.unsaved.insert(name);
      }
      if (saved_after[i] != saved[i]) {
        run.touched.saved_before.emplace(name, saved[i]);
        saved_changed.push_back(name);
      }
    }
    for (const auto& r :
         refusals_in_session(read_from(drivers::session_log_path(*nodes[i]), log_at[i])))
      refused.push_back(name + ": " + r);
  }
  d << "ran `" << b.command << "` in " << took;
  if (out) d << ", exit " << out->exit_code;
  d << "; running config changed on " << (changed.empty() ? "no node" : join_names(changed))
    << "; saved on " << (saved_changed.empty() ? "no node" : join_names(saved_changed));
  const std::vector<std::string> unsaved(run.touched.unsaved.begin(), run.touched.unsaved.end());
  if (!unsaved.empty()) d << "; not saved (no `write memory`) on " << join_names(unsaved);
  *detail = d.str();
  if (run.notes)
    for (const auto& n : unsaved)
      run.notes->push_back({"warning", n, "",
                            "the run changed " + n + "'s running config but did not save it "
                            "(no `write memory`): a reboot loses the change"});
  if (run.text) {
    std::string t = diffs;
    if (out && !out->out.empty()) t += (t.empty() ? "" : "\n") + ("output (its end):\n" + tail(out->out));
    *run.text = trim_end(t);
  }
  if (!out) {
    const bool timed_out = out.error().message.find("timed out") != std::string::npos ||
                           out.error().message.find("timeout") != std::string::npos;
    if (out.error().kind == ErrorKind::kInterrupted) return out.error();
    return input_error(
        (timed_out ? "the run did not finish within " +
                         std::to_string(b.timeout.count() / 1000) + " s (--run-timeout): stopped"
                   : "the run could not start: " + out.error().message) +
        "; " + d.str());
  }
  if (!read_problem.empty())
    return harness_error("reading the nodes after the run: " + read_problem + "; " + d.str());
  if (!refused.empty())
    return input_error("FRR refused " + std::to_string(refused.size()) +
                       " line(s) the run sent, whatever its exit status (" +
                       std::to_string(out->exit_code) + "): " + join_names(refused) + "; " +
                       d.str());
  if (out->exit_code == 127)
    return input_error("the run's command was not found (exit 127): " + d.str());
  if (out->exit_code != 0)
    return input_error("the run exited " + std::to_string(out->exit_code) + ": " + d.str());
  return {};
}

Result<void> describe_step(const RunStep& b, const state::State& st, plan::Plan&,
                           proc::ProcessRunner&, std::ostream& out) {
  out << "   run `" << b.command << "` (at most " << b.timeout.count() / 1000
      << " s) with TWIN_INVENTORY=" << (st.plan.mgmt ? st.plan.mgmt->key_dir : "?")
      << "/inventory.yml, then read back every FRR node's running and saved config\n";
  return {};
}

void intend_step(const RunStep&, const std::string&, plan::Plan&) {}

}  // namespace twin::replay
