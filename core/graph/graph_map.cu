// graph_map (graph_map.hpp): the vertex directory over a slab hash routed
// by vertex (SlabHash<u64, u64> with VertexRoutes), the degree and
// neighbour walks, vertex deletion and triangle counting.
#include "core/graph/graph_map.hpp"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>

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
#include "core/graph/detail/graph_kernels.cuh"      // its kernels: this file only
#include "core/graph/detail/graph_ops_kernels.cuh"  // (this file only too)
#include "core/slabhash/detail/slabhash_impl.cuh"
#include "core/slabhash/detail/table_view.cuh"

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
  impl(const graph_options& o, int device)
      : opt(o), table(device, table_options(o)), d_words(2, "graph scratch"), d_scalar(6, "graph scratch") {}

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
  DeviceBuffer<unsigned long long> d_cursor;  // range: each query's edges placed so far
  // Re-sizing (graph_kernels.cuh, count_inserts_kernel): per vertex, an
  // upper bound of its degree; the vertices an insert call listed.
  DeviceBuffer<std::uint32_t> approx;
  DeviceBuffer<std::uint32_t> degree;  // per vertex: live edges, kept by the batch kernel
  DeviceBuffer<std::uint32_t> listed;
  // An insert call's re-sizing scratch, kept between calls (only grows): the
  // listed vertices' blocks and degrees, the plan's moved vertices and
  // their bucket counts. The rarer moves themselves allocate per call.
  DeviceBuffer<std::uint64_t> listed_lo, listed_hi, listed_degrees, move_buckets;
  DeviceBuffer<std::uint32_t> moved;
  std::uint64_t vertex_moves = 0, moved_edges = 0;
  std::uint64_t vertex_deletes = 0;  // vertices whose edges a vertex delete removed
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
    DeviceBuffer<std::uint32_t> bigger_approx(to, "graph vertex degrees");
    GPUDICT_CUDA(cudaMemsetAsync(bigger_approx.data(), 0, to * sizeof(std::uint32_t), stream()));
    if (vertices)
      GPUDICT_CUDA(cudaMemcpyAsync(bigger_approx.data(), approx.data(), vertices * sizeof(std::uint32_t),
                                   cudaMemcpyDeviceToDevice, stream()));
    approx = std::move(bigger_approx);
    DeviceBuffer<std::uint32_t> bigger_degree(to, "graph vertex degrees");
    GPUDICT_CUDA(cudaMemsetAsync(bigger_degree.data(), 0, to * sizeof(std::uint32_t), stream()));
    if (vertices)
      GPUDICT_CUDA(cudaMemcpyAsync(bigger_degree.data(), degree.data(), vertices * sizeof(std::uint32_t),
                                   cudaMemcpyDeviceToDevice, stream()));
    degree = std::move(bigger_degree);
    dir = std::move(bigger);
    vertices = to;
    table.set_vertex_routes(dir.data(), static_cast<std::uint32_t>(vertices), degree.data());
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
    approx = std::move(deg);  // the build's degrees (duplicates counted): an upper bound
    degree = DeviceBuffer<std::uint32_t>(v, "graph vertex degrees");  // counted by the build's inserts
    GPUDICT_CUDA(cudaMemsetAsync(degree.data(), 0, v * sizeof(std::uint32_t), stream()));
    vertices = v;
    vertex_growths = 0;
    table.set_vertex_routes(dir.data(), static_cast<std::uint32_t>(v), degree.data());
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

  double per_bucket() const { return opt.load_factor * static_cast<double>(slots()); }

  // Before an insert call: approx counts its inserts; the vertices whose
  // bound passes their limit are listed. Returns how many.
  std::uint64_t count_inserts(const std::uint64_t* keys, const bool* erase, std::uint64_t n) {
    if (n == 0) return 0;
    listed.reserve_discard(std::min<std::uint64_t>(n, vertices), "graph re-sizing");
    d_words.reserve_discard(2, "graph scratch");
    GPUDICT_CUDA(cudaMemsetAsync(d_words.data(), 0, sizeof(unsigned), stream()));
    timer.start(stream());
    graph::count_inserts_kernel<<<blocks_for(n, kThreads, 8 * device_sm_count()), kThreads, 0, stream()>>>(
        keys, erase, n, dir.data(), static_cast<std::uint32_t>(vertices), per_bucket(), 4.0 * slots(), approx.data(),
        listed.data(), d_words.data());
    GPUDICT_CHECK_LAUNCH("graph count_inserts_kernel");
    add_time(timer.stop(stream()));
    unsigned m = 0;
    copy_to_host(stream(), &m, d_words.data(), sizeof m);
    return m;
  }

  // The vertex blocks [u * 2^32, u * 2^32 + 2^32 - 1] of ids[0, m) into
  // lo and hi (reserved here).
  void vertex_blocks(const std::uint32_t* ids, std::uint64_t m, DeviceBuffer<std::uint64_t>& lo,
                     DeviceBuffer<std::uint64_t>& hi, const char* what) {
    lo.reserve_discard(m, what);
    hi.reserve_discard(m, what);
    graph::vertex_blocks_kernel<<<blocks_for(m, kThreads), kThreads, 0, stream()>>>(ids, m, lo.data(), hi.data());
    GPUDICT_CHECK_LAUNCH("graph vertex_blocks_kernel");
  }

  // Before an insert call of n operations: the listed vertices' exact
  // degrees; those that with the call's inserts need more buckets move
  // (their edges gathered, their chains released, new buckets at the
  // arena's end, the edges inserted again) before the call inserts.
  // listed_lo, listed_hi: the listed vertices' blocks (m each).
  void resize_listed(std::uint64_t m, std::uint64_t n) {
    listed_degrees.reserve_discard(m, "graph re-sizing");
    count_blocks(listed_lo.data(), listed_hi.data(), m, listed_degrees.data());
    moved.reserve_discard(m, "graph re-sizing");
    move_buckets.reserve_discard(m + 1, "graph re-sizing");
    std::uint64_t* const buckets = move_buckets.data();
    GPUDICT_CUDA(cudaMemsetAsync(d_words.data(), 0, sizeof(unsigned), stream()));
    timer.start(stream());
    graph::plan_moves_kernel<<<blocks_for(m, kThreads), kThreads, 0, stream()>>>(
        listed.data(), listed_degrees.data(), m, dir.data(), per_bucket(), approx.data(), n, moved.data(), buckets,
        d_words.data());
    GPUDICT_CHECK_LAUNCH("graph plan_moves_kernel");
    add_time(timer.stop(stream()));
    unsigned mc = 0;
    copy_to_host(stream(), &mc, d_words.data(), sizeof mc);
    if (mc == 0) return;
    // Their edges, gathered through the old directory.
    DeviceBuffer<std::uint64_t> lo, hi;
    vertex_blocks(moved.data(), mc, lo, hi, "graph re-sizing");
    DeviceBuffer<std::uint64_t> offsets(mc + 1, "graph re-sizing");
    const std::uint64_t edges = range_blocks(lo.data(), hi.data(), mc, offsets.data(), nullptr, nullptr, 0);
    DeviceBuffer<std::uint64_t> keys(edges + 1, "graph re-sizing"), weights(edges + 1, "graph re-sizing");
    range_blocks(lo.data(), hi.data(), mc, offsets.data(), keys.data(), weights.data(), edges);
    // New buckets at the arena's end.
    DeviceBuffer<std::uint64_t> first(mc + 1, "graph re-sizing");
    GPUDICT_CUDA(cudaMemsetAsync(buckets + mc, 0, sizeof(std::uint64_t), stream()));
    temp.run("cub::DeviceScan::ExclusiveSum", [&](void* p, size_t& bytes) {
      return cub::DeviceScan::ExclusiveSum(p, bytes, buckets, first.data(), static_cast<int64_t>(mc + 1),
                                           stream());
    });
    std::uint64_t added = 0;
    copy_to_host(stream(), &added, first.data() + mc, sizeof added);
    const std::uint64_t base = table.buckets();
    if (base + added >= 0xFFFFFFFFull)
      throw RuntimeFailure("graph: " + std::to_string(base + added) + " buckets exceed the 2^32 - 1 one graph " +
                               "addresses; raise load_factor",
                           "load_factor");
    table.grow_buckets(base + added);
    // The old chains out of the table, then the new directory entries.
    const std::uint64_t items = block_items(lo.data(), hi.data(), mc);
    d_scalar.reserve_discard(5, "graph scratch");
    GPUDICT_CUDA(cudaMemsetAsync(d_scalar.data() + 2, 0, 3 * sizeof(unsigned long long), stream()));
    const slabhash::TableRef<std::uint64_t> t = table.device_table();
    timer.start(stream());
    if (items) {
      if (opt.variant == graph::Variant::Map)
        graph::release_chains_kernel<slabhash::LayoutFor<std::uint64_t, std::uint64_t, slabhash::Mode::Map>>
            <<<blocks_for(items, kThreads), kThreads, 0, stream()>>>(t, moved.data(), d_start.data(), mc, items,
                                                                     d_scalar.data() + 2);
      else
        graph::release_chains_kernel<slabhash::LayoutFor<std::uint64_t, std::uint64_t, slabhash::Mode::Set>>
            <<<blocks_for(items, kThreads), kThreads, 0, stream()>>>(t, moved.data(), d_start.data(), mc, items,
                                                                     d_scalar.data() + 2);
      GPUDICT_CHECK_LAUNCH("graph release_chains_kernel");
    }
    graph::move_directory_kernel<<<blocks_for(mc, kThreads), kThreads, 0, stream()>>>(
        moved.data(), first.data(), buckets, mc, base, dir.data(), degree.data());
    GPUDICT_CHECK_LAUNCH("graph move_directory_kernel");
    add_time(timer.stop(stream()));
    unsigned long long released[3];
    copy_to_host(stream(), released, d_scalar.data() + 2, sizeof released);
    table.forget(released[0], released[1], released[2]);
    // The edges again, into their new buckets.
    table.update_device(keys.data(), weights.data(), edges, true);
    vertex_moves += mc;
    moved_edges += edges;
  }

  // f(layout tag): calls f with the slab layout of this graph's variant.
  template <class F>
  void with_layout(F&& f) const {
    if (opt.variant == graph::Variant::Map)
      f(slabhash::LayoutFor<std::uint64_t, std::uint64_t, slabhash::Mode::Map>{});
    else
      f(slabhash::LayoutFor<std::uint64_t, std::uint64_t, slabhash::Mode::Set>{});
  }

  void erase_vertices(const std::uint64_t* blocks, std::uint64_t n);
  std::uint64_t triangle_count();

  void insert_call(const std::uint64_t* keys, const std::uint64_t* weights, const bool* erase, std::uint64_t n) {
    make_room(keys, erase, n);
    const std::uint64_t m = count_inserts(keys, erase, n);
    if (m) {
      vertex_blocks(listed.data(), m, listed_lo, listed_hi, "graph re-sizing");
      resize_listed(m, n);
    }
    if (erase)
      table.update_mixed_device(keys, weights, erase, n);
    else
      table.update_device(keys, weights, n, true);
    if (m) {  // their bounds back to their exact degrees
      count_blocks(listed_lo.data(), listed_hi.data(), m, listed_degrees.data());
      timer.start(stream());
      graph::set_approx_kernel<<<blocks_for(m, kThreads), kThreads, 0, stream()>>>(listed.data(),
                                                                                    listed_degrees.data(), m,
                                                                                    approx.data());
      GPUDICT_CHECK_LAUNCH("graph set_approx_kernel");
      add_time(timer.stop(stream()));
    }
  }

  // Degrees and neighbour lists of vertex blocks (graph_map::count, range).
  void count_blocks(const std::uint64_t* lo, const std::uint64_t* hi, std::uint64_t n, std::uint64_t* counts_out);
  std::uint64_t range_blocks(const std::uint64_t* lo, const std::uint64_t* hi, std::uint64_t n,
                             std::uint64_t* offsets_out, std::uint64_t* edges_out, std::uint64_t* weights_out,
                             std::uint64_t capacity);

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
  impl_->insert_call(edges, weights, nullptr, n);
}

void graph_map::erase(const std::uint64_t* edges, std::uint64_t n, cudaStream_t stream) {
  impl_->table.follow(stream);
  impl_->ensure_built();
  impl_->table.update_device(edges, nullptr, n, false);
}

void graph_map::update(const std::uint64_t* edges, const std::uint64_t* weights, const bool* erase, std::uint64_t n,
                       cudaStream_t stream) {
  impl_->table.follow(stream);
  impl_->insert_call(edges, weights, erase, n);
}

void graph_map::find(const std::uint64_t* edges, std::uint64_t n, std::uint64_t* weights_out, bool* found_out,
                     cudaStream_t stream) {
  impl_->table.follow(stream);
  impl_->ensure_built();
  impl_->table.find_device(edges, n, weights_out, found_out);
}

void graph_map::impl::count_blocks(const std::uint64_t* lo, const std::uint64_t* hi, std::uint64_t n,
                                   std::uint64_t* counts_out) {
  if (n == 0) return;
  reset_bad();
  timer.start(stream());
  graph::block_degrees_kernel<<<blocks_for(n, kThreads), kThreads, 0, stream()>>>(
      table.device_table(), graph::BlockQueries{lo, hi, n, d_scalar.data() + 1}, counts_out, false);
  GPUDICT_CHECK_LAUNCH("graph block_degrees_kernel");
  add_time(timer.stop(stream()));
  throw_if_bad(lo, hi, "count");
}

std::uint64_t graph_map::impl::range_blocks(const std::uint64_t* lo, const std::uint64_t* hi, std::uint64_t n,
                                            std::uint64_t* offsets_out, std::uint64_t* edges_out,
                                            std::uint64_t* weights_out, std::uint64_t capacity) {
  std::uint64_t* offsets = offsets_out;
  if (!offsets) {
    d_offsets.reserve_discard(n + 1, "graph range offsets");
    offsets = d_offsets.data();
  }
  reset_bad();
  // The degrees, their exclusive sum over n + 1 (in place: CUB's scans may
  // alias input and output): each block's offset, and the total.
  temp.prepare("cub::DeviceScan::ExclusiveSum", [&](void* p, size_t& bytes) {
    return cub::DeviceScan::ExclusiveSum(p, bytes, offsets, offsets, static_cast<int64_t>(n + 1), stream());
  });
  timer.start(stream());
  graph::block_degrees_kernel<<<blocks_for(n + 1, kThreads), kThreads, 0, stream()>>>(
      table.device_table(), graph::BlockQueries{lo, hi, n, d_scalar.data() + 1}, offsets, true);
  GPUDICT_CHECK_LAUNCH("graph block_degrees_kernel");
  temp.run("cub::DeviceScan::ExclusiveSum", [&](void* p, size_t& bytes) {
    return cub::DeviceScan::ExclusiveSum(p, bytes, offsets, offsets, static_cast<int64_t>(n + 1), stream());
  });
  add_time(timer.stop(stream()));
  if (n) throw_if_bad(lo, hi, "range");
  std::uint64_t total = 0;
  copy_to_host(stream(), &total, offsets + n, sizeof total);
  if (total == 0 || total > capacity || !edges_out) return total;
  graph::BucketWalk w;
  w.lo = lo;
  w.n = n;
  w.items = block_items(lo, hi, n);
  w.start = d_start.data();
  w.offsets = offsets;
  d_cursor.reserve_discard(n, "graph query scratch");
  GPUDICT_CUDA(cudaMemsetAsync(d_cursor.data(), 0, n * sizeof(unsigned long long), stream()));
  w.cursor = d_cursor.data();
  w.keys_out = edges_out;
  w.values_out = weights_out;
  timer.start(stream());
  walk(w);
  add_time(timer.stop(stream()));
  return total;
}

void graph_map::count(const std::uint64_t* lo, const std::uint64_t* hi, std::uint64_t n, std::uint64_t* counts_out,
                      cudaStream_t stream) {
  impl_->table.follow(stream);
  impl_->ensure_built();
  impl_->count_blocks(lo, hi, n, counts_out);
}

std::uint64_t graph_map::range(const std::uint64_t* lo, const std::uint64_t* hi, std::uint64_t n,
                               std::uint64_t* offsets_out, std::uint64_t* edges_out, std::uint64_t* weights_out,
                               std::uint64_t capacity, cudaStream_t stream) {
  impl_->table.follow(stream);
  impl_->ensure_built();
  return impl_->range_blocks(lo, hi, n, offsets_out, edges_out, weights_out, capacity);
}

void graph_map::cleanup(cudaStream_t stream) {
  impl_->table.follow(stream);
  impl_->ensure_built();
  impl_->table.cleanup();
}

// Vertex deletion (graph_ops_kernels.cuh): the batch's vertices marked and
// listed once each; every other vertex's chains swept of their edges to
// them; their own chains released (base slabs pristine, pool slabs freed)
// and their degrees zeroed. They keep their ids and buckets.
void graph_map::impl::erase_vertices(const std::uint64_t* blocks, std::uint64_t n) {
  if (n == 0) return;
  const std::uint64_t words = (vertices + 31) / 32;
  DeviceBuffer<std::uint32_t> marks(words, "graph vertex deletion");
  DeviceBuffer<std::uint32_t> gone(std::min<std::uint64_t>(n, vertices), "graph vertex deletion");
  DeviceBuffer<std::uint32_t> far(n, "graph vertex deletion"), far_sorted(n, "graph vertex deletion");
  GPUDICT_CUDA(cudaMemsetAsync(marks.data(), 0, words * sizeof(std::uint32_t), stream()));
  d_words.reserve_discard(2, "graph scratch");
  GPUDICT_CUDA(cudaMemsetAsync(d_words.data(), 0, 2 * sizeof(unsigned), stream()));
  reset_bad();
  d_scalar.reserve_discard(6, "graph scratch");
  GPUDICT_CUDA(cudaMemsetAsync(d_scalar.data() + 2, 0, 4 * sizeof(unsigned long long), stream()));
  const slabhash::TableRef<std::uint64_t> t = table.device_table();
  timer.start(stream());
  graph::mark_vertices_kernel<<<blocks_for(n, kThreads, 4 * device_sm_count()), kThreads, 0, stream()>>>(
      blocks, n, static_cast<std::uint32_t>(vertices), marks.data(), gone.data(), far.data(), d_words.data(),
      d_scalar.data() + 1);
  GPUDICT_CHECK_LAUNCH("graph mark_vertices_kernel");
  add_time(timer.stop(stream()));
  unsigned long long bad = 0;
  copy_to_host(stream(), &bad, d_scalar.data() + 1, sizeof bad);
  if (bad != ~0ull) {
    std::uint64_t k = 0;
    copy_to_host(stream(), &k, blocks + bad, sizeof k);
    throw InputError("graph: erase_vertices takes a vertex's first key u * 2^32; entry " + std::to_string(bad) +
                     " is " + std::to_string(k));
  }
  unsigned counts[2];  // vertices with buckets (listed once each); vertices beyond the capacity
  copy_to_host(stream(), counts, d_words.data(), sizeof counts);
  const unsigned m = counts[0], nfar = counts[1];
  if (m == 0 && nfar == 0) return;
  graph::Deleted d;
  d.marks = marks.data();
  d.vertices = static_cast<std::uint32_t>(vertices);
  if (nfar) {
    auto sort = [&](void* p, size_t& bytes) {
      return cub::DeviceRadixSort::SortKeys(p, bytes, far.data(), far_sorted.data(), static_cast<std::int64_t>(nfar),
                                            0, 32, stream());
    };
    temp.prepare("cub::DeviceRadixSort::SortKeys", sort);
    timer.start(stream());
    temp.run("cub::DeviceRadixSort::SortKeys", sort);
    add_time(timer.stop(stream()));
    d.far = far_sorted.data();
    d.nfar = nfar;
  }
  const std::uint64_t buckets = table.buckets();
  timer.start(stream());
  with_layout([&](auto layout) {
    using L = decltype(layout);
    graph::sweep_kernel<L><<<blocks_for(buckets, kThreads), kThreads, 0, stream()>>>(t, buckets, d, degree.data(),
                                                                                      d_scalar.data() + 2);
    GPUDICT_CHECK_LAUNCH("graph sweep_kernel");
  });
  add_time(timer.stop(stream()));
  if (m) {  // the marked vertices' own chains (vertices beyond the capacity have none)
    DeviceBuffer<std::uint64_t> lo, hi;
    vertex_blocks(gone.data(), m, lo, hi, "graph vertex deletion");
    const std::uint64_t items = block_items(lo.data(), hi.data(), m);  // (timed inside)
    timer.start(stream());
    with_layout([&](auto layout) {
      using L = decltype(layout);
      if (items == 0) return;
      graph::release_chains_kernel<L><<<blocks_for(items, kThreads), kThreads, 0, stream()>>>(
          t, gone.data(), d_start.data(), m, items, d_scalar.data() + 3);
      GPUDICT_CHECK_LAUNCH("graph release_chains_kernel");
    });
    graph::clear_vertices_kernel<<<blocks_for(m, kThreads), kThreads, 0, stream()>>>(gone.data(), m, degree.data(),
                                                                                      approx.data());
    GPUDICT_CHECK_LAUNCH("graph clear_vertices_kernel");
    add_time(timer.stop(stream()));
  }
  unsigned long long c[4];  // killed by the sweep; released live, claimed, pool slabs
  copy_to_host(stream(), c, d_scalar.data() + 2, sizeof c);
  // The swept edges are tombstones now (claimed, not live); the released
  // chains are out of the table.
  table.forget(c[0] + c[1], c[2], c[3]);
  vertex_deletes += m;
}

// Triangle counting: the live edges (u, v), u != v, gathered as undirected
// words min * 2^32 + max (graph_ops_kernels.cuh), sorted and deduplicated;
// their endpoints renumbered densely (destinations need not have buckets,
// and ids may reach 2^32 - 2); each edge oriented by (degree, index) and
// sorted again, which lays the out-lists out as CSR; every oriented edge
// then merges two sorted out-lists. The hash tables are not probed: a merge
// of sorted lists is cheaper than a probe per edge (the paper's own finding,
// section 5.6.3), and the sort is paid once per count. Allocations sit
// between the timed parts.
std::uint64_t graph_map::impl::triangle_count() {
  const std::uint64_t buckets = table.buckets();
  const std::uint64_t cap = std::max<std::uint64_t>(table.size(), 1);  // live edges: at least the non-loop ones
  d_scalar.reserve_discard(6, "graph scratch");
  const slabhash::TableRef<std::uint64_t> t = table.device_table();
  double ms = 0;
  std::uint64_t m = 0;
  DeviceBuffer<std::uint64_t> a, b;
  {
    DeviceBuffer<std::uint64_t> counts(buckets + 1, "graph triangle counting"),
        offsets(buckets + 1, "graph triangle counting");
    auto scan = [&](void* p, size_t& bytes) {
      return cub::DeviceScan::ExclusiveSum(p, bytes, counts.data(), offsets.data(),
                                           static_cast<std::int64_t>(buckets + 1), stream());
    };
    temp.prepare("cub::DeviceScan::ExclusiveSum", scan);
    GPUDICT_CUDA(cudaMemsetAsync(counts.data() + buckets, 0, sizeof(std::uint64_t), stream()));
    timer.start(stream());
    with_layout([&](auto layout) {
      using L = decltype(layout);
      graph::arena_edges_kernel<L, false>
          <<<blocks_for(buckets, kThreads), kThreads, 0, stream()>>>(t, buckets, counts.data(), nullptr, nullptr);
      GPUDICT_CHECK_LAUNCH("graph arena_edges_kernel");
    });
    temp.run("cub::DeviceScan::ExclusiveSum", scan);
    ms += timer.stop(stream());
    copy_to_host(stream(), &m, offsets.data() + buckets, sizeof m);
    if (m > cap) throw RuntimeFailure("graph: triangle counting found more edges than the graph holds");
    if (m < 3) {
      add_time(ms);
      return 0;
    }
    a = DeviceBuffer<std::uint64_t>(m, "graph triangle counting");
    b = DeviceBuffer<std::uint64_t>(m, "graph triangle counting");
    auto sort = [&](void* p, size_t& bytes) {
      return cub::DeviceRadixSort::SortKeys(p, bytes, a.data(), b.data(), static_cast<std::int64_t>(m), 0, 64,
                                            stream());
    };
    auto unique = [&](void* p, size_t& bytes) {
      return cub::DeviceSelect::Unique(p, bytes, b.data(), a.data(), d_scalar.data() + 2,
                                       static_cast<std::int64_t>(m), stream());
    };
    temp.prepare("cub::DeviceRadixSort::SortKeys", sort);
    temp.prepare("cub::DeviceSelect::Unique", unique);
    timer.start(stream());
    with_layout([&](auto layout) {
      using L = decltype(layout);
      graph::arena_edges_kernel<L, true>
          <<<blocks_for(buckets, kThreads), kThreads, 0, stream()>>>(t, buckets, nullptr, offsets.data(), a.data());
      GPUDICT_CHECK_LAUNCH("graph arena_edges_kernel");
    });
    temp.run("cub::DeviceRadixSort::SortKeys", sort);
    temp.run("cub::DeviceSelect::Unique", unique);  // the undirected edges, in a
    ms += timer.stop(stream());
  }
  unsigned long long e = 0;
  copy_to_host(stream(), &e, d_scalar.data() + 2, sizeof e);

  // The vertices: the edges' endpoints sorted and unique (ids[0, nv)).
  const std::uint64_t ends = 2 * e;
  DeviceBuffer<std::uint32_t> ends_in(ends, "graph triangle counting"), ids(ends, "graph triangle counting");
  auto sort_ends = [&](void* p, size_t& bytes) {
    return cub::DeviceRadixSort::SortKeys(p, bytes, ends_in.data(), ids.data(), static_cast<std::int64_t>(ends), 0, 32,
                                          stream());
  };
  auto unique_ends = [&](void* p, size_t& bytes) {
    return cub::DeviceSelect::Unique(p, bytes, ids.data(), ends_in.data(), d_scalar.data() + 2,
                                     static_cast<std::int64_t>(ends), stream());
  };
  temp.prepare("cub::DeviceRadixSort::SortKeys", sort_ends);
  temp.prepare("cub::DeviceSelect::Unique", unique_ends);
  const unsigned grid = blocks_for(e, kThreads, 8 * device_sm_count());
  timer.start(stream());
  graph::endpoints_kernel<<<grid, kThreads, 0, stream()>>>(a.data(), e, ends_in.data());
  GPUDICT_CHECK_LAUNCH("graph endpoints_kernel");
  temp.run("cub::DeviceRadixSort::SortKeys", sort_ends);
  temp.run("cub::DeviceSelect::Unique", unique_ends);  // the vertex ids, ascending, in ends_in
  ms += timer.stop(stream());
  unsigned long long nv = 0;
  copy_to_host(stream(), &nv, d_scalar.data() + 2, sizeof nv);

  // Renumbered, oriented, sorted: CSR (first: the out-lists' offsets).
  DeviceBuffer<std::uint32_t> deg(nv, "graph triangle counting");
  DeviceBuffer<std::uint64_t> first(nv + 1, "graph triangle counting");
  auto sort_oriented = [&](void* p, size_t& bytes) {
    return cub::DeviceRadixSort::SortKeys(p, bytes, b.data(), a.data(), static_cast<std::int64_t>(e), 0, 64,
                                          stream());
  };
  auto scan_first = [&](void* p, size_t& bytes) {
    return cub::DeviceScan::ExclusiveSum(p, bytes, first.data(), first.data(), static_cast<std::int64_t>(nv + 1),
                                         stream());
  };
  temp.prepare("cub::DeviceRadixSort::SortKeys", sort_oriented);
  temp.prepare("cub::DeviceScan::ExclusiveSum", scan_first);
  GPUDICT_CUDA(cudaMemsetAsync(deg.data(), 0, nv * sizeof(std::uint32_t), stream()));
  GPUDICT_CUDA(cudaMemsetAsync(first.data(), 0, (nv + 1) * sizeof(std::uint64_t), stream()));
  GPUDICT_CUDA(cudaMemsetAsync(d_scalar.data() + 3, 0, sizeof(unsigned long long), stream()));
  timer.start(stream());
  graph::renumber_kernel<<<grid, kThreads, 0, stream()>>>(a.data(), e, ends_in.data(), nv, deg.data());
  GPUDICT_CHECK_LAUNCH("graph renumber_kernel");
  graph::orient_kernel<<<grid, kThreads, 0, stream()>>>(a.data(), e, deg.data(), b.data(), first.data());
  GPUDICT_CHECK_LAUNCH("graph orient_kernel");
  temp.run("cub::DeviceRadixSort::SortKeys", sort_oriented);
  temp.run("cub::DeviceScan::ExclusiveSum", scan_first);
  graph::triangle_count_kernel<kThreads>
      <<<grid, kThreads, 0, stream()>>>(a.data(), e, first.data(), d_scalar.data() + 3);
  GPUDICT_CHECK_LAUNCH("graph triangle_count_kernel");
  ms += timer.stop(stream());
  std::uint64_t total = 0;
  copy_to_host(stream(), &total, d_scalar.data() + 3, sizeof total);
  add_time(ms);
  return total;
}

void graph_map::erase_vertices(const std::uint64_t* vertices, std::uint64_t n, cudaStream_t stream) {
  impl_->table.follow(stream);
  impl_->ensure_built();
  impl_->erase_vertices(vertices, n);
}

std::uint64_t graph_map::triangle_count(cudaStream_t stream) {
  impl_->table.follow(stream);
  impl_->ensure_built();
  return impl_->triangle_count();
}

std::uint64_t graph_map::size() const { return impl_->table.size(); }
std::uint64_t graph_map::vertex_capacity() const { return impl_->vertices; }
const graph_options& graph_map::options() const { return impl_->opt; }

void graph_map::set_timing(device_timing* timing) {
  impl_->timing = timing;
  impl_->table.set_timing(timing);
}

graph_view graph_map::view() {
  impl_->ensure_built();  // an empty graph has a directory too
  graph_view v;
  const slabhash::TableRef<std::uint64_t> t = impl_->table.device_table();
  v.table = slabhash::table_view(t, nullptr, impl_->table.mode());  // reads only: nothing to count
  v.directory = impl_->dir.data();
  v.vertices = static_cast<std::uint32_t>(impl_->vertices);
  v.degree = impl_->degree.data();
  return v;
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
  s.vertex_moves = impl_->vertex_moves;
  s.moved_edges = impl_->moved_edges;
  s.vertex_deletes = impl_->vertex_deletes;
  s.flushes = t.flushes;
  s.slots_per_slab = impl_->slots();
  s.scratch_bytes = t.scratch_bytes + impl_->d_words.bytes() + impl_->d_scalar.bytes() + impl_->d_offsets.bytes() +
                    impl_->d_start.bytes() + impl_->d_cursor.bytes();
  s.device_bytes = t.device_bytes + impl_->dir.bytes() + impl_->degree.bytes() + impl_->approx.bytes() +
                   s.scratch_bytes - t.scratch_bytes;
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
