// A table's device view (TableRef, table_ref.cuh) as the host-visible
// slab_hash_view that device refs are built from (slab_hash_ref.cuh), for
// every container on the slab hash's core: slab_hash_map and graph_map.
#pragma once

#include "core/slabhash/detail/table_ref.cuh"
#include "core/slabhash/slab_hash_map.hpp"

namespace gpudict::slabhash {

template <class K>
slab_hash_view table_view(const TableRef<K>& t, unsigned long long* counts, Mode mode) {
  static_assert(slab_hash_view::kMaxSuperBlocks == static_cast<int>(kMaxSuperBlocks), "slab_hash_view mirrors PoolRef");
  slab_hash_view v;
  v.base_slabs = t.base;
  v.buckets = t.buckets;
  v.hash[0] = t.hash.a;
  v.hash[1] = t.hash.b;
  v.hash[2] = t.hash.a2;
  for (int k = 0; k < slab_hash_view::kMaxSuperBlocks; ++k) {
    v.pool_slabs[k] = t.pool.slabs[k];
    v.pool_bitmaps[k] = t.pool.bitmaps[k];
  }
  v.pool_lg0 = t.pool.lg0;
  v.pool_super_blocks = t.pool.super_blocks;
  v.pool_total_blocks = t.pool.total_blocks;
  v.pool_exhausted = t.pool.exhausted;
  v.counts = counts;
  v.mode = static_cast<int>(mode);
  return v;
}

}  // namespace gpudict::slabhash
