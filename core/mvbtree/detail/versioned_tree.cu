// VersionedTree (versioned_tree.cuh): the versions' bookkeeping around the
// B-Tree's calls, snapshots, the sweep and the renumbering.
#include "core/mvbtree/detail/versioned_tree.cuh"

#include <algorithm>
#include <cub/device/device_radix_sort.cuh>
#include <utility>

#include "core/common/cuda_check.hpp"
#include "core/common/errors.hpp"
#include "core/common/grid.cuh"
#include "core/common/stream_copy.hpp"

namespace gpudict::mvbtree {

void validate(const Options& o) {
  btree::validate(o.tree);
  if (o.stamp_limit < 4) throw InputError("mvbtree options: stamp_limit must be at least 4");
}

template <class Word>
VersionedTree<Word>::VersionedTree(int device, const Options& options, int key_bits)
    : opt_(options), tree_(device, options.tree, key_bits), d_scalars_(kScalars, "mvbtree counters") {
  h_scalars_.reserve_discard(kScalars);
  GPUDICT_CUDA(cudaMemsetAsync(d_scalars_.data(), 0, kScalars * sizeof(unsigned long long), stream()));
  cover_pool();
}

template <class Word>
void VersionedTree<Word>::read_scalars() {
  copy_to_host(stream(), h_scalars_.data(), d_scalars_.data(), kScalars * sizeof(unsigned long long));
}

template <class Word>
void VersionedTree<Word>::check_error(const char* what) {
  read_scalars();
  if (!h_scalars_[kError]) return;
  GPUDICT_CUDA(cudaMemsetAsync(d_scalars_.data() + kError, 0, sizeof(unsigned long long), stream()));
  throw RuntimeFailure(std::string("mvbtree: internal error in ") + what +
                       ": a version list ended before the snapshot's stamp, or a walk visited more nodes than the "
                       "pools hold (corrupt versions)");
}

// A device array grown to n entries keeping its first `keep` (the rest zero).
template <class T>
static void grow_keeping(DeviceBuffer<T>& b, uint64_t n, uint64_t keep, const char* what, cudaStream_t s) {
  if (n <= b.capacity()) return;
  DeviceBuffer<T> bigger(n, what);
  if (keep) GPUDICT_CUDA(cudaMemcpyAsync(bigger.data(), b.data(), keep * sizeof(T), cudaMemcpyDeviceToDevice, s));
  GPUDICT_CUDA(cudaMemsetAsync(bigger.data() + keep, 0, (n - keep) * sizeof(T), s));
  GPUDICT_CUDA(cudaStreamSynchronize(s));
  b = std::move(bigger);
}

template <class Word>
void VersionedTree<Word>::cover_pool() {
  const uint64_t nodes = tree_.node_capacity();
  if (nodes <= covered_) return;
  const uint64_t n = std::max<uint64_t>(nodes, covered_ + covered_ / 2);
  grow_keeping(head_v_, n, covered_, "mvbtree version words", stream());
  if (mark_.capacity()) grow_keeping(mark_, n, covered_, "mvbtree claim marks", stream());
  covered_ = n;
}

template <class Word>
void VersionedTree<Word>::reserve_copies(uint64_t copies) {
  const uint64_t fresh = copies > free_count_ ? copies - free_count_ : 0;  // beyond the free list
  const uint64_t need = copy_cursor_ + fresh;
  if (need <= copies_.capacity()) return;
  if (need > kMaxCopies)
    throw DeviceOutOfMemory("out of room for mvbtree versions: " + std::to_string(need) +
                            " leaf states would be held, more than the 2^30 - 1 the version words can name");
  const uint64_t n = std::max<uint64_t>({need, copies_.capacity() + copies_.capacity() / 2, 1024});
  const uint64_t cap = std::min<uint64_t>(n, kMaxCopies);
  DeviceBuffer<btree::Node<Word>> nodes(cap, "mvbtree version pool");
  DeviceBuffer<VWord> words(cap, "mvbtree version pool");
  DeviceBuffer<uint32_t> free_list(cap, "mvbtree version pool");
  const cudaStream_t s = stream();
  if (copy_cursor_) {
    GPUDICT_CUDA(cudaMemcpyAsync(nodes.data(), copies_.data(), copy_cursor_ * sizeof(btree::Node<Word>),
                                 cudaMemcpyDeviceToDevice, s));
    GPUDICT_CUDA(cudaMemcpyAsync(words.data(), copy_v_.data(), copy_cursor_ * sizeof(VWord),
                                 cudaMemcpyDeviceToDevice, s));
  }
  if (free_count_)
    GPUDICT_CUDA(cudaMemcpyAsync(free_list.data(), free_.data(), free_count_ * sizeof(uint32_t),
                                 cudaMemcpyDeviceToDevice, s));
  GPUDICT_CUDA(cudaStreamSynchronize(s));
  copies_ = std::move(nodes);
  copy_v_ = std::move(words);
  free_ = std::move(free_list);
}

template <class Word>
void VersionedTree<Word>::upload_live() {
  std::vector<uint32_t> stamps;
  stamps.reserve(live_.size());
  for (const auto& [name, s] : live_) stamps.push_back(s);
  std::sort(stamps.begin(), stamps.end());
  d_live_.reserve_discard(std::max<size_t>(stamps.size(), 1), "mvbtree snapshot table");
  if (!stamps.empty()) copy_to_device(stream(), d_live_.data(), stamps.data(), stamps.size() * sizeof(uint32_t));
}

template <class Word>
UpdateSource VersionedTree<Word>::update_source(const btree::DeviceSource& src) {
  UpdateSource u;
  u.keys = src.keys;
  u.key_bytes = src.key_bytes;
  u.types = src.types;
  u.erase = src.erase;
  u.index = src.index;
  u.type = src.type;
  u.n = src.n;
  return u;
}

template <class Word>
void VersionedTree<Word>::prepare_claims(uint64_t n, uint64_t leaves) {
  touched_.reserve_discard(n, "mvbtree claim lists");
  touched_old_.reserve_discard(n, "mvbtree claim lists");
  copy_of_.reserve_discard(n, "mvbtree claim lists");
  // Room for a copy of every leaf the call can claim, so that no claim
  // needs a host read before its copies (the merged path claims inside
  // the B-Tree's timed call). A failure here changes nothing.
  reserve_copies(std::min<uint64_t>(n, leaves + 1));
  if (++call_ == 0) {  // the marks' values wrapped: none may equal a new call's
    if (mark_.capacity()) GPUDICT_CUDA(cudaMemsetAsync(mark_.data(), 0, covered_ * sizeof(uint32_t), stream()));
    call_ = 1;
  }
  GPUDICT_CUDA(cudaMemsetAsync(d_scalars_.data() + kTouched, 0, 2 * sizeof(unsigned long long), stream()));
}

template <class Word>
ClaimLists VersionedTree<Word>::claim_lists() {
  return ClaimLists{touched_.data(), touched_old_.data(), copy_of_.data(), d_scalars_.data() + kTouched};
}

template <class Word>
uint32_t VersionedTree<Word>::newest_live() const {
  uint32_t newest = 0;
  for (const auto& [name, st] : live_) newest = std::max(newest, st);
  return newest;
}

template <class Word>
void VersionedTree<Word>::launch_copies(uint64_t n) {
  const CopyAlloc alloc{free_.data(), free_count_, copy_cursor_};
  copy_kernel<Word><<<blocks_for(n, 256), 256, 0, stream()>>>(
      tree_.internal_ref().nodes, copies_.data(), copy_v_.data(), head_v_.data(), claim_lists(), n, alloc,
      static_cast<uint32_t>(stamp_), HeadCount{d_scalars_.data() + kVersioned});
  GPUDICT_CHECK_LAUNCH("mvbtree copy_kernel");
}

template <class Word>
void VersionedTree<Word>::claim_by_descent(const btree::DeviceSource& src, double& ms) {
  const cudaStream_t s = stream();
  // The marks (a word per node) only this path needs: made at its first use.
  if (mark_.capacity() < covered_) grow_keeping(mark_, covered_, 0, "mvbtree claim marks", s);
  timer_.start(s);
  claim_kernel<Word><<<blocks_for(src.n, 256), 256, 0, s>>>(tree_.internal_ref(), head_v_.data(), mark_.data(), call_,
                                                             update_source(src), static_cast<uint32_t>(stamp_),
                                                             newest_live(), claim_lists(), error_flag());
  GPUDICT_CHECK_LAUNCH("mvbtree claim_kernel");
  launch_copies(src.n);
  ms += timer_.stop(s);
}

template <class Word>
void VersionedTree<Word>::claim_routed(const uint32_t* leaves, uint64_t n) {
  claim_routes_kernel<Word><<<blocks_for(n, 256), 256, 0, stream()>>>(
      leaves, n, head_v_.data(), static_cast<uint32_t>(stamp_), newest_live(), claim_lists());
  GPUDICT_CHECK_LAUNCH("mvbtree claim_routes_kernel");
  launch_copies(n);
}

template <class Word>
uint64_t VersionedTree<Word>::settle_claims() {
  check_error("claim_kernel");
  const uint64_t copies = h_scalars_[kCopies];
  const uint64_t from_free = std::min(copies, free_count_);
  free_count_ -= from_free;
  copy_cursor_ += copies - from_free;
  copies_made_ += copies;
  return h_scalars_[kTouched];
}

template <class Word>
void VersionedTree<Word>::finish_update(uint64_t touched, uint64_t first_new, double& ms) {
  if (touched == 0) return;
  const uint64_t end = std::min<uint64_t>(tree_.read_header().next_free, tree_.node_capacity());
  if (end <= first_new) return;  // the call split no leaf
  const cudaStream_t s = stream();
  low_[0].reserve_discard(touched, "mvbtree claim lists");
  low_[1].reserve_discard(touched, "mvbtree claim lists");
  low_ids_.reserve_discard(touched, "mvbtree claim lists");
  const ClaimLists lists{touched_.data(), touched_old_.data(), copy_of_.data(), d_scalars_.data() + kTouched};
  const auto sort = [&](void* p, size_t& bytes) {
    return cub::DeviceRadixSort::SortPairs(p, bytes, low_[0].data(), low_[1].data(), touched_.data(),
                                           low_ids_.data(), static_cast<int64_t>(touched), 0,
                                           static_cast<int>(8 * sizeof(Word)), s);
  };
  temp_.prepare("mvbtree origin sort", sort);
  timer_.start(s);
  touched_lows_kernel<Word><<<blocks_for(touched, 256), 256, 0, s>>>(tree_.internal_ref(), lists, touched,
                                                                     low_[0].data());
  GPUDICT_CHECK_LAUNCH("mvbtree touched_lows_kernel");
  temp_.run("mvbtree origin sort", sort);
  origin_kernel<Word><<<blocks_for(end - first_new, 256), 256, 0, s>>>(
      tree_.internal_ref(), head_v_.data(), low_[1].data(), low_ids_.data(), touched, first_new, end,
      static_cast<uint32_t>(stamp_), HeadCount{d_scalars_.data() + kVersioned}, error_flag());
  GPUDICT_CHECK_LAUNCH("mvbtree origin_kernel");
  ms += timer_.stop(s);
  check_error("origin_kernel");
}

template <class Word>
template <class Call>
void VersionedTree<Word>::versioned_update(const btree::DeviceSource& src, bool merged, Call call) {
  if (live_.empty() || src.n == 0) {
    call();
    cover_pool();
    return;
  }
  double ms = 0.0;
  const btree::TreeHeader h = tree_.read_header();
  const uint64_t first_new = h.next_free;
  trace_.mark(stream(), "start");
  prepare_claims(src.n, h.leaves);
  // The merged path claims from its own routing, before its first write;
  // the operations kernel's lists (and mixed calls) descend first.
  if (merged) tree_.leaf_hook = [this](const uint32_t* leaves, uint64_t n) { claim_routed(leaves, n); };
  else claim_by_descent(src, ms);
  trace_.mark(stream(), "claims");
  try {
    call();
    trace_.mark(stream(), "tree");
  } catch (...) {
    // The B-Tree abandons a call cleanly (a full fixed pool): the copies
    // and leaves it made before that still need their bookkeeping.
    tree_.leaf_hook = nullptr;
    try {
      const uint64_t touched = settle_claims();
      cover_pool();
      finish_update(touched, first_new, ms);
    } catch (...) {
    }
    throw;
  }
  tree_.leaf_hook = nullptr;
  const uint64_t touched = settle_claims();
  cover_pool();
  finish_update(touched, first_new, ms);
  trace_.mark(stream(), "origins");
  trace_.flush("mvbtree versioned update");
  add_time(ms);
}

template <class Word>
void VersionedTree<Word>::build_device(const btree::DeviceSource& pairs) {
  if (!live_.empty())
    throw InputError("mvbtree: a bulk build replaces the tree, and " + std::to_string(live_.size()) +
                     " snapshot(s) still read it: drop them first");
  tree_.build_device(pairs);
  cover_pool();
  // No snapshot is live, so no version is held: every word back to zero.
  GPUDICT_CUDA(cudaMemsetAsync(head_v_.data(), 0, covered_ * sizeof(VWord), stream()));
  GPUDICT_CUDA(cudaMemsetAsync(d_scalars_.data() + kVersioned, 0, sizeof(unsigned long long), stream()));
  GPUDICT_CUDA(cudaStreamSynchronize(stream()));
  copy_cursor_ = free_count_ = 0;
}

template <class Word>
void VersionedTree<Word>::update_device(const btree::DeviceSource& src) {
  const bool merged = !live_.empty() && src.n > 0 && tree_.merges_list(src.n);
  versioned_update(src, merged, [&] { tree_.update_device(src); });
}

template <class Word>
std::string VersionedTree<Word>::take_snapshot() {
  if (stamp_ + 1 > opt_.stamp_limit) renumber();
  const uint32_t s = static_cast<uint32_t>(stamp_++);
  std::string name = "v" + std::to_string(next_name_++);
  live_.emplace(name, s);
  upload_live();
  return name;
}

template <class Word>
void VersionedTree<Word>::drop_snapshot(const std::string& name) {
  auto it = live_.find(name);
  if (it == live_.end()) throw InputError("mvbtree: unknown snapshot '" + name + "'");
  live_.erase(it);
  upload_live();
  sweep();
}

template <class Word>
uint32_t VersionedTree<Word>::stamp_of(const std::string& name) const {
  auto it = live_.find(name);
  if (it == live_.end()) throw InputError("mvbtree: unknown snapshot '" + name + "'");
  return it->second;
}

template <class Word>
void VersionedTree<Word>::sweep() {
  read_scalars();
  if (h_scalars_[kVersioned] == 0) return;  // no head holds an older state
  const cudaStream_t s = stream();
  h_scalars_[kVersioned] = 0;
  h_scalars_[kFreed] = free_count_;
  copy_to_device(s, d_scalars_.data() + kVersioned, h_scalars_.data() + kVersioned, 2 * sizeof(unsigned long long));
  timer_.start(s);
  sweep_kernel<Word><<<blocks_for(covered_, 256), 256, 0, s>>>(
      head_v_.data(), copy_v_.data(), covered_, HeadCount{d_scalars_.data() + kVersioned}, free_.data(),
      d_scalars_.data() + kFreed, d_live_.data(), static_cast<uint32_t>(live_.size()), copies_.capacity(),
      error_flag());
  GPUDICT_CHECK_LAUNCH("mvbtree sweep_kernel");
  const double ms = timer_.stop(s);
  if (timing_) timing_->add_cleanup(ms);
  check_error("sweep_kernel");
  copies_reclaimed_ += h_scalars_[kFreed] - free_count_;
  free_count_ = h_scalars_[kFreed];
  if (free_count_ == copy_cursor_) {  // every copy free: the pool goes back to the device
    copy_cursor_ = free_count_ = 0;
    copies_.release();
    copy_v_.release();
    free_.release();
  }
}

template <class Word>
void VersionedTree<Word>::renumber() {
  const uint64_t k = live_.size();
  if (2 * k + 2 > opt_.stamp_limit)
    throw InputError("mvbtree: " + std::to_string(k) + " live snapshots need stamps up to " +
                     std::to_string(2 * k + 2) + ", above stamp_limit " + std::to_string(opt_.stamp_limit));
  upload_live();
  const uint64_t words = covered_ + copy_cursor_;
  const cudaStream_t s = stream();
  timer_.start(s);
  renumber_kernel<<<blocks_for(words, 256), 256, 0, s>>>(head_v_.data(), covered_, copy_v_.data(), copy_cursor_,
                                                         d_live_.data(), static_cast<uint32_t>(k));
  GPUDICT_CHECK_LAUNCH("mvbtree renumber_kernel");
  add_time(timer_.stop(s));
  std::vector<std::pair<uint32_t, std::string>> by_stamp;
  for (const auto& [name, st] : live_) by_stamp.emplace_back(st, name);
  std::sort(by_stamp.begin(), by_stamp.end());
  for (size_t i = 0; i < by_stamp.size(); ++i) live_[by_stamp[i].second] = static_cast<uint32_t>(2 * i + 2);
  stamp_ = 2 * k + 1;
  ++renumberings_;
  upload_live();
}

template <class Word>
VersionsRef<Word> VersionedTree<Word>::versions_ref() const {
  VersionsRef<Word> r;
  r.tree = tree_.internal_ref();
  r.head_v = head_v_.data();
  r.copies = copies_.data();
  r.copy_v = copy_v_.data();
  r.copy_capacity = copies_.capacity();
  return r;
}

template <class Word>
VersionCounts VersionedTree<Word>::counts() const {
  VersionCounts c;
  c.snapshots = live_.size();
  c.copies = copy_cursor_ - free_count_;
  c.copy_capacity = copies_.capacity();
  c.copies_made = copies_made_;
  c.copies_reclaimed = copies_reclaimed_;
  c.versioned_leaves = h_scalars_[kVersioned];
  c.stamp = stamp_;
  c.renumberings = renumberings_;
  c.version_bytes = head_v_.bytes() + copies_.bytes() + copy_v_.bytes() + free_.bytes() + d_live_.bytes();
  c.scratch_bytes = mark_.bytes() + touched_.bytes() + touched_old_.bytes() + copy_of_.bytes() + low_[0].bytes() +
                    low_[1].bytes() + low_ids_.bytes() + temp_.bytes();
  return c;
}

template <class Word>
uint64_t VersionedTree<Word>::device_bytes_needed(const capacity_bounds& b) const {
  const uint64_t tree = tree_.device_bytes_needed(b);
  // Per node of the B-Tree's pool (at most its bound's nodes): a version
  // word, and a claim mark when lists are claimed by descent.
  const uint64_t nodes = tree / sizeof(btree::Node<Word>) + 1;
  // Copies: each leaf at most once per snapshot interval (a state between
  // two snapshots), a leaf holding at least 7 keys (docs/btree.md).
  const uint64_t leaves = b.max_resident / 7 + 1;
  const uint64_t copies = b.max_snapshots * leaves;
  return tree + nodes * (8 + 4) + b.max_batch * (4 + 8 + 4 + 2 * sizeof(Word) + 4) +
         copies * (sizeof(btree::Node<Word>) + 8 + 4) + b.max_snapshots * 4 + b.max_queries * 24;
}

template <class Word>
void VersionedTree<Word>::dump(VersionDump<Word>& d) const {
  tree_.dump(d.nodes, d.header);
  const cudaStream_t s = stream();
  auto get = [&](auto& out, const auto* src, uint64_t n) {
    out.resize(n);
    if (n) copy_to_host(s, out.data(), src, n * sizeof(out[0]));
  };
  get(d.head_v, head_v_.data(), std::min<uint64_t>(d.nodes.size(), covered_));
  get(d.copies, copies_.data(), copy_cursor_);
  get(d.copy_v, copy_v_.data(), copy_cursor_);
  get(d.free_list, free_.data(), free_count_);
  d.live.clear();
  for (const auto& [name, st] : live_) d.live.push_back(st);
}

template class VersionedTree<uint32_t>;
template class VersionedTree<uint64_t>;

}  // namespace gpudict::mvbtree
