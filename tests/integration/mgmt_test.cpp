// The management network and the orchestrator's path, for real (root, FRR, Debian's openssh and
// ansible; issue 48): topologies/clos-2x4-mgmt.yaml gives every router mgmt0 and an sshd whose
// login lands in its vtysh. ssh and Ansible's frr.frr collection drive the lab through the
// inventory twin writes; `twin apply --run` gates real playbooks: one that adds a saved policy
// is approved (and survives the restart check), one that shuts a spine's sessions is rejected
// and rolled back, one whose line FRR refuses fails although Ansible says ok, one that hangs is
// stopped, one that is not found fails. `down` leaves nothing: no namespace, veth, nftables
// table or process.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/integration/cli_support.hpp"
#include "twin/core/util.hpp"
#include "twin/plan/plan.hpp"
#include "twin/runtime/agent.hpp"

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

struct MgmtLabDef {
  static constexpr const char* kTopology = "clos-2x4-mgmt.yaml";
  static constexpr const char* kTag = "mgmt";
};

const std::string kPlaybooks = twin_it::kRepo + "/tests/data/mgmt";

// Debian's ansible-playbook under Debian's Python (a python3 earlier on PATH may lack its
// modules), quiet about paramiko standing in for ansible-pylibssh.
std::string playbook(const std::string& file) {
  return "ANSIBLE_DEPRECATION_WARNINGS=0 /usr/bin/python3 /usr/bin/ansible-playbook -i "
         "$TWIN_INVENTORY " +
         kPlaybooks + "/" + file;
}

// `twin apply --run` of `command` on the lab, its JSON report.
json apply_run(const std::string& lab, const std::string& command, const std::string& extra = "") {
  auto r = twin_it::twin("apply --lab " + lab + " --json " + extra + " --run '" + command + "'");
  auto j = json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << r.out << r.err;
  return j.is_discarded() ? json::object() : j;
}

}  // namespace

class MgmtLab : public twin_it::SharedLabSuite<MgmtLabDef> {
 protected:
  void SetUp() override {
    SharedLabSuite::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (!fs::exists("/usr/sbin/sshd") || !fs::exists("/usr/bin/ansible-playbook"))
      FAIL() << "openssh-server or ansible missing: tools/install-deps.sh installs them";
    auto st = twin_it::twin("status --lab " + lab() + " --json");
    status_ = json::parse(st.out, nullptr, false);
    ASSERT_FALSE(status_.is_discarded()) << st.out << st.err;
    key_ = status_["mgmt"].value("key", "");
    ssh_config_ = fs::path(key_).parent_path().string() + "/ssh_config";
  }
  static const std::string& lab() { return shared_.lab; }
  std::string address(const std::string& node) const {
    for (const auto& n : status_["nodes"])
      if (n["name"] == node) {
        std::string a = n.value("mgmt_address", "");
        return a.substr(0, a.find('/'));
      }
    return "";
  }
  twin_it::CmdResult ssh(const std::string& node, const std::string& command) const {
    return twin_it::sh("ssh -F " + ssh_config_ + " -o BatchMode=yes " + node + " '" + command + "'");
  }
  json status_;
  std::string key_, ssh_config_;
};

TEST_F(MgmtLab, EveryRouterHasAStableAddressAndSshLandsInItsVtysh) {
  const json& m = status_["mgmt"];
  EXPECT_EQ(m.value("interface", ""), "mgmt0");
  EXPECT_EQ(m.value("user", ""), "admin");
  ASSERT_FALSE(address("leaf1").empty());
  EXPECT_EQ(address("server1"), "");  // hosts are not on it
  // The key is the lab's, readable by root only.
  EXPECT_EQ(fs::status(key_).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
  // A command: vtysh's answer and its exit status, the node's own name.
  auto r = ssh("leaf1", "show bgp summary json");
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  EXPECT_EQ(j["ipv4Unicast"]["as"], 65101);
  EXPECT_EQ(j["ipv4Unicast"]["peerCount"], 2);
  auto bad = ssh("spine2", "show no-such-thing");
  EXPECT_NE(bad.code, 0);
  EXPECT_NE((bad.out + bad.err).find("Unknown command"), std::string::npos) << bad.out << bad.err;
  // An interactive session (a terminal) lands at the node's prompt.
  auto tty = twin_it::sh("printf 'show version\\nexit\\n' | timeout 20 ssh -tt -F " + ssh_config_ +
                         " spine1");
  EXPECT_NE(tty.out.find("spine1# "), std::string::npos) << tty.out << tty.err;
  // sshd listens on the management address only, and the management subnet reaches no port of
  // the fabric: the routers' routing tables know it only as connected on mgmt0.
  auto ss = twin_it::sh("ip netns exec tw-" + lab() + "-leaf1 ss -Hltn 'sport = :22'");
  EXPECT_NE(ss.out.find(address("leaf1") + ":22"), std::string::npos) << ss.out;
  EXPECT_EQ(ss.out.find("0.0.0.0:22"), std::string::npos) << ss.out;
  auto routes = twin_it::sh("ip netns exec tw-" + lab() + "-leaf2 ip -j route show dev mgmt0");
  auto rj = json::parse(routes.out, nullptr, false);
  ASSERT_TRUE(rj.is_array()) << routes.out;
  ASSERT_EQ(rj.size(), 1u) << routes.out;
  EXPECT_EQ(rj[0].value("protocol", ""), "kernel");  // connected only
  // The data plane reaches no management address: not through a router (which forwards
  // nothing into mgmt0), not on the router (which answers for it on mgmt0 only).
  for (const char* n : {"leaf1", "leaf4", "spine1"}) {
    auto ping = twin_it::sh("ip netns exec tw-" + lab() + "-server1 ping -c1 -W1 " + address(n));
    EXPECT_NE(ping.code, 0) << n << " " << address(n) << " answered server1: " << ping.out;
  }
  // No router announces it: another router knows it as its own connected route only.
  auto spine = twin_it::sh("ip netns exec tw-" + lab() + "-spine1 ip -j route");
  auto sj = json::parse(spine.out, nullptr, false);
  ASSERT_TRUE(sj.is_array()) << spine.out;
  for (const auto& r : sj) {
    if (r.value("dst", "") != m.value("subnet", "?")) continue;
    EXPECT_EQ(r.value("dev", "") + " " + r.value("protocol", ""), "mgmt0 kernel") << r.dump();
  }
}

TEST_F(MgmtLab, TheInventoryDrivesAnsiblesFrrCollection) {
  auto inv = twin_it::twin("inventory " + lab() + " -f ansible");
  ASSERT_EQ(inv.code, 0) << inv.err;
  EXPECT_NE(inv.out.find("    spines:\n"), std::string::npos) << inv.out;
  EXPECT_NE(inv.out.find("    leaves:\n"), std::string::npos) << inv.out;
  EXPECT_NE(inv.out.find("ansible_network_os: frr.frr.frr"), std::string::npos);
  const std::string file = "/tmp/" + lab() + "-inventory.yml";
  ASSERT_EQ(twin_it::twin("inventory " + lab() + " -o " + file).code, 0);
  auto r = twin_it::sh("ANSIBLE_DEPRECATION_WARNINGS=0 /usr/bin/python3 "
                       "/usr/bin/ansible-playbook -i " +
                       file + " " + kPlaybooks + "/facts.yml");
  fs::remove(file);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  for (const char* n : {"spine1", "spine2", "leaf1", "leaf4"})
    EXPECT_NE(r.out.find(std::string(n) + " is " + n + " running FRR 8.4"), std::string::npos)
        << n << "\n"
        << r.out;
  // ssh_config: `ssh -F` with the lab's host keys checked.
  auto cfg = twin_it::twin("inventory " + lab() + " -f ssh-config");
  EXPECT_NE(cfg.out.find("StrictHostKeyChecking yes"), std::string::npos) << cfg.out;
}

TEST_F(MgmtLab, APlaybookThatAddsASavedPolicyIsApprovedAndSurvivesARestart) {
  json j = apply_run(lab(), playbook("policy.yml"), "--restart-check");
  ASSERT_EQ(j.value("verdict", ""), "approve") << j.dump(2).substr(0, 4000);
  ASSERT_EQ(j["steps"].size(), 1u);
  const std::string detail = j["steps"][0].value("detail", "");
  EXPECT_NE(detail.find("running config changed on leaf1, leaf2, leaf3, leaf4"), std::string::npos)
      << detail;
  EXPECT_NE(detail.find("saved on leaf1, leaf2, leaf3, leaf4"), std::string::npos) << detail;
  const std::string text = j["steps"][0].value("text", "");
  EXPECT_NE(text.find("+++ leaf2 after"), std::string::npos) << text;
  EXPECT_NE(text.find("+route-map FROM-FABRIC permit 10"), std::string::npos) << text;
  // The restart booted what the leaves saved, and it held.
  EXPECT_EQ(j["restart_check"].value("ok", false), true) << j["restart_check"].dump();
  auto saved = twin_it::sh("cat /run/twin/" + lab() + "/leaf3/frr.conf");
  EXPECT_NE(saved.out.find("neighbor fabric route-map FROM-FABRIC in"), std::string::npos);
}

TEST_F(MgmtLab, APlaybookThatShutsASpineIsRejectedAndRolledBackRunningAndSaved) {
  const std::string saved_before = twin_it::sh("cat /run/twin/" + lab() + "/spine1/frr.conf").out;
  json j = apply_run(lab(), playbook("shut-spine.yml"));
  ASSERT_EQ(j.value("verdict", ""), "reject") << j.dump(2).substr(0, 4000);
  bool lost = false;
  for (const auto& c : j["diff"])
    if (c.value("category", "") == "session-lost") lost = true;
  EXPECT_TRUE(lost) << j["diff"].dump();
  EXPECT_TRUE(j.value("rollback_ok", false)) << j.value("rollback_detail", "");
  EXPECT_NE(j.value("rollback_detail", "").find("saved config restored on spine1"),
            std::string::npos)
      << j.value("rollback_detail", "");
  // Running and saved: both as before the run.
  auto running = ssh("spine1", "show running-config");
  EXPECT_EQ(running.out.find("neighbor fabric shutdown"), std::string::npos) << running.out;
  EXPECT_EQ(twin_it::sh("cat /run/twin/" + lab() + "/spine1/frr.conf").out, saved_before);
}

TEST_F(MgmtLab, ALineFrrRefusesFailsTheRunWhateverAnsibleSays) {
  json j = apply_run(lab(), playbook("malformed.yml"));
  ASSERT_EQ(j.value("verdict", ""), "reject") << j.dump(2).substr(0, 4000);
  const std::string reason = j["reasons"][0].value("message", "");
  EXPECT_EQ(j["reasons"][0].value("category", ""), "step-failed");
  EXPECT_NE(reason.find("leaf1: `set community 70000:1`: Malformed communities attribute"),
            std::string::npos)
      << reason;
  EXPECT_NE(reason.find("whatever its exit status (0)"), std::string::npos) << reason;
  EXPECT_TRUE(j.value("rollback_ok", false)) << j.value("rollback_detail", "");
}

TEST_F(MgmtLab, ARunThatHangsIsStoppedAndOneNotFoundFails) {
  json hung = apply_run(lab(), "sleep 300", "--run-timeout 2s");
  ASSERT_EQ(hung.value("verdict", ""), "reject") << hung.dump(2).substr(0, 3000);
  EXPECT_NE(hung["reasons"][0].value("message", "").find(
                "the run did not finish within 2 s (--run-timeout): stopped"),
            std::string::npos)
      << hung["reasons"].dump();
  // Nothing of it is left: its cgroup went with it.
  auto left = twin_it::sh("ls -d /sys/fs/cgroup/*/twin/" + lab() + "/run-* /sys/fs/cgroup/twin/" +
                          lab() + "/run-* 2>/dev/null");
  EXPECT_EQ(left.out, "");
  json missing = apply_run(lab(), "no-such-orchestrator --go");
  ASSERT_EQ(missing.value("verdict", ""), "reject");
  EXPECT_NE(missing["reasons"][0].value("message", "").find("not found (exit 127)"),
            std::string::npos)
      << missing["reasons"].dump();
  // A bad timeout is refused before anything runs.
  auto bad = twin_it::twin("apply --lab " + lab() + " --run true --run-timeout soon");
  EXPECT_EQ(bad.code, 2) << bad.err;
}

// `twin run` with `change: {run: ...}`: up, the playbook gated (restart check on, as twin run
// does), down; nothing left.
TEST_F(MgmtLab, AScenarioMayGateAPlaybookRun) {
  const std::string lab = twin_it::unique_lab("mgmtrun");
  twin_it::LabGuard guard{lab};
  auto r = twin_it::twin("run " + kPlaybooks + "/scenario-run.yaml --name " + lab + " --json");
  auto j = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out << r.err;
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(j.value("verdict", ""), "approve") << j.dump(2).substr(0, 3000);
  EXPECT_EQ(j["restart_check"].value("ok", false), true);
  EXPECT_NE(j["steps"][0].value("detail", "").find("saved on r1, r2"), std::string::npos)
      << j["steps"][0].dump();
  EXPECT_EQ(twin_it::leftovers(lab), std::vector<std::string>{});
}

// A dead sshd fails the node family and `twin restart NODE` brings it back.
TEST_F(MgmtLab, ADeadSshdIsFoundAndRestartBringsItBack) {
  int pid = 0;
  for (const auto& n : status_["nodes"])
    if (n["name"] == "leaf3")
      for (const auto& d : n["daemons"])
        if (d["name"] == "sshd") pid = d["pid"];
  ASSERT_GT(pid, 0) << status_.dump();
  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  auto v = twin_it::twin("validate --lab " + lab() + " --only node --json --converge-timeout 1");
  EXPECT_NE(v.code, 0);
  EXPECT_NE(v.out.find("sshd"), std::string::npos) << v.out.substr(0, 2000);
  auto r = twin_it::twin("restart --lab " + lab() + " leaf3");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  auto s = ssh("leaf3", "show version");
  EXPECT_EQ(s.code, 0) << s.err;
  EXPECT_EQ(twin_it::twin("validate --lab " + lab() + " --only node").code, 0);
}

// A password the topology gives logs in beside the key (paramiko, as a password-only client
// would); a wrong one is refused; the clear text is nowhere in the lab's files.
TEST(MgmtPassword, APasswordLogsInBesideTheKeyAndOnlyItsHashIsKept) {
  if (!twin_it::root()) TWIN_SKIP_WITHOUT("root", "needs root (twin up)");
  const fs::path dir = fs::temp_directory_path() / ("twin-mgmt-pw-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string lab = twin_it::unique_lab("mgmtpw");
  std::ofstream(dir / "pw.yaml") << "version: 1\nname: pw\nmgmt: {password: \"Tw1n pass\"}\n"
                                    "nodes:\n  r1: {kind: frr, image: frr-8.4, asn: 65001, "
                                    "loopback: 10.255.0.1/32}\n";
  auto up = twin_it::twin("up " + (dir / "pw.yaml").string() + " --name " + lab);
  ASSERT_EQ(up.code, 0) << up.out << up.err;
  auto st = json::parse(twin_it::twin("status --lab " + lab + " --json").out, nullptr, false);
  std::string addr;
  if (!st.is_discarded())
    for (const auto& n : st["nodes"]) addr = n.value("mgmt_address", "");
  addr = addr.substr(0, addr.find('/'));
  EXPECT_FALSE(addr.empty()) << st.dump();
  auto login = [&](const std::string& password) {
    return twin_it::sh(
        "/usr/bin/python3 -c 'import paramiko,sys\n"
        "c=paramiko.SSHClient(); c.set_missing_host_key_policy(paramiko.AutoAddPolicy())\n"
        "c.connect(sys.argv[1], username=\"admin\", password=sys.argv[2], look_for_keys=False, "
        "allow_agent=False, timeout=5)\n"
        "_,o,_=c.exec_command(\"show version\"); print(o.read().decode())' " +
        addr + " '" + password + "'");
  };
  auto good = login("Tw1n pass");
  EXPECT_EQ(good.code, 0) << good.err;
  EXPECT_NE(good.out.find("FRRouting"), std::string::npos) << good.out;
  auto bad = login("Tw1n");
  EXPECT_NE(bad.code, 0);
  EXPECT_NE(bad.err.find("AuthenticationException"), std::string::npos) << bad.err;
  // twin's own SSH client for a NOS VM's guest (runtime guest channel, agent ssh) against this
  // router's sshd: the password through the askpass program, the host key accepted at first
  // contact and kept, the command's output and exit status; a wrong password is ssh's error.
  {
    twin::TempDir run;
    twin::plan::Node n;
    n.name = "r1";
    n.run_dir = run.path;
    n.mgmt_address = addr + "/24";
    n.vm.agent = "ssh";
    n.vm.mgmt_netns = "tw-" + lab + ".mgmt";
    n.vm.ssh_user = "admin";
    n.vm.ssh_password_file = run.path + "/ssh-password";
    ASSERT_TRUE(twin::write_file_mode(n.vm.ssh_password_file, "Tw1n pass\n", 0600));
    ASSERT_TRUE(twin::write_file_mode(twin::runtime::guest_askpass_path(n),
                                      twin::runtime::guest_askpass_script(n), 0700));
    auto v = twin::runtime::guest_exec(n, "show version");
    ASSERT_TRUE(v) << v.error().message;
    EXPECT_EQ(v->exit_code, 0) << v->output;
    EXPECT_NE(v->output.find("FRRouting"), std::string::npos) << v->output;
    auto known = twin::read_file(run.path + "/known_hosts");
    EXPECT_TRUE(known && known->find(addr) != std::string::npos);
    auto j = twin::runtime::guest_exec(n, "show ip route json");
    ASSERT_TRUE(j) << j.error().message;
    EXPECT_TRUE(json::parse(j->output, nullptr, false).contains("10.255.0.1/32")) << j->output;
    auto refused = twin::runtime::guest_exec(n, "show no-such-thing");
    ASSERT_TRUE(refused);
    EXPECT_NE(refused->exit_code, 0);
    ASSERT_TRUE(twin::write_file_mode(n.vm.ssh_password_file, "wrong\n", 0600));
    auto bad_login = twin::runtime::guest_exec(n, "show version");
    ASSERT_FALSE(bad_login);
    EXPECT_NE(bad_login.error().message.find("Permission denied"), std::string::npos)
        << bad_login.error().message;
  }
  auto grep = twin_it::sh("grep -rl 'Tw1n pass' /run/twin/" + lab + " || true");
  EXPECT_EQ(grep.out, "");
  auto down = twin_it::twin("down --lab " + lab);
  EXPECT_EQ(down.code, 0) << down.err;
  EXPECT_EQ(twin_it::leftovers(lab), std::vector<std::string>{});
  fs::remove_all(dir);
}
