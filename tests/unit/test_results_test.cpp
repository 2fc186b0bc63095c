// Unit tests for the exit code of the test binaries' own main (tests/test_results.hpp): CTest
// reports an entry Skipped only by that code, so it must be 77 exactly when every test skipped.
#include "tests/test_results.hpp"

#include <gtest/gtest.h>

namespace {

using twin_test::exit_code;
using twin_test::kAllSkipped;
using twin_test::Outcomes;

TEST(TestExitCode, EverySkippedIsTheSkipCode) {
  EXPECT_EQ(kAllSkipped, 77);
  EXPECT_EQ(exit_code(0, {.ran = 1, .skipped = 1}), 77);
  EXPECT_EQ(exit_code(0, {.ran = 12, .skipped = 12}), 77);
}

TEST(TestExitCode, OnePassAmongSkipsIsAPass) {
  EXPECT_EQ(exit_code(0, {.ran = 3, .passed = 1, .skipped = 2}), 0);
}

TEST(TestExitCode, AFailureAmongSkipsIsAFailure) {
  EXPECT_EQ(exit_code(1, {.ran = 3, .failed = 1, .skipped = 2}), 1);
  // Even if gtest's own code said otherwise, a recorded failure is one.
  EXPECT_EQ(exit_code(0, {.ran = 3, .failed = 1, .skipped = 2}), 1);
}

TEST(TestExitCode, AFailureAroundSkippedTestsIsAFailure) {
  // A TearDownTestSuite that failed after every test skipped.
  EXPECT_EQ(exit_code(1, {.ran = 2, .skipped = 2, .outside = 1}), 1);
  EXPECT_EQ(exit_code(0, {.ran = 2, .skipped = 2, .outside = 1}), 1);
}

TEST(TestExitCode, NoTestRunIsGtestsOwnCode) {
  EXPECT_EQ(exit_code(0, {}), 0);
  EXPECT_EQ(exit_code(1, {}), 1);
}

}  // namespace
