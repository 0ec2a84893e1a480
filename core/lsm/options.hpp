// The LSM's options as a typed struct: what the library's lsm_map and the
// command line's flags both configure (the command line parses its flags
// into this struct; core/ holds no command-line code).
#pragma once

#include <cstdint>

namespace gpudict::lsm {

// The default of --cleanup-stale-fraction: clean up once half the stored
// elements may be stale.
inline constexpr double kDefaultStaleFraction = 0.5;
// The largest batch size b (a power of two).
inline constexpr uint64_t kMaxBatchSize = 1ull << 30;

struct Options {
  uint64_t batch_size = 1ull << 20;
  uint64_t cleanup_every = 0;   // 0: never
  double stale_fraction = kDefaultStaleFraction;  // 0: never
  bool lookup_filter = true;    // lookups build and probe per-level filters (level_filter.cuh)
  bool exact_stale = false;     // count stale records exactly (a presence lookup per update batch)
};

// Throws InputError naming the field ("lsm options: batch_size ...") when a
// value is outside its range.
void validate(const Options& o);

}  // namespace gpudict::lsm
