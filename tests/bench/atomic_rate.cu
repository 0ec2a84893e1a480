// gpudict_atomic_rate: the device's rate of random atomics on 128-byte
// slabs, the limit of the slab hash's deletes and inserts (docs/results/slabhash.md).
// Each operation hits the state word of a random slab of a table the size of
// the slab hash's at 2^26 keys and utilization 0.6 (~1 GB): 64- and 32-bit
// atomicAnd whose result is used, the same as reductions (red, no result),
// a 32-bit CAS, and for scale a read of the slab's first 8 bytes with and
// without an atomic on the same slab. Median of the CUDA-event times of 5
// launches per row after a warm-up; the table starts all 0xFF: the first
// launch's atomics clear bits, later launches repeat the same operations on
// the same words.
//   gpudict_atomic_rate [--log2-ops N]   (default 25)
#include <cstdint>
#include <cstdio>

#include "core/common/cuda_check.hpp"
#include "core/common/device_buffer.hpp"
#include "core/common/errors.hpp"
#include "core/common/event_timer.hpp"
#include "tests/bench/bench_util.hpp"
#include "workloads/rng.hpp"

using namespace gpudict;

namespace {

enum Mode : int { kAnd64, kAnd32, kRed64, kRed32, kCas32, kReadAnd64, kRead };

template <int kMode>
__global__ void atomics_kernel(unsigned long long* table, uint64_t slabs, uint64_t n, unsigned long long* sink) {
  unsigned long long acc = 0;
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    uint64_t seed = i * 7919 + 17;  // slabs in no pattern
    unsigned long long* slab = table + (splitmix64_next(seed) % slabs) * 16;
    unsigned long long* state = slab + 15;  // words 30-31, where the slab hash keeps (state, next)
    auto* state32 = reinterpret_cast<unsigned*>(state);
    const unsigned bit = 1u << (i & 15);
    const unsigned long long keep = ~static_cast<unsigned long long>(bit);
    if constexpr (kMode == kAnd64) acc += atomicAnd(state, keep);
    if constexpr (kMode == kAnd32) acc += atomicAnd(state32, ~bit);
    if constexpr (kMode == kRed64)
      asm volatile("red.relaxed.gpu.global.and.b64 [%0], %1;" ::"l"(state), "l"(keep) : "memory");
    if constexpr (kMode == kRed32)
      asm volatile("red.relaxed.gpu.global.and.b32 [%0], %1;" ::"l"(state32), "r"(~bit) : "memory");
    if constexpr (kMode == kCas32) acc += atomicCAS(state32, 0xFFFFFFFFu, ~bit);
    if constexpr (kMode == kReadAnd64) acc += __ldcg(slab) + atomicAnd(state, keep);
    if constexpr (kMode == kRead) acc += __ldcg(slab);
  }
  if (acc == 42) *sink = acc;  // keeps the results alive
}

template <int kMode>
float time_mode(unsigned long long* table, uint64_t slabs, uint64_t n, unsigned long long* sink, int blocks,
                EventTimer& timer) {
  return static_cast<float>(bench::measure(5, [&] {
    timer.start(nullptr);
    atomics_kernel<kMode><<<blocks, 256>>>(table, slabs, n, sink);
    GPUDICT_CHECK_LAUNCH("atomics_kernel");
    return timer.stop(nullptr);
  }));
}

}  // namespace

int main(int argc, char** argv) {
  int log2_ops = 25;
  if (!bench::int_option(argc, argv, "gpudict_atomic_rate", "--log2-ops", 10, 32, log2_ops)) return 2;
  try {
    if (!bench::have_device("gpudict_atomic_rate")) return 3;
    const uint64_t n = 1ull << log2_ops;
    const uint64_t slabs = static_cast<uint64_t>((1ull << 26) / 0.6 / 15 * 1.1);
    DeviceBuffer<unsigned long long> table(slabs * 16, "atomic-rate table");
    DeviceBuffer<unsigned long long> sink(1, "atomic-rate sink");
    GPUDICT_CUDA(cudaMemset(table.data(), 0xFF, table.bytes()));
    cudaDeviceProp prop{};
    GPUDICT_CUDA(cudaGetDeviceProperties(&prop, 0));
    const int blocks = prop.multiProcessorCount * 8;
    EventTimer timer;
    std::printf("%s: %llu random operations on %llu slabs (%.2f GB)\n", prop.name,
                static_cast<unsigned long long>(n), static_cast<unsigned long long>(slabs), slabs * 128 / 1e9);
    auto row = [&](const char* name, float ms) {
      std::printf("%-34s %9.3f ms %8.2f G/s\n", name, ms, static_cast<double>(n) / (ms * 1e6));
    };
    row("atomicAnd u64 (result used)", time_mode<kAnd64>(table.data(), slabs, n, sink.data(), blocks, timer));
    row("atomicAnd u32 (result used)", time_mode<kAnd32>(table.data(), slabs, n, sink.data(), blocks, timer));
    row("red.and.b64 (no result)", time_mode<kRed64>(table.data(), slabs, n, sink.data(), blocks, timer));
    row("red.and.b32 (no result)", time_mode<kRed32>(table.data(), slabs, n, sink.data(), blocks, timer));
    row("atomicCAS u32", time_mode<kCas32>(table.data(), slabs, n, sink.data(), blocks, timer));
    row("read + atomicAnd u64, same slab", time_mode<kReadAnd64>(table.data(), slabs, n, sink.data(), blocks, timer));
    row("read only (8 bytes of the slab)", time_mode<kRead>(table.data(), slabs, n, sink.data(), blocks, timer));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpudict_atomic_rate: %s\n", e.what());
    return 3;
  }
  return 0;
}
