#pragma once
// Which image each node runs (issue 44's "the image a lab names is the image it gets"): a
// container node's image, or the FRR container image a containerlab file names, is matched
// against the images present on this machine. Present by name: that one. Else the closest
// release present (WORKPLAN "closest release": the same major.minor, newest patch; else the
// nearest release of the same major, ties to the newer; this machine's own FRR counts as a
// release present, run in a namespace), with a warning note naming both; `strict` refuses
// instead. No release of that major: refused. Pure: the caller reads what is present
// (engine::present_images).
#include <string>
#include <vector>

#include "twin/core/error.hpp"
#include "twin/plan/plan.hpp"

namespace twin::plan {

// A container image present on this machine, or this machine's own FRR (`host`: no names).
struct PresentImage {
  std::vector<std::string> names;  // localhost/twin-frr:10.3 ... (podman's)
  std::string id;
  std::string frr_version;  // "10.3"; "" when not known (an image without twin's label)
  bool host = false;        // this machine's FRR: a namespace node, no container
};

// An image reference as podman reads it: "x" is "localhost/x:latest", "x:1" "localhost/x:1",
// "quay.io/a/x" "quay.io/a/x:latest".
std::string canonical_image_ref(const std::string& ref);

// Whether any node of `plan` names a container image (a container profile's, or a containerlab
// file's): then `up` and `plan` read the images present (resolve_images).
bool asks_for_images(const Plan& plan);

// The release number a reference's tag gives: "quay.io/frrouting/frr:10.5.1" -> "10.5.1",
// "frrouting/frr:v8.4.1" -> "8.4.1"; "" without a numeric tag ("latest", none).
std::string release_of_tag(const std::string& image_ref);

// Index in `have` (release numbers such as "8.4.4") of the closest release to `wanted` (see
// above), or -1 when none qualifies. `wanted` "" (no tag, "latest"): the newest of all.
int closest_release(const std::string& wanted, const std::vector<std::string>& have);

// The image present under the reference `ref` (podman's reading: "x:1" is "localhost/x:1", no
// tag is ":latest"), or nullptr.
const PresentImage* present_by_name(const std::vector<PresentImage>& present,
                                    const std::string& ref);

// Resolves every node's image against `present` (above), changing what a node runs (its
// backend and container, with the image's id) and adding a note per substitution to plan.notes.
// Errors (kInput, naming the node, what it asked for and what is present): nothing close enough, or
// any substitution under `strict` — every node refused, in one message ("; " between nodes).
Result<void> resolve_images(Plan& plan, const std::vector<PresentImage>& present, bool strict);

// A node that stays in `next` (a topology change's plan) runs what it runs in `running`: the
// image `up` chose (backend, container) and the daemons that release adds (mgmtd), when it
// names the same image as before. Nodes new in `next` keep what make_plan gave them.
void keep_running_images(Plan& next, const Plan& running);

// The FRR releases of the lab, for reports: "10.3 (spine1), 7.5.1 (leaf1), 8.4.4 (leaf2, leaf3)";
// namespace nodes run `host_version` (this machine's). Just `host_version` when all run it.
std::string frr_versions(const Plan& plan, const std::string& host_version);

}  // namespace twin::plan
