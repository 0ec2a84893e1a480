// The slab hash: construction, table sizing, the build's fix-up of
// duplicate keys, FLUSH, stats and the memory bound. A pass of the batch
// kernel is in execute.cu, the bulk calls in device_api.cu.
#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "core/common/cuda_check.hpp"
#include "core/common/errors.hpp"
#include "core/slabhash/detail/slabhash_impl.cuh"
#include "core/slabhash/detail/tile_ops.cuh"

namespace gpudict {

namespace slabhash {

// The host's sizing arithmetic (options.cpp) and the device layouts agree.
template <class K, class V, Mode M>
constexpr bool shape_matches(SlabShape s) {
  using L = LayoutFor<K, V, M>;
  return s.slots == L::kSlots && s.element_bytes == L::kDataBytes;
}

namespace {
std::string fmt_double(double x, const char* f = "%.3f") {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, x);
  return buf;
}
}  // namespace

template <class K, class V>
int SlabHash<K, V>::use_device(int device) {
  GPUDICT_CUDA(cudaSetDevice(device));
  return device;
}

template <class K, class V>
SlabShape SlabHash<K, V>::shape() const {
  return slab_shape(opt_.mode, sizeof(K), sizeof(V));
}

template <class K, class V>
SlabHash<K, V>::SlabHash(int device, const Options& options)
    : device_(use_device(device)), opt_(options) {
  const SlabShape sh = shape();
  if (opt_.mode == Mode::Set ? !shape_matches<K, V, Mode::Set>(sh) : !shape_matches<K, V, Mode::Map>(sh))
    throw std::logic_error("slabhash: the host's slab shape differs from the device layout");
  if (!opt_.buckets && opt_.load_factor >= utilization_ceiling(sh))
    throw InputError("slabhash: load factor " + fmt_double(opt_.load_factor, "%g") + " is not below the " +
                     std::string(kv_name<K, V>()) + " " + std::string(mode_name(opt_.mode)) + " layout's ceiling " +
                     fmt_double(utilization_ceiling(sh), "%g") + " (" + std::to_string(sh.slots) + " slots of " +
                     std::to_string(sh.element_bytes) + " B per 128-byte slab)",
                     "load_factor");
  if (opt_.mode != Mode::Set && sizeof(V) == 8) {
    // 16-byte slots are claimed by a 128-bit atomicCAS (slab_layout.cuh).
    int major = 0;
    GPUDICT_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device_));
    if (major < 9)
      throw InputError("slabhash: u64 values in map and multimap mode need a GPU of compute capability 9.0 or "
                       "later (128-bit atomicCAS); this one is " + std::to_string(major) + ".x");
  }
  GPUDICT_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  d_ctr_ = DeviceBuffer<Counters>(1, "slabhash counters");
  d_live_ = DeviceBuffer<unsigned long long>(2, "slabhash counters");
  h_ctr_.reserve_discard(1);
}

template <class K, class V>
SlabHash<K, V>::~SlabHash() {
  if (stream_) {
    cudaStreamSynchronize(stream_);
    cudaStreamDestroy(stream_);
  }
}

template <class K, class V>
void SlabHash<K, V>::create_table(uint64_t n, uint64_t buckets) {
  const uint64_t keys = std::max(n, opt_.expected_keys);
  buckets_ = buckets ? buckets : opt_.buckets ? opt_.buckets : buckets_for(shape(), keys, opt_.load_factor);
  base_.release();
  pool_.release();
  base_ = DeviceBuffer<Slab>(buckets_ + 1, "slabhash base slabs");
  // Pristine base slabs: every key empty, state all alive, next null.
  GPUDICT_CUDA(cudaMemsetAsync(base_.data(), 0xFF, base_.bytes(), stream_));
  pool_.create(opt_.pool_slabs ? opt_.pool_slabs : auto_pool_slabs(shape(), keys, buckets_), stream_);
  GPUDICT_CUDA(cudaStreamSynchronize(stream_));
  live_ = claimed_ = 0;
  pool_used_ = 0;
  update_batches_since_flush_ = 0;
  created_ = true;
  // A new table: what refs of the old one counted no longer applies.
  if (d_ref_counts_.capacity() != 0) {
    GPUDICT_CUDA(cudaMemsetAsync(d_ref_counts_.data(), 0, d_ref_counts_.bytes(), stream_));
    GPUDICT_CUDA(cudaStreamSynchronize(stream_));
  }
}

template <class K, class V>
void SlabHash<K, V>::ensure_table() {
  if (!created_) create_table(0);
}

template <class K, class V>
void SlabHash<K, V>::grow_buckets(uint64_t buckets) {
  ensure_table();
  if (buckets <= buckets_) return;
  if (buckets >= 0xFFFFFFFFull)
    throw RuntimeFailure("slabhash: " + std::to_string(buckets) + " buckets exceed the 2^32 - 1 a table addresses");
  DeviceBuffer<Slab> bigger(buckets + 1, "slabhash base slabs");
  // Pristine slabs everywhere, then the old buckets over their first part
  // and the old last slab (empty, or key key_max's chain) at the new end.
  GPUDICT_CUDA(cudaMemsetAsync(bigger.data(), 0xFF, bigger.bytes(), stream_));
  GPUDICT_CUDA(cudaMemcpyAsync(bigger.data(), base_.data(), buckets_ * sizeof(Slab), cudaMemcpyDeviceToDevice,
                               stream_));
  GPUDICT_CUDA(cudaMemcpyAsync(bigger.data() + buckets, base_.data() + buckets_, sizeof(Slab),
                               cudaMemcpyDeviceToDevice, stream_));
  GPUDICT_CUDA(cudaStreamSynchronize(stream_));
  base_ = std::move(bigger);
  buckets_ = buckets;
}

template <class K, class V>
TableRef<K> SlabHash<K, V>::ref() const {
  TableRef<K> t;
  t.base = const_cast<Slab*>(base_.data());
  t.buckets = static_cast<uint32_t>(buckets_);
  t.hash = hash_;
  t.vertex = routes_;
  // The pool's flag is the counters' `exhausted` field (reset per pass).
  t.pool = pool_.ref(reinterpret_cast<unsigned int*>(reinterpret_cast<char*>(const_cast<Counters*>(d_ctr_.data())) +
                                                     offsetof(Counters, exhausted)));
  return t;
}

template <class K, class V>
void SlabHash<K, V>::fix_build_duplicates(const K* d_keys, const V* d_values, uint64_t n) {
  DeviceBuffer<K> keys_out(n, "slabhash build fix-up"), fix_keys(n, "slabhash build fix-up");
  DeviceBuffer<uint32_t> idx_in(n, "slabhash build fix-up"), idx_out(n, "slabhash build fix-up");
  DeviceBuffer<V> fix_values(n, "slabhash build fix-up");
  constexpr int kKeyBits = static_cast<int>(KeyTraits<K>::bits);
  temp_.prepare("cub::DeviceRadixSort::SortPairs", [&](void* p, size_t& bytes) {
    return cub::DeviceRadixSort::SortPairs(p, bytes, d_keys, keys_out.data(), idx_in.data(), idx_out.data(),
                                           static_cast<int64_t>(n), 0, kKeyBits, stream_);
  });
  GPUDICT_CUDA(cudaMemsetAsync(d_live_.data(), 0, sizeof(unsigned long long), stream_));
  timer_.start(stream_);
  launch_iota(idx_in.data(), n, stream_);
  temp_.run("cub::DeviceRadixSort::SortPairs", [&](void* p, size_t& bytes) {
    return cub::DeviceRadixSort::SortPairs(p, bytes, d_keys, keys_out.data(), idx_in.data(), idx_out.data(),
                                           static_cast<int64_t>(n), 0, kKeyBits, stream_);
  });
  launch_last_of_runs(keys_out.data(), idx_out.data(), d_values, n, fix_keys.data(), fix_values.data(),
                      d_live_.data(), stream_);
  add_time(timer_.stop(stream_));
  unsigned long long m = 0;
  copy_to_host(stream_, &m, d_live_.data(), sizeof m);
  build_duplicates_ = m;
  if (m == 0) return;
  // Every one of these keys is present: each insert is a REPLACE.
  OpsIn<K, V> in;
  in.key = fix_keys.data();
  in.arg = fix_values.data();
  in.n = m;
  in.uniform = kOpInsert;
  run_pass(in, kSetInsert, m);
}

template <class K, class V>
void SlabHash<K, V>::flush() {
  ensure_table();
  absorb_ref_counts();  // FLUSH recounts what is live; the refs' counts are in it
  GPUDICT_CUDA(cudaMemsetAsync(d_live_.data(), 0, sizeof(unsigned long long), stream_));
  prepare_flush<K, V>(opt_.mode);
  timer_.start(stream_);
  launch_flush<K, V>(opt_.mode, ref(), d_live_.data(), stream_);
  const double ms = timer_.stop(stream_);
  unsigned long long live = 0;
  copy_to_host(stream_, &live, d_live_.data(), sizeof live);
  live_ = claimed_ = live;
  pool_used_ = pool_.allocated(stream_);
  update_batches_since_flush_ = 0;
  ++flushes_;
  if (timing_) timing_->add_cleanup(ms);
}

template <class K, class V>
void SlabHash<K, V>::cleanup() {
  flush();
  GPUDICT_CUDA(cudaStreamSynchronize(stream_));
}

template <class K, class V>
uint64_t SlabHash<K, V>::tombstones() const { return claimed_ - std::min(claimed_, live_); }

template <class K, class V>
void SlabHash<K, V>::maybe_flush() {
  ++update_batches_since_flush_;
  bool due = opt_.flush_every != 0 && update_batches_since_flush_ >= opt_.flush_every;
  // Tombstones over a share of the base slots. Each FLUSH reads every slab
  // once, and at least that share of the base slots died since the last one,
  // so its cost per delete is bounded (about 128 B / (x M) per base slab).
  if (!due && opt_.flush_tombstones > 0) {
    const double base_slots = static_cast<double>(buckets_ + 1) * shape().slots;
    due = static_cast<double>(tombstones()) > opt_.flush_tombstones * base_slots;
  }
  if (!due) return;
  flush();
  ++auto_flushes_;
}

template <class K, class V>
uint64_t SlabHash<K, V>::scratch_bytes() const {
  return d_ctr_.bytes() + d_live_.bytes() + d_ops_.bytes() + d_rerun_.bytes() + d_found_.bytes() + d_value_.bytes() +
         d_offset_.bytes() + d_unfinished_.bytes() + d_range_values_.bytes() + temp_.bytes();
}

template <class K, class V>
slab_hash_stats SlabHash<K, V>::stats() const {
  slab_hash_stats s;
  s.size = live_;
  s.scratch_bytes = scratch_bytes();
  s.device_bytes = base_.bytes() + pool_.bytes() + s.scratch_bytes;
  s.buckets = buckets_;
  s.base_slabs = created_ ? buckets_ + 1 : 0;
  s.pool_slabs_used = created_ ? pool_.allocated(stream_) : 0;
  s.pool_slabs = pool_.capacity();
  s.pool_bytes = pool_.bytes();
  s.super_blocks = pool_.super_blocks();
  s.tombstones = tombstones();
  s.pool_growths = growths_;
  s.unfinished_reruns = unfinished_reruns_;
  s.flushes = flushes_;
  s.auto_flushes = auto_flushes_;
  s.build_duplicate_keys = build_duplicates_;
  s.slot_bytes = shape().element_bytes;
  s.slots_per_slab = shape().slots;
  s.hash[0] = hash_.a;
  s.hash[1] = hash_.b;
  s.hash[2] = hash_.a2;
  return s;
}

template <class K, class V>
uint64_t SlabHash<K, V>::device_bytes_needed(const capacity_bounds& b) const {
  // A multimap keeps every insert's pair; a map or set at most one per key.
  const uint64_t stored = opt_.mode == Mode::Multimap ? b.max_inserted : b.max_resident;
  const uint64_t n = std::max(stored, opt_.expected_keys);
  const uint64_t buckets = opt_.buckets ? opt_.buckets : buckets_for(shape(), n, opt_.load_factor);
  uint64_t pool = opt_.pool_slabs ? opt_.pool_slabs : auto_pool_slabs(shape(), n, buckets);
  uint64_t p2 = 1024;
  while (p2 < pool) p2 <<= 1;
  const uint64_t table = (buckets + 1) * kSlabBytes + p2 * (kSlabBytes + 1) / 1;
  // Per call: a mixed update's operations (type, key, arg, index), outputs
  // (found, value, offset, unfinished), re-run inputs, range values (grown
  // on demand).
  const uint64_t in = 1 + sizeof(K) + sizeof(V) + 4, out = 1 + sizeof(V) + 4 + 4;
  const uint64_t batch = b.max_batch * (in + out + in) + b.max_queries * sizeof(V);
  // Build: for duplicate keys, the sort buffers.
  const uint64_t build = b.max_resident * (sizeof(K) + sizeof(V)) * 3;
  return table + batch + build + (1u << 20);
}

template class SlabHash<uint32_t, uint32_t>;
template class SlabHash<uint32_t, uint64_t>;
template class SlabHash<uint64_t, uint64_t>;

}  // namespace slabhash
}  // namespace gpudict
