// A batch on the slab hash: the refusals, the staging of its operations, the
// kernels per phase (phased: the updates in one pass - multimap: deletes,
// then inserts - then each query type; concurrent: everything in one pass),
// pool growth and the re-run of unfinished operations, and the results.
#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <string>
#include <vector>

#include "core/common/cuda_check.hpp"
#include "core/common/errors.hpp"
#include "core/common/grid.cuh"
#include "core/slabhash/slabhash.hpp"
#include "core/slabhash/detail/slabhash_impl.cuh"
#include "core/slabhash/detail/tile_ops.cuh"

namespace gpudict::slabhash {

static_assert(kPrefetchOff == 0 && kPrefetchL2 == 1 && kPrefetchBulk == 2,
              "prefetch names (options.hpp) follow OpsIn::prefetch");

namespace {
// A re-run's operations from the pass's arrays (device arrays whose
// positions are the batch positions): positions pos[0, m).
template <class K, class V>
__global__ void gather_ops_kernel(OpsIn<K, V> src, const uint32_t* pos, uint64_t m, K* key, V* arg, uint32_t* idx) {
  const uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= m) return;
  const uint32_t p = pos[i];
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
OpsIn<K, V> SlabHash<K, V>::upload_ops(DeviceOps<K, V>& d, uint64_t m, const char* what) {
  d.type.reserve_discard(m, what);
  d.key.reserve_discard(m, what);
  d.arg.reserve_discard(m, what);
  d.idx.reserve_discard(m, what);
  copy_to_device(stream_, d.type.data(), h_type_.data(), m);
  copy_to_device(stream_, d.key.data(), h_key_.data(), m * sizeof(K));
  copy_to_device(stream_, d.arg.data(), h_arg_.data(), m * sizeof(V));
  copy_to_device(stream_, d.idx.data(), h_idx_.data(), m * 4);
  OpsIn<K, V> in;
  in.type = d.type.data();
  in.key = d.key.data();
  in.arg = d.arg.data();
  in.index = d.idx.data();
  in.n = m;
  return in;
}

template <class K, class V>
OpsOut<V> SlabHash<K, V>::outputs(uint64_t batch_size) {
  // Query results are reserved by execute() when the batch has queries (a
  // build or an update batch needs none); the unfinished list always.
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
void SlabHash<K, V>::grow_pool_or_throw(uint32_t unfinished, uint64_t pass_size, DeviceTime& t, Phase phase) {
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
    t.add(phase, timer_.stop(stream_));
  } catch (const DeviceOutOfMemory& e) {
    throw RuntimeFailure(what + "growing the pool to " + format_bytes(pool_.bytes_after_growth()) +
                         " failed: " + e.what());
  }
  ++growths_;
}

template <class K, class V>
void SlabHash<K, V>::reserve_for_inserts(uint64_t inserts, DeviceTime& t, Phase phase) {
  if (opt_.grow_ahead) grow_ahead_of(inserts, t, phase);
}

template <class K, class V>
void SlabHash<K, V>::grow_ahead_of(uint64_t inserts, DeviceTime& t, Phase phase) {
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
    t.add(phase, timer_.stop(stream_));
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
Counters SlabHash<K, V>::run_pass(const Staged& s, uint32_t ops, Phase phase, uint64_t batch_size, DeviceTime& t) {
  Counters total{};
  OpsIn<K, V> in = s.in;
  in.prefetch = opt_.prefetch;
  reset_counters(false);
  std::vector<uint32_t> again;
  for (;;) {
    const OpsOut out = outputs(batch_size);
    prepare_batch<K, V>(opt_.mode, ops);
    timer_.start(stream_);
    launch_batch<K, V>(opt_.mode, ops, ref(), in, out, stream_);
    t.add(phase, timer_.stop(stream_));
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
    // did not finish changed nothing, so none is applied twice).
    ++unfinished_reruns_;
    if (c.exhausted) grow_pool_or_throw(c.unfinished, in.n, t, phase);
    if (c.range_overflow) grow_range_buffer(c.range_cursor);
    const uint64_t m = c.unfinished;
    if (!s.op_at) {  // device arrays: gather the unfinished operations on the device
      d_rerun_.key.reserve_discard(m, "slabhash re-run");
      d_rerun_.arg.reserve_discard(m, "slabhash re-run");
      d_rerun_.idx.reserve_discard(m, "slabhash re-run");
      gather_ops_kernel<K, V><<<blocks_for(m, 256), 256, 0, stream_>>>(s.in, d_unfinished_.data(), m,
                                                                       d_rerun_.key.data(), d_rerun_.arg.data(),
                                                                       d_rerun_.idx.data());
      GPUDICT_CHECK_LAUNCH("slabhash gather_ops_kernel");
      in = s.in;
      in.key = d_rerun_.key.data();
      in.arg = s.in.arg ? d_rerun_.arg.data() : nullptr;
      in.index = d_rerun_.idx.data();
      in.n = m;
      in.prefetch = opt_.prefetch;
      reset_counters(false);
      continue;
    }
    again.resize(m);
    copy_to_host(stream_, again.data(), d_unfinished_.data(), again.size() * 4);
    h_type_.reserve_discard(m);
    h_key_.reserve_discard(m);
    h_arg_.reserve_discard(m);
    h_idx_.reserve_discard(m);
    for (uint64_t i = 0; i < m; ++i) {
      s.op_at(again[i], h_type_[i], h_key_[i], h_arg_[i]);
      h_idx_[i] = again[i];
    }
    in = upload_ops(d_rerun_, m, "slabhash re-run");
    in.prefetch = opt_.prefetch;
    reset_counters(false);
  }
  return total;
}

template <class K, class V>
void SlabHash<K, V>::execute(const Batch& batch, BatchResults& r, DeviceTime& t) {
  const uint64_t n = batch.size();
  if (batch.keys.size() != n || batch.args.size() != n) throw InputError("slabhash: batch arrays differ in length");
  if (!batch.snapshot.empty())
    throw InputError("slabhash does not support snapshots");
  const uint64_t index = batches_++;
  context_ = "batch " + std::to_string(index);
  if (n >= (1ull << 32)) throw InputError("slabhash: a batch of 2^32 or more operations");
  // Refusals come before any device work, so the table is untouched.
  for (uint64_t i = 0; i < n; ++i) {
    const OpType ty = batch.types[i];
    if ((ty == OpType::Count || ty == OpType::Range) && batch.keys[i] != batch.args[i])
      throw InputError(slabhash_point_query_message(ty, batch.keys[i], batch.args[i], index));
    if (ty == OpType::Successor)
      throw InputError("slabhash does not support successor operations (batch " + std::to_string(index) +
                       ")");
    if (batch.keys[i] > key_max<K> || (ty == OpType::Insert && batch.args[i] > key_max<V>))
      throw InputError("slabhash: a key or value above the " + std::string(kv_name<K, V>()) +
                       " instantiation's range in batch " + std::to_string(index));
  }
  ensure_table();
  r.reset(n);
  if (n == 0) return;
  const BatchPlan plan(batch);
  const bool concurrent = batch.mode == ExecMode::Concurrent;
  const bool multi = opt_.mode == Mode::Multimap;

  // Stage: concurrent batches in batch order (every type mixed in the
  // warps, as the paper's concurrent benchmark); phased batches grouped
  // [deletes][inserts][lookups][counts][ranges], each group a contiguous
  // range of one pass.
  h_type_.reserve_discard(n);
  h_key_.reserve_discard(n);
  h_arg_.reserve_discard(n);
  h_idx_.reserve_discard(n);
  uint64_t pos = 0;
  auto put = [&](uint32_t i) {
    h_type_[pos] = static_cast<uint8_t>(batch.types[i]);
    h_key_[pos] = static_cast<K>(batch.keys[i]);
    h_arg_[pos] = batch.types[i] == OpType::Insert ? static_cast<V>(batch.args[i]) : V{0};
    h_idx_[pos] = i;
    ++pos;
  };
  uint64_t seg[6] = {0, 0, 0, 0, 0, 0};  // group boundaries (phased)
  if (concurrent) {
    for (uint32_t i = 0; i < n; ++i) put(i);
  } else {
    const OpType order[5] = {OpType::Delete, OpType::Insert, OpType::Lookup, OpType::Count, OpType::Range};
    for (int g = 0; g < 5; ++g) {
      seg[g] = pos;
      for (uint32_t i : plan.of(order[g])) put(i);
    }
    seg[5] = pos;
  }
  const OpsIn<K, V> staged = upload_ops(d_ops_, n, "slabhash operations");

  const uint64_t queries = plan.queries();
  const uint64_t ranges = plan.of(OpType::Range).size();
  outputs(n);
  if (queries) {
    d_found_.reserve_discard(n, "slabhash results");
    d_value_.reserve_discard(n, "slabhash results");
    d_offset_.reserve_discard(n, "slabhash results");
    GPUDICT_CUDA(cudaMemsetAsync(d_found_.data(), 0, n, stream_));
    GPUDICT_CUDA(cudaMemsetAsync(d_value_.data(), 0, n * sizeof(V), stream_));
    GPUDICT_CUDA(cudaMemsetAsync(d_offset_.data(), 0, n * 4, stream_));
  }
  if (ranges) d_range_values_.reserve_discard(std::max<uint64_t>(1u << 16, 4 * ranges), "slabhash range results");
  reset_counters(true);

  // The operations of positions [from, to) of the staging, as one pass.
  // (The types of a range of the staging come from the plan: the pinned
  // staging is reused by reruns.)
  auto types_of = [&](std::initializer_list<OpType> ts) {
    uint32_t ops = 0;
    for (OpType ty : ts)
      if (!plan.of(ty).empty()) ops |= 1u << static_cast<int>(ty);
    return ops;
  };
  auto pass = [&](uint64_t from, uint64_t to, uint32_t ops, Phase phase) {
    if (from == to) return;
    Staged s;
    s.in = staged;
    s.in.type += from;
    s.in.key += from;
    s.in.arg += from;
    s.in.index += from;
    s.in.n = to - from;
    s.op_at = [&batch](uint32_t i, uint8_t& type, K& key, V& arg) {
      type = static_cast<uint8_t>(batch.types[i]);
      key = static_cast<K>(batch.keys[i]);
      arg = batch.types[i] == OpType::Insert ? static_cast<V>(batch.args[i]) : V{0};
    };
    run_pass(s, ops, phase, n, t);
  };

  reserve_for_inserts(plan.of(OpType::Insert).size(), t, concurrent ? Phase::Concurrent : Phase::Update);
  if (concurrent) {
    pass(0, n, types_of({OpType::Insert, OpType::Delete, OpType::Lookup, OpType::Count, OpType::Range}),
         Phase::Concurrent);
  } else {
    if (multi) {
      pass(seg[0], seg[1], kSetDelete, Phase::Update);  // DeletesThenInserts: every delete first
      pass(seg[1], seg[2], kSetInsert, Phase::Update);
    } else {
      pass(seg[0], seg[2], types_of({OpType::Insert, OpType::Delete}), Phase::Update);  // AnyUpdate: one pass
    }
    pass(seg[2], seg[3], kSetLookup, Phase::Lookup);
    pass(seg[3], seg[4], kSetCount, Phase::Count);
    pass(seg[4], seg[5], kSetRange, Phase::Range);
  }

  if (queries) {
    h_found_.reserve_discard(n);
    h_value_.reserve_discard(n);
    h_offset_.reserve_discard(n);
    copy_to_host(stream_, h_found_.data(), d_found_.data(), n);
    copy_to_host(stream_, h_value_.data(), d_value_.data(), n * sizeof(V));
    if (ranges) copy_to_host(stream_, h_offset_.data(), d_offset_.data(), n * 4);
    uint64_t stored = 0;
    if (ranges) {
      const Counters c = read_counters();
      stored = std::min<uint64_t>(c.range_cursor, d_range_values_.capacity());
      h_range_.reserve_discard(std::max<uint64_t>(stored, 1));
      copy_to_host(stream_, h_range_.data(), d_range_values_.data(), stored * sizeof(V));
      r.range_keys.assign(stored, 0);
      r.range_values.assign(h_range_.data(), h_range_.data() + stored);
    }
    for (uint32_t i = 0; i < n; ++i) {
      switch (batch.types[i]) {
        case OpType::Lookup:
          r.found[i] = h_found_[i];
          r.value[i] = r.found[i] ? h_value_[i] : 0;
          break;
        case OpType::Count: r.value[i] = h_value_[i]; break;
        case OpType::Range: {
          const uint64_t off = h_offset_[i], cnt = h_value_[i];
          r.key[i] = off;
          r.value[i] = cnt;
          for (uint64_t j = off; j < off + cnt && j < stored; ++j) r.range_keys[j] = batch.keys[i];
          break;
        }
        default: break;
      }
    }
  }
  if (plan.updates() > 0) maybe_flush(t);
}

#define GPUDICT_SLABHASH_EXECUTE(K, V)                                                                            \
  template void SlabHash<K, V>::reset_counters(bool);                                                             \
  template Counters SlabHash<K, V>::read_counters();                                                             \
  template OpsIn<K, V> SlabHash<K, V>::upload_ops(DeviceOps<K, V>&, uint64_t, const char*);                      \
  template OpsOut<V> SlabHash<K, V>::outputs(uint64_t);                                                          \
  template void SlabHash<K, V>::grow_pool_or_throw(uint32_t, uint64_t, DeviceTime&, Phase);                      \
  template void SlabHash<K, V>::reserve_for_inserts(uint64_t, DeviceTime&, Phase);                               \
  template void SlabHash<K, V>::grow_ahead_of(uint64_t, DeviceTime&, Phase);                                     \
  template void SlabHash<K, V>::grow_range_buffer(unsigned long long);                                           \
  template Counters SlabHash<K, V>::run_pass(const Staged&, uint32_t, Phase, uint64_t, DeviceTime&);             \
  template void SlabHash<K, V>::execute(const Batch&, BatchResults&, DeviceTime&);
GPUDICT_SLABHASH_EXECUTE(uint32_t, uint32_t)
GPUDICT_SLABHASH_EXECUTE(uint32_t, uint64_t)
GPUDICT_SLABHASH_EXECUTE(uint64_t, uint64_t)
#undef GPUDICT_SLABHASH_EXECUTE

}  // namespace gpudict::slabhash
