// Generated graphs for workloads' initial contents (docs/workload-format.md,
// "Generated graphs"): families of the datasets of Table 5.1 of Awad's dissertation,
// made from the workload's seed, the same on any number of host threads.
// An edge (u, v) is the 64-bit key u * 2^32 + v.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

namespace gpudict {

enum class GraphFamily : uint8_t { Rgg = 0, Delaunay, Road };
inline constexpr uint32_t kMaxGraphScale = 26;

// The edges of a generated graph of 2^scale vertices, sorted by key, none
// twice: rgg_edges or the Delaunay graph. The last graph made is kept (the
// workload's summary and its source ask for the same one).
std::shared_ptr<const std::vector<uint64_t>> graph_edges(GraphFamily family, uint64_t seed, unsigned scale);

// A random geometric graph (the rgg_n_2_*_s0 family of the DIMACS10
// collection): 2^scale points uniform in the unit square, an edge between
// every two within r = 0.55 sqrt(ln n / n) of each other, in both
// directions; vertex u is the u-th point. Edges sorted by key (u, then v);
// no self-loops, none twice. The expected degree is about pi 0.55^2 ln n
// less the square's border: 13.1 at 2^20 in Table 5.1.
std::vector<uint64_t> rgg_edges(uint64_t seed, unsigned scale);

// The radius rgg_edges uses for 2^scale points.
double rgg_radius(unsigned scale);

// The Delaunay graph (the delaunay_n* family of DIMACS10): the edges of the
// Delaunay triangulation of 2^scale points uniform in the unit square, in
// both directions (Qhull, delaunay.cpp; average degree just under 6).
// Throws InputError when gpudict was built without Qhull.
std::vector<uint64_t> make_delaunay(uint64_t seed, unsigned scale);
bool delaunay_available();

// A road-like graph (the *_osm and road_usa families: planar, connected,
// average degree about 2.4): the Euclidean minimum spanning tree of the
// Delaunay graph (the shortest edges that connect every point, n - 1 of
// them), plus the shortest other Delaunay edges until there are 1.2 n, in
// both directions. Needs Qhull, as make_delaunay.
std::vector<uint64_t> make_road(uint64_t seed, unsigned scale);

// The points both families place: point i at (x[i], y[i]), uniform in the
// unit square, from the seed.
void unit_square_points(uint64_t seed, unsigned scale, std::vector<double>& x, std::vector<double>& y);

}  // namespace gpudict
