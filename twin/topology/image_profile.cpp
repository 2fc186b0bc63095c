#include "twin/topology/image_profile.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "twin/core/yaml_reader.hpp"

namespace fs = std::filesystem;

namespace twin::topology {

namespace {

using yaml::at;
using yaml::Value;

const std::vector<std::string> kImageKeys = {
    "name",      "kind",        "backend",       "daemons",     "frr-profile",
    "rp-filter", "ra-interval", "coalesce-time", "description", "kernel-nexthop-groups",
    "vm",        "container"};
const std::vector<std::string> kContainerKeys = {"image", "frr-version"};
const std::vector<std::string> kVmKeys = {
    "kernel",          "initrd",         "disk",           "cmdline",
    "vcpus",           "memory",         "nic-model",      "interface-pattern",
    "interface-first", "interface-step", "management-nic", "ready-pattern",
    "ready-timeout",   "accel",          "agent",          "ssh-user",
    "ssh-password",    "ssh-key",        "vtysh"};
const std::vector<std::string> kBackends = spellings(kBackendNames);
const std::vector<std::string> kKinds = spellings(kNodeKindNames);
const std::vector<std::string> kKnownDaemons = {"zebra", "bgpd",   "staticd", "bfdd",
                                                "ospfd", "ospf6d", "isisd",   "pathd"};

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// The `vm:` section of a libvirt image profile; relative paths resolve against `dir`.
void parse_vm(yaml::Reader& r, const YAML::Node& v, const std::string& dir, VmProfile& vm) {
  if (!v.IsMap()) {
    r.error(at(v, "vm"), "expected a mapping (kernel, initrd, disk, vcpus, memory, ...)");
    return;
  }
  r.check_keys(at(v, "vm"), kVmKeys);
  auto field = [&](const char* key) { return at(v[key], std::string("vm.") + key); };
  auto path = [&](const char* key, std::string& out) {
    if (auto n = field(key))
      if (auto s = r.string(n)) {
        fs::path p = fs::path(*s).is_absolute() ? fs::path(*s) : fs::path(dir) / *s;
        out = p.lexically_normal().string();
      }
  };
  path("kernel", vm.kernel);
  path("initrd", vm.initrd);
  path("disk", vm.disk);
  if (auto n = field("cmdline"))
    if (auto s = r.string(n)) vm.cmdline = *s;
  auto bounded = [&](const char* key, int lo, int hi, const char* unit, int& out) {
    if (auto n = field(key))
      if (auto x = r.integer(n, lo, hi, unit)) out = static_cast<int>(*x);
  };
  bounded("vcpus", 1, 64, "vCPUs", vm.vcpus);
  bounded("memory", 32, 1 << 20, "MiB", vm.memory_mib);
  bounded("interface-first", 0, 1 << 16, "", vm.interface_first);
  bounded("interface-step", 1, 1 << 16, "", vm.interface_step);
  bounded("ready-timeout", 1, 3600, "seconds", vm.ready_timeout_s);
  // Profiles list the accepted values, without a nearest-name guess.
  auto word = [&](const char* key, const std::vector<std::string>& allowed, std::string& out) {
    if (auto n = field(key))
      if (auto s = r.string(n)) {
        if (!allowed.empty() && !has(allowed, *s))
          r.error(n, "unknown value '" + *s + "'", "expected one of: " + join_names(allowed));
        else
          out = *s;
      }
  };
  word("nic-model", {"virtio", "e1000", "e1000e", "rtl8139", "vmxnet3"}, vm.nic_model);
  word("accel", {"auto", "kvm", "tcg"}, vm.accel);
  word("agent", {"none", "twin", "ssh"}, vm.agent);
  // An agent value refused above said what is wrong already: no follow-on errors for the ssh
  // fields.
  const bool agent_known =
      !v["agent"] || (v["agent"].IsScalar() && v["agent"].Scalar() == vm.agent);
  word("ssh-user", {}, vm.ssh_user);
  word("ssh-password", {}, vm.ssh_password);
  word("vtysh", {}, vm.vtysh);
  path("ssh-key", vm.ssh_key);
  word("ready-pattern", {}, vm.ready_pattern);
  word("interface-pattern", {}, vm.interface_pattern);
  if (auto n = field("interface-pattern");
      n && !vm.interface_pattern.empty() && vm.interface_pattern.find("{n}") == std::string::npos)
    r.error(n, "expected a pattern with {n}, e.g. swp{n}");
  if (auto n = field("management-nic"))
    if (auto b = r.boolean(n)) vm.management_nic = *b;
  if (vm.agent == "ssh") {
    if (!vm.management_nic)
      r.error(field("management-nic") ? field("management-nic") : field("agent"),
              "agent ssh reads the guest on its management NIC", "set management-nic: true");
    static const std::regex kUser("[a-z_][a-z0-9_.-]{0,31}");
    if (!std::regex_match(vm.ssh_user, kUser))
      r.error(field("ssh-user") ? field("ssh-user") : field("agent"),
              vm.ssh_user.empty() ? "agent ssh needs ssh-user"
                                  : "invalid login name '" + vm.ssh_user + "'",
              "the NOS's login that may run vtysh, e.g. cumulus");
    if (field("ssh-password") && vm.ssh_password.empty())
      r.error(field("ssh-password"), "empty ssh-password", "the NOS login's password, or ssh-key");
    else if (!field("ssh-password") && vm.ssh_key.empty())
      r.error(field("agent"), "agent ssh needs ssh-password or ssh-key",
              "the NOS login's password, or a private key its authorized_keys holds");
    if (!vm.ssh_password.empty() && !vm.ssh_key.empty())
      r.error(field("ssh-key"), "both ssh-password and ssh-key given", "give one");
    // Words only (a command and its arguments): it runs in the guest's shell before
    // `-c '<command>'`, where `;`, `#`, `>` or a parenthesis would change what runs.
    static const std::regex kPlainCommand("[A-Za-z0-9_./ -]+");
    if (!std::regex_match(vm.vtysh, kPlainCommand))
      r.error(field("vtysh") ? field("vtysh") : field("agent"),
              "vtysh must be a plain command: words of letters, digits, _ . / -",
              "e.g. sudo vtysh, or docker exec -i bgp vtysh");
  } else if (agent_known) {
    for (const char* k : {"ssh-user", "ssh-password", "ssh-key", "vtysh"})
      if (auto n = field(k)) r.error(n, std::string(k) + " is for agent: ssh", "add agent: ssh");
  }
  bool direct = !vm.kernel.empty() || !vm.initrd.empty();
  if (direct && (vm.kernel.empty() || vm.initrd.empty()))
    r.error(at(v, "vm"), "kernel and initrd go together", "give both, or a disk");
  if (!direct && vm.disk.empty())
    r.error(at(v, "vm"), "nothing to boot", "give kernel + initrd, or disk (a qcow2 image)");
  if (auto n = field("cmdline"); !direct && n) r.error(n, "a kernel command line needs a kernel");
}

}  // namespace

std::vector<std::string> image_search_path(const std::string& topology_dir) {
  std::vector<std::string> dirs;
  if (!topology_dir.empty()) dirs.push_back((fs::path(topology_dir) / "images").string());
  if (const char* env = std::getenv("TWIN_IMAGES")) {
    std::stringstream ss(env);
    std::string part;
    while (std::getline(ss, part, ':'))
      if (!part.empty()) dirs.push_back(part);
  }
  dirs.push_back((fs::path(TWIN_DATA_DIR) / "images").string());
  dirs.push_back("/usr/share/twin/images");
  return dirs;
}

std::string find_image_profile(const std::string& name, const std::string& topology_dir,
                               const InputPolicy& policy, std::vector<std::string>* looked,
                               std::optional<InputProblem>* refused) {
  const InputPolicy allowed = policy.with_roots(image_search_path(""), "image search path");
  // The first file there decides; a missing one is only a place looked in. A name has no '/',
  // so a search folder's missing file reveals nothing (and the folder may not exist at all).
  auto found = [&](const fs::path& p, bool by_name) -> std::optional<std::string> {
    looked->push_back(p.string());
    std::error_code ec;
    if (by_name && fs::symlink_status(p, ec).type() == fs::file_type::not_found)
      return std::nullopt;
    auto bad = allowed.check(p.string(), "image profile");
    if (!bad) return fs::weakly_canonical(p).string();
    if (bad->kind == InputProblem::Kind::kMissing) return std::nullopt;
    *refused = *bad;
    return "";
  };
  if (name.find('/') != std::string::npos) {
    fs::path p = fs::path(name).is_absolute() ? fs::path(name) : fs::path(topology_dir) / name;
    return found(p, false).value_or("");
  }
  for (const auto& d : image_search_path(topology_dir))
    if (auto f = found(fs::path(d) / (name + ".yaml"), true)) return *f;
  return "";
}

std::vector<std::string> known_images(const std::string& topology_dir) {
  std::vector<std::string> known;
  for (const auto& d : image_search_path(topology_dir)) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(d, ec))
      if (e.path().extension() == ".yaml") known.push_back(e.path().stem().string());
  }
  // Directory order is arbitrary and folders overlap: list each name once, sorted.
  std::sort(known.begin(), known.end());
  known.erase(std::unique(known.begin(), known.end()), known.end());
  return known;
}

std::optional<ImageProfile> load_image_profile(const std::string& name, const std::string& path,
                                               Diagnostics& diags) {
  auto text = read_regular_file(path);
  if (!text) {
    diags.add({path, 0, 0, "", text.error().message, ""});
    return std::nullopt;
  }
  yaml::Reader r(path, diags, {.say_what_was_found = false});
  auto doc = r.document(*text, "expected an image profile mapping");
  if (!doc) return std::nullopt;
  const YAML::Node& root = doc->node;
  size_t before = r.problems();
  r.check_keys(*doc, kImageKeys);
  ImageProfile p;
  p.name = name;
  p.file = path;
  if (auto k = at(root["kind"], "kind")) {
    if (auto s = r.string(k)) {
      if (auto kind = node_kind_from(*s))
        p.kind = *kind;
      else
        r.error(k, "unknown kind '" + *s + "'", "expected one of: " + join_names(kKinds));
    }
  } else {
    r.error(at(root, "kind"), "missing; expected frr or host");
  }
  if (auto b = at(root["backend"], "backend"))
    if (auto s = r.string(b)) {
      if (auto backend = backend_from(*s))
        p.backend = *backend;
      else
        r.error(b, "unknown backend '" + *s + "'", "expected one of: " + join_names(kBackends));
    }
  if (auto ds = at(root["daemons"], "daemons")) {
    if (!ds.node.IsSequence()) {
      r.error(ds, "expected a list of FRR daemon names");
    } else {
      for (size_t i = 0; i < ds.node.size(); ++i) {
        const Value d = yaml::item(ds, i);
        auto s = r.string(d);
        if (!s) continue;
        if (!has(kKnownDaemons, *s))
          r.error(d, "unknown FRR daemon '" + *s + "'",
                  did_you_mean(*s, kKnownDaemons, "expected one of: " + join_names(kKnownDaemons)));
        p.daemons.push_back(*s);
      }
      if (p.kind == NodeKind::kFrr && (p.daemons.empty() || p.daemons.front() != "zebra"))
        r.error(ds, "an frr image must start zebra first",
                "zebra owns the kernel interface the other daemons connect to");
    }
  }
  if (auto f = at(root["frr-profile"], "frr-profile"))
    if (auto s = r.string(f)) {
      p.frr_profile = *s;
      if (*s != "datacenter" && *s != "traditional")
        r.error(f, "expected datacenter or traditional");
    }
  if (auto v = at(root["rp-filter"], "rp-filter"))
    if (auto n = r.integer(v)) {
      if (*n < 0 || *n > 2) r.error(v, "expected 0, 1 or 2");
      p.rp_filter = static_cast<int>(*n);
    }
  if (auto v = at(root["ra-interval"], "ra-interval"))
    if (auto n = r.integer(v, 1, 1800, "seconds")) p.ra_interval_s = static_cast<int>(*n);
  if (auto v = at(root["coalesce-time"], "coalesce-time"))
    if (auto n = r.integer(v)) {
      if (*n < 0) r.error(v, "expected milliseconds >= 0");
      p.coalesce_time_ms = static_cast<int>(*n);
    }
  if (auto k = at(root["kernel-nexthop-groups"], "kernel-nexthop-groups"))
    if (auto b = r.boolean(k)) p.kernel_nexthop_groups = *b;
  if (p.kind == NodeKind::kBridge && p.backend != Backend::kNetns)
    r.error(at(root, "backend"), "a bridge runs on backend netns",
            "a LAN segment is a Linux bridge in a namespace of its own");
  if (auto c = root["container"]) {
    if (p.backend != Backend::kContainer) {
      r.error(at(c, "container"), "'container' applies to backend container only",
              "add `backend: container`");
    } else if (!c.IsMap()) {
      r.error(at(c, "container"), "expected a mapping with image (and frr-version)");
    } else {
      r.check_keys(at(c, "container"), kContainerKeys);
      if (auto i = at(c["image"], "container.image")) {
        // An OCI reference as podman takes it (name[:tag][@digest]); anything else would be
        // looked for, not found and substituted (or passed to podman as an argument).
        static const std::regex kRef(
            R"(^[a-z0-9][a-z0-9._-]*(:[0-9]+)?(/[a-z0-9][a-z0-9._-]*)*)"
            R"((:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(@sha256:[0-9a-f]{64})?$)");
        if (auto s = r.string(i)) {
          if (std::regex_match(*s, kRef))
            p.container.image = *s;
          else
            r.error(i, "'" + *s + "' is not an image reference",
                    "name[:tag] as podman lists it, e.g. localhost/twin-frr:10.3");
        }
      } else {
        r.error(at(c, "container"), "missing image", "e.g. `image: localhost/twin-frr:10.3`");
      }
      if (auto v = at(c["frr-version"], "container.frr-version"))
        if (auto s = r.string(v)) {
          static const std::regex kVersion(R"(^[0-9]+\.[0-9]+(\.[0-9]+)?$)");
          if (std::regex_match(*s, kVersion))
            p.container.frr_version = *s;
          else
            r.error(v, "'" + *s + "' is not an FRR release", "major.minor[.patch], e.g. 10.3");
        }
    }
  } else if (p.backend == Backend::kContainer) {
    r.error(at(root, "container"), "missing; backend container needs a container section",
            "give `container: {image: localhost/twin-frr:10.3}`");
  }
  if (p.backend == Backend::kContainer && p.kind != NodeKind::kFrr)
    r.error(at(root, "kind"), "backend container runs kind frr only",
            "hosts and bridges are namespaces of twin's own (backend netns)");
  if (auto v = root["vm"]) {
    if (p.backend != Backend::kLibvirt) {
      r.error(at(v, "vm"), "'vm' applies to backend libvirt only", "add `backend: libvirt`");
    } else {
      parse_vm(r, v, fs::path(path).parent_path().string(), p.vm);
      // A VM's ports are its NICs: named by the image's pattern, or told to the guest.
      p.boots_vm = true;
      p.ports_by_nic = !p.vm.interface_pattern.empty();
      p.ports_named_by_cmdline = p.vm.interface_pattern.empty();
    }
  } else if (p.backend == Backend::kLibvirt) {
    r.error(at(root, "vm"), "missing; backend libvirt needs a vm section",
            "give `vm: {kernel: ..., initrd: ...}` or `vm: {disk: ...}`");
  }
  if (r.problems() != before) return std::nullopt;
  return p;
}

}  // namespace twin::topology
