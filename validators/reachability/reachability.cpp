#include "validators/reachability/reachability.hpp"

#include <algorithm>
#include <cstdint>
#include <set>

#include "twin/core/diagnostics.hpp"
#include "twin/core/ip.hpp"

namespace twin::validators {

using validate::address_of;
using validate::first_of_family;
using validate::is_ipv6;


// By both names alone: the gate diffs mesh results by "node -> subject" between validations,
// so a change that adds or removes another node must not move which end sends; and each node
// sends for about half of its pairs. FNV-1a over "lower\nhigher", then MurmurHash3's 64-bit
// finalizer (fmix64) to mix the bit used.
bool sends_loopback_echo(const std::string& self, const std::string& other) {
  const std::string& lower = std::min(self, other);
  const std::string& higher = std::max(self, other);
  std::uint64_t h = 1469598103934665603ull;
  auto mix = [&](const std::string& text) {
    for (unsigned char c : text) {
      h ^= c;
      h *= 1099511628211ull;
    }
  };
  mix(lower);
  mix("\n");
  mix(higher);
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return (h & 1u) != 0 ? self == lower : self == higher;
}

std::vector<validate::PingProbe> reachability_probes(const plan::Plan& plan, int max_pairs) {
  std::vector<validate::PingProbe> loop, host;
  const auto paths = plan::expected_paths_by_family(plan);
  // One echo per pair of loopback addresses, not one from each end: its request crosses the
  // fabric toward the destination's loopback and its reply comes back toward the source's, so
  // the echo the other end would send (the same two addresses, swapped) asks the same routes —
  // forwarding is by destination — and differs only in its ECMP hash. routed_frr_pairs yields
  // both orders of a pair or neither (it needs a path both ways). A node sources its echoes
  // from its first loopback of the family, as before: the sending end probes every loopback
  // of the other end; the other end only those of the sender's loopbacks that are not its
  // first of their family (no echo from the sender covers them).
  // Per address family, over that family's paths (OSPFv2 and OSPFv3 are separate graphs).
  for (const int family : {4, 6})
    for (const auto& [srcp, dstp] : validate::routed_frr_pairs(plan, paths.of(family))) {
      const bool sender = sends_loopback_echo(srcp->name, dstp->name);
      const auto src_loops = validate::advertised_loopbacks(*srcp);
      const auto dst_loops = validate::advertised_loopbacks(*dstp);
      for (const auto& dl : dst_loops) {
        if (is_ipv6(dl) != (family == 6)) continue;
        const std::string destination = address_of(dl);
        if (!sender && first_of_family(dst_loops, is_ipv6(dl)) == destination)
          continue;  // the other end's echo from this address covers it
        const std::string source = first_of_family(src_loops, is_ipv6(dl));
        if (source.empty()) continue;  // no loopback of that family to source from
        validate::PingProbe p;
        p.test = 0;
        p.test_name = "loopback-mesh";
        p.node = srcp->name;
        p.subject = dstp->name + " " + destination;
        p.expected = "echo reply (both ways)";
        p.request.destination = destination;
        p.request.source = source;
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
          if (!validate::hosts_routed(plan, paths.of(da), src, dst, src_addr, da)) continue;
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
  // Anycast addresses: every router that does not hold one pings it from its own loopback;
  // the nearest holder answers (only holders have the address, so a reply is a holder's), and
  // its reply needs a way back to that loopback from some holder.
  std::vector<validate::PingProbe> anycast;
  for (const auto& g : plan::anycast_groups(plan)) {
    const bool v6 = is_ipv6(g.prefix);
    const auto& table = paths.of(v6 ? 6 : 4);
    for (const auto& [node, e] : plan::anycast_paths(plan, g)) {
      const plan::Node* src = plan.find(node);
      if (!src || src->drained) continue;
      const std::string source = first_of_family(validate::advertised_loopbacks(*src), v6);
      if (source.empty()) continue;
      const bool back = std::any_of(g.holders.begin(), g.holders.end(), [&](const auto& h) {
        auto it = table.find({h, node});
        return it != table.end() && it->second.ecmp > 0;
      });
      if (!back) continue;
      validate::PingProbe p;
      p.test = 4;
      p.test_name = "anycast";
      p.node = node;
      p.subject = "anycast " + address_of(g.prefix);
      p.expected = "echo reply from a holder (" + join_names(g.holders) + ")";
      p.request.destination = address_of(g.prefix);
      p.request.source = source;
      p.request.count = 2;
      p.request.timeout = std::chrono::milliseconds(1500);
      anycast.push_back(std::move(p));
    }
  }
  auto out = validate::sample_evenly(std::move(loop), max_pairs);
  auto tm = validate::sample_evenly(std::move(tenant), max_pairs);
  auto h = validate::sample_evenly(std::move(host), max_pairs);
  out.insert(out.end(), std::make_move_iterator(h.begin()), std::make_move_iterator(h.end()));
  out.insert(out.end(), std::make_move_iterator(tm.begin()), std::make_move_iterator(tm.end()));
  auto any = validate::sample_evenly(std::move(anycast), max_pairs);
  out.insert(out.end(), std::make_move_iterator(any.begin()), std::make_move_iterator(any.end()));
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

std::vector<Note> reachability_coverage(const plan::Plan& plan,
                                        const std::vector<validate::TestResult>& results) {
  std::vector<std::string> routers;
  for (const auto& n : plan.nodes)
    if (n.kind == topology::NodeKind::kFrr && !n.drained && !n.loopbacks.empty())
      routers.push_back(n.name);
  if (routers.size() < 2) return {};  // nothing a mesh could have tested
  std::set<std::string> tested;
  for (const auto& r : results) {
    if (r.validator != "reachability" || r.test != 0) continue;
    tested.insert(r.node);
    // The subject names the other end: "leaf2 10.255.1.2".
    tested.insert(r.peer.substr(0, r.peer.find(' ')));
  }
  std::vector<std::string> untested;
  for (const auto& n : routers)
    if (!tested.count(n)) untested.push_back(n);
  if (untested.empty()) return {};
  Note note;
  note.severity = "warning";
  note.text = untested.size() == routers.size()
                  ? "no reachability expectation: none of the " + std::to_string(routers.size()) +
                        " routers is expected to reach another's loopback, so no loopback was "
                        "pinged (twin expects what the configs announce: a `network` statement "
                        "or `redistribute connected` of the loopback, over sessions whose policy "
                        "it can follow; declare `checks:` for the rest)"
                  : "no reachability expectation for " + join_some(untested, 6) +
                        ": no route to or from " + (untested.size() == 1 ? "it" : "them") +
                        " is expected, so " + (untested.size() == 1 ? "its" : "their") +
                        " loopbacks were not pinged";
  return {note};
}

std::vector<Note> ReachabilityValidator::coverage(
    const validate::Context& ctx, const std::vector<validate::TestResult>& results) const {
  return reachability_coverage(ctx.plan, results);
}

}  // namespace twin::validators
