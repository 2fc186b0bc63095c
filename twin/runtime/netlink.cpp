#include "twin/runtime/netlink.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_addr.h>
#include <linux/if_arp.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

namespace twin::runtime {

std::string mac_text(const unsigned char* bytes, size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    char b[4];
    std::snprintf(b, sizeof b, i ? ":%02x" : "%02x", bytes[i]);
    s += b;
  }
  return s;
}

using nlohmann::json;

json stats64_json(const rtnl_link_stats64& s) {
  return {{"rx",
           {{"bytes", s.rx_bytes},
            {"packets", s.rx_packets},
            {"errors", s.rx_errors},
            {"dropped", s.rx_dropped},
            {"over_errors", s.rx_over_errors},
            {"multicast", s.multicast}}},
          {"tx",
           {{"bytes", s.tx_bytes},
            {"packets", s.tx_packets},
            {"errors", s.tx_errors},
            {"dropped", s.tx_dropped},
            {"carrier_errors", s.tx_carrier_errors},
            {"collisions", s.collisions}}}};
}

std::string ip_args_of(KernelTable table) {
  switch (table) {
    case KernelTable::kLinks:
      return "link show";
    case KernelTable::kAddresses:
      return "addr show";
    case KernelTable::kRoutes4:
      return "route show";
    case KernelTable::kRoutes6:
      return "-6 route show";
  }
  return "";
}

bool kernel_table_of(const std::vector<std::string>& a, KernelTable* out) {
  using V = std::vector<std::string>;
  if (a == V{"link", "show"})
    *out = KernelTable::kLinks;
  else if (a == V{"addr", "show"})
    *out = KernelTable::kAddresses;
  else if (a == V{"route", "show"})
    *out = KernelTable::kRoutes4;
  else if (a == V{"-6", "route", "show"})
    *out = KernelTable::kRoutes6;
  else
    return false;
  return true;
}

Result<void> run_in_netns(const std::string& netns, const std::function<Result<void>()>& fn) {
  if (netns.empty() || netns.find('/') != std::string::npos || netns == "." || netns == "..")
    return harness_error("invalid network namespace name '" + netns + "'");
  std::optional<Error> err;
  std::thread t([&] {
    std::string path = "/run/netns/" + netns;
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0 || ::setns(fd, CLONE_NEWNET) != 0) {
      err = env_error("entering network namespace " + path + ": " + std::strerror(errno));
      if (fd >= 0) ::close(fd);
      return;
    }
    ::close(fd);
    try {
      if (auto r = fn(); !r) err = r.error();
    } catch (const std::exception& e) {
      err = harness_error(std::string("in netns ") + netns + ": " + e.what());
    }
  });
  t.join();
  if (err) return *err;
  return {};
}

namespace {

struct Socket {
  int fd = -1;
  uint32_t seq = 0;
  ~Socket() {
    if (fd >= 0) ::close(fd);
  }
};

Result<void> open_socket(Socket& s) {
  s.fd = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (s.fd < 0) return harness_error(std::string("netlink socket: ") + std::strerror(errno));
  // Large dumps (a spine's routes) arrive as many datagrams; a bigger buffer avoids ENOBUFS.
  int size = 1 << 20;
  ::setsockopt(s.fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
  return {};
}

// Sends `req` and calls `on_msg` for every reply message until NLMSG_DONE (dumps) or the ACK.
// A refusal is an error; `kernel_error`, when given, gets its errno (else 0).
Result<void> transact(Socket& s, nlmsghdr* req,
                      const std::function<void(const nlmsghdr*)>& on_msg,
                      int* kernel_error = nullptr) {
  if (kernel_error) *kernel_error = 0;
  req->nlmsg_seq = ++s.seq;
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  if (::sendto(s.fd, req, req->nlmsg_len, 0, reinterpret_cast<sockaddr*>(&kernel), sizeof kernel) <
      0)
    return harness_error(std::string("netlink send: ") + std::strerror(errno));
  std::vector<char> buf(1 << 16);
  for (;;) {
    ssize_t n = ::recv(s.fd, buf.data(), buf.size(), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return harness_error(std::string("netlink recv: ") + std::strerror(errno));
    int len = static_cast<int>(n);
    for (auto* h = reinterpret_cast<nlmsghdr*>(buf.data()); NLMSG_OK(h, len);
         h = NLMSG_NEXT(h, len)) {
      if (h->nlmsg_seq != req->nlmsg_seq) continue;
      if (h->nlmsg_type == NLMSG_DONE) return {};
      if (h->nlmsg_type == NLMSG_ERROR) {
        auto* e = static_cast<const nlmsgerr*>(NLMSG_DATA(h));
        if (e->error == 0) return {};  // the ACK of a request
        if (kernel_error) *kernel_error = -e->error;
        return harness_error(std::string("netlink: ") + std::strerror(-e->error));
      }
      on_msg(h);
    }
  }
}

template <typename Msg>
struct Request {
  nlmsghdr h;
  Msg m;
  char attrs[256];
};

template <typename Msg>
Result<void> dump(Socket& s, uint16_t type, uint8_t family,
                  const std::function<void(const nlmsghdr*)>& on_msg,
                  const std::function<void(Msg&)>& filter = {}) {
  Request<Msg> r{};
  r.h.nlmsg_len = NLMSG_LENGTH(sizeof(Msg));
  r.h.nlmsg_type = type;
  r.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  // The family field is the first byte of ifinfomsg, ifaddrmsg and rtmsg alike.
  reinterpret_cast<uint8_t*>(&r.m)[0] = family;
  if (filter) filter(r.m);  // fields a strictly checked dump request filters on
  return transact(s, &r.h, on_msg);
}

// Attributes of one message, indexed by type (later duplicates win, as in iproute2).
std::map<int, const rtattr*> attrs_of(const rtattr* a, int len) {
  std::map<int, const rtattr*> out;
  for (; RTA_OK(a, len); a = RTA_NEXT(a, len)) out[a->rta_type & NLA_TYPE_MASK] = a;
  return out;
}

std::string addr_text(int family, const void* data) {
  char buf[INET6_ADDRSTRLEN] = {};
  ::inet_ntop(family, data, buf, sizeof buf);
  return buf;
}

std::string mac_text(const rtattr* a) {
  return runtime::mac_text(static_cast<const unsigned char*>(RTA_DATA(a)), RTA_PAYLOAD(a));
}

uint32_t u32(const rtattr* a) {
  uint32_t v;
  std::memcpy(&v, RTA_DATA(a), sizeof v);
  return v;
}

// iproute2 print_link_flags order, NO-CARRIER first when up without carrier.
json link_flags(unsigned flags) {
  json f = json::array();
  if ((flags & IFF_UP) && !(flags & IFF_RUNNING)) f.push_back("NO-CARRIER");
  static const std::pair<unsigned, const char*> names[] = {{IFF_LOOPBACK, "LOOPBACK"},
                                                           {IFF_BROADCAST, "BROADCAST"},
                                                           {IFF_POINTOPOINT, "POINTOPOINT"},
                                                           {IFF_MULTICAST, "MULTICAST"},
                                                           {IFF_NOARP, "NOARP"},
                                                           {IFF_ALLMULTI, "ALLMULTI"},
                                                           {IFF_PROMISC, "PROMISC"},
                                                           {IFF_MASTER, "MASTER"},
                                                           {IFF_SLAVE, "SLAVE"},
                                                           {IFF_DEBUG, "DEBUG"},
                                                           {IFF_DYNAMIC, "DYNAMIC"},
                                                           {IFF_AUTOMEDIA, "AUTOMEDIA"},
                                                           {IFF_PORTSEL, "PORTSEL"},
                                                           {IFF_NOTRAILERS, "NOTRAILERS"},
                                                           {IFF_UP, "UP"},
                                                           {IFF_LOWER_UP, "LOWER_UP"},
                                                           {IFF_DORMANT, "DORMANT"},
                                                           {IFF_ECHO, "ECHO"}};
  for (const auto& [bit, name] : names)
    if (flags & bit) f.push_back(name);
  return f;
}

const char* operstate_name(int s) {
  static const char* names[] = {"UNKNOWN", "NOTPRESENT", "DOWN", "LOWERLAYERDOWN",
                                "TESTING", "DORMANT",    "UP"};
  return s >= 0 && s < 7 ? names[s] : "UNKNOWN";
}

std::string scope_name(int s) {
  switch (s) {
    case RT_SCOPE_UNIVERSE:
      return "global";
    case RT_SCOPE_SITE:
      return "site";
    case RT_SCOPE_LINK:
      return "link";
    case RT_SCOPE_HOST:
      return "host";
    case RT_SCOPE_NOWHERE:
      return "nowhere";
    default:
      return std::to_string(s);
  }
}

std::string protocol_name(int p) {
  switch (p) {
    case RTPROT_UNSPEC:
      return "unspec";
    case RTPROT_REDIRECT:
      return "redirect";
    case RTPROT_KERNEL:
      return "kernel";
    case RTPROT_BOOT:
      return "boot";
    case RTPROT_STATIC:
      return "static";
    case RTPROT_RA:
      return "ra";
    case RTPROT_ZEBRA:
      return "zebra";
    case RTPROT_DHCP:
      return "dhcp";
    // FRR's own protocol numbers (FRR's tools/etc/iproute2/rt_protos.d/frr.conf).
    case 186:
      return "bgp";
    case 187:
      return "isis";
    case 188:
      return "ospf";
    case 189:
      return "rip";
    case 190:
      return "ripng";
    case 191:
      return "nhrp";
    case 192:
      return "eigrp";
    case 193:
      return "ldp";
    case 194:
      return "sharp";
    case 195:
      return "pbr";
    case 196:
      return "static";
    case 197:
      return "openfabric";
    case 198:
      return "srte";
    default:
      return std::to_string(p);
  }
}

const char* route_type_name(int t) {
  static const char* names[] = {"unspec",   "unicast",   "local",     "broadcast",
                                "anycast",  "multicast", "blackhole", "unreachable",
                                "prohibit", "throw",     "nat",       "xresolve"};
  return t >= 0 && t < 12 ? names[t] : "unknown";
}

json link_object(const nlmsghdr* h) {
  auto* ifi = static_cast<const ifinfomsg*>(NLMSG_DATA(h));
  auto a = attrs_of(IFLA_RTA(ifi), static_cast<int>(IFLA_PAYLOAD(h)));
  json j;
  j["ifindex"] = ifi->ifi_index;
  if (a.count(IFLA_LINK) && u32(a[IFLA_LINK]) != static_cast<uint32_t>(ifi->ifi_index))
    j["link_index"] = u32(a[IFLA_LINK]);
  if (a.count(IFLA_IFNAME)) j["ifname"] = static_cast<const char*>(RTA_DATA(a[IFLA_IFNAME]));
  j["flags"] = link_flags(ifi->ifi_flags);
  if (a.count(IFLA_MTU)) j["mtu"] = u32(a[IFLA_MTU]);
  if (a.count(IFLA_MASTER)) j["master_index"] = u32(a[IFLA_MASTER]);
  if (a.count(IFLA_OPERSTATE))
    j["operstate"] = operstate_name(*static_cast<const uint8_t*>(RTA_DATA(a[IFLA_OPERSTATE])));
  j["link_type"] = ifi->ifi_type == ARPHRD_ETHER      ? "ether"
                   : ifi->ifi_type == ARPHRD_LOOPBACK ? "loopback"
                                                      : std::to_string(ifi->ifi_type);
  if (a.count(IFLA_ADDRESS)) j["address"] = mac_text(a[IFLA_ADDRESS]);
  if (a.count(IFLA_LINK_NETNSID)) {
    int32_t id;
    std::memcpy(&id, RTA_DATA(a[IFLA_LINK_NETNSID]), sizeof id);
    j["link_netnsid"] = id;
  }
  // The kernel puts every port's counters in each dump's message: taking them costs nothing.
  if (a.count(IFLA_STATS64) && RTA_PAYLOAD(a[IFLA_STATS64]) >= sizeof(rtnl_link_stats64)) {
    rtnl_link_stats64 st;
    std::memcpy(&st, RTA_DATA(a[IFLA_STATS64]), sizeof st);
    j["stats64"] = stats64_json(st);
  }
  return j;
}

Result<json> dump_links(Socket& s) {
  json out = json::array();
  auto r = dump<ifinfomsg>(s, RTM_GETLINK, AF_UNSPEC, [&](const nlmsghdr* h) {
    if (h->nlmsg_type == RTM_NEWLINK) out.push_back(link_object(h));
  });
  if (!r) return r.error();
  // iproute2 names the master ("master": "br0") rather than its index.
  std::map<int, std::string> names;
  for (const auto& l : out) names[l["ifindex"].get<int>()] = l.value("ifname", "");
  for (auto& l : out)
    if (l.contains("master_index")) {
      l["master"] = names[l["master_index"].get<int>()];
      l.erase("master_index");
    }
  return ok(std::move(out));
}

Result<json> dump_addresses(Socket& s) {
  auto links = dump_links(s);
  if (!links) return links.error();
  std::map<int, json> infos;
  auto r = dump<ifaddrmsg>(s, RTM_GETADDR, AF_UNSPEC, [&](const nlmsghdr* h) {
    if (h->nlmsg_type != RTM_NEWADDR) return;
    auto* ifa = static_cast<const ifaddrmsg*>(NLMSG_DATA(h));
    if (ifa->ifa_family != AF_INET && ifa->ifa_family != AF_INET6) return;
    auto a = attrs_of(IFA_RTA(ifa), static_cast<int>(IFA_PAYLOAD(h)));
    // IPv4 puts the interface's own address in IFA_LOCAL (IFA_ADDRESS is the peer on
    // point-to-point links); IPv6 has only IFA_ADDRESS.
    const rtattr* addr = a.count(IFA_LOCAL)     ? a[IFA_LOCAL]
                         : a.count(IFA_ADDRESS) ? a[IFA_ADDRESS]
                                                : nullptr;
    if (!addr) return;
    uint32_t flags = a.count(IFA_FLAGS) ? u32(a[IFA_FLAGS]) : ifa->ifa_flags;
    json i;
    i["family"] = ifa->ifa_family == AF_INET ? "inet" : "inet6";
    i["local"] = addr_text(ifa->ifa_family, RTA_DATA(addr));
    i["prefixlen"] = ifa->ifa_prefixlen;
    i["scope"] = scope_name(ifa->ifa_scope);
    if (flags & IFA_F_TENTATIVE) i["tentative"] = true;
    if (flags & IFA_F_DADFAILED) i["dadfailed"] = true;
    if (a.count(IFA_LABEL)) i["label"] = static_cast<const char*>(RTA_DATA(a[IFA_LABEL]));
    auto& list = infos[static_cast<int>(ifa->ifa_index)];
    if (list.is_null()) list = json::array();
    list.push_back(std::move(i));
  });
  if (!r) return r.error();
  for (auto& l : *links) {
    auto it = infos.find(l["ifindex"].get<int>());
    l["addr_info"] = it == infos.end() ? json::array() : it->second;
  }
  return links;
}

// One next hop's gateway ("gateway", or "via" for a next hop of another family, RFC 5549).
void put_gateway(json& j, int family, const std::map<int, const rtattr*>& a) {
  if (auto g = a.find(RTA_GATEWAY); g != a.end()) {
    j["gateway"] = addr_text(family, RTA_DATA(g->second));
  } else if (auto v = a.find(RTA_VIA); v != a.end()) {
    auto* via = static_cast<const rtvia*>(RTA_DATA(v->second));
    j["via"] = {{"family", via->rtvia_family == AF_INET6 ? "inet6" : "inet"},
                {"host", addr_text(via->rtvia_family, via->rtvia_addr)}};
  }
}

json nexthop_flags(unsigned flags) {
  json f = json::array();
  if (flags & RTNH_F_DEAD) f.push_back("dead");
  if (flags & RTNH_F_ONLINK) f.push_back("onlink");
  if (flags & RTNH_F_PERVASIVE) f.push_back("pervasive");
  if (flags & RTNH_F_LINKDOWN) f.push_back("linkdown");
  return f;
}

// The main table's routes of `family`; with `protocol` (RTPROT_*, 0 = all) only that
// protocol's, filtered by the kernel where it checks dump requests strictly (Linux >= 4.20,
// NETLINK_GET_STRICT_CHK: `ip route show proto ...` does the same), else here.
Result<json> dump_routes(Socket& s, int family, uint8_t protocol = 0) {
  auto links = dump_links(s);
  if (!links) return links.error();
  std::map<uint32_t, std::string> names;
  for (const auto& l : *links) names[l["ifindex"].get<uint32_t>()] = l.value("ifname", "");
  auto dev = [&](uint32_t i) {
    auto it = names.find(i);
    return it == names.end() ? "if" + std::to_string(i) : it->second;
  };
  json out = json::array();
  int on = 1;
  const bool strict = protocol != 0 && ::setsockopt(s.fd, SOL_NETLINK, NETLINK_GET_STRICT_CHK,
                                                    &on, sizeof on) == 0;
  auto r = dump<rtmsg>(s, RTM_GETROUTE, static_cast<uint8_t>(family), [&](const nlmsghdr* h) {
    if (h->nlmsg_type != RTM_NEWROUTE) return;
    auto* rt = static_cast<const rtmsg*>(NLMSG_DATA(h));
    if (rt->rtm_family != family || (rt->rtm_flags & RTM_F_CLONED)) return;
    if (protocol != 0 && rt->rtm_protocol != protocol) return;
    auto a = attrs_of(RTM_RTA(rt), static_cast<int>(RTM_PAYLOAD(h)));
    uint32_t table = a.count(RTA_TABLE) ? u32(a[RTA_TABLE]) : rt->rtm_table;
    if (table != RT_TABLE_MAIN) return;
    json j;
    if (rt->rtm_type != RTN_UNICAST) j["type"] = route_type_name(rt->rtm_type);
    int host_len = family == AF_INET ? 32 : 128;
    if (a.count(RTA_DST)) {
      std::string d = addr_text(family, RTA_DATA(a[RTA_DST]));
      j["dst"] = rt->rtm_dst_len == host_len ? d : d + "/" + std::to_string(rt->rtm_dst_len);
    } else {
      j["dst"] = rt->rtm_dst_len ? "0/" + std::to_string(rt->rtm_dst_len) : "default";
    }
    put_gateway(j, family, a);
    if (a.count(RTA_OIF)) j["dev"] = dev(u32(a[RTA_OIF]));
    // iproute2 leaves out the default protocol (boot), as it leaves out the unicast type.
    if (rt->rtm_protocol != RTPROT_BOOT) j["protocol"] = protocol_name(rt->rtm_protocol);
    if (rt->rtm_scope != RT_SCOPE_UNIVERSE) j["scope"] = scope_name(rt->rtm_scope);
    if (a.count(RTA_PRIORITY)) j["metric"] = u32(a[RTA_PRIORITY]);
    if (a.count(RTA_PREFSRC)) j["prefsrc"] = addr_text(family, RTA_DATA(a[RTA_PREFSRC]));
    j["flags"] = nexthop_flags(rt->rtm_flags);
    if (auto mp = a.find(RTA_MULTIPATH); mp != a.end()) {
      json hops = json::array();
      auto* nh = static_cast<const rtnexthop*>(RTA_DATA(mp->second));
      int len = static_cast<int>(RTA_PAYLOAD(mp->second));
      for (; RTNH_OK(nh, len); len -= NLMSG_ALIGN(nh->rtnh_len), nh = RTNH_NEXT(nh)) {
        json hop;
        auto na = attrs_of(RTNH_DATA(nh),
                           static_cast<int>(nh->rtnh_len) - static_cast<int>(sizeof(rtnexthop)));
        put_gateway(hop, family, na);
        hop["dev"] = dev(static_cast<uint32_t>(nh->rtnh_ifindex));
        hop["weight"] = nh->rtnh_hops + 1;
        hop["flags"] = nexthop_flags(nh->rtnh_flags);
        hops.push_back(std::move(hop));
      }
      j["nexthops"] = std::move(hops);
    }
    out.push_back(std::move(j));
  }, [&](rtmsg& m) {
    if (!strict) return;
    m.rtm_table = RT_TABLE_MAIN;
    m.rtm_protocol = protocol;
  });
  if (!r) return r.error();
  return ok(std::move(out));
}

// One dump (`read`) over a netlink socket of its own, inside `netns`.
Result<json> dump_in_netns(const std::string& netns,
                           const std::function<Result<json>(Socket&)>& read) {
  json result;
  auto r = run_in_netns(netns, [&]() -> Result<void> {
    Socket s;
    if (auto o = open_socket(s); !o) return o;
    auto j = read(s);
    if (!j) return j.error();
    result = std::move(*j);
    return {};
  });
  if (!r) return r.error().with_context("netns " + netns);
  return ok(std::move(result));
}

}  // namespace

Result<json> kernel_json(const std::string& netns, KernelTable what) {
  return dump_in_netns(netns, [what](Socket& s) -> Result<json> {
    Result<json> j = harness_error("unknown table");
    switch (what) {
      case KernelTable::kLinks:
        j = dump_links(s);
        break;
      case KernelTable::kAddresses:
        j = dump_addresses(s);
        break;
      case KernelTable::kRoutes4:
        j = dump_routes(s, AF_INET);
        break;
      case KernelTable::kRoutes6:
        j = dump_routes(s, AF_INET6);
        break;
    }
    return j;
  });
}

Result<json> kernel_routes(const std::string& netns, int family, int protocol) {
  return dump_in_netns(netns, [&](Socket& s) {
    return dump_routes(s, family, static_cast<uint8_t>(protocol));
  });
}

Result<void> set_links_up(const std::vector<std::string>& ifnames) {
  if (ifnames.empty()) return {};
  Socket s;
  if (auto o = open_socket(s); !o) return o;
  for (const auto& name : ifnames) {
    if (name.size() >= IFNAMSIZ) return harness_error("interface name too long: " + name);
    Request<ifinfomsg> r{};
    r.h.nlmsg_type = RTM_NEWLINK;
    r.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
    r.m.ifi_family = AF_UNSPEC;
    r.m.ifi_change = IFF_UP;
    r.m.ifi_flags = IFF_UP;
    auto* a = reinterpret_cast<rtattr*>(r.attrs);
    a->rta_type = IFLA_IFNAME;
    a->rta_len = static_cast<unsigned short>(RTA_LENGTH(name.size() + 1));
    std::memcpy(RTA_DATA(a), name.c_str(), name.size() + 1);
    r.h.nlmsg_len = NLMSG_LENGTH(sizeof(ifinfomsg)) + RTA_ALIGN(a->rta_len);
    if (auto t = transact(s, &r.h, [](const nlmsghdr*) {}); !t)
      return t.error().with_context("setting " + name + " up");
  }
  return {};
}

Result<void> append_link_local_route(int ifindex, const std::string& ifname) {
  if (ifindex <= 0) return harness_error("no interface index for " + ifname);
  Socket s;
  if (auto o = open_socket(s); !o) return o;
  Request<rtmsg> r{};
  r.h.nlmsg_type = RTM_NEWROUTE;
  r.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_APPEND;
  r.m.rtm_family = AF_INET6;
  r.m.rtm_dst_len = 64;
  r.m.rtm_table = RT_TABLE_MAIN;
  r.m.rtm_protocol = RTPROT_KERNEL;
  r.m.rtm_scope = RT_SCOPE_UNIVERSE;
  r.m.rtm_type = RTN_UNICAST;
  size_t off = 0;
  auto put = [&](unsigned short type, const void* data, size_t len) {
    auto* a = reinterpret_cast<rtattr*>(r.attrs + off);
    a->rta_type = type;
    a->rta_len = static_cast<unsigned short>(RTA_LENGTH(len));
    std::memcpy(RTA_DATA(a), data, len);
    off += RTA_ALIGN(a->rta_len);
  };
  in6_addr dst{};
  dst.s6_addr[0] = 0xfe;
  dst.s6_addr[1] = 0x80;
  uint32_t oif = static_cast<uint32_t>(ifindex), metric = 256;
  put(RTA_DST, &dst, sizeof dst);
  put(RTA_OIF, &oif, sizeof oif);
  put(RTA_PRIORITY, &metric, sizeof metric);
  r.h.nlmsg_len = static_cast<uint32_t>(NLMSG_LENGTH(sizeof(rtmsg)) + off);
  int refused = 0;
  if (auto t = transact(s, &r.h, [](const nlmsghdr*) {}, &refused); !t) {
    // The kernel put it back meanwhile (addrconf): the same route on the same port is refused.
    if (refused == EEXIST) return {};
    return t.error().with_context("adding fe80::/64 dev " + ifname);
  }
  return {};
}

}  // namespace twin::runtime
