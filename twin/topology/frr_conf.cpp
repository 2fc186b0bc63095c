#include "twin/topology/frr_conf.hpp"

#include <algorithm>
#include <optional>
#include <set>
#include <sstream>

#include "twin/core/ip.hpp"
#include "twin/core/util.hpp"
#include "twin/topology/frr_grammar.hpp"

namespace twin::topology {

namespace {

bool starts(const std::vector<std::string>& w, std::initializer_list<const char*> prefix) {
  if (w.size() < prefix.size()) return false;
  size_t i = 0;
  for (const char* p : prefix)
    if (w[i++] != p) return false;
  return true;
}

std::string joined(const std::vector<std::string>& w) {
  std::string out;
  for (const auto& x : w) out += (out.empty() ? "" : " ") + x;
  return out;
}

bool is_address(const std::string& s) {
  return IpPrefix::parse(s, true).has_value() && s.find('/') == std::string::npos;
}

enum class Block {
  kNone, kInterface, kBgp, kBgpAf, kBgpOther, kOspf, kOspf6, kBfd, kBfdPeer, kRouteMap, kOther
};

}  // namespace

const std::vector<std::string>& frr_daemon_order() {
  // /usr/lib/frr/frrcommon.sh DAEMONS in FRR 8.4, after FRR 10.3's mgmtd (9.0 and later start
  // it first: the container driver adds it to a node of such a release).
  static const std::vector<std::string> order = {"mgmtd",   "zebra",  "bgpd",    "ripd",   "ripngd",
                                                 "ospfd",   "ospf6d", "isisd",   "babeld", "pimd",
                                                 "ldpd",    "nhrpd",  "eigrpd",  "sharpd", "pbrd",
                                                 "staticd", "bfdd",   "fabricd", "vrrpd",  "pathd"};
  return order;
}

std::string normalize_area(const std::string& area) {
  if (area.empty()) return "";
  if (area.find_first_not_of("0123456789") == std::string::npos) {
    if (area.size() > 10) return "";
    uint64_t v = std::stoull(area);
    if (v > 0xffffffffull) return "";
    return std::to_string(v >> 24) + "." + std::to_string((v >> 16) & 255) + "." +
           std::to_string((v >> 8) & 255) + "." + std::to_string(v & 255);
  }
  auto p = IpPrefix::parse(area, true);
  if (!p || p->family != 4 || area.find('/') != std::string::npos) return "";
  return p->address();
}

std::string daemon_for_command(const std::string& command) {
  auto w = words(command);
  if (w.empty()) return "";
  if (starts(w, {"router", "bgp"})) return "bgpd";
  if (starts(w, {"router", "ospf6"})) return "ospf6d";
  if (starts(w, {"router", "ospf"})) return "ospfd";
  if (starts(w, {"router", "isis"})) return "isisd";
  if (starts(w, {"router", "openfabric"})) return "fabricd";
  if (starts(w, {"router", "rip"})) return "ripd";
  if (starts(w, {"router", "ripng"})) return "ripngd";
  if (starts(w, {"router", "eigrp"})) return "eigrpd";
  if (starts(w, {"router", "babel"})) return "babeld";
  if (starts(w, {"router", "pim"}) || starts(w, {"ip", "pim"})) return "pimd";
  if (starts(w, {"mpls", "ldp"})) return "ldpd";
  if (starts(w, {"ip", "route"}) || starts(w, {"ipv6", "route"})) return "staticd";
  if (starts(w, {"bfd"})) return "bfdd";
  if (starts(w, {"pbr-map"})) return "pbrd";
  if (starts(w, {"vrrp"})) return "vrrpd";
  if (starts(w, {"segment-routing"})) return "pathd";
  return "";
}

namespace {
// A non-negative decimal that fits an int; nullopt otherwise (FRR rejects such a line when the
// config is loaded and reports it).
std::optional<int> to_int(const std::string& s) {
  if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  return std::stoi(s);
}
}  // namespace

FrrConf parse_frr_conf(const std::string& text, const std::string& file) {
  FrrConf c;
  c.file = file;
  c.host_paths = find_host_paths(text);
  std::string raw;  // the line being read
  int lineno = 0;
  auto need = [&](const std::string& d, int line) {
    if (d.empty() || d == "zebra") return;
    c.needs.emplace(d, line);
    c.need_lines[d].push_back({line, trim(raw)});
  };
  // Peer groups: name → remote-as; members resolved at the end.
  std::map<std::string, std::string> group_as;
  std::map<std::string, bool> group_bfd, group_evpn, group_rr_client, group_nh_self, group_nh_force;
  std::map<std::string, std::pair<bool, bool>> group_rm;  // group -> (route-map in, out)
  std::map<std::string, std::pair<std::string, std::string>> group_rm_name;  // group -> (in, out)
  std::map<std::string, std::pair<bool, bool>> group_list;  // group -> (a list in, out)
  bool evpn_af = false;         // inside `address-family l2vpn evpn`
  std::string bgp_af = "bgp4";  // the open address family's key in c.redistribute, "" = other
  std::string route_map;        // the open `route-map` block's name
  std::map<std::string, size_t> neighbor_at;  // peer → index in bgp_neighbors
  auto neighbor = [&](const std::string& peer, int line) -> BgpNeighborConf& {
    auto it = neighbor_at.find(peer);
    if (it != neighbor_at.end()) return c.bgp_neighbors[it->second];
    neighbor_at[peer] = c.bgp_neighbors.size();
    BgpNeighborConf n;
    n.peer = peer;
    n.line = line;
    c.bgp_neighbors.push_back(n);
    return c.bgp_neighbors.back();
  };

  Block block = Block::kNone;
  std::string iface;           // current `interface` block
  std::set<std::string> dead_set;  // interfaces with an explicit dead interval
  std::istringstream in(text);
  while (std::getline(in, raw)) {
    ++lineno;
    if (!raw.empty() && raw.back() == '\r') raw.pop_back();
    auto w = words(raw);
    if (w.empty()) continue;
    if (w[0][0] == '!' || w[0][0] == '#') {
      // `!` at column 0 closes a top-level block in FRR's own output; indented `!` separates
      // sub-blocks (address families) and closes nothing.
      if (raw[0] == '!' && block != Block::kBgpAf && block != Block::kBfdPeer) block = Block::kNone;
      continue;
    }
    bool indented = raw[0] == ' ' || raw[0] == '\t';
    {
      // FRR's abbreviations spelled out: the line as a command of its block's node, else of the
      // nodes around it (as FRR tries a config line in the parent nodes).
      std::vector<ConfNode> nodes;
      bool judged = true;  // a node twin holds FRR's grammar of
      switch (block) {
        case Block::kInterface:
          nodes = {ConfNode::kInterface};
          break;
        case Block::kBgp:
          nodes = {ConfNode::kBgp};
          break;
        case Block::kBgpAf:
          if (evpn_af)
            nodes = {ConfNode::kEvpnAf, ConfNode::kBgp};
          else if (!bgp_af.empty())
            nodes = {ConfNode::kBgpAf, ConfNode::kBgp};
          else
            judged = false;
          break;
        case Block::kOspf:
          nodes = {ConfNode::kOspf};
          break;
        case Block::kOspf6:
          nodes = {ConfNode::kOspf6};
          break;
        case Block::kBfd:
          nodes = {ConfNode::kBfd};
          break;
        case Block::kBfdPeer:
          nodes = {ConfNode::kBfdPeer, ConfNode::kBfd};
          break;
        case Block::kRouteMap:
          nodes = {ConfNode::kRouteMap};
          break;
        case Block::kNone:
          break;
        default:
          judged = !indented;
          break;  // inside a block twin does not read
      }
      nodes.push_back(ConfNode::kConfig);
      std::optional<KeywordResolution> first;
      bool done = false;
      for (ConfNode node : nodes) {
        auto r = resolve_keywords(node, w);
        if (r.resolved) {
          w = std::move(r.words);
          done = true;
          break;
        }
        if (!first || (r.ambiguous && !first->ambiguous)) first = std::move(r);
      }
      if (!done && judged) c.not_read.push_back({lineno, trim(raw), first->problem});
    }
    if (w[0] == "exit" || w[0] == "exit-address-family" || w[0] == "exit-vrf") {
      bgp_af = "bgp4";
      evpn_af = false;
      if (block == Block::kBgpAf || block == Block::kBgpOther) block = Block::kBgp;
      else if (block == Block::kBfdPeer) block = Block::kBfd;
      else block = Block::kNone;
      continue;
    }
    if (w[0] == "end") {
      block = Block::kNone;
      continue;
    }

    // Block openers (FRR accepts them indented too, e.g. after a sub-block).
    if (!indented || block == Block::kNone) {
      if (w[0] == "interface" && w.size() >= 2) {
        block = Block::kInterface;
        iface = w[1];
        if (w.size() >= 4 && w[2] == "vrf") c.unsupported.push_back({lineno, raw});
        continue;
      }
      if (starts(w, {"router", "bgp"})) {
        need("bgpd", lineno);
        if (w.size() >= 4 && w[3] == "vrf") {
          c.unsupported.push_back({lineno, raw});
          block = Block::kOther;
          continue;
        }
        block = Block::kBgp;
        c.bgp_line = lineno;
        if (w.size() >= 3) {
          try {
            c.bgp_asn = static_cast<uint32_t>(std::stoul(w[2]));
          } catch (...) {
          }
        }
        continue;
      }
      if (starts(w, {"router", "ospf6"})) {
        need("ospf6d", lineno);
        block = Block::kOspf6;
        continue;
      }
      if (starts(w, {"router", "ospf"})) {
        need("ospfd", lineno);
        if (w.size() >= 4 && w[2] == "vrf") c.unsupported.push_back({lineno, raw});
        block = Block::kOspf;
        continue;
      }
      if (w.size() == 1 && w[0] == "bfd") {
        need("bfdd", lineno);
        block = Block::kBfd;
        continue;
      }
      if (w[0] == "route-map" && w.size() >= 3) {
        // `route-map NAME permit|deny SEQ`: a bare permit entry keeps it transparent.
        auto [it, fresh] = c.route_map_transparent.emplace(w[1], true);
        if (w[2] != "permit") it->second = false;
        route_map = w[1];
        block = Block::kRouteMap;
        continue;
      }
      if (w[0] == "router" || w[0] == "vrf" || w[0] == "route-map" || w[0] == "segment-routing" ||
          w[0] == "pbr-map" || w[0] == "mpls" || w[0] == "line" || w[0] == "key" ||
          w[0] == "nexthop-group" || w[0] == "srv6") {
        need(daemon_for_command(joined(w)), lineno);
        block = Block::kOther;
        continue;
      }
      if (!indented) {
        block = Block::kNone;
        if (w[0] == "frr" && w.size() >= 3 && w[1] == "defaults") c.defaults = w[2];
        else if (w[0] == "hostname" && w.size() >= 2)
          c.hostname = w[1];
        else if ((w[0] == "ip" || w[0] == "ipv6") && w.size() >= 4 && w[1] == "route") {
          need("staticd", lineno);
          StaticRouteConf r;
          r.prefix = w[2];
          r.line = lineno;
          if (is_address(w[3])) r.via = w[3];
          else r.interface = w[3];
          if (r.via.size() && w.size() >= 5 && w[4].find_first_not_of("0123456789") != std::string::npos &&
              w[4] != "tag" && w[4] != "label" && w[4] != "table" && w[4] != "nexthop-vrf" &&
              w[4] != "onlink" && w[4] != "color")
            r.interface = w[4];
          c.static_routes.push_back(r);
        } else {
          need(daemon_for_command(joined(w)), lineno);
        }
        continue;
      }
    }

    switch (block) {
      case Block::kInterface: {
        if ((starts(w, {"ip", "address"}) || starts(w, {"ipv6", "address"})) && w.size() >= 3 &&
            IpPrefix::parse(w[2])) {
          c.addresses[iface].push_back(w[2]);
          c.address_lines[iface].push_back(lineno);
        }
        else if (starts(w, {"ip", "ospf", "area"}) && w.size() >= 4) {
          need("ospfd", lineno);
          c.ospf_interfaces.push_back({iface, normalize_area(w[3]), false, 2, lineno});
        } else if (starts(w, {"ipv6", "ospf6", "area"}) && w.size() >= 4) {
          need("ospf6d", lineno);
          c.ospf_interfaces.push_back({iface, normalize_area(w[3]), false, 3, lineno});
        } else if (starts(w, {"ip", "ospf", "dead-interval"}) && w.size() >= 4) {
          if (w[3] == "minimal") {
            c.ospf_dead_s[iface] = 1;
            dead_set.insert(iface);
          } else if (auto v = to_int(w[3])) {
            c.ospf_dead_s[iface] = *v;
            dead_set.insert(iface);
          }
        } else if (starts(w, {"ip", "ospf", "hello-interval"}) && w.size() >= 4) {
          if (auto v = to_int(w[3]); v && !dead_set.count(iface)) c.ospf_dead_s[iface] = 4 * *v;
        } else if (starts(w, {"ip", "ospf", "authentication-key"}) && w.size() >= 4) {
          auto& a = c.ospf_auth[iface];
          a.simple_key = w[3];
          if (!a.line) a.line = lineno;
        } else if (starts(w, {"ip", "ospf", "authentication"})) {
          auto& a = c.ospf_auth[iface];
          a.type = w.size() < 4 ? "simple" : w[3] == "key-chain" ? "key-chain" : w[3];
          if (!a.line) a.line = lineno;
        } else if (starts(w, {"ip", "ospf", "message-digest-key"}) && w.size() >= 6 &&
                   w[4] == "md5") {
          auto& a = c.ospf_auth[iface];
          if (auto id = to_int(w[3])) {
            a.md5_keys[*id] = w[5];
            a.md5_youngest = *id;
          }
          if (!a.line) a.line = lineno;
        } else if (starts(w, {"ip", "ospf", "cost"}) && w.size() >= 4) {
          if (auto v = to_int(w[3])) c.ospf_costs[iface] = *v;
        } else if (starts(w, {"ip", "ospf", "passive"})) {
          c.ospf_passive.push_back(iface);
        } else if (starts(w, {"no", "ip", "ospf", "passive"})) {
          c.ospf_active.push_back(iface);
        } else if (starts(w, {"ipv6", "ospf6", "passive"})) {
          for (auto& o : c.ospf_interfaces)
            if (o.interface == iface && o.version == 3) o.passive = true;
        } else if (starts(w, {"ip", "ospf", "bfd"}) || starts(w, {"ipv6", "ospf6", "bfd"}) ||
                   starts(w, {"isis", "bfd"})) {
          need("bfdd", lineno);
        } else if (starts(w, {"ip", "router", "isis"}) || starts(w, {"ipv6", "router", "isis"})) {
          need("isisd", lineno);
        } else if (starts(w, {"ip", "pim"})) {
          need("pimd", lineno);
        } else if (starts(w, {"vrrp"})) {
          need("vrrpd", lineno);
        }
        break;
      }
      case Block::kBgp:
      case Block::kBgpAf: {
        if (starts(w, {"bgp", "router-id"}) && w.size() >= 3) {
          c.bgp_router_id = w[2];
          c.bgp_router_id_line = lineno;
        } else if (starts(w, {"bgp", "bestpath", "as-path", "multipath-relax"})) {
          c.bgp_multipath_relax = true;
        } else if (starts(w, {"bgp", "ebgp-requires-policy"})) {
          c.ebgp_requires_policy = true;
        } else if (starts(w, {"no", "bgp", "ebgp-requires-policy"})) {
          c.ebgp_requires_policy = false;
        } else if (w[0] == "network" && w.size() >= 2 && !bgp_af.empty()) {
          if (auto pf = IpPrefix::parse(w[1])) c.bgp_networks.push_back(pf->network().str());
        } else if (w[0] == "redistribute" && w.size() >= 2 && !bgp_af.empty()) {
          c.redistribute[bgp_af].push_back(w[1]);
        } else if (w[0] == "address-family") {
          block = Block::kBgpAf;
          evpn_af = starts(w, {"address-family", "l2vpn", "evpn"});
          bgp_af = starts(w, {"address-family", "ipv4"}) && (w.size() == 2 || w[2] == "unicast")
                       ? "bgp4"
                   : starts(w, {"address-family", "ipv6"}) && (w.size() == 2 || w[2] == "unicast")
                       ? "bgp6"
                       : "";
        } else if (w[0] == "neighbor" && w.size() >= 3) {
          const std::string& peer = w[1];
          bool addr = is_address(peer);
          if (evpn_af && w[2] == "activate") {
            if (group_as.count(peer)) group_evpn[peer] = true;
            else neighbor(peer, lineno).evpn = true;
          } else if (w[2] == "peer-group" && w.size() == 3) {
            group_as.emplace(peer, "");
          } else if (w[2] == "interface") {
            auto& n = neighbor(peer, lineno);
            n.unnumbered = true;
            for (size_t k = 3; k + 1 < w.size(); ++k) {
              if (w[k] == "remote-as") n.remote_as = w[k + 1];
              if (w[k] == "peer-group") n.peer_group = w[k + 1];
            }
          } else if (w[2] == "remote-as" && w.size() >= 4) {
            if (group_as.count(peer)) group_as[peer] = w[3];
            else neighbor(peer, lineno).remote_as = w[3];
            (void)addr;
          } else if (w[2] == "peer-group" && w.size() >= 4) {
            neighbor(peer, lineno).peer_group = w[3];
          } else if (w[2] == "shutdown") {
            if (!group_as.count(peer)) neighbor(peer, lineno).shutdown = true;
          } else if (w[2] == "route-map" && w.size() >= 5 && (w[4] == "in" || w[4] == "out")) {
            auto set = [&](bool& in, bool& out) { (w[4] == "in" ? in : out) = true; };
            if (group_as.count(peer)) {
              set(group_rm[peer].first, group_rm[peer].second);
              (w[4] == "in" ? group_rm_name[peer].first : group_rm_name[peer].second) = w[3];
            } else {
              auto& n = neighbor(peer, lineno);
              set(n.route_map_in, n.route_map_out);
              (w[4] == "in" ? n.route_map_in_name : n.route_map_out_name) = w[3];
            }
          } else if ((w[2] == "prefix-list" || w[2] == "filter-list" ||
                      w[2] == "distribute-list") &&
                     w.size() >= 5 && (w[4] == "in" || w[4] == "out")) {
            auto& flags = group_list[peer];
            if (group_as.count(peer)) {
              (w[4] == "in" ? flags.first : flags.second) = true;
            } else {
              auto& n = neighbor(peer, lineno);
              (w[4] == "in" ? n.list_in : n.list_out) = true;
            }
          } else if (!evpn_af && (w[2] == "route-reflector-client" || w[2] == "next-hop-self")) {
            const bool rr = w[2] == "route-reflector-client";
            const bool force = !rr && w.size() >= 4 && w[3] == "force";
            if (group_as.count(peer)) {
              (rr ? group_rr_client : group_nh_self)[peer] = true;
              if (force) group_nh_force[peer] = true;
            } else {
              auto& n = neighbor(peer, lineno);
              (rr ? n.rr_client : n.next_hop_self) = true;
              if (force) n.next_hop_self_force = true;
            }
          } else if (w[2] == "bfd") {
            need("bfdd", lineno);
            if (group_as.count(peer)) group_bfd[peer] = true;
            else neighbor(peer, lineno).bfd = true;
          }
        } else if (starts(w, {"bgp", "listen", "range"})) {
          // Dynamic neighbors: sessions exist only once a peer connects; nothing to expect.
        }
        break;
      }
      case Block::kOspf: {
        if ((starts(w, {"ospf", "router-id"}) || starts(w, {"router-id"})) && w.size() >= 2)
          c.ospf_router_id = w.back();
        else if (w[0] == "network" && w.size() >= 4 && w[2] == "area")
          c.ospf_networks.push_back({w[1], normalize_area(w[3]), lineno});
        else if (starts(w, {"passive-interface", "default"}))
          c.ospf_passive_default = true;
        else if (w[0] == "passive-interface" && w.size() >= 2)
          c.ospf_passive.push_back(w[1]);
        else if (starts(w, {"no", "passive-interface"}) && w.size() >= 3)
          c.ospf_active.push_back(w[2]);
        else if (w[0] == "redistribute" && w.size() >= 2)
          c.redistribute["ospf"].push_back(w[1]);
        else if (w[0] == "area" && w.size() >= 3 && w[2] == "authentication")
          c.ospf_area_auth[normalize_area(w[1])] =
              w.size() >= 4 && w[3] == "message-digest" ? "message-digest" : "simple";
        break;
      }
      case Block::kOspf6: {
        if ((starts(w, {"ospf6", "router-id"}) || starts(w, {"router-id"})) && w.size() >= 2)
          c.ospf6_router_id = w.back();
        else if (w[0] == "interface" && w.size() >= 4 && w[2] == "area")  // pre-8.x syntax
          c.ospf_interfaces.push_back({w[1], normalize_area(w[3]), false, 3, lineno});
        else if (w[0] == "redistribute" && w.size() >= 2)
          c.redistribute["ospf6"].push_back(w[1]);
        break;
      }
      case Block::kRouteMap: {
        // Anything in an entry but a description can drop or change routes.
        if (w[0] != "description") c.route_map_transparent[route_map] = false;
        break;
      }
      case Block::kBfd:
      case Block::kBfdPeer: {
        if (w[0] == "peer" && w.size() >= 2) {
          BfdPeerConf p;
          p.peer = w[1];
          p.line = lineno;
          for (size_t k = 2; k + 1 < w.size(); ++k)
            if (w[k] == "interface") p.interface = w[k + 1];
          c.bfd_peers.push_back(p);
          block = Block::kBfdPeer;
        }
        break;
      }
      default:
        break;
    }
  }
  // Members inherit their group's remote-as and bfd.
  for (auto& n : c.bgp_neighbors) {
    if (n.peer_group.empty()) continue;
    if (n.remote_as.empty()) n.remote_as = group_as[n.peer_group];
    if (group_bfd[n.peer_group]) n.bfd = true;
    if (group_evpn[n.peer_group]) n.evpn = true;
    if (group_rr_client[n.peer_group]) n.rr_client = true;
    if (group_nh_self[n.peer_group]) n.next_hop_self = true;
    if (group_nh_force[n.peer_group]) n.next_hop_self_force = true;
    if (auto g = group_rm.find(n.peer_group); g != group_rm.end()) {
      n.route_map_in = n.route_map_in || g->second.first;
      n.route_map_out = n.route_map_out || g->second.second;
    }
    if (auto g = group_rm_name.find(n.peer_group); g != group_rm_name.end()) {
      if (n.route_map_in_name.empty()) n.route_map_in_name = g->second.first;
      if (n.route_map_out_name.empty()) n.route_map_out_name = g->second.second;
    }
    if (auto g = group_list.find(n.peer_group); g != group_list.end()) {
      n.list_in = n.list_in || g->second.first;
      n.list_out = n.list_out || g->second.second;
    }
  }
  // Group names used as neighbors (`neighbor PG remote-as` before `neighbor PG peer-group`
  // cannot happen in FRR's output, but hand-written files may order freely).
  c.bgp_neighbors.erase(std::remove_if(c.bgp_neighbors.begin(), c.bgp_neighbors.end(),
                                       [&](const BgpNeighborConf& n) {
                                         return group_as.count(n.peer) > 0;
                                       }),
                        c.bgp_neighbors.end());
  return c;
}

std::string ospf_auth_type(const FrrConf& c, const std::string& ifname, const std::string& area) {
  std::string t;
  if (auto it = c.ospf_auth.find(ifname); it != c.ospf_auth.end()) t = it->second.type;
  if (t.empty())
    if (auto a = c.ospf_area_auth.find(normalize_area(area)); a != c.ospf_area_auth.end())
      t = a->second;
  return t.empty() || t == "null" ? "none" : t;
}

std::string ospf_auth_mismatch(const FrrConf& here, const std::string& here_if,
                               const FrrConf& there, const std::string& there_if,
                               const std::string& area, const std::string& there_name) {
  const std::string a = ospf_auth_type(here, here_if, area);
  const std::string b = ospf_auth_type(there, there_if, area);
  if (a != b) return "authentication " + a + " here, " + b + " on " + there_name;
  static const OspfAuthConf kNone;
  auto conf = [](const FrrConf& c, const std::string& i) -> const OspfAuthConf& {
    auto it = c.ospf_auth.find(i);
    return it == c.ospf_auth.end() ? kNone : it->second;
  };
  const auto& x = conf(here, here_if);
  const auto& y = conf(there, there_if);
  if (a == "simple" && x.simple_key != y.simple_key)
    return "authentication keys differ (simple password) here and on " + there_name;
  if (a == "message-digest") {
    // Each end signs with its youngest key; the other must hold that id with the same key
    // (RFC 2328 D.3).
    auto holds = [](const OspfAuthConf& signer, const OspfAuthConf& checker) {
      if (signer.md5_youngest < 0) return false;
      auto k = checker.md5_keys.find(signer.md5_youngest);
      return k != checker.md5_keys.end() && k->second == signer.md5_keys.at(signer.md5_youngest);
    };
    if (!holds(x, y))
      return x.md5_youngest < 0 ? "message-digest without a key here"
                                : "message-digest key " + std::to_string(x.md5_youngest) +
                                      " differs here and on " + there_name;
    if (!holds(y, x))
      return y.md5_youngest < 0 ? "message-digest without a key on " + there_name
                                : "message-digest key " + std::to_string(y.md5_youngest) +
                                      " differs here and on " + there_name;
  }
  return "";
}

}  // namespace twin::topology
