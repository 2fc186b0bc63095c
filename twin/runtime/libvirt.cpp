#include "twin/runtime/libvirt.hpp"

#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>

namespace twin::runtime {

namespace {

std::string xml_escape(const std::string& s) {
  std::string o;
  for (char c : s) switch (c) {
      case '&':
        o += "&amp;";
        break;
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '\'':
        o += "&apos;";
        break;
      case '"':
        o += "&quot;";
        break;
      default:
        o += c;
    }
  return o;
}

// libvirt prints every error to stderr unless a handler is set; twin reports them itself.
void quiet(void*, virErrorPtr) {}
void install_quiet_handler() {
  static std::once_flag once;
  std::call_once(once, [] {
    virInitialize();
    virSetErrorFunc(nullptr, quiet);
  });
}

std::string last_error() {
  const char* m = virGetLastErrorMessage();
  return m ? m : "unknown libvirt error";
}

virConnectPtr conn_of(void* p) { return static_cast<virConnectPtr>(p); }

}  // namespace

std::string default_libvirt_uri() {
  const char* e = std::getenv("TWIN_LIBVIRT_URI");
  return e && *e ? e : "qemu:///system";
}

std::string accel_name(const std::string& domain_type) {
  return domain_type == "qemu" ? "tcg" : domain_type;
}

std::string domain_xml(const plan::Node& n, const std::string& type) {
  const auto& vm = n.vm;
  std::ostringstream x;
  x << "<domain type='" << xml_escape(type) << "'>\n"
    << "  <name>" << xml_escape(vm.domain) << "</name>\n"
    << "  <description>twin node " << xml_escape(n.name) << " (image " << xml_escape(n.image)
    << ")</description>\n"
    << "  <memory unit='MiB'>" << vm.memory_mib << "</memory>\n"
    << "  <vcpu>" << vm.vcpus << "</vcpu>\n"
    << "  <os>\n"
    << "    <type arch='x86_64'>hvm</type>\n";
  if (!vm.kernel.empty()) {
    x << "    <kernel>" << xml_escape(vm.kernel) << "</kernel>\n"
      << "    <initrd>" << xml_escape(vm.initrd) << "</initrd>\n"
      << "    <cmdline>" << xml_escape(vm.cmdline) << "</cmdline>\n";
  } else {
    x << "    <boot dev='hd'/>\n";
  }
  x << "  </os>\n";
  // NOS images power themselves off through ACPI and some check CPU features: give them both.
  x << "  <features>\n    <acpi/>\n  </features>\n";
  if (type == "kvm") x << "  <cpu mode='host-passthrough'/>\n";
  // A guest that powers off is gone (transient domain); a reboot (NOS first-boot) stays.
  x << "  <on_poweroff>destroy</on_poweroff>\n"
    << "  <on_reboot>restart</on_reboot>\n"
    << "  <on_crash>destroy</on_crash>\n"
    << "  <devices>\n";
  if (!vm.overlay.empty())
    x << "    <disk type='file' device='disk'>\n"
      << "      <driver name='qemu' type='qcow2'/>\n"
      << "      <source file='" << xml_escape(vm.overlay) << "'/>\n"
      << "      <target dev='vda' bus='virtio'/>\n"
      << "    </disk>\n";
  // NICs in guest order: libvirt assigns PCI slots in document order and the guest's kernel
  // enumerates NICs by slot.
  struct Nic {
    int index;
    std::string mac, tap;
  };
  std::vector<Nic> nics;
  if (!vm.mgmt_tap.empty()) nics.push_back({0, vm.mgmt_mac, vm.mgmt_tap});
  for (const auto& i : n.interfaces) nics.push_back({i.nic, i.mac, i.tap});
  std::stable_sort(nics.begin(), nics.end(),
                   [](const Nic& a, const Nic& b) { return a.index < b.index; });
  for (const auto& nic : nics) {
    x << "    <interface type='ethernet'>\n"
      << "      <mac address='" << xml_escape(nic.mac) << "'/>\n"
      << "      <target dev='" << xml_escape(nic.tap) << "' managed='no'/>\n"
      << "      <model type='" << xml_escape(vm.nic_model) << "'/>\n"
      << "    </interface>\n";
  }
  x << "    <serial type='pty'>\n"
    << "      <log file='" << xml_escape(vm.console_log) << "' append='off'/>\n"
    << "      <target port='0'/>\n"
    << "    </serial>\n"
    << "    <console type='pty'>\n"
    << "      <target type='serial' port='0'/>\n"
    << "    </console>\n";
  if (vm.agent == "twin")
    x << "    <channel type='unix'>\n"
      << "      <source mode='bind' path='" << xml_escape(vm.agent_socket) << "'/>\n"
      << "      <target type='virtio' name='org.twin.agent.0'/>\n"
      << "    </channel>\n";
  x << "    <memballoon model='none'/>\n"
    << "  </devices>\n"
    << "</domain>\n";
  return x.str();
}

Result<std::unique_ptr<Hypervisor>> Hypervisor::open(const std::string& uri) {
  install_quiet_handler();
  virConnectPtr c = virConnectOpen(uri.c_str());
  if (!c)
    return env_error("cannot connect to libvirt at " + uri + ": " + last_error() +
                     (uri.rfind("qemu:///", 0) == 0
                          ? " (is libvirtd running? tools/libvirt-daemons.sh start starts it "
                            "without systemd; another URI: --libvirt-uri or TWIN_LIBVIRT_URI)"
                          : ""));
  return std::unique_ptr<Hypervisor>(new Hypervisor(c, uri));
}

Hypervisor::~Hypervisor() {
  if (conn_) virConnectClose(conn_of(conn_));
}

bool Hypervisor::offers(const std::string& domain_type) {
  char* caps = virConnectGetCapabilities(conn_of(conn_));
  if (!caps) return false;
  std::string c = caps;
  free(caps);
  return c.find("<domain type='" + domain_type + "'") != std::string::npos ||
         c.find("<domain type=\"" + domain_type + "\"") != std::string::npos;
}

Result<void> Hypervisor::start(const std::string& xml) {
  virDomainPtr d = virDomainCreateXML(conn_of(conn_), xml.c_str(), 0);
  if (!d) return env_error("libvirt could not start the domain: " + last_error());
  virDomainFree(d);
  return {};
}

Result<bool> Hypervisor::destroy(const std::string& name) {
  virDomainPtr d = virDomainLookupByName(conn_of(conn_), name.c_str());
  if (!d) {
    if (virGetLastErrorCode() == VIR_ERR_NO_DOMAIN) return false;
    return env_error("looking up domain " + name + ": " + last_error());
  }
  int rc = virDomainDestroy(d);
  std::string err = rc < 0 ? last_error() : "";
  bool gone = rc < 0 && virGetLastErrorCode() == VIR_ERR_NO_DOMAIN;
  virDomainFree(d);
  if (rc < 0 && !gone) return env_error("destroying domain " + name + ": " + err);
  return !gone;
}

Result<bool> Hypervisor::running(const std::string& name) {
  virDomainPtr d = virDomainLookupByName(conn_of(conn_), name.c_str());
  if (!d) {
    if (virGetLastErrorCode() == VIR_ERR_NO_DOMAIN) return false;
    return env_error("looking up domain " + name + ": " + last_error());
  }
  int active = virDomainIsActive(d);
  virDomainFree(d);
  if (active < 0) return env_error("domain " + name + ": " + last_error());
  return active == 1;
}

Result<std::string> Hypervisor::live_xml(const std::string& name) {
  virDomainPtr d = virDomainLookupByName(conn_of(conn_), name.c_str());
  if (!d) return usage_error("no running domain " + name + " at " + uri_ + ": " + last_error());
  char* x = virDomainGetXMLDesc(d, 0);
  virDomainFree(d);
  if (!x) return env_error("domain " + name + ": " + last_error());
  std::string s = x;
  free(x);
  return s;
}

Result<std::string> console_pty(const std::string& xml) {
  // The first serial device; libvirt writes attributes with single quotes.
  auto at = xml.find("<serial type='pty'");
  if (at == std::string::npos) return harness_error("the domain has no pty serial console");
  auto end = xml.find("</serial>", at);
  auto p = xml.find("path='", at);
  if (p == std::string::npos || (end != std::string::npos && p > end))
    return harness_error("the domain's serial console has no pty yet");
  p += 6;
  auto q = xml.find('\'', p);
  if (q == std::string::npos) return harness_error("malformed domain XML");
  return xml.substr(p, q - p);
}

bool console_shows(const std::string& log, const std::string& pattern, size_t& offset) {
  std::ifstream f(log, std::ios::binary);
  if (!f) return false;
  f.seekg(static_cast<std::streamoff>(offset));
  std::string chunk((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (chunk.find(pattern) != std::string::npos) return true;
  // Keep the last line unread: the pattern may be split across two reads.
  auto nl = chunk.rfind('\n');
  if (nl != std::string::npos) offset += nl + 1;
  return false;
}

}  // namespace twin::runtime
