#pragma once
// The one list of node drivers, keyed by (backend, kind) of the node's image profile. Adding a
// way to run nodes: a driver class (driver.hpp) and one line in registry.cpp.
#include <functional>
#include <string>
#include <vector>

#include "twin/drivers/driver.hpp"
#include "twin/plan/plan.hpp"

namespace twin::drivers {

// The driver that runs `node`. Every (backend, kind) the loader accepts has one.
const NodeDriver& driver_for(const plan::Node& node);

// How code above the drivers finds a node's driver: driver_for by default; unit tests pass a
// lookup that returns fakes.
using DriverLookup = std::function<const NodeDriver&(const plan::Node&)>;

// The driver for a (backend, kind) pair, or nullptr; `known` (may be null) then receives the
// pairs that have one, spelled "backend/kind" (for an error that lists them).
const NodeDriver* find_driver(topology::Backend backend, topology::NodeKind kind,
                              std::vector<std::string>* known = nullptr);

// Nodes of the plan grouped by driver, each group in plan order, groups in registry order.
struct DriverNodes {
  const NodeDriver* driver;
  std::vector<const plan::Node*> nodes;
};
std::vector<DriverNodes> group_by_driver(const std::vector<const plan::Node*>& nodes);
// The same over a plan's nodes, for the steps that may complete them (NodeDriver::preflight).
struct MutableDriverNodes {
  const NodeDriver* driver;
  std::vector<plan::Node*> nodes;
};
std::vector<MutableDriverNodes> group_by_driver(std::vector<plan::Node>& nodes);

// Every registered driver, in registry order (teardown asks each to remove what it recorded).
std::vector<const NodeDriver*> all_drivers();

}  // namespace twin::drivers
