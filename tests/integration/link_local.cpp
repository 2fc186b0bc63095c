#include "tests/integration/link_local.hpp"

#include "twin/wiring/wiring.hpp"

namespace twin_it {

std::vector<std::string> repair_link_local(const std::string& netns,
                                           const std::vector<std::string>& ports) {
  auto gaps = twin::wiring::repair_link_local(netns, ports);
  if (!gaps) return {"error: " + gaps.error().message};
  std::vector<std::string> out;
  for (const auto& g : *gaps)
    out.push_back(g.ifname + (g.has_address ? " address" : " no-address") +
                  (g.repaired ? " repaired" : " not-repaired"));
  return out;
}

}  // namespace twin_it
