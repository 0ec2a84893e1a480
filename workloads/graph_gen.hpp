// Generated graphs for workloads' initial contents (docs/workload-format.md,
// "Generated graphs"): families of the datasets of seed 001's Table 5.1,
// made from the workload's seed, the same on any number of host threads.
// An edge (u, v) is the 64-bit key u * 2^32 + v.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

namespace gpudict {

// A random geometric graph (the rgg_n_2_*_s0 family of the DIMACS10
// collection): 2^scale points uniform in the unit square, an edge between
// every two within r = 0.55 sqrt(ln n / n) of each other, in both
// directions; vertex u is the u-th point. Edges sorted by key (u, then v);
// no self-loops, none twice. The expected degree is about pi 0.55^2 ln n
// less the square's border: 13.1 at 2^20 in Table 5.1.
// The last graph made is kept (the workload's summary and its source ask
// for the same one).
std::shared_ptr<const std::vector<uint64_t>> rgg_edges(uint64_t seed, unsigned scale);

// The radius rgg_edges uses for 2^scale points, and the points themselves
// (point i at (x[i], y[i])), for checks and tools.
double rgg_radius(unsigned scale);
void rgg_points(uint64_t seed, unsigned scale, std::vector<double>& x, std::vector<double>& y);

}  // namespace gpudict
