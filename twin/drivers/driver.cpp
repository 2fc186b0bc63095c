#include "twin/drivers/driver.hpp"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "twin/runtime/frr.hpp"

namespace twin::drivers {

Result<void> Record::add(std::vector<state::Resource> rs) {
  std::lock_guard lk(mu_);
  for (auto& r : rs) st_.resources.push_back(std::move(r));
  // Saving rewrites the whole file (the plan included: ~0.5 MB at 56 nodes), so resources
  // created together are recorded together.
  return save_(st_);
}

void Record::note(state::Resource r) {
  std::lock_guard lk(mu_);
  st_.resources.push_back(std::move(r));
}

Result<void> Record::forget(const std::string& kind, const std::string& name) {
  std::lock_guard lk(mu_);
  std::erase_if(st_.resources,
                [&](const state::Resource& r) { return r.kind == kind && r.name == name; });
  return save_(st_);
}

std::vector<state::Resource> Record::take(const std::string& kind, const std::string& node) {
  std::lock_guard lk(mu_);
  std::vector<state::Resource> out;
  for (const auto& r : st_.resources)
    if (r.kind == kind && r.node == node) out.push_back(r);
  std::erase_if(st_.resources,
                [&](const state::Resource& r) { return r.kind == kind && r.node == node; });
  return out;
}

Result<void> Record::save() {
  std::lock_guard lk(mu_);
  return save_(st_);
}

std::string Record::cgroup() const {
  std::lock_guard lk(mu_);
  return state::cgroup_of(st_);
}

Result<std::vector<std::pair<int, std::string>>> NodeDriver::refused_lines(
    const plan::Node& node, const std::string&, proc::ProcessRunner&) const {
  return usage_error("node " + node.name + " (driver " + name() +
                     "): twin does not check configurations for its NOS");
}

Result<void> NodeDriver::preflight(std::vector<plan::Node*>&, const DriverSettings&,
                                   proc::ProcessRunner&) const {
  return {};
}

Result<void> NodeDriver::prepare(std::vector<plan::Node*>&, BuildContext&) const { return {}; }

std::string NodeDriver::address_script(const plan::Node&, const std::vector<std::string>&) const {
  return "";
}

std::string NodeDriver::vtep_change_script(const plan::Node&, const plan::Node&) const {
  return "";
}

Result<std::vector<plan::Vni>> NodeDriver::running_vnis(const plan::Node& node,
                                                        proc::ProcessRunner&) const {
  return input_error(std::string("node ") + node.name + "'s driver (" + name() +
                     ") builds no VXLAN devices");
}

Result<void> NodeDriver::write_files(const plan::Node& node) const {
  std::error_code ec;
  std::filesystem::create_directories(node.run_dir, ec);
  if (ec) return harness_error("creating " + node.run_dir + ": " + ec.message());
  return {};
}

Result<void> NodeDriver::begin_create(const std::vector<const plan::Node*>&, BuildContext&) const {
  return {};
}

Result<void> NodeDriver::create(const std::vector<const plan::Node*>&, BuildContext&) const {
  return {};
}

Result<int> NodeDriver::start(const plan::Node&, BuildContext&) const { return 0; }

Result<void> NodeDriver::wait_ready(const std::vector<const plan::Node*>&, BuildContext&) const {
  return {};
}

void NodeDriver::remove(const state::State&, proc::ProcessRunner&, Teardown&) const {}

Result<nlohmann::json> NodeDriver::port_table(const plan::Node& node) const {
  return kernel_table(node, runtime::KernelTable::kLinks, nullptr);
}

Result<nlohmann::json> NodeDriver::artifact_ip_json(const plan::Node& node,
                                                    const std::vector<std::string>& args,
                                                    proc::ProcessRunner& runner) const {
  return runtime::ip_json(runner, node.netns, args);
}

nlohmann::json NodeDriver::status(const plan::Node&) const { return nullptr; }

Result<std::string> NodeDriver::startup_config(const plan::Node& node) const {
  return usage_error("node " + node.name + " (driver " + name() +
                     "): twin does not run its FRR, so it keeps no startup config of it");
}

Result<void> NodeDriver::write_startup_config(const plan::Node& node, const std::string&) const {
  return usage_error("node " + node.name + " (driver " + name() +
                     "): twin does not run its FRR, so it keeps no startup config of it");
}

Result<void> NodeDriver::restart_daemon(const plan::Node& node, const std::string& daemon,
                                        BuildContext&) const {
  return usage_error("node " + node.name + " (driver " + name() + "): twin does not run its " +
                     daemon + ", so it cannot restart it");
}

std::vector<state::ProcessHealth> NodeDriver::process_health(
    const plan::Node&, const std::vector<state::Resource>&) const {
  return {};
}

bool NodeDriver::manages_frr(const plan::Node&) const { return false; }

Result<std::string> NodeDriver::read_sysctl(const plan::Node& node, const std::string&) const {
  return usage_error("node " + node.name + " (driver " + name() +
                     ") has no kernel settings twin can reach; change them inside the node");
}

Result<void> NodeDriver::write_sysctl(const plan::Node& node, const std::string& key,
                                      const std::string&) const {
  return read_sysctl(node, key).error();
}

namespace {
Error no_frr(const plan::Node& node) {
  return usage_error("node " + node.name + " runs no FRR that twin manages (driver " +
                     "does not apply configuration to " + to_string(node.kind) + " nodes of image " +
                     node.image + ")");
}
}  // namespace

Result<void> NodeDriver::save_config(const plan::Node& node, proc::ProcessRunner&) const {
  return no_frr(node);
}

Result<void> NodeDriver::stop_routing(const plan::Node& node, BuildContext&) const {
  return no_frr(node);
}

Result<int> NodeDriver::start_routing(const plan::Node& node, BuildContext&) const {
  return no_frr(node);
}

Result<int> NodeDriver::restart_routing(const plan::Node& node, BuildContext& ctx) const {
  if (auto r = stop_routing(node, ctx); !r) return r.error();
  return start_routing(node, ctx);
}


Result<std::string> NodeDriver::running_config(const plan::Node& node, proc::ProcessRunner&) const {
  return no_frr(node);
}

Result<void> NodeDriver::apply_config(const plan::Node& node, const std::string&, int,
                                      const std::string&, proc::ProcessRunner&) const {
  return no_frr(node);
}

Result<void> NodeDriver::change_daemons(const plan::Node& from, const plan::Node& to,
                                        BuildContext&) const {
  if (from.daemons == to.daemons) return {};
  return no_frr(to);
}

Result<void> NodeDriver::reload_config(const plan::Node& node, const std::string&, bool,
                                       std::string*, proc::ProcessRunner&) const {
  return no_frr(node);
}

}  // namespace twin::drivers
