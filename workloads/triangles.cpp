// count_triangles (triangles.hpp): the undirected edges sorted and
// deduplicated, each oriented from its endpoint of lower (degree, id) to the
// higher, and every oriented edge (x, y) intersecting the sorted out-lists
// of x and y. Orienting by degree bounds every out-list by sqrt(2m), so a
// hub's list is never merged against each of its neighbours'. A triangle
// x -> y -> z (with x -> z) is found once: at its edge (x, y).
#include "workloads/triangles.hpp"

#include <algorithm>
#include <atomic>

#include "workloads/parallel.hpp"
#include "workloads/parallel_sort.hpp"

namespace gpudict {

namespace {

constexpr uint64_t kGrain = uint64_t{1} << 14;

// Sorts 64-bit words on the host's threads.
void sort_words(std::vector<uint64_t>& v) {
  const auto key_of = [](uint64_t k) { return k; };
  const auto [varying, ascending] = varying_bits(v, key_of);
  if (!ascending) parallel_radix_sort(v, varying, key_of);
}

uint32_t hi32(uint64_t k) { return static_cast<uint32_t>(k >> 32); }
uint32_t lo32(uint64_t k) { return static_cast<uint32_t>(k); }

}  // namespace

uint64_t count_triangles(std::vector<uint64_t> e) {
  // Undirected edges {min, max} without self-loops (a self-loop becomes the
  // maximum word, which no real edge is: its ends would be equal).
  constexpr uint64_t kLoop = ~uint64_t{0};
  parallel_for(e.size(), kGrain, [&](uint64_t lo, uint64_t hi) {
    for (uint64_t i = lo; i < hi; ++i) {
      const uint32_t u = hi32(e[i]), v = lo32(e[i]);
      e[i] = u == v ? kLoop : (static_cast<uint64_t>(std::min(u, v)) << 32) | std::max(u, v);
    }
  });
  sort_words(e);
  e.erase(std::unique(e.begin(), e.end()), e.end());
  if (!e.empty() && e.back() == kLoop) e.pop_back();
  const uint64_t m = e.size();
  if (m < 3) return 0;

  // The vertices (sorted ids, compacted to indices) and their degrees: the
  // run lengths of the sorted endpoint list.
  std::vector<uint64_t> ends(2 * m);
  parallel_for(m, kGrain, [&](uint64_t lo, uint64_t hi) {
    for (uint64_t i = lo; i < hi; ++i) {
      ends[2 * i] = hi32(e[i]);
      ends[2 * i + 1] = lo32(e[i]);
    }
  });
  sort_words(ends);
  std::vector<uint32_t> ids, degree;
  for (uint64_t i = 0; i < ends.size();) {
    uint64_t j = i + 1;
    while (j < ends.size() && ends[j] == ends[i]) ++j;
    ids.push_back(static_cast<uint32_t>(ends[i]));
    degree.push_back(static_cast<uint32_t>(j - i));
    i = j;
  }
  ends = std::vector<uint64_t>();
  auto index_of = [&](uint32_t id) {
    return static_cast<uint32_t>(std::lower_bound(ids.begin(), ids.end(), id) - ids.begin());
  };

  // Each edge from its endpoint of lower (degree, index) to the higher, as
  // (from << 32 | to) over indices; sorted, the out-lists in CSR form.
  parallel_for(m, kGrain, [&](uint64_t lo, uint64_t hi) {
    for (uint64_t i = lo; i < hi; ++i) {
      uint32_t a = index_of(hi32(e[i])), b = index_of(lo32(e[i]));
      const bool a_first = degree[a] < degree[b] || (degree[a] == degree[b] && a < b);
      if (!a_first) std::swap(a, b);
      e[i] = (static_cast<uint64_t>(a) << 32) | b;
    }
  });
  sort_words(e);
  const uint64_t nv = ids.size();
  std::vector<uint64_t> first(nv + 1, 0);
  for (uint64_t i = 0; i < m; ++i) ++first[hi32(e[i]) + 1];
  for (uint64_t x = 0; x < nv; ++x) first[x + 1] += first[x];
  std::vector<uint32_t> out(m);
  parallel_for(m, kGrain, [&](uint64_t lo, uint64_t hi) {
    for (uint64_t i = lo; i < hi; ++i) out[i] = lo32(e[i]);
  });

  // For every oriented edge (x, y): |out(x) ∩ out(y)|, by merging two sorted lists.
  std::atomic<uint64_t> total{0};
  parallel_for(m, kGrain, [&](uint64_t lo, uint64_t hi) {
    uint64_t sum = 0;
    for (uint64_t i = lo; i < hi; ++i) {
      const uint32_t x = hi32(e[i]), y = lo32(e[i]);
      uint64_t p = first[x], pe = first[x + 1], q = first[y], qe = first[y + 1];
      while (p < pe && q < qe) {
        if (out[p] < out[q]) {
          ++p;
        } else if (out[q] < out[p]) {
          ++q;
        } else {
          ++sum;
          ++p;
          ++q;
        }
      }
    }
    total += sum;
  });
  return total.load();
}

std::vector<uint32_t> deleted_vertices(const Batch& batch) {
  std::vector<uint32_t> v;
  for (size_t i = 0; i < batch.size(); ++i)
    if (batch.types[i] == OpType::VertexDelete) v.push_back(hi32(batch.keys[i]));
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

bool touches_vertex(const std::vector<uint32_t>& vertices, uint64_t k) {
  return std::binary_search(vertices.begin(), vertices.end(), hi32(k)) ||
         std::binary_search(vertices.begin(), vertices.end(), lo32(k));
}

}  // namespace gpudict
