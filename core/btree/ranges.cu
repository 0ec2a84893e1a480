// Phased ranges through the lock-step query kernel, in one pass
// (query_kernel.cuh, "Range output"): the kernel counts and copies at once,
// each tile appending whole 32-pair lines to output lines it claims; then
// the tiles' streams are placed one after another in list order (a scan of
// their lengths), every claimed line is moved to its place, and each range's
// start in its tile's stream becomes its offset. The output is sized from
// an estimate: each range's overlap with the span of the keys ever inserted
// times the tree's mean density, x 1.25 (and by how much a list that ran
// twice exceeded its estimate, decaying), + 4 pairs per range and a line per
// tile, at most half the free device memory. When a
// list produces more, the kernel has counted them anyway and the list runs
// once more with room for exactly that many (the stats' range-reruns).
#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/btree/btree_impl.cuh"
#include "core/btree/launch.cuh"
#include "core/btree/query_kernel.cuh"
#include "core/common/cuda_check.hpp"
#include "core/common/errors.hpp"
#include "core/common/grid.cuh"

namespace gpudict::btree {

namespace {

constexpr const char* kTileScanName = "cub::DeviceScan::ExclusiveSum (btree range streams)";
constexpr int kMoveBlock = 256;     // 8 warps
constexpr int kLinesPerWarp = 4;    // lines a warp moves, their loads all in flight

// Claimed line s (of `claimed`) -> its place: tile t's stream starts at
// base[t]; the line is its k-th, holding stream pairs [32 k, 32 k + 32)
// (fewer at the stream's end). A warp moves kLinesPerWarp lines, a lane one
// word of each: the lines' words and owners are loaded first, independent
// of each other (one line per warp with the owner -> tile -> data chain
// moved the output at 1.7 TB/s).
__global__ void __launch_bounds__(kMoveBlock)
    move_lines_kernel(const uint32_t* __restrict__ tmp_keys, const uint32_t* __restrict__ tmp_values,
                      const unsigned long long* __restrict__ owner, const unsigned long long* __restrict__ base,
                      const unsigned long long* __restrict__ pairs, uint64_t claimed, uint32_t* __restrict__ keys,
                      uint32_t* __restrict__ values) {
  const uint64_t warp = (static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / kWarpSize;
  const unsigned w = lane_id();
  const uint64_t s0 = warp * kLinesPerWarp;
  uint32_t k[kLinesPerWarp], v[kLinesPerWarp];
  unsigned long long o[kLinesPerWarp];
#pragma unroll
  for (int j = 0; j < kLinesPerWarp; ++j) {
    const uint64_t s = s0 + j;
    if (s < claimed) {
      k[j] = tmp_keys[s * kLineWords + w];
      v[j] = tmp_values[s * kLineWords + w];
      o[j] = owner[s];
    }
  }
#pragma unroll
  for (int j = 0; j < kLinesPerWarp; ++j) {
    if (s0 + j >= claimed) break;
    const uint64_t tile = o[j] >> 32, at = (o[j] & 0xFFFFFFFFull) * kLineWords + w;
    if (at < pairs[tile]) {
      keys[base[tile] + at] = k[j];
      values[base[tile] + at] = v[j];
    }
  }
}

// A range's start in its tile's stream -> its offset in the output (by slot;
// list position p belongs to tile p / per_tile).
__global__ void place_starts_kernel(unsigned long long* start, const uint32_t* perm, const unsigned long long* base,
                                    uint32_t per_tile, uint64_t n) {
  const uint64_t p = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (p < n) start[perm ? perm[p] : p] += base[p / per_tile];
}

}  // namespace

void BTree::reserve_range_lines(uint64_t lines) {
  d_line_owner_.reserve_discard(lines, "btree range output");
  d_range_tmp_keys_.reserve_discard(lines * kLineWords, "btree range output");
  d_range_tmp_values_.reserve_discard(lines * kLineWords, "btree range output");
  d_range_keys_.reserve_discard(lines * kLineWords, "btree range results");
  d_range_values_.reserve_discard(lines * kLineWords, "btree range results");
}

double BTree::run_lockstep_ranges(uint64_t n, SortBits bits) {
  const QueryGrid g = query_grid(opt_.query_tile, kRange, n);
  d_tile_pairs_.reserve_discard(g.tiles + 1, "btree range streams");
  d_tile_base_.reserve_discard(g.tiles + 1, "btree range streams");
  temp_.prepare(kTileScanName, exclusive_sum_u64(d_tile_pairs_.data(), d_tile_base_.data(), g.tiles + 1, stream_));
  prepare_list_sort(n, bits);  // after the scan's sizing: its graph keys on the CUB buffer
  // The estimate (above), from the staged keys and bounds; and each tile's
  // last, partly filled line.
  double expect = 0.0;
  if (h_hdr_[0].size > 0 && key_lo_ <= key_hi_) {
    const double size = static_cast<double>(h_hdr_[0].size);
    const double density = size / (static_cast<double>(key_hi_) - key_lo_ + 1.0);
    for (uint64_t s = 0; s < n; ++s) {
      const uint32_t lo = std::max(h_keys_[s], key_lo_), hi = std::min(h_args_[s], key_hi_);
      if (lo <= hi) expect += std::min(size, (static_cast<double>(hi) - lo + 1.0) * density);
    }
  }
  double room = expect * 1.25 * range_underestimate_ + 4.0 * static_cast<double>(n);
  // Never more than half of the free device memory (4 arrays of 4 bytes per
  // pair, an 8-byte owner per line): a wild estimate costs a second run,
  // not an allocation failure.
  size_t free_bytes = 0, total_bytes = 0;
  GPUDICT_CUDA(cudaMemGetInfo(&free_bytes, &total_bytes));
  room = std::min(room, 0.5 * static_cast<double>(free_bytes) / (16.0 + 8.0 / kLineWords));
  uint64_t lines = static_cast<uint64_t>(room) / kLineWords + g.tiles + 1;
  reserve_range_lines(lines);
  unsigned long long* cursor = d_scalars_.data() + kRangeCursor;

  double ms = 0.0;
  OpsRef list;
  uint64_t claimed = 0;
  bool rerun = false;
  for (bool first = true;; first = false) {
    GPUDICT_CUDA(cudaMemsetAsync(cursor, 0, sizeof(unsigned long long), stream_));
    GPUDICT_CUDA(cudaMemsetAsync(d_tile_pairs_.data() + g.tiles, 0, sizeof(unsigned long long), stream_));
    timer_.start(stream_);
    trace_.mark(stream_, "start");
    if (first) list = sort_list(n, true, false, kRange, bits);
    trace_.mark(stream_, "sort");
    list.range_lines = lines;
    list.line_cursor = cursor;
    list.line_owner = d_line_owner_.data();
    list.tile_pairs = d_tile_pairs_.data();
    list.range_start = d_range_off_.data();
    list.range_keys = d_range_tmp_keys_.data();
    list.range_values = d_range_tmp_values_.data();
    launch_queries(opt_.query_tile, ref(), list, stream_);
    trace_.mark(stream_, "queries");
    ms += timer_.stop(stream_);
    copy_to_host(stream_, h_u64_.data(), cursor, sizeof(unsigned long long));
    claimed = h_u64_[0];
    if (claimed <= lines) break;
    // More pairs than room: the claims past the end stored nothing, but
    // the kernel counted every line. Again, with room for all of them
    // (nothing changes the tree in between, so once is enough).
    if (!first) throw RuntimeFailure("btree: a range list claimed more output lines when run again");
    rerun = true;
    lines = claimed;
    reserve_range_lines(lines);
    ++range_reruns_;
  }
  sync_header();

  timer_.start(stream_);
  trace_.mark(stream_, "(host)");
  temp_.run(kTileScanName, exclusive_sum_u64(d_tile_pairs_.data(), d_tile_base_.data(), g.tiles + 1, stream_));
  trace_.mark(stream_, "scan");
  if (claimed > 0) {
    move_lines_kernel<<<blocks_for((claimed + kLinesPerWarp - 1) / kLinesPerWarp * kWarpSize, kMoveBlock), kMoveBlock, 0,
                        stream_>>>(
        d_range_tmp_keys_.data(), d_range_tmp_values_.data(), d_line_owner_.data(), d_tile_base_.data(),
        d_tile_pairs_.data(), claimed, d_range_keys_.data(), d_range_values_.data());
    GPUDICT_CHECK_LAUNCH("btree move_lines_kernel");
    trace_.mark(stream_, "move");
  }
  place_starts_kernel<<<blocks_for(n, 256), 256, 0, stream_>>>(d_range_off_.data(), list.perm, d_tile_base_.data(),
                                                                g.per_tile, n);
  GPUDICT_CHECK_LAUNCH("btree place_starts_kernel");
  trace_.mark(stream_, "place");
  ms += timer_.stop(stream_);
  trace_.flush("btree one-pass ranges");
  copy_to_host(stream_, h_u64_.data(), d_tile_base_.data() + g.tiles, sizeof(unsigned long long));
  // The next list's estimate is scaled up after a list that ran twice, and
  // the scale decays again while lists fit.
  range_underestimate_ = rerun ? std::clamp(static_cast<double>(h_u64_[0]) / std::max(expect, 1.0), 1.0, 16.0)
                               : std::max(1.0, range_underestimate_ / 2.0);
  return ms;
}

void BTree::collect_ranges(const std::vector<uint32_t>& ops, BatchResults& r) {
  const uint64_t n = ops.size();
  copy_to_host(stream_, h_value_.data(), d_value_.data(), n * sizeof(uint32_t));
  copy_to_host(stream_, h_u64_.data(), d_range_off_.data(), n * sizeof(unsigned long long));
  // Both range paths leave the pairs contiguous in list order: the total
  // is the sum of the sizes.
  uint64_t total = 0;
  for (uint64_t s = 0; s < n; ++s) total += h_value_[s];
  if (total > 0) {
    h_keys_.reserve_discard(total);
    h_args_.reserve_discard(total);
    copy_to_host(stream_, h_keys_.data(), d_range_keys_.data(), total * sizeof(uint32_t));
    copy_to_host(stream_, h_args_.data(), d_range_values_.data(), total * sizeof(uint32_t));
  }
  // The results list ranges in batch order: each range's pairs are moved
  // from its device offset to the running offset here.
  const uint64_t base = r.range_keys.size();
  r.range_keys.resize(base + total);
  r.range_values.resize(base + total);
  uint64_t at = base;
  for (uint64_t s = 0; s < n; ++s) {
    const uint32_t i = ops[s];
    r.key[i] = at;
    r.value[i] = h_value_[s];
    std::copy_n(h_keys_.data() + h_u64_[s], h_value_[s], r.range_keys.begin() + static_cast<std::ptrdiff_t>(at));
    std::copy_n(h_args_.data() + h_u64_[s], h_value_[s], r.range_values.begin() + static_cast<std::ptrdiff_t>(at));
    at += h_value_[s];
  }
}

}  // namespace gpudict::btree
