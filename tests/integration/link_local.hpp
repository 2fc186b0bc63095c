#pragma once
// wiring::repair_link_local for the integration suites, declared without twin's headers (the
// suites call their CLI helper `twin`, which would clash with the namespace).
#include <string>
#include <vector>

namespace twin_it {

// Each gap repair_link_local found among `ports` of `netns`, as "swp1 address repaired" /
// "swp3 no-address not-repaired"; {"error: ..."} when it failed.
std::vector<std::string> repair_link_local(const std::string& netns,
                                           const std::vector<std::string>& ports);

}  // namespace twin_it
