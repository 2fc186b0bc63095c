#pragma once
// `twin images`: the image profiles a lab may name (images/*.yaml on the search path) and,
// for each, whether this machine can run it now: the FRR release it would run (read from the
// image itself, or this machine's FRR for a namespace node), the container image's size, the
// VM files. Container images present that no profile names are listed too.
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "twin/core/error.hpp"
#include "twin/plan/images.hpp"
#include "twin/proc/runner.hpp"

namespace twin::engine {

// {"images": [{name, kind, backend, profile (file), description, present, frr_version,
// image, image_id, bytes, missing (what is absent and how to get it)}], "unprofiled":
// [{image, image_id, frr_version, bytes}], "podman": bool}. Never fails for one image: a
// problem becomes that entry's `missing`. `topology_dir` adds <dir>/images to the search path
// ("" = none). Sizes in bytes; versions as the image's zebra prints them ("10.3").
Result<nlohmann::json> image_catalog(proc::ProcessRunner& runner, const std::string& topology_dir);

// What plan::resolve_images chooses among: this machine's FRR (when installed) and the container
// images podman has (when podman is installed), each with its FRR release (twin's images carry
// it as a label; others are read at `up`). Errors: podman failing (kHarness).
Result<std::vector<plan::PresentImage>> present_images(proc::ProcessRunner& runner);

}  // namespace twin::engine
