// Stable merge of two sorted runs in level format (keys, values, status):
// on equal keys every element of `newer` precedes every element of `older`,
// and each run keeps its own order, so the building invariants (III-D: a
// key's records adjacent, most recent first) carry over to the output.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace gpudict::lsm {

template <class K, class V>
struct RunIn {
  const K* keys;
  const V* values;
  const uint8_t* status;
  uint64_t n;
};

template <class K, class V>
struct RunOut {
  K* keys;
  V* values;
  uint8_t* status;
  K* fences;  // level-1 fences of the output (fences[o / 32] = keys[o]), or null
  // Adds the output's local stale records (Level::local_stale: a key equal
  // to its predecessor's, or a tombstone), or null.
  unsigned long long* stale;
};

// out[0, newer.n + older.n) = the stable merge (one kernel; nothing is
// allocated).
template <class K, class V>
void merge_runs(const RunIn<K, V>& newer, const RunIn<K, V>& older, const RunOut<K, V>& out, cudaStream_t stream);

}  // namespace gpudict::lsm
