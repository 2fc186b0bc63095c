# Runs after gtest_discover_tests' own discovery of TARGET (both POST_BUILD, in the order they
# were added) and takes its SKIP_REGULAR_EXPRESSION "\[  SKIPPED \]" out of every test it wrote.
# With it, a test that failed but whose output held that text was reported Skipped; and CTest
# appends a test's skip expressions rather than replacing them, so no property passed to
# gtest_discover_tests can undo it. Skipped is then the exit code's word alone
# (SKIP_RETURN_CODE 77, tests/test_main.cpp).
#   cmake -DDIR=<binary dir> -DTARGET=<test target> -P gtest_skip_by_code.cmake
file(GLOB files "${DIR}/${TARGET}*_tests.cmake")
if(NOT files)
  message(FATAL_ERROR "no ${DIR}/${TARGET}[N]_tests.cmake: did gtest_discover_tests run first?")
endif()
foreach(f IN LISTS files)
  file(READ "${f}" text)
  string(REPLACE [=[ SKIP_REGULAR_EXPRESSION [==[\[  SKIPPED \]]==]]=] "" text "${text}")
  # Loud, not silent, if a newer CMake writes it another way.
  string(FIND "${text}" "SKIP_REGULAR_EXPRESSION" left)
  if(NOT left EQUAL -1)
    message(FATAL_ERROR "${f} still sets SKIP_REGULAR_EXPRESSION: this CMake's "
                        "gtest_discover_tests writes it differently; adapt ${CMAKE_CURRENT_LIST_FILE}")
  endif()
  file(WRITE "${f}" "${text}")
endforeach()
