// Written for ChatGPU's migration corpus in the style of NVIDIA cuda-samples'
// Common/helper_functions.h (includes the string and timer helpers). Not NVIDIA's file.
#ifndef COMMON_HELPER_FUNCTIONS_H_
#define COMMON_HELPER_FUNCTIONS_H_

#include <math.h>
#include <chrono>

#include <helper_string.h>

// A host-side timer, as helper_timer.h's StopWatchInterface offers
class StopWatch {
 public:
  void start() { start_ = std::chrono::steady_clock::now(); }
  float getTime() const {
    return std::chrono::duration<float, std::milli>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

inline bool compareData(const float *reference, const float *data, unsigned int len, float epsilon) {
  for (unsigned int i = 0; i < len; ++i) {
    if (fabsf(reference[i] - data[i]) > epsilon) return false;
  }
  return true;
}

#endif  // COMMON_HELPER_FUNCTIONS_H_
