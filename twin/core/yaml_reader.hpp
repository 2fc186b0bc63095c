#pragma once
// Reading user YAML files (topology, image profile, change set, scenario) with diagnostics:
// parsing, places, unknown and repeated keys, and typed values. Every reader reports a bad value
// as one diagnostic (file:line:column, field path, message, hint) and returns nullopt, so a
// loader goes on and reports every problem of a file at once (DESIGN.md §3).
// Includes yaml-cpp: only loaders' .cpp files include it.
#include <yaml-cpp/yaml.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "twin/core/diagnostics.hpp"
#include "twin/core/input_policy.hpp"

namespace twin::yaml {

// Parses `text` (read from `file`). On a syntax error adds one diagnostic at the place yaml-cpp
// names and returns nullopt.
std::optional<YAML::Node> parse(const std::string& text, const std::string& file,
                                Diagnostics& diags);

// Where the second YAML document of `text` starts (its `---` line, column 1); {0, 0} when
// `text` holds one document (or does not parse).
Mark second_document(const std::string& text);

// Where `n` was written; {0, 0} for a node that is not from a document.
Mark mark_of(const YAML::Node& n);

// What a value is, for "expected X, <found>": "got 'abc'", "but the value is empty",
// "got a list", "got a mapping".
std::string found(const YAML::Node& n);

// A value in a file: its node, the key it is under, and its field path ("steps[2].link.mtu").
// An empty value's own place is the token after it, so a value that has its key is reported at
// the key when empty; one built with at() has no key and is reported where yaml-cpp puts it.
// Copy, never assign: assigning a YAML::Node that refers into a document rewrites the document.
struct Value {
  bool present = false;
  YAML::Node key;  // null for list items, the root and values built with at()
  YAML::Node node;
  std::string field;

  explicit operator bool() const { return present; }
  [[nodiscard]] Mark mark() const;
  // The key's place (the value's when it has no key).
  [[nodiscard]] Mark key_mark() const;
  // The key as written; "" without a key.
  [[nodiscard]] std::string key_name() const;
};

// `node` (present when defined) under field path `field`, without its key.
Value at(const YAML::Node& node, const std::string& field);
// The field `key` of mapping `map` (its first occurrence; Reader::check_keys reports a repeat).
// Absent (false) when `map` is no mapping or has no such key; its field path is set anyway, so
// a "missing" diagnostic can name it.
Value child(const Value& map, const std::string& key);
// Item `i` of sequence `seq`, field path "seq[i]".
Value item(const Value& seq, size_t i);

// How a file format words some diagnostics. Each format's messages are pinned by its tests (and
// by users' scripts that match them), so the toolkit keeps each format's wording.
struct Wording {
  // A non-string where a string belongs: "expected a string" followed by what was found
  // (", got a list") or not.
  bool say_what_was_found = true;
  std::string string_noun = "a string";
  // Unknown keys: false gives "unknown field 'k'" with the hint "did you mean 'x'?" (else the
  // accepted keys), and a repeated key is reported; true gives "unknown field 'k'; expected one
  // of: ..." with the hint "did you mean x?" (else none), and repeats are not checked.
  bool list_keys_in_message = false;
};

// Reads values of one file into diagnostics. Holds references: `diags` must outlive it.
class Reader {
 public:
  Reader(std::string file, Diagnostics& diags, Wording wording = {});

  [[nodiscard]] const std::string& file() const { return file_; }
  [[nodiscard]] Diagnostics& diags() const { return d_; }
  // Diagnostics so far (of every file): compare before and after to see if a part had problems.
  [[nodiscard]] size_t problems() const { return d_.items().size(); }

  // Parses `text` as this file's document, which must be a mapping: its root (field path "").
  // Otherwise nullopt after one diagnostic: the syntax error at yaml-cpp's place, or
  // `not_a_mapping` with `hint` at the root.
  std::optional<Value> document(const std::string& text, const std::string& not_a_mapping,
                                const std::string& hint = "");

  void error(Mark m, const std::string& field, const std::string& message,
             const std::string& hint = "");
  void error(const Value& v, const std::string& message, const std::string& hint = "");

  // Reports each key of mapping `map` not in `allowed` (with the nearest accepted key as a hint)
  // and, per the wording, each key given twice.
  void check_keys(const Value& map, const std::vector<std::string>& allowed);

  // A scalar, as written.
  std::optional<std::string> string(const Value& v);
  // A base-10 integer that fits in a long long: "expected an integer, <found>" otherwise.
  std::optional<long long> integer(const Value& v);
  // An integer in lo..hi: "expected lo-hi <unit>" otherwise (unit may be "").
  std::optional<long long> integer(const Value& v, long long lo, long long hi,
                                   const std::string& unit);
  // `true` or `false`: "expected true or false" otherwise (also for a non-scalar).
  std::optional<bool> boolean(const Value& v);
  // Bytes, excluding the L2 header, in kMinMtu..kMaxMtu (core/ip.hpp).
  std::optional<int> mtu(const Value& v);
  // A string among `choices`: "unknown value 'x'" with the nearest choice as a hint.
  std::optional<std::string> choice(const Value& v, const std::vector<std::string>& choices);
  // A duration (core/duration.hpp): "500ms", "2s", "1.5s", "1m".
  std::optional<std::chrono::milliseconds> duration(const Value& v);
  // A link rate in bits per second (core/rate.hpp): "100M", "1G", "2.5G".
  std::optional<uint64_t> rate(const Value& v);

  // A message and hint a loader words itself (see named_file).
  struct Say {
    std::string message, hint;
  };
  // The file value `v` names (`path`, as the loader resolved it against its folder) when
  // `policy` lets twin read it: its canonical path. Otherwise nullopt after one diagnostic at
  // `v`: a missing file with `missing`, a folder with `directory` (each format's own wording;
  // the policy's when empty), anything else — outside the roots, a FIFO or device, too large —
  // with the policy's words, which name the roots and --allow-path.
  std::optional<std::string> named_file(const Value& v, const std::string& path,
                                        const InputPolicy& policy, const std::string& what,
                                        const Say& missing = {}, const Say& directory = {});

  // True for a non-empty list; reports anything else ("expected a list of <what>, <found>",
  // "empty list; ...") with the hint "e.g. <example>".
  bool list(const Value& v, const std::string& what, const std::string& example);
  // A scalar, or a list of anything (its items): one value per item. Anything else is reported
  // with `message` and gives none.
  std::vector<Value> scalar_or_list(const Value& v, const std::string& message);
  // Mapping `map`'s key `one` (a scalar) or `many` (a non-empty list), exactly one of them: the
  // values to read, one per item; none, after a diagnostic, when neither is usable. `what` names
  // the items ("interfaces to change"), `example` is one item ("leaf1:swp1").
  std::vector<Value> one_or_many(const Value& map, const std::string& one, const std::string& many,
                                 const std::string& what, const std::string& example);

 private:
  std::string file_;
  Diagnostics& d_;
  Wording wording_;
};

}  // namespace twin::yaml
