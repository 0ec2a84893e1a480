// The batch kernel: every operation type of the slab hash, served by tiles of
// 4 lanes with warp-cooperative work sharing (the slab hash paper, IV-A).
//
// Each lane loads and hashes one operation of its warp's chunk of 32. A tile
// of 4 lanes serves one operation at a time: its bucket and stored key are
// shuffled to the tile, the tile reads one slab per step (32 bytes per lane:
// one 128-byte line), each lane tests its 4 pairs (8 keys in the set layout)
// and a ballot tells the tile where the key or the first empty slot is. The
// eight tiles of a warp step together (batch_kernel below says why and how),
// each on its own operation; a free tile takes the chunk's next one.
// --prefetch l2/bulk ask L2 for each new operation's base slab when the lane
// holding it loads it (measured in docs/results/slabhash.md, "--prefetch").
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
#include <type_traits>

#include "core/common/warp.cuh"
#include "core/slabhash/detail/slab_alloc.cuh"
#include "core/slabhash/detail/slab_layout.cuh"
#include "core/slabhash/detail/table_ref.cuh"

namespace gpudict::slabhash {

inline constexpr int kBatchThreads = 256;

// This lane's slots of the slab just read: bit j = slot j of the lane.
struct LaneMatch {
  uint32_t hit;    // holds the stored key and is alive
  uint32_t empty;  // empty (the key is kEmptyKeyOf<the key type>)
};

template <class L>
__device__ __forceinline__ LaneMatch match_slots(const LaneWords& v, unsigned tl, typename L::Key stored,
                                                 uint32_t state) {
  using K = typename L::Key;
  LaneMatch m{0u, 0u};
#pragma unroll
  for (unsigned j = 0; j < L::kPerLane; ++j) {
    if (!L::valid(tl, j)) continue;
    const K k = L::key(v, j);
    const unsigned slot = tl * L::kPerLane + j;
    if (k == stored && ((state >> slot) & 1u)) m.hit |= 1u << j;
    if (k == kEmptyKeyOf<K>) m.empty |= 1u << j;
  }
  return m;
}

// Value of slot j (runtime) of this lane, without indexing registers dynamically.
template <class L>
__device__ __forceinline__ typename L::Value value_at(const LaneWords& v, unsigned j) {
  if constexpr (L::kPairs) {
    typename L::Value x = L::value(v, 0);
#pragma unroll
    for (unsigned q = 1; q < L::kPerLane; ++q)
      if (j == q) x = L::value(v, q);
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
  kSetPoint = kSetUpdates | kSetLookup,  // the point operations: a concurrent batch without counts or ranges
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
// and it measured faster than 4 blocks without spills), inserts with
// deletes 64 (4), the mixed kernel 80 (3). These are the u32/u32 figures.
constexpr int min_blocks(uint32_t ops, bool key_layout) {
  return (ops & ~(kSetLookup | kSetCount)) == 0 || (ops == kSetDelete && !key_layout) ? 8
         : ops == kSetDelete || ops == kSetRange                                     ? 6
         : ops == kSetInsert                                                         ? 5
         : ops == kSetUpdates || ops == kSetPoint                                    ? 4
                                                                                     : 3;
}
// The wide layouts (u64 keys or values) keep 64-bit keys, values and insert
// fields, and for 16-byte slots a 128-bit claim result, in the same
// variables; at u32/u32's budgets their lookups, counts and deletes spilled
// (10 to 70 bytes). Budgets: lookups, counts and deletes 6 blocks (40
// registers), ranges 5 (48), inserts 4 (64; 64 to 92 bytes spill, as the
// u32/u32 inserts do at 48), inserts with deletes 3 (80), the mixed kernel 2
// (it uses about 90). Not yet measured against other budgets; the -Xptxas -v
// figures are in docs/results/slabhash.md ("Registers").
constexpr int min_blocks_wide(uint32_t ops, bool) {
  return (ops & ~(kSetLookup | kSetCount)) == 0 || ops == kSetDelete ? 6
         : ops == kSetRange                                          ? 5
         : ops == kSetInsert                                         ? 4
         : ops == kSetUpdates || ops == kSetPoint                    ? 3
                                                                     : 2;
}

// An operation as a lane holds it for its warp's chunk (any tile of the warp
// may serve it) and as a tile serves it (the same in all its lanes).
template <class K, class V>
struct OpState {
  uint32_t op = 0;  // the type; unset in kernels of one type (they know it)
  K stored = 0;
  uint32_t bucket = 0;
  V arg = 0;
  uint32_t idx = 0;
};

// The operation a tile serves now.
template <class K, class V>
struct TileOp {
  bool busy = false;
  OpState<K, V> o;
  Slab* cur = nullptr;   // the slab the next step reads
  uint32_t acc = 0;      // count / range: matches counted
  uint32_t written = 0;  // range: values written
  uint32_t roff = 0;     // range: reserved offset
  bool filling = false;  // range: in the fill pass
  bool claim_out = false;  // an insert's claim (CAS) of the last step is still to be checked
  bool retry = false;      // a claim was lost: serve that insert again as soon as the tile is free
};

// An insert kept by its tile while its claim is checked (and, lost, until it
// is served again) without 4 more registers per lane: lane tl of the tile
// holds field tl of it. A field is 32 bits at u32/u32, else 64 (a u64 key or
// value).
template <class K, class V>
using InsertField = std::conditional_t<sizeof(K) == 4 && sizeof(V) == 4, uint32_t, uint64_t>;
template <class K, class V>
__device__ __forceinline__ InsertField<K, V> insert_field(const OpState<K, V>& o, unsigned tl) {
  using F = InsertField<K, V>;
  return tl == 0 ? static_cast<F>(o.stored) : tl == 1 ? static_cast<F>(o.bucket) : tl == 2 ? static_cast<F>(o.arg)
                                                                                           : static_cast<F>(o.idx);
}

// The batch kernel. Every warp runs ONE loop whose every iteration is a step
// of all eight of its tiles: every free tile starts the next operation of the
// warp's chunk (32 operations, one loaded and hashed by each lane; the warps
// of a persistent grid stride over the batch), then every busy tile reads one
// slab and acts on it. The warp loads its next chunk, all lanes at once, when
// every operation of the last one has started: tiles that each loaded their
// own 4 operations took turns doing so in divergent branches the warp paid
// for in almost every step (a large share of the lookup kernel's
// instructions in Nsight Compute; docs/slabhash.md). A tile writes its
// operation's results itself when done.
// All shuffles and ballots of a step are executed by the whole warp with the
// full mask, outside any branch on the operation or its outcome: with a
// per-tile mask (not a constant) the compiler guards each shuffle with a
// convergence check (MATCH.ANY, REDUX, BRA.DIV) that cost more issue slots
// than the work itself (the ADU pipe was the kernel's bottleneck; WarpTile
// in core/common/warp.cuh). Only
// the rare steps a tile takes alone - allocating a slab and linking it - use
// the tile's mask. A step whose operation is done frees the tile at once for
// the next one, so a long chain in one tile does not hold back the others.
//
// Atomics whose results matter are checked one step later, after the next
// slab read has been issued, so that their round trip overlaps it instead of
// stalling the warp: an insert that tried to claim a slot counts as done, and
// if the next step finds the CAS lost, the tile serves that insert again as
// soon as it is free, before any new operation, from the head of its chain (a
// lost claim changed nothing). The tile keeps the insert meanwhile in
// insert_field form. Deletes count the alive bits they cleared the same way.
template <class L, Mode M, uint32_t kOps>
__global__ void __launch_bounds__(kBatchThreads, L::kWide ? min_blocks_wide(kOps, !L::kPairs)
                                                          : min_blocks(kOps, !L::kPairs))
    batch_kernel(const __grid_constant__ TableRef<typename L::Key> t,
                 const __grid_constant__ OpsIn<typename L::Key, typename L::Value> in,
                 const __grid_constant__ OpsOut<typename L::Value> out) {
  using K = typename L::Key;
  using V = typename L::Value;
  // Set mode stores no values: the set kernels of the u64-value
  // instantiations neither load nor keep them (u32/u32's keep their code).
  constexpr bool kArgs = L::kPairs || sizeof(V) == 4;
  using F = InsertField<K, std::conditional_t<kArgs, V, K>>;
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

  TileAlloc alloc;
  // Per-lane tallies (a tile serves fewer than 2^32 operations), summed over
  // the warp at the end.
  uint32_t claimed = 0, killed = 0, replaced = 0, linked = 0;
  OpState<K, V> q;  // this lane's operation of the chunk
  TileOp<K, V> s;
  // The warp's chunk (warp-uniform): `count` operations, lane l holding the
  // l-th; the first `started` of them have been taken by a tile. The warps
  // of the grid stride over the batch; next_chunk is where the next starts.
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  uint64_t next_chunk = static_cast<uint64_t>(blockIdx.x) * blockDim.x + warp_in_block() * kWarpSize;
  uint32_t count = 0, started = 0;
  // This lane's atomics of the last step whose results are still to be used.
  typename L::ClaimResult cas_old{};
  bool cas_lane = false;  // this lane issued the claim
  F claim_w = 0, again_w = 0;  // insert_field of the insert claimed, of the one lost
  uint32_t kill_old = 0, kill_bits = 0;  // delete: the alive mask before, the bits cleared

  for (;;) {
    // Every operation of the chunk has started: the warp loads the next one.
    if (started == count && next_chunk < in.n) {  // warp-uniform
      const uint64_t i = next_chunk + lane;
      const uint64_t left = in.n - next_chunk;
      count = left < kWarpSize ? static_cast<uint32_t>(left) : kWarpSize;
      started = 0;
      next_chunk += stride;
      if (lane < count) {
        if constexpr (!kOneType) q.op = in.type ? in.type[i] : in.uniform;
        const K key = in.key[i];
        if constexpr (kInserts && kArgs) q.arg = in.arg ? in.arg[i] : V{0};
        q.idx = in.index ? in.index[i] : static_cast<uint32_t>(i);
        t.route(key, q.bucket, q.stored);
        // Ask L2 for the base slab now: a tile reads it within a few steps.
        if (in.prefetch != kPrefetchOff) prefetch_slab(t.base + q.bucket, in.prefetch == kPrefetchBulk);
      }
    }

    // Free tiles start operations: one whose claim was lost serves it again;
    // the others take the chunk's next operations in tile order.
    const bool free_tile = !s.busy && !s.retry;                      // tile-uniform
    const unsigned takers = __ballot_sync(kFullMask, free_tile && tl == 0);  // one bit per tile, at its base
    const uint32_t take = started + __popc(takers & ((1u << tbase) - 1u));
    const bool start = free_tile && take < count;
    started = min(count, started + __popc(takers));
    // (a lane that starts nothing reads any lane: shuffles take `take` mod 32)
    OpState<K, V> x;
    x.stored = __shfl_sync(kFullMask, q.stored, take);
    x.bucket = __shfl_sync(kFullMask, q.bucket, take);
    x.idx = __shfl_sync(kFullMask, q.idx, take);
    if constexpr (!kOneType) x.op = __shfl_sync(kFullMask, q.op, take);
    if constexpr (kInserts && kArgs) x.arg = __shfl_sync(kFullMask, q.arg, take);
    const bool restart = !s.busy && s.retry;  // tile-uniform; only inserts set retry
    if constexpr (kInserts) {
      if (__any_sync(kFullMask, restart)) {  // rare: the fields come from the tile's own lanes
        const K stored = static_cast<K>(__shfl_sync(kFullMask, again_w, tbase + 0));
        const uint32_t bucket = static_cast<uint32_t>(__shfl_sync(kFullMask, again_w, tbase + 1));
        V arg = 0;
        if constexpr (kArgs) arg = static_cast<V>(__shfl_sync(kFullMask, again_w, tbase + 2));
        const uint32_t idx = static_cast<uint32_t>(__shfl_sync(kFullMask, again_w, tbase + 3));
        if (restart) x = OpState<K, V>{kOpInsert, stored, bucket, arg, idx};
      }
    }
    if (start || restart) {
      s.busy = true;
      s.o = x;
      s.retry = false;
      s.cur = t.base + s.o.bucket;
      s.acc = s.written = s.roff = 0;
      s.filling = false;
    }
    // Done when the batch is exhausted and no tile has work or a claim to check.
    if (started == count && next_chunk >= in.n && !__any_sync(kFullMask, s.busy || s.claim_out || s.retry)) break;

    // The step: every busy tile reads one slab; the warp-wide collectives of
    // what it holds.
    LaneWords v{};
    if (s.busy) v = read_slab<L, kReadOnly>(s.cur, tl);

    // The last step's atomics, now that this step's read is on its way.
    if constexpr (kInserts) {
      const bool won = cas_lane && L::won(cas_old);
      claimed += won ? 1u : 0u;
      cas_lane = false;
      if constexpr (sizeof(K) == 8) {
        if (t.vertex.degree) {  // uniform: the graph counts each vertex's new edges
          const uint64_t key = static_cast<uint64_t>(__shfl_sync(kFullMask, claim_w, tbase + 0));  // field 0
          if (won) atomicAdd(t.vertex.degree + (key >> 32), 1u);
        }
      }
      const unsigned won_lanes = tile_ballot(kFullMask, tbase, won);
      if (s.claim_out && won_lanes == 0) {  // lost: serve it again
        s.retry = true;
        again_w = claim_w;
      }
      s.claim_out = false;
    }
    if constexpr (kDeletes) {
      killed += __popc(kill_old & kill_bits);
      kill_bits = 0;
    }
    const uint32_t state = tile_state(v, kFullMask, tbase);
    const uint32_t next = tile_next(v, kFullMask, tbase);
    const LaneMatch m = s.busy ? match_slots<L>(v, tl, s.o.stored, state) : LaneMatch{0u, 0u};
    const unsigned hit_lanes = tile_ballot(kFullMask, tbase, m.hit != 0);
    unsigned empty_lanes = 0;
    if constexpr (kInserts) empty_lanes = tile_ballot(kFullMask, tbase, m.empty != 0);
    V first_value = 0;  // lookup: the value of the first hit
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
    // A kernel of one type knows it at compile time (s.o.op is loop-carried:
    // the compiler cannot prove it constant), so its other branches vanish.
    const uint32_t op = kOneType ? only_type(kOps) : s.o.op;
    if (s.busy) {
      bool advance = false;  // go on to the next slab of the chain
      if (op == kOpLookup) {
        if constexpr (kLookups) {
          if (hit_lanes) {
            if (tl == 0) {
              out.found[s.o.idx] = 1;
              out.value[s.o.idx] = first_value;
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
                if constexpr (sizeof(K) == 8) {
                  // The graph: this delete's outcome now (a wait the slab
                  // hash, whose degree is null, does not take).
                  if (t.vertex.degree && (kill_old & kill_bits))
                    atomicSub(t.vertex.degree + (static_cast<uint64_t>(s.o.stored) >> 32), 1u);
                }
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
              L::replace(s.cur, w * L::kPerLane + (__ffs(m.hit) - 1), s.o.stored, s.o.arg);
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
              cas_old = L::claim(s.cur, w * L::kPerLane + (__ffs(m.empty) - 1), s.o.stored, s.o.arg);
              cas_lane = true;
            }
            s.claim_out = true;
            claim_w = static_cast<F>(insert_field(s.o, tl));
            done = true;
          } else if (next != kNullSlab) {
            s.cur = t.pool.slab(next);
          } else {
            // The tail is full: the tile alone allocates a slab and links it.
            const uint32_t fresh = tile_allocate(alloc, t.pool, tile_id, tl, tmask, tbase);
            if (fresh == kNullSlab) {
              if (tl == 0) out.unfinished[atomicAdd(&out.ctr->unfinished, 1u)] = s.o.idx;
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
          if (tl == 0) out.value[s.o.idx] = s.acc;
        } else if (op == kOpRange && s.filling) {
          if (tl == 0) {
            out.offset[s.o.idx] = s.roff;
            out.value[s.o.idx] = s.written;
          }
        }
        // lookup: not found (nothing written: the host cleared found and
        // value); delete: nothing left; a range's count pass: the reservation
        // below.
      }
    }

    if constexpr (kRanges) {
      // A range's count pass found acc values: one atomicAdd reserves room
      // for them, then the fill pass walks the chain again from its head.
      const bool reserve = s.busy && at_end && op == kOpRange && !s.filling && s.acc > 0;  // tile-uniform
      unsigned long long off = 0;
      if (reserve && tl == 0) off = atomicAdd(&out.ctr->range_cursor, static_cast<unsigned long long>(s.acc));
      off = __shfl_sync(kFullMask, off, tbase);
      if (reserve) {
        if (off + s.acc > out.range_capacity) {
          if (tl == 0) {
            out.ctr->range_overflow = 1;
            out.unfinished[atomicAdd(&out.ctr->unfinished, 1u)] = s.o.idx;
          }
        } else {
          s.roff = static_cast<uint32_t>(off);
          s.filling = true;
          s.cur = t.base + s.o.bucket;
          done = false;
        }
      }
    }
    if (done) s.busy = false;
  }
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
