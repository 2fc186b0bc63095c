#include "twin/wiring/mgmt.hpp"

#include <sstream>

namespace twin::wiring {

namespace {
// The host's port in the management namespace.
constexpr const char* kHostPort = "host";
}  // namespace

std::string mgmt_root_script(const plan::Plan& plan, const std::vector<const plan::Node*>& nodes,
                             bool network) {
  if (!plan.mgmt) return "";
  const plan::Mgmt& m = *plan.mgmt;
  std::ostringstream s;
  if (network) {
    s << "netns add " << m.netns << "\n";
    s << "link add " << m.host_veth << " type veth peer name " << kHostPort << " netns "
      << m.netns << "\n";
    s << "address add " << m.host_address << " dev " << m.host_veth << "\n";
    s << "link set " << m.host_veth << " up\n";
  }
  for (const auto* n : nodes)
    if (!n->mgmt_port.empty())
      s << "link add " << m.interface << " netns " << n->netns << " type veth peer name "
        << n->mgmt_port << " netns " << m.netns << "\n";
  return s.str();
}

std::string mgmt_bridge_script(const plan::Plan& plan, const std::vector<const plan::Node*>& nodes,
                               bool network) {
  if (!plan.mgmt) return "";
  std::ostringstream s;
  if (network) {
    s << "link set lo up\n";
    s << "link add " << plan::kBridgeDevice
      << " type bridge stp_state 0 forward_delay 0 mcast_snooping 0\n";
    s << "link set " << kHostPort << " master " << plan::kBridgeDevice << " up\n";
    if (!plan.mgmt->dhcp_address.empty())
      s << "address add " << plan.mgmt->dhcp_address << " dev " << plan::kBridgeDevice << "\n";
    s << "link set " << plan::kBridgeDevice << " up\n";
  }
  for (const auto* n : nodes)
    if (!n->mgmt_port.empty())
      s << "link set " << n->mgmt_port << " master " << plan::kBridgeDevice << " up\n";
  return s.str();
}

std::string mgmt_node_script(const plan::Plan& plan, const plan::Node& node) {
  if (!plan.mgmt || node.mgmt_port.empty()) return "";
  const plan::Mgmt& m = *plan.mgmt;
  const std::string addr = node.mgmt_ip();
  std::ostringstream s;
  s << "address add " << node.mgmt_address << " dev " << m.interface << "\n"
    << "link set " << m.interface << " up\n"
    << "rule add pref 1 to " << addr << "/32 iif " << m.interface << " lookup local\n"
    << "rule add pref 2 to " << addr << "/32 iif lo lookup local\n"
    << "rule add pref 3 to " << addr << "/32 prohibit\n"
    << "rule add pref 4 to " << m.subnet << " iif lo lookup main\n"
    << "rule add pref 5 to " << m.subnet << " prohibit\n"
    << "rule add pref 32765 lookup local\n"
    << "rule del pref 0\n";
  return s.str();
}

std::string mgmt_vm_port_script(const plan::Node& node) {
  if (node.vm.mgmt_netns.empty() || node.vm.mgmt_tap.empty()) return "";
  return "link set " + node.vm.mgmt_tap + " master " + plan::kBridgeDevice + " up\n";
}

std::vector<std::string> mgmt_dhcp_argv(const plan::Mgmt& m, const std::string& hosts_file) {
  const std::string server = m.dhcp_address.substr(0, m.dhcp_address.find('/'));
  const std::string network = m.subnet.substr(0, m.subnet.find('/'));
  return {"dnsmasq", "--keep-in-foreground", "--log-facility=-", "--conf-file=/dev/null",
          "--port=0", "--no-resolv", "--no-hosts", "--bind-interfaces",
          std::string("--interface=") + plan::kBridgeDevice, "--listen-address=" + server,
          "--except-interface=lo",
          // Leases never end: a guest keeps its address if this server dies (twin's node
          // family reports it; a reboot would need it).
          "--dhcp-range=" + network + ",static,infinite", "--dhcp-hostsfile=" + hosts_file,
          "--dhcp-option=option:router", "--dhcp-authoritative", "--leasefile-ro",
          "--pid-file=", "--user=root", "--group=root"};
}

std::string mgmt_dhcp_hosts(const plan::Plan& plan) {
  std::ostringstream s;
  for (const auto& n : plan.nodes)
    if (!n.vm.mgmt_netns.empty() && !n.mgmt_address.empty())
      s << n.vm.mgmt_mac << "," << n.mgmt_ip() << "\n";
  return s.str();
}

std::string mgmt_nft_script(const plan::Mgmt& m) {
  std::ostringstream s;
  // `add table` then `flush table`: the same script makes it or empties it (idempotent).
  s << "add table inet " << m.nft_table << "\n"
    << "flush table inet " << m.nft_table << "\n"
    << "table inet " << m.nft_table << " {\n"
    << "  chain forward {\n"
    << "    type filter hook forward priority filter; policy accept;\n"
    << "    iifname \"" << m.host_veth << "\" counter drop\n"
    << "    oifname \"" << m.host_veth << "\" counter drop\n"
    << "  }\n"
    << "}\n";
  return s.str();
}

}  // namespace twin::wiring
