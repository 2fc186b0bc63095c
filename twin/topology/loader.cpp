#include "twin/topology/loader.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <regex>
#include <set>

#include "twin/core/password.hpp"
#include "twin/core/yaml_reader.hpp"
#include "twin/topology/checks.hpp"
#include "twin/topology/containerlab.hpp"
#include "twin/topology/daemons_file.hpp"
#include "twin/topology/declared_checks.hpp"
#include "twin/topology/image_profile.hpp"
#include "twin/topology/names.hpp"
#include "twin/topology/own_config.hpp"
#include "twin/topology/tenants.hpp"
#include "twin/topology/traffic_spec.hpp"

namespace fs = std::filesystem;

namespace twin::topology {

namespace {

using yaml::at;
using yaml::mark_of;

const std::vector<std::string> kTopKeys = {"version", "name",    "defaults", "nodes", "links",
                                           "checks",  "tenants", "anycast",  "mgmt",  "traffic"};
const std::vector<std::string> kMgmtKeys = {"subnet", "interface", "user", "password",
                                            "password-hash"};
const std::vector<std::string> kDefaultKeys = {"kind", "image", "mtu", "bandwidth"};
const std::vector<std::string> kNodeKeys = {
    "kind",   "image",   "asn",    "router-id",    "loopback",
    "config", "gateway", "routes", "daemons-file", "container-image", "mgmt-address"};
const std::vector<std::string> kRouteKeys = {"to", "via"};
const std::vector<std::string> kLinkKeys = {"endpoints", "mtu", "addresses", "bandwidth", "delay"};
const std::vector<std::string> kKinds = spellings(kNodeKindNames);
const std::regex kNameRe("[A-Za-z0-9][A-Za-z0-9_-]*");

// Reads a topology file into a Topology; check_topology() then checks it as a whole.
class Loader {
 public:
  std::string lab_name;  // set by the caller: overrides the file's `name`

  Loader(std::string file, std::string dir, Diagnostics& d, InputPolicy policy)
      : file_(std::move(file)),
        dir_(std::move(dir)),
        d_(d),
        r_(file_, d, {.say_what_was_found = false}),
        policy_(std::move(policy)) {}

  std::optional<Topology> load(const std::string& text) {
    auto doc = r_.document(text, "expected a mapping with version, name, nodes and links",
                           "see topologies/clos-2x4.yaml for an example");
    if (!doc) return std::nullopt;
    YAML::Node root = doc->node;
    size_t before = d_.items().size();
    Topology t;
    t.file = file_;
    t.dir = dir_;
    r_.check_keys(*doc, kTopKeys);

    if (auto v = root["version"]; !v) {
      error(root, "version", "missing; expected `version: 1`", "add `version: 1` at the top");
    } else if (auto n = r_.integer(at(v, "version")); n && *n != 1) {
      error(v, "version", "unsupported version " + std::to_string(*n) + "; expected 1", "");
    }
    if (!lab_name.empty()) {
      t.name = lab_name;  // given by the caller (--name): the file's own is not used
    } else if (auto n = root["name"]; !n) {
      error(root, "name", "missing; expected the lab name",
            "add e.g. `name: mylab`, or give --name");
    } else if (auto s = r_.string(at(n, "name"))) {
      t.name = *s;
      check_lab_name(n, t.name);
    }

    std::string def_kind = "frr", def_image;
    int def_mtu = 1500;
    bool def_mtu_set = false;
    uint64_t def_rate = 0;
    Mark def_rate_mark;
    if (auto dn = root["defaults"]) {
      if (!dn.IsMap()) {
        error(dn, "defaults", "expected a mapping of kind, image, mtu, bandwidth", "");
      } else {
        r_.check_keys(at(dn, "defaults"), kDefaultKeys);
        if (auto k = dn["kind"])
          if (auto s = r_.string(at(k, "defaults.kind"))) def_kind = *s;
        if (auto i = dn["image"])
          if (auto s = r_.string(at(i, "defaults.image"))) def_image = *s;
        if (auto m = dn["mtu"])
          if (auto v = r_.mtu(at(m, "defaults.mtu"))) {
            def_mtu = *v;
            def_mtu_set = true;
          }
        if (auto b = dn["bandwidth"])
          if (auto v = r_.rate(at(b, "defaults.bandwidth"))) {
            def_rate = *v;
            def_rate_mark = mark_of(b);
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
          t.links.push_back(parse_link(ln[i], "links[" + std::to_string(i) + "]", def_mtu,
                                       def_mtu_set, def_rate, def_rate_mark, t));
      }
    }

    if (yaml::Value c = yaml::child(*doc, "checks")) t.checks = read_checks(r_, c, t);
    if (auto an = root["anycast"]) read_anycast(an, t);
    if (auto mn = root["mgmt"]) t.mgmt = read_mgmt(mn);
    if (auto tn = root["traffic"]) t.traffic = read_traffic_spec(r_, at(tn, "traffic"));

    // Own configs first: the checks see their addresses (duplicates, hosts' gateways).
    read_own_configs(t, d_);
    // After own configs (a VTEP's address may be a loopback its frr.conf gives), before the
    // checks: servers on tenant ports take their gateway from their network.
    if (yaml::Value tv = yaml::child(*doc, "tenants")) {
      size_t before_tenants = d_.items().size();
      t.tenants = read_tenants(r_, tv, t);
      places_.tenant_problems = d_.items().size() != before_tenants;
    }
    check_topology(t, places_, d_);
    if (d_.items().size() != before) return std::nullopt;
    return t;
  }

 private:
  void error(const YAML::Node& where, const std::string& field, const std::string& msg,
             const std::string& hint) {
    r_.error(mark_of(where), field, msg, hint);
  }

  // A scalar or a list of scalars, each an address with prefix length.
  // `where`, when given, gets the place and field path of each returned prefix.
  std::vector<IpPrefix> as_prefixes(const YAML::Node& n, const std::string& field, bool allow_bare,
                                    std::vector<Where>* where = nullptr) {
    std::vector<IpPrefix> out;
    for (const auto& v :
         r_.scalar_or_list(at(n, field), "expected an address or a list of addresses")) {
      if (!v.node.IsScalar()) {
        r_.error(v, "expected an address string");
        continue;
      }
      auto p = IpPrefix::parse(v.node.Scalar(), allow_bare);
      if (!p) {
        r_.error(v,
                 "'" + v.node.Scalar() + "' is not an IPv4/IPv6 address" +
                     (allow_bare ? "" : " with prefix length"),
                 allow_bare ? "" : "write e.g. 10.0.1.1/24 or 2001:db8::1/64");
        continue;
      }
      out.push_back(*p);
      if (where) where->push_back({v.mark(), v.field});
    }
    return out;
  }

  // `mgmt:` — true (defaults), false (none), or a mapping of subnet, interface, user.
  std::optional<Mgmt> read_mgmt(const YAML::Node& mn) {
    Mgmt m;
    m.mark = mark_of(mn);
    m.subnet_mark = m.interface_mark = m.user_mark = m.mark;
    if (mn.IsScalar()) {
      auto on = r_.boolean(at(mn, "mgmt"));
      if (!on || !*on) return std::nullopt;
      return m;
    }
    if (!mn.IsMap()) {
      error(mn, "mgmt", "expected true, or a mapping of subnet, interface, user",
            "e.g. `mgmt: {subnet: 172.30.1.0/24}`");
      return std::nullopt;
    }
    const yaml::Value v = at(mn, "mgmt");
    r_.check_keys(v, kMgmtKeys);
    if (yaml::Value sn = yaml::child(v, "subnet")) {
      m.subnet_mark = sn.mark();
      auto ps = as_prefixes(sn.node, "mgmt.subnet", false);
      if (ps.size() == 1) {
        m.subnet = ps[0].network();
        if (m.subnet->address() != ps[0].address())
          r_.error(sn, ps[0].str() + " has host bits set",
                   "the network is " + m.subnet->str() + "; give that");
      } else if (ps.size() > 1) {
        r_.error(sn, "expected one IPv4 subnet", "e.g. 172.30.1.0/24");
      }
    }
    if (yaml::Value in = yaml::child(v, "interface")) {
      m.interface_mark = in.mark();
      if (auto s = r_.string(in)) m.interface = *s;
    }
    if (yaml::Value un = yaml::child(v, "user")) {
      m.user_mark = un.mark();
      if (auto s = r_.string(un)) {
        m.user = *s;
        // Accounts the machine's own programs run as: sshd's privilege separation (its
        // network-facing child) would run as root, and FRR's files would change hands.
        static const std::set<std::string> kSystem = {"root",
                                                      "sshd",
                                                      "frr",
                                                      "frrvty",
                                                      "nobody",
                                                      "daemon",
                                                      "bin",
                                                      "sys",
                                                      "dnsmasq",
                                                      "libvirt-qemu",
                                                      "messagebus",
                                                      "_apt",
                                                      "systemd-network",
                                                      "systemd-resolve"};
        if (kSystem.count(*s))
          r_.error(un, "'" + *s + "' is an account of this machine's own programs",
                   "the login exists only inside each sshd; give it a name of its own, e.g. "
                   "admin");
      }
    }
    // Printable only: a block scalar's trailing newline, a tab or an escape would be part of
    // the password without anyone seeing it.
    auto printable_secret = [](const std::string& x) {
      return std::all_of(x.begin(), x.end(),
                         [](unsigned char c) { return c >= 0x20 && c != 0x7f; });
    };
    yaml::Value pw = yaml::child(v, "password");
    yaml::Value ph = yaml::child(v, "password-hash");
    if (pw)
      if (auto s = r_.string(pw)) {
        m.password = *s;
        if (s->empty())
          r_.error(pw, "empty password", "leave password out: the lab's key logs in without one");
        else if (!printable_secret(*s))
          r_.error(pw, "the password holds a newline or another control character",
                   "write it in quotes on one line (a `|` block keeps its final newline)");
      }
    if (ph)
      if (auto s = r_.string(ph)) {
        m.password_hash = *s;
        static const std::regex kDes("[./0-9A-Za-z]{13}");
        const bool legacy = s->rfind("$1$", 0) == 0 || std::regex_match(*s, kDes);
        if (!pw && (!crypt_hash_ok(*s) || s->find_first_of(": \t\r\n") != std::string::npos))
          r_.error(ph,
                   legacy ? "a legacy hash (MD5 or DES crypt): twin takes yescrypt, SHA-512/256-"
                            "crypt or bcrypt"
                          : "not a crypt(5) hash this machine's libcrypt accepts",
                   "e.g. the output of `mkpasswd -m yescrypt` or `openssl passwd -6`");
      }
    if (pw && ph) r_.error(ph, "both password and password-hash given", "give one");
    return m;
  }

  // `anycast:`: host prefixes that several routers hold on `lo` on purpose (check_topology
  // finds the holders and refuses one no router holds).
  void read_anycast(const YAML::Node& an, Topology& t) {
    std::vector<Where> at;
    auto ps = as_prefixes(an, "anycast", true, &at);
    for (size_t i = 0; i < ps.size(); ++i) {
      if (!ps[i].is_host()) {
        r_.error(at[i].mark, at[i].field,
                 "anycast address '" + ps[i].str() + "' is not a host prefix",
                 "an anycast address is a loopback: use /32 for IPv4 and /128 for IPv6");
        continue;
      }
      auto same = std::find_if(t.anycast.begin(), t.anycast.end(),
                               [&](const Anycast& a) { return a.prefix == ps[i]; });
      if (same != t.anycast.end()) {
        r_.error(at[i].mark, at[i].field,
                 "anycast address " + ps[i].str() + " is already listed at line " +
                     std::to_string(same->mark.line),
                 "list each anycast address once");
        continue;
      }
      Anycast a;
      a.prefix = ps[i];
      a.declared = true;
      a.mark = at[i].mark;
      a.source = fs::path(file_).filename().string() + ":" + std::to_string(at[i].mark.line);
      t.anycast.push_back(std::move(a));
    }
  }

  void check_lab_name(const YAML::Node& n, const std::string& name) {
    if (!valid_lab_name(name))
      error(n, "name",
            "invalid lab name '" + name + "'; expected 1-" + std::to_string(kMaxLabName) +
                " of A-Z a-z 0-9 _ - starting with a letter or digit",
            "the lab name prefixes namespace and cgroup names");
  }

  // Image `name`'s profile, loaded once per topology; null when missing or invalid (reported).
  const ImageProfile* image(const std::string& name, const YAML::Node& where,
                            const std::string& field) {
    if (auto it = images_.find(name); it != images_.end())
      return it->second ? &*it->second : nullptr;
    auto& slot = images_[name];
    std::vector<std::string> looked;
    std::optional<InputProblem> refused;
    std::string path = find_image_profile(name, dir_, policy_, &looked, &refused);
    if (refused) {
      error(where, field, refused->message, refused->hint);
      return nullptr;
    }
    if (path.empty()) {
      std::vector<std::string> known = known_images(dir_);
      error(where, field, "unknown image '" + name + "' (looked in " + join_names(looked) + ")",
            did_you_mean(name, known, "available: " + join_names(known)));
      return nullptr;
    }
    slot = load_image_profile(name, path, d_);
    if (slot && !vm_files_allowed(*slot, where, field)) slot.reset();
    return slot ? &*slot : nullptr;
  }

  // A profile the input brought (from the topology's folder, or named by path) names the VM's
  // kernel, initrd and disk: they must lie where the input's files may, as QEMU reads them and
  // libvirt may take them over. Profiles from the image search path are the operator's.
  bool vm_files_allowed(const ImageProfile& p, const YAML::Node& where, const std::string& field) {
    InputPolicy operators = InputPolicy().with_roots(image_search_path(""), "image search path");
    if (!p.boots_vm || operators.inside(p.file)) return true;
    bool ok = true;
    for (const auto& [what, file] : {std::pair<const char*, std::string>{"kernel", p.vm.kernel},
                                     {"initrd", p.vm.initrd},
                                     {"disk", p.vm.disk},
                                     {"ssh-key", p.vm.ssh_key}}) {
      if (file.empty() || policy_.inside(file)) continue;
      error(where, field,
            "image " + p.name + " (" + p.file + ") names its VM's " + what + " " + file +
                ", outside the folders inputs may name files under: " + policy_.where(),
            "put the image's files under one of them, install the profile on the image search "
            "path, or allow the folder with --allow-path " +
                fs::path(file).parent_path().string());
      ok = false;
    }
    return ok;
  }

  Node parse_node(const std::string& name, const YAML::Node& key, const YAML::Node& body,
                  const std::string& def_kind, const std::string& def_image) {
    Node n;
    n.name = name;
    n.mark = mark_of(key);
    std::string kind = def_kind;  // as written; checked below
    std::string f = "nodes." + name;
    YAML::Node kind_at = key, image_at = key;
    // A field given but invalid is reported where it is; don't report it missing as well.
    bool asn_bad = false, rid_bad = false, lo_bad = false;
    if (body && !body.IsNull()) {
      if (!body.IsMap()) {
        error(body, f, "expected a mapping of node fields", "");
        return n;
      }
      r_.check_keys(at(body, f), kNodeKeys);
      if (auto k = body["kind"])
        if (auto s = r_.string(at(k, f + ".kind"))) {
          kind = *s;
          kind_at = k;
        }
      if (auto i = body["image"])
        if (auto s = r_.string(at(i, f + ".image"))) {
          n.image = *s;
          image_at = i;
        }
      if (auto a = body["asn"]) {
        asn_bad = true;  // until it parses
        if (auto v = r_.integer(at(a, f + ".asn"))) {
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
            places_.router_id[name] = at[0];
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
            r_.error(at[i].mark, at[i].field, "loopback '" + ps[i].str() + "' is not a host prefix",
                     "use /32 for IPv4 and /128 for IPv6");
          } else {
            n.loopbacks.push_back(ps[i]);
            places_.loopbacks[name].push_back(at[i]);
          }
        }
        lo_bad = d_.items().size() != before;
      }
      if (auto c = body["config"]) {
        if (auto s = r_.string(at(c, f + ".config"))) {
          fs::path p = fs::path(*s).is_absolute() ? fs::path(*s) : fs::path(dir_) / *s;
          if (auto file = r_.named_file(at(c, f + ".config"), p.string(), policy_, "config file",
                                        {"config file '" + p.string() + "' does not exist",
                                         "paths are relative to the topology file's folder"},
                                        {"config '" + p.string() + "' is a directory",
                                         "give the node's integrated frr.conf file"}))
            n.config = *file;
        }
      }
      if (auto g = body["gateway"])
        n.gateways = as_prefixes(g, f + ".gateway", true, &places_.gateways[name]);
      // The container image a converted containerlab node named (twin convert writes it):
      // `up` runs that image, or the closest release present with a note.
      if (auto ci = body["container-image"])
        if (auto s = r_.string(at(ci, f + ".container-image"))) n.container_image = *s;
      if (auto ma = body["mgmt-address"]) {
        n.mgmt_mark = mark_of(ma);
        auto ps = as_prefixes(ma, f + ".mgmt-address", true);
        if (ps.size() > 1)
          error(ma, f + ".mgmt-address", "expected one IPv4 address", "e.g. 172.30.1.11");
        else if (ps.size() == 1)
          n.mgmt_address = ps[0];
      }
      if (auto rt = body["routes"]) parse_routes(n, rt, f + ".routes");
      if (auto df = body["daemons-file"]) {
        if (auto s = r_.string(at(df, f + ".daemons-file"))) {
          fs::path p = fs::path(*s).is_absolute() ? fs::path(*s) : fs::path(dir_) / *s;
          if (auto file =
                  r_.named_file(at(df, f + ".daemons-file"), p.string(), policy_, "daemons file",
                                {"daemons file '" + p.string() + "' does not exist",
                                 "paths are relative to the topology file's folder"}))
            n.daemon_settings =
                read_daemons_file(*file, file_, mark_of(df), f + ".daemons-file", d_);
          if (!body["config"] && node_kind_from(kind) != NodeKind::kHost)
            error(df, f + ".daemons-file",
                  "a daemons file needs the node's own `config:`: the generated configuration "
                  "picks its own daemons",
                  "add `config: <frr.conf>` or remove `daemons-file`");
        }
      }
    }
    if (auto k = node_kind_from(kind)) {
      n.kind = *k;
    } else {
      error(kind_at, f + ".kind", "unknown kind '" + kind + "'",
            did_you_mean(kind, kKinds, "expected one of: " + join_names(kKinds)));
      return n;
    }
    const bool host = n.kind == NodeKind::kHost;
    const bool bridge = n.kind == NodeKind::kBridge;
    // A `defaults: image:` is an FRR image: hosts and bridges keep their own.
    if (n.image.empty())
      n.image = host ? "host" : bridge ? "bridge" : def_image.empty() ? "frr-8.4" : def_image;
    if (const ImageProfile* p = image(n.image, image_at, f + ".image")) {
      n.profile = *p;
      if (p->kind != n.kind)
        error(image_at, f + ".image",
              "image '" + n.image + "' is for kind " + to_string(p->kind) +
                  ", but the node is kind " + kind,
              "pick an image of kind " + kind);
    }
    if (bridge) {
      for (const char* k : {"asn", "router-id", "loopback", "config", "daemons-file", "gateway",
                            "routes", "container-image"})
        if (body && body.IsMap() && body[k])
          error(body[k], f + "." + k, std::string("'") + k + "' does not apply to kind bridge",
                "a bridge is a LAN segment: its members' addresses go on their links");
      return n;
    }
    if (host) {
      for (const char* k :
           {"asn", "router-id", "loopback", "config", "daemons-file", "container-image"})
        if (body && body.IsMap() && body[k])
          error(body[k], f + "." + k, std::string("'") + k + "' does not apply to kind host",
                "a host has addresses on its links, a default route and static routes only");
    } else if (body && body.IsMap() && body["routes"]) {
      error(body["routes"], f + ".routes", "'routes' applies to kind host only",
            "an frr node's static routes go in its frr.conf (`ip route ...`)");
    }
    if (!host && n.config.empty() && !(body && body.IsMap() && body["config"])) {
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
    }
    // A node with its own config keeps the router-id its config sets (`bgp router-id`), or
    // the one FRR picks: deriving one from the topology's loopback would expect an ID FRR
    // never chose.
    return n;
  }

  // `routes:` of a host: a list of {to: PREFIX|default, via: ADDRESS}. Whether `via` lies on
  // one of the host's subnets is checked with the links (checks.cpp).
  void parse_routes(Node& n, const YAML::Node& rt, const std::string& f) {
    if (!rt.IsSequence()) {
      error(rt, f, "expected a list of routes",
            "e.g. routes: [{to: 10.0.0.0/8, via: 192.168.1.1}]");
      return;
    }
    std::map<std::string, Mark> seen;  // destination -> where
    for (size_t i = 0; i < rt.size(); ++i) {
      std::string rf = f + "[" + std::to_string(i) + "]";
      const YAML::Node& r = rt[i];
      if (!r.IsMap()) {
        error(r, rf, "expected a mapping with to and via", "e.g. {to: 10.0.0.0/8, via: 192.168.1.1}");
        continue;
      }
      r_.check_keys(at(r, rf), kRouteKeys);
      auto to = r["to"], via = r["via"];
      if (!to || !via) {
        error(r, rf + (to ? ".via" : ".to"),
              std::string("missing; a route needs ") + (to ? "a next hop `via`" : "a destination `to`"),
              "e.g. {to: 10.0.0.0/8, via: 192.168.1.1}");
        continue;
      }
      auto ts = r_.string(at(to, rf + ".to"));
      auto vs = r_.string(at(via, rf + ".via"));
      if (!ts || !vs) continue;
      auto hop = IpPrefix::parse(*vs, true);
      if (!hop) {
        error(via, rf + ".via", "'" + *vs + "' is not an IPv4/IPv6 address", "e.g. 192.168.1.1");
        continue;
      }
      hop->length = hop->family == 4 ? 32 : 128;
      std::optional<IpPrefix> dst;
      if (*ts == "default") {
        dst = *IpPrefix::parse(hop->family == 4 ? "0.0.0.0/0" : "::/0");
      } else {
        dst = IpPrefix::parse(*ts, true);
        if (!dst) {
          error(to, rf + ".to", "'" + *ts + "' is not a prefix",
                "write e.g. 10.0.0.0/8, 2001:db8::/32 or default");
          continue;
        }
        if (dst->network() != *dst) {
          error(to, rf + ".to", "'" + *ts + "' has host bits set",
                "did you mean " + dst->network().str() + "?");
          continue;
        }
        if (dst->family != hop->family) {
          error(via, rf + ".via",
                "next hop " + hop->address() + " is IPv" + std::to_string(hop->family) +
                    " but the destination " + dst->str() + " is IPv" +
                    std::to_string(dst->family),
                "");
          continue;
        }
      }
      std::string key = dst->length == 0 ? "default (IPv" + std::to_string(dst->family) + ")"
                                         : dst->str();
      if (auto it = seen.find(key); it != seen.end()) {
        error(to, rf + ".to",
              "a route to " + key + " is already given at line " + std::to_string(it->second.line),
              "one route per destination");
        continue;
      }
      seen[key] = mark_of(to);
      n.routes.push_back({*dst, *hop, mark_of(to)});
      places_.route_via[n.name].push_back({mark_of(via), rf + ".via"});
    }
  }

  // The BGP identifier defaults to the first IPv4 loopback.
  void derive_router_id(Node& n) {
    for (size_t i = 0; i < n.loopbacks.size(); ++i)
      if (n.loopbacks[i].family == 4) {
        n.router_id = n.loopbacks[i];
        places_.router_id[n.name] = places_.loopbacks[n.name][i];
        places_.router_id_derived.insert(n.name);
        return;
      }
  }

  Link parse_link(const YAML::Node& ln, const std::string& f, int def_mtu, bool def_mtu_set,
                  uint64_t def_rate, const Mark& def_rate_mark, const Topology& t) {
    Link l;
    l.mark = mark_of(ln);
    l.mtu = def_mtu;
    l.mtu_explicit = def_mtu_set;
    l.bandwidth_bps = def_rate;
    l.bandwidth_mark = def_rate_mark;
    places_.link_mtu.push_back({l.mark, ""});
    places_.link_addresses.emplace_back();
    if (!ln.IsMap()) {
      error(ln, f, "expected a mapping with endpoints",
            "e.g. - endpoints: [leaf1:swp1, spine1:swp1]");
      return l;
    }
    r_.check_keys(at(ln, f), kLinkKeys);
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
        auto s = r_.string(at(eps[i], ef));
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
      if (auto v = r_.mtu(at(m, f + ".mtu"))) {
        l.mtu = *v;
        l.mtu_explicit = true;
        places_.link_mtu.back() = {mark_of(m), f + ".mtu"};
      } else {
        places_.bad_mtu.insert(places_.link_mtu.size() -
                               1);  // reported; skip checks of the fallback
      }
    }
    if (auto b = ln["bandwidth"])
      if (auto v = r_.rate(at(b, f + ".bandwidth"))) {
        l.bandwidth_bps = *v;
        l.bandwidth_mark = mark_of(b);
      }
    if (auto dl = ln["delay"])
      if (auto v = r_.duration(at(dl, f + ".delay"))) {
        // netem's delay is a 32-bit count of ns-scaled ticks; a link of a data center is < 1 s.
        if (v->count() > 1000)
          error(dl, f + ".delay", "delay above 1s; expected up to 1000ms one way", "");
        l.delay_ms = static_cast<int>(v->count());
        l.delay_mark = mark_of(dl);
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
          if (l.a.node == l.b.node) continue;  // a link looped back: refused whole
          auto ps = as_prefixes(kv.second, af, false, &places_.link_addresses.back()[node]);
          auto& dst = l.addresses[node];
          dst.insert(dst.end(), ps.begin(), ps.end());
        }
      }
    }
    (void)t;
    return l;
  }

  std::string file_, dir_;
  Diagnostics& d_;
  yaml::Reader r_;
  Places places_;
  InputPolicy policy_;
  std::map<std::string, std::optional<ImageProfile>> images_;
};

}  // namespace

std::optional<Topology> load_topology_text(const std::string& text, const std::string& file,
                                           const std::string& dir, Diagnostics& diags,
                                           const std::string& lab_name, const InputPolicy* policy) {
  InputPolicy own = policy ? *policy : InputPolicy::for_input(dir.empty() ? "." : dir);
  // A containerlab file is recognised by its shape, whatever its name.
  if (looks_like_containerlab(text, file))
    return load_containerlab_text(text, file, dir, diags, lab_name, &own);
  Loader l(file, dir, diags, own);
  l.lab_name = lab_name;
  return l.load(text);
}

std::optional<Topology> load_topology(const std::string& path, Diagnostics& diags,
                                      const std::string& lab_name, const InputPolicy* policy) {
  InputPolicy own = policy ? *policy : InputPolicy::for_input(path);
  auto text = read_input_file(own, path, "topology file",
                              "give the YAML file, e.g. topologies/clos-2x4.yaml", diags);
  if (!text) return std::nullopt;
  // Diagnostics name the file as the user wrote it; the model keeps the absolute path.
  fs::path abs = fs::absolute(path);
  auto t = load_topology_text(*text, path, abs.parent_path().string(), diags, lab_name, &own);
  if (t) t->file = abs.string();
  // A containerlab file has no place for twin's checks: they come from its companion file
  // `<name>.checks.yaml` beside it, when there is one.
  // (Read once the lab loaded: checks name its nodes.)
  if (t && looks_like_containerlab(*text, path)) {
    std::string companion = companion_checks_path(path);
    // (A companion that is there but may not be read is refused like any named file.)
    std::error_code ec;
    if (fs::symlink_status(companion, ec).type() != fs::file_type::not_found &&
        !load_checks_file(companion, *t, diags, own))
      return std::nullopt;
  }
  return t;
}

}  // namespace twin::topology
