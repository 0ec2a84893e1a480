// The lists of operations: staging buffers, sorts (as CUDA graphs), the
// operations kernel's rounds and update passes, phased query lists.
//   updates:    merged into the tree level by level (merge_updates.cu), or
//               in one validated operations kernel (phased_updates ops, and
//               auto for short lists into large trees: merges_phased_updates)
//   queries:    lookups, successors and counts one thread per query
//               (point_kernel.cuh; query_tile 4|8: the lock-step kernel,
//               query_kernel.cuh; 0: the plain operations kernel); ranges in
//               one pass (ranges.cu), or with query_tile 0 a count pass, the
//               offsets, a copy pass (two_pass_ranges)
//   mixed:      every operation in one validated kernel (device_apply.cu)
// Each list is staged by slot (its position in the list), sorted as (key,
// slot) pairs when sort is on (the operations kernel's lists, with op_words
// on: as (key, operation word), OpsRef<Word>::op_words), and its results
// come back by slot. Only device work is timed (sort, kernels, pool growth).
// Operations kernel: an automatic pool grows before an update list by an
// eighth of its inserts; should the kernel still fill it, the updates that
// could not allocate are abandoned cleanly (done flag 0) and run again after
// the pool has grown: a phased list's updates are then applied in two
// rounds, which the any-update rule allows, and a concurrent list's late
// updates look like updates that ran last. A fixed pool that fills stops
// the call (DeviceOutOfMemory).
#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <cstdint>
#include <string>

#include "core/btree/detail/btree_impl.cuh"
#include "core/btree/detail/launch.cuh"
#include "core/common/cuda_check.hpp"
#include "core/common/errors.hpp"
#include "core/common/grid.cuh"

namespace gpudict::btree {

namespace {

// Slots 0 .. n - 1; with `types`, a delete's slot tagged with kDeleteTag (the
// merged updates then read an operation's type from its sorted slot instead
// of a random access into the types).
__global__ void iota_kernel(uint32_t* out, const uint8_t* types, uint64_t n) {
  const uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = static_cast<uint32_t>(i) |
             (types && types[i] == static_cast<uint8_t>(OpType::Delete) ? kDeleteTag : 0u);
}

// Range sizes (value, by slot) in list order, widened; entry n is 0 so that
// an exclusive scan over n + 1 entries ends with the total.
template <class Word>
__global__ void gather_counts_kernel(const Word* value, const uint32_t* perm, unsigned long long* out,
                                     uint64_t n) {
  const uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = value[perm ? perm[i] : i];
  if (i == n) out[n] = 0;
}

// Offsets by list position -> by slot (entry n: the total).
__global__ void scatter_offsets_kernel(const unsigned long long* scan, const uint32_t* perm, unsigned long long* off,
                                       uint64_t n) {
  const uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) off[perm ? perm[i] : i] = scan[i];
  if (i == n) off[n] = scan[n];
}

constexpr const char* kRangeScanName = "cub::DeviceScan::ExclusiveSum (btree range offsets)";
constexpr const char* kListSortName = "cub::DeviceRadixSort::SortPairs (btree operations)";

// A list's sort by key (bits [0, key_bits): every bit of the key's width),
// carrying each operation's slot, as a CUB call for CubTemp (prepared
// before a timed region, run inside it).
template <class Word>
auto list_sort(cub::DoubleBuffer<Word>& keys, cub::DoubleBuffer<uint32_t>& perm, uint64_t n, int key_bits,
               cudaStream_t s) {
  return [&keys, &perm, n, key_bits, s](void* p, size_t& bytes) {
    return cub::DeviceRadixSort::SortPairs(p, bytes, keys, perm, n, 0, key_bits, s);
  };
}

}  // namespace

template <class Word>
void BTree<Word>::reserve_list(uint64_t n) {
  const uint64_t m = std::max<uint64_t>(n, 1);
  for (int i = 0; i < 2; ++i) {
    d_keys_[i].reserve_discard(m, "btree operation keys");
    d_perm_[i].reserve_discard(m, "btree operation slots");
  }
  d_args_.reserve_discard(m, "btree operation arguments");
  d_types_.reserve_discard(m, "btree operation types");
  d_found_.reserve_discard(m, "btree results");
  d_done_.reserve_discard(m, "btree update flags");
  d_value_.reserve_discard(m, "btree results");
  d_key_out_.reserve_discard(m, "btree results");
  d_range_cap_.reserve_discard(m, "btree range slots");
  d_range_off_.reserve_discard(m + 1, "btree range offsets");
  if (d_iota_.capacity() < m) {  // constant: written when it grows, not per sort
    d_iota_.reserve_discard(m, "btree operation slots");
    iota_kernel<<<blocks_for(d_iota_.capacity(), 256), 256, 0, stream_>>>(d_iota_.data(), nullptr,
                                                                           d_iota_.capacity());
    GPUDICT_CHECK_LAUNCH("iota_kernel");
  }
}

// A query list's sort carries the constant slots 0, 1, ... (d_iota_) into perm.
template <class Word>
void BTree<Word>::prepare_list_sort(uint64_t n, SortBits bits) {
  prepare_keyed_sort(list_graph_, kListSortName, d_iota_.data(), d_perm_[0].data(), n, bits);
}

template <class Word>
GraphCache::Key BTree<Word>::keyed_sort_key(const void* vin, const void* vout, uint64_t value_bytes, uint64_t n,
                                      SortBits bits) const {
  return {key_word(d_keys_[0].data()), key_word(d_keys_[1].data()), key_word(vin), key_word(vout),
          key_word(temp_.data()),      value_bytes, n, static_cast<uint64_t>(bits.begin),
          static_cast<uint64_t>(bits.end)};
}

template <class Word>
GraphCache::Key BTree<Word>::update_sort_key(uint64_t n) const {
  return {key_word(d_keys_[0].data()), key_word(d_keys_[1].data()), key_word(d_perm_[0].data()),
          key_word(d_perm_[1].data()), key_word(d_types_.data()), key_word(temp_.data()), n};
}

template <class Word>
OpsRef<Word> BTree<Word>::list_ref(uint64_t n, bool with_args, bool with_types, uint8_t type) {
  OpsRef<Word> ops;
  ops.n = n;
  ops.type = type;
  ops.args = with_args ? d_args_.data() : nullptr;
  ops.types = with_types ? d_types_.data() : nullptr;
  ops.found = d_found_.data();
  ops.value = d_value_.data();
  ops.key_out = d_key_out_.data();
  ops.range_offset = d_range_off_.data();
  ops.range_keys = d_range_keys_.data();
  ops.range_values = d_range_values_.data();
  ops.keys = d_keys_[0].data();
  ops.perm = nullptr;
  ops.use_finger = false;
  return ops;
}

template <class Word>
OpsRef<Word> BTree<Word>::sort_list(uint64_t n, bool with_args, bool with_types, uint8_t type, SortBits bits) {
  OpsRef<Word> ops = list_ref(n, with_args, with_types, type);
  // The sort carries the constant slots 0, 1, ... (d_iota_) into perm.
  if (sort_staged(ops, list_graph_, kListSortName, d_iota_.data(), d_perm_[0].data(), n, bits))
    ops.perm = d_perm_[0].data();
  return ops;
}

template <class Word>
void BTree<Word>::prepare_ops_sort(uint64_t n, SortBits bits) {
  if (worded(n))
    prepare_keyed_sort(list_graph_, kListSortName, d_words_[0].data(), d_words_[1].data(), n, bits);
  else
    prepare_list_sort(n, bits);
}

template <class Word>
OpsRef<Word> BTree<Word>::sort_ops(uint64_t n, SortBits bits) {
  if (!worded(n)) return sort_list(n, true, true, 0, bits);
  OpsRef<Word> ops = list_ref(n, false, false, 0);
  const bool sorted = sort_staged(ops, list_graph_, kListSortName, d_words_[0].data(), d_words_[1].data(), n, bits);
  ops.op_words = d_words_[sorted ? 1 : 0].data();
  return ops;
}

template <class Word>
int BTree<Word>::enqueue_update_sort(uint64_t n) {
  cub::DoubleBuffer<Word> keys(d_keys_[0].data(), d_keys_[1].data());
  cub::DoubleBuffer<uint32_t> perm(d_perm_[0].data(), d_perm_[1].data());
  iota_kernel<<<blocks_for(n, 256), 256, 0, stream_>>>(d_perm_[0].data(), n < kTaggedLists ? d_types_.data() : nullptr,
                                                       n);
  GPUDICT_CHECK_LAUNCH("iota_kernel");
  temp_.run(kListSortName, list_sort(keys, perm, n, key_bits_, stream_));
  return keys.selector;  // keys and slots end in the same half
}

template <class Word>
void BTree<Word>::prepare_update_sort(uint64_t n) {
  if (n < 2) return;
  cub::DoubleBuffer<Word> keys(d_keys_[0].data(), d_keys_[1].data());
  cub::DoubleBuffer<uint32_t> perm(d_perm_[0].data(), d_perm_[1].data());
  temp_.prepare(kListSortName, list_sort(keys, perm, n, key_bits_, stream_));
  // The graph keeps the half CUB leaves the output in: the same at every
  // replay, but not for every n (CUB's single-tile sort of a short list
  // ends in the other half than its four onesweep passes).
  update_graph_.prepare(update_sort_key(n), stream_, [&] { return enqueue_update_sort(n); });
}

template <class Word>
void BTree<Word>::sort_update_list(uint64_t n, const Word*& keys_out, const uint32_t*& perm_out) {
  keys_out = d_keys_[0].data();
  perm_out = nullptr;
  if (n < 2) return;
  const int out = update_graph_.run(update_sort_key(n), stream_, [&] { return enqueue_update_sort(n); });
  keys_out = d_keys_[out].data();
  perm_out = d_perm_[out].data();
}

template <class Word>
void BTree<Word>::launch_phased_queries(const TreeRef<Word>& tree, const OpsRef<Word>& list) {
  if (opt_.query_tile == 0)
    launch_ops(opt_.tile, false, tree, list, stream_);
  else
    launch_queries(opt_.query_tile, tree, list, stream_);
}

template <class Word>
uint32_t BTree<Word>::reserve_top_copy(uint64_t n) {
  if (!opt_.thread_ops) return 0;
  const uint32_t top_nodes = top_copy_nodes(n);
  if (top_nodes < 2) return 0;
  d_top_.reserve_discard(top_nodes, "btree top copy");
  return top_nodes;
}

template <class Word>
void BTree<Word>::launch_rounds(const OpsRef<Word>& list, uint32_t top_nodes) {
  // A list much larger than the tree would make thousands of tiles contend
  // for the same few nodes (at the start, one root leaf). Instead the sorted
  // list runs in rounds, each a strided subset spread over the whole key
  // range: positions 0, S, 2S, ...; then S/2 + k S; then S/4 + k S/2; ...
  // Round i + 1 adds about as many keys as the tree holds after round i, so
  // each leaf receives a few neighbouring keys, mostly from one tile.
  const uint64_t n = list.n;
  const uint64_t base = std::max<uint64_t>(h_hdr_[0].size, 1024);
  uint64_t stride = 1;
  while (n / stride > 2 * base && stride < (1ull << 30)) stride *= 2;
  OpsRef<Word> r = list;
  r.start = 0;
  r.stride = stride;
  r.n = (n + stride - 1) / stride;
  r.leaf_groups = opt_.leaf_groups;
  auto launch = [&](const OpsRef<Word>& round) {
    if (opt_.thread_ops)
      launch_thread_ops(ref(), round, d_top_.data(), top_nodes, stream_);
    else
      launch_ops(opt_.tile, true, ref(), round, stream_);
  };
  launch(r);
  for (uint64_t s = stride; s > 1; s /= 2) {
    r.start = s / 2;
    r.stride = s;
    r.n = n > s / 2 ? (n - s / 2 + s - 1) / s : 0;
    if (r.n) launch(r);
  }
}

template <class Word>
bool BTree<Word>::run_update_pass(uint64_t n, uint64_t inserts, SortBits bits, double& ms,
                                  std::vector<uint32_t>& left) {
  ms += reserve_nodes(inserts / 8 + 64);
  prepare_ops_sort(n, bits);
  const uint32_t top_nodes = reserve_top_copy(n);
  GPUDICT_CUDA(cudaMemsetAsync(d_done_.data(), 0, n, stream_));
  timer_.start(stream_);
  trace_.mark(stream_, "start");
  OpsRef<Word> list = sort_ops(n, bits);
  trace_.mark(stream_, "sort");
  list.done = d_done_.data();
  launch_rounds(list, top_nodes);
  trace_.mark(stream_, "kernel");
  ms += timer_.stop(stream_);
  trace_.flush("btree update list");
  sync_header();
  if (!h_hdr_[0].overflow) return true;
  if (opt_.node_pool != 0) throw_pool_full("an update batch of " + std::to_string(n) + " operations");
  // Run the updates that found the pool full again, after it has grown.
  h_done_.reserve_discard(n);
  copy_to_host(stream_, h_done_.data(), d_done_.data(), n);
  left.clear();
  for (uint64_t s = 0; s < n; ++s)
    if (!h_done_[s]) left.push_back(static_cast<uint32_t>(s));
  clear_overflow();
  // Counted before growing: a growth that fails still leaves this fill
  // counted (the structural checker allows a lost node per fill).
  ++retries_;
  ms += grow_pool(std::max<uint64_t>(capacity_ * 2, used_nodes() + left.size() + 1024));
  return false;
}

template <class Word>
double BTree<Word>::two_pass_ranges(uint64_t n, SortBits bits, uint64_t* pairs) {
  // The operations kernel (query_tile 0): a count pass, then offsets in the
  // sorted list's order (neighbouring ranges write neighbouring output),
  // computed on the device (gather by position, scan, scatter back by
  // slot), then a copy pass. Sizes are exact: nothing changes the tree
  // between the passes.
  double ms = 0.0;
  OpsRef<Word> list = run_query_list(OpType::Range, n, bits, true, ms);
  timer_.start(stream_);
  gather_counts_kernel<<<blocks_for(n + 1, 256), 256, 0, stream_>>>(d_value_.data(), list.perm, d_range_off_.data(),
                                                                    n);
  GPUDICT_CHECK_LAUNCH("gather_counts_kernel");
  temp_.run(kRangeScanName, exclusive_sum_u64(d_range_off_.data(), d_range_scan_.data(), n + 1, stream_));
  scatter_offsets_kernel<<<blocks_for(n + 1, 256), 256, 0, stream_>>>(d_range_scan_.data(), list.perm,
                                                                      d_range_off_.data(), n);
  GPUDICT_CHECK_LAUNCH("scatter_offsets_kernel");
  ms += timer_.stop(stream_);
  copy_to_host(stream_, h_u64_.data(), d_range_off_.data() + n, sizeof(unsigned long long));
  const uint64_t total = h_u64_[0];
  if (pairs) *pairs = total;
  if (total > 0) {
    reserve_range_pairs(total);
    list.type = static_cast<uint8_t>(OpType::Range);
    list.range_cap = nullptr;
    list.range_keys = d_range_keys_.data();
    list.range_values = d_range_values_.data();
    timer_.start(stream_);
    launch_phased_queries(ref(), list);
    ms += timer_.stop(stream_);
    sync_header();
  }
  return ms;
}

template <class Word>
OpsRef<Word> BTree<Word>::run_query_list(OpType type, uint64_t n, SortBits bits, bool two_keys, double& ms) {
  // The operations kernel (--query-tile 0): ranges in two passes, a count
  // pass and a copy pass to offsets from a scan of the counts.
  if (type == OpType::Range) {
    d_range_scan_.reserve_discard(n + 1, "btree range offsets");
    temp_.prepare(kRangeScanName, exclusive_sum_u64(d_range_off_.data(), d_range_scan_.data(), n + 1, stream_));
  }
  // Lookups and successors of a bulk-built tree: through its leaf directory,
  // in batch order (leaf_directory.cuh); else sorted, from the root.
  const bool by_directory = use_directory() && dir_.fresh(h_hdr_[0].leaves) &&
                            (type == OpType::Lookup || type == OpType::Successor);
  if (!by_directory) prepare_list_sort(n, bits);  // after the list's other CUB sizing: its graph keys on the CUB buffer
  const uint8_t code = static_cast<uint8_t>(type == OpType::Range ? OpType::Count : type);
  timer_.start(stream_);
  trace_.mark(stream_, "start");
  OpsRef<Word> list = by_directory ? list_ref(n, two_keys, false, code) : sort_list(n, two_keys, false, code, bits);
  trace_.mark(stream_, "sort");
  if (by_directory) {
    // The deferred lookups' list in the sort's slot buffer (no sort here).
    if constexpr (sizeof(Word) == 4) {  // (use_directory(): 32-bit trees only)
      dir_.launch_queries(ref(), list, d_perm_[0].data(),
                          reinterpret_cast<uint32_t*>(d_scalars_.data() + kDeferredCount), stream_);
    }
    ++directory_lists_;
  } else {
    launch_phased_queries(ref(), list);
  }
  trace_.mark(stream_, "queries");
  ms += timer_.stop(stream_);
  trace_.flush("btree phased queries");
  sync_header();

  return list;
}

template class BTree<uint32_t>;
template class BTree<uint64_t>;

}  // namespace gpudict::btree
