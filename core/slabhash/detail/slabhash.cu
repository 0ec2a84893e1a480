// The slab hash: construction, table sizing, build, FLUSH, stats, parameters
// and the memory bound. A batch's execution is in execute.cu.
#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "core/common/cuda_check.hpp"
#include "core/common/errors.hpp"
#include "core/slabhash/slabhash.hpp"
#include "core/slabhash/detail/slabhash_impl.cuh"
#include "core/slabhash/detail/tile_ops.cuh"

namespace gpudict {

std::unique_ptr<Dictionary> make_slabhash_dictionary(const slabhash::Options& o, int device, KeyType key,
                                                     KeyType value) {
  slabhash::validate(o);
  return with_kv_types(key, value, [&](auto k, auto v) -> std::unique_ptr<Dictionary> {
    using K = typename decltype(k)::type;
    using V = typename decltype(v)::type;
    return std::make_unique<slabhash::SlabHash<K, V>>(device, o);
  });
}

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

// "0xFFFFFFFF" or "0xFFFFFFFFFFFFFFFF": the key of its own bucket.
template <class K>
std::string max_key_name() {
  return sizeof(K) == 4 ? "0xFFFFFFFF" : "0xFFFFFFFFFFFFFFFF";
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
    : device_(use_device(device)), caps_(slabhash_caps_of(options.mode)), opt_(options) {
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
  d_live_ = DeviceBuffer<unsigned long long>(1, "slabhash counters");
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
void SlabHash<K, V>::create_table(uint64_t n) {
  const uint64_t keys = std::max(n, opt_.expected_keys);
  buckets_ = opt_.buckets ? opt_.buckets : buckets_for(shape(), keys, opt_.load_factor);
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
TableRef<K> SlabHash<K, V>::ref() const {
  TableRef<K> t;
  t.base = const_cast<Slab*>(base_.data());
  t.buckets = static_cast<uint32_t>(buckets_);
  t.hash = hash_;
  // The pool's flag is the counters' `exhausted` field (reset per pass).
  t.pool = pool_.ref(reinterpret_cast<unsigned int*>(reinterpret_cast<char*>(const_cast<Counters*>(d_ctr_.data())) +
                                                     offsetof(Counters, exhausted)));
  return t;
}

template <class K, class V>
void SlabHash<K, V>::build(const KeyValues& initial, DeviceTime& t) {
  const uint64_t n = initial.size();
  if (n >= (1ull << 32)) throw InputError("slabhash: more than 2^32 - 1 initial pairs");
  create_table(n);
  build_duplicates_ = 0;
  context_ = "the build";
  if (n == 0) {
    t.add(Phase::Build, 0.0);
    return;
  }
  h_key_.reserve_discard(n);
  h_arg_.reserve_discard(n);
  for (uint64_t i = 0; i < n; ++i) {
    if (initial.keys[i] > key_max<K> || initial.values[i] > key_max<V>)
      throw InputError("slabhash: an initial key or value above the " + std::string(kv_name<K, V>()) +
                       " instantiation's range");
    h_key_[i] = static_cast<K>(initial.keys[i]);
    h_arg_[i] = static_cast<V>(initial.values[i]);
  }
  d_ops_.key.reserve_discard(n, "slabhash operations");
  d_ops_.arg.reserve_discard(n, "slabhash operations");
  copy_to_device(stream_, d_ops_.key.data(), h_key_.data(), n * sizeof(K));
  copy_to_device(stream_, d_ops_.arg.data(), h_arg_.data(), n * sizeof(V));

  reserve_for_inserts(n, t, Phase::Build);
  // Bulk build = concurrent insertion of every pair (seed 004, VI-A).
  Staged s;
  s.in.key = d_ops_.key.data();
  s.in.arg = d_ops_.arg.data();
  s.in.n = n;
  s.in.uniform = kOpInsert;
  s.op_at = [&initial](uint32_t pos, uint8_t& type, K& key, V& arg) {
    type = kOpInsert;
    key = static_cast<K>(initial.keys[pos]);
    arg = static_cast<V>(initial.values[pos]);
  };
  const Counters c = run_pass(s, kSetInsert, Phase::Build, n, t);
  // A map insert that found its key alive met a duplicate of the initial
  // contents: one of its values won; the last one must (docs/semantics.md).
  if (opt_.mode == Mode::Map && c.replaced > 0) fix_build_duplicates(d_ops_.key.data(), d_ops_.arg.data(), n, t);
}

template <class K, class V>
void SlabHash<K, V>::fix_build_duplicates(const K* d_keys, const V* d_values, uint64_t n, DeviceTime& t) {
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
  t.add(Phase::Build, timer_.stop(stream_));
  unsigned long long m = 0;
  copy_to_host(stream_, &m, d_live_.data(), sizeof m);
  build_duplicates_ = m;
  if (m == 0) return;
  // Every one of these keys is present: each insert is a REPLACE.
  std::vector<K> hk(m);
  std::vector<V> hv(m);
  copy_to_host(stream_, hk.data(), fix_keys.data(), m * sizeof(K));
  copy_to_host(stream_, hv.data(), fix_values.data(), m * sizeof(V));
  Staged s;
  s.in.key = fix_keys.data();
  s.in.arg = fix_values.data();
  s.in.n = m;
  s.in.uniform = kOpInsert;
  s.op_at = [&](uint32_t pos, uint8_t& type, K& key, V& arg) {
    type = kOpInsert;
    key = hk[pos];
    arg = hv[pos];
  };
  run_pass(s, kSetInsert, Phase::Build, m, t);
}

template <class K, class V>
void SlabHash<K, V>::snapshot(const std::string&, DeviceTime&) {
  throw InputError("slabhash does not support snapshots");
}

template <class K, class V>
void SlabHash<K, V>::drop_snapshot(const std::string&) {
  throw InputError("slabhash does not support snapshots");
}

template <class K, class V>
double SlabHash<K, V>::flush() {
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
  return ms;
}

template <class K, class V>
void SlabHash<K, V>::cleanup(DeviceTime& t) { t.add(Phase::Cleanup, flush()); }

template <class K, class V>
std::string SlabHash<K, V>::flush_policy() const {
  std::string p;
  if (opt_.flush_every) p = "after every " + std::to_string(opt_.flush_every) + " update batches";
  if (opt_.flush_tombstones > 0)
    p += (p.empty() ? "" : "; ") + std::string("after an update batch that leaves tombstones > ") +
         fmt_double(opt_.flush_tombstones, "%g") + " of the base slots";
  return (p.empty() ? std::string("on cleanup/flush steps only") : p + "; on cleanup/flush steps");
}

template <class K, class V>
uint64_t SlabHash<K, V>::tombstones() const { return claimed_ - std::min(claimed_, live_); }

template <class K, class V>
void SlabHash<K, V>::maybe_flush(DeviceTime& t) {
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
  t.add(Phase::Cleanup, flush());
  ++auto_flushes_;
}

template <class K, class V>
uint64_t SlabHash<K, V>::scratch_bytes() const {
  return d_ctr_.bytes() + d_live_.bytes() + d_ops_.bytes() + d_rerun_.bytes() + d_found_.bytes() + d_value_.bytes() +
         d_offset_.bytes() + d_unfinished_.bytes() + d_range_values_.bytes() + temp_.bytes();
}

template <class K, class V>
Stats SlabHash<K, V>::stats() const {
  Stats s;
  s.size = live_;
  s.device_bytes = base_.bytes() + pool_.bytes() + scratch_bytes();
  const uint64_t base_slabs = created_ ? buckets_ + 1 : 0;
  const uint64_t pool_used = created_ ? pool_.allocated(stream_) : 0;
  const uint64_t slabs = base_slabs + pool_used;
  const double util = slabs ? static_cast<double>(shape().element_bytes) * static_cast<double>(live_) /
                                  (static_cast<double>(kSlabBytes) * static_cast<double>(slabs))
                            : 0.0;
  s.extra = {
      {"mode", std::string(mode_name(opt_.mode))},
      {"buckets", std::to_string(buckets_)},
      {"slabs", std::to_string(slabs)},
      {"base_slabs", std::to_string(base_slabs)},
      {"pool_slabs_used", std::to_string(pool_used)},
      {"avg_chain_slabs", fmt_double(base_slabs ? static_cast<double>(slabs) / static_cast<double>(base_slabs) : 0.0)},
      {"utilization", fmt_double(util)},
      {"alive", std::to_string(live_)},
      {"tombstones", std::to_string(tombstones())},
      {"pool_slabs", std::to_string(pool_.capacity())},
      {"pool_bytes", std::to_string(pool_.bytes())},
      {"super_blocks", std::to_string(pool_.super_blocks())},
      {"pool_growths", std::to_string(growths_)},
      {"unfinished_reruns", std::to_string(unfinished_reruns_)},
      {"flushes", std::to_string(flushes_)},
      {"auto_flushes", std::to_string(auto_flushes_)},
      {"build_duplicate_keys", std::to_string(build_duplicates_)},
      {"scratch_bytes", std::to_string(scratch_bytes())},
  };
  return s;
}

template <class K, class V>
Params SlabHash<K, V>::parameters() const {
  const SlabShape sh = shape();
  std::string sizing;
  if (opt_.buckets)
    sizing = "buckets " + std::to_string(opt_.buckets);
  else
    sizing = "load_factor " + fmt_double(opt_.load_factor, "%g") + " (expected utilization) for " +
             (opt_.expected_keys ? std::to_string(opt_.expected_keys) + " keys or the initial contents, the larger"
                                 : std::string("the initial contents"));
  std::string growth = !opt_.growth    ? "off (exit 3)"
                       : opt_.grow_ahead ? "ahead (a super block doubling the pool before a batch could fill it past 3/4, "
                                           "or when it is full: unfinished operations run again)"
                                         : "on (a super block doubling the pool when it is full; unfinished operations run again)";
  if (opt_.growth && opt_.max_pool_bytes) growth += ", at most " + format_bytes(opt_.max_pool_bytes);
  return {
      {"mode", std::string(mode_name(opt_.mode)) +
                   (opt_.mode == Mode::Map ? " (unique keys, insert = REPLACE)"
                                           : opt_.mode == Mode::Multimap ? " (duplicates, insert = INSERT, delete = all pairs)"
                                                                         : " (keys only)")},
      {"types", std::string(kv_name<K, V>()) + " (keys, values" +
                    (opt_.mode == Mode::Set ? std::string("; set mode stores keys only)") : std::string(")"))},
      {"buckets", sizing + " + 1 bucket for key " + max_key_name<K>()},
      {"slab", "128 B: " + std::to_string(sh.slots) + (opt_.mode == Mode::Set ? " keys" : " pairs") + " of " +
                   std::to_string(sh.element_bytes) + " B" +
                   (opt_.mode != Mode::Set && sizeof(V) == 8
                        ? std::string(" (key word, value; one 128-bit CAS claims a pair)")
                        : std::string()) +
                   ", an alive-bit state word, a 32-bit next address; key " + max_key_name<K>() +
                   " marks an empty slot"},
      {"hash", std::string(sizeof(K) == 4 ? "((a k + b) mod p) mod B" : "((a2 lo + (a hi + b) mod p) mod p) mod B") +
                   ", p = 2^32 - 5, a = " + std::to_string(hash_.a) +
                   (sizeof(K) == 4 ? std::string() : ", a2 = " + std::to_string(hash_.a2)) +
                   ", b = " + std::to_string(hash_.b)},
      {"work_sharing", std::string("tiles of 4 lanes, 32 B per lane, one slab per step; 8 operations per warp at once; "
                                   "prefetch ") + kPrefetchNames[opt_.prefetch]},
      {"slaballoc", "memory blocks of 1024 slabs, bitmaps cached per tile, one atomicOr per allocation; super blocks " +
                        std::string("2^lg0, 2^lg0, 2^(lg0+1), ...")},
      {"pool_growth", growth},
      {"flush", flush_policy()},
      {"build", "concurrent insertion (timed: the insertion kernels; table allocation and clearing are not timed)"},
      {"concurrent", "native: every operation of a batch in one kernel"},
  };
}

template <class K, class V>
uint64_t SlabHash<K, V>::device_bytes_needed(const WorkloadBounds& b) const {
  // A multimap keeps every insert's pair; a map or set at most one per key.
  const uint64_t stored = opt_.mode == Mode::Multimap ? b.max_inserted : b.max_resident;
  const uint64_t n = std::max(stored, opt_.expected_keys);
  const uint64_t buckets = opt_.buckets ? opt_.buckets : buckets_for(shape(), n, opt_.load_factor);
  uint64_t pool = opt_.pool_slabs ? opt_.pool_slabs : auto_pool_slabs(shape(), n, buckets);
  uint64_t p2 = 1024;
  while (p2 < pool) p2 <<= 1;
  const uint64_t table = (buckets + 1) * kSlabBytes + p2 * (kSlabBytes + 1) / 1;
  // Per batch: inputs (type, key, arg, index), outputs (found, value,
  // offset, unfinished), re-run inputs, range values (grown on demand).
  const uint64_t in = 1 + sizeof(K) + sizeof(V) + 4, out = 1 + sizeof(V) + 4 + 4;
  const uint64_t batch = b.max_batch * (in + out + in) + b.max_queries * sizeof(V);
  // Build: staged pairs and, for duplicates, the sort buffers.
  const uint64_t build = b.max_resident * (sizeof(K) + sizeof(V)) * 3;
  return table + batch + build + (1u << 20);
}

template class SlabHash<uint32_t, uint32_t>;
template class SlabHash<uint32_t, uint64_t>;
template class SlabHash<uint64_t, uint64_t>;

}  // namespace slabhash
}  // namespace gpudict
