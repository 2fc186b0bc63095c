// Unit tests for the report sinks (twin/report/report.hpp): verdicts and exit codes, the JSON
// document, JUnit XML (checked with a small strict XML reader below) and the text summary.
#include <sstream>
#include "twin/report/apply_report.hpp"
#include "twin/report/report.hpp"

#include <gtest/gtest.h>

#include <cctype>
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

using twin::validate::Report;
using twin::validate::Status;
using twin::validate::TestResult;

TestResult result(std::string validator, int test, std::string test_name, Status status,
                  std::string node = "", std::string peer = "") {
  TestResult r;
  r.validator = std::move(validator);
  r.test = test;
  r.test_name = std::move(test_name);
  r.status = status;
  r.node = std::move(node);
  r.peer = std::move(peer);
  r.attempts = 1;
  return r;
}

Report with_statuses(const std::vector<Status>& statuses) {
  Report rep;
  rep.lab = "dc1";
  int i = 0;
  for (Status s : statuses)
    rep.results.push_back(result("bgp", 0, "session", s, "n" + std::to_string(i++)));
  return rep;
}

// The report most tests use: two families, interleaved, every status.
Report sample() {
  Report rep;
  rep.lab = "dc1";
  rep.twin_version = "0.1.0";
  rep.frr_version = "8.4.4";
  rep.kernel_version = "6.1.0";
  rep.started_at = "2024-05-01T10:00:00Z";
  rep.duration_ms = 12345;

  auto r = result("bgp", 0, "session-established", Status::kPassed, "leaf1", "swp1");
  r.expected = r.observed = "Established";
  r.duration_ms = 12;
  r.time_to_pass_ms = 800;
  rep.results.push_back(r);

  r = result("bgp", 0, "session-established", Status::kFailed, "leaf1", "swp2");
  r.expected = "Established";
  r.observed = "Active";
  r.message = "peer spine2 not answering";
  r.duration_ms = 3.4;
  r.attempts = 20;
  rep.results.push_back(r);

  r = result("bgp", 0, "session-established", Status::kPassed, "leaf2", "swp1");
  r.expected = r.observed = "Established";
  r.duration_ms = 10;
  r.time_to_pass_ms = 1200;
  rep.results.push_back(r);

  r = result("bgp", 4, "prefixes-received", Status::kError, "leaf1", "swp1");
  r.message = "vtysh returned {}";
  rep.results.push_back(r);

  r = result("mtu", 0, "link-mtu-agrees", Status::kPassed, "leaf1", "swp1");
  r.expected = r.observed = "9000";
  r.time_to_pass_ms = 100;
  rep.results.push_back(r);

  r = result("mtu", 1, "df-ping", Status::kSkipped, "leaf1", "swp1");
  r.message = "no IPv6 link-local";
  rep.results.push_back(r);

  r = result("mtu", 1, "df-ping", Status::kSkipped, "leaf2", "swp1");
  r.message = "no IPv6 link-local";
  rep.results.push_back(r);

  // After mtu's results, but belongs to the bgp family (first seen first).
  r = result("bgp", 4, "prefixes-received", Status::kPassed, "leaf2", "swp1");
  r.expected = ">= 1";
  r.observed = "12";
  r.time_to_pass_ms = 2000;
  rep.results.push_back(r);
  return rep;
}

// ---- a small, strict XML reader: enough to check well-formedness and read values back --------

struct Element {
  std::string name;
  std::map<std::string, std::string> attrs;
  std::vector<std::unique_ptr<Element>> children;
  std::string text;  // decoded character data directly inside this element

  [[nodiscard]] std::vector<const Element*> all(const std::string& n) const {
    std::vector<const Element*> out;
    for (const auto& c : children) {
      if (c->name == n) out.push_back(c.get());
    }
    return out;
  }
};

class XmlReader {
 public:
  explicit XmlReader(std::string_view s) : s_(s) {}

  std::unique_ptr<Element> document() {
    const std::string_view decl = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>";
    if (s_.substr(0, decl.size()) != decl) fail("missing XML declaration");
    pos_ = decl.size();
    skip_space();
    auto root = element();
    skip_space();
    if (pos_ != s_.size()) fail("content after the root element");
    return root;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error(what + " at offset " + std::to_string(pos_));
  }
  void skip_space() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\t' || s_[pos_] == '\r')) {
      ++pos_;
    }
  }
  void expect(char c) {
    if (pos_ >= s_.size() || s_[pos_] != c) fail(std::string("expected '") + c + "'");
    ++pos_;
  }
  std::string name() {
    const std::size_t start = pos_;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) ||
                                s_[pos_] == '_' || s_[pos_] == '-' || s_[pos_] == ':')) {
      ++pos_;
    }
    if (pos_ == start) fail("expected a name");
    return std::string(s_.substr(start, pos_ - start));
  }
  static void append_utf8(std::string& out, std::uint32_t cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }
  // One character of content (text or attribute value), decoding references; rejects what
  // XML 1.0 does not allow there.
  void content_char(std::string& out, bool attr) {
    const char c = s_[pos_];
    const auto u = static_cast<unsigned char>(c);
    if (c == '<') fail("raw '<' in content");
    if (attr && c == '"') fail("raw quote in attribute");
    if (u < 0x20 && c != '\t' && c != '\n' && c != '\r') fail("control character");
    if (c != '&') {
      // Attribute-value normalisation: literal whitespace becomes a space.
      out += (attr && (c == '\t' || c == '\n' || c == '\r')) ? ' ' : c;
      ++pos_;
      return;
    }
    const std::size_t semi = s_.find(';', pos_);
    if (semi == std::string_view::npos) fail("unterminated reference");
    const std::string_view ref = s_.substr(pos_ + 1, semi - pos_ - 1);
    static const std::map<std::string_view, char> kEntities = {
        {"lt", '<'}, {"gt", '>'}, {"amp", '&'}, {"quot", '"'}, {"apos", '\''}};
    if (auto it = kEntities.find(ref); it != kEntities.end()) {
      out += it->second;
    } else if (ref.size() > 1 && ref[0] == '#') {
      const bool hex = ref[1] == 'x';
      const std::string digits(ref.substr(hex ? 2 : 1));
      if (digits.empty()) fail("empty character reference");
      std::size_t used = 0;
      const unsigned long cp = std::stoul(digits, &used, hex ? 16 : 10);
      if (used != digits.size()) fail("bad character reference");
      const bool allowed = cp == 0x9 || cp == 0xA || cp == 0xD || (cp >= 0x20 && cp <= 0xD7FF) ||
                           (cp >= 0xE000 && cp <= 0xFFFD) || (cp >= 0x10000 && cp <= 0x10FFFF);
      if (!allowed) fail("character reference to a forbidden character");
      append_utf8(out, static_cast<std::uint32_t>(cp));
    } else {
      fail("unknown entity &" + std::string(ref) + ";");
    }
    pos_ = semi + 1;
  }
  std::unique_ptr<Element> element() {
    expect('<');
    auto e = std::make_unique<Element>();
    e->name = name();
    for (;;) {
      skip_space();
      if (pos_ >= s_.size()) fail("unterminated start tag");
      if (s_.substr(pos_, 2) == "/>") {
        pos_ += 2;
        return e;
      }
      if (s_[pos_] == '>') {
        ++pos_;
        break;
      }
      const std::string attr = name();
      expect('=');
      expect('"');
      std::string value;
      while (pos_ < s_.size() && s_[pos_] != '"') content_char(value, true);
      expect('"');
      if (!e->attrs.emplace(attr, value).second) fail("duplicate attribute " + attr);
    }
    for (;;) {
      if (pos_ >= s_.size()) fail("unterminated element " + e->name);
      if (s_.substr(pos_, 2) == "</") {
        pos_ += 2;
        if (name() != e->name) fail("mismatched end tag for " + e->name);
        skip_space();
        expect('>');
        return e;
      }
      if (s_[pos_] == '<') {
        e->children.push_back(element());
      } else {
        content_char(e->text, false);
      }
    }
  }

  std::string_view s_;
  std::size_t pos_ = 0;
};

std::unique_ptr<Element> parse_xml(const std::string& s) { return XmlReader(s).document(); }

std::vector<std::string> lines(const std::string& s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < s.size()) {
    const std::size_t nl = s.find('\n', start);
    if (nl == std::string::npos) {
      out.push_back(s.substr(start));
      break;
    }
    out.push_back(s.substr(start, nl - start));
    start = nl + 1;
  }
  return out;
}

std::size_t occurrences(const std::string& hay, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + 1)) ++n;
  return n;
}

// ---- verdicts -------------------------------------------------------------------------------

TEST(ReportVerdict, AllPassedOrSkippedPasses) {
  const Report rep = with_statuses({Status::kPassed, Status::kSkipped, Status::kPassed});
  EXPECT_EQ(rep.exit_code(), 0);
  EXPECT_STREQ(twin::report::verdict(rep), "pass");
  EXPECT_EQ(lines(twin::report::render_text(rep, false)).back(),
            "VERDICT: PASS (3 tests, 2 passed, 1 skipped)");
  const auto j = twin::report::to_json(rep);
  EXPECT_EQ(j.at("verdict"), "pass");
  EXPECT_EQ(j.at("exit_code"), 0);
}

TEST(ReportVerdict, EmptyReportIsAnErrorNotAPass) {
  const Report rep = with_statuses({});
  EXPECT_EQ(rep.exit_code(), 3);
  EXPECT_STREQ(twin::report::verdict(rep), "error");
  EXPECT_EQ(twin::report::render_text(rep, false),
            "twin validation report — lab dc1 (0.0 s)\nVERDICT: ERROR — no test ran\n");
  const auto doc = parse_xml(twin::report::render_junit(rep));
  EXPECT_EQ(doc->attrs.at("tests"), "0");
  EXPECT_TRUE(doc->children.empty());
}

TEST(ReportVerdict, FailedWinsOverError) {
  const Report rep = with_statuses(
      {Status::kError, Status::kFailed, Status::kPassed, Status::kFailed, Status::kFailed});
  EXPECT_EQ(rep.exit_code(), 1);
  EXPECT_STREQ(twin::report::verdict(rep), "fail");
  EXPECT_EQ(lines(twin::report::render_text(rep, false)).back(),
            "VERDICT: FAIL — 3 failed, 1 error");
  const auto j = twin::report::to_json(rep);
  EXPECT_EQ(j.at("verdict"), "fail");
  EXPECT_EQ(j.at("exit_code"), 1);
}

TEST(ReportVerdict, FailedWithoutErrorsOmitsErrorCount) {
  const Report rep = with_statuses({Status::kPassed, Status::kFailed});
  EXPECT_EQ(lines(twin::report::render_text(rep, false)).back(), "VERDICT: FAIL — 1 failed");
}

TEST(ReportVerdict, ErrorsWithoutFailureAreHarnessErrors) {
  const Report rep =
      with_statuses({Status::kPassed, Status::kError, Status::kSkipped, Status::kError});
  EXPECT_EQ(rep.exit_code(), 3);
  EXPECT_STREQ(twin::report::verdict(rep), "error");
  EXPECT_EQ(lines(twin::report::render_text(rep, false)).back(),
            "VERDICT: ERROR — harness could not tell: 2 errors");
  const auto j = twin::report::to_json(rep);
  EXPECT_EQ(j.at("verdict"), "error");
  EXPECT_EQ(j.at("exit_code"), 3);
  const auto one = with_statuses({Status::kError});
  EXPECT_EQ(lines(twin::report::render_text(one, false)).back(),
            "VERDICT: ERROR — harness could not tell: 1 error");
}

// ---- JSON -----------------------------------------------------------------------------------

TEST(ReportJson, HeaderSummaryAndResults) {
  const nlohmann::json j = twin::report::to_json(sample());
  EXPECT_EQ(j.at("schema_version"), 1);
  EXPECT_EQ(j.at("lab"), "dc1");
  EXPECT_EQ(j.at("twin_version"), "0.1.0");
  EXPECT_EQ(j.at("frr_version"), "8.4.4");
  EXPECT_EQ(j.at("kernel_version"), "6.1.0");
  EXPECT_EQ(j.at("started_at"), "2024-05-01T10:00:00Z");
  EXPECT_DOUBLE_EQ(j.at("duration_ms").get<double>(), 12345.0);
  EXPECT_EQ(j.at("verdict"), "fail");
  EXPECT_EQ(j.at("exit_code"), 1);
  EXPECT_EQ(
      j.at("summary"),
      nlohmann::json({{"passed", 4}, {"failed", 1}, {"error", 1}, {"skipped", 2}, {"total", 8}}));
  EXPECT_EQ(j.size(), 13u);
  EXPECT_EQ(j.at("notes"), nlohmann::json::array());
  EXPECT_EQ(j.at("bandwidth"), nlohmann::json::array());  // the traffic family did not run

  const auto& results = j.at("results");
  ASSERT_EQ(results.size(), 8u);
  // Report order, not grouped: the last one is bgp although mtu came before it.
  EXPECT_EQ(results[7].at("validator"), "bgp");
  EXPECT_EQ(results[4].at("validator"), "mtu");

  const auto& failed = results[1];
  EXPECT_EQ(failed.size(), 13u);
  EXPECT_EQ(failed.at("lab"), "dc1");
  EXPECT_EQ(failed.at("validator"), "bgp");
  EXPECT_EQ(failed.at("test"), 0);
  EXPECT_TRUE(failed.at("test").is_number_integer());
  EXPECT_EQ(failed.at("test_name"), "session-established");
  EXPECT_EQ(failed.at("status"), "failed");
  EXPECT_EQ(failed.at("node"), "leaf1");
  EXPECT_EQ(failed.at("peer"), "swp2");
  EXPECT_EQ(failed.at("expected"), "Established");
  EXPECT_EQ(failed.at("observed"), "Active");
  EXPECT_EQ(failed.at("message"), "peer spine2 not answering");
  EXPECT_DOUBLE_EQ(failed.at("duration_ms").get<double>(), 3.4);
  EXPECT_TRUE(failed.at("time_to_pass_ms").is_null());  // never passed: null, not -1
  EXPECT_EQ(failed.at("attempts"), 20);

  EXPECT_EQ(results[0].at("status"), "passed");
  EXPECT_DOUBLE_EQ(results[0].at("time_to_pass_ms").get<double>(), 800.0);
  EXPECT_EQ(results[3].at("status"), "error");
  EXPECT_EQ(results[5].at("status"), "skipped");
  EXPECT_EQ(results[5].at("message"), "no IPv6 link-local");
  EXPECT_EQ(results[3].at("expected"), "");  // absent strings are "", never null
}

TEST(ReportJson, DumpIsStableAndSurvivesInvalidUtf8) {
  Report rep = sample();
  rep.results[1].observed = std::string("Act\xFFive");  // a stray byte from the network
  rep.results[1].message = "caf\xC3\xA9";               // valid UTF-8 stays as it is
  const nlohmann::json j = twin::report::to_json(rep);
  std::string dumped;
  ASSERT_NO_THROW(dumped = j.dump());
  EXPECT_EQ(dumped, twin::report::to_json(rep).dump());
  const auto back = nlohmann::json::parse(dumped);
  EXPECT_EQ(back.at("results")[1].at("observed"), "Act\xEF\xBF\xBDive");
  EXPECT_EQ(back.at("results")[1].at("message"), "caf\xC3\xA9");
  // Keys in a fixed (sorted) order: the document starts the same way every time.
  EXPECT_EQ(dumped.rfind("{\"bandwidth\":[],\"duration_ms\":12345.0,\"exit_code\":1,", 0), 0u)
      << dumped;
}

TEST(ReportJson, WrittenOneResultAtATimeIsTheDumpByteForByte) {
  Report rep = sample();
  rep.results[1].observed = std::string("Act\xFFive \"quoted\"\n\"results\": []");
  rep.results[2].message = ",\"results\":[] caf\xC3\xA9";
  // Every escape nlohmann writes, DEL and non-ASCII as they are, numbers of every shape.
  rep.results[3].node = std::string("a\\b\tc\bd\fe\rf\x01g\x1fh\x7fi \xE2\x82\xAC", 22);
  rep.results[3].time_to_pass_ms = 1e-05;
  rep.results[4].duration_ms = 123456789.125;
  rep.results[4].time_to_pass_ms = 1e21;
  rep.results[5].duration_ms = std::nan("");
  const nlohmann::json extra{{"likely_causes", {{{"text", "an MTU mismatch"}}}}};
  auto expected = twin::report::to_json(rep);
  expected["likely_causes"] = extra["likely_causes"];
  for (int indent : {-1, 0, 2, 4}) {
    std::ostringstream out;
    twin::report::write_json(out, rep, indent, extra);
    EXPECT_EQ(out.str(), expected.dump(indent, ' ', false,
                                       nlohmann::json::error_handler_t::replace))
        << "indent " << indent;
  }
  Report none = sample();
  none.results.clear();
  for (int indent : {-1, 2}) {
    std::ostringstream out;
    twin::report::write_json(out, none, indent, nlohmann::json::object());
    EXPECT_EQ(out.str(), twin::report::to_json(none).dump(indent)) << "indent " << indent;
  }
}

// A change's report holds several validations (baseline, after, per step, restart check,
// rollback): streamed into the document, it must be apply_to_json's dump byte for byte, at
// every indentation and with a scenario's keys added.
// A change's result on lab1 at `stage`, its baseline the sample report.
twin::replay::ApplyResult sample_apply(const std::string& stage) {
  twin::replay::ApplyResult r;
  r.lab = "lab1";
  r.change_name = "drain";
  r.stage = stage;
  r.baseline.report = sample();
  return r;
}

TEST(ReportJson, ApplyReportStreamedIsTheDumpByteForByte) {
  twin::replay::ApplyResult r = sample_apply("applied");
  r.change_name = "drain \"spine2\"";
  r.after.emplace();
  r.after->report = sample();
  r.after->report.results[1].observed = std::string("Act\xFFive \"twin-report:0\"\n");
  r.per_step.resize(2);
  r.per_step[0].name = "step 1";
  r.per_step[0].report = sample();
  r.per_step[1].name = "step 2";  // an empty validation
  r.restart_check.emplace();
  r.restart_check->nodes = {"spine2"};
  r.restart_check->phase.emplace();
  r.restart_check->phase->report = sample();
  r.rollback.emplace();
  r.rollback->report = sample();
  r.rollback->report.results.resize(1);
  const nlohmann::json extra{{"scenario", {{"name", "s"}, {"met", true}}}};
  for (int indent : {-1, 2, 4}) {
    for (const nlohmann::json* more : {&extra, static_cast<const nlohmann::json*>(nullptr)}) {
      auto expected = twin::report::apply_to_json(r);
      if (more) expected.update(*more);
      std::ostringstream out;
      twin::report::write_apply_json(out, r, more ? *more : nlohmann::json::object(), indent);
      EXPECT_EQ(out.str(), expected.dump(indent, ' ', false,
                                         nlohmann::json::error_handler_t::replace))
          << "indent " << indent;
    }
  }
}

// A baseline that fails stops the gate before the change (exit 4): the text names what was
// already wrong and its likely cause, as the JSON report does.
TEST(ApplyText, AFailedBaselineListsItsReasonsAndCauses) {
  twin::replay::ApplyResult r = sample_apply("baseline-failed");
  twin::replay::Reason re;
  re.category = "validator-failed";
  re.message = "bgp.1 prefixes-received failed on 2 subjects";
  re.causes.push_back({"policy-denies-all", "leaf2: prefix-list NOTHING denies every route",
                       {"leaf2: running config defines prefix-list NOTHING without a permit"},
                       {"leaf2"}});
  r.verdict.reasons.push_back(re);
  re.message = "routes.0 fib-complete failed on 5 subjects";
  r.verdict.reasons.push_back(re);
  re.causes.clear();
  re.message = "mtu.2 path-mtu failed on 1 subject";
  r.verdict.reasons.push_back(re);
  const std::string text = twin::report::render_apply_text(r, false);
  EXPECT_NE(text.find("VERDICT: BASELINE FAILED"), std::string::npos) << text;
  EXPECT_NE(text.find("  1. [validator-failed] bgp.1 prefixes-received failed on 2 subjects\n"
                      "     likely cause: leaf2: prefix-list NOTHING denies every route\n"
                      "       evidence: leaf2: running config defines prefix-list NOTHING without "
                      "a permit\n"
                      "  2. [validator-failed] routes.0 fib-complete failed on 5 subjects\n"
                      "     likely cause: as above\n"
                      "  3. [validator-failed] mtu.2 path-mtu failed on 1 subject\n"
                      "     likely cause: none of twin's rules matches the lab's state\n"),
            std::string::npos)
      << text;
}

// ---- JUnit ----------------------------------------------------------------------------------

TEST(ReportJunit, StructureCountsAndTimes) {
  const std::string xml = twin::report::render_junit(sample());
  std::unique_ptr<Element> root;
  ASSERT_NO_THROW(root = parse_xml(xml)) << xml;
  EXPECT_EQ(root->name, "testsuites");
  EXPECT_EQ(root->attrs.at("name"), "twin");
  EXPECT_EQ(root->attrs.at("tests"), "8");
  EXPECT_EQ(root->attrs.at("failures"), "1");
  EXPECT_EQ(root->attrs.at("errors"), "1");
  EXPECT_EQ(root->attrs.at("skipped"), "2");
  EXPECT_EQ(root->attrs.at("time"), "12.345");  // seconds

  const auto suites = root->all("testsuite");
  ASSERT_EQ(suites.size(), 2u);
  EXPECT_EQ(occurrences(xml, "<testsuite "), 2u);
  EXPECT_EQ(occurrences(xml, "<failure "), 1u);
  EXPECT_EQ(occurrences(xml, "<error "), 1u);
  EXPECT_EQ(occurrences(xml, "<skipped "), 2u);

  const Element& bgp = *suites[0];
  EXPECT_EQ(bgp.attrs.at("name"), "bgp");
  EXPECT_EQ(bgp.attrs.at("tests"), "5");
  EXPECT_EQ(bgp.attrs.at("failures"), "1");
  EXPECT_EQ(bgp.attrs.at("errors"), "1");
  EXPECT_EQ(bgp.attrs.at("skipped"), "0");
  EXPECT_EQ(bgp.attrs.at("time"), "0.025");  // 12 + 3.4 + 10 ms, rounded to ms
  const Element& mtu = *suites[1];
  EXPECT_EQ(mtu.attrs.at("name"), "mtu");
  EXPECT_EQ(mtu.attrs.at("tests"), "3");
  EXPECT_EQ(mtu.attrs.at("skipped"), "2");

  const auto props = bgp.all("properties");
  ASSERT_EQ(props.size(), 1u);
  std::map<std::string, std::string> p;
  for (const Element* e : props[0]->all("property")) p[e->attrs.at("name")] = e->attrs.at("value");
  EXPECT_EQ(p.at("lab"), "dc1");
  EXPECT_EQ(p.at("frr_version"), "8.4.4");
  EXPECT_EQ(p.at("started_at"), "2024-05-01T10:00:00Z");

  const auto cases = bgp.all("testcase");
  ASSERT_EQ(cases.size(), 5u);
  EXPECT_EQ(cases[0]->attrs.at("classname"), "twin.dc1.bgp");
  EXPECT_EQ(cases[0]->attrs.at("name"), "0 session-established leaf1 swp1");
  EXPECT_EQ(cases[0]->attrs.at("time"), "0.012");
  EXPECT_TRUE(cases[0]->children.empty());  // passed: no child element

  const auto failure = cases[1]->all("failure");
  ASSERT_EQ(failure.size(), 1u);
  EXPECT_EQ(failure[0]->attrs.at("type"), "failed");
  EXPECT_EQ(failure[0]->attrs.at("message"), "peer spine2 not answering");
  EXPECT_EQ(failure[0]->text, "expected: Established\nobserved: Active");
  EXPECT_EQ(cases[1]->attrs.at("time"), "0.003");  // 3.4 ms

  const auto error = cases[3]->all("error");
  ASSERT_EQ(error.size(), 1u);
  EXPECT_EQ(error[0]->attrs.at("message"), "vtysh returned {}");
  EXPECT_EQ(error[0]->attrs.at("type"), "error");
  EXPECT_EQ(error[0]->text, "");  // no expected / observed: no body
  EXPECT_EQ(cases[3]->attrs.at("name"), "4 prefixes-received leaf1 swp1");

  EXPECT_EQ(cases[4]->attrs.at("name"), "4 prefixes-received leaf2 swp1");  // grouped by family

  const auto skipped = mtu.all("testcase")[1]->all("skipped");
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_EQ(skipped[0]->attrs.at("message"), "no IPv6 link-local");
  EXPECT_EQ(mtu.all("testcase")[1]->attrs.at("classname"), "twin.dc1.mtu");
}

TEST(ReportJunit, EscapesMarkupAndDropsControlCharacters) {
  Report rep;
  rep.lab = "a&b";
  auto r = result("bgp", 1, "afi-agree", Status::kFailed, "leaf<1>", "peer\"'");
  r.message = "bad <&>\"' \x01 end\nline two\ttab";
  r.expected = "<ipv4>";
  r.observed = "x\x1By & \xFF";
  rep.results.push_back(r);
  auto s = result("bgp", 2, "router-id", Status::kSkipped);
  s.message = "]]> \x7F\r";
  rep.results.push_back(s);

  const std::string xml = twin::report::render_junit(rep);
  for (char c : xml) {
    const auto u = static_cast<unsigned char>(c);
    EXPECT_FALSE(u < 0x20 && c != '\n' && c != '\t' && c != '\r')
        << "raw control byte " << static_cast<int>(u);
  }
  EXPECT_NE(
      xml.find("message=\"bad &lt;&amp;&gt;&quot;&apos; \xEF\xBF\xBD end&#10;line two&#9;tab\""),
      std::string::npos)
      << xml;
  EXPECT_EQ(xml.find("]]>"), std::string::npos);

  std::unique_ptr<Element> root;
  ASSERT_NO_THROW(root = parse_xml(xml)) << xml;
  const Element& tc = *root->all("testsuite")[0]->all("testcase")[0];
  EXPECT_EQ(tc.attrs.at("classname"), "twin.a&b.bgp");
  EXPECT_EQ(tc.attrs.at("name"), "1 afi-agree leaf<1> peer\"'");
  const Element& failure = *tc.all("failure")[0];
  // Round trip: what a reader decodes is the message with only the control char replaced.
  EXPECT_EQ(failure.attrs.at("message"), "bad <&>\"' \xEF\xBF\xBD end\nline two\ttab");
  EXPECT_EQ(failure.text, "expected: <ipv4>\nobserved: x\xEF\xBF\xBDy & \xEF\xBF\xBD");
  const Element& skip = *root->all("testsuite")[0]->all("testcase")[1]->all("skipped")[0];
  EXPECT_EQ(skip.attrs.at("message"), "]]> \x7F\r");
}

// ---- text -----------------------------------------------------------------------------------

TEST(ReportText, SummaryAggregatesPassedAndListsProblems) {
  const std::string text = twin::report::render_text(sample(), false);
  EXPECT_EQ(text,
            "twin validation report — lab dc1 (twin 0.1.0, FRR 8.4.4, kernel 6.1.0, started "
            "2024-05-01T10:00:00Z, 12.3 s)\n"
            "bgp: 3 passed, 1 failed, 1 error, 0 skipped\n"
            "  [PASS] bgp 0 session-established  2/3 (time to pass 1.2 s)\n"
            "  [FAIL] bgp 0 session-established leaf1 swp2: expected Established, observed "
            "Active — peer spine2 not answering\n"
            "  [ERROR] bgp 4 prefixes-received leaf1 swp1 — vtysh returned {}\n"
            "  [PASS] bgp 4 prefixes-received  1/2 (time to pass 2.0 s)\n"
            "mtu: 1 passed, 0 failed, 0 errors, 2 skipped\n"
            "  [PASS] mtu 0 link-mtu-agrees  1/1 (time to pass 0.1 s)\n"
            "  [SKIP] mtu 1 df-ping  2/2 — no IPv6 link-local\n"
            "VERDICT: FAIL — 1 failed, 1 error\n");
  EXPECT_EQ(text, twin::report::render_text(sample(), false));  // deterministic
}

TEST(ReportText, VerboseListsEveryResult) {
  const auto l = lines(twin::report::render_text(sample(), true));
  ASSERT_EQ(l.size(), 1u + 2u + 8u + 1u);
  EXPECT_EQ(l[2],
            "  [PASS] bgp 0 session-established leaf1 swp1: expected Established, observed "
            "Established (time to pass 0.8 s)");
  EXPECT_EQ(l[3],
            "  [FAIL] bgp 0 session-established leaf1 swp2: expected Established, observed "
            "Active — peer spine2 not answering");
  EXPECT_EQ(l[6],
            "  [PASS] bgp 4 prefixes-received leaf2 swp1: expected >= 1, observed 12 "
            "(time to pass 2.0 s)");
  EXPECT_EQ(l[7], "mtu: 1 passed, 0 failed, 0 errors, 2 skipped");
  EXPECT_EQ(l[9], "  [SKIP] mtu 1 df-ping leaf1 swp1 — no IPv6 link-local");
  EXPECT_EQ(l.back(), "VERDICT: FAIL — 1 failed, 1 error");
}

TEST(ReportText, SkippedWithDifferentReasonsAndNoTimeToPass) {
  Report rep;
  rep.lab = "x";
  auto a = result("routes", 3, "installed", Status::kSkipped, "n1");
  a.message = "no FIB";
  auto b = result("routes", 3, "installed", Status::kSkipped, "n2");
  b.message = "no RIB";
  auto c = result("routes", 1, "present", Status::kPassed, "n1");  // time_to_pass unknown
  rep.results = {a, b, c};
  const auto l = lines(twin::report::render_text(rep, false));
  ASSERT_EQ(l.size(), 5u);
  EXPECT_EQ(l[2], "  [SKIP] routes 3 installed  2/2 — various reasons (see --verbose)");
  EXPECT_EQ(l[3], "  [PASS] routes 1 present  1/1");
}

TEST(ReportText, ControlCharactersCannotBreakLinesOrReachTheTerminal) {
  Report rep;
  rep.lab = "dc1";
  auto r = result("bgp", 0, "session-established", Status::kError, "leaf1");
  r.message = "no data\n\x1B[31mred\x1B[0m";
  rep.results.push_back(r);
  const auto l = lines(twin::report::render_text(rep, false));
  ASSERT_EQ(l.size(), 4u);
  EXPECT_EQ(l[2], "  [ERROR] bgp 0 session-established leaf1 — no data  [31mred [0m");
}

}  // namespace
