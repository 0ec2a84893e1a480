// The slab hash behind slab_hash_map (internal). Its members live in:
//   slabhash.cu   construction, table sizing, the build's fix-up of
//                 duplicate keys, FLUSH (cleanup and the flush policy),
//                 stats, the memory bound
//   execute.cu    a pass of the batch kernel: pool growth and the re-run of
//                 unfinished operations
//   device_api.cu the bulk calls on device arrays
//   inspect.cu    the host-side table checker (inspect.hpp)
// Kernels: batch_kernels*.cu (tile_ops.cuh), flush.cu, build.cu.
// SlabHash<K, V> is instantiated for u32/u32, u32/u64 and u64/u64 (every
// member's definition ends with the instantiations of its file).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/common/capacity_bounds.hpp"
#include "core/common/cub_temp.cuh"
#include "core/common/device_timing.hpp"
#include "core/common/key_traits.hpp"
#include "core/common/stream_copy.hpp"
#include "core/common/device_buffer.hpp"
#include "core/common/event_timer.hpp"
#include "core/common/pinned_buffer.cuh"
#include "core/common/stream_follow.hpp"
#include "core/slabhash/detail/kernels.cuh"
#include "core/slabhash/options.hpp"
#include "core/slabhash/detail/slab_pool.hpp"
#include "core/slabhash/detail/table_ref.cuh"
#include "core/slabhash/slab_hash_map.hpp"

namespace gpudict::slabhash {

struct TableCopy;  // inspect.hpp

// Operations of a batch kernel on the device: the batch's staging, or the
// operations a pass runs again.
template <class K, class V>
struct DeviceOps {
  DeviceBuffer<uint8_t> type;
  DeviceBuffer<K> key;
  DeviceBuffer<V> arg;
  DeviceBuffer<uint32_t> idx;
  uint64_t bytes() const { return type.bytes() + key.bytes() + arg.bytes() + idx.bytes(); }
};

template <class K, class V>
class SlabHash {
 public:
  SlabHash(int device, const Options& options);
  ~SlabHash();
  SlabHash(const SlabHash&) = delete;
  SlabHash& operator=(const SlabHash&) = delete;

  // slab_hash_map's bound and figures (slabhash.cu).
  uint64_t device_bytes_needed(const capacity_bounds& b) const;
  slab_hash_stats stats() const;
  const Options& options() const { return opt_; }
  // Every later call adds its device time here (device_timing.hpp); null: none.
  void set_timing(device_timing* t) { timing_ = t; }
  // FLUSH on demand (slabhash.cu).
  void cleanup();

  Mode mode() const { return opt_.mode; }
  // inspect.cu: the tests' host copy of the table.
  TableCopy copy() const;

  // device_api.cu: the library's bulk calls on device arrays
  // (slab_hash_map), on this table's stream; each returns when done.
  // A new table sized for n pairs (or of `buckets` buckets when not 0),
  // then the pairs inserted (map: the later pair of a key wins).
  void build_device(const K* keys, const V* values, uint64_t n, uint64_t buckets = 0);
  // Inserts or deletes n keys as one pass (values: null for deletes); with
  // per-key flags, a mix (multimap: the deletes first, as a pass of their
  // own). Then the flush policy.
  void update_device(const K* keys, const V* values, uint64_t n, bool insert);
  void update_mixed_device(const K* keys, const V* values, const bool* erase, uint64_t n);
  // One pass of mixed operations (ops null: all `uniform`) into the
  // caller's outputs; the range values stay in d_range_values_ (returned).
  range_output<K, V> apply_device(const uint8_t* ops, uint8_t uniform, const K* keys, const V* values, uint64_t n,
                                  const mixed_outputs<K, V>& out);
  // Lookups: values_out[i] (0 when absent), found_out[i]; either may be null.
  void find_device(const K* keys, uint64_t n, V* values_out, bool* found_out);
  // Orders this table's stream after the caller's work queued on `caller`.
  void follow(cudaStream_t caller) { follower_.follow(stream_, caller); }
  // The stream every call of this table runs on (the graph queues its own
  // kernels on it).
  cudaStream_t stream() const { return stream_; }

  // Routing by vertex (table_ref.cuh, VertexRoutes; 64-bit keys): the graph
  // of core/graph owns the directory and keeps it valid while this table
  // runs. Set before a build, whose `buckets` it addresses.
  void set_vertex_routes(const uint2* dir, uint32_t vertices, uint32_t* degree) {
    routes_.dir = dir;
    routes_.vertices = vertices;
    routes_.degree = degree;
  }
  // More base slabs: buckets [buckets_, buckets) are added empty, the last
  // (empty) slab moves to the end; nothing points into base slabs, so they
  // are copied as they are.
  void grow_buckets(uint64_t buckets);
  // Chains the caller took out of the table (the graph moving a vertex to
  // more buckets): `live` pairs, `claimed` slots (live and tombstones) and
  // `pool_slabs` pool slabs no longer in it.
  void forget(uint64_t live, uint64_t claimed, uint64_t pool_slabs) {
    live_ -= std::min(live_, live);
    claimed_ -= std::min(claimed_, claimed);
    pool_used_ -= std::min(pool_used_, pool_slabs);
  }
  uint64_t buckets() const { return buckets_; }
  uint64_t size() const { return live_; }

  // device_api.cu: what the library's device refs need (slab_hash_ref.cuh).
  // The table as kernels see it (created empty if it was not yet).
  TableRef<K> device_table();
  // Where refs count the slots they claim, the alive bits they clear and
  // the slabs they link (3 counters, zero until refs change something).
  unsigned long long* ref_counts();
  // Folds what refs counted into live_, claimed_ and pool_used_ (a copy to
  // the host, only once a ref was handed out), so that sizes, the FLUSH
  // policy and pool growth see the refs' changes.
  void absorb_ref_counts();
  // Pool growth ahead of `inserts` inserts by refs, whatever
  // options.grow_ahead says.
  void reserve_device(uint64_t inserts);
  // Live keys after the refs' changes.
  uint64_t live_keys() {
    absorb_ref_counts();
    return live_;
  }

 private:
  void add_time(double ms) {
    if (timing_) timing_->add(ms);
  }
  uint64_t run_device_pass(const K* keys, const V* values, uint64_t n, uint8_t type, uint32_t ops);

  static int use_device(int device);
  // What a slab holds in this mode at this width (options.hpp).
  SlabShape shape() const;
  // Sizes the buckets for `n` keys (options decide, unless `buckets` is
  // not 0), allocates and clears
  // the base slabs and the pool (outside any timed region).
  void create_table(uint64_t n, uint64_t buckets = 0);
  void ensure_table();
  TableRef<K> ref() const;
  OpsOut<V> outputs(uint64_t batch_size);
  // Zeroes the counters; the range cursor only when `cursor_too` (it spans
  // every pass of a batch).
  void reset_counters(bool cursor_too);
  Counters read_counters();
  // Runs `in` (operation types `ops`, bit 1 << type; an operation's output
  // position is its position in the arrays: in.index null), timed; grows
  // the pool or the range buffer and runs the unfinished operations again,
  // gathered on the device, until none is left. Returns the counters summed
  // over the rounds (and updates live_ and claimed_).
  Counters run_pass(const OpsIn<K, V>& in, uint32_t ops, uint64_t batch_size);
  void grow_pool_or_throw(uint32_t unfinished, uint64_t pass_size);
  void grow_range_buffer(unsigned long long needed);
  // Growth ahead of a pass of `inserts` inserts (--pool-growth ahead): while
  // the pool slabs expected after them would pass 3/4 of the pool, add a
  // super block. An almost full pool allocates slowly (long searches for a
  // free bit) and a full one costs a rerun.
  void reserve_for_inserts(uint64_t inserts);
  // The same growth whatever options.grow_ahead says (slab_hash_map::reserve).
  void grow_ahead_of(uint64_t inserts);
  // FLUSH, timed as cleanup.
  void flush();
  void maybe_flush();
  // Tombstones since the last FLUSH or build (claimed slots that are not live).
  uint64_t tombstones() const;
  void fix_build_duplicates(const K* d_keys, const V* d_values, uint64_t n);
  uint64_t scratch_bytes() const;

  int device_;
  device_timing* timing_ = nullptr;
  Options opt_;
  cudaStream_t stream_ = nullptr;
  EventTimer timer_;

  // The table.
  bool created_ = false;
  uint64_t buckets_ = 0;  // hashed buckets (plus one for key key_max<K>)
  DeviceBuffer<Slab> base_;
  SlabPool pool_;
  UniversalHash hash_;
  VertexRoutes routes_;

  // What the host knows about the contents.
  uint64_t live_ = 0;     // alive pairs (keys in map/set mode)
  uint64_t claimed_ = 0;  // claimed slots (alive + tombstones) since the last flush or build
  uint64_t pool_used_ = 0;  // pool slabs in chains (linked by inserts; recounted after a flush)
  uint64_t batches_ = 0;  // batches executed (for messages)
  uint64_t update_batches_since_flush_ = 0;
  uint64_t flushes_ = 0, auto_flushes_ = 0;
  uint64_t growths_ = 0;
  uint64_t unfinished_reruns_ = 0;
  uint64_t build_duplicates_ = 0;
  std::string context_;  // "batch 7" / "the build", for messages
  StreamFollower follower_;  // follow()

  // Device scratch.
  DeviceBuffer<Counters> d_ctr_;
  DeviceBuffer<unsigned long long> d_live_;
  DeviceBuffer<unsigned long long> d_ref_counts_;  // ref_counts(); allocated by the first
  bool refs_issued_ = false;
  // A mixed update's operations (types from the flags; multimap: deletes first).
  DeviceOps<K, V> d_ops_;
  // Re-runs of unfinished operations (the first pass's inputs stay intact).
  DeviceOps<K, V> d_rerun_;
  DeviceBuffer<uint8_t> d_found_;
  DeviceBuffer<V> d_value_;
  DeviceBuffer<uint32_t> d_offset_, d_unfinished_;
  DeviceBuffer<V> d_range_values_;
  CubTemp temp_;

  // Pinned host words read back between launches.
  PinnedBuffer<Counters> h_ctr_;
};

}  // namespace gpudict::slabhash
