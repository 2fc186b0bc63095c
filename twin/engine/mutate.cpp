#include "twin/engine/mutate.hpp"

#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "twin/core/util.hpp"
#include "twin/engine/node_ops.hpp"
#include "twin/engine/state.hpp"
#include "twin/runtime/frr.hpp"
#include "twin/wiring/wiring.hpp"

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace twin::engine {

namespace {

// A link's identity: its two ends, in a fixed order.
std::string link_key(const plan::Link& l) {
  std::string a = l.a_node + ":" + l.a_interface, b = l.b_node + ":" + l.b_interface;
  return a < b ? a + "--" + b : b + "--" + a;
}

struct Delta {
  std::vector<const plan::Node*> add_nodes, remove_nodes, reconfigure;
  std::vector<const plan::Link*> add_links, remove_links, mtu_links;
};

Delta compute(const plan::Plan& from, const plan::Plan& to) {
  Delta d;
  for (const auto& n : to.nodes) {
    const plan::Node* old = from.find(n.name);
    if (!old)
      d.add_nodes.push_back(&n);
    else if (n.kind == "frr" && n.config_generated && old->config_generated &&
             n.frr_config != old->frr_config)
      d.reconfigure.push_back(&n);
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

Result<void> run_ns_batch(proc::ProcessRunner& runner, const std::string& netns,
                          const std::string& script, const std::string& what) {
  if (script.empty()) return {};
  return wiring::run_batch(runner, script, netns, what);
}

// Stops a node's recorded daemons (by recorded PID and start time only), then removes its
// namespace and run folder, and drops its resources from the state.
Result<void> remove_node(State& st, const plan::Node& n, proc::ProcessRunner& runner) {
  std::vector<Resource> procs;
  for (const auto& r : st.resources)
    if (r.kind == "process" && r.node == n.name) procs.push_back(r);
  for (const auto& r : procs)
    if (process_alive(r.pid, r.start_time)) ::kill(r.pid, SIGTERM);
  auto until = Clock::now() + 3s;
  for (const auto& r : procs) {
    while (process_alive(r.pid, r.start_time) && Clock::now() < until)
      std::this_thread::sleep_for(10ms);
    if (process_alive(r.pid, r.start_time)) ::kill(r.pid, SIGKILL);
  }
  for (const auto& r : procs) {
    auto hard = Clock::now() + 3s;
    while (process_alive(r.pid, r.start_time) && Clock::now() < hard)
      std::this_thread::sleep_for(10ms);
    if (process_alive(r.pid, r.start_time))
      return harness_error("node " + n.name + ": process " + std::to_string(r.pid) + " (" + r.name +
                           ") survived SIGKILL");
  }
  if (fs::exists("/run/netns/" + n.netns))
    if (auto r = wiring::run_batch(runner, wiring::netns_del_script({n.netns}), "",
                                   "removing namespace of " + n.name, false);
        !r)
      return r;
  std::error_code ec;
  fs::remove_all(n.run_dir, ec);
  if (ec) return harness_error("removing " + n.run_dir + ": " + ec.message());
  st.resources.erase(
      std::remove_if(st.resources.begin(), st.resources.end(),
                     [&](const Resource& r) {
                       return r.node == n.name &&
                              (r.kind == "process" || r.kind == "netns" || r.kind == "dir");
                     }),
      st.resources.end());
  return save_state(st);
}

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
  return (s.empty() ? std::string("no topology change") : s) + "\n";
}

Result<void> reshape_lab(const std::string& lab, const plan::Plan& from, const plan::Plan& to,
                         proc::ProcessRunner& runner, int parallel, GrowReport* rep) {
  Delta d = compute(from, to);
  for (const auto& n : to.nodes)
    if (const auto* old = from.find(n.name); old && (old->kind != n.kind || old->image != n.image))
      return input_error("node " + n.name + " changes kind or image (" + old->kind + "/" +
                         old->image + " -> " + n.kind + "/" + n.image +
                         "); that needs a new lab (twin down; twin up)");
  // A VM's NICs are fixed when its domain starts (no hot-plug here): a topology step may not
  // add or remove VMs or their links.
  auto vm_node = [&](const std::string& name) {
    const auto* n = to.find(name);
    if (!n) n = from.find(name);
    return n && plan::is_vm(*n);
  };
  for (const auto* set : {&d.add_nodes, &d.remove_nodes})
    for (const auto* n : *set)
      if (plan::is_vm(*n))
        return input_error("a topology step adds or removes VM node " + n->name +
                           ", which a running lab cannot do; that needs a new lab (twin down; "
                           "twin up)");
  for (const auto* set : {&d.add_links, &d.remove_links, &d.mtu_links})
    for (const auto* l : *set)
      if (vm_node(l->a_node) || vm_node(l->b_node))
        return input_error("a topology step changes the links of VM node " +
                           (vm_node(l->a_node) ? l->a_node : l->b_node) +
                           ", whose NICs are fixed while it runs; that needs a new lab "
                           "(twin down; twin up), or for an MTU a `link` or `interface` step");
  auto loaded = load_state(lab);
  if (!loaded) return loaded.error();
  State& st = *loaded;
  std::mutex mu;

  // 0. Generated configs of nodes that stay, as a difference, first: configuration that
  //    names an interface about to go must be removed while the interface exists (FRR accepts
  //    configuration for an interface that does not exist yet).
  std::vector<std::optional<Error>> cerrs(d.reconfigure.size());
  parallel_for(d.reconfigure.size(), parallel, [&](size_t i) {
    const plan::Node& n = *d.reconfigure[i];
    std::string path = n.run_dir + "/frr.conf.next";
    if (auto w = write_file(path, n.frr_config); !w) {
      cerrs[i] = w.error();
      return;
    }
    if (auto r = runtime::frr_reload(runner, n, path, false); !r) cerrs[i] = r.error();
  });
  for (size_t i = 0; i < d.reconfigure.size(); ++i) {
    rep->reconfigured.push_back(d.reconfigure[i]->name);
    if (cerrs[i]) return *cerrs[i];
  }
  // 1. Links that go away (a removed node's links vanish with its namespace).
  for (const auto* l : d.remove_links) {
    const plan::Node* a = to.find(l->a_node);
    const plan::Node* b = to.find(l->b_node);
    if (!a && !b) continue;
    const plan::Node* end = a ? from.find(l->a_node) : from.find(l->b_node);
    const std::string& ifname = a ? l->a_interface : l->b_interface;
    // Deleting one end of a veth deletes the pair. A link that is not there (a reshape that
    // was interrupted before creating it) is already gone.
    if (auto r = run_ns_batch(runner, end->netns, "link del dev " + ifname + "\n",
                              "removing link " + link_key(*l));
        !r && r.error().message.find("Cannot find device") == std::string::npos)
      return r;
    rep->removed_links.push_back(link_key(*l));
  }
  // 2. Nodes that go away.
  for (const auto* n : d.remove_nodes) {
    if (auto r = remove_node(st, *n, runner); !r) return r;
    rep->removed_nodes.push_back(n->name);
  }
  // 3. New nodes: recorded first, then created.
  for (const auto* n : d.add_nodes) {
    if (fs::exists("/run/netns/" + n->netns))
      return usage_error("network namespace " + n->netns + " already exists (node " + n->name +
                         "); another lab or program owns it");
    st.resources.push_back({"netns", n->netns, n->name});
    st.resources.push_back({"dir", n->run_dir, n->name});
  }
  if (auto r = save_state(st); !r) return r;
  if (!d.add_nodes.empty()) {
    std::string script;
    for (const auto* n : d.add_nodes) script += "netns add " + n->netns + "\n";
    if (auto r = wiring::run_batch(runner, script, "", "creating namespaces"); !r) return r;
    for (const auto* n : d.add_nodes) {
      if (auto r = wiring::apply_sysctls(n->netns, wiring::namespace_sysctls(*n)); !r)
        return r.error().with_context("node " + n->name);
      rep->added_nodes.push_back(n->name);
    }
  }
  // 4. New links, created directly in both namespaces with final names, MTU and MAC.
  if (!d.add_links.empty()) {
    plan::Plan sub = to;
    sub.links.clear();
    for (const auto* l : d.add_links) sub.links.push_back(*l);
    if (auto r = wiring::run_batch(runner, wiring::veth_script(sub), "", "creating veth links"); !r)
      return r;
    for (const auto* l : d.add_links) rep->added_links.push_back(link_key(*l));
  }
  // 5. Bring up: new nodes whole; new interfaces of nodes that stay.
  for (const auto& n : to.nodes) {
    std::string script;
    std::vector<std::string> up;
    if (std::find(d.add_nodes.begin(), d.add_nodes.end(), &n) != d.add_nodes.end()) {
      up = {"lo"};
      for (const auto& i : n.interfaces) up.push_back(i.name);
      script = wiring::node_script(n);
    } else {
      for (const auto* l : d.add_links)
        for (const auto& [node, ifname] :
             {std::pair{l->a_node, l->a_interface}, {l->b_node, l->b_interface}}) {
          if (node != n.name) continue;
          up.push_back(ifname);
          if (n.kind == "host")
            for (const auto& i : n.interfaces)
              if (i.name == ifname)
                for (const auto& a : i.addresses)
                  script += "address add " + a + " dev " + ifname + "\n";
        }
    }
    if (!up.empty())
      if (auto r = wiring::links_up(n.netns, up); !r)
        return r.error().with_context("node " + n.name);
    if (auto r = run_ns_batch(runner, n.netns, script, "node " + n.name); !r) return r;
  }
  // 6. MTU of links that stay.
  for (const auto* l : d.mtu_links) {
    for (const auto& [node, ifname] :
         {std::pair{l->a_node, l->a_interface}, {l->b_node, l->b_interface}}) {
      const plan::Node* n = to.find(node);
      if (auto r = run_ns_batch(runner, n->netns,
                                "link set dev " + ifname + " mtu " + std::to_string(l->mtu) + "\n",
                                "node " + node);
          !r)
        return r;
    }
    rep->mtu_changed.push_back(link_key(*l));
  }
  // 7. Daemons of new nodes, in parallel.
  std::vector<const plan::Node*> start;
  for (const auto* n : d.add_nodes) {
    if (auto r = prepare_node_files(*n); !r) return r.error().with_context("node " + n->name);
    if (!n->daemons.empty()) start.push_back(n);
  }
  std::vector<std::optional<Error>> errs(start.size());
  parallel_for(start.size(), parallel, [&](size_t i) {
    auto r = start_node_daemons(*start[i], st, mu, runner);
    if (!r) errs[i] = r.error().with_context("node " + start[i]->name);
  });
  // The PIDs recorded in memory above are saved once, whatever happened (the lab's cgroup,
  // recorded earlier, already holds every process for `down`).
  auto saved = save_state(st);
  for (const auto& e : errs)
    if (e) return *e;
  return saved;
}

}  // namespace twin::engine
