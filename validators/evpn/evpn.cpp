#include "validators/evpn/evpn.hpp"

#include <algorithm>
#include <set>

#include "twin/core/diagnostics.hpp"
#include "twin/core/util.hpp"

namespace twin::validators {

using validate::make_result;
using validate::Status;
using validate::TestResult;

namespace {

constexpr const char* kFamily = "evpn";

// A server of a tenant network, where it is attached.
struct Attachment {
  const plan::Node* server = nullptr;
  const plan::Node* leaf = nullptr;
  const plan::Vni* vni = nullptr;
  std::string mac;     // the server's port MAC
  std::string port;    // the leaf's port
  bool up = true;      // both ends intended up
};

std::vector<Attachment> attachments(const plan::Plan& plan) {
  std::vector<Attachment> out;
  for (const auto& leaf : plan.nodes)
    for (const auto& i : leaf.interfaces) {
      if (!i.vni) continue;
      Attachment a;
      a.leaf = &leaf;
      a.server = plan.find(i.peer_node);
      a.port = i.name;
      a.up = i.up;
      for (const auto& v : leaf.vnis)
        if (v.vni == i.vni) a.vni = &v;
      if (!a.server || !a.vni) continue;
      for (const auto& si : a.server->interfaces)
        if (si.name == i.peer_interface) {
          a.mac = si.mac;
          a.up = a.up && si.up;
        }
      out.push_back(a);
    }
  return out;
}

// The sources, as messages name them.
constexpr const char* kSummary = "show bgp l2vpn evpn summary json";
constexpr const char* kVnis = "show evpn vni json";
constexpr const char* kMacs = "show evpn mac vni all json";
constexpr const char* kLinks = "ip -j -d link show";
constexpr const char* kFdb = "bridge -j fdb show";

// The facts' JSON when the probe answered; else, in `why`, what failed: "leaf1: `<command>`
// failed: <error>".
const nlohmann::json* data(const std::optional<Result<nlohmann::json>>& f, const std::string& node,
                           const char* command, std::string* why) {
  if (!f) {
    *why = node + ": `" + command + "` not probed";
    return nullptr;
  }
  if (!*f) {
    *why = validate::source_failed(node, command, f->error().message);
    return nullptr;
  }
  return &**f;
}

// The same for the kernel's lists (`ip -d link`, `bridge fdb`), which are never empty on a
// node that runs (lo; each port's own multicast entries): anything but a non-empty list is a
// read that returned nothing (`ip` printing nothing is read as []).
const nlohmann::json* kernel_list(const std::optional<Result<nlohmann::json>>& f,
                                  const std::string& node, const char* command, std::string* why) {
  const nlohmann::json* j = data(f, node, command, why);
  if (!j) return nullptr;
  if (!j->is_array() || j->empty()) {
    *why = node + ": `" + command + "` returned " + (j->is_array() ? "an empty list" : "no list");
    return nullptr;
  }
  return j;
}

// The neighbor names each end's EVPN summary lists the session under: `s` seen from its peer
// (planner's derive_evpn pairs them the same way), "" when the plan has no such session.
std::string reverse_key(const plan::Plan& plan, const plan::ExpectedSession& s) {
  const plan::Node* n = plan.find(s.node);
  std::string peer_if;
  if (n)
    for (const auto& i : n->interfaces)
      if (i.name == s.interface) peer_if = i.peer_interface;
  for (const auto& r : plan.sessions) {
    if (r.node != s.peer_node || r.peer_node != s.node) continue;
    if (s.peer_address.empty() && r.peer_address.empty() && !peer_if.empty() &&
        r.interface == peer_if)
      return r.key();
    if (!s.peer_address.empty() && !r.peer_address.empty()) return r.key();
  }
  return "";
}

std::string joined(const std::set<std::string>& s) {
  std::string out;
  for (const auto& x : s) out += (out.empty() ? "" : ", ") + x;
  return out.empty() ? "none" : out;
}

std::string network_name(const plan::Vni& v) {
  return v.l3() ? "tenant " + v.tenant + "'s L3 VNI" : v.tenant + " " + v.network;
}

// The VNIs' FRR names ("10100") the VTEP has: keys of `show evpn vni json`.
std::map<std::string, const nlohmann::json*> observed_vnis(const nlohmann::json& j) {
  std::map<std::string, const nlohmann::json*> out;
  if (!j.is_object()) return out;
  for (const auto& [k, v] : j.items())
    if (v.is_object()) out[k] = &v;
  return out;
}

void sessions(const plan::Plan& plan, const std::map<std::string, EvpnFacts>& facts,
              std::vector<TestResult>& out) {
  for (const auto& s : plan.sessions) {
    const plan::Node* n = plan.find(s.node);
    const plan::Node* peer = plan.find(s.peer_node);
    if (!n || !peer || !s.evpn) continue;
    auto f = facts.find(s.node);
    std::string why = s.node + ": `" + kSummary + "` not probed";
    const nlohmann::json* sum =
        f == facts.end() ? nullptr : data(f->second.summary, s.node, kSummary, &why);
    // null: bgpd printed nothing (an instance with no l2vpn evpn neighbor prints {}).
    if (sum && sum->is_null()) {
      why = s.node + ": bgpd printed nothing for `" + kSummary + "`";
      sum = nullptr;
    }
    if (!sum) {
      out.push_back(make_result(kFamily, 0, "evpn-session", Status::kError, s.node, s.key(),
                                "l2vpn evpn Established", "no data",
                                "cannot read the EVPN summary: " + why));
      continue;
    }
    const nlohmann::json* p = nullptr;
    if (sum->contains("peers") && (*sum)["peers"].is_object() && (*sum)["peers"].contains(s.key()))
      p = &(*sum)["peers"][s.key()];
    if (!p) {
      out.push_back(make_result(kFamily, 0, "evpn-session", Status::kFailed, s.node, s.key(),
                                "l2vpn evpn Established with " + s.peer_node, "not negotiated",
                                "the session on " + s.key() + " toward " + s.peer_node +
                                    " does not carry l2vpn evpn: EVPN routes do not cross it"));
      continue;
    }
    std::string state = p->value("state", "unknown");
    bool up = state == "Established";
    // One end's summary lists the neighbor once it activates l2vpn evpn itself, negotiated or
    // not (RFC 4760: both must advertise the AFI/SAFI): the other end must list it too. Its
    // summary unread, Established here proves nothing: an error, not a pass.
    const std::string peer_key = reverse_key(plan, s);
    auto pf = facts.find(s.peer_node);
    std::string pwhy = s.peer_node + ": `" + kSummary + "` not probed";
    const nlohmann::json* psum =
        pf == facts.end() ? nullptr : data(pf->second.summary, s.peer_node, kSummary, &pwhy);
    if (psum && !psum->is_object()) {
      pwhy = s.peer_node + ": `" + kSummary + "` returned no object";
      psum = nullptr;
    }
    if (up && (!psum || peer_key.empty())) {
      out.push_back(make_result(
          kFamily, 0, "evpn-session", Status::kError, s.node, s.key(),
          "l2vpn evpn Established with " + s.peer_node,
          state + " here, " + s.peer_node + " unknown",
          "Established on " + s.node + ", but whether " + s.peer_node +
              " activates l2vpn evpn toward it is unknown: " +
              (psum ? "the plan has no session of " + s.peer_node + " toward " + s.node : pwhy)));
      continue;
    }
    bool peer_lists = psum && psum->contains("peers") && (*psum)["peers"].is_object() &&
                      (*psum)["peers"].contains(peer_key);
    if (up && !peer_lists) {
      out.push_back(make_result(kFamily, 0, "evpn-session", Status::kFailed, s.node, s.key(),
                                "l2vpn evpn Established with " + s.peer_node, "not negotiated",
                                s.peer_node + " does not activate l2vpn evpn toward " + s.node +
                                    " (no " + peer_key +
                                    " in its EVPN summary): the session carries no EVPN route "
                                    "either way"));
      continue;
    }
    out.push_back(make_result(kFamily, 0, "evpn-session", up ? Status::kPassed : Status::kFailed,
                              s.node, s.key(), "l2vpn evpn Established with " + s.peer_node,
                              state,
                              up ? "" : "l2vpn evpn toward " + s.peer_node + " is " + state));
  }
}

void vtep_tests(const plan::Plan& plan, const std::map<std::string, EvpnFacts>& facts,
                const std::vector<Attachment>& att, std::vector<TestResult>& out) {
  for (const auto& n : plan.nodes) {
    if (n.vnis.empty()) {
      // No tenant makes this router a VTEP (a spine): any VXLAN device it has is stray (its
      // zebra, without advertise-all-vni, does not even list it). Read from the kernel of each
      // router with BGP (EvpnValidator::run probes them): one that could not be read is an
      // error, one with no VXLAN device a pass.
      if (!plan::has_bgp_instance(n)) continue;
      auto f = facts.find(n.name);
      std::string why = n.name + ": `" + kLinks + "` not probed";
      const nlohmann::json* lj =
          f == facts.end() ? nullptr : kernel_list(f->second.links, n.name, kLinks, &why);
      if (!lj) {
        out.push_back(make_result(kFamily, 1, "vni-present", Status::kError, n.name, "",
                                  "no VNI on " + n.name + " (no tenant port)", "no data",
                                  "cannot look for stray VNIs: " + why));
        continue;
      }
      bool stray = false;
      for (const auto& l : *lj) {
        if (!l.is_object()) continue;
        const auto li = l.value("linkinfo", nlohmann::json::object());
        if (li.value("info_kind", "") != "vxlan") continue;
        std::string dev = l.value("ifname", "");
        const auto data_of = li.value("info_data", nlohmann::json::object());
        std::string key = std::to_string(data_of.value("id", 0));
        stray = true;
        out.push_back(make_result(
            kFamily, 1, "vni-present", Status::kFailed, n.name, "VNI " + key,
            "no VNI on " + n.name + " (no tenant port)", "present on " + dev,
            "VNI " + key + " is on " + n.name + " (" + dev +
                "), which no tenant network makes a VTEP: a stray VNI"));
      }
      if (!stray)
        out.push_back(make_result(kFamily, 1, "vni-present", Status::kPassed, n.name, "",
                                  "no VNI on " + n.name + " (no tenant port)", "none", ""));
      continue;
    }
    auto f = facts.find(n.name);
    static const EvpnFacts kNone;
    const EvpnFacts& fx = f == facts.end() ? kNone : f->second;
    std::string why;

    // 1 vni-present
    const nlohmann::json* vj = data(fx.vnis, n.name, kVnis, &why);
    std::map<std::string, const nlohmann::json*> have;
    if (!vj) {
      out.push_back(make_result(kFamily, 1, "vni-present", Status::kError, n.name, "", "its VNIs",
                                "no data", "cannot read the VNIs: " + why));
    } else if (vj->is_null()) {
      // zebra printed nothing: EVPN is off there, so it knows no VNI at all.
      for (const auto& v : n.vnis)
        out.push_back(make_result(
            kFamily, 1, "vni-present", Status::kFailed, n.name, "VNI " + std::to_string(v.vni),
            std::string(v.l3() ? "L3" : "L2") + " VNI of " + network_name(v), "EVPN off",
            "EVPN is off in " + n.name + "'s zebra: it knows no VNI, so VNI " +
                std::to_string(v.vni) + " (" + network_name(v) +
                ") is not advertised (no `advertise-all-vni` under its BGP's l2vpn evpn?)"));
    } else {
      have = observed_vnis(*vj);
      std::set<std::string> want;
      for (const auto& v : n.vnis) {
        std::string key = std::to_string(v.vni);
        want.insert(key);
        auto it = have.find(key);
        std::string type = it == have.end() ? "" : it->second->value("type", "");
        bool ok = it != have.end() && type == (v.l3() ? "L3" : "L2");
        out.push_back(make_result(
            kFamily, 1, "vni-present", ok ? Status::kPassed : Status::kFailed, n.name,
            "VNI " + key, std::string(v.l3() ? "L3" : "L2") + " VNI of " + network_name(v),
            it == have.end() ? "missing" : type,
            ok ? ""
               : it == have.end() ? "VNI " + key + " (" + network_name(v) + ") is not on " +
                                        n.name + ": its servers there are cut off from the rest "
                                        "of the network"
                                  : "VNI " + key + " is " + type + " on " + n.name));
      }
      for (const auto& [key, v] : have)
        if (!want.count(key)) {
          std::string dev = v->value("vxlanIf", "");
          out.push_back(make_result(
              kFamily, 1, "vni-present", Status::kFailed, n.name, "VNI " + key,
              "no VNI " + key + " on " + n.name, "present" + (dev.empty() ? "" : " on " + dev),
              "VNI " + key + " is on " + n.name + (dev.empty() ? "" : " (" + dev + ")") +
                  ", but no tenant network puts it there: a mistyped or stray VNI"));
        }
    }

    // 2 flood-list and 3 mac-learned: per L2 VNI of this VTEP. Zebra's word is half of each:
    // the kernel FDB unread, a test zebra passes is an error, never a pass.
    std::string fdb_why;
    const nlohmann::json* fdb = kernel_list(fx.fdb, n.name, kFdb, &fdb_why);
    std::string mac_why;
    const nlohmann::json* macs = data(fx.macs, n.name, kMacs, &mac_why);
    // The FDB entries of one VXLAN device (entries that are not objects are skipped).
    auto fdb_of = [&](const std::string& dev) {
      std::vector<const nlohmann::json*> es;
      if (fdb)
        for (const auto& e : *fdb)
          if (e.is_object() && e.value("ifname", "") == dev) es.push_back(&e);
      return es;
    };
    for (const auto& v : n.vnis) {
      if (v.l3()) continue;
      const std::string key = std::to_string(v.vni);
      std::set<std::string> want_remote;
      for (const auto& a : att)
        if (a.vni->vni == v.vni && a.leaf != &n && a.up) want_remote.insert(a.vni->local);
      const auto vx_fdb = fdb_of(v.vxlan);
      if (!vj) {
        out.push_back(make_result(kFamily, 2, "flood-list", Status::kError, n.name, "VNI " + key,
                                  joined(want_remote), "no data",
                                  "cannot read zebra's remote VTEPs: " + why));
      } else {
        std::set<std::string> got;
        if (auto it = have.find(key); it != have.end() && it->second->contains("remoteVteps"))
          for (const auto& r : (*it->second)["remoteVteps"])
            if (r.is_string()) got.insert(r.get<std::string>());
        std::set<std::string> kernel;
        for (const auto* e : vx_fdb)
          if (e->value("mac", "") == "00:00:00:00:00:00" && e->contains("dst"))
            kernel.insert(e->value("dst", ""));
        Status st = Status::kPassed;
        std::string msg;
        if (got != want_remote) {
          st = Status::kFailed;
          msg = "remote VTEPs of VNI " + key + " on " + n.name + " are " + joined(got) +
                ", expected " + joined(want_remote) +
                " (EVPN type 3: BUM traffic of the network reaches only those)";
        } else if (!fdb) {
          st = Status::kError;
          msg = "zebra has the remote VTEPs of VNI " + key +
                ", but whether the kernel floods to them is unknown: " + fdb_why;
        } else if (kernel != want_remote) {
          st = Status::kFailed;
          msg = "zebra has the remote VTEPs, but the kernel floods VNI " + key + " to " +
                joined(kernel) + " (FDB of " + v.vxlan + ")";
        }
        out.push_back(make_result(kFamily, 2, "flood-list", st, n.name, "VNI " + key,
                                  joined(want_remote), joined(got), msg));
      }
      for (const auto& a : att) {
        if (a.vni->vni != v.vni || a.leaf == &n || !a.up) continue;
        const std::string subject = "VNI " + key + " " + a.server->name;
        if (!macs) {
          out.push_back(make_result(kFamily, 3, "mac-learned", Status::kError, n.name, subject,
                                    a.mac + " via " + a.vni->local, "no data",
                                    "cannot read zebra's MACs: " + mac_why));
          continue;
        }
        std::string observed = "missing";
        bool in_zebra = false;
        if (macs->contains(key) && (*macs)[key].contains("macs") &&
            (*macs)[key]["macs"].contains(a.mac)) {
          const auto& m = (*macs)[key]["macs"][a.mac];
          std::string type = m.value("type", "");
          observed = type == "remote" ? "remote via " + m.value("remoteVtep", "?") : type;
          in_zebra = type == "remote" && m.value("remoteVtep", "") == a.vni->local;
        }
        bool in_kernel = false;
        for (const auto* e : vx_fdb)
          if (e->value("mac", "") == a.mac && e->value("dst", "") == a.vni->local) in_kernel = true;
        Status st = Status::kPassed;
        std::string msg;
        std::string seen = observed;
        if (!in_zebra) {
          st = Status::kFailed;
          msg = a.server->name + "'s MAC " + a.mac + " (behind " + a.leaf->name + ":" + a.port +
                ") is " + observed + " in VNI " + key + " on " + n.name + ", expected remote via " +
                a.vni->local + " (EVPN type 2)";
        } else if (!fdb) {
          st = Status::kError;
          seen = observed + ", FDB unknown";
          msg = "zebra knows " + a.server->name + "'s MAC " + a.mac +
                ", but whether the kernel installed it is unknown: " + fdb_why;
        } else if (!in_kernel) {
          st = Status::kFailed;
          seen = observed + ", not in the FDB";
          msg = "zebra knows " + a.server->name + "'s MAC " + a.mac + ", but the kernel FDB of " +
                v.vxlan + " has no entry toward " + a.vni->local;
        }
        out.push_back(make_result(kFamily, 3, "mac-learned", st, n.name, subject,
                                  "remote via " + a.vni->local, seen, msg));
      }
    }

    // 4 vni-bridge
    std::string link_why;
    const nlohmann::json* links = kernel_list(fx.links, n.name, kLinks, &link_why);
    if (!links) {
      out.push_back(make_result(kFamily, 4, "vni-bridge", Status::kError, n.name, "",
                                "its VXLAN devices and bridges", "no data",
                                "cannot read the devices: " + link_why));
      continue;
    }
    std::map<std::string, const nlohmann::json*> dev;
    for (const auto& l : *links)
      if (l.is_object() && l.contains("ifname")) dev[l.value("ifname", "")] = &l;
    // Which bridge (and so which network) each device is in, to name a port's real network.
    std::map<std::string, const plan::Vni*> by_bridge;
    for (const auto& v : n.vnis) by_bridge[v.bridge] = &v;
    for (const auto& v : n.vnis) {
      const std::string subject = "VNI " + std::to_string(v.vni);
      std::vector<std::string> wrong;
      auto vx = dev.find(v.vxlan);
      if (vx == dev.end()) {
        wrong.push_back("no VXLAN device " + v.vxlan);
      } else {
        const auto& info = (*vx->second)["linkinfo"];
        long id = info.contains("info_data") ? info["info_data"].value("id", -1L) : -1L;
        if (info.value("info_kind", "") != "vxlan" || id != static_cast<long>(v.vni))
          wrong.push_back(v.vxlan + " carries VNI " + std::to_string(id));
        if (vx->second->value("master", "") != v.bridge)
          wrong.push_back(v.vxlan + " is in " + vx->second->value("master", "no bridge") +
                          ", expected " + v.bridge);
      }
      for (const auto& p : v.ports) {
        auto pd = dev.find(p);
        std::string master = pd == dev.end() ? "" : pd->second->value("master", "");
        if (master == v.bridge) continue;
        std::string where = master.empty() ? "in no bridge" : "in " + master;
        if (auto other = by_bridge.find(master); other != by_bridge.end())
          where += " (VNI " + std::to_string(other->second->vni) + ", " +
                   network_name(*other->second) + ")";
        wrong.push_back(p + " is " + where + ", expected " + v.bridge);
      }
      bool ok = wrong.empty();
      std::string observed;
      for (const auto& w : wrong) observed += (observed.empty() ? "" : "; ") + w;
      out.push_back(make_result(kFamily, 4, "vni-bridge", ok ? Status::kPassed : Status::kFailed,
                                n.name, subject,
                                v.vxlan + " (VNI " + std::to_string(v.vni) + ") and " +
                                    (v.ports.empty() ? std::string("no port")
                                                     : join_names(v.ports)) +
                                    " in " + v.bridge,
                                ok ? "as planned" : observed,
                                ok ? "" : "VNI " + std::to_string(v.vni) + " (" +
                                              network_name(v) + ") on " + n.name + ": " + observed));
    }
  }
}

}  // namespace

std::vector<TestResult> evaluate_evpn(const plan::Plan& plan,
                                      const std::map<std::string, EvpnFacts>& facts) {
  std::vector<TestResult> out;
  if (plan.tenants.empty()) return out;
  sessions(plan, facts, out);
  vtep_tests(plan, facts, attachments(plan), out);
  return out;
}

std::vector<validate::PingProbe> overlay_mtu_probes(const plan::Plan& plan) {
  std::vector<validate::PingProbe> out;
  auto att = attachments(plan);
  for (const auto& a : att)
    for (const auto& b : att) {
      if (a.vni->vni != b.vni->vni || a.leaf == b.leaf || !a.up || !b.up) continue;
      // The servers' MTU: the smaller of the two access ports, which the underlay must carry
      // whole with the VXLAN header.
      int mtu = std::min(a.vni->mtu, b.vni->mtu);
      const plan::Interface* bi = nullptr;
      for (const auto& i : b.server->interfaces)
        if (i.peer_node == b.leaf->name) bi = &i;
      if (!bi) continue;
      for (const auto& addr : bi->addresses) {
        if (validate::is_ipv6(addr)) continue;
        validate::PingProbe p;
        p.test = 5;
        p.test_name = "overlay-mtu";
        p.node = a.server->name;
        p.subject = b.server->name + " " + validate::address_of(addr) + " (VNI " +
                    std::to_string(b.vni->vni) + ")";
        p.expected = "reply with DF at " + std::to_string(mtu) + " bytes";
        p.request.destination = validate::address_of(addr);
        p.request.dont_fragment = true;
        p.request.payload_bytes = mtu - 28;
        p.request.count = 2;
        p.request.timeout = std::chrono::milliseconds(1500);
        out.push_back(std::move(p));
      }
    }
  return out;
}

std::vector<TestResult> EvpnValidator::run(validate::Context& ctx) {
  if (ctx.plan.tenants.empty()) return {};
  // The pings first: a VTEP learns a server's MAC (and EVPN advertises it) only once the server
  // has sent a frame, so the servers speak before their MACs are looked for.
  auto pings = validate::run_ping_probes(ctx, kFamily, overlay_mtu_probes(ctx.plan));
  std::vector<const plan::Node*> nodes;
  for (const auto& n : ctx.plan.nodes)
    if (plan::has_bgp_instance(n) || !n.vnis.empty()) nodes.push_back(&n);
  std::vector<EvpnFacts> got(nodes.size());
  validate::parallel_for(nodes.size(), ctx.parallel, [&](size_t i) {
    const plan::Node& n = *nodes[i];
    if (plan::has_bgp_instance(n))
      got[i].summary = ctx.probe.frr_json(n, "bgpd", "show bgp l2vpn evpn summary json");
    got[i].links = ctx.probe.ip_json(n, {"-d", "link", "show"});  // (stray VNIs too)
    if (n.vnis.empty()) return;
    got[i].vnis = ctx.probe.frr_json(n, "zebra", "show evpn vni json");
    got[i].macs = ctx.probe.frr_json(n, "zebra", "show evpn mac vni all json");
    got[i].fdb = ctx.probe.ip_json(n, {"fdb", "show"});
  });
  std::map<std::string, EvpnFacts> facts;
  for (size_t i = 0; i < nodes.size(); ++i) facts.emplace(nodes[i]->name, std::move(got[i]));
  auto out = evaluate_evpn(ctx.plan, facts);
  out.insert(out.end(), pings.begin(), pings.end());
  return out;
}

}  // namespace twin::validators
