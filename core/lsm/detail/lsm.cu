// The GPU LSM: validate(Options), construction, the cleanup policy,
// snapshots, stats and the memory bound. The heavy parts live in update.cu,
// build_cleanup.cu, point_queries.cu, range_queries.cu and merge.cu.

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <string>

#include "core/common/cuda_check.hpp"
#include "core/common/errors.hpp"
#include "core/common/key_traits.hpp"
#include "core/lsm/detail/cleanup_tiles.cuh"
#include "core/lsm/detail/level_filter.cuh"
#include "core/lsm/detail/lsm_impl.cuh"

namespace gpudict {

namespace lsm {

void validate(const Options& o) {
  const uint64_t b = o.batch_size;
  if (b == 0 || (b & (b - 1)) != 0 || b > kMaxBatchSize)
    throw InputError("lsm options: batch_size " + std::to_string(b) + " is not a power of two between 1 and 2^30");
  if (!std::isfinite(o.stale_fraction) || o.stale_fraction < 0.0)
    throw InputError("lsm options: stale_fraction " + std::to_string(o.stale_fraction) + " is not a fraction >= 0");
}

template <class K, class V>
int Lsm<K, V>::use_device(int device) {
  GPUDICT_CUDA(cudaSetDevice(device));
  return device;
}

template <class K, class V>
Lsm<K, V>::Lsm(int device, const Options& options)
    : device_(use_device(device)),
      opt_(options),
      b_(options.batch_size),
      pool_(std::make_shared<LevelPool>(options.batch_size)) {
  GPUDICT_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  d_counters_ = DeviceBuffer<unsigned long long>(8, "lsm counters");
  d_status_ptrs_ = DeviceBuffer<const uint8_t*>(kMaxLevels, "lsm level table");
  h_u64_.reserve_discard(8);
}

template <class K, class V>
Lsm<K, V>::~Lsm() {
  if (stream_) cudaStreamSynchronize(stream_);
  snapshots_.clear();
  live_ = LevelList{};
  dropped_.clear();
  pool_->clear();
  if (stream_) cudaStreamDestroy(stream_);
}


template <class K, class V>
void Lsm<K, V>::release_dropped() {
  if (dropped_.empty()) return;
  GPUDICT_CUDA(cudaStreamSynchronize(stream_));
  dropped_.clear();
}

template <class K, class V>
uint64_t Lsm<K, V>::device_bytes_needed(const capacity_bounds& wb) const {
  // Every insert may be stored (replaced elements stay until a cleanup), so
  // the uncapped count, not the live keys' bound.
  const uint64_t R = wb.max_inserted, B = wb.max_batch, Q = wb.max_queries, S = wb.max_snapshots;
  // Stored elements: resident pairs plus one batch of tombstones, in whole
  // LSM batches (tombstones of earlier batches are not in the bounds). The
  // levels' room is below twice the stored elements plus b (every level
  // k >= 1 is more than half full: docs/lsm.md, "Room").
  const uint64_t stored_max = round_up(std::max<uint64_t>(R + B, 1), b_);
  const uint64_t room_max = 2 * stored_max + b_;
  uint64_t top = b_;
  while (top * 2 <= room_max) top *= 2;  // the largest level
  // A level's storage, with its lookup filter when lookups build them (at
  // most 1 B per key; bounded as if every level had one).
  const bool filters = opt_.lookup_filter && Q > 0;
  auto storage = [&](uint64_t n) {
    return level_bytes<K, V>(n) + (filters ? filter_words(level_layout(n)) * sizeof(uint32_t) : 0);
  };
  const uint64_t per = storage(room_max);
  // Live levels + pool (at most one free storage per index: < 2 x the largest
  // level) + merge ping-pong (2 x half the largest level) + the chunk.
  const uint64_t levels = per + 2 * storage(top) + level_bytes<K, V>(top) + level_bytes<K, V>(b_);
  // Build and cleanup empty the pool first. Build: the old levels are
  // dropped first; two sort buffers (key, value) of every pair and the new
  // levels. Cleanup: the old and the new levels (<= the old ones) and the
  // tile scratch, at most that of every level index up to the largest one
  // (more levels, smaller tiles). Occupied levels are at most
  // log2(stored / b) + 1.
  int max_levels = 1;
  while ((b_ << max_levels) <= room_max && max_levels < kMaxLevels) ++max_levels;
  uint64_t level_sizes[kMaxLevels];
  for (int i = 0; i < max_levels; ++i) level_sizes[i] = b_ << i;
  const CleanupPlan cleanup_plan = plan_cleanup<K, V>(level_sizes, max_levels);
  // A stale check (maybe_cleanup) keeps the pool during its count pass.
  const uint64_t rebuild = std::max({2 * stored_max * (sizeof(K) + sizeof(V)) + per,
                                     per + per + cleanup_scratch_bytes(cleanup_plan),
                                     levels + cleanup_scratch_bytes(cleanup_plan)});
  // Update scratch: sort buffers (key, payload) x 2, unique keys and payloads.
  // Values by update index.
  const uint64_t update = B * (2 * sizeof(K) + 2 * 4 + sizeof(V) + sizeof(K) + 4);
  // Queries: outputs (the inputs are the caller's), successor walk lists, count/range bounds for
  // a block of up to 2^20 queries over up to 32 levels (occupied levels are
  // at most max_levels), and a nominal candidate buffer: candidates
  // depend on the data (every stored record in [lo, hi] of every level), so
  // they are allocated per round as large as they come (36 B each for
  // ranges of u32/u32, rounds of up to 2^24 candidates unless one query has
  // more; u64 keys add a sorted tag of 8 B, wider keys and values take more).
  const uint64_t qb = std::min<uint64_t>(Q, 1ull << 20);
  const uint64_t cand = 2 * 8 + 2 * 4 + 4 + sizeof(K) + sizeof(V) + (sizeof(K) > 4 ? 2 * 8 : 0);
  const uint64_t queries = Q * (1 + sizeof(K) + sizeof(V) + 4 + sizeof(K) + 16 + 8) +  // + range_device's sizes
                           qb * max_levels * 12 + (Q ? cand * std::min<uint64_t>(1ull << 24, 16 * Q) : 0);
  // CUB temporary storage: the largest of the calls, asked from CUB.
  uint64_t cub = 0;
  {
    size_t bytes = 0;
    cub::DoubleBuffer<K> dk(nullptr, nullptr);
    cub::DoubleBuffer<uint32_t> dp(nullptr, nullptr);
    cub::DoubleBuffer<V> dv(nullptr, nullptr);
    cub::DoubleBuffer<uint64_t> dc(nullptr, nullptr);
    cub::DoubleBuffer<uint32_t> dpos(nullptr, nullptr);
    auto take = [&](cudaError_t e) {
      if (e == cudaSuccess) cub = std::max<uint64_t>(cub, bytes);
      bytes = 0;
    };
    take(cub::DeviceRadixSort::SortPairs(nullptr, bytes, dk, dp, std::max<uint64_t>(B, 1), 0, 8 * sizeof(K)));
    take(cub::DeviceRadixSort::SortPairs(nullptr, bytes, dk, dv, stored_max, 0, 8 * sizeof(K)));
    take(cub::DeviceRadixSort::SortPairs(nullptr, bytes, dc, dpos, 1ull << 24, 0, 64));
    take(cub::DeviceScan::ExclusiveSum(nullptr, bytes, static_cast<uint64_t*>(nullptr),
                                       static_cast<uint64_t*>(nullptr), qb * max_levels + 1));
    take(cub::DeviceScan::ExclusiveSum(nullptr, bytes, static_cast<uint64_t*>(nullptr),
                                       static_cast<uint64_t*>(nullptr), cleanup_plan.tiles + 1));
    take(cub::DeviceSelect::Flagged(nullptr, bytes, static_cast<const K*>(nullptr),
                                    static_cast<const bool*>(nullptr), static_cast<K*>(nullptr),
                                    static_cast<unsigned long long*>(nullptr), stored_max));
    cudaGetLastError();
    cub += cub / 4 + 4096;
  }
  // Snapshots: worst case, each holds a full copy of the levels.
  const uint64_t snaps = S * per;
  return std::max(levels, rebuild) + update + queries + cub + snaps + 8 * sizeof(unsigned long long);
}

template <class K, class V>
void Lsm<K, V>::maybe_cleanup() {
  ++since_cleanup_;
  bool due = opt_.cleanup_every != 0 && since_cleanup_ >= opt_.cleanup_every;
  // Stale share over x. A cleanup keeps only the live records, so it always
  // shrinks the structure then; each one reads at most stale / x records,
  // so the cleanups cost O(1 / x) per stale record created.
  const double x = opt_.stale_fraction;
  if (!due && x > 0 && stale_ > 0) due = static_cast<double>(stale_) > x * static_cast<double>(stored());
  if (due) {
    run_cleanup();
    ++auto_cleanups_;
    return;
  }
  // The levels' counts miss records shadowed by a newer level until their
  // levels merge (the largest merges rarely), so a rewrite of every key can
  // leave most of the stored elements stale, uncounted. The live keys were
  // known_live_ at the last build, cleanup or check; once the stored
  // elements exceed known_live_ / (1 - x) + b, more than x of them may be
  // stale: a check counts them exactly (the cleanup's count pass) and
  // cleans up only if they are. Growth alone makes a check each time the
  // stored elements double (for x = 1/2): one count pass, 5 B per record.
  if (x > 0 && x < 1 && !stale_exact_ &&
      static_cast<double>(stored()) * (1.0 - x) > static_cast<double>(known_live_) + (1.0 - x) * static_cast<double>(b_)) {
    if (run_cleanup(x)) ++auto_cleanups_;
  }
}

template <class K, class V>
void Lsm<K, V>::cleanup() { run_cleanup(); }

template <class K, class V>
uint64_t Lsm<K, V>::levels_stale() const {
  uint64_t s = 0;
  for (const auto& l : live_.at) s += l ? l->local_stale : 0;
  return s;
}

template <class K, class V>
auto Lsm<K, V>::levels(const std::string& snapshot) const -> const LevelList& {
  if (snapshot.empty()) return live_;
  auto it = snapshots_.find(snapshot);
  if (it == snapshots_.end()) throw InputError("unknown snapshot '" + snapshot + "'");
  return it->second;
}

template <class K, class V>
void Lsm<K, V>::snapshot(const std::string& name) {
  if (snapshots_.count(name)) throw InputError("snapshot '" + name + "' already exists");
  snapshots_.emplace(name, live_);  // copies the level references: no device work
}

template <class K, class V>
void Lsm<K, V>::drop_snapshot(const std::string& name) {
  auto it = snapshots_.find(name);
  if (it == snapshots_.end()) throw InputError("unknown snapshot '" + name + "'");
  GPUDICT_CUDA(cudaStreamSynchronize(stream_));
  snapshots_.erase(it);
  d_views_.erase(name);
}

template <class K, class V>
uint64_t Lsm<K, V>::scratch_bytes() const {
  uint64_t s = temp_.bytes() + d_counters_.bytes() + d_level_stale_.bytes() + uniq_keys_.bytes() + uniq_payload_.bytes() + upd_values_.bytes() + chunk_.bytes() +
               cl_bounds_.bytes() + cl_kept_.bytes() + tile_count_.bytes() + tile_offset_.bytes() + q_found_.bytes() + q_key_out_.bytes() +
               q_value_out_.bytes() + q_slow_item_.bytes() + q_slow_key_.bytes() + q_bounds_.bytes() +
               q_first_.bytes() + q_starts_.bytes() + cand_scan_.bytes() + d_status_ptrs_.bytes() + cand_tiles_.bytes() + q_size_out_.bytes() +
               q_offset_out_.bytes() + range_sizes_.bytes() + range_keys_.bytes() + range_values_.bytes();
  for (int i = 0; i < 2; ++i)
    s += upd_keys_[i].bytes() + upd_payload_[i].bytes() + pp_[i].bytes() + cand_comp_[i].bytes() +
         cand_pos_[i].bytes() + cand_tag_[i].bytes();
  for (const auto& kv : d_views_) s += kv.second.bytes();
  return s;
}

template <class K, class V>
lsm_stats Lsm<K, V>::stats() const {
  lsm_stats s;
  s.stored = stored();
  s.stale = stale_;
  s.stale_exact = stale_exact_;
  s.size = stale_exact_ ? s.stored - stale_ : s.stored;
  std::set<const Level*> live_set;
  uint64_t live_bytes = 0;
  for (int i = 0; i < kMaxLevels; ++i)
    if (const auto& l = live_.at[i]) {
      live_set.insert(l.get());
      live_bytes += l->bytes();
      s.level_mask |= 1ull << i;
    }
  std::set<const Level*> snap_set;
  for (const auto& kv : snapshots_)
    for (const auto& l : kv.second.at)
      if (l && !live_set.count(l.get()) && snap_set.insert(l.get()).second) s.snapshot_bytes += l->bytes();
  s.batches = live_.r;
  s.update_chunks = chunks_;
  s.resolved = resolved_;
  s.cleanups = cleanups_;
  s.auto_cleanups = auto_cleanups_;
  s.last_cleanup_stale = last_cleanup_stale_;
  s.stale_checks = stale_checks_;
  s.snapshots = snapshots_.size();
  s.pool_bytes = pool_->bytes();
  s.scratch_bytes = scratch_bytes();
  s.device_bytes = live_bytes + s.snapshot_bytes + s.pool_bytes + s.scratch_bytes;
  return s;
}

template class Lsm<uint32_t, uint32_t>;
template class Lsm<uint32_t, uint64_t>;
template class Lsm<uint64_t, uint64_t>;

}  // namespace lsm
}  // namespace gpudict
