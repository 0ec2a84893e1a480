// The lock-step kernel for phased query lists (query_kernel.cuh), for tiles
// of 4 and 8 lanes, and its launch.
#include <algorithm>
#include <string>

#include "core/btree/launch.cuh"
#include "core/btree/query_kernel.cuh"
#include "core/common/errors.hpp"

namespace gpudict::btree {

namespace {

template <unsigned G>
void launch_queries_t(const TreeRef& tree, OpsRef ops, cudaStream_t stream) {
  if (ops.n == 0) return;
  if (ops.type != kLookup && ops.type != kSuccessor)
    throw RuntimeFailure("btree: the lock-step query kernel serves lookups and successors only");
  auto kernel = query_kernel<G>;
  // Every resident tile gets an equal contiguous run of the list (a run of
  // a sorted list keeps the finger useful), launched in one wave.
  const uint64_t resident = static_cast<uint64_t>(resident_blocks(kernel, kBlock, 0)) * (kBlock / G);
  const uint64_t per_tile = std::max<uint64_t>(1, (ops.n + resident - 1) / resident);
  if (per_tile > 0xFFFFFFFFull) throw RuntimeFailure("btree: query list too long for one launch");
  ops.per_tile = static_cast<uint32_t>(per_tile);
  const uint64_t tiles = (ops.n + per_tile - 1) / per_tile;
  const uint64_t blocks = (tiles * G + kBlock - 1) / kBlock;
  kernel<<<static_cast<unsigned>(blocks), kBlock, 0, stream>>>(tree, ops);
  GPUDICT_CHECK_LAUNCH("btree query_kernel");
}

}  // namespace

void launch_queries(int qtile, const TreeRef& tree, const OpsRef& ops, cudaStream_t stream) {
  switch (qtile) {
    case 4: launch_queries_t<4>(tree, ops, stream); break;
    case 8: launch_queries_t<8>(tree, ops, stream); break;
    default: throw InputError("btree: query tile of " + std::to_string(qtile) + " lanes is not built");
  }
}

}  // namespace gpudict::btree
