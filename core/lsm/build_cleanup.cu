// build() and cleanup(), and what they share: placing one sorted run of
// unique live pairs into fresh levels.
//
// build(initial): copy the pairs in reverse order, one stable radix sort by
//   key, keep the first pair of every run of equal keys (the input's last: a
//   later duplicate wins), place.
// cleanup(): merge every level into one run, most recent first (stable
//   merges, the smaller level is the newer run), keep the first record of
//   every key unless it is a tombstone (that record is the key's most recent
//   one) and write the kept pairs straight into the new levels: one pass
//   counts the kept records per tile (5 B read per record), a scan of the
//   tile counts gives the total and each tile's first slot, and a second
//   pass writes each kept record to its slot's level (9 B in, 9 B out).
//   Snapshots keep their levels: the new levels are new storage.
// place(u pairs): r' = ceil(u / b) LSM batches; the levels are the set bits
//   of r', filled in index order with consecutive slices of the run (the
//   smallest keys in the smallest level, as in the paper), and the last
//   r' b - u slots are placebos: tombstones of key 0xFFFFFFFF. They sit at
//   the end of the largest level, after any live record of 0xFFFFFFFF (the
//   largest level holds the last >= b elements of the run, placebos < b), so
//   the key's most recent record is never a placebo while the key is live;
//   docs/lsm.md has the argument for later merges.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
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
#include "core/common/warp.cuh"
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

// The cleanup's compaction: tiles of kCompactThreads x kCompactRounds quads
// of records; in round i thread t holds the 4 records starting at
// tile0 + 4 (i kCompactThreads + t), loaded as one uint4 of keys and one
// 32-bit word of status bytes (narrow 1- and 4-byte loads per record left
// both kernels at 1.5 TB/s). Kept order = (round, thread, record) = record
// order.
constexpr int kCompactThreads = 256;
constexpr int kCompactRounds = 4;
constexpr int kCompactWarps = kCompactThreads / 32;
constexpr uint64_t kCompactTile = static_cast<uint64_t>(kCompactThreads) * kCompactRounds * 4;

// Bit c of the result: record q4 + c is the first of its key and live. The
// key before the quad comes from the lane below (lane 0 loads it).
__device__ __forceinline__ unsigned keep_quad(const uint32_t* __restrict__ keys, const uint8_t* __restrict__ status,
                                              uint64_t q4, uint64_t n, uint4& k) {
  uint32_t st;
  if (q4 + 4 <= n) {
    k = *reinterpret_cast<const uint4*>(keys + q4);
    st = *reinterpret_cast<const uint32_t*>(status + q4);
  } else {  // the run's tail (n need not be a multiple of 4)
    const uint32_t kk[4] = {q4 < n ? keys[q4] : 0u, q4 + 1 < n ? keys[q4 + 1] : 0u,
                            q4 + 2 < n ? keys[q4 + 2] : 0u, q4 + 3 < n ? keys[q4 + 3] : 0u};
    k = make_uint4(kk[0], kk[1], kk[2], kk[3]);
    st = 0;
    for (int c = 0; c < 4; ++c)
      if (q4 + c < n) st |= static_cast<uint32_t>(status[q4 + c]) << (8 * c);
  }
  uint32_t prev = __shfl_up_sync(kFullMask, k.w, 1);
  if (lane_id() == 0 && q4 > 0 && q4 < n) prev = keys[q4 - 1];
  unsigned m = 0;
  m |= (q4 < n && (q4 == 0 || k.x != prev) && !(st & kTombstone)) ? 1u : 0u;
  m |= (q4 + 1 < n && k.y != k.x && !((st >> 8) & kTombstone)) ? 2u : 0u;
  m |= (q4 + 2 < n && k.z != k.y && !((st >> 16) & kTombstone)) ? 4u : 0u;
  m |= (q4 + 3 < n && k.w != k.z && !((st >> 24) & kTombstone)) ? 8u : 0u;
  return m;
}

__device__ __forceinline__ uint64_t quad_start(int round) {
  return static_cast<uint64_t>(blockIdx.x) * kCompactTile +
         4ull * (static_cast<uint64_t>(round) * kCompactThreads + threadIdx.x);
}

__global__ void __launch_bounds__(kCompactThreads)
    compact_count_kernel(const uint32_t* __restrict__ keys, const uint8_t* __restrict__ status, uint64_t n,
                         uint64_t* __restrict__ tile_count) {
  __shared__ uint32_t s_warp[kCompactWarps];
  uint32_t c = 0;
#pragma unroll
  for (int i = 0; i < kCompactRounds; ++i) {
    uint4 k;
    c += __popc(keep_quad(keys, status, quad_start(i), n, k));
  }
  c = warp_sum(c);
  if (lane_id() == 0) s_warp[warp_in_block()] = c;
  __syncthreads();
  if (threadIdx.x == 0) {
    uint32_t t = 0;
    for (int w = 0; w < kCompactWarps; ++w) t += s_warp[w];
    tile_count[blockIdx.x] = t;
  }
}

// Where the new levels are: slot p of the compacted run lies in the level
// whose [start, start + n) holds it (levels in index order).
struct LevelSlices {
  int count;
  uint64_t start[kMaxLevels];
  uint64_t n[kMaxLevels];
  uint32_t* keys[kMaxLevels];
  uint32_t* values[kMaxLevels];
  uint8_t* status[kMaxLevels];
};

__global__ void __launch_bounds__(kCompactThreads)
    compact_place_kernel(const uint32_t* __restrict__ keys, const uint32_t* __restrict__ values,
                         const uint8_t* __restrict__ status, uint64_t n, const uint64_t* __restrict__ tile_offset,
                         const __grid_constant__ LevelSlices out) {
  __shared__ uint32_t s_count[kCompactRounds * kCompactWarps];
  // The level table in shared memory: indexing the kernel parameter with a
  // run-time index goes through local memory.
  __shared__ uint64_t s_start[kMaxLevels + 1];
  __shared__ uint32_t* s_keys[kMaxLevels];
  __shared__ uint32_t* s_values[kMaxLevels];
  __shared__ uint8_t* s_status[kMaxLevels];
  if (threadIdx.x < kMaxLevels) {
    const int l = threadIdx.x;
    s_start[l] = l < out.count ? out.start[l] : ~0ull;
    s_keys[l] = out.keys[l];
    s_values[l] = out.values[l];
    s_status[l] = out.status[l];
  }
  if (threadIdx.x == 0) s_start[kMaxLevels] = ~0ull;
  const unsigned lane = lane_id(), warp = warp_in_block();
  uint4 k[kCompactRounds];
  unsigned keep[kCompactRounds];
  uint32_t below[kCompactRounds];  // kept records of the lanes below in the same round and warp
#pragma unroll
  for (int i = 0; i < kCompactRounds; ++i) {
    keep[i] = keep_quad(keys, status, quad_start(i), n, k[i]);
    const uint32_t c = __popc(keep[i]);
    uint32_t incl = c;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
      const uint32_t y = __shfl_up_sync(kFullMask, incl, d);
      if (lane >= static_cast<unsigned>(d)) incl += y;
    }
    below[i] = incl - c;
    if (lane == 31) s_count[i * kCompactWarps + warp] = incl;
  }
  __syncthreads();
  // Exclusive scan of the (round, warp) totals in record order.
  __shared__ uint32_t s_total;
  if (threadIdx.x == 0) {
    uint32_t run = 0;
    for (int x = 0; x < kCompactRounds * kCompactWarps; ++x) {
      const uint32_t v = s_count[x];
      s_count[x] = run;
      run += v;
    }
    s_total = run;
  }
  __syncthreads();
  // The kept records go to shared memory in tile order first, then out with
  // consecutive threads writing consecutive slots: written straight from the
  // quads, each store instruction would spread 4-byte pieces over 512 bytes.
  __shared__ uint32_t s_k[kCompactTile], s_v[kCompactTile];
#pragma unroll
  for (int i = 0; i < kCompactRounds; ++i) {
    if (!keep[i]) continue;
    const uint64_t q4 = quad_start(i);
    uint32_t x = s_count[i * kCompactWarps + warp] + below[i];
    const uint32_t kk[4] = {k[i].x, k[i].y, k[i].z, k[i].w};
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      if (!((keep[i] >> c) & 1)) continue;
      s_k[x] = kk[c];
      s_v[x] = values[q4 + c];
      ++x;
    }
  }
  __syncthreads();
  const uint64_t base = tile_offset[blockIdx.x];
  const uint32_t total = s_total;
  int l = 0;
  while (base >= s_start[l + 1]) ++l;
  for (uint32_t x = threadIdx.x; x < total; x += kCompactThreads) {
    const uint64_t p = base + x;
    int m = l;
    while (p >= s_start[m + 1]) ++m;  // the tile's slots span one level, rarely two
    const uint64_t o = p - s_start[m];
    s_keys[m][o] = s_k[x];
    s_values[m][o] = s_v[x];
    s_status[m][o] = 0;
  }
}

// Placebos (tombstones of the largest key) in slots [from, to) of one level.
__global__ void placebo_kernel(uint32_t* __restrict__ keys, uint32_t* __restrict__ values,
                               uint8_t* __restrict__ status, uint64_t from, uint64_t to) {
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  for (uint64_t i = from + static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < to; i += stride) {
    keys[i] = kMaxKey;
    values[i] = 0u;
    status[i] = kTombstone;
  }
}

}  // namespace

LevelList Lsm::acquire_levels_for(uint64_t u) {
  const uint64_t rr = div_up(u, b_);
  if ((rr >> kMaxLevels) != 0)
    throw RuntimeFailure("lsm: " + std::to_string(u) + " pairs need more than " + std::to_string(kMaxLevels) +
                         " levels of batch size " + std::to_string(b_));
  LevelList fresh;
  fresh.r = rr;
  for (int i = 0; i < kMaxLevels; ++i)
    if ((rr >> i) & 1) fresh.at[i] = pool_->acquire(i);  // throws for a level over 2^31 elements
  return fresh;
}

void Lsm::replace_live(LevelList&& fresh, uint64_t u) {
  for (auto& l : live_.at)
    if (l) dropped_.push_back(std::move(l));
  live_ = std::move(fresh);
  release_dropped();
  stale_ = live_.r * b_ - u;  // the placebos
  stale_exact_ = true;
}

double Lsm::place_sorted(const uint32_t* keys, const uint32_t* values, uint64_t u) {
  LevelList fresh = acquire_levels_for(u);
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
  replace_live(std::move(fresh), u);
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
  copy_to_device(stream_, pp_[0].keys.data(), h_keys_.data(), n * sizeof(uint32_t));
  copy_to_device(stream_, pp_[0].values.data(), h_values_.data(), n * sizeof(uint32_t));

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
  copy_to_host(stream_, h_u64_.data(), d_counters_.data(), sizeof(unsigned long long));
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
  // the merge buffers of every stored element and the new levels.
  pool_->clear();
  const uint64_t n = stored();
  const int merges = static_cast<int>(levels.size()) - 1;
  if (merges >= 1) pp_[0].reserve(n, "lsm cleanup buffer");
  if (merges >= 2) pp_[1].reserve(n, "lsm cleanup buffer");
  splits_.reserve_discard(merge_split_entries(n), "lsm merge splits");
  const uint64_t tiles = div_up(n, kCompactTile);
  tile_count_.reserve_discard(tiles + 1, "lsm cleanup tile counts");
  tile_offset_.reserve_discard(tiles + 1, "lsm cleanup tile offsets");
  // The scan runs over tiles + 1 counts (the last one 0) so that its last
  // output is the total.
  auto scan = [&](void* p, size_t& bytes) {
    return cub::DeviceScan::ExclusiveSum(p, bytes, tile_count_.data(), tile_offset_.data(), tiles + 1, stream_);
  };
  temp_.prepare("cub::DeviceScan::ExclusiveSum (lsm cleanup)", scan);

  const Level& l0 = *levels[0];
  RunIn acc{l0.kv.keys.data(), l0.kv.values.data(), l0.status.data(), l0.n()};
  timer_.start(stream_);
  for (int m = 0; m < merges; ++m) {
    const Level& older = *levels[m + 1];
    RunBuffers& o = pp_[m & 1];
    merge_runs(acc, RunIn{older.kv.keys.data(), older.kv.values.data(), older.status.data(), older.n()},
               RunOut{o.keys.data(), o.values.data(), o.status.data(), nullptr}, splits_, stream_);
    acc = RunIn{o.keys.data(), o.values.data(), o.status.data(), acc.n + older.n()};
  }
  GPUDICT_CUDA(cudaMemsetAsync(tile_count_.data() + tiles, 0, sizeof(uint64_t), stream_));
  compact_count_kernel<<<static_cast<unsigned>(tiles), kCompactThreads, 0, stream_>>>(acc.keys, acc.status, n,
                                                                                      tile_count_.data());
  GPUDICT_CHECK_LAUNCH("compact_count_kernel");
  temp_.run("cub::DeviceScan::ExclusiveSum (lsm cleanup)", scan);
  double ms = timer_.stop(stream_);
  uint64_t u = 0;
  copy_to_host(stream_, &u, tile_offset_.data() + tiles, sizeof(u));
  last_cleanup_stale_ = n - u;

  // The new levels (allocated outside the timed segments), then one pass
  // writes every kept record into its level, placebos fill the rest of the
  // largest level, and each level gets its fence index.
  LevelList fresh = acquire_levels_for(u);
  LevelSlices slices{};
  uint64_t off = 0;
  for (int i = 0; i < kMaxLevels; ++i) {
    if (!fresh.at[i]) continue;
    Level& l = *fresh.at[i];
    const int k = slices.count++;
    slices.start[k] = off;
    slices.n[k] = l.n();
    slices.keys[k] = l.kv.keys.data();
    slices.values[k] = l.kv.values.data();
    slices.status[k] = l.status.data();
    off += l.n();
  }
  timer_.start(stream_);
  if (u > 0) {
    compact_place_kernel<<<static_cast<unsigned>(tiles), kCompactThreads, 0, stream_>>>(
        acc.keys, acc.values, acc.status, n, tile_offset_.data(), slices);
    GPUDICT_CHECK_LAUNCH("compact_place_kernel");
    if (off > u) {  // the placebos all lie in the largest level (it holds the last >= b slots)
      const int k = slices.count - 1;
      placebo_kernel<<<blocks_for(off - u, 256, 4096), 256, 0, stream_>>>(
          slices.keys[k], slices.values[k], slices.status[k], u - slices.start[k], slices.n[k]);
      GPUDICT_CHECK_LAUNCH("placebo_kernel");
    }
    for (int i = 0; i < kMaxLevels; ++i)
      if (fresh.at[i]) sa::build_fence_levels(fresh.at[i]->kv, 0, stream_);
  }
  ms += timer_.stop(stream_);
  replace_live(std::move(fresh), u);
  pp_[0].release();
  pp_[1].release();
  t.add(Phase::Cleanup, ms);
}

}  // namespace gpudict::lsm
