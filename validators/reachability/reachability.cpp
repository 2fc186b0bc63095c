#include "validators/reachability/reachability.hpp"

#include "twin/core/ip.hpp"

#include <algorithm>
#include <set>

namespace twin::validators {

using validate::address_of;
using validate::is_ipv6;


std::vector<validate::PingProbe> reachability_probes(const plan::Plan& plan, int max_pairs) {
  std::vector<validate::PingProbe> loop, host;
  const auto paths = plan::expected_paths(plan);
  // One echo per pair of nodes and pair of loopback addresses, not one each way: the request
  // crosses the fabric toward the destination's loopback and the reply comes back toward the
  // source's, so the echo the other node would send (the same two addresses, swapped) asks
  // the same routes — forwarding is by destination — and differs only in its ECMP hash.
  // routed_frr_pairs yields both orders of a pair or neither (it needs a path both ways); the
  // sender alternates with the pair's plan positions so that each node sends about half.
  auto position = [&](const plan::Node* n) { return n - plan.nodes.data(); };
  auto sends = [](std::ptrdiff_t a, std::ptrdiff_t b) { return (a + b) % 2 == 0 ? a < b : a > b; };
  for (const auto& [srcp, dstp] : validate::routed_frr_pairs(plan, paths)) {
    if (!sends(position(srcp), position(dstp))) continue;
    const auto src_loops = validate::advertised_loopbacks(*srcp);
    const auto dst_loops = validate::advertised_loopbacks(*dstp);
    auto first_of_family = [](const std::vector<std::string>& loops, bool v6) {
      for (const auto& l : loops)
        if (is_ipv6(l) == v6) return address_of(l);
      return std::string();
    };
    // Every loopback of each end meets the other end's first of its family (the address the
    // other end would source from), each address pair once.
    std::vector<std::pair<std::string, std::string>> address_pairs;
    auto add = [&](std::string from, std::string to) {
      if (from.empty() || to.empty()) return;  // no loopback of that family at one end
      std::pair<std::string, std::string> ab{std::move(from), std::move(to)};
      if (std::find(address_pairs.begin(), address_pairs.end(), ab) == address_pairs.end())
        address_pairs.push_back(std::move(ab));
    };
    for (const auto& dl : dst_loops) add(first_of_family(src_loops, is_ipv6(dl)), address_of(dl));
    for (const auto& sl : src_loops) add(address_of(sl), first_of_family(dst_loops, is_ipv6(sl)));
    for (auto& [source, destination] : address_pairs) {
      validate::PingProbe p;
      p.test = 0;
      p.test_name = "loopback-mesh";
      p.node = srcp->name;
      p.subject = dstp->name + " " + destination;
      p.expected = "echo reply (both ways)";
      p.request.destination = std::move(destination);
      p.request.source = std::move(source);
      p.request.count = 2;
      p.request.timeout = std::chrono::milliseconds(1500);
      loop.push_back(std::move(p));
    }
  }
  // Servers: every pair the network should connect (validate::hosts_routed). Two servers of
  // one tenant network are test 2 (their L2 segment across the overlay), others test 1.
  std::vector<validate::PingProbe> tenant;
  for (const auto& src : plan.nodes) {
    if (src.kind != topology::NodeKind::kHost) continue;
    const plan::TenantPlan* src_tenant = nullptr;
    const auto* src_net = plan::tenant_network_of_server(plan, src.name, &src_tenant);
    for (const auto& dst : plan.nodes) {
      if (dst.kind != topology::NodeKind::kHost || dst.name == src.name) continue;
      const bool same_network = src_net && plan::tenant_network_of_server(plan, dst.name) == src_net;
      for (const auto& di : dst.interfaces)
        for (const auto& da : di.addresses) {
          std::string src_addr;
          for (const auto& si : src.interfaces)
            for (const auto& sa : si.addresses)
              if (src_addr.empty() && is_ipv6(sa) == is_ipv6(da)) src_addr = sa;
          if (src_addr.empty()) continue;
          if (!validate::hosts_routed(plan, paths, src, dst, src_addr, da)) continue;
          validate::PingProbe p;
          p.test = same_network ? 2 : 1;
          p.test_name = same_network ? "tenant-mesh" : "host-mesh";
          p.node = src.name;
          p.subject = dst.name + " " + address_of(da);
          p.expected = same_network ? "echo reply (tenant " + src_tenant->name + ", " +
                                          src_net->name + ", VNI " +
                                          std::to_string(src_net->vni) + ")"
                                    : "echo reply";
          p.request.destination = address_of(da);
          p.request.count = 2;
          p.request.timeout = std::chrono::milliseconds(1500);
          (same_network ? tenant : host).push_back(std::move(p));
        }
    }
  }
  auto out = validate::sample_evenly(std::move(loop), max_pairs);
  auto tm = validate::sample_evenly(std::move(tenant), max_pairs);
  auto h = validate::sample_evenly(std::move(host), max_pairs);
  out.insert(out.end(), std::make_move_iterator(h.begin()), std::make_move_iterator(h.end()));
  out.insert(out.end(), std::make_move_iterator(tm.begin()), std::make_move_iterator(tm.end()));
  return out;
}

namespace {
// The server's port toward its leaf (its tenant port's far end), or nullptr.
const plan::Interface* server_port(const plan::Plan& plan, const plan::Node& server) {
  for (const auto& i : server.interfaces)
    if (const plan::Node* leaf = plan.find(i.peer_node))
      for (const auto& li : leaf->interfaces)
        if (li.name == i.peer_interface && li.vni) return &i;
  return nullptr;
}
}  // namespace

std::vector<validate::PingProbe> isolation_probes(const plan::Plan& plan) {
  std::vector<validate::PingProbe> out;
  for (const auto& ta : plan.tenants)
    for (const auto& na : ta.networks)
      for (const auto& a : na.servers) {
        const plan::Node* src = plan.find(a);
        const plan::Interface* port = src ? server_port(plan, *src) : nullptr;
        if (!port || !port->up) continue;
        // Addresses of a's own network: an overlapping plan may reuse one in another tenant,
        // and then a's own neighbour answers, rightly.
        std::set<std::string> own;
        for (const auto& s : na.servers)
          if (const plan::Node* n = plan.find(s))
            for (const auto& i : n->interfaces)
              for (const auto& addr : i.addresses) own.insert(address_of(addr));
        for (const auto& tb : plan.tenants) {
          if (&tb == &ta) continue;
          for (const auto& nb : tb.networks)
            for (const auto& b : nb.servers) {
              const plan::Node* dst = plan.find(b);
              if (!dst) continue;
              for (const auto& di : dst->interfaces)
                for (const auto& da : di.addresses) {
                  if (is_ipv6(da) || own.count(address_of(da))) continue;
                  validate::PingProbe p;
                  p.test = 3;
                  p.test_name = "tenant-isolation";
                  p.node = a;
                  p.subject = b + " " + address_of(da);
                  p.expected = "no answer (tenant " + ta.name + " must not reach tenant " +
                               tb.name + ")";
                  p.request.arp = true;
                  p.request.interface = port->name;
                  p.request.destination = address_of(da);
                  p.request.count = 2;
                  p.request.timeout = std::chrono::milliseconds(1000);
                  out.push_back(std::move(p));
                }
            }
        }
      }
  return out;
}

validate::TestResult isolation_result(const plan::Plan& plan, const validate::PingProbe& probe,
                                      const validate::PingResult& r) {
  using validate::Status;
  const std::string dst = probe.subject.substr(0, probe.subject.find(' '));
  if (r.outcome == validate::PingOutcome::kError)
    return validate::make_result("reachability", 3, probe.test_name, Status::kError, probe.node,
                                 probe.subject, probe.expected, "error",
                                 "ARP from " + probe.node + " could not be sent: " + r.detail);
  if (r.outcome != validate::PingOutcome::kReply)
    return validate::make_result("reachability", 3, probe.test_name, Status::kPassed, probe.node,
                                 probe.subject, probe.expected, "no answer", "");
  // Who answered, and over which network: the asking server's VNI reached that port.
  std::string mac = r.detail.rfind("is-at ", 0) == 0 ? r.detail.substr(6) : r.detail;
  std::string who = "a device with MAC " + mac;
  for (const auto& n : plan.nodes)
    for (const auto& i : n.interfaces)
      if (i.mac == mac) who = n.name + " " + i.name + " (" + mac + ")";
  const plan::TenantPlan *ta = nullptr, *tb = nullptr;
  const auto* na = plan::tenant_network_of_server(plan, probe.node, &ta);
  const auto* nb = plan::tenant_network_of_server(plan, dst, &tb);
  // The ports at both ends: one of them sits in the other tenant's bridge (evpn vni-bridge
  // names which).
  auto leaf_port = [&](const std::string& server) {
    const plan::Node* n = plan.find(server);
    const plan::Interface* i = n ? server_port(plan, *n) : nullptr;
    return i ? i->peer_node + ":" + i->peer_interface : std::string();
  };
  const std::string from_port = leaf_port(probe.node), to_port = leaf_port(dst);
  // Ports of one leaf meet in its bridge; others across the overlay.
  const bool same_leaf = from_port.substr(0, from_port.find(':')) == to_port.substr(0, to_port.find(':'));
  std::string path = probe.node + " " + probe.request.interface + " -> " + from_port +
                     (same_leaf ? " -> " : " -> overlay -> ") + to_port + " -> " + dst;
  return validate::make_result(
      "reachability", 3, probe.test_name, Status::kFailed, probe.node, probe.subject,
      probe.expected, "answered by " + who,
      "isolation broken: " + who + " answered " + probe.node + "'s ARP for " +
          probe.request.destination +
          (tb ? " (tenant " + tb->name + (nb ? " " + nb->name : "") + ")" : "") + " from " +
          probe.node + (ta ? " (tenant " + ta->name + (na ? " " + na->name : "") + ")" : "") +
          ": they share one L2 segment, path " + path);
}

std::vector<validate::TestResult> ReachabilityValidator::run(validate::Context& ctx) {
  auto out = validate::run_ping_probes(ctx, "reachability",
                                       reachability_probes(ctx.plan, ctx.max_pairs));
  auto iso = validate::run_ping_probes(
      ctx, isolation_probes(ctx.plan),
      [&](const validate::PingProbe& p, const validate::PingResult& r) {
        return isolation_result(ctx.plan, p, r);
      });
  out.insert(out.end(), iso.begin(), iso.end());
  return out;
}

}  // namespace twin::validators
