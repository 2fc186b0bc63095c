// twin convert: a containerlab file written in twin's topology format.
#include <filesystem>
#include <fstream>
#include <iostream>

#include "twin/cli/commands.hpp"
#include "twin/core/diagnostics.hpp"
#include "twin/core/util.hpp"
#include "twin/runtime/frr_check.hpp"
#include "twin/topology/containerlab.hpp"
#include "twin/topology/declared_checks.hpp"
#include "twin/topology/loader.hpp"
#include "twin/topology/names.hpp"

namespace fs = std::filesystem;

namespace twin::cli {

int run_convert(const ConvertOptions& o) {
  auto policy = input_policy(o.inputs, {o.file});
  if (!policy) return fail(policy.error().message, 2);
  Diagnostics d;
  auto text = read_input_file(*policy, o.file, "containerlab file", "give the .clab.yml file", d);
  if (text && !topology::looks_like_containerlab(*text, o.file))
    return fail(o.file + " is not a containerlab file (no top-level `topology:` with nodes)", 2);
  std::optional<topology::Topology> t;
  if (!o.name.empty() && !topology::valid_lab_name(o.name))
    return fail("invalid --name '" + o.name + "'", 2);
  if (text) t = topology::load_containerlab(o.file, d, o.name, &*policy);
  if (t) {
    proc::SystemRunner runner;
    if (auto c = runtime::check_own_configs(*t, runner, d); !c) return fail(c.error().message, 3);
    topology::check_convertible(*t, d);
    if (!d.empty()) t.reset();
  }
  // The companion checks file goes into the twin file as its `checks:` section, verbatim.
  const std::string companion = topology::companion_checks_path(o.file);
  std::optional<std::string> checks_text;
  std::error_code ec;
  if (t && fs::symlink_status(companion, ec).type() != fs::file_type::not_found) {
    checks_text = read_input_file(*policy, companion, "checks file", "", d);
    if (!checks_text || !topology::load_checks_file(companion, *t, d, *policy)) t.reset();
  }
  std::cerr << d.format_warnings();
  if (!t) {
    std::cerr << d.format();
    std::cerr << "twin: " << d.items().size() << " problem" << (d.items().size() == 1 ? "" : "s")
              << " in " << printable(o.file) << "; nothing was written\n";
    return 2;
  }
  const bool to_stdout = o.output.empty() || o.output == "-";
  fs::path out_dir = to_stdout ? fs::current_path() : fs::absolute(o.output).parent_path();
  std::string yaml = topology::to_twin_yaml(*t, o.file, out_dir.string());
  if (checks_text) yaml += "\n# From " + companion + ":\n" + *checks_text;
  // What we write must load: check it with the same loader `up` uses.
  // (Its config paths lead back to the containerlab file's folder.)
  Diagnostics check;
  InputPolicy converted = policy->with_roots({out_dir.string()}, "the output's folder");
  if (!topology::load_topology_text(yaml, "<converted>", out_dir.string(), check, "", &converted))
    return fail("the converted topology does not load (a bug in twin convert):\n" + check.format(),
                3);
  if (to_stdout) {
    std::cout << yaml;
    return 0;
  }
  if (fs::exists(o.output) && !o.force)
    return fail(o.output + " exists; give --force to overwrite it", 2);
  std::ofstream f(o.output);
  f << yaml;
  if (!f) return fail("cannot write " + o.output, 3);
  std::cerr << "twin: wrote " << o.output << "\n";
  return 0;
}

}  // namespace twin::cli
