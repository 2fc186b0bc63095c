#include "twin/engine/live.hpp"

#include <map>

#include "twin/core/util.hpp"

#include "twin/state/journal.hpp"
#include "twin/state/state.hpp"

namespace twin::engine {

Result<LiveSnapshot> snapshot(const std::string& lab, int parallel) {
  auto st = state::load_state(lab);
  if (!st) return st.error();
  LiveSnapshot s;
  auto status_json = status(lab);
  if (!status_json) return status_json.error();
  s.status = std::move(*status_json);
  s.sessions = count_sessions(st->plan, parallel).sessions;
  return ok(std::move(s));
}

Result<graph::Graph> live_graph(const std::string& lab, const LiveSnapshot& snap) {
  auto st = state::load_state(lab);
  if (!st) return st.error();
  auto g = graph::from_plan(st->plan);
  std::vector<graph::SessionView> sessions;
  for (const auto& s : snap.sessions)
    sessions.push_back({s.protocol, s.node, s.interface, s.peer_node, s.state, s.up});
  graph::LiveInput in;
  in.status = &snap.status;
  in.sessions = &sessions;
  // The last validation of this incarnation of the lab: one from before its last `up` judged
  // another set of namespaces.
  nlohmann::json report;
  if (auto j = state::journal_read(lab)) {
    const nlohmann::json* last = nullptr;
    for (const auto& e : j->events) {
      std::string kind = e.value("kind", "");
      if (kind == "up" || kind == "down") last = nullptr;
      if (kind == "validate" && e.contains("report")) last = &e;
    }
    if (last)
      if (auto r = state::journal_report(lab, last->value("report", ""))) {
        report = std::move(*r);
        in.validation = &report;
        in.validation_at = last->value("time", "");
      }
  }
  graph::overlay(g, in);
  return ok(std::move(g));
}

namespace {

std::map<std::string, std::string> link_states(const nlohmann::json& status) {
  std::map<std::string, std::string> out;
  for (const auto& l : status.value("links", nlohmann::json::array()))
    out[l.value("a", "") + " -- " + l.value("b", "")] =
        l.value("a_state", "?") + "/" + l.value("b_state", "?");
  return out;
}

std::map<std::string, std::string> daemon_states(const nlohmann::json& status,
                                                 std::map<std::string, std::string>* nodes) {
  std::map<std::string, std::string> out;
  for (const auto& n : status.value("nodes", nlohmann::json::array())) {
    std::string name = n.value("name", "");
    (*nodes)[name] = n.value("netns_present", false) ? "present" : "namespace missing";
    for (const auto& d : n.value("daemons", nlohmann::json::array()))
      out[name + " " + d.value("name", "")] = d.value("alive", false) ? "alive" : "exited";
  }
  return out;
}

void diff(const std::map<std::string, std::string>& a, const std::map<std::string, std::string>& b,
          const char* kind, std::vector<nlohmann::json>& out) {
  for (const auto& [k, v] : b) {
    auto it = a.find(k);
    std::string from = it == a.end() ? "absent" : it->second;
    if (from != v) out.push_back({{"kind", kind}, {"subject", k}, {"from", from}, {"to", v}});
  }
  for (const auto& [k, v] : a)
    if (!b.count(k)) out.push_back({{"kind", kind}, {"subject", k}, {"from", v}, {"to", "absent"}});
}

std::map<std::string, std::string> session_states(const std::vector<SessionState>& ss) {
  std::map<std::string, std::string> out;
  for (const auto& s : ss)
    out[s.protocol + " " + s.node + (s.interface.empty() ? "" : " " + s.interface) + " -> " +
        s.peer_node] = s.state;
  return out;
}

}  // namespace

std::vector<nlohmann::json> live_changes(const LiveSnapshot& before, const LiveSnapshot& after) {
  std::vector<nlohmann::json> out;
  std::map<std::string, std::string> nb, na;
  auto db = daemon_states(before.status, &nb);
  auto da = daemon_states(after.status, &na);
  diff(nb, na, "node", out);
  diff(link_states(before.status), link_states(after.status), "link", out);
  diff(session_states(before.sessions), session_states(after.sessions), "session", out);
  diff(db, da, "daemon", out);
  return out;
}

EventFollower::EventFollower(std::string lab, bool from_start, int parallel)
    : lab_(std::move(lab)), parallel_(parallel) {
  if (!from_start)
    if (auto j = state::journal_read(lab_)) offset_ = j->next_offset;
}

std::vector<nlohmann::json> EventFollower::poll(bool* running) {
  std::vector<nlohmann::json> out;
  if (auto j = state::journal_read(lab_, offset_)) {
    offset_ = j->next_offset;
    for (auto& e : j->events) out.push_back(std::move(e));
  }
  auto snap = snapshot(lab_, parallel_);
  if (running) *running = static_cast<bool>(snap);
  if (!snap) {
    have_snapshot_ = false;
    return out;
  }
  if (have_snapshot_) {
    std::string now = now_rfc3339();
    for (auto& c : live_changes(last_, *snap)) {
      c["time"] = now;
      c["lab"] = lab_;
      c["live"] = true;
      out.push_back(std::move(c));
    }
  }
  last_ = std::move(*snap);
  have_snapshot_ = true;
  return out;
}

}  // namespace twin::engine
