#include "validators/reachability/reachability.hpp"

#include "twin/core/ip.hpp"

namespace twin::validators {

using validate::address_of;
using validate::is_ipv6;

namespace {
// The FRR router a host hangs off (its first link to one), or nullptr.
const plan::Node* router_of(const plan::Plan& plan, const plan::Node& host) {
  for (const auto& i : host.interfaces)
    if (const auto* p = plan.find(i.peer_node); p && p->kind == topology::NodeKind::kFrr) return p;
  return nullptr;
}

// Whether `router` originates a subnet holding `address` (a host-subnet prefix of the plan).
bool originates(const plan::Plan& plan, const plan::Node& router, const std::string& address) {
  auto a = IpPrefix::parse(address_of(address), true);
  for (const auto& e : plan.prefixes)
    if (e.owner == router.name)
      if (auto p = IpPrefix::parse(e.prefix); p && a && p->contains(*a)) return true;
  return false;
}

// Whether a ping from host `a` to `addr` of host `b` can be answered: behind one router, or each
// host's subnet originated by its router and routed both ways between the routers. Hosts not
// behind an FRR router (a VM guest's own routing) are expected to reach each other, as before.
bool hosts_routed(const plan::Plan& plan, const plan::PathTable& paths, const plan::Node& a,
                  const plan::Node& b, const std::string& a_addr, const std::string& b_addr) {
  const auto* ra = router_of(plan, a);
  const auto* rb = router_of(plan, b);
  if (!ra || !rb || ra == rb) return true;
  if (!originates(plan, *ra, a_addr) || !originates(plan, *rb, b_addr)) return false;
  auto there = paths.find({ra->name, rb->name});
  auto back = paths.find({rb->name, ra->name});
  return there != paths.end() && there->second.ecmp > 0 && back != paths.end() &&
         back->second.ecmp > 0;
}
}  // namespace

std::vector<validate::PingProbe> reachability_probes(const plan::Plan& plan, int max_pairs) {
  std::vector<validate::PingProbe> loop, host;
  const auto paths = plan::expected_paths(plan);
  for (const auto& [srcp, dstp] : validate::routed_frr_pairs(plan, paths)) {
    const auto& src = *srcp;
    const auto& dst = *dstp;
    {
      for (const auto& dl : validate::advertised_loopbacks(dst)) {
        std::string source;
        for (const auto& sl : validate::advertised_loopbacks(src))
          if (is_ipv6(sl) == is_ipv6(dl)) {
            source = address_of(sl);
            break;
          }
        if (source.empty()) continue;  // no loopback of that family to source from
        validate::PingProbe p;
        p.test = 0;
        p.test_name = "loopback-mesh";
        p.node = src.name;
        p.subject = dst.name + " " + address_of(dl);
        p.expected = "echo reply";
        p.request.destination = address_of(dl);
        p.request.source = source;
        p.request.count = 2;
        p.request.timeout = std::chrono::milliseconds(1500);
        loop.push_back(std::move(p));
      }
    }
  }
  for (const auto& src : plan.nodes) {
    if (src.kind != topology::NodeKind::kHost) continue;
    for (const auto& dst : plan.nodes) {
      if (dst.kind != topology::NodeKind::kHost || dst.name == src.name) continue;
      for (const auto& di : dst.interfaces)
        for (const auto& da : di.addresses) {
          std::string src_addr;
          for (const auto& si : src.interfaces)
            for (const auto& sa : si.addresses)
              if (src_addr.empty() && is_ipv6(sa) == is_ipv6(da)) src_addr = sa;
          if (src_addr.empty()) continue;
          if (!hosts_routed(plan, paths, src, dst, src_addr, da)) continue;
          validate::PingProbe p;
          p.test = 1;
          p.test_name = "host-mesh";
          p.node = src.name;
          p.subject = dst.name + " " + address_of(da);
          p.expected = "echo reply";
          p.request.destination = address_of(da);
          p.request.count = 2;
          p.request.timeout = std::chrono::milliseconds(1500);
          host.push_back(std::move(p));
        }
    }
  }
  auto out = validate::sample_evenly(std::move(loop), max_pairs);
  auto h = validate::sample_evenly(std::move(host), max_pairs);
  out.insert(out.end(), std::make_move_iterator(h.begin()), std::make_move_iterator(h.end()));
  return out;
}

std::vector<validate::TestResult> ReachabilityValidator::run(validate::Context& ctx) {
  return validate::run_ping_probes(ctx, "reachability",
                                   reachability_probes(ctx.plan, ctx.max_pairs));
}

}  // namespace twin::validators
