#include "twin/graph/inventory.hpp"

#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "twin/graph/graph.hpp"

namespace twin::graph {

namespace {

struct Member {
  std::string name, address, role, group;
  uint32_t asn = 0;
  // A VM: on the network by DHCP, logged into with its image's own sshd and account, not the
  // lab's login (docs/management.md).
  bool vm = false;
};

// "leaf" -> "leaves", "spine" -> "spines", "super-spine" -> "super-spines": Ansible's usual
// group names (letters, digits, _ only: a dash becomes _).
std::string group_of(const std::string& role) {
  std::string g = role.empty() ? "routers" : role;
  if (g.ends_with("f"))
    g = g.substr(0, g.size() - 1) + "ves";
  else if (!g.ends_with("s"))
    g += "s";
  for (char& c : g)
    if (c == '-') c = '_';
  return g;
}

std::vector<Member> members(const plan::Plan& plan) {
  const Graph g = from_plan(plan);
  std::map<std::string, const graph::Node*> by_name;
  for (const auto& n : g.nodes) by_name[n.name] = &n;
  std::vector<Member> out;
  for (const auto& n : plan.nodes) {
    if (n.mgmt_address.empty()) continue;
    Member m{n.name, n.mgmt_ip(), "", "", n.asn, !n.vm.mgmt_netns.empty()};
    if (auto it = by_name.find(n.name); it != by_name.end()) m.role = it->second->role;
    m.group = group_of(m.role);
    out.push_back(std::move(m));
  }
  return out;
}

std::string key(const plan::Mgmt& m) { return m.key_dir + "/id_ed25519"; }
std::string known_hosts(const plan::Mgmt& m) { return m.key_dir + "/known_hosts"; }

std::string header(const plan::Plan& p, const std::vector<Member>& ms, const char* comment) {
  std::string h = std::string(comment) + " twin inventory of lab " + p.lab +
                  ": management network " + p.mgmt->subnet + ", login " + p.mgmt->user +
                  " with the lab's key (valid while the lab is up)\n";
  for (const auto& x : ms)
    if (x.vm)
      h += std::string(comment) + " VM " + x.name + " at " + x.address +
           ": not listed, its image's own sshd and account log in\n";
  return h;
}

// The members the lab's login reaches (every one but the VMs).
std::vector<const Member*> logins(const std::vector<Member>& ms) {
  std::vector<const Member*> out;
  for (const auto& x : ms)
    if (!x.vm) out.push_back(&x);
  return out;
}

std::string ansible(const plan::Plan& p, const std::vector<Member>& ms) {
  const plan::Mgmt& m = *p.mgmt;
  std::map<std::string, std::vector<const Member*>> groups;
  for (const auto* x : logins(ms)) groups[x->group].push_back(x);
  std::ostringstream s;
  s << header(p, ms, "#") << "all:\n  vars:\n"
    << "    ansible_user: " << m.user << "\n"
    << "    ansible_connection: ansible.netcommon.network_cli\n"
    << "    ansible_network_os: frr.frr.frr\n"
    << "    ansible_ssh_private_key_file: " << key(m)
    << "\n"
    // paramiko (network_cli's transport on Debian 12) reads no known_hosts file but the
    // user's: the lab's host keys are in known_hosts for ssh, and checking is left to it.
    << "    ansible_host_key_checking: false\n"
    << "    ansible_ssh_common_args: -o UserKnownHostsFile=" << known_hosts(m)
    << " -o StrictHostKeyChecking=yes\n"
    << "  children:\n";
  for (const auto& [g, list] : groups) {
    s << "    " << g << ":\n      hosts:\n";
    for (const auto* x : list) s << "        " << x->name << ": {ansible_host: " << x->address << "}\n";
  }
  return s.str();
}

std::string nornir(const plan::Plan& p, const std::vector<Member>& ms) {
  const plan::Mgmt& m = *p.mgmt;
  std::ostringstream s;
  s << header(p, ms, "#") << "---\n";
  for (const auto* xp : logins(ms)) {
    const Member& x = *xp;
    s << x.name << ":\n"
      << "  hostname: " << x.address << "\n"
      << "  username: " << m.user << "\n"
      << "  platform: frr\n"
      << "  groups: [" << x.group << "]\n"
      << "  data: {role: " << (x.role.empty() ? "router" : x.role) << ", asn: " << x.asn
      << "}\n"
      << "  connection_options:\n"
      << "    netmiko:\n      extras: {use_keys: true, key_file: " << key(m) << "}\n"
      << "    scrapli:\n      extras: {auth_private_key: " << key(m)
      << ", auth_strict_key: false}\n";
  }
  return s.str();
}

std::string ssh_config(const plan::Plan& p, const std::vector<Member>& ms) {
  const plan::Mgmt& m = *p.mgmt;
  std::ostringstream s;
  s << header(p, ms, "#");
  for (const auto* x : logins(ms))
    s << "Host " << x->name << "\n"
      << "  HostName " << x->address << "\n"
      << "  User " << m.user << "\n"
      << "  IdentityFile " << key(m) << "\n"
      << "  IdentitiesOnly yes\n"
      << "  UserKnownHostsFile " << known_hosts(m) << "\n"
      << "  StrictHostKeyChecking yes\n";
  return s.str();
}

std::string json(const plan::Plan& p, const std::vector<Member>& ms) {
  const plan::Mgmt& m = *p.mgmt;
  nlohmann::json j = {{"lab", p.lab},
                      {"subnet", m.subnet},
                      {"host_address", m.host_address},
                      {"interface", m.interface},
                      {"user", m.user},
                      {"key", key(m)},
                      {"known_hosts", known_hosts(m)},
                      {"nodes", nlohmann::json::array()}};
  for (const auto& x : ms)
    j["nodes"].push_back({{"name", x.name},
                          {"address", x.address},
                          {"role", x.role},
                          {"group", x.group},
                          {"login", x.vm ? "image" : "lab"}});
  return j.dump(2) + "\n";
}

}  // namespace

Result<std::string> inventory(const plan::Plan& plan, const std::string& format) {
  if (!plan.mgmt)
    return usage_error("lab " + plan.lab +
                       " has no management network: add `mgmt: true` to its topology "
                       "(docs/management.md), then twin down and twin up");
  const auto ms = members(plan);
  if (format == "ansible") return ansible(plan, ms);
  if (format == "nornir") return nornir(plan, ms);
  if (format == "ssh-config") return ssh_config(plan, ms);
  if (format == "json") return json(plan, ms);
  return usage_error("--format '" + format + "': expected ansible, nornir, ssh-config or json");
}

}  // namespace twin::graph
