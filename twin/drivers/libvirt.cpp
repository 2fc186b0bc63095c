#include "twin/drivers/libvirt.hpp"

#include <cstring>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>

#include "twin/core/util.hpp"
#include "twin/drivers/libvirt_vm.hpp"
#include "twin/drivers/netns.hpp"
#include "twin/runtime/agent.hpp"
#include "twin/wiring/wiring.hpp"

namespace twin::drivers {

// Outcome of one iputils ping run in a guest, from its exit code and its messages (ping has no
// machine-readable output): 0 = a reply; 1 = no reply; 2 = an error.
runtime::PingResult guest_ping_result(int exit_code, const std::string& out) {
  runtime::PingResult r;
  std::string low = out;
  for (auto& c : low) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  auto has = [&](const char* s) { return low.find(s) != std::string::npos; };
  if (exit_code == 0) {
    r.outcome = runtime::PingOutcome::kReply;
    if (auto at = out.find("time="); at != std::string::npos)
      r.rtt_ms = std::atof(out.c_str() + at + 5);
    return r;
  }
  if (has("message too long") || has("frag needed") || has("packet too big")) {
    r.outcome = runtime::PingOutcome::kTooBig;
    for (const char* key : {"mtu=", "mtu: ", "mtu = "})
      if (auto at = low.find(key); at != std::string::npos)
        r.mtu = std::atoi(out.c_str() + at + std::strlen(key));
  } else if (has("network is unreachable") || has("no route to host") ||
             has("destination host unreachable") || has("destination unreachable")) {
    r.outcome = runtime::PingOutcome::kNoRoute;
  } else if (exit_code == 1) {
    r.outcome = runtime::PingOutcome::kTimeout;
  } else {
    r.outcome = runtime::PingOutcome::kError;
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

std::string guest_ping_script(const std::vector<runtime::PingRequest>& reqs) {
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

std::vector<runtime::PingResult> parse_guest_pings(const std::string& out, size_t n) {
  std::vector<runtime::PingResult> res(n);
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

namespace {

bool has_agent(const plan::Node& n) { return runtime::guest_readable(n); }

class LibvirtDriver final : public NodeDriver {
 public:
  const char* name() const override { return "libvirt"; }

  Result<void> preflight(std::vector<plan::Node*>& nodes, const DriverSettings& settings,
                         proc::ProcessRunner&) const override {
    for (auto* n : nodes) n->vm.uri = settings.libvirt_uri;
    return vm_preflight(nodes, settings.libvirt_uri);
  }

  // KVM or TCG, decided once per requested accelerator (a trial boot is recorded too).
  Result<void> prepare(std::vector<plan::Node*>& nodes, BuildContext& ctx) const override {
    std::map<std::string, AccelChoice> chosen;
    for (auto* n : nodes) {
      auto it = chosen.find(n->vm.accel);
      if (it == chosen.end()) {
        auto c = choose_accel(n->vm.accel, ctx.settings.libvirt_uri, ctx.settings.trial_image_dir,
                              ctx.record, ctx.progress);
        if (!c) return c.error().with_context("choosing KVM or TCG");
        ctx.progress("VMs run with " + c->why);
        it = chosen.emplace(n->vm.accel, *c).first;
      }
      n->vm.domain_type = it->second.domain_type;
      n->vm.accel_reason = it->second.why;
    }
    return {};
  }

  std::vector<std::pair<std::string, std::string>> namespace_sysctls(
      const plan::Node&) const override {
    return wiring::wire_sysctls();
  }
  Result<void> create(const std::vector<const plan::Node*>& nodes,
                      BuildContext& ctx) const override {
    return start_vms(nodes, ctx);
  }
  Result<void> wait_ready(const std::vector<const plan::Node*>& nodes,
                          BuildContext& ctx) const override {
    return wait_vms_ready(nodes, ctx);
  }
  void remove(const state::State& st, proc::ProcessRunner& runner, Teardown& out) const override {
    remove_vms(st, runner, out);
  }
  bool ports_in_namespace() const override { return false; }
  bool links_change_live() const override { return false; }
  std::chrono::seconds ready_timeout(const plan::Node& node) const override {
    return std::chrono::seconds(node.vm.ready_timeout_s);
  }

  Result<nlohmann::json> kernel_table(const plan::Node& node, runtime::KernelTable table,
                                      std::string* how) const override {
    if (how)
      *how = std::string(node.vm.agent == "ssh" ? "guest over ssh: " : "guest agent: ") +
             runtime::guest_table_command(node, table);
    // Its namespace only holds the host ends of its wires: the ports are the guest's.
    if (!has_agent(node)) return runtime::no_agent(node);
    return runtime::guest_table(node, table);
  }

  Result<nlohmann::json> ip_json(const plan::Node& node, const std::vector<std::string>& args,
                                 proc::ProcessRunner&, std::string* how) const override {
    runtime::KernelTable table;
    if (runtime::kernel_table_of(args, &table)) return kernel_table(node, table, how);
    if (how) *how = "ip " + proc::render(args);
    return harness_error("node " + node.name +
                         " is a VM: only link, address and route tables are read from it");
  }

  // FRR inside a VM (a NOS with the agent) answers through its own vtysh.
  Result<nlohmann::json> frr_json(const plan::Node& node, const std::string&,
                                  const std::string& command, std::string* how) const override {
    if (how) *how = "guest vtysh: " + command;
    if (!has_agent(node)) return runtime::no_agent(node);
    auto r =
        runtime::guest_exec(node, runtime::guest_vtysh(node) + " -c " + runtime::sh_quote(command));
    if (!r) return r.error();
    auto j = nlohmann::json::parse(r->output, nullptr, false);
    if (r->exit_code != 0 || j.is_discarded())
      return harness_error("node " + node.name +
                           ": vtysh in the guest: " + r->output.substr(0, 200));
    return ok(std::move(j));
  }

  std::vector<runtime::PingResult> ping(
      const plan::Node& node, const std::vector<runtime::PingRequest>& requests) const override {
    runtime::PingResult e;
    if (!has_agent(node)) {
      e.detail = runtime::no_agent(node).message;
      return std::vector<runtime::PingResult>(requests.size(), e);
    }
    std::chrono::milliseconds longest{0};
    for (const auto& q : requests) longest = std::max(longest, q.timeout * std::max(1, q.count));
    auto r =
        runtime::guest_exec(node, guest_ping_script(requests), longest + std::chrono::seconds(10));
    if (r) return parse_guest_pings(r->output, requests.size());
    e.detail = r.error().message;
    return std::vector<runtime::PingResult>(requests.size(), e);
  }

  // A VM's interfaces are the guest's: each line runs as `ip <line>` inside it (twin's agent),
  // and an MTU change is mirrored on the host side of the wire (veth end and tap in the node's
  // namespace) so frames of the new size pass.
  Result<void> change_interfaces(const plan::Node& n, const std::string& script,
                                 const std::string& what,
                                 proc::ProcessRunner& runner) const override {
    if (!has_agent(n))
      return usage_error(what + ": " + runtime::no_agent(n).message +
                         "; change its interfaces in the NOS (twin console " + n.name + ")");
    std::string host;
    std::istringstream in(script);
    for (std::string line; std::getline(in, line);) {
      if (line.empty()) continue;
      // A NOS login changes its interfaces through sudo, as it runs vtysh.
      auto r = runtime::guest_exec(
          n, (n.vm.vtysh.rfind("sudo ", 0) == 0 && n.vm.agent == "ssh" ? "sudo -n ip " : "ip ") +
                 line);
      if (!r) return r.error().with_context(what);
      if (r->exit_code != 0)
        return harness_error(what + ": in the guest, ip " + line + ": " + r->output);
      std::istringstream words(line);
      std::vector<std::string> w{std::istream_iterator<std::string>(words), {}};
      // "link set dev IF mtu N"
      if (w.size() == 6 && w[0] == "link" && w[1] == "set" && w[2] == "dev" && w[4] == "mtu")
        for (const auto& i : n.interfaces)
          if (i.name == w[3])
            host += "link set dev " + i.name + " mtu " + w[5] + "\nlink set dev " + i.tap +
                    " mtu " + w[5] + "\n";
    }
    if (auto r = wiring::run_batch(runner, host, n.netns, what + ": host side of the VM's links");
        !r)
      return r;
    return {};
  }

  Result<nlohmann::json> port_table(const plan::Node& node) const override {
    if (has_agent(node)) return runtime::guest_table(node, runtime::KernelTable::kLinks);
    // Without an agent: the host ends of its wires, which carry the ports' names.
    return runtime::kernel_json(node.netns, runtime::KernelTable::kLinks);
  }

  Result<nlohmann::json> artifact_ip_json(const plan::Node& node,
                                          const std::vector<std::string>& args,
                                          proc::ProcessRunner& runner) const override {
    // The guest's tables (its namespace only holds the wires' host ends); `-s` has no meaning
    // for twin-json.
    runtime::KernelTable table;
    std::vector<std::string> plain = args;
    std::erase(plain, "-s");
    if (has_agent(node) && runtime::kernel_table_of(plain, &table))
      return runtime::guest_table(node, table);
    return NodeDriver::artifact_ip_json(node, args, runner);
  }

  nlohmann::json status(const plan::Node& node) const override { return {{"vm", vm_status(node)}}; }

  std::vector<state::ProcessHealth> process_health(
      const plan::Node& node, const std::vector<state::Resource>& recorded) const override {
    std::vector<state::ProcessHealth> out{vm_process_health(node)};
    // On the management network: the DHCP server its guest takes (and renews) its address from.
    if (!node.vm.mgmt_netns.empty()) {
      state::ProcessHealth h{plan::kMgmtDhcpProcess};
      if (const auto* r = state::find_process(recorded, plan::kMgmtDhcpProcess, "")) {
        h.pid = r->pid;
        h.running = state::process_alive(r->pid, r->start_time);
      }
      if (!h.running)
        h.detail = std::string(h.pid ? "exited" : "no process recorded") +
                   ": the lab's DHCP server for its VMs (twin restart " + node.name +
                   " --daemon dnsmasq brings it back)";
      out.push_back(std::move(h));
    }
    return out;
  }

  int exec(const state::State& st, const plan::Node& node,
           const std::vector<std::string>& argv) const override {
    if (has_agent(node)) {
      if (argv.empty()) {
        std::cerr << "twin: node " << node.name << " is a VM: `twin console " << node.name
                  << "` attaches to its shell\n";
        return 2;
      }
      std::string line;
      for (const auto& a : argv) line += (line.empty() ? "" : " ") + runtime::sh_quote(a);
      auto r = runtime::guest_exec(node, line, std::chrono::seconds(120));
      if (!r) {
        std::cerr << "twin: " << r.error().message << "\n";
        return exit_code(r.error());
      }
      std::cout << r->output << (r->output.empty() ? "" : "\n");
      return r->exit_code;
    }
    // Without an agent the command runs in the VM's namespace, where mgmt0 (when the image has
    // a management NIC) reaches the guest's management port, e.g. for ssh.
    std::cerr << "twin: " << runtime::no_agent(node).message << "; running in its namespace "
              << node.netns << " (the host side of its ports)\n";
    std::vector<std::pair<std::string, std::string>> binds;
    if (node.kind == topology::NodeKind::kFrr)
      binds = {{node.run_dir, "/run/frr"}, {node.run_dir, "/etc/frr"}};
    return exec_in_netns(st, node.netns, node.name, binds, argv);
  }

  bool has_console() const override { return true; }
};

}  // namespace

const NodeDriver& libvirt_driver() {
  static const LibvirtDriver d;
  return d;
}

}  // namespace twin::drivers
