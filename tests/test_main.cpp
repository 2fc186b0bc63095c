// The main of both test binaries, in place of gtest_main. Two things gtest's own main cannot do:
//  - exit 77 when every test that ran skipped (tests/test_results.hpp), so CTest tells a skipped
//    entry from a passed one by the exit code, never by a text match a failure can print too;
//  - write each test's outcome, with a skip's reason, as JSON lines, so tools/test.sh can give
//    exact totals over every gtest inside every CTest entry and name each skip with its reason.
// One file per process in $TWIN_TEST_RESULTS (default: build/test-results), named after the
// binary and its --gtest_filter, so running an entry again replaces its own record only.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "tests/test_results.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string results_file(const std::string& binary, const std::string& filter) {
  const char* env = std::getenv("TWIN_TEST_RESULTS");
  fs::path dir = env && *env ? env : TWIN_TEST_RESULTS_DIR;
  std::string name = filter.empty() || filter == "*" ? "all" : filter;
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') c = '_';
  // The suites' filters are long lists of patterns: cut, and keep them apart by a hash.
  if (name.size() > 80) {
    std::ostringstream h;
    h << std::hex << std::hash<std::string>{}(filter);
    name = name.substr(0, 60) + "-" + h.str();
  }
  return (dir / (binary + "-" + name + ".jsonl")).string();
}

// The first failure of a result, "file:line: message", for tools/test.sh's list of failures.
std::string first_failure(const testing::TestResult& r) {
  for (int i = 0; i < r.total_part_count(); ++i) {
    const auto& p = r.GetTestPartResult(i);
    if (!p.failed()) continue;
    std::string where =
        p.file_name() ? std::string(p.file_name()) + ":" + std::to_string(p.line_number()) + ": "
                      : "";
    return where + std::string(p.summary()).substr(0, 600);
  }
  return "";
}

std::string skip_message(const testing::TestResult& r) {
  for (int i = 0; i < r.total_part_count(); ++i) {
    const auto& p = r.GetTestPartResult(i);
    if (p.skipped() && *p.message()) return p.message();
  }
  return "";
}

class ResultsListener : public testing::EmptyTestEventListener {
 public:
  ResultsListener(std::string path, std::string binary)
      : path_(std::move(path)), binary_(std::move(binary)) {}
  const twin_test::Outcomes& outcomes() const { return o_; }

  // Opened here, not at construction: --gtest_list_tests (CTest's discovery) runs no test and
  // must not replace a run's record.
  void OnTestProgramStart(const testing::UnitTest&) override {
    std::error_code ec;
    fs::create_directories(fs::path(path_).parent_path(), ec);
    out_.open(path_, std::ios::trunc);
    if (!out_) std::cerr << "twin tests: cannot write " << path_ << "; totals will miss this run\n";
  }
  // A start without its end in the file is a test that never finished: it crashed, or CTest
  // killed the process at its TIMEOUT. tools/test.sh counts it failed.
  void OnTestStart(const testing::TestInfo& t) override {
    write({{"event", "start"}, {"test", name(t)}});
  }
  void OnTestEnd(const testing::TestInfo& t) override {
    const testing::TestResult& r = *t.result();
    json line{{"event", "end"}, {"test", name(t)}, {"ms", r.elapsed_time()}};
    ++o_.ran;
    if (r.Failed()) {
      ++o_.failed;
      line["status"] = "failed";
      line["reason"] = first_failure(r);
    } else if (r.Skipped()) {
      ++o_.skipped;
      line["status"] = "skipped";
      std::string why = skip_message(r);
      // A GTEST_SKIP in SetUpTestSuite skips each test without a message; the suite holds it.
      if (why.empty()) {
        if (const auto* suite = testing::UnitTest::GetInstance()->current_test_suite())
          why = skip_message(suite->ad_hoc_test_result());
      }
      line["reason"] = why.empty() ? "(no reason given)" : why;
    } else {
      ++o_.passed;
      line["status"] = "passed";
    }
    write(line);
  }
  void OnTestSuiteEnd(const testing::TestSuite& s) override {
    outside(s.ad_hoc_test_result(), std::string(s.name()) + " (SetUpTestSuite/TearDownTestSuite)");
  }
  void OnTestProgramEnd(const testing::UnitTest& u) override {
    outside(u.ad_hoc_test_result(), "global test environment");
  }

 private:
  static std::string name(const testing::TestInfo& t) {
    return std::string(t.test_suite_name()) + "." + t.name();
  }
  void outside(const testing::TestResult& r, const std::string& where) {
    if (!r.Failed()) return;
    ++o_.outside;
    write({{"event", "outside"},
           {"where", where},
           {"status", "failed"},
           {"reason", first_failure(r)}});
  }
  void write(json line) {
    if (!out_) return;
    line["binary"] = binary_;
    // Flushed per line: what a killed process wrote still counts.
    out_ << line.dump(-1, ' ', false, json::error_handler_t::replace) << std::endl;
  }

  std::string path_, binary_;
  std::ofstream out_;
  twin_test::Outcomes o_;
};

}  // namespace

int main(int argc, char** argv) {
  testing::InitGoogleMock(&argc, argv);
  std::string binary = fs::path(argv[0]).filename().string();
  auto* listener = new ResultsListener(results_file(binary, GTEST_FLAG_GET(filter)), binary);
  testing::UnitTest::GetInstance()->listeners().Append(listener);  // gtest owns it
  int code = RUN_ALL_TESTS();
  return twin_test::exit_code(code, listener->outcomes());
}
