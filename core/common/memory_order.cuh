// Memory-model primitives for structures that device threads modify while
// others read them (the B-Tree, the slab hash). Each is one PTX
// instruction with an explicit order and scope, so the code states which
// ordering it relies on instead of leaning on `volatile` or on whatever the
// compiler emits for a plain access:
//   ld/st .relaxed.gpu   a "strong" access at device scope: it never reads a
//                        stale L1 line and never races in the PTX model's
//                        sense; no ordering with other addresses
//   ld .acquire.gpu      later accesses of this thread are not performed
//                        before it (the reader side of a release/acquire pair)
//   st .release.gpu      earlier accesses of this thread are performed before
//                        it (the writer side)
//   fence.acq_rel.gpu    orders this thread's accesses before the fence with
//                        those after it; a (load; fence) observing a
//                        (fence; store) synchronises the two threads
// Vector forms load or store a thread's whole slice of a 128-byte line in one
// instruction (the slice is naturally aligned by the callers).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace gpudict {

__device__ __forceinline__ uint32_t ld_acquire_gpu(const uint32_t* p) {
  uint32_t v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

__device__ __forceinline__ uint32_t ld_relaxed_gpu(const uint32_t* p) {
  uint32_t v;
  asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

__device__ __forceinline__ void st_relaxed_gpu(uint32_t* p, uint32_t v) {
  asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

__device__ __forceinline__ void st_release_gpu(uint32_t* p, uint32_t v) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

__device__ __forceinline__ void fence_acq_rel_gpu() { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }

// W consecutive 32-bit words (W = 1, 2 or a multiple of 4: 16-byte loads;
// p aligned to min(4 W, 16) bytes), relaxed.
template <int W>
__device__ __forceinline__ void ld_relaxed_gpu_vec(const uint32_t* p, uint32_t (&w)[W]) {
  static_assert(W == 1 || W == 2 || W % 4 == 0, "1, 2 or a multiple of 4 words");
  if constexpr (W % 4 == 0) {
#pragma unroll
    for (int q = 0; q < W; q += 4)
      asm volatile("ld.relaxed.gpu.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                   : "=r"(w[q]), "=r"(w[q + 1]), "=r"(w[q + 2]), "=r"(w[q + 3])
                   : "l"(p + q)
                   : "memory");
  } else if constexpr (W == 2) {
    asm volatile("ld.relaxed.gpu.global.v2.u32 {%0, %1}, [%2];" : "=r"(w[0]), "=r"(w[1]) : "l"(p) : "memory");
  } else {
    w[0] = ld_relaxed_gpu(p);
  }
}

// The first N words of w (N = 1, 2 or a multiple of 4; default all of
// them) to p, relaxed; 16-byte stores for multiples of 4.
template <int W, int N = W>
__device__ __forceinline__ void st_relaxed_gpu_vec(uint32_t* p, const uint32_t (&w)[W]) {
  static_assert(N <= W && (N == 1 || N == 2 || N % 4 == 0), "1, 2 or a multiple of 4 words");
  if constexpr (N % 4 == 0) {
#pragma unroll
    for (int q = 0; q < N; q += 4)
      asm volatile("st.relaxed.gpu.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p + q), "r"(w[q]), "r"(w[q + 1]),
                   "r"(w[q + 2]), "r"(w[q + 3])
                   : "memory");
  } else if constexpr (N == 2) {
    asm volatile("st.relaxed.gpu.global.v2.u32 [%0], {%1, %2};" ::"l"(p), "r"(w[0]), "r"(w[1]) : "memory");
  } else {
    st_relaxed_gpu(p, w[0]);
  }
}

// W consecutive words through the read-only (non-coherent) cache: only for
// memory that no thread writes while the kernel runs.
template <int W>
__device__ __forceinline__ void ld_readonly_vec(const uint32_t* p, uint32_t (&w)[W]) {
  static_assert(W == 1 || W == 2 || W % 4 == 0, "1, 2 or a multiple of 4 words");
  if constexpr (W % 4 == 0) {
#pragma unroll
    for (int q = 0; q < W; q += 4) {
      const uint4 v = __ldg(reinterpret_cast<const uint4*>(p + q));
      w[q] = v.x;
      w[q + 1] = v.y;
      w[q + 2] = v.z;
      w[q + 3] = v.w;
    }
  } else if constexpr (W == 2) {
    const uint2 v = __ldg(reinterpret_cast<const uint2*>(p));
    w[0] = v.x;
    w[1] = v.y;
  } else {
    w[0] = __ldg(p);
  }
}

// One 128-byte line (32 words, 128-byte aligned) read by one thread through
// the read-only cache, in eight 16-byte loads, each with the hint that the
// L2 fetch the whole 128-byte line from DRAM (.L2::128B, sm_75 and later)
// rather than only the sectors requested so far. Only for memory that no
// thread writes while the kernel runs (no volatile, no memory clobber: the
// compiler may move or merge these loads). The B-Tree's point queries use it
// (measured slower without the hint: docs/btree.md, "Point queries from the
// root").
__device__ __forceinline__ void ld_readonly_line(const uint32_t* p, uint32_t (&w)[32]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 750
#pragma unroll
  for (int q = 0; q < 32; q += 4)
    asm("ld.global.nc.L2::128B.v4.u32 {%0, %1, %2, %3}, [%4];"
        : "=r"(w[q]), "=r"(w[q + 1]), "=r"(w[q + 2]), "=r"(w[q + 3])
        : "l"(p + q));
#else
  ld_readonly_vec<32>(p, w);
#endif
}

}  // namespace gpudict
