// sorted_array_map<Key, Value> (sorted_array_map.hpp) over SortedArray<Key, Value>.
#include "core/sorted_array/sorted_array_map.hpp"

#include <string>
#include <utility>

#include "core/common/container_snapshot_impl.cuh"
#include "core/common/stream_follow.hpp"
#include "core/sorted_array/detail/sorted_array_impl.cuh"

namespace gpudict {

template <class Key, class Value>
struct sorted_array_map<Key, Value>::impl {
  sa::SortedArray<Key, Value> array;
  sa::ArrayView<Key, Value> view{};  // view_storage(), ref_source(): refreshed by each call
  std::uint64_t snapshots_taken = 0;  // names the next snapshot
  explicit impl(int device) : array(device) {}
  // container_snapshot's (container_snapshot_impl.cuh).
  sa::SortedArray<Key, Value>& structure() { return array; }
  const void* ref_source(const std::string& snapshot) {
    view = array.view(snapshot);
    return &view;
  }
};

template <class Key, class Value>
sorted_array_map<Key, Value>::sorted_array_map(int device) {
  impl_ = std::make_unique<impl>(device_or_current(device));
}

template <class Key, class Value>
sorted_array_map<Key, Value>::~sorted_array_map() = default;
template <class Key, class Value>
sorted_array_map<Key, Value>::sorted_array_map(sorted_array_map&&) noexcept = default;
template <class Key, class Value>
sorted_array_map<Key, Value>& sorted_array_map<Key, Value>::operator=(sorted_array_map&&) noexcept = default;

template <class Key, class Value>
void sorted_array_map<Key, Value>::build(const Key* keys, const Value* values, std::uint64_t n, cudaStream_t stream) {
  impl_->array.follow(stream);
  impl_->array.build_device(keys, values, n);
}

template <class Key, class Value>
void sorted_array_map<Key, Value>::insert_or_assign(const Key* keys, const Value* values, std::uint64_t n,
                                                    cudaStream_t stream) {
  impl_->array.follow(stream);
  impl_->array.update_device(keys, values, nullptr, n, true);
}

template <class Key, class Value>
void sorted_array_map<Key, Value>::erase(const Key* keys, std::uint64_t n, cudaStream_t stream) {
  impl_->array.follow(stream);
  impl_->array.update_device(keys, nullptr, nullptr, n, false);
}

template <class Key, class Value>
void sorted_array_map<Key, Value>::update(const Key* keys, const Value* values, const bool* erase, std::uint64_t n,
                                          cudaStream_t stream) {
  impl_->array.follow(stream);
  impl_->array.update_device(keys, values, erase, n, true);
}

template <class Key, class Value>
void sorted_array_map<Key, Value>::find(const Key* keys, std::uint64_t n, Value* values_out, bool* found_out,
                                        cudaStream_t stream) {
  impl_->array.follow(stream);
  impl_->array.find_device(keys, n, values_out, found_out);
}

template <class Key, class Value>
void sorted_array_map<Key, Value>::count(const Key* lo, const Key* hi, std::uint64_t n, std::uint64_t* counts_out,
                                         cudaStream_t stream) {
  impl_->array.follow(stream);
  impl_->array.count_device(lo, hi, n, counts_out);
}

template <class Key, class Value>
std::uint64_t sorted_array_map<Key, Value>::range(const Key* lo, const Key* hi, std::uint64_t n,
                                                  std::uint64_t* offsets_out, Key* keys_out, Value* values_out,
                                                  std::uint64_t capacity, cudaStream_t stream) {
  impl_->array.follow(stream);
  return impl_->array.range_device(lo, hi, n, offsets_out, keys_out, values_out, capacity);
}

template <class Key, class Value>
void sorted_array_map<Key, Value>::successor(const Key* keys, std::uint64_t n, Key* keys_out, Value* values_out,
                                             bool* found_out, cudaStream_t stream) {
  impl_->array.follow(stream);
  impl_->array.successor_device(keys, n, keys_out, values_out, found_out);
}

template <class Key, class Value>
std::uint64_t sorted_array_map<Key, Value>::size() const {
  return impl_->array.size();
}

template <class Key, class Value>
sorted_array_stats sorted_array_map<Key, Value>::stats() const {
  return impl_->array.stats();
}

template <class Key, class Value>
std::uint64_t sorted_array_map<Key, Value>::device_bytes_needed(const capacity_bounds& bounds) {
  return sa::SortedArray<Key, Value>::device_bytes_needed(bounds);
}

template <class Key, class Value>
void sorted_array_map<Key, Value>::set_timing(device_timing* timing) {
  impl_->array.set_timing(timing);
}

template <class Key, class Value>
const void* sorted_array_map<Key, Value>::view_storage() const {
  return impl_->ref_source({});
}

template <class Key, class Value>
container_snapshot<sorted_array_map<Key, Value>> sorted_array_map<Key, Value>::snapshot() {
  std::string name = std::to_string(impl_->snapshots_taken++);
  impl_->array.snapshot(name);
  return container_snapshot<sorted_array_map>(impl_.get(), std::move(name));
}

template class container_snapshot<sorted_array_map<std::uint32_t, std::uint32_t>>;
template class container_snapshot<sorted_array_map<std::uint32_t, std::uint64_t>>;
template class container_snapshot<sorted_array_map<std::uint64_t, std::uint64_t>>;

template class sorted_array_map<std::uint32_t, std::uint32_t>;
template class sorted_array_map<std::uint32_t, std::uint64_t>;
template class sorted_array_map<std::uint64_t, std::uint64_t>;

}  // namespace gpudict
