// build() and cleanup(), and what they share: placing one sorted run of
// unique live pairs into fresh levels.
//
// build(initial): copy the pairs in reverse order, one stable radix sort by
//   key, keep the first pair of every run of equal keys (the input's last: a
//   later duplicate wins), place.
// cleanup(): the fused merge and compaction of cleanup_tiles.cuh. The merged
//   order of all levels (most recent first on equal keys) is cut into tiles
//   by splitter records; a counting pass keeps the first record of every key
//   unless it is a tombstone (that record is the key's most recent one) and
//   counts per tile (5 B read per record), a scan of the counts gives the
//   total and each tile's first slot, and a placing pass (8 B read per
//   record, 9 B written per kept one) writes each kept record straight into
//   its new level. No merged run is written. Snapshots keep their levels:
//   the new levels are new storage.
// place(u pairs): r' = ceil(u / b) LSM batches; the levels are the set bits
//   of r', filled in index order with consecutive slices of the run (the
//   smallest keys in the smallest level, as in the paper). Every level but
//   the smallest is full; the smallest holds the rest (1 to its room), so a
//   partial level 0 can take the next small batches without a carry.
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
#include "core/lsm/detail/cleanup_tiles.cuh"
#include "core/lsm/detail/lsm_impl.cuh"
#include "core/sorted_array/detail/search_index.cuh"

namespace gpudict::lsm {

namespace {

// Whether sorted position j is the first of its run of equal keys (build:
// the input is staged in reverse, so the first of a run is the input's last).
template <class K>
struct KeepFirst {
  const K* keys;
  __host__ __device__ bool operator()(uint64_t j) const { return j == 0 || keys[j] != keys[j - 1]; }
};

// One level's slice: positions [off, off + n) of the run.
template <class K, class V>
__global__ void slice_kernel(const K* __restrict__ src_keys, const V* __restrict__ src_values, uint64_t off,
                             uint64_t n, K* __restrict__ keys, V* __restrict__ values, uint8_t* __restrict__ status) {
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    keys[i] = src_keys[off + i];
    values[i] = src_values[off + i];
    status[i] = 0;
  }
}

}  // namespace

template <class K, class V>
void Lsm<K, V>::build_fences(LevelList& levels, int from_level) {
  sa::ArrayStore<K, V>* stores[kMaxLevels];
  int count = 0;
  for (auto& l : levels.at)
    if (l) stores[count++] = &l->kv;
  sa::build_fence_levels(stores, count, from_level, stream_);
}

template <class K, class V>
auto Lsm<K, V>::acquire_levels_for(uint64_t u) -> LevelList {
  const uint64_t rr = div_up(u, b_);
  if ((rr >> kMaxLevels) != 0)
    throw RuntimeFailure("lsm: " + std::to_string(u) + " pairs need more than " + std::to_string(kMaxLevels) +
                         " levels of batch size " + std::to_string(b_));
  LevelList fresh;
  fresh.r = rr;
  int smallest = -1;
  uint64_t full = 0;  // the elements of the full levels
  for (int i = 0; i < kMaxLevels; ++i)
    if ((rr >> i) & 1) {
      fresh.at[i] = pool_->acquire(i);  // throws for a level over 2^31 elements
      fresh.at[i]->disjoint = true;     // sorted pairs sliced into levels: no lookup filter
      if (smallest < 0)
        smallest = i;
      else
        full += fresh.at[i]->capacity;
    }
  for (int i = 0; i < kMaxLevels; ++i)
    if (fresh.at[i]) fresh.at[i]->set_size(i == smallest ? u - full : fresh.at[i]->capacity);
  return fresh;
}

template <class K, class V>
void Lsm<K, V>::replace_live(LevelList&& fresh) {
  for (auto& l : live_.at)
    if (l) dropped_.push_back(std::move(l));
  live_ = std::move(fresh);
  release_dropped();
  stale_ = 0;  // the levels hold the live pairs alone
  stale_exact_ = true;
}

template <class K, class V>
double Lsm<K, V>::place_sorted(const K* keys, const V* values, uint64_t u) {
  LevelList fresh = acquire_levels_for(u);
  timer_.start_settled(stream_);
  uint64_t off = 0;
  for (int i = 0; i < kMaxLevels; ++i) {
    if (!fresh.at[i]) continue;
    Level& l = *fresh.at[i];
    slice_kernel<K, V><<<blocks_for(l.n(), 256, 8192), 256, 0, stream_>>>(keys, values, off, l.n(), l.kv.keys.data(),
                                                                    l.kv.values.data(), l.status.data());
    GPUDICT_CHECK_LAUNCH("slice_kernel");
    off += l.n();
  }
  build_fences(fresh, 0);
  const double ms = timer_.stop(stream_);
  replace_live(std::move(fresh));
  return ms;
}

template <class K, class V>
void Lsm<K, V>::reset_contents() {
  // The old contents go first (snapshots keep theirs), and the pool with
  // them: the build's peak is the sort buffers plus the new levels.
  for (auto& l : live_.at)
    if (l) dropped_.push_back(std::move(l));
  live_ = LevelList{};
  release_dropped();
  pool_->clear();
  chunks_ = resolved_ = since_cleanup_ = known_live_ = 0;
  stale_ = 0;
  stale_exact_ = true;
}

namespace {
// A device call's pairs, reversed: after the stable sort a key's last pair
// comes first.
template <class K, class V>
__global__ void reverse_pairs_kernel(const K* keys, const V* values, uint64_t n, K* out_keys, V* out_values) {
  const uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out_keys[n - 1 - i] = keys[i];
  out_values[n - 1 - i] = values[i];
}
}  // namespace

template <class K, class V>
void Lsm<K, V>::build_device(const K* keys, const V* values, uint64_t n) {
  reset_contents();
  if (n == 0) return;
  for (int i = 0; i < 2; ++i) {
    pp_[i].keys.reserve_discard(n, "lsm build buffer");
    pp_[i].values.reserve_discard(n, "lsm build buffer");
  }
  reverse_pairs_kernel<K, V><<<blocks_for(n, 256), 256, 0, stream_>>>(keys, values, n, pp_[0].keys.data(),
                                                                     pp_[0].values.data());
  GPUDICT_CHECK_LAUNCH("lsm reverse_pairs_kernel");
  build_staged(n);
  GPUDICT_CUDA(cudaStreamSynchronize(stream_));
}

template <class K, class V>
void Lsm<K, V>::build_staged(uint64_t n) {
  cub::DoubleBuffer<K> dk(pp_[0].keys.data(), pp_[1].keys.data());
  cub::DoubleBuffer<V> dv(pp_[0].values.data(), pp_[1].values.data());
  auto sort = [&](void* p, size_t& bytes) {
    return cub::DeviceRadixSort::SortPairs(p, bytes, dk, dv, n, 0, static_cast<int>(8 * sizeof(K)), stream_);
  };
  // Selection out of the sorted pairs into the other pair of buffers.
  auto select = [&](void* p, size_t& bytes) {
    auto flags =
        thrust::make_transform_iterator(thrust::counting_iterator<uint64_t>(0), KeepFirst<K>{dk.Current()});
    auto in = thrust::make_zip_iterator(
        thrust::make_tuple(static_cast<const K*>(dk.Current()), static_cast<const V*>(dv.Current())));
    auto out = thrust::make_zip_iterator(thrust::make_tuple(dk.Alternate(), dv.Alternate()));
    return cub::DeviceSelect::Flagged(p, bytes, in, flags, out, d_counters_.data(), n, stream_);
  };
  temp_.prepare("cub::DeviceRadixSort::SortPairs (lsm build)", sort);
  temp_.prepare("cub::DeviceSelect::Flagged (lsm build)", select);
  timer_.start_settled(stream_);
  temp_.run("cub::DeviceRadixSort::SortPairs (lsm build)", sort);
  temp_.run("cub::DeviceSelect::Flagged (lsm build)", select);
  double ms = timer_.stop(stream_);
  copy_to_host(stream_, h_u64_.data(), d_counters_.data(), sizeof(unsigned long long));
  const uint64_t u = h_u64_[0];
  ms += place_sorted(dk.Alternate(), dv.Alternate(), u);
  known_live_ = u;
  pp_[0].release();
  pp_[1].release();
  add_time(ms);
}

template <class K, class V>
bool Lsm<K, V>::run_cleanup(double place_if_stale_over) {
  const bool check = place_if_stale_over >= 0;
  CleanupSource<K, V> src;  // rank order: most recent first
  CleanupIndex<K> index;
  uint64_t sizes[kMaxLevels];
  for (const auto& l : live_.at) {
    if (!l) continue;
    const int k = src.count++;
    index.ix[k] = l->kv.view().ix;
    src.keys[k] = l->kv.keys.data();
    src.values[k] = l->kv.values.data();
    src.status[k] = l->status.data();
    sizes[k] = l->n();
  }
  if (src.count == 0) {
    ++cleanups_;
    since_cleanup_ = 0;
    last_cleanup_stale_ = 0;
    stale_ = 0;
    stale_exact_ = true;
    known_live_ = 0;
    return true;
  }
  // Free the pooled storage first: the cleanup's peak is the old levels, the
  // new levels and the tile scratch. (A check keeps it until it decides to
  // place: most checks place nothing.)
  if (!check) pool_->clear();
  const uint64_t n = stored();
  const CleanupPlan plan = plan_cleanup<K, V>(sizes, src.count);
  cl_bounds_.reserve_discard(plan.bound_entries(), "lsm cleanup tile bounds");
  cl_kept_.reserve_discard(cleanup_kept_entries(plan), "lsm cleanup kept lists");
  tile_count_.reserve_discard(plan.tiles + 1, "lsm cleanup tile counts");
  tile_offset_.reserve_discard(plan.tiles + 1, "lsm cleanup tile offsets");
  // The scan runs over tiles + 1 counts (the last one 0) so that its last
  // output is the total.
  auto scan = [&](void* p, size_t& bytes) {
    return cub::DeviceScan::ExclusiveSum(p, bytes, tile_count_.data(), tile_offset_.data(), plan.tiles + 1, stream_);
  };
  temp_.prepare("cub::DeviceScan::ExclusiveSum (lsm cleanup)", scan);

  timer_.start_settled(stream_);
  trace_.mark(stream_, "start");
  cleanup_partition(index, plan, cl_bounds_.data(), stream_);
  trace_.mark(stream_, "partition");
  GPUDICT_CUDA(cudaMemsetAsync(tile_count_.data() + plan.tiles, 0, sizeof(uint64_t), stream_));
  cleanup_count(src, plan, cl_bounds_.data(), tile_count_.data(), cl_kept_.data(), stream_);
  trace_.mark(stream_, "count");
  temp_.run("cub::DeviceScan::ExclusiveSum (lsm cleanup)", scan);
  trace_.mark(stream_, "scan");
  double ms = timer_.stop(stream_);
  uint64_t u = 0;
  copy_to_host(stream_, &u, tile_offset_.data() + plan.tiles, sizeof(u));
  // The count pass counted the live keys exactly.
  stale_ = n - u;
  stale_exact_ = true;
  known_live_ = u;
  if (check && static_cast<double>(n - u) <= place_if_stale_over * static_cast<double>(n)) {
    ++stale_checks_;
    cl_kept_.release();
    trace_.flush("lsm stale check");
    add_cleanup_time(ms);
    return false;
  }
  ++cleanups_;
  since_cleanup_ = 0;
  last_cleanup_stale_ = n - u;
  if (check) pool_->clear();

  // The new levels (allocated outside the timed segments), then one pass
  // writes every kept record into its level with the level-1 fences, and the
  // fence levels above.
  LevelList fresh = acquire_levels_for(u);
  CleanupTargets<K, V> out;
  uint64_t off = 0;
  for (int i = 0; i < kMaxLevels; ++i) {
    if (!fresh.at[i]) continue;
    Level& l = *fresh.at[i];
    const int k = out.count++;
    out.start[k] = off;
    out.n[k] = l.n();
    out.keys[k] = l.kv.keys.data();
    out.values[k] = l.kv.values.data();
    out.status[k] = l.status.data();
    out.fences[k] = l.kv.fences.data();
    off += l.n();
  }
  timer_.start_settled(stream_);
  trace_.mark(stream_, "(host)");
  if (u > 0) {
    cleanup_place(src, plan, cl_bounds_.data(), tile_offset_.data(), cl_kept_.data(), out, u, stream_);
    trace_.mark(stream_, "place");
    build_fences(fresh, 1);
    trace_.mark(stream_, "fences");
  }
  ms += timer_.stop(stream_);
  trace_.flush("lsm cleanup");
  // The kept lists take about 4.5 B per stored record: freed at once
  // (device_bytes_needed counts them in the cleanup's peak only; the
  // timer's stop waited for the place pass).
  cl_kept_.release();
  replace_live(std::move(fresh));
  add_cleanup_time(ms);
  return true;
}

#define GPUDICT_LSM_BUILD(K, V)                                                  \
  template void Lsm<K, V>::build_fences(LevelList&, int);                       \
  template auto Lsm<K, V>::acquire_levels_for(uint64_t)->LevelList;             \
  template void Lsm<K, V>::replace_live(LevelList&&);                           \
  template double Lsm<K, V>::place_sorted(const K*, const V*, uint64_t);         \
  template void Lsm<K, V>::reset_contents();                                    \
  template void Lsm<K, V>::build_staged(uint64_t);                              \
  template void Lsm<K, V>::build_device(const K*, const V*, uint64_t);          \
  template bool Lsm<K, V>::run_cleanup(double);
GPUDICT_LSM_BUILD(uint32_t, uint32_t)
GPUDICT_LSM_BUILD(uint32_t, uint64_t)
GPUDICT_LSM_BUILD(uint64_t, uint64_t)
#undef GPUDICT_LSM_BUILD

}  // namespace gpudict::lsm
