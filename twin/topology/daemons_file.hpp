#pragma once
// FRR's `daemons` file (/etc/frr/daemons): which daemons FRR's init starts. A shell fragment
// of `name=value` lines; twin reads the `<daemon>=yes|no` lines and skips the rest
// (`*_options`, `vtysh_enable`, `MAX_FDS`, comments). FRR docs: "Daemons Configuration File".
// Used by twin's `daemons-file:` node field and by containerlab binds onto /etc/frr/daemons.
#include <string>
#include <vector>

#include "twin/core/diagnostics.hpp"
#include "twin/topology/model.hpp"

namespace twin::topology {

// The settings of `text`, the content of `file` (an absolute path: it names the file in
// diagnostics and in each DaemonSetting). Reports at the line and column: a daemon FRR does not
// have ("bgdp=yes"), a value other than yes/no, a daemon twin cannot start switched on, and a
// daemon set twice. Settings with problems are left out.
std::vector<DaemonSetting> parse_daemons_file(const std::string& text, const std::string& file,
                                              Diagnostics& diags);

// Reads and parses the daemons file at absolute path `file`; a file that cannot be read is one
// diagnostic at `where` in `topology_file` (field `field`).
std::vector<DaemonSetting> read_daemons_file(const std::string& file,
                                             const std::string& topology_file, Mark where,
                                             const std::string& field, Diagnostics& diags);

}  // namespace twin::topology
