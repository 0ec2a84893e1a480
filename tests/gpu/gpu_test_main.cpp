// GPU test runner: with no CUDA device every GPU test is skipped, visibly
// (a line on stdout, and exit code 77, which CTest reports as "Skipped");
// listing the test cases needs no device.
// On a machine that should have one (GPUDICT_REQUIRE_GPU=1), a missing or
// broken device is a failure instead, so a driver problem cannot pass as a skip.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/common/device_info.hpp"

namespace {

// Whether doctest is asked only to list (test cases, suites, reporters):
// CTest's test discovery does that at build time, on machines without a GPU.
bool listing_only(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--list", 0) == 0 || a.rfind("-ltc", 0) == 0 || a.rfind("-lts", 0) == 0 || a.rfind("-lr", 0) == 0 ||
        a == "--help" || a == "-h" || a == "-?")
      return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  if (!listing_only(argc, argv) && gpudict::cuda_device_count() == 0) {
    const char* require = std::getenv("GPUDICT_REQUIRE_GPU");
    if (require && std::string(require) == "1") {
      std::printf("FAILED: GPUDICT_REQUIRE_GPU=1 but no CUDA device is usable (%s)\n",
                  gpudict::cuda_unavailable_reason().c_str());
      return 1;
    }
    std::printf("SKIPPED: GPU tests need a CUDA device (%s)\n", gpudict::cuda_unavailable_reason().c_str());
    return 77;
  }
  doctest::Context ctx(argc, argv);
  return ctx.run();
}
