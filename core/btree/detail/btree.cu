// The B-Tree: validate(Options), construction, the node pool (sizing,
// growth, overflow), stats and the memory bound. build.cu builds,
// device_api.cu and device_apply.cu serve the bulk calls, ops_kernel.cuh
// holds the device operations.

#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <cmath>
#include <string>

#include "core/btree/detail/btree_impl.cuh"
#include "core/btree/detail/launch.cuh"
#include "core/common/cuda_check.hpp"
#include "core/common/errors.hpp"

namespace gpudict {

namespace {
constexpr uint64_t kInitialPool = 1024;  // nodes of an automatic pool before the first build
}  // namespace

namespace btree {

static_assert(kPointRangeMaxMean == 48.0, "the engine's parameters (and --query-tile's help) say 48");

void validate(const Options& o) {
  auto bad = [](const std::string& what) { throw InputError("btree options: " + what); };
  if (o.node_pool > 0xFFFFFFF0ull) bad("node_pool " + std::to_string(o.node_pool) + " is more than 2^32 - 16 nodes");
  if (!std::isfinite(o.fill) || o.fill <= 0.0 || o.fill > 1.0) bad("fill " + std::to_string(o.fill) + " is not in (0, 1]");
  if (o.tile != 8 && o.tile != 16 && o.tile != 32) bad("tile " + std::to_string(o.tile) + " is not 8, 16 or 32");
  if (o.query_tile != 0 && o.query_tile != 1 && o.query_tile != 4 && o.query_tile != 8)
    bad("query_tile " + std::to_string(o.query_tile) + " is not 0, 1, 4 or 8");
}

int leaf_fill(double fill) {
  return std::clamp(static_cast<int>(std::lround(fill * kCapacity)), 1, kCapacity);
}
int inner_fill(double fill) { return std::max(2, leaf_fill(fill)); }

LevelPlan plan_levels(uint64_t keys, int leaf_keys, int inner_children) {
  LevelPlan p;
  p.keys = keys;
  p.size[0] = std::max<uint64_t>(1, (keys + leaf_keys - 1) / leaf_keys);
  p.levels = 1;
  while (p.size[p.levels - 1] > 1) {
    if (p.levels == LevelPlan::kMaxLevels) throw RuntimeFailure("btree: bulk build plan exceeds 40 levels");
    const uint64_t below = p.size[p.levels - 1];
    p.size[p.levels] = (below + inner_children - 1) / inner_children;
    ++p.levels;
  }
  // Node 0 is the root (the top level's one node); the other levels follow
  // from node 1, leaves first.
  uint64_t next = 1;
  p.total = 1;
  for (int l = 0; l + 1 < p.levels; ++l) {
    p.base[l] = next;
    next += p.size[l];
    p.total += p.size[l];
  }
  p.base[p.levels - 1] = 0;
  return p;
}

template <class Word>
int BTree<Word>::use_device(int device) {
  GPUDICT_CUDA(cudaSetDevice(device));
  return device;
}

template <class Word>
BTree<Word>::BTree(int device, const Options& options, int key_bits)
    : device_(use_device(device)), key_bits_(key_bits), opt_(options) {
  GPUDICT_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  hdr_ = DeviceBuffer<TreeHeader>(1, "btree header");
  h_hdr_.reserve_discard(1);
  h_hdr_[0] = TreeHeader{};
  d_scalars_ = DeviceBuffer<unsigned long long>(kScalars, "btree counters");
  h_u64_.reserve_discard(kMergeFlags);
  capacity_ = opt_.node_pool ? opt_.node_pool : kInitialPool;
  if (capacity_ == 0) capacity_ = 1;
  pool_ = allocate_nodes(capacity_, opt_.node_pool ? "the fixed pool of " + std::to_string(capacity_) + " nodes"
                                                   : std::string("the first pool"));
  reset_empty();
}

template <class Word>
BTree<Word>::~BTree() {
  if (stream_) {
    cudaStreamSynchronize(stream_);
    cudaStreamDestroy(stream_);
  }
}

template <class Word>
TreeRef<Word> BTree<Word>::ref() const {
  TreeRef<Word> r;
  r.nodes = const_cast<Node<Word>*>(pool_.data());
  r.hdr = const_cast<TreeHeader*>(hdr_.data());
  r.capacity = capacity_;
  return r;
}

template <class Word>
uint64_t BTree<Word>::used_nodes() const { return std::min<uint64_t>(h_hdr_[0].next_free, capacity_); }

template <class Word>
void BTree<Word>::reset_empty() {
  set_key_span(key_max<Word>, 0);
  Node<Word> root{};
  root.w[kHighWord] = 0;
  root.w[kLinkWord] = kNil;
  root.w[kLowWord] = 0;
  root.w[kMetaWord] = meta_new<Word>(0, true);
  TreeHeader h = fresh_header();
  h.next_free = 1;
  h.leaves = 1;
  h.height = 1;
  h_hdr_[0] = h;
  dir_.clear();
  GPUDICT_CUDA(cudaMemcpyAsync(pool_.data(), &root, sizeof(Node<Word>), cudaMemcpyHostToDevice, stream_));
  GPUDICT_CUDA(cudaMemcpyAsync(hdr_.data(), &h, sizeof(TreeHeader), cudaMemcpyHostToDevice, stream_));
  GPUDICT_CUDA(cudaStreamSynchronize(stream_));
}

template <class Word>
TreeHeader BTree<Word>::fresh_header() const {
  TreeHeader h{};
  h.grouped = h_hdr_[0].grouped;  // the run-long counters survive a new tree
  h.warp_taken = h_hdr_[0].warp_taken;
  return h;
}

template <class Word>
void BTree<Word>::sync_header() {
  copy_to_host(stream_, h_hdr_.data(), hdr_.data(), sizeof(TreeHeader));
  if (h_hdr_[0].error)
    throw RuntimeFailure("btree: internal error: an operation waited more than 2^24 times for a latch or a "
                         "consistent node read (a latch was never released), or a search visited more nodes than "
                         "the pool holds (a corrupt tree)");
}

template <class Word>
void BTree<Word>::throw_pool_full(const std::string& when) const {
  throw RuntimeFailure("out of device memory for B-Tree nodes: " + when + " needs more than the fixed pool of " +
                           std::to_string(capacity_) + " nodes (" + format_bytes(capacity_ * sizeof(Node<Word>)) +
                           "); enlarge it (node_pool, in nodes of " + std::to_string(sizeof(Node<Word>)) +
                           " bytes) or make it automatic (node_pool 0)",
                       "node_pool");}

template <class Word>
void BTree<Word>::clear_overflow() {
  TreeHeader& h = h_hdr_[0];
  h.overflow = 0;
  h.next_free = std::min<uint64_t>(h.next_free, capacity_);
  GPUDICT_CUDA(cudaMemcpyAsync(hdr_.data(), &h, sizeof(TreeHeader), cudaMemcpyHostToDevice, stream_));
  GPUDICT_CUDA(cudaStreamSynchronize(stream_));
}

template <class Word>
void BTree<Word>::fall_back_to_first_pool() {
  pool_.release();
  capacity_ = 0;
  try {
    pool_ = allocate_nodes(kInitialPool, "the first pool");
  } catch (const DeviceOutOfMemory&) {
    return;  // no pool: require_pool refuses every later call but a new build
  }
  capacity_ = kInitialPool;
  reset_empty();
}

template <class Word>
void BTree<Word>::require_pool() const {
  if (capacity_ == 0)
    throw DeviceOutOfMemory("out of device memory for B-Tree nodes: this tree lost its pool when a bulk build could "
                            "not allocate its nodes, and not even a first pool of " + std::to_string(kInitialPool) +
                            " nodes could be allocated since");
}

template <class Word>
DeviceBuffer<Node<Word>> BTree<Word>::allocate_nodes(uint64_t nodes, const std::string& what) {
  try {
    return DeviceBuffer<Node<Word>>(nodes, "btree node pool");
  } catch (const DeviceOutOfMemory& e) {  // device_allocate's message: what was needed and what is free
    throw DeviceOutOfMemory("out of device memory for B-Tree nodes: " + what + " (" + std::to_string(nodes) +
                         " nodes, " + format_bytes(nodes * sizeof(Node<Word>)) + ") could not be allocated: " + e.what());
  }
}

template <class Word>
double BTree<Word>::grow_pool(uint64_t capacity) {
  if (capacity <= capacity_) return 0.0;
  capacity = std::min<uint64_t>(capacity, 0xFFFFFFF0ull);
  // The old pool is copied into the new one, so both are held at once.
  DeviceBuffer<Node<Word>> bigger = allocate_nodes(
      capacity, "growing the pool of " + std::to_string(capacity_) + " nodes (the old and the new pool held at once)");
  const uint64_t used = used_nodes();
  timer_.start(stream_);
  if (used) GPUDICT_CUDA(cudaMemcpyAsync(bigger.data(), pool_.data(), used * sizeof(Node<Word>), cudaMemcpyDeviceToDevice,
                                         stream_));
  const double ms = timer_.stop(stream_);
  pool_ = std::move(bigger);
  capacity_ = capacity;
  ++grows_;
  return ms;
}

template <class Word>
double BTree<Word>::reserve_nodes(uint64_t free_nodes) {
  if (opt_.node_pool != 0) return 0.0;  // fixed: an overflow stops the run
  const uint64_t used = used_nodes();
  if (capacity_ - used >= free_nodes) return 0.0;
  return grow_pool(std::max<uint64_t>(used + free_nodes, capacity_ + capacity_ / 2));
}

template <class Word>
void BTree<Word>::dump(std::vector<Node<Word>>& nodes, TreeHeader& header) const {
  GPUDICT_CUDA(cudaStreamSynchronize(stream_));
  GPUDICT_CUDA(cudaMemcpy(&header, hdr_.data(), sizeof(TreeHeader), cudaMemcpyDeviceToHost));
  const uint64_t used = std::min<uint64_t>(header.next_free, capacity_);
  nodes.resize(used);
  if (used) GPUDICT_CUDA(cudaMemcpy(nodes.data(), pool_.data(), used * sizeof(Node<Word>), cudaMemcpyDeviceToHost));
}

template <class Word>
uint64_t BTree<Word>::scratch_bytes() const {
  uint64_t s = temp_.bytes() + d_scalars_.bytes() + hdr_.bytes() + d_args_.bytes() + d_types_.bytes() +
               d_found_.bytes() + d_done_.bytes() + d_value_.bytes() + d_key_out_.bytes() + d_range_cap_.bytes() +
               d_range_off_.bytes() + d_range_scan_.bytes() + d_range_slot_size_.bytes() + d_range_slot_src_.bytes() +
               d_range_slot_off_.bytes() + d_range_expect_.bytes() + d_range_keys_.bytes() + d_range_values_.bytes() +
               d_mtarget_.bytes() + d_mmerged_.bytes() + d_mleft_.bytes() + d_mfresh_.bytes() + d_mbase_.bytes() + d_iota_.bytes() +
               d_tile_lines_.bytes() + d_tile_base_.bytes() + d_top_.bytes() + d_sub_keys_.bytes() + d_sub_slots_.bytes() +
               d_sub_hi_.bytes() + d_sub_off_.bytes();
  for (int i = 0; i < 2; ++i)
    s += d_keys_[i].bytes() + d_perm_[i].bytes() + d_sep_keys_[i].bytes() + d_sep_vals_[i].bytes() +
         d_hi_slot_[i].bytes() + d_words_[i].bytes();
  return s;
}

template <class Word>
uint64_t BTree<Word>::device_bytes_needed(const capacity_bounds& wb) const {
  const uint64_t R = std::max<uint64_t>(wb.max_resident, 1), B = wb.max_batch, Q = wb.max_queries;
  // Nodes: a leaf holds at least min(7, bulk fill) keys unless deletes
  // emptied it (they never add leaves); inner nodes add at most 1/6 more.
  const uint64_t per_leaf = static_cast<uint64_t>(std::min(kCapacity / 2, leaf_fill(opt_.fill)));
  const uint64_t leaves = R / per_leaf + 2;
  const uint64_t nodes = leaves + leaves / 6 + 64;
  // Automatic pool: up to 1.5 x that after growth, and the old pool while
  // the grown one is filled.
  const uint64_t pool = opt_.node_pool ? opt_.node_pool * sizeof(Node<Word>) : (nodes * 5 / 2 + 1024) * sizeof(Node<Word>);
  // A list: keys (W bytes each, the node's word) and slots (x2 for the
  // sort), the constant slots, args (W), types, results (found, done,
  // value W, key W, room 4), an update or concurrent list's operation
  // words (x2); the bulk build sorts its pairs in the same key and slot
  // buffers (its values as words). Merged updates add 28 bytes per operation (node, N, list, new
  // nodes, scan) and 4 W for the two (low key, id) lists of new nodes (at
  // most one new node per operation). W = 4: 99 bytes per operation.
  constexpr uint64_t W = sizeof(Word);
  const uint64_t list =
      std::max(B * (2 * W + 2 * 4 + 4 + W + 1 + 1 + 1 + W + W + 4 + 8 + 8 + 28 + 4 * W), R * 4 * W);
  uint64_t cub = 0;
  {
    constexpr int kBits = static_cast<int>(8 * sizeof(Word));
    size_t bytes = 0;
    cub::DoubleBuffer<Word> dk(nullptr, nullptr);
    cub::DoubleBuffer<uint32_t> dv(nullptr, nullptr);
    if (cub::DeviceRadixSort::SortPairs(nullptr, bytes, dk, dv, std::max(B, R), 0, kBits) == cudaSuccess) cub = bytes;
    cudaGetLastError();
    // A list's sort from the constant slots (no double buffer: CUB's own).
    const Word* in = nullptr;
    Word* out = nullptr;
    const uint32_t* sin = nullptr;
    uint32_t* sout = nullptr;
    if (cub::DeviceRadixSort::SortPairs(nullptr, bytes, in, out, sin, sout, B, 0, kBits) == cudaSuccess)
      cub = std::max<uint64_t>(cub, bytes);
    cudaGetLastError();
    // A range list's, carrying (hi, slot) values (8 or 16 bytes), and an
    // update or concurrent list's, carrying 8-byte operation words.
    const HiSlot<Word>* hs_in = nullptr;
    HiSlot<Word>* hs_out = nullptr;
    if (cub::DeviceRadixSort::SortPairs(nullptr, bytes, in, out, hs_in, hs_out, std::max(Q, B), 0, kBits) ==
        cudaSuccess)
      cub = std::max<uint64_t>(cub, bytes);
    cudaGetLastError();
    cub += cub / 4 + 4096;
  }
  // Range results are allocated per batch as large as they come; a nominal
  // 8 pairs per query here: 14 with the one-pass output's headroom (the
  // estimate x 1.25 + 4 pairs, at a scale of 1: after uneven lists the
  // scale can reach 16, capped at half the free memory - ranges.cu), 26 in
  // a concurrent batch's room (count + 16 + count / 4), plus a line and two
  // 8-byte stream words per tile: a tile per query for short lists, at most
  // the resident tiles (a few tens of thousands; 2^16 here) for long ones.
  // And the (hi, slot) words of a range list, staged and sorted, and a
  // concurrent batch's range list (key, slot, bound, offset). A pair is 2 W
  // bytes.
  const uint64_t ranges = Q * (kBoundRangePairs * 2 * W + 2 * sizeof(HiSlot<Word>) + (W + 4 + W + 8)) +
                          std::min<uint64_t>(Q, uint64_t{1} << 16) * (32 * 2 * W + 16);
  // The thread ops kernel's copy of the upper levels (top_copy.cuh).
  const uint64_t top = opt_.thread_ops ? uint64_t{top_copy_nodes(B)} * sizeof(Node<Word>) : 0;
  // The leaf directory: 4 bytes per bulk-built leaf and its fences (1/31 more).
  const uint64_t directory = use_directory() ? (R / leaf_fill(opt_.fill) + 64) * 4 * 32 / 31 + 1024 : 0;
  return pool + list + cub + ranges + top + directory + 4096;
}

template <class Word>
btree_stats BTree<Word>::stats() const {
  const TreeHeader& h = h_hdr_[0];
  btree_stats s;
  s.size = h.size;
  s.device_bytes = pool_.bytes() + dir_.bytes() + scratch_bytes();
  s.height = h.height;
  s.nodes = used_nodes();
  s.leaves = h.leaves;
  s.node_bytes = s.nodes * sizeof(Node<Word>);
  s.pool_nodes = capacity_;
  s.pool_grows = grows_;
  s.pool_retries = retries_;
  s.range_reruns = range_reruns_;
  s.merged_update_lists = merged_update_lists_;
  s.ops_update_lists = ops_update_lists_;
  s.point_range_lists = point_range_lists_;
  s.tile_range_lists = tile_range_lists_;
  s.concurrent_range_reruns = concurrent_range_reruns_;
  s.grouped_updates = h.grouped;
  s.warp_taken_ops = h.warp_taken;
  s.directory_leaves = dir_.entries();
  s.directory_lists = directory_lists_;
  s.scratch_bytes = scratch_bytes();
  return s;
}

template class BTree<uint32_t>;
template class BTree<uint64_t>;

}  // namespace btree
}  // namespace gpudict
