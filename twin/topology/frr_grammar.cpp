#include "twin/topology/frr_grammar.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <sstream>

namespace twin::topology {

namespace {

// One node's commands as paths of words: a keyword; `$` a value of any spelling (a name, an
// interface); `#` a number or an address (begins with a digit, or holds ':'); `...` as the last
// word: the command goes on in words twin takes as written. `{a b c}` is one of a, b, c.
// `@` an address (holds '.' or ':'); `%` a prefix (holds '/'). Keywords of FRR 8.4, as `list` in
// its vtysh names them; every node also has `no` (the same commands negated).
const char* kCommon = "end\nexit\nquit\nlist ...\nfind ...\noutput ...\n";

const char* kConfigSpec = R"(
{access-list agentx allow-external-route-update allow-reserved-ranges banner bgp clear debug} ...
{domainname dump enable evpn fpm key l2vpn line log mac mpls nexthop-group nhrp password} ...
{pbr pbr-map pseudowire router-id rpki segment-routing service terminal username vni vrrp} ...
{zebra} ...
bfd
frr defaults $
frr version ...
hostname $
interface $
interface $ vrf $
ip route ...
ipv6 route ...
ip {forwarding igmp import-table mroute msdp multicast nht pim prefix-list protocol} ...
ip {router-id ssmpingd table} ...
ipv6 {access-list forwarding mld nht pim prefix-list protocol router-id ssmpingd} ...
route-map $ {permit deny} #
router bgp
router bgp #
router bgp # {vrf view} $
router ospf
router ospf #
router ospf vrf $
router ospf # vrf $
router ospf6
router ospf6 vrf $
router {babel eigrp isis openfabric rip ripng} ...
vrf $
)";

const char* kInterfaceSpec = R"(
{babel bandwidth debug delay description eigrp evpn isis link-detect link-params mpls} ...
{multicast openfabric pbr-policy shutdown tunnel vrrp} ...
ip address %
ip address % label ...
ip ospf area #
ip ospf area # @
ip ospf # ...
ip ospf authentication
ip ospf authentication @
ip ospf authentication {message-digest null} ...
ip ospf authentication-key $ ...
ip ospf cost # ...
ip ospf dead-interval # ...
ip ospf dead-interval minimal hello-multiplier # ...
ip ospf hello-interval # ...
ip ospf message-digest-key # md5 $ ...
ip ospf passive ...
ip ospf {bfd mpls mtu-ignore network priority retransmit-interval transmit-delay} ...
ip {authentication hello-interval hold-time igmp irdp mroute multicast nhrp pim rip} ...
ip {router summary-address} ...
ipv6 address % ...
ipv6 ospf6 area # ...
ipv6 ospf6 passive ...
ipv6 ospf6 {advertise authentication bfd cost dead-interval hello-interval ifmtu} ...
ipv6 ospf6 {instance-id mtu-ignore network priority retransmit-interval transmit-delay} ...
ipv6 {mld mroute multicast nd nhrp pim ripng router} ...
)";

// `neighbor X ...` in router bgp and its unicast address families (FRR installs the address
// family's neighbor commands in router bgp too, hidden, for IPv4 unicast).
const char* kNeighborSpec = R"(
neighbor $ remote-as {internal external #}
neighbor $ interface
neighbor $ interface v6only
neighbor $ interface peer-group $
neighbor $ interface v6only peer-group $
neighbor $ interface remote-as {internal external #}
neighbor $ interface v6only remote-as {internal external #}
neighbor $ peer-group
neighbor $ peer-group $
neighbor $ shutdown ...
neighbor $ bfd ...
neighbor $ {route-map prefix-list filter-list distribute-list} $ {in out}
neighbor $ route-reflector-client
neighbor $ route-server-client
neighbor $ next-hop-self
neighbor $ next-hop-self force
neighbor $ activate
neighbor $ {advertisement-interval capability description disable-connected-check} ...
neighbor $ {disable-link-bw-encoding-ieee dont-capability-negotiate ebgp-multihop} ...
neighbor $ {enforce-first-as enforce-multihop extended-optional-parameters graceful-restart} ...
neighbor $ {graceful-restart-disable graceful-restart-helper local-as local-role} ...
neighbor $ {maximum-prefix-out override-capability passive password port solo} ...
neighbor $ {sender-as-path-loop-detection strict-capability-match tcp-mss timers} ...
neighbor $ {ttl-security update-source addpath-tx-all-paths advertise-map allowas-in} ...
neighbor $ {as-override attribute-unchanged default-originate disable-addpath-rx} ...
neighbor $ {maximum-prefix send-community soft-reconfiguration soo unsuppress-map weight} ...
)";

const char* kRedistributeSpec = R"(
redistribute {babel bgp connected eigrp isis kernel nhrp openfabric ospf ospf6 rip ripng} ...
redistribute {static table vnc vnc-direct} ...
)";

const char* kBgpSpec = R"(
address-family {ipv4 ipv6}
address-family {ipv4 ipv6} {unicast multicast vpn labeled-unicast flowspec}
address-family l2vpn evpn
{aggregate-address bmp coalesce-time distance read-quanta segment-routing table-map} ...
{timers update-delay vnc vrf-policy write-quanta maximum-paths} ...
bgp router-id @
bgp bestpath as-path multipath-relax ...
bgp bestpath as-path {confed ignore} ...
bgp bestpath {bandwidth compare-routerid med peer-type} ...
bgp ebgp-requires-policy
bgp listen {range limit} ...
bgp {allow-martian-nexthop always-compare-med client-to-client cluster-id} ...
bgp {conditional-advertisement confederation dampening default deterministic-med} ...
bgp {disable-ebgp-connected-route-check fast-convergence fast-external-failover} ...
bgp {graceful-restart graceful-restart-disable graceful-shutdown} ...
bgp {hard-administrative-reset log-neighbor-changes long-lived-graceful-restart max-med} ...
bgp {minimum-holdtime network reject-as-sets route-map route-reflector shutdown} ...
bgp {suppress-duplicates suppress-fib-pending} ...
network %
network % {route-map label backdoor} ...
)";

const char* kBgpAfSpec = R"(
exit-address-family
{aggregate-address distance export import label maximum-paths nexthop rd route-map} ...
{route-target route-target6 rt rt6 sid table-map} ...
bgp ...
network %
network % {route-map label backdoor} ...
)";

const char* kEvpnAfSpec = R"(
exit-address-family
{advertise advertise-all-vni advertise-default-gw advertise-pip advertise-svi-ip autort} ...
{default-originate disable-ead-evi-rx disable-ead-evi-tx dup-addr-detection ead-es-frag} ...
{ead-es-route-target enable-resolve-overlay-index flooding network rd route-target} ...
{use-es-l3nhg vni} ...
neighbor $ activate
neighbor $ {allowas-in attribute-unchanged next-hop-self route-map route-reflector-client} ...
neighbor $ {route-server-client soft-reconfiguration soo} ...
)";

const char* kOspfSpec = R"(
{aggregation auto-cost capability compatible default-information default-metric distance} ...
{distribute-list fast-reroute graceful-restart log-adjacency-changes max-metric} ...
{maximum-paths mpls mpls-te neighbor pce proactive-arp refresh router-info} ...
{segment-routing summary-address timers write-multiplier} ...
ospf router-id @
ospf {abr-type opaque-lsa rfc1583compatibility send-extra-data write-multiplier} ...
router-id @
network % area #
passive-interface default
passive-interface $ ...
area # authentication
area # authentication message-digest
area # {default-cost export-list filter-list import-list nssa range shortcut stub} ...
area # virtual-link ...
redistribute {babel bgp connected eigrp isis kernel nhrp openfabric ospf rip static} ...
redistribute {table vnc} ...
)";

const char* kOspf6Spec = R"(
{aggregation area auto-cost default-information distance graceful-restart} ...
{log-adjacency-changes maximum-paths stub-router summary-address timers} ...
{write-multiplier} ...
ospf6 router-id @
ospf6 send-extra-data ...
redistribute $ ...
)";

const char* kBfdSpec = "peer # ...\nprofile ...\n";
const char* kBfdPeerSpec = R"(
{detect-multiplier echo echo-interval echo-mode minimum-ttl passive-mode profile} ...
{receive-interval shutdown transmit-interval} ...
)";
const char* kRouteMapSpec = "{call continue description match on-match set} ...\n";

struct Trie {
  std::map<std::string, std::unique_ptr<Trie>> keywords;
  std::unique_ptr<Trie> any;      // `$`
  std::unique_ptr<Trie> value;    // `#`
  std::unique_ptr<Trie> address;  // `@`
  std::unique_ptr<Trie> prefix;   // `%`
  bool terminal = false;          // a command may end here
  bool open = false;              // anything may follow
  bool reroot = false;            // `no`: the node's commands follow
};

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// Adds `path` (words, `{...}` groups already split into alternatives by the caller) at `t`.
void add_path(Trie& t, const std::vector<std::vector<std::string>>& path, size_t i) {
  if (i == path.size()) {
    t.terminal = true;
    return;
  }
  if (path[i].size() == 1 && path[i][0] == "...") {
    t.terminal = t.open = true;
    return;
  }
  for (const auto& w : path[i]) {
    std::unique_ptr<Trie>* slot = w == "$"   ? &t.any
                                  : w == "#" ? &t.value
                                  : w == "@" ? &t.address
                                  : w == "%" ? &t.prefix
                                             : &t.keywords[w];
    if (!*slot) *slot = std::make_unique<Trie>();
    add_path(**slot, path, i + 1);
  }
}

void add_spec(Trie& t, const std::string& spec) {
  std::istringstream in(spec);
  for (std::string line; std::getline(in, line);) {
    std::vector<std::vector<std::string>> path;
    std::vector<std::string>* group = nullptr;
    for (auto w : split(line)) {
      if (w.front() == '{') {
        path.emplace_back();
        group = &path.back();
        w.erase(0, 1);
      }
      const bool close = !w.empty() && w.back() == '}';
      if (close) w.pop_back();
      if (group) {
        if (!w.empty()) group->push_back(w);
      } else {
        path.push_back({w});
      }
      if (close) group = nullptr;
    }
    if (!path.empty()) add_path(t, path, 0);
  }
}

std::unique_ptr<Trie> build(std::initializer_list<const char*> specs) {
  auto t = std::make_unique<Trie>();
  add_spec(*t, kCommon);
  for (const char* s : specs) add_spec(*t, s);
  t->keywords["no"] = std::make_unique<Trie>();
  t->keywords["no"]->reroot = true;
  return t;
}

const Trie& grammar(ConfNode n) {
  static const std::map<ConfNode, std::unique_ptr<Trie>> all = [] {
    std::map<ConfNode, std::unique_ptr<Trie>> m;
    m[ConfNode::kConfig] = build({kConfigSpec});
    m[ConfNode::kInterface] = build({kInterfaceSpec});
    m[ConfNode::kBgp] = build({kBgpSpec, kNeighborSpec, kRedistributeSpec});
    m[ConfNode::kBgpAf] = build({kBgpAfSpec, kNeighborSpec, kRedistributeSpec});
    m[ConfNode::kEvpnAf] = build({kEvpnAfSpec});
    m[ConfNode::kOspf] = build({kOspfSpec});
    m[ConfNode::kOspf6] = build({kOspf6Spec});
    m[ConfNode::kBfd] = build({kBfdSpec});
    m[ConfNode::kBfdPeer] = build({kBfdPeerSpec});
    m[ConfNode::kRouteMap] = build({kRouteMapSpec});
    return m;
  }();
  return *all.at(n);
}

// How well a word matched its place, FRR's order (lib/command_match.c: an exact match before
// a partial one; among exact ones, a keyword before a value): 0 taken as written after `...`.
enum Score { kRest = 0, kPartial = 1, kAnyValue = 2, kTypedValue = 3, kExact = 4 };

struct Match {
  std::vector<std::string> words;
  std::vector<int> scores;
};

bool looks_like_value(const std::string& w) {
  return !w.empty() && ((w[0] >= '0' && w[0] <= '9') || w.find(':') != std::string::npos);
}

void match(const Trie& root, const Trie& t, const std::vector<std::string>& in, size_t i,
           Match& cur, std::vector<Match>& out) {
  if (t.reroot) return match(root, root, in, i, cur, out);
  if (i == in.size()) {
    if (t.terminal) out.push_back(cur);
    return;
  }
  const std::string& w = in[i];
  const size_t before = out.size();
  auto step = [&](const Trie& next, const std::string& word, int score) {
    cur.words.push_back(word);
    cur.scores.push_back(score);
    match(root, next, in, i + 1, cur, out);
    cur.words.pop_back();
    cur.scores.pop_back();
  };
  if (auto k = t.keywords.find(w); k != t.keywords.end()) {
    step(*k->second, w, kExact);
  } else {
    for (auto k = t.keywords.lower_bound(w); k != t.keywords.end() && k->first.rfind(w, 0) == 0;
         ++k)
      step(*k->second, k->first, kPartial);
  }
  if (t.value && looks_like_value(w)) step(*t.value, w, kTypedValue);
  if (t.address && w.find_first_of(".:") != std::string::npos) step(*t.address, w, kTypedValue);
  if (t.prefix && w.find('/') != std::string::npos) step(*t.prefix, w, kTypedValue);
  if (t.any) step(*t.any, w, kAnyValue);
  if (t.open && out.size() == before) {
    Match m = cur;
    for (size_t j = i; j < in.size(); ++j) {
      m.words.push_back(in[j]);
      m.scores.push_back(kRest);
    }
    out.push_back(std::move(m));
  }
}

// FRR's choice between two matches of a line: at the first word they match differently, the
// better match wins; 0 when they never differ.
int compare(const Match& a, const Match& b) {
  for (size_t i = 0; i < a.scores.size() && i < b.scores.size(); ++i)
    if (a.scores[i] != b.scores[i]) return a.scores[i] > b.scores[i] ? 1 : -1;
  return 0;
}

}  // namespace

KeywordResolution resolve_keywords(ConfNode node, const std::vector<std::string>& words) {
  KeywordResolution r;
  r.words = words;
  if (words.empty()) return r;
  const Trie& root = grammar(node);
  std::vector<Match> found;
  Match cur;
  match(root, root, words, 0, cur, found);
  // The same spelling reached twice (two paths of one command) is one match.
  std::vector<Match> distinct;
  for (auto& m : found) {
    bool dup = false;
    for (const auto& d : distinct) dup |= d.words == m.words;
    if (!dup) distinct.push_back(std::move(m));
  }
  if (distinct.empty()) {
    r.problem = "FRR 8.4 has no command '" + words[0] + (words.size() > 1 ? " ..." : "") + "' here";
    return r;
  }
  size_t best = 0;
  bool tie = false;
  for (size_t i = 1; i < distinct.size(); ++i) {
    const int c = compare(distinct[i], distinct[best]);
    if (c > 0) {
      best = i;
      tie = false;
    } else if (c == 0) {
      tie = true;
    }
  }
  if (tie) {
    // Name the word the matches read differently, and its readings.
    size_t at = 0;
    while (at < words.size()) {
      bool differ = false;
      for (const auto& m : distinct) differ |= m.words[at] != distinct[0].words[at];
      if (differ) break;
      ++at;
    }
    std::vector<std::string> seen;
    std::string readings;
    for (const auto& m : distinct)
      if (compare(m, distinct[best]) == 0 && at < m.words.size() &&
          std::find(seen.begin(), seen.end(), m.words[at]) == seen.end()) {
        seen.push_back(m.words[at]);
        readings += (readings.empty() ? "" : ", ") + m.words[at];
      }
    r.ambiguous = true;
    r.problem = "'" + (at < words.size() ? words[at] : words[0]) + "' is ambiguous here (" +
                readings + "): FRR refuses the line";
    return r;
  }
  r.words = std::move(distinct[best].words);
  r.resolved = true;
  return r;
}

}  // namespace twin::topology
