// The host threads the engine's parallel loops use (generation, the
// reference, the verifier), and a static parallel for. Results never depend on the number of threads:
// every loop body computes each index from the index alone.
#pragma once

#include <cstdint>
#include <functional>

namespace gpudict {

// Threads for host loops: set_host_threads(n) (the command line's
// --threads), else GPUDICT_THREADS, else the machine's hardware threads.
unsigned host_threads();
// 0 restores the default.
void set_host_threads(unsigned n);

// Calls body(begin, end) on disjoint pieces covering [0, n), on up to
// host_threads() threads (fewer for small n: at least `grain` indices a
// piece). Returns when every piece is done; rethrows the first exception.
void parallel_for(uint64_t n, uint64_t grain, const std::function<void(uint64_t begin, uint64_t end)>& body);

// For work in two passes over the same pieces (count, then write): the
// number of pieces n items split into, at least `grain` items each and at
// most host_threads(); piece p is [piece_begin(n, pieces, p),
// piece_begin(n, pieces, p + 1)).
uint64_t parallel_pieces(uint64_t n, uint64_t grain);
inline uint64_t piece_begin(uint64_t n, uint64_t pieces, uint64_t p) {
  return static_cast<uint64_t>(static_cast<unsigned __int128>(n) * p / pieces);
}
// Calls body(p) for every p < pieces, on up to `pieces` threads.
void parallel_each(uint64_t pieces, const std::function<void(uint64_t p)>& body);

}  // namespace gpudict
