#include "twin/wiring/wiring.hpp"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

namespace twin::wiring {

std::string netns_add_script(const plan::Plan& plan) {
  std::string s;
  for (const auto& n : plan.nodes) s += "netns add " + n.netns + "\n";
  return s;
}

std::string netns_del_script(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += "netns del " + n + "\n";
  return s;
}

std::string veth_script(const plan::Plan& plan) {
  std::ostringstream s;
  for (const auto& l : plan.links) {
    const auto* a = plan.find(l.a_node);
    const auto* b = plan.find(l.b_node);
    auto mac_of = [](const plan::Node* n, const std::string& ifname) {
      for (const auto& i : n->interfaces)
        if (i.name == ifname) return i.mac;
      return std::string();
    };
    s << "link add " << l.a_interface << " netns " << a->netns << " mtu " << l.mtu << " address "
      << mac_of(a, l.a_interface) << " type veth peer name " << l.b_interface << " netns "
      << b->netns << " mtu " << l.mtu << " address " << mac_of(b, l.b_interface) << "\n";
  }
  return s.str();
}

std::string node_script(const plan::Node& node) {
  std::ostringstream s;
  s << "link set dev lo up\n";
  for (const auto& i : node.interfaces) s << "link set dev " << i.name << " up\n";
  if (node.kind == "host") {
    for (const auto& i : node.interfaces)
      for (const auto& a : i.addresses)
        s << "address add " << a << " dev " << i.name
          << (a.find(':') != std::string::npos ? " nodad" : "") << "\n";
    for (const auto& r : node.routes) {
      bool v6 = r.via.find(':') != std::string::npos;
      // Batch lines take no -4/-6: spell the default route per family.
      std::string dst = r.destination == "default" ? (v6 ? "::/0" : "0.0.0.0/0") : r.destination;
      s << "route add " << dst << " via " << r.via << "\n";
    }
  }
  return s.str();
}

std::vector<std::pair<std::string, std::string>> namespace_sysctls(const plan::Node& node) {
  std::string rp = std::to_string(node.rp_filter);
  return {
      {"net/ipv6/conf/all/disable_ipv6", "0"},
      {"net/ipv6/conf/default/disable_ipv6", "0"},
      {"net/ipv6/conf/all/accept_dad", "0"},
      {"net/ipv6/conf/default/accept_dad", "0"},
      {"net/ipv6/conf/default/dad_transmits", "0"},
      {"net/ipv4/ip_forward", node.kind == "frr" ? "1" : "0"},
      {"net/ipv6/conf/all/forwarding", node.kind == "frr" ? "1" : "0"},
      {"net/ipv4/conf/all/rp_filter", rp},
      {"net/ipv4/conf/default/rp_filter", rp},
      // BGP unnumbered next hops are link-local; keep them valid even when unused.
      {"net/ipv6/conf/default/keep_addr_on_down", "1"},
      // Hosts accept the leaf's router advertisements only if forwarding is off; routers
      // never do (their routes come from BGP).
      {"net/ipv6/conf/default/accept_ra", node.kind == "frr" ? "0" : "1"},
  };
}

Result<void> apply_sysctls(const std::string& netns,
                           const std::vector<std::pair<std::string, std::string>>& sysctls) {
  std::string error;
  // setns(CLONE_NEWNET) changes only the calling thread; /proc/sys/net resolves to the netns of
  // the thread that opens the file.
  std::thread t([&] {
    std::string path = "/run/netns/" + netns;
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0 || ::setns(fd, CLONE_NEWNET) != 0) {
      error = "entering " + path + ": " + std::strerror(errno);
      if (fd >= 0) ::close(fd);
      return;
    }
    ::close(fd);
    for (const auto& [key, value] : sysctls) {
      std::string p = "/proc/sys/" + key;
      std::ofstream f(p);
      f << value << "\n";
      f.flush();
      if (!f) {
        error = "writing " + value + " to " + p + ": " + std::strerror(errno);
        return;
      }
    }
  });
  t.join();
  if (!error.empty()) return env_error("netns " + netns + ": " + error);
  return {};
}

Result<void> run_batch(proc::ProcessRunner& runner, const std::string& script,
                       const std::string& netns, const std::string& what, bool cancellable) {
  if (script.empty()) return {};
  std::vector<std::string> argv = {"ip"};
  if (!netns.empty()) argv.insert(argv.end(), {"-n", netns});
  // -force: keep going past a failed line (e.g. a namespace already gone) and report it.
  if (!cancellable) argv.push_back("-force");
  argv.insert(argv.end(), {"-batch", "-"});
  proc::Command c{argv, script, std::chrono::milliseconds(60000)};
  c.cancellable = cancellable;
  auto r = proc::run_checked(runner, c, what);
  if (!r) return r.error();
  return {};
}

}  // namespace twin::wiring
