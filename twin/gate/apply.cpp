#include "twin/gate/apply.hpp"

#include <openssl/evp.h>

#include "twin/core/input_policy.hpp"
#include "twin/core/util.hpp"
#include "twin/engine/lab.hpp"
#include "twin/gate/gate.hpp"
#include "twin/plan/images.hpp"
#include "twin/state/state.hpp"

namespace twin::replay {

namespace {

// The lab as the engine runs it.
class EngineLab final : public LabControl {
 public:
  EngineLab(const std::string& lab, proc::ProcessRunner& runner, int parallel)
      : lab_(lab), runner_(runner), parallel_(parallel) {}
  Result<void> reshape(const plan::Plan& from, const plan::Plan& to,
                       engine::GrowReport* report) override {
    return engine::reshape_lab(lab_, from, to, runner_, parallel_, report);
  }
  // Reloaded: a topology step recorded new resources in the state file meanwhile.
  Result<void> save_intent(const plan::Plan& intended) override {
    auto cur = state::load_state(lab_);
    if (!cur) return cur.error();
    // Nodes keep the image they run (what `up` or an image step read of it).
    plan::Plan keep = intended;
    plan::keep_running_images(keep, cur->plan);
    cur->plan = keep;
    return state::save_state(*cur);
  }
  Result<int> boot_image(const plan::Plan& running, const plan::Node& to,
                         const std::string& config) override {
    return engine::boot_image(lab_, running, to, config, runner_);
  }
  Result<int> control_routing(const plan::Plan& running, const std::vector<std::string>& nodes,
                              engine::RoutingAction action) override {
    return engine::control_routing(lab_, running, nodes, action, runner_, parallel_);
  }

 private:
  std::string lab_;
  proc::ProcessRunner& runner_;
  int parallel_;
};

}  // namespace

std::unique_ptr<LabControl> engine_lab(const std::string& lab, proc::ProcessRunner& runner,
                                       int parallel) {
  return std::make_unique<EngineLab>(lab, runner, parallel);
}

std::string sha256_hex(const std::string& data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(data.data(), data.size(), md, &len, EVP_sha256(), nullptr) != 1) return "";
  static const char* hex = "0123456789abcdef";
  std::string s;
  for (unsigned i = 0; i < len; ++i) {
    s += hex[md[i] >> 4];
    s += hex[md[i] & 15];
  }
  return s;
}

std::string sha256_file(const std::string& path) {
  auto text = read_regular_file(path);
  return text ? sha256_hex(*text) : "";
}

Result<ApplyResult> apply(const state::State& st, const ChangeSet& cs, const ApplyOptions& opts,
                          proc::ProcessRunner& runner) {
  auto lock = state::lock_lab(st.lab, [&] {
    if (opts.progress)
      opts.progress("lab " + st.lab + " is busy (another twin command holds it): waiting");
  });
  if (!lock) return lock.error();
  EngineLab lab(st.lab, runner, opts.parallel);
  GateEnv env{runner, drivers::driver_for, TimeSource::real(), lab, opts.validators,
              system_traffic_probe};
  return run_gate(st, cs, opts, env);
}

}  // namespace twin::replay
