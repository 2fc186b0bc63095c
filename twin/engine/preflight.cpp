#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>

#include "twin/core/util.hpp"
#include "twin/drivers/ssh.hpp"
#include "twin/engine/lab.hpp"

using namespace std::chrono_literals;

namespace twin::engine {

std::string cgroup2_mount() {
  std::ifstream f("/proc/self/mountinfo");
  std::string line;
  while (std::getline(f, line)) {
    // "... <mount point> <options> - <fstype> <source> <super options>"
    auto dash = line.find(" - ");
    if (dash == std::string::npos) continue;
    std::istringstream post(line.substr(dash + 3));
    std::string fstype;
    post >> fstype;
    if (fstype != "cgroup2") continue;
    std::istringstream pre(line.substr(0, dash));
    std::string field, mount_point;
    for (int i = 0; i < 5 && pre >> field; ++i)
      if (i == 4) mount_point = field;
    return mount_point;
  }
  return "";
}

Result<void> preflight(const plan::Plan& plan, proc::ProcessRunner& runner) {
  if (::geteuid() != 0)
    return env_error("twin needs root to create network namespaces (run with sudo)");
  // Each link type a lab needs is probed the same way: created in a throw-away namespace, so
  // nothing is left behind (the namespace dies with the probe process). "" when it can, else
  // ip's complaint.
  auto can_create = [&](std::vector<std::string> type) -> Result<std::string> {
    std::vector<std::string> argv = {"unshare", "--net", "ip", "link", "add", "twprobe0"};
    argv.insert(argv.end(), type.begin(), type.end());
    auto r = runner.run(proc::Command{argv, "", 10s});
    if (!r) return r.error().with_context("probing kernel features");
    return ok(r->exit_code == 0 ? std::string() : trim_end(r->err));
  };
  // veth is the one link type every lab needs.
  auto veth = can_create({"type", "veth", "peer", "name", "twprobe1"});
  if (!veth) return veth.error();
  if (!veth->empty())
    return env_error("this kernel cannot create veth links (" + *veth +
                     "); twin needs the veth driver (CONFIG_VETH)");
  if (plan.mgmt)
    if (auto r = drivers::ssh_preflight(); !r) return r;
  if (plan.mgmt && !plan.mgmt->dhcp_address.empty() && ::access("/usr/sbin/dnsmasq", X_OK) != 0)
    return env_error(
        "dnsmasq is missing: a lab whose VMs join the management network gets their addresses "
        "from twin's DHCP server; run tools/install-deps.sh --vm (package dnsmasq-base)");
  if (cgroup2_mount().empty())
    return env_error(
        "no cgroup v2 hierarchy is mounted; twin keeps each lab's processes in "
        "its own cgroup (mount -t cgroup2 none /sys/fs/cgroup)");
  // Tenants need the kernel's vxlan and bridge; a routing tenant (L3 VNI) also its vrf. Each is
  // probed only when the lab uses it, and named with the tenant that needs it.
  std::string l3_tenant;
  for (const auto& t : plan.tenants)
    if (t.l3vni && l3_tenant.empty()) l3_tenant = t.name;
  struct Feature {
    bool needed;
    std::vector<std::string> type;
    std::string what;
  };
  const Feature features[] = {
      {!plan.tenants.empty(),
       {"type", "vxlan", "id", "1", "dstport", "4789", "local", "127.0.0.1"},
       "VXLAN devices (CONFIG_VXLAN), which the lab's tenants need"},
      {!plan.tenants.empty(), {"type", "bridge"}, "bridges (CONFIG_BRIDGE), which the lab's tenants need"},
      {!l3_tenant.empty(),
       {"type", "vrf", "table", "1001"},
       "VRF devices (CONFIG_NET_VRF), which tenant " + l3_tenant +
           "'s L3 VNI needs (routing between its networks); give it none to run its networks "
           "as L2 segments here"},
  };
  for (const auto& f : features) {
    if (!f.needed) continue;
    auto err = can_create(f.type);
    if (!err) return err.error();
    if (!err->empty()) return env_error("this kernel cannot create " + f.what + " (ip: " + *err + ")");
  }
  return {};
}

Result<void> shaping_preflight(plan::Plan& plan, proc::ProcessRunner& runner,
                               const Progress& progress) {
  bool rates = false, delays = false;
  for (const auto& n : plan.nodes)
    for (const auto& i : n.interfaces) {
      rates = rates || i.rate_bps > 0;
      delays = delays || i.delay_ms > 0;
    }
  // "" when this kernel takes the qdisc, else tc's complaint.
  auto can_add = [&](std::vector<std::string> qdisc) -> Result<std::string> {
    std::vector<std::string> argv = {"unshare", "--net", "tc", "qdisc", "add", "dev", "lo", "root"};
    argv.insert(argv.end(), qdisc.begin(), qdisc.end());
    auto r = runner.run(proc::Command{argv, "", 10s});
    if (!r) return r.error().with_context("probing the kernel's qdiscs");
    return ok(r->exit_code == 0 ? std::string() : trim_end(r->err));
  };
  if (rates) {
    auto tbf = can_add({"tbf", "rate", "1mbit", "burst", "65536", "limit", "131072"});
    if (!tbf) return tbf.error();
    if (!tbf->empty())
      return env_error("this kernel cannot shape links (tc: " + *tbf +
                       "); the lab's `bandwidth:` needs the tbf qdisc (CONFIG_NET_SCH_TBF)");
  }
  if (delays) {
    auto netem = can_add({"netem", "delay", "1ms"});
    if (!netem) return netem.error();
    if (!netem->empty()) {
      for (const auto& l : plan.links) {
        plan::Interface* ia = plan::find_interface(plan, l.a_node, l.a_interface);
        plan::Interface* ib = plan::find_interface(plan, l.b_node, l.b_interface);
        int asked = std::max(ia ? ia->delay_ms : 0, ib ? ib->delay_ms : 0);
        if (asked == 0) continue;
        Note note{"warning", l.a_node, "",
                  "link " + l.a_node + ":" + l.a_interface + " -- " + l.b_node + ":" +
                      l.b_interface + " asks a delay of " + std::to_string(asked) +
                      " ms; this kernel has no netem qdisc (tc: " + *netem +
                      "), so the link runs without added delay"};
        progress(to_text(note));
        add_note(plan.notes, note);
        if (ia) ia->delay_ms = 0;
        if (ib) ib->delay_ms = 0;
      }
    }
  }
  return {};
}

namespace {
std::string read_trim(const std::string& path) {
  std::ifstream f(path);
  std::string s;
  std::getline(f, s);
  return s;
}
}  // namespace

// The kernel's neighbor tables (ARP, IPv6 ND) are shared by every network namespace and capped
// by the root namespace's gc_thresh3 (1024 by default; values in other namespaces are ignored):
// Documentation/networking/ip-sysctl.rst, "neigh/default/gc_thresh3". Past the cap the kernel
// refuses new entries ("neighbour: ndisc_cache: neighbor table overflow!") and every IPv6
// multicast send fails with EINVAL: measured at 128 nodes / 1,088 link ends, zebra's router
// advertisements failed on every port and BGP unnumbered never found its peers. Each interface
// of a lab needs a few entries per family (the peer's link-local or 169.254.0.1 next hop, the
// all-nodes/all-routers groups, MLD), so twin raises (never lowers) the caps to 8 per interface
// above the default and says so; they are limits, not state, and stay raised after `down`.
Result<void> ensure_neighbor_capacity(const plan::Plan& plan, const Progress& progress) {
  long interfaces = 0;
  for (const auto& n : plan.nodes) interfaces += static_cast<long>(n.interfaces.size()) + 1;
  long want3 = 1024 + 8 * interfaces;
  for (const char* family : {"ipv4", "ipv6"}) {
    std::string base = std::string("/proc/sys/net/") + family + "/neigh/default/";
    long cur3 = std::atol(read_trim(base + "gc_thresh3").c_str());
    long cur2 = std::atol(read_trim(base + "gc_thresh2").c_str());
    if (cur3 >= want3) continue;
    long want2 = std::max(cur2, want3 / 2);
    // thresh2 must stay below thresh3: raise 3 first.
    for (const auto& [file, value] :
         {std::pair<const char*, long>{"gc_thresh3", want3}, {"gc_thresh2", want2}}) {
      std::ofstream f(base + file);
      f << value << "\n";
      f.flush();
      if (!f)
        return env_error(
            "cannot raise " + base + file + " to " + std::to_string(value) + " (the lab's " +
            std::to_string(interfaces) +
            " interfaces need that many kernel neighbor entries): " + std::strerror(errno));
    }
    progress(std::string("raised the kernel's ") + family + " neighbor table limit (gc_thresh3) " +
             std::to_string(cur3) + " -> " + std::to_string(want3) + " for " +
             std::to_string(interfaces) + " interfaces");
  }
  return {};
}

}  // namespace twin::engine
