// The batch kernel: every operation type of the slab hash, served by tiles of
// 8 lanes with warp-cooperative work sharing (seed 004, IV-A).
//
// Each lane brings one operation (or none). A tile of 8 lanes serves the
// operations of its lanes one at a time, lane 0's first: the operation's
// bucket and stored key (each lane hashed its own key) are shuffled to the
// tile, the tile reads one slab (16 bytes per lane: one coalesced 128-byte
// line), each lane tests its 2 pairs (4 keys in the set layout) and a ballot
// tells the tile where the key or the first empty slot is. Four tiles per warp
// serve four operations at once. The loop over a tile's 8 operations has the
// same trip count in every tile, so the tiles of a warp stay converged (only
// an operation that needs more than one step - a chain walk, a lost CAS -
// makes its tile run alone for a while); diverged tiles would issue every
// instruction once per tile. --prefetch next/l2/bulk fetch the next base slabs
// early (measured in docs/slabhash.md: none helped, the default is off).
//
// Per operation (docs/slabhash.md for the argument behind each step):
//   lookup   first alive slot with the key -> its value; else the next slab;
//            at the tail: not found.
//   count    map/set: 0 or 1 as lookup; multimap: alive matches over the
//            whole chain.
//   range    count pass, one atomicAdd reserves that many values, fill pass
//            writes at most that many, the first ones in chain order (the
//            chain's pre-existing pairs come first, so they are never cut).
//   delete   map/set: clear the alive bit of the key's slot (one atomicAnd);
//            multimap: of every slot with the key, one atomicAnd per slab.
//   insert   map/set: if the slab holds the key alive, replace the value
//            (a store; set: nothing); else claim the first empty slot with one
//            CAS (lost: read the slab again); a full slab: follow next; at the
//            tail: allocate a slab and link it with a CAS (lost: free it and
//            follow the winner's). multimap: the first empty slot, always.
// An insert that cannot get a slab (pool full) or a range that does not fit
// the value buffer is listed in `unfinished` and ends; the host grows the pool
// or the buffer and runs exactly those operations again.
//
// A kernel is compiled for a set of operation types (kOps): the host picks
// the smallest set that covers a pass, so a pure lookup pass carries no code
// of the other types. Without inserts and deletes nothing writes the table
// during the kernel and slabs are read through the read-only path.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "core/common/warp.cuh"
#include "core/slabhash/slab_alloc.cuh"
#include "core/slabhash/slab_layout.cuh"
#include "core/slabhash/table_ref.cuh"

namespace gpudict::slabhash {

inline constexpr int kBatchThreads = 256;

// This lane's slots of the slab just read: bit j = slot j of the lane.
struct LaneMatch {
  uint32_t hit;    // holds the stored key and is alive
  uint32_t empty;  // empty (key word kEmptyKey)
};

template <class L>
__device__ __forceinline__ LaneMatch match_slots(const LaneWords& v, unsigned tl, uint32_t stored, uint32_t state) {
  LaneMatch m{0u, 0u};
#pragma unroll
  for (unsigned j = 0; j < L::kPerLane; ++j) {
    if (!L::valid(tl, j)) continue;
    const uint32_t k = L::key(v, j);
    const unsigned slot = tl * L::kPerLane + j;
    if (k == stored && ((state >> slot) & 1u)) m.hit |= 1u << j;
    if (k == kEmptyKey) m.empty |= 1u << j;
  }
  return m;
}

// Value of slot j (runtime) of this lane, without indexing registers dynamically.
template <class L>
__device__ __forceinline__ uint32_t value_at(const LaneWords& v, unsigned j) {
  if constexpr (L::kPairs) {
    return j == 0 ? v.w[1] : v.w[3];
  } else {
    return 0u;
  }
}

// Asks L2 for a slab's line without waiting for it: four 32-byte sectors,
// or (bulk, sm_90) one 128-byte bulk prefetch.
__device__ __forceinline__ void prefetch_slab(const Slab* s, bool bulk) {
  const char* p = reinterpret_cast<const char*>(s);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (bulk) {
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], 128;" ::"l"(p) : "memory");
    return;
  }
#endif
  (void)bulk;
  asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
  asm volatile("prefetch.global.L2 [%0];" ::"l"(p + 32));
  asm volatile("prefetch.global.L2 [%0];" ::"l"(p + 64));
  asm volatile("prefetch.global.L2 [%0];" ::"l"(p + 96));
}

// Tile-local ballot: bit l = lane l of the tile.
__device__ __forceinline__ unsigned tile_ballot(unsigned tmask, unsigned tbase, bool p) {
  return (__ballot_sync(tmask, p) >> tbase) & 0xFFu;
}

// Hits of the tile in this slab, and this lane's rank among them for each of
// its slots, in slot order (lane-major: every slot of lane l before those of
// lane l + 1), which is chain order within the slab.
template <class L>
struct TileHits {
  uint32_t total = 0;
  uint32_t rank[L::kPerLane];
};

template <class L>
__device__ __forceinline__ TileHits<L> tile_hits(uint32_t hit, unsigned tl, unsigned tmask, unsigned tbase) {
  TileHits<L> h;
  const unsigned below = (1u << tl) - 1u;
  uint32_t before = 0;  // hits in the lanes below this one
#pragma unroll
  for (unsigned j = 0; j < L::kPerLane; ++j) {
    const unsigned b = tile_ballot(tmask, tbase, (hit >> j) & 1u);
    before += __popc(b & below);
    h.total += __popc(b);
  }
#pragma unroll
  for (unsigned j = 0; j < L::kPerLane; ++j) h.rank[j] = before + __popc(hit & ((1u << j) - 1u));
  return h;
}

// OR of a value over the tile (xor-shuffles stay within aligned groups of 8).
__device__ __forceinline__ uint32_t tile_or(uint32_t x, unsigned tmask) {
  x |= __shfl_xor_sync(tmask, x, 1);
  x |= __shfl_xor_sync(tmask, x, 2);
  x |= __shfl_xor_sync(tmask, x, 4);
  return x;
}

// Operation-type sets a kernel is compiled for (bit = 1 << type).
enum : uint32_t {
  kSetInsert = 1u << kOpInsert,
  kSetDelete = 1u << kOpDelete,
  kSetLookup = 1u << kOpLookup,
  kSetCount = 1u << kOpCount,
  kSetRange = 1u << kOpRange,
  kSetUpdates = kSetInsert | kSetDelete,
  kSetAll = kSetUpdates | kSetLookup | kSetCount | kSetRange,
};

constexpr uint32_t only_type(uint32_t ops) {
  uint32_t t = 0;
  while (!((ops >> t) & 1u)) ++t;
  return t;
}

// A slab read: relaxed (other SMs' atomics seen) unless nothing writes the
// table during the kernel.
template <class L, bool kReadOnly>
__device__ __forceinline__ LaneWords read_slab(const Slab* s, unsigned tl) {
  if constexpr (kReadOnly)
    return load_readonly(s, tl);
  else
    return L::load(s, tl);
}

// Blocks of 256 threads per SM each kernel is compiled for: as many as fit
// without spilling (-Xptxas -v): lookups, counts and deletes 40 registers (6
// blocks, 48 warps per SM; 7 blocks spill), ranges and inserts 48 (5), mixed
// 64 (4).
constexpr int min_blocks(uint32_t ops) {
  return (ops & ~(kSetLookup | kSetCount)) == 0 || ops == kSetDelete ? 6
         : ops == kSetRange || ops == kSetInsert ? 5
                                                 : 4;
}

template <class L, Mode M, uint32_t kOps>
__global__ void __launch_bounds__(kBatchThreads, min_blocks(kOps))
    batch_kernel(const __grid_constant__ TableRef t, const __grid_constant__ OpsIn in,
                 const __grid_constant__ OpsOut out) {
  constexpr bool kMulti = M == Mode::Multimap;
  constexpr bool kReadOnly = (kOps & kSetUpdates) == 0;
  constexpr bool kOneType = (kOps & (kOps - 1)) == 0;
  const unsigned lane = lane_id();
  const unsigned tl = lane & (kTile - 1);
  const unsigned tbase = lane & ~(kTile - 1);
  const unsigned tmask = 0xFFu << tbase;
  const uint32_t warp = blockIdx.x * warps_per_block() + warp_in_block();
  const uint32_t tile_id = warp * (kWarpSize / kTile) + lane / kTile;
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * warps_per_block() * kWarpSize;
  const bool pipeline = in.prefetch == kPrefetchNext;

  TileAlloc alloc;
  // Per-lane tallies (a lane serves fewer than 2^32 operations), summed over
  // the warp at the end.
  uint32_t claimed = 0, killed = 0, replaced = 0, linked = 0;

  for (uint64_t first = static_cast<uint64_t>(warp) * kWarpSize; first < in.n; first += stride) {
    // This lane's operation; it hashes its own key.
    const uint64_t i = first + lane;
    const bool active = i < in.n;
    uint32_t my_type = kOneType ? only_type(kOps) : 0u, my_key = 0, my_arg = 0, my_idx = 0;
    if (active) {
      if constexpr (!kOneType) my_type = in.type ? in.type[i] : in.uniform;
      my_key = in.key[i];
      if constexpr ((kOps & kSetInsert) != 0) my_arg = in.arg ? in.arg[i] : 0u;
      my_idx = in.index ? in.index[i] : static_cast<uint32_t>(i);
    }
    uint32_t my_bucket = 0, my_stored = 0;
    t.route(my_key, my_bucket, my_stored);
    // The tile will read these 8 base slabs one after the other: ask L2 for
    // all of them now (32 line fetches per warp in flight instead of 4).
    if (active && in.prefetch >= kPrefetchL2) prefetch_slab(t.base + my_bucket, in.prefetch == kPrefetchBulk);
    // This lane's results, written once the tile has served all 8.
    uint32_t res_found = 0, res_value = 0, res_offset = 0;

    const unsigned lanes = tile_ballot(tmask, tbase, active);
    LaneWords ahead{};  // the next operation's base slab, read early
    if (pipeline && (lanes & 1u)) ahead = read_slab<L, kReadOnly>(t.base + __shfl_sync(tmask, my_bucket, tbase), tl);

    for (unsigned j = 0; j < kTile; ++j) {
      if (!((lanes >> j) & 1u)) continue;  // tile-uniform
      const uint32_t stored = __shfl_sync(tmask, my_stored, tbase + j);
      const uint32_t bucket = __shfl_sync(tmask, my_bucket, tbase + j);
      const uint32_t op = kOneType ? only_type(kOps) : __shfl_sync(tmask, my_type, tbase + j);
      uint32_t arg = 0;
      if constexpr ((kOps & kSetInsert) != 0) arg = __shfl_sync(tmask, my_arg, tbase + j);
      Slab* cur = t.base + bucket;
      LaneWords v = pipeline ? ahead : read_slab<L, kReadOnly>(cur, tl);
      if (pipeline) {
        const unsigned rest = lanes & ~((2u << j) - 1u);
        if (rest) ahead = read_slab<L, kReadOnly>(t.base + __shfl_sync(tmask, my_bucket, tbase + __ffs(rest) - 1), tl);
      }

      uint32_t acc = 0;      // count / range: matches counted
      uint32_t written = 0;  // range: values written
      uint32_t roff = 0;     // range: reserved offset
      bool filling = false;  // range: in the fill pass
      for (;;) {
        const uint32_t state = tile_state(v, tmask, tbase);
        const LaneMatch m = match_slots<L>(v, tl, stored, state);
        const unsigned hit_lanes = tile_ballot(tmask, tbase, m.hit != 0);
        bool done = false;
        bool advance = false;  // go on to the next slab of the chain
        bool at_end = false;   // the chain is exhausted for this operation

        if (op == kOpLookup) {
          if constexpr ((kOps & kSetLookup) != 0) {
            if (hit_lanes) {
              const unsigned w = __ffs(hit_lanes) - 1;
              const uint32_t val = __shfl_sync(tmask, value_at<L>(v, __ffs(m.hit) - 1), tbase + w);
              if (tl == j) {
                res_found = 1;
                res_value = val;
              }
              done = true;
            } else {
              advance = true;
            }
          }
        } else if (op == kOpCount || (op == kOpRange && !filling)) {
          if constexpr ((kOps & (kSetCount | kSetRange)) != 0) {
            if (!kMulti) {
              if (hit_lanes) {
                acc = 1;
                at_end = true;
              } else {
                advance = true;
              }
            } else {
              acc += tile_hits<L>(m.hit, tl, tmask, tbase).total;
              advance = true;
            }
          }
        } else if (op == kOpRange) {  // fill pass
          if constexpr ((kOps & kSetRange) != 0) {
            const TileHits<L> h = tile_hits<L>(m.hit, tl, tmask, tbase);
            const uint32_t room = acc - written;
#pragma unroll
            for (unsigned s = 0; s < L::kPerLane; ++s)
              if (((m.hit >> s) & 1u) && h.rank[s] < room)
                out.range_values[roff + written + h.rank[s]] = value_at<L>(v, s);
            written += h.total < room ? h.total : room;
            if (written == acc)
              at_end = true;
            else
              advance = true;
          }
        } else if (op == kOpDelete) {
          if constexpr ((kOps & kSetDelete) != 0) {
            if (hit_lanes) {
              if (!kMulti) {
                // The key is in at most one alive slot (map/set uniqueness).
                const unsigned w = __ffs(hit_lanes) - 1;
                if (tl == w) {
                  const uint32_t slot = w * L::kPerLane + (__ffs(m.hit) - 1);
                  const uint32_t old = L::kill(cur, 1u << slot);
                  killed += (old >> slot) & 1u;
                }
                done = true;
              } else {
                // Every alive slot with the key in this slab, with one atomic.
                const uint32_t bits = tile_or(m.hit << (tl * L::kPerLane), tmask);
                if (tl == 0) killed += __popc(L::kill(cur, bits) & bits);
                advance = true;
              }
            } else {
              advance = true;
            }
          }
        } else if (op == kOpInsert) {
          if constexpr ((kOps & kSetInsert) != 0) {
            if (!kMulti && hit_lanes) {
              // REPLACE: the key is alive here (and nowhere else).
              const unsigned w = __ffs(hit_lanes) - 1;
              if (tl == w) {
                L::replace(cur, w * L::kPerLane + (__ffs(m.hit) - 1), stored, arg);
                ++replaced;
              }
              done = true;
            } else {
              const unsigned empty_lanes = tile_ballot(tmask, tbase, m.empty != 0);
              if (empty_lanes) {
                // The first empty slot of the chain (every earlier slab is full).
                const unsigned w = __ffs(empty_lanes) - 1;
                uint32_t ok = 0;
                if (tl == w) {
                  ok = L::claim(cur, w * L::kPerLane + (__ffs(m.empty) - 1), stored, arg) ? 1u : 0u;
                  claimed += ok;
                }
                // Lost: someone claimed that slot; read the slab again (it may
                // now hold this very key).
                done = __shfl_sync(tmask, ok, tbase + w) != 0;
              } else {
                const uint32_t next = tile_next(v, tmask, tbase);
                if (next != kNullSlab) {
                  cur = t.pool.slab(next);
                } else {
                  const uint32_t fresh = tile_allocate(alloc, t.pool, tile_id, tl, tmask, tbase);
                  if (fresh == kNullSlab) {
                    const uint32_t idx = __shfl_sync(tmask, my_idx, tbase + j);
                    if (tl == j) out.unfinished[atomicAdd(&out.ctr->unfinished, 1u)] = idx;
                    done = true;
                  } else {
                    uint32_t now = 0;
                    if (tl == kMetaLane) now = L::link(cur, state, fresh);
                    now = __shfl_sync(tmask, now, tbase + kMetaLane);
                    // Lost the link: the fresh slab was never reachable and is
                    // still pristine; return it.
                    if (now != fresh && tl == 0) free_slab(t.pool, fresh);
                    if (now == fresh && tl == 0) ++linked;
                    cur = t.pool.slab(now);
                  }
                }
              }
            }
          }
        }
        if (op > kOpRange || !((kOps >> op) & 1u)) done = true;  // not a type of this kernel (never launched so)

        if (advance) {
          const uint32_t next = tile_next(v, tmask, tbase);
          if (next == kNullSlab)
            at_end = true;
          else
            cur = t.pool.slab(next);
        }
        if (at_end) {
          done = true;
          if (op == kOpCount) {
            if (tl == j) res_value = acc;
          } else if (op == kOpRange && !filling && acc > 0) {
            unsigned long long off = 0;
            if (tl == j) off = atomicAdd(&out.ctr->range_cursor, static_cast<unsigned long long>(acc));
            off = __shfl_sync(tmask, off, tbase + j);
            if (off + acc > out.range_capacity) {
              const uint32_t idx = __shfl_sync(tmask, my_idx, tbase + j);
              if (tl == j) {
                out.ctr->range_overflow = 1;
                out.unfinished[atomicAdd(&out.ctr->unfinished, 1u)] = idx;
              }
            } else {
              roff = static_cast<uint32_t>(off);
              filling = true;
              cur = t.base + bucket;
              done = false;  // the fill pass, from the head again
            }
          } else if (op == kOpRange && filling) {
            if (tl == j) {
              res_offset = roff;
              res_value = written;
            }
          }
          // lookup: not found (res_found stays 0); delete: nothing left.
        }
        if (done) break;
        v = read_slab<L, kReadOnly>(cur, tl);
      }
    }

    if (active && my_type >= kOpLookup) {
      if ((kOps & kSetLookup) && my_type == kOpLookup) out.found[my_idx] = static_cast<uint8_t>(res_found);
      out.value[my_idx] = res_value;
      if ((kOps & kSetRange) && my_type == kOpRange) out.offset[my_idx] = res_offset;
    }
  }

  const unsigned long long c = warp_sum(static_cast<unsigned long long>(claimed));
  const unsigned long long k = warp_sum(static_cast<unsigned long long>(killed));
  const unsigned long long r = warp_sum(static_cast<unsigned long long>(replaced));
  const unsigned long long l = warp_sum(static_cast<unsigned long long>(linked));
  if (lane == 0) {
    if (l) atomicAdd(&out.ctr->linked, l);
    if (c) atomicAdd(&out.ctr->claimed, c);
    if (k) atomicAdd(&out.ctr->killed, k);
    if (r) atomicAdd(&out.ctr->replaced, r);
  }
}

}  // namespace gpudict::slabhash
