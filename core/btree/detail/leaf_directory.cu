// The leaf directory (leaf_directory.cuh): its build from the bulk-built
// leaves, and phased lookups and successors through it, searched as the
// sorted array searches its fence index (core/sorted_array/detail/search_index.cuh).
#include <algorithm>
#include <cstdint>

#include "core/btree/detail/leaf_directory.cuh"
#include "core/btree/detail/point_kernel.cuh"
#include "core/common/cuda_check.hpp"
#include "core/common/errors.hpp"
#include "core/common/grid.cuh"
#include "core/common/warp.cuh"
#include "core/sorted_array/detail/search_index.cuh"

namespace gpudict::btree {

namespace {

// The top level, searched in shared memory, may hold twice the sorted
// array's: at 2^26 keys (6.7 M leaves) the directory then has two levels
// below its top instead of three, one line fewer per query (at most 32 KiB
// of shared memory per block; measured faster than tops of 4096 and 1024
// entries, which add a level).
constexpr uint64_t kDirectoryTopMax = 2 * sa::kTopMax;

// A query reads at most this many leaves from its directory entry on; one
// still moving right after them is answered from the root instead: an
// entry can lie far behind the keys inserted since the build (ascending
// keys appended after it split the same leaf again and again), where a
// descent reads about 8 nodes.
constexpr uint32_t kMaxDirectoryMoves = 8;

// Entry i: the low key of leaf i as the build wrote it (0 for leaf 0, whose
// range starts at 0 whatever its first key).
__global__ void directory_keys_kernel(const Node<uint32_t>* __restrict__ nodes, uint32_t first_leaf, uint64_t leaves,
                                      uint32_t* __restrict__ dir) {
  const uint64_t g = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (g < leaves) dir[g] = nodes[first_leaf + g].w[kLowWord];
}

// Lookups: the directory's search as the sorted array's (the top level in
// shared memory, then one 32-entry window per level, read by groups of 8
// lanes), and the leaf read the same way: a group of 8 lanes reads a leaf
// line together (16 bytes each: lanes 0-6 two pairs each, lane 7 the high
// key, link, low key and meta word), two of its lanes' queries at a time.
// A thread reading whole nodes alone (point_query_kernel) issues eight
// 16-byte loads to 32 different lines per warp instruction; here one warp
// load instruction reads 4 whole lines, a quarter of the L1 wavefronts.
// Queries still moving right after kMaxDirectoryMoves reads go to
// deferred[0, *deferred_count) (list positions) for directory_fixup_kernel.
// Two queries per group at a time, 6 blocks per SM (40 registers): measured
// against one at a time at 6 and 8 blocks (32 registers) and four at 4
// blocks, and ahead of both (docs/btree.md, "Leaf directory").
constexpr int kLeafQ = 2;
__global__ void __launch_bounds__(sa::kSearchThreads, 6)
    directory_lookup_kernel(const __grid_constant__ sa::ArrayView<uint32_t, uint32_t> dir,
                            const __grid_constant__ TreeRef<uint32_t> tree, const __grid_constant__ OpsRef<uint32_t> ops,
                            uint32_t first_leaf, uint32_t items, uint32_t* __restrict__ deferred,
                            uint32_t* __restrict__ deferred_count) {
  constexpr int G = sa::WindowShape<uint32_t>::kGroup;  // 8 lanes: one 128-byte line
  static_assert(G * 16 == sizeof(Node<uint32_t>), "a group's lanes read one node line, 16 bytes each");
  extern __shared__ uint4 directory_smem[];
  uint32_t* top = reinterpret_cast<uint32_t*>(directory_smem);
  const uint32_t top_size = dir.ix.size[dir.ix.top];
  for (uint32_t t = threadIdx.x; t < top_size; t += blockDim.x) top[t] = dir.ix.level[dir.ix.top][t];
  __syncthreads();

  const unsigned lane = lane_id();
  const unsigned lig = lane % G;
  const unsigned gbase = lane - lig;
  const uint32_t warps = gridDim.x * warps_per_block();
  for (uint64_t w = static_cast<uint64_t>(blockIdx.x) * warps_per_block() + warp_in_block(); w * kWarpSize < items;
       w += warps) {
    const uint64_t item64 = w * kWarpSize + lane;
    const bool active = item64 < items;
    const uint32_t item = static_cast<uint32_t>(item64);
    uint32_t q[1] = {active ? ops.keys[item] : 0u};
    bool upper[1] = {true};  // entries <= k: the last of them is k's leaf
    uint32_t pos[1] = {sa::count_before(top, top_size, q[0], true)};
    sa::warp_refine<uint32_t, 1>(dir.ix, q, upper, pos);
    const uint32_t leaf = first_leaf + (pos[0] > 0 ? pos[0] - 1 : 0u);

    // The group's 8 queries, kLeafQ at a time: u = 0 .. kLeafQ - 1 are lanes r + u.
    for (int r = 0; r < G; r += kLeafQ) {
      uint32_t k[kLeafQ], node[kLeafQ], slot[kLeafQ];
      bool pending[kLeafQ];
      // Reads of this round: a query still moving right at the
      // kMaxDirectoryMoves-th leaf it read is left to the fix-up kernel.
      uint32_t hops = 0;
#pragma unroll
      for (int u = 0; u < kLeafQ; ++u) {
        k[u] = __shfl_sync(kFullMask, q[0], gbase + r + u);
        node[u] = __shfl_sync(kFullMask, leaf, gbase + r + u);
        slot[u] = __shfl_sync(kFullMask, item, gbase + r + u);
        pending[u] = __shfl_sync(kFullMask, static_cast<int>(active), gbase + r + u) != 0;
      }
      // Warp-uniform loop (every lane runs the shuffles): a query whose leaf
      // was split since the build moves right and reads again.
      for (;;) {
        bool any = false;
#pragma unroll
        for (int u = 0; u < kLeafQ; ++u) any |= pending[u];
        if (!__any_sync(kFullMask, any)) break;
        uint4 raw[kLeafQ];
#pragma unroll
        for (int u = 0; u < kLeafQ; ++u)
          raw[u] = pending[u] ? __ldg(reinterpret_cast<const uint4*>(tree.words(node[u])) + lig)
                              : make_uint4(0, 0, 0, 0);
#pragma unroll
        for (int u = 0; u < kLeafQ; ++u) {
          const uint32_t high = __shfl_sync(kFullMask, raw[u].x, gbase + G - 1);
          const uint32_t link = __shfl_sync(kFullMask, raw[u].y, gbase + G - 1);
          const uint32_t meta = __shfl_sync(kFullMask, raw[u].w, gbase + G - 1);
          const uint32_t cnt = meta_count(meta);
          const bool hit0 = lig < G - 1 && 2 * lig < cnt && raw[u].x == k[u];
          const bool hit1 = lig < G - 1 && 2 * lig + 1 < cnt && raw[u].z == k[u];
          const unsigned hits = (__ballot_sync(kFullMask, hit0 || hit1) >> gbase) & 0xFFu;
          const uint32_t mine = hit0 ? raw[u].y : raw[u].w;
          const uint32_t value = __shfl_sync(kFullMask, mine, gbase + (hits ? __ffs(hits) - 1 : 0));
          if (!pending[u]) continue;
          if (!meta_leaf(meta)) {  // never: directory entries name leaves, moves right stay at leaves
            if (lig == 0) atomicExch(&tree.hdr->error, 1ull);
            pending[u] = false;
          } else if (link != kNil && k[u] >= high) {  // a split since the build: move right
            if (hops + 1 < kMaxDirectoryMoves) {
              node[u] = link;
            } else {  // far behind: the fix-up kernel answers it from the root
              if (lig == 0) deferred[atomicAdd(deferred_count, 1u)] = slot[u];
              pending[u] = false;
            }
          } else {
            if (lig == 0) {
              ops.found[slot[u]] = hits ? 1 : 0;
              ops.value[slot[u]] = hits ? value : 0u;
            }
            pending[u] = false;
          }
        }
        ++hops;
      }
    }
  }
}

// The lookups the directory kernel deferred, one thread each from the root
// (as point_query_kernel). Launched after every directory lookup list: the
// count is on the device; usually 0, and the kernel's few blocks return.
__global__ void __launch_bounds__(kBlock) directory_fixup_kernel(TreeRef<uint32_t> tree, OpsRef<uint32_t> ops,
                                                                 const uint32_t* __restrict__ deferred,
                                                                 const uint32_t* __restrict__ deferred_count) {
  const uint32_t n = *deferred_count;
  for (uint32_t x = blockIdx.x * blockDim.x + threadIdx.x; x < n; x += gridDim.x * blockDim.x) {
    const uint32_t i = deferred[x];
    answer_from_root(tree, ops, kLookup, i, ops.keys[i], 0u, readonly_reader(tree));
  }
}

// Successors: the directory's search by the sorted array's kernel, then one
// thread per query from its leaf on (answer_from_leaf: the next leaf when
// every key of this one is <= k). Results by list position (the list is not
// sorted). (Counts are not served here: a count of a few keys walks into
// the next leaf half of the time, and the sorted point kernel, whose
// neighbouring threads share those leaves, measured faster.)
struct DirectorySuccessorOp {
  static constexpr int kSearches = 1;
  // A whole node in registers (as the point kernel): 5 blocks of 256 per SM.
  static constexpr int kMinBlocks = 5;
  TreeRef<uint32_t> tree;
  OpsRef<uint32_t> ops;
  uint32_t first_leaf;

  __device__ __forceinline__ void setup(uint32_t i, uint32_t (&q)[1], bool (&upper)[1]) const {
    q[0] = ops.keys[i];
    upper[0] = true;  // entries <= k: the last of them is k's leaf
  }
  __device__ __forceinline__ void finish(const sa::ArrayView<uint32_t, uint32_t>&, uint32_t i, const uint32_t (&q)[1],
                                         const uint32_t (&pos)[1]) const {
    const uint32_t k = q[0];
    const auto read = readonly_reader(tree);
    uint32_t w[kNodeWords], meta;
    uint32_t node = first_leaf + (pos[0] > 0 ? pos[0] - 1 : 0u);
    // B-link moves over the splits since the build: at most
    // kMaxDirectoryMoves leaves read, then from the root.
    for (uint32_t reads = 0; reads < kMaxDirectoryMoves; ++reads) {
      read(node, w, meta);
      if (!meta_leaf(meta)) {  // never: directory entries name leaves; as the lookup kernel, a corrupt tree
        atomicExch(&tree.hdr->error, 1ull);
        return;
      }
      if (w[kLinkWord] == kNil || k < w[kHighWord]) {
        if (!answer_from_leaf(tree, ops, kSuccessor, i, k, 0u, w, meta, read)) atomicExch(&tree.hdr->error, 1ull);
        return;
      }
      node = w[kLinkWord];
    }
    answer_from_root(tree, ops, kSuccessor, i, k, 0u, read);
  }
};

}  // namespace

bool LeafDirectory::reserve(uint64_t leaves) {
  clear();
  if (leaves == 0 || leaves >= (1ull << 31)) return false;
  dir_.layout = sa::FenceLayout::for_size(leaves, kDirectoryTopMax);
  dir_.keys.reserve_discard(sa::round_up(leaves, sa::kFanout), "btree leaf directory");
  dir_.fences.reserve_discard(std::max<uint64_t>(dir_.layout.fence_entries, sa::kFanout), "btree leaf directory");
  dir_.n = leaves;
  return true;
}

void LeafDirectory::build(const Node<uint32_t>* nodes, uint32_t first_leaf, cudaStream_t stream) {
  const uint64_t leaves = dir_.n;
  if (leaves == 0) throw RuntimeFailure("btree: the leaf directory built without reserve()");
  directory_keys_kernel<<<blocks_for(leaves, 256), 256, 0, stream>>>(nodes, first_leaf, leaves, dir_.keys.data());
  GPUDICT_CHECK_LAUNCH("btree directory_keys_kernel");
  sa::build_fence_levels(dir_, 0, stream);
  first_leaf_ = first_leaf;
  valid_ = true;
}

void LeafDirectory::launch_queries(const TreeRef<uint32_t>& tree, const OpsRef<uint32_t>& ops, uint32_t* deferred,
                                   uint32_t* deferred_count, cudaStream_t stream) const {
  if (!valid_) throw RuntimeFailure("btree: the leaf directory queried before a bulk build made it");
  if (ops.perm != nullptr || ops.start != 0 || ops.stride != 1 || ops.n >= (1ull << 32))
    throw RuntimeFailure("btree: leaf directory queries need a whole unsorted list of fewer than 2^32 queries");
  const sa::ArrayView<uint32_t, uint32_t> view = dir_.view();
  switch (ops.type) {
    case kLookup: {
      const size_t smem = static_cast<size_t>(view.ix.size[view.ix.top]) * sizeof(uint32_t);
      const unsigned grid =
          persistent_grid(directory_lookup_kernel, sa::kSearchThreads, smem, ops.n, sa::kSearchThreads);
      GPUDICT_CUDA(cudaMemsetAsync(deferred_count, 0, sizeof(uint32_t), stream));
      directory_lookup_kernel<<<grid, sa::kSearchThreads, smem, stream>>>(
          view, tree, ops, first_leaf_, static_cast<uint32_t>(ops.n), deferred, deferred_count);
      GPUDICT_CHECK_LAUNCH("btree directory_lookup_kernel");
      directory_fixup_kernel<<<blocks_for(std::min<uint64_t>(ops.n, 64 * kBlock), kBlock), kBlock, 0, stream>>>(
          tree, ops, deferred, deferred_count);
      GPUDICT_CHECK_LAUNCH("btree directory_fixup_kernel");
      break;
    }
    case kSuccessor:
      sa::launch_search(view, DirectorySuccessorOp{tree, ops, first_leaf_}, ops.n, stream,
                        "btree leaf directory successors");
      break;
    default: throw RuntimeFailure("btree: the leaf directory serves lookups and successors");
  }
}

}  // namespace gpudict::btree
