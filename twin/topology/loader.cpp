#include "twin/topology/loader.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "twin/topology/yaml_mark.hpp"

namespace fs = std::filesystem;

namespace twin::topology {

const Node* Topology::find_node(const std::string& n) const {
  for (const auto& node : nodes)
    if (node.name == n) return &node;
  return nullptr;
}

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

bool valid_lab_name(const std::string& name) {
  static const std::regex re("[A-Za-z0-9][A-Za-z0-9_-]*");
  return !name.empty() && name.size() <= kMaxLabName && std::regex_match(name, re);
}

bool valid_interface_name(const std::string& name, std::string* why) {
  auto fail = [&](const std::string& w) {
    if (why) *why = w;
    return false;
  };
  if (name.empty()) return fail("interface name is empty");
  if (name.size() > kMaxInterfaceName)
    return fail("interface name '" + name + "' is " + std::to_string(name.size()) +
                " bytes; Linux allows at most 15 (IFNAMSIZ)");
  if (name == "." || name == "..") return fail("interface name cannot be '.' or '..'");
  for (unsigned char c : name) {
    if (c == '/' || c == ':' || std::isspace(c) || c < 0x20)
      return fail("interface name '" + name + "' contains '/', ':' or whitespace");
  }
  return true;
}

namespace {

const std::vector<std::string> kTopKeys = {"version", "name", "defaults", "nodes", "links"};
const std::vector<std::string> kDefaultKeys = {"kind", "image", "mtu"};
const std::vector<std::string> kNodeKeys = {"kind",     "image",  "asn",    "router-id",
                                            "loopback", "config", "gateway"};
const std::vector<std::string> kLinkKeys = {"endpoints", "mtu", "addresses"};
const std::vector<std::string> kImageKeys = {
    "name",      "kind",        "backend",       "daemons",     "frr-profile",
    "rp-filter", "ra-interval", "coalesce-time", "description", "kernel-nexthop-groups",
    "vm"};
const std::vector<std::string> kVmKeys = {
    "kernel",          "initrd",         "disk",           "cmdline",
    "vcpus",           "memory",         "nic-model",      "interface-pattern",
    "interface-first", "interface-step", "management-nic", "ready-pattern",
    "ready-timeout",   "accel",          "agent"};
const std::vector<std::string> kBackends = {"netns", "libvirt"};
const std::vector<std::string> kKinds = {"frr", "host"};
const std::vector<std::string> kKnownDaemons = {"zebra", "bgpd",   "staticd", "bfdd",
                                                "ospfd", "ospf6d", "isisd",   "pathd"};
const std::regex kNameRe("[A-Za-z0-9][A-Za-z0-9_-]*");
const std::regex kGuestIfRe("[A-Za-z0-9_.-]+");

// Where a parsed value was written: its place and its field path ("nodes.r1.loopback[1]").
struct Where {
  Mark mark;
  std::string field;
};

class Loader {
 public:
  Loader(std::string file, std::string dir, Diagnostics& d)
      : file_(std::move(file)), dir_(std::move(dir)), d_(d) {}

  std::optional<Topology> load(const std::string& text) {
    auto parsed = parse_yaml(text, file_, d_);
    if (!parsed) return std::nullopt;
    YAML::Node root = *parsed;
    if (!root.IsMap()) {
      error(root, "", "expected a mapping with version, name, nodes and links",
            "see topologies/clos-2x4.yaml for an example");
      return std::nullopt;
    }
    size_t before = d_.items().size();
    Topology t;
    t.file = file_;
    t.dir = dir_;
    check_keys(root, "", kTopKeys);

    if (auto v = root["version"]; !v) {
      error(root, "version", "missing; expected `version: 1`", "add `version: 1` at the top");
    } else if (auto n = as_int(v, "version"); n && *n != 1) {
      error(v, "version", "unsupported version " + std::to_string(*n) + "; expected 1", "");
    }
    if (auto n = root["name"]; !n) {
      error(root, "name", "missing; expected the lab name", "add e.g. `name: mylab`");
    } else if (auto s = as_string(n, "name")) {
      t.name = *s;
      check_lab_name(n, t.name);
    }

    std::string def_kind = "frr", def_image;
    int def_mtu = 1500;
    bool def_mtu_set = false;
    if (auto dn = root["defaults"]) {
      if (!dn.IsMap()) {
        error(dn, "defaults", "expected a mapping of kind, image, mtu", "");
      } else {
        check_keys(dn, "defaults", kDefaultKeys);
        if (auto k = dn["kind"])
          if (auto s = as_string(k, "defaults.kind")) def_kind = *s;
        if (auto i = dn["image"])
          if (auto s = as_string(i, "defaults.image")) def_image = *s;
        if (auto m = dn["mtu"])
          if (auto v = as_mtu(m, "defaults.mtu")) {
            def_mtu = *v;
            def_mtu_set = true;
          }
      }
    }

    if (auto nn = root["nodes"]; !nn) {
      error(root, "nodes", "missing; expected a mapping of node names", "");
    } else if (!nn.IsMap()) {
      error(nn, "nodes", "expected a mapping of node name to node fields", "");
    } else {
      std::set<std::string> seen;
      for (const auto& kv : nn) {
        std::string name = kv.first.Scalar();
        std::string field = "nodes." + name;
        if (!seen.insert(name).second) {
          error(kv.first, field, "duplicate node name '" + name + "'",
                "node names must be unique; rename one of them");
          continue;
        }
        if (!std::regex_match(name, kNameRe) || name.size() > 32) {
          error(kv.first, field,
                "invalid node name '" + name +
                    "'; expected 1-32 of A-Z a-z 0-9 _ - starting "
                    "with a letter or digit",
                "");
          continue;
        }
        t.nodes.push_back(parse_node(name, kv.first, kv.second, def_kind, def_image));
      }
    }

    if (auto ln = root["links"]) {
      if (!ln.IsSequence()) {
        error(ln, "links", "expected a list of links", "");
      } else {
        for (size_t i = 0; i < ln.size(); ++i)
          t.links.push_back(
              parse_link(ln[i], "links[" + std::to_string(i) + "]", def_mtu, def_mtu_set, t));
      }
    }

    check_semantics(t);
    if (d_.items().size() != before) return std::nullopt;
    return t;
  }

 private:
  void error(const YAML::Node& at, const std::string& field, const std::string& msg,
             const std::string& hint) {
    Mark m = mark_of(at);
    d_.add({file_, m.line, m.column, field, msg, hint});
  }
  void error(Mark m, const std::string& field, const std::string& msg, const std::string& hint) {
    d_.add({file_, m.line, m.column, field, msg, hint});
  }

  void check_keys(const YAML::Node& map, const std::string& prefix,
                  const std::vector<std::string>& allowed) {
    std::set<std::string> seen;
    for (const auto& kv : map) {
      std::string key = kv.first.Scalar();
      std::string field = prefix.empty() ? key : prefix + "." + key;
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
        std::string near = nearest_name(key, allowed);
        error(kv.first, field, "unknown field '" + key + "'",
              near.empty() ? "expected one of: " + join_names(allowed)
                           : "did you mean '" + near + "'?");
      } else if (!seen.insert(key).second) {
        error(kv.first, field, "field '" + key + "' given twice", "keep one of them");
      }
    }
  }

  std::optional<std::string> as_string(const YAML::Node& n, const std::string& field) {
    if (!n.IsScalar()) {
      error(n, field, "expected a string", "");
      return std::nullopt;
    }
    return n.Scalar();
  }

  std::optional<long long> as_int(const YAML::Node& n, const std::string& field) {
    if (n.IsScalar()) {
      const std::string& s = n.Scalar();
      char* end = nullptr;
      errno = 0;
      long long v = std::strtoll(s.c_str(), &end, 10);
      if (!s.empty() && end && *end == '\0' && errno == 0) return v;
    }
    error(n, field,
          "expected an integer, " + (n.IsScalar()     ? "got '" + n.Scalar() + "'"
                                     : n.IsNull()     ? std::string("but the value is empty")
                                     : n.IsSequence() ? std::string("got a list")
                                                      : std::string("got a mapping")),
          "");
    return std::nullopt;
  }

  std::optional<int> as_mtu(const YAML::Node& n, const std::string& field) {
    auto v = as_int(n, field);
    if (!v) return std::nullopt;
    if (*v < kMinMtu || *v > kMaxMtu) {
      error(n, field,
            "MTU " + std::to_string(*v) + " is outside " + std::to_string(kMinMtu) + "-" +
                std::to_string(kMaxMtu) + " bytes",
            "MTU excludes the Ethernet header; data-center fabrics commonly use 9216");
      return std::nullopt;
    }
    return static_cast<int>(*v);
  }

  // A scalar or a list of scalars, each an address with prefix length.
  // `where`, when given, gets the place and field path of each returned prefix.
  std::vector<IpPrefix> as_prefixes(const YAML::Node& n, const std::string& field, bool allow_bare,
                                    std::vector<Where>* where = nullptr) {
    std::vector<IpPrefix> out;
    std::vector<YAML::Node> items;
    if (n.IsScalar()) {
      items.push_back(n);
    } else if (n.IsSequence()) {
      for (const auto& x : n) items.push_back(x);
    } else {
      error(n, field, "expected an address or a list of addresses", "");
      return out;
    }
    for (size_t i = 0; i < items.size(); ++i) {
      std::string f = n.IsSequence() ? field + "[" + std::to_string(i) + "]" : field;
      if (!items[i].IsScalar()) {
        error(items[i], f, "expected an address string", "");
        continue;
      }
      auto p = IpPrefix::parse(items[i].Scalar(), allow_bare);
      if (!p) {
        error(items[i], f,
              "'" + items[i].Scalar() + "' is not an IPv4/IPv6 address" +
                  (allow_bare ? "" : " with prefix length"),
              allow_bare ? "" : "write e.g. 10.0.1.1/24 or 2001:db8::1/64");
        continue;
      }
      out.push_back(*p);
      if (where) where->push_back({mark_of(items[i]), f});
    }
    return out;
  }

  void check_lab_name(const YAML::Node& n, const std::string& name) {
    if (!valid_lab_name(name))
      error(n, "name",
            "invalid lab name '" + name + "'; expected 1-" + std::to_string(kMaxLabName) +
                " of A-Z a-z 0-9 _ - starting with a letter or digit",
            "the lab name prefixes namespace and cgroup names");
  }

  const ImageProfile* image(const std::string& name, const YAML::Node& at,
                            const std::string& field) {
    if (auto it = images_.find(name); it != images_.end())
      return it->second ? &*it->second : nullptr;
    auto& slot = images_[name];
    std::string path;
    std::vector<std::string> looked;
    if (name.find('/') != std::string::npos) {
      fs::path p = fs::path(name).is_absolute() ? fs::path(name) : fs::path(dir_) / name;
      looked.push_back(p.string());
      if (fs::is_regular_file(p)) path = p.string();
    } else {
      for (const auto& d : image_search_path(dir_)) {
        fs::path p = fs::path(d) / (name + ".yaml");
        looked.push_back(p.string());
        if (fs::is_regular_file(p)) {
          path = fs::weakly_canonical(p).string();
          break;
        }
      }
    }
    if (path.empty()) {
      std::vector<std::string> known;
      for (const auto& d : image_search_path(dir_)) {
        std::error_code ec;
        for (const auto& e : fs::directory_iterator(d, ec))
          if (e.path().extension() == ".yaml") known.push_back(e.path().stem().string());
      }
      // Directory order is arbitrary and folders overlap: list each name once, sorted.
      std::sort(known.begin(), known.end());
      known.erase(std::unique(known.begin(), known.end()), known.end());
      std::string near = nearest_name(name, known);
      error(at, field, "unknown image '" + name + "' (looked in " + join_names(looked) + ")",
            near.empty() ? "available: " + join_names(known) : "did you mean '" + near + "'?");
      return nullptr;
    }
    slot = load_image(name, path);
    return slot ? &*slot : nullptr;
  }

  std::optional<ImageProfile> load_image(const std::string& name, const std::string& path) {
    Loader sub(path, fs::path(path).parent_path().string(), d_);
    return sub.parse_image(name);
  }

 public:
  std::optional<ImageProfile> parse_image(const std::string& name) {
    std::ifstream in(file_);
    std::stringstream ss;
    ss << in.rdbuf();
    auto parsed = parse_yaml(ss.str(), file_, d_);
    if (!parsed) return std::nullopt;
    YAML::Node root = *parsed;
    size_t before = d_.items().size();
    if (!root.IsMap()) {
      error(root, "", "expected an image profile mapping", "");
      return std::nullopt;
    }
    check_keys(root, "", kImageKeys);
    ImageProfile p;
    p.name = name;
    p.file = file_;
    if (auto k = root["kind"]) {
      if (auto s = as_string(k, "kind")) {
        p.kind = *s;
        if (std::find(kKinds.begin(), kKinds.end(), *s) == kKinds.end())
          error(k, "kind", "unknown kind '" + *s + "'", "expected one of: " + join_names(kKinds));
      }
    } else {
      error(root, "kind", "missing; expected frr or host", "");
    }
    if (auto b = root["backend"])
      if (auto s = as_string(b, "backend")) {
        p.backend = *s;
        if (std::find(kBackends.begin(), kBackends.end(), *s) == kBackends.end())
          error(b, "backend", "unknown backend '" + *s + "'",
                "expected one of: " + join_names(kBackends));
      }
    if (auto ds = root["daemons"]) {
      if (!ds.IsSequence()) {
        error(ds, "daemons", "expected a list of FRR daemon names", "");
      } else {
        for (size_t i = 0; i < ds.size(); ++i) {
          auto s = as_string(ds[i], "daemons[" + std::to_string(i) + "]");
          if (!s) continue;
          if (std::find(kKnownDaemons.begin(), kKnownDaemons.end(), *s) == kKnownDaemons.end()) {
            std::string near = nearest_name(*s, kKnownDaemons);
            error(ds[i], "daemons[" + std::to_string(i) + "]", "unknown FRR daemon '" + *s + "'",
                  near.empty() ? "expected one of: " + join_names(kKnownDaemons)
                               : "did you mean '" + near + "'?");
          }
          p.daemons.push_back(*s);
        }
        if (p.kind == "frr" && (p.daemons.empty() || p.daemons.front() != "zebra"))
          error(ds, "daemons", "an frr image must start zebra first",
                "zebra owns the kernel interface the other daemons connect to");
      }
    }
    if (auto f = root["frr-profile"])
      if (auto s = as_string(f, "frr-profile")) {
        p.frr_profile = *s;
        if (*s != "datacenter" && *s != "traditional")
          error(f, "frr-profile", "expected datacenter or traditional", "");
      }
    if (auto r = root["rp-filter"])
      if (auto v = as_int(r, "rp-filter")) {
        if (*v < 0 || *v > 2) error(r, "rp-filter", "expected 0, 1 or 2", "");
        p.rp_filter = static_cast<int>(*v);
      }
    if (auto r = root["ra-interval"])
      if (auto v = as_int(r, "ra-interval")) {
        if (*v < 1 || *v > 1800) error(r, "ra-interval", "expected 1-1800 seconds", "");
        p.ra_interval_s = static_cast<int>(*v);
      }
    if (auto r = root["coalesce-time"])
      if (auto v = as_int(r, "coalesce-time")) {
        if (*v < 0) error(r, "coalesce-time", "expected milliseconds >= 0", "");
        p.coalesce_time_ms = static_cast<int>(*v);
      }
    if (auto k = root["kernel-nexthop-groups"]) {
      if (!k.IsScalar() || (k.Scalar() != "true" && k.Scalar() != "false"))
        error(k, "kernel-nexthop-groups", "expected true or false", "");
      else
        p.kernel_nexthop_groups = k.Scalar() == "true";
    }
    if (auto v = root["vm"]) {
      if (p.backend != "libvirt")
        error(v, "vm", "'vm' applies to backend libvirt only", "add `backend: libvirt`");
      else
        parse_vm(v, p.vm);
    } else if (p.backend == "libvirt") {
      error(root, "vm", "missing; backend libvirt needs a vm section",
            "give `vm: {kernel: ..., initrd: ...}` or `vm: {disk: ...}`");
    }
    if (d_.items().size() != before) return std::nullopt;
    return p;
  }

  // The `vm:` section of a libvirt image profile.
  void parse_vm(const YAML::Node& v, VmProfile& vm) {
    if (!v.IsMap()) {
      error(v, "vm", "expected a mapping (kernel, initrd, disk, vcpus, memory, ...)", "");
      return;
    }
    check_keys(v, "vm", kVmKeys);
    auto path = [&](const char* key, std::string& out) {
      if (auto n = v[key])
        if (auto s = as_string(n, std::string("vm.") + key)) {
          fs::path p = fs::path(*s).is_absolute() ? fs::path(*s) : fs::path(dir_) / *s;
          out = p.lexically_normal().string();
        }
    };
    path("kernel", vm.kernel);
    path("initrd", vm.initrd);
    path("disk", vm.disk);
    if (auto n = v["cmdline"])
      if (auto s = as_string(n, "vm.cmdline")) vm.cmdline = *s;
    auto bounded = [&](const char* key, int lo, int hi, const char* unit, int& out) {
      if (auto n = v[key])
        if (auto x = as_int(n, std::string("vm.") + key)) {
          if (*x < lo || *x > hi)
            error(n, std::string("vm.") + key,
                  "expected " + std::to_string(lo) + "-" + std::to_string(hi) +
                      (*unit ? std::string(" ") + unit : std::string()),
                  "");
          else
            out = static_cast<int>(*x);
        }
    };
    bounded("vcpus", 1, 64, "vCPUs", vm.vcpus);
    bounded("memory", 32, 1 << 20, "MiB", vm.memory_mib);
    bounded("interface-first", 0, 1 << 16, "", vm.interface_first);
    bounded("interface-step", 1, 1 << 16, "", vm.interface_step);
    bounded("ready-timeout", 1, 3600, "seconds", vm.ready_timeout_s);
    auto word = [&](const char* key, const std::vector<std::string>& allowed, std::string& out) {
      if (auto n = v[key])
        if (auto s = as_string(n, std::string("vm.") + key)) {
          if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), *s) == allowed.end())
            error(n, std::string("vm.") + key, "unknown value '" + *s + "'",
                  "expected one of: " + join_names(allowed));
          else
            out = *s;
        }
    };
    word("nic-model", {"virtio", "e1000", "e1000e", "rtl8139", "vmxnet3"}, vm.nic_model);
    word("accel", {"auto", "kvm", "tcg"}, vm.accel);
    word("agent", {"none", "twin"}, vm.agent);
    word("ready-pattern", {}, vm.ready_pattern);
    word("interface-pattern", {}, vm.interface_pattern);
    if (auto n = v["interface-pattern"];
        n && !vm.interface_pattern.empty() && vm.interface_pattern.find("{n}") == std::string::npos)
      error(n, "vm.interface-pattern", "expected a pattern with {n}, e.g. swp{n}", "");
    if (auto n = v["management-nic"]) {
      if (!n.IsScalar() || (n.Scalar() != "true" && n.Scalar() != "false"))
        error(n, "vm.management-nic", "expected true or false", "");
      else
        vm.management_nic = n.Scalar() == "true";
    }
    bool direct = !vm.kernel.empty() || !vm.initrd.empty();
    if (direct && (vm.kernel.empty() || vm.initrd.empty()))
      error(v, "vm", "kernel and initrd go together", "give both, or a disk");
    if (!direct && vm.disk.empty())
      error(v, "vm", "nothing to boot", "give kernel + initrd, or disk (a qcow2 image)");
    if (!direct && v["cmdline"])
      error(v["cmdline"], "vm.cmdline", "a kernel command line needs a kernel", "");
  }

 private:
  Node parse_node(const std::string& name, const YAML::Node& key, const YAML::Node& body,
                  const std::string& def_kind, const std::string& def_image) {
    Node n;
    n.name = name;
    n.mark = mark_of(key);
    n.kind = def_kind;
    std::string f = "nodes." + name;
    YAML::Node kind_at = key, image_at = key;
    // A field given but invalid is reported where it is; don't report it missing as well.
    bool asn_bad = false, rid_bad = false, lo_bad = false;
    if (body && !body.IsNull()) {
      if (!body.IsMap()) {
        error(body, f, "expected a mapping of node fields", "");
        return n;
      }
      check_keys(body, f, kNodeKeys);
      if (auto k = body["kind"])
        if (auto s = as_string(k, f + ".kind")) {
          n.kind = *s;
          kind_at = k;
        }
      if (auto i = body["image"])
        if (auto s = as_string(i, f + ".image")) {
          n.image = *s;
          image_at = i;
        }
      if (auto a = body["asn"]) {
        asn_bad = true;  // until it parses
        if (auto v = as_int(a, f + ".asn")) {
          if (*v < 1 || *v > 4294967295LL) {
            error(a, f + ".asn", "ASN " + std::to_string(*v) + " is outside 1-4294967295",
                  "private ASNs are 64512-65534 and 4200000000-4294967294 (RFC 6996)");
          } else {
            n.asn = static_cast<uint32_t>(*v);
            asn_bad = false;
          }
        }
      }
      if (auto r = body["router-id"]) {
        size_t before = d_.items().size();
        std::vector<Where> at;
        auto p = as_prefixes(r, f + ".router-id", true, &at);
        if (p.size() == 1) {
          if (p[0].family != 4 || !p[0].is_host()) {
            error(r, f + ".router-id", "a BGP router-id is an IPv4 address (RFC 6286)",
                  "e.g. router-id: 10.255.0.1");
          } else {
            n.router_id = p[0];
            router_id_at_[name] = at[0];
          }
        } else if (p.size() > 1) {
          error(r, f + ".router-id", "expected one address", "");
        }
        rid_bad = d_.items().size() != before;
      }
      if (auto l = body["loopback"]) {
        size_t before = d_.items().size();
        std::vector<Where> at;
        auto ps = as_prefixes(l, f + ".loopback", true, &at);
        for (size_t i = 0; i < ps.size(); ++i) {
          if (!ps[i].is_host()) {
            error(at[i].mark, at[i].field, "loopback '" + ps[i].str() + "' is not a host prefix",
                  "use /32 for IPv4 and /128 for IPv6");
          } else {
            n.loopbacks.push_back(ps[i]);
            loopback_at_[name].push_back(at[i]);
          }
        }
        lo_bad = d_.items().size() != before;
      }
      if (auto c = body["config"]) {
        if (auto s = as_string(c, f + ".config")) {
          fs::path p = fs::path(*s).is_absolute() ? fs::path(*s) : fs::path(dir_) / *s;
          if (fs::is_directory(p))
            error(c, f + ".config", "config '" + p.string() + "' is a directory",
                  "give the node's integrated frr.conf file");
          else if (!fs::is_regular_file(p))
            error(c, f + ".config", "config file '" + p.string() + "' does not exist",
                  "paths are relative to the topology file's folder");
          else
            n.config = fs::weakly_canonical(p).string();
        }
      }
      if (auto g = body["gateway"])
        n.gateways = as_prefixes(g, f + ".gateway", true, &gateway_at_[name]);
    }
    if (std::find(kKinds.begin(), kKinds.end(), n.kind) == kKinds.end()) {
      std::string near = nearest_name(n.kind, kKinds);
      error(
          kind_at, f + ".kind", "unknown kind '" + n.kind + "'",
          near.empty() ? "expected one of: " + join_names(kKinds) : "did you mean '" + near + "'?");
      return n;
    }
    if (n.image.empty())
      n.image = def_image.empty() || n.kind == "host" ? (n.kind == "frr" ? "frr-8.4" : "host")
                                                      : def_image;
    if (const ImageProfile* p = image(n.image, image_at, f + ".image")) {
      n.profile = *p;
      if (p->kind != n.kind)
        error(image_at, f + ".image",
              "image '" + n.image + "' is for kind " + p->kind + ", but the node is kind " + n.kind,
              "pick an image of kind " + n.kind);
    }
    if (n.kind == "host") {
      for (const char* k : {"asn", "router-id", "loopback", "config"})
        if (body && body.IsMap() && body[k])
          error(body[k], f + "." + k, std::string("'") + k + "' does not apply to kind host",
                "a host has addresses on its links and a default route only");
    } else if (n.config.empty() && !(body && body.IsMap() && body["config"])) {
      // The generated config needs an ASN and a loopback (and an IPv4 router-id).
      if (!n.asn && !asn_bad)
        error(key, f + ".asn", "missing; the generated BGP configuration needs an ASN",
              "add `asn: 65101` or give the node its own `config: file`");
      if (n.loopbacks.empty()) {
        if (!lo_bad)
          error(key, f + ".loopback",
                "missing; the generated configuration advertises the node's loopback",
                "add e.g. `loopback: 10.255.0.1/32`");
      } else if (!n.router_id) {
        derive_router_id(n);
        if (!n.router_id && !rid_bad)
          error(key, f + ".router-id",
                "missing; an IPv6-only node needs an explicit IPv4 router-id (RFC 6286)",
                "add e.g. `router-id: 10.255.0.1`");
      }
    } else if (!n.router_id) {
      derive_router_id(n);
    }
    return n;
  }

  // The BGP identifier defaults to the first IPv4 loopback.
  void derive_router_id(Node& n) {
    for (size_t i = 0; i < n.loopbacks.size(); ++i)
      if (n.loopbacks[i].family == 4) {
        n.router_id = n.loopbacks[i];
        router_id_at_[n.name] = loopback_at_[n.name][i];
        router_id_derived_.insert(n.name);
        return;
      }
  }

  Link parse_link(const YAML::Node& ln, const std::string& f, int def_mtu, bool def_mtu_set,
                  const Topology& t) {
    Link l;
    l.mark = mark_of(ln);
    l.mtu = def_mtu;
    l.mtu_explicit = def_mtu_set;
    link_mtu_at_.push_back({l.mark, ""});
    if (!ln.IsMap()) {
      error(ln, f, "expected a mapping with endpoints",
            "e.g. - endpoints: [leaf1:swp1, spine1:swp1]");
      return l;
    }
    check_keys(ln, f, kLinkKeys);
    auto eps = ln["endpoints"];
    if (!eps) {
      error(ln, f + ".endpoints", "missing; expected two node:interface endpoints", "");
    } else if (!eps.IsSequence() || eps.size() != 2) {
      error(eps, f + ".endpoints", "expected exactly two endpoints like [leaf1:swp1, spine1:swp1]",
            "");
    } else {
      for (int i = 0; i < 2; ++i) {
        std::string ef = f + ".endpoints[" + std::to_string(i) + "]";
        Endpoint& e = i == 0 ? l.a : l.b;
        e.mark = mark_of(eps[i]);
        auto s = as_string(eps[i], ef);
        if (!s) continue;
        auto colon = s->find(':');
        if (colon == std::string::npos || colon == 0 || colon + 1 == s->size()) {
          error(eps[i], ef, "expected node:interface, got '" + *s + "'", "e.g. leaf1:swp1");
          continue;
        }
        e.node = s->substr(0, colon);
        e.interface = s->substr(colon + 1);
      }
    }
    if (auto m = ln["mtu"]) {
      if (auto v = as_mtu(m, f + ".mtu")) {
        l.mtu = *v;
        l.mtu_explicit = true;
        link_mtu_at_.back() = {mark_of(m), f + ".mtu"};
      } else {
        bad_mtu_.insert(link_mtu_at_.size() - 1);  // reported; skip checks of the fallback
      }
    }
    if (auto a = ln["addresses"]) {
      if (!a.IsMap()) {
        error(a, f + ".addresses", "expected a mapping of node name to address(es)",
              "e.g. addresses: {leaf1: 10.0.1.1/24, server1: 10.0.1.10/24}");
      } else {
        for (const auto& kv : a) {
          std::string node = kv.first.Scalar();
          std::string af = f + ".addresses." + node;
          if (node != l.a.node && node != l.b.node) {
            error(kv.first, af, "node '" + node + "' is not an endpoint of this link",
                  "endpoints are " + l.a.node + " and " + l.b.node);
            continue;
          }
          if (l.a.node == l.b.node) {
            error(kv.first, af,
                  "addresses cannot be given per node on a link between two "
                  "interfaces of the same node",
                  "");
            continue;
          }
          auto ps = as_prefixes(kv.second, af, false);
          auto& dst = l.addresses[node];
          dst.insert(dst.end(), ps.begin(), ps.end());
        }
      }
    }
    (void)t;
    return l;
  }

  void check_semantics(Topology& t) {
    std::vector<std::string> names;
    for (const auto& n : t.nodes) names.push_back(n.name);
    // A VM gets one NIC per linked port, in port order, and its guest numbers ports by NIC
    // order: linked ports must run from the image's first port without a gap.
    for (const auto& n : t.nodes) {
      const auto& vm = n.profile.vm;
      if (n.profile.backend != "libvirt" || vm.interface_pattern.empty()) continue;
      std::set<int> nics;
      for (const auto& l : t.links)
        for (const Endpoint* e : {&l.a, &l.b})
          if (e->node == n.name)
            if (int k = vm_data_nic(vm, e->interface); k >= 0) nics.insert(k);
      if (nics.empty() || *nics.rbegin() == static_cast<int>(nics.size()) - 1) continue;
      int gap = 0;
      while (nics.count(gap)) ++gap;
      std::string p = vm.interface_pattern, first = p, missing = p;
      first.replace(first.find("{n}"), 3, std::to_string(vm.interface_first));
      missing.replace(missing.find("{n}"), 3,
                      std::to_string(vm.interface_first + gap * vm.interface_step));
      error(n.mark, "nodes." + n.name,
            "VM " + n.name + " has links on ports after " + missing + " but none on " + missing,
            "twin gives a VM one NIC per linked port and its guest names ports in NIC order: "
            "link its ports from " +
                first + " on without gaps");
    }
    std::map<std::pair<std::string, std::string>, Mark> used;
    for (size_t i = 0; i < t.links.size(); ++i) {
      Link& l = t.links[i];
      std::string f = "links[" + std::to_string(i) + "]";
      if (l.a.node.empty() || l.b.node.empty()) continue;
      bool ok = true;
      for (int k = 0; k < 2; ++k) {
        Endpoint& e = k == 0 ? l.a : l.b;
        std::string ef = f + ".endpoints[" + std::to_string(k) + "]";
        if (!t.find_node(e.node)) {
          std::string near = nearest_name(e.node, names);
          error(e.mark, ef, "unknown node '" + e.node + "'",
                near.empty() ? "declare it under nodes" : "did you mean '" + near + "'?");
          ok = false;
        }
        std::string why;
        if (!valid_interface_name(e.interface, &why)) {
          error(e.mark, ef, why, "use short Linux names such as swp1 or eth0");
          ok = false;
        } else if (e.interface == "lo") {
          error(e.mark, ef, "interface 'lo' is the node's loopback and cannot be linked", "");
          ok = false;
        } else if (const Node* n = t.find_node(e.node);
                   n && n->profile.backend == "libvirt" &&
                   !n->profile.vm.interface_pattern.empty() &&
                   vm_data_nic(n->profile.vm, e.interface) < 0) {
          const auto& vm = n->profile.vm;
          auto name_of = [&](int k) {
            std::string s = vm.interface_pattern;
            return s.replace(s.find("{n}"), 3,
                             std::to_string(vm.interface_first + k * vm.interface_step));
          };
          error(e.mark, ef,
                "interface '" + e.interface + "' is not a port name of image " + n->image +
                    " (a VM whose ports are " + name_of(0) + ", " + name_of(1) + ", " + name_of(2) +
                    ", ...)",
                "name the VM's ports as its image does (profile " + n->profile.file + ")");
          ok = false;
        } else if (n && n->profile.backend == "libvirt" &&
                   n->profile.vm.interface_pattern.empty() &&
                   !std::regex_match(e.interface, kGuestIfRe)) {
          // The guest learns these names from its kernel command line (twin.if=MAC,NAME,...).
          error(e.mark, ef,
                "interface '" + e.interface + "' of VM " + e.node +
                    " must be letters, digits, '_', '-' or '.'",
                "the guest takes its interface names from its kernel command line");
          ok = false;
        }
      }
      if (l.a.node == l.b.node && l.a.interface == l.b.interface) {
        error(l.b.mark, f + ".endpoints",
              "link from " + l.a.node + ":" + l.a.interface + " to itself",
              "a link joins two different interfaces");
        continue;
      }
      for (Endpoint* e : {&l.a, &l.b}) {
        auto key = std::make_pair(e->node, e->interface);
        if (auto it = used.find(key); it != used.end()) {
          error(e->mark, f + ".endpoints",
                "interface " + e->node + ":" + e->interface +
                    " is already used by the link at line " + std::to_string(it->second.line),
                "each interface joins one link; pick another interface name");
          ok = false;
        } else {
          used[key] = e->mark;
        }
      }
      if (!ok) continue;
      const Node* na = t.find_node(l.a.node);
      const Node* nb = t.find_node(l.b.node);
      // Two FRR nodes peer with BGP unnumbered (the planner's "fabric" link); not a node
      // looped to itself.
      bool unnumbered = na->kind == "frr" && nb->kind == "frr" && na != nb;
      bool needs_v6 = unnumbered;
      for (const auto& [node, ps] : l.addresses)
        for (const auto& p : ps) needs_v6 = needs_v6 || p.family == 6;
      // The generated configuration peers with `remote-as external`: same-ASN neighbours never
      // reach Established (FRR reports "Bad Peer AS").
      if (unnumbered && na->config.empty() && nb->config.empty() && na->asn && nb->asn &&
          *na->asn == *nb->asn)
        error(l.mark, f + ".endpoints",
              l.a.node + " and " + l.b.node + " share ASN " + std::to_string(*na->asn) +
                  "; the generated eBGP configuration needs different ASNs on a link",
              "give each leaf its own ASN (spines may share one), or use your own `config:`");
      const Where& mtu_at = link_mtu_at_[i];
      if (needs_v6 && l.mtu < kMinIpv6Mtu && !bad_mtu_.count(i))
        error(mtu_at.mark, f + ".mtu",
              "MTU " + std::to_string(l.mtu) +
                  (mtu_at.field.empty() ? " (from defaults.mtu)" : "") +
                  " is below 1280 on a link that needs IPv6" +
                  std::string(unnumbered ? " (BGP unnumbered peers over IPv6 link-local)" : ""),
              "Linux removes IPv6 from an interface whose MTU is under 1280 (RFC 8200 §5)");
    }

    // Router-ids and loopbacks are identities: two nodes sharing one break BGP and routing.
    std::map<std::string, std::string> rid_owner, lo_owner;
    for (const auto& n : t.nodes) {
      if (n.kind != "frr") continue;
      std::set<std::string> dup_lo;
      const auto& lo_at = loopback_at_[n.name];
      for (size_t k = 0; k < n.loopbacks.size(); ++k) {
        const auto& l = n.loopbacks[k];
        auto [it, fresh] = lo_owner.emplace(l.str(), n.name);
        if (!fresh && it->second != n.name) {
          dup_lo.insert(l.str());
          Where at = k < lo_at.size() ? lo_at[k] : Where{n.mark, "nodes." + n.name + ".loopback"};
          error(at.mark, at.field, "loopback " + l.str() + " is also used by node " + it->second,
                "loopbacks must be unique in the fabric");
        }
      }
      if (n.router_id) {
        bool derived = router_id_derived_.count(n.name) > 0;
        auto [it, fresh] = rid_owner.emplace(n.router_id->address(), n.name);
        // A router-id taken from a duplicate loopback is the same mistake: report it once.
        if (!fresh && !(derived && dup_lo.count(n.router_id->str()))) {
          auto at = router_id_at_.find(n.name);
          Mark m = at != router_id_at_.end() ? at->second.mark : n.mark;
          error(m, "nodes." + n.name + ".router-id",
                "router-id " + n.router_id->address() +
                    (derived ? ", taken from loopback " + n.router_id->str() + "," : "") +
                    " is also used by node " + it->second,
                std::string("BGP drops sessions between speakers with the same identifier "
                            "(RFC 6286)") +
                    (derived ? "; set a unique `router-id:`" : ""));
        }
      }
    }

    // Hosts: a default route per address family, via the peer's address on a shared subnet.
    for (auto& n : t.nodes) {
      if (n.kind != "host") continue;
      for (int fam : {4, 6}) {
        bool has_addr = false;
        std::optional<IpPrefix> gw;
        Where gw_at{n.mark, "nodes." + n.name + ".gateway"};
        const auto& given_at = gateway_at_[n.name];
        for (size_t k = 0; k < n.gateways.size(); ++k)
          if (n.gateways[k].family == fam) {
            gw = n.gateways[k];
            if (k < given_at.size()) gw_at = given_at[k];
          }
        bool explicit_gw = gw.has_value();
        bool gw_on_link = false;
        for (const auto& l : t.links) {
          const std::string* peer = nullptr;
          if (l.a.node == n.name) peer = &l.b.node;
          if (l.b.node == n.name) peer = &l.a.node;
          if (!peer) continue;
          auto mine = l.addresses.find(n.name);
          if (mine == l.addresses.end()) continue;
          for (const auto& a : mine->second) {
            if (a.family != fam) continue;
            has_addr = true;
            if (explicit_gw) {
              gw_on_link = gw_on_link || a.contains(*gw);
              continue;
            }
            auto theirs = l.addresses.find(*peer);
            if (theirs == l.addresses.end()) continue;
            for (const auto& b : theirs->second)
              if (!gw && b.family == fam && a.contains(b)) gw = b;
          }
        }
        if (explicit_gw && !gw_on_link)
          error(gw_at.mark, gw_at.field,
                "gateway " + gw->address() + " is not on any subnet of the host's links", "");
        if (has_addr && !gw)
          error(n.mark, "nodes." + n.name + ".gateway",
                "host has an IPv" + std::to_string(fam) +
                    " address but no default route: no peer address on its subnet",
                "give the leaf an address in the host's subnet on that link, or set `gateway:`");
        if (gw && !explicit_gw) {
          IpPrefix g = *gw;
          g.length = fam == 4 ? 32 : 128;
          n.gateways.push_back(g);
        }
      }
    }
  }

  std::string file_, dir_;
  Diagnostics& d_;
  // Places of values checked after parsing (duplicates, gateways, IPv6 MTU), so those
  // diagnostics point at the value, not at the node or link that holds it.
  std::map<std::string, std::vector<Where>> loopback_at_;  // node -> parallel to Node::loopbacks
  std::map<std::string, Where> router_id_at_;  // node -> its router-id (or the loopback it is from)
  std::set<std::string> router_id_derived_;    // nodes whose router-id comes from a loopback
  std::map<std::string, std::vector<Where>> gateway_at_;  // node -> parallel to given gateways
  std::vector<Where> link_mtu_at_;  // per link: its own mtu value, or {link, ""} when inherited
  std::set<size_t> bad_mtu_;        // links whose own mtu was invalid (already reported)
  std::map<std::string, std::optional<ImageProfile>> images_;
};

}  // namespace

std::optional<Topology> load_topology_text(const std::string& text, const std::string& file,
                                           const std::string& dir, Diagnostics& diags) {
  Loader l(file, dir, diags);
  return l.load(text);
}

std::optional<Topology> load_topology(const std::string& path, Diagnostics& diags) {
  auto text = read_input_file(path, "topology file",
                              "give the YAML file, e.g. topologies/clos-2x4.yaml", diags);
  if (!text) return std::nullopt;
  // Diagnostics name the file as the user wrote it; the model keeps the absolute path.
  fs::path abs = fs::absolute(path);
  auto t = load_topology_text(*text, path, abs.parent_path().string(), diags);
  if (t) t->file = abs.string();
  return t;
}

}  // namespace twin::topology
