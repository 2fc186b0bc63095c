#include "twin/report/report.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string_view>
#include <utility>
#include <vector>

#include "twin/validate/runner.hpp"

namespace twin::report {

namespace {

using twin::validate::Report;
using twin::validate::Status;
using twin::validate::TestResult;

// ---- strings from the network ---------------------------------------------------------------

enum class Clean {
  kJson,  // valid UTF-8 only
  kXml,   // valid UTF-8, and only characters XML 1.0 allows
  kText,  // valid UTF-8, control characters (C0, DEL, C1) become a space
};

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

bool xml_allowed(std::uint32_t cp) {
  if (cp < 0x20) return cp == 0x09 || cp == 0x0A || cp == 0x0D;
  return cp != 0xFFFE && cp != 0xFFFF;  // surrogates never decode (see below)
}

// Decodes `s` as UTF-8, replacing each byte that does not start a valid, shortest-form sequence
// with U+FFFD, and applies `policy` to each decoded code point.
std::string clean(std::string_view s, Clean policy) {
  std::string out;
  out.reserve(s.size());
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t len = 0;
    std::uint32_t cp = 0;
    std::uint32_t min = 0;
    if (c < 0x80) {
      len = 1;
      cp = c;
    } else if ((c & 0xE0) == 0xC0) {
      len = 2;
      cp = c & 0x1F;
      min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3;
      cp = c & 0x0F;
      min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4;
      cp = c & 0x07;
      min = 0x10000;
    }
    bool valid = len != 0 && i + len <= s.size();
    for (std::size_t k = 1; valid && k < len; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      if ((b & 0xC0) != 0x80) {
        valid = false;
      } else {
        cp = (cp << 6) | (b & 0x3F);
      }
    }
    if (valid && (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))) valid = false;
    if (!valid) {
      out += kReplacement;
      ++i;
      continue;
    }
    switch (policy) {
      case Clean::kJson:
        out.append(s.substr(i, len));
        break;
      case Clean::kXml:
        if (xml_allowed(cp)) {
          out.append(s.substr(i, len));
        } else {
          out += kReplacement;
        }
        break;
      case Clean::kText:
        if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F)) {
          out += ' ';
        } else {
          out.append(s.substr(i, len));
        }
        break;
    }
    i += len;
  }
  return out;
}

// Escapes for XML character data (attr = false) or a double- or single-quoted attribute value
// (attr = true). Input must already be clean(…, kXml).
std::string xml_escape(std::string_view s, bool attr) {
  std::string out;
  out.reserve(s.size() + s.size() / 8);
  for (char ch : s) {
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      case '\r':  // line-end normalisation would turn a literal CR into LF
        out += "&#13;";
        break;
      case '\n':  // attribute-value normalisation would turn these into spaces
        out += attr ? "&#10;" : "\n";
        break;
      case '\t':
        out += attr ? "&#9;" : "\t";
        break;
      default:
        out += ch;
    }
  }
  return out;
}

std::string xml(std::string_view s, bool attr) { return xml_escape(clean(s, Clean::kXml), attr); }

// ---- numbers --------------------------------------------------------------------------------

double finite_or_zero(double v) { return std::isfinite(v) && v > 0 ? v : 0.0; }

std::string format(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

// JUnit: seconds with millisecond precision.
std::string junit_seconds(double ms) { return format("%.3f", finite_or_zero(ms) / 1000.0); }

// Text: seconds with one decimal.
std::string text_seconds(double ms) { return format("%.1f s", finite_or_zero(ms) / 1000.0); }

std::string plural(int n, std::string_view one, std::string_view many) {
  return std::to_string(n) + " " + std::string(n == 1 ? one : many);
}

// ---- grouping -------------------------------------------------------------------------------

struct Counts {
  int passed = 0;
  int failed = 0;
  int error = 0;
  int skipped = 0;
  double duration_ms = 0;

  void add(const TestResult& r) {
    switch (r.status) {
      case Status::kPassed:
        ++passed;
        break;
      case Status::kFailed:
        ++failed;
        break;
      case Status::kError:
        ++error;
        break;
      case Status::kSkipped:
        ++skipped;
        break;
    }
    duration_ms += finite_or_zero(r.duration_ms);
  }
  [[nodiscard]] int total() const { return passed + failed + error + skipped; }
};

struct Family {
  std::string name;
  std::vector<const TestResult*> results;
  Counts counts;
};

// Families in order of first appearance; results within each in report order.
std::vector<Family> group_by_family(const Report& report) {
  std::vector<Family> families;
  for (const auto& r : report.results) {
    Family* f = nullptr;
    for (auto& candidate : families) {
      if (candidate.name == r.validator) {
        f = &candidate;
        break;
      }
    }
    if (f == nullptr) {
      families.push_back(Family{r.validator, {}, {}});
      f = &families.back();
    }
    f->results.push_back(&r);
    f->counts.add(r);
  }
  return families;
}

bool same_test(const TestResult& a, const TestResult& b) {
  return a.test == b.test && a.test_name == b.test_name;
}

// ---- text -----------------------------------------------------------------------------------

std::string t(std::string_view s) { return clean(s, Clean::kText); }

const char* tag(Status s) {
  switch (s) {
    case Status::kPassed:
      return "[PASS]";
    case Status::kFailed:
      return "[FAIL]";
    case Status::kError:
      return "[ERROR]";
    case Status::kSkipped:
      return "[SKIP]";
  }
  return "[ERROR]";
}

// "bgp 0 session-established"
std::string test_id(const TestResult& r) {
  std::string out = t(r.validator) + " " + std::to_string(r.test);
  if (!r.test_name.empty()) out += " " + t(r.test_name);
  return out;
}

// "  [FAIL] bgp 0 session-established leaf1 swp1: expected Established, observed Active — msg"
std::string result_line(const TestResult& r) {
  std::string line = "  " + std::string(tag(r.status)) + " " + test_id(r);
  if (!r.node.empty()) line += " " + t(r.node);
  if (!r.peer.empty()) line += " " + t(r.peer);
  std::string detail;
  if (!r.expected.empty()) detail = "expected " + t(r.expected);
  if (!r.observed.empty()) {
    if (!detail.empty()) detail += ", ";
    detail += "observed " + t(r.observed);
  }
  if (!detail.empty()) line += ": " + detail;
  if (r.status == Status::kPassed && r.time_to_pass_ms >= 0) {
    line += " (time to pass " + text_seconds(r.time_to_pass_ms) + ")";
  }
  if (!r.message.empty()) line += " — " + t(r.message);
  // Said once after the verdict when the whole lab is why (render_text), and not again on the
  // result that is the reason itself.
  if (r.status != Status::kPassed && !r.cannot_converge.empty() && !r.unhealthy &&
      r.cannot_converge.rfind(validate::kLabUnhealthy, 0) != 0)
    line += " [not waited for: " + t(r.cannot_converge) + "]";
  return line + "\n";
}

// "  [PASS] bgp 0 session-established  16/16 (time to pass 1.2 s)" for the results of one test
// with status `s` (passed or skipped), out of all results of that test in the family.
std::string aggregate_line(const Family& family, const TestResult& first, Status s) {
  int matching = 0;
  int total = 0;
  double max_ttp = -1;
  bool same_reason = true;
  const std::string* reason = nullptr;
  for (const TestResult* r : family.results) {
    if (!same_test(*r, first)) continue;
    ++total;
    if (r->status != s) continue;
    ++matching;
    if (r->time_to_pass_ms >= 0 && r->time_to_pass_ms > max_ttp) max_ttp = r->time_to_pass_ms;
    if (reason == nullptr) {
      reason = &r->message;
    } else if (*reason != r->message) {
      same_reason = false;
    }
  }
  std::string line = "  " + std::string(tag(s)) + " " + test_id(first) + "  " +
                     std::to_string(matching) + "/" + std::to_string(total);
  if (s == Status::kPassed && max_ttp >= 0) {
    line += " (time to pass " + text_seconds(max_ttp) + ")";
  }
  if (s == Status::kSkipped) {
    if (!same_reason) {
      line += " — various reasons (see --verbose)";
    } else if (reason != nullptr && !reason->empty()) {
      line += " — " + t(*reason);
    }
  }
  return line + "\n";
}

std::string header_line(const Report& report) {
  std::string line = "twin validation report — lab " + (report.lab.empty() ? "?" : t(report.lab));
  std::vector<std::string> parts;
  if (!report.twin_version.empty()) parts.push_back("twin " + t(report.twin_version));
  if (!report.frr_version.empty()) parts.push_back("FRR " + t(report.frr_version));
  if (!report.kernel_version.empty()) parts.push_back("kernel " + t(report.kernel_version));
  if (!report.started_at.empty()) parts.push_back("started " + t(report.started_at));
  parts.push_back(text_seconds(report.duration_ms));
  line += " (";
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) line += ", ";
    line += parts[i];
  }
  return line + ")\n";
}

std::string counts_text(const Counts& c) {
  return std::to_string(c.passed) + " passed, " + std::to_string(c.failed) + " failed, " +
         plural(c.error, "error", "errors") + ", " + std::to_string(c.skipped) + " skipped";
}

std::string verdict_line(const Report& report) {
  const int failed = report.count(Status::kFailed);
  const int errors = report.count(Status::kError);
  switch (report.exit_code()) {
    case 0:
      return "VERDICT: PASS (" + plural(static_cast<int>(report.results.size()), "test", "tests") +
             ", " + std::to_string(report.count(Status::kPassed)) + " passed, " +
             std::to_string(report.count(Status::kSkipped)) + " skipped)\n";
    case 1: {
      std::string line = "VERDICT: FAIL — " + std::to_string(failed) + " failed";
      if (errors > 0) line += ", " + plural(errors, "error", "errors");
      return line + "\n";
    }
    default:
      if (report.results.empty()) return "VERDICT: ERROR — no test ran\n";
      return "VERDICT: ERROR — harness could not tell: " + plural(errors, "error", "errors") + "\n";
  }
}

// ---- JUnit ----------------------------------------------------------------------------------

std::string counts_attrs(int tests, const Counts& c, double time_ms) {
  return " tests=\"" + std::to_string(tests) + "\" failures=\"" + std::to_string(c.failed) +
         "\" errors=\"" + std::to_string(c.error) + "\" skipped=\"" + std::to_string(c.skipped) +
         "\" time=\"" + junit_seconds(time_ms) + "\"";
}

std::string testcase_name(const TestResult& r) {
  std::string name = std::to_string(r.test);
  for (const std::string* part : {&r.test_name, &r.node, &r.peer}) {
    if (!part->empty()) name += " " + *part;
  }
  return name;
}

std::string expected_observed_body(const TestResult& r) {
  if (r.expected.empty() && r.observed.empty()) return "";
  return xml("expected: " + r.expected + "\nobserved: " + r.observed, false);
}

std::string problem_message(const TestResult& r) {
  if (!r.message.empty()) return r.message;
  if (r.expected.empty() && r.observed.empty()) return validate::to_string(r.status);
  return "expected " + r.expected + ", observed " + r.observed;
}

void append_property(std::string& out, const char* name, const std::string& value) {
  if (value.empty()) return;
  out += "      <property name=\"";
  out += name;
  out += "\" value=\"" + xml(value, true) + "\"/>\n";
}

}  // namespace

const char* verdict(const Report& report) {
  switch (report.exit_code()) {
    case 0:
      return "pass";
    case 1:
      return "fail";
    default:
      return "error";
  }
}

std::string render_text(const Report& report, bool verbose) {
  std::string out = header_line(report);
  for (const Family& family : group_by_family(report)) {
    out += (family.name.empty() ? std::string("?") : t(family.name)) + ": " +
           counts_text(family.counts) + "\n";
    // One aggregate line per (test, status), where its first such result is. A family has
    // few distinct tests, so a linear search over those already aggregated is cheap.
    std::vector<const TestResult*> aggregated;
    for (const TestResult* r : family.results) {
      if (verbose || (r->status != Status::kPassed && r->status != Status::kSkipped)) {
        out += result_line(*r);
        continue;
      }
      bool seen = false;
      for (const TestResult* a : aggregated) {
        if (a->status == r->status && same_test(*a, *r)) {
          seen = true;
          break;
        }
      }
      if (seen) continue;
      aggregated.push_back(r);
      out += aggregate_line(family, *r, r->status);
    }
  }
  out += verdict_line(report);
  {
    int sick = 0;
    std::string why;
    for (const auto& r : report.results)
      if (r.status != Status::kPassed && r.cannot_converge.rfind(validate::kLabUnhealthy, 0) == 0) {
        ++sick;
        why = r.cannot_converge.substr(std::string(validate::kLabUnhealthy).size());
      }
    if (sick > 0)
      out += "not waited for: " + plural(sick, "test that fails", "tests that fail") +
             " while the lab is unhealthy (" + t(why) + ")\n";
  }
  if (!report.notes.empty()) {
    out += "notes (" + std::to_string(report.notes.size()) + "):\n";
    for (const auto& n : report.notes) out += "  " + t(to_text(n)) + "\n";
  }
  return out;
}

namespace {
nlohmann::json result_json(const Report& report, const TestResult& r) {
  const auto s = [](const std::string& v) { return clean(v, Clean::kJson); };
  nlohmann::json j = {
      {"lab", s(report.lab)},
      {"validator", s(r.validator)},
      {"test", r.test},
      {"test_name", s(r.test_name)},
      {"status", validate::to_string(r.status)},
      {"node", s(r.node)},
      {"peer", s(r.peer)},
      {"expected", s(r.expected)},
      {"observed", s(r.observed)},
      {"message", s(r.message)},
      {"duration_ms", finite_or_zero(r.duration_ms)},
      {"time_to_pass_ms", r.time_to_pass_ms >= 0 && std::isfinite(r.time_to_pass_ms)
                              ? nlohmann::json(r.time_to_pass_ms)
                              : nlohmann::json(nullptr)},
      {"attempts", r.attempts},
  };
  // Only where set, so that reports of healthy labs keep their shape.
  if (!r.cannot_converge.empty()) j["cannot_converge"] = s(r.cannot_converge);
  if (r.unhealthy) j["unhealthy"] = true;
  return j;
}

// A JSON string as nlohmann::json's dump writes it (ensure_ascii off): `"`, `\\` and the C0
// controls escaped (\b \t \n \f \r by name, the others as \u00xx), invalid UTF-8 replaced
// first (clean), every other byte as it is.
void put_json_string(std::string& o, std::string_view raw) {
  std::string cleaned;
  std::string_view s = raw;
  for (unsigned char c : raw)
    if (c >= 0x80) {
      cleaned = clean(raw, Clean::kJson);
      s = cleaned;
      break;
    }
  o += '"';
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"': o += "\\\""; break;
      case '\\': o += "\\\\"; break;
      case '\b': o += "\\b"; break;
      case '\t': o += "\\t"; break;
      case '\n': o += "\\n"; break;
      case '\f': o += "\\f"; break;
      case '\r': o += "\\r"; break;
      default:
        if (c <= 0x1F) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          o += buf;
        } else {
          o += ch;
        }
    }
  }
  o += '"';
}

// One result as dump(result_json(report, r), indent) writes it, every line after the first
// indented by `base` more spaces (its depth in the document), without building the object:
// a report of 512 nodes writes ~1.8 million of them. Keys in nlohmann's (sorted) order.
void put_result(std::string& o, const Report& report, const TestResult& r, int indent,
                std::size_t base) {
  const bool pretty = indent >= 0;
  const std::string nl = pretty ? "\n" + std::string(base + static_cast<std::size_t>(indent), ' ')
                                : std::string();
  bool first = true;
  auto key = [&](const char* k) {
    if (!first) o += ',';
    first = false;
    o += nl;
    o += '"';
    o += k;
    o += pretty ? "\": " : "\":";
  };
  auto number = [&](const char* k, double v) {
    key(k);
    o += nlohmann::json(v).dump();
  };
  auto integer = [&](const char* k, int v) {
    key(k);
    o += std::to_string(v);
  };
  auto text = [&](const char* k, std::string_view v) {
    key(k);
    put_json_string(o, v);
  };
  o += '{';
  integer("attempts", r.attempts);
  if (!r.cannot_converge.empty()) text("cannot_converge", r.cannot_converge);
  number("duration_ms", finite_or_zero(r.duration_ms));
  text("expected", r.expected);
  text("lab", report.lab);
  text("message", r.message);
  text("node", r.node);
  text("observed", r.observed);
  text("peer", r.peer);
  text("status", validate::to_string(r.status));
  integer("test", r.test);
  text("test_name", r.test_name);
  if (r.time_to_pass_ms >= 0 && std::isfinite(r.time_to_pass_ms)) {
    number("time_to_pass_ms", r.time_to_pass_ms);
  } else {
    key("time_to_pass_ms");
    o += "null";
  }
  if (r.unhealthy) {
    key("unhealthy");
    o += "true";
  }
  text("validator", r.validator);
  if (pretty) {
    o += '\n';
    o.append(base, ' ');
  }
  o += '}';
}

}  // namespace

nlohmann::json bandwidth_json(const validate::Bandwidth& b) {
  return {{"pattern", clean(b.pattern, Clean::kJson)},
          {"pairs", b.pairs},
          {"flows", b.flows},
          {"aggregate_bps", finite_or_zero(b.aggregate_bps)},
          {"slowest_pair", clean(b.slowest_pair, Clean::kJson)},
          {"slowest_bps", finite_or_zero(b.slowest_bps)},
          {"slowest_fair_bps", finite_or_zero(b.slowest_fair_bps)},
          {"slowest_ratio", finite_or_zero(b.slowest_ratio)}};
}

namespace {

// Everything but the results.
nlohmann::json head_json(const Report& report) {
  const auto s = [](const std::string& v) { return clean(v, Clean::kJson); };
  auto j = nlohmann::json{
      {"schema_version", 1},
      {"lab", s(report.lab)},
      {"twin_version", s(report.twin_version)},
      {"frr_version", s(report.frr_version)},
      {"kernel_version", s(report.kernel_version)},
      {"started_at", s(report.started_at)},
      {"duration_ms", finite_or_zero(report.duration_ms)},
      {"verdict", verdict(report)},
      {"exit_code", report.exit_code()},
      {"summary",
       {{"passed", report.count(Status::kPassed)},
        {"failed", report.count(Status::kFailed)},
        {"error", report.count(Status::kError)},
        {"skipped", report.count(Status::kSkipped)},
        {"total", static_cast<int>(report.results.size())}}},
  };
  j["notes"] = nlohmann::json::array();
  for (const auto& n : report.notes)
    j["notes"].push_back({{"severity", s(n.severity)},
                          {"node", s(n.node)},
                          {"source", s(n.source)},
                          {"text", s(n.text)}});
  j["bandwidth"] = nlohmann::json::array();
  for (const auto& b : report.bandwidth) j["bandwidth"].push_back(bandwidth_json(b));
  return j;
}

std::string dump(const nlohmann::json& j, int indent) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}
}  // namespace

nlohmann::json to_json(const Report& report) {
  nlohmann::json results = nlohmann::json::array();
  for (const TestResult& r : report.results) results.push_back(result_json(report, r));
  auto j = head_json(report);
  j["results"] = std::move(results);
  return j;
}

void write_json(std::ostream& out, const Report& report, int indent,
                const nlohmann::json& extra) {
  auto head = head_json(report);
  if (extra.is_object())
    for (const auto& [k, v] : extra.items()) head[k] = v;
  head["results"] = nlohmann::json::array();
  const std::string text = dump(head, indent);
  // The empty array's place in the dumped head: at its key's own line with the top level's
  // indentation, or after a comma when compact (a string value cannot hold a raw newline or an
  // unescaped quote, so neither pattern can occur inside one).
  const std::string pad(indent > 0 ? static_cast<size_t>(indent) : 0, ' ');
  const std::string key = indent >= 0 ? "\n" + pad + "\"results\": []" : ",\"results\":[]";
  const size_t at = text.find(key);
  if (at == std::string::npos) {  // not reached: the head always holds the key
    auto whole = to_json(report);
    for (const auto& [k, v] : head.items())
      if (k != "results") whole[k] = v;
    out << dump(whole, indent);
    return;
  }
  const size_t open = at + key.size() - 2;  // the "[]"
  out.write(text.data(), static_cast<std::streamsize>(open));
  if (report.results.empty()) {
    out << "[]";
  } else {
    // Elements sit two levels deep when indented.
    const std::size_t deep = indent >= 0 ? 2 * static_cast<std::size_t>(indent) : 0;
    std::string e;
    out << (indent >= 0 ? "[\n" : "[");
    for (size_t i = 0; i < report.results.size(); ++i) {
      e.clear();
      e.append(deep, ' ');
      put_result(e, report, report.results[i], indent, deep);
      if (i + 1 < report.results.size()) e += indent >= 0 ? ",\n" : ",";
      else if (indent >= 0) e += '\n';
      out.write(e.data(), static_cast<std::streamsize>(e.size()));
    }
    if (indent >= 0) out << pad;
    out << ']';
  }
  out.write(text.data() + open + 2, static_cast<std::streamsize>(text.size() - open - 2));
}

std::string render_junit(const Report& report) {
  const std::vector<Family> families = group_by_family(report);
  Counts all;
  for (const auto& r : report.results) all.add(r);

  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<testsuites name=\"twin\"" +
         counts_attrs(static_cast<int>(report.results.size()), all, report.duration_ms) + ">\n";
  for (const Family& family : families) {
    out += "  <testsuite name=\"" + xml(family.name, true) + "\"" +
           counts_attrs(family.counts.total(), family.counts, family.counts.duration_ms) + ">\n";
    std::string props;
    append_property(props, "lab", report.lab);
    append_property(props, "twin_version", report.twin_version);
    append_property(props, "frr_version", report.frr_version);
    append_property(props, "kernel_version", report.kernel_version);
    append_property(props, "started_at", report.started_at);
    // The notes (what was not checked or not honoured) where a CI's JUnit view shows them.
    for (const auto& n : report.notes) append_property(props, "note", to_text(n));
    if (!props.empty()) out += "    <properties>\n" + props + "    </properties>\n";

    const std::string classname = xml("twin." + report.lab + "." + family.name, true);
    for (const TestResult* r : family.results) {
      out += "    <testcase classname=\"" + classname + "\" name=\"" +
             xml(testcase_name(*r), true) + "\" time=\"" + junit_seconds(r->duration_ms) + "\"";
      if (r->status == Status::kPassed) {
        out += "/>\n";
        continue;
      }
      out += ">\n";
      if (r->status == Status::kSkipped) {
        out += "      <skipped message=\"" + xml(r->message, true) + "\"/>\n";
      } else {
        const char* element = r->status == Status::kFailed ? "failure" : "error";
        const char* type = r->status == Status::kFailed ? "failed" : "error";
        out += std::string("      <") + element + " message=\"" + xml(problem_message(*r), true) +
               "\" type=\"" + type + "\"";
        const std::string body = expected_observed_body(*r);
        if (body.empty()) {
          out += "/>\n";
        } else {
          out += ">" + body + "</" + element + ">\n";
        }
      }
      out += "    </testcase>\n";
    }
    out += "  </testsuite>\n";
  }
  out += "</testsuites>\n";
  return out;
}

std::string one_line(std::string s) {
  for (auto& c : s)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  return s;
}

std::string seconds_text(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", ms / 1000.0);
  return buf;
}

}  // namespace twin::report
