// The operations kernel with one thread per operation (thread_ops_kernel.cuh),
// the copy of the tree's upper levels it starts from (top_copy.cuh), and
// their launch.
#include <cub/block/block_scan.cuh>

#include "core/btree/detail/launch.cuh"
#include "core/btree/detail/thread_ops_kernel.cuh"
#include "core/btree/detail/top_copy.cuh"

namespace gpudict::btree {

namespace {

inline constexpr int kTopCopyThreads = 1024;

// Copies the upper inner levels into `top` (at most max_nodes nodes,
// header included), whole levels only, down to the level above the leaves'
// parents: a thread then reads a leaf's parent validated on its way down,
// and a thread that splits the leaf needs that parent's version. One block;
// each thread copies whole nodes. Runs while no other kernel changes the
// tree.
template <class Word>
__global__ void __launch_bounds__(kTopCopyThreads)
    top_copy_kernel(TreeRef<Word> tree, Node<Word>* top, uint32_t max_nodes) {
  using Scan = cub::BlockScan<uint32_t, kTopCopyThreads>;
  __shared__ typename Scan::TempStorage scan_tmp;
  __shared__ uint32_t s_total;
  const uint32_t tid = threadIdx.x;
  const Node<Word>* nodes = tree.nodes;
  uint32_t levels = 0;
  // The root is copied when it is above the leaves' parents.
  if (max_nodes >= 2 && !meta_leaf(nodes[kRoot].w[kMetaWord]) &&
      !meta_leaf(nodes[nodes[kRoot].w[1]].w[kMetaWord])) {
    if (tid < kNodeWords) top[1].w[tid] = nodes[kRoot].w[tid];
    levels = 1;
    __syncthreads();
    uint32_t b = 1, e = 2;  // the last copied level: buffer nodes [b, e)
    for (;;) {
      // Its children are the leaves' parents (the first child's first
      // child tells: a level is all leaves or all inner nodes), or the
      // leaves themselves: the copy ends here.
      const uint32_t child = static_cast<uint32_t>(top[b].w[1]);
      if (meta_leaf(nodes[child].w[kMetaWord]) || meta_leaf(nodes[nodes[child].w[1]].w[kMetaWord])) break;
      if (tid == 0) s_total = 0;
      __syncthreads();
      uint32_t mine = 0;
      for (uint32_t c = b + tid; c < e; c += kTopCopyThreads) mine += meta_count(top[c].w[kMetaWord]);
      atomicAdd(&s_total, mine);
      __syncthreads();
      const uint32_t total = s_total;
      if (static_cast<uint64_t>(e) + total > max_nodes) break;
      // Chunk by chunk of the level: each thread's node gets its children's
      // positions from a block scan of the child counts, copies each child
      // there and points its child words at the copies.
      uint32_t carry = e;
      for (uint32_t c0 = b; c0 < e; c0 += kTopCopyThreads) {
        const uint32_t c = c0 + tid;
        const uint32_t cnt = c < e ? meta_count(top[c].w[kMetaWord]) : 0u;
        uint32_t off = 0, chunk = 0;
        Scan(scan_tmp).ExclusiveSum(cnt, off, chunk);
        for (uint32_t i = 0; i < cnt; ++i) {
          const uint32_t slot = carry + off + i;
          const uint4* src = reinterpret_cast<const uint4*>(nodes[top[c].w[2 * i + 1]].w);
          uint4* dst = reinterpret_cast<uint4*>(top[slot].w);
#pragma unroll
          for (int q = 0; q < static_cast<int>(sizeof(Node<Word>) / sizeof(uint4)); ++q) dst[q] = __ldg(src + q);
          top[c].w[2 * i + 1] = slot;
        }
        carry += chunk;
        __syncthreads();  // scan_tmp is reused by the next chunk
      }
      __syncthreads();  // the new level's copies, before they are read
      b = e;
      e += total;
      ++levels;
    }
  }
  if (tid == 0) top[0].w[0] = levels;
}

}  // namespace

template <class Word>
void launch_top_copy(const TreeRef<Word>& tree, Node<Word>* top, uint32_t max_nodes, cudaStream_t stream) {
  top_copy_kernel<<<1, kTopCopyThreads, 0, stream>>>(tree, top, max_nodes);
  GPUDICT_CHECK_LAUNCH("btree top_copy_kernel");
}

template <class Word>
void launch_thread_ops(const TreeRef<Word>& tree, const OpsRef<Word>& ops, Node<Word>* top, uint32_t top_nodes,
                       cudaStream_t stream) {
  if (ops.n == 0) return;
  if (top_nodes < 2) top = nullptr;
  if (top) launch_top_copy(tree, top, top_nodes, stream);
  thread_ops_kernel<<<blocks_for(ops.n, kThreadOpsBlock), kThreadOpsBlock, 0, stream>>>(tree, ops, top);
  GPUDICT_CHECK_LAUNCH("btree thread_ops_kernel");
}

template void launch_top_copy<uint32_t>(const TreeRef<uint32_t>&, Node<uint32_t>*, uint32_t, cudaStream_t);
template void launch_top_copy<uint64_t>(const TreeRef<uint64_t>&, Node<uint64_t>*, uint32_t, cudaStream_t);
template void launch_thread_ops<uint32_t>(const TreeRef<uint32_t>&, const OpsRef<uint32_t>&, Node<uint32_t>*,
                                          uint32_t, cudaStream_t);
template void launch_thread_ops<uint64_t>(const TreeRef<uint64_t>&, const OpsRef<uint64_t>&, Node<uint64_t>*,
                                          uint32_t, cudaStream_t);

}  // namespace gpudict::btree
