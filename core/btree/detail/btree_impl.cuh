// The B-Tree behind btree_map (internal). Its members are defined across
// small files:
//   btree.cu              validate(Options), construction, the node pool
//                         (sizing, growth, overflow), stats, the memory bound
//   staging.cu            a caller's device arrays into a list, and what the
//                         list's planning needs to know of it
//   device_api.cu         build, updates, lookups/successors/counts
//   device_ranges.cu      ranges, their output laid out for the caller
//   device_apply.cu       mixed calls: every operation in one kernel
//   build.cu              the bulk build: sort, keep-last dedupe, bottom-up nodes
//   batch.cu              the lists: buffers, sorts, the operations kernel's
//                         rounds and update passes, phased query lists
//   ranges.cu             phased ranges in one pass
//   merge_updates.cu      phased updates merged level by level
//   check.cu              the structural checker (btree_check.hpp)
//   ops_kernel.cuh        the operations (device), kernels_*.cu instantiate them
//   point_kernel.cuh      phased lookups, successors, counts: a thread each (kernels_query.cu)
//   leaf_directory.cu     the same from the bulk build's leaf directory, unsorted
//   thread_node.cuh       a node in one thread's registers: search, child, insert, remove
//   query_kernel.cuh      phased queries in lock-step: ranges, or all with --query-tile 4|8
#pragma once

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/common/ops.hpp"
#include "core/btree/btree_map.hpp"
#include "core/common/capacity_bounds.hpp"
#include "core/common/device_timing.hpp"
#include "core/btree/detail/leaf_directory.cuh"
#include "core/btree/detail/node.hpp"
#include "core/btree/options.hpp"
#include "core/btree/detail/ops_kernel.cuh"
#include "core/btree/detail/sort_bits.hpp"
#include "core/common/cub_temp.cuh"
#include "core/common/stream_copy.hpp"
#include "core/common/device_buffer.hpp"
#include "core/common/event_timer.hpp"
#include "core/common/graph_cache.hpp"
#include "core/common/key_traits.hpp"
#include "core/common/trace_events.hpp"
#include "core/common/pinned_buffer.cuh"
#include "core/common/stream_follow.hpp"

namespace gpudict::btree {

// A sorted update list's slot with this bit set is a delete (merged updates;
// lists of fewer than kTaggedLists updates, longer ones read their types).
inline constexpr uint32_t kDeleteTag = 0x80000000u;
inline constexpr uint64_t kTaggedLists = 1ull << 31;

// An exclusive sum of `items` u64 counts (range offsets, new-node numbers),
// as a CUB call for CubTemp.
inline auto exclusive_sum_u64(const unsigned long long* in, unsigned long long* out, uint64_t items,
                              cudaStream_t s) {
  return [in, out, items, s](void* p, size_t& bytes) {
    return cub::DeviceScan::ExclusiveSum(p, bytes, in, out, static_cast<int64_t>(items), s);
  };
}

// Whether a phased list of `updates` inserts and deletes into a tree of
// `keys` keys is merged (merge_updates.cu) rather than run by the
// operations kernel.
// Update lists of at most this many operations (without types) are
// planned without reading the staging pass's facts: a wait for the device
// costs more than their sort saves from knowing the keys' span.
constexpr uint64_t kUnreadFactsMaxList = 1ull << 16;

inline bool merges_phased_updates(const Options& o, uint64_t updates, uint64_t keys) {
  switch (effective_phased_updates(o)) {
    case PhasedUpdates::Merge: return true;
    case PhasedUpdates::Ops: return false;
    case PhasedUpdates::Auto: break;
  }
  return updates > kAutoOpsMaxUpdates || updates > keys / kAutoOpsTreeRatio;
}

// The shape of a bulk-built tree: level sizes (0 = leaves) and where each
// level's nodes start in the pool. The single top node is the root, node 0.
struct LevelPlan {
  static constexpr int kMaxLevels = 40;
  int levels = 1;
  uint64_t size[kMaxLevels] = {};
  uint64_t base[kMaxLevels] = {};
  uint64_t total = 1;  // nodes
  uint64_t keys = 0;
  __host__ __device__ uint32_t id(int level, uint64_t i) const {
    return level == levels - 1 ? kRoot : static_cast<uint32_t>(base[level] + i);
  }
};
LevelPlan plan_levels(uint64_t keys, int leaf_keys, int inner_children);

// CUB's radix sort of keys kin -> kout on key bits `bits`, carrying values
// vin -> vout, as a CubTemp call.
template <class K, class V>
auto keyed_sort_call(const K* kin, K* kout, const V* vin, V* vout, uint64_t n, cudaStream_t s, SortBits bits) {
  return [=](void* p, size_t& bytes) {
    return cub::DeviceRadixSort::SortPairs(p, bytes, kin, kout, vin, vout, n, bits.begin, bits.end, s);
  };
}

// Phased ranges run with one thread each (--query-tile 1) while a list's
// ranges are expected to hold at most this many pairs each (ranges.cu).
inline constexpr double kPointRangeMaxMean = 48.0;

// n, when a list of n operations from a caller's arrays fits a list's
// 32-bit positions; else InputError naming `what` (device_api.cu).
uint64_t checked_list(uint64_t n, const char* what);

// Operations staged from a caller's device arrays (the library's bulk
// calls, btree_map.hpp): n keys of key_bytes (4 or 8) each. An operation's
// type: types[i] (OpType codes) when given, else Delete where erase[i] and
// Insert elsewhere when erase is given, else `type` for all. An insert's
// value is args[i] (arg_bytes wide; null: 0); a count's or range's upper
// bound upper[i] (upper_bytes wide; null: its own key). index (device,
// optional): the array positions to take, in list order (a re-run of some
// of a list's operations); null: 0 .. n - 1.
struct DeviceSource {
  const void* keys = nullptr;
  int key_bytes = 4;
  const void* args = nullptr;
  int arg_bytes = 4;
  const void* upper = nullptr;
  int upper_bytes = 4;
  uint8_t type = 0;
  const uint8_t* types = nullptr;
  const bool* erase = nullptr;
  const uint32_t* index = nullptr;
  uint64_t n = 0;
};

// What staging a list learned of it on the device (staging.cu): its keys'
// span, its inserts' span and number, its ranges, and which types occur
// (bit 1 << type; kBadType: a code that is no OpType).
template <class Word>
struct Staged {
  Word lo = key_max<Word>, hi = 0;
  Word insert_lo = key_max<Word>, insert_hi = 0;
  uint64_t inserts = 0, ranges = 0;
  uint32_t kinds = 0;
  static constexpr uint32_t kBadType = 1u << 7;
  bool has(OpType t) const { return (kinds >> static_cast<int>(t)) & 1u; }
  bool has_updates() const { return has(OpType::Insert) || has(OpType::Delete); }
  bool has_queries() const { return (kinds & ~3u) != 0; }
};

// A mixed call's per-operation outputs (btree_map::apply, mixed_batch.hpp),
// narrowed to the caller's widths; any may be null.
struct MixedOutputs {
  bool* found = nullptr;
  void* values = nullptr;
  int value_bytes = 4;
  void* keys = nullptr;
  int key_bytes = 4;
  unsigned long long* counts = nullptr;
  unsigned long long* offsets = nullptr;
  uint32_t kinds_hint = 0;  // bit 1 << op_code of every code in the call (0: unknown)
};

// A mixed call's range pairs, as words in the tree's memory: a range's
// pairs are contiguous at its offset; between ranges lie unused words.
template <class Word>
struct MixedPairs {
  const Word* keys = nullptr;
  const Word* values = nullptr;
  uint64_t size = 0;
};

// The B-Tree behind btree_map<K, V> (btree_map.cu). Word: the node's word
// type (node.hpp), the wider of the key and value types: uint32_t for u32
// keys and values, uint64_t when either is 64-bit. Keys, arguments and
// results are of that width on the device. Every call works on the tree's
// own stream and returns when its results are written.
template <class Word>
class BTree {
 public:
  BTree(int device, const Options& options, int key_bits);
  ~BTree();
  BTree(const BTree&) = delete;
  BTree& operator=(const BTree&) = delete;

  const Options& options() const { return opt_; }
  // Device bytes for contents and calls within `b` (btree.cu).
  uint64_t device_bytes_needed(const capacity_bounds& b) const;
  // The counters as of the last call, the pool and the lists' paths.
  btree_stats stats() const;
  // Every later call adds the device time of its sorts, kernels and pool
  // copies to *timing (null: none).
  void set_timing(device_timing* timing) { timing_ = timing; }

  // The used part of the node pool and the counters (the structural checker).
  void dump(std::vector<Node<Word>>& nodes, TreeHeader& header) const;

  // device_api.cu: the library's bulk calls on device arrays.
  // Replaces the contents with the pairs (keys, args): the later pair of a key wins.
  void build_device(const DeviceSource& pairs);
  // Inserts (upserts) and deletes, as a phased batch: merged, or through
  // the operations kernel (merges_phased_updates).
  void update_device(const DeviceSource& src);
  // Lookups, successors or counts (src.type): value_out[i] (found's value,
  // a successor's value, a count), key_out[i] (a successor's key),
  // found_out[i]; null outputs are skipped, a value or key not found is 0.
  void query_device(const DeviceSource& src, void* value_out, int value_bytes, void* key_out, int key_bytes,
                    bool* found_out);
  // device_ranges.cu: ranges [key, upper]: offsets_out (n + 1 entries, may
  // be null) the exclusive sum of their sizes in list order; their pairs
  // into keys_out and values_out (of key_bytes and value_bytes; either may
  // be null) when the total fits `capacity`. Returns the total.
  uint64_t range_device(const DeviceSource& src, unsigned long long* offsets_out, void* keys_out, int key_bytes,
                        void* values_out, int value_bytes, uint64_t capacity);
  // device_apply.cu: operations of any types as one concurrent pass
  // (docs/semantics.md, "concurrent"): results by position into `out`,
  // range pairs returned (valid until the next call).
  MixedPairs<Word> apply_device(const DeviceSource& src, const MixedOutputs& out);
  // The device view for a caller's kernels (btree_ref.cuh). The host no
  // longer knows the span of the keys inserted (range estimates assume the
  // whole domain) nor the counters until refresh().
  TreeRef<Word> device_view();
  // Range pairs per query that device_bytes_needed allows for (its comment
  // says why), also in the narrowed copy of btree_map's mixed calls.
  static constexpr uint64_t kBoundRangePairs = 26;
  // Reads the counters (size, leaves, height) after a caller's kernels and
  // clears a full pool's flag (their inserts that found it full failed).
  // Until a view was handed out, only this tree's calls change them, and
  // each call that does reads them after itself: nothing to read.
  void refresh();
  // Grows an automatic or fixed pool so that at least `nodes` are free.
  void reserve_free_nodes(uint64_t nodes);
  uint64_t size() const { return h_hdr_[0].size; }
  // Orders this tree's stream after the caller's work queued on `caller`.
  void follow(cudaStream_t caller) { follower_.follow(stream_, caller); }
  uint64_t node_capacity() const { return capacity_; }
  cudaStream_t stream() const { return stream_; }
  // For the versions layered on the tree (core/mvbtree): the pool as a
  // kernel sees it, without handing out a caller's view, and the counters
  // read from the device now.
  TreeRef<Word> internal_ref() const { return ref(); }
  const TreeHeader& read_header() {
    sync_header();
    return h_hdr_[0];
  }
  // Whether update_device merges a list of n updates (else the operations
  // kernel runs it).
  bool merges_list(uint64_t n) {
    refresh();
    return merges_phased_updates(opt_, n, h_hdr_[0].size);
  }
  // Called by merged updates at the leaves, after the routing and before
  // the first write, on the tree's stream: each item's leaf, by list
  // position (sorted by key: a leaf's items are neighbours), and their
  // number. Empty: not called.
  std::function<void(const uint32_t* leaves, uint64_t n)> leaf_hook;

 private:
  static int use_device(int device);
  TreeRef<Word> ref() const;
  uint64_t used_nodes() const;
  void add_time(double ms) const {
    if (timing_) timing_->add(ms);
  }
  // The whole key domain as the inserted keys' span (after calls whose
  // keys the host cannot know: a caller's kernels).
  void forget_key_span();
  // An empty tree: the root as an empty leaf.
  void reset_empty();
  // A header for a new tree (reset_empty, build): zero but for the run-long
  // counters (grouped, warp_taken), carried from h_hdr_.
  TreeHeader fresh_header() const;
  // Device counters -> h_hdr_; throws RuntimeFailure on the internal error flag.
  void sync_header();
  [[noreturn]] void throw_pool_full(const std::string& when) const;
  // Automatic pool: grows it so that at least `free_nodes` are free (device
  // copy; its time is returned). A fixed pool is never grown.
  double reserve_nodes(uint64_t free_nodes);
  double grow_pool(uint64_t capacity);
  // The node pool's allocations: a failure is the issue's "out of device
  // memory for B-Tree nodes: ..." (exit 3), naming `what` needed them.
  DeviceBuffer<Node<Word>> allocate_nodes(uint64_t nodes, const std::string& what);
  // After a bulk build released the old pool and could not get its new one:
  // an empty tree in a first-size pool, so that the object stays usable
  // after the error; capacity 0 (no pool) if even that cannot be had.
  void fall_back_to_first_pool();
  // Throws DeviceOutOfMemory (exit 3) when the tree has no pool (above).
  void require_pool() const;
  // After a kernel that found the pool full: clears the flag and clamps the
  // allocation cursor to the capacity (failed allocations moved it past).
  void clear_overflow();

  // build.cu: the bulk build of n pairs staged in d_keys_[0] and the
  // values' half of the slot buffers (build_buffers()); adds its device
  // time to ms.
  void build_staged(uint64_t n, double& ms);
  void build_buffers(uint64_t n, Word* vals[2]);

  // staging.cu: src into the list's arrays (keys always; args, types and
  // operation words where not null), and what the device learned of it
  // (read: waits for it; else, for update lists without types, bounds the
  // host knows). An insert's key widens the span of the keys ever inserted
  // on the device; a read brings it to key_lo_, key_hi_.
  Staged<Word> stage_source(const DeviceSource& src, Word* keys, Word* args, uint8_t* types,
                            unsigned long long* words, bool read = true);
  void reserve_staged_words();
  // The span of the keys ever inserted, on the host and the device (lo > hi: none).
  void set_key_span(Word lo, Word hi);
  // Into the list buffers (reserve_list(src.n)): keys, and args and types
  // when asked.
  Staged<Word> stage_list(const DeviceSource& src, bool with_args, bool with_types);
  // An operations-kernel list: op_words when worded(n), else args and types
  // (with types also when asked: a mixed call reads them after the kernel).
  Staged<Word> stage_ops_list(const DeviceSource& src, bool with_types = false, bool read = true);

  // batch.cu
  void reserve_list(uint64_t n);
  // Sorts the staged list (when sorting is on) on key bits `bits` and
  // returns its descriptor with the result arrays; device work on the
  // stream, not timed here.
  OpsRef<Word> sort_list(uint64_t n, bool with_args, bool with_types, uint8_t type, SortBits bits);
  // The staged list's descriptor as staged (unsorted, no finger).
  OpsRef<Word> list_ref(uint64_t n, bool with_args, bool with_types, uint8_t type);
  // The operations kernel's list (updates, concurrent batches): staged by
  // stage_ops_list and sorted on key bits `bits` for locality only (its
  // operations run concurrently, any order is correct); its sort, prepared
  // outside a timed region; the sorted list's descriptor. A list of fewer
  // than kMaxWordList operations with --op-words on carries one op_word
  // per operation through the sort (OpsRef::op_words); others carry
  // slots, with args and types by slot. 64-bit arguments do not fit the
  // word: such a tree's lists carry slots.
  bool worded(uint64_t n) const { return sizeof(Word) == 4 && opt_.op_words && n < kMaxWordList; }
  void prepare_ops_sort(uint64_t n, SortBits bits);
  OpsRef<Word> sort_ops(uint64_t n, SortBits bits);
  // The staged update list sorted for merged updates (whatever --sort says):
  // keys and slots, a delete's slot tagged with kDeleteTag when n <
  // kTaggedLists; perm null for a list of one.
  void sort_update_list(uint64_t n, const Word*& keys, const uint32_t*& perm);
  // Grows the CUB buffer for sort_list(n, ..., bits)'s sort and captures
  // that sort as a CUDA graph, outside a timed region; call it after any
  // other CUB sizing of the list (the graph keys on the CUB buffer).
  void prepare_list_sort(uint64_t n, SortBits bits);
  // The same for sort_update_list(n) (the slot iota and the sort).
  void prepare_update_sort(uint64_t n);
  // The update sort itself, on the stream (captured, or run directly when
  // not prepared); returns the DoubleBuffer half of its output.
  int enqueue_update_sort(uint64_t n);
  GraphCache::Key update_sort_key(uint64_t n) const;
  // Whether a staged query list of n keys with sort bits `bits` is sorted
  // by a sort: sorting on, two keys or more, and keys that differ
  // (bits.end == 0: every key the same, the list is sorted as staged).
  bool list_sorts(uint64_t n, SortBits bits) const { return opt_.sort && n >= 2 && bits.end != 0; }
  // A query list's sort (the list sort's and the range sort's): keys
  // d_keys_[0] -> d_keys_[1] on bits `bits`, carrying values vin -> vout,
  // as a graph of `graph`. prepare: CUB buffer and capture, outside a timed
  // region (nothing when the list does not sort). sort_staged: the replay,
  // or the sort itself when not prepared; sets ops.use_finger and, when it
  // sorted, ops.keys, and returns whether it did (the values are then in vout).
  template <class V>
  void prepare_keyed_sort(GraphCache& graph, const char* what, const V* vin, V* vout, uint64_t n, SortBits bits);
  template <class V>
  bool sort_staged(OpsRef<Word>& ops, GraphCache& graph, const char* what, const V* vin, V* vout, uint64_t n,
                   SortBits bits);
  GraphCache::Key keyed_sort_key(const void* vin, const void* vout, uint64_t value_bytes, uint64_t n,
                                 SortBits bits) const;
  // Sizes d_top_ for a validated list of n operations and returns the top
  // copy's node count (0: none). Called before the timed region: a first
  // cudaMalloc inside it can take milliseconds of host time
  // (docs/output-formats.md, "Known timing defect").
  uint32_t reserve_top_copy(uint64_t n);
  // Launches a validated list (updates, concurrent batches), in rounds when
  // it is much larger than the tree; top_nodes from reserve_top_copy.
  void launch_rounds(const OpsRef<Word>& list, uint32_t top_nodes);
  // A query list while no writer runs: one thread per query (--query-tile
  // 1), the lock-step query kernel, or with --query-tile 0 the operations kernel.
  void launch_phased_queries(const TreeRef<Word>& tree, const OpsRef<Word>& list);
  // One pass of an update list of n operations (inserts of them), staged
  // (stage_ops_list) with sort bits `bits`, through the operations kernel;
  // true when every update took effect. False: an automatic pool filled,
  // has grown, and `left` holds the list positions to run again. Adds its
  // device time to ms.
  bool run_update_pass(uint64_t n, uint64_t inserts, SortBits bits, double& ms, std::vector<uint32_t>& left);
  // src's updates through the operations kernel, in passes until every
  // one took effect (an automatic pool grows between them); `staged`: src
  // already staged by stage_ops_list. Returns the device time.
  double ops_update_passes(DeviceSource src, const Staged<Word>* staged = nullptr);
  // A staged query list (lookups, successors, counts; ranges with
  // --query-tile 0: their count pass) of n operations: sorted (or by the
  // leaf directory) and run; returns the list, its device time added to ms.
  OpsRef<Word> run_query_list(OpType type, uint64_t n, SortBits bits, bool two_keys, double& ms);
  // A staged range list (keys, upper bounds in d_args_) through the
  // operations kernel (query_tile 0): a count pass, the offsets, a copy
  // pass; sizes (d_value_) and offsets (d_range_off_) by slot, the pairs
  // contiguous (their number in *pairs). Returns the device time.
  double two_pass_ranges(uint64_t n, SortBits bits, uint64_t* pairs = nullptr);
  // device_apply.cu: a staged mixed list (stage_ops_list with types) with
  // queries, in one operations kernel; the results into `out`.
  MixedPairs<Word> run_concurrent(const DeviceSource& src, const Staged<Word>& staged, const MixedOutputs& out);

  // ranges.cu
  // Room for `pairs` pairs of range output; `list`, made before, is pointed
  // at it.
  void reserve_range_pairs(uint64_t pairs, OpsRef<Word>* list = nullptr);
  // Where a range list's results lie on the device. hi_slot (device): each
  // list position's (hi, slot) (HiSlot), sizes (d_value_) and offsets
  // (d_range_off_) being stored by position; null: by slot. region_lines >
  // 0: tile t's pairs lie in lines [t R, t R + used_lines) of
  // d_range_keys_/values_ (R = region_lines); 0: the pairs are contiguous.
  // pairs: their number when they fill d_range_keys_/values_ from 0 without
  // holes (kUnknownPairs: they may not).
  static constexpr uint64_t kUnknownPairs = ~uint64_t{0};
  struct RangeLayout {
    const HiSlot<Word>* hi_slot = nullptr;
    uint64_t region_lines = 0, used_lines = 0;
    uint64_t pairs = kUnknownPairs;
    bool by_slot_written = false;  // the sizes and offsets are in range_slot_out_ too
    double expect = -1.0;  // the list's estimated pairs; negative: none
  };
  // Where a range list run while they are set writes each range's size and
  // offset by slot, when its kernel can (the one-thread-per-range kernel;
  // RangeLayout::by_slot_written).
  struct RangeSlotOut {
    unsigned long long* sizes = nullptr;
    unsigned long long* offsets = nullptr;
  };
  RangeSlotOut range_slot_out_;
  // A staged list of n ranges (keys in d_keys_[0], (hi, slot) in
  // d_hi_slot_[0]) expected to hold `expect` pairs: one thread per range
  // or the lock-step kernel (ranges.cu says which when). Returns the
  // milliseconds.
  double run_range_list(uint64_t n, SortBits bits, double expect, RangeLayout& layout);
  // The range list's sort (prepared by prepare_range_sort, like
  // prepare_list_sort) and its descriptor; `sorted`: whether it sorted (the
  // (hi, slot) words are then in list order, else by slot).
  void prepare_range_sort(uint64_t n, SortBits bits);
  OpsRef<Word> sort_range_list(uint64_t n, SortBits bits, bool& sorted);
  // Starts a range list's timed segment: the timer, and the list's sort;
  // records in layout where its sizes and offsets will lie.
  OpsRef<Word> start_range_list(uint64_t n, SortBits bits, RangeLayout& layout);
  // The output room to reserve for a list of n ranges expected to hold
  // `expect` pairs at a scale, and a path's scale learned from a list that
  // needed `used` pairs (lines) where it was given `given` (ranges.cu).
  double range_output_room(uint64_t n, double expect, double scale);
  void learn_range_scale(double& scale, double used, double given);
  double run_point_ranges(uint64_t n, SortBits bits, double expect, RangeLayout& layout);
  double run_lockstep_ranges(uint64_t n, SortBits bits, double expect, RangeLayout& layout);
  // The lock-step tile of ranges: --query-tile, or 4 when it is 1 (long
  // ranges; a range's output is staged per tile).
  int range_tile() const { return opt_.query_tile == 1 ? 4 : opt_.query_tile; }
  // device_ranges.cu: src's ranges run as a phased list (staged, sorted,
  // one pass or two); where their results lie. Adds the device time to ms.
  RangeLayout run_source_ranges(const DeviceSource& src, double& ms);
  // A list's total pairs: what the next list's choice of kernel corrects
  // its estimate by (range_ratio_).
  void note_range_total(const RangeLayout& layout, uint64_t total);
  // The n ranges run_source_ranges ran (its layout): each range's size by
  // array position in d_range_slot_size_, their exclusive sum (n + 1
  // entries) in `offsets` (null: d_range_slot_off_, and offsets points
  // there after). Returns the total; adds the device time to ms.
  uint64_t lay_out_ranges(uint64_t n, const RangeLayout& layout, unsigned long long*& offsets, double& ms);
  // The `total` pairs of the list lay_out_ranges laid out, to the caller's
  // arrays at `offsets`, narrowed to key_bytes and value_bytes.
  void copy_range_output(uint64_t n, uint64_t total, const unsigned long long* offsets, void* keys_out,
                         int key_bytes, void* values_out, int value_bytes, double& ms);
  // A mixed call of ranges only: the phased list (no writer runs), sizes
  // and offsets into out; the pairs where the list left them when it left
  // no holes (in list order), else laid out in d_mixed_keys_/values_.
  MixedPairs<Word> mixed_ranges(const DeviceSource& src, const MixedOutputs& out);

  // merge_updates.cu: a phased batch's updates merged into the tree level by
  // level. merge_levels runs the levels on the sorted list (dry: counts the
  // new nodes without writing) and returns the nodes they take.
  // merge_staged: a list of n updates already staged (keys, args, types);
  // adds its device time to ms.
  void merge_staged(uint64_t n, double& ms);
  uint64_t merge_levels(const Word* keys, const uint32_t* perm, uint64_t n, bool dry, double& ms,
                        bool timing = false);
  void reserve_merge(uint64_t items);
  uint64_t scratch_bytes() const;

  int device_;
  // The key's width in bits (32 or 64; less than Word's for u32 keys with
  // u64 values): the update sort covers these bits only.
  int key_bits_ = static_cast<int>(8 * sizeof(Word));
  bool views_out_ = false;  // device_view was called: a caller's kernels may change the tree
  Options opt_;
  cudaStream_t stream_ = nullptr;
  device_timing* timing_ = nullptr;
  EventTimer timer_;
  TraceEvents trace_;  // GPUDICT_TRACE=1: per-step device times of a call on stderr

  DeviceBuffer<Node<Word>> pool_;
  DeviceBuffer<Node<Word>> d_top_;  // the thread ops kernel's copy of the upper levels (top_copy.cuh)
  LeafDirectory dir_;         // the bulk build's leaves by low key (leaf_directory.cuh)
  // Whether bulk builds make a leaf directory: on, and the phased queries
  // that read it run one thread per query (--query-tile 1). The directory
  // reads 32-bit nodes (leaf_directory.cuh): none in a 64-bit tree.
  bool use_directory() const { return sizeof(Word) == 4 && opt_.leaf_directory && opt_.query_tile == 1; }
  uint64_t directory_lists_ = 0;  // phased query lists answered through dir_
  uint64_t capacity_ = 0;
  DeviceBuffer<TreeHeader> hdr_;
  PinnedBuffer<TreeHeader> h_hdr_;  // the counters as of the last kernel
  uint64_t grows_ = 0;              // automatic pool growths
  uint64_t retries_ = 0;            // update lists re-run after the pool filled

  CubTemp temp_;
  // The list sorts as CUDA graphs (a dozen small stream operations each;
  // core/common/graph_cache.hpp).
  GraphCache list_graph_, update_graph_, range_graph_;
  DeviceBuffer<unsigned long long> d_scalars_;  // [0, kMergeFlags): merged updates' flags; [0]: the build's count
  static constexpr int kMergeFlags = 4;
  static constexpr int kRangeMaxLines = kMergeFlags;  // d_scalars_[4]: one-pass ranges' longest tile stream (lines)
  static constexpr int kSelectedCount = kRangeMaxLines + 1;  // d_scalars_[5]: a concurrent batch's ranges selected
  static constexpr int kRangeCursor = kSelectedCount + 1;    // d_scalars_[6]: their output reserved so far
  static constexpr int kDeferredCount = kRangeCursor + 1;    // d_scalars_[7]: directory lookups left to the root
  static constexpr int kRerunCount = kDeferredCount + 1;     // d_scalars_[8]: a mixed call's ranges to run again
  static constexpr int kLateCount = kRerunCount + 1;         // d_scalars_[9]: its updates to run again
  static constexpr int kScalars = kLateCount + 1;
  // What staging learned (staging.cu): 7 words, lows stored inverted.
  DeviceBuffer<unsigned long long> d_staged_;
  PinnedBuffer<unsigned long long> h_staged_;

  // One list of operations (also the bulk build's sort buffers).
  DeviceBuffer<Word> d_keys_[2];
  DeviceBuffer<uint32_t> d_perm_[2];
  DeviceBuffer<uint32_t> d_iota_;  // 0, 1, 2, ...: the slots a list's sort carries (reserve_list)
  DeviceBuffer<Word> d_args_;
  DeviceBuffer<uint8_t> d_types_;
  DeviceBuffer<unsigned long long> d_words_[2];  // a worded list's op_words: staged, sorted
  DeviceBuffer<uint8_t> d_found_, d_done_;
  DeviceBuffer<Word> d_value_, d_key_out_;
  DeviceBuffer<uint32_t> d_range_cap_;
  DeviceBuffer<unsigned long long> d_range_slot_size_, d_range_slot_src_, d_range_slot_off_;  // range_device()
  DeviceBuffer<double> d_range_expect_;                                                         // range_device()
  DeviceBuffer<unsigned long long> d_range_off_;   // range offsets: by slot, or by list position (RangeLayout)
  DeviceBuffer<unsigned long long> d_range_scan_;  // by list position: a phased range pass's scan
  DeviceBuffer<Word> d_range_keys_, d_range_values_;
  // A concurrent batch's ranges, picked from its sorted list: keys, slots,
  // upper bounds and first output positions (by position in this sub-list).
  DeviceBuffer<Word> d_sub_keys_, d_sub_hi_;
  DeviceBuffer<uint32_t> d_sub_slots_;
  DeviceBuffer<unsigned long long> d_sub_off_;
  // A mixed call's late work: positions of ranges that outgrew their room
  // and of updates that found the pool full; the pairs returned when some
  // ranges ran again (the kernel's, then theirs), and those ranges' offsets.
  DeviceBuffer<uint32_t> d_rerun_ranges_, d_late_updates_;
  DeviceBuffer<Word> d_mixed_keys_, d_mixed_values_;
  DeviceBuffer<unsigned long long> d_rerun_off_;
  DeviceBuffer<HiSlot<Word>> d_hi_slot_[2];  // a one-pass range list's (hi, slot): staged, sorted
  // One-pass ranges (ranges.cu): the tiles' stream lengths and, for a list
  // run again, their first lines; what sizes the output.
  DeviceBuffer<unsigned long long> d_tile_lines_, d_tile_base_;
  DeviceBuffer<uint32_t> d_rerun_index_;  // an update list's re-run positions (ops_update_passes)
  StreamFollower follower_;  // follow()
  Word key_lo_ = key_max<Word>, key_hi_ = 0;  // every key ever inserted lies in [key_lo_, key_hi_]
  double range_scale_ = 1.0;        // lock-step ranges: the regions' scale over the estimate, in [1, 16] (ranges.cu)
  double point_range_scale_ = 1.0;  // ranges one thread each: the output's scale over the estimate, in [1, 16]
  double range_ratio_ = 1.0;        // the last range list's pairs over its estimate (choosing its kernel)
  uint64_t merged_update_lists_ = 0, ops_update_lists_ = 0;  // phased update lists by path (--phased-updates)
  uint64_t point_range_lists_ = 0, tile_range_lists_ = 0;  // phased range lists by kernel (--query-tile 1, 4, 8)
  uint64_t range_reruns_ = 0;         // range lists run again because their output outgrew the estimate
  uint64_t concurrent_range_reruns_ = 0;  // concurrent ranges answered after their batch (outgrew their room)
  // Merged updates: per item of a level, its node, new nodes and N of the
  // sub-segment starting there, their scan; each level's new nodes (low
  // key, id) for the next level.
  DeviceBuffer<uint32_t> d_mtarget_, d_mmerged_, d_mleft_;  // d_mleft_: sub-segments left to the write kernel
  DeviceBuffer<unsigned long long> d_mfresh_, d_mbase_;
  DeviceBuffer<Word> d_sep_keys_[2], d_sep_vals_[2];  // (low key, node id) of each level's new nodes

  // Pinned host staging (reused across calls).
  PinnedBuffer<uint8_t> h_done_;
  PinnedBuffer<unsigned long long> h_u64_;
};

template <class Word>
template <class V>
void BTree<Word>::prepare_keyed_sort(GraphCache& graph, const char* what, const V* vin, V* vout, uint64_t n,
                               SortBits bits) {
  if (!list_sorts(n, bits)) return;
  const auto sort = keyed_sort_call(d_keys_[0].data(), d_keys_[1].data(), vin, vout, n, stream_, bits);
  temp_.prepare(what, sort);
  graph.prepare(keyed_sort_key(vin, vout, sizeof(V), n, bits), stream_, [&] { temp_.run(what, sort); });
}

template <class Word>
template <class V>
bool BTree<Word>::sort_staged(OpsRef<Word>& ops, GraphCache& graph, const char* what, const V* vin, V* vout, uint64_t n,
                        SortBits bits) {
  ops.use_finger = opt_.sort && n >= 2;  // in key order: sorted below, or as staged
  if (!list_sorts(n, bits)) return false;
  const auto sort = keyed_sort_call(d_keys_[0].data(), d_keys_[1].data(), vin, vout, n, stream_, bits);
  graph.run(keyed_sort_key(vin, vout, sizeof(V), n, bits), stream_, [&] { temp_.run(what, sort); });
  ops.keys = d_keys_[1].data();
  return true;
}

}  // namespace gpudict::btree
