// CUB's onesweep radix sort with a chosen tile (threads x items per thread)
// for 32-bit keys and 32-bit values, for tests/bench/sort_tiles.cu. The
// question it answers: CUB's SM90 tuning (384 x 23 pairs per tile) gives a
// 2^20-pair list only 119 tiles, fewer than an H100's or H200's 132
// multiprocessors;
// would smaller tiles (more in flight) sort the structures' per-batch lists
// faster? Measured: faster below 2^19 pairs, but from 2^19 on the stock
// tile is the fastest (each pass waits on a longer chain of tile prefixes),
// so the structures keep CUB's default.
// Uses cub::DispatchRadixSort with a policy hub of our own: a customisation
// point of CUB's dispatch layer, not of its cub::DeviceRadixSort front end.
#pragma once

#include <cub/device/device_radix_sort.cuh>

#include <cstdint>

namespace gpudict {

template <int kThreads, int kItems, typename OffsetT>
struct SortTilePolicyHub {
  using Stock = typename cub::detail::radix::policy_hub<uint32_t, uint32_t, OffsetT>::Policy900;
  struct Policy : cub::ChainedPolicy<900, Policy, Policy> {
    static constexpr bool ONESWEEP = true;
    static constexpr int ONESWEEP_RADIX_BITS = 8;
    using HistogramPolicy = typename Stock::HistogramPolicy;
    using ExclusiveSumPolicy = typename Stock::ExclusiveSumPolicy;
    using OnesweepPolicy =
        cub::AgentRadixSortOnesweepPolicy<kThreads, kItems, uint32_t, 1, cub::RADIX_RANK_MATCH_EARLY_COUNTS_ANY,
                                          cub::BLOCK_SCAN_RAKING_MEMOIZE, cub::RADIX_SORT_STORE_DIRECT,
                                          ONESWEEP_RADIX_BITS>;
    // Never run on SM90 (onesweep), but the dispatch names them.
    using ScanPolicy = typename Stock::ScanPolicy;
    using DownsweepPolicy = typename Stock::DownsweepPolicy;
    using AltDownsweepPolicy = typename Stock::AltDownsweepPolicy;
    using UpsweepPolicy = typename Stock::UpsweepPolicy;
    using AltUpsweepPolicy = typename Stock::AltUpsweepPolicy;
    using SingleTilePolicy = typename Stock::SingleTilePolicy;
    using SegmentedPolicy = typename Stock::SegmentedPolicy;
    using AltSegmentedPolicy = typename Stock::AltSegmentedPolicy;
  };
  using MaxPolicy = Policy;
};

// Stable ascending sort of (key, value) pairs on key bits [begin_bit,
// end_bit) with the given tile; the DoubleBuffers are flipped as CUB does.
// d_temp == nullptr: sets temp_bytes only.
template <int kThreads, int kItems>
cudaError_t sort_pairs_tiled(void* d_temp, size_t& temp_bytes, cub::DoubleBuffer<uint32_t>& keys,
                             cub::DoubleBuffer<uint32_t>& values, uint32_t n, int begin_bit, int end_bit,
                             cudaStream_t stream) {
  using Hub = SortTilePolicyHub<kThreads, kItems, uint32_t>;
  using Dispatch = cub::DispatchRadixSort<cub::SortOrder::Ascending, uint32_t, uint32_t, uint32_t,
                                          cub::detail::identity_decomposer_t, Hub>;
  return Dispatch::Dispatch(d_temp, temp_bytes, keys, values, n, begin_bit, end_bit, true, stream);
}

}  // namespace gpudict
