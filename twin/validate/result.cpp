#include "twin/validate/result.hpp"

namespace twin::validate {

const char* to_string(Status s) {
  switch (s) {
    case Status::kPassed:
      return "passed";
    case Status::kFailed:
      return "failed";
    case Status::kError:
      return "error";
    case Status::kSkipped:
      return "skipped";
  }
  return "error";
}

int Report::count(Status s) const {
  int n = 0;
  for (const auto& r : results) n += (r.status == s);
  return n;
}

int Report::exit_code() const {
  // Nothing checked approves nothing: a gate that ran no test could not tell.
  if (results.empty()) return 3;
  if (count(Status::kFailed) > 0) return 1;
  if (count(Status::kError) > 0) return 3;
  return 0;
}

}  // namespace twin::validate
