#include "twin/traffic/run.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "twin/core/diagnostics.hpp"
#include "twin/core/rate.hpp"
#include "twin/core/util.hpp"
#include "twin/drivers/registry.hpp"
#include "twin/runtime/probe_stream.hpp"

namespace twin::traffic {

using nlohmann::json;
using namespace std::chrono_literals;

namespace {

constexpr const char* kIperf = "/usr/bin/iperf3";
constexpr int kFirstPort = 5201;  // iperf3's own default, counted up per pair

// A file's text, "" when it cannot be read (a server's socket table once it has exited).
std::string text_of(const std::string& path) {
  auto t = read_file(path);
  return t ? *t : std::string();
}

// Every node's port counters, read in its namespace (a VM's holds the host ends of its
// links, whose egress carries what the guest sends).
std::map<std::string, std::map<std::string, PortCounters>> read_counters(
    const plan::Plan& plan, proc::ProcessRunner& runner) {
  std::vector<proc::Command> cmds;
  std::vector<const plan::Node*> who;
  for (const auto& n : plan.nodes) {
    if (n.netns.empty() || n.interfaces.empty()) continue;
    cmds.push_back({{"ip", "-n", n.netns, "-s", "-j", "link", "show"}, "", 10s});
    cmds.push_back({{"tc", "-n", n.netns, "-s", "-j", "qdisc", "show"}, "", 10s});
    who.push_back(&n);
  }
  auto res = proc::run_all(runner, cmds, 8);
  std::map<std::string, std::map<std::string, PortCounters>> out;
  for (size_t k = 0; k < who.size(); ++k) {
    const auto& l = res[2 * k];
    const auto& q = res[2 * k + 1];
    if (!l || l->exit_code != 0) continue;
    json links = json::parse(l->out, nullptr, false);
    json qdiscs = q && q->exit_code == 0 ? json::parse(q->out, nullptr, false) : json::array();
    out[who[k]->name] = parse_counters(links, qdiscs);
  }
  return out;
}

std::vector<runtime::StreamFlow> probe_flows(const plan::Plan& plan,
                                             const std::vector<PairSpec>& pairs) {
  std::vector<runtime::StreamFlow> flows;
  for (const auto& p : pairs) {
    const auto* n = plan.find(p.src.node);
    flows.push_back({p.src.node + " -> " + p.dst.node + " " + p.dst.address,
                     drivers::driver_for(*n).packet_namespace(*n), p.src.address, p.dst.address});
  }
  return flows;
}

// An iperf3 process this run started detached: its PID as recorded (with its start time, so a
// reused PID is never signalled).
struct Started {
  int pid = 0;
  uint64_t start_time = 0;
};

std::vector<Started> record(const std::vector<Result<proc::Output>>& launched) {
  std::vector<Started> out(launched.size());
  for (size_t k = 0; k < launched.size(); ++k)
    if (launched[k] && launched[k]->pid > 0)
      out[k] = {launched[k]->pid, process_start_time(launched[k]->pid)};
  return out;
}

// Waits until every process of `procs` has exited, until `deadline` or an interrupt, then ends
// what is left with SIGKILL — by the recorded PID, never by name. True when one had to be.
bool wait_then_kill(const std::vector<Started>& procs,
                    std::chrono::steady_clock::time_point deadline) {
  auto alive = [](const Started& p) {
    return p.pid > 0 && state::process_alive(p.pid, p.start_time);
  };
  while (std::any_of(procs.begin(), procs.end(), alive) && !interrupted() &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(20ms);
  bool killed = false;
  for (const auto& p : procs)
    if (alive(p)) {
      ::kill(p.pid, SIGKILL);
      killed = true;
    }
  return killed;
}

// The probe stream's answered round trips and echoes sent, added to `rtt` and `sent`.
void collect(const runtime::StreamStats& s, std::vector<double>& rtt, long& sent) {
  for (const auto& f : s.flows) {
    rtt.insert(rtt.end(), f.rtt_ms.begin(), f.rtt_ms.end());
    sent += f.sent;
  }
}

}  // namespace

std::string describe_hashing(const std::vector<std::pair<std::string, Hashing>>& by_node) {
  if (by_node.empty()) return "not read (no router)";
  auto words = [](const Hashing& h) {
    std::string s = "policy " + h.policy;
    if (h.policy == "0") s += " (L3: addresses only)";
    if (h.policy == "1") s += " (L4: the socket's flow hash)";
    if (h.policy == "2") s += " (L3, inner headers)";
    if (h.policy == "3") {
      std::string f = h.fields;
      try {
        char buf[16];
        std::snprintf(buf, sizeof buf, "0x%lx", std::stoul(h.fields));
        f = buf;
      } catch (...) {
      }
      s += " (fields " + f + ")";
    }
    return s;
  };
  std::map<std::string, std::vector<std::string>> groups;  // words -> nodes
  std::map<std::string, int> seeds;
  for (const auto& [node, h] : by_node) {
    groups[words(h)].push_back(node);
    ++seeds[h.seed];
  }
  std::string seed;
  if (seeds.size() == 1 && by_node.size() > 1)
    seed = by_node.front().second.seed == "0" ? ", random seeds"
                                              : ", one seed on every node (tiers hash alike)";
  else if (seeds.size() == by_node.size())
    seed = ", a seed per node";
  else
    seed = ", " + std::to_string(seeds.size()) + " seeds over " + std::to_string(by_node.size()) +
           " nodes";
  if (groups.size() == 1) return groups.begin()->first + seed;
  std::string out;
  for (const auto& [w, nodes] : groups)
    out += (out.empty() ? "" : "; ") + w + " on " + join_names(nodes);
  return out + seed;
}

Result<Report> run(const state::State& st, const Options& o, proc::ProcessRunner& runner,
                   const Progress& progress) {
  const auto t0 = std::chrono::steady_clock::now();
  const plan::Plan& plan = st.plan;
  if (::access(kIperf, X_OK) != 0)
    return env_error(
        "iperf3 is missing: twin traffic runs Debian's iperf3 in the lab's namespaces; run "
        "tools/install-deps.sh (package iperf3)");
  std::vector<std::string> skip;
  for (const auto& n : plan.nodes)
    if (drivers::driver_for(n).packet_namespace(n).empty()) skip.push_back(n.name);
  auto pairs = pattern_pairs(o.pattern, endpoints(plan, skip), o.streams, o.incast_to);
  if (!pairs) return pairs.error();
  if (static_cast<int>(pairs->size()) > o.max_pairs)
    return usage_error(std::string("pattern ") + to_string(o.pattern) + " makes " +
                       std::to_string(pairs->size()) + " pairs here (two iperf3 processes each); " +
                       "the limit is " + std::to_string(o.max_pairs) +
                       ": raise --max-pairs, or choose ring or pairs");
  const std::string cgroup = state::cgroup_of(st);
  TempDir dir(state::lab_dir(st.lab));

  Recorded rec;
  rec.duration_s = static_cast<double>(o.duration.count()) / 1000.0;

  // The machine's own floor first: the same echoes on the same pairs, before any load.
  progress("latency without load (" + std::to_string(o.unloaded.count()) + " ms)");
  {
    runtime::ProbeStream floor(probe_flows(plan, *pairs), o.probe_interval);
    if (auto r = floor.start(); r) {
      std::this_thread::sleep_for(o.unloaded);
      collect(floor.stop(), rec.rtt_unloaded, rec.unloaded_sent);
    }
  }

  progress("starting " + std::to_string(pairs->size()) + " iperf3 servers");
  std::vector<int> ports(pairs->size());
  std::vector<proc::Command> starts;
  for (size_t k = 0; k < pairs->size(); ++k) {
    const auto& p = (*pairs)[k];
    const auto* n = plan.find(p.dst.node);
    proc::Command c{{kIperf, "-s", "--one-off", "-p", std::to_string(kFirstPort + k), "-B",
                     p.dst.address, "--json"},
                    "",
                    10s};
    c.netns = drivers::driver_for(*n).packet_namespace(*n);
    c.cgroup = cgroup;
    c.detach = true;
    c.output_file = dir.path + "/server-" + std::to_string(k) + ".json";
    starts.push_back(c);
    ports[k] = kFirstPort + static_cast<int>(k);
  }
  auto started = proc::run_all(runner, starts, 8);
  const std::vector<Started> servers = record(started);
  if (std::none_of(servers.begin(), servers.end(), [](const Started& s) { return s.pid > 0; })) {
    std::string why = started.empty() || started[0] ? "no PID" : started[0].error().message;
    return harness_error("no iperf3 server could start (" + why + ")");
  }
  // Listening, as the server's own namespace's socket table says.
  std::vector<bool> listening(servers.size(), false);
  auto listen_deadline = std::chrono::steady_clock::now() + 5s;
  for (;;) {
    bool all = true;
    for (size_t k = 0; k < servers.size(); ++k) {
      if (servers[k].pid <= 0 || listening[k]) continue;
      const std::string net = "/proc/" + std::to_string(servers[k].pid) + "/net/";
      listening[k] = listening_on(text_of(net + "tcp"), ports[k]) ||
                     listening_on(text_of(net + "tcp6"), ports[k]);
      all = all && listening[k];
    }
    if (all || std::chrono::steady_clock::now() > listen_deadline || interrupted()) break;
    std::this_thread::sleep_for(10ms);
  }
  // --one-off servers exit after their test; one whose client never came is ended, 2 s after
  // the clients.
  auto end_servers = [&] { wait_then_kill(servers, std::chrono::steady_clock::now() + 2s); };
  if (interrupted()) {
    end_servers();
    return Error{ErrorKind::kInterrupted, "interrupted while starting iperf3 servers"};
  }

  progress("running " + std::to_string(pairs->size()) + " clients (" + std::to_string(o.streams) +
           " " + o.protocol + " flow(s) each) for " + std::to_string(o.duration.count() / 1000) +
           " s");
  // Clients start one after another (joining the lab's cgroup takes the kernel milliseconds
  // each: 224 took 4 s here), so each test first runs `omit` seconds that iperf3 leaves out
  // of its figures (-O, meant for TCP's slow start): the measured seconds then start once
  // every client runs, and the flows share the fabric for all of them.
  const int omit_s = std::clamp(static_cast<int>(std::ceil(0.025 * pairs->size())), 1, 10);
  rec.omit_s = omit_s;
  runtime::ProbeStream loaded(probe_flows(plan, *pairs), o.probe_interval);
  bool probing = static_cast<bool>(loaded.start());
  std::vector<proc::Command> clients;
  for (size_t k = 0; k < pairs->size(); ++k) {
    const auto& p = (*pairs)[k];
    const auto* n = plan.find(p.src.node);
    std::vector<std::string> argv = {kIperf,
                                     "-c",
                                     p.dst.address,
                                     "-p",
                                     std::to_string(ports[k]),
                                     "-B",
                                     p.src.address,
                                     "-t",
                                     std::to_string(std::max<long>(1, o.duration.count() / 1000)),
                                     "-P",
                                     std::to_string(o.streams),
                                     "-O",
                                     std::to_string(omit_s),
                                     "--connect-timeout",
                                     "3000",
                                     "--json"};
    if (o.protocol == "udp") {
      uint64_t rate = o.udp_rate_bps;
      if (rate == 0)
        if (const auto* i = plan::find_interface(*n, p.src.interface)) rate = i->rate_bps;
      if (rate == 0) rate = 1'000'000'000ULL;
      // A 4 MB socket buffer, else the sender's own socket drops (DESIGN.md §4a).
      argv.insert(argv.end(), {"-u", "-b", std::to_string(rate), "-w", "4M"});
    }
    proc::Command c{argv, "", 10s};
    c.netns = drivers::driver_for(*n).packet_namespace(*n);
    c.cgroup = cgroup;
    // Detached like the servers, not waited for by a thread each: 224 clients started within
    // 4 s instead of 7 on 2 cores.
    c.detach = true;
    c.output_file = dir.path + "/client-" + std::to_string(k) + ".json";
    clients.push_back(c);
  }
  const auto spawn0 = std::chrono::steady_clock::now();
  auto launched = proc::run_all(runner, clients, 8);
  rec.start_spread_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - spawn0).count();
  // The ports' counters over the measured seconds, as iperf3's figures are: read once the -O
  // seconds are over. Counted from the start, TCP's slow start overshooting into the queues
  // dropped packets at uplinks whose steady load stayed at 77 % of their rate.
  std::this_thread::sleep_until(spawn0 + std::chrono::seconds(omit_s));
  rec.before = read_counters(plan, runner);
  const auto counted_from = std::chrono::steady_clock::now();
  const bool late = wait_then_kill(record(launched), std::chrono::steady_clock::now() + o.duration +
                                                         std::chrono::seconds(omit_s) + 30s);
  if (probing) collect(loaded.stop(), rec.rtt_loaded, rec.loaded_sent);
  rec.after = read_counters(plan, runner);
  rec.counters_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - counted_from).count();
  end_servers();
  if (interrupted()) return Error{ErrorKind::kInterrupted, "interrupted while traffic ran"};

  for (size_t k = 0; k < clients.size(); ++k) {
    std::vector<FlowResult> flows;
    auto fail = [&](std::string why) {
      FlowResult f;
      f.pair = static_cast<int>(k);
      f.error = std::move(why);
      flows.push_back(f);
    };
    if (!launched[k]) {
      fail(launched[k].error().message);
    } else if (servers[k].pid <= 0) {
      fail("its iperf3 server did not start");
    } else {
      std::string out = text_of(clients[k].output_file);
      json j = json::parse(out, nullptr, false);
      if (j.is_discarded() && late)
        fail("iperf3 did not finish within its test and 30 s (killed)");
      else if (j.is_discarded())
        fail("iperf3 printed no JSON: " + trim_end(out.substr(0, 200)));
      else
        flows = parse_iperf_client(j, static_cast<int>(k), o.streams);
    }
    rec.flows.insert(rec.flows.end(), flows.begin(), flows.end());
  }

  Report r = summarize(plan, *pairs, std::move(rec));
  r.pattern = o.pattern;
  r.protocol = o.protocol;
  std::vector<std::pair<std::string, Hashing>> hashing;
  for (const auto& n : plan.nodes) {
    if (n.kind != topology::NodeKind::kFrr) continue;
    const auto& d = drivers::driver_for(n);
    auto p = d.read_sysctl(n, "net.ipv4.fib_multipath_hash_policy");
    if (!p) continue;
    Hashing h{*p, "", ""};
    if (auto f = d.read_sysctl(n, "net.ipv4.fib_multipath_hash_fields")) h.fields = *f;
    if (auto s = d.read_sysctl(n, "net.ipv4.fib_multipath_hash_seed")) h.seed = *s;
    hashing.push_back({n.name, h});
  }
  r.hash_policy = describe_hashing(hashing);
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace twin::traffic
