#include "twin/runtime/vtysh_merge.hpp"

#include <list>
#include <map>
#include <memory>
#include <sstream>
#include <unordered_map>

namespace twin::runtime {

const std::vector<std::string>& vtysh_daemon_order() {
  static const std::vector<std::string> kOrder = {
      "zebra", "ripd",    "ripngd", "ospfd",  "ospf6d", "ldpd",   "bgpd",
      "isisd", "pimd",    "nhrpd",  "eigrpd", "babeld", "sharpd", "fabricd",
      "pbrd",  "staticd", "bfdd",   "vrrpd",  "pathd",  "pim6d"};
  return kOrder;
}

std::optional<VtyshOwn> parse_vtysh_conf(const std::string& text, VtyshOwn own) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    auto b = line.find_first_not_of(" \t\r");
    if (b == std::string::npos || line[b] == '!' || line[b] == '#') continue;
    auto e = line.find_last_not_of(" \t\r");
    std::string l = line.substr(b, e - b + 1);
    if (l == "service integrated-vtysh-config")
      own.integrated = true;
    else if (l == "no service integrated-vtysh-config")
      own.integrated = false;
    else
      return std::nullopt;
  }
  return own;
}

namespace {

// FRR 8.4 lib/command.h enum node_type: only the order matters (blocks are printed by it).
enum Node : int {
  kDebug = 6, kVrfDebug = 7, kNorthboundDebug = 8, kRmapDebug = 10, kResolverDebug = 11,
  kAaa = 12, kKeychain = 14, kKeychainKey = 15, kIp = 16, kVrf = 17, kInterface = 18,
  kNhGroup = 19, kZebra = 20, kRip = 22, kRipng = 23, kBabel = 24, kEigrp = 25, kBgp = 26,
  kOspf = 42, kOspf6 = 43, kLdp = 44, kLdpL2vpn = 49, kIsis = 51, kAccess = 52, kPrefix = 53,
  kAccessIpv6 = 54, kAccessMac = 55, kPrefixIpv6 = 56, kAsList = 57, kCommunityList = 58,
  kCommunityAlias = 59, kRmap = 60, kPbrmap = 61, kForwarding = 64, kProtocol = 65, kMpls = 66,
  kPw = 67, kSegmentRouting = 68, kVty = 80, kLinkParams = 82, kRpki = 84, kBfd = 87,
  kOpenfabric = 90,
};

// Node types whose blocks vtysh prints without a `!` after each (vtysh_config.c NO_DELIMITER).
bool no_delimiter(int i) {
  switch (i) {
    case kAccess: case kPrefix: case kIp: case kAsList: case kCommunityList:
    case kCommunityAlias: case kAccessIpv6: case kAccessMac: case kPrefixIpv6: case kForwarding:
    case kDebug: case kAaa: case kVrfDebug: case kNorthboundDebug: case kRmapDebug:
    case kResolverDebug: case kMpls: case kKeychainKey:
      return true;
    default:
      return false;
  }
}

bool starts(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

struct Config;
// One node type's blocks in order of receipt, found by header line (vtysh: a list + a hash).
struct Configuration {
  std::vector<std::unique_ptr<Config>> order;
  std::unordered_map<std::string, Config*> by_name;
};
using ConfigVec = std::map<int, Configuration>;  // by node type, printed in that order

struct Config {
  std::string name;
  std::list<std::string> lines;
  Config* parent = nullptr;
  ConfigVec nested;
  std::optional<std::string> exit;
  int index = 0;
};

Config* config_get(ConfigVec& vec, int index, const std::string& line) {
  Configuration& c = vec[index];
  if (auto it = c.by_name.find(line); it != c.by_name.end()) return it->second;
  auto cfg = std::make_unique<Config>();
  cfg->name = line;
  cfg->index = index;
  Config* p = cfg.get();
  c.order.push_back(std::move(cfg));
  c.by_name[line] = p;
  return p;
}

void add_line(std::list<std::string>& l, const std::string& line) { l.push_back(line); }

// Once, inserted before the first line that sorts after it (lib/linklist.c listnode_add_sort on
// a list that earlier plain appends may have left unsorted).
void add_line_uniq(std::list<std::string>& l, const std::string& line, bool sorted) {
  for (const auto& x : l)
    if (x == line) return;
  if (!sorted) {
    l.push_back(line);
    return;
  }
  for (auto it = l.begin(); it != l.end(); ++it)
    if (line.compare(*it) < 0) {
      l.insert(it, line);
      return;
    }
  l.push_back(line);
}

void add_line_uniq_end(std::list<std::string>& l, const std::string& line) {
  for (auto it = l.begin(); it != l.end(); ++it)
    if (*it == line) {
      l.splice(l.end(), l, it);
      return;
    }
  l.push_back(line);
}

class Merger {
 public:
  // vtysh_config_parse_line; `config_` persists across daemons, as vtysh's static does.
  void parse(const std::string& line) {
    if (line.empty() || line[0] == '!' || line[0] == '#') return;
    if (line[0] == ' ')
      parse_inner(line);
    else
      parse_top(line);
  }

  std::string dump() const {
    std::string out = "!\n";  // (vtysh_write_terminal's header ends with it)
    for (const auto& l : top_) out += l + "\n";
    out += "!\n";
    dump_vec(vec_, false, out);
    out += "end\n";
    return out;
  }

 private:
  // A line inside a block: joined to the current block by vtysh's rules for its node type.
  void parse_inner(const std::string& line) {
    if (!config_) {
      add_line(top_, line);
      return;
    }
    Config& k = *config_;
    if (k.index == kKeychain && starts(line, " key")) {
      Config* parent = config_;
      config_ = config_get(k.nested, kKeychainKey, line);
      config_->parent = parent;
    } else if (k.index == kKeychainKey) {
      if (starts(line, " exit")) {
        add_line_uniq_end(k.lines, line);
        config_ = k.parent;
      } else {
        add_line_uniq(k.lines, line, true);
      }
    } else if (starts(line, " link-params")) {
      add_line(k.lines, line);
      k.index = kLinkParams;
    } else if (starts(line, " ip multicast boundary") || starts(line, " ip igmp query-interval")) {
      add_line_uniq_end(k.lines, line);
    } else if (k.index == kLinkParams && starts(line, " exit")) {
      add_line(k.lines, line);
      k.index = kInterface;
    } else if (starts(line, " vrrp") || starts(line, " no vrrp")) {
      add_line(k.lines, line);
    } else if (starts(line, " ip mroute")) {
      add_line_uniq_end(k.lines, line);
    } else if (k.index == kRmap || k.index == kInterface || k.index == kVty ||
               k.index == kNhGroup) {
      add_line_uniq(k.lines, line, true);
    } else {
      add_line(k.lines, line);
    }
  }

  // A top-level line: an exit, a block's header, or a line of its own.
  void parse_top(const std::string& line) {
    if (starts(line, "exit")) {
      if (config_) config_->exit = line;
      return;
    }
    int index = header_node(line);
    if (index >= 0) {
      config_ = config_get(vec_, index, line);
      return;
    }
    static const char* const kOnce[] = {
        "log", "hostname", "domainname", "allow-reserved-ranges", "frr", "agentx", "no log",
        "no ip prefix-list", "no ipv6 prefix-list", "service cputime-stats",
        "no service cputime-stats", "service cputime-warning"};
    bool once = false;
    for (const char* p : kOnce) once = once || starts(line, p);
    if (once)
      add_line_uniq(top_, line, false);  // config_top has no sort function: appended
    else
      add_line(top_, line);
    config_ = nullptr;
  }

  // The node type of a top-level line that opens a block, in vtysh's order of tests (a prefix
  // test: "router ospf6" is an OSPF_NODE block, as in vtysh); -1 for a plain top-level line.
  static int header_node(const std::string& l) {
    static const std::pair<const char*, int> kHeaders[] = {
        {"interface", kInterface},
        {"pseudowire", kPw},
        {"vrf", kVrf},
        {"nexthop-group", kNhGroup},
        {"router-id", kZebra},
        {"router rip", kRip},
        {"router ripng", kRipng},
        {"router eigrp", kEigrp},
        {"router babel", kBabel},
        {"router ospf", kOspf},
        {"router ospf6", kOspf6},
        {"mpls ldp", kLdp},
        {"l2vpn", kLdpL2vpn},
        {"router bgp", kBgp},
        {"router isis", kIsis},
        {"router openfabric", kOpenfabric},
        {"route-map", kRmap},
        {"no route-map", kRmap},
        {"pbr-map", kPbrmap},
        {"access-list", kAccess},
        {"ipv6 access-list", kAccessIpv6},
        {"mac access-list", kAccessMac},
        {"ip prefix-list", kPrefix},
        {"ipv6 prefix-list", kPrefixIpv6},
        {"bgp as-path access-list", kAsList},
        {"bgp community-list", kCommunityList},
        {"bgp extcommunity-list", kCommunityList},
        {"bgp large-community-list", kCommunityList},
        {"bgp community alias", kCommunityAlias},
        {"ip route", kIp},
        {"ipv6 route", kIp},
        {"key", kKeychain},
        {"line", kVty},
        {"ipv6 forwarding", kForwarding},
        {"ip forwarding", kForwarding},
        {"debug vrf", kVrfDebug},
        {"debug northbound", kNorthboundDebug},
        {"debug route-map", kRmapDebug},
        {"debug resolver", kResolverDebug},
        {"debug", kDebug},
        {"password", kAaa},
        {"enable password", kAaa},
        {"ip protocol", kProtocol},
        {"ipv6 protocol", kProtocol},
        {"ip nht", kProtocol},
        {"ipv6 nht", kProtocol},
        {"mpls", kMpls},
        {"segment-routing", kSegmentRouting},
        {"bfd", kBfd},
        {"rpki", kRpki},
    };
    for (const auto& [prefix, node] : kHeaders)
      if (starts(l, prefix)) return node;
    return -1;
  }

  static void dump_vec(const ConfigVec& vec, bool nested, std::string& out) {
    for (const auto& [i, configuration] : vec) {
      for (const auto& c : configuration.order) {
        // vtysh leaves out an interface block whose only line is "exit".
        if (c->index == kInterface && c->lines.size() == 1 && c->lines.front() == "exit")
          continue;
        out += c->name + "\n";
        for (const auto& l : c->lines) out += l + "\n";
        dump_vec(c->nested, true, out);
        if (c->exit) out += *c->exit + "\n";
        if (!no_delimiter(i)) out += "!\n";
      }
      if (!nested && no_delimiter(i)) out += "!\n";
    }
  }

  std::list<std::string> top_;
  ConfigVec vec_;
  Config* config_ = nullptr;
};

}  // namespace

std::string merge_running_configs(const std::vector<std::string>& daemon_outputs,
                                  const VtyshOwn& own) {
  Merger m;
  for (const auto& text : daemon_outputs) {
    // vtysh_client_run hands the parser each '\n'-terminated line, then any text left before
    // the reply's end.
    size_t start = 0;
    while (start < text.size()) {
      size_t nl = text.find('\n', start);
      if (nl == std::string::npos) nl = text.size();
      m.parse(text.substr(start, nl - start));
      start = nl + 1;
    }
  }
  // vtysh_config_write, then user_config_write (no users: parse_vtysh_conf accepts none).
  if (!own.hostname.empty()) m.parse("hostname " + own.hostname);
  if (!own.domainname.empty()) m.parse("domainname " + own.domainname);
  if (own.integrated)
    m.parse(*own.integrated ? "service integrated-vtysh-config"
                            : "no service integrated-vtysh-config");
  return m.dump();
}

}  // namespace twin::runtime
