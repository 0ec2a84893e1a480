// Lookups and successors.
//
// lookup(k): levels in rank order (most recent first); in each, i =
//   lower_bound(k); keys[i] == k: the key's most recent record (invariant 2)
//   decides: a tombstone -> not found, a regular record -> its value; stop.
//   Otherwise the next level. One launch of the multi-level search kernel.
// successor(k): the smallest live key > k.
//   1. (search kernel) per level i = upper_bound(k): candidate keys[i] (the
//      first record of that key in the level); c = the smallest candidate,
//      from the smallest rank that has it: that record is c's most recent
//      one. Regular: the answer is (c, its value). No candidate: not found.
//   2. c's most recent record is a tombstone (c is deleted): the query goes
//      to a list, and a second kernel walks on from c, one warp per listed
//      query, lane l owning level rank l: each lane keeps its level's next
//      key > c (upper_bound once, then stepping over segments); the warp
//      takes the minimum (redux), the lowest lane holding it decides
//      liveness; a deleted minimum advances every lane holding it. The walk
//      costs one step per deleted key it passes: a long run of deleted keys
//      (tombstones not yet cleaned up) is the worst case, and cleanup()
//      removes it.
#include <algorithm>
#include <cstdint>
#include <string>

#include "core/common/cuda_check.hpp"
#include "core/common/errors.hpp"
#include "core/common/width_copy.cuh"
#include "core/common/grid.cuh"
#include "core/common/warp.cuh"
#include "core/lsm/detail/level_filter.cuh"
#include "core/lsm/detail/lsm_impl.cuh"
#include "core/lsm/detail/multilevel_search.cuh"

namespace gpudict::lsm {

namespace {

template <class K, class V>
struct LookupOp {
  using Key = K;
  using Value = V;
  static constexpr int kSearches = 1;
  static constexpr bool kUpper0 = false, kUpper1 = false, kStopWhenDone = true;
  static constexpr bool kFilter = true;  // exact match: levels' lookup filters apply
  const K* in;
  uint8_t* found;
  V* value;
  struct State {
    bool done;
    bool found;
    V value;
  };
  __device__ __forceinline__ void setup(uint32_t i, State& st, K (&q)[1]) const {
    q[0] = in[i];
    st.done = false;
    st.found = false;
    st.value = 0;
  }
  __device__ __forceinline__ bool wants(const State& st, int) const { return !st.done; }
  __device__ __forceinline__ void level(const LevelView<K, V>& L, int, uint32_t, State& st, const K (&q)[1],
                                        const uint32_t (&pos)[1], const bool (&searched)[1]) const {
    if (!searched[0]) return;
    const uint32_t p = pos[0];
    if (p < L.n && __ldg(L.ix.level[0] + p) == q[0]) {
      st.done = true;
      st.found = (__ldg(L.status + p) & kTombstone) == 0;
      if (st.found) st.value = __ldg(L.values + p);
    }
  }
  __device__ __forceinline__ void finish(const LsmView<K, V>&, uint32_t i, const State& st) const {
    found[i] = st.found ? 1 : 0;
    value[i] = st.value;
  }
};

template <class K, class V>
struct SuccessorOp {
  using Key = K;
  using Value = V;
  static constexpr int kSearches = 1;
  static constexpr bool kUpper0 = true, kUpper1 = true, kStopWhenDone = false;
  static constexpr bool kFilter = false;
  const K* in;
  uint8_t* found;
  K* key;
  V* value;
  uint32_t* slow_item;
  K* slow_key;
  unsigned long long* slow_count;
  struct State {
    K best;         // smallest candidate so far
    uint32_t pos;   // its position in level `rank`
    int rank;       // -1: none yet
  };
  __device__ __forceinline__ void setup(uint32_t i, State& st, K (&q)[1]) const {
    q[0] = in[i];
    st.best = 0;
    st.pos = 0;
    st.rank = -1;
  }
  __device__ __forceinline__ bool wants(const State&, int) const { return true; }
  __device__ __forceinline__ void level(const LevelView<K, V>& L, int rank, uint32_t, State& st, const K (&)[1],
                                        const uint32_t (&pos)[1], const bool (&searched)[1]) const {
    if (!searched[0]) return;
    const uint32_t p = pos[0];
    if (p >= L.n) return;
    const K k = __ldg(L.ix.level[0] + p);
    if (st.rank < 0 || k < st.best) {  // strictly smaller: equal keys keep the more recent rank
      st.best = k;
      st.pos = p;
      st.rank = rank;
    }
  }
  __device__ __forceinline__ void finish(const LsmView<K, V>& v, uint32_t i, const State& st) const {
    if (st.rank < 0) {
      found[i] = 0;
      key[i] = 0;
      value[i] = 0;
      return;
    }
    const LevelView<K, V>& L = v.lv[st.rank];
    if ((__ldg(L.status + st.pos) & kTombstone) == 0) {
      found[i] = 1;
      key[i] = st.best;
      value[i] = __ldg(L.values + st.pos);
      return;
    }
    const unsigned long long slot = atomicAdd(slow_count, 1ull);
    slow_item[slot] = i;
    slow_key[slot] = st.best;
  }
};

constexpr int kWalkThreads = 256;

// The smallest k of the warp's lanes (every lane passes one). 64-bit keys:
// the minimum of the high halves, then of the low halves of the lanes that
// hold it (the warp reduction instruction takes 32 bits).
__device__ __forceinline__ uint32_t warp_min_key(uint32_t k) { return __reduce_min_sync(kFullMask, k); }
__device__ __forceinline__ uint64_t warp_min_key(uint64_t k) {
  const uint32_t hi = static_cast<uint32_t>(k >> 32);
  const uint32_t mhi = __reduce_min_sync(kFullMask, hi);
  const uint32_t lo = hi == mhi ? static_cast<uint32_t>(k) : 0xFFFFFFFFu;
  return (static_cast<uint64_t>(mhi) << 32) | __reduce_min_sync(kFullMask, lo);
}

// One warp per listed query: the smallest live key > slow_key (docs above).
template <class K, class V>
__global__ void __launch_bounds__(kWalkThreads)
    successor_walk_kernel(const __grid_constant__ LsmView<K, V> v, const uint32_t* __restrict__ slow_item,
                          const K* __restrict__ slow_key, const unsigned long long* __restrict__ slow_count,
                          uint8_t* __restrict__ found, K* __restrict__ out_key, V* __restrict__ out_value) {
  const unsigned lane = lane_id();
  const uint64_t count = *slow_count;
  const uint64_t warps = static_cast<uint64_t>(gridDim.x) * warps_per_block();
  const bool mine = static_cast<int>(lane) < v.count;
  const K* keys = mine ? v.lv[lane].ix.level[0] : nullptr;
  const uint32_t n = mine ? v.lv[lane].n : 0u;
  for (uint64_t w = static_cast<uint64_t>(blockIdx.x) * warps_per_block() + warp_in_block(); w < count;
       w += warps) {
    const uint32_t item = slow_item[w];
    const K from = slow_key[w];
    // A plain binary search: through the fence index (sa::count_before_indexed)
    // successors ran slower (measured on levels with deletes).
    uint32_t p = mine ? sa::count_before(keys, n, from, true) : 0u;
    bool has = p < n;
    K k = has ? keys[p] : K(0);
    bool hit = false;
    K rk = 0;
    V rv = 0;
    while (true) {
      if (__ballot_sync(kFullMask, has) == 0) break;  // no key > from is left anywhere
      // Lanes without a key offer the largest key: some lane has one, and its
      // key is <= that, so the minimum is a held key (ties go to a holder).
      const K m = warp_min_key(has ? k : key_max<K>);
      const bool holds = has && k == m;
      const unsigned eq = __ballot_sync(kFullMask, holds);  // not empty: some lane with a key holds the minimum
      const int owner = __ffs(eq) - 1;                        // the most recent level holding m
      int live = 0;
      if (static_cast<int>(lane) == owner) live = (v.lv[lane].status[p] & kTombstone) == 0;
      live = __shfl_sync(kFullMask, live, owner);
      if (live) {
        if (static_cast<int>(lane) == owner) {
          hit = true;
          rk = m;
          rv = v.lv[lane].values[p];
        }
        break;
      }
      if (holds) {  // step over m's segment in this level
        do {
          ++p;
        } while (p < n && keys[p] == m);
        has = p < n;
        k = has ? keys[p] : K(0);
      }
    }
    const unsigned hits = __ballot_sync(kFullMask, hit);
    if (hits ? hit : lane == 0) {
      found[item] = hit ? 1 : 0;
      out_key[item] = rk;
      out_value[item] = rv;
    }
  }
}

}  // namespace

template <class K, class V>
auto Lsm<K, V>::levels_without_filter(const LevelList& list) -> std::vector<Level*> {
  std::vector<Level*> todo;
  if (!opt_.lookup_filter) return todo;
  for (int i = 0; i < kMaxLevels; ++i) {
    if (!wants_lookup_filter(list, i) || list.at[i]->filter_ready) continue;
    Level& l = *list.at[i];
    // Allocation failure ends the run like any other (exit 3): the bound
    // (device_bytes_needed) counts the filters.
    l.filter.reserve_discard(filter_words(l.kv.layout), "lsm level lookup filter");
    todo.push_back(&l);
  }
  return todo;
}

template <class K, class V>
void Lsm<K, V>::lookup_staged(const K* keys, uint64_t q, const LevelList& list) {
  q_found_.reserve_discard(q, "lsm lookup results");
  q_value_out_.reserve_discard(q, "lsm lookup results");
  const std::vector<Level*> unfiltered = levels_without_filter(list);
  timer_.start(stream_);
  // The filters this batch needs are built in its time: a lookup batch pays
  // for the levels written since the last one (every filter is built once
  // per level, levels are immutable).
  if (!unfiltered.empty()) {
    std::vector<FilterBuild<K>> jobs;
    for (Level* l : unfiltered) {
      jobs.push_back({l->kv.keys.data(), l->filter.data(), l->n(), filter_segment_shift(l->kv.layout)});
      l->filter_ready = true;  // stream order: built before the search below reads it
    }
    build_level_filters(jobs.data(), static_cast<int>(jobs.size()), stream_);
  }
  const LsmView v = make_view(list);  // with the filters wanted and built
  launch_multilevel(v, LookupOp<K, V>{keys, q_found_.data(), q_value_out_.data()}, q, stream_,
                    "multilevel_search_kernel<Lookup>");
  add_time(timer_.stop(stream_));
}

template <class K, class V>
void Lsm<K, V>::successor_staged(const K* keys, uint64_t q, const LsmView& v) {
  q_found_.reserve_discard(q, "lsm successor results");
  q_key_out_.reserve_discard(q, "lsm successor results");
  q_value_out_.reserve_discard(q, "lsm successor results");
  q_slow_item_.reserve_discard(q, "lsm successor walk list");
  q_slow_key_.reserve_discard(q, "lsm successor walk list");
  unsigned long long* d_slow = d_counters_.data() + 3;
  const SuccessorOp<K, V> op{keys, q_found_.data(), q_key_out_.data(), q_value_out_.data(), q_slow_item_.data(),
                             q_slow_key_.data(), d_slow};
  const unsigned walk_grid = static_cast<unsigned>(std::min<uint64_t>(
      static_cast<uint64_t>(resident_blocks(successor_walk_kernel<K, V>, kWalkThreads, 0)),
      div_up(q, kWalkThreads / kWarpSize)));
  timer_.start(stream_);
  GPUDICT_CUDA(cudaMemsetAsync(d_slow, 0, sizeof(unsigned long long), stream_));
  launch_multilevel(v, op, q, stream_, "multilevel_search_kernel<Successor>");
  successor_walk_kernel<K, V><<<walk_grid, kWalkThreads, 0, stream_>>>(v, q_slow_item_.data(), q_slow_key_.data(), d_slow,
                                                                 q_found_.data(), q_key_out_.data(),
                                                                 q_value_out_.data());
  GPUDICT_CHECK_LAUNCH("successor_walk_kernel");
  add_time(timer_.stop(stream_));
}

template <class K, class V>
void Lsm<K, V>::find_device(const K* keys, uint64_t n, V* values_out, bool* found_out, const std::string& snapshot) {
  if (n == 0) return;
  if (values_out) GPUDICT_CUDA(cudaMemsetAsync(values_out, 0, n * sizeof(V), stream_));
  if (found_out) GPUDICT_CUDA(cudaMemsetAsync(found_out, 0, n * sizeof(bool), stream_));
  const LevelList& list = levels(snapshot);
  if (list.occupied() != 0) {
    lookup_staged(keys, n, list);
    if (values_out) narrow_copy<V>(q_value_out_.data(), q_found_.data(), values_out, sizeof(V), n, stream_);
    flags_to_bool(q_found_.data(), found_out, n, stream_);
  }
  GPUDICT_CUDA(cudaStreamSynchronize(stream_));
}

template <class K, class V>
void Lsm<K, V>::successor_device(const K* keys, uint64_t n, K* keys_out, V* values_out, bool* found_out,
                                 const std::string& snapshot) {
  if (n == 0) return;
  if (keys_out) GPUDICT_CUDA(cudaMemsetAsync(keys_out, 0, n * sizeof(K), stream_));
  if (values_out) GPUDICT_CUDA(cudaMemsetAsync(values_out, 0, n * sizeof(V), stream_));
  if (found_out) GPUDICT_CUDA(cudaMemsetAsync(found_out, 0, n * sizeof(bool), stream_));
  const LsmView v = make_view(levels(snapshot));
  if (v.count != 0) {
    successor_staged(keys, n, v);
    if (keys_out) narrow_copy<K>(q_key_out_.data(), q_found_.data(), keys_out, sizeof(K), n, stream_);
    if (values_out) narrow_copy<V>(q_value_out_.data(), q_found_.data(), values_out, sizeof(V), n, stream_);
    flags_to_bool(q_found_.data(), found_out, n, stream_);
  }
  GPUDICT_CUDA(cudaStreamSynchronize(stream_));
}

template <class K, class V>
auto Lsm<K, V>::device_view(const std::string& snapshot) -> const LsmView* {
  const LsmView v = make_view(levels(snapshot));
  DeviceBuffer<LsmView>& d = d_views_[snapshot];
  if (d.capacity() == 0) d = DeviceBuffer<LsmView>(1, "lsm ref view");
  GPUDICT_CUDA(cudaMemcpyAsync(d.data(), &v, sizeof v, cudaMemcpyHostToDevice, stream_));
  GPUDICT_CUDA(cudaStreamSynchronize(stream_));
  return d.data();
}

#define GPUDICT_LSM_POINT(K, V)                                                                                   \
  template auto Lsm<K, V>::levels_without_filter(const LevelList&)->std::vector<Level*>;                          \
  template void Lsm<K, V>::lookup_staged(const K*, uint64_t, const LevelList&);                                  \
  template void Lsm<K, V>::successor_staged(const K*, uint64_t, const LsmView&);                                 \
  template void Lsm<K, V>::find_device(const K*, uint64_t, V*, bool*, const std::string&);                      \
  template void Lsm<K, V>::successor_device(const K*, uint64_t, K*, V*, bool*, const std::string&);            \
  template auto Lsm<K, V>::device_view(const std::string&)->const LsmView*;
GPUDICT_LSM_POINT(uint32_t, uint32_t)
GPUDICT_LSM_POINT(uint32_t, uint64_t)
GPUDICT_LSM_POINT(uint64_t, uint64_t)
#undef GPUDICT_LSM_POINT

}  // namespace gpudict::lsm
