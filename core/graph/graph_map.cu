// graph_map (graph_map.hpp): the vertex directory over a slab hash routed
// by vertex (SlabHash<u64, u64> with VertexRoutes), and the degree and
// neighbour walks.
#include "core/graph/graph_map.hpp"

#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <string>

#include "core/common/cub_temp.cuh"
#include "core/common/cuda_check.hpp"
#include "core/common/device_buffer.hpp"
#include "core/common/errors.hpp"
#include "core/common/event_timer.hpp"
#include "core/common/grid.cuh"
#include "core/common/stream_copy.hpp"
#include "core/common/stream_follow.hpp"
#include "core/graph/detail/graph_kernels.cuh"  // its kernels: this file only
#include "core/slabhash/detail/slabhash_impl.cuh"

namespace gpudict {

namespace {

slabhash::Options table_options(const graph_options& o) {
  slabhash::Options t;
  t.mode = o.variant == graph::Variant::Map ? slabhash::Mode::Map : slabhash::Mode::Set;
  t.pool_slabs = o.pool_slabs;
  t.growth = o.growth;
  t.grow_ahead = o.growth;
  t.max_pool_bytes = o.max_pool_bytes;
  t.flush_tombstones = o.flush_tombstones;
  return t;
}

constexpr unsigned kThreads = 256;

}  // namespace

struct graph_map::impl {
  impl(const graph_options& o, int device) : opt(o), table(device, table_options(o)) {}

  graph_options opt;
  slabhash::SlabHash<std::uint64_t, std::uint64_t> table;
  device_timing* timing = nullptr;
  EventTimer timer;
  bool built = false;
  std::uint64_t vertices = 0;  // the directory's vertices
  std::uint64_t vertex_growths = 0;
  DeviceBuffer<uint2> dir;
  DeviceBuffer<unsigned> d_words;             // max_source_kernel's maximum and flag
  DeviceBuffer<unsigned long long> d_scalar;  // a total, a bad query's index
  DeviceBuffer<std::uint64_t> d_offsets;      // range's offsets when the caller passes none
  DeviceBuffer<std::uint64_t> d_start;        // block queries: each query's first item
  DeviceBuffer<std::uint64_t> d_items;        // block queries: each item's edges, then their positions
  CubTemp temp;

  cudaStream_t stream() const { return table.stream(); }
  void add_time(double ms) {
    if (timing) timing->add(ms);
  }
  std::uint32_t slots() const {
    return slabhash::slab_shape(opt.variant == graph::Variant::Map ? slabhash::Mode::Map : slabhash::Mode::Set, 8, 8)
        .slots;
  }

  // The largest source vertex of the inserts among keys (erase: the deletes
  // to skip; null: none); false when there is no insert.
  bool max_source(const std::uint64_t* keys, const bool* erase, std::uint64_t n, std::uint32_t& max_u) {
    if (n == 0) return false;
    d_words.reserve_discard(2, "graph scratch");
    GPUDICT_CUDA(cudaMemsetAsync(d_words.data(), 0, 2 * sizeof(unsigned), stream()));
    graph::max_source_kernel<<<blocks_for(n, kThreads, 4 * device_sm_count()), kThreads, 0, stream()>>>(
        keys, erase, n, d_words.data(), d_words.data() + 1);
    GPUDICT_CHECK_LAUNCH("graph max_source_kernel");
    unsigned w[2];
    copy_to_host(stream(), w, d_words.data(), sizeof w);
    max_u = w[0];
    return w[1] != 0;
  }

  [[noreturn]] void beyond_max_vertices(std::uint32_t u) const {
    throw RuntimeFailure("graph: an edge names vertex " + std::to_string(u) + ", beyond max_vertices " +
                             std::to_string(opt.max_vertices) + " (vertex ids are below it)",
                         "max_vertices");
  }

  // Vertices [vertices, needed) get one bucket each (and the capacity at
  // least doubles): directory and base slabs grow, nothing moves in the
  // pool.
  void grow_vertices(std::uint64_t needed) {
    const std::uint64_t to = std::min<std::uint64_t>(opt.max_vertices, std::max(needed, 2 * vertices));
    DeviceBuffer<uint2> bigger(to, "graph vertex directory");
    if (vertices)
      GPUDICT_CUDA(cudaMemcpyAsync(bigger.data(), dir.data(), vertices * sizeof(uint2), cudaMemcpyDeviceToDevice,
                                   stream()));
    const std::uint64_t first = table.buckets();
    if (first + (to - vertices) >= 0xFFFFFFFFull)
      throw RuntimeFailure("graph: " + std::to_string(first + (to - vertices)) +
                           " buckets exceed the 2^32 - 1 one graph addresses");
    timer.start(stream());
    graph::extend_directory_kernel<<<blocks_for(to - vertices, kThreads), kThreads, 0, stream()>>>(
        bigger.data(), vertices, to, first);
    GPUDICT_CHECK_LAUNCH("graph extend_directory_kernel");
    add_time(timer.stop(stream()));
    table.grow_buckets(first + (to - vertices));
    dir = std::move(bigger);
    vertices = to;
    table.set_vertex_routes(dir.data(), static_cast<std::uint32_t>(vertices));
    ++vertex_growths;
  }

  // Before inserts: every source vertex they name has buckets.
  void make_room(const std::uint64_t* keys, const bool* erase, std::uint64_t n) {
    ensure_built();
    std::uint32_t u = 0;
    if (!max_source(keys, erase, n, u)) return;
    if (u >= opt.max_vertices) beyond_max_vertices(u);
    if (u >= vertices) grow_vertices(static_cast<std::uint64_t>(u) + 1);
  }

  void ensure_built() {
    if (!built) build(nullptr, nullptr, 0);
  }

  void build(const std::uint64_t* keys, const std::uint64_t* weights, std::uint64_t n) {
    if (n >= (1ull << 32)) throw InputError("graph_map: a call of 2^32 or more edges");
    std::uint32_t max_u = 0;
    const bool any = max_source(keys, nullptr, n, max_u);
    if (any && max_u >= opt.max_vertices) beyond_max_vertices(max_u);
    const std::uint64_t v = std::max<std::uint64_t>({1, opt.vertex_capacity, any ? std::uint64_t{max_u} + 1 : 0});
    DeviceBuffer<uint2> d(v, "graph vertex directory");
    DeviceBuffer<std::uint32_t> deg(v, "graph build scratch");
    DeviceBuffer<std::uint64_t> buckets(v, "graph build scratch"), first(v, "graph build scratch");
    d_scalar.reserve_discard(2, "graph scratch");
    temp.prepare("cub::DeviceScan::ExclusiveSum", [&](void* p, size_t& bytes) {
      return cub::DeviceScan::ExclusiveSum(p, bytes, buckets.data(), first.data(), static_cast<int64_t>(v), stream());
    });
    GPUDICT_CUDA(cudaMemsetAsync(deg.data(), 0, v * sizeof(std::uint32_t), stream()));
    // Sizing is part of the build's time: the degrees are counted here, not given.
    timer.start(stream());
    if (n)
      graph::degree_kernel<<<blocks_for(n, kThreads, 8 * device_sm_count()), kThreads, 0, stream()>>>(keys, n,
                                                                                                      deg.data());
    GPUDICT_CHECK_LAUNCH("graph degree_kernel");
    graph::buckets_kernel<<<blocks_for(v, kThreads), kThreads, 0, stream()>>>(
        deg.data(), v, opt.load_factor * static_cast<double>(slots()), buckets.data());
    GPUDICT_CHECK_LAUNCH("graph buckets_kernel");
    temp.run("cub::DeviceScan::ExclusiveSum", [&](void* p, size_t& bytes) {
      return cub::DeviceScan::ExclusiveSum(p, bytes, buckets.data(), first.data(), static_cast<int64_t>(v), stream());
    });
    graph::directory_kernel<<<blocks_for(v, kThreads), kThreads, 0, stream()>>>(first.data(), buckets.data(), v,
                                                                                 d.data(), d_scalar.data());
    GPUDICT_CHECK_LAUNCH("graph directory_kernel");
    add_time(timer.stop(stream()));
    unsigned long long total = 0;
    copy_to_host(stream(), &total, d_scalar.data(), sizeof total);
    if (total >= 0xFFFFFFFFull)
      throw RuntimeFailure("graph: " + std::to_string(total) + " buckets exceed the 2^32 - 1 one graph addresses; " +
                               "raise load_factor",
                           "load_factor");
    dir = std::move(d);
    vertices = v;
    vertex_growths = 0;
    table.set_vertex_routes(dir.data(), static_cast<std::uint32_t>(v));
    table.build_device(keys, weights, n, total);
    built = true;
  }

  // Items of the block queries (graph_kernels.cuh): each query's first
  // item in d_start[0, n], the total returned. Validity is flagged in
  // d_scalar[1] (reset_bad first).
  std::uint64_t block_items(const std::uint64_t* lo, const std::uint64_t* hi, std::uint64_t n) {
    d_start.reserve_discard(n + 1, "graph query scratch");
    temp.prepare("cub::DeviceScan::ExclusiveSum", [&](void* p, size_t& bytes) {
      return cub::DeviceScan::ExclusiveSum(p, bytes, d_start.data(), d_start.data(), static_cast<int64_t>(n + 1),
                                           stream());
    });
    graph::BlockQueries q;
    q.lo = lo;
    q.hi = hi;
    q.n = n;
    q.bad = d_scalar.data() + 1;
    timer.start(stream());
    graph::block_buckets_kernel<<<blocks_for(n + 1, kThreads), kThreads, 0, stream()>>>(table.device_table(), q,
                                                                                          d_start.data());
    GPUDICT_CHECK_LAUNCH("graph block_buckets_kernel");
    temp.run("cub::DeviceScan::ExclusiveSum", [&](void* p, size_t& bytes) {
      return cub::DeviceScan::ExclusiveSum(p, bytes, d_start.data(), d_start.data(), static_cast<int64_t>(n + 1),
                                           stream());
    });
    add_time(timer.stop(stream()));
    std::uint64_t items = 0;
    copy_to_host(stream(), &items, d_start.data() + n, sizeof items);
    return items;
  }

  void walk(const graph::BucketWalk& w) {
    if (w.items == 0) return;
    const slabhash::TableRef<std::uint64_t> t = table.device_table();
    const unsigned grid = blocks_for(w.items * slabhash::kTile, kThreads, 16 * device_sm_count());
    if (opt.variant == graph::Variant::Map)
      graph::bucket_walk_kernel<slabhash::LayoutFor<std::uint64_t, std::uint64_t, slabhash::Mode::Map>>
          <<<grid, kThreads, 0, stream()>>>(t, w);
    else
      graph::bucket_walk_kernel<slabhash::LayoutFor<std::uint64_t, std::uint64_t, slabhash::Mode::Set>>
          <<<grid, kThreads, 0, stream()>>>(t, w);
    GPUDICT_CHECK_LAUNCH("graph bucket_walk_kernel");
  }

  void reset_bad() {
    d_scalar.reserve_discard(2, "graph scratch");
    GPUDICT_CUDA(cudaMemsetAsync(d_scalar.data() + 1, 0xFF, sizeof(unsigned long long), stream()));
  }
  void throw_if_bad(const std::uint64_t* lo, const std::uint64_t* hi, const char* call) {
    unsigned long long bad = 0;
    copy_to_host(stream(), &bad, d_scalar.data() + 1, sizeof bad);
    if (bad == ~0ull) return;
    std::uint64_t l = 0, h = 0;
    copy_to_host(stream(), &l, lo + bad, sizeof l);
    copy_to_host(stream(), &h, hi + bad, sizeof h);
    throw InputError(std::string("graph: ") + call + " takes whole vertex blocks [u * 2^32, u * 2^32 + 2^32 - 1]; " +
                     "query " + std::to_string(bad) + " is [" + std::to_string(l) + ", " + std::to_string(h) + "]");
  }
};

graph_map::graph_map(const graph_options& options, int device) {
  graph::validate(options);
  impl_ = std::make_unique<impl>(options, device_or_current(device));
}
graph_map::~graph_map() = default;
graph_map::graph_map(graph_map&&) noexcept = default;
graph_map& graph_map::operator=(graph_map&&) noexcept = default;

void graph_map::build(const std::uint64_t* edges, const std::uint64_t* weights, std::uint64_t n,
                      cudaStream_t stream) {
  impl_->table.follow(stream);
  impl_->build(edges, weights, n);
}

void graph_map::insert(const std::uint64_t* edges, const std::uint64_t* weights, std::uint64_t n,
                       cudaStream_t stream) {
  impl_->table.follow(stream);
  impl_->make_room(edges, nullptr, n);
  impl_->table.update_device(edges, weights, n, true);
}

void graph_map::erase(const std::uint64_t* edges, std::uint64_t n, cudaStream_t stream) {
  impl_->table.follow(stream);
  impl_->ensure_built();
  impl_->table.update_device(edges, nullptr, n, false);
}

void graph_map::update(const std::uint64_t* edges, const std::uint64_t* weights, const bool* erase, std::uint64_t n,
                       cudaStream_t stream) {
  impl_->table.follow(stream);
  impl_->make_room(edges, erase, n);
  impl_->table.update_mixed_device(edges, weights, erase, n);
}

void graph_map::find(const std::uint64_t* edges, std::uint64_t n, std::uint64_t* weights_out, bool* found_out,
                     cudaStream_t stream) {
  impl_->table.follow(stream);
  impl_->ensure_built();
  impl_->table.find_device(edges, n, weights_out, found_out);
}

void graph_map::count(const std::uint64_t* lo, const std::uint64_t* hi, std::uint64_t n, std::uint64_t* counts_out,
                      cudaStream_t stream) {
  impl& m = *impl_;
  m.table.follow(stream);
  m.ensure_built();
  if (n == 0) return;
  m.reset_bad();
  GPUDICT_CUDA(cudaMemsetAsync(counts_out, 0, n * sizeof(std::uint64_t), m.stream()));
  graph::BucketWalk w;
  w.lo = lo;
  w.n = n;
  w.items = m.block_items(lo, hi, n);
  w.start = m.d_start.data();
  w.query_counts = reinterpret_cast<unsigned long long*>(counts_out);
  m.timer.start(m.stream());
  m.walk(w);
  m.add_time(m.timer.stop(m.stream()));
  m.throw_if_bad(lo, hi, "count");
}

std::uint64_t graph_map::range(const std::uint64_t* lo, const std::uint64_t* hi, std::uint64_t n,
                               std::uint64_t* offsets_out, std::uint64_t* edges_out, std::uint64_t* weights_out,
                               std::uint64_t capacity, cudaStream_t stream) {
  impl& m = *impl_;
  m.table.follow(stream);
  m.ensure_built();
  std::uint64_t* offsets = offsets_out;
  if (!offsets) {
    m.d_offsets.reserve_discard(n + 1, "graph range offsets");
    offsets = m.d_offsets.data();
  }
  m.reset_bad();
  graph::BucketWalk w;
  w.lo = lo;
  w.n = n;
  w.items = m.block_items(lo, hi, n);
  w.start = m.d_start.data();
  if (n) m.throw_if_bad(lo, hi, "range");
  // Each item's edges, their exclusive sum (in place: CUB's scans may alias
  // input and output), and each query's offset from its first item's.
  m.d_items.reserve_discard(w.items + 1, "graph query scratch");
  m.temp.prepare("cub::DeviceScan::ExclusiveSum", [&](void* p, size_t& bytes) {
    return cub::DeviceScan::ExclusiveSum(p, bytes, m.d_items.data(), m.d_items.data(),
                                         static_cast<int64_t>(w.items + 1), m.stream());
  });
  GPUDICT_CUDA(cudaMemsetAsync(m.d_items.data() + w.items, 0, sizeof(std::uint64_t), m.stream()));
  w.item_counts = m.d_items.data();
  m.timer.start(m.stream());
  m.walk(w);
  m.temp.run("cub::DeviceScan::ExclusiveSum", [&](void* p, size_t& bytes) {
    return cub::DeviceScan::ExclusiveSum(p, bytes, m.d_items.data(), m.d_items.data(),
                                         static_cast<int64_t>(w.items + 1), m.stream());
  });
  graph::block_offsets_kernel<<<blocks_for(n + 1, kThreads), kThreads, 0, m.stream()>>>(m.d_start.data(),
                                                                                         m.d_items.data(), n, offsets);
  GPUDICT_CHECK_LAUNCH("graph block_offsets_kernel");
  m.add_time(m.timer.stop(m.stream()));
  std::uint64_t total = 0;
  copy_to_host(m.stream(), &total, offsets + n, sizeof total);
  if (total == 0 || total > capacity || !edges_out) return total;
  w.item_counts = nullptr;
  w.pos = m.d_items.data();
  w.keys_out = edges_out;
  w.values_out = weights_out;
  m.timer.start(m.stream());
  m.walk(w);
  m.add_time(m.timer.stop(m.stream()));
  return total;
}

void graph_map::cleanup(cudaStream_t stream) {
  impl_->table.follow(stream);
  impl_->ensure_built();
  impl_->table.cleanup();
}

std::uint64_t graph_map::size() const { return impl_->table.size(); }
std::uint64_t graph_map::vertex_capacity() const { return impl_->vertices; }
const graph_options& graph_map::options() const { return impl_->opt; }

void graph_map::set_timing(device_timing* timing) {
  impl_->timing = timing;
  impl_->table.set_timing(timing);
}

graph_stats graph_map::stats() const {
  const slab_hash_stats t = impl_->table.stats();
  graph_stats s;
  s.edges = t.size;
  s.vertices = impl_->vertices;
  s.buckets = impl_->built ? t.buckets : 0;
  s.pool_slabs_used = t.pool_slabs_used;
  s.pool_slabs = t.pool_slabs;
  s.pool_bytes = t.pool_bytes;
  s.tombstones = t.tombstones;
  s.pool_growths = t.pool_growths;
  s.vertex_growths = impl_->vertex_growths;
  s.flushes = t.flushes;
  s.slots_per_slab = impl_->slots();
  s.scratch_bytes = t.scratch_bytes + impl_->d_words.bytes() + impl_->d_scalar.bytes() + impl_->d_offsets.bytes() +
                    impl_->d_start.bytes() + impl_->d_items.bytes();
  s.device_bytes = t.device_bytes + impl_->dir.bytes() + s.scratch_bytes - t.scratch_bytes;
  return s;
}

std::uint64_t graph_map::device_bytes_needed(const capacity_bounds& b) const {
  // The table as the slab hash sizes it for the edges, plus a directory
  // entry, a base slab and the build's sizing scratch (20 bytes) for as many
  // vertices as edges (more vertices than edges is the vertex_capacity option's).
  const std::uint64_t vertices = std::max<std::uint64_t>(b.max_resident, impl_->opt.vertex_capacity);
  return impl_->table.device_bytes_needed(b) + vertices * (sizeof(uint2) + slabhash::kSlabBytes + 20);
}

}  // namespace gpudict
