#pragma once
// VM nodes through libvirt's C API (libvirt.org/html/libvirt-libvirt-domain.html): domain XML
// rendered from the plan, transient domains (gone from libvirt once destroyed or shut off, so
// nothing outlives `twin down`), KVM or TCG, and the console.
//
// How a VM joins the fabric: each data NIC is an `<interface type='ethernet'>` on a tap that
// twin creates (managed='no', so libvirt neither creates nor deletes it) in the root namespace
// with IPv6 disabled. Once QEMU holds the tap's file descriptor the tap moves into the node's
// network namespace, where a tc mirred redirect joins it to the host end of the link's veth.
// The namespace's own IP stack never sees the frames (ingress redirect), so the wire is
// transparent: the guest's MAC, MTU and link-local addresses are what its peer sees.
#include <memory>
#include <string>
#include <vector>

#include "twin/core/error.hpp"
#include "twin/plan/plan.hpp"

namespace twin::runtime {

// The connection URI: $TWIN_LIBVIRT_URI, else qemu:///system.
std::string default_libvirt_uri();

// Domain XML for a VM node. `type` is the libvirt domain type: "kvm", "qemu" (TCG) or "test"
// (the test:///default driver, which ignores devices it does not model). Pure and
// deterministic. Elements and their meaning: libvirt "Domain XML format" (formatdomain.html):
// the serial console is a pty whose output libvirt also logs to plan Vm::console_log; the agent
// channel is a virtio-serial port named org.twin.agent.0 bound to Vm::agent_socket. NICs carry
// no <mtu>: virtio's MTU feature (VIRTIO_NET_F_MTU) also caps the guest's maximum MTU at that
// value, and a change set raising a VM port to jumbo frames must work as on a namespace; the
// guest sets its MTU itself (test-vm from its command line, a NOS from its configuration).
std::string domain_xml(const plan::Node& node, const std::string& type);

// "tcg" for domain type "qemu", else the type itself: how reports name the accelerator.
std::string accel_name(const std::string& domain_type);

// One libvirt connection. Not thread-safe: use one per thread (libvirt connections are cheap).
class Hypervisor {
 public:
  // Errors: kEnvironment with libvirt's own message and what to check (daemon running, URI).
  static Result<std::unique_ptr<Hypervisor>> open(const std::string& uri);
  ~Hypervisor();
  Hypervisor(const Hypervisor&) = delete;
  Hypervisor& operator=(const Hypervisor&) = delete;

  const std::string& uri() const { return uri_; }
  // True if the host's capabilities offer this domain type for x86_64 ("kvm", "qemu").
  bool offers(const std::string& domain_type);
  // Starts a transient domain (virDomainCreateXML). Errors: kEnvironment with libvirt's message.
  Result<void> start(const std::string& xml);
  // Destroys the domain (virDomainDestroy: immediate power-off). Returns false when no such
  // domain exists (already gone): idempotent.
  Result<bool> destroy(const std::string& name);
  // True while a domain of that name is running.
  Result<bool> running(const std::string& name);
  // The live domain XML (virDomainGetXMLDesc).
  Result<std::string> live_xml(const std::string& name);

 private:
  explicit Hypervisor(void* conn, std::string uri) : conn_(conn), uri_(std::move(uri)) {}
  void* conn_;  // virConnectPtr; the header stays free of libvirt's
  std::string uri_;
};

// The pty of the domain's serial console from its live XML (<serial type='pty'><source
// path='/dev/pts/N'/>), which `twin console` opens.
Result<std::string> console_pty(const std::string& live_xml);

// Reads `log` (the console log) from byte `offset` on and returns true once `pattern` occurs.
// `offset` advances; a partial line at the end is read again next time.
bool console_shows(const std::string& log, const std::string& pattern, size_t& offset);

}  // namespace twin::runtime
