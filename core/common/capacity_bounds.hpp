// What a container may be asked to hold and answer over its life: the
// input of its static device_bytes_needed(), which bounds the device memory
// it will allocate, so a program can tell before it starts whether a
// workload fits the device.
#pragma once

#include <cstdint>

namespace gpudict {

struct capacity_bounds {
  std::uint64_t max_resident = 0;   // keys present at once (at most the key domain)
  std::uint64_t max_inserted = 0;   // pairs ever inserted, built included: what a structure that keeps
                                    // every insert (a log-structured merge tree's stale pairs, a
                                    // multimap's pairs) may store
  std::uint64_t max_batch = 0;      // operations in one bulk call
  std::uint64_t max_queries = 0;    // queries in one bulk call
  std::uint64_t max_snapshots = 0;  // snapshots alive at once
};

}  // namespace gpudict
