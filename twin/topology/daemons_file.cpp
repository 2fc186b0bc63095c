#include "twin/topology/daemons_file.hpp"

#include <algorithm>
#include <map>
#include <sstream>

#include "twin/core/input_policy.hpp"
#include "twin/core/util.hpp"
#include "twin/topology/frr_conf.hpp"

namespace twin::topology {

namespace {

// What running without the options means, said for the ones the stock daemons files carry.
std::string hint_for(const std::string& options) {
  std::string h = "the daemon runs with FRR's defaults for these";
  std::istringstream words(options);
  for (std::string w; words >> w;) {
    if (w == "-M" || w.rfind("--module", 0) == 0) h += "; a module (-M) is not loaded";
    if (w == "-s" || w.rfind("--nl-bufsize", 0) == 0)
      h += "; zebra's netlink receive buffer (-s) keeps its default size";
  }
  return h;
}

}  // namespace

namespace {

// Daemons FRR 8.4's daemons file may name that twin does not start (frr_daemon_order() lists
// the ones it does): accepted when off, refused when on.
const std::vector<std::string> kOtherFrrDaemons = {"pim6d"};

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

std::vector<DaemonSetting> parse_daemons_file(const std::string& text, const std::string& file,
                                              Diagnostics& diags) {
  std::vector<DaemonSetting> out;
  std::map<std::string, int> seen;  // daemon -> line
  std::vector<std::string> known = frr_daemon_order();
  known.insert(known.end(), kOtherFrrDaemons.begin(), kOtherFrrDaemons.end());
  std::istringstream in(text);
  std::string line;
  for (int no = 1; std::getline(in, line); ++no) {
    size_t start = line.find_first_not_of(" \t");
    if (start == std::string::npos || line[start] == '#') continue;
    size_t eq = line.find('=', start);
    if (eq == std::string::npos) continue;  // not an assignment: nothing twin reads
    std::string key = line.substr(start, eq - start);
    // `bgpd_options="-A 127.0.0.1 -M rpki"`: how FRR's init would start that daemon. twin starts
    // each daemon with its own command line (runtime::daemon_argv: vty socket in the node's run
    // folder, no TCP vty, which covers the stock `-A 127.0.0.1`); anything else is not applied,
    // and said so.
    if (const std::string suffix = "_options";
        key.size() > suffix.size() && key.ends_with(suffix)) {
      std::string value = trim(line.substr(eq + 1));
      if (value.size() >= 2 && (value.front() == '"' || value.front() == '\''))
        value = trim(value.substr(1, value.find(value.front(), 1) - 1));
      // `-A 127.0.0.1` / `-A ::1` (the stock vty addresses) are what no TCP vty at all covers.
      std::istringstream words(value);
      std::string rest;
      for (std::string w; words >> w;) {
        if (w == "-A") {
          std::string addr;
          words >> addr;
          if (addr == "127.0.0.1" || addr == "::1") continue;
          w += " " + addr;
        }
        rest += (rest.empty() ? "" : " ") + w;
      }
      Diagnostic warning{file,
                         no,
                         static_cast<int>(start) + 1,
                         "",
                         key + " (" + rest + ") is not applied: twin starts " +
                             key.substr(0, key.size() - suffix.size()) +
                             " with its own options (its node's vty socket, no TCP vty)",
                         hint_for(rest)};
      // A file shared by several nodes is read once per node: said once.
      const auto& have = diags.warnings();
      if (!rest.empty() && std::find_if(have.begin(), have.end(), [&](const Diagnostic& x) {
                             return x.file == file && x.line == no && x.message == warning.message;
                           }) == have.end())
        diags.warn(warning);
      continue;
    }
    // Daemon switches are bare lower-case names; `bgpd_options`, `vtysh_enable`, `MAX_FDS`,
    // `frr_profile` and the like are other settings, which twin does not read.
    if (key.empty() ||
        key.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789") != std::string::npos)
      continue;
    std::string value = trim(line.substr(eq + 1));
    if (auto hash = value.find('#'); hash != std::string::npos) value = trim(value.substr(0, hash));
    if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') &&
        value.back() == value.front())
      value = value.substr(1, value.size() - 2);
    Mark at{no, static_cast<int>(start) + 1};
    Mark value_at{no, static_cast<int>(line.find_first_not_of(" \t", eq + 1)) + 1};
    if (!contains(known, key)) {
      diags.add({file, at.line, at.column, "", "unknown FRR daemon '" + key + "'",
                 did_you_mean(key, known, "FRR 8.4's daemons are: " + join_names(known))});
      continue;
    }
    if (value != "yes" && value != "no") {
      diags.add({file, value_at.line, value_at.column, "",
                 "expected yes or no for " + key + ", got '" + value + "'", ""});
      continue;
    }
    bool on = value == "yes";
    if (on && !contains(frr_daemon_order(), key)) {
      diags.add({file, at.line, at.column, "", "twin cannot start " + key + " (FRR 8.4 image)",
                 "set " + key + "=no; twin starts " + join_names(frr_daemon_order())});
      continue;
    }
    if (auto it = seen.find(key); it != seen.end()) {
      diags.add({file, at.line, at.column, "",
                 key + " is already set at line " + std::to_string(it->second),
                 "FRR's init takes the last one; keep one line per daemon"});
      continue;
    }
    seen[key] = no;
    out.push_back({key, on, file, at});
  }
  return out;
}

std::vector<DaemonSetting> read_daemons_file(const std::string& file,
                                             const std::string& topology_file, Mark where,
                                             const std::string& field, Diagnostics& diags) {
  auto text = read_regular_file(file);  // the loader checked it against the policy
  if (!text) {
    diags.add({topology_file, where.line, where.column, field,
               "cannot read daemons file '" + file + "': " + text.error().message, ""});
    return {};
  }
  return parse_daemons_file(*text, file, diags);
}

}  // namespace twin::topology
