// GPU test runner: with no CUDA device every GPU test is skipped, visibly
// (a line on stdout, and exit code 77, which CTest reports as "Skipped").
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

#include "core/common/device_info.hpp"

int main(int argc, char** argv) {
  if (gpudict::cuda_device_count() == 0) {
    std::printf("SKIPPED: GPU tests need a CUDA device (%s)\n", gpudict::cuda_unavailable_reason().c_str());
    return 77;
  }
  doctest::Context ctx(argc, argv);
  return ctx.run();
}
