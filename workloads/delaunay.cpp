// The Delaunay graph of points in the unit square (graph_gen.hpp), by
// Qhull's 2-d Delaunay triangulation (libqhull_r, linked statically): a
// well-kept, robust geometry library does this better than code of our
// own. Without Qhull at build time, the family is refused with a message.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "core/common/errors.hpp"
#include "workloads/graph_gen.hpp"
#include "workloads/parallel_sort.hpp"

#ifdef GPUDICT_HAVE_QHULL
extern "C" {
#include "libqhull_r/qhull_ra.h"
}
#endif

namespace gpudict {

bool delaunay_available() {
#ifdef GPUDICT_HAVE_QHULL
  return true;
#else
  return false;
#endif
}

std::vector<uint64_t> make_delaunay(uint64_t seed, unsigned scale) {
#ifdef GPUDICT_HAVE_QHULL
  std::vector<double> x, y;
  unit_square_points(seed, scale, x, y);
  const uint64_t n = x.size();
  std::vector<coordT> points(2 * n);
  for (uint64_t i = 0; i < n; ++i) {
    points[2 * i] = x[i];
    points[2 * i + 1] = y[i];
  }
  auto qh_owner = std::make_unique<qhT>();
  qhT* qh = qh_owner.get();
  qh_zero(qh, stderr);
  // d: Delaunay; Qbb: scale the paraboloid; Qc: keep coplanar points; Qz: a
  // point at infinity (cocircular input); Qt: triangulated output.
  char options[] = "qhull d Qbb Qc Qz Qt";
  const int code = qh_new_qhull(qh, 2, static_cast<int>(n), points.data(), False, options, nullptr, stderr);
  std::vector<uint64_t> edges;
  if (code == 0) {
    facetT* facet;
    vertexT *vertex, **vertexp;
    FORALLfacets {
      if (facet->upperdelaunay) continue;
      uint32_t id[3];
      int k = 0;
      FOREACHvertex_(facet->vertices) {
        if (k < 3) id[k] = static_cast<uint32_t>(qh_pointid(qh, vertex->point));
        ++k;
      }
      if (k != 3) continue;
      for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b)
          if (a != b && id[a] < n && id[b] < n) edges.push_back((static_cast<uint64_t>(id[a]) << 32) | id[b]);
    }
  }
  qh_freeqhull(qh, !qh_ALL);
  int curlong = 0, totlong = 0;
  qh_memfreeshort(qh, &curlong, &totlong);
  if (code != 0) throw RuntimeFailure("delaunay graph: Qhull failed (exit code " + std::to_string(code) + ")");
  // Each interior edge lies in two triangles: sorted, once each.
  const uint64_t ids = (uint64_t{1} << scale) - 1;
  parallel_radix_sort(edges, (ids << 32) | ids, [](uint64_t k) { return k; });
  edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
  return edges;
#else
  (void)seed, (void)scale;
  throw InputError("the delaunay graph family needs Qhull: this gpudict was built without libqhull-dev");
#endif
}

}  // namespace gpudict
