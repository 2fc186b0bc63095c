#include "twin/validate/system_probe.hpp"

#include <cstring>
#include <nlohmann/json.hpp>
#include <sstream>

#include "twin/core/util.hpp"
#include "twin/runtime/agent.hpp"
#include "twin/runtime/frr.hpp"
#include "twin/runtime/netlink.hpp"

namespace twin::validate {

namespace {

// FRR inside a VM (a NOS with the agent) answers through its own vtysh.
Result<nlohmann::json> guest_frr_json(const plan::Node& node, const std::string& command) {
  if (node.vm.agent != "twin") return runtime::no_agent(node);
  auto r = runtime::agent_exec(node.vm.agent_socket, "vtysh -c " + runtime::sh_quote(command));
  if (!r) return r.error();
  auto j = nlohmann::json::parse(r->output, nullptr, false);
  if (r->exit_code != 0 || j.is_discarded())
    return harness_error("node " + node.name + ": vtysh in the guest: " + r->output.substr(0, 200));
  return ok(std::move(j));
}

}  // namespace

// Outcome of one iputils ping run in a guest, from its exit code and its messages (ping has no
// machine-readable output): 0 = a reply; 1 = no reply; 2 = an error.
PingResult guest_ping_result(int exit_code, const std::string& out) {
  PingResult r;
  std::string low = out;
  for (auto& c : low) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  auto has = [&](const char* s) { return low.find(s) != std::string::npos; };
  if (exit_code == 0) {
    r.outcome = PingOutcome::kReply;
    if (auto at = out.find("time="); at != std::string::npos)
      r.rtt_ms = std::atof(out.c_str() + at + 5);
    return r;
  }
  if (has("message too long") || has("frag needed") || has("packet too big")) {
    r.outcome = PingOutcome::kTooBig;
    for (const char* key : {"mtu=", "mtu: ", "mtu = "})
      if (auto at = low.find(key); at != std::string::npos)
        r.mtu = std::atoi(out.c_str() + at + std::strlen(key));
  } else if (has("network is unreachable") || has("no route to host") ||
             has("destination host unreachable") || has("destination unreachable")) {
    r.outcome = PingOutcome::kNoRoute;
  } else if (exit_code == 1) {
    r.outcome = PingOutcome::kTimeout;
  } else {
    r.outcome = PingOutcome::kError;
  }
  // The line that says what happened: an error or unreachable line, else the first one.
  std::string pick, line;
  std::istringstream lines(out);
  while (std::getline(lines, line)) {
    std::string l = line;
    for (auto& c : l) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (pick.empty() && !line.empty()) pick = line;
    if (l.find("error") != std::string::npos || l.find("unreachable") != std::string::npos ||
        l.find("invalid") != std::string::npos) {
      pick = line;
      break;
    }
  }
  r.detail = "in the guest: " + pick;
  return r;
}

std::string guest_ping_script(const std::vector<PingRequest>& reqs) {
  std::string s;
  for (size_t k = 0; k < reqs.size(); ++k) {
    const auto& q = reqs[k];
    long wait_s = std::max<long>(1, static_cast<long>((q.timeout.count() + 999) / 1000));
    // Absolute: busybox sh runs its own applets before PATH, and busybox ping cannot set DF.
    std::string cmd = "/usr/bin/ping -n -c " + std::to_string(std::max(1, q.count)) +
                      " -i 0.2 -W " + std::to_string(wait_s) + " -w " + std::to_string(wait_s + 1) +
                      " -s " + std::to_string(q.payload_bytes);
    if (q.dont_fragment) cmd += " -M do";
    if (!q.interface.empty())
      cmd += " -I " + runtime::sh_quote(q.interface);
    else if (!q.source.empty())
      cmd += " -I " + runtime::sh_quote(q.source);
    cmd += " " + runtime::sh_quote(q.destination);
    std::string f = "/tmp/twin-ping." + std::to_string(k);
    s += "(" + cmd + " >" + f + " 2>&1; echo \"@rc $?\" >>" + f + ") & ";
  }
  s += "wait; for k in";
  for (size_t k = 0; k < reqs.size(); ++k) s += " " + std::to_string(k);
  s += "; do echo \"@@ $k\"; cat /tmp/twin-ping.$k; done; rm -f /tmp/twin-ping.*";
  return s;
}

std::vector<PingResult> parse_guest_pings(const std::string& out, size_t n) {
  std::vector<PingResult> res(n);
  for (auto& r : res) r.detail = "no result from the guest";
  size_t pos = 0;
  while ((pos = out.find("@@ ", pos)) != std::string::npos) {
    size_t k = static_cast<size_t>(std::atol(out.c_str() + pos + 3));
    size_t body = out.find('\n', pos);
    if (body == std::string::npos) break;
    size_t next = out.find("@@ ", body);
    std::string block =
        out.substr(body + 1, next == std::string::npos ? std::string::npos : next - body - 1);
    int rc = 2;
    if (auto at = block.rfind("@rc "); at != std::string::npos) {
      rc = std::atoi(block.c_str() + at + 4);
      block.erase(at);
    }
    if (k < n) res[k] = guest_ping_result(rc, block);
    pos = body;
  }
  return res;
}

Result<nlohmann::json> SystemProbe::frr_json(const plan::Node& node, const std::string& daemon,
                                             const std::string& command) {
  auto t = Clock::now();
  if (plan::is_vm(node)) {
    auto r = guest_frr_json(node, command);
    record({node.name, "guest vtysh: " + command, r ? r->dump() : "error: " + r.error().message,
            ms_since(t)});
    return r;
  }
  auto r = runtime::show_json(node, daemon, command);
  record({node.name, daemon + ".vty: " + command, r ? r->dump() : "error: " + r.error().message,
          ms_since(t)});
  return r;
}

Result<nlohmann::json> SystemProbe::ip_json(const plan::Node& node,
                                            const std::vector<std::string>& args) {
  auto t = Clock::now();
  runtime::KernelTable table;
  // The tables validators read come over netlink in-process, in `ip -j`'s shape; anything else
  // runs `ip` itself.
  bool netlink = runtime::kernel_table_of(args, &table);
  if (netlink) {
    auto r = runtime::node_table(node, table);
    record({node.name,
            (plan::is_vm(node) ? "guest agent: " + runtime::guest_table_command(table)
                               : "netlink (as ip -j " + proc::render(args) + ")"),
            r ? r->dump() : "error: " + r.error().message, ms_since(t)});
    return r;
  }
  if (plan::is_vm(node)) {
    Result<nlohmann::json> r = harness_error("node " + node.name +
                                             " is a VM: only link, address and route tables are "
                                             "read from it");
    record({node.name, "ip " + proc::render(args), "error: " + r.error().message, ms_since(t)});
    return r;
  }
  auto r = runtime::ip_json(runner_, node.netns, args);
  record({node.name, "ip -n " + node.netns + " -j " + proc::render(args),
          r ? r->dump() : "error: " + r.error().message, ms_since(t)});
  return r;
}

std::vector<PingResult> SystemProbe::ping(const plan::Node& node,
                                          const std::vector<PingRequest>& requests) {
  auto t = Clock::now();
  std::vector<PingResult> results;
  if (!plan::is_vm(node)) {
    results = ping_many(node.netns, requests);
  } else if (node.vm.agent != "twin") {
    PingResult e;
    e.detail = runtime::no_agent(node).message;
    results.assign(requests.size(), e);
  } else {
    std::chrono::milliseconds longest{0};
    for (const auto& q : requests) longest = std::max(longest, q.timeout * std::max(1, q.count));
    auto r = runtime::agent_exec(node.vm.agent_socket, guest_ping_script(requests),
                                 longest + std::chrono::seconds(10));
    if (r) {
      results = parse_guest_pings(r->output, requests.size());
    } else {
      PingResult e;
      e.detail = r.error().message;
      results.assign(requests.size(), e);
    }
  }
  std::string out;
  for (size_t i = 0; i < requests.size() && i < results.size(); ++i) {
    const auto& q = requests[i];
    const auto& a = results[i];
    out += q.destination + (q.interface.empty() ? "" : "%" + q.interface) +
           (q.source.empty() ? "" : " from " + q.source) + " size " +
           std::to_string(q.payload_bytes) + (q.dont_fragment ? " DF" : "") + ": " +
           to_string(a.outcome) + (a.rtt_ms >= 0 ? " " + std::to_string(a.rtt_ms) + " ms" : "") +
           (a.detail.empty() ? "" : " (" + a.detail + ")") + "\n";
  }
  record({node.name, "ping x" + std::to_string(requests.size()), out, ms_since(t)});
  return results;
}

void SystemProbe::record(ProbeRecord r) {
  std::lock_guard lk(mu_);
  records_.push_back(std::move(r));
}

std::vector<ProbeRecord> SystemProbe::records() const {
  std::lock_guard lk(mu_);
  return records_;
}

}  // namespace twin::validate
