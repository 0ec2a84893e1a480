// execute(): a batch as lists of operations.
//   phased:     the updates (inserts and deletes together) merged into the
//               tree level by level (merge_updates.cu), or in one validated
//               operations kernel (--phased-updates ops, and auto for short
//               lists into large trees: merges_phased_updates); then
//               each query type in its own list: lookups, successors and
//               counts one thread per query (point_kernel.cuh; --query-tile
//               4|8: the lock-step kernel, query_kernel.cuh; 0: the plain
//               operations kernel). Ranges: one pass in the lock-step kernel
//               (ranges.cu); in the operations kernel a count pass, the
//               offsets, a copy pass
//   concurrent: every operation in one validated kernel. A range writes its
//               pairs into a slot sized by a count on the pre-batch tree plus
//               slack (the batch's ranges picked from its sorted list,
//               counted and given their slots on the device); a range that
//               outgrows its slot (inserts of the batch landing in it) is
//               answered again after the kernel, on the final tree, which
//               the concurrent semantics also allow
// Each list is staged by slot (its position in the list), sorted as (key,
// slot) pairs when --sort on (the operations kernel's lists, with --op-words
// on: as (key, operation word), OpsRef<Word>::op_words), and its results come
// back by slot. Only device
// work is timed (sort, kernels, pool growth); staging and copies are not.
// Operations kernel: an automatic pool grows before an update list by an eighth of its inserts;
// should the kernel still fill it, the updates that could not allocate are
// abandoned cleanly (done flag 0) and run again after the pool has grown: a
// phased batch's updates are then applied in two rounds, which the any-update
// rule allows, and a concurrent batch's late updates look like updates that
// ran last. A fixed pool that fills stops the run (exit 3).
#include <cub/device/device_radix_sort.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/device/device_select.cuh>

#include <algorithm>
#include <cstdint>
#include <numeric>
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
constexpr const char* kSelectRangesName = "cub::DeviceSelect::If (btree concurrent ranges)";

// A list position's slot and type: from its operation word, or from the
// permutation and the types by slot.
struct RangeAt {
  const unsigned long long* words = nullptr;
  const uint32_t* perm = nullptr;
  const uint8_t* types = nullptr;
  __device__ uint32_t slot(uint32_t pos) const {
    return words ? word_slot(words[pos]) : perm ? perm[pos] : pos;
  }
  // Whether position pos holds a range.
  __device__ bool operator()(uint32_t pos) const {
    const uint32_t type = words ? word_type(words[pos]) : types[perm ? perm[pos] : pos];
    return type == static_cast<uint32_t>(OpType::Range);
  }
};

// The positions of a list's ranges, in list order (so still sorted by key):
// positions 0 .. n - 1 (the constant iota) selected by RangeAt.
auto select_ranges(RangeAt at, const uint32_t* iota, uint32_t* out, unsigned long long* selected, uint64_t n,
                   cudaStream_t s) {
  return [=](void* p, size_t& bytes) {
    return cub::DeviceSelect::If(p, bytes, iota, out, selected, static_cast<int64_t>(n), at, s);
  };
}

// Selected positions (in sub_slots) -> their keys, slots (in place) and
// upper bounds (args: by slot; null: in the words).
template <class Word>
__global__ void gather_sub_list_kernel(RangeAt at, const Word* keys, const Word* args, Word* sub_keys,
                                       uint32_t* sub_slots, Word* sub_hi, uint64_t m) {
  const uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= m) return;
  const uint32_t pos = sub_slots[i];
  const uint32_t j = at.slot(pos);
  sub_keys[i] = keys[pos];
  sub_slots[i] = j;
  sub_hi[i] = at.words ? static_cast<Word>(at.words[pos] >> 32) : args[j];
}

// A concurrent range's room: its pre-batch count and slack for inserts of
// the same batch landing in it.
template <class Word>
__device__ __forceinline__ uint32_t range_room(Word count) {
  const uint64_t room = static_cast<uint64_t>(count) + 16 + count / 4;
  return static_cast<uint32_t>(room < 0xFFFFFFF0ull ? room : 0xFFFFFFF0ull);
}

// A concurrent batch's ranges, i < m in list order with slots sub_slots:
// each one's room from its pre-batch count (value[i]) into cap, and its
// first output position into off (both by slot) and sub_off (by list
// position). Each block reserves its ranges' rooms with one atomicAdd on
// the cursor (one per warp made 2^15 atomics on one address for 2^20
// ranges), so the blocks' regions lie in no particular order (each range's
// pairs are contiguous, which is all its offset promises).
constexpr int kRoomBlock = 256;
template <class Word>
__global__ void __launch_bounds__(kRoomBlock) range_room_kernel(const Word* value, const uint32_t* sub_slots,
                                                                uint32_t* cap, unsigned long long* off,
                                                                unsigned long long* sub_off,
                                                                unsigned long long* cursor, uint64_t m) {
  using Scan = cub::BlockScan<unsigned long long, kRoomBlock>;
  __shared__ typename Scan::TempStorage scan;
  __shared__ unsigned long long base;
  const uint64_t i = static_cast<uint64_t>(blockIdx.x) * kRoomBlock + threadIdx.x;
  const unsigned long long room = i < m ? range_room(value[i]) : 0u;
  unsigned long long before = 0, total = 0;
  Scan(scan).ExclusiveSum(room, before, total);
  if (threadIdx.x == 0) base = atomicAdd(cursor, total);
  __syncthreads();
  if (i < m) {
    const uint32_t j = sub_slots[i];
    const unsigned long long o = base + before;
    cap[j] = static_cast<uint32_t>(room);
    off[j] = o;
    sub_off[i] = o;
  }
}

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
  h_keys_.reserve_discard(m);
  h_args_.reserve_discard(m);
  h_types_.reserve_discard(m);
  h_found_.reserve_discard(m);
  h_done_.reserve_discard(m);
  h_value_.reserve_discard(m);
  h_key_out_.reserve_discard(m);
  h_cap_.reserve_discard(m);
  h_u64_.reserve_discard(m + 1);
}

template <class Word>
SortBits BTree<Word>::stage(const Batch& b, const std::vector<uint32_t>& ops, bool with_args, bool with_types) {
  const uint64_t n = ops.size();
  reserve_list(n);
  Word lo = key_max<Word>, hi = 0;
  for (uint64_t s = 0; s < n; ++s) {
    const Word k = static_cast<Word>(b.keys[ops[s]]);
    h_keys_[s] = k;
    lo = std::min(lo, k);
    hi = std::max(hi, k);
  }
  copy_to_device(stream_, d_keys_[0].data(), h_keys_.data(), n * sizeof(Word));
  if (with_args) {
    for (uint64_t s = 0; s < n; ++s) h_args_[s] = static_cast<Word>(b.args[ops[s]]);
    copy_to_device(stream_, d_args_.data(), h_args_.data(), n * sizeof(Word));
  }
  if (with_types) {
    for (uint64_t s = 0; s < n; ++s) h_types_[s] = static_cast<uint8_t>(b.types[ops[s]]);
    copy_to_device(stream_, d_types_.data(), h_types_.data(), n);
  }
  return query_sort_bits_of(lo, hi, n);
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
SortBits BTree<Word>::stage_ops(const Batch& b, const std::vector<uint32_t>& ops) {
  const uint64_t n = ops.size();
  if (!worded(n)) return stage(b, ops, true, true);
  const SortBits bits = stage(b, ops, false, false);
  for (auto& d : d_words_) d.reserve_discard(std::max<uint64_t>(n, 1), "btree operation words");
  for (uint64_t s = 0; s < n; ++s) {
    const uint32_t i = ops[s];
    h_u64_[s] = op_word(static_cast<uint32_t>(s), static_cast<uint32_t>(b.types[i]), static_cast<uint32_t>(b.args[i]));
  }
  copy_to_device(stream_, d_words_[0].data(), h_u64_.data(), n * sizeof(unsigned long long));
  return bits;
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
void BTree<Word>::execute(const Batch& batch, BatchResults& r, DeviceTime& t) {
  if (batch.keys.size() != batch.types.size() || batch.args.size() != batch.types.size())
    throw InputError("btree: batch arrays differ in length");
  if (!batch.snapshot.empty())
    throw InputError("btree does not support snapshots (batch asks for snapshot '" + batch.snapshot + "')");
  if (batch.size() >= 0xFFFFFFFFull) throw InputError("btree: a batch holds at most 2^32 - 2 operations");
  require_pool();
  r.reset(batch.size());
  if (batch.size() == 0) return;
  const BatchPlan plan(batch);
  for (uint32_t i : plan.of(OpType::Insert)) {  // the keys' span (one-pass range sizing; deletes ignored)
    key_lo_ = std::min<Word>(key_lo_, static_cast<Word>(batch.keys[i]));
    key_hi_ = std::max<Word>(key_hi_, static_cast<Word>(batch.keys[i]));
  }
  const bool concurrent = batch.mode == ExecMode::Concurrent;
  if (concurrent && plan.updates() > 0 && plan.queries() > 0) {
    run_concurrent(batch, plan, r, t);
    return;
  }
  // Phased, or concurrent with only updates or only queries (the same thing).
  if (plan.updates() > 0) {
    std::vector<uint32_t> ups = plan.of(OpType::Insert);
    const auto& dels = plan.of(OpType::Delete);
    ups.insert(ups.end(), dels.begin(), dels.end());
    if (!concurrent && merges_phased_updates(opt_, ups.size(), h_hdr_[0].size)) {
      ++merged_update_lists_;
      run_merged_updates(batch, ups, t);
    } else {
      if (!concurrent) ++ops_update_lists_;
      run_updates(batch, std::move(ups), concurrent ? Phase::Concurrent : Phase::Update, t);
    }
  }
  for (OpType type : {OpType::Lookup, OpType::Count, OpType::Range, OpType::Successor}) {
    const auto& ops = plan.of(type);
    if (!ops.empty()) run_queries(type, batch, ops, concurrent ? Phase::Concurrent : query_phase(type), r, t);
  }
}

template <class Word>
void BTree<Word>::run_updates(const Batch& b, std::vector<uint32_t> ops, Phase phase, DeviceTime& t) {
  std::vector<uint32_t> left;
  while (!ops.empty()) {
    uint64_t inserts = 0;
    for (uint32_t i : ops) inserts += b.types[i] == OpType::Insert;
    if (run_update_pass(ops.size(), inserts, [&] { return stage_ops(b, ops); }, phase, t, left)) return;
    for (uint32_t& s : left) s = ops[s];  // list positions -> batch positions
    ops.swap(left);
  }
}

template <class Word>
bool BTree<Word>::run_update_pass(uint64_t n, uint64_t inserts, const std::function<SortBits()>& stage, Phase phase,
                                  DeviceTime& t, std::vector<uint32_t>& left) {
  double ms = reserve_nodes(inserts / 8 + 64);
  const SortBits bits = stage();
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
  t.add(phase, ms);
  sync_header();
  if (!h_hdr_[0].overflow) return true;
  if (opt_.node_pool != 0) throw_pool_full("an update batch of " + std::to_string(n) + " operations");
  // Run the updates that found the pool full again, after it has grown.
  copy_to_host(stream_, h_done_.data(), d_done_.data(), n);
  left.clear();
  for (uint64_t s = 0; s < n; ++s)
    if (!h_done_[s]) left.push_back(static_cast<uint32_t>(s));
  clear_overflow();
  // Counted before growing: a growth that fails still leaves this fill
  // counted (the structural checker allows a lost node per fill).
  ++retries_;
  t.add(phase, grow_pool(std::max<uint64_t>(capacity_ * 2, used_nodes() + left.size() + 1024)));
  return false;
}

template <class Word>
void BTree<Word>::run_queries(OpType type, const Batch& b, const std::vector<uint32_t>& ops, Phase phase, BatchResults& r,
                        DeviceTime& t) {
  const uint64_t n = ops.size();
  if (n == 0) return;
  if (type == OpType::Range && opt_.query_tile != 0) {  // one pass (ranges.cu)
    RangeLayout layout;
    const double ms = run_ranges(b, ops, layout);
    collect_ranges(ops, r, layout);
    t.add(phase, ms);
    return;
  }
  const bool two_keys = type == OpType::Count || type == OpType::Range;
  const SortBits bits = stage(b, ops, two_keys, false);
  double ms = 0.0;
  OpsRef<Word> list = run_query_list(type, n, bits, two_keys, ms);

  switch (type) {
    case OpType::Lookup:
    case OpType::Successor: {
      copy_to_host(stream_, h_found_.data(), d_found_.data(), n);
      copy_to_host(stream_, h_value_.data(), d_value_.data(), n * sizeof(Word));
      if (type == OpType::Successor) copy_to_host(stream_, h_key_out_.data(), d_key_out_.data(), n * sizeof(Word));
      for (uint64_t s = 0; s < n; ++s) {
        const uint32_t i = ops[s];
        r.found[i] = h_found_[s];
        r.value[i] = h_found_[s] ? h_value_[s] : 0;
        if (type == OpType::Successor) r.key[i] = h_found_[s] ? h_key_out_[s] : 0;
      }
      break;
    }
    case OpType::Count: {
      copy_to_host(stream_, h_value_.data(), d_value_.data(), n * sizeof(Word));
      for (uint64_t s = 0; s < n; ++s) r.value[ops[s]] = h_value_[s];
      break;
    }
    case OpType::Range: {
      // Sizes are exact (nothing changes between the passes). Offsets follow
      // the sorted list order (neighbouring ranges write neighbouring
      // output); computed on the device (gather by position, scan, scatter
      // back by slot).
      timer_.start(stream_);
      gather_counts_kernel<<<blocks_for(n + 1, 256), 256, 0, stream_>>>(d_value_.data(), list.perm,
                                                                        d_range_off_.data(), n);
      GPUDICT_CHECK_LAUNCH("gather_counts_kernel");
      temp_.run(kRangeScanName, exclusive_sum_u64(d_range_off_.data(), d_range_scan_.data(), n + 1, stream_));
      scatter_offsets_kernel<<<blocks_for(n + 1, 256), 256, 0, stream_>>>(d_range_scan_.data(), list.perm,
                                                                          d_range_off_.data(), n);
      GPUDICT_CHECK_LAUNCH("scatter_offsets_kernel");
      ms += timer_.stop(stream_);
      copy_to_host(stream_, h_u64_.data(), d_range_off_.data() + n, sizeof(unsigned long long));
      const uint64_t total = h_u64_[0];
      if (total > 0) {
        d_range_keys_.reserve_discard(total, "btree range results");
        d_range_values_.reserve_discard(total, "btree range results");
        list.type = static_cast<uint8_t>(OpType::Range);
        list.range_cap = nullptr;
        list.range_keys = d_range_keys_.data();
        list.range_values = d_range_values_.data();
        timer_.start(stream_);
        launch_phased_queries(ref(), list);
        ms += timer_.stop(stream_);
        sync_header();
      }
      collect_ranges(ops, r, RangeLayout{});  // by slot, contiguous
      break;
    }
    default: throw InputError("btree: " + std::string(op_name(type)) + " is not a query");
  }
  t.add(phase, ms);
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

template <class Word>
void BTree<Word>::run_concurrent(const Batch& b, const BatchPlan& plan, BatchResults& r, DeviceTime& t) {
  const uint64_t n = b.size();
  const uint64_t m = plan.of(OpType::Range).size();

  std::vector<uint32_t> all(n);
  std::iota(all.begin(), all.end(), 0u);
  double ms = reserve_nodes(plan.of(OpType::Insert).size() / 8 + 64);
  const SortBits bits = stage_ops(b, all);
  if (m > 0) {
    d_sub_keys_.reserve_discard(m, "btree range list");
    d_sub_slots_.reserve_discard(m, "btree range list");
    d_sub_hi_.reserve_discard(m, "btree range list");
    d_sub_off_.reserve_discard(m, "btree range list");
    temp_.prepare(kSelectRangesName, select_ranges(RangeAt{}, d_iota_.data(), d_sub_slots_.data(),
                                                   d_scalars_.data() + kSelectedCount, n, stream_));
    GPUDICT_CUDA(cudaMemsetAsync(d_scalars_.data() + kRangeCursor, 0, sizeof(unsigned long long), stream_));
  }
  prepare_ops_sort(n, bits);  // after the other CUB sizing: the sort's graph keys on the CUB buffer
  const uint32_t top_nodes = reserve_top_copy(n);
  GPUDICT_CUDA(cudaMemsetAsync(d_done_.data(), 0, n, stream_));
  timer_.start(stream_);
  trace_.mark(stream_, "start");
  OpsRef<Word> list = sort_ops(n, bits);
  trace_.mark(stream_, "sort");

  // Range slots: a count on the tree as it is before the batch, plus slack
  // (range_room). The counts run over the sorted list's ranges, picked out
  // in list order (no sort of their own).
  uint64_t slots = 0;
  if (m > 0) {
    const RangeAt at{list.op_words, list.perm, list.types};
    temp_.run(kSelectRangesName, select_ranges(at, d_iota_.data(), d_sub_slots_.data(),
                                               d_scalars_.data() + kSelectedCount, n, stream_));
    gather_sub_list_kernel<<<blocks_for(m, 256), 256, 0, stream_>>>(at, list.keys, list.args, d_sub_keys_.data(),
                                                                      d_sub_slots_.data(), d_sub_hi_.data(), m);
    GPUDICT_CHECK_LAUNCH("gather_sub_list_kernel");
    trace_.mark(stream_, "range list");
    // The counts by position in the sub-list, in d_value_[0, m): read by
    // the room kernel before the batch's kernel writes its results there.
    OpsRef<Word> sizing = list_ref(m, false, false, static_cast<uint8_t>(OpType::Count));
    sizing.keys = d_sub_keys_.data();
    sizing.args = d_sub_hi_.data();
    sizing.use_finger = list.use_finger;
    launch_phased_queries(ref(), sizing);
    trace_.mark(stream_, "range counts");
    range_room_kernel<<<blocks_for(m, kRoomBlock), kRoomBlock, 0, stream_>>>(
        d_value_.data(), d_sub_slots_.data(), d_range_cap_.data(), d_range_off_.data(), d_sub_off_.data(),
        d_scalars_.data() + kRangeCursor, m);
    GPUDICT_CHECK_LAUNCH("range_room_kernel");
    trace_.mark(stream_, "range rooms");
    ms += timer_.stop(stream_);
    trace_.flush("btree concurrent, before the kernel");
    sync_header();
    copy_to_host(stream_, h_u64_.data(), d_scalars_.data() + kRangeCursor, sizeof(unsigned long long));
    slots = h_u64_[0];
    // Outside the timed region: the results may need a larger buffer. The
    // device then idles; settled, the timer does not count the wait for
    // the host's next launch.
    d_range_keys_.reserve_discard(std::max<uint64_t>(slots, 1), "btree range results");
    d_range_values_.reserve_discard(std::max<uint64_t>(slots, 1), "btree range results");
    timer_.start_settled(stream_);
    trace_.mark(stream_, "start");
  }

  list.done = d_done_.data();
  list.range_cap = d_range_cap_.data();
  list.range_keys = d_range_keys_.data();
  list.range_values = d_range_values_.data();
  launch_rounds(list, top_nodes);
  trace_.mark(stream_, "kernel");
  ms += timer_.stop(stream_);
  trace_.flush("btree concurrent");
  sync_header();

  // Results by batch index; each range's first output position by slot.
  std::vector<unsigned long long> offset;
  if (m > 0) {
    offset.assign(n, 0);
    copy_to_host(stream_, h_u64_.data(), d_sub_off_.data(), m * sizeof(unsigned long long));
    copy_to_host(stream_, h_cap_.data(), d_sub_slots_.data(), m * sizeof(uint32_t));
    for (uint64_t x = 0; x < m; ++x) offset[h_cap_[x]] = h_u64_[x];
  }
  copy_to_host(stream_, h_found_.data(), d_found_.data(), n);
  copy_to_host(stream_, h_value_.data(), d_value_.data(), n * sizeof(Word));
  copy_to_host(stream_, h_key_out_.data(), d_key_out_.data(), n * sizeof(Word));
  std::vector<uint32_t> rerun;
  for (uint64_t i = 0; i < n; ++i) {
    switch (b.types[i]) {
      case OpType::Lookup:
        r.found[i] = h_found_[i];
        r.value[i] = h_found_[i] ? h_value_[i] : 0;
        break;
      case OpType::Successor:
        r.found[i] = h_found_[i];
        r.key[i] = h_found_[i] ? h_key_out_[i] : 0;
        r.value[i] = h_found_[i] ? h_value_[i] : 0;
        break;
      case OpType::Count: r.value[i] = h_value_[i]; break;
      case OpType::Range:
        if (h_value_[i] == kRangeOverflow) {
          rerun.push_back(static_cast<uint32_t>(i));
        } else {
          r.key[i] = offset[i];
          r.value[i] = h_value_[i];
        }
        break;
      default: break;
    }
  }
  if (slots > 0) {
    h_keys_.reserve_discard(slots);
    h_args_.reserve_discard(slots);
    copy_to_host(stream_, h_keys_.data(), d_range_keys_.data(), slots * sizeof(Word));
    copy_to_host(stream_, h_args_.data(), d_range_values_.data(), slots * sizeof(Word));
    r.range_keys.resize(slots);
    r.range_values.resize(slots);
    for (uint64_t x = 0; x < slots; ++x) {
      r.range_keys[x] = h_keys_[x];
      r.range_values[x] = h_args_[x];
    }
  }
  // Slots between ranges hold unused words; each range's pairs are contiguous.

  std::vector<uint32_t> late;
  if (h_hdr_[0].overflow) {
    if (opt_.node_pool != 0) throw_pool_full("a concurrent batch of " + std::to_string(n) + " operations");
    copy_to_host(stream_, h_done_.data(), d_done_.data(), n);
    for (uint64_t i = 0; i < n; ++i)
      if (is_update(b.types[i]) && !h_done_[i]) late.push_back(static_cast<uint32_t>(i));
    clear_overflow();
    ++retries_;  // before growing, as in run_updates
    ms += grow_pool(std::max<uint64_t>(capacity_ * 2, used_nodes() + late.size() + 1024));
  }
  t.add(Phase::Concurrent, ms);
  if (!late.empty()) run_updates(b, std::move(late), Phase::Concurrent, t);
  // Ranges that outgrew their slots: answered on the final tree.
  concurrent_range_reruns_ += rerun.size();
  if (!rerun.empty()) run_queries(OpType::Range, b, rerun, Phase::Concurrent, r, t);
}

template class BTree<uint32_t>;
template class BTree<uint64_t>;

}  // namespace gpudict::btree
