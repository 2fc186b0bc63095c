// twin gen clos, twin gen rail: write a topology file.
#include <fstream>
#include <iostream>

#include "twin/cli/commands.hpp"
#include "twin/core/diagnostics.hpp"
#include "twin/topology/generate.hpp"
#include "twin/topology/loader.hpp"

namespace twin::cli {

namespace {

// What we write must load: checked with the same loader `up` uses, then written.
int write_generated(const std::string& text, const std::string& output) {
  Diagnostics d;
  if (!topology::load_topology_text(text, "<generated>", ".", d))
    return fail("generated topology does not load (a bug in twin gen):\n" + d.format(), 3);
  if (output.empty() || output == "-") {
    std::cout << text;
    return 0;
  }
  std::ofstream f(output);
  f << text;
  if (!f) return fail("cannot write " + output, 3);
  std::cerr << "twin: wrote " << output << "\n";
  return 0;
}

}  // namespace

int run_gen_rail(const GenRailOptions& o) {
  topology::RailSpec s;
  s.name = o.name;
  s.servers = o.servers;
  s.rails = o.rails;
  s.spines = o.spines;
  s.servers_per_leaf = o.servers_per_leaf;
  s.mtu = o.mtu;
  s.fabric_rate = o.fabric_rate;
  s.server_rate = o.server_rate;
  if (auto r = topology::check(s); !r) return fail(r.error().message, 2);
  return write_generated(topology::generate_rail(s), o.output);
}

int run_gen_clos(const GenClosOptions& o) {
  topology::ClosSpec s;
  s.name = o.name;
  s.spines = o.spines;
  s.leaves = o.leaves;
  s.servers_per_leaf = o.servers_per_leaf;
  s.mtu = o.mtu;
  s.super_spines = o.super_spines;
  s.pods = o.pods;
  s.tenants = o.tenants;
  s.fabric_rate = o.fabric_rate;
  s.server_rate = o.server_rate;
  if (auto r = topology::check(s); !r) return fail(r.error().message, 2);
  return write_generated(topology::generate_clos(s), o.output);
}

}  // namespace twin::cli
