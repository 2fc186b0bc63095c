#include "twin/topology/host_paths.hpp"

#include <algorithm>
#include <cctype>

namespace twin::topology {

namespace {

struct Token {
  size_t at = 0, len = 0;
  std::string text;
};

std::vector<Token> tokens_of(const std::string& line) {
  std::vector<Token> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    if (i >= line.size()) break;
    size_t start = i;
    while (i < line.size() && !std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    out.push_back({start, i - start, line.substr(start, i - start)});
  }
  return out;
}

// FRR's CLI takes a keyword whole, or abbreviated to a prefix no other keyword accepted at that
// place starts with (lib/command_match.c: an exact match wins over a partial one).
bool matches(const std::string& token, const std::string& keyword,
             const std::vector<std::string>& siblings) {
  if (token.empty() || token.size() > keyword.size()) return false;
  if (token == keyword) return true;
  if (keyword.compare(0, token.size(), token) != 0) return false;
  for (const auto& s : siblings)
    if (s != keyword && s.compare(0, token.size(), token) == 0) return false;
  return true;
}

// Keywords FRR 8.4 accepts first on a config line beside the ones below (its config node's
// `list`, and the daemons' nodes' commands that share a first letter with them).
const std::vector<std::string> kFirst = {"access-list",
                                         "agentx",
                                         "allow-external-route-update",
                                         "allow-reserved-ranges",
                                         "banner",
                                         "bfd",
                                         "bgp",
                                         "clear",
                                         "configure",
                                         "copy",
                                         "debug",
                                         "domainname",
                                         "dump",
                                         "enable",
                                         "end",
                                         "exit",
                                         "find",
                                         "fpm",
                                         "frr",
                                         "hostname",
                                         "interface",
                                         "ip",
                                         "ipv6",
                                         "key",
                                         "l2vpn",
                                         "line",
                                         "list",
                                         "log",
                                         "mac",
                                         "mpls",
                                         "nexthop-group",
                                         "nhrp",
                                         "no",
                                         "output",
                                         "ospf",
                                         "ospf6",
                                         "openfabric",
                                         "password",
                                         "pbr",
                                         "pbr-map",
                                         "pseudowire",
                                         "quit",
                                         "route-map",
                                         "router",
                                         "router-id",
                                         "rpki",
                                         "segment-routing",
                                         "service",
                                         "username",
                                         "vni",
                                         "vrf",
                                         "zebra"};
const std::vector<std::string> kLogSecond = {"facility",        "file",    "filtered-file",
                                             "record-priority", "stdout",  "syslog",
                                             "timestamp",       "commands"};

}  // namespace

std::vector<HostPath> find_host_paths(const std::string& text) {
  std::vector<HostPath> out;
  size_t pos = 0;
  int lineno = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    ++lineno;
    const std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    auto w = tokens_of(line);
    if (w.empty() || w[0].text[0] == '!' || w[0].text[0] == '#') {
      if (end == text.size()) break;
      continue;
    }
    size_t k = 0;
    while (k < w.size() && (w[k].text == "no" || w[k].text == "do")) ++k;
    auto at = [&](size_t i) -> const std::string& {
      static const std::string kNone;
      return k + i < w.size() ? w[k + i].text : kNone;
    };
    auto add = [&](const std::string& command, size_t i, bool writes) {
      if (k + i < w.size()) out.push_back({lineno, command, w[k + i].text, writes, k + i});
    };
    if (matches(at(0), "log", kFirst)) {
      if (matches(at(1), "file", kLogSecond))
        add("log file", 2, true);
      else if (matches(at(1), "filtered-file", kLogSecond))
        add("log filtered-file", 2, true);
    } else if (matches(at(0), "dump", kFirst) && matches(at(1), "bgp", {"bgp"})) {
      add("dump bgp", 3, true);
    } else if (matches(at(0), "banner", kFirst) && matches(at(1), "motd", {"motd"}) &&
               matches(at(2), "file", {"file", "line"})) {
      add("banner motd file", 3, false);
    } else if (matches(at(0), "output", kFirst) && matches(at(1), "file", {"file"})) {
      add("output file", 2, true);
    } else if (matches(at(0), "copy", kFirst) && !at(1).empty() &&
               !matches(at(1), "running-config", {"running-config"})) {
      add("copy", 1, false);  // copy FILENAME running-config: vtysh reads and applies it
    } else if (matches(at(0), "rpki", kFirst) && matches(at(1), "cache", {"cache"})) {
      // rpki cache HOST (1-65535) SSH_UNAME SSH_PRIVKEY [SERVER_PUBKEY] [source ...]
      // [preference ...]: the SSH form has a user after the port.
      const std::string& port = at(3);
      bool numeric = !port.empty() && std::all_of(port.begin(), port.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c));
      });
      auto keyword = [&](const std::string& t) {
        return matches(t, "source", {"source", "preference"}) ||
               matches(t, "preference", {"source", "preference"});
      };
      if (numeric && !at(4).empty() && !keyword(at(4)) && !at(5).empty()) {
        add("rpki cache ssh private key", 5, false);
        if (!at(6).empty() && !keyword(at(6))) add("rpki cache ssh server key", 6, false);
      }
    }
    if (end == text.size()) break;
  }
  return out;
}

std::string redirected_path(const std::string& folder, const std::string& path) {
  std::string flat;
  size_t i = path.find_first_not_of('/');
  for (; i != std::string::npos && i < path.size(); ++i) flat += path[i] == '/' ? '_' : path[i];
  // ".." and "." cannot climb out once flattened, but a name of dots alone would be the
  // folder or its parent.
  if (flat.find_first_not_of('.') == std::string::npos) flat = "file" + flat;
  return folder + "/" + flat;
}

std::string redirect_host_paths(const std::string& text, const std::string& folder,
                                std::vector<HostPath>* done) {
  const auto uses = find_host_paths(text);
  if (uses.empty()) return text;
  std::string out;
  out.reserve(text.size() + uses.size() * folder.size());
  size_t pos = 0;
  int lineno = 0;
  size_t u = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    const bool last = end == std::string::npos;
    if (last) end = text.size();
    ++lineno;
    std::string line = text.substr(pos, end - pos);
    for (; u < uses.size() && uses[u].line == lineno; ++u) {
      const auto& use = uses[u];
      if (use.path.rfind(folder + "/", 0) == 0) continue;  // already inside
      // Words are counted again after each replacement (rpki names two keys on one line).
      auto w = tokens_of(line);
      if (use.word < w.size() && w[use.word].text == use.path)
        line.replace(w[use.word].at, w[use.word].len, redirected_path(folder, use.path));
      if (done) done->push_back(use);
    }
    out += line;
    if (last) break;
    out += '\n';
    pos = end + 1;
  }
  return out;
}

std::string redirect_text(const HostPath& use, const std::string& folder) {
  return "`" + use.command + " " + use.path + "` " + (use.writes ? "writes " : "reads ") +
         redirected_path(folder, use.path) +
         " instead: a lab's FRR reaches files only inside its node's run folder, which `down` "
         "removes";
}

}  // namespace twin::topology
