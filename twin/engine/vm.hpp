#pragma once
// VM nodes in a lab's lifecycle (backend libvirt; runtime/libvirt.hpp has the wiring design).
// Internal to the engine: lab.cpp calls these from up, down and status.
#include <chrono>
#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "twin/core/error.hpp"
#include "twin/engine/state.hpp"
#include "twin/proc/runner.hpp"

namespace twin::engine {

using Progress = std::function<void(const std::string&)>;
using RecordFn = std::function<Result<void>(std::vector<Resource>)>;

// True if the plan has VM nodes.
bool has_vms(const plan::Plan& plan);
// The longest ready-timeout of the plan's VMs (0 without VMs).
std::chrono::seconds longest_ready_timeout(const plan::Plan& plan);

// Before anything is created: every VM's files exist (each missing one named with the profile
// that wants it), the kernel command lines fit, qemu-img exists for disk images, libvirt answers
// at `uri`. Errors: kInput (missing file), kEnvironment (libvirt, tools).
Result<void> vm_preflight(const plan::Plan& plan, const std::string& uri);

// The domain type for a VM whose profile asks for `requested` (auto | kvm | tcg): "kvm" or
// "qemu" (TCG), and why. For auto, KVM only after a bounded trial boot of the test-vm image
// succeeded on this host since its last reboot (the result is kept in /run/twin/kvm-trial.json
// keyed by the kernel's boot_id): /dev/kvm that opens is no proof KVM boots a guest.
// The trial domain is recorded through `record` before it starts and destroyed after.
struct AccelChoice {
  std::string domain_type;  // "kvm" | "qemu"
  std::string why;
};
Result<AccelChoice> choose_accel(const std::string& requested, const std::string& uri,
                                 const std::string& trial_dir, const RecordFn& record,
                                 const Progress& progress);

// Creates the VMs of the plan: records every tap and domain, then creates taps (IPv6 off),
// qcow2 overlays, starts the transient domains, moves the taps into the nodes' namespaces and
// joins them to the links' host ends. Call after the namespaces and veths exist.
Result<void> start_vms(const plan::Plan& plan, const RecordFn& record, proc::ProcessRunner& runner,
                       const Progress& progress, int parallel);

// Waits until every VM's console shows its ready pattern (at most its ready-timeout, and never
// past `deadline`). Errors name the VM and the last console line.
Result<void> wait_vms_ready(const plan::Plan& plan, std::chrono::steady_clock::time_point deadline,
                            const Progress& progress);

// Destroys the recorded domains and deletes recorded taps still in the root namespace (a tap
// moved into a namespace goes with it). Problems are appended, never thrown.
void remove_vms(const State& s, proc::ProcessRunner& runner, int* removed,
                std::vector<std::string>& problems);

// The IPv6 link-local address a guest derives from its MAC (modified EUI-64, RFC 4291
// appendix A): how to reach a NOS's management port over mgmt0 without DHCP. "" for a bad MAC.
std::string eui64_link_local(const std::string& mac);

// {"domain","uri","running","accel","console_log","agent","mgmt"} for `twin status`.
nlohmann::json vm_status(const plan::Node& n);

}  // namespace twin::engine
