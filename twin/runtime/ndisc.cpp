#include "twin/runtime/ndisc.hpp"

#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace twin::runtime {

std::array<uint8_t, 8> router_solicitation() {
  return {133, 0, 0, 0, 0, 0, 0, 0};
}

Result<int> solicit_routers(const std::vector<std::string>& ifnames) {
  if (ifnames.empty()) return 0;
  const int fd = ::socket(AF_INET6, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMPV6);
  if (fd < 0) return env_error(std::string("raw ICMPv6 socket: ") + std::strerror(errno));
  const int hops = 255;
  const int loop = 0;
  if (::setsockopt(fd, IPPROTO_IPV6, IPV6_MULTICAST_HOPS, &hops, sizeof hops) != 0 ||
      ::setsockopt(fd, IPPROTO_IPV6, IPV6_MULTICAST_LOOP, &loop, sizeof loop) != 0) {
    const int e = errno;
    ::close(fd);
    return harness_error(std::string("router solicitation socket options: ") + std::strerror(e));
  }
  const auto msg = router_solicitation();
  int sent = 0;
  for (const auto& name : ifnames) {
    const unsigned ifindex = ::if_nametoindex(name.c_str());
    if (ifindex == 0) continue;
    sockaddr_in6 to{};
    to.sin6_family = AF_INET6;
    to.sin6_addr.s6_addr[0] = 0xff;  // ff02::2, all routers (RFC 4291 2.7.1)
    to.sin6_addr.s6_addr[1] = 0x02;
    to.sin6_addr.s6_addr[15] = 0x02;
    to.sin6_scope_id = ifindex;  // a link-local scope multicast: the interface is the scope
    const int idx = static_cast<int>(ifindex);
    if (::setsockopt(fd, IPPROTO_IPV6, IPV6_MULTICAST_IF, &idx, sizeof idx) != 0) continue;
    if (::sendto(fd, msg.data(), msg.size(), 0, reinterpret_cast<const sockaddr*>(&to),
                 sizeof to) == static_cast<ssize_t>(msg.size()))
      ++sent;
  }
  ::close(fd);
  return sent;
}

}  // namespace twin::runtime
