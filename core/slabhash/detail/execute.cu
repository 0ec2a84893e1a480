// A pass of the slab hash's batch kernel: its outputs, pool growth (on
// demand and ahead of inserts) and the re-run of unfinished operations,
// gathered on the device, until every operation finished.
#include <algorithm>
#include <cstddef>
#include <string>

#include "core/common/cuda_check.hpp"
#include "core/common/errors.hpp"
#include "core/common/grid.cuh"
#include "core/slabhash/detail/slabhash_impl.cuh"
#include "core/slabhash/detail/tile_ops.cuh"

namespace gpudict::slabhash {

static_assert(kPrefetchOff == 0 && kPrefetchL2 == 1 && kPrefetchBulk == 2,
              "prefetch names (options.hpp) follow OpsIn::prefetch");

namespace {
// A re-run's operations from the pass's arrays (whose positions are the
// output positions): positions pos[0, m), with their types when the pass
// has a type array.
template <class K, class V>
__global__ void gather_ops_kernel(OpsIn<K, V> src, const uint32_t* pos, uint64_t m, uint8_t* type, K* key, V* arg,
                                  uint32_t* idx) {
  const uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= m) return;
  const uint32_t p = pos[i];
  if (src.type) type[i] = src.type[p];
  key[i] = src.key[p];
  arg[i] = src.arg ? src.arg[p] : V{0};
  idx[i] = p;
}
}  // namespace

template <class K, class V>
void SlabHash<K, V>::reset_counters(bool cursor_too) {
  if (cursor_too) {
    GPUDICT_CUDA(cudaMemsetAsync(d_ctr_.data(), 0, sizeof(Counters), stream_));
  } else {
    // Everything before range_cursor, and everything after it.
    GPUDICT_CUDA(cudaMemsetAsync(d_ctr_.data(), 0, offsetof(Counters, range_cursor), stream_));
    GPUDICT_CUDA(cudaMemsetAsync(reinterpret_cast<char*>(d_ctr_.data()) + offsetof(Counters, unfinished), 0,
                                 sizeof(Counters) - offsetof(Counters, unfinished), stream_));
  }
}

template <class K, class V>
Counters SlabHash<K, V>::read_counters() {
  copy_to_host(stream_, h_ctr_.data(), d_ctr_.data(), sizeof(Counters));
  return h_ctr_[0];
}

template <class K, class V>
OpsOut<V> SlabHash<K, V>::outputs(uint64_t batch_size) {
  // Query results are reserved by the calls that have queries (a build or
  // an update needs none); the unfinished list always.
  d_unfinished_.reserve_discard(batch_size, "slabhash results");
  OpsOut<V> o;
  o.found = d_found_.data();
  o.value = d_value_.data();
  o.offset = d_offset_.data();
  o.range_values = d_range_values_.data();
  o.range_capacity = d_range_values_.capacity();
  o.unfinished = d_unfinished_.data();
  o.ctr = d_ctr_.data();
  return o;
}

template <class K, class V>
void SlabHash<K, V>::grow_pool_or_throw(uint32_t unfinished, uint64_t pass_size) {
  const std::string what = "out of slab memory: all " + std::to_string(pool_.capacity()) + " slabs of the pool (" +
                           format_bytes(pool_.bytes()) + ") are in use; " + std::to_string(unfinished) + " of " +
                           std::to_string(pass_size) + " operations of " + context_ + " found no slab; ";
  if (!opt_.growth)
    throw RuntimeFailure(what + "raise the first pool's slabs (pool_slabs, now " +
                             (opt_.pool_slabs ? std::to_string(opt_.pool_slabs) : std::string("0, automatic")) +
                             ") or let the pool grow (growth)",
                         "growth");
  if (!pool_.can_grow(opt_.max_pool_bytes))
    throw RuntimeFailure(what + "growing would take the pool to " + format_bytes(pool_.bytes_after_growth()) +
                             (opt_.max_pool_bytes ? ", past its limit of " + std::to_string(opt_.max_pool_bytes) +
                                                        " bytes (max_pool_bytes)"
                                                  : std::string(", past the 2^31-slab address space")),
                         opt_.max_pool_bytes ? "max_pool_bytes" : "");
  try {
    timer_.start(stream_);
    pool_.grow(stream_);
    add_time(timer_.stop(stream_));
  } catch (const DeviceOutOfMemory& e) {
    throw RuntimeFailure(what + "growing the pool to " + format_bytes(pool_.bytes_after_growth()) +
                         " failed: " + e.what());
  }
  ++growths_;
}

template <class K, class V>
void SlabHash<K, V>::reserve_for_inserts(uint64_t inserts) {
  if (opt_.grow_ahead) grow_ahead_of(inserts);
}

template <class K, class V>
void SlabHash<K, V>::grow_ahead_of(uint64_t inserts) {
  if (inserts == 0) return;
  // The pool slabs the chains will hold after the inserts if the keys hash
  // uniformly (the Poisson model that sizes the buckets), counting every
  // claimed slot (tombstones too); never less than what is in use now. A
  // skewed batch can still fill the pool: then it grows when full.
  const double model = expected_overflow_slabs(shape(), claimed_ + inserts, buckets_);
  const double want = std::max(model, static_cast<double>(pool_used_)) + 1024.0;
  while (want > 0.75 * static_cast<double>(pool_.capacity()) && pool_.can_grow(opt_.max_pool_bytes)) {
    timer_.start(stream_);
    bool grew = true;
    try {
      pool_.grow(stream_);
    } catch (const DeviceOutOfMemory&) {
      // No device memory for growing ahead: the batch runs with the pool it
      // has, and only if that fills does the growth on demand
      // (grow_pool_or_throw) try again or end it with "out of slab memory".
      grew = false;
    }
    add_time(timer_.stop(stream_));
    if (!grew) return;
    ++growths_;
  }
}

template <class K, class V>
void SlabHash<K, V>::grow_range_buffer(unsigned long long needed) {
  // Keep what the ranges that fit have written: their offsets stay valid.
  const uint64_t cap = std::max<uint64_t>(2 * needed + 1024, 2 * d_range_values_.capacity());
  if (cap >= (1ull << 32)) throw RuntimeFailure("slabhash: the range results of " + context_ + " exceed 2^32 values");
  DeviceBuffer<V> bigger(cap, "slabhash range results");
  if (d_range_values_.capacity())
    GPUDICT_CUDA(cudaMemcpyAsync(bigger.data(), d_range_values_.data(), d_range_values_.bytes(),
                                 cudaMemcpyDeviceToDevice, stream_));
  GPUDICT_CUDA(cudaStreamSynchronize(stream_));
  d_range_values_ = std::move(bigger);
}

template <class K, class V>
Counters SlabHash<K, V>::run_pass(const OpsIn<K, V>& first, uint32_t ops, uint64_t batch_size) {
  Counters total{};
  OpsIn<K, V> in = first;
  in.prefetch = opt_.prefetch;
  reset_counters(false);
  for (;;) {
    const OpsOut out = outputs(batch_size);
    prepare_batch<K, V>(opt_.mode, ops);
    timer_.start(stream_);
    launch_batch<K, V>(opt_.mode, ops, ref(), in, out, stream_);
    add_time(timer_.stop(stream_));
    const Counters c = read_counters();
    total.claimed += c.claimed;
    total.killed += c.killed;
    total.replaced += c.replaced;
    pool_used_ += c.linked;
    live_ += c.claimed;
    live_ -= std::min<uint64_t>(live_, c.killed);
    claimed_ += c.claimed;
    if (c.unfinished == 0) break;
    // Some operations found no slab or no room for their range values: grow
    // what ran out and run exactly those operations again (an insert that
    // did not finish changed nothing, so none is applied twice), gathered
    // from the first pass's arrays by their positions.
    ++unfinished_reruns_;
    if (c.exhausted) grow_pool_or_throw(c.unfinished, in.n);
    if (c.range_overflow) grow_range_buffer(c.range_cursor);
    const uint64_t m = c.unfinished;
    if (first.type) d_rerun_.type.reserve_discard(m, "slabhash re-run");
    d_rerun_.key.reserve_discard(m, "slabhash re-run");
    d_rerun_.arg.reserve_discard(m, "slabhash re-run");
    d_rerun_.idx.reserve_discard(m, "slabhash re-run");
    gather_ops_kernel<K, V><<<blocks_for(m, 256), 256, 0, stream_>>>(first, d_unfinished_.data(), m,
                                                                     d_rerun_.type.data(), d_rerun_.key.data(),
                                                                     d_rerun_.arg.data(), d_rerun_.idx.data());
    GPUDICT_CHECK_LAUNCH("slabhash gather_ops_kernel");
    in = first;
    in.type = first.type ? d_rerun_.type.data() : nullptr;
    in.key = d_rerun_.key.data();
    in.arg = first.arg ? d_rerun_.arg.data() : nullptr;
    in.index = d_rerun_.idx.data();
    in.n = m;
    in.prefetch = opt_.prefetch;
    reset_counters(false);
  }
  return total;
}

#define GPUDICT_SLABHASH_EXECUTE(K, V)                                                                            \
  template void SlabHash<K, V>::reset_counters(bool);                                                             \
  template Counters SlabHash<K, V>::read_counters();                                                             \
  template OpsOut<V> SlabHash<K, V>::outputs(uint64_t);                                                          \
  template void SlabHash<K, V>::grow_pool_or_throw(uint32_t, uint64_t);                                          \
  template void SlabHash<K, V>::reserve_for_inserts(uint64_t);                                                   \
  template void SlabHash<K, V>::grow_ahead_of(uint64_t);                                                         \
  template void SlabHash<K, V>::grow_range_buffer(unsigned long long);                                           \
  template Counters SlabHash<K, V>::run_pass(const OpsIn<K, V>&, uint32_t, uint64_t);
GPUDICT_SLABHASH_EXECUTE(uint32_t, uint32_t)
GPUDICT_SLABHASH_EXECUTE(uint32_t, uint64_t)
GPUDICT_SLABHASH_EXECUTE(uint64_t, uint64_t)
#undef GPUDICT_SLABHASH_EXECUTE

}  // namespace gpudict::slabhash
