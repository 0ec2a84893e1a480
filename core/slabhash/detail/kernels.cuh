// Host entry points of the slab hash's kernels (each defined in its own .cu).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "core/slabhash/detail/table_ref.cuh"

namespace gpudict::slabhash {

// The functions below are templates on the key and value types K, V, defined
// for the instantiated pairs <uint32_t, uint32_t>, <uint32_t, uint64_t>,
// <uint64_t, uint64_t> (core/common/key_traits.hpp).

// batch_kernels*.cu: one pass of operations (any mix, or `in.uniform`).
// `ops`: the operation types the pass holds (bit 1 << type); the kernel
// compiled for the smallest covering set runs. Without inserts and deletes
// nothing else may touch the table meanwhile (read-only loads).
template <class K, class V>
void launch_batch(Mode mode, uint32_t ops, const TableRef<K>& t, const OpsIn<K, V>& in, const OpsOut<V>& out,
                  cudaStream_t stream);

// Loads the kernel launch_batch(mode, ops, ...) will run and computes its
// grid, so that neither happens inside a timed region (CUDA loads kernels
// lazily, at their first use).
template <class K, class V>
void prepare_batch(Mode mode, uint32_t ops);
template <class K, class V>
void prepare_flush(Mode mode);

// flush.cu: FLUSH of every chain (buckets + 1 of them); adds the alive pairs
// it keeps to *live. Runs alone on the table.
template <class K, class V>
void launch_flush(Mode mode, const TableRef<K>& t, unsigned long long* live, cudaStream_t stream);

// build.cu: marks the last occurrence of each key in sorted (key, index)
// runs and compacts those pairs into (out_keys, out_values); *count gets
// their number.
template <class K, class V>
void launch_last_of_runs(const K* sorted_keys, const uint32_t* sorted_index, const V* values, uint64_t n, K* out_keys,
                         V* out_values, unsigned long long* count, cudaStream_t stream);

// build.cu: out[i] = i.
void launch_iota(uint32_t* out, uint64_t n, cudaStream_t stream);

}  // namespace gpudict::slabhash
