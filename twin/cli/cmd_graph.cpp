// twin graph: a topology file or a running lab as a graph (DOT, SVG through Graphviz, Mermaid,
// JSON); twin events: what happens to a lab as it happens.
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include "twin/cli/commands.hpp"
#include "twin/core/diagnostics.hpp"
#include "twin/core/util.hpp"
#include "twin/engine/live.hpp"
#include "twin/graph/graph.hpp"
#include "twin/graph/inventory.hpp"
#include "twin/plan/plan.hpp"
#include "twin/proc/runner.hpp"
#include "twin/report/events.hpp"
#include "twin/state/state.hpp"
#include "twin/topology/loader.hpp"
#include "twin/topology/names.hpp"

namespace twin::cli {
namespace fs = std::filesystem;

namespace {

bool looks_like_file(const std::string& s) {
  return s.find('/') != std::string::npos || s.ends_with(".yaml") || s.ends_with(".yml") ||
         (!topology::valid_lab_name(s) && fs::exists(s)) ||
         (fs::is_regular_file(s) && !fs::is_directory(state::lab_dir(s)));
}

}  // namespace

int run_graph(const GraphOptions& o) {
  static const char* kFormats[] = {"dot", "svg", "mermaid", "json"};
  if (std::find(std::begin(kFormats), std::end(kFormats), o.format) == std::end(kFormats))
    return fail("--format '" + o.format + "': expected dot, svg, mermaid or json", 2);
  graph::Graph g;
  if (!o.target.empty() && looks_like_file(o.target)) {
    auto policy = input_policy(o.inputs, {o.target});
    if (!policy) return fail(policy.error().message, 2);
    Diagnostics diags;
    auto t = topology::load_topology(o.target, diags, "", &*policy);
    std::cerr << diags.format_warnings();
    if (!t) {
      std::cerr << diags.format();
      return 2;
    }
    g = graph::from_plan(plan::make_plan(*t));
  } else {
    auto lab = state::resolve_lab(o.target);
    if (!lab) return fail(lab.error().message, exit_code(lab.error()));
    if (o.no_live) {
      auto st = state::load_state(*lab);
      if (!st) return fail(st.error().message, exit_code(st.error()));
      g = graph::from_plan(st->plan);
    } else {
      auto snap = engine::snapshot(*lab);
      if (!snap) return fail(snap.error().message, exit_code(snap.error()));
      auto lg = engine::live_graph(*lab, *snap);
      if (!lg) return fail(lg.error().message, exit_code(lg.error()));
      g = std::move(*lg);
    }
  }
  std::string out;
  if (o.format == "json") {
    out = graph::to_json(g).dump(2) + "\n";
  } else if (o.format == "mermaid") {
    out = graph::to_mermaid(g);
  } else if (o.format == "dot") {
    out = graph::to_dot(g);
  } else {
    proc::SystemRunner runner;
    proc::Command c{{"dot", "-Tsvg"}, graph::to_dot(g), std::chrono::seconds(60)};
    auto r = runner.run(c);
    if (!r)
      return fail("--format svg needs Graphviz's `dot` (tools/install-deps.sh installs graphviz): " +
                      r.error().message,
                  3);
    if (r->exit_code != 0) return fail("dot -Tsvg failed: " + trim_end(r->err), 3);
    out = r->out;
  }
  if (o.output.empty() || o.output == "-") {
    std::cout << out;
    return 0;
  }
  if (auto w = write_file(o.output, out); !w) return fail(w.error().message, 3);
  std::cerr << "twin: wrote " << o.output << " (" << g.nodes.size() << " nodes, "
            << g.links.size() << " links" << (g.live ? ", live state" : "") << ")\n";
  return 0;
}

int run_events(const EventsOptions& o) {
  auto lab = state::resolve_lab(o.lab);
  if (!lab) return fail(lab.error().message, exit_code(lab.error()));
  engine::EventFollower f(*lab, o.history);
  auto interval = std::chrono::milliseconds(static_cast<long>(o.interval_s * 1000));
  int printed = 0;
  if (!o.json)
    std::cerr << "twin: following lab " << *lab << " (every " << ms_text(o.interval_s * 1000)
              << "; Ctrl-C stops)\n";
  while (!interrupted()) {
    auto t = Clock::now();
    bool running = true;
    for (const auto& e : f.poll(&running)) {
      if (o.json)
        std::cout << e.dump() << std::endl;
      else
        std::cout << report::event_line(e) << std::endl;
      if (o.count > 0 && ++printed >= o.count) return 0;
    }
    if (!running) {
      if (!o.json) std::cerr << "twin: lab " << *lab << " is no longer running\n";
      return 0;
    }
    auto left = interval - std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t);
    for (auto step = std::chrono::milliseconds(50); left.count() > 0 && !interrupted();
         left -= step)
      std::this_thread::sleep_for(std::min(step, left));
  }
  return 130;
}

}  // namespace twin::cli

namespace twin::cli {

// twin inventory: the running lab's management network for Ansible, Nornir, ssh.
int run_inventory(const InventoryOptions& o) {
  auto lab = state::resolve_lab(o.lab);
  if (!lab) return fail(lab.error().message, exit_code(lab.error()));
  auto st = state::load_state(*lab);
  if (!st) return fail(st.error().message, exit_code(st.error()));
  auto text = graph::inventory(st->plan, o.format);
  if (!text) return fail(text.error().message, exit_code(text.error()));
  if (o.output.empty() || o.output == "-") {
    std::cout << *text;
    return 0;
  }
  // It names the lab's private key: readable by its owner only, and never through a link.
  if (std::filesystem::is_symlink(o.output))
    return fail("--output " + o.output + " is a symbolic link; give the file itself", 2);
  if (auto w = write_file(o.output, *text); !w) return fail(w.error().message, 3);
  std::filesystem::permissions(o.output, std::filesystem::perms::owner_read |
                                             std::filesystem::perms::owner_write);
  std::cerr << "twin: wrote " << o.output << " (" << o.format << " inventory of lab " << *lab
            << ")\n";
  return 0;
}

}  // namespace twin::cli
