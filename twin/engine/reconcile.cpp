#include "twin/engine/reconcile.hpp"
#include "twin/engine/lab.hpp"

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <future>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <thread>

#include "twin/core/util.hpp"
#include "twin/drivers/registry.hpp"
#include "twin/drivers/ssh.hpp"
#include "twin/graph/inventory.hpp"
#include "twin/runtime/netlink.hpp"
#include "twin/state/state.hpp"
#include "twin/wiring/mgmt.hpp"
#include "twin/wiring/wiring.hpp"

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace twin::engine {

namespace {

using drivers::driver_for;

// A link's identity: its two ends, in a fixed order.
std::string link_key(const plan::Link& l) {
  std::string a = l.a_node + ":" + l.a_interface, b = l.b_node + ":" + l.b_interface;
  return a < b ? a + "--" + b : b + "--" + a;
}

struct Delta {
  std::vector<const plan::Node*> add_nodes, remove_nodes, reconfigure;
  // Nodes that stay with other routing daemons (a change's lines need one): their `to` node.
  std::vector<const plan::Node*> daemons;
  // Nodes that stay with other tenant devices (VNIs, bridged ports): their `to` node.
  std::vector<const plan::Node*> vteps;
  std::vector<const plan::Link*> add_links, remove_links, mtu_links;
};

Delta compute(const plan::Plan& from, const plan::Plan& to) {
  Delta d;
  for (const auto& n : to.nodes) {
    const plan::Node* old = from.find(n.name);
    if (!old) {
      d.add_nodes.push_back(&n);
      continue;
    }
    if (n.kind == topology::NodeKind::kFrr && n.config_generated && old->config_generated &&
        n.frr_config != old->frr_config)
      d.reconfigure.push_back(&n);
    if (!driver_for(n).vtep_change_script(*old, n).empty()) d.vteps.push_back(&n);
    if (old->daemons != n.daemons) d.daemons.push_back(&n);
  }
  for (const auto& n : from.nodes)
    if (!to.find(n.name)) d.remove_nodes.push_back(&n);
  std::map<std::string, const plan::Link*> old_links, new_links;
  for (const auto& l : from.links) old_links[link_key(l)] = &l;
  for (const auto& l : to.links) new_links[link_key(l)] = &l;
  for (const auto& l : to.links) {
    auto it = old_links.find(link_key(l));
    if (it == old_links.end())
      d.add_links.push_back(&l);
    else if (it->second->mtu != l.mtu)
      d.mtu_links.push_back(&l);
  }
  for (const auto& l : from.links)
    if (!new_links.count(link_key(l))) d.remove_links.push_back(&l);
  return d;
}

std::string names(const std::vector<const plan::Node*>& v) {
  std::string s;
  for (const auto* n : v) s += (s.empty() ? "" : ", ") + n->name;
  return s;
}
std::string names(const std::vector<const plan::Link*>& v) {
  std::string s;
  for (const auto* l : v) s += (s.empty() ? "" : ", ") + link_key(*l);
  return s;
}

Result<void> check_interrupt(const std::string& step) {
  if (interrupted()) return Error{ErrorKind::kInterrupted, "interrupted during " + step};
  return {};
}

// Runs fn for each node, `parallel` at a time; the first error (in input order) names its node.
Result<void> for_each_node(const std::vector<const plan::Node*>& nodes, int parallel,
                           const std::function<Result<void>(const plan::Node&)>& fn) {
  std::vector<std::optional<Error>> errors(nodes.size());
  parallel_for(nodes.size(), parallel, [&](size_t i) {
    if (auto r = fn(*nodes[i]); !r) errors[i] = r.error().with_context("node " + nodes[i]->name);
  });
  for (auto& e : errors)
    if (e) return *e;
  return {};
}

// What a running lab cannot do to nodes whose driver fixes their links while they run.
Result<void> check_changes(const plan::Plan& from, const plan::Plan& to, const Delta& d) {
  for (const auto& n : to.nodes)
    if (const auto* old = from.find(n.name); old && (old->kind != n.kind || old->image != n.image))
      return input_error("node " + n.name + " changes kind or image (" + to_string(old->kind) +
                         "/" + old->image + " -> " + to_string(n.kind) + "/" + n.image +
                         "); that needs a new lab (twin down; twin up)");
  if (from.nodes.empty()) return {};  // a new lab: every node is created, whatever its driver
  if (bool(from.mgmt) != bool(to.mgmt) ||
      (from.mgmt && (from.mgmt->subnet != to.mgmt->subnet ||
                     from.mgmt->interface != to.mgmt->interface ||
                     from.mgmt->user != to.mgmt->user)))
    return input_error(
        "a topology step changes the management network (`mgmt:`); that needs a new lab (twin "
        "down; twin up)");
  auto fixed = [&](const std::string& name) {
    const auto* n = to.find(name);
    if (!n) n = from.find(name);
    return n && !driver_for(*n).links_change_live();
  };
  for (const auto* set : {&d.add_nodes, &d.remove_nodes})
    for (const auto* n : *set)
      if (fixed(n->name))
        return input_error("a topology step adds or removes VM node " + n->name +
                           ", which a running lab cannot do; that needs a new lab (twin down; "
                           "twin up)");
  for (const auto* set : {&d.add_links, &d.remove_links, &d.mtu_links})
    for (const auto* l : *set)
      if (fixed(l->a_node) || fixed(l->b_node))
        return input_error("a topology step changes the links of VM node " +
                           (fixed(l->a_node) ? l->a_node : l->b_node) +
                           ", whose NICs are fixed while it runs; that needs a new lab "
                           "(twin down; twin up), or for an MTU a `link` or `interface` step");
  return {};
}

bool has_interface(const std::string& netns, const std::string& ifname) {
  auto links = runtime::kernel_json(netns, runtime::KernelTable::kLinks);
  if (!links) return true;  // cannot tell: let the removal say what is wrong
  for (const auto& l : *links)
    if (l.value("ifname", "") == ifname) return true;
  return false;
}

// Stops a node's recorded processes (by recorded PID and start time only), then removes its
// namespace and run folder, and drops its resources from the record.
Result<void> remove_node(drivers::Record& rec, const plan::Node& n, proc::ProcessRunner& runner) {
  std::vector<state::Resource> procs;
  for (const auto& r : rec.state().resources)
    if (r.kind == "process" && r.node == n.name) procs.push_back(r);
  if (auto r = state::stop_processes(procs, n.name); !r) return r;
  if (fs::exists("/run/netns/" + n.netns))
    if (auto r = wiring::run_batch(runner, wiring::netns_del_script({n.netns}), "",
                                   "removing namespace of " + n.name, false);
        !r)
      return r;
  std::error_code ec;
  fs::remove_all(n.run_dir, ec);
  if (ec) return harness_error("removing " + n.run_dir + ": " + ec.message());
  for (const char* kind : {"process", "netns", "dir"})
    std::erase_if(rec.state().resources, [&](const state::Resource& r) {
      return r.node == n.name && r.kind == kind;
    });
  return rec.save();
}

// One reconcile's shared context and its steps, in the order `reconcile` runs them. What stays
// changes before what goes (a config naming an interface about to go is removed while it
// exists), what goes before what comes, and every resource that comes is recorded in the
// state before it is created: an error at any step leaves what was recorded recorded, so
// `down` removes it.
// Twin's DHCP server for a lab's VM members (wiring/mgmt.hpp mgmt_dhcp_argv), before any VM
// boots: started when none runs (a dead one's record dropped first), told to reread its leases
// (SIGHUP) when one does, e.g. for a VM a change step adds. Returns the PID it runs as.
Result<int> serve_mgmt_dhcp(const plan::Plan& to, drivers::BuildContext& ctx) {
  const plan::Mgmt& m = *to.mgmt;
  const std::string hosts = to.run_dir + "/mgmt-dhcp-hosts";
  if (auto w = write_file(hosts, wiring::mgmt_dhcp_hosts(to)); !w) return w.error();
  int running = 0;
  for (auto& r : ctx.record.take("process", "")) {
    const bool dhcp = r.name == plan::kMgmtDhcpProcess;
    const bool dead_dhcp = dhcp && !state::process_alive(r.pid, r.start_time);
    if (dhcp && !dead_dhcp) running = r.pid;
    if (!dead_dhcp) ctx.record.note(std::move(r));
  }
  if (running) {
    ::kill(running, SIGHUP);
    return running;
  }
  proc::Command c{wiring::mgmt_dhcp_argv(m, hosts), "", std::chrono::seconds(10), m.netns,
                  ctx.record.cgroup()};
  c.output_file = to.run_dir + "/mgmt-dhcp.log";
  std::error_code ec;
  const auto from = fs::exists(c.output_file) ? fs::file_size(c.output_file, ec) : 0;  // appended
  c.detach = true;
  c.cancellable = false;  // its PID must be noted once it runs
  auto r = proc::run_checked(ctx.runner, c, "starting dnsmasq (DHCP for the lab's VMs)");
  if (!r) return r.error();
  ctx.record.note(
      {"process", plan::kMgmtDhcpProcess, "", r->pid, state::process_start_time(r->pid)});
  if (auto saved = ctx.record.save(); !saved) return saved.error();
  // Ready once it logs its DHCP range ("DHCP, static leases only on ..."); one that exits (a
  // bad option, the address taken) says why in its log.
  const auto until = Clock::now() + std::chrono::seconds(5);
  for (;;) {
    auto log = read_file(c.output_file);
    if (log && log->find("DHCP, ", from) != std::string::npos) return r->pid;
    const bool alive = state::process_alive(r->pid, 0);
    if (!alive || Clock::now() > until)
      return harness_error(
          std::string("dnsmasq (DHCP for the lab's VMs) ") +
          (alive ? "did not start within 5 s" : "exited") +
          (log && log->size() > from ? ": " + trim_end(log->substr(from)) : std::string()));
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

struct Reconciler {
  Reconciler(const plan::Plan& from, const plan::Plan& to, const Delta& d,
             drivers::BuildContext& ctx, GrowReport& rep)
      : from(from), to(to), d(d), ctx(ctx), rep(rep) {}

  const plan::Plan& from;
  const plan::Plan& to;
  const Delta& d;
  drivers::BuildContext& ctx;
  GrowReport& rep;
  proc::ProcessRunner& runner = ctx.runner;
  const int parallel = ctx.settings.parallel;
  const Clock::time_point wiring_start = Clock::now();
  std::future<Result<void>> files;  // the new nodes' files, written beside the kernel's work
  std::future<Result<void>> ssh_files;  // their sshd files (host keys), beside the daemons' start
  std::mutex mu;                    // progress lines and the report, from parallel nodes

  // Routing daemons of nodes that stay: a daemon the new configuration needs runs before its
  // lines are applied; one no longer listed stops. Saved at once: `down` stops by record.
  Result<void> change_daemons() {
    if (d.daemons.empty()) return {};
    auto r = for_each_node(d.daemons, parallel, [&](const plan::Node& n) -> Result<void> {
      return driver_for(n).change_daemons(*from.find(n.name), n, ctx);
    });
    for (const auto* n : d.daemons) rep.daemons_changed.push_back(n->name);
    if (auto s = ctx.record.save(); !s) return s;
    if (!r) return r.error();
    return {};
  }

  // Generated configs of nodes that stay, as a difference, before any link goes: configuration
  // that names an interface about to go must be removed while the interface exists (FRR
  // accepts configuration for an interface that does not exist yet).
  Result<void> reconfigure() {
    auto r = for_each_node(d.reconfigure, parallel, [&](const plan::Node& n) -> Result<void> {
      std::string path = n.run_dir + "/frr.conf.next";
      if (auto w = write_file(path, n.frr_config); !w) return w.error();
      return driver_for(n).reload_config(n, path, false, nullptr, runner);
    });
    for (const auto* n : d.reconfigure) rep.reconfigured.push_back(n->name);
    if (!r) return r.error();
    return {};
  }

  // Links that go away (a removed node's links vanish with its namespace). Deleting one end of
  // a veth deletes the pair; a link an interrupted reconcile never made is already gone.
  Result<void> remove_links() {
    for (const auto* l : d.remove_links) {
      const bool a_stays = to.find(l->a_node) != nullptr;
      if (!a_stays && !to.find(l->b_node)) continue;
      const plan::Node* end = a_stays ? from.find(l->a_node) : from.find(l->b_node);
      const std::string& ifname = a_stays ? l->a_interface : l->b_interface;
      if (has_interface(end->netns, ifname))
        if (auto r = wiring::run_batch(runner, "link del dev " + ifname + "\n", end->netns,
                                       "removing link " + link_key(*l));
            !r)
          return r;
      rep.removed_links.push_back(link_key(*l));
    }
    return {};
  }

  Result<void> remove_nodes() {
    for (const auto* n : d.remove_nodes) {
      if (auto r = remove_node(ctx.record, *n, runner); !r) return r;
      rep.removed_nodes.push_back(n->name);
    }
    return {};
  }

  // New nodes' namespaces and run folders, recorded before any of them is created.
  Result<void> record_new_nodes() {
    if (d.add_nodes.empty()) return {};
    std::vector<state::Resource> rs;
    for (const auto* n : d.add_nodes) {
      if (!from.nodes.empty() && fs::exists("/run/netns/" + n->netns))
        return usage_error("network namespace " + n->netns + " already exists (node " + n->name +
                           "); another lab or program owns it");
      rs.push_back({"netns", n->netns, n->name});
    }
    for (const auto* n : d.add_nodes) rs.push_back({"dir", n->run_dir, n->name});
    if (auto r = ctx.record.add(std::move(rs)); !r) return r;
    return check_interrupt("namespace creation");
  }

  // The management network (wiring/mgmt.hpp) when the lab gains it, recorded before it exists:
  // its namespace, the host's veth and the nftables table. Refused when the host already routes
  // its subnet (another lab's management network, or a network of the host's own).
  bool new_mgmt() const { return to.mgmt && !from.mgmt; }
  Result<void> record_mgmt() {
    if (!new_mgmt()) return {};
    const plan::Mgmt& m = *to.mgmt;
    if (fs::exists("/run/netns/" + m.netns) || fs::exists("/sys/class/net/" + m.host_veth))
      return usage_error("the management network of lab " + to.lab + " exists already (" +
                         m.netns + ", " + m.host_veth + "); another lab or program owns it");
    proc::Command ip{{"ip", "-j", "-4", "route", "show", "table", "all"}, "",
                     std::chrono::seconds(10)};
    auto out = proc::run_checked(runner, ip, "reading this machine's routes");
    if (!out) return out.error();
    const auto subnet = *IpPrefix::parse(m.subnet);
    for (const auto& r : nlohmann::json::parse(out->out, nullptr, false)) {
      if (!r.is_object() || !r.contains("dst") || r.value("type", "unicast") != "unicast")
        continue;
      const std::string dst = r["dst"].get<std::string>();
      auto p = IpPrefix::parse(dst.find('/') == std::string::npos ? dst + "/32" : dst);
      if (!p || p->length == 0) continue;
      if (p->contains(subnet) || subnet.contains(*p)) {
        // Another lab's management network: name the lab, not only its veth.
        const std::string dev = r.value("dev", "?");
        std::string owner = "dev " + dev;
        for (const auto& other : state::list_labs())
          if (auto st = state::load_resources(other))
            for (const auto& res : *st)
              if (res.kind == "host-veth" && res.name == dev)
                owner = "the management network of lab " + other + ", dev " + dev;
        return usage_error("the management subnet " + m.subnet + " overlaps " + dst +
                           ", which this machine already routes (" + owner +
                           "); give the lab another: `mgmt: {subnet: 172.30.N.0/24}`");
      }
    }
    if (auto r = ctx.record.add({{"netns", m.netns, ""},
                                 {"host-veth", m.host_veth, ""},
                                 {"nft-table", m.nft_table, ""}});
        !r)
      return r;
    return check_interrupt("the management network");
  }

  // The management network's bridge and host port (when new), each new member's port and
  // address, and the lab's SSH files. The nftables table comes first: nothing is forwarded
  // into or out of the host's veth from the moment it exists.
  Result<void> wire_mgmt() {
    if (!to.mgmt) return {};
    std::vector<const plan::Node*> members;
    for (const auto* n : d.add_nodes)
      if (!n->mgmt_address.empty()) members.push_back(n);
    if (members.empty() && !new_mgmt()) return {};
    const plan::Mgmt& m = *to.mgmt;
    if (new_mgmt()) {
      proc::Command nft{{"nft", "-f", "-"}, wiring::mgmt_nft_script(m), std::chrono::seconds(10)};
      if (auto r = proc::run_checked(runner, nft, "adding nftables table " + m.nft_table); !r)
        return r.error();
    }
    if (auto r = wiring::run_batch(runner, wiring::mgmt_root_script(to, members, new_mgmt()), "",
                                   "creating the management network");
        !r)
      return r;
    if (auto r = wiring::run_batch(runner, wiring::mgmt_bridge_script(to, members, new_mgmt()),
                                   m.netns, "the management bridge");
        !r)
      return r;
    // IPv4 only: its ports (a VM's tap too, moved in later) send no IPv6 onto the segment.
    if (new_mgmt())
      if (auto r = wiring::apply_sysctls(m.netns, {{"net/ipv6/conf/all/disable_ipv6", "1"},
                                                   {"net/ipv6/conf/default/disable_ipv6", "1"}});
          !r)
        return r.error().with_context("the management namespace");
    if (auto r = for_each_node(members, parallel,
                               [&](const plan::Node& n) {
                                 return wiring::run_batch(runner, wiring::mgmt_node_script(to, n),
                                                          n.netns, "management address");
                               });
        !r)
      return r;
    if (std::any_of(members.begin(), members.end(),
                    [](const plan::Node* n) { return !n->vm.mgmt_netns.empty(); }))
      if (auto r = serve_mgmt_dhcp(to, ctx); !r) return r.error();
    if (new_mgmt())
      if (auto r = drivers::prepare_lab_ssh(to, runner); !r) return r;
    // Host keys and sshd configs on a thread of their own while the daemons start; joined by
    // start_ssh.
    std::vector<const plan::Node*> ssh_nodes;
    for (const auto* n : members)
      if (driver_for(*n).manages_frr(*n)) ssh_nodes.push_back(n);
    ssh_files = std::async(std::launch::async, [this, ssh_nodes]() -> Result<void> {
      for (const auto* n : ssh_nodes)
        if (auto r = drivers::prepare_node_ssh(to, *n, runner); !r) return r;
      return {};
    });
    return {};
  }

  // Each new member's sshd, once its daemons run (a login lands in vtysh).
  Result<void> start_ssh() {
    if (!to.mgmt) return {};
    std::vector<const plan::Node*> members;
    for (const auto* n : d.add_nodes)
      if (!n->mgmt_address.empty() && driver_for(*n).manages_frr(*n)) members.push_back(n);
    if (members.empty()) return {};
    auto t0 = Clock::now();
    if (ssh_files.valid())
      if (auto f = ssh_files.get(); !f) return f;
    // All started, then all waited for: each start is a spawn; sshd's own start-up (~0.1 s,
    // DESIGN.md §4a) overlaps.
    std::vector<int> pids(members.size());
    for (size_t i = 0; i < members.size(); ++i) {
      auto pid = drivers::spawn_node_sshd(to, *members[i], ctx);
      if (!pid) {
        (void)ctx.record.save();
        return pid.error();
      }
      pids[i] = *pid;
    }
    auto saved = ctx.record.save();
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(15);
    for (size_t i = 0; i < members.size(); ++i)
      if (auto w = drivers::wait_node_sshd(*members[i], pids[i], until); !w) return w;
    // The lab's inventories beside its key, for a run step (TWIN_INVENTORY, TWIN_SSH_CONFIG)
    // and for anyone: `twin inventory` writes the same.
    for (const auto& [format, file] :
         {std::pair{"ansible", "inventory.yml"}, std::pair{"ssh-config", "ssh_config"}})
      if (auto text = graph::inventory(to, format); text)
        if (auto w = write_file(to.mgmt->key_dir + "/" + file, *text); !w) return w;
    ctx.progress("sshd on " + std::to_string(members.size()) + " nodes (management network " +
                 to.mgmt->subnet + ") in " + std::to_string(static_cast<int>(ms_since(t0))) +
                 " ms");
    return saved;
  }

  // The run folders are recorded: their files are written on a thread of their own while the
  // kernel creates namespaces and links (those steps keep one core busy, the other idle). On
  // this project's machine kind /run is ext4, not a tmpfs: at 56 nodes the files took 67-183 ms
  // of inode allocation that held the daemons back. Joined in create_nodes.
  Result<void> start_node_files() {
    if (d.add_nodes.empty()) return {};
    files = std::async(std::launch::async, [&added = d.add_nodes]() -> Result<void> {
      for (const auto* n : added) {
        if (interrupted())
          return Error{ErrorKind::kInterrupted, "interrupted while writing node files"};
        if (auto r = driver_for(*n).write_files(*n); !r)
          return r.error().with_context("node " + n->name);
      }
      return {};
    });
    return {};
  }

  // New namespaces, created and set up by their drivers' sysctls.
  Result<void> create_namespaces() {
    if (d.add_nodes.empty()) return {};
    std::string script;
    for (const auto* n : d.add_nodes) script += "netns add " + n->netns + "\n";
    if (auto r = wiring::run_batch(runner, script, "", "creating namespaces"); !r) return r;
    if (auto r = for_each_node(d.add_nodes, parallel,
                               [](const plan::Node& n) {
                                 return wiring::apply_sysctls(
                                     n.netns, driver_for(n).namespace_sysctls(n));
                               });
        !r)
      return r;
    for (const auto* n : d.add_nodes) rep.added_nodes.push_back(n->name);
    return {};
  }

  // What drivers begin once the namespaces exist and finish in create_nodes (a container node's
  // container, created while the links are wired).
  Result<void> begin_nodes() {
    for (const auto& g : drivers::group_by_driver(d.add_nodes))
      if (auto r = g.driver->begin_create(g.nodes, ctx); !r) return r;
    return {};
  }

  // New links: veths live only inside the lab's namespaces and vanish with them, created
  // directly in both with final names, MTU and MAC (the `a` end up).
  Result<void> create_links() {
    if (d.add_links.empty()) return {};
    plan::Plan sub;
    sub.nodes = to.nodes;
    for (const auto* l : d.add_links) sub.links.push_back(*l);
    if (auto r = wiring::run_batch(runner, wiring::veth_script(sub), "", "creating veth links"); !r)
      return r;
    for (const auto* l : d.add_links) rep.added_links.push_back(link_key(*l));
    return {};
  }

  // Up before the daemons start: `lo` of new nodes and the `b` end of every new link, then what
  // the drivers configure on them (a server's addresses and routes). Measured at 56 nodes:
  // starting every daemon on links without carrier and raising them all at once halves the
  // daemon phase, but the simultaneous start of 768 sessions then collides (RFC 4271 6.8) and
  // FRR 8.4 backs off for seconds. Nodes arriving one by one into a running fabric converge as
  // they come.
  Result<void> raise_and_address() {
    std::set<const plan::Node*> added(d.add_nodes.begin(), d.add_nodes.end());
    std::map<std::string, std::vector<std::string>> new_b_ends, new_ends;
    for (const auto* l : d.add_links) {
      new_b_ends[l->b_node].push_back(l->b_interface);
      new_ends[l->a_node].push_back(l->a_interface);
      new_ends[l->b_node].push_back(l->b_interface);
    }
    std::set<const plan::Node*> vteps(d.vteps.begin(), d.vteps.end());
    std::vector<const plan::Node*> touched;
    for (const auto& n : to.nodes)
      if (added.count(&n) || new_ends.count(n.name) || vteps.count(&n)) touched.push_back(&n);
    auto r = for_each_node(touched, parallel, [&](const plan::Node& n) -> Result<void> {
      std::vector<std::string> up;
      if (added.count(&n)) up.push_back("lo");
      if (auto it = new_b_ends.find(n.name); it != new_b_ends.end())
        up.insert(up.end(), it->second.begin(), it->second.end());
      if (!up.empty())
        if (auto u = wiring::links_up(n.netns, up); !u) return u;
      std::string script;
      if (added.count(&n))
        script = driver_for(n).address_script(n, {});
      else if (auto it = new_ends.find(n.name); it != new_ends.end())
        script = driver_for(n).address_script(n, it->second);  // (an empty list means all)
      // Tenant ports of new links exist now: the VTEP's devices follow the target's tenants.
      if (vteps.count(&n)) script += driver_for(n).vtep_change_script(*from.find(n.name), n);
      // Link rates and delays on the new ports' egress (shaping_preflight cleared the delays
      // a kernel without netem cannot add, and said so).
      std::vector<std::string> shaped;
      if (!added.count(&n))
        if (auto it = new_ends.find(n.name); it != new_ends.end()) shaped = it->second;
      const bool shapes = added.count(&n) || !shaped.empty();
      if (shapes) script += wiring::shaping_link_script(n, shaped);
      if (auto b =
              wiring::run_batch(runner, script, n.netns, "addresses, routes and tenant devices");
          !b)
        return b;
      if (!shapes) return {};
      return wiring::run_tc_batch(runner, wiring::shaping_script(n, true, shaped), n.netns,
                                  "node " + n.name + ": link rates");
    });
    for (const auto* n : d.vteps) rep.vteps_changed.push_back(n->name);
    return r;
  }

  // MTU of links that stay.
  Result<void> set_mtus() {
    for (const auto* l : d.mtu_links) {
      for (const auto& [node, ifname] :
           {std::pair{l->a_node, l->a_interface}, {l->b_node, l->b_interface}}) {
        const plan::Node* n = to.find(node);
        if (auto r = wiring::run_batch(
                runner, "link set dev " + ifname + " mtu " + std::to_string(l->mtu) + "\n",
                n->netns, "node " + node);
            !r)
          return r;
      }
      rep.mtu_changed.push_back(link_key(*l));
    }
    return {};
  }

  // Node files (FRR configs; the run folders where a VM's console log and agent socket go;
  // written since start_node_files), then what runs beside the namespaces (VMs), driver by
  // driver. The wiring phase ends here.
  Result<void> create_nodes() {
    if (files.valid())
      if (auto r = files.get(); !r) return r;
    for (const auto& g : drivers::group_by_driver(d.add_nodes)) {
      if (auto r = check_interrupt("node creation"); !r) return r;
      if (auto r = g.driver->create(g.nodes, ctx); !r) return r;
    }
    rep.wiring_ms = ms_since(wiring_start);
    if (!d.add_nodes.empty() || !d.add_links.empty())
      ctx.progress("wired " + std::to_string(d.add_nodes.size()) + " namespaces and " +
                   std::to_string(d.add_links.size()) + " links in " +
                   std::to_string(static_cast<int>(rep.wiring_ms)) + " ms");
    return {};
  }

  // Daemons of new nodes, nodes in parallel. Their PIDs are noted in memory and saved once,
  // whatever happened (the lab's cgroup, recorded earlier, already holds every process).
  Result<void> start_daemons() {
    if (auto r = check_interrupt("daemon start"); !r) return r;
    auto td = Clock::now();
    std::vector<const plan::Node*> start;
    for (const auto* n : d.add_nodes)
      if (!n->daemons.empty()) start.push_back(n);
    std::vector<std::optional<Error>> errors(start.size());
    std::atomic<int> ready{0}, daemons{0};
    parallel_for(start.size(), parallel, [&](size_t i) {
      if (interrupted()) {
        errors[i] = Error{ErrorKind::kInterrupted, "interrupted during daemon start"};
        return;
      }
      auto r = driver_for(*start[i]).start(*start[i], ctx);
      if (!r) {
        // Not twice: a driver's message may name the node already.
        const std::string ctx_name = "node " + start[i]->name;
        errors[i] = r.error().message.rfind(ctx_name + ": ", 0) == 0
                        ? r.error()
                        : r.error().with_context(ctx_name);
        return;
      }
      daemons += *r;
      int k = ++ready;
      std::lock_guard lk(mu);
      ctx.progress("nodes ready " + std::to_string(k) + "/" + std::to_string(start.size()));
    });
    rep.daemons = daemons;
    rep.daemons_ms = ms_since(td);
    auto saved = ctx.record.save();
    for (const auto& e : errors)
      if (e) return *e;
    return saved;
  }

  // Every new link end of a namespace node has its IPv6 link-local address and its
  // `fe80::/64` route (BGP unnumbered needs both; wiring::link_local_gaps says why twin looks).
  // Checked once the daemons run: the kernel makes both when carrier comes, and by now it has;
  // a port still without an address gets 2 s more before twin says so.
  Result<void> check_link_local() {
    std::map<const plan::Node*, std::vector<std::string>> ports;
    for (const auto* l : d.add_links)
      for (const auto& [node, ifname] :
           {std::pair{l->a_node, l->a_interface}, {l->b_node, l->b_interface}})
        // A bridge's ports are layer 2 only (IPv6 off in its namespace): nothing to check.
        if (const plan::Node* n = to.find(node);
            n && driver_for(*n).ports_in_namespace() && n->kind != topology::NodeKind::kBridge)
          ports[n].push_back(ifname);
    std::vector<const plan::Node*> pending;
    for (const auto& [n, _] : ports) pending.push_back(n);
    for (int attempt = 0; !pending.empty(); ++attempt) {
      if (auto r = check_interrupt("the link-local check"); !r) return r;
      const bool last = attempt == 10;
      std::vector<const plan::Node*> again;
      auto r = for_each_node(pending, parallel, [&](const plan::Node& n) -> Result<void> {
        auto gaps = wiring::repair_link_local(n.netns, ports.at(&n));
        if (!gaps) return gaps.error();
        std::lock_guard lk(mu);
        if (note_gaps(n, *gaps, last)) again.push_back(&n);
        return {};
      });
      if (!r) return r;
      pending = std::move(again);
      if (!pending.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return {};
  }

  // Reports node n's link-local gaps (under mu); true when a port without an address is to be
  // looked at again (not on the `last` attempt).
  bool note_gaps(const plan::Node& n, const std::vector<wiring::LinkLocalGap>& gaps, bool last) {
    bool wait = false;
    for (const auto& g : gaps) {
      std::string port = n.name + " " + g.ifname;
      if (g.repaired) {
        rep.link_local_repaired.push_back(port);
        ctx.progress("repaired " + port + ": the kernel had no fe80::/64 route for it, so " +
                     "nothing sent to its link-local address was answered; added it back");
      } else if (g.has_address) {
        rep.link_local_missing.push_back(port);
        ctx.progress("warning: " + port + ": its fe80::/64 route, added back, is still not in " +
                     "the main table; BGP unnumbered over it cannot come up");
      } else if (!last) {
        wait = true;
      } else {
        rep.link_local_missing.push_back(port);
        ctx.progress("warning: " + port + " has no IPv6 link-local address 2 s after it " +
                     "came up; BGP unnumbered over it cannot come up");
      }
    }
    return wait;
  }
};
}  // namespace

std::string GrowReport::summary() const {
  std::string s;
  auto part = [&](const char* what, const std::vector<std::string>& v) {
    if (v.empty()) return;
    std::string l;
    for (const auto& x : v) l += (l.empty() ? "" : ", ") + x;
    s += (s.empty() ? "" : "; ") + std::string(what) + " " + l;
  };
  part("added nodes", added_nodes);
  part("added links", added_links);
  part("removed nodes", removed_nodes);
  part("removed links", removed_links);
  part("reconfigured", reconfigured);
  part("MTU changed on", mtu_changed);
  part("tenant devices changed on", vteps_changed);
  part("routing daemons changed on", daemons_changed);
  return s.empty() ? "no topology change" : s;
}

std::string describe_reshape(const plan::Plan& from, const plan::Plan& to) {
  Delta d = compute(from, to);
  std::string s;
  auto part = [&](const char* what, const std::string& v) {
    if (!v.empty()) s += (s.empty() ? "" : "; ") + std::string(what) + " " + v;
  };
  part("add nodes", names(d.add_nodes));
  part("add links", names(d.add_links));
  part("remove nodes", names(d.remove_nodes));
  part("remove links", names(d.remove_links));
  part("reconfigure (generated config differs)", names(d.reconfigure));
  part("set MTU on", names(d.mtu_links));
  part("change the tenant devices (VNIs, bridged ports) of", names(d.vteps));
  part("start or stop routing daemons of", names(d.daemons));
  return (s.empty() ? std::string("no topology change") : s) + "\n";
}

Result<void> reconcile(const plan::Plan& from, const plan::Plan& to, drivers::BuildContext& ctx,
                       GrowReport* report) {
  const Delta d = compute(from, to);
  if (auto r = check_changes(from, to, d); !r) return r;
  Reconciler run(from, to, d, ctx, *report);
  using Step = Result<void> (Reconciler::*)();
  for (Step step : {
           &Reconciler::change_daemons,
           &Reconciler::reconfigure,
           &Reconciler::remove_links,
           &Reconciler::remove_nodes,
           &Reconciler::record_new_nodes,
           &Reconciler::record_mgmt,
           &Reconciler::start_node_files,
           &Reconciler::create_namespaces,
           &Reconciler::begin_nodes,
           &Reconciler::create_links,
           &Reconciler::wire_mgmt,
           &Reconciler::raise_and_address,
           &Reconciler::set_mtus,
           &Reconciler::create_nodes,
           &Reconciler::start_daemons,
           &Reconciler::start_ssh,
           &Reconciler::check_link_local,
       })
    if (auto r = (run.*step)(); !r) {
      ctx.begun.clear();  // joins what a driver began, before anyone removes the lab
      return r;
    }
  return {};
}

Result<void> reshape_lab(const std::string& lab, const plan::Plan& from, const plan::Plan& to,
                         proc::ProcessRunner& runner, int parallel, GrowReport* rep) {
  auto loaded = state::load_state(lab);
  if (!loaded) return loaded.error();
  drivers::Record record(*loaded);
  drivers::BuildContext ctx{runner, record, [](const std::string&) {}, {}};
  ctx.settings.parallel = parallel;
  return reconcile(from, to, ctx, rep);
}

}  // namespace twin::engine

namespace twin::engine {

Result<int> control_routing(const std::string& lab, const plan::Plan& running,
                            const std::vector<std::string>& nodes, RoutingAction action,
                            proc::ProcessRunner& runner, int parallel) {
  auto loaded = state::load_state(lab);
  if (!loaded) return loaded.error();
  drivers::Record record(*loaded);
  drivers::BuildContext ctx{runner, record, [](const std::string&) {}, {}};
  ctx.settings.parallel = parallel;
  std::vector<const plan::Node*> list;
  for (const auto& name : nodes) {
    const plan::Node* n = running.find(name);
    if (!n) return usage_error("node " + name + " is not in lab " + lab);
    list.push_back(n);
  }
  std::vector<Result<int>> results(list.size(), 0);
  parallel_for(list.size(), parallel, [&](size_t i) {
    const auto& d = drivers::driver_for(*list[i]);
    switch (action) {
      case RoutingAction::kStop:
        if (auto r = d.stop_routing(*list[i], ctx); !r) results[i] = r.error();
        break;
      case RoutingAction::kStart:
        results[i] = d.start_routing(*list[i], ctx);
        break;
      case RoutingAction::kRestart:
        results[i] = d.restart_routing(*list[i], ctx);
        break;
    }
  });
  auto saved = record.save();
  int started = 0;
  for (size_t i = 0; i < list.size(); ++i) {
    if (!results[i]) return results[i].error().with_context("restarting " + list[i]->name);
    started += *results[i];
  }
  if (!saved) return saved.error();
  return started;
}

Result<int> boot_image(const std::string& lab, const plan::Plan& running, const plan::Node& to,
                       const std::string& config, proc::ProcessRunner& runner) {
  auto loaded = state::load_state(lab);
  if (!loaded) return loaded.error();
  const plan::Node* from = running.find(to.name);
  if (!from) return usage_error("node " + to.name + " is not in lab " + lab);
  drivers::Record record(*loaded);
  drivers::BuildContext ctx{runner, record, [](const std::string&) {}, {}};
  const auto& old_driver = driver_for(*from);
  const auto& new_driver = driver_for(to);
  if (auto r = old_driver.stop_routing(*from, ctx); !r) {
    (void)record.save();
    return r.error().with_context("node " + to.name + ": stopping its daemons");
  }
  // The old container goes (only this node's, recorded and labelled), then one of the new
  // image comes, recorded before it is created.
  state::State one;
  one.lab = loaded->lab;
  for (const auto& res : loaded->resources)
    if (res.node == to.name && res.kind == "container") one.resources.push_back(res);
  drivers::Teardown t;
  old_driver.remove(one, runner, t);
  if (!t.problems.empty()) {
    (void)record.save();
    return harness_error("node " + to.name + ": " + t.problems.front());
  }
  (void)record.take("container", to.name);
  if (auto r = new_driver.create({&to}, ctx); !r) {
    (void)record.save();
    return r.error();
  }
  // `config` is what its daemons boot from (the new image's user frr owns the run folder: the
  // driver's create handed it over).
  if (auto r = new_driver.write_startup_config(to, config); !r) return r.error();
  auto started = new_driver.start_routing(to, ctx);
  for (auto& n : loaded->plan.nodes)
    if (n.name == to.name) n = to;
  auto saved = record.save();
  if (!started) return started.error().with_context("node " + to.name);
  if (!saved) return saved.error();
  return started;
}

namespace {
// The node's sshd (drivers/ssh.hpp) running again: a dead one (or, with `force`, any) replaced
// by a new one, recorded. Nothing for a node not on the management network.
Result<void> restart_sshd(const std::string& lab, const plan::Node& n, bool force,
                          proc::ProcessRunner& runner) {
  auto loaded = state::load_state(lab);
  if (!loaded) return loaded.error();
  if (!loaded->plan.mgmt || n.mgmt_address.empty()) return {};
  drivers::Record record(*loaded);
  drivers::BuildContext ctx{runner, record, [](const std::string&) {}, {}};
  std::vector<state::Resource> sshd;
  for (auto& p : record.take("process", n.name)) {
    if (p.name == "sshd")
      sshd.push_back(p);
    else
      record.note(p);
  }
  bool alive = false;
  for (const auto& p : sshd) alive = alive || state::process_alive(p.pid, p.start_time);
  if (alive && !force) {
    for (const auto& p : sshd) record.note(p);
    return record.save();
  }
  if (alive)
    if (auto s = state::stop_processes(sshd, n.name); !s) return s;
  if (auto r = drivers::prepare_node_ssh(loaded->plan, n, runner); !r) return r;
  auto pid = drivers::spawn_node_sshd(loaded->plan, n, ctx);
  auto saved = record.save();
  if (!pid) return pid.error();
  if (!saved) return saved.error();
  return drivers::wait_node_sshd(n, *pid,
                                 std::chrono::steady_clock::now() + std::chrono::seconds(15));
}
}  // namespace

Result<RestartReport> restart_node(const std::string& lab, const std::string& node,
                                   const std::string& daemon, proc::ProcessRunner& runner) {
  auto loaded = state::load_state(lab);
  if (!loaded) return loaded.error();
  const plan::Node* n = loaded->plan.find(node);
  if (!n) {
    std::string names;
    for (const auto& x : loaded->plan.nodes) names += (names.empty() ? "" : ", ") + x.name;
    return usage_error("node " + node + " is not in lab " + lab + " (its nodes: " + names + ")");
  }
  const auto& driver = drivers::driver_for(*n);
  RestartReport rep{node};
  auto t = Clock::now();
  // A VM on the management network: the lab's DHCP server it takes its address from.
  if (loaded->plan.mgmt && !n->vm.mgmt_netns.empty() &&
      (daemon.empty() || daemon == plan::kMgmtDhcpProcess)) {
    drivers::Record record(*loaded);
    drivers::BuildContext ctx{runner, record, [](const std::string&) {}, {}};
    auto pid = serve_mgmt_dhcp(loaded->plan, ctx);
    auto saved = record.save();
    if (!pid) return pid.error().with_context("restarting dnsmasq for " + node);
    if (!saved) return saved.error();
    rep.restart_ms = ms_since(t);
    rep.daemons.push_back("dnsmasq (PID " + std::to_string(*pid) + ")");
    return rep;
  }
  if (!driver.manages_frr(*n))
    return usage_error("node " + node + " (driver " + driver.name() +
                       ") runs no daemons of twin's to restart");
  if (daemon == "sshd" && !n->mgmt_address.empty()) {
    if (auto r = restart_sshd(lab, *n, /*force=*/true, runner); !r) return r.error();
  } else if (daemon.empty()) {
    auto started = control_routing(lab, loaded->plan, {node}, RoutingAction::kRestart, runner, 1);
    if (!started) return started.error();
    // The node as a whole: its sshd too, when it died (a live one keeps its sessions).
    if (auto r = restart_sshd(lab, *n, /*force=*/false, runner); !r) return r.error();
  } else {
    drivers::Record record(*loaded);
    drivers::BuildContext ctx{runner, record, [](const std::string&) {}, {}};
    auto r = driver.restart_daemon(*n, daemon, ctx);
    auto saved = record.save();  // whatever started is recorded, even when a later part failed
    if (!r) return r.error().with_context("restarting " + daemon + " on " + node);
    if (!saved) return saved.error();
  }
  rep.restart_ms = ms_since(t);
  auto after = state::load_resources(lab);
  if (!after) return after.error();
  for (const auto& r : *after)
    if (r.kind == "process" && r.node == node && (daemon.empty() || r.name == daemon))
      rep.daemons.push_back(r.name + " (PID " + std::to_string(r.pid) + ")");
  return rep;
}

}  // namespace twin::engine
