// btree_map<Key, Value> (btree_map.hpp) over the tree of its word type: the
// wider of Key and Value (node.hpp).
#include "core/btree/btree_map.hpp"

#include <type_traits>

#include "core/btree/detail/btree_impl.cuh"
#include "core/common/stream_follow.hpp"
#include "core/common/key_traits.hpp"

namespace gpudict {

template <class Key, class Value>
struct btree_map<Key, Value>::impl {
  using Word = std::conditional_t<sizeof(Key) == 8 || sizeof(Value) == 8, std::uint64_t, std::uint32_t>;
  btree::BTree<Word> tree;
  impl(const btree_options& o, int device)
      : tree(device, o, kv_name<Key, Value>(), static_cast<int>(8 * sizeof(Key))) {}

  btree::DeviceSource source(const Key* keys, const void* args, int arg_bytes, OpType type, std::uint64_t n) {
    btree::DeviceSource s;
    s.keys = keys;
    s.key_bytes = sizeof(Key);
    s.args = args;
    s.arg_bytes = arg_bytes;
    s.type = static_cast<uint8_t>(type);
    s.n = n;
    return s;
  }
};


template <class Key, class Value>
btree_map<Key, Value>::btree_map(const btree_options& options, int device) {
  btree::validate(options);
  impl_ = std::make_unique<impl>(options, device_or_current(device));
}

template <class Key, class Value>
btree_map<Key, Value>::~btree_map() = default;
template <class Key, class Value>
btree_map<Key, Value>::btree_map(btree_map&&) noexcept = default;
template <class Key, class Value>
btree_map<Key, Value>& btree_map<Key, Value>::operator=(btree_map&&) noexcept = default;

template <class Key, class Value>
void btree_map<Key, Value>::build(const Key* keys, const Value* values, std::uint64_t n, cudaStream_t stream) {
  impl_->tree.follow(stream);
  impl_->tree.build_device(impl_->source(keys, values, sizeof(Value), OpType::Insert, n));
}

template <class Key, class Value>
void btree_map<Key, Value>::insert_or_assign(const Key* keys, const Value* values, std::uint64_t n,
                                             cudaStream_t stream) {
  impl_->tree.follow(stream);
  impl_->tree.update_device(impl_->source(keys, values, sizeof(Value), OpType::Insert, n));
}

template <class Key, class Value>
void btree_map<Key, Value>::erase(const Key* keys, std::uint64_t n, cudaStream_t stream) {
  impl_->tree.follow(stream);
  impl_->tree.update_device(impl_->source(keys, nullptr, sizeof(Value), OpType::Delete, n));
}

template <class Key, class Value>
void btree_map<Key, Value>::find(const Key* keys, std::uint64_t n, Value* values_out, bool* found_out,
                                 cudaStream_t stream) {
  impl_->tree.follow(stream);
  impl_->tree.query_device(impl_->source(keys, nullptr, sizeof(Value), OpType::Lookup, n), values_out,
                           sizeof(Value), nullptr, sizeof(Key), found_out);
}

template <class Key, class Value>
void btree_map<Key, Value>::count(const Key* lo, const Key* hi, std::uint64_t n, std::uint64_t* counts_out,
                                  cudaStream_t stream) {
  impl_->tree.follow(stream);
  impl_->tree.query_device(impl_->source(lo, hi, sizeof(Key), OpType::Count, n), counts_out, 8, nullptr,
                           sizeof(Key), nullptr);
}

template <class Key, class Value>
std::uint64_t btree_map<Key, Value>::range(const Key* lo, const Key* hi, std::uint64_t n, std::uint64_t* offsets_out,
                                           Key* keys_out, Value* values_out, std::uint64_t capacity,
                                           cudaStream_t stream) {
  static_assert(sizeof(std::uint64_t) == sizeof(unsigned long long), "offsets are 64-bit");
  impl_->tree.follow(stream);
  return impl_->tree.range_device(impl_->source(lo, hi, sizeof(Key), OpType::Range, n),
                                  reinterpret_cast<unsigned long long*>(offsets_out), keys_out, sizeof(Key),
                                  values_out, sizeof(Value), capacity);
}

template <class Key, class Value>
void btree_map<Key, Value>::successor(const Key* keys, std::uint64_t n, Key* keys_out, Value* values_out,
                                      bool* found_out, cudaStream_t stream) {
  impl_->tree.follow(stream);
  impl_->tree.query_device(impl_->source(keys, nullptr, sizeof(Value), OpType::Successor, n), values_out,
                           sizeof(Value), keys_out, sizeof(Key), found_out);
}

template <class Key, class Value>
std::uint64_t btree_map<Key, Value>::size() const {
  impl_->tree.refresh();
  return impl_->tree.size();
}

template <class Key, class Value>
void btree_map<Key, Value>::reserve_nodes(std::uint64_t free_nodes) {
  impl_->tree.reserve_free_nodes(free_nodes);
}

template <class Key, class Value>
btree_view btree_map<Key, Value>::view() {
  const auto r = impl_->tree.device_view();
  btree_view v;
  v.nodes = r.nodes;
  v.header = r.hdr;
  v.capacity = r.capacity;
  v.word_bytes = sizeof(typename impl::Word);
  return v;
}

template class btree_map<std::uint32_t, std::uint32_t>;
template class btree_map<std::uint32_t, std::uint64_t>;
template class btree_map<std::uint64_t, std::uint32_t>;
template class btree_map<std::uint64_t, std::uint64_t>;

}  // namespace gpudict
