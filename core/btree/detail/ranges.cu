// Phased range lists in one pass over the sorted list, two ways:
//
// - one thread per range (--query-tile 1, the default, while the list's
//   ranges expect at most kPointRangeMaxMean pairs each; kernels_query.cu,
//   point_range_kernel): each thread counts its range, walking its leaves,
//   a block scan and one atomicAdd per block place the block's ranges
//   contiguously, and each thread walks again, its warp storing the pairs
//   in coalesced runs. The output has no holes.
// - the lock-step query kernel (--query-tile 4 or 8, and longer ranges with
//   1, in tiles of 4; query_kernel.cuh, "Range output"): the kernel counts
//   and copies at once, tile t storing its ranges' pairs, whole 32-pair
//   lines, in a region of the output of its own, and each range's offset
//   when it starts.
//
// Both size the output from an estimate (range_device, device_ranges.cu): each range's
// overlap with the span of the keys ever inserted times the tree's mean
// density, x 1.25, + 4 pairs per range, times a scale learned from the
// lists before (learn_range_scale), at most half the free device memory;
// the lock-step regions share it equally by tile (plus a line each). When
// the output outgrows it (a block's ranges past the room; a tile's stream
// past its region), every range was counted anyway and the list runs once
// more with exact room (the stats' range-reruns).
#include <algorithm>
#include <cstdint>

#include "core/btree/detail/btree_impl.cuh"
#include "core/btree/detail/launch.cuh"
#include "core/btree/detail/query_kernel.cuh"
#include "core/common/cuda_check.hpp"

namespace gpudict::btree {

namespace {

constexpr const char* kTileScanName = "cub::DeviceScan::ExclusiveSum (btree range streams)";
constexpr const char* kRangeSortName = "cub::DeviceRadixSort::SortPairs (btree range list)";

}  // namespace

// A range list's sort carries the (hi, slot) words (a graph cache of its own).
template <class Word>
void BTree<Word>::prepare_range_sort(uint64_t n, SortBits bits) {
  prepare_keyed_sort(range_graph_, kRangeSortName, d_hi_slot_[0].data(), d_hi_slot_[1].data(), n, bits);
}

template <class Word>
OpsRef<Word> BTree<Word>::sort_range_list(uint64_t n, SortBits bits, bool& sorted) {
  OpsRef<Word> ops = list_ref(n, false, false, kRange);
  sorted = sort_staged(ops, range_graph_, kRangeSortName, d_hi_slot_[0].data(), d_hi_slot_[1].data(), n, bits);
  ops.hi_slot = d_hi_slot_[sorted ? 1 : 0].data();
  return ops;
}

template <class Word>
void BTree<Word>::reserve_range_pairs(uint64_t pairs, OpsRef<Word>* list) {
  d_range_keys_.reserve_discard(pairs, "btree range results");
  d_range_values_.reserve_discard(pairs, "btree range results");
  if (list != nullptr) {  // a list made before: its output pointers may have moved
    list->range_keys = d_range_keys_.data();
    list->range_values = d_range_values_.data();
  }
}

template <class Word>
OpsRef<Word> BTree<Word>::start_range_list(uint64_t n, SortBits bits, RangeLayout& layout) {
  timer_.start(stream_);
  trace_.mark(stream_, "start");
  bool sorted = false;
  OpsRef<Word> list = sort_range_list(n, bits, sorted);
  trace_.mark(stream_, "sort");
  // Sorted: sizes and offsets by position, slots in hi_slot; else position = slot.
  layout.hi_slot = sorted ? list.hi_slot : nullptr;
  return list;
}

template <class Word>
double BTree<Word>::range_output_room(uint64_t n, double expect, double scale) {
  const double room = (expect * 1.25 + 4.0 * static_cast<double>(n)) * scale;
  // Never more than half of the free device memory (2 arrays of a word per
  // pair): a wild estimate costs a second run, not an allocation failure.
  size_t free_bytes = 0, total_bytes = 0;
  GPUDICT_CUDA(cudaMemGetInfo(&free_bytes, &total_bytes));
  return std::min(room, 0.5 * static_cast<double>(free_bytes) / (2.0 * sizeof(Word)));
}

template <class Word>
double BTree<Word>::run_range_list(uint64_t n, SortBits bits, double expect, RangeLayout& layout) {
  layout.expect = expect;
  // One thread per range while ranges are short: two walks of a long range
  // by one thread cost more than a tile streaming it (docs/btree.md, "Ranges,
  // one thread each"). The estimate is corrected by how far off it was for
  // the last range list (skewed keys: many times too small).
  if (opt_.query_tile == 1 && expect * range_ratio_ <= kPointRangeMaxMean * static_cast<double>(n)) {
    ++point_range_lists_;
    return run_point_ranges(n, bits, expect, layout);
  }
  ++tile_range_lists_;
  return run_lockstep_ranges(n, bits, expect, layout);
}

template <class Word>
void BTree<Word>::learn_range_scale(double& scale, double used, double given) {
  // The scale: 1.25 x the one at which this list's output would just have
  // fit, or, when that is less, the last scale decayed by a quarter. So a
  // workload whose output is uneven (skewed keys, few ranges of different
  // widths) settles where its lists fit, instead of running every other
  // list twice.
  const double needed = scale * used / given;
  scale = std::clamp(used > given ? 1.25 * needed : std::max(1.25 * needed, 0.75 * scale), 1.0, 16.0);
}

template <class Word>
double BTree<Word>::run_point_ranges(uint64_t n, SortBits bits, double expect, RangeLayout& layout) {
  prepare_range_sort(n, bits);
  const uint64_t room = static_cast<uint64_t>(range_output_room(n, expect, point_range_scale_)) + 1;
  reserve_range_pairs(room);
  // The output cursor (concurrent batches use it too, never at the same time).
  unsigned long long* cursor = d_scalars_.data() + kRangeCursor;
  GPUDICT_CUDA(cudaMemsetAsync(cursor, 0, sizeof(unsigned long long), stream_));

  OpsRef<Word> list = start_range_list(n, bits, layout);  // output pointers: list_ref's, reserved above
  list.slot_sizes = range_slot_out_.sizes;
  list.slot_offsets = range_slot_out_.offsets;
  layout.by_slot_written = list.slot_sizes || list.slot_offsets;
  launch_point_ranges(ref(), list, cursor, room, stream_);
  trace_.mark(stream_, "ranges");
  double ms = timer_.stop(stream_);
  copy_to_host(stream_, h_u64_.data(), cursor, sizeof(unsigned long long));
  const uint64_t total = h_u64_[0];
  sync_header();
  if (total > room) {
    // Some blocks' pairs did not fit and were not stored (all were
    // counted): again with room for the total.
    ++range_reruns_;
    reserve_range_pairs(total, &list);
    GPUDICT_CUDA(cudaMemsetAsync(cursor, 0, sizeof(unsigned long long), stream_));
    timer_.start(stream_);
    trace_.mark(stream_, "(rerun)");
    launch_point_ranges(ref(), list, cursor, total, stream_);
    trace_.mark(stream_, "ranges");
    ms += timer_.stop(stream_);
    sync_header();
  }
  trace_.flush("btree point ranges");
  layout.pairs = total;
  learn_range_scale(point_range_scale_, static_cast<double>(total), static_cast<double>(room));
  return ms;
}

template <class Word>
double BTree<Word>::run_lockstep_ranges(uint64_t n, SortBits bits, double expect, RangeLayout& layout) {
  const QueryGrid g = query_grid<Word>(range_tile(), kRange, n);
  d_tile_lines_.reserve_discard(g.tiles + 1, "btree range streams");
  d_tile_base_.reserve_discard(g.tiles + 1, "btree range streams");
  temp_.prepare(kTileScanName, exclusive_sum_u64(d_tile_lines_.data(), d_tile_base_.data(), g.tiles + 1, stream_));
  prepare_range_sort(n, bits);  // after the scan's sizing: its graph keys on the CUB buffer
  const double room = range_output_room(n, expect, range_scale_);
  const uint64_t region = static_cast<uint64_t>(room / static_cast<double>(g.tiles)) / kLineWords + 1;
  reserve_range_pairs(region * g.tiles * kLineWords);
  unsigned long long* longest_d = d_scalars_.data() + kRangeMaxLines;
  GPUDICT_CUDA(cudaMemsetAsync(longest_d, 0, sizeof(unsigned long long), stream_));

  OpsRef<Word> list = start_range_list(n, bits, layout);  // output pointers: list_ref's, reserved above
  list.region_lines = region;
  list.tile_lines = d_tile_lines_.data();
  list.max_tile_lines = longest_d;
  launch_queries(range_tile(), ref(), list, stream_);
  trace_.mark(stream_, "queries");
  double ms = timer_.stop(stream_);
  layout.region_lines = region;
  copy_to_host(stream_, h_u64_.data(), longest_d, sizeof(unsigned long long));
  const uint64_t longest = h_u64_[0];
  sync_header();

  if (longest > region) {
    // A stream outgrew its region: its lines past it stored nothing, but
    // every tile counted its lines. Again with exact regions (nothing
    // changes the tree in between, so once is enough).
    ++range_reruns_;
    GPUDICT_CUDA(cudaMemsetAsync(d_tile_lines_.data() + g.tiles, 0, sizeof(unsigned long long), stream_));
    timer_.start(stream_);
    trace_.mark(stream_, "(rerun)");
    temp_.run(kTileScanName, exclusive_sum_u64(d_tile_lines_.data(), d_tile_base_.data(), g.tiles + 1, stream_));
    trace_.mark(stream_, "scan");
    ms += timer_.stop(stream_);
    copy_to_host(stream_, h_u64_.data(), d_tile_base_.data() + g.tiles, sizeof(unsigned long long));
    reserve_range_pairs(h_u64_[0] * kLineWords, &list);
    list.region_lines = 0;
    list.tile_base_line = d_tile_base_.data();
    timer_.start(stream_);
    launch_queries(range_tile(), ref(), list, stream_);
    trace_.mark(stream_, "queries");
    ms += timer_.stop(stream_);
    sync_header();
    layout.region_lines = 0;  // contiguous
  }
  layout.used_lines = longest;
  trace_.flush("btree one-pass ranges");
  learn_range_scale(range_scale_, static_cast<double>(longest), static_cast<double>(region));
  return ms;
}

template class BTree<uint32_t>;
template class BTree<uint64_t>;

}  // namespace gpudict::btree
