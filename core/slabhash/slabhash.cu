// The slab hash: construction, table sizing, build, FLUSH, stats, parameters
// and the memory bound. A batch's execution is in execute.cu.
#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <string>

#include "core/common/cuda_check.hpp"
#include "core/common/errors.hpp"
#include "core/slabhash/slabhash.hpp"
#include "core/slabhash/slabhash_impl.cuh"
#include "core/slabhash/tile_ops.cuh"

namespace gpudict {

std::unique_ptr<Dictionary> make_slabhash(const StructureConfig& config) {
  if (config.key_type != KeyType::U32 || config.value_type != KeyType::U32)
    throw InputError("slabhash supports u32 keys and u32 values only (asked for " +
                     std::string(type_name(config.key_type)) + " keys, " + std::string(type_name(config.value_type)) +
                     " values)");
  const slabhash::Options o = slabhash::parse_options(config);
  return std::make_unique<slabhash::SlabHash>(config, o);
}

namespace slabhash {

namespace {
std::string fmt_double(double x, const char* f = "%.3f") {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, x);
  return buf;
}
}  // namespace

int SlabHash::use_device(int device) {
  GPUDICT_CUDA(cudaSetDevice(device));
  return device;
}

SlabHash::SlabHash(const StructureConfig& config, const Options& options)
    : device_(use_device(config.device)), caps_(slabhash_caps_for(config)), opt_(options) {
  GPUDICT_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  d_ctr_ = DeviceBuffer<Counters>(1, "slabhash counters");
  d_live_ = DeviceBuffer<unsigned long long>(1, "slabhash counters");
  h_ctr_.reserve_discard(1);
}

SlabHash::~SlabHash() {
  if (stream_) {
    cudaStreamSynchronize(stream_);
    cudaStreamDestroy(stream_);
  }
}

void SlabHash::create_table(uint64_t n) {
  const uint64_t keys = std::max(n, opt_.expected_keys);
  buckets_ = opt_.buckets ? opt_.buckets : buckets_for(opt_.mode, keys, opt_.load_factor);
  base_.release();
  pool_.release();
  base_ = DeviceBuffer<Slab>(buckets_ + 1, "slabhash base slabs");
  // Pristine base slabs: every key empty, state all alive, next null.
  GPUDICT_CUDA(cudaMemsetAsync(base_.data(), 0xFF, base_.bytes(), stream_));
  pool_.create(opt_.pool_slabs ? opt_.pool_slabs : auto_pool_slabs(opt_.mode, keys, buckets_), stream_);
  GPUDICT_CUDA(cudaStreamSynchronize(stream_));
  live_ = claimed_ = 0;
  pool_used_ = 0;
  update_batches_since_flush_ = 0;
  created_ = true;
}

void SlabHash::ensure_table() {
  if (!created_) create_table(0);
}

TableRef SlabHash::ref() const {
  TableRef t;
  t.base = const_cast<Slab*>(base_.data());
  t.buckets = static_cast<uint32_t>(buckets_);
  t.hash = hash_;
  // The pool's flag is the counters' `exhausted` field (reset per pass).
  t.pool = pool_.ref(reinterpret_cast<unsigned int*>(reinterpret_cast<char*>(const_cast<Counters*>(d_ctr_.data())) +
                                                     offsetof(Counters, exhausted)));
  return t;
}

void SlabHash::build(const KeyValues& initial, DeviceTime& t) {
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
    h_key_[i] = static_cast<uint32_t>(initial.keys[i]);
    h_arg_[i] = static_cast<uint32_t>(initial.values[i]);
  }
  d_ops_.key.reserve_discard(n, "slabhash operations");
  d_ops_.arg.reserve_discard(n, "slabhash operations");
  copy_to_device(stream_, d_ops_.key.data(), h_key_.data(), n * 4);
  copy_to_device(stream_, d_ops_.arg.data(), h_arg_.data(), n * 4);

  reserve_for_inserts(n, t, Phase::Build);
  // Bulk build = concurrent insertion of every pair (seed 004, VI-A).
  Staged s;
  s.in.key = d_ops_.key.data();
  s.in.arg = d_ops_.arg.data();
  s.in.n = n;
  s.in.uniform = kOpInsert;
  s.op_at = [&initial](uint32_t pos, uint8_t& type, uint32_t& key, uint32_t& arg) {
    type = kOpInsert;
    key = static_cast<uint32_t>(initial.keys[pos]);
    arg = static_cast<uint32_t>(initial.values[pos]);
  };
  const Counters c = run_pass(s, kSetInsert, Phase::Build, n, t);
  // A map insert that found its key alive met a duplicate of the initial
  // contents: one of its values won; the last one must (docs/semantics.md).
  if (opt_.mode == Mode::Map && c.replaced > 0) fix_build_duplicates(d_ops_.key.data(), d_ops_.arg.data(), n, t);
}

void SlabHash::fix_build_duplicates(const uint32_t* d_keys, const uint32_t* d_values, uint64_t n, DeviceTime& t) {
  DeviceBuffer<uint32_t> keys_out(n, "slabhash build fix-up"), idx_in(n, "slabhash build fix-up"),
      idx_out(n, "slabhash build fix-up"), fix_keys(n, "slabhash build fix-up"), fix_values(n, "slabhash build fix-up");
  temp_.prepare("cub::DeviceRadixSort::SortPairs", [&](void* p, size_t& bytes) {
    return cub::DeviceRadixSort::SortPairs(p, bytes, d_keys, keys_out.data(), idx_in.data(), idx_out.data(),
                                           static_cast<int64_t>(n), 0, 32, stream_);
  });
  GPUDICT_CUDA(cudaMemsetAsync(d_live_.data(), 0, sizeof(unsigned long long), stream_));
  timer_.start(stream_);
  launch_iota(idx_in.data(), n, stream_);
  temp_.run("cub::DeviceRadixSort::SortPairs", [&](void* p, size_t& bytes) {
    return cub::DeviceRadixSort::SortPairs(p, bytes, d_keys, keys_out.data(), idx_in.data(), idx_out.data(),
                                           static_cast<int64_t>(n), 0, 32, stream_);
  });
  launch_last_of_runs(keys_out.data(), idx_out.data(), d_values, n, fix_keys.data(), fix_values.data(),
                      d_live_.data(), stream_);
  t.add(Phase::Build, timer_.stop(stream_));
  unsigned long long m = 0;
  copy_to_host(stream_, &m, d_live_.data(), sizeof m);
  build_duplicates_ = m;
  if (m == 0) return;
  // Every one of these keys is present: each insert is a REPLACE.
  std::vector<uint32_t> hk(m), hv(m);
  copy_to_host(stream_, hk.data(), fix_keys.data(), m * 4);
  copy_to_host(stream_, hv.data(), fix_values.data(), m * 4);
  Staged s;
  s.in.key = fix_keys.data();
  s.in.arg = fix_values.data();
  s.in.n = m;
  s.in.uniform = kOpInsert;
  s.op_at = [&](uint32_t pos, uint8_t& type, uint32_t& key, uint32_t& arg) {
    type = kOpInsert;
    key = hk[pos];
    arg = hv[pos];
  };
  run_pass(s, kSetInsert, Phase::Build, m, t);
}

void SlabHash::snapshot(const std::string&, DeviceTime&) {
  throw InputError("slabhash does not support snapshots; structures that do: sorted-array, lsm");
}

void SlabHash::drop_snapshot(const std::string&) {
  throw InputError("slabhash does not support snapshots; structures that do: sorted-array, lsm");
}

double SlabHash::flush() {
  ensure_table();
  GPUDICT_CUDA(cudaMemsetAsync(d_live_.data(), 0, sizeof(unsigned long long), stream_));
  prepare_flush(opt_.mode);
  timer_.start(stream_);
  launch_flush(opt_.mode, ref(), d_live_.data(), stream_);
  const double ms = timer_.stop(stream_);
  unsigned long long live = 0;
  copy_to_host(stream_, &live, d_live_.data(), sizeof live);
  live_ = claimed_ = live;
  pool_used_ = pool_.allocated(stream_);
  update_batches_since_flush_ = 0;
  ++flushes_;
  return ms;
}

void SlabHash::cleanup(DeviceTime& t) { t.add(Phase::Cleanup, flush()); }

std::string SlabHash::flush_policy() const {
  std::string p;
  if (opt_.flush_every) p = "after every " + std::to_string(opt_.flush_every) + " update batches";
  if (opt_.flush_tombstones > 0)
    p += (p.empty() ? "" : "; ") + std::string("after an update batch that leaves tombstones > ") +
         fmt_double(opt_.flush_tombstones, "%g") + " of the base slots";
  return (p.empty() ? std::string("on cleanup/flush steps only") : p + "; on cleanup/flush steps");
}

uint64_t SlabHash::tombstones() const { return claimed_ - std::min(claimed_, live_); }

void SlabHash::maybe_flush(DeviceTime& t) {
  ++update_batches_since_flush_;
  bool due = opt_.flush_every != 0 && update_batches_since_flush_ >= opt_.flush_every;
  // Tombstones over a share of the base slots. Each FLUSH reads every slab
  // once, and at least that share of the base slots died since the last one,
  // so its cost per delete is bounded (about 128 B / (x M) per base slab).
  if (!due && opt_.flush_tombstones > 0) {
    const double base_slots = static_cast<double>(buckets_ + 1) * slots_per_slab(opt_.mode);
    due = static_cast<double>(tombstones()) > opt_.flush_tombstones * base_slots;
  }
  if (!due) return;
  t.add(Phase::Cleanup, flush());
  ++auto_flushes_;
}

uint64_t SlabHash::scratch_bytes() const {
  return d_ctr_.bytes() + d_live_.bytes() + d_ops_.bytes() + d_rerun_.bytes() + d_found_.bytes() + d_value_.bytes() +
         d_offset_.bytes() + d_unfinished_.bytes() + d_range_values_.bytes() + temp_.bytes();
}

Stats SlabHash::stats() const {
  Stats s;
  s.size = live_;
  s.device_bytes = base_.bytes() + pool_.bytes() + scratch_bytes();
  const uint64_t base_slabs = created_ ? buckets_ + 1 : 0;
  const uint64_t pool_used = created_ ? pool_.allocated(stream_) : 0;
  const uint64_t slabs = base_slabs + pool_used;
  const double util = slabs ? static_cast<double>(element_bytes(opt_.mode)) * static_cast<double>(live_) /
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

Params SlabHash::parameters() const {
  const uint32_t M = slots_per_slab(opt_.mode);
  std::string sizing;
  if (opt_.buckets)
    sizing = "--buckets " + std::to_string(opt_.buckets);
  else
    sizing = "--load-factor " + fmt_double(opt_.load_factor, "%g") + " (expected utilization) for " +
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
      {"buckets", sizing + " + 1 bucket for key 0xFFFFFFFF"},
      {"slab", "128 B: " + std::to_string(M) + (opt_.mode == Mode::Set ? " keys" : " pairs") +
                   ", an alive-bit state word, a 32-bit next address; key 0xFFFFFFFF marks an empty slot"},
      {"hash", "((a k + b) mod (2^32 - 5)) mod B, a = " + std::to_string(hash_.a) + ", b = " + std::to_string(hash_.b)},
      {"work_sharing", std::string("tiles of 4 lanes, 32 B per lane, one slab per step; 8 operations per warp at once; "
                                   "--prefetch ") + kPrefetchNames[opt_.prefetch]},
      {"slaballoc", "memory blocks of 1024 slabs, bitmaps cached per tile, one atomicOr per allocation; super blocks " +
                        std::string("2^lg0, 2^lg0, 2^(lg0+1), ...")},
      {"pool_growth", growth},
      {"flush", flush_policy()},
      {"build", "concurrent insertion (timed: the insertion kernels; table allocation and clearing are not timed)"},
      {"concurrent", "native: every operation of a batch in one kernel"},
  };
}

uint64_t SlabHash::device_bytes_needed(const WorkloadBounds& b) const {
  // A multimap keeps every insert's pair; a map or set at most one per key.
  const uint64_t stored = opt_.mode == Mode::Multimap ? b.max_inserted : b.max_resident;
  const uint64_t n = std::max(stored, opt_.expected_keys);
  const uint64_t buckets = opt_.buckets ? opt_.buckets : buckets_for(opt_.mode, n, opt_.load_factor);
  uint64_t pool = opt_.pool_slabs ? opt_.pool_slabs : auto_pool_slabs(opt_.mode, n, buckets);
  uint64_t p2 = 1024;
  while (p2 < pool) p2 <<= 1;
  const uint64_t table = (buckets + 1) * kSlabBytes + p2 * (kSlabBytes + 1) / 1;
  // Per batch: inputs (type, key, arg, index), outputs (found, value,
  // offset, unfinished), re-run inputs, range values (grown on demand).
  const uint64_t batch = b.max_batch * (1 + 4 * 3 + 1 + 4 * 3 + 1 + 4 * 3) + b.max_queries * 4;
  // Build: staged pairs and, for duplicates, the sort buffers.
  const uint64_t build = b.max_resident * 8 * 3;
  return table + batch + build + (1u << 20);
}

}  // namespace slabhash
}  // namespace gpudict
