// Unit tests for twin/core/yaml_reader (the YAML toolkit every loader reads with) and
// twin/core/duration: places, key checks with hints, each typed reader's accepted and rejected
// values with their messages, and each format's wording.
#include "twin/core/yaml_reader.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support.hpp"
#include "twin/core/duration.hpp"
#include "twin/core/ip.hpp"

namespace {

using testing::ElementsAre;
using twin::Diagnostic;
using twin::Diagnostics;
using twin::yaml::child;
using twin::yaml::Reader;
using twin::yaml::Value;
using twin_test::dump;

// One parsed document and a reader over it, as a loader holds them.
struct Doc {
  explicit Doc(const std::string& text, twin::yaml::Wording w = {})
      : node(*twin::yaml::parse(text, "t.yaml", diags)), reader("t.yaml", diags, std::move(w)) {}

  Value root() const { return Value{true, YAML::Node(), node, ""}; }
  Value field(const std::string& key) const { return child(root(), key); }
  const Diagnostic& only() const {
    EXPECT_EQ(diags.items().size(), 1u) << dump(diags);
    return diags.items().at(0);
  }

  Diagnostics diags;
  YAML::Node node;
  Reader reader;
};

void expect_at(const Diagnostic& d, int line, int column, const std::string& field) {
  EXPECT_EQ(d.file, "t.yaml");
  EXPECT_EQ(d.line, line);
  EXPECT_EQ(d.column, column);
  EXPECT_EQ(d.field, field);
}

TEST(YamlParse, SyntaxErrorIsOneDiagnosticAtYamlCppsPlace) {
  Diagnostics d;
  EXPECT_FALSE(twin::yaml::parse("a: [1\nb: 2\n", "t.yaml", d));
  ASSERT_EQ(d.items().size(), 1u);
  expect_at(d.items()[0], 2, 2, "");
  EXPECT_EQ(d.items()[0].message, "malformed YAML: end of sequence flow not found");
  EXPECT_EQ(d.items()[0].hint, "check indentation and brackets near this place");
}

TEST(YamlDocument, RootMustBeAMapping) {
  Diagnostics d;
  Reader r("t.yaml", d);
  auto doc = r.document("a: 1\n", "expected a mapping with a");
  ASSERT_TRUE(doc);
  EXPECT_EQ(doc->field, "");
  EXPECT_TRUE(d.empty());
  EXPECT_FALSE(r.document("- a\n- b\n", "expected a mapping with a", "see the example"));
  EXPECT_FALSE(r.document("a: [\n", "expected a mapping with a"));
  ASSERT_EQ(d.items().size(), 2u) << dump(d);
  expect_at(d.items()[0], 1, 1, "");
  EXPECT_EQ(d.items()[0].message, "expected a mapping with a");
  EXPECT_EQ(d.items()[0].hint, "see the example");
  EXPECT_THAT(d.items()[1].message, testing::StartsWith("malformed YAML: "));
}

TEST(YamlMarks, AreOneBasedAndAnEmptyValueWithItsKeyPointsAtTheKey) {
  Doc doc("a: 1\nlist:\n  - x\n  - y\nempty:\nlast: 2\n");
  EXPECT_EQ(doc.field("a").mark().line, 1);
  EXPECT_EQ(doc.field("a").mark().column, 4);
  Value second = twin::yaml::item(doc.field("list"), 1);
  EXPECT_EQ(second.field, "list[1]");
  EXPECT_EQ(second.mark().line, 4);
  EXPECT_EQ(second.mark().column, 5);
  // With its key, an empty value is placed at the key; without (at()), where yaml-cpp puts it.
  Value empty = doc.field("empty");
  EXPECT_EQ(empty.mark().line, 5);
  EXPECT_EQ(empty.mark().column, 1);
  EXPECT_EQ(empty.key_name(), "empty");
  EXPECT_EQ(twin::yaml::at(empty.node, "empty").mark().line, 6);
  EXPECT_EQ(twin::yaml::mark_of(YAML::Node()).line, 0);
}

TEST(YamlValues, ChildOfAMissingKeyIsAbsentButNamed) {
  Doc doc("outer: {a: 1}\n");
  Value missing = child(doc.field("outer"), "b");
  EXPECT_FALSE(missing);
  EXPECT_EQ(missing.field, "outer.b");
  EXPECT_FALSE(child(doc.field("absent"), "c"));
}

TEST(YamlKeys, UnknownKeyHintsTheNearestOrListsTheAccepted) {
  Doc doc("nodse: 1\ncolour: 2\nname: a\nname: b\n");
  doc.reader.check_keys(doc.root(), {"name", "nodes", "links"});
  ASSERT_EQ(doc.diags.items().size(), 3u) << dump(doc.diags);
  expect_at(doc.diags.items()[0], 1, 1, "nodse");
  EXPECT_EQ(doc.diags.items()[0].message, "unknown field 'nodse'");
  EXPECT_EQ(doc.diags.items()[0].hint, "did you mean 'nodes'?");
  EXPECT_EQ(doc.diags.items()[1].message, "unknown field 'colour'");
  EXPECT_EQ(doc.diags.items()[1].hint, "expected one of: name, nodes, links");
  expect_at(doc.diags.items()[2], 4, 1, "name");
  EXPECT_EQ(doc.diags.items()[2].message, "field 'name' given twice");
  EXPECT_EQ(doc.diags.items()[2].hint, "keep one of them");
}

TEST(YamlKeys, ListedWordingPutsTheChoicesInTheMessageAndIgnoresRepeats) {
  Doc doc("expect: {verdikt: a, verdikt: b}\n", {.list_keys_in_message = true});
  doc.reader.check_keys(doc.field("expect"), {"verdict", "reason"});
  ASSERT_EQ(doc.diags.items().size(), 2u) << dump(doc.diags);
  expect_at(doc.diags.items()[0], 1, 10, "expect.verdikt");
  EXPECT_EQ(doc.diags.items()[0].message,
            "unknown field 'verdikt'; expected one of: verdict, reason");
  EXPECT_EQ(doc.diags.items()[0].hint, "did you mean verdict?");
}

TEST(YamlString, SaysWhatWasFoundUnlessTheWordingSaysNot) {
  Doc doc("s: text\nl: [1]\nm: {a: 1}\ne:\n");
  EXPECT_EQ(doc.reader.string(doc.field("s")), "text");
  EXPECT_FALSE(doc.reader.string(doc.field("l")));
  EXPECT_FALSE(doc.reader.string(doc.field("m")));
  EXPECT_FALSE(doc.reader.string(doc.field("e")));
  ASSERT_EQ(doc.diags.items().size(), 3u);
  EXPECT_EQ(doc.diags.items()[0].message, "expected a string, got a list");
  EXPECT_EQ(doc.diags.items()[1].message, "expected a string, got a mapping");
  EXPECT_EQ(doc.diags.items()[2].message, "expected a string, but the value is empty");
  expect_at(doc.diags.items()[2], 4, 1, "e");

  Doc plain("l: [1]\n", {.say_what_was_found = false});
  EXPECT_FALSE(plain.reader.string(plain.field("l")));
  EXPECT_EQ(plain.only().message, "expected a string");
  Doc text("l: [1]\n", {.say_what_was_found = false, .string_noun = "a text value"});
  EXPECT_FALSE(text.reader.string(text.field("l")));
  EXPECT_EQ(text.only().message, "expected a text value");
}

TEST(YamlInteger, AcceptsBase10AndRejectsTheRest) {
  Doc doc("a: 42\nb: -7\nc: one\nd: 1.5\ne: 99999999999999999999\nf: 0x10\n");
  EXPECT_EQ(doc.reader.integer(doc.field("a")), 42);
  EXPECT_EQ(doc.reader.integer(doc.field("b")), -7);
  for (const char* k : {"c", "d", "e", "f"}) EXPECT_FALSE(doc.reader.integer(doc.field(k))) << k;
  ASSERT_EQ(doc.diags.items().size(), 4u);
  EXPECT_EQ(doc.diags.items()[0].message, "expected an integer, got 'one'");
  expect_at(doc.diags.items()[0], 3, 4, "c");
  EXPECT_EQ(doc.diags.items()[2].message,
            "expected an integer that fits in 64 bits, got 99999999999999999999");
}

// A number beyond 64 bits read against a range gets the range, as any number outside it does.
TEST(YamlInteger, BeyondSixtyFourBitsIsOutsideTheRange) {
  Doc doc("mtu: 99999999999999999999\nneg: -99999999999999999999\n");
  EXPECT_FALSE(doc.reader.integer(doc.field("mtu"), 68, 65535, "bytes"));
  EXPECT_FALSE(doc.reader.integer(doc.field("neg"), 0, 9, ""));
  ASSERT_EQ(doc.diags.items().size(), 2u);
  EXPECT_EQ(doc.diags.items()[0].message, "expected 68-65535 bytes");
  EXPECT_EQ(doc.diags.items()[1].message, "expected 0-9");
}

TEST(YamlInteger, RangeIsInclusiveAndNamesItsUnit) {
  Doc doc("lo: 1\nhi: 64\nover: 65\nbare: -1\n");
  EXPECT_EQ(doc.reader.integer(doc.field("lo"), 1, 64, "vCPUs"), 1);
  EXPECT_EQ(doc.reader.integer(doc.field("hi"), 1, 64, "vCPUs"), 64);
  EXPECT_FALSE(doc.reader.integer(doc.field("over"), 1, 64, "vCPUs"));
  EXPECT_FALSE(doc.reader.integer(doc.field("bare"), 0, 9, ""));
  ASSERT_EQ(doc.diags.items().size(), 2u);
  EXPECT_EQ(doc.diags.items()[0].message, "expected 1-64 vCPUs");
  EXPECT_EQ(doc.diags.items()[1].message, "expected 0-9");
}

TEST(YamlBoolean, OnlyTrueOrFalse) {
  Doc doc("t: true\nf: false\ny: yes\nl: [true]\n");
  EXPECT_EQ(doc.reader.boolean(doc.field("t")), true);
  EXPECT_EQ(doc.reader.boolean(doc.field("f")), false);
  EXPECT_FALSE(doc.reader.boolean(doc.field("y")));
  EXPECT_FALSE(doc.reader.boolean(doc.field("l")));
  ASSERT_EQ(doc.diags.items().size(), 2u);
  EXPECT_EQ(doc.diags.items()[0].message, "expected true or false");
  EXPECT_EQ(doc.diags.items()[1].message, "expected true or false");
}

TEST(YamlMtu, BoundsAreKMinMtuAndKMaxMtu) {
  Doc doc("a: 68\nb: 65535\nc: 67\nd: 65536\n");
  EXPECT_EQ(doc.reader.mtu(doc.field("a")), twin::kMinMtu);
  EXPECT_EQ(doc.reader.mtu(doc.field("b")), twin::kMaxMtu);
  EXPECT_FALSE(doc.reader.mtu(doc.field("c")));
  EXPECT_FALSE(doc.reader.mtu(doc.field("d")));
  ASSERT_EQ(doc.diags.items().size(), 2u);
  EXPECT_EQ(doc.diags.items()[0].message, "MTU 67 is outside 68-65535 bytes");
  EXPECT_EQ(doc.diags.items()[0].hint,
            "MTU excludes the Ethernet header; data-center fabrics commonly use 9216");
  EXPECT_EQ(doc.diags.items()[1].message, "MTU 65536 is outside 68-65535 bytes");
  Doc huge("m: 99999999999999999999\n");
  EXPECT_FALSE(huge.reader.mtu(huge.field("m")));
  EXPECT_EQ(huge.only().message, "MTU 99999999999999999999 is outside 68-65535 bytes");
}

TEST(YamlChoice, UnknownValueHintsTheNearest) {
  Doc doc("a: up\nb: dwn\nc: sideways\n");
  const std::vector<std::string> states = {"up", "down"};
  EXPECT_EQ(doc.reader.choice(doc.field("a"), states), "up");
  EXPECT_FALSE(doc.reader.choice(doc.field("b"), states));
  EXPECT_FALSE(doc.reader.choice(doc.field("c"), states));
  ASSERT_EQ(doc.diags.items().size(), 2u);
  EXPECT_EQ(doc.diags.items()[0].message, "unknown value 'dwn'");
  EXPECT_EQ(doc.diags.items()[0].hint, "did you mean 'down'?");
  EXPECT_EQ(doc.diags.items()[1].hint, "expected one of: up, down");
}

TEST(Duration, AcceptsEachUnitAndFractions) {
  using std::chrono::milliseconds;
  EXPECT_EQ(twin::parse_duration("200ms", nullptr), milliseconds(200));
  EXPECT_EQ(twin::parse_duration("30s", nullptr), milliseconds(30000));
  EXPECT_EQ(twin::parse_duration("1.5m", nullptr), milliseconds(90000));
  EXPECT_EQ(twin::parse_duration("0.001s", nullptr), milliseconds(1));
  EXPECT_EQ(twin::parse_duration("24h", nullptr), std::nullopt);
  EXPECT_EQ(twin::parse_duration("1440m", nullptr), milliseconds(twin::kMaxDurationMs));
}

TEST(Duration, EachRejectionSaysWhy) {
  auto why = [](const std::string& text) {
    twin::DurationProblem p;
    EXPECT_FALSE(twin::parse_duration(text, &p)) << text;
    return p.message + " | " + p.hint;
  };
  EXPECT_EQ(why("30"),
            "expected a duration like 500ms, 2s, 1.5s or 1m, got '30' | "
            "add a unit: 30s (units: ms, s, m)");
  EXPECT_EQ(why("soon"),
            "expected a duration like 500ms, 2s, 1.5s or 1m, got 'soon' | "
            "a number followed by ms, s or m");
  EXPECT_EQ(why("1.5ms"), "duration '1.5ms' is not a whole number of milliseconds | ");
  EXPECT_EQ(why("0s"), "duration '0s' is zero; expected a positive duration | ");
  EXPECT_EQ(why("1441m"), "duration '1441m' is longer than 24h | ");
}

TEST(YamlDuration, ReportsAtTheValue) {
  Doc doc("timeout: 2s\nwait: 2\n");
  EXPECT_EQ(doc.reader.duration(doc.field("timeout")), std::chrono::milliseconds(2000));
  EXPECT_FALSE(doc.reader.duration(doc.field("wait")));
  expect_at(doc.only(), 2, 7, "wait");
  EXPECT_EQ(doc.only().hint, "add a unit: 2s (units: ms, s, m)");
}

TEST(YamlLists, ScalarOrListGivesOneValuePerItem) {
  Doc doc("one: a\nmany: [a, b]\nmap: {a: 1}\n");
  auto one = doc.reader.scalar_or_list(doc.field("one"), "expected names");
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].field, "one");
  auto many = doc.reader.scalar_or_list(doc.field("many"), "expected names");
  ASSERT_EQ(many.size(), 2u);
  EXPECT_EQ(many[1].field, "many[1]");
  EXPECT_TRUE(doc.reader.scalar_or_list(doc.field("map"), "expected names").empty());
  EXPECT_EQ(doc.only().message, "expected names");
}

TEST(YamlLists, OneOrManyWantsExactlyOneOfTheKeys) {
  Doc doc("both: {node: a, nodes: [b]}\nnone: {x: 1}\nempty: {nodes: []}\nok: {nodes: [a, b]}\n");
  auto read = [&](const char* k) {
    return doc.reader.one_or_many(doc.field(k), "node", "nodes", "nodes to change", "leaf1");
  };
  EXPECT_TRUE(read("both").empty());
  EXPECT_TRUE(read("none").empty());
  EXPECT_TRUE(read("empty").empty());
  EXPECT_EQ(read("ok").size(), 2u);
  std::vector<std::string> messages;
  for (const auto& d : doc.diags.items()) messages.push_back(d.field + ": " + d.message);
  EXPECT_THAT(messages,
              ElementsAre("both.node: give node or nodes, not both",
                          "none.nodes: missing; expected the nodes to change (`nodes: [leaf1]` or "
                          "`node: leaf1`)",
                          "empty.nodes: empty list; expected at least one of nodes to change"));
}

TEST(Names, DidYouMeanAndJoins) {
  EXPECT_EQ(twin::did_you_mean("lnks", {"nodes", "links"}, "none"), "did you mean 'links'?");
  EXPECT_EQ(twin::did_you_mean("zzzzzz", {"nodes", "links"}, "none"), "none");
  EXPECT_EQ(twin::join_names({"a", "b", "c"}), "a, b, c");
  EXPECT_EQ(twin::join_some({"a", "b", "c", "d", "e", "f"}), "a, b, c, d and 2 more");
  EXPECT_EQ(twin::join_some({"a", "b"}), "a, b");
}

}  // namespace
