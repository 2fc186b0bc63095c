#pragma once
// The one list of validator families (DESIGN.md §2: explicit registration, no static
// initialisation tricks). Order here is the order they run and report in.
#include <memory>
#include <string>
#include <vector>

#include "twin/validate/validator.hpp"

namespace twin::validators {

std::vector<std::string> family_names();  // in run order, e.g. "bgp" first

// Creates the families named in `only` (all when empty). Unknown names are returned in
// `unknown` and not created.
std::vector<std::unique_ptr<validate::Validator>> make_validators(
    const std::vector<std::string>& only, std::vector<std::string>* unknown);

}  // namespace twin::validators
