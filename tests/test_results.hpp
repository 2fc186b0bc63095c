#pragma once
// What the main of both test binaries (tests/test_main.cpp) decides, apart from gtest: the exit
// code CTest reads as an entry's verdict. Here so the unit tests can hold it to its rule.

namespace twin_test {

// CTest's SKIP_RETURN_CODE for every entry of both test binaries (CMakeLists.txt).
inline constexpr int kAllSkipped = 77;

// What one process's tests came to. `outside` counts failures no test owns: a suite's
// SetUpTestSuite/TearDownTestSuite, a global environment.
struct Outcomes {
  int ran = 0;
  int passed = 0;
  int failed = 0;
  int skipped = 0;
  int outside = 0;
};

// gtest's own code, except that a process whose every test skipped, with nothing failed in a test
// or around one, exits kAllSkipped: CTest then reports the entry Skipped by its code, and no text
// a failing test prints can make it a skip. A process that ran no test (an empty filter) passes,
// as under gtest.
inline int exit_code(int gtest_code, const Outcomes& o) {
  if (gtest_code != 0) return gtest_code;
  if (o.failed > 0 || o.outside > 0) return 1;
  if (o.ran > 0 && o.skipped == o.ran) return kAllSkipped;
  return 0;
}

}  // namespace twin_test
