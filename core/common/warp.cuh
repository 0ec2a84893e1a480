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

}  // namespace gpudict
