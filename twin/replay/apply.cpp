#include "twin/replay/apply.hpp"

#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "twin/core/util.hpp"
#include "twin/engine/lab.hpp"
#include "twin/engine/mutate.hpp"
#include "twin/replay/intent.hpp"
#include "twin/runtime/agent.hpp"
#include "twin/runtime/frr.hpp"
#include "twin/validate/runner.hpp"
#include "validators/registry.hpp"

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace twin::replay {

int ApplyResult::exit_code() const {
  if (stage == "baseline-failed") return 4;
  // An approved what-if run (--revert) whose restore failed leaves a lab that is not what the
  // caller thinks: the harness failed.
  if (verdict.decision == Decision::kApprove && rolled_back && !rollback_ok) return 3;
  return replay::exit_code(verdict);
}

std::string sha256_hex(const std::string& data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(data.data(), data.size(), md, &len, EVP_sha256(), nullptr) != 1) return "";
  static const char* hex = "0123456789abcdef";
  std::string s;
  for (unsigned i = 0; i < len; ++i) {
    s += hex[md[i] >> 4];
    s += hex[md[i] & 15];
  }
  return s;
}

std::string sha256_file(const std::string& path) {
  auto text = read_file(path);
  return text ? sha256_hex(*text) : "";
}

namespace {

// --per-step validates step by step up to this many steps, and bisects longer changes.
constexpr size_t kBisectAbove = 6;

// Validation window once settle() found the network quiet.
constexpr std::chrono::milliseconds kQuietWindow{3000};

const std::regex kVtyshLine(R"(line (\d+): (.*))");

// A scratch folder removed on scope exit (vtysh -C needs a config dir with vtysh.conf).
struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/twin-apply-XXXXXX";
    if (::mkdtemp(tmpl)) path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path.empty()) fs::remove_all(path, ec);
  }
};

// vtysh's complaints ("line 4: % Unknown command[25]:  bogus") as (line, message).
std::vector<std::pair<int, std::string>> vtysh_complaints(const std::string& out) {
  std::vector<std::pair<int, std::string>> v;
  std::istringstream in(out);
  std::string line;
  std::smatch m;
  std::string pending;  // a daemon's own "% ..." explanation precedes vtysh's "line N:" note
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, kVtyshLine)) {
      // FRR appends internal return codes ("Unknown command[25]"): not for people.
      static const std::regex kReturnCode(R"(\[\d+\])");
      std::string what = std::regex_replace(std::string(m[2]), kReturnCode, "");
      if (!pending.empty()) what = pending + " (" + what + ")";
      v.emplace_back(std::stoi(m[1]), what);
      pending.clear();
    } else if (line.rfind("%", 0) == 0) {
      pending += (pending.empty() ? "" : " ") + line;
    }
  }
  return v;
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

proc::Command vtysh(const plan::Node& n, std::vector<std::string> args,
                    std::chrono::milliseconds timeout = 30s) {
  std::vector<std::string> argv = {"vtysh", "--vty_socket", n.run_dir, "--config_dir", n.run_dir};
  argv.insert(argv.end(), args.begin(), args.end());
  proc::Command c{argv, "", timeout};
  // vtysh prints its own host's name as `hostname`: give it the node's, as the daemons have.
  c.hostname = n.name;
  return c;
}

Result<std::string> running_config(proc::ProcessRunner& runner, const plan::Node& n) {
  auto r = runner.run(vtysh(n, {"-c", "show running-config"}));
  if (!r) return r.error().with_context("node " + n.name + ": show running-config");
  if (r->exit_code != 0)
    return harness_error("node " + n.name + ": show running-config: " + trim(r->out + r->err));
  // vtysh prefixes the configuration with "Building configuration..." and "Current
  // configuration:", which are not configuration (frr-reload.py would reject them).
  std::string out = r->out;
  if (auto p = out.find("Current configuration:\n"); p != std::string::npos)
    out = out.substr(p + std::strlen("Current configuration:\n"));
  return out;
}

// Applies config lines with `vtysh -f` (contexts as in frr.conf). vtysh applies every line it
// can and reports the others as "line N: ..."; any complaint fails the step.
Result<void> vtysh_apply(proc::ProcessRunner& runner, const plan::Node& n, const std::string& text,
                         int first_line, const std::string& file) {
  TempDir tmp;
  if (tmp.path.empty()) return harness_error("cannot create a temporary folder");
  std::string path = tmp.path + "/lines.conf";
  if (auto w = write_file(path, text); !w) return w.error();
  auto r = runner.run(vtysh(n, {"-f", path}));
  if (!r) return r.error();
  if (r->exit_code == 0) return {};
  std::string msg;
  std::vector<std::string> lines;
  {
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) lines.push_back(l);
  }
  for (const auto& [line, what] : vtysh_complaints(r->out + r->err)) {
    std::string where = first_line > 0 ? file + ":" + std::to_string(first_line + line - 1)
                        : line >= 1 && static_cast<size_t>(line) <= lines.size()
                            ? "'" +
                                  trim(lines[line - 1].substr(
                                      lines[line - 1].find_first_not_of(' ') == std::string::npos
                                          ? 0
                                          : lines[line - 1].find_first_not_of(' '))) +
                                  "'"
                            : "line " + std::to_string(line);
    msg += (msg.empty() ? "" : "; ") + where + ": " + what;
  }
  if (msg.empty())
    msg = "vtysh exit " + std::to_string(r->exit_code) + ": " + trim(r->out + r->err);
  return input_error(n.name + " rejected: " + msg);
}

using runtime::frr_reload;

// A VM's interfaces are the guest's: each line runs as `ip <line>` inside it (twin's agent), and
// an MTU change is mirrored on the host side of the wire (veth end and tap in the node's
// namespace) so frames of the new size pass.
Result<void> guest_ip_batch(proc::ProcessRunner& runner, const plan::Node& n,
                            const std::string& script, const std::string& what) {
  if (n.vm.agent != "twin")
    return usage_error(what + ": node " + n.name + " is a VM whose image (" + n.image +
                       ") runs no twin agent; change its interfaces in the NOS (twin console " +
                       n.name + ")");
  std::string host;
  std::istringstream in(script);
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    auto r = runtime::agent_exec(n.vm.agent_socket, "ip " + line);
    if (!r) return r.error().with_context(what);
    if (r->exit_code != 0)
      return harness_error(what + ": in the guest, ip " + line + ": " + r->output);
    std::istringstream words(line);
    std::vector<std::string> w{std::istream_iterator<std::string>(words), {}};
    // "link set dev IF mtu N"
    if (w.size() == 6 && w[0] == "link" && w[1] == "set" && w[2] == "dev" && w[4] == "mtu")
      for (const auto& i : n.interfaces)
        if (i.name == w[3])
          host += "link set dev " + i.name + " mtu " + w[5] + "\nlink set dev " + i.tap + " mtu " +
                  w[5] + "\n";
  }
  if (host.empty()) return {};
  auto r = runner.run({{"ip", "-n", n.netns, "-batch", "-"}, host, 30s});
  if (!r) return r.error().with_context(what);
  if (r->exit_code != 0) return harness_error(what + ": host side of the VM's links: " + r->err);
  return {};
}

Result<void> ip_batch(proc::ProcessRunner& runner, const plan::Node& n, const std::string& script,
                      const std::string& what) {
  if (plan::is_vm(n)) return guest_ip_batch(runner, n, script, what);
  auto r = runner.run({{"ip", "-n", n.netns, "-batch", "-"}, script, 30s});
  if (!r) return r.error().with_context(what);
  if (r->exit_code != 0) return harness_error(what + ": " + trim(r->err + r->out));
  return {};
}

struct Touched {
  std::set<std::string> frr_nodes;   // FRR configs changed: rolled back with frr-reload.py
  std::set<std::string> interfaces;  // "node:if": MTU and admin state restored
  // Host-node addresses a step added / removed: undone exactly.
  std::vector<std::tuple<std::string, std::string, std::string>> host_added, host_removed;
  bool topology = false;
};

std::vector<std::string> split_tests(const std::vector<std::string>& tests,
                                     std::set<std::string>* exact) {
  std::vector<std::string> families;
  for (const auto& t : tests) {
    auto dot = t.find('.');
    std::string fam = t.substr(0, dot);
    if (std::find(families.begin(), families.end(), fam) == families.end()) families.push_back(fam);
    if (dot != std::string::npos) exact->insert(t);
  }
  return families;
}

class Gate {
 public:
  Gate(const engine::State& st, const ChangeSet& cs, const ApplyOptions& opts,
       proc::ProcessRunner& runner)
      : st_(st), cs_(cs), opts_(opts), runner_(runner) {}

  Result<ApplyResult> run();

 private:
  void say(const std::string& s) {
    if (opts_.progress) opts_.progress(s);
  }
  Phase validate_phase(const std::string& name, const plan::Plan& plan);
  Result<void> snapshot();
  Result<void> apply_step(const Step& s, size_t index, Touched& t, std::string* detail);
  void wait_converged(const plan::Plan& plan, std::chrono::milliseconds timeout,
                      std::string* detail);
  std::string settle(const plan::Plan& plan);
  void bisect(Touched& touched, size_t attempted);
  Error abort_interrupted(const Touched& touched, const std::string& when);
  bool quiet_ = false;
  std::string frr_version_;  // the last settle() ended quiet: validations need only a short window
  Result<void> rollback(const Touched& t, std::string* detail);
  Result<void> record_configs_after(const plan::Plan& plan);

  const engine::State& st_;
  const ChangeSet& cs_;
  const ApplyOptions& opts_;
  proc::ProcessRunner& runner_;
  ApplyResult res_;
  plan::Plan current_;  // the plan the lab runs now (grows with topology steps)
  std::map<std::string, std::string> snapshot_paths_;  // node -> saved running config
  std::string work_dir_;
};

Phase Gate::validate_phase(const std::string& name, const plan::Plan& plan) {
  Phase ph;
  ph.name = name;
  validate::SystemProbe probe(runner_);
  validate::Context ctx{plan, probe, opts_.parallel};
  validate::RunOptions ro;
  // On a quiet network a failure is real: retry briefly (a ping right after a route install),
  // not for the whole convergence window.
  ro.converge_timeout =
      quiet_ ? std::min<std::chrono::milliseconds>(opts_.converge_timeout, kQuietWindow)
             : opts_.converge_timeout;
  auto validators = validators::make_validators({}, nullptr);
  auto t0 = Clock::now();
  ph.report = validate::run_validation(ctx, validators, ro);
  ph.report.started_at = now_rfc3339();
  ph.report.twin_version = TWIN_VERSION;
  if (frr_version_.empty()) frr_version_ = runtime::frr_version(runner_);
  ph.report.frr_version = frr_version_;
  ph.report.kernel_version = kernel_release();
  ph.state = observe(plan, probe, opts_.parallel);
  add_reachability(ph.state, ph.report);
  ph.probes = probe.records();
  int bad = ph.report.count(validate::Status::kFailed) + ph.report.count(validate::Status::kError);
  say(name + ": " + std::to_string(ph.report.count(validate::Status::kPassed)) + " passed, " +
      std::to_string(bad) + " not passing (" + std::to_string(static_cast<int>(ms_since(t0))) +
      " ms)");
  return ph;
}

Result<void> Gate::snapshot() {
  for (const auto& n : current_.nodes) {
    if (n.kind != "frr" || n.daemons.empty()) continue;
    auto cfg = running_config(runner_, n);
    if (!cfg) return cfg.error().with_context("snapshot");
    std::string path = work_dir_ + "/" + n.name + ".before.conf";
    if (auto w = write_file(path, *cfg); !w) return w.error();
    snapshot_paths_[n.name] = path;
    res_.config_before[n.name] = *cfg;
  }
  return {};
}

void Gate::wait_converged(const plan::Plan& plan, std::chrono::milliseconds timeout,
                          std::string* detail) {
  auto t0 = Clock::now();
  for (;;) {
    auto c = engine::count_sessions(plan, opts_.parallel);
    if (c.established >= c.expected) {
      *detail = std::to_string(c.established) + "/" + std::to_string(c.expected) +
                " sessions Established after " + std::to_string(static_cast<int>(ms_since(t0))) +
                " ms";
      return;
    }
    if (ms_since(t0) > static_cast<double>(timeout.count()) || interrupted()) {
      *detail = "not converged after " + std::to_string(static_cast<int>(ms_since(t0))) +
                " ms: " + std::to_string(c.established) + "/" + std::to_string(c.expected) +
                " sessions Established";
      if (!c.down.empty()) *detail += " (" + c.down.front() + ")";
      return;
    }
    std::this_thread::sleep_for(100ms);  // poll interval of the readiness probe
  }
}

// What must stop moving before a validation means anything: which sessions are Established and
// every FIB's BGP routes with their next-hop counts (session states that cycle through Idle,
// Connect and Active while failing count as one "not Established").
std::string fingerprint(const NetState& s) {
  std::string f;
  for (const auto& [k, v] : s.sessions)
    if (v.state == "Established") f += k + ";";
  for (const auto& [node, fib] : s.fib)
    for (const auto& [prefix, hops] : fib)
      f += node + " " + prefix + " " + std::to_string(hops) + ";";
  return f;
}

// Waits until the network is quiet: the fingerprint unchanged for kQuiet, polled every kPoll,
// bounded by the convergence timeout. Right after a change, a validation could otherwise see
// the old state (an update still in flight) and approve what is about to break.
std::string Gate::settle(const plan::Plan& plan) {
  constexpr auto kQuiet = 1000ms;
  constexpr auto kPoll = 200ms;
  validate::SystemProbe probe(runner_);
  quiet_ = false;
  auto t0 = Clock::now();
  auto last_change = t0;
  std::string last = fingerprint(observe(plan, probe, opts_.parallel));
  int changes = 0;
  while (!interrupted()) {
    std::this_thread::sleep_for(kPoll);
    std::string cur = fingerprint(observe(plan, probe, opts_.parallel));
    if (cur != last) {
      last = cur;
      last_change = Clock::now();
      ++changes;
    }
    if (Clock::now() - last_change >= kQuiet) {
      quiet_ = true;
      return "quiet after " + std::to_string(static_cast<int>(ms_since(t0))) + " ms (" +
             std::to_string(changes) + " change" + (changes == 1 ? "" : "s") + " seen)";
    }
    if (ms_since(t0) > static_cast<double>(opts_.converge_timeout.count()))
      return "still changing after " + std::to_string(static_cast<int>(ms_since(t0))) + " ms";
  }
  return "interrupted";
}

Result<void> Gate::apply_step(const Step& s, size_t index, Touched& t, std::string* detail) {
  switch (s.kind) {
    case StepKind::kFrr: {
      for (const auto& name : s.frr.nodes) {
        const plan::Node* n = current_.find(name);
        if (!n) return input_error("node " + name + " is not in the lab");
        t.frr_nodes.insert(name);
        Result<void> r;
        if (!s.frr.replace.empty())
          r = frr_reload(runner_, *n, s.frr.replace, false);
        else if (!s.frr.add.empty())
          r = vtysh_apply(runner_, *n, s.frr.add, s.frr.text_line, cs_.file);
        else
          r = vtysh_apply(runner_, *n, negate_config(s.frr.remove), 0, cs_.file);
        if (!r) return r;
      }
      *detail = "configured " + std::to_string(s.frr.nodes.size()) + " node(s)";
      return {};
    }
    case StepKind::kInterface: {
      for (const auto& ref : s.interface.interfaces) {
        const plan::Node* n = current_.find(ref.node);
        if (!n) return input_error("node " + ref.node + " is not in the lab");
        t.interfaces.insert(ref.str());
        std::string script;
        if (s.interface.mtu)
          script +=
              "link set dev " + ref.interface + " mtu " + std::to_string(*s.interface.mtu) + "\n";
        if (s.interface.up)
          script += "link set dev " + ref.interface + (*s.interface.up ? " up" : " down") + "\n";
        if (n->kind == "frr" &&
            (!s.interface.add_addresses.empty() || !s.interface.remove_addresses.empty())) {
          // zebra owns an FRR node's addresses: configure them there (rolled back with it).
          t.frr_nodes.insert(n->name);
          std::string lines = "interface " + ref.interface + "\n";
          for (const auto& a : s.interface.add_addresses)
            lines += std::string(a.find(':') == std::string::npos ? " ip" : " ipv6") + " address " +
                     a + "\n";
          for (const auto& a : s.interface.remove_addresses)
            lines += std::string(a.find(':') == std::string::npos ? " no ip" : " no ipv6") +
                     " address " + a + "\n";
          lines += "exit\n";
          if (auto r = vtysh_apply(runner_, *n, lines, 0, cs_.file); !r) return r;
        } else {
          for (const auto& a : s.interface.add_addresses) {
            script += "address add " + a + " dev " + ref.interface + "\n";
            t.host_added.emplace_back(n->name, ref.interface, a);
          }
          for (const auto& a : s.interface.remove_addresses) {
            script += "address del " + a + " dev " + ref.interface + "\n";
            t.host_removed.emplace_back(n->name, ref.interface, a);
          }
        }
        if (!script.empty())
          if (auto r = ip_batch(runner_, *n, script, "node " + n->name); !r) return r;
      }
      *detail = std::to_string(s.interface.interfaces.size()) + " interface(s) changed";
      return {};
    }
    case StepKind::kLink: {
      std::vector<InterfaceRef> ends;
      if (s.link.all) {
        for (const auto& l : current_.links) {
          ends.push_back({l.a_node, l.a_interface, {}});
          ends.push_back({l.b_node, l.b_interface, {}});
        }
      } else {
        for (const auto& l : s.link.links) {
          ends.push_back(l.a);
          ends.push_back(l.b);
        }
      }
      std::map<std::string, std::string> scripts;  // node -> ip batch
      for (const auto& e : ends) {
        t.interfaces.insert(e.str());
        auto& sc = scripts[e.node];
        if (s.link.mtu)
          sc += "link set dev " + e.interface + " mtu " + std::to_string(*s.link.mtu) + "\n";
        if (s.link.up) sc += "link set dev " + e.interface + (*s.link.up ? " up" : " down") + "\n";
      }
      for (const auto& [node, script] : scripts) {
        const plan::Node* n = current_.find(node);
        if (!n) return input_error("node " + node + " is not in the lab");
        if (auto r = ip_batch(runner_, *n, script, "node " + node); !r) return r;
      }
      *detail = std::to_string(ends.size() / 2) + " link(s) changed";
      return {};
    }
    case StepKind::kWait: {
      if (s.wait.until == "duration") {
        // The user asked for a fixed pause (e.g. a timer that must expire); honour it.
        auto end = Clock::now() + s.wait.duration;
        while (Clock::now() < end && !interrupted()) std::this_thread::sleep_for(50ms);
        *detail = "waited " + std::to_string(s.wait.duration.count()) + " ms";
        return {};
      }
      wait_converged(intended_plan(st_.plan, cs_, index + 1), s.wait.timeout, detail);
      return {};
    }
    case StepKind::kCheck: {
      std::set<std::string> exact;
      auto families = split_tests(s.check.tests, &exact);
      std::vector<std::string> unknown;
      auto validators = validators::make_validators(families, &unknown);
      if (!unknown.empty()) return input_error("unknown validator " + unknown.front());
      plan::Plan p = intended_plan(st_.plan, cs_, index + 1);
      validate::SystemProbe probe(runner_);
      validate::Context ctx{p, probe, opts_.parallel};
      validate::RunOptions ro;
      ro.converge_timeout = s.check.timeout;
      auto selected = [&](const validate::TestResult& r) {
        return exact.empty() || exact.count(r.validator + "." + std::to_string(r.test)) ||
               std::find(s.check.tests.begin(), s.check.tests.end(), r.validator) !=
                   s.check.tests.end();
      };
      bool expect_fail = s.check.expect == "fail";
      ro.settled = [&](const std::vector<validate::TestResult>& rs) {
        if (expect_fail) {
          for (const auto& f : s.check.failing) {
            bool seen = std::any_of(rs.begin(), rs.end(), [&](const validate::TestResult& r) {
              return r.validator + "." + std::to_string(r.test) == f &&
                     r.status == validate::Status::kFailed;
            });
            bool in_family = std::any_of(rs.begin(), rs.end(), [&](const validate::TestResult& r) {
              return f.rfind(r.validator + ".", 0) == 0;
            });
            if (in_family && !seen) return false;
          }
          return true;
        }
        return std::none_of(rs.begin(), rs.end(), [&](const validate::TestResult& r) {
          return selected(r) &&
                 (r.status == validate::Status::kFailed || r.status == validate::Status::kError);
        });
      };
      auto rep = validate::run_validation(ctx, validators, ro);
      std::vector<std::string> problems;
      if (expect_fail) {
        for (const auto& f : s.check.failing) {
          bool seen = std::any_of(rep.results.begin(), rep.results.end(), [&](const auto& r) {
            return r.validator + "." + std::to_string(r.test) == f &&
                   r.status == validate::Status::kFailed;
          });
          if (!seen) problems.push_back(f + " was expected to fail but did not");
        }
      } else {
        for (const auto& r : rep.results)
          if (selected(r) &&
              (r.status == validate::Status::kFailed || r.status == validate::Status::kError))
            problems.push_back(r.validator + "." + std::to_string(r.test) + " " + r.node +
                               (r.peer.empty() ? "" : " " + r.peer) + ": " +
                               (r.message.empty() ? r.observed : r.message));
      }
      int checked = static_cast<int>(std::count_if(rep.results.begin(), rep.results.end(),
                                                   [&](const auto& r) { return selected(r); }));
      if (checked == 0)
        problems.push_back("no result for " + [&] {
          std::string t;
          for (const auto& x : s.check.tests) t += (t.empty() ? "" : ", ") + x;
          return t;
        }() + ": no such test in this lab (see README.md, Validators, for the test numbers)");
      if (!problems.empty()) {
        std::string msg;
        for (size_t i = 0; i < problems.size() && i < 3; ++i) msg += (i ? "; " : "") + problems[i];
        if (problems.size() > 3) msg += "; … (" + std::to_string(problems.size() - 3) + " more)";
        return input_error(msg);
      }
      *detail = "check " + s.check.expect + ": " + std::to_string(checked) + " results as expected";
      return {};
    }
    case StepKind::kTopology: {
      if (!s.topology.topo) return input_error("topology file was not loaded");
      plan::Plan next = plan::make_plan(*s.topology.topo, current_.lab);
      t.topology = true;
      // Recorded before reshaping, so an interrupted or failed reshape is undone too: nodes
      // whose generated config changes go back by config, and the rollback reshapes from the
      // new plan (whatever part of it exists) back to the baseline.
      for (const auto& n : next.nodes)
        if (const auto* old = current_.find(n.name);
            old && n.kind == "frr" && n.frr_config != old->frr_config)
          t.frr_nodes.insert(n.name);
      plan::Plan from = current_;
      current_ = next;
      engine::GrowReport g;
      auto r = engine::reshape_lab(st_.lab, from, next, runner_, opts_.parallel, &g);
      if (!r) return r;
      *detail = g.summary();
      return {};
    }
  }
  return {};
}

Result<void> Gate::rollback(const Touched& t, std::string* detail) {
  std::vector<std::string> problems;
  if (t.topology) {
    engine::GrowReport g;
    if (auto r = engine::reshape_lab(st_.lab, current_, st_.plan, runner_, opts_.parallel, &g); !r)
      problems.push_back("topology: " + r.error().message);
    current_ = st_.plan;
  }
  // Interfaces: MTU and admin state as observed in the baseline.
  std::map<std::string, std::string> scripts;
  for (const auto& key : t.interfaces) {
    auto c = key.find(':');
    std::string node = key.substr(0, c), ifname = key.substr(c + 1);
    auto m = res_.baseline.state.mtu.find(key);
    auto u = res_.baseline.state.admin_up.find(key);
    if (m != res_.baseline.state.mtu.end())
      scripts[node] += "link set dev " + ifname + " mtu " + std::to_string(m->second) + "\n";
    if (u != res_.baseline.state.admin_up.end())
      scripts[node] += "link set dev " + ifname + (u->second ? " up" : " down") + "\n";
  }
  for (const auto& [node, ifname, a] : t.host_added)
    scripts[node] += "address del " + a + " dev " + ifname + "\n";
  for (const auto& [node, ifname, a] : t.host_removed)
    scripts[node] += "address add " + a + " dev " + ifname + "\n";
  // Removing an address also removes the routes through it (the kernel's default route of a
  // server): put the plan's routes back.
  std::set<std::string> hosts;
  for (const auto& [node, ifname, a] : t.host_removed) hosts.insert(node);
  for (const auto& [node, ifname, a] : t.host_added) hosts.insert(node);
  for (const auto& h : hosts)
    if (const plan::Node* n = st_.plan.find(h))
      for (const auto& rt : n->routes) {
        bool v6 = rt.via.find(':') != std::string::npos;
        std::string dst =
            rt.destination == "default" ? (v6 ? "::/0" : "0.0.0.0/0") : rt.destination;
        scripts[h] += "route replace " + dst + " via " + rt.via + "\n";
      }
  for (const auto& [node, script] : scripts) {
    const plan::Node* n = st_.plan.find(node);
    if (!n) continue;
    if (auto r = ip_batch(runner_, *n, script, "node " + node); !r)
      problems.push_back(r.error().message);
  }
  // FRR: back to the snapshot, applied as a difference.
  std::vector<const plan::Node*> nodes;
  for (const auto& name : t.frr_nodes)
    if (const auto* n = st_.plan.find(name); n && snapshot_paths_.count(name)) nodes.push_back(n);
  std::vector<std::optional<Error>> errs(nodes.size());
  parallel_for(nodes.size(), opts_.parallel, [&](size_t i) {
    auto r = frr_reload(runner_, *nodes[i], snapshot_paths_[nodes[i]->name], false);
    if (!r) errs[i] = r.error();
  });
  for (const auto& e : errs)
    if (e) problems.push_back(e->message);
  std::string restored = std::to_string(nodes.size()) + " FRR config(s) and " +
                         std::to_string(scripts.size()) + " node(s)' interfaces restored";
  if (!problems.empty()) {
    *detail = restored + "; problems: " + problems.front();
    return harness_error(*detail);
  }
  *detail = restored;
  return {};
}

Result<void> Gate::record_configs_after(const plan::Plan& plan) {
  for (const auto& n : plan.nodes) {
    if (n.kind != "frr" || n.daemons.empty()) continue;
    auto cfg = running_config(runner_, n);
    if (cfg) res_.config_after[n.name] = *cfg;
  }
  return {};
}

// Finds the first step after which the change is rejected, in O(log n) validations: the
// baseline (0 steps) is known good and all n steps known bad; each probe rolls back to the
// baseline, applies the first `mid` steps and judges them like the whole change. Assumes a
// broken network stays broken as more steps are applied (true of the faults a rollout gate
// exists for; a later step that repairs an earlier one can make bisection name a later step).
void Gate::bisect(Touched& touched, size_t attempted) {
  size_t good = 0, bad = attempted;
  while (bad - good > 1 && !interrupted()) {
    size_t mid = (good + bad) / 2;
    std::string d;
    if (auto r = rollback(touched, &d); !r) {
      say("bisect stopped: rollback failed: " + d);
      return;
    }
    touched = Touched{};
    bool applied = true;
    for (size_t i = 0; i < mid && applied; ++i) {
      std::string detail;
      applied = static_cast<bool>(apply_step(cs_.steps[i], i, touched, &detail));
    }
    plan::Plan p = intended_plan(st_.plan, cs_, mid);
    say("bisect: first " + std::to_string(mid) + " of " + std::to_string(cs_.steps.size()) +
        " steps; settling: " + settle(p));
    Phase ph = validate_phase("bisect: first " + std::to_string(mid) + " steps", p);
    Diff diff = diff_states(res_.baseline.state, ph.state, st_.plan, p);
    Verdict v =
        decide({}, ph.report, diff, opts_.allow_dirty_baseline ? &res_.baseline.report : nullptr);
    res_.per_step.push_back(std::move(ph));
    if (applied && v.decision == Decision::kApprove)
      good = mid;
    else
      bad = mid;
  }
  res_.first_failing_step = cs_.steps[bad - 1].name;
  res_.steps[bad - 1].status = "broke";
  res_.steps[bad - 1].detail += "; bisection: the network fails validation from this step on";
  say("bisect: the first step that breaks the network is '" + res_.first_failing_step + "'");
}

// SIGINT/SIGTERM after something was applied: restore the baseline before exiting 130. The
// flag is cleared so the rollback's own commands are not cancelled; a second signal stops it.
Error Gate::abort_interrupted(const Touched& touched, const std::string& when) {
  g_interrupted = false;
  say("interrupted " + when + ": rolling back (interrupt again to stop the rollback)");
  std::string d;
  auto r = rollback(touched, &d);
  bool again = interrupted();
  g_interrupted = true;
  if (r && !again)
    return Error{ErrorKind::kInterrupted, "interrupted " + when + "; the change was rolled back (" +
                                              d + "); not re-validated: run twin validate --lab " +
                                              st_.lab};
  return Error{ErrorKind::kInterrupted, "interrupted " + when + "; the lab is NOT restored (" +
                                            (again ? "rollback interrupted" : d) +
                                            "): twin down and up, or repair by hand"};
}

Result<ApplyResult> Gate::run() {
  auto t0 = Clock::now();
  res_.lab = st_.lab;
  res_.change_name = cs_.name;
  res_.change_file = cs_.file;
  res_.started_at = now_rfc3339();
  current_ = st_.plan;
  TempDir work;
  if (work.path.empty()) return harness_error("cannot create a temporary folder");
  work_dir_ = work.path;
  if (::chmod(work_dir_.c_str(), 0755) != 0) return harness_error("chmod " + work_dir_);

  // 1. Baseline.
  say("baseline: validating lab " + st_.lab);
  res_.baseline = validate_phase("baseline", st_.plan);
  if (interrupted())
    return Error{ErrorKind::kInterrupted, "interrupted during the baseline; nothing was applied"};
  if (res_.baseline.report.exit_code() != 0 && !opts_.allow_dirty_baseline) {
    res_.stage = "baseline-failed";
    // The reasons say what was already wrong (the change is not to blame).
    res_.verdict = decide({}, res_.baseline.report, Diff{}, nullptr);
    res_.duration_ms = ms_since(t0);
    return res_;
  }
  if (auto r = snapshot(); !r) return r.error();

  // 2. Steps. With --per-step, up to kBisectAbove steps are validated one by one; a longer
  // change is applied whole and, if rejected, bisected (bisect()).
  Touched touched;
  bool broke = false;
  bool bisecting = opts_.per_step && cs_.steps.size() > kBisectAbove;
  bool step_by_step = opts_.per_step && !bisecting;
  size_t attempted = 0;  // steps applied or failed (the rest were skipped)
  for (size_t i = 0; i < cs_.steps.size(); ++i) {
    const Step& s = cs_.steps[i];
    StepOutcome out{s.name, to_string(s.kind)};
    if (broke || interrupted()) {
      out.status = "skipped";
      out.detail = interrupted() ? "interrupted"
                   : res_.first_failing_step.empty()
                       ? "an earlier step failed"
                       : "not applied: an earlier step broke the network";
      res_.steps.push_back(out);
      continue;
    }
    say("step " + std::to_string(i + 1) + "/" + std::to_string(cs_.steps.size()) + ": " + s.name);
    auto ts = Clock::now();
    attempted = i + 1;
    auto r = apply_step(s, i, touched, &out.detail);
    out.duration_ms = ms_since(ts);
    if (!r) {
      if (r.error().kind == ErrorKind::kInterrupted) {
        out.status = "skipped";
        out.detail = "interrupted";
      } else {
        out.status = "failed";
        out.detail = r.error().message;
        broke = true;
        // Step by step, a failing step is the culprit. Bisecting, an earlier step may already
        // have broken the network (a failing check only says it broke before): bisection finds
        // the first prefix of steps that fails, to apply or to validate.
        if (opts_.per_step && res_.first_failing_step.empty() && !bisecting)
          res_.first_failing_step = s.name;
      }
    }
    say("  " + out.status + ": " + out.detail);
    res_.steps.push_back(out);
    if (step_by_step && !broke && s.kind != StepKind::kWait && s.kind != StepKind::kCheck &&
        res_.first_failing_step.empty()) {
      plan::Plan p = intended_plan(st_.plan, cs_, i + 1);
      say("settling: " + settle(p));
      Phase ph = validate_phase("after step '" + s.name + "'", p);
      Diff diff = diff_states(res_.baseline.state, ph.state, st_.plan, p);
      Verdict v = decide(res_.steps, ph.report, diff,
                         opts_.allow_dirty_baseline ? &res_.baseline.report : nullptr);
      if (interrupted()) return abort_interrupted(touched, "while validating a step");
      if (v.decision != Decision::kApprove) {
        res_.first_failing_step = s.name;
        res_.steps.back().status = "broke";
        res_.steps.back().detail += "; the network failed validation after this step";
        broke = true;     // later steps are not applied: this one already broke the network
        res_.after = ph;  // nothing else changes: this validation is the after-change one
      }
      res_.per_step.push_back(std::move(ph));
    }
  }
  if (interrupted()) return abort_interrupted(touched, "while applying");

  // 3. Converge, validate against the intent, diff.
  plan::Plan intended = intended_plan(st_.plan, cs_);
  if (!res_.after) {  // (with --per-step, the validation after the breaking step is reused)
    say("settling: " + settle(intended));
    if (interrupted()) return abort_interrupted(touched, "while settling");
    res_.after = validate_phase("after", intended);
  }
  if (interrupted()) return abort_interrupted(touched, "while validating");
  record_configs_after(intended);
  res_.diff = diff_states(res_.baseline.state, res_.after->state, st_.plan, intended);
  res_.verdict = decide(res_.steps, res_.after->report, res_.diff,
                        opts_.allow_dirty_baseline ? &res_.baseline.report : nullptr);
  if (bisecting && res_.verdict.decision == Decision::kReject && res_.first_failing_step.empty())
    bisect(touched, attempted);
  if (interrupted())
    return abort_interrupted(touched, bisecting ? "while bisecting" : "while judging");
  if (!res_.first_failing_step.empty() && !res_.verdict.reasons.empty())
    for (auto& reason : res_.verdict.reasons)
      if (reason.step.empty()) reason.step = res_.first_failing_step;
  say(std::string("verdict: ") + to_string(res_.verdict.decision));

  // 4. Approve: the lab's intent now includes the change. Reject: roll back and prove it.
  if (res_.verdict.decision == Decision::kApprove && !opts_.revert) {
    // Reloaded: a topology step recorded new resources in the state file meanwhile.
    if (auto cur = engine::load_state(st_.lab)) {
      cur->plan = intended;
      res_.intent_saved = static_cast<bool>(engine::save_state(*cur));
    }
  } else if (!opts_.no_rollback || res_.verdict.decision == Decision::kApprove) {
    say(res_.verdict.decision == Decision::kApprove ? "reverting (--revert)" : "rolling back");
    res_.rolled_back = true;
    std::string d;
    auto r = rollback(touched, &d);
    say("settling: " + settle(st_.plan));
    Phase ph = validate_phase("rollback", st_.plan);
    Diff back = diff_states(res_.baseline.state, ph.state, st_.plan, st_.plan);
    Verdict v =
        decide({}, ph.report, back, opts_.allow_dirty_baseline ? &res_.baseline.report : nullptr);
    res_.rollback_ok = r && v.decision == Decision::kApprove;
    res_.rollback_diff = back;
    res_.rollback_detail = d;
    if (!res_.rollback_ok && !v.reasons.empty())
      res_.rollback_detail += "; still different from the baseline: " + v.reasons.front().message;
    res_.rollback = std::move(ph);
    say(std::string("rollback ") + (res_.rollback_ok ? "proven: baseline restored" : "FAILED") +
        " (" + res_.rollback_detail + ")");
  }
  res_.duration_ms = ms_since(t0);
  return res_;
}

}  // namespace

Result<void> check_frr_syntax(const ChangeSet& cs, proc::ProcessRunner& runner,
                              Diagnostics& diags) {
  TempDir tmp;
  if (tmp.path.empty()) return harness_error("cannot create a temporary folder");
  if (auto w = write_file(tmp.path + "/vtysh.conf", "service integrated-vtysh-config\n"); !w)
    return w.error();
  for (size_t i = 0; i < cs.steps.size(); ++i) {
    const Step& s = cs.steps[i];
    if (s.kind != StepKind::kFrr) continue;
    std::string path, file = cs.file;
    int first = s.frr.text_line;
    if (!s.frr.replace.empty()) {
      if (!fs::is_regular_file(s.frr.replace)) continue;  // the loader reports a missing file
      path = s.frr.replace;
      file = s.frr.replace;
      first = 1;
    } else {
      path = tmp.path + "/step" + std::to_string(i) + ".conf";
      if (auto w = write_file(path, s.frr.add.empty() ? s.frr.remove : s.frr.add); !w)
        return w.error();
    }
    auto r = runner.run({{"vtysh", "--config_dir", tmp.path, "-C", "-f", path}, "", 30s});
    if (!r) return r.error().with_context("FRR syntax check (vtysh -C)");
    if (r->exit_code == 0) continue;
    auto complaints = vtysh_complaints(r->out + r->err);
    std::string field = "steps[" + std::to_string(i) + "].frr." +
                        (!s.frr.replace.empty() ? "replace"
                         : s.frr.add.empty()    ? "remove"
                                                : "add");
    if (complaints.empty())
      diags.add({file, s.mark.line, s.mark.column, field,
                 "FRR rejects this configuration (vtysh -C exit " + std::to_string(r->exit_code) +
                     "): " + trim(r->out + r->err),
                 ""});
    for (const auto& [line, what] : complaints)
      diags.add({file, first > 0 ? first + line - 1 : s.mark.line, first > 0 ? 1 : s.mark.column,
                 field, "FRR rejects this line: " + what,
                 "check the command against FRR's documentation for this version"});
  }
  return {};
}

void check_against_lab(const ChangeSet& cs, const plan::Plan& plan, Diagnostics& diags) {
  static const std::regex kRouterBgp(R"(^router bgp (\d+)\s*$)");
  for (size_t i = 0; i < cs.steps.size(); ++i) {
    const Step& s = cs.steps[i];
    if (s.kind != StepKind::kFrr || (s.frr.add.empty() && s.frr.remove.empty())) continue;
    const std::string& text = s.frr.add.empty() ? s.frr.remove : s.frr.add;
    std::istringstream in(text);
    std::string line;
    for (int n = 0; std::getline(in, line); ++n) {
      std::smatch m;
      if (!std::regex_match(line, m, kRouterBgp)) continue;
      for (const auto& name : s.frr.nodes) {
        const plan::Node* node = plan.find(name);
        if (!node || node->asn == 0 || std::to_string(node->asn) == m[1].str()) continue;
        diags.add({cs.file, s.frr.text_line > 0 ? s.frr.text_line + n : s.mark.line, 1,
                   "steps[" + std::to_string(i) + "].frr." + (s.frr.add.empty() ? "remove" : "add"),
                   "node " + name + " runs router bgp " + std::to_string(node->asn) + ", not " +
                       m[1].str() + " (one BGP instance per node)",
                   "write `router bgp " + std::to_string(node->asn) + "`"});
      }
    }
  }
}

Result<std::string> dry_run(const engine::State& st, const ChangeSet& cs,
                            proc::ProcessRunner& runner) {
  std::ostringstream o;
  o << "change " << cs.name << " on lab " << st.lab << ": " << cs.steps.size() << " step"
    << (cs.steps.size() == 1 ? "" : "s") << " (dry run: nothing is applied)\n";
  plan::Plan cur = st.plan;
  for (size_t i = 0; i < cs.steps.size(); ++i) {
    const Step& s = cs.steps[i];
    o << "\n" << i + 1 << ". " << s.name << " [" << to_string(s.kind) << "]\n";
    switch (s.kind) {
      case StepKind::kFrr:
        for (const auto& name : s.frr.nodes) {
          const plan::Node* n = cur.find(name);
          if (!n) continue;
          if (!s.frr.replace.empty()) {
            std::string out;
            auto r = frr_reload(runner, *n, s.frr.replace, true, &out);
            if (!r) return r.error();
            o << "   " << name << ": configuration difference (frr-reload.py --test):\n";
            std::istringstream in(out);
            std::string line;
            bool any = false;
            while (std::getline(in, line))
              if (!line.empty()) {
                o << "     " << line << "\n";
                any = true;
              }
            if (!any) o << "     (no difference: node left untouched)\n";
          } else {
            std::string text = s.frr.add.empty() ? negate_config(s.frr.remove) : s.frr.add;
            o << "   " << name << ": vtysh -f <<EOF\n";
            std::istringstream in(text);
            std::string line;
            while (std::getline(in, line)) o << "     " << line << "\n";
            o << "   EOF\n";
          }
        }
        break;
      case StepKind::kInterface:
        for (const auto& r : s.interface.interfaces) {
          o << "   " << r.str() << ":";
          if (s.interface.mtu) o << " mtu " << *s.interface.mtu;
          if (s.interface.up) o << (*s.interface.up ? " up" : " down");
          for (const auto& a : s.interface.add_addresses) o << " +" << a;
          for (const auto& a : s.interface.remove_addresses) o << " -" << a;
          o << "\n";
        }
        break;
      case StepKind::kLink: {
        std::vector<std::string> names;
        if (s.link.all)
          for (const auto& l : cur.links)
            names.push_back(l.a_node + ":" + l.a_interface + "--" + l.b_node + ":" + l.b_interface);
        else
          for (const auto& l : s.link.links) names.push_back(l.str());
        for (const auto& n : names) {
          o << "   " << n << ":";
          if (s.link.mtu) o << " mtu " << *s.link.mtu;
          if (s.link.up) o << (*s.link.up ? " up" : " down");
          o << "\n";
        }
        break;
      }
      case StepKind::kWait:
        if (s.wait.until == "duration")
          o << "   wait " << s.wait.duration.count() << " ms\n";
        else
          o << "   until every intended BGP session is Established (at most "
            << s.wait.timeout.count() << " ms)\n";
        break;
      case StepKind::kCheck: {
        o << "   validators:";
        for (const auto& t : s.check.tests) o << " " << t;
        o << ", expect " << s.check.expect;
        for (const auto& f : s.check.failing) o << " " << f;
        o << "\n";
        break;
      }
      case StepKind::kTopology: {
        if (!s.topology.topo) break;
        plan::Plan next = plan::make_plan(*s.topology.topo, st.lab);
        o << "   " << engine::describe_reshape(cur, next);
        cur = next;
        break;
      }
    }
  }
  plan::Plan intended = intended_plan(st.plan, cs);
  o << "\nintended after the change: " << intended.sessions.size() << " BGP sessions, "
    << intended.prefixes.size() << " prefixes, " << intended.links.size() << " links\n";
  return o.str();
}

Result<ApplyResult> apply(const engine::State& st, const ChangeSet& cs, const ApplyOptions& opts,
                          proc::ProcessRunner& runner) {
  auto lock = engine::lock_lab(st.lab, [&] {
    if (opts.progress)
      opts.progress("lab " + st.lab + " is busy (another twin command holds it): waiting");
  });
  if (!lock) return lock.error();
  Gate g(st, cs, opts, runner);
  return g.run();
}

}  // namespace twin::replay
