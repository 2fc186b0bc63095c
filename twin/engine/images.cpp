#include "twin/engine/images.hpp"

#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "twin/core/input_policy.hpp"
#include "twin/drivers/container.hpp"
#include "twin/runtime/frr.hpp"
#include "twin/topology/image_profile.hpp"

namespace fs = std::filesystem;

namespace twin::engine {

Result<nlohmann::json> image_catalog(proc::ProcessRunner& runner, const std::string& topology_dir) {
  nlohmann::json out = {{"images", nlohmann::json::array()},
                        {"unprofiled", nlohmann::json::array()}};
  const bool podman = ::access("/usr/bin/podman", X_OK) == 0;
  out["podman"] = podman;
  std::vector<drivers::ImageInfo> present;
  std::string podman_problem;
  if (podman) {
    if (auto l = drivers::list_images(runner))
      present = *l;
    else
      podman_problem = l.error().message;
  }
  const std::string host_frr = runtime::frr_version(runner);
  std::set<std::string> named;  // image ids some profile names
  InputPolicy policy =
      InputPolicy().with_roots(topology::image_search_path(topology_dir), "image search path");
  for (const auto& name : topology::known_images(topology_dir)) {
    std::vector<std::string> looked;  // (find_image_profile fills them: not optional)
    std::optional<InputProblem> refused;
    const std::string file =
        topology::find_image_profile(name, topology_dir, policy, &looked, &refused);
    if (file.empty()) continue;
    Diagnostics diags;
    auto p = topology::load_image_profile(name, file, diags);
    nlohmann::json e = {{"name", name}, {"profile", file}};
    if (!p) {
      e["present"] = false;
      e["missing"] = "the profile does not load: " + diags.format();
      out["images"].push_back(e);
      continue;
    }
    e["kind"] = topology::to_string(p->kind);
    e["backend"] = topology::to_string(p->backend);
    bool ok = true;
    std::string missing;
    if (!p->container.image.empty()) {
      e["image"] = p->container.image;
      if (!podman) {
        ok = false;
        missing = "podman is missing (tools/install-deps.sh --containers)";
      } else if (const auto* img = drivers::find_image(present, p->container.image)) {
        named.insert(img->id);
        e["image_id"] = img->id.substr(0, 12);
        e["bytes"] = img->bytes;
        auto probe = drivers::probe_image(runner, img->id, p->container.image);
        if (probe) {
          e["frr_version"] = probe->frr_version;
          if (!p->container.frr_version.empty() &&
              probe->frr_version.rfind(p->container.frr_version, 0) != 0)
            e["note"] = "the profile says FRR " + p->container.frr_version + ", the image runs " +
                        probe->frr_version;
        } else {
          ok = false;
          missing = probe.error().message;
        }
      } else {
        ok = false;
        missing = podman_problem.empty()
                      ? "image " + p->container.image +
                            " is not present: tools/build-images.sh builds twin's FRR images"
                      : podman_problem;
      }
    } else if (p->boots_vm) {
      for (const auto& f : {p->vm.kernel, p->vm.initrd, p->vm.disk})
        if (!f.empty() && !fs::exists(f)) {
          ok = false;
          missing += (missing.empty() ? "" : "; ") + f + " is missing";
        }
      if (!ok)
        missing += name == "test-vm" ? " (tools/build-test-vm-image builds it)"
                                     : " (the NOS vendor's image: docs/vm-nodes.md)";
    } else if (p->kind == topology::NodeKind::kFrr) {
      if (host_frr == "unknown") {
        ok = false;
        missing = "this machine's FRR is missing (tools/install-deps.sh)";
      } else {
        e["frr_version"] = host_frr;
      }
    }
    e["present"] = ok;
    if (!ok) e["missing"] = missing;
    out["images"].push_back(e);
  }
  for (const auto& i : present) {
    if (named.count(i.id)) continue;
    nlohmann::json e = {{"image", i.names.empty() ? i.id.substr(0, 12) : i.names.front()},
                        {"image_id", i.id.substr(0, 12)},
                        {"bytes", i.bytes}};
    if (!i.frr_version.empty()) e["frr_version"] = i.frr_version;
    out["unprofiled"].push_back(e);
  }
  return twin::ok(std::move(out));
}

Result<std::vector<plan::PresentImage>> present_images(proc::ProcessRunner& runner) {
  std::vector<plan::PresentImage> out;
  if (const std::string host = runtime::frr_version(runner); host != "unknown")
    out.push_back({{}, "", host, true});
  if (::access("/usr/bin/podman", X_OK) != 0) return out;
  auto images = drivers::list_images(runner);
  if (!images) return images.error();
  for (const auto& i : *images) out.push_back({i.names, i.id, i.frr_version, false});
  return out;
}

}  // namespace twin::engine
