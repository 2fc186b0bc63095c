#pragma once
// FRR commands that name a file of the machine they run on, and where a lab lets them go
// instead. A lab's configs and a change set's lines come from users (in CI, from a pull
// request); what FRR would write, read or create there must stay inside the node's run folder,
// which `down` removes. So each such path is redirected there, with a note naming both paths,
// and the daemons and vtysh run where nothing else is writable (proc::Command::writable): a
// command this list misses still cannot reach the machine.
//
// The commands, from FRR 8.4's grammar (`list` in vtysh's nodes; lib/log_cli.c, lib/command.c,
// bgpd/bgp_dump.c, bgpd/bgp_rpki.c, vtysh/vtysh.c):
//   log file FILENAME ...            log filtered-file FILENAME ...
//   dump bgp <TYPE> PATH ...         banner motd file FILE
//   output file FILE                 copy FILENAME running-config (`do copy ...` in config)
//   rpki cache HOST PORT USER SSH_PRIVKEY [SERVER_PUBKEY] ...
// each also under `no` and `do`, with keywords abbreviated as FRR's CLI takes them (a unique
// prefix among the keywords FRR accepts at that place). Pure.
#include <string>
#include <vector>

namespace twin::topology {

struct HostPath {
  int line = 0;         // 1-based line of the text
  std::string command;  // the command as FRR spells it in full: "log file", "dump bgp"
  std::string path;     // as written
  bool writes = false;  // FRR writes or creates it (else reads it)
  size_t word = 0;      // its place among the line's words (0-based)
};

// Every host path the text names, in order. Relative paths count too (FRR resolves them
// against its working directory, which is the machine's).
std::vector<HostPath> find_host_paths(const std::string& text);

// Where a redirected path lands: `folder`/<the path with '/' as '_', leading ones dropped>
// ("/var/log/frr/bgpd.log" -> "<folder>/var_log_frr_bgpd.log"). Pure.
std::string redirected_path(const std::string& folder, const std::string& path);

// `text` with every host path find_host_paths names replaced by its redirected_path inside
// `folder` (a path already inside `folder` is kept); what was replaced is appended to `done`
// (may be null) with `path` = the original. Lines keep their numbers.
std::string redirect_host_paths(const std::string& text, const std::string& folder,
                                std::vector<HostPath>* done);

// The note for one redirected use: "`log file /var/log/x.log` writes <folder>/var_log_x.log
// instead: ...". Pure.
std::string redirect_text(const HostPath& use, const std::string& folder);

// The folder of a node's run folder that redirected paths land in.
inline std::string host_files_dir(const std::string& run_dir) { return run_dir + "/files"; }

}  // namespace twin::topology
