#include "twin/core/yaml_reader.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "twin/core/duration.hpp"
#include "twin/core/ip.hpp"
#include "twin/core/rate.hpp"

namespace twin::yaml {

namespace {
bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}
}  // namespace

std::optional<YAML::Node> parse(const std::string& text, const std::string& file,
                                Diagnostics& diags) {
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    diags.add({file, e.mark.line + 1, e.mark.column + 1, "", "malformed YAML: " + e.msg,
               "check indentation and brackets near this place"});
    return std::nullopt;
  }
}

Mark second_document(const std::string& text) {
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(text);
  } catch (const YAML::Exception&) {
    return {};  // parse() reports syntax errors
  }
  if (docs.size() < 2) return {};
  // The second document's `---` line: the first marker when content comes before it, else the
  // second (a file may open with `---`).
  int line = 0, markers = 0;
  bool content = false;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string l = text.substr(pos, end - pos);
    ++line;
    bool marker = l.rfind("---", 0) == 0 && (l.size() == 3 || l[3] == ' ' || l[3] == '\t' ||
                                             l[3] == '\r');
    if (marker) {
      ++markers;
      if (content || markers == 2) return {line, 1};
    } else if (size_t c = l.find_first_not_of(" \t\r");
               c != std::string::npos && l[c] != '#' && l.rfind("%", 0) != 0) {
      content = true;
    }
    pos = end + 1;
  }
  return mark_of(docs[1]);
}

Mark mark_of(const YAML::Node& n) {
  auto m = n.Mark();
  if (m.is_null()) return {};
  return {m.line + 1, m.column + 1};
}

std::string found(const YAML::Node& n) {
  if (n.IsScalar()) return "got '" + n.Scalar() + "'";
  if (n.IsNull()) return "but the value is empty";
  if (n.IsSequence()) return "got a list";
  return "got a mapping";
}

Mark Value::mark() const {
  if (node.IsNull() && !key.IsNull()) return mark_of(key);
  return mark_of(node);
}

Mark Value::key_mark() const { return key.IsNull() ? mark() : mark_of(key); }

std::string Value::key_name() const { return key.IsNull() ? "" : key.Scalar(); }

Value at(const YAML::Node& node, const std::string& field) {
  return Value{node.IsDefined(), YAML::Node(), node, field};
}

Value child(const Value& map, const std::string& key) {
  std::string field = map.field.empty() ? key : map.field + "." + key;
  if (map.node.IsMap())
    for (const auto& kv : map.node)
      if (kv.first.IsScalar() && kv.first.Scalar() == key)
        return Value{true, kv.first, kv.second, field};
  return Value{false, YAML::Node(), YAML::Node(), field};
}

Value item(const Value& seq, size_t i) {
  return Value{true, YAML::Node(), seq.node[i], seq.field + "[" + std::to_string(i) + "]"};
}

Reader::Reader(std::string file, Diagnostics& diags, Wording wording)
    : file_(std::move(file)), d_(diags), wording_(std::move(wording)) {}

void Reader::error(Mark m, const std::string& field, const std::string& message,
                   const std::string& hint) {
  d_.add({file_, m.line, m.column, field, message, hint});
}

void Reader::error(const Value& v, const std::string& message, const std::string& hint) {
  error(v.mark(), v.field, message, hint);
}

std::optional<Value> Reader::document(const std::string& text, const std::string& not_a_mapping,
                                      const std::string& hint) {
  auto parsed = parse(text, file_, d_);
  if (!parsed) return std::nullopt;
  if (Mark second = second_document(text); second.line > 0) {
    error(second, "", "a second YAML document starts here; twin reads one document per file",
          "remove this `---` and what follows it, or move it to a file of its own");
    return std::nullopt;
  }
  Value root = at(*parsed, "");
  if (!root.node.IsMap()) {
    error(root, not_a_mapping, hint);
    return std::nullopt;
  }
  return root;
}

void Reader::check_keys(const Value& map, const std::vector<std::string>& allowed) {
  std::set<std::string> seen;
  for (const auto& kv : map.node) {
    std::string key = kv.first.Scalar();
    std::string field = map.field.empty() ? key : map.field + "." + key;
    if (!contains(allowed, key)) {
      if (wording_.list_keys_in_message) {
        std::string near = nearest_name(key, allowed);
        error(mark_of(kv.first), field,
              "unknown field '" + key + "'; expected one of: " + join_names(allowed),
              near.empty() ? "" : "did you mean " + near + "?");
      } else {
        error(mark_of(kv.first), field, "unknown field '" + key + "'",
              did_you_mean(key, allowed, "expected one of: " + join_names(allowed)));
      }
    } else if (!seen.insert(key).second && !wording_.list_keys_in_message) {
      error(mark_of(kv.first), field, "field '" + key + "' given twice", "keep one of them");
    }
  }
}

std::optional<std::string> Reader::named_file(const Value& v, const std::string& path,
                                              const InputPolicy& policy, const std::string& what,
                                              const Say& missing, const Say& directory) {
  auto bad = policy.check(path, what);
  if (!bad) {
    std::error_code ec;
    auto c = std::filesystem::weakly_canonical(path, ec);
    return ec ? std::filesystem::absolute(path).lexically_normal().string() : c.string();
  }
  using Kind = InputProblem::Kind;
  const Say* own = bad->kind == Kind::kMissing     ? &missing
                   : bad->kind == Kind::kDirectory ? &directory
                                                   : nullptr;
  if (own && !own->message.empty())
    error(v, own->message, own->hint);
  else
    error(v, bad->message, bad->hint);
  return std::nullopt;
}

std::optional<std::string> Reader::string(const Value& v) {
  if (!v.node.IsScalar()) {
    error(v, "expected " + wording_.string_noun +
                 (wording_.say_what_was_found ? ", " + found(v.node) : std::string()));
    return std::nullopt;
  }
  return v.node.Scalar();
}

namespace {
// Whether `n` is written as a whole number ([+-]digits) too large for 64 bits: still a number,
// so the messages say it is out of range rather than "not an integer".
bool beyond_64_bits(const YAML::Node& n) {
  if (!n.IsScalar()) return false;
  const std::string& s = n.Scalar();
  size_t i = !s.empty() && (s[0] == '-' || s[0] == '+') ? 1 : 0;
  if (i == s.size()) return false;
  for (; i < s.size(); ++i)
    if (s[i] < '0' || s[i] > '9') return false;
  errno = 0;
  (void)std::strtoll(s.c_str(), nullptr, 10);
  return errno == ERANGE;
}
}  // namespace

std::optional<long long> Reader::integer(const Value& v) {
  if (v.node.IsScalar()) {
    const std::string& s = v.node.Scalar();
    char* end = nullptr;
    errno = 0;
    long long n = std::strtoll(s.c_str(), &end, 10);
    if (!s.empty() && end && *end == '\0' && errno == 0) return n;
    if (beyond_64_bits(v.node)) {
      error(v, "expected an integer that fits in 64 bits, got " + s);
      return std::nullopt;
    }
  }
  error(v, "expected an integer, " + found(v.node));
  return std::nullopt;
}

std::optional<long long> Reader::integer(const Value& v, long long lo, long long hi,
                                         const std::string& unit) {
  const std::string range = "expected " + std::to_string(lo) + "-" + std::to_string(hi) +
                            (unit.empty() ? "" : " " + unit);
  if (beyond_64_bits(v.node)) {  // beyond the range too: the range is the useful message
    error(v, range);
    return std::nullopt;
  }
  auto n = integer(v);
  if (!n) return std::nullopt;
  if (*n < lo || *n > hi) {
    error(v, range);
    return std::nullopt;
  }
  return n;
}

std::optional<bool> Reader::boolean(const Value& v) {
  if (!v.node.IsScalar() || (v.node.Scalar() != "true" && v.node.Scalar() != "false")) {
    error(v, "expected true or false");
    return std::nullopt;
  }
  return v.node.Scalar() == "true";
}

std::optional<int> Reader::mtu(const Value& v) {
  auto outside = [&](const std::string& n) {
    error(v,
          "MTU " + n + " is outside " + std::to_string(kMinMtu) + "-" + std::to_string(kMaxMtu) +
              " bytes",
          "MTU excludes the Ethernet header; data-center fabrics commonly use 9216");
    return std::nullopt;
  };
  if (beyond_64_bits(v.node)) return outside(v.node.Scalar());
  auto n = integer(v);
  if (!n) return std::nullopt;
  if (*n < kMinMtu || *n > kMaxMtu) return outside(std::to_string(*n));
  return static_cast<int>(*n);
}

std::optional<std::string> Reader::choice(const Value& v, const std::vector<std::string>& choices) {
  auto s = string(v);
  if (!s) return std::nullopt;
  if (!contains(choices, *s)) {
    error(v, "unknown value '" + *s + "'",
          did_you_mean(*s, choices, "expected one of: " + join_names(choices)));
    return std::nullopt;
  }
  return s;
}

std::optional<std::chrono::milliseconds> Reader::duration(const Value& v) {
  auto s = string(v);
  if (!s) return std::nullopt;
  DurationProblem why;
  auto d = parse_duration(*s, &why);
  if (!d) error(v, why.message, why.hint);
  return d;
}

std::optional<uint64_t> Reader::rate(const Value& v) {
  auto s = string(v);
  if (!s) return std::nullopt;
  RateProblem why;
  auto r = parse_rate(*s, &why);
  if (!r) error(v, why.message, why.hint);
  return r;
}

bool Reader::list(const Value& v, const std::string& what, const std::string& example) {
  if (!v.node.IsSequence()) {
    error(v, "expected a list of " + what + ", " + found(v.node), "e.g. " + example);
    return false;
  }
  if (v.node.size() == 0) {
    error(v, "empty list; expected at least one of " + what, "e.g. " + example);
    return false;
  }
  return true;
}

std::vector<Value> Reader::scalar_or_list(const Value& v, const std::string& message) {
  std::vector<Value> out;
  if (v.node.IsScalar()) {
    out.push_back(v);
  } else if (v.node.IsSequence()) {
    for (size_t i = 0; i < v.node.size(); ++i) out.push_back(item(v, i));
  } else {
    error(v, message);
  }
  return out;
}

std::vector<Value> Reader::one_or_many(const Value& map, const std::string& one,
                                       const std::string& many, const std::string& what,
                                       const std::string& example) {
  std::vector<Value> out;
  auto o = child(map, one), m = child(map, many);
  if (o && m) {
    error(o.key_mark(), o.field, "give " + one + " or " + many + ", not both");
  } else if (!o && !m) {
    error(map.mark(), m.field,
          "missing; expected the " + what + " (`" + many + ": [" + example + "]` or `" + one +
              ": " + example + "`)");
  } else if (o) {
    out.push_back(o);
  } else if (list(m, what, many + ": [" + example + "]")) {
    for (size_t i = 0; i < m.node.size(); ++i) out.push_back(item(m, i));
  }
  return out;
}

}  // namespace twin::yaml
