// Launching the operations kernel (definitions in kernels_plain.cu and
// kernels_validated.cu, one translation unit per read mode, each for tiles
// of 8, 16 and 32 lanes) and the other kernels, for both node word types
// (Word = uint32_t or uint64_t: node.hpp).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "core/btree/detail/ops_kernel.cuh"
#include "core/common/cuda_check.hpp"
#include "core/common/errors.hpp"
#include "core/common/grid.cuh"

namespace gpudict::btree {

// Operations per tile are G x rounds: enough rounds that the list fills
// the resident tiles about once (a sorted list then reuses each finger for
// up to kMaxRounds x G neighbouring keys), one round when unsorted.
inline constexpr uint64_t kMaxRounds = 8;

template <class Word, unsigned G, bool kValidated>
void launch_ops_t(const TreeRef<Word>& tree, OpsRef<Word> ops, cudaStream_t stream);

// tile: 8, 16 or 32; validated: the seqlock reads and the update code.
template <class Word>
void launch_ops(int tile, bool validated, const TreeRef<Word>& tree, const OpsRef<Word>& ops, cudaStream_t stream) {
  switch (tile * 2 + (validated ? 1 : 0)) {
    case 16: launch_ops_t<Word, 8, false>(tree, ops, stream); break;
    case 17: launch_ops_t<Word, 8, true>(tree, ops, stream); break;
    case 32: launch_ops_t<Word, 16, false>(tree, ops, stream); break;
    case 33: launch_ops_t<Word, 16, true>(tree, ops, stream); break;
    case 64: launch_ops_t<Word, 32, false>(tree, ops, stream); break;
    case 65: launch_ops_t<Word, 32, true>(tree, ops, stream); break;
    default: throw InputError("btree: tile of " + std::to_string(tile) + " lanes is not built");
  }
}

// Concurrent and --phased-updates ops lists with one thread per operation
// and the warp for what a thread leaves (thread_ops_kernel.cuh; defined in
// kernels_thread_ops.cu). First copies the tree's upper levels into `top`
// (top_copy.cuh; at most top_nodes nodes; fewer than 2: no copy, every
// search from the root).
template <class Word>
void launch_thread_ops(const TreeRef<Word>& tree, const OpsRef<Word>& ops, Node<Word>* top, uint32_t top_nodes,
                       cudaStream_t stream);
// Copies the tree's upper inner levels into `top` (whole levels, at most
// max_nodes nodes with the header; top_copy.cuh). No kernel may change the
// tree meanwhile.
template <class Word>
void launch_top_copy(const TreeRef<Word>& tree, Node<Word>* top, uint32_t max_nodes, cudaStream_t stream);
// The top copy's size for a list of n operations: a copy costs a few
// microseconds per level, so short lists copy little or nothing.
inline constexpr uint32_t kTopCopyMaxNodes = 16384;  // 2 MiB (u64: 4 MiB)
inline uint32_t top_copy_nodes(uint64_t n) {
  return static_cast<uint32_t>(std::min<uint64_t>(n / 256, kTopCopyMaxNodes));
}

// Phased query lists: no writer runs. qtile 1: one thread per lookup,
// successor or count (point_kernel.cuh; ranges: launch_point_ranges); 4 or
// 8: lanes per operation in the lock-step kernel (query_kernel.cuh).
// Defined in kernels_query.cu.
template <class Word>
void launch_queries(int qtile, const TreeRef<Word>& tree, const OpsRef<Word>& ops, cudaStream_t stream);
// A phased range list with one thread per range (point_range_kernel, in
// kernels_query.cu): a whole list, stride 1, with its hi_slot words
// (sorted, or staged in key order); sizes and
// offsets by list position, the pairs from `cursor` (zeroed by the caller)
// on, stored only if they all fit in `room` pairs (else the cursor still
// ends at the total).
template <class Word>
void launch_point_ranges(const TreeRef<Word>& tree, const OpsRef<Word>& ops, unsigned long long* cursor,
                         uint64_t room, cudaStream_t stream);
// How launch_queries spreads a list of n queries of `type` over tiles.
struct QueryGrid {
  uint32_t per_tile = 0;  // list positions per tile (tile i: [i per_tile, (i + 1) per_tile))
  uint64_t tiles = 0;
  uint64_t blocks = 0;
  size_t smem = 0;  // dynamic shared memory per block
};
template <class Word>
QueryGrid query_grid(int qtile, uint8_t type, uint64_t n);

// The definition, included by the two kernel translation units only.
#define GPUDICT_BTREE_DEFINE_LAUNCH(Word, G, V)                                                             \
  template <>                                                                                              \
  void launch_ops_t<Word, G, V>(const TreeRef<Word>& tree, OpsRef<Word> ops, cudaStream_t stream) {        \
    if (ops.n == 0) return;                                                                                \
    auto kernel = ops_kernel<Word, G, V>;                                                                  \
    const uint64_t resident = static_cast<uint64_t>(resident_blocks(kernel, kBlock, 0)) * (kBlock / G);    \
    uint64_t rounds = 1;                                                                                   \
    if (ops.use_finger) rounds = std::clamp<uint64_t>(ops.n / (static_cast<uint64_t>(G) * resident), 1,    \
                                                      kMaxRounds);                                         \
    ops.per_tile = static_cast<uint32_t>(G * rounds);                                                      \
    const uint64_t tiles = (ops.n + ops.per_tile - 1) / ops.per_tile;                                      \
    const uint64_t blocks = (tiles * G + kBlock - 1) / kBlock;                                             \
    kernel<<<static_cast<unsigned>(blocks), kBlock, 0, stream>>>(tree, ops);                               \
    GPUDICT_CHECK_LAUNCH("btree ops_kernel");                                                              \
  }

}  // namespace gpudict::btree
