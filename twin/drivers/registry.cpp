#include "twin/drivers/registry.hpp"

#include <stdexcept>

#include "twin/drivers/libvirt.hpp"
#include "twin/drivers/netns.hpp"

namespace twin::drivers {

namespace {

struct Entry {
  topology::Backend backend;
  // nullopt: the driver runs nodes of every kind (a VM's kind only says what runs inside it).
  std::optional<topology::NodeKind> kind;
  const NodeDriver& (*driver)();
};

// The one list of drivers, in the order their nodes are built.
const Entry kDrivers[] = {
    {topology::Backend::kNetns, topology::NodeKind::kFrr, netns_frr_driver},
    {topology::Backend::kNetns, topology::NodeKind::kHost, netns_host_driver},
    {topology::Backend::kNetns, topology::NodeKind::kBridge, netns_bridge_driver},
    {topology::Backend::kContainer, topology::NodeKind::kFrr, container_frr_driver},
    {topology::Backend::kLibvirt, std::nullopt, libvirt_driver},
};

}  // namespace

const NodeDriver* find_driver(topology::Backend backend, topology::NodeKind kind,
                              std::vector<std::string>* known) {
  for (const auto& e : kDrivers)
    if (e.backend == backend && (!e.kind || *e.kind == kind)) return &e.driver();
  if (known) {
    known->clear();
    for (const auto& e : kDrivers)
      known->push_back(std::string(to_string(e.backend)) + "/" +
                       (e.kind ? to_string(*e.kind) : "any kind"));
  }
  return nullptr;
}

const NodeDriver& driver_for(const plan::Node& node) {
  // Every (backend, kind) pair has a driver (a unit test walks the enums' tables); a pair
  // without one is a programming error, reported rather than dereferenced.
  std::vector<std::string> known;
  if (const auto* d = find_driver(node.backend, node.kind, &known)) return *d;
  std::string list;
  for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
  throw std::logic_error("no node driver for " + std::string(to_string(node.backend)) + "/" +
                         to_string(node.kind) + " (node " + node.name + "); known: " + list);
}

std::vector<DriverNodes> group_by_driver(const std::vector<const plan::Node*>& nodes) {
  std::vector<DriverNodes> groups;
  for (const auto& e : kDrivers) {
    DriverNodes g{&e.driver(), {}};
    for (const auto* n : nodes)
      if (&driver_for(*n) == g.driver) g.nodes.push_back(n);
    if (!g.nodes.empty()) groups.push_back(std::move(g));
  }
  return groups;
}

std::vector<MutableDriverNodes> group_by_driver(std::vector<plan::Node>& nodes) {
  std::vector<MutableDriverNodes> groups;
  for (const auto& e : kDrivers) {
    MutableDriverNodes g{&e.driver(), {}};
    for (auto& n : nodes)
      if (&driver_for(n) == g.driver) g.nodes.push_back(&n);
    if (!g.nodes.empty()) groups.push_back(std::move(g));
  }
  return groups;
}

std::vector<const NodeDriver*> all_drivers() {
  std::vector<const NodeDriver*> v;
  for (const auto& e : kDrivers) v.push_back(&e.driver());
  return v;
}

}  // namespace twin::drivers
