#include "validators/reachability/reachability.hpp"

#include "twin/core/ip.hpp"

namespace twin::validators {

namespace {
bool is_v6(const std::string& a) { return a.find(':') != std::string::npos; }
std::string addr_of(const std::string& prefix) { return prefix.substr(0, prefix.find('/')); }

std::vector<validate::PingProbe> sample(std::vector<validate::PingProbe> v, int max) {
  if (max <= 0 || static_cast<int>(v.size()) <= max) return v;
  std::vector<validate::PingProbe> out;
  double step = static_cast<double>(v.size()) / max;
  for (int i = 0; i < max; ++i) out.push_back(std::move(v[static_cast<size_t>(i * step)]));
  return out;
}
}  // namespace

std::vector<validate::PingProbe> reachability_probes(const plan::Plan& plan, int max_pairs) {
  auto paths = plan::expected_paths(plan);
  std::vector<validate::PingProbe> loop, host;
  for (const auto& src : plan.nodes) {
    if (src.kind != "frr") continue;
    for (const auto& dst : plan.nodes) {
      if (dst.kind != "frr" || dst.name == src.name) continue;
      auto pe = paths.find({src.name, dst.name});
      if (pe == paths.end() || pe->second.ecmp == 0) continue;
      for (const auto& dl : dst.loopbacks) {
        std::string source;
        for (const auto& sl : src.loopbacks)
          if (is_v6(sl) == is_v6(dl)) {
            source = addr_of(sl);
            break;
          }
        if (source.empty()) continue;  // no loopback of that family to source from
        validate::PingProbe p;
        p.test = 0;
        p.test_name = "loopback-mesh";
        p.node = src.name;
        p.subject = dst.name + " " + addr_of(dl);
        p.expected = "echo reply";
        p.request.destination = addr_of(dl);
        p.request.source = source;
        p.request.count = 2;
        p.request.timeout = std::chrono::milliseconds(1500);
        loop.push_back(std::move(p));
      }
    }
  }
  for (const auto& src : plan.nodes) {
    if (src.kind != "host") continue;
    for (const auto& dst : plan.nodes) {
      if (dst.kind != "host" || dst.name == src.name) continue;
      for (const auto& di : dst.interfaces)
        for (const auto& da : di.addresses) {
          bool src_has_family = false;
          for (const auto& si : src.interfaces)
            for (const auto& sa : si.addresses) src_has_family |= is_v6(sa) == is_v6(da);
          if (!src_has_family) continue;
          validate::PingProbe p;
          p.test = 1;
          p.test_name = "host-mesh";
          p.node = src.name;
          p.subject = dst.name + " " + addr_of(da);
          p.expected = "echo reply";
          p.request.destination = addr_of(da);
          p.request.count = 2;
          p.request.timeout = std::chrono::milliseconds(1500);
          host.push_back(std::move(p));
        }
    }
  }
  auto out = sample(std::move(loop), max_pairs);
  auto h = sample(std::move(host), max_pairs);
  out.insert(out.end(), std::make_move_iterator(h.begin()), std::make_move_iterator(h.end()));
  return out;
}

std::vector<validate::TestResult> ReachabilityValidator::run(validate::Context& ctx) {
  return validate::run_ping_probes(ctx, "reachability",
                                   reachability_probes(ctx.plan, ctx.max_pairs));
}

}  // namespace twin::validators
