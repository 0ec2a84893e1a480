// gpudict::btree_ref<Key, Value>: a btree_map's operations for a caller's
// kernels (CUDA code; include after btree_map.hpp or alone).
//
// Trivially copyable: pass it to a kernel by value (map.ref()). Each
// operation is served by a tile of G lanes (cooperative_groups
// thread_block_tile<G> of any parent, G = 8, 16 or 32; 32 is what the library's own
// kernels use): every lane of the tile calls it with the same arguments,
// and every lane gets the same result. A warp whose lanes each hold an
// operation serves them one at a time (the GPU B-Tree paper's work
// sharing):
//
//   auto tile = cg::tiled_partition<32>(cg::this_thread_block());
//   for (int q = 0; q < 32; ++q) {
//     const Key k = tile.shfl(my_key, q);
//     Value v;
//     const bool hit = ref.find(tile, k, &v);
//     if (tile.thread_rank() == q) { my_found = hit; my_value = v; }
//   }
//
// Operations of any type may run concurrently, in one kernel or several:
// reads are seqlock snapshots of whole nodes and updates latch the nodes
// they change (tree_ref.cuh gives the memory-model argument), so each
// operation is linearizable. insert_or_assign returns false when the node
// pool is full (nothing changed; grow it with btree_map::reserve_nodes and
// run the insert again); it never waits for the host.
#pragma once

#include <cooperative_groups.h>

#include <cstdint>
#include <type_traits>

#include "core/btree/btree_map.hpp"
#include "core/btree/detail/ops_kernel.cuh"

namespace gpudict {

template <class Key, class Value>
class btree_ref {
 public:
  using key_type = Key;
  using mapped_type = Value;
  using word_type = std::conditional_t<sizeof(Key) == 8 || sizeof(Value) == 8, std::uint64_t, std::uint32_t>;

  __host__ __device__ explicit btree_ref(const btree_view& v) {
    tree_.nodes = static_cast<btree::Node<word_type>*>(v.nodes);
    tree_.hdr = static_cast<btree::TreeHeader*>(v.header);
    tree_.capacity = v.capacity;
  }

  // Whether `key` is present; its value into *value (when not null).
  template <unsigned G, class Parent>
  __device__ bool find(const cooperative_groups::thread_block_tile<G, Parent>& group, Key key,
                       Value* value = nullptr) const {
    check_tile<G>();
    const btree::Tile<G> tile(group);
    btree::TileCache<word_type, G> cache;
    btree::Frag<word_type, G> f;
    word_type meta;
    std::uint32_t node, parent;
    if (!btree::descend<word_type, G, true>(tile, tree_, key, cache, f, meta, node, parent)) return false;
    const int p = btree::count_keys<word_type, G>(tile, f, static_cast<int>(btree::meta_count(meta)), key, false);
    const bool hit = p > 0 && btree::key_at(tile, f, p - 1) == static_cast<word_type>(key);
    const word_type v = hit ? btree::value_at(tile, f, p - 1) : word_type{0};
    if (value) *value = static_cast<Value>(v);
    return hit;
  }

  // Inserts (key, value) or replaces the value of a present key. False:
  // the node pool is full and nothing changed.
  template <unsigned G, class Parent>
  __device__ bool insert_or_assign(const cooperative_groups::thread_block_tile<G, Parent>& tile, Key key,
                                   Value value) const {
    return update<G>(tile, key, value, true);
  }

  // Deletes `key` if present (an absent key is a no-op). A delete needs no
  // node (nodes never merge): false only when the tree reported an internal
  // error, which the map's next host call throws.
  template <unsigned G, class Parent>
  __device__ bool erase(const cooperative_groups::thread_block_tile<G, Parent>& tile, Key key) const {
    return update<G>(tile, key, Value{0}, false);
  }

 private:
  template <unsigned G>
  __device__ static void check_tile() {
    static_assert(G == 8 || G == 16 || G == 32, "btree_ref: tiles of 8, 16 or 32 lanes");
  }

  template <unsigned G>
  __device__ bool update(const btree::Tile<G>& tile, Key key, Value value, bool is_insert) const {
    check_tile<G>();
    btree::TileCache<word_type, G> cache;
    btree::TileCounters counters;
    const bool ok = btree::update_op<word_type, G>(tile, tree_, key, value, is_insert, cache, counters);
    if (tile.thread_rank() == 0) {  // two's complement: a deleted key's -1 wraps as intended
      if (counters.size != 0) atomicAdd(&tree_.hdr->size, static_cast<unsigned long long>(counters.size));
      if (counters.leaves != 0) atomicAdd(&tree_.hdr->leaves, counters.leaves);
    }
    return ok;
  }

  btree::TreeRef<word_type> tree_;
};

}  // namespace gpudict
