// The leaf directory: the low keys of the bulk build's leaves, in key order,
// as a sorted array searched with the sorted array's fence index
// (core/sorted_array/detail/layout.cuh). Phased lookups and successors
// (--query-tile 1, --leaf-directory on) find their leaf through it instead
// of descending from the root, and need no sorted list.
//
// Why: a descent from the root reads one node per level, and at 2^26 keys
// the leaves' parents alone (~80 MB) do not stay in the 60 MB L2, so an
// unsorted list pays two DRAM lines per query (the parent and the leaf) and
// the point kernel sorts its list first (a third of its time) to share the
// paths between neighbouring threads. The directory holds 4 bytes per leaf
// (27 MB at 2^26 keys) instead of a 128-byte parent per ~10 leaves: its top
// level sits in shared memory, the level below it and its own lines in L2,
// so a query reads the index mostly from the L2 and one leaf line from
// DRAM, in batch order.
//
// Why a directory made at the bulk build stays correct while the tree
// changes: leaf i of the build is node first_leaf + i for the tree's whole
// life, and its low key (directory entry i; 0 for the first leaf) never
// changes. Splits keep a node's lower half in place and put the upper half
// in a new node to its right (B-link), merges of under-full nodes never
// happen, and no node is freed. So for a key k the entry with the largest
// low key <= k names a leaf whose range starts at or below k, and the B-link
// moves right (k >= high key) reach the leaf that holds k: the splits since
// the build cost a query one more line per split it crosses, and a query
// that has read 8 leaves and must still move right is answered from the
// root. Trees of 32-bit words only (u32 keys and values: its kernels read
// a leaf as one 128-byte line in 16-byte pieces); a tree with 64-bit keys
// or values has none. The directory is made only when the leaves lie below the root (a
// root leaf that splits moves its content to a new node), is rebuilt by
// the next bulk build and dropped by a bulk build of no keys.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "core/btree/detail/ops_kernel.cuh"
#include "core/btree/detail/tree_ref.cuh"
#include "core/sorted_array/detail/layout.cuh"

namespace gpudict::btree {

class LeafDirectory {
 public:
  // Room for `leaves` entries, allocated before the build writes any node
  // or starts its timer; the directory is invalid until build(). False:
  // no directory for so many.
  bool reserve(uint64_t leaves);
  // The entries for the reserved number of bulk-built leaves, nodes
  // first_leaf, first_leaf + 1, ...: their low keys as the build wrote
  // them. Device work on the stream (the build times it).
  void build(const Node<uint32_t>* nodes, uint32_t first_leaf, cudaStream_t stream);
  void clear() {
    valid_ = false;
    dir_.n = 0;
  }
  uint64_t entries() const { return valid_ ? dir_.n : 0; }
  uint64_t bytes() const { return dir_.bytes(); }

  // A phased list of lookups or successors (ops.type), unsorted (ops.perm
  // null, start 0, stride 1): each query's leaf from the directory, then
  // B-link moves right and the answer, written by list position; a query
  // still behind after 8 leaves is answered from the root instead (lookups:
  // listed in `deferred`, room for ops.n, counted in *deferred_count, and
  // answered by a second kernel). No writer may run meanwhile.
  void launch_queries(const TreeRef<uint32_t>& tree, const OpsRef<uint32_t>& ops, uint32_t* deferred, uint32_t* deferred_count,
                      cudaStream_t stream) const;
  // Whether the directory still fits the tree: bulk-built leaves are at
  // least two thirds of its leaves now. (Past that, many queries would
  // move right through the leaves split since the build, and sorted lists
  // from the root are faster.)
  bool fresh(uint64_t leaves_now) const { return valid_ && 2 * leaves_now <= 3 * dir_.n; }

 private:
  sa::ArrayStore<uint32_t, uint32_t> dir_;  // keys and fences only (no values)
  uint32_t first_leaf_ = 0;
  bool valid_ = false;
};

}  // namespace gpudict::btree
