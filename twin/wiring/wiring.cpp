#include "twin/wiring/wiring.hpp"

#include <linux/rtnetlink.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "twin/core/ip.hpp"
#include "twin/core/rate.hpp"
#include "twin/runtime/netlink.hpp"

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
    // The `a` end is created up (free while its peer is down; the kernel refuses `up` on the
    // peer end in one request); links_up brings the `b` ends up from inside their namespaces.
    s << "link add " << l.a_interface << " netns " << a->netns << " mtu " << l.mtu << " address "
      << mac_of(a, l.a_interface) << " up type veth peer name " << l.b_interface << " netns "
      << b->netns << " mtu " << l.mtu << " address " << mac_of(b, l.b_interface) << "\n";
  }
  return s.str();
}

std::string bridge_script(const plan::Node& node, const std::vector<std::string>& only) {
  std::ostringstream s;
  if (node.kind != topology::NodeKind::kBridge) return "";
  // STP off and no forward delay: a lab's segment forwards at once, as a switch port with
  // portfast does; multicast snooping off, so that OSPF's and IPv6's link-local groups reach
  // every member without an IGMP/MLD querier on the segment.
  if (only.empty())
    s << "link add " << plan::kBridgeDevice
      << " type bridge stp_state 0 forward_delay 0 mcast_snooping 0\n";
  for (const auto& i : node.interfaces)
    if (only.empty() || std::find(only.begin(), only.end(), i.name) != only.end())
      s << "link set " << i.name << " master " << plan::kBridgeDevice << "\n";
  if (only.empty()) s << "link set " << plan::kBridgeDevice << " up\n";
  return s.str();
}

std::string node_script(const plan::Node& node, const std::vector<std::string>& only) {
  std::ostringstream s;
  if (node.kind != topology::NodeKind::kHost) return "";
  auto wanted = [&](const std::string& ifname) {
    return only.empty() || std::find(only.begin(), only.end(), ifname) != only.end();
  };
  for (const auto& i : node.interfaces)
    if (wanted(i.name))
      for (const auto& a : i.addresses)
        s << "address add " << a << " dev " << i.name
          << (a.find(':') != std::string::npos ? " nodad" : "") << "\n";
  // With `only` (ports made anew on a host that stays: a recreated leaf's links), the routes
  // through them: the kernel removed them with the old ports. `replace`, as a route through
  // another port may hold the destination meanwhile.
  auto through_wanted = [&](const std::string& via) {
    auto gw = IpPrefix::parse(via, true);
    if (!gw) return false;
    for (const auto& i : node.interfaces)
      if (wanted(i.name))
        for (const auto& a : i.addresses)
          if (auto net = IpPrefix::parse(a); net && net->contains(*gw)) return true;
    return false;
  };
  for (const auto& r : node.routes) {
    if (!only.empty() && !through_wanted(r.via)) continue;
    bool v6 = r.via.find(':') != std::string::npos;
    // Batch lines take no -4/-6: spell the default route per family.
    std::string dst = r.destination == "default" ? (v6 ? "::/0" : "0.0.0.0/0") : r.destination;
    s << "route " << (only.empty() ? "add " : "replace ") << dst << " via " << r.via << "\n";
  }
  return s.str();
}

std::string vtep_script(const plan::Node& node) { return vtep_change_script({}, node.vnis); }

namespace {

const plan::Vni* find_vni(const std::vector<plan::Vni>& vs, uint32_t vni) {
  for (const auto& v : vs)
    if (v.vni == vni) return &v;
  return nullptr;
}

void create_vni(std::ostringstream& s, const plan::Vni& v) {
  s << "link add " << v.vxlan << " type vxlan id " << v.vni << " local " << v.local << " dstport "
    << plan::kVxlanPort << " nolearning df set\n"
    << "link set " << v.vxlan << " mtu " << v.mtu << "\n"
    << "link add " << v.bridge << " type bridge\n";
  if (!v.vrf.empty()) s << "link set " << v.bridge << " master " << v.vrf << "\n";
  s << "link set " << v.vxlan << " master " << v.bridge << "\n"
    << "link set dev " << v.vxlan << " type bridge_slave learning off\n";
  for (const auto& p : v.ports) s << "link set " << p << " master " << v.bridge << "\n";
  if (!v.gateway.empty()) s << "address add " << v.gateway << " dev " << v.bridge << "\n";
  s << "link set " << v.bridge << " up\nlink set " << v.vxlan << " up\n";
}

}  // namespace

std::string vtep_change_script(const std::vector<plan::Vni>& from,
                               const std::vector<plan::Vni>& to) {
  std::ostringstream s;
  auto recreated = [](const plan::Vni& a, const plan::Vni& b) {
    return a.local != b.local || a.vrf != b.vrf || a.vrf_table != b.vrf_table ||
           a.gateway != b.gateway;
  };
  // 1. VNIs that go or are recreated: the VXLAN device and the bridge (its ports fall out).
  for (const auto& v : from)
    if (const plan::Vni* t = find_vni(to, v.vni); !t || recreated(v, *t))
      s << "link del " << v.vxlan << "\nlink del " << v.bridge << "\n";
  // 2. VRFs: gone ones deleted, new ones created before their bridges join them.
  std::set<std::string> old_vrfs, new_vrfs;
  for (const auto& v : from)
    if (!v.vrf.empty()) old_vrfs.insert(v.vrf);
  for (const auto& v : to)
    if (!v.vrf.empty() && !old_vrfs.count(v.vrf) && new_vrfs.insert(v.vrf).second)
      s << "link add " << v.vrf << " type vrf table " << v.vrf_table << "\n"
        << "link set " << v.vrf << " up\n";
  for (const auto& vrf : old_vrfs)
    if (std::none_of(to.begin(), to.end(), [&](const plan::Vni& v) { return v.vrf == vrf; }))
      s << "link del " << vrf << "\n";
  // 3. VNIs that stay: ports leaving first (a port may be on its way to another bridge).
  std::ostringstream joins;
  for (const auto& v : to) {
    const plan::Vni* f = find_vni(from, v.vni);
    if (!f || recreated(*f, v)) continue;
    for (const auto& p : f->ports)
      if (std::find(v.ports.begin(), v.ports.end(), p) == v.ports.end()) {
        bool elsewhere = std::any_of(to.begin(), to.end(), [&](const plan::Vni& o) {
          return std::find(o.ports.begin(), o.ports.end(), p) != o.ports.end();
        });
        if (!elsewhere) s << "link set " << p << " nomaster\n";
      }
    if (f->mtu != v.mtu) s << "link set " << v.vxlan << " mtu " << v.mtu << "\n";
    for (const auto& p : v.ports)
      if (std::find(f->ports.begin(), f->ports.end(), p) == f->ports.end())
        joins << "link set " << p << " master " << v.bridge << "\n";
  }
  // 4. New and recreated VNIs, then ports joining bridges that stayed.
  for (const auto& v : to)
    if (const plan::Vni* f = find_vni(from, v.vni); !f || recreated(*f, v)) create_vni(s, v);
  s << joins.str();
  return s.str();
}

std::vector<plan::Vni> vnis_in_kernel(const nlohmann::json& links) {
  std::vector<plan::Vni> out;
  if (!links.is_array()) return out;
  auto find = [&](const std::string& name) -> const nlohmann::json* {
    for (const auto& l : links)
      if (l.is_object() && l.value("ifname", "") == name) return &l;
    return nullptr;
  };
  auto kind = [](const nlohmann::json& l) {
    auto li = l.find("linkinfo");
    return li != l.end() && li->is_object() ? li->value("info_kind", "") : std::string();
  };
  for (const auto& l : links) {
    if (!l.is_object() || kind(l) != "vxlan") continue;
    const auto& data = l["linkinfo"].value("info_data", nlohmann::json::object());
    if (!data.contains("id")) continue;
    plan::Vni v;
    v.vni = data.value("id", 0u);
    v.vxlan = l.value("ifname", "");
    v.local = data.value("local", "");
    v.mtu = l.value("mtu", v.mtu);
    v.bridge = l.value("master", "");
    if (!v.bridge.empty()) {
      for (const auto& p : links)
        if (p.is_object() && p.value("master", "") == v.bridge && p.value("ifname", "") != v.vxlan)
          v.ports.push_back(p.value("ifname", ""));
      if (const nlohmann::json* br = find(v.bridge)) {
        for (const auto& a : br->value("addr_info", nlohmann::json::array()))
          if (v.gateway.empty() && a.value("family", "") == "inet")
            v.gateway = a.value("local", "") + "/" + std::to_string(a.value("prefixlen", 0));
        if (const nlohmann::json* vrf = find(br->value("master", "")); vrf && kind(*vrf) == "vrf") {
          v.vrf = vrf->value("ifname", "");
          v.vrf_table = vrf->at("linkinfo").value("info_data", nlohmann::json::object()).value("table", 0);
        }
      }
    }
    out.push_back(std::move(v));
  }
  return out;
}

std::vector<std::string> interfaces_to_bring_up(const plan::Plan& plan, const plan::Node& node) {
  std::vector<std::string> out = {"lo"};
  for (const auto& l : plan.links)
    if (l.b_node == node.name) out.push_back(l.b_interface);
  return out;
}

Result<void> links_up(const std::string& netns, const std::vector<std::string>& ifnames) {
  return runtime::run_in_netns(netns, [&] { return runtime::set_links_up(ifnames); });
}

std::vector<LinkLocalGap> link_local_gaps(const nlohmann::json& addresses,
                                          const nlohmann::json& routes6,
                                          const std::vector<std::string>& ports) {
  std::set<std::string> routed;
  if (routes6.is_array())
    for (const auto& r : routes6)
      if (r.is_object() && r.value("dst", "") == "fe80::/64" && r.contains("dev"))
        routed.insert(r.value("dev", ""));
  std::vector<LinkLocalGap> out;
  if (!addresses.is_array()) return out;
  for (const auto& port : ports)
    for (const auto& l : addresses) {
      if (!l.is_object() || l.value("ifname", "") != port) continue;
      const auto flags = l.value("flags", nlohmann::json::array());
      auto has = [&](const char* f) { return std::find(flags.begin(), flags.end(), f) != flags.end(); };
      // Below IPv6's minimum MTU (RFC 8200 §5) the kernel takes IPv6 off the port: nothing due.
      if (!has("UP") || !has("LOWER_UP") || l.value("mtu", 1500) < 1280) break;
      bool address = false;
      for (const auto& a : l.value("addr_info", nlohmann::json::array()))
        if (a.value("family", "") == "inet6" && a.value("scope", "") == "link" &&
            !a.value("tentative", false) && !a.value("dadfailed", false))
          address = true;
      if (!address || !routed.count(port))
        out.push_back({port, l.value("ifindex", 0), address, false});
      break;
    }
  return out;
}

Result<std::vector<LinkLocalGap>> repair_link_local(const std::string& netns,
                                                     const std::vector<std::string>& ports) {
  auto addrs = runtime::kernel_json(netns, runtime::KernelTable::kAddresses);
  if (!addrs) return addrs.error();
  // Only the kernel's own routes: a converged node's BGP routes are no business of this check
  // (at 512 nodes dumping them all, ~1,000 per node, made it take ~10 s).
  auto routes = runtime::kernel_routes(netns, AF_INET6, RTPROT_KERNEL);
  if (!routes) return routes.error();
  auto gaps = link_local_gaps(*addrs, *routes, ports);
  bool added = false;
  for (const auto& g : gaps)
    if (g.has_address) {
      auto r = runtime::run_in_netns(
          netns, [&] { return runtime::append_link_local_route(g.ifindex, g.ifname); });
      if (!r) return r.error().with_context("netns " + netns);
      added = true;
    }
  if (!added) return gaps;
  auto again = runtime::kernel_routes(netns, AF_INET6, RTPROT_KERNEL);
  if (!again) return again.error();
  std::vector<std::string> still;
  for (const auto& g : link_local_gaps(*addrs, *again, ports)) still.push_back(g.ifname);
  for (auto& g : gaps)
    g.repaired = g.has_address && std::find(still.begin(), still.end(), g.ifname) == still.end();
  return gaps;
}

std::vector<std::pair<std::string, std::string>> namespace_sysctls(const plan::Node& node) {
  std::string rp = std::to_string(node.rp_filter);
  const bool router = node.kind == topology::NodeKind::kFrr;
  std::vector<std::pair<std::string, std::string>> s = {
      {"net/ipv6/conf/all/disable_ipv6", "0"},
      {"net/ipv6/conf/default/disable_ipv6", "0"},
      {"net/ipv6/conf/all/accept_dad", "0"},
      {"net/ipv6/conf/default/accept_dad", "0"},
      {"net/ipv6/conf/default/dad_transmits", "0"},
      {"net/ipv4/ip_forward", router ? "1" : "0"},
      {"net/ipv6/conf/all/forwarding", router ? "1" : "0"},
      {"net/ipv4/conf/all/rp_filter", rp},
      {"net/ipv4/conf/default/rp_filter", rp},
      // BGP unnumbered next hops are link-local; keep them valid even when unused.
      {"net/ipv6/conf/default/keep_addr_on_down", "1"},
      // Hosts accept the leaf's router advertisements only if forwarding is off; routers
      // never do (their routes come from BGP).
      {"net/ipv6/conf/default/accept_ra", router ? "0" : "1"},
  };
  if (router) {
    // ECMP hashing as DESIGN.md §4a measured it repeatable and equal to `ip route get`: policy
    // 3 (custom fields) over source and destination address, protocol and ports (0x0037 = 55,
    // as the kernel prints it back), and a seed of the node's own — one seed everywhere would
    // make every tier hash alike (polarization). Kernels before 6.11 have no seed sysctl.
    for (const char* af : {"ipv4", "ipv6"}) {
      s.push_back({std::string("net/") + af + "/fib_multipath_hash_policy", "3"});
      s.push_back({std::string("net/") + af + "/fib_multipath_hash_fields", "55"});
    }
    static const bool has_seed = ::access("/proc/sys/net/ipv4/fib_multipath_hash_seed", F_OK) == 0;
    if (has_seed)
      s.push_back({"net/ipv4/fib_multipath_hash_seed", std::to_string(ecmp_seed(node))});
  }
  return s;
}

uint32_t ecmp_seed(const plan::Node& node) {
  uint32_t h = 2166136261u;  // FNV-1a over the namespace name: stable, differs per node and lab
  for (unsigned char c : node.netns) h = (h ^ c) * 16777619u;
  return h == 0 ? 1 : h;
}

std::vector<std::pair<std::string, std::string>> wire_sysctls() {
  // The host ends of a VM's links only pass frames to its taps (tc redirect): they must not
  // speak themselves (no link-local address, no router solicitation, no forwarding).
  return {
      {"net/ipv6/conf/all/disable_ipv6", "1"},
      {"net/ipv6/conf/default/disable_ipv6", "1"},
      {"net/ipv4/ip_forward", "0"},
      {"net/ipv4/conf/all/arp_ignore", "8"},
      {"net/ipv4/conf/default/arp_ignore", "8"},
  };
}

Result<void> apply_sysctls(const std::string& netns,
                           const std::vector<std::pair<std::string, std::string>>& sysctls) {
  // /proc/sys/net resolves to the network namespace of the thread that opens the file.
  auto r = runtime::run_in_netns(netns, [&]() -> Result<void> {
    for (const auto& [key, value] : sysctls) {
      std::string p = "/proc/sys/" + key;
      std::ofstream f(p);
      f << value << "\n";
      f.flush();
      if (!f) return env_error("writing " + value + " to " + p + ": " + std::strerror(errno));
    }
    return {};
  });
  if (!r) return r.error().with_context("netns " + netns);
  return {};
}

namespace {
// sysctl(8) names use dots where /proc/sys has folders.
std::string sysctl_path(const std::string& key) {
  std::string p = key;
  std::replace(p.begin(), p.end(), '.', '/');
  return "/proc/sys/" + p;
}
}  // namespace

Result<std::string> read_sysctl(const std::string& netns, const std::string& key) {
  std::string v;
  auto r = runtime::run_in_netns(netns, [&]() -> Result<void> {
    std::ifstream f(sysctl_path(key));
    if (!f)
      return errno == ENOENT ? input_error("the kernel has no setting " + key)
                             : env_error("reading " + key + ": " + std::strerror(errno));
    v.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    while (!v.empty() && (v.back() == '\n' || v.back() == ' ')) v.pop_back();
    std::replace(v.begin(), v.end(), '\t', ' ');
    return {};
  });
  if (!r) return r.error().with_context("netns " + netns);
  return v;
}

Result<void> write_sysctl(const std::string& netns, const std::string& key,
                          const std::string& value) {
  auto r = runtime::run_in_netns(netns, [&]() -> Result<void> {
    // Unbuffered: the kernel's answer to write(2) is the verdict on the value.
    FILE* f = std::fopen(sysctl_path(key).c_str(), "we");
    if (!f)
      return errno == ENOENT ? input_error("the kernel has no setting " + key)
                             : env_error("opening " + key + ": " + std::strerror(errno));
    std::setvbuf(f, nullptr, _IONBF, 0);
    std::string line = value + "\n";
    bool ok = std::fwrite(line.data(), 1, line.size(), f) == line.size();
    int err = errno;
    std::fclose(f);
    if (!ok)
      return err == EINVAL ? input_error("the kernel refuses " + key + " = " + value)
                           : env_error("writing " + key + ": " + std::strerror(err));
    return {};
  });
  if (!r) return r.error().with_context("netns " + netns);
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

std::string tap_create_script(const plan::Node& node) {
  std::ostringstream s;
  if (!node.vm.mgmt_tap.empty()) s << "tuntap add dev " << node.vm.mgmt_tap << " mode tap\n";
  for (const auto& i : node.interfaces) {
    s << "tuntap add dev " << i.tap << " mode tap\n";
    s << "link set dev " << i.tap << " mtu " << i.mtu << "\n";
  }
  return s.str();
}

std::vector<std::pair<std::string, std::string>> vm_tap_sysctls(const plan::Node& node) {
  std::vector<std::pair<std::string, std::string>> out;
  auto silent = [&](const std::string& tap) {
    out.push_back({"net/ipv6/conf/" + tap + "/disable_ipv6", "1"});
  };
  if (!node.vm.mgmt_tap.empty()) silent(node.vm.mgmt_tap);
  for (const auto& i : node.interfaces) silent(i.tap);
  return out;
}

std::string tap_move_script(const plan::Node& node) {
  std::ostringstream s;
  if (!node.vm.mgmt_tap.empty())
    s << "link set dev " << node.vm.mgmt_tap << " netns "
      << (node.vm.mgmt_netns.empty() ? node.netns : node.vm.mgmt_netns) << "\n";
  for (const auto& i : node.interfaces)
    s << "link set dev " << i.tap << " netns " << node.netns << "\n";
  return s.str();
}

std::string tap_up_script(const plan::Node& node) {
  std::ostringstream s;
  if (!node.vm.mgmt_tap.empty() && node.vm.mgmt_netns.empty())
    s << "link set dev " << node.vm.mgmt_tap << " name " << kMgmtPort << "\n"
      << "link set dev " << kMgmtPort << " up\n";
  for (const auto& i : node.interfaces) s << "link set dev " << i.tap << " up\n";
  return s.str();
}

std::string tap_redirect_script(const plan::Node& node) {
  std::ostringstream s;
  auto redirect = [&](const std::string& from, const std::string& to) {
    s << "qdisc add dev " << from << " ingress\n"
      << "filter add dev " << from
      << " parent ffff: protocol all u32 match u32 0 0 action mirred egress redirect dev " << to
      << "\n";
  };
  for (const auto& i : node.interfaces) {
    redirect(i.name, i.tap);
    redirect(i.tap, i.name);
  }
  return s.str();
}

std::string shaping_script(const plan::Node& node, bool with_delay,
                           const std::vector<std::string>& only) {
  std::ostringstream s;
  for (const auto& i : node.interfaces) {
    if (!only.empty() && std::find(only.begin(), only.end(), i.name) == only.end()) continue;
    int delay = with_delay ? i.delay_ms : 0;
    if (i.rate_bps == 0 && delay == 0) continue;
    std::string tbf;
    if (i.rate_bps > 0)
      tbf = "tbf rate " + tc_rate(i.rate_bps) + " burst " +
            std::to_string(tbf_burst_bytes(i.rate_bps)) + " limit " +
            std::to_string(tbf_limit_bytes(i.rate_bps));
    if (delay == 0) {
      s << "qdisc replace dev " << i.name << " root handle 1: " << tbf << "\n";
      continue;
    }
    s << "qdisc replace dev " << i.name << " root handle 1: netem delay " << delay << "ms\n";
    if (!tbf.empty())
      s << "qdisc replace dev " << i.name << " parent 1:1 handle 10: " << tbf << "\n";
  }
  return s.str();
}

std::string shaping_link_script(const plan::Node& node, const std::vector<std::string>& only) {
  std::ostringstream s;
  for (const auto& i : node.interfaces) {
    if (!only.empty() && std::find(only.begin(), only.end(), i.name) == only.end()) continue;
    if (i.rate_bps > 0) s << "link set dev " << i.name << " gso_max_segs 1\n";
  }
  return s.str();
}

Result<void> run_tc_batch(proc::ProcessRunner& runner, const std::string& script,
                          const std::string& netns, const std::string& what) {
  if (script.empty()) return {};
  std::vector<std::string> argv = {"tc"};
  if (!netns.empty()) argv.insert(argv.end(), {"-n", netns});
  argv.insert(argv.end(), {"-batch", "-"});
  auto r = proc::run_checked(runner, proc::Command{argv, script, std::chrono::milliseconds(60000)},
                             what);
  if (!r) return r.error();
  return {};
}

}  // namespace twin::wiring
