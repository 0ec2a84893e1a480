// Mixed calls (btree_map::apply): operations of any types in one validated
// operations kernel, the engine's concurrent batches.
//   - A range writes its pairs into a room sized by a count on the tree as
//     it is before the call plus slack (the list's ranges picked from its
//     sorted list, counted and given their rooms on the device); a range
//     that outgrows its room (inserts of the same call landing in it) is
//     answered again after the kernel, on the final tree, which the
//     concurrent semantics also allow.
//   - Updates that found an automatic pool full run again once it has grown
//     (they look like updates that ran last).
//   - A call without queries is an update list through the operations
//     kernel (never merged: its updates run concurrently, as asked); one of
//     ranges only is a phased range list (device_ranges.cu).
// Results are written by position into the caller's arrays on the device;
// the range pairs stay in the tree's memory.
#include <cub/block/block_scan.cuh>
#include <cub/device/device_select.cuh>

#include <algorithm>
#include <cstdint>
#include <string>

#include "core/btree/detail/btree_impl.cuh"
#include "core/btree/detail/launch.cuh"
#include "core/common/cuda_check.hpp"
#include "core/common/errors.hpp"
#include "core/common/grid.cuh"

namespace gpudict::btree {

namespace {

constexpr const char* kSelectRangesName = "cub::DeviceSelect::If (btree concurrent ranges)";

// A list position's slot and type: from its operation word, or from the
// permutation and the types by slot.
struct RangeAt {
  const unsigned long long* words = nullptr;
  const uint32_t* perm = nullptr;
  const uint8_t* types = nullptr;
  __device__ uint32_t slot(uint32_t pos) const {
    return words ? word_slot(words[pos]) : perm ? perm[pos] : pos;
  }
  // Whether position pos holds a range.
  __device__ bool operator()(uint32_t pos) const {
    const uint32_t type = words ? word_type(words[pos]) : types[perm ? perm[pos] : pos];
    return type == static_cast<uint32_t>(OpType::Range);
  }
};

// The positions of a list's ranges, in list order (so still sorted by key):
// positions 0 .. n - 1 (the constant iota) selected by RangeAt.
auto select_ranges(RangeAt at, const uint32_t* iota, uint32_t* out, unsigned long long* selected, uint64_t n,
                   cudaStream_t s) {
  return [=](void* p, size_t& bytes) {
    return cub::DeviceSelect::If(p, bytes, iota, out, selected, static_cast<int64_t>(n), at, s);
  };
}

// Selected positions (in sub_slots) -> their keys, slots (in place) and
// upper bounds (args: by slot; null: in the words).
template <class Word>
__global__ void gather_sub_list_kernel(RangeAt at, const Word* keys, const Word* args, Word* sub_keys,
                                       uint32_t* sub_slots, Word* sub_hi, uint64_t m) {
  const uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= m) return;
  const uint32_t pos = sub_slots[i];
  const uint32_t j = at.slot(pos);
  sub_keys[i] = keys[pos];
  sub_slots[i] = j;
  sub_hi[i] = at.words ? static_cast<Word>(at.words[pos] >> 32) : args[j];
}

// A concurrent range's room: its pre-batch count and slack for inserts of
// the same batch landing in it.
template <class Word>
__device__ __forceinline__ uint32_t range_room(Word count) {
  const uint64_t room = static_cast<uint64_t>(count) + 16 + count / 4;
  return static_cast<uint32_t>(room < 0xFFFFFFF0ull ? room : 0xFFFFFFF0ull);
}

// A concurrent batch's ranges, i < m in list order with slots sub_slots:
// each one's room from its pre-batch count (value[i]) into cap, and its
// first output position into off (both by slot) and sub_off (by list
// position). Each block reserves its ranges' rooms with one atomicAdd on
// the cursor (one per warp made 2^15 atomics on one address for 2^20
// ranges), so the blocks' regions lie in no particular order (each range's
// pairs are contiguous, which is all its offset promises).
constexpr int kRoomBlock = 256;
template <class Word>
__global__ void __launch_bounds__(kRoomBlock) range_room_kernel(const Word* value, const uint32_t* sub_slots,
                                                                uint32_t* cap, unsigned long long* off,
                                                                unsigned long long* sub_off,
                                                                unsigned long long* cursor, uint64_t m) {
  using Scan = cub::BlockScan<unsigned long long, kRoomBlock>;
  __shared__ typename Scan::TempStorage scan;
  __shared__ unsigned long long base;
  const uint64_t i = static_cast<uint64_t>(blockIdx.x) * kRoomBlock + threadIdx.x;
  const unsigned long long room = i < m ? range_room(value[i]) : 0u;
  unsigned long long before = 0, total = 0;
  Scan(scan).ExclusiveSum(room, before, total);
  if (threadIdx.x == 0) base = atomicAdd(cursor, total);
  __syncthreads();
  if (i < m) {
    const uint32_t j = sub_slots[i];
    const unsigned long long o = base + before;
    cap[j] = static_cast<uint32_t>(room);
    off[j] = o;
    sub_off[i] = o;
  }
}

template <class Word>
__device__ __forceinline__ void store_width(void* out, int bytes, uint64_t i, Word w) {
  if (bytes == 4)
    static_cast<uint32_t*>(out)[i] = static_cast<uint32_t>(w);
  else
    static_cast<uint64_t*>(out)[i] = static_cast<uint64_t>(w);
}

// The kernel's results (by slot = position) into the caller's outputs; the
// positions of ranges that outgrew their room into `reruns`.
template <class Word>
__global__ void mixed_results_kernel(const uint8_t* types, const uint8_t* found, const Word* value,
                                     const Word* key_out, const unsigned long long* range_off, MixedOutputs out,
                                     uint32_t* reruns, unsigned long long* rerun_count, uint64_t n) {
  const uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const uint8_t t = types[i];
  if (t == static_cast<uint8_t>(OpType::Lookup) || t == static_cast<uint8_t>(OpType::Successor)) {
    const bool f = found[i] != 0;
    if (out.found) out.found[i] = f;
    if (out.values) store_width(out.values, out.value_bytes, i, f ? value[i] : Word{0});
    if (t == static_cast<uint8_t>(OpType::Successor) && out.keys)
      store_width(out.keys, out.key_bytes, i, f ? key_out[i] : Word{0});
  } else if (t == static_cast<uint8_t>(OpType::Count)) {
    if (out.counts) out.counts[i] = static_cast<unsigned long long>(value[i]);
  } else if (t == static_cast<uint8_t>(OpType::Range)) {
    if (value[i] == static_cast<Word>(kRangeOverflow)) {
      reruns[atomicAdd(rerun_count, 1ull)] = static_cast<uint32_t>(i);
    } else {
      if (out.counts) out.counts[i] = static_cast<unsigned long long>(value[i]);
      if (out.offsets) out.offsets[i] = range_off[i];
    }
  }
}

// The positions of updates that did not take effect (the pool filled).
__global__ void late_updates_kernel(const uint8_t* types, const uint8_t* done, uint32_t* late,
                                    unsigned long long* late_count, uint64_t n) {
  const uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const uint8_t t = types[i];
  if ((t == static_cast<uint8_t>(OpType::Insert) || t == static_cast<uint8_t>(OpType::Delete)) && !done[i])
    late[atomicAdd(late_count, 1ull)] = static_cast<uint32_t>(i);
}

// Ranges answered again (rerun list j at position pos[j], offsets off[j]
// relative to `base` in the returned pairs): their sizes and offsets.
__global__ void place_reruns_kernel(const uint32_t* pos, const unsigned long long* off, unsigned long long base,
                                    MixedOutputs out, uint64_t m) {
  const uint64_t j = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= m) return;
  if (out.counts) out.counts[pos[j]] = off[j + 1] - off[j];
  if (out.offsets) out.offsets[pos[j]] = base + off[j];
}

}  // namespace

template <class Word>
MixedPairs<Word> BTree<Word>::apply_device(const DeviceSource& src, const MixedOutputs& out) {
  const uint64_t n = checked_list(src.n, "a mixed call");
  require_pool();
  if (n == 0) return {};
  // Ranges only: the phased range list (nothing changes while it runs).
  constexpr uint32_t kRangesOnly = 1u << static_cast<int>(OpType::Range);
  if (out.kinds_hint == kRangesOnly) return mixed_ranges(src, out);
  refresh();
  const Staged<Word> s = stage_ops_list(src, true);
  if (s.kinds == kRangesOnly) return mixed_ranges(src, out);
  if (!s.has_queries()) {
    add_time(ops_update_passes(src, &s));
    return {};
  }
  return run_concurrent(src, s, out);
}

template <class Word>
MixedPairs<Word> BTree<Word>::run_concurrent(const DeviceSource& src, const Staged<Word>& staged,
                                             const MixedOutputs& out) {
  const uint64_t n = src.n;
  const uint64_t m = staged.ranges;
  double ms = reserve_nodes(staged.inserts / 8 + 64);
  const SortBits bits = query_sort_bits_of(staged.lo, staged.hi, n);
  if (m > 0) {
    d_sub_keys_.reserve_discard(m, "btree range list");
    d_sub_slots_.reserve_discard(m, "btree range list");
    d_sub_hi_.reserve_discard(m, "btree range list");
    d_sub_off_.reserve_discard(m, "btree range list");
    d_rerun_ranges_.reserve_discard(m, "btree range list");
    temp_.prepare(kSelectRangesName, select_ranges(RangeAt{}, d_iota_.data(), d_sub_slots_.data(),
                                                   d_scalars_.data() + kSelectedCount, n, stream_));
    GPUDICT_CUDA(cudaMemsetAsync(d_scalars_.data() + kRangeCursor, 0, sizeof(unsigned long long), stream_));
  }
  prepare_ops_sort(n, bits);  // after the other CUB sizing: the sort's graph keys on the CUB buffer
  const uint32_t top_nodes = reserve_top_copy(n);
  GPUDICT_CUDA(cudaMemsetAsync(d_done_.data(), 0, n, stream_));
  GPUDICT_CUDA(cudaMemsetAsync(d_scalars_.data() + kRerunCount, 0, 2 * sizeof(unsigned long long), stream_));
  timer_.start(stream_);
  trace_.mark(stream_, "start");
  OpsRef<Word> list = sort_ops(n, bits);
  trace_.mark(stream_, "sort");

  // Range rooms: a count on the tree as it is before the call, plus slack
  // (range_room). The counts run over the sorted list's ranges, picked out
  // in list order (no sort of their own).
  uint64_t slots = 0;
  if (m > 0) {
    const RangeAt at{list.op_words, list.perm, list.types};
    temp_.run(kSelectRangesName, select_ranges(at, d_iota_.data(), d_sub_slots_.data(),
                                               d_scalars_.data() + kSelectedCount, n, stream_));
    gather_sub_list_kernel<<<blocks_for(m, 256), 256, 0, stream_>>>(at, list.keys, list.args, d_sub_keys_.data(),
                                                                      d_sub_slots_.data(), d_sub_hi_.data(), m);
    GPUDICT_CHECK_LAUNCH("gather_sub_list_kernel");
    trace_.mark(stream_, "range list");
    // The counts by position in the sub-list, in d_value_[0, m): read by
    // the room kernel before the call's kernel writes its results there.
    OpsRef<Word> sizing = list_ref(m, false, false, static_cast<uint8_t>(OpType::Count));
    sizing.keys = d_sub_keys_.data();
    sizing.args = d_sub_hi_.data();
    sizing.use_finger = list.use_finger;
    launch_phased_queries(ref(), sizing);
    trace_.mark(stream_, "range counts");
    range_room_kernel<<<blocks_for(m, kRoomBlock), kRoomBlock, 0, stream_>>>(
        d_value_.data(), d_sub_slots_.data(), d_range_cap_.data(), d_range_off_.data(), d_sub_off_.data(),
        d_scalars_.data() + kRangeCursor, m);
    GPUDICT_CHECK_LAUNCH("range_room_kernel");
    trace_.mark(stream_, "range rooms");
    ms += timer_.stop(stream_);
    trace_.flush("btree concurrent, before the kernel");
    sync_header();
    copy_to_host(stream_, h_u64_.data(), d_scalars_.data() + kRangeCursor, sizeof(unsigned long long));
    slots = h_u64_[0];
    // Outside the timed region: the results may need a larger buffer. The
    // device then idles; settled, the timer does not count the wait for
    // the host's next launch.
    reserve_range_pairs(std::max<uint64_t>(slots, 1));
    timer_.start_settled(stream_);
    trace_.mark(stream_, "start");
  }

  list.done = d_done_.data();
  list.range_cap = d_range_cap_.data();
  list.range_keys = d_range_keys_.data();
  list.range_values = d_range_values_.data();
  launch_rounds(list, top_nodes);
  trace_.mark(stream_, "kernel");
  ms += timer_.stop(stream_);
  trace_.flush("btree concurrent");
  sync_header();

  // Results by position (= slot), before any later list reuses the buffers.
  unsigned long long* rerun_count = d_scalars_.data() + kRerunCount;
  unsigned long long* late_count = d_scalars_.data() + kLateCount;
  mixed_results_kernel<Word><<<blocks_for(n, 256), 256, 0, stream_>>>(
      d_types_.data(), d_found_.data(), d_value_.data(), d_key_out_.data(), d_range_off_.data(), out,
      d_rerun_ranges_.data(), rerun_count, n);
  GPUDICT_CHECK_LAUNCH("mixed_results_kernel");
  const bool overflow = h_hdr_[0].overflow != 0;
  if (overflow) {
    if (opt_.node_pool != 0) throw_pool_full("a concurrent batch of " + std::to_string(n) + " operations");
    d_late_updates_.reserve_discard(n, "btree late updates");
    late_updates_kernel<<<blocks_for(n, 256), 256, 0, stream_>>>(d_types_.data(), d_done_.data(),
                                                                  d_late_updates_.data(), late_count, n);
    GPUDICT_CHECK_LAUNCH("late_updates_kernel");
  }
  copy_to_host(stream_, h_u64_.data(), rerun_count, 2 * sizeof(unsigned long long));
  const uint64_t reruns = h_u64_[0], late = h_u64_[1];

  if (overflow) {
    clear_overflow();
    ++retries_;  // before growing, as in run_update_pass
    ms += grow_pool(std::max<uint64_t>(capacity_ * 2, used_nodes() + late + 1024));
  }
  add_time(ms);
  if (late > 0) {
    DeviceSource again = src;
    again.index = d_late_updates_.data();
    again.n = late;
    add_time(ops_update_passes(again));
  }
  if (reruns == 0) return {d_range_keys_.data(), d_range_values_.data(), slots};

  // Ranges that outgrew their rooms: answered on the final tree, their
  // pairs after the kernel's (which are moved out of the way first).
  concurrent_range_reruns_ += reruns;
  const uint64_t room = slots + std::max<uint64_t>(slots / 4, 1024);
  d_mixed_keys_.reserve_discard(room, "btree range results");
  d_mixed_values_.reserve_discard(room, "btree range results");
  auto move_out = [&](uint64_t pairs) {
    if (pairs == 0) return;
    GPUDICT_CUDA(cudaMemcpyAsync(d_mixed_keys_.data(), d_range_keys_.data(), pairs * sizeof(Word),
                                 cudaMemcpyDeviceToDevice, stream_));
    GPUDICT_CUDA(cudaMemcpyAsync(d_mixed_values_.data(), d_range_values_.data(), pairs * sizeof(Word),
                                 cudaMemcpyDeviceToDevice, stream_));
  };
  move_out(slots);
  DeviceSource ranges = src;
  ranges.index = d_rerun_ranges_.data();
  ranges.n = reruns;
  d_rerun_off_.reserve_discard(reruns + 1, "btree range offsets");
  uint64_t total = range_device(ranges, d_rerun_off_.data(), d_mixed_keys_.data() + slots, sizeof(Word),
                                d_mixed_values_.data() + slots, sizeof(Word), room - slots);
  if (total > room - slots) {
    // More than the room: the ranges again, into a buffer large enough
    // that keeps the kernel's pairs in front.
    DeviceBuffer<Word> keys(slots + total, "btree range results"), values(slots + total, "btree range results");
    if (slots) {
      GPUDICT_CUDA(cudaMemcpyAsync(keys.data(), d_mixed_keys_.data(), slots * sizeof(Word), cudaMemcpyDeviceToDevice,
                                   stream_));
      GPUDICT_CUDA(cudaMemcpyAsync(values.data(), d_mixed_values_.data(), slots * sizeof(Word),
                                   cudaMemcpyDeviceToDevice, stream_));
    }
    d_mixed_keys_ = std::move(keys);
    d_mixed_values_ = std::move(values);
    total = range_device(ranges, d_rerun_off_.data(), d_mixed_keys_.data() + slots, sizeof(Word),
                         d_mixed_values_.data() + slots, sizeof(Word), total);
  }
  place_reruns_kernel<<<blocks_for(reruns, 256), 256, 0, stream_>>>(d_rerun_ranges_.data(), d_rerun_off_.data(),
                                                                     slots, out, reruns);
  GPUDICT_CHECK_LAUNCH("place_reruns_kernel");
  GPUDICT_CUDA(cudaStreamSynchronize(stream_));
  return {d_mixed_keys_.data(), d_mixed_values_.data(), slots + total};
}

template class BTree<uint32_t>;
template class BTree<uint64_t>;

}  // namespace gpudict::btree
