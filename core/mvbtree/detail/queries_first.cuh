// A mixed call of the multiversion tree runs its queries first, on the
// state before the call, then its updates (docs/mvbtree.md, "Concurrent
// batches"): every operation of a mixed call is concurrent with every
// other, so this order is one linearization, and in it each count and range
// reads one state, never a mixture. The pieces: the positions of the
// queries and of the updates (CUB selects), and the queries' results, run
// as a list of those positions, scattered back to the caller's arrays.
#pragma once

#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "core/common/mixed_batch.hpp"

namespace gpudict::mvbtree {

// Whether operation i is a query (want_query) or an update (!want_query).
struct OpKindIs {
  const uint8_t* ops;
  bool want_query;
  __host__ __device__ bool operator()(uint32_t i) const { return (ops[i] >= 2) == want_query; }
};

// The positions of the n operations whose kind is `want_query`, into pos,
// their number into *count (device), as a CubTemp call.
inline auto select_positions(const uint8_t* ops, bool want_query, uint32_t* pos, unsigned long long* count,
                             uint64_t n, cudaStream_t s) {
  return [=](void* p, size_t& bytes) {
    return cub::DeviceSelect::If(p, bytes, thrust::counting_iterator<uint32_t>(0), pos, count,
                                 static_cast<int64_t>(n), OpKindIs{ops, want_query}, s);
  };
}

// The query list's results (list position i) to the caller's arrays at
// position pos[i]: only the outputs the operation's type writes.
template <class Key, class Value>
__global__ void __launch_bounds__(256) scatter_results_kernel(const uint32_t* pos, uint64_t q, const uint8_t* ops,
                                                              const bool* found, const Value* values,
                                                              const Key* keys, const unsigned long long* counts,
                                                              const unsigned long long* offsets,
                                                              mixed_outputs<Key, Value> out) {
  const uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= q) return;
  const uint32_t p = pos[i];
  switch (static_cast<op_code>(ops[p])) {
    case op_code::successor:
      if (out.keys) out.keys[p] = keys[i];
      [[fallthrough]];
    case op_code::find:
      if (out.found) out.found[p] = found[i];
      if (out.values) out.values[p] = values[i];
      break;
    case op_code::range:
      if (out.offsets) out.offsets[p] = offsets[i];
      [[fallthrough]];
    case op_code::count:
      if (out.counts) out.counts[p] = counts[i];
      break;
    default: break;
  }
}

}  // namespace gpudict::mvbtree
