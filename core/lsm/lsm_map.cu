// lsm_map<Key, Value> (lsm_map.hpp) over Lsm<Key, Value>.
#include "core/lsm/lsm_map.hpp"

#include <string>
#include <utility>

#include "core/common/container_snapshot_impl.cuh"
#include "core/common/stream_follow.hpp"
#include "core/lsm/detail/lsm_impl.cuh"

namespace gpudict {

template <class Key, class Value>
struct lsm_map<Key, Value>::impl {
  lsm::Lsm<Key, Value> lsm;
  std::uint64_t snapshots_taken = 0;  // names the next snapshot
  impl(const lsm_options& o, int device) : lsm(device, o) {}
  // container_snapshot's (container_snapshot_impl.cuh).
  lsm::Lsm<Key, Value>& structure() { return lsm; }
  const void* ref_source(const std::string& snapshot) { return lsm.device_view(snapshot); }
};

template <class Key, class Value>
lsm_map<Key, Value>::lsm_map(const lsm_options& options, int device) {
  lsm::validate(options);
  impl_ = std::make_unique<impl>(options, device_or_current(device));
}

template <class Key, class Value>
lsm_map<Key, Value>::~lsm_map() = default;
template <class Key, class Value>
lsm_map<Key, Value>::lsm_map(lsm_map&&) noexcept = default;
template <class Key, class Value>
lsm_map<Key, Value>& lsm_map<Key, Value>::operator=(lsm_map&&) noexcept = default;

template <class Key, class Value>
void lsm_map<Key, Value>::build(const Key* keys, const Value* values, std::uint64_t n, cudaStream_t stream) {
  impl_->lsm.follow(stream);
  impl_->lsm.build_device(keys, values, n);
}

template <class Key, class Value>
void lsm_map<Key, Value>::insert_or_assign(const Key* keys, const Value* values, std::uint64_t n,
                                           cudaStream_t stream) {
  impl_->lsm.follow(stream);
  impl_->lsm.update_device(keys, values, nullptr, n, true);
}

template <class Key, class Value>
void lsm_map<Key, Value>::erase(const Key* keys, std::uint64_t n, cudaStream_t stream) {
  impl_->lsm.follow(stream);
  impl_->lsm.update_device(keys, nullptr, nullptr, n, false);
}

template <class Key, class Value>
void lsm_map<Key, Value>::update(const Key* keys, const Value* values, const bool* erase, std::uint64_t n,
                                 cudaStream_t stream) {
  impl_->lsm.follow(stream);
  impl_->lsm.update_device(keys, values, erase, n, true);
}

template <class Key, class Value>
void lsm_map<Key, Value>::cleanup(cudaStream_t stream) {
  impl_->lsm.follow(stream);
  impl_->lsm.cleanup();
}

template <class Key, class Value>
lsm_stats lsm_map<Key, Value>::stats() const {
  return impl_->lsm.stats();
}

template <class Key, class Value>
const lsm_options& lsm_map<Key, Value>::options() const {
  return impl_->lsm.options();
}

template <class Key, class Value>
std::uint64_t lsm_map<Key, Value>::device_bytes_needed(const capacity_bounds& bounds) const {
  return impl_->lsm.device_bytes_needed(bounds);
}

template <class Key, class Value>
void lsm_map<Key, Value>::set_timing(device_timing* timing) {
  impl_->lsm.set_timing(timing);
}

template <class Key, class Value>
void lsm_map<Key, Value>::find(const Key* keys, std::uint64_t n, Value* values_out, bool* found_out,
                               cudaStream_t stream) {
  impl_->lsm.follow(stream);
  impl_->lsm.find_device(keys, n, values_out, found_out);
}

template <class Key, class Value>
void lsm_map<Key, Value>::count(const Key* lo, const Key* hi, std::uint64_t n, std::uint64_t* counts_out,
                                cudaStream_t stream) {
  impl_->lsm.follow(stream);
  impl_->lsm.count_device(lo, hi, n, counts_out);
}

template <class Key, class Value>
std::uint64_t lsm_map<Key, Value>::range(const Key* lo, const Key* hi, std::uint64_t n, std::uint64_t* offsets_out,
                                         Key* keys_out, Value* values_out, std::uint64_t capacity,
                                         cudaStream_t stream) {
  impl_->lsm.follow(stream);
  return impl_->lsm.range_device(lo, hi, n, offsets_out, keys_out, values_out, capacity);
}

template <class Key, class Value>
void lsm_map<Key, Value>::successor(const Key* keys, std::uint64_t n, Key* keys_out, Value* values_out,
                                    bool* found_out, cudaStream_t stream) {
  impl_->lsm.follow(stream);
  impl_->lsm.successor_device(keys, n, keys_out, values_out, found_out);
}

template <class Key, class Value>
std::uint64_t lsm_map<Key, Value>::stored_elements() const {
  return impl_->lsm.stored_elements();
}

template <class Key, class Value>
const void* lsm_map<Key, Value>::device_view() const {
  return impl_->lsm.device_view();
}

template <class Key, class Value>
container_snapshot<lsm_map<Key, Value>> lsm_map<Key, Value>::snapshot() {
  std::string name = std::to_string(impl_->snapshots_taken++);
  impl_->lsm.snapshot(name);
  return container_snapshot<lsm_map>(impl_.get(), std::move(name));
}

template class container_snapshot<lsm_map<std::uint32_t, std::uint32_t>>;
template class container_snapshot<lsm_map<std::uint32_t, std::uint64_t>>;
template class container_snapshot<lsm_map<std::uint64_t, std::uint64_t>>;

template class lsm_map<std::uint32_t, std::uint32_t>;
template class lsm_map<std::uint32_t, std::uint64_t>;
template class lsm_map<std::uint64_t, std::uint64_t>;

}  // namespace gpudict
