#pragma once
// The time seam: code that waits (convergence windows, settle loops, retries) asks a
// TimeSource for the time and to sleep, so unit tests can run a 30 s window in microseconds
// with a fake that advances on sleep_for. The real one is the steady clock.
#include <chrono>

#include "twin/core/util.hpp"

namespace twin {

class TimeSource {
 public:
  virtual ~TimeSource() = default;
  [[nodiscard]] virtual Clock::time_point now() const = 0;
  virtual void sleep_for(std::chrono::milliseconds d) = 0;

  // The steady clock and std::this_thread::sleep_for. Thread-safe.
  static TimeSource& real();

  // Milliseconds from `t` to now().
  [[nodiscard]] double ms_since(Clock::time_point t) const {
    return std::chrono::duration<double, std::milli>(now() - t).count();
  }
};

}  // namespace twin
