// The merge-path split of a diagonal, searched by one warp: for sorted runs
// a[0, na) and b[0, nb) merged so that a[i] precedes b[j] iff a[i] <= b[j]
// (ties to `a`), the number of `a` elements among the first d outputs. The
// predicate p(i) = a[i] <= b[d - 1 - i] holds for i below the split and
// fails from it on; each round the 32 lanes probe 32 evenly spaced i and
// keep the stretch between the last hit and the first miss, so a search over
// 2^21 candidates takes 5 rounds of dependent loads instead of the 21 of a
// binary search (a separate partition kernel of such searches was a
// latency-bound step of every LSM merge).
#pragma once

#include <cstdint>

#include "core/common/warp.cuh"

namespace gpudict {

// Every lane of the warp calls it with the same arguments; all get the split.
template <typename K>
__device__ __forceinline__ uint64_t warp_merge_path_split(const K* a, uint64_t na, const K* b, uint64_t nb,
                                                          uint64_t d) {
  uint64_t lo = d > nb ? d - nb : 0;
  uint64_t hi = d < na ? d : na;
  const unsigned lane = lane_id();
  while (lo < hi) {
    const uint64_t step = (hi - lo + kWarpSize - 1) / kWarpSize;
    const uint64_t i = lo + lane * step;
    const bool valid = i < hi;
    const bool hit = valid && a[i] <= b[d - 1 - i];
    const unsigned c = __popc(__ballot_sync(kFullMask, hit));  // hits are a prefix of the probes
    const uint64_t first_miss = lo + c * step;                  // may pass hi when every probe hit
    lo = c == 0 ? lo : lo + (c - 1) * step + 1;
    hi = first_miss < hi ? first_miss : hi;
  }
  return lo;
}

}  // namespace gpudict
