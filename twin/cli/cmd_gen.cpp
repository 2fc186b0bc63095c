// twin gen clos: write a leaf–spine topology file.
#include <fstream>
#include <iostream>

#include "twin/cli/commands.hpp"
#include "twin/core/diagnostics.hpp"
#include "twin/topology/generate.hpp"
#include "twin/topology/loader.hpp"

namespace twin::cli {

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
  if (auto r = topology::check(s); !r) return fail(r.error().message, 2);
  std::string text = topology::generate_clos(s);
  // What we write must load: check it with the same loader `up` uses.
  Diagnostics d;
  if (!topology::load_topology_text(text, "<generated>", ".", d))
    return fail("generated topology does not load (a bug in twin gen):\n" + d.format(), 3);
  if (o.output.empty() || o.output == "-") {
    std::cout << text;
    return 0;
  }
  std::ofstream f(o.output);
  f << text;
  if (!f) return fail("cannot write " + o.output, 3);
  std::cerr << "twin: wrote " << o.output << "\n";
  return 0;
}

}  // namespace twin::cli
