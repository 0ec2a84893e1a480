// Count and range (IV-C/D), exact, in five stages per block of queries:
//
//  1. bounds (the multi-level search kernel): per query q and level rank l,
//     lo = lower_bound(lo_q), hi = upper_bound(hi_q); candidates(q, l) =
//     hi - lo (0 when lo_q > hi_q), laid out q-major: entry q L + l;
//  2. exclusive scan (in place) of the candidate counts: offsets;
//  3. gather every candidate, balanced by output (tiles of 2048 candidates;
//     each finds its (q, l) by a binary search over the tile's offsets,
//     staged in shared memory): a composite key
//        (q << (32 + lb)) | (key << lb) | l       (lb = bits of the rank)
//     and its position in level l as the payload. Within (q, l) candidates
//     come in position order;
//  4. order them by (query, key, rank, position): one stable radix sort of
//     the composite over its used bits (query bits + 32 + lb), the position as
//     payload; stability keeps the position order of equal composites (a
//     key's records within one level, most recent first). Skipped when the
//     gathered candidates are in order already: one level, or levels whose
//     key ranges are disjoint and ascending (build() and cleanup() lay them
//     out that way), checked by one pass over the composites;
//  5. a candidate is valid iff it is the first of its (query, key) run (the
//     key's most recent record among the query's candidates: smallest rank,
//     then smallest position) and not a tombstone. An exclusive scan of the
//     validity flags gives each valid pair its output slot; count = the
//     scan's difference over the query's candidates; range = the valid pairs
//     scattered to their slots, so each query's pairs are contiguous, sorted
//     by key, queries in call order.
// u64 keys: a composite of query, key and rank does not fit 64 bits, so step
// 3 writes the key (u64) and a tag (q << (32 + lb)) | (l << 32) | position,
// and step 4 is two stable radix sorts: by key (64 bits, the tag as payload),
// then by the tag's query bits (the key as payload; skipped for one query).
// Stability keeps the gathered order (query, rank, position) within equal
// keys, so the result is the same order as the u32 composite's. The order
// check compares (query, key); step 5 compares (query, key) with the
// candidate before.
// Candidates depend on the data (every stored record in [lo, hi] of every
// level, stale ones included), so rounds of queries are cut at about
// kRoundBudget candidates (a single query with more runs alone); their
// buffers grow as needed.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/common/cuda_check.hpp"
#include "core/common/errors.hpp"
#include "core/common/grid.cuh"
#include "core/common/warp.cuh"
#include "core/lsm/detail/lsm_impl.cuh"
#include "core/lsm/detail/multilevel_search.cuh"

namespace gpudict::lsm {

namespace {

constexpr uint64_t kQueryBlock = 1ull << 20;     // queries per bounds pass
constexpr uint64_t kRoundBudget = 1ull << 24;    // candidates per round (unless one query has more)
constexpr int kGatherThreads = 256;
constexpr int kGatherPerThread = 8;
constexpr uint32_t kGatherTile = kGatherThreads * kGatherPerThread;
constexpr uint32_t kGatherStage = 1024;  // segment offsets staged per tile

// Bits to hold x - 1 (0 for x <= 1).
int bits_below(uint64_t x) {
  int b = 0;
  while (b < 64 && x > 1 && ((x - 1) >> b) != 0) ++b;
  return b;
}

template <class K, class V>
struct BoundsOp {
  using Key = K;
  using Value = V;
  static constexpr int kSearches = 2;
  static constexpr bool kUpper0 = false, kUpper1 = true, kStopWhenDone = false;
  static constexpr bool kFilter = false;
  const K* lo;
  const K* hi;
  uint64_t* count;  // items * levels + 1 entries
  uint32_t* first;  // items * levels entries
  uint32_t levels;
  uint32_t items;
  struct State {};
  __device__ __forceinline__ void setup(uint32_t i, State&, K (&q)[2]) const {
    q[0] = lo[i];
    q[1] = hi[i];
  }
  __device__ __forceinline__ bool wants(const State&, int) const { return true; }
  __device__ __forceinline__ void level(const LevelView<K, V>&, int rank, uint32_t i, State&, const K (&q)[2],
                                        const uint32_t (&pos)[2], const bool (&)[2]) const {
    const uint64_t x = static_cast<uint64_t>(i) * levels + static_cast<uint32_t>(rank);
    count[x] = q[0] <= q[1] ? pos[1] - pos[0] : 0u;  // upper_bound(hi) >= lower_bound(lo) when lo <= hi
    first[x] = pos[0];
    if (i == 0 && rank == 0) count[static_cast<uint64_t>(items) * levels] = 0;  // the scan's total
  }
  __device__ __forceinline__ void finish(const LsmView<K, V>&, uint32_t, const State&) const {}
};

// starts[q] = offset of query q's first candidate (q = 0..items).
__global__ void query_starts_kernel(const uint64_t* __restrict__ offsets, uint32_t levels, uint32_t items,
                                    uint64_t* __restrict__ starts) {
  const uint64_t q = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (q <= items) starts[q] = offsets[q * levels];
}

// tile_seg[t] = the segment holding candidate min(t * tile, total - 1): the
// last segment whose offset is <= it.
__global__ void candidate_tiles_kernel(const uint64_t* __restrict__ segs, uint32_t nseg, uint64_t base,
                                       uint64_t total, uint32_t tiles, uint32_t* __restrict__ tile_seg) {
  const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t > tiles) return;
  const uint64_t o = base + min(static_cast<uint64_t>(t) * kGatherTile, total - 1);
  tile_seg[t] = sa::count_before<uint64_t>(segs, nseg, o, true) - 1;
}

// u32 keys: comp = the composite, pos = the position (tag unused); u64 keys:
// comp = the key, tag = (q << (32 + lb)) | (l << 32) | position (pos unused).
template <class K, class V>
__global__ void __launch_bounds__(kGatherThreads)
    gather_candidates_kernel(const __grid_constant__ LsmView<K, V> v, const uint64_t* __restrict__ segs,
                             const uint32_t* __restrict__ first, const uint32_t* __restrict__ tile_seg, uint64_t base,
                             uint64_t total, uint32_t levels, int lb, uint64_t* __restrict__ comp,
                             uint32_t* __restrict__ pos, uint64_t* __restrict__ tag) {
  __shared__ uint64_t s_off[kGatherStage];
  __shared__ const K* s_keys[kMaxLevels];
  if (threadIdx.x < static_cast<unsigned>(v.count)) s_keys[threadIdx.x] = v.lv[threadIdx.x].ix.level[0];
  const uint64_t o0 = static_cast<uint64_t>(blockIdx.x) * kGatherTile;
  const uint64_t o1 = min(o0 + kGatherTile, total);
  const uint32_t s0 = tile_seg[blockIdx.x];
  const uint32_t span = tile_seg[blockIdx.x + 1] - s0 + 1;  // segments the tile may touch
  const bool staged = span <= kGatherStage;
  if (staged)
    for (uint32_t x = threadIdx.x; x < span; x += kGatherThreads) s_off[x] = segs[s0 + x];
  __syncthreads();
  const uint64_t* off = staged ? s_off : segs + s0;
#pragma unroll
  for (int r = 0; r < kGatherPerThread; ++r) {
    const uint64_t j = o0 + static_cast<uint64_t>(r) * kGatherThreads + threadIdx.x;
    if (j >= o1) continue;
    const uint64_t g = base + j;
    const uint32_t x = sa::count_before<uint64_t>(off, span, g, true) - 1;  // off[0] <= g
    const uint32_t s = s0 + x;
    const uint32_t p = first[s] + static_cast<uint32_t>(g - off[x]);
    const uint32_t qrel = s / levels;
    const uint32_t rank = s - qrel * levels;
    const K key = __ldg(s_keys[rank] + p);
    if constexpr (sizeof(K) == 4) {
      comp[j] = (static_cast<uint64_t>(qrel) << (32 + lb)) | (static_cast<uint64_t>(key) << lb) | rank;
      pos[j] = p;
    } else {
      comp[j] = key;
      tag[j] = (static_cast<uint64_t>((qrel << lb) | rank) << 32) | p;
    }
  }
}

// u64 keys: flag = 1 if the candidates are not in non-decreasing (query, key)
// order (within equal ones the gathered order is by rank already).
__global__ void out_of_order_kernel64(const uint64_t* __restrict__ key, const uint64_t* __restrict__ tag, int lb,
                                      uint64_t n, unsigned long long* flag) {
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  const int qshift = 32 + lb;
  for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i - lane_id() < n; i += stride) {
    bool bad = false;
    if (i > 0 && i < n) {
      const uint64_t q = tag[i] >> qshift, qp = tag[i - 1] >> qshift;
      bad = q < qp || (q == qp && key[i] < key[i - 1]);
    }
    if (__any_sync(kFullMask, bad) && lane_id() == 0) atomicOr(flag, 1ull);
  }
}

// flag = 1 if the composites are not in non-decreasing order.
__global__ void out_of_order_kernel(const uint64_t* __restrict__ comp, uint64_t n, unsigned long long* flag) {
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  // Whole warps iterate together (the vote needs every lane).
  for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i - lane_id() < n; i += stride) {
    const bool bad = i > 0 && i < n && comp[i] < comp[i - 1];
    if (__any_sync(kFullMask, bad) && lane_id() == 0) atomicOr(flag, 1ull);
  }
}

// Validity of sorted candidate j (1 = counts / goes to the range output).
// u64 keys: ValidFlag64.
struct ValidFlag {
  const uint64_t* comp;
  const uint32_t* pos;
  uint64_t total;
  int lb;
  const uint8_t* const* status;  // per level rank (device memory: a functor array indexed at run time would spill)
  __host__ __device__ uint32_t operator()(uint64_t j) const {
    if (j >= total) return 0u;
    const uint64_t c = comp[j];
    if (j > 0 && (comp[j - 1] >> lb) == (c >> lb)) return 0u;  // not the key's most recent record
    const uint32_t rank = static_cast<uint32_t>(c & ((1ull << lb) - 1));
    return (status[rank][pos[j]] & kTombstone) ? 0u : 1u;
  }
};

struct ValidFlag64 {
  const uint64_t* key;
  const uint64_t* tag;
  uint64_t total;
  int lb;
  const uint8_t* const* status;
  __host__ __device__ uint32_t operator()(uint64_t j) const {
    if (j >= total) return 0u;
    const uint64_t t = tag[j];
    const int qshift = 32 + lb;
    if (j > 0 && key[j - 1] == key[j] && (tag[j - 1] >> qshift) == (t >> qshift)) return 0u;  // not the most recent
    const uint32_t rank = static_cast<uint32_t>(t >> 32) & ((1u << lb) - 1u);
    return (status[rank][static_cast<uint32_t>(t)] & kTombstone) ? 0u : 1u;
  }
};

// Per query of the round: its valid pairs (scan difference) and first slot.
__global__ void query_results_kernel(const uint64_t* __restrict__ segs, uint32_t levels, uint32_t nq, uint64_t base,
                                     const uint32_t* __restrict__ scan, uint64_t* __restrict__ size,
                                     uint64_t* __restrict__ offset) {
  const uint64_t q = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (q >= nq) return;
  const uint64_t b = segs[q * levels] - base;
  const uint64_t e = segs[(q + 1) * levels] - base;
  size[q] = scan[e] - scan[b];
  offset[q] = scan[b];
}

// The valid pairs to their slots (range). u64 keys: comp = the key, the
// rank and position from the tag.
template <class K, class V>
__global__ void scatter_pairs_kernel(const __grid_constant__ LsmView<K, V> v, const uint64_t* __restrict__ comp,
                                     const uint32_t* __restrict__ pos, const uint64_t* __restrict__ tag,
                                     const uint32_t* __restrict__ scan, uint64_t total, int lb,
                                     K* __restrict__ out_keys, V* __restrict__ out_values) {
  __shared__ const V* s_values[kMaxLevels];
  if (threadIdx.x < static_cast<unsigned>(v.count)) s_values[threadIdx.x] = v.lv[threadIdx.x].values;
  __syncthreads();
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  for (uint64_t j = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < total; j += stride) {
    const uint32_t slot = scan[j];
    if (scan[j + 1] == slot) continue;
    const uint64_t c = comp[j];
    if constexpr (sizeof(K) == 4) {
      const uint32_t rank = static_cast<uint32_t>(c & ((1ull << lb) - 1));
      out_keys[slot] = static_cast<uint32_t>(c >> lb);
      out_values[slot] = __ldg(s_values[rank] + pos[j]);
    } else {
      const uint64_t t = tag[j];
      const uint32_t rank = static_cast<uint32_t>(t >> 32) & ((1u << lb) - 1u);
      out_keys[slot] = c;
      out_values[slot] = __ldg(s_values[rank] + static_cast<uint32_t>(t));
    }
  }
}

struct Round {
  uint64_t ra, rb;  // queries [ra, rb) of the block
  uint64_t base;    // offset of the round's first candidate in the block
  uint64_t total;   // candidates
};

}  // namespace

template <class K, class V>
void Lsm<K, V>::ordered_staged(bool is_range, const K* lo, const K* hi, uint64_t Q, const LevelList& list,
                               const std::function<void(uint64_t, uint64_t, uint64_t)>& round_done) {
  const LsmView v = make_view(list);
  const uint32_t L = static_cast<uint32_t>(v.count);
  if (Q == 0 || L == 0) return;
  {
    const uint8_t* ptrs[kMaxLevels] = {};
    for (uint32_t l = 0; l < L; ++l) ptrs[l] = v.lv[l].status;
    copy_to_device(stream_, d_status_ptrs_.data(), ptrs, sizeof ptrs);
  }
  const int lb = bits_below(L);
  double ms = 0;

  for (uint64_t qa = 0; qa < Q; qa += kQueryBlock) {
    const uint64_t Qb = std::min<uint64_t>(kQueryBlock, Q - qa);
    const uint64_t nb = Qb * L;
    q_bounds_.reserve_discard(nb + 1, "lsm count/range bounds");
    q_first_.reserve_discard(nb, "lsm count/range bounds");
    const BoundsOp<K, V> op{lo + qa, hi + qa, q_bounds_.data(), q_first_.data(), L,
                      static_cast<uint32_t>(Qb)};
    auto scan_bounds = [&](void* p, size_t& bytes) {
      return cub::DeviceScan::ExclusiveSum(p, bytes, q_bounds_.data(), q_bounds_.data(), nb + 1, stream_);
    };
    temp_.prepare("cub::DeviceScan::ExclusiveSum (lsm candidates)", scan_bounds);
    timer_.start(stream_);
    launch_multilevel(v, op, Qb, stream_, "multilevel_search_kernel<Bounds>");
    temp_.run("cub::DeviceScan::ExclusiveSum (lsm candidates)", scan_bounds);
    ms += timer_.stop(stream_);
    copy_to_host(stream_, h_u64_.data(), q_bounds_.data() + nb, sizeof(uint64_t));
    const uint64_t total = h_u64_[0];

    // Rounds of whole queries.
    std::vector<Round> rounds;
    if (total <= kRoundBudget) {
      rounds.push_back({0, Qb, 0, total});
    } else {
      q_starts_.reserve_discard(Qb + 1, "lsm count/range rounds");
      std::vector<uint64_t> starts(Qb + 1);
      h_u64_.reserve_discard(Qb + 1);
      timer_.start(stream_);
      query_starts_kernel<<<blocks_for(Qb + 1, 256), 256, 0, stream_>>>(q_bounds_.data(), L, static_cast<uint32_t>(Qb),
                                                                         q_starts_.data());
      GPUDICT_CHECK_LAUNCH("query_starts_kernel");
      ms += timer_.stop(stream_);
      copy_to_host(stream_, h_u64_.data(), q_starts_.data(), (Qb + 1) * sizeof(uint64_t));
      for (uint64_t q = 0; q <= Qb; ++q) starts[q] = h_u64_[q];
      uint64_t ra = 0;
      for (uint64_t q = 1; q <= Qb; ++q) {
        if (q == Qb || (q > ra && starts[q + 1] - starts[ra] > kRoundBudget)) {
          rounds.push_back({ra, q, starts[ra], starts[q] - starts[ra]});
          ra = q;
        }
      }
    }

    for (const Round& rd : rounds) {
      const uint64_t Qr = rd.rb - rd.ra;
      const uint64_t T = rd.total;
      if (T == 0) {
        round_done(qa + rd.ra, Qr, 0);
        continue;
      }
      if (T >= 0xFFFFFFFFull)
        throw RuntimeFailure("lsm: a count/range query has " + std::to_string(T) +
                             " candidates (at most 2^32 - 2 per query)");
      const int qbits = bits_below(Qr);
      const int end_bit = qbits + 32 + lb;  // <= 20 + 32 + 5 (u64 keys: the tag's bits)
      const uint64_t* segs = q_bounds_.data() + rd.ra * L;
      const uint32_t nseg = static_cast<uint32_t>(Qr * L);
      const uint32_t tiles = static_cast<uint32_t>(div_up(T, kGatherTile));
      for (int i = 0; i < 2; ++i) {
        cand_comp_[i].reserve_discard(T, "lsm count/range candidates");
        if constexpr (sizeof(K) == 4)
          cand_pos_[i].reserve_discard(T, "lsm count/range candidates");
        else
          cand_tag_[i].reserve_discard(T, "lsm count/range candidates");
      }
      cand_scan_.reserve_discard(T + 1, "lsm count/range candidates");
      cand_tiles_.reserve_discard(static_cast<uint64_t>(tiles) + 1, "lsm count/range candidates");
      q_size_out_.reserve_discard(Qr, "lsm count/range results");
      q_offset_out_.reserve_discard(Qr, "lsm count/range results");
      if (is_range) {
        range_keys_.reserve_discard(T, "lsm range results");
        range_values_.reserve_discard(T, "lsm range results");
      }
      cub::DoubleBuffer<uint64_t> dc(cand_comp_[0].data(), cand_comp_[1].data());
      cub::DoubleBuffer<uint32_t> dp(cand_pos_[0].data(), cand_pos_[1].data());  // u32 keys
      cub::DoubleBuffer<uint64_t> dt(cand_tag_[0].data(), cand_tag_[1].data());  // u64 keys
      // u32 keys: the composite; u64 keys: by key (the tag as payload), then
      // (sort_queries) by the tag's query bits, both stable.
      auto sort = [&](void* p, size_t& bytes) {
        if constexpr (sizeof(K) == 4)
          return cub::DeviceRadixSort::SortPairs(p, bytes, dc, dp, T, 0, end_bit, stream_);
        else
          return cub::DeviceRadixSort::SortPairs(p, bytes, dc, dt, T, 0, 64, stream_);
      };
      auto sort_queries = [&](void* p, size_t& bytes) {
        return cub::DeviceRadixSort::SortPairs(p, bytes, dt, dc, T, 32 + lb, end_bit, stream_);
      };
      const bool two_sorts = sizeof(K) == 8 && qbits > 0;
      auto scan_valid = [&](void* p, size_t& bytes) {
        auto items = thrust::counting_iterator<uint64_t>(0);
        if constexpr (sizeof(K) == 4) {
          const ValidFlag valid{dc.Current(), dp.Current(), T, lb, d_status_ptrs_.data()};
          auto in = thrust::make_transform_iterator(items, valid);
          return cub::DeviceScan::ExclusiveSum(p, bytes, in, cand_scan_.data(), T + 1, stream_);
        } else {
          const ValidFlag64 valid{dc.Current(), dt.Current(), T, lb, d_status_ptrs_.data()};
          auto in = thrust::make_transform_iterator(items, valid);
          return cub::DeviceScan::ExclusiveSum(p, bytes, in, cand_scan_.data(), T + 1, stream_);
        }
      };
      if (L > 1) temp_.prepare("cub::DeviceRadixSort::SortPairs (lsm candidates)", sort);
      if (L > 1 && two_sorts) temp_.prepare("cub::DeviceRadixSort::SortPairs (lsm candidates' queries)", sort_queries);
      temp_.prepare("cub::DeviceScan::ExclusiveSum (lsm validity)", scan_valid);

      unsigned long long* d_flag = d_counters_.data() + 4;
      timer_.start(stream_);
      candidate_tiles_kernel<<<blocks_for(static_cast<uint64_t>(tiles) + 1, 256), 256, 0, stream_>>>(
          segs, nseg, rd.base, T, tiles, cand_tiles_.data());
      GPUDICT_CHECK_LAUNCH("candidate_tiles_kernel");
      gather_candidates_kernel<K, V><<<tiles, kGatherThreads, 0, stream_>>>(
          v, segs, q_first_.data() + rd.ra * L, cand_tiles_.data(), rd.base, T, L, lb, cand_comp_[0].data(),
          cand_pos_[0].data(), cand_tag_[0].data());
      GPUDICT_CHECK_LAUNCH("gather_candidates_kernel");
      if (L > 1) {
        GPUDICT_CUDA(cudaMemsetAsync(d_flag, 0, sizeof(unsigned long long), stream_));
        if constexpr (sizeof(K) == 4) {
          out_of_order_kernel<<<blocks_for(T, 256 * 8, 8192), 256, 0, stream_>>>(cand_comp_[0].data(), T, d_flag);
          GPUDICT_CHECK_LAUNCH("out_of_order_kernel");
        } else {
          out_of_order_kernel64<<<blocks_for(T, 256 * 8, 8192), 256, 0, stream_>>>(
              cand_comp_[0].data(), cand_tag_[0].data(), lb, T, d_flag);
          GPUDICT_CHECK_LAUNCH("out_of_order_kernel64");
        }
      }
      ms += timer_.stop(stream_);
      bool in_order = true;
      if (L > 1) {
        copy_to_host(stream_, h_u64_.data(), d_flag, sizeof(unsigned long long));
        in_order = h_u64_[0] == 0;
      }
      timer_.start(stream_);
      if (!in_order) temp_.run("cub::DeviceRadixSort::SortPairs (lsm candidates)", sort);
      if (!in_order && two_sorts) temp_.run("cub::DeviceRadixSort::SortPairs (lsm candidates' queries)", sort_queries);
      temp_.run("cub::DeviceScan::ExclusiveSum (lsm validity)", scan_valid);
      query_results_kernel<<<blocks_for(Qr, 256), 256, 0, stream_>>>(segs, L, static_cast<uint32_t>(Qr), rd.base,
                                                                      cand_scan_.data(), q_size_out_.data(),
                                                                      q_offset_out_.data());
      GPUDICT_CHECK_LAUNCH("query_results_kernel");
      if (is_range) {
        scatter_pairs_kernel<K, V><<<blocks_for(T, 256 * 4, 8192), 256, 0, stream_>>>(
            v, dc.Current(), dp.Current(), dt.Current(), cand_scan_.data(), T, lb, range_keys_.data(),
            range_values_.data());
        GPUDICT_CHECK_LAUNCH("scatter_pairs_kernel");
      }
      ms += timer_.stop(stream_);

      round_done(qa + rd.ra, Qr, T);
    }
  }
  add_time(ms);
}

template <class K, class V>
void Lsm<K, V>::count_device(const K* lo, const K* hi, uint64_t n, uint64_t* counts_out,
                             const std::string& snapshot) {
  if (n == 0 || counts_out == nullptr) return;
  GPUDICT_CUDA(cudaMemsetAsync(counts_out, 0, n * sizeof(uint64_t), stream_));
  ordered_staged(false, lo, hi, n, levels(snapshot),
                 [&](uint64_t q0, uint64_t Qr, uint64_t candidates) {
    if (candidates != 0)
      GPUDICT_CUDA(cudaMemcpyAsync(counts_out + q0, q_size_out_.data(), Qr * sizeof(uint64_t),
                                   cudaMemcpyDeviceToDevice, stream_));
  });
  GPUDICT_CUDA(cudaStreamSynchronize(stream_));
}

template <class K, class V>
uint64_t Lsm<K, V>::range_device(const K* lo, const K* hi, uint64_t n, uint64_t* offsets_out, K* keys_out,
                                 V* values_out, uint64_t capacity, const std::string& snapshot) {
  const LevelList& list = levels(snapshot);
  if (n == 0) {
    if (offsets_out) GPUDICT_CUDA(cudaMemsetAsync(offsets_out, 0, sizeof(uint64_t), stream_));
    GPUDICT_CUDA(cudaStreamSynchronize(stream_));
    return 0;
  }
  // Sizes by query (the last entry 0 closes the scan into the offsets).
  range_sizes_.reserve_discard(n + 1, "lsm range sizes");
  GPUDICT_CUDA(cudaMemsetAsync(range_sizes_.data(), 0, (n + 1) * sizeof(uint64_t), stream_));
  uint64_t total = 0;  // pairs of the rounds so far: where the next round's go
  ordered_staged(true, lo, hi, n, list, [&](uint64_t q0, uint64_t Qr, uint64_t candidates) {
    if (candidates == 0) return;
    GPUDICT_CUDA(cudaMemcpyAsync(range_sizes_.data() + q0, q_size_out_.data(), Qr * sizeof(uint64_t),
                                 cudaMemcpyDeviceToDevice, stream_));
    uint32_t pairs = 0;
    copy_to_host(stream_, &pairs, cand_scan_.data() + candidates, sizeof pairs);
    // Rounds write their pairs in query order, so they land where the scan
    // of the sizes says; once the output is past `capacity` only sizes count
    // (the rounds before may have written theirs: not a result then).
    if (pairs > 0 && total + pairs <= capacity) {
      if (keys_out)
        GPUDICT_CUDA(cudaMemcpyAsync(keys_out + total, range_keys_.data(), pairs * sizeof(K),
                                     cudaMemcpyDeviceToDevice, stream_));
      if (values_out)
        GPUDICT_CUDA(cudaMemcpyAsync(values_out + total, range_values_.data(), pairs * sizeof(V),
                                     cudaMemcpyDeviceToDevice, stream_));
    }
    total += pairs;
  });
  if (offsets_out) {
    auto scan = [&](void* p, size_t& bytes) {
      return cub::DeviceScan::ExclusiveSum(p, bytes, range_sizes_.data(), offsets_out, n + 1, stream_);
    };
    temp_.run("cub::DeviceScan::ExclusiveSum (lsm range offsets)", scan);
  }
  GPUDICT_CUDA(cudaStreamSynchronize(stream_));
  return total;
}

#define GPUDICT_LSM_ORDERED(K, V)                                                                                   \
  template void Lsm<K, V>::ordered_staged(bool, const K*, const K*, uint64_t, const LevelList&,                     \
                                          const std::function<void(uint64_t, uint64_t, uint64_t)>&);          \
  template void Lsm<K, V>::count_device(const K*, const K*, uint64_t, uint64_t*, const std::string&);               \
  template uint64_t Lsm<K, V>::range_device(const K*, const K*, uint64_t, uint64_t*, K*, V*, uint64_t,               \
                                            const std::string&);
GPUDICT_LSM_ORDERED(uint32_t, uint32_t)
GPUDICT_LSM_ORDERED(uint32_t, uint64_t)
GPUDICT_LSM_ORDERED(uint64_t, uint64_t)
#undef GPUDICT_LSM_ORDERED

}  // namespace gpudict::lsm
