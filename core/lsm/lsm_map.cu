// lsm_map<Key, Value> (lsm_map.hpp) over Lsm<Key, Value>.
#include "core/lsm/lsm_map.hpp"

#include "core/common/stream_follow.hpp"
#include "core/lsm/lsm_impl.cuh"

namespace gpudict {

template <class Key, class Value>
struct lsm_map<Key, Value>::impl {
  lsm::Lsm<Key, Value> lsm;
  std::uint64_t snapshots_taken = 0;  // names the next snapshot
  impl(const lsm_options& o, int device) : lsm(device, o) {}
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
  impl_->lsm.update_device(keys, values, n, true);
}

template <class Key, class Value>
void lsm_map<Key, Value>::erase(const Key* keys, std::uint64_t n, cudaStream_t stream) {
  impl_->lsm.follow(stream);
  impl_->lsm.update_device(keys, nullptr, n, false);
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
lsm_snapshot<Key, Value> lsm_map<Key, Value>::snapshot() {
  std::string name = std::to_string(impl_->snapshots_taken++);
  DeviceTime t;
  impl_->lsm.snapshot(name, t);
  return lsm_snapshot<Key, Value>(impl_.get(), std::move(name));
}

// ---- lsm_snapshot ----

template <class Key, class Value>
typename lsm_map<Key, Value>::impl& lsm_snapshot<Key, Value>::map() const {
  return *static_cast<typename lsm_map<Key, Value>::impl*>(owner_);
}

template <class Key, class Value>
lsm_snapshot<Key, Value>::lsm_snapshot(lsm_snapshot&& o) noexcept
    : owner_(std::exchange(o.owner_, nullptr)), name_(std::move(o.name_)) {}

template <class Key, class Value>
lsm_snapshot<Key, Value>& lsm_snapshot<Key, Value>::operator=(lsm_snapshot&& o) noexcept {
  if (this != &o) {
    this->~lsm_snapshot();
    owner_ = std::exchange(o.owner_, nullptr);
    name_ = std::move(o.name_);
  }
  return *this;
}

template <class Key, class Value>
lsm_snapshot<Key, Value>::~lsm_snapshot() {
  if (!owner_) return;
  try {
    map().lsm.drop_snapshot(name_);
  } catch (...) {  // a destructor does not throw: the map releases the levels with itself
  }
  owner_ = nullptr;
}

template <class Key, class Value>
void lsm_snapshot<Key, Value>::find(const Key* keys, std::uint64_t n, Value* values_out, bool* found_out,
                                    cudaStream_t stream) const {
  map().lsm.follow(stream);
  map().lsm.find_device(keys, n, values_out, found_out, name_);
}

template <class Key, class Value>
void lsm_snapshot<Key, Value>::count(const Key* lo, const Key* hi, std::uint64_t n, std::uint64_t* counts_out,
                                     cudaStream_t stream) const {
  map().lsm.follow(stream);
  map().lsm.count_device(lo, hi, n, counts_out, name_);
}

template <class Key, class Value>
std::uint64_t lsm_snapshot<Key, Value>::range(const Key* lo, const Key* hi, std::uint64_t n,
                                              std::uint64_t* offsets_out, Key* keys_out, Value* values_out,
                                              std::uint64_t capacity, cudaStream_t stream) const {
  map().lsm.follow(stream);
  return map().lsm.range_device(lo, hi, n, offsets_out, keys_out, values_out, capacity, name_);
}

template <class Key, class Value>
void lsm_snapshot<Key, Value>::successor(const Key* keys, std::uint64_t n, Key* keys_out, Value* values_out,
                                         bool* found_out, cudaStream_t stream) const {
  map().lsm.follow(stream);
  map().lsm.successor_device(keys, n, keys_out, values_out, found_out, name_);
}

template <class Key, class Value>
const void* lsm_snapshot<Key, Value>::device_view() const {
  return map().lsm.device_view(name_);
}

template class lsm_snapshot<std::uint32_t, std::uint32_t>;
template class lsm_snapshot<std::uint32_t, std::uint64_t>;
template class lsm_snapshot<std::uint64_t, std::uint64_t>;

template class lsm_map<std::uint32_t, std::uint32_t>;
template class lsm_map<std::uint32_t, std::uint64_t>;
template class lsm_map<std::uint64_t, std::uint64_t>;

}  // namespace gpudict
