// build() and cleanup(), and what they share: placing one sorted run of
// unique live pairs into fresh levels.
//
// build(initial): copy the pairs in reverse order, one stable radix sort by
//   key, keep the first pair of every run of equal keys (the input's last: a
//   later duplicate wins), place.
// cleanup(): merge every level into one run, most recent first (stable
//   merges, the smaller level is the newer run), keep the first record of
//   every key unless it is a tombstone (that record is the key's most recent
//   one), compact the (key, value) pairs, place. Snapshots keep their levels:
//   the new levels are new storage.
// place(u pairs): r' = ceil(u / b) LSM batches; the levels are the set bits
//   of r', filled in index order with consecutive slices of the run (the
//   smallest keys in the smallest level, as in the paper), and the last
//   r' b - u slots are placebos: tombstones of key 0xFFFFFFFF. They sit at
//   the end of the largest level, after any live record of 0xFFFFFFFF (the
//   largest level holds the last >= b elements of the run, placebos < b), so
//   the key's most recent record is never a placebo while the key is live;
//   docs/lsm.md has the argument for later merges.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/iterator/zip_iterator.h>
#include <thrust/tuple.h>

#include <cstdint>
#include <string>

#include "core/common/cuda_check.hpp"
#include "core/common/errors.hpp"
#include "core/common/grid.cuh"
#include "core/lsm/lsm_impl.cuh"
#include "core/lsm/merge.cuh"
#include "core/sorted_array/search_index.cuh"

namespace gpudict::lsm {

namespace {

// Whether sorted position j is the first of its run of equal keys (build:
// the input is staged in reverse, so the first of a run is the input's last).
struct KeepFirst {
  const uint32_t* keys;
  __host__ __device__ bool operator()(uint64_t j) const { return j == 0 || keys[j] != keys[j - 1]; }
};

// Whether merged position j is the most recent record of its key and live (cleanup).
struct KeepFirstLive {
  const uint32_t* keys;
  const uint8_t* status;
  __host__ __device__ bool operator()(uint64_t j) const {
    return (j == 0 || keys[j] != keys[j - 1]) && (status[j] & kTombstone) == 0;
  }
};

// One level's slice: positions [off, off + n) of the run; past u: placebos.
__global__ void slice_kernel(const uint32_t* __restrict__ src_keys, const uint32_t* __restrict__ src_values,
                             uint64_t off, uint64_t u, uint64_t n, uint32_t* __restrict__ keys,
                             uint32_t* __restrict__ values, uint8_t* __restrict__ status) {
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const uint64_t g = off + i;
    const bool real = g < u;
    keys[i] = real ? src_keys[g] : kMaxKey;
    values[i] = real ? src_values[g] : 0u;
    status[i] = real ? uint8_t{0} : kTombstone;
  }
}

}  // namespace

double Lsm::place_sorted(const uint32_t* keys, const uint32_t* values, uint64_t u) {
  const uint64_t rr = div_up(u, b_);
  if ((rr >> kMaxLevels) != 0)
    throw RuntimeFailure("lsm: " + std::to_string(u) + " pairs need more than " + std::to_string(kMaxLevels) +
                         " levels of batch size " + std::to_string(b_));
  LevelList fresh;
  fresh.r = rr;
  for (int i = 0; i < kMaxLevels; ++i)
    if ((rr >> i) & 1) fresh.at[i] = pool_->acquire(i);  // throws for a level over 2^31 elements
  timer_.start(stream_);
  uint64_t off = 0;
  for (int i = 0; i < kMaxLevels; ++i) {
    if (!fresh.at[i]) continue;
    Level& l = *fresh.at[i];
    slice_kernel<<<blocks_for(l.n(), 256, 8192), 256, 0, stream_>>>(keys, values, off, u, l.n(), l.kv.keys.data(),
                                                                    l.kv.values.data(), l.status.data());
    GPUDICT_CHECK_LAUNCH("slice_kernel");
    sa::build_fence_levels(l.kv, 0, stream_);
    off += l.n();
  }
  const double ms = timer_.stop(stream_);
  for (auto& l : live_.at)
    if (l) dropped_.push_back(std::move(l));
  live_ = std::move(fresh);
  release_dropped();
  stale_ = rr * b_ - u;  // the placebos
  stale_exact_ = true;
  return ms;
}

void Lsm::build(const KeyValues& initial, DeviceTime& t) {
  if (initial.keys.size() != initial.values.size()) throw InputError("lsm: initial keys and values differ in length");
  // The old contents go first (snapshots keep theirs), and the pool with
  // them: the build's peak is the sort buffers plus the new levels.
  for (auto& l : live_.at)
    if (l) dropped_.push_back(std::move(l));
  live_ = LevelList{};
  release_dropped();
  pool_->clear();
  chunks_ = padding_ = since_cleanup_ = 0;
  stale_ = 0;
  stale_exact_ = true;
  const uint64_t n = initial.size();
  if (n == 0) {
    t.add(Phase::Build, 0.0);
    return;
  }
  for (int i = 0; i < 2; ++i) {
    pp_[i].keys.reserve_discard(n, "lsm build buffer");
    pp_[i].values.reserve_discard(n, "lsm build buffer");
  }
  h_keys_.reserve_discard(n);
  h_values_.reserve_discard(n);
  // Reversed: after the stable sort a key's last pair in the input comes first.
  for (uint64_t i = 0; i < n; ++i) {
    h_keys_[n - 1 - i] = static_cast<uint32_t>(initial.keys[i]);
    h_values_[n - 1 - i] = static_cast<uint32_t>(initial.values[i]);
  }
  h2d(pp_[0].keys.data(), h_keys_.data(), n * sizeof(uint32_t));
  h2d(pp_[0].values.data(), h_values_.data(), n * sizeof(uint32_t));

  cub::DoubleBuffer<uint32_t> dk(pp_[0].keys.data(), pp_[1].keys.data());
  cub::DoubleBuffer<uint32_t> dv(pp_[0].values.data(), pp_[1].values.data());
  auto sort = [&](void* p, size_t& bytes) {
    return cub::DeviceRadixSort::SortPairs(p, bytes, dk, dv, n, 0, 32, stream_);
  };
  // Selection out of the sorted pairs into the other pair of buffers.
  auto select = [&](void* p, size_t& bytes) {
    auto flags = thrust::make_transform_iterator(thrust::counting_iterator<uint64_t>(0), KeepFirst{dk.Current()});
    auto in = thrust::make_zip_iterator(thrust::make_tuple(static_cast<const uint32_t*>(dk.Current()),
                                                           static_cast<const uint32_t*>(dv.Current())));
    auto out = thrust::make_zip_iterator(thrust::make_tuple(dk.Alternate(), dv.Alternate()));
    return cub::DeviceSelect::Flagged(p, bytes, in, flags, out, d_counters_.data(), n, stream_);
  };
  temp_.prepare("cub::DeviceRadixSort::SortPairs (lsm build)", sort);
  temp_.prepare("cub::DeviceSelect::Flagged (lsm build)", select);
  timer_.start(stream_);
  temp_.run("cub::DeviceRadixSort::SortPairs (lsm build)", sort);
  temp_.run("cub::DeviceSelect::Flagged (lsm build)", select);
  double ms = timer_.stop(stream_);
  d2h(h_u64_.data(), d_counters_.data(), sizeof(unsigned long long));
  const uint64_t u = h_u64_[0];
  ms += place_sorted(dk.Alternate(), dv.Alternate(), u);
  pp_[0].release();
  pp_[1].release();
  t.add(Phase::Build, ms);
}

void Lsm::run_cleanup(DeviceTime& t) {
  ++cleanups_;
  since_cleanup_ = 0;
  std::vector<const Level*> levels;  // rank order: most recent first
  for (const auto& l : live_.at)
    if (l) levels.push_back(l.get());
  if (levels.empty()) {
    last_cleanup_stale_ = 0;
    stale_ = 0;
    stale_exact_ = true;
    t.add(Phase::Cleanup, 0.0);
    return;
  }
  // Free the pooled storage first: the cleanup's peak is the old levels,
  // two run buffers of every stored element and the new levels.
  pool_->clear();
  const uint64_t n = stored();
  pp_[0].reserve(n, "lsm cleanup buffer");
  if (levels.size() > 1) pp_[1].reserve(n, "lsm cleanup buffer");
  splits_.reserve_discard(merge_split_entries(n), "lsm merge splits");

  // Where the merged run will be and where the compaction writes.
  const Level& l0 = *levels[0];
  RunIn acc{l0.kv.keys.data(), l0.kv.values.data(), l0.status.data(), l0.n()};
  const int merges = static_cast<int>(levels.size()) - 1;
  const int free_buf = merges % 2 == 0 ? 0 : 1;  // merges write pp_[0], pp_[1], pp_[0], ...
  RunBuffers& dst = pp_[merges == 0 ? 0 : free_buf];
  auto select = [&](void* p, size_t& bytes) {
    auto flags = thrust::make_transform_iterator(thrust::counting_iterator<uint64_t>(0),
                                                 KeepFirstLive{acc.keys, acc.status});
    auto in = thrust::make_zip_iterator(thrust::make_tuple(acc.keys, acc.values));
    auto out = thrust::make_zip_iterator(thrust::make_tuple(dst.keys.data(), dst.values.data()));
    return cub::DeviceSelect::Flagged(p, bytes, in, flags, out, d_counters_.data(), acc.n, stream_);
  };
  {
    // Size query with the final run length (the pointers do not matter).
    const RunIn saved = acc;
    acc.n = n;
    temp_.prepare("cub::DeviceSelect::Flagged (lsm cleanup)", select);
    acc = saved;
  }
  timer_.start(stream_);
  for (int m = 0; m < merges; ++m) {
    const Level& older = *levels[m + 1];
    RunBuffers& o = pp_[m & 1];
    merge_runs(acc, RunIn{older.kv.keys.data(), older.kv.values.data(), older.status.data(), older.n()},
               RunOut{o.keys.data(), o.values.data(), o.status.data(), nullptr}, splits_, stream_);
    acc = RunIn{o.keys.data(), o.values.data(), o.status.data(), acc.n + older.n()};
  }
  temp_.run("cub::DeviceSelect::Flagged (lsm cleanup)", select);
  double ms = timer_.stop(stream_);
  d2h(h_u64_.data(), d_counters_.data(), sizeof(unsigned long long));
  const uint64_t u = h_u64_[0];
  last_cleanup_stale_ = n - u;
  ms += place_sorted(dst.keys.data(), dst.values.data(), u);
  pp_[0].release();
  pp_[1].release();
  t.add(Phase::Cleanup, ms);
}

}  // namespace gpudict::lsm
