#include "twin/plan/images.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <sstream>

#include "twin/core/diagnostics.hpp"

namespace twin::plan {

namespace {

std::vector<int> numbers(const std::string& v) {
  std::vector<int> out;
  std::istringstream in(v);
  std::string part;
  while (std::getline(in, part, '.')) {
    if (part.empty() || !std::all_of(part.begin(), part.end(), ::isdigit)) break;
    out.push_back(std::stoi(part));
  }
  return out;
}

std::string describe(const PresentImage& p) {
  if (p.host) return "this machine's FRR " + p.frr_version + " in a namespace";
  return (p.names.empty() ? p.id.substr(0, 12) : p.names.front()) +
         (p.frr_version.empty() ? "" : " (FRR " + p.frr_version + ")");
}

}  // namespace

std::string canonical_image_ref(const std::string& ref) {
  std::string r = ref.find('/') == std::string::npos ? "localhost/" + ref : ref;
  const auto slash = r.rfind('/');
  if (r.find(':', slash) == std::string::npos) r += ":latest";
  return r;
}

bool asks_for_images(const Plan& plan) {
  return std::any_of(plan.nodes.begin(), plan.nodes.end(), [](const Node& n) {
    return !n.asked_image.empty() || !n.container.image.empty();
  });
}

std::string release_of_tag(const std::string& image_ref) {
  const auto slash = image_ref.rfind('/');
  const auto colon = image_ref.find(':', slash == std::string::npos ? 0 : slash);
  if (colon == std::string::npos) return "";
  std::string tag = image_ref.substr(colon + 1);
  if (!tag.empty() && (tag[0] == 'v' || tag[0] == 'V')) tag.erase(0, 1);
  size_t end = 0;
  while (end < tag.size() &&
         (std::isdigit(static_cast<unsigned char>(tag[end])) || tag[end] == '.'))
    ++end;
  tag.resize(end);
  while (!tag.empty() && tag.back() == '.') tag.pop_back();
  return numbers(tag).empty() ? "" : tag;
}

int closest_release(const std::string& wanted, const std::vector<std::string>& have) {
  const std::vector<int> w = numbers(wanted);
  int best = -1;
  auto newer = [&](int a, int b) { return numbers(have[a]) > numbers(have[b]); };
  if (w.empty()) {  // no release asked: the newest present
    for (int i = 0; i < static_cast<int>(have.size()); ++i)
      if (!numbers(have[i]).empty() && (best < 0 || newer(i, best))) best = i;
    return best;
  }
  // Same major.minor: the newest patch of that line.
  for (int i = 0; i < static_cast<int>(have.size()); ++i) {
    auto h = numbers(have[i]);
    if (h.size() >= 2 && w.size() >= 2 && h[0] == w[0] && h[1] == w[1] &&
        (best < 0 || newer(i, best)))
      best = i;
  }
  if (best >= 0) return best;
  // Else the nearest minor of the same major; a tie goes to the newer.
  int best_distance = 0;
  for (int i = 0; i < static_cast<int>(have.size()); ++i) {
    auto h = numbers(have[i]);
    if (h.empty() || h[0] != w[0]) continue;
    const int minor_w = w.size() > 1 ? w[1] : 0, minor_h = h.size() > 1 ? h[1] : 0;
    const int d = std::abs(minor_h - minor_w);
    if (best < 0 || d < best_distance || (d == best_distance && newer(i, best))) {
      best = i;
      best_distance = d;
    }
  }
  return best;
}

const PresentImage* present_by_name(const std::vector<PresentImage>& present,
                                    const std::string& ref) {
  if (ref.empty()) return nullptr;
  const std::string want = canonical_image_ref(ref);
  for (const auto& p : present)
    for (const auto& n : p.names)
      if (canonical_image_ref(n) == want) return &p;
  return nullptr;
}

Result<void> resolve_images(Plan& plan, const std::vector<PresentImage>& present, bool strict) {
  std::vector<std::string> releases;
  for (const auto& p : present) releases.push_back(p.frr_version);
  std::vector<std::string> refused;  // every node refused, said at once
  for (auto& n : plan.nodes) {
    if (n.kind != topology::NodeKind::kFrr) continue;
    // What the file asked for: a containerlab image, else a container profile's image.
    const std::string ask = !n.asked_image.empty() ? n.asked_image : n.container.image;
    if (ask.empty()) continue;  // this machine's FRR, as the profile says
    const bool profile_image = n.asked_image.empty();
    auto use = [&](const PresentImage& p) {
      if (p.host) {
        n.backend = topology::Backend::kNetns;
        n.container = {};
        return;
      }
      n.backend = topology::Backend::kContainer;
      n.container.image = p.names.empty() ? p.id : p.names.front();
      n.container.image_id = p.id;  // the container driver's preflight reads no list again
      n.container.name = n.netns;
      n.container.frr_version = p.frr_version;
    };
    if (const PresentImage* p = present_by_name(present, ask)) {
      use(*p);
      continue;
    }
    const std::string wanted = profile_image && !n.container.frr_version.empty()
                                   ? n.container.frr_version
                                   : release_of_tag(ask);
    std::vector<std::string> have_names;
    for (const auto& p : present) have_names.push_back(describe(p));
    const std::string asked = "image " + ask + (wanted.empty() ? "" : " (FRR " + wanted + ")");
    const int i = closest_release(wanted, releases);
    if (i < 0) {
      refused.push_back(
          "node " + n.name + ": " + asked + " is not present on this machine, nor any release " +
          (wanted.empty() ? "at all" : "of FRR " + std::to_string(numbers(wanted)[0]) + ".x") +
          " (present: " + (have_names.empty() ? "none" : join_names(have_names)) +
          "); tools/build-images.sh builds FRR 7.5, 8.4 and 10.3 from Debian's archives, or "
          "`podman load -i FILE` adds an image of your own");
      continue;
    }
    const PresentImage& p = present[i];
    const std::string text =
        asked + " is not present; it runs " + describe(p) + ", the closest release present";
    if (strict) {
      refused.push_back("node " + n.name + ": " + asked +
                        " is not present and --strict-images refuses a substitute (the closest "
                        "present: " +
                        describe(p) + ")");
      continue;
    }
    use(p);
    add_note(plan.notes, {"warning", n.name, "", text});
  }
  if (!refused.empty()) {
    std::string all;
    for (const auto& r : refused) all += (all.empty() ? "" : "; ") + r;
    return input_error(all);
  }
  return {};
}

void keep_running_images(Plan& next, const Plan& running) {
  for (auto& n : next.nodes) {
    const Node* old = running.find(n.name);
    if (!old || old->image != n.image || old->asked_image != n.asked_image) continue;
    n.backend = old->backend;
    n.container = old->container;
    const bool mgmtd =
        std::find(old->daemons.begin(), old->daemons.end(), "mgmtd") != old->daemons.end();
    if (mgmtd && std::find(n.daemons.begin(), n.daemons.end(), "mgmtd") == n.daemons.end())
      n.daemons.insert(n.daemons.begin(), "mgmtd");
  }
}

std::string frr_versions(const Plan& plan, const std::string& host_version) {
  std::map<std::string, std::vector<std::string>> by;
  for (const auto& n : plan.nodes) {
    if (n.kind != topology::NodeKind::kFrr || n.daemons.empty()) continue;
    by[n.container.image.empty() ? host_version : n.container.frr_version].push_back(n.name);
  }
  if (by.size() <= 1) return by.empty() ? host_version : by.begin()->first;
  std::string s;
  for (const auto& [v, nodes] : by)
    s += (s.empty() ? "" : ", ") + v + " (" + join_names(nodes) + ")";
  return s;
}

}  // namespace twin::plan
