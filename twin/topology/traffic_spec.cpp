#include "twin/topology/traffic_spec.hpp"

#include <cstdlib>

namespace twin::topology {

const std::vector<std::string> kTrafficKeys = {
    "pattern",      "duration",      "flows-per-pair", "protocol", "effective-bandwidth",
    "tail-latency", "bandwidth-loss"};

namespace {

// A fraction in (lo, 1]: "0.8", or a percentage ("80%"). nullopt (reported) otherwise.
std::optional<double> fraction(yaml::Reader& r, const yaml::Value& x, bool zero_ok,
                               const std::string& what, const std::string& hint) {
  auto s = r.string(x);
  if (!s) return std::nullopt;
  std::string text = *s;
  const bool percent = !text.empty() && text.back() == '%';
  if (percent) text.pop_back();
  char* end = nullptr;
  double f = text.empty() ? -1 : std::strtod(text.c_str(), &end);
  if (percent) f /= 100;
  if (text.empty() || end == text.c_str() || *end != '\0' || !(zero_ok ? f >= 0 : f > 0) ||
      !(f <= 1)) {
    r.error(x, "expected " + what + ", got '" + *s + "'", hint);
    return std::nullopt;
  }
  return f;
}

}  // namespace

std::optional<TrafficSpec> read_traffic_spec(yaml::Reader& r, const yaml::Value& v) {
  TrafficSpec ts;
  ts.mark = v.mark();
  const std::string expected =
      "expected true, false, or a mapping of pattern, duration, "
      "flows-per-pair, protocol, effective-bandwidth, tail-latency, "
      "bandwidth-loss";
  const std::string example = "e.g. `traffic: {pattern: all-to-all, effective-bandwidth: 0.8}`";
  if (v.node.IsScalar() && (v.node.Scalar() == "true" || v.node.Scalar() == "false")) {
    if (v.node.Scalar() == "false") return std::nullopt;
    return ts;
  }
  if (!v.node.IsMap()) {
    r.error(v, expected + ", " + yaml::found(v.node), example);
    return std::nullopt;
  }
  const size_t before = r.problems();
  r.check_keys(v, kTrafficKeys);
  if (yaml::Value x = yaml::child(v, "pattern"))
    if (auto c = r.choice(x, {"all-to-all", "ring", "incast", "pairs"})) ts.pattern = *c;
  if (yaml::Value x = yaml::child(v, "duration"))
    if (auto d = r.duration(x)) {
      if (d->count() % 1000 != 0 || d->count() > 600000 || d->count() == 0)
        r.error(x, "expected whole seconds from 1s up to 10m (iperf3 counts seconds)", "e.g. 3s");
      else
        ts.duration_s = static_cast<int>(d->count() / 1000);
    }
  if (yaml::Value x = yaml::child(v, "flows-per-pair"))
    if (auto n = r.integer(x, 1, 64, "flows")) ts.flows_per_pair = static_cast<int>(*n);
  if (yaml::Value x = yaml::child(v, "protocol"))
    if (auto c = r.choice(x, {"tcp", "udp"})) ts.protocol = *c;
  if (yaml::Value x = yaml::child(v, "effective-bandwidth"))
    if (auto f = fraction(r, x, false, "a fraction of the fair share, above 0 and at most 1",
                          "e.g. 0.8 (or 80%): the slowest pair gets at least 80 % of its fair "
                          "share"))
      ts.effective_bandwidth = *f;
  if (yaml::Value x = yaml::child(v, "tail-latency"))
    if (auto d = r.duration(x)) ts.tail_latency_ms = static_cast<int>(d->count());
  if (yaml::Value x = yaml::child(v, "bandwidth-loss")) {
    // Run to run a shaped lab's figures move up to 6 % (docs/traffic.md): a smaller allowance
    // would reject good changes and fail rollbacks on noise.
    const std::string want = "a fraction from 0.05 to 1 or a percentage from 5% to 100%";
    const std::string bare = x.node.IsScalar() ? x.node.Scalar() : "";
    char* end = nullptr;
    const double n = bare.empty() ? 0 : std::strtod(bare.c_str(), &end);
    if (!bare.empty() && end && *end == '\0' && n > 1 && n <= 100) {
      r.error(x, "expected " + want + ", got '" + bare + "'", "did you mean " + bare + "%?");
    } else if (auto f = fraction(r, x, true, want,
                                 "e.g. 20%: the gate rejects a change that leaves the pattern's "
                                 "aggregate or its slowest pair more than 20 % below the "
                                 "baseline; below 5 % is run-to-run noise")) {
      if (*f < 0.05)
        r.error(x, "expected " + want + ", got '" + bare + "'",
                "below 5 % is run-to-run noise: the figures of a shaped lab move up to 6 % "
                "between runs (docs/traffic.md)");
      else
        ts.bandwidth_loss = *f;
    }
  }
  if (r.problems() != before) return std::nullopt;
  return ts;
}

}  // namespace twin::topology
