// The kernels for phased query lists and their launch: one thread per
// lookup, successor or count (point_kernel.cuh, qtile 1), or the lock-step
// kernel (query_kernel.cuh) with tiles of 4 or 8 lanes, for each query type.
#include <algorithm>
#include <string>

#include "core/btree/launch.cuh"
#include "core/btree/point_kernel.cuh"
#include "core/btree/query_kernel.cuh"
#include "core/common/errors.hpp"
#include "core/common/grid.cuh"

namespace gpudict::btree {

namespace {

template <unsigned G, uint8_t kType>
QueryGrid grid_t(uint64_t n) {
  // Every resident tile gets an equal contiguous run of the list (a run of
  // a sorted list keeps the finger useful), launched in one wave.
  const size_t smem = kType == kRange ? kRangeStageBytes<G> : 0;  // ranges: the tiles' output rings
  const uint64_t resident =
      static_cast<uint64_t>(resident_blocks(query_kernel<G, kType>, kBlock, smem)) * (kBlock / G);
  const uint64_t per_tile = std::max<uint64_t>(1, (n + resident - 1) / resident);
  if (per_tile > 0xFFFFFFFFull) throw RuntimeFailure("btree: query list too long for one launch");
  QueryGrid g;
  g.per_tile = static_cast<uint32_t>(per_tile);
  g.tiles = (n + per_tile - 1) / per_tile;
  g.blocks = blocks_for(g.tiles * G, kBlock);
  g.smem = smem;
  return g;
}

template <unsigned G, uint8_t kType>
void launch_queries_t(const TreeRef& tree, OpsRef ops, cudaStream_t stream) {
  const QueryGrid g = grid_t<G, kType>(ops.n);
  ops.per_tile = g.per_tile;
  ops.tiles = g.tiles;
  query_kernel<G, kType><<<static_cast<unsigned>(g.blocks), kBlock, g.smem, stream>>>(tree, ops);
  GPUDICT_CHECK_LAUNCH("btree query_kernel");
}

template <unsigned G>
QueryGrid grid_g(uint8_t type, uint64_t n) {
  switch (type) {
    case kLookup: return grid_t<G, kLookup>(n);
    case kSuccessor: return grid_t<G, kSuccessor>(n);
    case kCount: return grid_t<G, kCount>(n);
    case kRange: return grid_t<G, kRange>(n);
    default: throw RuntimeFailure("btree: the lock-step query kernel serves queries only");
  }
}

template <unsigned G>
void launch_queries_g(const TreeRef& tree, const OpsRef& ops, cudaStream_t stream) {
  switch (ops.type) {
    case kLookup: launch_queries_t<G, kLookup>(tree, ops, stream); break;
    case kSuccessor: launch_queries_t<G, kSuccessor>(tree, ops, stream); break;
    case kCount: launch_queries_t<G, kCount>(tree, ops, stream); break;
    case kRange: launch_queries_t<G, kRange>(tree, ops, stream); break;
    default: throw RuntimeFailure("btree: the lock-step query kernel serves queries only");
  }
}

template <uint8_t kType>
void launch_points_t(const TreeRef& tree, const OpsRef& ops, cudaStream_t stream) {
  point_query_kernel<kType><<<blocks_for(ops.n, kBlock), kBlock, 0, stream>>>(tree, ops);
  GPUDICT_CHECK_LAUNCH("btree point_query_kernel");
}

void launch_points(const TreeRef& tree, const OpsRef& ops, cudaStream_t stream) {
  switch (ops.type) {
    case kLookup: launch_points_t<kLookup>(tree, ops, stream); break;
    case kSuccessor: launch_points_t<kSuccessor>(tree, ops, stream); break;
    case kCount: launch_points_t<kCount>(tree, ops, stream); break;
    default: throw RuntimeFailure("btree: the point query kernel serves lookups, successors and counts (ranges: tiles)");
  }
}

}  // namespace

QueryGrid query_grid(int qtile, uint8_t type, uint64_t n) {
  switch (qtile) {
    case 4: return grid_g<4>(type, n);
    case 8: return grid_g<8>(type, n);
    default: throw InputError("btree: query tile of " + std::to_string(qtile) + " lanes is not built");
  }
}

void launch_queries(int qtile, const TreeRef& tree, const OpsRef& ops, cudaStream_t stream) {
  if (ops.n == 0) return;
  // A concurrent range's bounded slot (range_cap) is the operations kernel's business.
  if (ops.range_cap != nullptr) throw RuntimeFailure("btree: the lock-step query kernel writes unbounded ranges only");
  // Tile i serves list positions [i per_tile, (i + 1) per_tile) and stores
  // its range stream in a region of its own (query_kernel.cuh, "Range output").
  if (ops.type == kRange &&
      (ops.stride != 1 || ops.start != 0 || ops.tile_lines == nullptr || ops.hi_slot == nullptr))
    throw RuntimeFailure("btree: lock-step ranges need a whole list of stride 1, its (hi, slot) words and their output lines");
  switch (qtile) {
    case 1: launch_points(tree, ops, stream); break;
    case 4: launch_queries_g<4>(tree, ops, stream); break;
    case 8: launch_queries_g<8>(tree, ops, stream); break;
    default: throw InputError("btree: query tile of " + std::to_string(qtile) + " lanes is not built");
  }
}

}  // namespace gpudict::btree
