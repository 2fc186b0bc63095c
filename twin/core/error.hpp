#pragma once
// Errors and results that cross module boundaries (DESIGN.md §3).
//
// Expected failures travel as twin::Result<T> (boost::system::result; g++ 12 has no
// std::expected). An Error carries a category that maps onto the CLI's exit codes and a
// message to which each layer prepends its context ("node leaf1: starting bgpd: ...").
#include <boost/system/result.hpp>
#include <string>
#include <utility>

namespace twin {

// Why something failed; decides the exit code (see exit_code()).
enum class ErrorKind {
  kUsage,        // bad command line, unknown lab: exit 2
  kInput,        // bad topology / change file: exit 2
  kEnvironment,  // missing kernel feature, not root, missing program: exit 3
  kHarness,      // a program we ran failed or timed out, I/O error: exit 3
  kInterrupted,  // SIGINT / SIGTERM: exit 130
};

struct Error {
  ErrorKind kind = ErrorKind::kHarness;
  std::string message;

  // Returns a copy with "context: " prepended, e.g. err.with_context("node leaf1").
  [[nodiscard]] Error with_context(const std::string& context) const {
    return Error{kind, context + ": " + message};
  }
};

// Exit code for an error, as documented in docs/troubleshooting.md ("Exit codes").
int exit_code(const Error& e);

template <class T>
using Result = boost::system::result<T, Error>;

// Wraps a value explicitly; needed for types such as nlohmann::json that convert from almost
// anything, which makes result's implicit constructor ambiguous.
template <class T>
Result<T> ok(T value) {
  return Result<T>(boost::system::in_place_value, std::move(value));
}

// Shorthands for the common error kinds.
inline Error harness_error(std::string m) { return Error{ErrorKind::kHarness, std::move(m)}; }
inline Error env_error(std::string m) { return Error{ErrorKind::kEnvironment, std::move(m)}; }
inline Error usage_error(std::string m) { return Error{ErrorKind::kUsage, std::move(m)}; }
inline Error input_error(std::string m) { return Error{ErrorKind::kInput, std::move(m)}; }

// boost::system::result<T, E>::value() throws through this hook (found by ADL) when it holds
// an error; we turn it into a std::runtime_error so value() on an error is never silent.
[[noreturn]] void throw_exception_from_error(const Error& e, const boost::source_location& loc);

}  // namespace twin
