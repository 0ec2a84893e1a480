// Stable merge of two sorted runs in level format (keys, values, status):
// on equal keys every element of `newer` precedes every element of `older`,
// and each run keeps its own order, so the building invariants (III-D: a
// key's records adjacent, most recent first) carry over to the output.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace gpudict::lsm {

struct RunIn {
  const uint32_t* keys;
  const uint32_t* values;
  const uint8_t* status;
  uint64_t n;
};

struct RunOut {
  uint32_t* keys;
  uint32_t* values;
  uint8_t* status;
  uint32_t* fences;  // level-1 fences of the output (fences[o / 32] = keys[o]), or null
  // Adds the output's local stale records (Level::local_stale: a key equal
  // to its predecessor's, or a tombstone), or null.
  unsigned long long* stale;
};

// out[0, newer.n + older.n) = the stable merge (one kernel; nothing is
// allocated).
void merge_runs(const RunIn& newer, const RunIn& older, const RunOut& out, cudaStream_t stream);

}  // namespace gpudict::lsm
