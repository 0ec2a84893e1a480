#include <cstdlib>

#include "cli/app.hpp"

int main(int argc, char** argv) {
  // CUDA loads a kernel's module on its first launch by default (lazy
  // loading), which puts up to a few hundred microseconds of host work
  // inside the first timed batch that uses each kernel. gpudict times device
  // work, so it loads every kernel at start-up instead, unless the user chose
  // a mode (CUDA_MODULE_LOADING=LAZY keeps the default behaviour).
  setenv("CUDA_MODULE_LOADING", "EAGER", /*overwrite=*/0);
  return gpudict::run_cli(argc, argv);
}
