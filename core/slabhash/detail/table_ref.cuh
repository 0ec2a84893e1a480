// The device view of a slab hash (the "ref" kernels receive by value), its
// universal hash, and the operation inputs and outputs of a batch kernel.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "core/slabhash/detail/slab_alloc.cuh"
#include "core/slabhash/detail/slab_layout.cuh"

namespace gpudict::slabhash {

// h(k) = ((a k + b) mod p) mod B with p = 2^32 - 5 (prime) and fixed a, b
// (docs/slabhash.md). "mod B" is taken as the high half of h * B (Lemire's
// multiply-shift range reduction): the same spread over [0, B) without a
// division. A 64-bit key k = 2^32 hi + lo is hashed as the multilinear
// ((a hi + b) mod p + a2 lo) mod p (Horner over its two halves, one more
// multiply and fold), so keys equal in one half still spread.
struct UniversalHash {
  static constexpr uint32_t kPrime = 4294967291u;  // 2^32 - 5
  uint32_t a = 0x2F72B4C3u;  // any a, a2 in [1, p), b in [0, p)
  uint32_t b = 0x3C6EF372u;
  uint32_t a2 = 0x6C8E9CF5u;

  // x mod p for x < 2^64: 2^32 = 5 (mod p): fold the high half twice, then
  // one subtraction.
  __host__ __device__ __forceinline__ static uint32_t fold(uint64_t x) {
    uint64_t y = (x & 0xFFFFFFFFull) + (x >> 32) * 5u;
    y = (y & 0xFFFFFFFFull) + (y >> 32) * 5u;
    return static_cast<uint32_t>(y >= kPrime ? y - kPrime : y);
  }
  __host__ __device__ __forceinline__ uint32_t mod_p(uint32_t k) const {
    return fold(static_cast<uint64_t>(a) * k + b);
  }
  __host__ __device__ __forceinline__ uint32_t mod_p(uint64_t k) const {
    // (a2 lo + t) < 2^64 for lo < 2^32, t < p.
    return fold(static_cast<uint64_t>(a2) * static_cast<uint32_t>(k) + mod_p(static_cast<uint32_t>(k >> 32)));
  }
  template <class K>
  __host__ __device__ __forceinline__ uint32_t bucket(K k, uint32_t buckets) const {
    static_assert(sizeof(K) == 4 || sizeof(K) == 8, "32- or 64-bit keys");
    uint32_t h;
    if constexpr (sizeof(K) == 4)
      h = mod_p(static_cast<uint32_t>(k));
    else
      h = mod_p(static_cast<uint64_t>(k));
    return static_cast<uint32_t>((static_cast<uint64_t>(h) * buckets) >> 32);
  }
};

// Figures a batch kernel accumulates (one atomic per warp at its end).
struct Counters {
  unsigned long long claimed;       // slots claimed by inserts (new pairs)
  unsigned long long killed;        // alive bits cleared by deletes
  unsigned long long replaced;      // map/set inserts that found their key alive
  unsigned long long linked;        // slabs allocated and linked into a chain
  unsigned long long range_cursor;  // range values reserved so far
  unsigned int unfinished;          // entries in OpsOut::unfinished
  unsigned int exhausted;           // raised by a failed slab allocation
  unsigned int range_overflow;      // a range did not fit the value buffer
  unsigned int pad;
};

// Routing by vertex (core/graph): a 64-bit key u * 2^32 + v (an edge) goes to
// vertex u's own buckets, dir[u] = (first bucket, bucket count), hashed by v
// alone: one small hash table per vertex inside one arena of base slabs
// (Awad's dissertation, ch. 5). A vertex at or beyond `vertices` has no
// buckets: its keys go to the last base slab, which nothing is inserted into
// (the graph grows `vertices` before any insert names such a vertex), so they
// are found nowhere. `vertices` is below 2^32 - 1, so no routed key is the
// empty key (u64 max).
// With `degree`, the batch kernel keeps each vertex's live edges there: +1
// per claim it wins, -1 per alive bit it clears (Awad's dissertation,
// Algorithm 5.1).
struct VertexRoutes {
  const uint2* dir = nullptr;  // null: hash the whole key over all buckets (the slab hash)
  uint32_t vertices = 0;
  uint32_t* degree = nullptr;
};

template <class K>
struct TableRef {
  Slab* base = nullptr;  // buckets + 1 base slabs; the last one is key key_max<K>'s bucket
  uint32_t buckets = 1;  // hashed buckets
  UniversalHash hash;
  PoolRef pool;
  VertexRoutes vertex;  // 64-bit keys only

  // The bucket and the stored key of a user key (slab_layout.cuh).
  __device__ __forceinline__ void route(K key, uint32_t& bucket, K& stored) const {
    if constexpr (sizeof(K) == 8) {
      if (vertex.dir) {  // uniform: a kernel parameter
        const uint32_t u = static_cast<uint32_t>(key >> 32);
        if (u < vertex.vertices) {
          const uint2 d = vertex.dir[u];
          bucket = d.x + hash.bucket(static_cast<uint32_t>(key), d.y);
          stored = key;  // never the empty key: u < vertices < 2^32 - 1
        } else {
          bucket = buckets;  // the empty last slab (stored 0 is not the empty key either)
          stored = kSpecialStoredKey;
        }
        return;
      }
    }
    if (key == kEmptyKeyOf<K>) {
      bucket = buckets;
      stored = kSpecialStoredKey;
    } else {
      bucket = hash.bucket(key, buckets);
      stored = key;
    }
  }
};

// Operation types as the kernels see them (OpType's values).
enum : uint8_t { kOpInsert = 0, kOpDelete = 1, kOpLookup = 2, kOpCount = 3, kOpRange = 4 };

// --prefetch off | l2 | bulk (docs/slabhash.md):
//   l2    every lane asks L2 for its operation's base slab (four 32-byte
//         sector prefetches) when it loads the operation, before its tile
//         serves it;
//   bulk  the same with one 128-byte bulk prefetch (sm_90).
enum : uint8_t { kPrefetchOff = 0, kPrefetchL2 = 1, kPrefetchBulk = 2 };

template <class K, class V>
struct OpsIn {
  const uint8_t* type = nullptr;    // null: every operation is `uniform`
  const K* key = nullptr;
  const V* arg = nullptr;           // insert: value (null: 0)
  const uint32_t* index = nullptr;  // the operation's position in the batch (null: i)
  uint64_t n = 0;
  uint8_t uniform = kOpLookup;
  // --prefetch: how a tile's next base slabs are fetched early.
  uint8_t prefetch = kPrefetchOff;
};

// found, value and offset are cleared by the host before a batch's passes: a
// lookup that finds nothing writes nothing.
template <class V>
struct OpsOut {
  uint8_t* found = nullptr;        // lookup
  V* value = nullptr;              // lookup: value; count: pairs; range: pairs written
  uint32_t* offset = nullptr;      // range: first value in range_values
  V* range_values = nullptr;
  unsigned long long range_capacity = 0;
  uint32_t* unfinished = nullptr;  // batch positions of operations to run again
  Counters* ctr = nullptr;
};

}  // namespace gpudict::slabhash
