// Unit tests for the JSON Schemas of the topology file format v1
// (topologies/schema/topology.schema.json) and of image profiles
// (images/schema/image.schema.json), which editors use to check YAML as it is typed.
// The loader (twin/topology/loader.cpp) is the source of truth; these tests keep the schemas
// from drifting away from it:
//   - both schemas are valid JSON (draft 2020-12) whose local $refs all resolve;
//   - each object's declared fields are exactly the fields the loader accepts, checked three
//     ways: against a copy of the loader's lists, against the list the loader itself prints
//     for an unknown field, and by loading a lab that uses each declared field;
//   - limits (MTU, name lengths, ASN) equal the model's constants, and the name, interface
//     and address patterns accept exactly what the loader accepts on a set of samples;
//   - every example topology and image profile uses only declared fields and matches the
//     patterns.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/unit/support.hpp"
#include "twin/core/diagnostics.hpp"
#include "twin/core/ip.hpp"
#include "twin/topology/loader.hpp"
#include "twin/topology/model.hpp"
#include "twin/topology/names.hpp"

namespace {

using twin_test::dump;
using twin_test::pattern_of;
using twin_test::property_names;
using twin_test::string_enum;

namespace fs = std::filesystem;
using nlohmann::json;
using twin::Diagnostics;
using twin_test::StringSet;

// TWIN_TEST_DATA is <repo>/tests/data.
const fs::path kRepo = fs::path(TWIN_TEST_DATA).parent_path().parent_path();
const fs::path kTopologySchema = kRepo / "topologies" / "schema" / "topology.schema.json";
const fs::path kImageSchema = kRepo / "images" / "schema" / "image.schema.json";

// The loader's accepted fields (kTopKeys, kDefaultKeys, kNodeKeys, kLinkKeys, kImageKeys in
// twin/topology/loader.cpp), copied on purpose: a field added to the loader or the schema
// alone fails a test here until both, and this list, agree.
const StringSet kTopKeys = {"version", "name",    "defaults", "nodes", "links",
                            "checks",  "tenants", "anycast",  "mgmt",  "traffic"};
// kTenantKeys, kTenantNetworkKeys in twin/topology/tenants.hpp.
const StringSet kTenantKeys = {"l3vni", "networks"};
const StringSet kTenantNetworkKeys = {"vni", "ports", "gateway"};
// kCheckKeys, kReachKeys, kRouteCheckKeys, kFrrCheckKeys in twin/topology/declared_checks.hpp.
const StringSet kCheckKeys = {"name", "wait", "after", "reach", "route", "frr"};
const StringSet kReachKeys = {"from", "to", "expect"};
const StringSet kRouteCheckKeys = {"node", "prefix", "nexthops", "protocol"};
const StringSet kFrrCheckKeys = {"node", "command", "match"};
const StringSet kDefaultKeys = {"kind", "image", "mtu", "bandwidth"};
const StringSet kNodeKeys = {"kind",   "image",   "asn",    "router-id",    "loopback",
                             "config", "gateway", "routes", "daemons-file", "container-image",
                             "mgmt-address"};
const StringSet kLinkKeys = {"endpoints", "mtu", "addresses", "bandwidth", "delay"};
const StringSet kImageKeys = {
    "name",      "kind",        "backend",       "daemons",     "frr-profile",
    "rp-filter", "ra-interval", "coalesce-time", "description", "kernel-nexthop-groups",
    "vm",        "container"};
const StringSet kVmKeys = {
    "kernel",          "initrd",         "disk",           "cmdline",
    "vcpus",           "memory",         "nic-model",      "interface-pattern",
    "interface-first", "interface-step", "management-nic", "ready-pattern",
    "ready-timeout",   "accel",          "agent",          "ssh-user",
    "ssh-password",    "ssh-key",        "vtysh"};

// A field name no loader list contains and no typo hint comes close to, so the loader answers
// "unknown field ..." with the full list ("expected one of: a, b, c").
const std::string kFar = "zzzzzzzzzzzzzzzzzzzzzzzz";

json read_json(const fs::path& p) {
  std::ifstream in(p);
  if (!in) throw std::runtime_error("cannot read " + p.string());
  return json::parse(in);  // throws on invalid JSON
}

const json& topology_schema() {
  static const json j = read_json(kTopologySchema);
  return j;
}

const json& image_schema() {
  static const json j = read_json(kImageSchema);
  return j;
}

// Follows local references ("#/$defs/node") until a schema without "$ref".
const json& resolve(const json& root, const json& s) {
  const json* cur = &s;
  for (int hops = 0; cur->is_object() && cur->contains("$ref"); ++hops) {
    const std::string ref = cur->at("$ref").get<std::string>();
    if (ref.empty() || ref[0] != '#' || hops > 16)
      throw std::runtime_error("unsupported or cyclic $ref '" + ref + "'");
    cur = &root.at(json::json_pointer(ref.substr(1)));
  }
  return *cur;
}

// The object schemas that mirror the loader's key lists.
const json& top_object() { return topology_schema(); }
const json& defaults_object() { return topology_schema().at("properties").at("defaults"); }
const json& node_object() {
  const json& root = topology_schema();
  return resolve(root, root.at("properties").at("nodes").at("additionalProperties"));
}
const json& link_object() {
  const json& root = topology_schema();
  return resolve(root, root.at("properties").at("links").at("items"));
}
const json& def(const std::string& name) { return topology_schema().at("$defs").at(name); }
const json& check_object() { return def("check"); }
const json& check_kind(const std::string& kind) { return check_object().at("properties").at(kind); }

// "expected one of: a, b, c" -> {a, b, c}, from the first diagnostic whose message starts
// with `message_start`; empty when there is none.
StringSet choices_in_hint(const Diagnostics& d, const std::string& message_start) {
  const std::string lead = "expected one of: ";
  for (const auto& i : d.items()) {
    if (i.message.rfind(message_start, 0) != 0 || i.hint.rfind(lead, 0) != 0) continue;
    StringSet out;
    std::stringstream ss(i.hint.substr(lead.size()));
    std::string part;
    while (std::getline(ss, part, ',')) out.insert(part.substr(part.find_first_not_of(' ')));
    return out;
  }
  return {};
}

bool has_message_starting(const Diagnostics& d, const std::string& start) {
  for (const auto& i : d.items())
    if (i.message.rfind(start, 0) == 0) return true;
  return false;
}

// A small valid lab: two FRR routers and a host, one fabric link and one access link.
const std::string kBaseLab = R"(version: 1
name: probe
nodes:
  r1: {asn: 65001, loopback: 10.255.0.1/32}
  r2: {asn: 65002, loopback: 10.255.0.2/32}
  h1: {kind: host}
links:
  - endpoints: [r1:swp1, r2:swp1]
  - endpoints: [r1:swp2, h1:eth0]
    addresses: {r1: 10.0.1.1/24, h1: 10.0.1.10/24}
)";

// kBaseLab with the first occurrence of `from` replaced by `to`.
std::string lab_with(const std::string& from, const std::string& to) {
  std::string s = kBaseLab;
  auto at = s.find(from);
  if (at == std::string::npos) throw std::runtime_error("'" + from + "' not in the base lab");
  return s.replace(at, from.size(), to);
}

// A folder of its own under the test temp dir (for image profiles and config files), removed
// at the end of the test.
class SchemaLoader : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "twin-schema-XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    const char* made = ::mkdtemp(buf.data());
    ASSERT_NE(made, nullptr) << "mkdtemp failed";
    dir_ = made;
    fs::create_directories(dir_ / "images");
    write("frr.conf", "frr defaults datacenter\n");
    write("daemons", "bgpd=yes\n");
  }
  void TearDown() override {
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }

  void write(const std::string& name, const std::string& content) const {
    std::ofstream(dir_ / name) << content;
  }

  // Loads `text` as if it were <dir>/t.yaml; true when the loader accepted it.
  bool load(const std::string& text, Diagnostics& d) const {
    auto t = twin::topology::load_topology_text(text, "t.yaml", dir_.string(), d);
    return t.has_value() && d.empty();
  }

  fs::path dir_;
};

// ---------------------------------------------------------------------------------------
// The schema files themselves

TEST(SchemaFiles, AreDraft202012JsonWithResolvableRefs) {
  for (const fs::path& p : {kTopologySchema, kImageSchema}) {
    SCOPED_TRACE(p.string());
    json root;
    ASSERT_NO_THROW(root = read_json(p));
    EXPECT_EQ(root.value("$schema", ""), "https://json-schema.org/draft/2020-12/schema");
    EXPECT_EQ(root.value("type", ""), "object");
    EXPECT_FALSE(root.value("title", "").empty());
    EXPECT_FALSE(root.value("description", "").empty());
    // Every "$ref" points at something that exists.
    std::function<void(const json&)> walk = [&](const json& s) {
      if (s.is_object()) {
        if (s.contains("$ref")) {
          EXPECT_NO_THROW((void)resolve(root, s)) << s.dump();
        }
        for (const auto& [k, v] : s.items()) walk(v);
      } else if (s.is_array()) {
        for (const auto& v : s) walk(v);
      }
    };
    walk(root);
  }
}

// Every property carries a description (hover text in editors).
TEST(SchemaFiles, EveryPropertyIsDescribed) {
  for (const json* root : {&topology_schema(), &image_schema()}) {
    int seen = 0;
    std::function<void(const json&, const std::string&)> walk = [&](const json& s,
                                                                    const std::string& at) {
      if (s.is_object()) {
        if (s.contains("properties") && s.at("properties").is_object())
          for (const auto& [name, prop] : s.at("properties").items()) {
            ++seen;
            EXPECT_TRUE(prop.contains("description") &&
                        !prop.at("description").get<std::string>().empty())
                << at << "/properties/" << name << " has no description";
          }
        for (const auto& [k, v] : s.items())
          // Conditions (`if kind is host ...`) restate fields declared elsewhere.
          if (k != "allOf" && k != "if" && k != "then" && k != "else") walk(v, at + "/" + k);
      } else if (s.is_array()) {
        for (size_t i = 0; i < s.size(); ++i) walk(s[i], at + "/" + std::to_string(i));
      }
    };
    walk(*root, "#");
    EXPECT_GT(seen, 0);
  }
}

// ---------------------------------------------------------------------------------------
// Declared fields == the loader's accepted fields

TEST(SchemaFields, EqualTheLoaderKeyLists) {
  EXPECT_EQ(property_names(top_object()), kTopKeys);
  EXPECT_EQ(property_names(defaults_object()), kDefaultKeys);
  EXPECT_EQ(property_names(node_object()), kNodeKeys);
  EXPECT_EQ(property_names(link_object()), kLinkKeys);
  EXPECT_EQ(property_names(check_object()), kCheckKeys);
  EXPECT_EQ(property_names(check_kind("reach")), kReachKeys);
  EXPECT_EQ(property_names(check_kind("route")), kRouteCheckKeys);
  EXPECT_EQ(property_names(check_kind("frr")), kFrrCheckKeys);
  EXPECT_EQ(property_names(def("tenant")), kTenantKeys);
  EXPECT_EQ(property_names(def("tenantNetwork")), kTenantNetworkKeys);
  EXPECT_EQ(property_names(image_schema()), kImageKeys);
  EXPECT_EQ(property_names(image_schema().at("properties").at("vm")), kVmKeys);
  EXPECT_EQ(image_schema().at("properties").at("vm").at("additionalProperties"), json(false));
}

// The loader rejects unknown fields everywhere, so the schema does too.
TEST(SchemaFields, UnknownFieldsAreRejected) {
  for (const json* s :
       {&top_object(), &defaults_object(), &node_object(), &link_object(), &image_schema()}) {
    ASSERT_TRUE(s->contains("additionalProperties")) << s->dump().substr(0, 200);
    EXPECT_EQ(s->at("additionalProperties"), json(false)) << s->dump().substr(0, 200);
  }
}

TEST(SchemaFields, RequiredFieldsMatchTheLoader) {
  EXPECT_EQ(top_object().at("required"), json({"version", "name", "nodes"}));
  EXPECT_EQ(link_object().at("required"), json({"endpoints"}));
  EXPECT_EQ(image_schema().at("required"), json({"kind"}));
  EXPECT_FALSE(node_object().contains("required"));  // `r1:` alone is a valid node
}

// The loader itself lists its fields when it meets an unknown one: those lists must equal the
// schema's (this catches a field added to the loader but not to the copies above).
TEST_F(SchemaLoader, LoaderListsTheSchemaFields) {
  struct Case {
    const char* what;
    std::string text;
    StringSet schema;
  };
  write("images/probe-unknown.yaml", "kind: frr\ndaemons: [zebra, bgpd]\n" + kFar + ": 1\n");
  const std::vector<Case> cases = {
      {"top level", kBaseLab + kFar + ": 1\n", property_names(top_object())},
      {"defaults", lab_with("nodes:\n", "defaults: {" + kFar + ": 1}\nnodes:\n"),
       property_names(defaults_object())},
      {"node", lab_with("r1: {", "r1: {" + kFar + ": 1, "), property_names(node_object())},
      {"link", lab_with("    addresses:", "    " + kFar + ": 1\n    addresses:"),
       property_names(link_object())},
      {"image", lab_with("r1: {", "r1: {image: probe-unknown, "), property_names(image_schema())},
      {"check", kBaseLab + "checks: [{" + kFar + ": 1, reach: {from: h1, to: r2}}]\n",
       property_names(check_object())},
      {"reach", kBaseLab + "checks: [{reach: {from: h1, to: r2, " + kFar + ": 1}}]\n",
       property_names(check_kind("reach"))},
      {"route", kBaseLab + "checks: [{route: {node: r1, prefix: 10.0.1.0/24, " + kFar + ": 1}}]\n",
       property_names(check_kind("route"))},
      {"frr",
       kBaseLab + "checks: [{frr: {node: r1, command: show bgp summary json, match: {a: 1}, " +
           kFar + ": 1}}]\n",
       property_names(check_kind("frr"))},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    Diagnostics d;
    EXPECT_FALSE(load(c.text, d));
    StringSet listed = choices_in_hint(d, "unknown field '" + kFar + "'");
    EXPECT_FALSE(listed.empty()) << dump(d);
    EXPECT_EQ(listed, c.schema) << dump(d);
  }
}

// Every field the schema declares is one the loader accepts in a valid lab.
TEST_F(SchemaLoader, LoaderAcceptsEverySchemaField) {
  // How to use each field in kBaseLab; fields the base lab already uses map to {"", ""}.
  const std::map<std::string, std::pair<std::string, std::string>> topology_edits = {
      {"version", {"", ""}},
      {"name", {"", ""}},
      {"nodes", {"", ""}},
      {"links", {"", ""}},
      {"checks", {"links:\n", "checks: [{reach: {from: h1, to: r2}}]\nlinks:\n"}},
      {"tenants",
       {"    addresses: {r1: 10.0.1.1/24, h1: 10.0.1.10/24}\n",
        "    mtu: 1450\n    addresses: {h1: 10.0.1.10/24}\n"
        "tenants: {t: {networks: {n: {vni: 1, ports: [r1:swp2]}}}}\n"}},
      {"anycast",
       {"nodes:\n  r1: {asn: 65001, loopback: 10.255.0.1/32}\n  r2: {asn: 65002, loopback: "
        "10.255.0.2/32}",
        "anycast: [10.255.9.9/32]\nnodes:\n  r1: {asn: 65001, loopback: [10.255.0.1/32, "
        "10.255.9.9/32]}\n  r2: {asn: 65002, loopback: [10.255.0.2/32, 10.255.9.9/32]}"}},
      {"defaults", {"nodes:\n", "defaults: {kind: frr, image: frr-8.4, mtu: 9216}\nnodes:\n"}},
      {"mgmt",
       {"nodes:\n", "mgmt: {subnet: 172.30.1.0/24, interface: mgmt0, user: admin}\nnodes:\n"}},
      {"node.mgmt-address",
       {"nodes:\n  r1: {",
        "mgmt: {subnet: 172.30.1.0/24}\nnodes:\n  r1: {mgmt-address: 172.30.1.9, "}},
      {"defaults.kind", {"nodes:\n", "defaults: {kind: frr}\nnodes:\n"}},
      {"defaults.image", {"nodes:\n", "defaults: {image: frr-8.4}\nnodes:\n"}},
      {"defaults.mtu", {"nodes:\n", "defaults: {mtu: 9216}\nnodes:\n"}},
      {"defaults.bandwidth", {"nodes:\n", "defaults: {bandwidth: 1G}\nnodes:\n"}},
      {"traffic",
       {"nodes:\n",
        "traffic: {pattern: ring, duration: 2s, flows-per-pair: 2, protocol: tcp, "
        "effective-bandwidth: 0.8, tail-latency: 20ms, bandwidth-loss: 10%}\nnodes:\n"}},
      {"link.bandwidth", {"[r1:swp1, r2:swp1]\n", "[r1:swp1, r2:swp1]\n    bandwidth: 100M\n"}},
      {"link.delay", {"[r1:swp1, r2:swp1]\n", "[r1:swp1, r2:swp1]\n    delay: 2ms\n"}},
      {"node.kind", {"", ""}},
      {"node.asn", {"", ""}},
      {"node.loopback", {"", ""}},
      {"node.image", {"r1: {", "r1: {image: frr-8.4, "}},
      {"node.router-id", {"r1: {", "r1: {router-id: 10.255.0.11, "}},
      {"node.config", {"r1: {asn: 65001, loopback: 10.255.0.1/32}", "r1: {config: frr.conf}"}},
      {"node.gateway", {"h1: {kind: host}", "h1: {kind: host, gateway: 10.0.1.1}"}},
      {"node.routes",
       {"h1: {kind: host}", "h1: {kind: host, routes: [{to: 10.0.0.0/8, via: 10.0.1.1}]}"}},
      {"node.daemons-file",
       {"r1: {asn: 65001, loopback: 10.255.0.1/32}",
        "r1: {config: frr.conf, daemons-file: daemons}"}},
      {"node.container-image", {"r1: {", "r1: {container-image: quay.io/frrouting/frr:10.3.1, "}},
      {"link.endpoints", {"", ""}},
      {"link.addresses", {"", ""}},
      {"link.mtu", {"    addresses:", "    mtu: 1500\n    addresses:"}},
  };
  // Whether the lab `root` really uses `field` ("defaults.mtu", "node.asn", ...).
  auto uses = [](const YAML::Node& root, const std::string& section, const std::string& key) {
    if (section.empty()) return static_cast<bool>(root[key]);
    if (section == "defaults") return root["defaults"] && static_cast<bool>(root["defaults"][key]);
    const char* list = section == "node" ? "nodes" : "links";
    for (const auto& item : root[list]) {
      const YAML::Node body =
          section == "node" ? item.second : static_cast<const YAML::Node&>(item);
      if (body.IsMap() && body[key]) return true;
    }
    return false;
  };
  const std::vector<std::pair<std::string, StringSet>> sections = {
      {"", property_names(top_object())},
      {"defaults", property_names(defaults_object())},
      {"node", property_names(node_object())},
      {"link", property_names(link_object())},
  };
  for (const auto& [section, keys] : sections)
    for (const auto& key : keys) {
      const std::string field = section.empty() ? key : section + "." + key;
      SCOPED_TRACE(field);
      auto edit = topology_edits.find(field);
      if (edit == topology_edits.end()) {
        ADD_FAILURE() << "no sample use of schema field '" << field << "': add one here";
        continue;
      }
      const std::string text =
          edit->second.first.empty() ? kBaseLab : lab_with(edit->second.first, edit->second.second);
      EXPECT_TRUE(uses(YAML::Load(text), section, key)) << "the sample does not use it:\n" << text;
      Diagnostics d;
      EXPECT_TRUE(load(text, d)) << text << dump(d);
    }

  // Image profiles: each field in a profile of its own, booted by r1.
  const std::map<std::string, std::string> image_lines = {
      {"kind", ""},
      {"daemons", ""},
      {"name", "name: probe"},
      {"description", "description: a probe profile"},
      {"backend", "backend: netns"},
      {"frr-profile", "frr-profile: traditional"},
      {"rp-filter", "rp-filter: 2"},
      {"ra-interval", "ra-interval: 1800"},
      {"coalesce-time", "coalesce-time: 1000"},
      {"kernel-nexthop-groups", "kernel-nexthop-groups: false"},
      {"vm", "backend: libvirt\nvm: {kernel: vmlinuz, initrd: initrd.img}"},
      {"container",
       "backend: container\ncontainer: {image: localhost/twin-frr:10.3, frr-version: \"10.3\"}"},
  };
  for (const auto& key : property_names(image_schema())) {
    SCOPED_TRACE("image." + key);
    if (key == "vm") continue;  // a VM profile is kind host (below)
    auto line = image_lines.find(key);
    if (line == image_lines.end()) {
      ADD_FAILURE() << "no sample use of image field '" << key << "': add one here";
      continue;
    }
    const std::string profile = "kind: frr\ndaemons: [zebra, bgpd]\n" + line->second + "\n";
    EXPECT_TRUE(YAML::Load(profile)[key]) << profile;
    write("images/probe-" + key + ".yaml", profile);
    Diagnostics d;
    EXPECT_TRUE(load(lab_with("r1: {", "r1: {image: probe-" + key + ", "), d))
        << profile << dump(d);
  }
}

// The vm section: every field the schema declares, in one VM profile the loader accepts; an
// unknown one is answered with the schema's list.
TEST_F(SchemaLoader, VmSectionMatchesTheLoader) {
  const std::map<std::string, std::string> vm_lines = {
      {"kernel", "  kernel: vmlinuz"},
      {"initrd", "  initrd: initrd.img"},
      {"cmdline", "  cmdline: quiet"},
      {"vcpus", "  vcpus: 2"},
      {"memory", "  memory: 512"},
      {"nic-model", "  nic-model: e1000"},
      {"interface-pattern", "  interface-pattern: \"swp{n}\""},
      {"interface-first", "  interface-first: 1"},
      {"interface-step", "  interface-step: 1"},
      {"management-nic", "  management-nic: true"},
      {"ready-pattern", "  ready-pattern: \"login:\""},
      {"ready-timeout", "  ready-timeout: 30"},
      {"accel", "  accel: tcg"},
      {"agent", "  agent: ssh"},
      {"ssh-user", "  ssh-user: cumulus"},
      {"ssh-password", "  ssh-password: \"pw\""},
      {"ssh-key", "  ssh-key: id_nos"},
      {"vtysh", "  vtysh: sudo vtysh"},
  };
  std::string body;
  for (const auto& key : property_names(image_schema().at("properties").at("vm"))) {
    // kernel and disk exclude each other, as ssh-password and ssh-key do: disk and the key below
    if (key == "disk" || key == "ssh-key") continue;
    auto line = vm_lines.find(key);
    if (line == vm_lines.end()) {
      ADD_FAILURE() << "no sample use of vm field '" << key << "': add one here";
      continue;
    }
    body += line->second + "\n";
  }
  write("images/probe-vm.yaml", "kind: host\nbackend: libvirt\nvm:\n" + body);
  write("images/probe-disk.yaml", "kind: host\nbackend: libvirt\nvm:\n  disk: a.qcow2\n" +
                                      vm_lines.at("management-nic") + "\n" + vm_lines.at("agent") +
                                      "\n" + vm_lines.at("ssh-user") + "\n" +
                                      vm_lines.at("ssh-key") + "\n");
  const std::string host_lab = "version: 1\nname: t\nnodes:\n  h1: {kind: host, image: IMG}\n";
  for (const char* img : {"probe-vm", "probe-disk"}) {
    SCOPED_TRACE(img);
    std::string text = std::regex_replace(host_lab, std::regex("IMG"), img);
    Diagnostics d;
    EXPECT_TRUE(load(text, d)) << dump(d);
  }
  write("images/probe-vm-unknown.yaml",
        "kind: host\nbackend: libvirt\nvm:\n  kernel: k\n  initrd: i\n  " + kFar + ": 1\n");
  Diagnostics d;
  EXPECT_FALSE(load(std::regex_replace(host_lab, std::regex("IMG"), "probe-vm-unknown"), d));
  EXPECT_EQ(choices_in_hint(d, "unknown field '" + kFar + "'"),
            property_names(image_schema().at("properties").at("vm")))
      << dump(d);
}

// Enumerations the loader prints on a bad value equal the schema's.
TEST_F(SchemaLoader, EnumsMatchTheLoader) {
  {
    Diagnostics d;
    EXPECT_FALSE(load(lab_with("h1: {kind: host}", "h1: {kind: " + kFar + "}"), d));
    EXPECT_EQ(choices_in_hint(d, "unknown kind"), string_enum(def("kind"))) << dump(d);
    EXPECT_EQ(string_enum(image_schema().at("properties").at("kind")), string_enum(def("kind")));
  }
  {
    // The backends the schema offers are the model's, so a new backend is offered in editors.
    const auto names = twin::topology::spellings(twin::topology::kBackendNames);
    EXPECT_EQ(string_enum(image_schema().at("properties").at("backend")),
              StringSet(names.begin(), names.end()));
  }
  {
    write("images/probe-daemon.yaml", "kind: frr\ndaemons: [zebra, " + kFar + "]\n");
    Diagnostics d;
    EXPECT_FALSE(load(lab_with("r1: {", "r1: {image: probe-daemon, "), d));
    EXPECT_EQ(choices_in_hint(d, "unknown FRR daemon"),
              string_enum(image_schema().at("properties").at("daemons").at("items")))
        << dump(d);
  }
}

// Each value the image schema allows is accepted by the loader, and the values just outside
// the schema's numeric ranges are rejected by it.
TEST_F(SchemaLoader, ImageValueRangesMatchTheLoader) {
  const json& props = image_schema().at("properties");
  std::vector<std::pair<std::string, bool>> samples;  // "field: value" -> accepted?
  for (const char* key : {"backend", "frr-profile", "rp-filter"})
    for (const auto& v : props.at(key).at("enum"))
      samples.push_back(
          {std::string(key) + ": " + (v.is_string() ? v.get<std::string>() : v.dump()), true});
  for (const char* key : {"ra-interval", "coalesce-time"}) {
    const long long lo = props.at(key).at("minimum").get<long long>();
    samples.push_back({std::string(key) + ": " + std::to_string(lo), true});
    samples.push_back({std::string(key) + ": " + std::to_string(lo - 1), false});
  }
  const long long ra_max = props.at("ra-interval").at("maximum").get<long long>();
  samples.push_back({"ra-interval: " + std::to_string(ra_max), true});
  samples.push_back({"ra-interval: " + std::to_string(ra_max + 1), false});
  samples.push_back({"rp-filter: 3", false});
  samples.push_back({"backend: docker", false});
  int n = 0;
  for (const auto& [line, accepted] : samples) {
    SCOPED_TRACE(line);
    const std::string name = "probe-value-" + std::to_string(n++);
    // A libvirt profile needs what its VM boots.
    std::string vm = line == "backend: libvirt"     ? "vm: {disk: d.qcow2}\n"
                     : line == "backend: container" ? "container: {image: localhost/x:1}\n"
                                                    : "";
    write("images/" + name + ".yaml", "kind: frr\ndaemons: [zebra, bgpd]\n" + line + "\n" + vm);
    Diagnostics d;
    EXPECT_EQ(load(lab_with("r1: {", "r1: {image: " + name + ", "), d), accepted) << dump(d);
  }
}

// ---------------------------------------------------------------------------------------
// Limits and patterns

TEST(SchemaLimits, EqualTheModelConstants) {
  EXPECT_EQ(def("mtu").at("minimum"), twin::topology::kMinMtu);
  EXPECT_EQ(def("mtu").at("maximum"), twin::topology::kMaxMtu);
  EXPECT_EQ(defaults_object().at("properties").at("mtu").at("$ref"), "#/$defs/mtu");
  EXPECT_EQ(link_object().at("properties").at("mtu").at("$ref"), "#/$defs/mtu");
  EXPECT_EQ(top_object().at("properties").at("name").at("maxLength"), twin::topology::kMaxLabName);
  EXPECT_EQ(def("interfaceName").at("maxLength"), twin::topology::kMaxInterfaceName);
  EXPECT_EQ(def("nodeName").at("maxLength"), 32);
  EXPECT_EQ(node_object().at("properties").at("asn").at("minimum"), 1);
  EXPECT_EQ(node_object().at("properties").at("asn").at("maximum"), 4294967295LL);
  EXPECT_EQ(top_object().at("properties").at("version").at("const"), 1);
}

// Interface names: the schema's pattern (also used inside the endpoint pattern) accepts what
// the loader accepts. ASCII samples only: JSON Schema counts characters, Linux counts bytes.
TEST(SchemaPatterns, InterfaceNamesMatchTheLoader) {
  const std::regex ifname = pattern_of(def("interfaceName"));
  const std::regex endpoint = pattern_of(def("endpoint"));
  for (const std::string& name : std::vector<std::string>{"swp1",
                                                          "eth0",
                                                          "a",
                                                          "swp51",
                                                          "eth0.100",
                                                          "br-x_1",
                                                          "lo0",
                                                          "loop",
                                                          "...",
                                                          "abcdefghijklmno",
                                                          "abcdefghijklmnop",
                                                          "",
                                                          ".",
                                                          "..",
                                                          "lo",
                                                          "a/b",
                                                          "a:b",
                                                          "a b",
                                                          "a\tb",
                                                          "a\nb",
                                                          "-x",
                                                          "x@y"}) {
    SCOPED_TRACE("'" + name + "'");
    const bool loader = twin::topology::valid_interface_name(name, nullptr) && name != "lo";
    EXPECT_EQ(std::regex_match(name, ifname), loader);
    EXPECT_EQ(std::regex_match("leaf1:" + name, endpoint), loader);
  }
  EXPECT_FALSE(std::regex_match("leaf1swp1", endpoint));
  EXPECT_FALSE(std::regex_match(":swp1", endpoint));
  EXPECT_FALSE(std::regex_match("-leaf1:swp1", endpoint));
  EXPECT_TRUE(std::regex_match(std::string(32, 'n') + ":swp1", endpoint));
  EXPECT_FALSE(std::regex_match(std::string(33, 'n') + ":swp1", endpoint));
}

// Addresses: each pattern accepts exactly what the loader's parser accepts for that field.
// (Not covered: a prefix length with leading zeros such as /024, which the loader takes and
// the schema does not.)
TEST(SchemaPatterns, AddressesMatchTheLoader) {
  using twin::IpPrefix;
  struct Check {
    const char* def;
    std::function<bool(const std::string&)> loader;
  };
  const std::vector<Check> checks = {
      {"hostPrefix",
       [](const std::string& s) {
         auto p = IpPrefix::parse(s, true);
         return p && p->is_host();
       }},
      {"addressWithPrefix",
       [](const std::string& s) { return IpPrefix::parse(s, false).has_value(); }},
      {"gatewayAddress", [](const std::string& s) { return IpPrefix::parse(s, true).has_value(); }},
      {"routerId",
       [](const std::string& s) {
         auto p = IpPrefix::parse(s, true);
         return p && p->family == 4 && p->is_host();
       }},
  };
  const std::vector<std::string> samples = {"10.255.0.1",
                                            "10.255.0.1/32",
                                            "10.0.1.1/24",
                                            "0.0.0.0/0",
                                            "255.255.255.255/32",
                                            "10.0.0.1/33",
                                            "10.0.0.1/",
                                            "10.0.0.1/-1",
                                            "10.0.0.1/+8",
                                            "10.0.0.1/24x",
                                            "10.0.0.1 /24",
                                            "256.0.0.1/32",
                                            "01.2.3.4/32",
                                            "1.2.3/24",
                                            "1.2.3.4.5/32",
                                            "1.2.3.4:80",
                                            "::",
                                            "::/0",
                                            "::1",
                                            "::1/128",
                                            "::1/129",
                                            "fd00:255::1/128",
                                            "2001:db8:1::1/64",
                                            "2001:DB8::A/64",
                                            "2001:db8::g/64",
                                            "1:2:3:4:5:6:7:8/128",
                                            "1:2:3:4:5:6:7:8:9/128",
                                            "1::2:3:4:5:6:7/64",
                                            "1:2:3:4:5:6:7::/64",
                                            ":1::/64",
                                            "1:::2/64",
                                            "12345::1/64",
                                            "::ffff:10.0.0.1/128",
                                            "::10.0.0.1",
                                            "1:2:3:4:5:6:1.2.3.4/64",
                                            "1:2:3:4:5:6:7:1.2.3.4/64",
                                            "fe80::1%eth0/64",
                                            "",
                                            "/24",
                                            "abc",
                                            "10.0.0.1/24/24"};
  for (const auto& c : checks) {
    const std::regex re = pattern_of(def(c.def));
    for (const auto& s : samples) {
      SCOPED_TRACE(std::string(c.def) + " '" + s + "'");
      EXPECT_EQ(std::regex_match(s, re), c.loader(s));
    }
  }
}

// Lab and node names: the schema's patterns and lengths accept what the loader accepts.
TEST_F(SchemaLoader, NamesMatchTheLoader) {
  const json& lab = top_object().at("properties").at("name");
  const std::regex lab_re = pattern_of(lab);
  const size_t lab_max = lab.at("maxLength").get<size_t>();
  const std::regex node_re = pattern_of(def("nodeName"));
  const size_t node_max = def("nodeName").at("maxLength").get<size_t>();
  for (const std::string& name :
       std::vector<std::string>{"r1", "R-1_a", "1r", "9", "_r", "-r", "r.1", "r 1", "r:1",
                                "spine/1", std::string(24, 'a'), std::string(25, 'a'),
                                std::string(32, 'a'), std::string(33, 'a')}) {
    SCOPED_TRACE("'" + name + "'");
    {
      Diagnostics d;
      load(lab_with("name: probe", "name: '" + name + "'"), d);
      const bool loader = !has_message_starting(d, "invalid lab name");
      EXPECT_EQ(std::regex_match(name, lab_re) && name.size() <= lab_max, loader) << dump(d);
    }
    {
      Diagnostics d;
      load(lab_with("  h1: {kind: host}\n", "  h1: {kind: host}\n  '" + name + "': {kind: host}\n"),
           d);
      const bool loader = !has_message_starting(d, "invalid node name");
      EXPECT_EQ(std::regex_match(name, node_re) && name.size() <= node_max, loader) << dump(d);
    }
  }
}

// ---------------------------------------------------------------------------------------
// The examples use only what the schemas declare

TEST(SchemaExamples, TopologiesUseOnlyDeclaredFields) {
  const StringSet top = property_names(top_object());
  const StringSet defaults = property_names(defaults_object());
  const StringSet node = property_names(node_object());
  const StringSet link = property_names(link_object());
  const std::regex lab_re = pattern_of(top_object().at("properties").at("name"));
  const std::regex node_re = pattern_of(def("nodeName"));
  const std::regex endpoint_re = pattern_of(def("endpoint"));
  auto expect_declared = [](const YAML::Node& map, const StringSet& declared,
                            const std::string& where) {
    ASSERT_TRUE(map.IsMap()) << where;
    for (const auto& kv : map)
      EXPECT_TRUE(declared.count(kv.first.Scalar()))
          << where << ": field '" << kv.first.Scalar() << "' is not in the schema";
  };

  StringSet seen;
  for (const auto& e : fs::recursive_directory_iterator(kRepo / "topologies")) {
    if (!e.is_regular_file() || e.path().extension() != ".yaml") continue;
    const std::string rel = fs::relative(e.path(), kRepo).string();
    SCOPED_TRACE(rel);
    seen.insert(rel);
    YAML::Node root;
    ASSERT_NO_THROW(root = YAML::LoadFile(e.path().string()));
    expect_declared(root, top, "top level");
    EXPECT_TRUE(std::regex_match(root["name"].as<std::string>(""), lab_re));
    if (root["defaults"]) expect_declared(root["defaults"], defaults, "defaults");
    ASSERT_TRUE(root["nodes"] && root["nodes"].IsMap());
    for (const auto& kv : root["nodes"]) {
      const std::string name = kv.first.Scalar();
      EXPECT_TRUE(std::regex_match(name, node_re)) << name;
      if (!kv.second.IsNull()) expect_declared(kv.second, node, "nodes." + name);
    }
    int i = 0;
    for (const auto& l : root["links"]) {
      const std::string where = "links[" + std::to_string(i++) + "]";
      expect_declared(l, link, where);
      for (const auto& ep : l["endpoints"])
        EXPECT_TRUE(std::regex_match(ep.Scalar(), endpoint_re)) << where << ": " << ep.Scalar();
    }
  }
  for (const char* example :
       {"topologies/clos-2x4.yaml", "topologies/two-node.yaml", "topologies/own-config/lab.yaml"})
    EXPECT_TRUE(seen.count(example)) << example << " not found";
}

TEST(SchemaExamples, ImageProfilesUseOnlyDeclaredFields) {
  const json& props = image_schema().at("properties");
  const StringSet declared = property_names(image_schema());
  StringSet seen;
  for (const auto& e : fs::directory_iterator(kRepo / "images")) {
    if (!e.is_regular_file() || e.path().extension() != ".yaml") continue;
    SCOPED_TRACE(e.path().filename().string());
    seen.insert(e.path().filename().string());
    YAML::Node root;
    ASSERT_NO_THROW(root = YAML::LoadFile(e.path().string()));
    ASSERT_TRUE(root.IsMap());
    for (const auto& kv : root)
      EXPECT_TRUE(declared.count(kv.first.Scalar()))
          << "field '" << kv.first.Scalar() << "' is not in the schema";
    EXPECT_TRUE(string_enum(props.at("kind")).count(root["kind"].as<std::string>("")));
    for (const auto& dmn : root["daemons"])
      EXPECT_TRUE(string_enum(props.at("daemons").at("items")).count(dmn.Scalar())) << dmn.Scalar();
  }
  EXPECT_TRUE(seen.count("frr-8.4.yaml"));
  EXPECT_TRUE(seen.count("host.yaml"));
}

}  // namespace
