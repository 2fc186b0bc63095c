#include "twin/core/clock.hpp"

#include <thread>

namespace twin {

namespace {
class RealTime final : public TimeSource {
 public:
  Clock::time_point now() const override { return Clock::now(); }
  void sleep_for(std::chrono::milliseconds d) override { std::this_thread::sleep_for(d); }
};
}  // namespace

TimeSource& TimeSource::real() {
  static RealTime t;
  return t;
}

}  // namespace twin
