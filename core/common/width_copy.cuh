// Copies between a caller's typed device arrays and a structure's word
// arrays of another width: widening a u32 key or value into a 64-bit word
// (zero-extended), narrowing a word back into the caller's type. The
// library's bulk calls (btree_map, ...) take arrays of their K and V; a
// structure may keep both in one word type (the B-Tree's node word is the
// wider of the two).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "core/common/cuda_check.hpp"
#include "core/common/grid.cuh"

namespace gpudict {

namespace width_detail {

template <class To>
__global__ void widen_kernel(const void* __restrict__ src, int src_bytes, const uint32_t* __restrict__ index,
                             To* __restrict__ dst, uint64_t n) {
  const uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const uint64_t at = index ? index[i] : i;
  dst[i] = src_bytes == 4 ? static_cast<To>(static_cast<const uint32_t*>(src)[at])
                          : static_cast<To>(static_cast<const uint64_t*>(src)[at]);
}

template <class From>
__global__ void narrow_kernel(const From* __restrict__ src, const uint8_t* __restrict__ found, void* __restrict__ dst,
                              int dst_bytes, uint64_t n) {
  const uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const From v = found && !found[i] ? From{0} : src[i];
  if (dst_bytes == 4)
    static_cast<uint32_t*>(dst)[i] = static_cast<uint32_t>(v);
  else
    static_cast<uint64_t*>(dst)[i] = static_cast<uint64_t>(v);
}

template <class B>
__global__ void flags_to_bool_kernel(const uint8_t* __restrict__ src, B* __restrict__ dst, uint64_t n) {
  const uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = src[i] != 0;
}

}  // namespace width_detail

// dst[i] = src[index ? index[i] : i] for i < n, src holding src_bytes-wide
// (4 or 8) unsigned integers, zero-extended into To.
template <class To>
void widen_copy(const void* src, int src_bytes, const uint32_t* index, To* dst, uint64_t n, cudaStream_t s) {
  if (n == 0) return;
  width_detail::widen_kernel<To><<<blocks_for(n, 256), 256, 0, s>>>(src, src_bytes, index, dst, n);
  GPUDICT_CHECK_LAUNCH("widen_kernel");
}

// dst[i] = found[i] ? src[i] : 0 (every i when found is null), truncated to
// dst_bytes (4 or 8).
template <class From>
void narrow_copy(const From* src, const uint8_t* found, void* dst, int dst_bytes, uint64_t n, cudaStream_t s) {
  if (n == 0 || dst == nullptr) return;
  width_detail::narrow_kernel<From><<<blocks_for(n, 256), 256, 0, s>>>(src, found, dst, dst_bytes, n);
  GPUDICT_CHECK_LAUNCH("narrow_kernel");
}

// dst[i] = src[i] != 0: a structure's found flags into the caller's bools.
inline void flags_to_bool(const uint8_t* src, bool* dst, uint64_t n, cudaStream_t s) {
  if (n == 0 || dst == nullptr) return;
  width_detail::flags_to_bool_kernel<bool><<<blocks_for(n, 256), 256, 0, s>>>(src, dst, n);
  GPUDICT_CHECK_LAUNCH("flags_to_bool_kernel");
}

}  // namespace gpudict
