// Warp-level helpers shared by the GPU structures (device code only).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace gpudict {

inline constexpr unsigned kWarpSize = 32;
inline constexpr unsigned kFullMask = 0xFFFFFFFFu;

// Lane of the calling thread (1-D blocks).
__device__ __forceinline__ unsigned lane_id() { return threadIdx.x & (kWarpSize - 1); }
// Warp of the calling thread within its block, and across the grid.
__device__ __forceinline__ unsigned warp_in_block() { return threadIdx.x / kWarpSize; }
__device__ __forceinline__ unsigned warps_per_block() { return blockDim.x / kWarpSize; }

// Sum over aligned groups of G consecutive lanes (G a power of two, <= 32):
// every lane of a group gets its group's sum. All 32 lanes must call it.
template <int G, class T>
__device__ __forceinline__ T group_sum(T v) {
  static_assert(G >= 1 && G <= 32 && (G & (G - 1)) == 0, "group size must be a power of two <= 32");
#pragma unroll
  for (int offset = G / 2; offset > 0; offset >>= 1) v += __shfl_xor_sync(kFullMask, v, offset);
  return v;
}

template <class T>
__device__ __forceinline__ T warp_sum(T v) {
  return group_sum<32>(v);
}

// Adds every thread's v to *counter with one atomic per block (a counter
// that every warp added to was contended: 32 K atomics on one address cost
// more than the kernels that counted). Every thread of the block must call it
// (it synchronises the block); blockDim.x at most 1024. The closing barrier
// lets a second call reuse the shared slots: without it, warps of the next
// call could overwrite them while thread 0 still sums this one's.
__device__ __forceinline__ void block_add_to(unsigned long long* counter, unsigned long long v) {
  __shared__ unsigned long long s_warp[32];
  v = warp_sum(v);
  if (lane_id() == 0) s_warp[warp_in_block()] = v;
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned long long t = 0;
    for (unsigned w = 0; w < warps_per_block(); ++w) t += s_warp[w];
    if (t) atomicAdd(counter, t);
  }
  __syncthreads();
}

// Lanes of the aligned group of G lanes that holds `lane`, as a mask.
template <int G>
__device__ __forceinline__ unsigned group_mask(unsigned lane) {
  static_assert(G >= 1 && G <= 32 && (G & (G - 1)) == 0, "group size must be a power of two <= 32");
  if constexpr (G == 32) {
    return kFullMask;
  } else {
    return ((1u << G) - 1u) << (lane & ~static_cast<unsigned>(G - 1));
  }
}

// Inclusive prefix sum over the warp's lanes (lane l: v of lanes 0 .. l).
// Every lane of the warp calls it.
template <class T>
__device__ __forceinline__ T warp_inclusive_sum(T v) {
  const unsigned lane = lane_id();
#pragma unroll
  for (unsigned d = 1; d < kWarpSize; d <<= 1) {
    const T y = __shfl_up_sync(kFullMask, v, d);
    if (lane >= d) v += y;
  }
  return v;
}

// An aligned group of G consecutive lanes whose collectives run on the whole
// warp (mask: every lane; width G for shuffles). Every lane of the warp must
// reach each collective, so call them outside tile-divergent branches and
// compute predicated results instead. Why not cg::thread_block_tile<G>: its
// collectives use the tile's own lane mask, known only at run time, and the
// compiler guards each one with convergence checks (MATCH.ANY, REDUX,
// divergent branches) that cost more than the shuffle itself (as profiles
// of the slab hash and B-Tree query kernels showed).
template <unsigned G>
struct WarpTile {
  static_assert(G >= 1 && G <= 32 && (G & (G - 1)) == 0, "group size must be a power of two <= 32");
  unsigned rank;  // lane within the group
  unsigned base;  // the group's first lane in the warp

  __device__ __forceinline__ WarpTile() : rank(lane_id() & (G - 1)), base(lane_id() & ~(G - 1)) {}
  // As cooperative-groups tiles name it, so tile-generic helpers take either.
  __device__ __forceinline__ unsigned thread_rank() const { return rank; }

  // Value of v on the group's lane src (taken modulo G).
  template <class T>
  __device__ __forceinline__ T shfl(T v, int src) const {
    return __shfl_sync(kFullMask, v, src, G);
  }
  // The group's predicates, bit r for lane r of the group.
  __device__ __forceinline__ unsigned ballot(bool pred) const {
    const unsigned all = __ballot_sync(kFullMask, pred);
    if constexpr (G == 32) {
      return all;
    } else {
      return (all >> base) & ((1u << G) - 1u);
    }
  }
};

}  // namespace gpudict
