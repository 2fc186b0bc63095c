#pragma once
// Which names twin accepts where a name becomes a path component or a kernel object: a lab's
// name (/run/twin/<lab>, `tw-<lab>-<node>`) and a Linux interface's. Pure; used by the loaders
// and by every command or request that takes a lab name.
#include <string>

#include "twin/core/ip.hpp"

namespace twin::topology {

// True if `name` is a valid lab name: 1..kMaxLabName (model.hpp) of A-Z a-z 0-9 _ -, starting
// with a letter or digit. Lab names become path components (/run/twin/<lab>): anything else is
// refused.
bool valid_lab_name(const std::string& name);

// True if `name` is a valid Linux interface name (1..15 bytes, no '/', ':' or whitespace,
// not "." or ".."); `why` gets the reason otherwise.
bool valid_interface_name(const std::string& name, std::string* why);

// The management subnet of lab `lab` when its topology gives none (`mgmt: true`): a /24 of
// 172.30.0.0/16 named by an FNV-1a hash of the lab name, so two labs rarely share one (`up`
// refuses a subnet this machine already routes).
IpPrefix default_mgmt_subnet(const std::string& lab);
// The address of twin's DHCP server on a management network with VMs (its bridge in the lab's
// management namespace): the last usable address of `subnet` (IPv4), with the subnet's length.
// Reserved like the host's first address: no node takes it.
IpPrefix mgmt_dhcp_address(const IpPrefix& subnet);

}  // namespace twin::topology
