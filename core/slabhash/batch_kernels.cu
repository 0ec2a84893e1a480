// Instantiations and launches of the batch kernel (tile_ops.cuh): per mode,
// one per operation-type set (pure lookups, counts, ranges, inserts, deletes,
// updates, everything).
#include "core/common/cuda_check.hpp"
#include "core/common/grid.cuh"
#include "core/slabhash/kernels.cuh"
#include "core/slabhash/tile_ops.cuh"

namespace gpudict::slabhash {

namespace {

template <class L, Mode M, uint32_t kOps>
void launch(const TableRef& t, const OpsIn& in, const OpsOut& out, cudaStream_t stream) {
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

template <class L, Mode M>
void prepare_mode(uint32_t ops) {
  switch (ops) {
    case kSetLookup: prepare<L, M, kSetLookup>(); break;
    case kSetCount: prepare<L, M, kSetCount>(); break;
    case kSetRange: prepare<L, M, kSetRange>(); break;
    case kSetInsert: prepare<L, M, kSetInsert>(); break;
    case kSetDelete: prepare<L, M, kSetDelete>(); break;
    case kSetUpdates: prepare<L, M, kSetUpdates>(); break;
    case kSetPoint: prepare<L, M, kSetPoint>(); break;
    default: prepare<L, M, kSetAll>(); break;
  }
}

template <class L, Mode M>
void launch_mode(uint32_t ops, const TableRef& t, const OpsIn& in, const OpsOut& out, cudaStream_t stream) {
  switch (ops) {
    case kSetLookup: launch<L, M, kSetLookup>(t, in, out, stream); break;
    case kSetCount: launch<L, M, kSetCount>(t, in, out, stream); break;
    case kSetRange: launch<L, M, kSetRange>(t, in, out, stream); break;
    case kSetInsert: launch<L, M, kSetInsert>(t, in, out, stream); break;
    case kSetDelete: launch<L, M, kSetDelete>(t, in, out, stream); break;
    case kSetUpdates: launch<L, M, kSetUpdates>(t, in, out, stream); break;
    case kSetPoint: launch<L, M, kSetPoint>(t, in, out, stream); break;
    default: launch<L, M, kSetAll>(t, in, out, stream); break;
  }
}

}  // namespace

void prepare_batch(Mode mode, uint32_t ops) {
  switch (mode) {
    case Mode::Map: prepare_mode<PairLayout, Mode::Map>(ops); break;
    case Mode::Multimap: prepare_mode<PairLayout, Mode::Multimap>(ops); break;
    case Mode::Set: prepare_mode<KeyLayout, Mode::Set>(ops); break;
  }
}

void launch_batch(Mode mode, uint32_t ops, const TableRef& t, const OpsIn& in, const OpsOut& out,
                  cudaStream_t stream) {
  switch (mode) {
    case Mode::Map: launch_mode<PairLayout, Mode::Map>(ops, t, in, out, stream); break;
    case Mode::Multimap: launch_mode<PairLayout, Mode::Multimap>(ops, t, in, out, stream); break;
    case Mode::Set: launch_mode<KeyLayout, Mode::Set>(ops, t, in, out, stream); break;
  }
}

}  // namespace gpudict::slabhash
