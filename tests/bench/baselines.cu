// gpudict_baselines: the GPU sorted array against the primitives it should be
// as fast as, on the device, with fresh random data, warm-up + repetitions,
// median of CUDA-event times:
//   1. build   vs cub::DeviceRadixSort::SortPairs (u32/u32)   n = 2^22, 2^24, 2^26
//   2. lookup  vs thrust::lower_bound, n random queries (50% present) into n keys
//   3. update  of 2^20 random inserts into 2^26 vs thrust::merge_by_key of the
//      same sorted batch into the same array
// Every row checks its result (lookups: ours equal thrust's; sizes after build
// and update); exit 1 on a mismatch, 3 without a device.
//   gpudict_baselines [--max-log2 N] [--reps R]
#include <cub/device/device_radix_sort.cuh>
#include <thrust/binary_search.h>
#include <thrust/device_ptr.h>
#include <thrust/execution_policy.h>
#include <thrust/merge.h>
#include <thrust/sort.h>
#include <thrust/unique.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "workloads/dictionary.hpp"
#include "workloads/adapter/structures.hpp"
#include "core/common/cuda_check.hpp"
#include "core/common/device_buffer.hpp"
#include "core/common/device_info.hpp"
#include "core/common/errors.hpp"
#include "tests/bench/bench_util.hpp"

using namespace gpudict;
using gpudict::bench::measure;

namespace {

__host__ __device__ inline uint64_t mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
// The value stored with a key: a function of the key, so duplicates agree.
__host__ __device__ inline uint32_t value_of(uint32_t key) { return static_cast<uint32_t>(mix64(key ^ 0xABCDEFull)); }

__global__ void random_keys_kernel(uint32_t* out, uint64_t n, uint64_t seed) {
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x)
    out[i] = static_cast<uint32_t>(mix64(i ^ (seed << 40) ^ seed) >> 16);
}
__global__ void values_of_kernel(const uint32_t* keys, uint32_t* values, uint64_t n) {
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x)
    values[i] = value_of(keys[i]);
}
// Half the queries from the key set, half fresh random keys.
__global__ void queries_kernel(const uint32_t* sorted, uint64_t nu, uint32_t* q, uint64_t n, uint64_t seed) {
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    const uint64_t h = mix64(i * 0x2545F4914F6CDD1Dull + seed);
    q[i] = (h & 1) ? sorted[(h >> 1) % nu] : static_cast<uint32_t>(h >> 32);
  }
}

void fill_random(uint32_t* d, uint64_t n, uint64_t seed) {
  random_keys_kernel<<<1024, 256>>>(d, n, seed);
  GPUDICT_CHECK_LAUNCH("random_keys_kernel");
}
void fill_values(const uint32_t* keys, uint32_t* values, uint64_t n) {
  values_of_kernel<<<1024, 256>>>(keys, values, n);
  GPUDICT_CHECK_LAUNCH("values_of_kernel");
}

std::vector<uint32_t> to_host(const uint32_t* d, uint64_t n) {
  std::vector<uint32_t> h(n);
  GPUDICT_CUDA(cudaMemcpy(h.data(), d, n * sizeof(uint32_t), cudaMemcpyDeviceToHost));
  return h;
}

// Event time of device work queued by g on the default stream.
double event_ms(const std::function<void()>& g) {
  cudaEvent_t a, b;
  GPUDICT_CUDA(cudaEventCreate(&a));
  GPUDICT_CUDA(cudaEventCreate(&b));
  GPUDICT_CUDA(cudaEventRecord(a));
  g();
  GPUDICT_CUDA(cudaEventRecord(b));
  GPUDICT_CUDA(cudaEventSynchronize(b));
  float ms = 0;
  GPUDICT_CUDA(cudaEventElapsedTime(&ms, a, b));
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return ms;
}

struct Row {
  std::string name;
  int log2n;
  double ms;
  double items;
  double base_ms;  // 0: this row is the baseline
};
std::vector<Row> rows;
int failures = 0;

void report(const Row& r) {
  rows.push_back(r);
  char ratio[32] = "-";
  if (r.base_ms > 0) std::snprintf(ratio, sizeof ratio, "%.2f", r.ms / r.base_ms);
  std::printf("%-40s 2^%-3d %10.3f %10.3f %10s\n", r.name.c_str(), r.log2n, r.ms, r.items / r.ms / 1e6, ratio);
  std::fflush(stdout);
}

void check(bool ok, const std::string& what) {
  if (ok) return;
  ++failures;
  std::printf("MISMATCH: %s\n", what.c_str());
}

std::unique_ptr<Dictionary> make_sa() { return make_sorted_array_dictionary(0, KeyType::U32, KeyType::U32); }

KeyValues host_pairs(const std::vector<uint32_t>& keys) {
  KeyValues kv;
  kv.keys.resize(keys.size());
  kv.values.resize(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    kv.keys[i] = keys[i];
    kv.values[i] = value_of(keys[i]);
  }
  return kv;
}

// 1. build vs SortPairs.
void bench_build(int lg, int reps) {
  const uint64_t n = 1ull << lg;
  DeviceBuffer<uint32_t> kin(n), vin(n), kout(n), vout(n);
  fill_random(kin.data(), n, 1000 + lg);
  fill_values(kin.data(), vin.data(), n);
  size_t temp_bytes = 0;
  GPUDICT_CUDA(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, kin.data(), kout.data(), vin.data(), vout.data(),
                                               n, 0, 32));
  DeviceBuffer<unsigned char> temp(std::max<size_t>(temp_bytes, 1));
  const double base = measure(reps, [&] {
    return event_ms([&] {
      GPUDICT_CUDA(cub::DeviceRadixSort::SortPairs(temp.data(), temp_bytes, kin.data(), kout.data(), vin.data(),
                                                   vout.data(), n, 0, 32));
    });
  });
  report({"cub::DeviceRadixSort::SortPairs u32/u32", lg, base, double(n), 0});
  const std::vector<uint32_t> sorted = to_host(kout.data(), n);
  uint64_t distinct = n ? 1 : 0;
  for (uint64_t i = 1; i < n; ++i) distinct += sorted[i] != sorted[i - 1];

  const KeyValues kv = host_pairs(to_host(kin.data(), n));
  auto d = make_sa();
  const double ours = measure(reps, [&] {
    DeviceTime t;
    d->build(kv, t);
    return t[Phase::Build];
  });
  report({"sorted-array build", lg, ours, double(n), base});
  check(d->stats().size == distinct, "build size " + std::to_string(d->stats().size) + " expected " +
                                         std::to_string(distinct));
}

// 2. lookups vs thrust::lower_bound; returns nothing, checks every result.
void bench_lookup(int lg, int reps) {
  const uint64_t n = 1ull << lg;
  DeviceBuffer<uint32_t> keys(n), q(n), idx(n);
  fill_random(keys.data(), n, 2000 + lg);
  const KeyValues kv = host_pairs(to_host(keys.data(), n));
  thrust::device_ptr<uint32_t> kp(keys.data());
  thrust::sort(thrust::device, kp, kp + n);
  const uint64_t nu = thrust::unique(thrust::device, kp, kp + n) - kp;
  queries_kernel<<<1024, 256>>>(keys.data(), nu, q.data(), n, 77 + lg);
  GPUDICT_CHECK_LAUNCH("queries_kernel");
  thrust::device_ptr<uint32_t> qp(q.data()), ip(idx.data());
  const double base = measure(reps, [&] {
    return event_ms([&] { thrust::lower_bound(thrust::device, kp, kp + nu, qp, qp + n, ip); });
  });
  report({"thrust::lower_bound (n queries)", lg, base, double(n), 0});

  auto d = make_sa();
  DeviceTime bt;
  d->build(kv, bt);
  check(d->stats().size == nu, "lookup build size");
  Batch b;
  const std::vector<uint32_t> hq = to_host(q.data(), n);
  b.types.assign(n, OpType::Lookup);
  b.keys.assign(hq.begin(), hq.end());
  b.args.assign(n, 0);
  BatchResults r;
  const double ours = measure(reps, [&] {
    DeviceTime t;
    d->execute(b, r, t);
    return t[Phase::Lookup];
  });
  report({"sorted-array lookup (50% present)", lg, ours, double(n), base});

  const std::vector<uint32_t> hk = to_host(keys.data(), nu), hi = to_host(idx.data(), n);
  uint64_t bad = 0, present = 0;
  for (uint64_t i = 0; i < n; ++i) {
    const bool f = hi[i] < nu && hk[hi[i]] == hq[i];
    present += f;
    if (r.found[i] != (f ? 1 : 0) || (f && r.value[i] != value_of(hq[i]))) {
      if (bad < 5)
        std::printf("  lookup %llu: key %u ours found=%u value=%llu, thrust index %u\n",
                    static_cast<unsigned long long>(i), hq[i], r.found[i],
                    static_cast<unsigned long long>(r.value[i]), hi[i]);
      ++bad;
    }
  }
  check(bad == 0, std::to_string(bad) + " lookups differ from thrust::lower_bound");
  check(present > n / 4 && present < 3 * n / 4, "queries should be about half present");
}

// 3. update of m inserts into n vs thrust::merge_by_key.
void bench_merge(int lg, int lgm, int reps) {
  const uint64_t n = 1ull << lg, m = 1ull << lgm;
  DeviceBuffer<uint32_t> ak(n), av(n), bk(m), bv(m), ok(n + m), ov(n + m);
  fill_random(ak.data(), n, 3000 + lg);
  fill_random(bk.data(), m, 4000 + lgm);
  const KeyValues kv = host_pairs(to_host(ak.data(), n));
  const std::vector<uint32_t> batch_keys = to_host(bk.data(), m);
  thrust::device_ptr<uint32_t> akp(ak.data()), avp(av.data()), bkp(bk.data()), bvp(bv.data()), okp(ok.data()),
      ovp(ov.data());
  thrust::sort(thrust::device, akp, akp + n);
  const uint64_t nu = thrust::unique(thrust::device, akp, akp + n) - akp;
  fill_values(ak.data(), av.data(), nu);
  fill_values(bk.data(), bv.data(), m);
  thrust::sort_by_key(thrust::device, bkp, bkp + m, bvp);
  const double base = measure(reps, [&] {
    return event_ms([&] { thrust::merge_by_key(thrust::device, akp, akp + nu, bkp, bkp + m, avp, bvp, okp, ovp); });
  });
  report({"thrust::merge_by_key (sorted 2^" + std::to_string(lgm) + " batch)", lg, base, double(nu + m), 0});
  // Distinct keys of the merge = expected size after our update.
  std::vector<uint32_t> merged = to_host(ok.data(), nu + m);
  uint64_t distinct = merged.empty() ? 0 : 1;
  for (size_t i = 1; i < merged.size(); ++i) distinct += merged[i] != merged[i - 1];

  auto d = make_sa();
  Batch b;
  b.types.assign(m, OpType::Insert);
  b.keys.assign(batch_keys.begin(), batch_keys.end());
  b.args.resize(m);
  for (uint64_t i = 0; i < m; ++i) b.args[i] = value_of(batch_keys[i]);
  BatchResults r;
  bool size_ok = true;
  const double ours = measure(reps, [&] {
    DeviceTime bt, t;
    d->build(kv, bt);  // the same array before every repetition (not timed)
    d->execute(b, r, t);
    size_ok &= d->stats().size == distinct;
    return t[Phase::Update];
  });
  report({"sorted-array update (2^" + std::to_string(lgm) + " inserts)", lg, ours, double(nu + m), base});
  check(size_ok, "size after the update batch differs from the merge's distinct keys");
  // Spot-check: every batch key is found with its value.
  Batch look;
  const uint64_t probes = std::min<uint64_t>(m, 1 << 16);
  for (uint64_t i = 0; i < probes; ++i) look.push(OpType::Lookup, batch_keys[i]);
  DeviceTime lt;
  d->execute(look, r, lt);
  uint64_t bad = 0;
  for (uint64_t i = 0; i < probes; ++i) bad += !r.found[i] || r.value[i] != value_of(batch_keys[i]);
  check(bad == 0, std::to_string(bad) + " inserted keys not found after the update");
}

}  // namespace

int main(int argc, char** argv) {
  int max_log2 = 26, reps = 5;
  std::string only;  // build | lookup | update: one group (for profiling with ncu)
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if ((a == "--max-log2" || a == "--reps") && i + 1 < argc) {
      char* end = nullptr;
      const long v = std::strtol(argv[++i], &end, 10);
      const long lo = a == "--reps" ? 1 : 10, hi = a == "--reps" ? 1000 : 28;
      if (*end != '\0' || end == argv[i] || v < lo || v > hi) {  // never time zero runs
        std::fprintf(stderr, "gpudict_baselines: %s takes an integer in [%ld, %ld], not '%s'\n", a.c_str(), lo, hi,
                     argv[i]);
        return 2;
      }
      if (a == "--max-log2") max_log2 = static_cast<int>(v);
      else reps = static_cast<int>(v);
    } else if (a == "--only" && i + 1 < argc) {
      only = argv[++i];
      if (only != "build" && only != "lookup" && only != "update") {
        std::fprintf(stderr, "gpudict_baselines: --only takes build, lookup or update\n");
        return 2;
      }
    } else if (a == "-h" || a == "--help") {
      std::printf("usage: gpudict_baselines [--max-log2 N (default 26)] [--reps R (default 5)] [--only build|lookup|update]\n");
      return 0;
    } else {
      std::fprintf(stderr, "gpudict_baselines: unknown argument '%s' (try --help)\n", a.c_str());
      return 2;
    }
  }
  try {
    if (!bench::have_device("gpudict_baselines")) return 3;
    select_device(0);
    std::printf("device: %s, reps %d (median after 1 warm-up)\n", device_name(0).c_str(), reps);
    std::printf("%-40s %-5s %10s %10s %10s\n", "name", "n", "ms", "G items/s", "ours/base");
    std::vector<int> sizes;
    for (int lg = 22; lg <= max_log2; lg += 2) sizes.push_back(lg);
    if (sizes.empty() || sizes.back() != max_log2) sizes.push_back(max_log2);
    if (max_log2 < 22) sizes = {max_log2};
    if (only.empty() || only == "build")
      for (int lg : sizes) bench_build(lg, reps);
    if (only.empty() || only == "lookup")
      for (int lg = std::min(22, max_log2); lg <= max_log2; ++lg) bench_lookup(lg, reps);
    if (only.empty() || only == "update") bench_merge(max_log2, std::max(4, std::min(20, max_log2 - 6)), reps);
  } catch (const Error& e) {
    std::fprintf(stderr, "gpudict_baselines: %s\n", e.what());
    return dynamic_cast<const InputError*>(&e) ? 2 : 3;  // the command line's codes (cli/exit_codes.hpp)
  }
  if (failures) {
    std::printf("%d check(s) FAILED\n", failures);
    return 1;
  }
  std::printf("all checks passed\n");
  return 0;
}
