#pragma once
// Image profiles (images/<name>.yaml): the search path, finding one on it and reading it. Used
// by the topology loaders, and by twin serve for the folders a request may name.
#include <optional>
#include <string>
#include <vector>

#include "twin/core/diagnostics.hpp"
#include "twin/core/input_policy.hpp"
#include "twin/topology/model.hpp"

namespace twin::topology {

// Folders searched for image profiles (<dir>/<image>.yaml), in order: <topology dir>/images,
// $TWIN_IMAGES (colon-separated), <TWIN_DATA_DIR>/images, /usr/share/twin/images.
std::vector<std::string> image_search_path(const std::string& topology_dir);

// The profile file of image `name`: a path when `name` has a '/' (relative to topology_dir),
// else the first <dir>/<name>.yaml on image_search_path(topology_dir). "" when there is none;
// `looked` gets every path tried, in order. The file found must pass `policy`, with the image
// search path's folders (but <topology_dir>/images, which is the input's) as more roots;
// otherwise "" and `*refused` says why (the first file found decides: a refused one is never
// passed over for the next folder's).
std::string find_image_profile(const std::string& name, const std::string& topology_dir,
                               const InputPolicy& policy, std::vector<std::string>* looked,
                               std::optional<InputProblem>* refused);

// Names of the profiles on the search path, sorted, each once: the choices a hint offers.
std::vector<std::string> known_images(const std::string& topology_dir);

// Reads and checks the profile at `path` (found by find_image_profile) as image `name`. Every
// problem goes to `diags` (with `path` as the file); nullopt when there is any. Relative VM file
// paths resolve against the profile's folder; whether those files exist is not checked here.
std::optional<ImageProfile> load_image_profile(const std::string& name, const std::string& path,
                                               Diagnostics& diags);

}  // namespace twin::topology
