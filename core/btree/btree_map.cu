// btree_map<Key, Value> (btree_map.hpp) over the tree of its word type: the
// wider of Key and Value (node.hpp).
#include "core/btree/btree_map.hpp"

#include <type_traits>

#include "core/btree/detail/btree_check.hpp"
#include "core/btree/detail/btree_impl.cuh"
#include "core/btree/detail/typed_calls.cuh"
#include "core/common/device_buffer.hpp"
#include "core/common/key_traits.hpp"
#include "core/common/stream_follow.hpp"
#include "core/common/width_copy.cuh"

namespace gpudict {

template <class Key, class Value>
struct btree_map<Key, Value>::impl {
  using Word = std::conditional_t<sizeof(Key) == 8 || sizeof(Value) == 8, std::uint64_t, std::uint32_t>;
  btree::BTree<Word> tree;
  // A mixed call's range pairs narrowed to Key and Value (when either is
  // narrower than Word).
  DeviceBuffer<Key> pair_keys;
  DeviceBuffer<Value> pair_values;
  impl(const btree_options& o, int device) : tree(device, o, static_cast<int>(8 * sizeof(Key))) {}

  static btree::DeviceSource source(const Key* keys, const Value* args, const Key* upper, OpType type,
                                    std::uint64_t n) {
    return btree::typed_source(keys, args, upper, type, n);
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
  impl_->tree.build_device(impl::source(keys, values, nullptr, OpType::Insert, n));
}

template <class Key, class Value>
void btree_map<Key, Value>::insert_or_assign(const Key* keys, const Value* values, std::uint64_t n,
                                             cudaStream_t stream) {
  impl_->tree.follow(stream);
  impl_->tree.update_device(impl::source(keys, values, nullptr, OpType::Insert, n));
}

template <class Key, class Value>
void btree_map<Key, Value>::erase(const Key* keys, std::uint64_t n, cudaStream_t stream) {
  impl_->tree.follow(stream);
  impl_->tree.update_device(impl::source(keys, nullptr, nullptr, OpType::Delete, n));
}

template <class Key, class Value>
void btree_map<Key, Value>::update(const Key* keys, const Value* values, const bool* erase, std::uint64_t n,
                                   cudaStream_t stream) {
  impl_->tree.follow(stream);
  btree::DeviceSource s = impl::source(keys, values, nullptr, OpType::Insert, n);
  s.erase = erase;
  impl_->tree.update_device(s);
}

template <class Key, class Value>
void btree_map<Key, Value>::find(const Key* keys, std::uint64_t n, Value* values_out, bool* found_out,
                                 cudaStream_t stream) {
  impl_->tree.follow(stream);
  impl_->tree.query_device(impl::source(keys, nullptr, nullptr, OpType::Lookup, n), values_out, sizeof(Value),
                           nullptr, sizeof(Key), found_out);
}

template <class Key, class Value>
void btree_map<Key, Value>::count(const Key* lo, const Key* hi, std::uint64_t n, std::uint64_t* counts_out,
                                  cudaStream_t stream) {
  impl_->tree.follow(stream);
  impl_->tree.query_device(impl::source(lo, nullptr, hi, OpType::Count, n), counts_out, 8, nullptr, sizeof(Key),
                           nullptr);
}

template <class Key, class Value>
std::uint64_t btree_map<Key, Value>::range(const Key* lo, const Key* hi, std::uint64_t n, std::uint64_t* offsets_out,
                                           Key* keys_out, Value* values_out, std::uint64_t capacity,
                                           cudaStream_t stream) {
  static_assert(sizeof(std::uint64_t) == sizeof(unsigned long long), "offsets are 64-bit");
  impl_->tree.follow(stream);
  return impl_->tree.range_device(impl::source(lo, nullptr, hi, OpType::Range, n),
                                  reinterpret_cast<unsigned long long*>(offsets_out), keys_out, sizeof(Key),
                                  values_out, sizeof(Value), capacity);
}

template <class Key, class Value>
void btree_map<Key, Value>::successor(const Key* keys, std::uint64_t n, Key* keys_out, Value* values_out,
                                      bool* found_out, cudaStream_t stream) {
  impl_->tree.follow(stream);
  impl_->tree.query_device(impl::source(keys, nullptr, nullptr, OpType::Successor, n), values_out, sizeof(Value),
                           keys_out, sizeof(Key), found_out);
}

template <class Key, class Value>
range_output<Key, Value> btree_map<Key, Value>::apply(const std::uint8_t* ops, op_code uniform, const Key* keys,
                                                      const Value* values, const Key* upper, std::uint64_t n,
                                                      const mixed_outputs<Key, Value>& out, cudaStream_t stream) {
  impl_->tree.follow(stream);
  const btree::MixedPairs<typename impl::Word> p = impl_->tree.apply_device(
      btree::typed_mixed_source(ops, uniform, keys, values, upper, n), btree::typed_outputs(out, ops, uniform));
  return btree::typed_pairs(p, impl_->pair_keys, impl_->pair_values, impl_->tree.stream());
}

template <class Key, class Value>
std::uint64_t btree_map<Key, Value>::size() const {
  impl_->tree.refresh();
  return impl_->tree.size();
}

template <class Key, class Value>
btree_stats btree_map<Key, Value>::stats() const {
  return impl_->tree.stats();
}

template <class Key, class Value>
const btree_options& btree_map<Key, Value>::options() const {
  return impl_->tree.options();
}

template <class Key, class Value>
std::uint64_t btree_map<Key, Value>::device_bytes_needed(const capacity_bounds& bounds) const {
  return impl_->tree.device_bytes_needed(bounds) +
         (std::is_same_v<Key, typename impl::Word> && std::is_same_v<Value, typename impl::Word>
              ? 0
              : bounds.max_queries * btree::BTree<typename impl::Word>::kBoundRangePairs *
                    (sizeof(Key) + sizeof(Value)));  // the narrowed copy of the range pairs
}

template <class Key, class Value>
void btree_map<Key, Value>::set_timing(device_timing* timing) {
  impl_->tree.set_timing(timing);
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

template <class Key, class Value>
void btree::Inspect<Key, Value>::dump(const btree_map<Key, Value>& map, std::vector<Node<Word>>& nodes,
                                      TreeHeader& header) {
  map.impl_->tree.dump(nodes, header);
}

template class btree_map<std::uint32_t, std::uint32_t>;
template class btree_map<std::uint32_t, std::uint64_t>;
template class btree_map<std::uint64_t, std::uint32_t>;
template class btree_map<std::uint64_t, std::uint64_t>;
template struct btree::Inspect<std::uint32_t, std::uint32_t>;
template struct btree::Inspect<std::uint32_t, std::uint64_t>;
template struct btree::Inspect<std::uint64_t, std::uint32_t>;
template struct btree::Inspect<std::uint64_t, std::uint64_t>;

}  // namespace gpudict
