// slab_hash_map<Key, Value> (slab_hash_map.hpp) over SlabHash<Key, Value>.
#include "core/slabhash/slab_hash_map.hpp"

#include "core/common/stream_follow.hpp"
#include "core/slabhash/detail/slabhash_impl.cuh"

namespace gpudict {

template <class Key, class Value>
struct slab_hash_map<Key, Value>::impl {
  slabhash::SlabHash<Key, Value> table;
  impl(const slab_hash_options& o, int device) : table(device, o) {}
};

template <class Key, class Value>
slab_hash_map<Key, Value>::slab_hash_map(const slab_hash_options& options, int device) {
  slabhash::validate(options);
  impl_ = std::make_unique<impl>(options, device_or_current(device));
}

template <class Key, class Value>
slab_hash_map<Key, Value>::~slab_hash_map() = default;
template <class Key, class Value>
slab_hash_map<Key, Value>::slab_hash_map(slab_hash_map&&) noexcept = default;
template <class Key, class Value>
slab_hash_map<Key, Value>& slab_hash_map<Key, Value>::operator=(slab_hash_map&&) noexcept = default;

template <class Key, class Value>
void slab_hash_map<Key, Value>::build(const Key* keys, const Value* values, std::uint64_t n, cudaStream_t stream) {
  impl_->table.follow(stream);
  impl_->table.build_device(keys, values, n);
}

template <class Key, class Value>
void slab_hash_map<Key, Value>::insert(const Key* keys, const Value* values, std::uint64_t n, cudaStream_t stream) {
  impl_->table.follow(stream);
  impl_->table.update_device(keys, values, n, true);
}

template <class Key, class Value>
void slab_hash_map<Key, Value>::erase(const Key* keys, std::uint64_t n, cudaStream_t stream) {
  impl_->table.follow(stream);
  impl_->table.update_device(keys, nullptr, n, false);
}

template <class Key, class Value>
void slab_hash_map<Key, Value>::find(const Key* keys, std::uint64_t n, Value* values_out, bool* found_out,
                                     cudaStream_t stream) {
  impl_->table.follow(stream);
  impl_->table.find_device(keys, n, values_out, found_out);
}

template <class Key, class Value>
std::uint64_t slab_hash_map<Key, Value>::size() const {
  return impl_->table.live_keys();
}

template <class Key, class Value>
void slab_hash_map<Key, Value>::reserve(std::uint64_t inserts) {
  impl_->table.reserve_device(inserts);
}

template <class Key, class Value>
slab_hash_view slab_hash_map<Key, Value>::view() {
  const slabhash::TableRef<Key> t = impl_->table.device_table();
  slab_hash_view v;
  v.base_slabs = t.base;
  v.buckets = t.buckets;
  v.hash[0] = t.hash.a;
  v.hash[1] = t.hash.b;
  v.hash[2] = t.hash.a2;
  static_assert(slab_hash_view::kMaxSuperBlocks == static_cast<int>(slabhash::kMaxSuperBlocks),
                "slab_hash_view mirrors PoolRef");
  for (int k = 0; k < slab_hash_view::kMaxSuperBlocks; ++k) {
    v.pool_slabs[k] = t.pool.slabs[k];
    v.pool_bitmaps[k] = t.pool.bitmaps[k];
  }
  v.pool_lg0 = t.pool.lg0;
  v.pool_super_blocks = t.pool.super_blocks;
  v.pool_total_blocks = t.pool.total_blocks;
  v.pool_exhausted = t.pool.exhausted;
  v.counts = impl_->table.ref_counts();
  v.mode = static_cast<int>(impl_->table.mode());
  return v;
}

template class slab_hash_map<std::uint32_t, std::uint32_t>;
template class slab_hash_map<std::uint32_t, std::uint64_t>;
template class slab_hash_map<std::uint64_t, std::uint64_t>;

}  // namespace gpudict
