#include "twin/verdict/outage.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "twin/core/ip.hpp"
#include "twin/core/util.hpp"
#include "twin/validate/validator.hpp"

namespace twin::replay {

namespace {

// The address `node` sends from toward a destination of `family`: a host's own address, or
// the advertised loopback the reachability validator pings from (one the rest of the fabric
// routes back to); "" when it has none.
std::string source_of(const plan::Node& node, int family) {
  auto pick = [&](const std::vector<std::string>& addrs) -> std::string {
    for (const auto& a : addrs)
      if (auto p = IpPrefix::parse(a, true); p && p->family == family) return p->address();
    return "";
  };
  if (node.kind == topology::NodeKind::kHost) {
    for (const auto& i : node.interfaces)
      if (auto s = pick(i.addresses); !s.empty()) return s;
    return "";
  }
  return pick(validate::advertised_loopbacks(node));
}

}  // namespace

std::vector<FlowChoice> choose_flows(const plan::Plan& plan, const NetState& baseline,
                                     int max_flows) {
  std::vector<FlowChoice> hosts, loopbacks;
  std::set<std::string> seen;  // "a|b|family": one direction per pair
  for (const auto& pair : baseline.reachable) {
    // "src -> dst address" (add_reachability)
    auto arrow = pair.find(" -> ");
    if (arrow == std::string::npos) continue;
    std::string src = pair.substr(0, arrow);
    std::string rest = pair.substr(arrow + 4);
    auto sp = rest.find(' ');
    if (sp == std::string::npos) continue;
    std::string dst = rest.substr(0, sp), addr = rest.substr(sp + 1);
    auto ip = IpPrefix::parse(addr, true);
    const plan::Node* s = plan.find(src);
    const plan::Node* d = plan.find(dst);
    if (!ip || !s || !d) continue;
    std::string key = std::min(src, dst) + "|" + std::max(src, dst) + "|" +
                      std::to_string(ip->family);
    if (!seen.insert(key).second) continue;
    std::string source = source_of(*s, ip->family);
    if (source.empty()) continue;
    FlowChoice f{src, dst, source, ip->address()};
    bool host_pair =
        s->kind == topology::NodeKind::kHost && d->kind == topology::NodeKind::kHost;
    (host_pair ? hosts : loopbacks).push_back(f);
  }
  std::vector<FlowChoice> out;
  for (const auto& f : hosts)
    if (static_cast<int>(out.size()) < max_flows) out.push_back(f);
  int room = max_flows - static_cast<int>(out.size());
  if (room <= 0 || loopbacks.empty()) return out;
  // Evenly over the name-ordered pairs: every node pair as likely as another.
  double step = std::max(1.0, static_cast<double>(loopbacks.size()) / room);
  for (double i = 0; i < static_cast<double>(loopbacks.size()) && room > 0; i += step, --room)
    out.push_back(loopbacks[static_cast<size_t>(i)]);
  return out;
}

std::optional<Reason> outage_reason(const runtime::StreamStats& stats,
                                    std::chrono::milliseconds budget,
                                    const std::set<std::string>& not_judged) {
  std::vector<const runtime::FlowStats*> over;
  for (const auto& f : stats.flows)
    if (f.error.empty() && !not_judged.count(f.name) &&
        f.longest_outage_ms > static_cast<double>(budget.count()))
      over.push_back(&f);
  if (over.empty()) return std::nullopt;
  std::stable_sort(over.begin(), over.end(), [](const auto* a, const auto* b) {
    return a->longest_outage_ms > b->longest_outage_ms;
  });
  Reason r;
  r.category = "outage";
  r.rank = reason_rank(r.category);
  for (const auto* f : over)
    r.subjects.push_back(f->name + ": " + ms_text(f->longest_outage_ms) + " (lost " +
                         std::to_string(f->lost) + " of " + std::to_string(f->sent) + " echoes)");
  std::string head;
  for (size_t i = 0; i < r.subjects.size() && i < 3; ++i)
    head += (i ? ", " : "") + r.subjects[i];
  if (r.subjects.size() > 3) head += ", … (" + std::to_string(r.subjects.size() - 3) + " more)";
  r.message = std::to_string(over.size()) + (over.size() == 1 ? " flow" : " flows") +
              " lost traffic for longer than the " + ms_text(static_cast<double>(budget.count())) +
              " budget while the change ran: " + head;
  return r;
}

namespace {

class SystemTrafficProbe final : public TrafficProbe {
 public:
  Result<void> start(const std::vector<runtime::StreamFlow>& flows,
                     std::chrono::milliseconds interval) override {
    stream_ = std::make_unique<runtime::ProbeStream>(flows, interval);
    return stream_->start();
  }
  runtime::StreamStats stop() override { return stream_ ? stream_->stop() : runtime::StreamStats{}; }

 private:
  std::unique_ptr<runtime::ProbeStream> stream_;
};

}  // namespace

std::unique_ptr<TrafficProbe> system_traffic_probe() {
  return std::make_unique<SystemTrafficProbe>();
}

}  // namespace twin::replay
