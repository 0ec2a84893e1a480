// A 32-bit integer mixer (xor-shift-multiply, constants of Chris Wellons'
// "lowbias32"): every input bit affects every output bit, cheaply. For
// choices that must look random without being a keyed hash: the slab
// allocator's resident-block choice, the LSM lookup filters' words and bits.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace gpudict {

__host__ __device__ __forceinline__ uint32_t mix32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7FEB352Du;
  x ^= x >> 15;
  x *= 0x846CA68Bu;
  x ^= x >> 16;
  return x;
}

}  // namespace gpudict
