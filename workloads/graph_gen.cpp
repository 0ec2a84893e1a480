// Generated graphs (graph_gen.hpp; the Delaunay triangulation is in
// delaunay.cpp). The random geometric graph: points on a grid of cells no
// smaller than r, so a point's neighbours lie in its own and the 8
// surrounding cells; each point's edges counted, then written at its
// offset, both passes over the same pieces of points on the host's threads.
// The road graph: Kruskal over the Delaunay edges by length, then the
// shortest of the rest. graph_edges keeps the last graph made.
#include "workloads/graph_gen.hpp"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <utility>

#include "workloads/parallel.hpp"
#include "workloads/rng.hpp"

namespace gpudict {

namespace {

constexpr uint64_t kStreamRgg = 0x7667;  // the points' random stream (apart from the generator's streams)

}  // namespace

std::vector<uint64_t> rgg_edges(uint64_t seed, unsigned scale) {
  const uint64_t n = uint64_t{1} << scale;
  const double r = rgg_radius(scale), r2 = r * r;
  std::vector<double> x, y;
  unit_square_points(seed, scale, x, y);
  // Cells of side 1 / g >= r; the points of cell c are order[start[c], start[c + 1]), by index.
  const uint64_t g = std::max<uint64_t>(1, static_cast<uint64_t>(std::floor(1.0 / r)));
  auto cell_of = [&](uint64_t i) {
    const uint64_t cx = std::min(g - 1, static_cast<uint64_t>(x[i] * static_cast<double>(g)));
    const uint64_t cy = std::min(g - 1, static_cast<uint64_t>(y[i] * static_cast<double>(g)));
    return cy * g + cx;
  };
  std::vector<uint64_t> start(g * g + 1, 0);
  std::vector<uint32_t> cell(n);
  for (uint64_t i = 0; i < n; ++i) {
    cell[i] = static_cast<uint32_t>(cell_of(i));
    ++start[cell[i] + 1];
  }
  for (uint64_t c = 0; c < g * g; ++c) start[c + 1] += start[c];
  std::vector<uint32_t> order(n);
  {
    std::vector<uint64_t> at(start.begin(), start.end() - 1);
    for (uint64_t i = 0; i < n; ++i) order[at[cell[i]]++] = static_cast<uint32_t>(i);
  }
  // near = every j != i within r of point i, ascending.
  auto visit = [&](uint64_t i, std::vector<uint32_t>& near) {
    near.clear();
    const int64_t cx = static_cast<int64_t>(cell[i] % g), cy = static_cast<int64_t>(cell[i] / g);
    for (int64_t dy = -1; dy <= 1; ++dy)
      for (int64_t dx = -1; dx <= 1; ++dx) {
        const int64_t nx = cx + dx, ny = cy + dy;
        if (nx < 0 || ny < 0 || nx >= static_cast<int64_t>(g) || ny >= static_cast<int64_t>(g)) continue;
        const uint64_t c = static_cast<uint64_t>(ny) * g + static_cast<uint64_t>(nx);
        for (uint64_t k = start[c]; k < start[c + 1]; ++k) {
          const uint32_t j = order[k];
          if (j == i) continue;
          const double ex = x[i] - x[j], ey = y[i] - y[j];
          if (ex * ex + ey * ey < r2) near.push_back(j);
        }
      }
    std::sort(near.begin(), near.end());
  };
  const uint64_t pieces = parallel_pieces(n, uint64_t{1} << 12);
  std::vector<uint64_t> degree(n);
  parallel_each(pieces, [&](uint64_t p) {
    std::vector<uint32_t> near;
    for (uint64_t i = piece_begin(n, pieces, p); i < piece_begin(n, pieces, p + 1); ++i) {
      visit(i, near);
      degree[i] = near.size();
    }
  });
  std::vector<uint64_t> offset(n + 1, 0);
  for (uint64_t i = 0; i < n; ++i) offset[i + 1] = offset[i] + degree[i];
  std::vector<uint64_t> edges(offset[n]);
  parallel_each(pieces, [&](uint64_t p) {
    std::vector<uint32_t> near;
    for (uint64_t i = piece_begin(n, pieces, p); i < piece_begin(n, pieces, p + 1); ++i) {
      visit(i, near);
      for (size_t k = 0; k < near.size(); ++k) edges[offset[i] + k] = (i << 32) | near[k];
    }
  });
  return edges;
}

void unit_square_points(uint64_t seed, unsigned scale, std::vector<double>& x, std::vector<double>& y) {
  const uint64_t n = uint64_t{1} << scale;
  const uint64_t stream = Rng::stream_seed(seed, kStreamRgg);
  x.resize(n);
  y.resize(n);
  parallel_for(n, uint64_t{1} << 16, [&](uint64_t lo, uint64_t hi) {
    for (uint64_t i = lo; i < hi; ++i) {
      Rng rng = Rng::at(stream, i);
      x[i] = rng.uniform01();
      y[i] = rng.uniform01();
    }
  });
}

double rgg_radius(unsigned scale) {
  const double n = std::ldexp(1.0, static_cast<int>(scale));
  return scale == 0 ? 1.0 : 0.55 * std::sqrt(std::log(n) / n);
}

std::shared_ptr<const std::vector<uint64_t>> graph_edges(GraphFamily family, uint64_t seed, unsigned scale) {
  static std::mutex mutex;
  static GraphFamily last_family = GraphFamily::Rgg;
  static uint64_t last_seed = 0;
  static unsigned last_scale = ~0u;
  static std::shared_ptr<const std::vector<uint64_t>> last;
  std::lock_guard<std::mutex> lock(mutex);
  if (!last || last_family != family || last_seed != seed || last_scale != scale) {
    last.reset();  // the old graph's memory goes before the new one is made
    last = std::make_shared<const std::vector<uint64_t>>(family == GraphFamily::Rgg        ? rgg_edges(seed, scale)
                                                         : family == GraphFamily::Delaunay ? make_delaunay(seed, scale)
                                                                                           : make_road(seed, scale));
    last_family = family;
    last_seed = seed;
    last_scale = scale;
  }
  return last;
}

std::vector<uint64_t> make_road(uint64_t seed, unsigned scale) {
  const std::vector<uint64_t> tri = make_delaunay(seed, scale);
  std::vector<double> x, y;
  unit_square_points(seed, scale, x, y);
  const uint64_t n = x.size();
  // The undirected edges (u < v), shortest first (ties by key: deterministic).
  std::vector<std::pair<double, uint64_t>> by_length;
  by_length.reserve(tri.size() / 2);
  for (uint64_t k : tri) {
    const uint64_t u = k >> 32, v = k & 0xFFFFFFFFull;
    if (u < v) by_length.push_back({(x[u] - x[v]) * (x[u] - x[v]) + (y[u] - y[v]) * (y[u] - y[v]), k});
  }
  std::sort(by_length.begin(), by_length.end());
  // Kruskal: an edge joining two components is a tree edge.
  std::vector<uint32_t> parent(n);
  for (uint64_t i = 0; i < n; ++i) parent[i] = static_cast<uint32_t>(i);
  auto root = [&](uint32_t a) {
    while (parent[a] != a) a = parent[a] = parent[parent[a]];
    return a;
  };
  std::vector<char> chosen(by_length.size(), 0);
  uint64_t kept = 0;
  for (size_t i = 0; i < by_length.size(); ++i) {
    const uint64_t k = by_length[i].second;
    const uint32_t a = root(static_cast<uint32_t>(k >> 32)), b = root(static_cast<uint32_t>(k & 0xFFFFFFFFull));
    if (a == b) continue;
    parent[a] = b;
    chosen[i] = 1;
    ++kept;
  }
  // Then the shortest of the rest, up to 1.2 n edges (average degree 2.4).
  const uint64_t want = n + n / 5;
  for (size_t i = 0; i < by_length.size() && kept < want; ++i)
    if (!chosen[i]) {
      chosen[i] = 1;
      ++kept;
    }
  std::vector<uint64_t> edges;
  edges.reserve(2 * kept);
  for (size_t i = 0; i < by_length.size(); ++i)
    if (chosen[i]) {
      const uint64_t k = by_length[i].second;
      edges.push_back(k);
      edges.push_back((k << 32) | (k >> 32));
    }
  std::sort(edges.begin(), edges.end());
  return edges;
}

}  // namespace gpudict
