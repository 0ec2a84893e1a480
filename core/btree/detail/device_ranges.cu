// Ranges on a caller's device arrays (btree_map::range): the phased range
// list of ranges.cu (sorted, one pass, reruns with exact room when its
// estimate fell short; query_tile 0: the operations kernel's two passes,
// batch.cu), then its output laid out for the caller on the
// device: sizes and sources by array position, their exclusive sum as the
// offsets, and a group of lanes per range copying its pairs narrowed to the
// caller's widths (a mixed call of ranges takes the pairs where the list
// left them when it left no holes). Nothing of the bounds or pairs goes through the host: the
// list's size estimate (ranges.cu) is summed on the device too.
#include <cub/device/device_reduce.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <cstdint>

#include "core/btree/detail/btree_impl.cuh"
#include "core/common/cuda_check.hpp"
#include "core/common/grid.cuh"
#include "core/common/width_copy.cuh"

namespace gpudict::btree {

namespace {

constexpr const char* kSlotScanName = "cub::DeviceScan::ExclusiveSum (btree range offsets)";
constexpr const char* kExpectSumName = "cub::DeviceReduce::Sum (btree range estimate)";

// A range's expected pairs: its overlap with [key_lo, key_hi] times the tree's mean density, at most
// the tree's size.
template <class Word>
struct RangeExpect {
  const Word* lo;
  const HiSlot<Word>* hi_slot;
  Word key_lo, key_hi;
  double size, density;
  __device__ double operator()(uint64_t s) const {
    const Word a = lo[s] > key_lo ? lo[s] : key_lo;
    const Word h = static_cast<Word>(hs_hi(hi_slot[s]));
    const Word b = h < key_hi ? h : key_hi;
    if (a > b) return 0.0;
    const double e = (static_cast<double>(b) - static_cast<double>(a) + 1.0) * density;
    return e < size ? e : size;
  }
};

// d_hi_slot_[0] from the staged upper bounds: (hi, list position).
template <class Word>
__global__ void stage_hi_slots_kernel(const Word* hi, HiSlot<Word>* out, uint64_t n) {
  const uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = make_hs<Word>(hi[i], static_cast<uint32_t>(i));
}

// Each range's size and where its pairs start, by array position (the list
// stored them by list position when it sorted: hi_slot names the slot).
// close: size has n + 1 entries, and size[n] = 0 closes a scan of them.
// Either output may be null.
template <class Word>
__global__ void sizes_by_slot_kernel(const Word* size_by_pos, const unsigned long long* off_by_pos,
                                     const HiSlot<Word>* hi_slot, uint64_t n, unsigned long long* size,
                                     unsigned long long* src, bool close) {
  const uint64_t p = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (p == 0 && close) size[n] = 0;
  if (p >= n) return;
  const uint64_t s = hi_slot ? hs_slot(hi_slot[p]) : p;
  if (size) size[s] = static_cast<unsigned long long>(size_by_pos[p]);
  if (src) src[s] = off_by_pos[p];
}

template <class Word>
__device__ __forceinline__ void store_narrow(void* out, int bytes, uint64_t i, Word w) {
  if (bytes == 4)
    static_cast<uint32_t*>(out)[i] = static_cast<uint32_t>(w);
  else
    static_cast<uint64_t*>(out)[i] = static_cast<uint64_t>(w);
}

// `group` lanes per range (a power of two up to 32): its pairs from the
// list's output to the caller's.
template <class Word>
__global__ void copy_range_pairs_kernel(const Word* keys, const Word* values, const unsigned long long* size,
                                        const unsigned long long* src, const unsigned long long* dst, uint64_t n,
                                        unsigned group, void* keys_out, int key_bytes, void* values_out,
                                        int value_bytes) {
  const uint64_t t = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const uint64_t r = t / group;
  const unsigned lane = static_cast<unsigned>(t % group);
  if (r >= n) return;
  const uint64_t m = size[r], from = src[r], to = dst[r];
  for (uint64_t j = lane; j < m; j += group) {
    if (keys_out) store_narrow(keys_out, key_bytes, to + j, keys[from + j]);
    if (values_out) store_narrow(values_out, value_bytes, to + j, values[from + j]);
  }
}

// Each range's size and first output position, by array position, into
// the caller's counts and offsets (a mixed call's outputs).
__global__ void sizes_offsets_out_kernel(const unsigned long long* size, const unsigned long long* offsets,
                                         unsigned long long* counts_out, unsigned long long* offsets_out,
                                         uint64_t n) {
  const uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  if (counts_out) counts_out[i] = size[i];
  if (offsets_out) offsets_out[i] = offsets[i];
}

}  // namespace

template <class Word>
typename BTree<Word>::RangeLayout BTree<Word>::run_source_ranges(const DeviceSource& src, double& ms) {
  const uint64_t n = src.n;
  refresh();
  const Staged<Word> staged = stage_list(src, true, false);  // the upper bounds in d_args_
  const SortBits bits = query_sort_bits_of(staged.lo, staged.hi, n);
  RangeLayout layout;
  if (opt_.query_tile == 0) {
    // The operations kernel's two passes: sizes and offsets by slot, the pairs contiguous.
    ms += two_pass_ranges(n, bits, &layout.pairs);
  } else {
    for (auto& d : d_hi_slot_) d.reserve_discard(n, "btree range bounds");
    stage_hi_slots_kernel<Word><<<blocks_for(n, 256), 256, 0, stream_>>>(d_args_.data(), d_hi_slot_[0].data(), n);
    GPUDICT_CHECK_LAUNCH("stage_hi_slots_kernel");
    // The list's estimate: each range's overlap with the span of the keys
    // ever inserted times the tree's mean density, summed on the device.
    double expect = 0.0;
    if (h_hdr_[0].size > 0 && key_lo_ <= key_hi_) {
      const double size = static_cast<double>(h_hdr_[0].size);
      const RangeExpect<Word> f{d_keys_[0].data(), d_hi_slot_[0].data(), key_lo_, key_hi_, size,
                                size / (static_cast<double>(key_hi_) - static_cast<double>(key_lo_) + 1.0)};
      auto items = thrust::make_transform_iterator(thrust::counting_iterator<uint64_t>(0), f);
      d_range_expect_.reserve_discard(1, "btree range estimate");
      temp_.run(kExpectSumName, [&](void* p, size_t& bytes) {
        return cub::DeviceReduce::Sum(p, bytes, items, d_range_expect_.data(), static_cast<int64_t>(n), stream_);
      });
      copy_to_host(stream_, &expect, d_range_expect_.data(), sizeof expect);
    }
    ms += run_range_list(n, bits, expect, layout);
  }
  if (layout.pairs != kUnknownPairs) note_range_total(layout, layout.pairs);
  return layout;
}

template <class Word>
void BTree<Word>::note_range_total(const RangeLayout& layout, uint64_t total) {
  // What the next list's choice of kernel corrects its estimate by.
  if (layout.expect >= 0.0) range_ratio_ = (static_cast<double>(total) + 1.0) / (layout.expect + 1.0);
}

template <class Word>
uint64_t BTree<Word>::lay_out_ranges(uint64_t n, const RangeLayout& layout, unsigned long long*& offsets,
                                     double& ms) {
  d_range_slot_size_.reserve_discard(n + 1, "btree range sizes");
  d_range_slot_src_.reserve_discard(n, "btree range sources");
  if (!offsets) {
    d_range_slot_off_.reserve_discard(n + 1, "btree range offsets");
    offsets = d_range_slot_off_.data();
  }
  timer_.start(stream_);
  sizes_by_slot_kernel<Word><<<blocks_for(n, 256), 256, 0, stream_>>>(
      d_value_.data(), d_range_off_.data(), layout.hi_slot, n, d_range_slot_size_.data(), d_range_slot_src_.data(),
      true);
  GPUDICT_CHECK_LAUNCH("sizes_by_slot_kernel");
  temp_.run(kSlotScanName, exclusive_sum_u64(d_range_slot_size_.data(), offsets, n + 1, stream_));
  ms += timer_.stop(stream_);
  unsigned long long total = 0;
  copy_to_host(stream_, &total, offsets + n, sizeof total);
  if (layout.pairs == kUnknownPairs) note_range_total(layout, total);
  return total;
}

template <class Word>
void BTree<Word>::copy_range_output(uint64_t n, uint64_t total, const unsigned long long* offsets, void* keys_out,
                                    int key_bytes, void* values_out, int value_bytes, double& ms) {
  // Lanes per range: the mean range's pairs rounded up to a power of two
  // (short ranges would leave most of a warp idle), at most a warp.
  unsigned group = 1;
  while (group < 32 && group * n < total) group *= 2;
  timer_.start(stream_);
  copy_range_pairs_kernel<Word><<<blocks_for(n * group, 256), 256, 0, stream_>>>(
      d_range_keys_.data(), d_range_values_.data(), d_range_slot_size_.data(), d_range_slot_src_.data(), offsets, n,
      group, keys_out, key_bytes, values_out, value_bytes);
  GPUDICT_CHECK_LAUNCH("copy_range_pairs_kernel");
  ms += timer_.stop(stream_);
}

template <class Word>
uint64_t BTree<Word>::range_device(const DeviceSource& src, unsigned long long* offsets_out, void* keys_out,
                                   int key_bytes, void* values_out, int value_bytes, uint64_t capacity) {
  const uint64_t n = checked_list(src.n, "a range list");
  require_pool();
  if (n == 0) {
    if (offsets_out) GPUDICT_CUDA(cudaMemsetAsync(offsets_out, 0, sizeof(unsigned long long), stream_));
    GPUDICT_CUDA(cudaStreamSynchronize(stream_));
    return 0;
  }
  double ms = 0.0;
  unsigned long long* offsets = offsets_out;
  const uint64_t total = lay_out_ranges(n, run_source_ranges(src, ms), offsets, ms);
  if (total > 0 && total <= capacity && (keys_out || values_out))
    copy_range_output(n, total, offsets, keys_out, key_bytes, values_out, value_bytes, ms);
  add_time(ms);
  GPUDICT_CUDA(cudaStreamSynchronize(stream_));
  return total;
}

template <class Word>
MixedPairs<Word> BTree<Word>::mixed_ranges(const DeviceSource& src, const MixedOutputs& out) {
  const uint64_t n = src.n;
  double ms = 0.0;
  // The one-thread-per-range kernel writes the outputs by array position itself.
  range_slot_out_ = {out.counts, out.offsets};
  RangeLayout layout;
  try {
    layout = run_source_ranges(src, ms);
  } catch (...) {
    range_slot_out_ = {};
    throw;
  }
  range_slot_out_ = {};
  if (layout.pairs != kUnknownPairs) {
    // No holes: the pairs stay where the list put them (a mixed call's
    // ranges may lie in any order), each range's size and start by array
    // position into out, unless the kernel did.
    if ((out.counts || out.offsets) && !layout.by_slot_written) {
      timer_.start(stream_);
      sizes_by_slot_kernel<Word><<<blocks_for(n, 256), 256, 0, stream_>>>(
          d_value_.data(), d_range_off_.data(), layout.hi_slot, n, out.counts, out.offsets, false);
      GPUDICT_CHECK_LAUNCH("sizes_by_slot_kernel");
      ms += timer_.stop(stream_);
    }
    add_time(ms);
    GPUDICT_CUDA(cudaStreamSynchronize(stream_));
    return {d_range_keys_.data(), d_range_values_.data(), layout.pairs};
  }
  unsigned long long* offsets = nullptr;
  const uint64_t total = lay_out_ranges(n, layout, offsets, ms);
  if (total > 0) {
    d_mixed_keys_.reserve_discard(total, "btree range results");
    d_mixed_values_.reserve_discard(total, "btree range results");
    copy_range_output(n, total, offsets, d_mixed_keys_.data(), sizeof(Word), d_mixed_values_.data(), sizeof(Word),
                      ms);
  }
  sizes_offsets_out_kernel<<<blocks_for(n, 256), 256, 0, stream_>>>(d_range_slot_size_.data(), offsets, out.counts,
                                                                    out.offsets, n);
  GPUDICT_CHECK_LAUNCH("sizes_offsets_out_kernel");
  add_time(ms);
  GPUDICT_CUDA(cudaStreamSynchronize(stream_));
  return {d_mixed_keys_.data(), d_mixed_values_.data(), total};
}

template class BTree<uint32_t>;
template class BTree<uint64_t>;

}  // namespace gpudict::btree
