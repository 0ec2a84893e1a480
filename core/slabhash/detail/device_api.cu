// The slab hash's bulk calls on a caller's device arrays (slab_hash_map.hpp):
// the batch kernel's passes on the caller's arrays as they are (no staging),
// re-runs of unfinished operations gathered on the device.
#include <algorithm>
#include <cstdint>
#include <string>

#include "core/common/cuda_check.hpp"
#include "core/common/errors.hpp"
#include "core/common/width_copy.cuh"
#include "core/slabhash/detail/slabhash_impl.cuh"
#include "core/slabhash/detail/tile_ops.cuh"

namespace gpudict::slabhash {

namespace {
void check_length(uint64_t n) {
  if (n >= (1ull << 32)) throw InputError("slab_hash_map: a call of 2^32 or more keys");
}
}  // namespace

template <class K, class V>
uint64_t SlabHash<K, V>::run_device_pass(const K* keys, const V* values, uint64_t n, uint8_t type, uint32_t ops,
                                         Phase phase, DeviceTime& t) {
  Staged s;  // no op_at: re-runs gather from these arrays
  s.in.key = keys;
  s.in.arg = values;
  s.in.n = n;
  s.in.uniform = type;
  return run_pass(s, ops, phase, n, t).replaced;
}

template <class K, class V>
TableRef<K> SlabHash<K, V>::device_table() {
  ensure_table();
  return ref();
}

template <class K, class V>
unsigned long long* SlabHash<K, V>::ref_counts() {
  if (d_ref_counts_.capacity() == 0) {
    d_ref_counts_ = DeviceBuffer<unsigned long long>(3, "slabhash ref counters");
    GPUDICT_CUDA(cudaMemsetAsync(d_ref_counts_.data(), 0, d_ref_counts_.bytes(), stream_));
    GPUDICT_CUDA(cudaStreamSynchronize(stream_));
  }
  refs_issued_ = true;
  return d_ref_counts_.data();
}

template <class K, class V>
void SlabHash<K, V>::absorb_ref_counts() {
  if (!refs_issued_) return;
  unsigned long long c[3];
  copy_to_host(stream_, c, d_ref_counts_.data(), sizeof c);
  GPUDICT_CUDA(cudaMemsetAsync(d_ref_counts_.data(), 0, sizeof c, stream_));
  live_ += c[0];
  live_ -= std::min<uint64_t>(live_, c[1]);
  claimed_ += c[0];
  pool_used_ += c[2];
}

template <class K, class V>
void SlabHash<K, V>::reserve_device(uint64_t inserts) {
  ensure_table();
  absorb_ref_counts();
  DeviceTime t;
  grow_ahead_of(inserts, t, Phase::Update);
  // A ref's insert that found the pool full raised its flag; with room
  // now, later allocations must not give up early on it.
  reset_counters(true);
  GPUDICT_CUDA(cudaStreamSynchronize(stream_));
}

template <class K, class V>
void SlabHash<K, V>::build_device(const K* keys, const V* values, uint64_t n) {
  check_length(n);
  create_table(n);
  build_duplicates_ = 0;
  context_ = "the build";
  if (n == 0) return;
  DeviceTime t;
  reserve_for_inserts(n, t, Phase::Build);
  const uint64_t replaced = run_device_pass(keys, values, n, kOpInsert, kSetInsert, Phase::Build, t);
  // As build(): duplicates of a key in the pairs, the last one must win.
  if (opt_.mode == Mode::Map && replaced > 0) fix_build_duplicates(keys, values, n, t);
  GPUDICT_CUDA(cudaStreamSynchronize(stream_));
}

template <class K, class V>
void SlabHash<K, V>::update_device(const K* keys, const V* values, uint64_t n, bool insert) {
  check_length(n);
  ensure_table();
  absorb_ref_counts();
  context_ = "batch " + std::to_string(batches_++);
  if (n == 0) return;
  DeviceTime t;
  if (insert) reserve_for_inserts(n, t, Phase::Update);
  run_device_pass(keys, insert ? values : nullptr, n, insert ? kOpInsert : kOpDelete, insert ? kSetInsert : kSetDelete,
                  Phase::Update, t);
  maybe_flush(t);
  GPUDICT_CUDA(cudaStreamSynchronize(stream_));
}

template <class K, class V>
void SlabHash<K, V>::find_device(const K* keys, uint64_t n, V* values_out, bool* found_out) {
  check_length(n);
  ensure_table();
  context_ = "batch " + std::to_string(batches_++);
  if (n == 0) return;
  d_found_.reserve_discard(n, "slabhash results");
  d_value_.reserve_discard(n, "slabhash results");
  // A lookup that finds nothing writes nothing: cleared first.
  GPUDICT_CUDA(cudaMemsetAsync(d_found_.data(), 0, n, stream_));
  GPUDICT_CUDA(cudaMemsetAsync(d_value_.data(), 0, n * sizeof(V), stream_));
  reset_counters(true);
  DeviceTime t;
  run_device_pass(keys, nullptr, n, kOpLookup, kSetLookup, Phase::Lookup, t);
  if (values_out)
    GPUDICT_CUDA(cudaMemcpyAsync(values_out, d_value_.data(), n * sizeof(V), cudaMemcpyDeviceToDevice, stream_));
  flags_to_bool(d_found_.data(), found_out, n, stream_);
  GPUDICT_CUDA(cudaStreamSynchronize(stream_));
}

#define GPUDICT_SLABHASH_DEVICE_API(K, V)                                                            \
  template uint64_t SlabHash<K, V>::run_device_pass(const K*, const V*, uint64_t, uint8_t, uint32_t, \
                                                    Phase, DeviceTime&);                             \
  template void SlabHash<K, V>::build_device(const K*, const V*, uint64_t);                          \
  template void SlabHash<K, V>::update_device(const K*, const V*, uint64_t, bool);                   \
  template void SlabHash<K, V>::find_device(const K*, uint64_t, V*, bool*);                          \
  template TableRef<K> SlabHash<K, V>::device_table();                                               \
  template unsigned long long* SlabHash<K, V>::ref_counts();                                         \
  template void SlabHash<K, V>::absorb_ref_counts();                                                 \
  template void SlabHash<K, V>::reserve_device(uint64_t);
GPUDICT_SLABHASH_DEVICE_API(uint32_t, uint32_t)
GPUDICT_SLABHASH_DEVICE_API(uint32_t, uint64_t)
GPUDICT_SLABHASH_DEVICE_API(uint64_t, uint64_t)
#undef GPUDICT_SLABHASH_DEVICE_API

}  // namespace gpudict::slabhash
