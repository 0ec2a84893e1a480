// Launches of the batch kernel (tile_ops.cuh): per mode, one instantiation
// per operation-type set (pure lookups, counts, ranges, inserts, deletes,
// updates, point operations, everything); a batch runs the smallest set
// that covers its types. Included by one .cu per (key, value) width
// (batch_kernels*.cu), which instantiates launch_batch and prepare_batch for
// it, so that the widths compile in parallel.
#pragma once

#include <type_traits>

#include "core/common/cuda_check.hpp"
#include "core/common/grid.cuh"
#include "core/slabhash/detail/kernels.cuh"
#include "core/slabhash/detail/tile_ops.cuh"

namespace gpudict::slabhash {

namespace batch_detail {
template <class L, Mode M, uint32_t kOps>
void launch(const TableRef<typename L::Key>& t, const OpsIn<typename L::Key, typename L::Value>& in,
            const OpsOut<typename L::Value>& out, cudaStream_t stream) {
  if (in.n == 0) return;
  auto kernel = batch_kernel<L, M, kOps>;
  // Persistent grid: each warp takes 32 operations at a time and keeps its
  // tiles' resident allocator blocks across them.
  const unsigned grid = persistent_grid(kernel, kBatchThreads, 0, in.n, kBatchThreads);
  kernel<<<grid, kBatchThreads, 0, stream>>>(t, in, out);
  GPUDICT_CHECK_LAUNCH("slabhash batch kernel");
}

template <class L, Mode M, uint32_t kOps>
void prepare() {
  (void)resident_blocks(batch_kernel<L, M, kOps>, kBatchThreads, 0);
}

// The smallest instantiated operation set that covers `ops`: a set of its
// own, the point operations (inserts, deletes, lookups in any combination),
// else everything.
inline uint32_t covering_set(uint32_t ops) {
  switch (ops) {
    case kSetLookup:
    case kSetCount:
    case kSetRange:
    case kSetInsert:
    case kSetDelete:
    case kSetUpdates:
      return ops;
    default:
      return (ops & ~static_cast<uint32_t>(kSetPoint)) == 0 ? static_cast<uint32_t>(kSetPoint)
                                                            : static_cast<uint32_t>(kSetAll);
  }
}

// f(std::integral_constant<uint32_t, S>) for the covering set S of `ops`.
template <class F>
void with_covering_set(uint32_t ops, F&& f) {
  switch (covering_set(ops)) {
    case kSetLookup: f(std::integral_constant<uint32_t, kSetLookup>{}); break;
    case kSetCount: f(std::integral_constant<uint32_t, kSetCount>{}); break;
    case kSetRange: f(std::integral_constant<uint32_t, kSetRange>{}); break;
    case kSetInsert: f(std::integral_constant<uint32_t, kSetInsert>{}); break;
    case kSetDelete: f(std::integral_constant<uint32_t, kSetDelete>{}); break;
    case kSetUpdates: f(std::integral_constant<uint32_t, kSetUpdates>{}); break;
    case kSetPoint: f(std::integral_constant<uint32_t, kSetPoint>{}); break;
    default: f(std::integral_constant<uint32_t, kSetAll>{}); break;
  }
}

template <class L, Mode M>
void prepare_mode(uint32_t ops) {
  with_covering_set(ops, [](auto set) { prepare<L, M, decltype(set)::value>(); });
}

template <class L, Mode M>
void launch_mode(uint32_t ops, const TableRef<typename L::Key>& t, const OpsIn<typename L::Key, typename L::Value>& in,
                 const OpsOut<typename L::Value>& out, cudaStream_t stream) {
  with_covering_set(ops, [&](auto set) { launch<L, M, decltype(set)::value>(t, in, out, stream); });
}

}  // namespace batch_detail

template <class K, class V>
void prepare_batch(Mode mode, uint32_t ops) {
  using namespace batch_detail;
  switch (mode) {
    case Mode::Map: prepare_mode<LayoutFor<K, V, Mode::Map>, Mode::Map>(ops); break;
    case Mode::Multimap: prepare_mode<LayoutFor<K, V, Mode::Multimap>, Mode::Multimap>(ops); break;
    case Mode::Set: prepare_mode<LayoutFor<K, V, Mode::Set>, Mode::Set>(ops); break;
  }
}

template <class K, class V>
void launch_batch(Mode mode, uint32_t ops, const TableRef<K>& t, const OpsIn<K, V>& in, const OpsOut<V>& out,
                  cudaStream_t stream) {
  using namespace batch_detail;
  switch (mode) {
    case Mode::Map: launch_mode<LayoutFor<K, V, Mode::Map>, Mode::Map>(ops, t, in, out, stream); break;
    case Mode::Multimap: launch_mode<LayoutFor<K, V, Mode::Multimap>, Mode::Multimap>(ops, t, in, out, stream); break;
    case Mode::Set: launch_mode<LayoutFor<K, V, Mode::Set>, Mode::Set>(ops, t, in, out, stream); break;
  }
}

// The instantiations one .cu compiles.
#define GPUDICT_SLABHASH_BATCH_KERNELS(K, V)                                                                       \
  template void prepare_batch<K, V>(Mode, uint32_t);                                                               \
  template void launch_batch<K, V>(Mode, uint32_t, const TableRef<K>&, const OpsIn<K, V>&, const OpsOut<V>&, \
                                   cudaStream_t);

}  // namespace gpudict::slabhash
