#include "twin/core/error.hpp"

#include <stdexcept>

namespace twin {

int exit_code(const Error& e) {
  switch (e.kind) {
    case ErrorKind::kUsage:
    case ErrorKind::kInput:
      return 2;
    case ErrorKind::kEnvironment:
    case ErrorKind::kHarness:
      return 3;
    case ErrorKind::kInterrupted:
      return 130;
  }
  return 3;
}

void throw_exception_from_error(const Error& e, const boost::source_location&) {
  throw std::runtime_error(e.message);
}

}  // namespace twin
