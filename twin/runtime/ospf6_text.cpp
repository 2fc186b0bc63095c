#include "twin/runtime/ospf6_text.hpp"

#include <regex>
#include <sstream>
#include <vector>

namespace twin::runtime {

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    out.push_back(line);
  }
  return out;
}

// Unsigned, as nlohmann reads the numbers of the JSON later releases print.
unsigned long number(const std::ssub_match& s) { return std::stoul(s.str()); }

}  // namespace

nlohmann::json ospf6_neighbors_from_text(const std::string& text) {
  // 10.0.255.2        1    00:00:03     Full/PointToPoint    00:00:06 eth1[PointToPoint]
  static const std::regex kRow(
      R"(^\s*(\d+\.\d+\.\d+\.\d+)\s+(\d+)\s+(\S+)\s+([^/\s]+)/(\S+)\s+(\S+)\s+([^\[\s]+)\[([^\]]*)\]\s*$)");
  nlohmann::json list = nlohmann::json::array();
  for (const auto& line : lines_of(text)) {
    std::smatch m;
    if (!std::regex_match(line, m, kRow)) continue;
    list.push_back({{"neighborId", m[1].str()},
                    {"priority", number(m[2])},
                    {"deadTime", m[3].str()},
                    {"state", m[4].str()},
                    {"ifState", m[5].str()},
                    {"duration", m[6].str()},
                    {"interfaceName", m[7].str()},
                    {"interfaceState", m[8].str()}});
  }
  return {{"neighbors", list}};
}

nlohmann::json ospf6_interfaces_from_text(const std::string& text) {
  static const std::regex kHeader(R"(^(\S+) is (\S+), type (\S+)\s*$)");
  static const std::regex kId(R"(^\s+Interface ID: (\d+)\s*$)");
  static const std::regex kOperating(R"(^\s+Operating as type (\S+)\s*$)");
  static const std::regex kAddress(R"(^\s+(inet6?)\s*: (\S+)\s*$)");
  static const std::regex kMtu(
      R"(^\s+Instance ID (\d+), Interface MTU (\d+) \(autodetect: (\d+)\)\s*$)");
  static const std::regex kMismatch(R"(^\s+MTU mismatch detection: (\S+)\s*$)");
  static const std::regex kArea(R"(^\s+Area ID (\S+), Cost (\d+)\s*$)");
  static const std::regex kState(
      R"(^\s+State (\S+), Transmit Delay (\d+) sec, Priority (\d+)\s*$)");
  static const std::regex kTimers(R"(^\s+Hello (\d+), Dead (\d+), Retransmit (\d+)\s*$)");
  static const std::regex kDr(R"(^\s+DR: (\S+) BDR: (\S+)\s*$)");
  static const std::regex kLsas(R"(^\s+Number of I/F scoped LSAs is (\d+)\s*$)");
  nlohmann::json out = nlohmann::json::object();
  nlohmann::json* i = nullptr;
  for (const auto& line : lines_of(text)) {
    std::smatch m;
    if (std::regex_match(line, m, kHeader)) {
      i = &out[m[1].str()];
      *i = {{"status", m[2].str()}, {"type", m[3].str()}, {"attachedToArea", false}};
      continue;
    }
    if (!i) continue;
    if (std::regex_match(line, m, kId)) {
      (*i)["interfaceId"] = number(m[1]);
    } else if (std::regex_match(line, m, kOperating)) {
      (*i)["operatingAsType"] = m[1].str();
    } else if (std::regex_match(line, m, kAddress)) {
      (*i)["internetAddress"].push_back({{"type", m[1].str()}, {"address", m[2].str()}});
    } else if (std::regex_match(line, m, kMtu)) {
      (*i)["instanceId"] = number(m[1]);
      (*i)["interfaceMtu"] = number(m[2]);
      (*i)["autoDetect"] = number(m[3]);
    } else if (std::regex_match(line, m, kMismatch)) {
      (*i)["mtuMismatchDetection"] = m[1].str();
    } else if (std::regex_match(line, m, kArea)) {
      (*i)["attachedToArea"] = true;
      (*i)["areaId"] = m[1].str();
      (*i)["cost"] = number(m[2]);
    } else if (std::regex_match(line, m, kState)) {
      (*i)["ospf6InterfaceState"] = m[1].str();
      (*i)["transmitDelaySec"] = number(m[2]);
      (*i)["priority"] = number(m[3]);
    } else if (std::regex_match(line, m, kTimers)) {
      (*i)["timerIntervalsConfigHello"] = number(m[1]);
      (*i)["timerIntervalsConfigDead"] = number(m[2]);
      (*i)["timerIntervalsConfigRetransmit"] = number(m[3]);
    } else if (std::regex_match(line, m, kDr)) {
      (*i)["dr"] = m[1].str();
      (*i)["bdr"] = m[2].str();
    } else if (std::regex_match(line, m, kLsas)) {
      (*i)["numberOfInterfaceScopedLsa"] = number(m[1]);
    }
  }
  return out;
}

std::string text_instead_of_json(int major, const std::string& daemon, const std::string& command,
                                 TextReader* reader) {
  // JSON for these came with FRR 8.0 (7.5.1, the last 7.x, has none; 8.4.4 and 10.3 print it).
  if (major <= 0 || major >= 8 || daemon != "ospf6d") return "";
  if (command == "show ipv6 ospf6 neighbor json") {
    *reader = ospf6_neighbors_from_text;
    return "show ipv6 ospf6 neighbor";
  }
  if (command == "show ipv6 ospf6 interface json") {
    *reader = ospf6_interfaces_from_text;
    return "show ipv6 ospf6 interface";
  }
  return "";
}

}  // namespace twin::runtime
