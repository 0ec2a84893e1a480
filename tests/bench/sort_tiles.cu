// gpudict_sort_tiles: CUB's onesweep radix sort of (32-bit key, 32-bit
// value) pairs with its stock SM90 tile against smaller tiles
// (tests/bench/sort_policy.cuh), for the list sizes the structures sort per
// batch (2^16 ... 2^24). Uniform random keys on all 32 bits, values 0..n-1;
// every variant's output is compared with the stock sort's (keys and values:
// the sort is stable, so they must be equal). Median of the CUDA-event times
// of 9 sorts after one warm-up.
//   gpudict_sort_tiles [--max-log2 N]   (default 24)
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "core/common/cuda_check.hpp"
#include "core/common/device_buffer.hpp"
#include "core/common/errors.hpp"
#include "core/common/event_timer.hpp"
#include "tests/bench/bench_util.hpp"
#include "tests/bench/sort_policy.cuh"

using namespace gpudict;

namespace {

struct Arrays {
  DeviceBuffer<uint32_t> k0, k1, v0, v1, in_k, in_v;
  DeviceBuffer<unsigned char> temp;
};

using SortFn = cudaError_t (*)(void*, size_t&, cub::DoubleBuffer<uint32_t>&, cub::DoubleBuffer<uint32_t>&, uint32_t,
                               int, int, cudaStream_t);

cudaError_t stock(void* t, size_t& b, cub::DoubleBuffer<uint32_t>& k, cub::DoubleBuffer<uint32_t>& v, uint32_t n,
                  int lo, int hi, cudaStream_t s) {
  return cub::DeviceRadixSort::SortPairs(t, b, k, v, n, lo, hi, s);
}

// Sorts once (copying the input in first, outside the timing) and returns
// the ms; leaves the sorted keys/values in `out_k`/`out_v` (host).
double sort_once(SortFn fn, Arrays& a, uint32_t n, EventTimer& timer, std::vector<uint32_t>* out_k,
                 std::vector<uint32_t>* out_v) {
  GPUDICT_CUDA(cudaMemcpy(a.k0.data(), a.in_k.data(), n * 4ull, cudaMemcpyDeviceToDevice));
  GPUDICT_CUDA(cudaMemcpy(a.v0.data(), a.in_v.data(), n * 4ull, cudaMemcpyDeviceToDevice));
  cub::DoubleBuffer<uint32_t> k(a.k0.data(), a.k1.data()), v(a.v0.data(), a.v1.data());
  size_t bytes = 0;
  GPUDICT_CUDA(fn(nullptr, bytes, k, v, n, 0, 32, nullptr));
  if (bytes > a.temp.capacity()) a.temp.reserve_discard(bytes, "sort temp");
  timer.start(nullptr);
  GPUDICT_CUDA(fn(a.temp.data(), bytes, k, v, n, 0, 32, nullptr));
  GPUDICT_CHECK_LAUNCH("sort");
  const double ms = timer.stop(nullptr);
  if (out_k) {
    out_k->resize(n);
    out_v->resize(n);
    GPUDICT_CUDA(cudaMemcpy(out_k->data(), k.Current(), n * 4ull, cudaMemcpyDeviceToHost));
    GPUDICT_CUDA(cudaMemcpy(out_v->data(), v.Current(), n * 4ull, cudaMemcpyDeviceToHost));
  }
  return ms;
}

struct Variant {
  const char* name;
  SortFn fn;
};

}  // namespace

int main(int argc, char** argv) {
  int max_log2 = 24;
  if (!bench::int_option(argc, argv, "gpudict_sort_tiles", "--max-log2", 16, 28, max_log2)) return 2;
  try {
    if (!bench::have_device("gpudict_sort_tiles")) return 3;
    cudaDeviceProp prop{};
    GPUDICT_CUDA(cudaGetDeviceProperties(&prop, 0));
    std::printf("device: %s (%d SMs)\n", prop.name, prop.multiProcessorCount);
    const Variant variants[] = {
        {"stock", stock},
        {"384x23", sort_pairs_tiled<384, 23>},
        {"384x12", sort_pairs_tiled<384, 12>},
        {"384x8", sort_pairs_tiled<384, 8>},
        {"256x16", sort_pairs_tiled<256, 16>},
        {"256x12", sort_pairs_tiled<256, 12>},
        {"256x8", sort_pairs_tiled<256, 8>},
        {"256x4", sort_pairs_tiled<256, 4>},
        {"128x16", sort_pairs_tiled<128, 16>},
        {"128x8", sort_pairs_tiled<128, 8>},
        {"512x8", sort_pairs_tiled<512, 8>},
    };
    const uint32_t max_n = 1u << max_log2;
    Arrays a;
    for (auto* b : {&a.k0, &a.k1, &a.v0, &a.v1, &a.in_k, &a.in_v}) b->reserve_discard(max_n, "sort arrays");
    EventTimer timer;
    std::mt19937_64 rng(12345);
    std::printf("%-8s", "log2 n");
    for (const auto& v : variants) std::printf(" %9s", v.name);
    std::printf("   (us, median of 9; * = output differs from stock)\n");
    bool ok = true;
    for (int lg = 16; lg <= max_log2; lg += 1) {
      const uint32_t n = 1u << lg;
      std::vector<uint32_t> hk(n), hv(n);
      for (uint32_t i = 0; i < n; ++i) {
        hk[i] = static_cast<uint32_t>(rng());
        hv[i] = i;
      }
      GPUDICT_CUDA(cudaMemcpy(a.in_k.data(), hk.data(), n * 4ull, cudaMemcpyHostToDevice));
      GPUDICT_CUDA(cudaMemcpy(a.in_v.data(), hv.data(), n * 4ull, cudaMemcpyHostToDevice));
      std::vector<uint32_t> ref_k, ref_v, got_k, got_v;
      std::printf("%-8d", lg);
      for (const auto& var : variants) {
        const bool first = &var == &variants[0];
        sort_once(var.fn, a, n, timer, first ? &ref_k : &got_k, first ? &ref_v : &got_v);
        // The stock sort, which every variant is compared with, is checked
        // itself: the input's pairs (values are input positions), keys in
        // order, equal keys in input order (stable).
        bool ref_ok = true;
        if (first) {
          ref_ok = ref_k.size() == n && ref_v.size() == n;
          std::vector<bool> hit(n, false);
          for (uint32_t i = 0; ref_ok && i < n; ++i) {
            ref_ok = ref_v[i] < n && !hit[ref_v[i]] && hk[ref_v[i]] == ref_k[i] &&
                     (i == 0 || ref_k[i - 1] < ref_k[i] || (ref_k[i - 1] == ref_k[i] && ref_v[i - 1] < ref_v[i]));
            if (ref_ok) hit[ref_v[i]] = true;
          }
        }
        const bool same = first ? ref_ok : (got_k == ref_k && got_v == ref_v);
        ok = ok && same;
        const double ms = bench::measure(9, [&] { return sort_once(var.fn, a, n, timer, nullptr, nullptr); });
        std::printf(" %8.1f%s", ms * 1e3, same ? " " : "*");
      }
      std::printf("\n");
    }
    std::printf("%s\n", ok ? "the stock sort is sorted and stable; all outputs equal it"
                           : "SOME OUTPUTS DIFFER (or the stock sort's is wrong: marked *)");
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpudict_sort_tiles: %s\n", e.what());
    return 3;
  }
}
