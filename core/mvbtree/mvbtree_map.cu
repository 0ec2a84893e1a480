// mvbtree_map<Key, Value> (mvbtree_map.hpp) over the versioned tree of its
// word type (core/mvbtree/detail/versioned_tree.cuh): latest-state calls
// go to the B-Tree's paths, snapshot queries to snapshot_queries.cuh.
#include "core/mvbtree/mvbtree_map.hpp"

#include <map>
#include <string>
#include <type_traits>

#include "core/btree/detail/typed_calls.cuh"
#include "core/common/container_snapshot_impl.cuh"
#include "core/common/device_buffer.hpp"
#include "core/common/grid.cuh"
#include "core/common/pinned_buffer.cuh"
#include "core/common/stream_copy.hpp"
#include "core/common/key_traits.hpp"
#include "core/common/stream_follow.hpp"
#include "core/mvbtree/detail/queries_first.cuh"
#include "core/mvbtree/detail/snapshot_queries.cuh"
#include "core/mvbtree/detail/versioned_tree.cuh"

namespace gpudict {

template <class Key, class Value>
struct mvbtree_map<Key, Value>::impl {
  using Word = std::conditional_t<sizeof(Key) == 8 || sizeof(Value) == 8, std::uint64_t, std::uint32_t>;
  mvbtree::VersionedTree<Word> vt;
  DeviceBuffer<Key> pair_keys;  // a mixed call's range pairs in the caller's types
  DeviceBuffer<Value> pair_values;
  DeviceBuffer<unsigned long long> range_sizes, range_offsets;  // snapshot ranges' scratch
  std::map<std::string, mvbtree_view> views;                   // ref_source()'s, by snapshot
  // A mixed call split into its queries and its updates (queries_first.cuh).
  DeviceBuffer<uint32_t> query_pos, update_pos;
  DeviceBuffer<unsigned long long> split_counts{2, "mvbtree mixed call"};
  PinnedBuffer<unsigned long long> h_split_counts;
  DeviceBuffer<bool> q_found;
  DeviceBuffer<Value> q_values;
  DeviceBuffer<Key> q_keys;
  DeviceBuffer<unsigned long long> q_counts, q_offsets;

  range_output<Key, Value> mixed(const std::uint8_t* ops, op_code uniform, const Key* keys, const Value* values,
                                 const Key* upper, std::uint64_t n, const mixed_outputs<Key, Value>& out);

  impl(const mvbtree_options& o, int device) : vt(device, o, static_cast<int>(8 * sizeof(Key))) {}
  btree::BTree<Word>& tree() { return vt.tree(); }

  mvbtree_view view_at(std::uint32_t stamp) {
    const auto r = vt.versions_ref();
    mvbtree_view v;
    v.tree.nodes = r.tree.nodes;
    v.tree.header = r.tree.hdr;
    v.tree.capacity = r.tree.capacity;
    v.tree.word_bytes = sizeof(Word);
    v.head_versions = r.head_v;
    v.copies = r.copies;
    v.copy_versions = r.copy_v;
    v.copy_capacity = r.copy_capacity;
    v.stamp = stamp;
    return v;
  }

  // container_snapshot's structure (container_snapshot_impl.cuh).
  impl& structure() { return *this; }
  void follow(cudaStream_t s) { tree().follow(s); }
  void drop_snapshot(const std::string& name) {
    views.erase(name);
    vt.drop_snapshot(name);
  }
  void find_device(const Key* keys, std::uint64_t n, Value* values_out, bool* found_out, const std::string& name) {
    mvbtree::snapshot_find<Word>(vt, vt.stamp_of(name), keys, n, values_out, found_out);
  }
  void count_device(const Key* lo, const Key* hi, std::uint64_t n, std::uint64_t* counts_out,
                    const std::string& name) {
    mvbtree::snapshot_count<Word>(vt, vt.stamp_of(name), lo, hi, n,
                                  reinterpret_cast<unsigned long long*>(counts_out));
  }
  std::uint64_t range_device(const Key* lo, const Key* hi, std::uint64_t n, std::uint64_t* offsets_out,
                             Key* keys_out, Value* values_out, std::uint64_t capacity, const std::string& name) {
    return mvbtree::snapshot_range<Word>(vt, range_sizes, range_offsets, vt.stamp_of(name), lo, hi, n,
                                         reinterpret_cast<unsigned long long*>(offsets_out), keys_out, values_out,
                                         capacity);
  }
  void successor_device(const Key* keys, std::uint64_t n, Key* keys_out, Value* values_out, bool* found_out,
                        const std::string& name) {
    mvbtree::snapshot_successor<Word>(vt, vt.stamp_of(name), keys, n, keys_out, values_out, found_out);
  }
  const void* ref_source(const std::string& name) {
    auto& v = views[name];
    v = view_at(vt.stamp_of(name));
    return &v;
  }
};

template <class Key, class Value>
mvbtree_map<Key, Value>::mvbtree_map(const mvbtree_options& options, int device) {
  mvbtree::validate(options);
  impl_ = std::make_unique<impl>(options, device_or_current(device));
}

template <class Key, class Value>
mvbtree_map<Key, Value>::~mvbtree_map() = default;
template <class Key, class Value>
mvbtree_map<Key, Value>::mvbtree_map(mvbtree_map&&) noexcept = default;
template <class Key, class Value>
mvbtree_map<Key, Value>& mvbtree_map<Key, Value>::operator=(mvbtree_map&&) noexcept = default;

template <class Key, class Value>
void mvbtree_map<Key, Value>::build(const Key* keys, const Value* values, std::uint64_t n, cudaStream_t stream) {
  impl_->follow(stream);
  impl_->vt.build_device(btree::typed_source(keys, values, static_cast<const Key*>(nullptr), OpType::Insert, n));
}

template <class Key, class Value>
void mvbtree_map<Key, Value>::insert_or_assign(const Key* keys, const Value* values, std::uint64_t n,
                                               cudaStream_t stream) {
  impl_->follow(stream);
  impl_->vt.update_device(btree::typed_source(keys, values, static_cast<const Key*>(nullptr), OpType::Insert, n));
}

template <class Key, class Value>
void mvbtree_map<Key, Value>::erase(const Key* keys, std::uint64_t n, cudaStream_t stream) {
  impl_->follow(stream);
  impl_->vt.update_device(btree::typed_source(keys, static_cast<const Value*>(nullptr),
                                              static_cast<const Key*>(nullptr), OpType::Delete, n));
}

template <class Key, class Value>
void mvbtree_map<Key, Value>::update(const Key* keys, const Value* values, const bool* erase, std::uint64_t n,
                                     cudaStream_t stream) {
  impl_->follow(stream);
  btree::DeviceSource s = btree::typed_source(keys, values, static_cast<const Key*>(nullptr), OpType::Insert, n);
  s.erase = erase;
  impl_->vt.update_device(s);
}

template <class Key, class Value>
void mvbtree_map<Key, Value>::find(const Key* keys, std::uint64_t n, Value* values_out, bool* found_out,
                                   cudaStream_t stream) {
  impl_->follow(stream);
  impl_->tree().query_device(btree::typed_source(keys, static_cast<const Value*>(nullptr),
                                                 static_cast<const Key*>(nullptr), OpType::Lookup, n),
                             values_out, sizeof(Value), nullptr, sizeof(Key), found_out);
}

template <class Key, class Value>
void mvbtree_map<Key, Value>::count(const Key* lo, const Key* hi, std::uint64_t n, std::uint64_t* counts_out,
                                    cudaStream_t stream) {
  impl_->follow(stream);
  impl_->tree().query_device(btree::typed_source(lo, static_cast<const Value*>(nullptr), hi, OpType::Count, n),
                             counts_out, 8, nullptr, sizeof(Key), nullptr);
}

template <class Key, class Value>
std::uint64_t mvbtree_map<Key, Value>::range(const Key* lo, const Key* hi, std::uint64_t n,
                                             std::uint64_t* offsets_out, Key* keys_out, Value* values_out,
                                             std::uint64_t capacity, cudaStream_t stream) {
  impl_->follow(stream);
  return impl_->tree().range_device(
      btree::typed_source(lo, static_cast<const Value*>(nullptr), hi, OpType::Range, n),
      reinterpret_cast<unsigned long long*>(offsets_out), keys_out, sizeof(Key), values_out, sizeof(Value),
      capacity);
}

template <class Key, class Value>
void mvbtree_map<Key, Value>::successor(const Key* keys, std::uint64_t n, Key* keys_out, Value* values_out,
                                        bool* found_out, cudaStream_t stream) {
  impl_->follow(stream);
  impl_->tree().query_device(btree::typed_source(keys, static_cast<const Value*>(nullptr),
                                                 static_cast<const Key*>(nullptr), OpType::Successor, n),
                             values_out, sizeof(Value), keys_out, sizeof(Key), found_out);
}

template <class Key, class Value>
range_output<Key, Value> mvbtree_map<Key, Value>::impl::mixed(const std::uint8_t* ops, op_code uniform,
                                                              const Key* keys, const Value* values, const Key* upper,
                                                              std::uint64_t n, const mixed_outputs<Key, Value>& out) {
  const btree::DeviceSource src = btree::typed_mixed_source(ops, uniform, keys, values, upper, n);
  constexpr std::uint32_t kUpdates = 3u;  // the codes insert (0) and erase (1)
  const std::uint32_t kinds = ops ? out.kinds_hint : 1u << static_cast<unsigned>(uniform);
  // One kind of operation only (when the hint says so): no split.
  if (kinds != 0 && (kinds & ~kUpdates) == 0) {
    vt.update_device(src);
    return {};
  }
  if (kinds != 0 && (kinds & kUpdates) == 0)
    return btree::typed_pairs(tree().apply_device(src, btree::typed_outputs(out, ops, uniform)), pair_keys,
                              pair_values, vt.stream());
  // Queries first, on the state before the call, then the updates.
  const cudaStream_t s = vt.stream();
  query_pos.reserve_discard(n, "mvbtree mixed call");
  update_pos.reserve_discard(n, "mvbtree mixed call");
  h_split_counts.reserve_discard(2);
  auto& temp = vt.cub_temp();
  vt.timer().start(s);
  temp.run("mvbtree mixed call split", mvbtree::select_positions(ops, true, query_pos.data(), split_counts.data(), n, s));
  temp.run("mvbtree mixed call split",
           mvbtree::select_positions(ops, false, update_pos.data(), split_counts.data() + 1, n, s));
  vt.add_time(vt.timer().stop(s));
  copy_to_host(s, h_split_counts.data(), split_counts.data(), 2 * sizeof(unsigned long long));
  const std::uint64_t q = h_split_counts[0], u = h_split_counts[1];
  range_output<Key, Value> pairs;
  if (q > 0) {
    btree::DeviceSource qs = src;
    qs.index = query_pos.data();
    qs.n = q;
    mixed_outputs<Key, Value> tmp;
    if (out.found) tmp.found = (q_found.reserve_discard(q, "mvbtree mixed call"), q_found.data());
    if (out.values) tmp.values = (q_values.reserve_discard(q, "mvbtree mixed call"), q_values.data());
    if (out.keys) tmp.keys = (q_keys.reserve_discard(q, "mvbtree mixed call"), q_keys.data());
    if (out.counts)
      tmp.counts = reinterpret_cast<std::uint64_t*>((q_counts.reserve_discard(q, "mvbtree mixed call"), q_counts.data()));
    if (out.offsets)
      tmp.offsets =
          reinterpret_cast<std::uint64_t*>((q_offsets.reserve_discard(q, "mvbtree mixed call"), q_offsets.data()));
    tmp.range_hint = out.range_hint;
    tmp.kinds_hint = kinds & ~kUpdates;
    // The pairs copied out of the tree's buffers: the update pass after them may reuse those.
    pairs = btree::typed_pairs(tree().apply_device(qs, btree::typed_outputs(tmp, ops, uniform)), pair_keys,
                               pair_values, s, true);
    vt.timer().start(s);
    mvbtree::scatter_results_kernel<Key, Value><<<blocks_for(q, 256), 256, 0, s>>>(
        query_pos.data(), q, ops, q_found.data(), q_values.data(), q_keys.data(), q_counts.data(), q_offsets.data(),
        out);
    GPUDICT_CHECK_LAUNCH("mvbtree scatter_results_kernel");
    vt.add_time(vt.timer().stop(s));
  }
  if (u > 0) {
    btree::DeviceSource us = src;
    us.index = update_pos.data();
    us.n = u;
    vt.update_device(us);
  }
  GPUDICT_CUDA(cudaStreamSynchronize(s));
  return pairs;
}

template <class Key, class Value>
range_output<Key, Value> mvbtree_map<Key, Value>::apply(const std::uint8_t* ops, op_code uniform, const Key* keys,
                                                        const Value* values, const Key* upper, std::uint64_t n,
                                                        const mixed_outputs<Key, Value>& out, cudaStream_t stream) {
  impl_->follow(stream);
  if (n == 0) return {};
  return impl_->mixed(ops, uniform, keys, values, upper, n, out);
}

template <class Key, class Value>
container_snapshot<mvbtree_map<Key, Value>> mvbtree_map<Key, Value>::snapshot() {
  return container_snapshot<mvbtree_map>(impl_.get(), impl_->vt.take_snapshot());
}

template <class Key, class Value>
std::uint64_t mvbtree_map<Key, Value>::size() const {
  impl_->tree().refresh();
  return impl_->tree().size();
}

template <class Key, class Value>
mvbtree_stats mvbtree_map<Key, Value>::stats() const {
  const mvbtree::VersionCounts c = impl_->vt.counts();
  mvbtree_stats s;
  s.tree = impl_->tree().stats();
  s.snapshots = c.snapshots;
  s.version_copies = c.copies;
  s.version_pool_nodes = c.copy_capacity;
  s.copies_made = c.copies_made;
  s.copies_reclaimed = c.copies_reclaimed;
  s.versioned_leaves = c.versioned_leaves;
  s.stamp = c.stamp;
  s.renumberings = c.renumberings;
  s.version_bytes = c.version_bytes;
  s.version_scratch_bytes = c.scratch_bytes + impl_->range_sizes.bytes() + impl_->range_offsets.bytes() +
                            impl_->pair_keys.bytes() + impl_->pair_values.bytes() + impl_->query_pos.bytes() +
                            impl_->update_pos.bytes() + impl_->q_found.bytes() + impl_->q_values.bytes() +
                            impl_->q_keys.bytes() + impl_->q_counts.bytes() + impl_->q_offsets.bytes();
  s.device_bytes = s.tree.device_bytes + s.version_bytes + s.version_scratch_bytes;
  return s;
}

template <class Key, class Value>
const mvbtree_options& mvbtree_map<Key, Value>::options() const {
  return impl_->vt.options();
}

template <class Key, class Value>
std::uint64_t mvbtree_map<Key, Value>::device_bytes_needed(const capacity_bounds& bounds) const {
  using Word = typename impl::Word;
  return impl_->vt.device_bytes_needed(bounds) +
         (std::is_same_v<Key, Word> && std::is_same_v<Value, Word>
              ? 0
              : bounds.max_queries * btree::BTree<Word>::kBoundRangePairs * (sizeof(Key) + sizeof(Value)));
}

template <class Key, class Value>
void mvbtree_map<Key, Value>::set_timing(device_timing* timing) {
  impl_->vt.set_timing(timing);
}

template <class Key, class Value>
mvbtree_view mvbtree_map<Key, Value>::view() {
  return impl_->view_at(mvbtree::kLatest);
}

template <class Key, class Value>
void mvbtree::Inspect<Key, Value>::dump(const mvbtree_map<Key, Value>& map, VersionDump<Word>& d) {
  map.impl_->vt.dump(d);
}

template class mvbtree_map<std::uint32_t, std::uint32_t>;
template class mvbtree_map<std::uint32_t, std::uint64_t>;
template class mvbtree_map<std::uint64_t, std::uint64_t>;
template class container_snapshot<mvbtree_map<std::uint32_t, std::uint32_t>>;
template class container_snapshot<mvbtree_map<std::uint32_t, std::uint64_t>>;
template class container_snapshot<mvbtree_map<std::uint64_t, std::uint64_t>>;
template struct mvbtree::Inspect<std::uint32_t, std::uint32_t>;
template struct mvbtree::Inspect<std::uint32_t, std::uint64_t>;
template struct mvbtree::Inspect<std::uint64_t, std::uint64_t>;

}  // namespace gpudict
