#pragma once
// Fakes for the seams (ARCHITECTURE.md "Seams"): a process runner, a node driver over a
// recorded network, a clock that advances when slept on, validators that answer from recorded
// results, and the lab control of the gate. They let the gate's logic run without root, FRR or
// time passing (tests/unit/gate_logic_test.cpp).
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "twin/core/clock.hpp"
#include "twin/drivers/driver.hpp"
#include "twin/gate/gate.hpp"
#include "twin/proc/runner.hpp"
#include "twin/validate/validator.hpp"
#include "twin/verdict/observation.hpp"
#include "twin/wiring/wiring.hpp"
#include "validators/registry.hpp"

namespace twin_test {

// Answers every program with exit 0 and no output, except `zebra --version`; keeps what ran.
class FakeRunner final : public twin::proc::ProcessRunner {
 public:
  twin::Result<twin::proc::Output> run(const twin::proc::Command& cmd) override {
    std::lock_guard lk(mu);
    commands.push_back(twin::proc::render(cmd.argv));
    twin::proc::Output o;
    o.exit_code = 0;
    if (cmd.argv.size() == 2 && cmd.argv[1] == "--version") o.out = "zebra version 8.4.4\n";
    if (on_run) on_run(cmd, o);
    return o;
  }
  std::mutex mu;
  std::vector<std::string> commands;
  // Called for every command with the output it gets (may change it): what a program the
  // test stands in for does (an orchestrator's run configuring nodes).
  std::function<void(const twin::proc::Command&, twin::proc::Output&)> on_run;
};

// Time that passes only when someone sleeps: a 30 s window takes no real time.
class FakeTime final : public twin::TimeSource {
 public:
  twin::Clock::time_point now() const override {
    std::lock_guard lk(mu_);
    return now_;
  }
  void sleep_for(std::chrono::milliseconds d) override {
    std::lock_guard lk(mu_);
    now_ += d;
    slept_ += d;
  }
  std::chrono::milliseconds slept() const {
    std::lock_guard lk(mu_);
    return slept_;
  }

 private:
  mutable std::mutex mu_;
  twin::Clock::time_point now_{};
  std::chrono::milliseconds slept_{0};
};

// A lab that shows one of two recorded states: `good` until the configuration applied to it
// makes `broken(applied)` true, `bad` from then on; restoring a node's snapshot (reload) drops
// what was applied to that node. Every call is logged ("apply leaf1", "reload leaf1", ...).
struct FakeNetwork {
  std::map<std::string, twin::replay::NodeObservation> good, bad;
  twin::validate::Report good_report, bad_report;
  // node -> configuration texts applied since its last reload.
  std::map<std::string, std::vector<std::string>> applied;
  std::function<bool(const std::map<std::string, std::vector<std::string>>&)> broken =
      [](const auto& a) {
        for (const auto& [node, texts] : a)
          if (!texts.empty()) return true;
        return false;
      };
  // Kernel settings per node (sysctl name -> value); a key not listed does not exist. The lab
  // shows `bad` while sysctl_broken(sysctls) holds too.
  std::map<std::string, std::map<std::string, std::string>> sysctls;
  std::function<bool(const std::map<std::string, std::map<std::string, std::string>>&)>
      sysctl_broken = [](const auto&) { return false; };
  // Configuration that holds in running state and breaks the lab once the node it was applied
  // to restarted its daemons (a latent setting); restarted holds the nodes restarted so far.
  std::function<bool(const std::map<std::string, std::vector<std::string>>&)> latent =
      [](const auto&) { return false; };
  std::set<std::string> restarted;
  // With `sticky`, a node restarted while its latent configuration breaks the lab keeps what it
  // booted with (an OSPF router-id taken at start) until it restarts again without it: a reload
  // of its config alone does not bring it back.
  bool sticky = false;
  std::set<std::string> stuck;
  // Nodes whose startup config was written from the baseline: what was applied to them since
  // is gone once they restart.
  std::set<std::string> startup_written;
  // node -> its startup config text (startup_config; "saved <node>\n" when never written).
  std::map<std::string, std::string> startup;
  std::set<std::string> stopped;  // nodes whose routing daemons are stopped (control_routing)
  bool fail_start = false;        // starting routing daemons fails (control_routing kStart)
  bool fail_restart = false;      // restarting them fails (control_routing kRestart)
  // "node:if" taken down by change_interfaces ("link set dev X down"); with down_breaks the
  // lab shows `bad` while any is down.
  std::set<std::string> down;
  bool down_breaks = false;
  // A further condition for `bad`, evaluated under the lock (may read the fields above).
  std::function<bool()> also_bad;
  // While it holds (evaluated under the lock), bgpd still has work: every node's summary shows a
  // message in its first peer's output queue (replay::frr_busy), as FRR does while it converges.
  std::function<bool()> busy;
  bool fail_reload = false;                          // restoring a snapshot fails
  std::function<void(const std::string&)> on_apply;  // called after each apply (may be empty)
  // Called as each reload starts (may be empty); a reload, like the program it stands for,
  // stops when an interrupt asks programs to stop (twin::cancel_requested).
  std::function<void(const std::string&)> on_reload;
  std::vector<std::string> log;
  std::map<std::string, int> config_reads;  // node -> running configs read
  // A container node's own release (node.container.image non-empty) refuses these lines of
  // a text containing `first` (image -> (text fragment, (line, FRR's words))); every check is
  // logged as "refused? <node>".
  std::map<std::string, std::pair<std::string, std::pair<int, std::string>>> refused_by_image;
  mutable std::mutex mu;

  bool shows_bad() const {
    std::lock_guard lk(mu);
    if (broken(applied) || sysctl_broken(sysctls) || !stopped.empty() || !stuck.empty() ||
        (down_breaks && !down.empty()) || (also_bad && also_bad()))
      return true;
    std::map<std::string, std::vector<std::string>> after_restart;
    for (const auto& n : restarted)
      if (auto a = applied.find(n); a != applied.end()) after_restart.insert(*a);
    return latent(after_restart);
  }
  bool is_busy() const {
    std::lock_guard lk(mu);
    return busy && busy();
  }
  const twin::replay::NodeObservation* observation(const std::string& node) const {
    const auto& m = shows_bad() ? bad : good;
    auto it = m.find(node);
    return it == m.end() ? nullptr : &it->second;
  }
  void note(const std::string& line) {
    std::lock_guard lk(mu);
    log.push_back(line);
  }
};

class FakeDriver final : public twin::drivers::NodeDriver {
 public:
  // `ip -j addr show` of a node whose addresses are as planned (the recordings keep links only).
  static nlohmann::json planned_addresses(const twin::plan::Node& node) {
    auto info = [](const std::vector<std::string>& addrs) {
      nlohmann::json a = nlohmann::json::array();
      for (const auto& p : addrs) {
        auto slash = p.find('/');
        a.push_back({{"family", p.find(':') == std::string::npos ? "inet" : "inet6"},
                     {"local", p.substr(0, slash)},
                     {"prefixlen", std::stoi(p.substr(slash + 1))},
                     {"scope", "global"}});
      }
      return a;
    };
    std::vector<std::string> lo = node.loopbacks;
    if (auto c = node.config_addresses.find("lo"); c != node.config_addresses.end())
      lo.insert(lo.end(), c->second.begin(), c->second.end());
    nlohmann::json out = nlohmann::json::array();
    out.push_back({{"ifname", "lo"}, {"addr_info", info(lo)}});
    for (const auto& i : node.interfaces) {
      std::vector<std::string> addrs = i.addresses;
      if (auto c = node.config_addresses.find(i.name); c != node.config_addresses.end())
        addrs.insert(addrs.end(), c->second.begin(), c->second.end());
      out.push_back({{"ifname", i.name}, {"addr_info", info(addrs)}});
    }
    return out;
  }
  explicit FakeDriver(FakeNetwork& net) : net_(net) {}
  const char* name() const override { return "fake"; }
  std::vector<std::pair<std::string, std::string>> namespace_sysctls(
      const twin::plan::Node&) const override {
    return {};
  }
  twin::Result<nlohmann::json> kernel_table(const twin::plan::Node& node,
                                            twin::runtime::KernelTable table,
                                            std::string* how) const override {
    if (how) *how = "fake";
    const auto* o = net_.observation(node.name);
    if (!o) return twin::harness_error("not recorded");
    switch (table) {
      case twin::runtime::KernelTable::kLinks:
        return o->links;
      case twin::runtime::KernelTable::kAddresses:
        return twin::ok(planned_addresses(node));
      case twin::runtime::KernelTable::kRoutes4:
        return o->routes4;
      case twin::runtime::KernelTable::kRoutes6:
        return o->routes6;
    }
    return twin::harness_error("no such table");
  }
  twin::Result<nlohmann::json> ip_json(const twin::plan::Node& node,
                                       const std::vector<std::string>& args,
                                       twin::proc::ProcessRunner&,
                                       std::string* how) const override {
    twin::runtime::KernelTable t;
    if (!twin::runtime::kernel_table_of(args, &t)) return twin::harness_error("not recorded");
    return kernel_table(node, t, how);
  }
  twin::Result<nlohmann::json> frr_json(const twin::plan::Node& node, const std::string&,
                                        const std::string&, std::string* how) const override {
    if (how) *how = "fake";
    const auto* o = net_.observation(node.name);
    if (!o) return twin::harness_error("not recorded");
    if (!o->bgp_summary || !net_.is_busy()) return o->bgp_summary;
    nlohmann::json sum = *o->bgp_summary;
    for (auto& [af, s] : sum.items())
      if (s.contains("peers") && !s["peers"].empty()) s["peers"].begin().value()["outq"] = 1;
    return twin::ok(std::move(sum));
  }
  std::vector<twin::runtime::PingResult> ping(
      const twin::plan::Node&, const std::vector<twin::runtime::PingRequest>& reqs) const override {
    twin::runtime::PingResult r;
    r.outcome = twin::runtime::PingOutcome::kReply;
    return std::vector<twin::runtime::PingResult>(reqs.size(), r);
  }
  // A VTEP's devices as netns nodes build them: the script is what the gate runs.
  std::string vtep_change_script(const twin::plan::Node& from,
                                 const twin::plan::Node& to) const override {
    return twin::wiring::vtep_change_script(from.vnis, to.vnis);
  }
  // Not recorded: the gate falls back to the plan's VNIs and the ones its steps left
  // (vnis_in_kernel is tested on recorded `ip -d -j addr show`).
  twin::Result<std::vector<twin::plan::Vni>> running_vnis(const twin::plan::Node&,
                                                          twin::proc::ProcessRunner&) const override {
    return twin::harness_error("not recorded");
  }
  twin::Result<void> change_interfaces(const twin::plan::Node& node, const std::string& script,
                                       const std::string&,
                                       twin::proc::ProcessRunner&) const override {
    net_.note("interfaces " + node.name + ": " + script);
    std::istringstream in(script);
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream w(line);
      std::string link, set, dev, ifname, state;
      if (!(w >> link >> set >> dev >> ifname >> state) || link != "link" || dev != "dev") continue;
      std::lock_guard lk(net_.mu);
      if (state == "down") net_.down.insert(node.name + ":" + ifname);
      if (state == "up") net_.down.erase(node.name + ":" + ifname);
    }
    return {};
  }
  twin::Result<std::string> read_sysctl(const twin::plan::Node& node,
                                        const std::string& key) const override {
    std::lock_guard lk(net_.mu);
    auto n = net_.sysctls.find(node.name);
    if (n == net_.sysctls.end() || !n->second.count(key))
      return twin::input_error("the kernel has no setting " + key);
    return n->second.at(key);
  }
  twin::Result<void> write_sysctl(const twin::plan::Node& node, const std::string& key,
                                  const std::string& value) const override {
    if (auto r = read_sysctl(node, key); !r) return r.error();
    net_.note("sysctl " + node.name + " " + key + "=" + value);
    std::lock_guard lk(net_.mu);
    net_.sysctls[node.name][key] = value;
    return {};
  }
  std::string packet_namespace(const twin::plan::Node& node) const override {
    return "fake-" + node.name;
  }
  bool manages_frr(const twin::plan::Node& node) const override { return !node.daemons.empty(); }
  // A container node's image checks its lines; any other node's are this machine's FRR's (kUsage,
  // as the drivers answer).
  twin::Result<std::vector<std::pair<int, std::string>>> refused_lines(
      const twin::plan::Node& node, const std::string& text,
      twin::proc::ProcessRunner& runner) const override {
    if (node.container.image.empty()) return NodeDriver::refused_lines(node, text, runner);
    net_.note("refused? " + node.name);
    std::lock_guard lk(net_.mu);
    std::vector<std::pair<int, std::string>> out;
    if (auto it = net_.refused_by_image.find(node.container.image);
        it != net_.refused_by_image.end() && text.find(it->second.first) != std::string::npos)
      out.push_back(it->second.second);
    return out;
  }
  twin::Result<std::string> running_config(const twin::plan::Node& node,
                                           twin::proc::ProcessRunner&) const override {
    // What was applied since the last reload shows in the running config.
    std::lock_guard lk(net_.mu);
    ++net_.config_reads[node.name];
    std::string cfg = "hostname " + node.name + "\n";
    if (auto a = net_.applied.find(node.name); a != net_.applied.end())
      for (const auto& t : a->second) cfg += t;
    return cfg;
  }
  twin::Result<void> apply_config(const twin::plan::Node& node, const std::string& text, int,
                                  const std::string&, twin::proc::ProcessRunner&) const override {
    {
      std::lock_guard lk(net_.mu);
      net_.applied[node.name].push_back(text);
      net_.log.push_back("apply " + node.name);
    }
    if (net_.on_apply) net_.on_apply(node.name);
    return {};
  }
  twin::Result<void> reload_config(const twin::plan::Node& node, const std::string&, bool,
                                   std::string*, twin::proc::ProcessRunner&) const override {
    if (net_.on_reload) net_.on_reload(node.name);
    std::lock_guard lk(net_.mu);
    net_.log.push_back("reload " + node.name);
    if (twin::cancel_requested())
      return twin::Error{twin::ErrorKind::kInterrupted, "interrupted while running frr-reload.py"};
    if (net_.fail_reload) return twin::harness_error("frr-reload.py failed on " + node.name);
    net_.applied.erase(node.name);
    return {};
  }
  twin::Result<void> save_config(const twin::plan::Node& node,
                                 twin::proc::ProcessRunner&) const override {
    net_.note("save " + node.name);
    return {};
  }
  twin::Result<std::string> startup_config(const twin::plan::Node& node) const override {
    std::lock_guard lk(net_.mu);
    auto it = net_.startup.find(node.name);
    return it == net_.startup.end() ? std::string("saved " + node.name + "\n") : it->second;
  }
  // The baseline's text as startup config: what the node boots from at its next restart, so
  // what was applied to it since is gone then.
  twin::Result<void> write_startup_config(const twin::plan::Node& node,
                                          const std::string& config) const override {
    net_.note("startup " + node.name);
    std::lock_guard lk(net_.mu);
    net_.startup_written.insert(node.name);
    net_.startup[node.name] = config;
    return {};
  }
  int exec(const twin::state::State&, const twin::plan::Node&,
           const std::vector<std::string>&) const override {
    return 0;
  }

 private:
  FakeNetwork& net_;
};

// A validator family that reports what the recorded run reported for it, in the state the
// fake network shows.
class RecordedValidator final : public twin::validate::Validator {
 public:
  RecordedValidator(std::string family, const FakeNetwork& net)
      : family_(std::move(family)), net_(net) {}
  std::string name() const override { return family_; }
  std::vector<twin::validate::TestResult> run(twin::validate::Context&) override {
    const auto& rep = net_.shows_bad() ? net_.bad_report : net_.good_report;
    std::vector<twin::validate::TestResult> out;
    for (const auto& r : rep.results)
      if (r.validator == family_) out.push_back(r);
    return out;
  }

 private:
  std::string family_;
  const FakeNetwork& net_;
};

inline twin::validate::ValidatorFactory recorded_validators(const FakeNetwork& net) {
  return [&net](const std::vector<std::string>& only, std::vector<std::string>* unknown) {
    std::vector<std::unique_ptr<twin::validate::Validator>> v;
    // The registry's list, so a family added there is faked here too.
    static const std::vector<std::string> kAll = twin::validators::family_names();
    for (const auto& f : only.empty() ? kAll : only) {
      if (std::find(kAll.begin(), kAll.end(), f) == kAll.end()) {
        if (unknown) unknown->push_back(f);
        continue;
      }
      v.push_back(std::make_unique<RecordedValidator>(f, net));
    }
    return v;
  };
}

// A probe stream that answers with canned figures: every flow it was started with, the ones in
// `outages` out for that long.
class FakeTraffic final : public twin::replay::TrafficProbe {
 public:
  FakeTraffic(std::map<std::string, double> outages, std::vector<std::string>* started)
      : outages_(std::move(outages)), started_(started) {}
  twin::Result<void> start(const std::vector<twin::runtime::StreamFlow>& flows,
                           std::chrono::milliseconds interval) override {
    flows_ = flows;
    interval_ = interval;
    for (const auto& f : flows) started_->push_back(f.name + " from " + f.source + " in " + f.netns);
    return {};
  }
  twin::runtime::StreamStats stop() override {
    twin::runtime::StreamStats s;
    s.interval = interval_;
    for (const auto& f : flows_) {
      std::vector<twin::runtime::ProbeSample> samples;
      double out = outages_.count(f.name) ? outages_.at(f.name) : 0;
      for (int i = 0; i < 500; ++i) {
        double t = i * 10.0;
        samples.push_back({t, !(t >= 1000 && t < 1000 + out)});
      }
      s.flows.push_back(twin::runtime::summarize_flow(f.name, samples, 5000));
    }
    return s;
  }

 private:
  std::map<std::string, double> outages_;
  std::vector<std::string>* started_;
  std::vector<twin::runtime::StreamFlow> flows_;
  std::chrono::milliseconds interval_{10};
};

// The lab as a whole: reshapes are logged, the saved intent kept.
class FakeLab final : public twin::replay::LabControl {
 public:
  twin::Result<void> reshape(const twin::plan::Plan& from, const twin::plan::Plan& to,
                             twin::engine::GrowReport*) override {
    reshapes.push_back(std::to_string(from.nodes.size()) + "->" + std::to_string(to.nodes.size()));
    reshaped_to.push_back(to);
    return {};
  }
  twin::Result<void> save_intent(const twin::plan::Plan& intended) override {
    saved = intended;
    return {};
  }
  // Restarting nodes of `net` (when set): logged, and their latent configuration takes effect.
  // Stopping and starting: logged, and `net->stopped` holds the nodes whose daemons are down.
  twin::Result<int> control_routing(const twin::plan::Plan&, const std::vector<std::string>& nodes,
                                    twin::engine::RoutingAction action) override {
    if (!net) return twin::harness_error("no network to restart");
    static const char* kVerb[] = {"stop ", "start ", "restart "};
    if (action == twin::engine::RoutingAction::kStart && net->fail_start)
      return twin::harness_error("zebra did not start");
    if (action == twin::engine::RoutingAction::kRestart && net->fail_restart)
      return twin::harness_error("zebra did not start again");
    for (const auto& n : nodes) {
      net->note(kVerb[static_cast<int>(action)] + n);
      std::lock_guard lk(net->mu);
      if (action == twin::engine::RoutingAction::kRestart && net->startup_written.erase(n))
        net->applied.erase(n);
      if (action == twin::engine::RoutingAction::kRestart && net->sticky) {
        std::map<std::string, std::vector<std::string>> mine;
        if (auto a = net->applied.find(n); a != net->applied.end()) mine.insert(*a);
        if (net->latent(mine))
          net->stuck.insert(n);
        else
          net->stuck.erase(n);
      }
      if (action == twin::engine::RoutingAction::kRestart) net->restarted.insert(n);
      if (action == twin::engine::RoutingAction::kStop) net->stopped.insert(n);
      if (action == twin::engine::RoutingAction::kStart) net->stopped.erase(n);
    }
    return action == twin::engine::RoutingAction::kStop ? 0 : static_cast<int>(nodes.size()) * 3;
  }
  // Booting a node on another image: logged ("boot leaf2 localhost/twin-frr:10.3"), with the
  // configuration it booted from.
  twin::Result<int> boot_image(const twin::plan::Plan&, const twin::plan::Node& to,
                               const std::string& config) override {
    if (net) net->note("boot " + to.name + " " + to.container.image);
    booted.emplace_back(to, config);
    if (fail_boot) return twin::harness_error("container did not start");
    return static_cast<int>(to.daemons.size());
  }
  FakeNetwork* net = nullptr;
  std::vector<std::string> reshapes;
  std::vector<twin::plan::Plan> reshaped_to;
  std::optional<twin::plan::Plan> saved;
  std::vector<std::pair<twin::plan::Node, std::string>> booted;
  bool fail_boot = false;
};

}  // namespace twin_test
