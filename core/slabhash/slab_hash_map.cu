// slab_hash_map<Key, Value> (slab_hash_map.hpp) over SlabHash<Key, Value>.
#include "core/slabhash/slab_hash_map.hpp"

#include "core/common/errors.hpp"
#include "core/common/stream_follow.hpp"
#include "core/slabhash/detail/map_impl.cuh"
#include "core/slabhash/detail/table_view.cuh"

namespace gpudict {

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
void slab_hash_map<Key, Value>::update(const Key* keys, const Value* values, const bool* erase, std::uint64_t n,
                                       cudaStream_t stream) {
  impl_->table.follow(stream);
  impl_->table.update_mixed_device(keys, values, erase, n);
}

template <class Key, class Value>
range_output<Key, Value> slab_hash_map<Key, Value>::apply(const std::uint8_t* ops, op_code uniform, const Key* keys,
                                                          const Value* values, const Key* upper, std::uint64_t n,
                                                          const mixed_outputs<Key, Value>& out, cudaStream_t stream) {
  static_assert(static_cast<int>(op_code::insert) == slabhash::kOpInsert &&
                    static_cast<int>(op_code::erase) == slabhash::kOpDelete &&
                    static_cast<int>(op_code::find) == slabhash::kOpLookup &&
                    static_cast<int>(op_code::count) == slabhash::kOpCount &&
                    static_cast<int>(op_code::range) == slabhash::kOpRange,
                "op_code and the batch kernel's operation codes agree");
  if (upper != nullptr)
    throw InputError("slab_hash_map::apply: counts and ranges are of one key each; upper bounds must be null");
  impl_->table.follow(stream);
  return impl_->table.apply_device(ops, static_cast<std::uint8_t>(uniform), keys, values, n, out);
}

template <class Key, class Value>
void slab_hash_map<Key, Value>::cleanup(cudaStream_t stream) {
  impl_->table.follow(stream);
  impl_->table.cleanup();
}

template <class Key, class Value>
slab_hash_stats slab_hash_map<Key, Value>::stats() const {
  impl_->table.live_keys();  // folds in what refs changed
  return impl_->table.stats();
}

template <class Key, class Value>
const slab_hash_options& slab_hash_map<Key, Value>::options() const {
  return impl_->table.options();
}

template <class Key, class Value>
std::uint64_t slab_hash_map<Key, Value>::device_bytes_needed(const capacity_bounds& bounds) const {
  return impl_->table.device_bytes_needed(bounds);
}

template <class Key, class Value>
void slab_hash_map<Key, Value>::set_timing(device_timing* timing) {
  impl_->table.set_timing(timing);
}

template <class Key, class Value>
void slab_hash_map<Key, Value>::reserve(std::uint64_t inserts) {
  impl_->table.reserve_device(inserts);
}

template <class Key, class Value>
slab_hash_view slab_hash_map<Key, Value>::view() {
  const slabhash::TableRef<Key> t = impl_->table.device_table();  // (creates the table first)
  return slabhash::table_view(t, impl_->table.ref_counts(), impl_->table.mode());
}

template class slab_hash_map<std::uint32_t, std::uint32_t>;
template class slab_hash_map<std::uint32_t, std::uint64_t>;
template class slab_hash_map<std::uint64_t, std::uint64_t>;

}  // namespace gpudict
