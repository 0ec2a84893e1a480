// A read-only copy of the tree's upper inner levels, taken between kernels,
// from which the thread-per-operation kernel (thread_ops_kernel.cuh) starts
// its searches.
//
// Why: in that kernel every node is read as a validated seqlock snapshot
// with strong loads, which bypass the L1, so each level of a descent is a
// round trip to the L2 (8 of them at 2^26 keys), and the descent is most of
// an operation's time. The upper levels are the same for every operation and
// rarely change, so the launch copies them into a separate buffer that
// nothing writes while the kernel runs: a thread searches the copy through
// the read-only cache (L1 hits) and starts its validated descent at the
// node of the first level below the copy.
//
// Why a stale copy is still correct: the copy is exact when taken (no kernel
// runs; every node is reachable from its parent), and a child pointer from
// any snapshot of a parent leads to a node whose low key is <= k (the
// pivot; low keys never change, nodes are never freed or merged). A search
// may start at any such node: B-link moves right pass the splits made since.
//
// Layout: node 0 of the buffer is a header (word 0: the number of copied
// levels, 0 when none); the root's copy is node 1, then each copied level in
// order. In a copied node whose children are copied too, the child words
// are buffer positions; in the lowest copied level they are the tree's node
// indices. Leaves and their parents are never copied (a thread that splits a
// leaf needs the parent's version from its own validated read). The copy is taken by launch_top_copy
// (launch.cuh; one block, in kernels_thread_ops.cu).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "core/btree/detail/node.hpp"
#include "core/btree/detail/thread_node.cuh"
#include "core/btree/detail/tree_ref.cuh"
#include "core/btree/detail/word_access.cuh"

namespace gpudict::btree {

// Where a search for k starts: the node below the copy that covered k when
// the copy was taken (the root when nothing is copied).
template <class Word>
__device__ __forceinline__ uint32_t top_start(const Node<Word>* top, same_t<Word> k) {
  if (top == nullptr) return kRoot;
  const uint32_t levels = static_cast<uint32_t>(__ldg(&top[0].w[0]));
  uint32_t s = 1;
  for (uint32_t l = 0; l < levels; ++l) {
    Word w[kNodeWords];
    ld_readonly_node(top[s].w, w);
    s = child_of(w, w[kMetaWord], k);
  }
  return levels ? s : kRoot;
}

}  // namespace gpudict::btree
