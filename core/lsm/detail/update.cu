// An update call's inserts and deletes, as one batch.
//
//  1. copy the updates as keys, values and a u32 payload per update
//     payload = is_delete << 31 | update index (the value stays behind in
//     `values`, gathered by index later: sorting 8-byte pairs instead of
//     12-byte ones is the cheaper sort; at every width the sort moves the
//     key and a 4-byte payload);
//  2. stable radix sort of (key, payload), then one reduce-by-key with
//        (a, b) -> (a.delete | b.delete) << 31 | max(a.index, b.index)
//     (associative and commutative): one entry per key, a tombstone if the
//     batch deletes the key anywhere, else the key's last insert in batch
//     order (III-A, made deterministic). The result is sorted with unique
//     keys; the host reads their number u;
//  3. cut it into chunks of at most b; each chunk is one LSM batch (keys are
//     unique across chunks, so their order does not matter). Nothing pads a
//     chunk: a level holds only the elements written to it, so a batch of k
//     keys writes k elements and no query ever sees an element the batch did
//     not ask for;
//  4. insert chunk by chunk:
//     - level 0 absorbs the chunk when its elements and the chunk's fit in b:
//       the chunk merges with it into a new level 0 (the counter r stays);
//     - otherwise r -> r + 1 is a binary increment: with levels 0..k-1
//       occupied and k empty, the chunk merges down through them (each merge
//       stable, the newer run first) and the result becomes level k. It fits:
//       the chunk holds at most b and level j at most b 2^j elements.
//     A carry happens only when level 0 could not take the chunk, so every
//     level k >= 1 holds more than half its room and the levels' room r b
//     stays below twice the stored elements plus b (docs/lsm.md, "Room").
//     A chunk has unique keys, so "tombstones before regular elements of the
//     same batch" (invariant 3) holds trivially; stability gives 1-2.
//
// The kernel that writes a level also counts its local stale records
// (Level::local_stale): the chunk's tombstones, or in the last merge the
// records equal to their predecessor or tombstones.
//
// Everything a group of up to 32 chunks needs (the new levels, the ping-pong
// buffers) is allocated before its timed segment; the levels merged away are
// released after the stream is synchronised.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "core/common/cuda_check.hpp"
#include "core/common/errors.hpp"
#include "core/common/grid.cuh"
#include "core/common/warp.cuh"
#include "core/lsm/detail/lsm_impl.cuh"
#include "core/lsm/detail/merge.cuh"
#include "core/lsm/detail/multilevel_search.cuh"

namespace gpudict::lsm {

namespace {

constexpr uint32_t kDeleteBit = 1u << 31;
constexpr uint64_t kMaxUpdates = 1ull << 31;  // the update index has 31 bits
constexpr uint64_t kChunkGroup = 32;          // chunks per timed segment

struct ResolveOp {
  __host__ __device__ uint32_t operator()(uint32_t a, uint32_t b) const {
    const uint32_t ia = a & ~kDeleteBit, ib = b & ~kDeleteBit;
    return ((a | b) & kDeleteBit) | (ia > ib ? ia : ib);
  }
};

// The chunk of resolved entries [first, first + cnt) in level format.
// Counts its tombstones into `tombstones` (the batch's) and, when the chunk
// is a level as it stands, into that level's local stale count.
constexpr int kExpandThreads = 256;

template <class K, class V>
__global__ void __launch_bounds__(kExpandThreads)
    expand_chunk_kernel(const K* __restrict__ keys, const uint32_t* __restrict__ payload,
                        const V* __restrict__ values, uint64_t first, uint64_t cnt,
                        K* __restrict__ out_keys, V* __restrict__ out_values,
                        uint8_t* __restrict__ out_status, unsigned long long* __restrict__ tombstones,
                        unsigned long long* __restrict__ level_stale) {
  unsigned long long c = 0;
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < cnt; i += stride) {
    const uint64_t s = first + i;
    const uint32_t p = payload[s];
    const bool del = (p & kDeleteBit) != 0;
    out_keys[i] = keys[s];
    out_values[i] = del ? V(0) : values[p & ~kDeleteBit];
    out_status[i] = del ? kTombstone : uint8_t{0};
    c += del ? 1 : 0;
  }
  block_add_to(tombstones, c);
  if (level_stale) block_add_to(level_stale, c);  // kernel-uniform
}

// Whether each resolved key has a live record before the batch (exact stale
// counting): a lookup that counts the live ones.
template <class K, class V>
struct PresenceOp {
  using Key = K;
  using Value = V;
  static constexpr int kSearches = 1;
  static constexpr bool kUpper0 = false, kUpper1 = false, kStopWhenDone = true;
  static constexpr bool kFilter = false;
  const K* keys;
  unsigned long long* live;
  const unsigned long long* count;  // resolved keys (items beyond it search nothing)
  struct State {
    bool done;
    bool live;
  };
  __device__ __forceinline__ void setup(uint32_t i, State& st, K (&q)[1]) const {
    st.done = i >= *count;
    q[0] = st.done ? K(0) : keys[i];
    st.live = false;
  }
  __device__ __forceinline__ bool wants(const State& st, int) const { return !st.done; }
  __device__ __forceinline__ void level(const LevelView<K, V>& L, int, uint32_t, State& st, const K (&q)[1],
                                        const uint32_t (&pos)[1], const bool (&searched)[1]) const {
    if (!searched[0]) return;
    const uint32_t p = pos[0];
    if (p < L.n && __ldg(L.ix.level[0] + p) == q[0]) {
      st.done = true;
      st.live = (__ldg(L.status + p) & kTombstone) == 0;
    }
  }
  __device__ __forceinline__ void finish(const LsmView<K, V>&, uint32_t, const State& st) const {
    const unsigned m = __activemask();
    const unsigned votes = __ballot_sync(m, st.live);
    if (votes != 0 && lane_id() == static_cast<unsigned>(__ffs(m) - 1))
      atomicAdd(live, static_cast<unsigned long long>(__popc(votes)));
  }
};

}  // namespace

namespace {

// Where one chunk goes: level `target`, absorbed into level 0 (r unchanged)
// or by a carry through levels 0..target-1 (r + 1); `size` is the level's
// element count afterwards.
struct ChunkPlan {
  uint64_t first = 0, cnt = 0;
  int target = 0;
  bool absorb = false;
  uint64_t size = 0;
};

}  // namespace

template <class K, class V>
void Lsm<K, V>::reserve_update(uint64_t m) {
  if (m >= kMaxUpdates) throw RuntimeFailure("lsm: at most 2^31 - 1 updates in one batch (got " + std::to_string(m) + ")");
  for (int i = 0; i < 2; ++i) {
    upd_keys_[i].reserve_discard(m, "lsm update keys");
    upd_payload_[i].reserve_discard(m, "lsm update payload");
  }
  upd_values_.reserve_discard(m, "lsm update values");
  uniq_keys_.reserve_discard(m, "lsm resolved keys");
  uniq_payload_.reserve_discard(m, "lsm resolved payload");
}

namespace {
// A device call's updates as the resolve takes them: keys, (delete bit |
// index) payloads, values by index; erase[j] (or, when erase is null,
// !insert) marks a delete.
template <class K, class V>
__global__ void stage_updates_kernel(const K* in_keys, const V* in_values, const bool* erase, bool all_insert,
                                     uint64_t m, K* keys, uint32_t* payload, V* values) {
  const uint64_t j = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= m) return;
  const bool insert = erase ? !erase[j] : all_insert;
  keys[j] = in_keys[j];
  payload[j] = (insert ? 0u : kDeleteBit) | static_cast<uint32_t>(j);
  values[j] = insert && in_values ? in_values[j] : V(0);
}
}  // namespace

template <class K, class V>
void Lsm<K, V>::update_device(const K* keys, const V* values, const bool* erase, uint64_t m, bool insert) {
  if (m == 0) return;
  if (m >= kMaxUpdates) throw InputError("lsm_map: at most 2^31 - 1 updates in one call");
  reserve_update(m);
  stage_updates_kernel<K, V><<<blocks_for(m, 256), 256, 0, stream_>>>(
      keys, values, erase, insert, m, upd_keys_[0].data(), upd_payload_[0].data(), upd_values_.data());
  GPUDICT_CHECK_LAUNCH("lsm stage_updates_kernel");
  update_staged(m);
  maybe_cleanup();
  GPUDICT_CUDA(cudaStreamSynchronize(stream_));
}

template <class K, class V>
void Lsm<K, V>::update_staged(uint64_t m) {
  // d_counters_: resolved keys, keys live before the batch, tombstones.
  unsigned long long* d_runs = d_counters_.data();
  unsigned long long* d_live = d_counters_.data() + 1;
  unsigned long long* d_tombs = d_counters_.data() + 2;
  // The resolve - the stable sort of (key, delete|index) and the
  // reduce-by-key - as one CUDA graph (a dozen small stream operations:
  // core/common/graph_cache.hpp), captured here, outside the timed segment.
  cub::DoubleBuffer<K> dk(upd_keys_[0].data(), upd_keys_[1].data());
  cub::DoubleBuffer<uint32_t> dp(upd_payload_[0].data(), upd_payload_[1].data());
  auto sort = [&](void* p, size_t& bytes) {
    return cub::DeviceRadixSort::SortPairs(p, bytes, dk, dp, m, 0, static_cast<int>(8 * sizeof(K)), stream_);
  };
  auto reduce = [&](void* p, size_t& bytes) {
    return cub::DeviceReduce::ReduceByKey(p, bytes, dk.Current(), uniq_keys_.data(), dp.Current(),
                                          uniq_payload_.data(), d_runs, ResolveOp{}, m, stream_);
  };
  temp_.prepare("cub::DeviceRadixSort::SortPairs (lsm update batch)", sort);
  temp_.prepare("cub::DeviceReduce::ReduceByKey (lsm update batch)", reduce);
  auto enqueue_resolve = [&] {
    dk.selector = dp.selector = 0;  // from the staged halves, every time (a capture flips them)
    GPUDICT_CUDA(cudaMemsetAsync(d_counters_.data(), 0, 3 * sizeof(unsigned long long), stream_));
    temp_.run("cub::DeviceRadixSort::SortPairs (lsm update batch)", sort);
    temp_.run("cub::DeviceReduce::ReduceByKey (lsm update batch)", reduce);
  };
  // Every buffer the resolve touches, read when prepared and again when
  // launched (a buffer moved in between would not match the graph).
  auto resolve_key = [&]() -> GraphCache::Key {
    return {key_word(d_counters_.data()),    key_word(upd_keys_[0].data()), key_word(upd_keys_[1].data()),
            key_word(upd_payload_[0].data()), key_word(upd_payload_[1].data()), key_word(uniq_keys_.data()),
            key_word(uniq_payload_.data()),  key_word(temp_.data()),          m};
  };
  resolve_graph_.prepare(resolve_key(), stream_, enqueue_resolve);
  // The resolve is its own timed segment: the host reads the resolved count,
  // which sizes every chunk and every level written.
  timer_.start(stream_);
  trace_.mark(stream_, "start");
  resolve_graph_.run(resolve_key(), stream_, enqueue_resolve);
  trace_.mark(stream_, "resolve");
  double ms = timer_.stop(stream_);
  uint64_t u = 0;
  copy_to_host(stream_, &u, d_runs, sizeof(u));
  const uint64_t chunks = div_up(u, b_);

  // Per chunk of a group: the local stale count of the level it writes.
  d_level_stale_.reserve_discard(kChunkGroup, "lsm counters");
  h_u64_.reserve_discard(kChunkGroup);
  const bool exact = opt_.exact_stale;
  const LsmView before = make_view(live_);  // the pre-batch levels (presence count)
  for (uint64_t c0 = 0; c0 < chunks; c0 += kChunkGroup) {
    const uint64_t c1 = std::min<uint64_t>(chunks, c0 + kChunkGroup);
    // Where each chunk goes, simulated on the level sizes.
    std::vector<ChunkPlan> plan;
    std::vector<std::shared_ptr<Level>> fresh;
    uint64_t max_inter = 0;
    bool need_chunk = false;
    uint64_t r = live_.r;
    uint64_t size[kMaxLevels];
    for (int i = 0; i < kMaxLevels; ++i) size[i] = live_.at[i] ? live_.at[i]->n() : 0;
    for (uint64_t c = c0; c < c1; ++c) {
      ChunkPlan p;
      p.first = c * b_;
      p.cnt = std::min<uint64_t>(b_, u - p.first);
      if ((r & 1) && size[0] + p.cnt <= b_) {
        p.absorb = true;
        p.target = 0;
        size[0] += p.cnt;
      } else {
        int k = 0;
        while (k < kMaxLevels && ((r >> k) & 1)) ++k;
        if (k >= kMaxLevels || (b_ << k) > kMaxLevelSize)
          throw RuntimeFailure("lsm: the structure would need a level of more than 2^31 elements (" +
                               std::to_string(r + 1) + " batches of " + std::to_string(b_) + ")");
        p.target = k;
        uint64_t total = p.cnt;
        for (int j = 0; j < k; ++j) {
          total += size[j];
          size[j] = 0;
        }
        size[k] = total;
        ++r;
        if (k >= 2) max_inter = std::max<uint64_t>(max_inter, b_ << (k - 1));
      }
      p.size = size[p.target];
      if (p.absorb || p.target >= 1) need_chunk = true;
      plan.push_back(p);
    }
    for (const ChunkPlan& p : plan) fresh.push_back(pool_->acquire(p.target));
    if (need_chunk) chunk_.reserve(b_, "lsm chunk buffer");
    if (max_inter) {
      pp_[0].reserve(max_inter, "lsm merge buffer");
      pp_[1].reserve(max_inter, "lsm merge buffer");
    }
    GPUDICT_CUDA(cudaMemsetAsync(d_level_stale_.data(), 0, kChunkGroup * sizeof(unsigned long long), stream_));

    // Settled: this segment follows the host's read of the count and the
    // level allocations, after which its first launch arrives late
    // (core/common/settle.hpp).
    timer_.start_settled(stream_);
    // The presence count searches for every resolved key: m is an upper
    // bound on their number, and the kernel reads the count on the device.
    if (exact && c0 == 0)
      launch_multilevel(before, PresenceOp<K, V>{uniq_keys_.data(), d_live, d_runs}, m, stream_,
                        "multilevel_search_kernel<Presence>");
    for (uint64_t c = c0; c < c1; ++c) {
      const ChunkPlan& p = plan[c - c0];
      const int k = p.target;
      Level& out = *fresh[c - c0];
      unsigned long long* level_stale = d_level_stale_.data() + (c - c0);
      out.set_size(p.size);
      const bool direct = !p.absorb && k == 0;  // the chunk is the new level as it stands
      K* sk = direct ? out.kv.keys.data() : chunk_.keys.data();
      V* sv = direct ? out.kv.values.data() : chunk_.values.data();
      uint8_t* ss = direct ? out.status.data() : chunk_.status.data();
      expand_chunk_kernel<K, V><<<blocks_for(p.cnt, kExpandThreads, 4096), kExpandThreads, 0, stream_>>>(
          uniq_keys_.data(), uniq_payload_.data(), upd_values_.data(), p.first, p.cnt, sk, sv, ss, d_tombs,
          direct ? level_stale : nullptr);
      GPUDICT_CHECK_LAUNCH("expand_chunk_kernel");
      trace_.mark(stream_, "expand");
      if (direct) {
        sa::build_fence_levels(out.kv, 0, stream_);
      } else {
        // The older runs, most recent first: level 0 (absorb), or levels
        // 0..k-1 (carry).
        const int merges = p.absorb ? 1 : k;
        RunIn<K, V> a{sk, sv, ss, p.cnt};
        for (int j = 0; j < merges; ++j) {
          const Level& lj = *live_.at[j];
          const RunIn<K, V> older{lj.kv.keys.data(), lj.kv.values.data(), lj.status.data(), lj.n()};
          const bool last = j == merges - 1;
          RunBuffers& tmp = pp_[j & 1];
          const RunOut<K, V> o = last ? RunOut<K, V>{out.kv.keys.data(), out.kv.values.data(), out.status.data(),
                                                     out.kv.fences.data(), level_stale}
                                      : RunOut<K, V>{tmp.keys.data(), tmp.values.data(), tmp.status.data(), nullptr,
                                                     nullptr};
          merge_runs(a, older, o, stream_);
          trace_.mark(stream_, "merge");
          a = RunIn<K, V>{o.keys, o.values, o.status, a.n + older.n};
        }
        sa::build_fence_levels(out.kv, 1, stream_);
        for (int j = 0; j < merges; ++j) dropped_.push_back(std::move(live_.at[j]));
      }
      live_.at[k] = fresh[c - c0];
      if (!p.absorb) live_.r += 1;
    }
    trace_.mark(stream_, "fence");
    ms += timer_.stop(stream_);
    copy_to_host(stream_, h_u64_.data(), d_level_stale_.data(), (c1 - c0) * sizeof(uint64_t));
    for (uint64_t c = c0; c < c1; ++c) fresh[c - c0]->local_stale = h_u64_[c - c0];
    fresh.clear();
    release_dropped();
  }
  trace_.flush("lsm update batch");
  unsigned long long counters[3];
  copy_to_host(stream_, counters, d_counters_.data(), sizeof(counters));
  const uint64_t live_before = counters[1], tombs = counters[2];

  chunks_ += chunks;
  resolved_ += u;
  // Exact counting: stale' = stale + tombstones + (records made stale: the
  // keys that had a live record before the batch); docs/lsm.md. Otherwise
  // the levels' local counts (a lower bound, exact with one level).
  if (exact) {
    stale_ += tombs + live_before;
  } else {
    stale_ = levels_stale();
    stale_exact_ = live_.occupied() <= 1;
  }
  add_time(ms);
}

#define GPUDICT_LSM_UPDATES(K, V)                                               \
  template void Lsm<K, V>::reserve_update(uint64_t);                            \
  template void Lsm<K, V>::update_staged(uint64_t);                             \
  template void Lsm<K, V>::update_device(const K*, const V*, const bool*, uint64_t, bool);
GPUDICT_LSM_UPDATES(uint32_t, uint32_t)
GPUDICT_LSM_UPDATES(uint32_t, uint64_t)
GPUDICT_LSM_UPDATES(uint64_t, uint64_t)
#undef GPUDICT_LSM_UPDATES

}  // namespace gpudict::lsm
