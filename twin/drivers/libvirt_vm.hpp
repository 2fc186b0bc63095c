#pragma once
// VM nodes in a lab's lifecycle (backend libvirt; runtime/libvirt.hpp has the wiring design).
// Internal to drivers/: the libvirt driver (libvirt.cpp) calls these from its build steps.
#include <chrono>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "twin/core/error.hpp"
#include "twin/drivers/driver.hpp"

namespace twin::drivers {

// Before anything is created: every VM's files exist (each missing one named with the profile
// that wants it), the kernel command lines fit, qemu-img exists for disk images, libvirt answers
// at `uri`. Errors: kInput (missing file), kEnvironment (libvirt, tools).
Result<void> vm_preflight(const std::vector<plan::Node*>& vms, const std::string& uri);

// The domain type for a VM whose profile asks for `requested` (auto | kvm | tcg): "kvm" or
// "qemu" (TCG), and why. For auto, KVM only after a bounded trial boot of the test-vm image
// succeeded on this host since its last reboot (the result is kept in /run/twin/kvm-trial.json
// keyed by the kernel's boot_id): /dev/kvm that opens is no proof KVM boots a guest.
// The trial domain is recorded before it starts and dropped from the record once destroyed, so
// the lab's record holds one domain per VM.
struct AccelChoice {
  std::string domain_type;  // "kvm" | "qemu"
  std::string why;
};
Result<AccelChoice> choose_accel(const std::string& requested, const std::string& uri,
                                 const std::string& trial_dir, Record& record,
                                 const Progress& progress);

// Creates the VMs: records every tap and domain, then creates taps (IPv6 off), qcow2 overlays,
// starts the transient domains, moves the taps into the nodes' namespaces and joins them to the
// links' host ends. Call after the namespaces and veths exist.
Result<void> start_vms(const std::vector<const plan::Node*>& vms, BuildContext& ctx);

// Waits until every VM's console shows its ready pattern (at most its ready-timeout, and never
// past ctx.deadline). Errors name the VM and the last console line.
Result<void> wait_vms_ready(const std::vector<const plan::Node*>& vms, BuildContext& ctx);

// Destroys the recorded domains and deletes recorded taps still in the root namespace (a tap
// moved into a namespace goes with it). Problems are appended, never thrown.
void remove_vms(const state::State& s, proc::ProcessRunner& runner, Teardown& out);

// The IPv6 link-local address a guest derives from its MAC (modified EUI-64, RFC 4291
// appendix A): how to reach a NOS's management port over mgmt0 without DHCP. "" for a bad MAC.
std::string eui64_link_local(const std::string& mac);

// {"domain","uri","running","accel","console_log","agent","mgmt"} for `twin status`.
nlohmann::json vm_status(const plan::Node& n);
// Whether the node's domain runs, as libvirt says ("vm <domain>"; known = false when libvirt
// does not answer).
state::ProcessHealth vm_process_health(const plan::Node& n);

}  // namespace twin::drivers
