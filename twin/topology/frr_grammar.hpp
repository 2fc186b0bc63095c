#pragma once
// FRR's keyword abbreviations, resolved as FRR's CLI resolves them, for the frr.conf reader
// (frr_conf.hpp). FRR accepts any prefix of a keyword that leaves one command of the node
// matching the whole line (`int r1-eth0`, `ip addr 10.0.1.1/24`, `router bg 65001`,
// `nei 10.0.0.2 rem 65002`; FRR's user docs, "Basic commands": "abbreviated commands are
// accepted"). Where several commands match, FRR prefers, word by word, an exact keyword over a
// value and a value over an abbreviated keyword (`router ospf` is ospf, not ospf6); a line two
// commands still match is "% Ambiguous command" (`router o`: openfabric, ospf, ospf6).
//
// The grammar held here is FRR 8.4's, as its vtysh lists it (`list` in each node): every
// keyword that may begin a command in the nodes twin reads (config, interface, router bgp and
// its address families, router ospf, router ospf6, bfd and its peers, route-map), and the
// commands twin reads in full; the rest of a command twin does not read is taken as written.
// Pure.
#include <string>
#include <vector>

namespace twin::topology {

// The nodes of FRR's CLI whose commands twin reads.
enum class ConfNode {
  kConfig,     // top level (`configure`)
  kInterface,  // interface IF
  kBgp,        // router bgp N
  kBgpAf,      // address-family ipv4|ipv6 [unicast|...]
  kEvpnAf,     // address-family l2vpn evpn
  kOspf,       // router ospf
  kOspf6,      // router ospf6
  kBfd,        // bfd
  kBfdPeer,    // bfd / peer X
  kRouteMap,   // route-map NAME permit|deny N
};

struct KeywordResolution {
  // The line with every keyword spelled in full (values as written); the words as written when
  // the line did not resolve.
  std::vector<std::string> words;
  bool resolved = false;
  // Why not: "'o' is ambiguous here: openfabric, ospf, ospf6", or "FRR 8.4 has no command
  // '...' here". "" when resolved.
  std::string problem;
  bool ambiguous = false;
};

// Resolves `words` (one line, split on blanks) as a command of `node`. Pure.
KeywordResolution resolve_keywords(ConfNode node, const std::vector<std::string>& words);

}  // namespace twin::topology
