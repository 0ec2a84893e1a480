// The batch kernel: every operation type of the slab hash, served by tiles of
// 4 lanes with warp-cooperative work sharing (seed 004, IV-A).
//
// Each lane brings one operation (or none). A tile of 4 lanes serves the
// operations of its lanes one at a time: the operation's bucket and stored
// key (each lane hashed its own key) are shuffled to the tile, the tile reads
// one slab per step (32 bytes per lane: one 128-byte line), each lane tests
// its 4 pairs (8 keys in the set layout) and a ballot tells the tile where
// the key or the first empty slot is. The eight tiles of a warp step together
// (batch_kernel below says why and how), each on its own operation; a tile
// that has served its 4 lanes takes the next 4 operations.
// --prefetch l2/bulk ask L2 for each new operation's base slab when its lanes
// load it (measured in docs/slabhash.md).
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
    uint32_t x = v.w[1];
#pragma unroll
    for (unsigned q = 1; q < L::kPerLane; ++q)
      if (j == q) x = v.w[2 * q + 1];
    return x;
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

// OR of a value over the tile (xor-shuffles stay within aligned tiles).
__device__ __forceinline__ uint32_t tile_or(uint32_t x, unsigned tmask) {
#pragma unroll
  for (unsigned o = 1; o < kTile; o <<= 1) x |= __shfl_xor_sync(tmask, x, o);
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

// Blocks of 256 threads per SM each kernel is compiled for (-Xptxas -v):
// lookups, counts and map/multimap deletes 32 registers (8 blocks, 64 warps
// per SM), set deletes and ranges 40 (6), inserts 48 (5: a few bytes spill,
// and it measured 5% faster than 4 blocks without spills), inserts with
// deletes 64 (4), the mixed kernel 80 (3).
constexpr int min_blocks(uint32_t ops, bool key_layout) {
  return (ops & ~(kSetLookup | kSetCount)) == 0 || (ops == kSetDelete && !key_layout) ? 8
         : ops == kSetDelete || ops == kSetRange                                     ? 6
         : ops == kSetInsert                                                         ? 5
         : ops == kSetUpdates                                                        ? 4
                                                                                     : 3;
}

// This lane's own operation (it brought it; its tile serves it).
struct LaneOp {
  bool active = false;
  uint32_t type = 0, key = 0, arg = 0, idx = 0, bucket = 0, stored = 0;
  uint32_t found = 0, value = 0, offset = 0;  // results, written when the tile moves on
};

// The operation a tile serves now (the same in all its lanes).
struct TileOp {
  bool busy = false;     // serving operation j of its lanes
  unsigned j = 0;        // the lane of the tile that brought it
  unsigned pending = 0;  // lanes whose operations are still to serve (bit l)
  uint32_t op = 0, stored = 0, bucket = 0, arg = 0;
  Slab* cur = nullptr;   // the slab the next step reads
  uint32_t acc = 0;      // count / range: matches counted
  uint32_t written = 0;  // range: values written
  uint32_t roff = 0;     // range: reserved offset
  bool filling = false;  // range: in the fill pass
  bool claim_out = false;  // an insert's claim (CAS) of the last step is still to be checked
  unsigned claim_j = 0;    // ... for the operation of lane claim_j
};

template <uint32_t kOps>
__device__ __forceinline__ void write_results(const LaneOp& o, const OpsOut& out) {
  if (!o.active || o.type < kOpLookup) return;
  if ((kOps & kSetLookup) && o.type == kOpLookup) out.found[o.idx] = static_cast<uint8_t>(o.found);
  out.value[o.idx] = o.value;
  if ((kOps & kSetRange) && o.type == kOpRange) out.offset[o.idx] = o.offset;
}

// The batch kernel. Every warp runs ONE loop whose every iteration is a step
// of all eight of its tiles: a tile that finished its operation starts the
// next one of its lanes, one that finished all of them takes its next ones
// (the tiles of a persistent grid stride over the batch), then every busy tile
// reads one slab and acts on it. All shuffles and ballots of a step are
// executed by the whole warp with the full mask, outside any branch on the
// operation or its outcome: with a per-tile mask (not a constant) the
// compiler guards each shuffle with a convergence check (MATCH.ANY, REDUX,
// BRA.DIV) that cost more issue slots than the work itself (Nsight Compute on
// the old kernel: 30 instructions per lookup, the ADU pipe 88% busy). Only
// the rare steps a tile takes alone - allocating a slab and linking it - use
// the tile's mask. A step whose operation is done frees the tile at once for
// the next one, so a long chain in one tile does not hold back the others.
//
// Atomics whose results matter are checked one step later, after the next
// slab read has been issued, so that their round trip overlaps it instead of
// stalling the warp: an insert that tried to claim a slot counts as done, and
// if the next step finds the CAS lost, the insert goes back to the tile's
// pending operations and starts again from the head of its chain (a lost
// claim changed nothing); the tile takes no new chunk meanwhile. Deletes
// count the alive bits they cleared the same way.
template <class L, Mode M, uint32_t kOps>
__global__ void __launch_bounds__(kBatchThreads, min_blocks(kOps, !L::kPairs))
    batch_kernel(const __grid_constant__ TableRef t, const __grid_constant__ OpsIn in,
                 const __grid_constant__ OpsOut out) {
  constexpr bool kMulti = M == Mode::Multimap;
  constexpr bool kReadOnly = (kOps & kSetUpdates) == 0;
  constexpr bool kOneType = (kOps & (kOps - 1)) == 0;
  constexpr bool kInserts = (kOps & kSetInsert) != 0;
  constexpr bool kDeletes = (kOps & kSetDelete) != 0;
  constexpr bool kLookups = (kOps & kSetLookup) != 0;
  constexpr bool kCountsOrRanges = (kOps & (kSetCount | kSetRange)) != 0;
  constexpr bool kRanges = (kOps & kSetRange) != 0;
  // Ranks of the hits within the slab: the range fill pass, multimap counts.
  constexpr bool kRanks = kRanges || (kMulti && (kOps & kSetCount) != 0);
  const unsigned lane = lane_id();
  const unsigned tl = lane & (kTile - 1);
  const unsigned tbase = lane & ~(kTile - 1);
  const unsigned tmask = group_mask<kTile>(lane);  // the tile alone (allocation, link)
  const uint32_t tile_id = (blockIdx.x * warps_per_block() + warp_in_block()) * (kWarpSize / kTile) + lane / kTile;
  // Every tile takes kTile operations at a time; the grid's tiles stride over the batch.
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  uint64_t next_chunk = static_cast<uint64_t>(tile_id) * kTile;

  TileAlloc alloc;
  // Per-lane tallies (a lane serves fewer than 2^32 operations), summed over
  // the warp at the end.
  uint32_t claimed = 0, killed = 0, replaced = 0, linked = 0;
  LaneOp me;
  TileOp s;
  // This lane's atomics of the last step whose results are still to be used.
  typename L::ClaimResult cas_old{};
  bool cas_lane = false;  // this lane issued the claim
  uint32_t kill_old = 0, kill_bits = 0;  // delete: the alive mask before, the bits cleared

  for (;;) {
    // A tile with nothing left of its chunk writes its lanes' results and
    // takes its next chunk: each lane loads and hashes its own operation.
    const bool refill = !s.busy && s.pending == 0 && !s.claim_out && next_chunk < in.n;  // tile-uniform
    if (refill) {
      write_results<kOps>(me, out);  // nothing for a lane that has had no operation yet
      const uint64_t i = next_chunk + tl;
      me = LaneOp{};
      me.active = i < in.n;
      me.type = only_type(kOps);
      if (me.active) {
        if constexpr (!kOneType) me.type = in.type ? in.type[i] : in.uniform;
        me.key = in.key[i];
        if constexpr (kInserts) me.arg = in.arg ? in.arg[i] : 0u;
        me.idx = in.index ? in.index[i] : static_cast<uint32_t>(i);
        t.route(me.key, me.bucket, me.stored);
        // Ask L2 for the base slab now: the tile reads it within a few steps.
        if (in.prefetch != kPrefetchOff) prefetch_slab(t.base + me.bucket, in.prefetch == kPrefetchBulk);
      }
      // The chunk's operations are lanes 0 .. min(kTile, n - next_chunk) - 1.
      const uint64_t left = in.n - next_chunk;
      s.pending = left >= kTile ? kTileLanes : (1u << left) - 1u;
      next_chunk += stride;
    }

    // A free tile starts its next operation: its key, bucket, type and value
    // come from the lane that brought it.
    const bool start = !s.busy && s.pending != 0;  // tile-uniform
    if (start) {
      s.j = __ffs(s.pending) - 1;
      s.pending &= s.pending - 1;
    }
    const unsigned src = tbase + s.j;
    const uint32_t x_stored = __shfl_sync(kFullMask, me.stored, src);
    const uint32_t x_bucket = __shfl_sync(kFullMask, me.bucket, src);
    uint32_t x_op = only_type(kOps), x_arg = 0;
    if constexpr (!kOneType) x_op = __shfl_sync(kFullMask, me.type, src);
    if constexpr (kInserts) x_arg = __shfl_sync(kFullMask, me.arg, src);
    if (start) {
      s.busy = true;
      s.stored = x_stored;
      s.bucket = x_bucket;
      s.op = x_op;
      s.arg = x_arg;
      s.cur = t.base + x_bucket;
      s.acc = s.written = s.roff = 0;
      s.filling = false;
    }
    // Done when every tile is past the end of the batch with no claim to check.
    if (!__any_sync(kFullMask, s.busy || s.claim_out)) break;

    // The step: every busy tile reads one slab; the warp-wide collectives of
    // what it holds.
    LaneWords v{};
    if (s.busy) v = read_slab<L, kReadOnly>(s.cur, tl);

    // The last step's atomics, now that this step's read is on its way.
    if constexpr (kInserts) {
      const bool won = cas_lane && L::won(cas_old);
      claimed += won ? 1u : 0u;
      cas_lane = false;
      const unsigned won_lanes = tile_ballot(kFullMask, tbase, won);
      if (s.claim_out && won_lanes == 0) s.pending |= 1u << s.claim_j;  // lost: serve it again
      s.claim_out = false;
    }
    if constexpr (kDeletes) {
      killed += __popc(kill_old & kill_bits);
      kill_bits = 0;
    }
    const uint32_t state = tile_state(v, kFullMask, tbase);
    const uint32_t next = tile_next(v, kFullMask, tbase);
    const LaneMatch m = s.busy ? match_slots<L>(v, tl, s.stored, state) : LaneMatch{0u, 0u};
    const unsigned hit_lanes = tile_ballot(kFullMask, tbase, m.hit != 0);
    unsigned empty_lanes = 0;
    if constexpr (kInserts) empty_lanes = tile_ballot(kFullMask, tbase, m.empty != 0);
    uint32_t first_value = 0;  // lookup: the value of the first hit
    if constexpr (kLookups)
      first_value = __shfl_sync(kFullMask, value_at<L>(v, m.hit ? __ffs(m.hit) - 1 : 0),
                                tbase + (hit_lanes ? __ffs(hit_lanes) - 1 : 0));
    TileHits<L> h{};
    if constexpr (kRanks) h = tile_hits<L>(m.hit, tl, kFullMask, tbase);
    uint32_t slab_hits = 0;  // multimap delete: every alive slot with the key in this slab
    if constexpr (kMulti && kDeletes) slab_hits = tile_or(m.hit << (tl * L::kPerLane), kFullMask);

    // What the step does for the tile's operation (no warp collectives here:
    // the tiles take different branches).
    bool done = false;
    bool at_end = false;  // the chain is exhausted for this operation
    if (s.busy) {
      bool advance = false;  // go on to the next slab of the chain
      const uint32_t op = s.op;
      if (op == kOpLookup) {
        if constexpr (kLookups) {
          if (hit_lanes) {
            if (tl == s.j) {
              me.found = 1;
              me.value = first_value;
            }
            done = true;
          } else {
            advance = true;
          }
        }
      } else if (op == kOpCount || (op == kOpRange && !s.filling)) {
        if constexpr (kCountsOrRanges) {
          if (!kMulti) {
            if (hit_lanes) {
              s.acc = 1;
              at_end = true;
            } else {
              advance = true;
            }
          } else {
            s.acc += h.total;
            advance = true;
          }
        }
      } else if (op == kOpRange) {  // fill pass
        if constexpr (kRanges) {
          const uint32_t room = s.acc - s.written;
#pragma unroll
          for (unsigned q = 0; q < L::kPerLane; ++q)
            if (((m.hit >> q) & 1u) && h.rank[q] < room)
              out.range_values[s.roff + s.written + h.rank[q]] = value_at<L>(v, q);
          s.written += h.total < room ? h.total : room;
          if (s.written == s.acc)
            at_end = true;
          else
            advance = true;
        }
      } else if (op == kOpDelete) {
        if constexpr (kDeletes) {
          if (hit_lanes) {
            if (!kMulti) {
              // The key is in at most one alive slot (map/set uniqueness).
              const unsigned w = __ffs(hit_lanes) - 1;
              if (tl == w) {
                kill_bits = 1u << (w * L::kPerLane + (__ffs(m.hit) - 1));
                kill_old = L::kill(s.cur, kill_bits);
              }
              done = true;
            } else {
              // Every alive slot with the key in this slab, with one atomic.
              if (tl == 0) {
                kill_bits = slab_hits;
                kill_old = L::kill(s.cur, kill_bits);
              }
              advance = true;
            }
          } else {
            advance = true;
          }
        }
      } else if (op == kOpInsert) {
        if constexpr (kInserts) {
          if (!kMulti && hit_lanes) {
            // REPLACE: the key is alive here (and nowhere else).
            const unsigned w = __ffs(hit_lanes) - 1;
            if (tl == w) {
              L::replace(s.cur, w * L::kPerLane + (__ffs(m.hit) - 1), s.stored, s.arg);
              ++replaced;
            }
            done = true;
          } else if (empty_lanes) {
            // The first empty slot of the chain (every earlier slab is full):
            // claim it. The next step checks the CAS; lost (someone claimed
            // that slot first), the insert starts again from the head of the
            // chain (which may now hold this very key).
            const unsigned w = __ffs(empty_lanes) - 1;
            if (tl == w) {
              cas_old = L::claim(s.cur, w * L::kPerLane + (__ffs(m.empty) - 1), s.stored, s.arg);
              cas_lane = true;
            }
            s.claim_out = true;
            s.claim_j = s.j;
            done = true;
          } else if (next != kNullSlab) {
            s.cur = t.pool.slab(next);
          } else {
            // The tail is full: the tile alone allocates a slab and links it.
            const uint32_t fresh = tile_allocate(alloc, t.pool, tile_id, tl, tmask, tbase);
            if (fresh == kNullSlab) {
              if (tl == s.j) out.unfinished[atomicAdd(&out.ctr->unfinished, 1u)] = me.idx;
              done = true;
            } else {
              uint32_t now = 0;
              if (tl == kMetaLane) now = L::link(s.cur, state, fresh);
              now = __shfl_sync(tmask, now, tbase + kMetaLane);
              // Lost the link: the fresh slab was never reachable and is
              // still pristine; return it.
              if (now != fresh && tl == 0) free_slab(t.pool, fresh);
              if (now == fresh && tl == 0) ++linked;
              s.cur = t.pool.slab(now);
            }
          }
        }
      }
      if (op > kOpRange || !((kOps >> op) & 1u)) done = true;  // not a type of this kernel (never launched so)

      if (advance) {
        if (next == kNullSlab)
          at_end = true;
        else
          s.cur = t.pool.slab(next);
      }
      if (at_end) {
        done = true;
        if (op == kOpCount) {
          if (tl == s.j) me.value = s.acc;
        } else if (op == kOpRange && s.filling) {
          if (tl == s.j) {
            me.offset = s.roff;
            me.value = s.written;
          }
        }
        // lookup: not found (found stays 0); delete: nothing left; a range's
        // count pass: the reservation below.
      }
    }

    if constexpr (kRanges) {
      // A range's count pass found acc values: one atomicAdd reserves room
      // for them, then the fill pass walks the chain again from its head.
      const bool reserve = s.busy && at_end && s.op == kOpRange && !s.filling && s.acc > 0;  // tile-uniform
      unsigned long long off = 0;
      if (reserve && tl == s.j) off = atomicAdd(&out.ctr->range_cursor, static_cast<unsigned long long>(s.acc));
      off = __shfl_sync(kFullMask, off, tbase + s.j);
      if (reserve) {
        if (off + s.acc > out.range_capacity) {
          if (tl == s.j) {
            out.ctr->range_overflow = 1;
            out.unfinished[atomicAdd(&out.ctr->unfinished, 1u)] = me.idx;
          }
        } else {
          s.roff = static_cast<uint32_t>(off);
          s.filling = true;
          s.cur = t.base + s.bucket;
          done = false;
        }
      }
    }
    if (done) s.busy = false;
  }
  write_results<kOps>(me, out);
  killed += __popc(kill_old & kill_bits);  // the last step's deletes

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
