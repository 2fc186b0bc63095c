#pragma once
// The topology loader's checks across nodes and links, run once every node and link is read:
// endpoints, interface names, VM ports, duplicate identities, IPv6 MTUs and host gateways.
// Internal to the loader (loader.cpp); pure (no file access).
#include <map>
#include <set>
#include <string>
#include <vector>

#include "twin/core/diagnostics.hpp"
#include "twin/topology/model.hpp"

namespace twin::topology {

// Where a parsed value was written: its place and its field path ("nodes.r1.loopback[1]").
struct Where {
  Mark mark;
  std::string field;
};

// Places of values the checks report on, recorded while reading, so those diagnostics point at
// the value rather than at the node or link that holds it.
struct Places {
  std::map<std::string, std::vector<Where>> loopbacks;  // node -> parallel to Node::loopbacks
  std::map<std::string, Where> router_id;   // node -> its router-id (or the loopback it is from)
  std::set<std::string> router_id_derived;  // nodes whose router-id comes from a loopback
  std::map<std::string, std::vector<Where>> gateways;  // node -> parallel to given gateways
  std::map<std::string, std::vector<Where>> route_via;  // node -> parallel to Node::routes
  // per link: node -> places parallel to Link::addresses[node]
  std::vector<std::map<std::string, std::vector<Where>>> link_addresses;
  std::vector<Where> link_mtu;  // per link: its own mtu value, or {link, ""} when inherited
  std::set<size_t> bad_mtu;     // links whose own mtu was invalid (already reported)
  // The tenants section had problems (reported): a server on a refused tenant port has no
  // router address and no network, which is not a second problem to report.
  bool tenant_problems = false;
  // A host with an address but no router address on its subnet runs without a default route
  // instead of being refused: containerlab gives a host none unless its exec lines do (its
  // loader says so with a warning).
  bool gateway_optional = false;
};

// Checks `t` (as read from `t.file`) and reports every problem to `diags`. Completes hosts'
// gateways: a host without `gateway:` for a family gets its link peer's address on a shared
// subnet (as a host prefix); with none there, it is an error unless `at.gateway_optional`. Not
// idempotent on its own output: run it once per load.
void check_topology(Topology& t, const Places& at, Diagnostics& diags);

}  // namespace twin::topology
