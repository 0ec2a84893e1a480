// The memory-model primitives of core/common/memory_order.cuh for a node
// word of either width (uint32_t: the u32/u32 tree; uint64_t: trees with a
// 64-bit key or value), and the latch CAS. At 32 bits each one is the
// common primitive itself (the u32 tree compiles to the same instructions
// as before); at 64 bits the same instruction with .u64 / .b64 operands.
//
// Why the seqlock and latch protocol (tree_ref.cuh) holds unchanged with
// 8-byte words: the meta word is read, CASed and released as one naturally
// aligned 8-byte access, which is single-copy atomic on the GPU (PTX memory
// model: an aligned access of up to 8 bytes by one instruction), so a
// reader never sees half a version. The node's other words need no
// atomicity of their own: a snapshot is accepted only when the meta word
// read before and after it (with the same acquire load, fence and relaxed
// load as at 32 bits) is the same unlatched version, which rules out any
// concurrent store to any word of the node, torn or not. A node is never
// read or written as pairs of 32-bit halves.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "core/common/key_traits.hpp"
#include "core/common/memory_order.cuh"

namespace gpudict::btree {

template <class Word>
__device__ __forceinline__ Word ld_acquire_w(const Word* p) {
  if constexpr (sizeof(Word) == 4) {
    return ld_acquire_gpu(p);
  } else {
    unsigned long long v;
    asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return static_cast<Word>(v);
  }
}

template <class Word>
__device__ __forceinline__ Word ld_relaxed_w(const Word* p) {
  if constexpr (sizeof(Word) == 4) {
    return ld_relaxed_gpu(p);
  } else {
    unsigned long long v;
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return static_cast<Word>(v);
  }
}

template <class Word>
__device__ __forceinline__ void st_relaxed_w(Word* p, Word v) {
  if constexpr (sizeof(Word) == 4) {
    st_relaxed_gpu(p, v);
  } else {
    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(static_cast<unsigned long long>(v)) : "memory");
  }
}

template <class Word>
__device__ __forceinline__ void st_release_w(Word* p, Word v) {
  if constexpr (sizeof(Word) == 4) {
    st_release_gpu(p, v);
  } else {
    asm volatile("st.release.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(static_cast<unsigned long long>(v)) : "memory");
  }
}

// atomicCAS on a node word (CUDA's 64-bit atomics take unsigned long long;
// uint64_t is unsigned long on Linux).
template <class Word>
__device__ __forceinline__ Word cas_w(Word* p, Word compare, Word value) {
  using A = typename KeyTraits<Word>::atomic_type;
  return static_cast<Word>(
      atomicCAS(reinterpret_cast<A*>(p), static_cast<A>(compare), static_cast<A>(value)));
}

// N consecutive words (a lane's slice of a node), relaxed: at 32 bits the
// common vector loads (1, 2 or a multiple of 4 words); at 64 bits 16-byte
// v2.u64 loads (N = 1 or even), each element an aligned 8-byte access.
template <int N, class Word>
__device__ __forceinline__ void ld_relaxed_vec_w(const Word* p, Word (&w)[N]) {
  if constexpr (sizeof(Word) == 4) {
    ld_relaxed_gpu_vec<N>(p, w);
  } else {
    static_assert(N == 1 || N % 2 == 0, "1 or an even number of 8-byte words");
    if constexpr (N == 1) {
      w[0] = ld_relaxed_w(p);
    } else {
#pragma unroll
      for (int q = 0; q < N; q += 2) {
        unsigned long long a, b;
        asm volatile("ld.relaxed.gpu.global.v2.u64 {%0, %1}, [%2];" : "=l"(a), "=l"(b) : "l"(p + q) : "memory");
        w[q] = static_cast<Word>(a);
        w[q + 1] = static_cast<Word>(b);
      }
    }
  }
}

// The first M words of w to p, relaxed (M as st_relaxed_gpu_vec takes it
// at 32 bits; 1 or even at 64).
template <int N, int M = N, class Word>
__device__ __forceinline__ void st_relaxed_vec_w(Word* p, const Word (&w)[N]) {
  if constexpr (sizeof(Word) == 4) {
    st_relaxed_gpu_vec<N, M>(p, w);
  } else {
    static_assert(M <= N && (M == 1 || M % 2 == 0), "1 or an even number of 8-byte words");
    if constexpr (M == 1) {
      st_relaxed_w(p, w[0]);
    } else {
#pragma unroll
      for (int q = 0; q < M; q += 2)
        asm volatile("st.relaxed.gpu.global.v2.u64 [%0], {%1, %2};" ::"l"(p + q),
                     "l"(static_cast<unsigned long long>(w[q])), "l"(static_cast<unsigned long long>(w[q + 1]))
                     : "memory");
    }
  }
}

// N consecutive words through the read-only cache (memory no thread writes
// while the kernel runs).
template <int N, class Word>
__device__ __forceinline__ void ld_readonly_vec_w(const Word* p, Word (&w)[N]) {
  if constexpr (sizeof(Word) == 4) {
    ld_readonly_vec<N>(p, w);
  } else {
    static_assert(N == 1 || N % 2 == 0, "1 or an even number of 8-byte words");
    if constexpr (N == 1) {
      w[0] = static_cast<Word>(__ldg(reinterpret_cast<const unsigned long long*>(p)));
    } else {
#pragma unroll
      for (int q = 0; q < N; q += 2) {
        const ulonglong2 v = __ldg(reinterpret_cast<const ulonglong2*>(p + q));
        w[q] = static_cast<Word>(v.x);
        w[q + 1] = static_cast<Word>(v.y);
      }
    }
  }
}

// A whole node (32 words) read by one thread through the read-only cache:
// at 32 bits ld_readonly_line (one 128-byte line, eight 16-byte loads with
// the .L2::128B hint); at 64 bits sixteen 16-byte loads with the
// .L2::256B hint (the node is one 256-byte block). Only for memory that no
// thread writes while the kernel runs.
template <class Word>
__device__ __forceinline__ void ld_readonly_node(const Word* p, Word (&w)[32]) {
  if constexpr (sizeof(Word) == 4) {
    ld_readonly_line(p, w);
  } else {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#pragma unroll
    for (int q = 0; q < 32; q += 2) {
      unsigned long long a, b;
      asm("ld.global.nc.L2::256B.v2.u64 {%0, %1}, [%2];" : "=l"(a), "=l"(b) : "l"(p + q));
      w[q] = static_cast<Word>(a);
      w[q + 1] = static_cast<Word>(b);
    }
#else
    ld_readonly_vec_w<32>(p, w);
#endif
  }
}

}  // namespace gpudict::btree
