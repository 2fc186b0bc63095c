#include "twin/drivers/libvirt_vm.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "twin/core/util.hpp"
#include "twin/runtime/agent.hpp"
#include "twin/runtime/libvirt.hpp"
#include "twin/wiring/mgmt.hpp"
#include "twin/wiring/wiring.hpp"

namespace twin::drivers {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

// Where the kvm trial's verdict lives until the next reboot.
constexpr const char* kTrialFile = "/run/twin/kvm-trial.json";
constexpr auto kTrialTimeout = 20s;  // TCG boots test-vm in ~3-8 s here; KVM in well under that

std::string read_line(const std::string& path) {
  std::ifstream f(path);
  std::string s;
  std::getline(f, s);
  return s;
}

std::string last_console_line(const std::string& log) {
  std::ifstream f(log, std::ios::binary);
  std::string line, last;
  while (std::getline(f, line)) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (!line.empty()) last = line;
  }
  return last.size() > 160 ? last.substr(last.size() - 160) : last;
}

// One libvirt connection per URI, opened on first use.
class Connections {
 public:
  Result<runtime::Hypervisor*> get(const std::string& uri) {
    auto& c = by_uri_[uri];
    if (!c) {
      auto h = runtime::Hypervisor::open(uri);
      if (!h) return h.error();
      c = std::move(*h);
    }
    return c.get();
  }

 private:
  std::map<std::string, std::unique_ptr<runtime::Hypervisor>> by_uri_;
};

// Boots test-vm once under KVM and waits for its ready marker. `*started` says whether the
// domain started at all (if not, `*detail` has libvirt's reason, which may be unrelated to KVM).
Result<bool> kvm_trial(runtime::Hypervisor& hv, bool* started, std::string* detail,
                       const std::string& dir, const std::string& log_dir, Record& record,
                       const Progress& progress) {
  plan::Node n;
  n.name = "kvm-trial";
  n.image = "test-vm";
  n.backend = topology::Backend::kLibvirt;
  n.vm.domain = "tw-kvm-trial-" + std::to_string(::getpid());
  n.vm.kernel = dir + "/vmlinuz";
  n.vm.initrd = dir + "/initrd.img";
  n.vm.cmdline = "console=ttyS0 panic=-1 twin.hostname=kvm-trial";
  n.vm.memory_mib = 128;
  n.vm.console_log = log_dir + "/kvm-trial.log";
  if (auto r = record.add({{"domain", n.vm.domain, "", 0, 0, hv.uri()}}); !r) return r.error();
  // Once destroyed, the trial domain leaves the record: the lab then holds one domain per VM.
  auto forget = [&] { return record.forget("domain", n.vm.domain); };
  progress("trying KVM: booting test-vm for at most " + std::to_string(kTrialTimeout.count()) +
           " s");
  auto t0 = Clock::now();
  if (auto r = hv.start(runtime::domain_xml(n, "kvm")); !r) {
    *started = false;
    // QEMU's first words say why; its assertion dumps that follow do not.
    *detail = r.error().message.substr(0, r.error().message.find('\n'));
    std::error_code ec;
    fs::remove(n.vm.console_log, ec);
    if (auto f = forget(); !f) return f.error();
    return false;
  }
  *started = true;
  bool ok = false;
  size_t off = 0;
  while (Clock::now() - t0 < kTrialTimeout) {
    if (runtime::console_shows(n.vm.console_log, "TWIN-READY", off)) {
      ok = true;
      break;
    }
    auto running = hv.running(n.vm.domain);
    if (running && !*running) break;
    std::this_thread::sleep_for(100ms);
  }
  auto destroyed = hv.destroy(n.vm.domain);
  std::error_code ec;
  fs::remove(n.vm.console_log, ec);
  // A domain that could not be destroyed stays recorded, for `down`.
  if (destroyed)
    if (auto f = forget(); !f) return f.error();
  return ok;
}

}  // namespace

std::string eui64_link_local(const std::string& mac) {
  unsigned b[6];
  if (std::sscanf(mac.c_str(), "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5]) != 6)
    return "";
  char buf[64];
  std::snprintf(buf, sizeof buf, "fe80::%x:%x:%x:%x", ((b[0] ^ 2) << 8) | b[1], (b[2] << 8) | 0xff,
                0xfe00 | b[3], (b[4] << 8) | b[5]);
  return buf;
}

namespace {
std::string octal(unsigned mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", mode);
  return buf;
}
}  // namespace

Result<void> vm_preflight(const std::vector<plan::Node*>& vms, const std::string& uri) {
  bool disks = false;
  for (const auto* np : vms) {
    const auto& n = *np;
    const auto& vm = n.vm;
    for (const auto& [what, path] : {std::pair<const char*, std::string>{"kernel", vm.kernel},
                                     {"initrd", vm.initrd},
                                     {"disk", vm.disk}}) {
      if (path.empty()) continue;
      if (!fs::is_regular_file(path)) {
        std::string hint =
            n.image == "test-vm"
                ? "build it with: sudo tools/build-test-vm-image"
                : "put the image there, or point the profile's vm." + std::string(what) + " at it";
        return input_error("node " + n.name + ": image " + n.image + " needs its " + what + " at " +
                           path + ", which does not exist (" + hint + ")");
      }
      // qemu:///system runs QEMU as an unprivileged user (libvirt-qemu on Debian): every folder
      // on the way must let others through.
      for (fs::path p = fs::path(path).parent_path(); p != p.root_path(); p = p.parent_path()) {
        struct stat sb {};
        if (::stat(p.c_str(), &sb) == 0 && !(sb.st_mode & S_IXOTH))
          return input_error("node " + n.name + ": " + path + " is under " + p.string() +
                             ", which QEMU's user cannot enter (mode " + octal(sb.st_mode & 0777) +
                             "): keep VM images in a folder like /var/lib/twin/images");
      }
    }
    // agent ssh with a key: the key must be there when validators log in.
    if (!vm.ssh_key.empty() && !fs::is_regular_file(vm.ssh_key))
      return input_error("node " + n.name + ": image " + n.image +
                         " logs into its guest with the "
                         "key " +
                         vm.ssh_key +
                         ", which is not a file (point the profile's "
                         "vm.ssh-key at the private key the image authorizes)");
    if (!vm.disk.empty()) disks = true;
    if (vm.cmdline.size() > plan::kMaxKernelCmdline)
      return input_error("node " + n.name + ": its kernel command line is " +
                         std::to_string(vm.cmdline.size()) + " bytes, over Linux's limit of " +
                         std::to_string(plan::kMaxKernelCmdline) +
                         " (fewer interfaces or addresses, or a disk image)");
  }
  if (disks && ::access("/usr/bin/qemu-img", X_OK) != 0)
    return env_error(
        "qemu-img not found (package qemu-utils): twin boots disk images through "
        "a copy-on-write overlay");
  auto hv = runtime::Hypervisor::open(uri);
  if (!hv) return hv.error();
  return {};
}

Result<AccelChoice> choose_accel(const std::string& requested, const std::string& uri,
                                 const std::string& trial_dir, Record& record,
                                 const Progress& progress) {
  if (requested == "tcg") return AccelChoice{"qemu", "TCG: the image profile asks for it"};
  auto hv = runtime::Hypervisor::open(uri);
  if (!hv) return hv.error();
  bool offered = (*hv)->offers("kvm");
  if (requested == "kvm") {
    if (!offered)
      return env_error("the image profile asks for KVM, but libvirt at " + uri +
                       " offers no kvm domains (/dev/kvm missing or not usable)");
    return AccelChoice{"kvm", "KVM: the image profile asks for it"};
  }
  if (!fs::exists("/dev/kvm")) return AccelChoice{"qemu", "TCG: this host has no /dev/kvm"};
  if (!offered) return AccelChoice{"qemu", "TCG: libvirt offers no kvm domains here"};
  std::string boot_id = read_line("/proc/sys/kernel/random/boot_id");
  {
    std::ifstream f(kTrialFile);
    auto j = nlohmann::json::parse(f, nullptr, false);
    if (!j.is_discarded() && j.value("boot_id", "") == boot_id)
      return j.value("kvm_boots", false)
                 ? AccelChoice{"kvm", "KVM: a trial boot succeeded since this host booted"}
                 : AccelChoice{"qemu", "TCG: a KVM trial boot failed since this host booted (" +
                                           std::string(kTrialFile) + ": " +
                                           j.value("detail", "timed out") + ")"};
  }
  if (!fs::exists(trial_dir + "/vmlinuz") || !fs::exists(trial_dir + "/initrd.img"))
    return AccelChoice{"qemu", "TCG: KVM not verified (no test-vm image in " + trial_dir +
                                   " for a trial boot; tools/build-test-vm-image builds it)"};
  auto log_dir = fs::path(kTrialFile).parent_path().string();
  bool started = false;
  std::string detail;
  auto ok = kvm_trial(**hv, &started, &detail, trial_dir, log_dir, record, progress);
  if (!ok) return ok.error();
  // QEMU itself refusing KVM is an answer worth keeping; anything else (a daemon missing) is not.
  bool qemu_refused = detail.find("qemu") != std::string::npos;
  if (!started && !qemu_refused)
    return AccelChoice{"qemu", "TCG: the KVM trial domain did not start: " + detail};
  nlohmann::json j{{"boot_id", boot_id}, {"kvm_boots", *ok}, {"detail", detail}};
  (void)write_file(kTrialFile, j.dump() + "\n");
  if (*ok) return AccelChoice{"kvm", "KVM: a trial boot succeeded"};
  if (!started) return AccelChoice{"qemu", "TCG: QEMU could not start a KVM guest: " + detail};
  return AccelChoice{"qemu", "TCG: /dev/kvm opens, but a KVM trial boot did not finish in " +
                                 std::to_string(kTrialTimeout.count()) + " s"};
}

Result<void> start_vms(const std::vector<const plan::Node*>& vms, BuildContext& ctx) {
  if (vms.empty()) return {};
  auto& runner = ctx.runner;
  const auto& progress = ctx.progress;
  // 1. Record every tap and domain before any exists.
  {
    std::vector<state::Resource> rs;
    for (const auto* n : vms) {
      if (!n->vm.mgmt_tap.empty()) rs.push_back({"tap", n->vm.mgmt_tap, n->name, 0, 0, ""});
      for (const auto& i : n->interfaces) rs.push_back({"tap", i.tap, n->name, 0, 0, ""});
      rs.push_back({"domain", n->vm.domain, n->name, 0, 0, n->vm.uri});
    }
    if (auto r = ctx.record.add(std::move(rs)); !r) return r;
  }
  // 2. Taps in the root namespace, silent (IPv6 off) before they ever come up, so the host
  //    never takes an address or a route from the lab.
  {
    std::string script;
    std::vector<std::pair<std::string, std::string>> sysctls;
    for (const auto* n : vms) {
      script += wiring::tap_create_script(*n);
      auto s = wiring::vm_tap_sysctls(*n);
      sysctls.insert(sysctls.end(), s.begin(), s.end());
    }
    if (auto r = wiring::run_batch(runner, script, "", "creating VM taps"); !r) return r;
    for (const auto& [key, value] : sysctls)
      if (auto r = write_file("/proc/sys/" + key, value + "\n"); !r)
        return r.error().with_context("disabling IPv6 on a VM tap");
  }
  // The guest's SSH password (agent ssh) for later commands, which read it through the
  // askpass program: in the node's run folder, root's only, never in the state file.
  for (const auto* n : vms) {
    if (n->vm.ssh_password_file.empty()) continue;
    if (auto w = write_file_mode(n->vm.ssh_password_file, n->vm.ssh_password + "\n", 0600); !w)
      return w.error().with_context("node " + n->name);
    if (auto w = write_file_mode(runtime::guest_askpass_path(*n), runtime::guest_askpass_script(*n),
                                 0700);
        !w)
      return w.error().with_context("node " + n->name);
  }
  // 3. Disk overlays: the lab never writes the user's image, and one image serves many nodes.
  for (const auto* n : vms) {
    if (n->vm.overlay.empty()) continue;
    auto r = runner.run({{"qemu-img", "create", "-q", "-f", "qcow2", "-F", "qcow2", "-b",
                          n->vm.disk, n->vm.overlay},
                         "",
                         60s});
    if (!r) return r.error().with_context("node " + n->name + ": creating its disk overlay");
    if (r->exit_code != 0)
      return harness_error("node " + n->name + ": qemu-img create failed: " + r->err);
  }
  // 4. Domains, several at once (libvirt handles one client per connection).
  std::vector<std::optional<Error>> errors(vms.size());
  std::atomic<int> started{0};
  std::mutex mu;
  parallel_for(vms.size(), ctx.settings.parallel, [&](size_t k) {
    const auto& n = *vms[k];
    auto hv = runtime::Hypervisor::open(n.vm.uri);
    if (!hv) {
      errors[k] = hv.error();
      return;
    }
    if (auto r = (*hv)->start(runtime::domain_xml(n, n.vm.domain_type)); !r) {
      errors[k] = r.error().with_context("node " + n.name);
      return;
    }
    int s = ++started;
    std::lock_guard lk(mu);
    progress("VM " + n.name + " started (" + runtime::accel_name(n.vm.domain_type) + ", " +
             std::to_string(n.vm.vcpus) + " vCPU, " + std::to_string(n.vm.memory_mib) + " MiB) " +
             std::to_string(s) + "/" + std::to_string(vms.size()));
  });
  for (auto& e : errors)
    if (e) return *e;
  // 5. QEMU holds the taps: move them next to the links' host ends and join the two.
  {
    std::string script;
    for (const auto* n : vms) script += wiring::tap_move_script(*n);
    if (auto r = wiring::run_batch(runner, script, "", "moving VM taps"); !r) return r;
  }
  for (const auto* n : vms) {
    if (auto r = wiring::run_batch(runner, wiring::tap_up_script(*n), n->netns, "VM taps up"); !r)
      return r.error().with_context("node " + n->name);
    if (!n->vm.mgmt_netns.empty()) {
      if (auto r = wiring::run_batch(runner, wiring::mgmt_vm_port_script(*n), n->vm.mgmt_netns,
                                     "joining the VM's management NIC to the management bridge");
          !r)
        return r.error().with_context("node " + n->name);
    } else if (!n->vm.mgmt_tap.empty())
      if (auto r = wiring::apply_sysctls(
              n->netns,
              {{std::string("net/ipv6/conf/") + wiring::kMgmtPort + "/disable_ipv6", "0"}});
          !r)
        return r.error().with_context("node " + n->name);
    auto script = wiring::tap_redirect_script(*n);
    if (script.empty()) continue;
    auto r = runner.run({{"tc", "-n", n->netns, "-batch", "-"}, script, 30s});
    if (!r) return r.error().with_context("node " + n->name + ": joining taps to links");
    if (r->exit_code != 0)
      return harness_error("node " + n->name +
                           ": tc redirect between taps and links failed: " + r->err);
  }
  return {};
}

Result<void> wait_vms_ready(const std::vector<const plan::Node*>& vms, BuildContext& ctx) {
  const auto deadline = ctx.deadline;
  const auto& progress = ctx.progress;
  struct Wait {
    const plan::Node* n;
    size_t offset = 0;
    bool ready = false;
  };
  std::vector<Wait> waits;
  for (const auto* n : vms) waits.push_back({n});
  auto t0 = Clock::now();
  Connections hvs;
  int ready = 0;
  for (auto last_check = t0;; std::this_thread::sleep_for(100ms)) {
    if (interrupted()) return Error{ErrorKind::kInterrupted, "interrupted waiting for VMs"};
    bool check_alive = Clock::now() - last_check > 1s;
    if (check_alive) last_check = Clock::now();
    for (auto& w : waits) {
      if (w.ready) continue;
      const auto& vm = w.n->vm;
      if (vm.ready_pattern.empty() ||
          runtime::console_shows(vm.console_log, vm.ready_pattern, w.offset)) {
        w.ready = true;
        ++ready;
        char secs[32];
        std::snprintf(secs, sizeof secs, "%.1f s", ms_since(t0) / 1000.0);
        progress("VM " + w.n->name + " ready in " + secs + " (" + std::to_string(ready) + "/" +
                 std::to_string(waits.size()) + ")");
        continue;
      }
      auto waited = Clock::now() - t0;
      bool own = waited > std::chrono::seconds(vm.ready_timeout_s);
      if (own || Clock::now() > deadline) {
        std::string last = last_console_line(vm.console_log);
        return harness_error(
            "VM " + w.n->name + " did not print '" + vm.ready_pattern + "' on its console " +
            (own ? "within " + std::to_string(vm.ready_timeout_s) + " s (ready-timeout of image " +
                       w.n->image + ")"
                 : std::string("before up's --timeout ran out")) +
            "; last console line: " + (last.empty() ? "(none)" : "'" + last + "'") +
            " (twin up --keep-on-failure keeps the console log, " + vm.console_log + ")");
      }
      if (check_alive) {
        auto hv = hvs.get(vm.uri);
        if (!hv) return hv.error();
        auto running = (*hv)->running(vm.domain);
        if (running && !*running)
          return harness_error("VM " + w.n->name + " stopped before it was ready; last console " +
                               "line: '" + last_console_line(vm.console_log) + "'; console log " +
                               vm.console_log);
      }
    }
    if (ready == static_cast<int>(waits.size())) return {};
  }
}

void remove_vms(const state::State& s, proc::ProcessRunner& runner, Teardown& out) {
  auto& problems = out.problems;
  Connections hvs;
  for (const auto& r : s.resources) {
    if (r.kind != "domain") continue;
    auto hv = hvs.get(r.uri);
    if (!hv) {
      problems.push_back("domain " + r.name + ": " + hv.error().message);
      continue;
    }
    auto d = (*hv)->destroy(r.name);
    if (!d)
      problems.push_back(d.error().message);
    else if (*d)
      ++out.vms_destroyed;
  }
  std::string script;
  std::vector<std::string> taps;
  for (const auto& r : s.resources)
    if (r.kind == "tap" && fs::exists("/sys/class/net/" + r.name)) {
      script += "link del dev " + r.name + "\n";
      taps.push_back(r.name);
    }
  if (!script.empty()) {
    auto r = wiring::run_batch(runner, script, "", "deleting VM taps", /*cancellable=*/false);
    if (!r) problems.push_back(r.error().message);
  }
  for (const auto& t : taps)
    if (fs::exists("/sys/class/net/" + t)) problems.push_back("tap " + t + " is still there");
}

state::ProcessHealth vm_process_health(const plan::Node& n) {
  state::ProcessHealth h{"vm " + n.vm.domain};
  auto hv = runtime::Hypervisor::open(n.vm.uri);
  if (!hv) {
    h.known = false;
    h.detail = "libvirt " + n.vm.uri + " does not answer: " + hv.error().message;
    return h;
  }
  auto r = (*hv)->running(n.vm.domain);
  if (!r) {
    h.known = false;
    h.detail = r.error().message;
  } else {
    h.running = *r;
    if (!h.running) h.detail = "the domain is not running (libvirt " + n.vm.uri + ")";
  }
  return h;
}

nlohmann::json vm_status(const plan::Node& n) {
  nlohmann::json j{{"domain", n.vm.domain},
                   {"uri", n.vm.uri},
                   {"accel", runtime::accel_name(n.vm.domain_type)},
                   {"accel_reason", n.vm.accel_reason},
                   {"console_log", n.vm.console_log},
                   {"running", nullptr}};
  if (n.vm.agent == "twin") j["agent"] = n.vm.agent_socket;
  // On the lab's management network, the node's mgmt_address says it all.
  if (!n.vm.mgmt_tap.empty() && n.vm.mgmt_netns.empty())
    j["mgmt"] =
        eui64_link_local(n.vm.mgmt_mac) + "%" + wiring::kMgmtPort + " (netns " + n.netns + ")";
  if (auto hv = runtime::Hypervisor::open(n.vm.uri))
    if (auto r = (*hv)->running(n.vm.domain)) j["running"] = *r;
  return j;
}

}  // namespace twin::drivers
