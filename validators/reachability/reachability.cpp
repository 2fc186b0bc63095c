#include "validators/reachability/reachability.hpp"

#include "twin/core/ip.hpp"

namespace twin::validators {

using validate::address_of;
using validate::is_ipv6;


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
          if (!validate::hosts_routed(plan, paths, src, dst, src_addr, da)) continue;
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
