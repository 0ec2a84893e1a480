// Host entry points of the slab hash's kernels (each defined in its own .cu).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "core/slabhash/table_ref.cuh"

namespace gpudict::slabhash {

// batch_kernels.cu: one pass of operations (any mix, or `in.uniform`).
// `ops`: the operation types the pass holds (bit 1 << type); the kernel
// compiled for the smallest covering set runs. Without inserts and deletes
// nothing else may touch the table meanwhile (read-only loads).
void launch_batch(Mode mode, uint32_t ops, const TableRef& t, const OpsIn& in, const OpsOut& out,
                  cudaStream_t stream);

// Loads the kernel launch_batch(mode, ops, ...) will run and computes its
// grid, so that neither happens inside a timed region (CUDA loads kernels
// lazily, at their first use).
void prepare_batch(Mode mode, uint32_t ops);
void prepare_flush(Mode mode);

// flush.cu: FLUSH of every chain (buckets + 1 of them); adds the alive pairs
// it keeps to *live. Runs alone on the table.
void launch_flush(Mode mode, const TableRef& t, unsigned long long* live, cudaStream_t stream);

// build.cu: marks the last occurrence of each key in sorted (key, index)
// runs and compacts those pairs into (out_keys, out_values); *count gets
// their number.
void launch_last_of_runs(const uint32_t* sorted_keys, const uint32_t* sorted_index, const uint32_t* values,
                         uint64_t n, uint32_t* out_keys, uint32_t* out_values, unsigned long long* count,
                         cudaStream_t stream);

// build.cu: out[i] = i.
void launch_iota(uint32_t* out, uint64_t n, cudaStream_t stream);

}  // namespace gpudict::slabhash
