#include "twin/topology/containerlab.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "twin/core/util.hpp"
#include "twin/core/yaml_reader.hpp"
#include "twin/topology/checks.hpp"
#include "twin/topology/daemons_file.hpp"
#include "twin/topology/frr_conf.hpp"
#include "twin/topology/image_profile.hpp"
#include "twin/topology/names.hpp"
#include "twin/topology/own_config.hpp"

namespace fs = std::filesystem;

namespace twin::topology {

namespace {

using yaml::at;
using yaml::mark_of;

const std::vector<std::string> kTopKeys = {"name", "prefix", "mgmt", "topology", "settings"};
const std::vector<std::string> kTopologyKeys = {"nodes", "links", "kinds", "groups", "defaults"};
// Node fields twin reads; every other one is ignored with a warning.
const std::set<std::string> kReadNodeKeys = {"mgmt-ipv4", "mgmt_ipv4",
                                             "kind",           "image", "group", "binds",
                                             "startup-config", "exec",  "extras"};
// containerlab's FRR kind and its alias (containerlab docs, "FRRouting").
const std::set<std::string> kFrrKinds = {"frr", "frrouting"};
// The daemons containerlab's frr kind switches on and off (`extras.frr.daemons`; all of them
// when the list is absent or empty), and those FRR starts whatever the list says, which the
// list may name to no effect.
const std::vector<std::string> kFrrKindDaemons = {
    "bgpd",  "ospfd",  "ospf6d", "ripd",   "ripngd", "isisd", "pimd",    "pim6d", "ldpd",
    "nhrpd", "eigrpd", "babeld", "sharpd", "pbrd",   "bfdd",  "fabricd", "vrrpd", "pathd"};
const std::vector<std::string> kFrrAlwaysOn = {"zebra", "staticd", "mgmtd", "watchfrr"};
// What an frr-kind node without startup-config boots: containerlab's minimal configuration,
// which sets FRR's traditional defaults and logging and nothing else (no hostname: FRR takes
// the node's).
constexpr const char* kFrrKindMinimalConfig = "frr defaults traditional\nlog stdout\n";
// Kinds that are the host itself or a container outside the lab: twin's nodes are all its own.
const std::set<std::string> kOutsideKinds = {"host", "ext-container"};
// Kinds that are a LAN segment: twin's bridge node (a Linux bridge in the lab's own namespace).
const std::set<std::string> kBridgeKinds = {"bridge", "ovs-bridge"};
const std::regex kNameRe("[A-Za-z0-9][A-Za-z0-9_-]*");

const char* kExecHint =
    "twin reads `ip address add A/N dev IF`, `ip route add|replace P|default via G` and "
    "`ip link set IF up|mtu N`; give anything else as a field of twin's topology format, or "
    "drop the line";

bool one_of(const std::string& s, std::initializer_list<const char*> v) {
  return std::any_of(v.begin(), v.end(), [&](const char* x) { return s == x; });
}

// What an `exec:` line does, when twin can model it.
struct ExecAction {
  enum What { kAddress, kRoute, kLinkUp, kMtu } what = kLinkUp;
  std::string ifname;
  IpPrefix prefix;  // kAddress: the address; kRoute: the destination (length 0: default)
  IpPrefix via;     // kRoute
  int mtu = 0;      // kMtu
};

// Parses one `ip ...` line of iproute2; nullopt with `why` when it is not one twin models.
std::optional<ExecAction> parse_ip(const std::string& line, std::string& why) {
  auto w = words(line);
  size_t i = 1;
  if (w.empty() || w[0] != "ip") {
    why = "not an `ip` command";
    return std::nullopt;
  }
  while (i < w.size() && (w[i] == "-4" || w[i] == "-6")) ++i;
  if (i + 1 >= w.size()) {
    why = "incomplete";
    return std::nullopt;
  }
  const std::string obj = w[i], op = w[i + 1];
  std::vector<std::string> rest(w.begin() + static_cast<long>(i) + 2, w.end());
  ExecAction a;
  if (one_of(obj, {"a", "ad", "addr", "addre", "addres", "address"})) {
    if (op != "add" || rest.size() != 3 || rest[1] != "dev") {
      why = "expected `ip address add A/N dev IF`";
      return std::nullopt;
    }
    auto p = IpPrefix::parse(rest[0]);
    if (!p) {
      why = "'" + rest[0] + "' is not an address with prefix length";
      return std::nullopt;
    }
    a.what = ExecAction::kAddress;
    a.prefix = *p;
    a.ifname = rest[2];
    return a;
  }
  if (one_of(obj, {"r", "ro", "rou", "rout", "route"})) {
    if (!one_of(op, {"add", "replace"}) || !(rest.size() == 3 || rest.size() == 5) ||
        rest[1] != "via" || (rest.size() == 5 && rest[3] != "dev")) {
      why = "expected `ip route add|replace P|default via G [dev IF]`";
      return std::nullopt;
    }
    auto via = IpPrefix::parse(rest[2], true);
    if (!via || !via->is_host()) {
      why = "'" + rest[2] + "' is not a next-hop address";
      return std::nullopt;
    }
    std::optional<IpPrefix> dst = rest[0] == "default"
                                      ? IpPrefix::parse(via->family == 4 ? "0.0.0.0/0" : "::/0")
                                      : IpPrefix::parse(rest[0], true);
    if (!dst || dst->network() != *dst || dst->family != via->family) {
      why = "'" + rest[0] + "' is not a network prefix of the next hop's family";
      return std::nullopt;
    }
    a.what = ExecAction::kRoute;
    a.prefix = *dst;
    a.via = *via;
    if (rest.size() == 5) a.ifname = rest[4];
    return a;
  }
  if (one_of(obj, {"l", "li", "lin", "link"}) && op == "set") {
    size_t k = 0;
    if (k < rest.size() && rest[k] == "dev") ++k;
    if (k >= rest.size()) {
      why = "expected `ip link set IF up|mtu N`";
      return std::nullopt;
    }
    a.ifname = rest[k++];
    bool any = false;
    for (; k < rest.size(); ++k) {
      if (rest[k] == "up") {
        any = true;
      } else if (rest[k] == "mtu" && k + 1 < rest.size() &&
                 rest[k + 1].find_first_not_of("0123456789") == std::string::npos &&
                 rest[k + 1].size() < 7) {
        a.what = ExecAction::kMtu;
        a.mtu = std::stoi(rest[++k]);
        any = true;
      } else {
        why = "twin sets a link up and its MTU only ('" + rest[k] + "')";
        return std::nullopt;
      }
    }
    if (!any) {
      why = "expected `ip link set IF up|mtu N`";
      return std::nullopt;
    }
    return a;
  }
  why = "not an address, route or link setting twin models";
  return std::nullopt;
}

// A value of a node's field and where it was written (the node, its group, its kind or the
// defaults: containerlab's order).
struct Field {
  YAML::Node value;
  std::string path;  // "topology.nodes.r1.binds", "topology.kinds.linux.image", ...
  explicit operator bool() const { return value.IsDefined() && !value.IsNull(); }
};

// A bind "host:container[:options]" of a node.
struct Bind {
  std::string host;       // absolute
  std::string container;  // without a trailing '/'
  YAML::Node at;
  std::string path;
};

class ClabLoader {
 public:
  std::string lab_name;  // set by the caller: overrides the file's `name`

  ClabLoader(std::string file, std::string dir, Diagnostics& d, InputPolicy policy)
      : file_(std::move(file)),
        dir_(std::move(dir)),
        d_(d),
        r_(file_, d),
        policy_(std::move(policy)) {}

  std::optional<Topology> load(const std::string& text) {
    auto doc = r_.document(text, "expected a containerlab topology: a mapping with name and topology",
                           "see topologies/ospf-triangle/ospf-triangle.clab.yml");
    if (!doc) return std::nullopt;
    size_t before = d_.items().size();
    const YAML::Node root = doc->node;
    t_.file = file_;
    t_.dir = dir_;
    ignore_others(root, kTopKeys, "");
    for (const char* k : {"prefix", "settings"})
      if (root[k])
        warn(root[k], k, std::string("`") + k + "` is ignored by twin",
             "twin names namespaces tw-<lab>-<node>");
    if (auto m = root["mgmt"]) read_mgmt(m);
    // containerlab's own lab directory is named after the file's `name` (binds' __clabDir__).
    if (auto n = root["name"]; n && n.IsScalar()) lab_ = n.Scalar();
    if (!lab_name.empty()) {
      t_.name = lab_name;  // given by the caller (--name): the file's own is not used
    } else if (auto n = root["name"]; !n) {
      error(root, "name", "missing; expected the lab name",
            "add e.g. `name: mylab`, or give --name");
    } else if (auto s = r_.string(at(n, "name"))) {
      t_.name = *s;
      if (!valid_lab_name(*s))
        error(n, "name",
              "invalid lab name '" + *s + "'; twin expects 1-" + std::to_string(kMaxLabName) +
                  " of A-Z a-z 0-9 _ - starting with a letter or digit",
              "the lab name prefixes namespace and cgroup names; give --name NAME to use another");
    }
    const YAML::Node topo = root["topology"];
    if (!topo || !topo.IsMap()) {
      error(topo ? topo : root, "topology", "expected a mapping with nodes and links", "");
      return std::nullopt;
    }
    ignore_others(topo, kTopologyKeys, "topology");
    defaults_ = map_or_report(topo["defaults"], "topology.defaults");
    kinds_ = map_or_report(topo["kinds"], "topology.kinds");
    groups_ = map_or_report(topo["groups"], "topology.groups");
    const YAML::Node nodes = topo["nodes"];
    if (!nodes || !nodes.IsMap()) {
      error(nodes ? nodes : topo, "topology.nodes", "expected a mapping of node names", "");
    } else {
      // yaml-cpp keeps both of two equal keys; containerlab's YAML reader refuses them.
      std::map<std::string, int> seen;  // node name -> line
      for (const auto& kv : nodes) {
        const std::string name = kv.first.Scalar();
        if (auto [it, fresh] = seen.emplace(name, kv.first.Mark().line + 1); !fresh) {
          error(kv.first, "topology.nodes." + name,
                "node " + name + " is given twice (first at line " + std::to_string(it->second) +
                    ")",
                "node names must be unique; rename one of them");
          continue;
        }
        read_node(kv.first, kv.second);
      }
    }
    if (auto links = topo["links"]) {
      if (!links.IsSequence())
        error(links, "topology.links", "expected a list of links", "");
      else
        for (size_t i = 0; i < links.size(); ++i)
          read_link(links[i], "topology.links[" + std::to_string(i) + "]", i);
    }
    for (const auto& [name, items] : exec_) apply_exec(name, items);
    // Hosts' default routes as the file gives them (exec lines), before the checks add one.
    std::map<std::string, size_t> given;
    for (const auto& n : t_.nodes)
      if (n.kind == NodeKind::kHost) given[n.name] = n.gateways.size();
    places_.gateway_optional = true;  // containerlab gives a host no default route of its own
    // The checks name fields as twin's format does (links[i], nodes.x): name them as this
    // file does (topology.links[j] counts the links skipped above).
    Diagnostics checked;
    read_own_configs(t_, checked);
    check_topology(t_, places_, checked);
    static const std::regex link_re(R"(^links\[(\d+)\])");
    for (Diagnostic d : checked.items()) {
      std::smatch m;
      if (std::regex_search(d.field, m, link_re)) {
        size_t i = std::stoul(m[1]);
        size_t j = i < link_index_.size() ? link_index_[i] : i;
        d.field = "topology.links[" + std::to_string(j) + "]" + m.suffix().str();
      } else if (d.field.rfind("nodes.", 0) == 0) {
        d.field = "topology." + d.field;
      }
      d_.add(std::move(d));
    }
    say_default_routes(given);
    say_all_daemons();
    if (d_.items().size() != before) return std::nullopt;
    return t_;
  }

 private:
  void error(const YAML::Node& where, const std::string& field, const std::string& msg,
             const std::string& hint) {
    r_.error(mark_of(where), field, msg, hint);
  }
  std::string lab_;  // the file's `name` (containerlab's lab directory is clab-<name>)

  // containerlab's `mgmt:` block: the lab gets twin's management network, on its IPv4 subnet
  // when it names one (containerlab docs, "Management network": ipv4-subnet, formerly
  // ipv4_subnet); what twin's network has no use for is said once.
  void read_mgmt(const YAML::Node& m) {
    Mgmt out;
    out.mark = mark_of(m);
    out.subnet_mark = out.interface_mark = out.user_mark = out.mark;
    if (!m.IsMap()) {
      error(m, "mgmt", "expected a mapping (network, ipv4-subnet, ...)", "");
      return;
    }
    for (const auto& kv : m) {
      const std::string k = kv.first.Scalar();
      if (k == "ipv4-subnet" || k == "ipv4_subnet") {
        auto p = kv.second.IsScalar() ? IpPrefix::parse(kv.second.Scalar()) : std::nullopt;
        if (!p || p->family != 4)
          error(kv.second, "mgmt." + k, "expected an IPv4 subnet", "e.g. 172.100.100.0/24");
        else {
          out.subnet = p->network();
          out.subnet_mark = mark_of(kv.second);
        }
      } else if (k != "network" && k != "bridge") {
        warn(kv.first, "mgmt." + k, "`" + k + "` is ignored by twin",
             "twin's management network is IPv4, on a bridge in a namespace of the lab's, with "
             "the subnet's first address on the host");
      }
    }
    t_.mgmt = out;
  }

  void warn(const YAML::Node& where, const std::string& field, const std::string& msg,
            const std::string& hint) {
    Mark m = mark_of(where);
    if (!warned_.insert({m.line, m.column}).second) return;  // a default shared by many nodes
    d_.warn({file_, m.line, m.column, field, msg, hint});
  }

  void ignore_others(const YAML::Node& map, const std::vector<std::string>& known,
                     const std::string& base) {
    for (const auto& kv : map) {
      std::string k = kv.first.Scalar();
      if (std::find(known.begin(), known.end(), k) == known.end())
        warn(kv.first, base.empty() ? k : base + "." + k,
             "unknown containerlab field '" + k + "', ignored", "");
    }
  }

  YAML::Node map_or_report(const YAML::Node& n, const std::string& field) {
    if (n && !n.IsMap() && !n.IsNull()) error(n, field, "expected a mapping", "");
    return n && n.IsMap() ? n : YAML::Node(YAML::NodeType::Undefined);
  }

  // `map`'s value at `key`; an undefined node (false) when there is none.
  static YAML::Node entry(const YAML::Node& map, const std::string& key) {
    if (!map || !map.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
    for (const auto& kv : map)
      if (kv.first.Scalar() == key) return kv.second;
    return YAML::Node(YAML::NodeType::Undefined);
  }

  // `key` for a node: its own, its group's, its kind's, the defaults' (containerlab's order).
  Field field(const std::string& node, const YAML::Node& body, const std::string& group,
              const std::string& kind, const std::string& key) {
    if (auto v = entry(body, key)) return {v, "topology.nodes." + node + "." + key};
    if (auto v = entry(entry(groups_, group), key))
      return {v, "topology.groups." + group + "." + key};
    if (auto v = entry(entry(kinds_, kind), key)) return {v, "topology.kinds." + kind + "." + key};
    if (auto v = entry(defaults_, key)) return {v, "topology.defaults." + key};
    return {};
  }

  std::optional<std::string> scalar(const Field& f) {
    if (!f) return std::nullopt;
    return r_.string(at(f.value, f.path));
  }

  // A host path as named, made absolute against the file's folder (not resolved: a refusal
  // says where a symlink leads).
  std::string abs_path(const std::string& p) const {
    fs::path q = fs::path(p).is_absolute() ? fs::path(p) : fs::path(dir_) / p;
    return fs::absolute(q).lexically_normal().string();
  }
  static std::string canonical(const std::string& p) {
    std::error_code ec;
    auto c = fs::weakly_canonical(p, ec);
    return ec ? p : c.string();
  }

  void read_node(const YAML::Node& key, const YAML::Node& body) {
    const std::string name = key.Scalar();
    const std::string f = "topology.nodes." + name;
    if (!std::regex_match(name, kNameRe) || name.size() > 32) {
      error(key, f,
            "node name '" + name + "' is not one twin can use; expected 1-32 of A-Z a-z 0-9 _ - "
            "starting with a letter or digit",
            "rename the node (and its link endpoints)");
      refused_.insert(name);
      return;
    }
    if (body && !body.IsNull() && !body.IsMap()) {
      error(body, f, "expected a mapping of node fields", "");
      refused_.insert(name);
      return;
    }
    std::string group;
    if (auto g = entry(body, "group"); g && g.IsScalar())
      group = g.Scalar();
    else if (auto dg = entry(defaults_, "group"); dg && dg.IsScalar())
      group = dg.Scalar();
    // The kind: the node's, its group's, or the defaults' (`kinds` is keyed by kind).
    Field kf;
    if (auto v = entry(body, "kind")) kf = {v, f + ".kind"};
    else if (auto gv = entry(entry(groups_, group), "kind")) kf = {gv, "topology.groups." + group + ".kind"};
    else if (auto dv = entry(defaults_, "kind")) kf = {dv, "topology.defaults.kind"};
    if (!kf) {
      error(key, f + ".kind", "missing; containerlab needs a kind for every node",
            "add `kind: linux` (FRR images and hosts)");
      refused_.insert(name);
      return;
    }
    auto kind = r_.string(at(kf.value, kf.path));
    if (!kind) {
      refused_.insert(name);
      return;
    }
    if (kBridgeKinds.count(*kind)) {
      bridge_node(name, key, kf, *kind);
      return;
    }
    const bool frr_kind = kFrrKinds.count(*kind) > 0;
    if (*kind != "linux" && !frr_kind) {
      refused_.insert(name);
      if (kOutsideKinds.count(*kind))
        error(kf.value, kf.path,
              "node " + name + " is of kind '" + *kind +
                  "', the host itself or a container outside the lab; twin's links join the "
                  "lab's own nodes",
              "join the nodes with links, or with a `kind: bridge` node for a shared LAN");
      else
        error(kf.value, kf.path,
              "node " + name + " is of kind '" + *kind +
                  "', which needs a vendor container image twin does not run",
              "twin runs FRR routers and Linux hosts in namespaces; for a vendor NOS write an "
              "image profile (images/, backend: libvirt) that boots its VM image");
      return;
    }
    // Fields twin does not read, wherever they are written.
    auto ignore = [&](const YAML::Node& map, const std::string& base) {
      if (!map || !map.IsMap()) return;
      for (const auto& kv : map)
        if (!kReadNodeKeys.count(kv.first.Scalar()))
          warn(kv.first, base + "." + kv.first.Scalar(),
               "`" + kv.first.Scalar() + "` is ignored by twin",
               "twin runs the node in a network namespace: no container settings apply");
    };
    ignore(body, f);
    ignore(entry(groups_, group), "topology.groups." + group);
    ignore(entry(kinds_, *kind), "topology.kinds." + *kind);
    ignore(defaults_, "topology.defaults");

    Node n;
    n.name = name;
    n.mark = mark_of(key);
    Field image = field(name, body, group, *kind, "image");
    std::string image_name = scalar(image).value_or("");
    std::vector<Bind> binds = read_binds(name, body, group, *kind);
    const Bind *conf = nullptr, *daemons = nullptr, *etc = nullptr;
    for (const auto& b : binds) {
      if (b.container == "/etc/frr/frr.conf") conf = &b;
      else if (b.container == "/etc/frr/daemons") daemons = &b;
      else if (b.container == "/etc/frr") etc = &b;
    }
    std::string lower = image_name;
    std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
    bool router = frr_kind || lower.find("frr") != std::string::npos || conf || daemons || etc;
    for (const auto& b : binds)
      if (&b != conf && &b != daemons && &b != etc && b.container != "/etc/frr/vtysh.conf")
        warn(b.at, b.path, "bind onto " + b.container + " is ignored by twin",
             router ? "twin reads /etc/frr/frr.conf and /etc/frr/daemons binds"
                    : "a host in twin is a namespace with this machine's programs");
    Field startup = field(name, body, group, *kind, "startup-config");
    // The daemons containerlab's frr kind is told to run; nullopt when it names none.
    std::optional<std::vector<DaemonSetting>> listed =
        read_extras(field(name, body, group, *kind, "extras"), frr_kind, router);
    if (router) {
      n.kind = NodeKind::kFrr;
      n.image = "frr-8.4";
      n.container_image = image_name;  // what `up` looks for (plan::resolve_images)
      std::string daemons_file;
      Mark daemons_at = n.mark;
      std::string daemons_field = f;
      // A file in a bound /etc/frr: "" when it is not there, else its path once the policy
      // lets it be read (a refusal is reported at the bind).
      auto in_etc = [&](const char* file) -> std::optional<std::string> {
        if (!etc) return std::nullopt;
        std::string p = (fs::path(etc->host) / file).string();
        auto bad = policy_.check(p, std::string("bound ") + file);
        if (bad && bad->kind == InputProblem::Kind::kMissing) return std::nullopt;
        if (bad) {
          error(etc->at, etc->path, bad->message, bad->hint);
          return "";
        }
        return canonical(p);
      };
      std::optional<std::string> etc_conf = in_etc("frr.conf");
      if ((conf || (etc_conf && !etc_conf->empty())) && startup)
        warn(startup.value, startup.path,
             "startup-config is not used: FRR reads the frr.conf bound onto /etc/frr (" +
                 (conf ? conf->host : *etc_conf) + "), which is this node's configuration",
             "drop startup-config, or the frr.conf bind");
      if (conf) {
        n.config = conf->host;
      } else if (etc_conf) {
        n.config = *etc_conf;
      } else if (auto s = scalar(startup)) {
        std::string p = abs_path(*s);
        if (auto file = r_.named_file(at(startup.value, startup.path), p, policy_, "startup-config",
                                      {"startup-config '" + p + "' does not exist",
                                       "paths are relative to the containerlab file's folder"}))
          n.config = *file;
      } else {
        // containerlab starts it so: the frr kind with its minimal configuration, an FRR image
        // with none (the image ships no frr.conf). Nothing of its routing is expected then,
        // which the warning says, as the plan shows.
        n.start_config = frr_kind ? kFrrKindMinimalConfig : "";
        n.own = parse_frr_conf(*n.start_config, file_);
        const std::string nothing =
            "; twin expects no routing of it (no BGP sessions, OSPF adjacencies or routes)";
        d_.warn({file_, n.mark.line, n.mark.column, f,
                 frr_kind ? "FRR node " + name + " (kind " + *kind +
                                ") has no startup-config: it starts with containerlab's minimal "
                                "configuration (frr defaults traditional, log stdout)" +
                                nothing
                          : "FRR node " + name +
                                " has no frr.conf: it starts with an empty configuration, as "
                                "containerlab starts it" +
                                nothing,
                 frr_kind ? "give it startup-config, or configure it with a change set (twin apply)"
                          : "bind one onto /etc/frr/frr.conf or give startup-config, or configure "
                            "it with a change set (twin apply)"});
      }
      if (daemons) {
        daemons_file = daemons->host;
        daemons_at = mark_of(daemons->at);
        daemons_field = daemons->path;
      } else if (auto etc_daemons = in_etc("daemons"); etc_daemons && !etc_daemons->empty()) {
        daemons_file = *etc_daemons;
        daemons_at = mark_of(etc->at);
        daemons_field = etc->path;
      }
      if (!daemons_file.empty()) {
        n.daemon_settings = read_daemons_file(daemons_file, file_, daemons_at, daemons_field, d_);
        if (listed)
          warn(extras_list_.value, extras_list_.path,
               "extras.frr.daemons is not used: the daemons file bound onto /etc/frr (" +
                   daemons_file + ") decides which daemons run",
               "drop one of them");
      } else if (listed) {
        n.daemon_settings = std::move(*listed);
        n.daemons_field = extras_list_.path;
      } else if (frr_kind) {
        all_daemons_.emplace_back(name, n.mark);
      }
      loopbacks_from_config(n);
    } else {
      n.kind = NodeKind::kHost;
      n.image = "host";
      if (image)
        warn(image.value, image.path, "image '" + image_name + "' is ignored by twin",
             "a host in twin is a network namespace that runs this machine's programs");
      if (startup)
        warn(startup.value, startup.path, "startup-config is ignored on a linux host", "");
    }
    std::vector<std::string> looked;
    std::optional<InputProblem> refused;
    std::string profile = find_image_profile(n.image, dir_, policy_, &looked, &refused);
    if (refused)
      error(key, f, refused->message, refused->hint);
    else if (profile.empty())
      error(key, f, "twin's image profile " + n.image + " is missing (looked in " +
                        join_names(looked) + ")", "");
    else if (auto p = load_image_profile(n.image, profile, d_))
      n.profile = *p;
    if (Field ex = field(name, body, group, *kind, "exec")) {
      if (!ex.value.IsSequence())
        error(ex.value, ex.path, "expected a list of commands", "");
      else
        exec_.emplace_back(name, std::make_pair(ex.value, ex.path));
    }
    for (const char* k : {"mgmt-ipv4", "mgmt_ipv4"})
      if (Field ma = field(name, body, group, *kind, k)) {
        n.mgmt_mark = mark_of(ma.value);
        auto p = ma.value.IsScalar() ? IpPrefix::parse(ma.value.Scalar(), true) : std::nullopt;
        if (!p || p->family != 4)
          error(ma.value, ma.path, "expected an IPv4 address", "e.g. 172.100.100.11");
        else
          n.mgmt_address = p;
      }
    t_.nodes.push_back(std::move(n));
  }

  // Where a host's default route differs from containerlab's, which gives a host none of its
  // own: twin adds one via the router on its subnet (so that reachability can be tested), or,
  // with no router address there, runs it without one. A warning per host says which, unless
  // its exec lines give the route (`given`: how many gateways they gave each host).
  void say_default_routes(const std::map<std::string, size_t>& given) {
    for (const auto& n : t_.nodes) {
      auto g = given.find(n.name);
      if (g == given.end()) continue;
      std::string added, via;
      for (size_t k = g->second; k < n.gateways.size(); ++k) {
        const std::string holder = gateway_holder(n.name, n.gateways[k]);
        added += std::string(added.empty() ? "default via " : " and via ") +
                 n.gateways[k].address() + (holder.empty() ? "" : " (" + holder + ")");
        if (via.empty()) via = n.gateways[k].address();
      }
      if (!added.empty())
        d_.warn({file_, n.mark.line, n.mark.column, "topology.nodes." + n.name,
                 "host " + n.name + " has no default route in the containerlab file; twin adds " +
                     added + " so reachability can be tested; containerlab would give it none",
                 "add `ip route add default via " + via +
                     "` to its exec lines to run the same route in both"});
      // A family with an address and no default route: no router address to take one from.
      std::vector<std::string> bare;
      for (int fam : {4, 6}) {
        if (std::any_of(n.gateways.begin(), n.gateways.end(),
                        [&](const IpPrefix& gw) { return gw.family == fam; }))
          continue;
        for (const auto& l : t_.links)
          if (auto a = l.addresses.find(n.name); a != l.addresses.end())
            for (const auto& p : a->second)
              if (p.family == fam &&
                  std::find(bare.begin(), bare.end(), p.network().str()) == bare.end())
                bare.push_back(p.network().str());
      }
      if (!bare.empty())
        d_.warn({file_, n.mark.line, n.mark.column, "topology.nodes." + n.name,
                 "host " + n.name +
                     " has no default route in the containerlab file and no router holds an "
                     "address on its subnet (" +
                     join_names(bare) +
                     ") to take one from: it runs without one, as in containerlab; twin "
                     "expects it to reach its own subnet only",
                 "add `ip route add default via G` to its exec lines, G a router's address "
                 "there"});
    }
  }

  // The node on `host`'s links (or on a LAN segment it is on) that holds `gw` there, by the
  // link's addresses or its own frr.conf's; "" when none does.
  std::string gateway_holder(const std::string& host, const IpPrefix& gw) const {
    auto holds = [&](const Endpoint& e, const Link& l) {
      if (auto a = l.addresses.find(e.node); a != l.addresses.end())
        for (const auto& p : a->second)
          if (p.address() == gw.address()) return true;
      const Node* n = t_.find_node(e.node);
      if (n && n->own)
        if (auto a = n->own->addresses.find(e.interface); a != n->own->addresses.end())
          for (const auto& s : a->second)
            if (auto p = IpPrefix::parse(s); p && p->address() == gw.address()) return true;
      return false;
    };
    // The host's link peers, and the members of a segment it is on.
    std::vector<std::string> near;
    for (const auto& l : t_.links)
      for (const auto& [me, far] : {std::pair{&l.a, &l.b}, std::pair{&l.b, &l.a}})
        if (me->node == host) near.push_back(far->node);
    for (const auto& l : t_.links)
      for (const auto& [me, far] : {std::pair{&l.a, &l.b}, std::pair{&l.b, &l.a}}) {
        if (far->node == host) continue;
        const Node* peer = t_.find_node(me->node);
        bool on_segment = peer && peer->kind == NodeKind::kBridge &&
                          std::find(near.begin(), near.end(), me->node) != near.end();
        bool direct = me->node == host;
        if ((direct || on_segment) && holds(*far, l)) return far->node;
      }
    return "";
  }

  // frr-kind nodes that list no daemons: containerlab starts every daemon of its kind there;
  // twin starts those the configuration needs (apply_own_config), and a change's when applied.
  void say_all_daemons() {
    if (all_daemons_.empty()) return;
    std::vector<std::string> names;
    for (const auto& [name, mark] : all_daemons_) names.push_back(name);
    const Mark at = all_daemons_.front().second;
    const bool one = names.size() == 1;
    d_.warn({file_, at.line, at.column, "topology.nodes." + names.front(),
             std::string(one ? "node " : "nodes ") + join_some(names, 8) + " (kind frr) " +
                 (one ? "names" : "name") +
                 " no extras.frr.daemons: containerlab starts every daemon of its frr kind; twin "
                 "starts zebra and the daemons " +
                 (one ? "its" : "each one's") +
                 " configuration needs (and those a change set needs, when applied)",
             "list the daemons under extras.frr.daemons to run exactly those"});
  }

  // containerlab's `extras` of a node (the whole field: node, group, kind or defaults). twin
  // reads one entry: `frr.daemons` of the frr kind, the daemons to run besides zebra, staticd,
  // mgmtd and watchfrr (containerlab docs, "FRRouting"); every other entry is ignored with a
  // warning. The listed daemons as settings (each at its entry, extras_list_ the list), or
  // nullopt when the node names none: no list, an empty one (containerlab then starts every
  // daemon of the kind), or one with errors (reported).
  std::optional<std::vector<DaemonSetting>> read_extras(const Field& ex, bool frr_kind,
                                                        bool router) {
    extras_list_ = {};
    if (!ex) return std::nullopt;
    // A group's, kind's or the defaults' list serves many nodes: read (and reported) once.
    const std::string key = ex.path + (frr_kind ? "" : " linux");
    if (auto seen = extras_read_.find(key); seen != extras_read_.end()) {
      extras_list_ = seen->second.first;
      return seen->second.second;
    }
    auto out = parse_extras(ex, frr_kind, router);
    extras_read_[key] = {extras_list_, out};
    return out;
  }
  std::optional<std::vector<DaemonSetting>> parse_extras(const Field& ex, bool frr_kind,
                                                         bool router) {
    if (!ex.value.IsMap()) {
      error(ex.value, ex.path, "expected a mapping", "e.g. extras: {frr: {daemons: [ospfd]}}");
      return std::nullopt;
    }
    const char* elsewhere =
        "twin runs the node in a network namespace: none of containerlab's container settings "
        "apply";
    for (const auto& kv : ex.value) {
      const std::string k = kv.first.Scalar(), kp = ex.path + "." + k;
      if (k != "frr") {
        warn(kv.first, kp, "`extras." + k + "` is ignored by twin", elsewhere);
      } else if (!frr_kind) {
        // The defaults' or a group's list is for its frr-kind nodes; a linux node's own, or
        // its kind's, is not read by containerlab either.
        if (ex.path.rfind("topology.defaults.", 0) == 0 ||
            ex.path.rfind("topology.groups.", 0) == 0)
          continue;
        warn(kv.first, kp, "`extras.frr` is ignored: containerlab reads it for kind frr only",
             router ? "this node is kind linux: a daemons file bound onto /etc/frr/daemons says "
                      "which daemons run"
                    : "");
      } else if (!kv.second.IsMap()) {
        error(kv.second, kp, "expected a mapping with daemons", "e.g. frr: {daemons: [ospfd]}");
      } else {
        for (const auto& e : kv.second) {
          const std::string ek = e.first.Scalar();
          if (ek == "daemons")
            extras_list_ = {e.second, kp + ".daemons"};
          else
            warn(e.first, kp + "." + ek, "`extras.frr." + ek + "` is ignored by twin", "");
        }
      }
    }
    const Field& list = extras_list_;
    if (!list) return std::nullopt;  // `daemons:` with no value: containerlab's empty list
    if (!list.value.IsSequence()) {
      error(list.value, list.path, "expected a list of daemon names",
            "e.g. daemons: [ospfd, bfdd]");
      return std::nullopt;
    }
    std::vector<DaemonSetting> out;
    bool bad = false;
    for (size_t i = 0; i < list.value.size(); ++i) {
      const std::string p = list.path + "[" + std::to_string(i) + "]";
      auto d = r_.string(at(list.value[i], p));
      if (!d) {
        bad = true;
        continue;
      }
      if (std::find(kFrrAlwaysOn.begin(), kFrrAlwaysOn.end(), *d) != kFrrAlwaysOn.end())
        continue;  // FRR starts it anyway; containerlab lets the list name it
      if (std::find(kFrrKindDaemons.begin(), kFrrKindDaemons.end(), *d) == kFrrKindDaemons.end()) {
        std::vector<std::string> known = kFrrKindDaemons;
        known.insert(known.end(), kFrrAlwaysOn.begin(), kFrrAlwaysOn.end());
        error(list.value[i], p, "unknown FRR daemon '" + *d + "'",
              did_you_mean(*d, known, "containerlab's frr kind takes: " + join_names(known)));
        bad = true;
        continue;
      }
      const auto& order = frr_daemon_order();
      if (std::find(order.begin(), order.end(), *d) == order.end()) {
        error(list.value[i], p, "twin cannot start " + *d,
              "leave it out; twin starts " + join_names(order));
        bad = true;
        continue;
      }
      if (std::none_of(out.begin(), out.end(), [&](const auto& s) { return s.daemon == *d; }))
        out.push_back({*d, true, file_, mark_of(list.value[i])});
    }
    if (bad) return std::nullopt;
    // A list naming only daemons FRR always starts switches every other one off: zebra's
    // setting keeps it a list (an empty one would mean every daemon).
    if (out.empty() && list.value.size() > 0)
      out.push_back({"zebra", true, file_, mark_of(list.value[0])});
    if (out.empty()) return std::nullopt;
    return out;
  }

  // containerlab's bridge joins its members through a bridge of the host that the user made
  // beforehand; twin makes its own, in the lab's namespace, so the lab touches nothing of the
  // host's and `down` removes it. Said once, as a warning: the host's bridge is not used.
  void bridge_node(const std::string& name, const YAML::Node& key, const Field& kf,
                   const std::string& kind) {
    Node n;
    n.name = name;
    n.mark = mark_of(key);
    n.kind = NodeKind::kBridge;
    n.image = "bridge";
    warn(kf.value, kf.path,
         "node " + name + " (kind " + kind + ") runs as twin's own Linux bridge in namespace " +
             "tw-" + (t_.name.empty() ? std::string("<lab>") : t_.name) + "-" + name + ", not " +
             (kind == "ovs-bridge" ? "an Open vSwitch bridge" : "a bridge of this host") +
             " named " + name,
         "its members share one broadcast domain, as on the host's bridge; the host's own "
         "bridges are left alone");
    std::vector<std::string> looked;
    std::optional<InputProblem> refused;
    std::string profile = find_image_profile(n.image, dir_, policy_, &looked, &refused);
    if (refused)
      error(key, "topology.nodes." + name, refused->message, refused->hint);
    else if (profile.empty())
      error(key, "topology.nodes." + name,
            "twin's image profile bridge is missing (looked in " + join_names(looked) + ")", "");
    else if (auto p = load_image_profile(n.image, profile, d_))
      n.profile = *p;
    t_.nodes.push_back(std::move(n));
  }

  // A node's binds: the list of the node, else its group, else its kind, else the defaults
  // (the whole field, as for every field).
  std::vector<Bind> read_binds(const std::string& name, const YAML::Node& body,
                               const std::string& group, const std::string& kind) {
    std::vector<Bind> out;
    std::set<std::string> taken;
    Field bf = field(name, body, group, kind, "binds");
    std::vector<std::pair<YAML::Node, std::string>> lists;
    if (bf) lists.emplace_back(bf.value, bf.path);
    for (const auto& [list, path] : lists) {
      if (!list) continue;
      if (!list.IsSequence()) {
        error(list, path, "expected a list of host:container binds", "");
        continue;
      }
      for (size_t i = 0; i < list.size(); ++i) {
        std::string p = path + "[" + std::to_string(i) + "]";
        auto s = r_.string(at(list[i], p));
        if (!s) continue;
        // containerlab's magic variables: its lab directory (clab-<lab> beside the file) and
        // the node's folder in it (containerlab docs, "Lab Directory").
        std::string spec = *s;
        for (const auto& [var, value] :
             {std::pair<std::string, std::string>{"__clabNodeDir__", "clab-" + lab_ + "/" + name},
              {"__clabDir__", "clab-" + lab_}})
          for (size_t at = spec.find(var); at != std::string::npos; at = spec.find(var, at))
            spec.replace(at, var.size(), value);
        auto parts = split(spec, ':');
        if (parts.size() < 2 || parts.size() > 3 || parts[0].empty() || parts[1].empty() ||
            parts[1][0] != '/') {
          error(list[i], p, "expected host-path:container-path[:options], got '" + *s + "'",
                "e.g. r1/frr.conf:/etc/frr/frr.conf");
          continue;
        }
        std::string c = parts[1];
        while (c.size() > 1 && c.back() == '/') c.pop_back();
        if (!taken.insert(c).second) continue;
        Bind b{abs_path(parts[0]), c, list[i], p};
        bool wanted = c == "/etc/frr/frr.conf" || c == "/etc/frr/daemons" || c == "/etc/frr";
        if (wanted) {
          // twin reads these: the policy's rules, a folder for /etc/frr, a file otherwise.
          bool folder = c == "/etc/frr";
          auto bad = policy_.check(b.host, folder ? "bound folder" : "bound file");
          using Kind = InputProblem::Kind;
          if (bad && bad->kind == Kind::kMissing) {
            error(list[i], p, "bound file '" + b.host + "' does not exist",
                  "host paths are relative to the containerlab file's folder");
            continue;
          }
          bool is_folder = bad && bad->kind == Kind::kDirectory;
          if (bad && bad->kind != Kind::kDirectory) {
            error(list[i], p, bad->message, bad->hint);
            continue;
          }
          if (folder != is_folder) {
            error(list[i], p,
                  "'" + b.host + "' is " + (folder ? "not a folder" : "a folder") +
                      " but is bound onto " + c,
                  "");
            continue;
          }
          b.host = canonical(b.host);
        }
        out.push_back(std::move(b));
      }
    }
    return out;
  }

  static std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> out;
    std::string cur;
    for (char c : s) {
      if (c == sep) {
        out.push_back(cur);
        cur.clear();
      } else {
        cur += c;
      }
    }
    out.push_back(cur);
    return out;
  }

  // A containerlab router declares its loopbacks in its frr.conf only: twin's validators expect
  // to reach them, so they become the node's loopbacks (and the first IPv4 one its router-id, as
  // in twin's format).
  void loopbacks_from_config(Node& n) {
    if (n.config.empty()) return;
    auto text = read_regular_file(n.config);  // checked against the policy when named
    if (!text) return;  // read_own_configs reports it
    FrrConf c = parse_frr_conf(*text, n.config);
    if (auto lo = c.addresses.find("lo"); lo != c.addresses.end())
      for (const auto& a : lo->second)
        if (auto p = IpPrefix::parse(a); p && p->is_host()) {
          n.loopbacks.push_back(*p);
          places_.loopbacks[n.name].push_back({n.mark, "topology.nodes." + n.name});
        }
    // No router-id from the loopback: the config's `bgp router-id`, or FRR's own choice, is it.
  }

  // The node and interface of one endpoint; false after a diagnostic.
  bool endpoint(const YAML::Node& e, const std::string& f, Endpoint& out) {
    out.mark = mark_of(e);
    if (e.IsMap()) {
      auto node = e["node"], ifn = e["interface"];
      if (!node || !ifn || !node.IsScalar() || !ifn.IsScalar()) {
        error(e, f, "expected {node: NAME, interface: IF}", "");
        return false;
      }
      out.node = node.Scalar();
      out.interface = ifn.Scalar();
      return true;
    }
    auto s = r_.string(at(e, f));
    if (!s) return false;
    auto colon = s->find(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == s->size() ||
        s->find(':', colon + 1) != std::string::npos) {
      error(e, f, "expected node:interface, got '" + *s + "'", "e.g. \"r1:eth1\"");
      return false;
    }
    out.node = s->substr(0, colon);
    out.interface = s->substr(colon + 1);
    if (one_of(out.node, {"host", "mgmt-net", "macvlan"})) {
      error(e, f, "endpoint '" + *s + "' joins the lab to this machine; twin's labs are closed",
            "remove the link");
      return false;
    }
    return true;
  }

  void read_link(const YAML::Node& ln, const std::string& f, size_t index) {
    Link l;
    l.mark = mark_of(ln);
    l.mtu = 9500;  // containerlab's default veth MTU
    l.mtu_explicit = true;
    if (!ln.IsMap()) {
      error(ln, f, "expected a mapping with endpoints", "e.g. - endpoints: [\"r1:eth1\", \"r2:eth1\"]");
      return;
    }
    for (const auto& kv : ln) {
      std::string k = kv.first.Scalar();
      if (!one_of(k, {"endpoints", "mtu", "type"}))
        warn(kv.first, f + "." + k, "`" + k + "` is ignored by twin", "");
    }
    if (auto type = ln["type"]) {
      auto s = r_.string(at(type, f + ".type"));
      if (s && *s != "veth") {
        error(type, f + ".type", "link type '" + *s + "' is not supported; twin's links are veths",
              "use type: veth, or the brief form endpoints: [\"a:eth1\", \"b:eth1\"]");
        return;
      }
    }
    auto eps = ln["endpoints"];
    if (!eps || !eps.IsSequence() || eps.size() != 2) {
      error(eps ? eps : ln, f + ".endpoints", "expected exactly two endpoints",
            "e.g. endpoints: [\"r1:eth1\", \"r2:eth1\"]");
      return;
    }
    bool ok = endpoint(eps[0], f + ".endpoints[0]", l.a);
    ok = endpoint(eps[1], f + ".endpoints[1]", l.b) && ok;
    if (!ok) return;
    // A node refused above was reported there; its links would only repeat it (and the other
    // end's interface is not "on no link": its link leads to the refused node).
    if (refused_.count(l.a.node) || refused_.count(l.b.node)) {
      dropped_ends_.insert({l.a.node, l.a.interface});
      dropped_ends_.insert({l.b.node, l.b.interface});
      return;
    }
    Where mtu_at{l.mark, ""};
    if (auto m = ln["mtu"]) {
      if (auto v = r_.mtu(at(m, f + ".mtu"))) {
        l.mtu = *v;
        mtu_at = {mark_of(m), f + ".mtu"};
      }
    }
    t_.links.push_back(std::move(l));
    link_index_.push_back(index);
    places_.link_mtu.push_back(mtu_at);
    places_.link_addresses.emplace_back();
  }

  void apply_exec(const std::string& name,
                  const std::pair<YAML::Node, std::string>& list) {
    Node* n = nullptr;
    for (auto& x : t_.nodes)
      if (x.name == name) n = &x;
    const YAML::Node& items = list.first;
    for (size_t i = 0; i < items.size(); ++i) {
      std::string f = list.second + "[" + std::to_string(i) + "]";
      auto s = r_.string(at(items[i], f));
      if (!s) continue;
      std::string line = trim(*s);
      auto w = words(line);
      if (w.empty() || w[0] != "ip") {
        error(items[i], f,
              "exec command '" + line + "' is not run: twin does not run arbitrary commands as "
              "root on this machine",
              kExecHint);
        continue;
      }
      std::string why;
      auto a = parse_ip(line, why);
      if (!a) {
        error(items[i], f, "exec command '" + line + "' is not one twin models: " + why,
              kExecHint);
        continue;
      }
      Where where{mark_of(items[i]), f};
      if (a->what == ExecAction::kRoute) {
        if (n->kind != NodeKind::kHost) {
          error(items[i], f, "a route on FRR node " + name + " belongs in its frr.conf",
                "add `ip route " + a->prefix.str() + " " + a->via.address() + "` to its config");
          continue;
        }
        if (a->prefix.length == 0) {
          n->gateways.push_back(a->via);
          places_.gateways[name].push_back(where);
        } else {
          n->routes.push_back({a->prefix, a->via, where.mark});
          places_.route_via[name].push_back(where);
        }
        continue;
      }
      // The link whose endpoint is this interface.
      size_t li = t_.links.size();
      for (size_t k = 0; k < t_.links.size(); ++k)
        for (const Endpoint* e : {&t_.links[k].a, &t_.links[k].b})
          if (e->node == name && e->interface == a->ifname && li == t_.links.size()) li = k;
      if (li == t_.links.size()) {
        if (a->what == ExecAction::kLinkUp && a->ifname == "lo") continue;
        if (dropped_ends_.count({name, a->ifname})) continue;  // its link's other end was refused
        error(items[i], f,
              "interface " + a->ifname + " of " + name + " is on no link",
              "twin creates only the interfaces links name");
        continue;
      }
      Link& l = t_.links[li];
      if (a->what == ExecAction::kAddress) {
        l.addresses[name].push_back(a->prefix);
        places_.link_addresses[li][name].push_back(where);
      } else if (a->what == ExecAction::kMtu) {
        if (a->mtu < kMinMtu || a->mtu > kMaxMtu) {
          error(items[i], f, "MTU " + std::to_string(a->mtu) + " is outside 68-65535", "");
        } else if (auto prev = mtu_set_.find(li); prev != mtu_set_.end() && l.mtu != a->mtu) {
          error(items[i], f,
                "MTU " + std::to_string(a->mtu) + " differs from " + std::to_string(l.mtu) +
                    " set for the other end at line " + std::to_string(prev->second.line),
                "twin gives both ends of a link one MTU");
        } else {
          l.mtu = a->mtu;
          mtu_set_[li] = where.mark;
          places_.link_mtu[li] = where;
        }
      }
    }
  }

  std::string file_, dir_;
  Diagnostics& d_;
  yaml::Reader r_;
  InputPolicy policy_;
  Topology t_;
  Places places_;
  YAML::Node defaults_, kinds_, groups_;
  std::set<std::string> refused_;
  std::set<std::pair<std::string, std::string>> dropped_ends_;  // node, interface
  std::set<std::pair<int, int>> warned_;
  std::vector<std::pair<std::string, std::pair<YAML::Node, std::string>>> exec_;
  Field extras_list_;  // the node's extras.frr.daemons, while read_node reads it
  // Each `extras` read (by path, and whether for the frr kind): its list and its settings.
  std::map<std::string, std::pair<Field, std::optional<std::vector<DaemonSetting>>>> extras_read_;
  // frr-kind nodes that list no daemons (containerlab starts every one of its kind): said once.
  std::vector<std::pair<std::string, Mark>> all_daemons_;
  std::map<size_t, Mark> mtu_set_;
  std::vector<size_t> link_index_;  // Topology::links index -> index in the file
};

}  // namespace

bool looks_like_containerlab(const std::string& text, const std::string& file) {
  auto ends = [&](const std::string& suffix) {
    return file.size() >= suffix.size() &&
           file.compare(file.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (ends(".clab.yml") || ends(".clab.yaml")) return true;
  try {
    YAML::Node root = YAML::Load(text);
    return root.IsMap() && !root["version"] && root["topology"] && root["topology"].IsMap() &&
           root["topology"]["nodes"];
  } catch (const YAML::Exception&) {
    return false;
  }
}

std::optional<Topology> load_containerlab_text(const std::string& text, const std::string& file,
                                               const std::string& dir, Diagnostics& diags,
                                               const std::string& lab_name,
                                               const InputPolicy* policy) {
  ClabLoader l(file, dir, diags,
               policy ? *policy : InputPolicy::for_input(dir.empty() ? "." : dir));
  l.lab_name = lab_name;
  return l.load(text);
}

std::optional<Topology> load_containerlab(const std::string& path, Diagnostics& diags,
                                          const std::string& lab_name, const InputPolicy* policy) {
  InputPolicy own = policy ? *policy : InputPolicy::for_input(path);
  auto text = read_input_file(own, path, "containerlab file", "give the .clab.yml file", diags);
  if (!text) return std::nullopt;
  fs::path abs = fs::absolute(path);
  auto t = load_containerlab_text(*text, path, abs.parent_path().string(), diags, lab_name, &own);
  if (t) t->file = abs.string();
  return t;
}

}  // namespace twin::topology

namespace twin::topology {

namespace {
std::string prefixes(const std::vector<IpPrefix>& v, bool address_only) {
  std::string s;
  for (const auto& p : v) {
    std::string a = address_only ? p.address() : p.str();
    s += (s.empty() ? "" : ", ") + (p.family == 6 ? "\"" + a + "\"" : a);
  }
  return v.size() == 1 ? s : "[" + s + "]";
}
std::string quoted(const std::string& s) {  // YAML double-quoted scalar
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    o += c;
  }
  return o + "\"";
}
}  // namespace

void check_convertible(const Topology& t, Diagnostics& diags) {
  for (const auto& n : t.nodes) {
    const std::string f = "topology.nodes." + n.name;
    if (n.start_config)
      diags.add({t.file, n.mark.line, n.mark.column, f,
                 "FRR node " + n.name +
                     " names no frr.conf: twin's format has no node that starts without one",
                 "bind a frr.conf onto /etc/frr/frr.conf or give startup-config (an empty file "
                 "will do) before converting"});
    if (!n.daemons_field.empty())
      diags.add({t.file, n.daemon_settings.front().mark.line, n.daemon_settings.front().mark.column,
                 n.daemons_field, "twin's format has no daemons list: it names a daemons file",
                 "bind a daemons file onto /etc/frr/daemons instead before converting"});
  }
}

std::string to_twin_yaml(const Topology& t, const std::string& source, const std::string& out_dir) {
  auto rel = [&](const std::string& p) {
    std::error_code ec;
    auto r = fs::relative(p, out_dir, ec);
    return quoted(ec || r.empty() ? p : r.string());
  };
  std::ostringstream o;
  o << "# converted from " << source << " by twin convert\n";
  o << "version: 1\nname: " << t.name << "\n";
  if (t.mgmt) {
    o << "mgmt: {";
    if (t.mgmt->subnet) o << "subnet: " << t.mgmt->subnet->str() << ", ";
    o << "interface: " << t.mgmt->interface << ", user: " << t.mgmt->user << "}\n";
  }
  o << "nodes:\n";
  for (const auto& n : t.nodes) {
    std::vector<std::string> f = {std::string("kind: ") + to_string(n.kind), "image: " + n.image};
    if (n.asn) f.push_back("asn: " + std::to_string(*n.asn));
    if (!n.loopbacks.empty()) f.push_back("loopback: " + prefixes(n.loopbacks, false));
    if (n.router_id) f.push_back("router-id: " + n.router_id->address());
    if (!n.container_image.empty()) f.push_back("container-image: " + quoted(n.container_image));
    if (n.mgmt_address) f.push_back("mgmt-address: " + n.mgmt_address->address());
    if (!n.config.empty()) f.push_back("config: " + rel(n.config));
    if (!n.daemon_settings.empty())
      f.push_back("daemons-file: " + rel(n.daemon_settings.front().file));
    if (!n.gateways.empty()) f.push_back("gateway: " + prefixes(n.gateways, true));
    if (!n.routes.empty()) {
      std::string r = "routes: [";
      for (size_t i = 0; i < n.routes.size(); ++i)
        r += (i ? ", " : "") + std::string("{to: ") +
             (n.routes[i].destination.length == 0 ? "default" : n.routes[i].destination.str()) +
             ", via: " + n.routes[i].via.address() + "}";
      f.push_back(r + "]");
    }
    o << "  " << n.name << ": {";
    for (size_t i = 0; i < f.size(); ++i) o << (i ? ", " : "") << f[i];
    o << "}\n";
  }
  if (!t.links.empty()) o << "links:\n";
  for (const auto& l : t.links) {
    o << "  - endpoints: [" << l.a.node << ":" << l.a.interface << ", " << l.b.node << ":"
      << l.b.interface << "]\n";
    o << "    mtu: " << l.mtu << "\n";
    if (!l.addresses.empty()) {
      o << "    addresses: {";
      bool first = true;
      for (const std::string* node : {&l.a.node, &l.b.node}) {
        auto it = l.addresses.find(*node);
        if (it == l.addresses.end()) continue;
        o << (first ? "" : ", ") << *node << ": " << prefixes(it->second, false);
        first = false;
      }
      o << "}\n";
    }
  }
  return o.str();
}

}  // namespace twin::topology
