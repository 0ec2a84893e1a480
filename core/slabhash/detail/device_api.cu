// The slab hash's bulk calls on a caller's device arrays (slab_hash_map.hpp):
// the batch kernel's passes on the caller's arrays as they are (a mixed
// update stages its types, and a multimap's its order), re-runs of
// unfinished operations gathered on the device.
#include <cub/device/device_partition.cuh>
#include <thrust/iterator/counting_iterator.h>

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

// A mixed call's operation kinds (bit 1 << type, into *kinds) and inserts
// (into *inserts): which batch kernel runs it, and the pool's growth ahead.
__global__ void scan_ops_kernel(const uint8_t* ops, uint64_t n, unsigned int* kinds, unsigned long long* inserts) {
  const uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const uint8_t t = i < n ? ops[i] : 0xFF;
  unsigned int bit = t < 8 ? 1u << t : 0u;
  for (int o = 16; o > 0; o /= 2) bit |= __shfl_xor_sync(0xFFFFFFFFu, bit, o);
  const unsigned ins = __ballot_sync(0xFFFFFFFFu, t == kOpInsert);
  if ((threadIdx.x & 31) == 0) {
    if (bit) atomicOr(kinds, bit);
    if (ins) atomicAdd(inserts, static_cast<unsigned long long>(__popc(ins)));
  }
}

// A mixed update's inserts counted (type null) or its operation types
// written from its flags.
__global__ void update_types_kernel(const bool* erase, uint64_t n, uint8_t* type, unsigned long long* inserts) {
  const uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (type) {
    if (i < n) type[i] = erase[i] ? kOpDelete : kOpInsert;
    return;
  }
  const unsigned b = __ballot_sync(0xFFFFFFFFu, i < n && !erase[i]);
  if ((threadIdx.x & 31) == 0 && b) atomicAdd(inserts, static_cast<unsigned long long>(__popc(b)));
}

// Multimap: the update's deletes first (in order), then its inserts, by
// position (the partition's output).
template <class K, class V>
__global__ void gather_pairs_kernel(const K* keys, const V* values, const uint32_t* pos, uint64_t n, K* out_keys,
                                    V* out_values) {
  const uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out_keys[i] = keys[pos[i]];
  if (values) out_values[i] = values[pos[i]];
}
}  // namespace

template <class K, class V>
uint64_t SlabHash<K, V>::run_device_pass(const K* keys, const V* values, uint64_t n, uint8_t type, uint32_t ops) {
  OpsIn<K, V> in;  // index null: an operation's output position is its position in the arrays
  in.key = keys;
  in.arg = values;
  in.n = n;
  in.uniform = type;
  return run_pass(in, ops, n).replaced;
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
  grow_ahead_of(inserts);
  // A ref's insert that found the pool full raised its flag; with room
  // now, later allocations must not give up early on it.
  reset_counters(true);
  GPUDICT_CUDA(cudaStreamSynchronize(stream_));
}

template <class K, class V>
void SlabHash<K, V>::build_device(const K* keys, const V* values, uint64_t n, uint64_t buckets) {
  check_length(n);
  create_table(n, buckets);
  build_duplicates_ = 0;
  context_ = "the build";
  if (n == 0) return;
  reserve_for_inserts(n);
  // Bulk build = concurrent insertion of every pair (the slab hash paper,
  // VI-A).
  const uint64_t replaced = run_device_pass(keys, values, n, kOpInsert, kSetInsert);
  // A map insert that found its key alive met a duplicate in the pairs: one
  // of its values won; the last one must (docs/semantics.md).
  if (opt_.mode == Mode::Map && replaced > 0) fix_build_duplicates(keys, values, n);
  GPUDICT_CUDA(cudaStreamSynchronize(stream_));
}

template <class K, class V>
void SlabHash<K, V>::update_device(const K* keys, const V* values, uint64_t n, bool insert) {
  check_length(n);
  ensure_table();
  absorb_ref_counts();
  context_ = "batch " + std::to_string(batches_++);
  if (n == 0) return;
  if (insert) reserve_for_inserts(n);
  run_device_pass(keys, insert ? values : nullptr, n, insert ? kOpInsert : kOpDelete, insert ? kSetInsert : kSetDelete);
  maybe_flush();
  GPUDICT_CUDA(cudaStreamSynchronize(stream_));
}

template <class K, class V>
void SlabHash<K, V>::update_mixed_device(const K* keys, const V* values, const bool* erase, uint64_t n) {
  check_length(n);
  ensure_table();
  absorb_ref_counts();
  context_ = "batch " + std::to_string(batches_++);
  if (n == 0) return;
  unsigned long long* d_inserts = d_live_.data();
  GPUDICT_CUDA(cudaMemsetAsync(d_inserts, 0, sizeof(unsigned long long), stream_));
  update_types_kernel<<<blocks_for(n, 256), 256, 0, stream_>>>(erase, n, nullptr, d_inserts);
  GPUDICT_CHECK_LAUNCH("slabhash update_types_kernel");
  unsigned long long inserts = 0;
  copy_to_host(stream_, &inserts, d_inserts, sizeof inserts);
  reserve_for_inserts(inserts);
  if (inserts == n || inserts == 0) {
    // One kind only: a pass of it on the caller's arrays, nothing staged.
    const bool ins = inserts == n;
    run_device_pass(keys, ins ? values : nullptr, n, ins ? kOpInsert : kOpDelete, ins ? kSetInsert : kSetDelete);
  } else if (opt_.mode != Mode::Multimap) {
    d_ops_.type.reserve_discard(n, "slabhash update types");
    update_types_kernel<<<blocks_for(n, 256), 256, 0, stream_>>>(erase, n, d_ops_.type.data(), nullptr);
    GPUDICT_CHECK_LAUNCH("slabhash update_types_kernel");
    // Map, set: one pass; of a key's several updates any may win.
    OpsIn<K, V> in;
    in.type = d_ops_.type.data();
    in.key = keys;
    in.arg = values;
    in.n = n;
    run_pass(in, kSetUpdates, n);
  } else {
    // Multimap: every delete first (it removes every pair of its key), then
    // every insert (each adds a pair): the deletes' positions in order,
    // then the inserts', gathered into the update staging.
    d_ops_.idx.reserve_discard(n, "slabhash update order");
    d_ops_.key.reserve_discard(n, "slabhash update order");
    d_ops_.arg.reserve_discard(n, "slabhash update order");
    DeviceBuffer<uint32_t> order(n, "slabhash update order");
    unsigned long long* d_deletes = d_live_.data();
    auto partition = [&](void* p, size_t& bytes) {
      return cub::DevicePartition::Flagged(p, bytes, thrust::counting_iterator<uint32_t>(0), erase, order.data(),
                                           d_deletes, static_cast<int64_t>(n), stream_);
    };
    temp_.prepare("cub::DevicePartition::Flagged (multimap update)", partition);
    temp_.run("cub::DevicePartition::Flagged (multimap update)", partition);
    gather_pairs_kernel<K, V><<<blocks_for(n, 256), 256, 0, stream_>>>(keys, values, order.data(), n,
                                                                       d_ops_.key.data(), d_ops_.arg.data());
    GPUDICT_CHECK_LAUNCH("slabhash gather_pairs_kernel");
    unsigned long long deletes = 0;
    copy_to_host(stream_, &deletes, d_deletes, sizeof deletes);
    if (deletes) run_device_pass(d_ops_.key.data(), nullptr, deletes, kOpDelete, kSetDelete);
    if (deletes < n)
      run_device_pass(d_ops_.key.data() + deletes, values ? d_ops_.arg.data() + deletes : nullptr, n - deletes,
                      kOpInsert, kSetInsert);
  }
  maybe_flush();
  GPUDICT_CUDA(cudaStreamSynchronize(stream_));
}

template <class K, class V>
range_output<K, V> SlabHash<K, V>::apply_device(const uint8_t* ops, uint8_t uniform, const K* keys, const V* values,
                                                uint64_t n, const mixed_outputs<K, V>& out) {
  check_length(n);
  if (!ops && uniform > kOpRange)
    throw InputError("slab_hash_map: apply serves insert, erase, find, count and range (no successor)");
  ensure_table();
  absorb_ref_counts();
  context_ = "batch " + std::to_string(batches_++);
  if (n == 0) return {};
  uint32_t kinds = 1u << uniform;
  uint64_t inserts = uniform == kOpInsert ? n : 0;
  if (ops && out.kinds_hint) {
    kinds = out.kinds_hint;
    inserts = out.inserts_hint;
    if (kinds & ~static_cast<uint32_t>(kSetAll))
      throw InputError("slab_hash_map: apply serves insert, erase, find, count and range (no successor)");
  } else if (ops) {
    // d_live_[0]: the kinds (low word), d_live_[1]: the inserts.
    unsigned int* d_kinds = reinterpret_cast<unsigned int*>(d_live_.data());
    unsigned long long* d_inserts = d_live_.data() + 1;
    GPUDICT_CUDA(cudaMemsetAsync(d_live_.data(), 0, 2 * sizeof(unsigned long long), stream_));
    scan_ops_kernel<<<blocks_for(n, 256), 256, 0, stream_>>>(ops, n, d_kinds, d_inserts);
    GPUDICT_CHECK_LAUNCH("slabhash scan_ops_kernel");
    unsigned long long h[2] = {0, 0};
    copy_to_host(stream_, h, d_live_.data(), sizeof h);
    kinds = static_cast<uint32_t>(h[0]);
    inserts = h[1];
    if (kinds & ~static_cast<uint32_t>(kSetAll))
      throw InputError("slab_hash_map: apply serves insert, erase, find, count and range (no successor)");
  }
  const bool queries = (kinds & (kSetLookup | kSetCount | kSetRange)) != 0;
  if (queries) {
    d_found_.reserve_discard(n, "slabhash results");
    d_value_.reserve_discard(n, "slabhash results");
    d_offset_.reserve_discard(n, "slabhash results");
    // An operation that finds nothing writes nothing: cleared first.
    GPUDICT_CUDA(cudaMemsetAsync(d_found_.data(), 0, n, stream_));
    GPUDICT_CUDA(cudaMemsetAsync(d_value_.data(), 0, n * sizeof(V), stream_));
    GPUDICT_CUDA(cudaMemsetAsync(d_offset_.data(), 0, n * 4, stream_));
  }
  if (kinds & kSetRange)
    d_range_values_.reserve_discard(std::max<uint64_t>(1u << 16, out.range_hint), "slabhash range results");
  reset_counters(true);
  reserve_for_inserts(inserts);
  OpsIn<K, V> in;
  in.type = ops;
  in.key = keys;
  in.arg = values;
  in.n = n;
  in.uniform = uniform;
  run_pass(in, kinds, n);
  range_output<K, V> r;
  if (queries) {
    flags_to_bool(d_found_.data(), out.found, n, stream_);
    if (out.values)
      GPUDICT_CUDA(cudaMemcpyAsync(out.values, d_value_.data(), n * sizeof(V), cudaMemcpyDeviceToDevice, stream_));
    narrow_copy<V>(d_value_.data(), nullptr, out.counts, sizeof(uint64_t), n, stream_);
    narrow_copy<uint32_t>(d_offset_.data(), nullptr, out.offsets, sizeof(uint64_t), n, stream_);
  }
  if (kinds & kSetRange) {
    const Counters c = read_counters();
    r.values = d_range_values_.data();
    r.size = std::min<uint64_t>(c.range_cursor, d_range_values_.capacity());
  }
  if (kinds & kSetUpdates) maybe_flush();
  GPUDICT_CUDA(cudaStreamSynchronize(stream_));
  return r;
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
  run_device_pass(keys, nullptr, n, kOpLookup, kSetLookup);
  if (values_out)
    GPUDICT_CUDA(cudaMemcpyAsync(values_out, d_value_.data(), n * sizeof(V), cudaMemcpyDeviceToDevice, stream_));
  flags_to_bool(d_found_.data(), found_out, n, stream_);
  GPUDICT_CUDA(cudaStreamSynchronize(stream_));
}

#define GPUDICT_SLABHASH_DEVICE_API(K, V)                                                            \
  template uint64_t SlabHash<K, V>::run_device_pass(const K*, const V*, uint64_t, uint8_t, uint32_t); \
  template void SlabHash<K, V>::update_mixed_device(const K*, const V*, const bool*, uint64_t);      \
  template range_output<K, V> SlabHash<K, V>::apply_device(const uint8_t*, uint8_t, const K*, const V*, \
                                                           uint64_t, const mixed_outputs<K, V>&);    \
  template void SlabHash<K, V>::build_device(const K*, const V*, uint64_t, uint64_t);                     \
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
